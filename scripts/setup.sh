#!/usr/bin/env bash
# Installs everything the project needs, from the package registries only:
#   Debian packages (scripts/apt-packages.txt), a Python venv pinned by requirements.txt,
#   Node packages pinned by package-lock.json, Apache Kafka's jars from Maven Central (checksums
#   enforced), the lab's NFS client layer built with cargo from crates.io and the Go tools of
#   scripts/go-tools.txt from the Go module proxy.
# First it checks what it cannot install itself (the README's prerequisites: Debian 12, root or
# sudo, Python 3.11+, Java 17+, Maven, Node 20+, Go 1.21+, cargo at least the rust-version of
# lab/nfs-client/Cargo.toml) and, if anything is missing or too old, names each one with the
# command that installs it and stops before installing anything.
# Idempotent: each part keeps a stamp (hash of its pin file) and is skipped when unchanged,
# so a warm run takes about a second. Each phase prints a line with its time; a summary ends.
#
# After the Debian packages, the other phases (Python, Node, Kafka jars, NFS layer, Go tools)
# run side by side, each in its own process group with its output in a log of its own; each
# still prints its own lines. A phase that fails prints its message and the end of its log,
# and the others are stopped (as on Ctrl-C); the temporary directory goes in every case.
#
#   bash scripts/setup.sh           check, then install what changed
#   bash scripts/setup.sh --check   only check the prerequisites (installs nothing)
#   TR4947_SETUP_JOBS=1             one phase after the other, their output shown as it comes
#   TR4947_PIP=1                    the Python environment with pip, not uv
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
cache=${TR4947_CACHE:-$HOME/.cache/tr4947}
case $cache in /*) ;; *) cache="$here/$cache" ;; esac     # Maven resolves a relative one elsewhere

check_only=0
case "${1:-}" in
  "") ;;
  --check) check_only=1 ;;
  *) echo "usage: bash scripts/setup.sh [--check]" >&2; exit 2 ;;
esac

exec 3>&1                     # the console: phases running in the background print their lines here
say() { printf '[setup] %s\n' "$*" >&3; }
hash_of() { cat "$@" | sha256sum | cut -c1-16; }
now() { printf '%s' "${EPOCHREALTIME/,/.}"; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
# version_ge A B: version A is B or later (1.95.0 >= 1.85).
version_ge() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -1)" = "$2" ]; }

t_start=$(now)
PHASE_NAMES=("prerequisites" "Debian packages" "Python environment" "Node packages" "Kafka jars"
             "NFS client layer" "Go tools")
PHASES=${#PHASE_NAMES[@]}
declare -A summary=()
worked=0
# phase N starts phase N; work WHAT says it is doing something that takes time (with the time
# since setup started); done_phase RESULT ends it with a line and its own time.
phase() { phase_no=$1; phase_name=${PHASE_NAMES[$1 - 1]}; phase_t0=$(now); }
work() { say "[$phase_no/$PHASES] $phase_name: $* (at $(since "$t_start") s)"; }
note() { say "[$phase_no/$PHASES] $phase_name: $*"; }
done_phase() {
  local took; took=$(since "$phase_t0")
  say "[$phase_no/$PHASES] $phase_name: $1 ($took s)"
  summary[$phase_no]=$(printf '%-20s %6s s  %s' "$phase_name" "$took" "$1")
  # A phase run in the background hands its summary line to the main shell through a file.
  if [ -n "${result_file:-}" ]; then printf '%s\n' "${summary[$phase_no]}" > "$result_file"; fi
}

# --- 1. Prerequisites: what setup cannot install itself --------------------------------
phase 1
missing=()
found=()
# need WHAT HOW: one missing prerequisite and the command that installs it.
need() { missing+=("$1"$'\n'"      install: $2"); }
major() { sed -n 's/[^0-9]*\([0-9][0-9]*\).*/\1/p' | head -1; }

# shellcheck source=/dev/null
os_id=$(. /etc/os-release 2>/dev/null && echo "${ID:-?} ${VERSION_ID:-?}") || os_id="unknown"
if [ "$os_id" = "debian 12" ]; then
  found+=("Debian 12")
elif [ -n "${TR4947_ANY_OS:-}" ]; then
  found+=("$os_id (TR4947_ANY_OS set: not Debian 12, untested)")
else
  need "Debian 12 (this machine is $os_id): the package names, Chromium's path and the lab's tools are Debian 12's" \
       "run on Debian 12 or in a debian:12 container (TR4947_ANY_OS=1 tries anyway)"
fi

if [ "$(id -u)" -eq 0 ]; then
  sudo_cmd=""; found+=("root")
elif command -v sudo >/dev/null; then
  sudo_cmd="sudo"; found+=("sudo")
else
  need "root or sudo: Debian packages are installed with apt-get and the lab needs network namespaces and FUSE" \
       "run as root, or (as root) apt-get install sudo && adduser $(id -un) sudo"
fi

if ! command -v python3 >/dev/null; then
  need "Python 3.11 or later (python3)" "apt-get install python3 python3-venv"
elif ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  need "Python 3.11 or later (python3 is $(python3 -V 2>&1 | cut -d' ' -f2 || true))" \
       "apt-get install python3 python3-venv (Debian 12's python3 is 3.11)"
elif ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
  need "Python's venv module (python3 -m venv makes .venv)" "apt-get install python3-venv"
else
  found+=("Python $(python3 -V 2>&1 | cut -d' ' -f2 || true)")
fi

if ! command -v java >/dev/null; then
  need "Java 17 or later (java): the lab's Kafka brokers and tools" "apt-get install openjdk-17-jre-headless"
else
  java_major=$(java -version 2>&1 | sed -n '1s/.*version "\([0-9]*\).*/\1/p' || true)
  if [ "${java_major:-0}" -ge 17 ]; then found+=("Java $java_major"); else
    need "Java 17 or later (java is ${java_major:-unknown})" "apt-get install openjdk-17-jre-headless"
  fi
fi

# Presence only: `mvn -v` starts a JVM, half a second on every warm run.
if command -v mvn >/dev/null; then found+=("Maven"); else
  need "Maven (mvn): resolves Apache Kafka's jars from Maven Central" "apt-get install maven"
fi

node_install="Debian 12's nodejs is 18: install Node.js 20 from NodeSource's Debian packages (nodejs 20.x) or with nvm"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  need "Node.js 20 or later with npm (node, npm): Antora builds the guide" "$node_install"
else
  node_v=$(node --version 2>/dev/null || true)
  node_major=$(echo "$node_v" | major)
  if [ "${node_major:-0}" -ge 20 ]; then found+=("Node ${node_v#v}"); else
    need "Node.js 20 or later (node is ${node_v:-not working})" "$node_install"
  fi
fi

go_install="apt-get install -t bookworm-backports golang-go (with bookworm-backports in your APT sources), or Go's own release archive"
if ! command -v go >/dev/null; then
  need "Go 1.21 or later (go): builds the pinned actionlint from the Go module proxy" "$go_install"
else
  go_v=$(go env GOVERSION 2>/dev/null | sed 's/^go//' || true)
  go_minor=$(echo "$go_v" | cut -d. -f2)
  if [ "$(echo "$go_v" | cut -d. -f1)" = 1 ] && [ "${go_minor:-0}" -ge 21 ]; then
    found+=("Go $go_v")
  else
    need "Go 1.21 or later (go is ${go_v:-unknown}; 1.21 fetches the toolchain a module asks for)" "$go_install"
  fi
fi

# cargo: at least the crate's rust-version. Debian 12's cargo is 1.63, so the fix is rustup;
# a cargo on the PATH that is missing or too old gives way to rustup's (CARGO_HOME/bin).
rust_need=$(sed -n 's/^rust-version *= *"\([0-9.]*\)".*/\1/p' lab/nfs-client/Cargo.toml 2>/dev/null | head -1)
rust_need=${rust_need:-1.0}
rustup_bin="${CARGO_HOME:-$HOME/.cargo}/bin"
rust_install="rustup (Debian 12's cargo is 1.63): curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal --component clippy,rustfmt (it installs into ~/.cargo/bin, which setup finds)"
cargo_version() { "$1" --version 2>/dev/null | sed -n 's/^cargo \([0-9][0-9.]*\).*/\1/p' | head -1; }
cargo_v=$(cargo_version cargo || true)
if { [ -z "$cargo_v" ] || ! version_ge "$cargo_v" "$rust_need"; } && [ -x "$rustup_bin/cargo" ]; then
  rustup_v=$(cargo_version "$rustup_bin/cargo" || true)
  if [ -n "$rustup_v" ] && version_ge "$rustup_v" "$rust_need"; then
    PATH="$rustup_bin:$PATH"; cargo_v=$rustup_v
  fi
fi
if [ -z "$cargo_v" ]; then
  need "Rust's cargo $rust_need or later (cargo$(command -v cargo >/dev/null && echo ' does not run')): builds the lab's NFS client layer (lab/nfs-client)" \
       "$rust_install"
elif ! version_ge "$cargo_v" "$rust_need"; then
  need "Rust's cargo $rust_need or later (cargo is $cargo_v; lab/nfs-client/Cargo.toml's rust-version is $rust_need)" \
       "$rust_install"
else
  found+=("cargo $cargo_v")
fi

if ((${#missing[@]})); then
  {
    echo "[setup] this machine lacks what setup cannot install itself:"
    for m in "${missing[@]}"; do printf '  - %s\n' "$m"; done
    echo "[setup] nothing was installed; install the above, then run this again."
  } >&2
  exit 1
fi
found_text=$(printf '%s, ' "${found[@]}")
done_phase "${found_text%, }"
if ((check_only)); then exit 0; fi
mkdir -p "$cache"

# Temporary files (phase logs, results, Maven's aggregator, uv's pin) live here and go on every
# exit, also on failure and Ctrl-C, after the phases still running are stopped.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tr4947-setup.XXXXXX")
declare -A job_phase=()        # pid (= its process group) -> phase number, while it runs
stop_jobs() {
  local pid names=() n pids=()
  # Every background job bash knows of, not only those in job_phase: Ctrl-C can come between
  # a phase's start and its entry there, and that phase must stop too.
  jobs -p > "$tmp/jobs" 2>/dev/null || true
  mapfile -t pids < "$tmp/jobs"
  for pid in "${!job_phase[@]}"; do [[ " ${pids[*]} " == *" $pid "* ]] || pids+=("$pid"); done
  ((${#pids[@]})) || return 0
  for pid in "${pids[@]}"; do
    [ -n "${job_phase[$pid]:-}" ] && names+=("${PHASE_NAMES[${job_phase[$pid]} - 1]}")
    kill -TERM -- "-$pid" 2>/dev/null || true
  done
  ((${#names[@]})) &&
    say "stopping: $(printf '%s, ' "${names[@]}" | sed 's/, $//') (they start again on the next run)"
  for n in $(seq 50); do                  # 5 s to end, then killed
    local alive=0
    for pid in "${pids[@]}"; do kill -0 -- "-$pid" 2>/dev/null && alive=1; done
    ((alive)) || break
    sleep 0.1
  done
  for pid in "${pids[@]}"; do kill -KILL -- "-$pid" 2>/dev/null || true; done
  wait "${pids[@]}" 2>/dev/null || true
  job_phase=()
}
on_exit() {
  local status=$?
  trap - EXIT INT TERM
  stop_jobs
  rm -rf "$tmp"
  exit "$status"
}
trap on_exit EXIT
trap 'say "interrupted"; exit 130' INT
trap 'say "terminated"; exit 143' TERM

# --- 2. Debian packages (before the others: nothing else runs while apt-get does) ---------
phase 2
mapfile -t apt_pkgs < <(sed 's/#.*//' scripts/apt-packages.txt | tr -s ' \t' '\n' | grep -v '^$')
missing=()
for p in "${apt_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  worked=1
  work "installing ${#missing[@]}: ${missing[*]}"
  $sudo_cmd apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -q --no-install-recommends "${missing[@]}"
  done_phase "installed ${#missing[@]} (${missing[*]})"
else
  done_phase "up to date (${#apt_pkgs[@]} packages)"
fi

# --- Phases 3 to 7: each a check (quick, in order, here) and, when something changed, a run
# (side by side in the background). A run_* function runs in a subshell: `exit` ends the phase.

# --- 3. Python virtual environment -----------------------------------------------------
# Installed with uv (from PyPI, pinned by hash below, installed by pip with --require-hashes
# into the cache, outside .venv, so that `uv pip sync` leaves it alone): the same pins as pip,
# in a fraction of pip's time (it downloads and installs in parallel). requirements.txt pins
# versions without hashes; uv, like pip, verifies any hash it finds there.
# pip stays the fallback: when uv cannot be had, or fails, setup says so and uses pip.
UV_VERSION=0.13.9
UV_PIN="uv==$UV_VERSION \
  --hash=sha256:d7f459fe4fd247d830351c75686d3996ace3c6f3f728eb0e85a30b7ada0cef19 \
  --hash=sha256:5435c5ce14a56431208ca0996416d310f1598e8c2c8ba707688985a16bb82dbe"
# (the manylinux wheels for x86_64 and aarch64)
uv_dir="$cache/uv-$UV_VERSION"
n_pins=$(grep -c '==' requirements.txt)
check_python() { py_want=$(hash_of requirements.txt pyproject.toml); [ "$(cat .venv/.stamp 2>/dev/null)" != "$py_want" ]; }
ensure_uv() {
  [ -x "$uv_dir/bin/uv" ] && [ -f "$uv_dir/.ok" ] && return 0
  printf '%s\n' "$UV_PIN" > "$tmp/uv-requirements.txt"
  rm -rf "$tmp/uv" "$uv_dir"
  .venv/bin/pip install --disable-pip-version-check --no-deps --require-hashes \
      --target "$tmp/uv" -r "$tmp/uv-requirements.txt" || return 1
  mkdir -p "$(dirname "$uv_dir")" && mv "$tmp/uv" "$uv_dir" && touch "$uv_dir/.ok"
}
# sync: exactly the pinned packages and the project itself (editable, named in the same sync
# so that a venv in use never loses it), any other removed; install -r: what the pins require
# and requirements.txt does not pin (setuptools, which pip upgrades for hdrhistogram); check:
# the environment is consistent, as pip's resolver makes it.
install_with_uv() {
  local uv="$uv_dir/bin/uv" py=.venv/bin/python
  "$uv" --version
  printf -- '-e %s\n' "$here" > "$tmp/editable.txt"
  "$uv" pip sync --python "$py" requirements.txt "$tmp/editable.txt" &&
    "$uv" pip install --python "$py" -r requirements.txt &&
    "$uv" pip check --python "$py"
}
install_with_pip() {
  .venv/bin/pip install --upgrade pip
  .venv/bin/pip install -r requirements.txt
  .venv/bin/pip install --no-deps -e .
}
run_python() {
  local how
  python3 -m venv .venv
  if [ -n "${TR4947_PIP:-}" ]; then
    how="pip (TR4947_PIP is set)"
    note "installing with pip: TR4947_PIP is set"
  elif ! ensure_uv; then
    how="pip (uv $UV_VERSION could not be installed)"
    note "uv $UV_VERSION could not be installed from PyPI (log above): installing with pip instead"
  elif ! install_with_uv; then
    how="pip (uv failed)"
    note "uv pip sync failed (its output is in this phase's log): installing with pip instead"
  else
    how="uv $UV_VERSION"
  fi
  case $how in pip*) install_with_pip ;; esac
  .venv/bin/python -m ipykernel install --sys-prefix --name python3 >/dev/null
  echo "$py_want" > .venv/.stamp
  done_phase "installed ($n_pins packages, with $how)"
}

# --- 4. Node packages (Antora, extensions, mermaid, highlight.js) -----------------------
check_node() { node_want=$(hash_of package-lock.json); [ "$(cat node_modules/.stamp 2>/dev/null)" != "$node_want" ]; }
run_node() {
  npm ci --no-audit --no-fund --loglevel=http
  echo "$node_want" > node_modules/.stamp
  done_phase "installed"
}

# --- 5. Apache Kafka jars from Maven Central -------------------------------------------
# lab/kafka/pom.xml pins the lab's Kafka; pom-<version>.xml the other releases the guide runs
# (the TR's own 3.2.3 with ZooKeeper, for the functional-validation chapter). The ones that
# changed are resolved in ONE Maven run: an aggregator pom (in the temporary directory) lists
# them as modules, and each copies into the cache directory named after its own kafka.version.
# --strict-checksums fails on a checksum that does not match.
kafka_version_of() { sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$1"; }
check_kafka() {
  local pom
  kafka_stale=()
  for pom in lab/kafka/pom.xml lab/kafka/pom-*.xml; do
    [ -f "$pom" ] || continue
    [ "$(cat "$cache/kafka-$(kafka_version_of "$pom")/libs/.stamp" 2>/dev/null)" = "$(hash_of "$pom")" ] ||
      kafka_stale+=("$pom")
  done
  ((${#kafka_stale[@]}))
}
run_kafka() {
  local pom versions=() modules=""
  mkdir -p "$tmp/kafka"
  for pom in "${kafka_stale[@]}"; do
    versions+=("$(kafka_version_of "$pom")")
    rm -rf "$cache/kafka-${versions[-1]}/libs"
    modules+="<module>$(realpath --relative-to="$tmp/kafka" "$pom")</module>"
  done
  cat > "$tmp/kafka/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
<groupId>io.github.tr4947</groupId><artifactId>kafka-releases</artifactId><version>1</version>
<packaging>pom</packaging><modules>$modules</modules></project>
EOF
  # shellcheck disable=SC2016  # ${kafka.version} is Maven's, each module's own
  mvn -B --strict-checksums -Dstyle.color=never -f "$tmp/kafka/pom.xml" dependency:copy-dependencies \
      -DoutputDirectory="$cache/kafka-\${kafka.version}/libs" -DincludeScope=runtime
  for pom in "${kafka_stale[@]}"; do
    local libs; libs="$cache/kafka-$(kafka_version_of "$pom")/libs"
    [ -d "$libs" ] || { echo "Maven left no $libs for $pom" >&2; exit 1; }
    hash_of "$pom" > "$libs/.stamp"
  done
  done_phase "resolved Kafka ${versions[*]} (one Maven run)"
}

# --- 6. The lab's NFS client layer (tr4947-nfs, Rust, from lab/nfs-client) --------------
# Built from source with the locked dependencies from crates.io into the cache; stamped by
# a hash of the crate's files, so a warm setup skips it. make test also runs cargo clippy and
# cargo fmt --check on it: with rustup, its clippy and rustfmt components are added if missing.
crate=lab/nfs-client
nfs_target="$cache/nfs-client"
check_nfs() {
  nfs_want=$(cd "$crate" && find Cargo.toml Cargo.lock src -type f | sort | xargs cat | sha256sum | cut -c1-16)
  nfs_build=0
  if [ "$(cat "$nfs_target/.stamp" 2>/dev/null)" != "$nfs_want" ] || [ ! -x "$nfs_target/release/tr4947-nfs" ]; then
    nfs_build=1
  fi
  rust_components=()
  if command -v rustup >/dev/null; then
    local installed; installed=$(rustup component list --installed 2>/dev/null || true)
    grep -q '^clippy' <<<"$installed" || rust_components+=(clippy)
    grep -q '^rustfmt' <<<"$installed" || rust_components+=(rustfmt)
  fi
  nfs_what=""
  if ((nfs_build)); then nfs_what="building tr4947-nfs with cargo into $nfs_target"; fi
  if ((${#rust_components[@]})); then
    nfs_what+="${nfs_what:+; }rustup component add ${rust_components[*]}"
  fi
  ((nfs_build)) || ((${#rust_components[@]}))
}
run_nfs() {
  local did=()
  if ((${#rust_components[@]})); then
    rustup component add "${rust_components[@]}"
    did+=("added rustup components ${rust_components[*]}")
  fi
  if ((nfs_build)); then
    cargo build --release --locked --manifest-path "$crate/Cargo.toml" --target-dir "$nfs_target"
    echo "$nfs_want" > "$nfs_target/.stamp"
    did+=("built tr4947-nfs")
  fi
  done_phase "$(printf '%s, ' "${did[@]}" | sed 's/, $//')"
}

# --- 7. Go tools from the Go module proxy (scripts/go-tools.txt) -----------------------
check_go() {
  local pkg name
  go_stale=()
  while read -r pkg; do
    name=$(basename "${pkg%@*}")
    if [ ! -x "$cache/bin/$name" ] || [ "$(cat "$cache/bin/.$name.stamp" 2>/dev/null)" != "$pkg" ]; then
      go_stale+=("$pkg")
    fi
  done < <(sed 's/#.*//' scripts/go-tools.txt | tr -s ' \t' '\n' | grep -v '^$')
  ((${#go_stale[@]}))
}
run_go() {
  local pkg name built=()
  for pkg in "${go_stale[@]}"; do
    name=$(basename "${pkg%@*}")
    # GOTOOLCHAIN=auto: a Go older than the module asks for fetches that toolchain (itself a
    # module on the proxy); Debian's Go defaults to local.
    GOBIN="$cache/bin" GOTOOLCHAIN=auto go install "$pkg"
    echo "$pkg" > "$cache/bin/.$name.stamp"
    built+=("$name")
  done
  done_phase "built ${built[*]}"
}

# --- Run them: checks in order; the runs side by side ------------------------------------
# start_phase N WHAT FUNCTION: phase N has work (WHAT); its run goes into the background in a
# process group of its own (so that stopping it stops Maven, cargo, npm... with it), its
# output into its log. With TR4947_SETUP_JOBS=1 it runs here, its output shown.
start_phase() {
  local n=$1 what=$2 fn=$3 status=0
  phase "$n"; worked=1
  work "$what"
  if [ "${TR4947_SETUP_JOBS:-}" = 1 ]; then
    set +e
    ( phase_body "$n" "$fn" ) </dev/null
    status=$?
    set -e
    ((status == 0)) || fail_phase "$n" "$status" ""
    summary[$n]=$(cat "$tmp/$n.result")
    return 0
  fi
  set -m
  ( phase_body "$n" "$fn" ) </dev/null >"$tmp/$n.log" 2>&1 &
  job_phase[$!]=$n
  set +m
}
# phase_body N FUNCTION, in a subshell: the run, stopping at the first command that fails (the
# command is noted for the failure message); its summary line goes to a file.
phase_body() {
  result_file="$tmp/$1.result"
  set -eE
  trap 'printf "%s\n" "$BASH_COMMAND" > "$tmp/'"$1"'.failed"' ERR
  "$2"
}
# fail_phase N STATUS LOG: phase N failed: its own message, the end of its log; exit 1 (the
# EXIT trap stops the others).
fail_phase() {
  local n=$1 status=$2 log=$3 cmd
  cmd=$(cat "$tmp/$n.failed" 2>/dev/null || true)
  say "[$n/$PHASES] ${PHASE_NAMES[$n - 1]}: FAILED (exit $status${cmd:+ of: $cmd})"
  if [ -n "$log" ] && [ -s "$log" ]; then
    say "[$n/$PHASES] ${PHASE_NAMES[$n - 1]}: the last 40 lines of its output:"
    tail -n 40 "$log" | sed 's/^/    /' >&3
  fi
  exit 1
}
up_to_date() { phase "$1"; done_phase "up to date${2:+ ($2)}"; }

if check_python; then start_phase 3 "creating .venv with the $n_pins packages requirements.txt pins" run_python
else up_to_date 3; fi
if check_node; then start_phase 4 "npm ci, pinned by package-lock.json" run_node
else up_to_date 4; fi
if check_kafka; then
  kafka_what=""
  for pom in "${kafka_stale[@]}"; do kafka_what+="$(kafka_version_of "$pom") "; done
  start_phase 5 "Apache Kafka ${kafka_what% } from Maven Central into $cache/kafka-<version>/libs" run_kafka
else up_to_date 5; fi
if check_nfs; then start_phase 6 "$nfs_what" run_nfs
else up_to_date 6; fi
if check_go; then start_phase 7 "building ${go_stale[*]}" run_go
else up_to_date 7; fi

# Wait for the phases in the background, as they end; the first to fail stops the others.
while ((${#job_phase[@]})); do
  status=0
  wait -n -p pid "${!job_phase[@]}" || status=$?
  n=${job_phase[$pid]}
  unset "job_phase[$pid]"
  if ((status)); then fail_phase "$n" "$status" "$tmp/$n.log"; fi
  summary[$n]=$(cat "$tmp/$n.result")
done

# --- summary -----------------------------------------------------------------------------
if ((worked)); then
  say "done in $(since "$t_start") s:"
  for n in $(seq "$PHASES"); do say "  ${summary[$n]}"; done
else
  say "done in $(since "$t_start") s: everything was up to date"
fi
