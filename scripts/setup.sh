#!/usr/bin/env bash
# Installs everything the project needs, from the package registries only:
#   Debian packages (scripts/apt-packages.txt), a Python venv pinned by requirements.txt,
#   Node packages pinned by package-lock.json, Apache Kafka's jars from Maven Central (checksums
#   enforced) and the Go tools of scripts/go-tools.txt from the Go module proxy.
# First it checks what it cannot install itself (the README's prerequisites: Debian 12, root or
# sudo, Python 3.11+, Java 17+, Maven, Node 20+, Go, cargo) and, if anything is missing, names
# each one with the command that installs it and stops before installing anything.
# Idempotent: each part keeps a stamp (hash of its pin file) and is skipped when unchanged,
# so a warm run takes about a second. Each phase prints a line with its time; a summary ends.
#
#   bash scripts/setup.sh           check, then install what changed
#   bash scripts/setup.sh --check   only check the prerequisites (installs nothing)
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
cache=${TR4947_CACHE:-$HOME/.cache/tr4947}

check_only=0
case "${1:-}" in
  "") ;;
  --check) check_only=1 ;;
  *) echo "usage: bash scripts/setup.sh [--check]" >&2; exit 2 ;;
esac

say() { printf '[setup] %s\n' "$*"; }
hash_of() { cat "$@" | sha256sum | cut -c1-16; }
now() { printf '%s' "${EPOCHREALTIME/,/.}"; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

t_start=$(now)
summary=()
phase_no=0
PHASES=$(grep -c '^phase "' "$here/scripts/setup.sh")   # a new block that calls phase counts too
# phase NAME starts a phase; work WHAT says it is doing something that takes time (with the
# time since setup started); done_phase RESULT ends it with a line and its own time.
phase() { phase_no=$((phase_no + 1)); phase_name=$1; phase_t0=$(now); }
work() { worked=1; say "[$phase_no/$PHASES] $phase_name: $* (at $(since "$t_start") s)"; }
done_phase() {
  local took; took=$(since "$phase_t0")
  say "[$phase_no/$PHASES] $phase_name: $1 ($took s)"
  summary+=("$(printf '%-20s %6s s  %s' "$phase_name" "$took" "$1")")
}
worked=0

# --- 1. Prerequisites: what setup cannot install itself --------------------------------
phase "prerequisites"
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

if cargo_v=$(cargo --version 2>/dev/null); then found+=("cargo $(echo "$cargo_v" | cut -d' ' -f2)"); else
  need "Rust's cargo (cargo$(command -v cargo >/dev/null && echo ' does not run'))" \
       "rustup (see rustup.rs), or apt-get install cargo"
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

# --- 2. Debian packages ----------------------------------------------------------------
phase "Debian packages"
mapfile -t apt_pkgs < <(sed 's/#.*//' scripts/apt-packages.txt | tr -s ' \t' '\n' | grep -v '^$')
missing=()
for p in "${apt_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  work "installing ${#missing[@]}: ${missing[*]}"
  $sudo_cmd apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -q --no-install-recommends "${missing[@]}"
  done_phase "installed ${#missing[@]} (${missing[*]})"
else
  done_phase "up to date (${#apt_pkgs[@]} packages)"
fi

# --- 3. Python virtual environment -----------------------------------------------------
phase "Python environment"
want=$(hash_of requirements.txt pyproject.toml)
if [ "$(cat .venv/.stamp 2>/dev/null)" != "$want" ]; then
  work "creating .venv with the $(grep -c '==' requirements.txt) packages requirements.txt pins"
  python3 -m venv .venv
  .venv/bin/pip install --upgrade pip
  .venv/bin/pip install -r requirements.txt
  .venv/bin/pip install --no-deps -e .
  .venv/bin/python -m ipykernel install --sys-prefix --name python3 >/dev/null
  echo "$want" > .venv/.stamp
  done_phase "installed ($(grep -c '==' requirements.txt) packages)"
else
  done_phase "up to date"
fi

# --- 4. Node packages (Antora, extensions, mermaid, highlight.js) -----------------------
phase "Node packages"
want=$(hash_of package-lock.json)
if [ "$(cat node_modules/.stamp 2>/dev/null)" != "$want" ]; then
  work "npm ci, pinned by package-lock.json (a line per download)"
  npm ci --no-audit --no-fund --loglevel=http
  echo "$want" > node_modules/.stamp
  done_phase "installed"
else
  done_phase "up to date"
fi

# --- 5. Apache Kafka jars from Maven Central -------------------------------------------
# lab/kafka/pom.xml pins the lab's Kafka; pom-<version>.xml the other releases the guide runs
# (the TR's own 3.2.3 with ZooKeeper, for the functional-validation chapter). Maven prints
# each artifact it downloads; --strict-checksums fails on a checksum that does not match.
phase "Kafka jars"
resolved=()
for pom in lab/kafka/pom.xml lab/kafka/pom-*.xml; do
  [ -f "$pom" ] || continue
  kafka_version=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$pom")
  libs="$cache/kafka-$kafka_version/libs"
  want=$(hash_of "$pom")
  if [ "$(cat "$libs/.stamp" 2>/dev/null)" != "$want" ]; then
    work "Apache Kafka $kafka_version from Maven Central into $libs"
    rm -rf "$libs"
    mvn -B --strict-checksums -Dstyle.color=never -f "$pom" dependency:copy-dependencies \
        -DoutputDirectory="$libs" -DincludeScope=runtime
    echo "$want" > "$libs/.stamp"
    resolved+=("$kafka_version")
  fi
done
if ((${#resolved[@]})); then done_phase "resolved Kafka ${resolved[*]}"; else done_phase "up to date"; fi

# --- 6. The lab's NFS client layer (tr4947-nfs, Rust, from lab/nfs-client) --------------
# Built from source with the locked dependencies from crates.io into the cache; stamped by
# a hash of the crate's files, so a warm setup skips it.
phase "NFS client layer"
crate=lab/nfs-client
nfs_target="$cache/nfs-client"
want=$(cd "$crate" && find Cargo.toml Cargo.lock src -type f | sort | xargs cat | sha256sum | cut -c1-16)
if [ "$(cat "$nfs_target/.stamp" 2>/dev/null)" != "$want" ] || [ ! -x "$nfs_target/release/tr4947-nfs" ]; then
  [ -x "$HOME/.cargo/bin/cargo" ] && PATH="$HOME/.cargo/bin:$PATH"     # rustup's place
  work "building tr4947-nfs with cargo into $nfs_target"
  cargo build --release --locked --manifest-path "$crate/Cargo.toml" --target-dir "$nfs_target"
  echo "$want" > "$nfs_target/.stamp"
  done_phase "built tr4947-nfs"
else
  done_phase "up to date"
fi

# --- 7. Go tools from the Go module proxy (scripts/go-tools.txt) -----------------------
phase "Go tools"
built=()
while read -r pkg; do
  name=$(basename "${pkg%@*}")
  stamp="$cache/bin/.$name.stamp"
  if [ ! -x "$cache/bin/$name" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$pkg" ]; then
    work "building $pkg"
    # GOTOOLCHAIN=auto: a Go older than the module asks for fetches that toolchain (itself a
    # module on the proxy); Debian's Go defaults to local.
    GOBIN="$cache/bin" GOTOOLCHAIN=auto go install "$pkg"
    echo "$pkg" > "$stamp"
    built+=("$name")
  fi
done < <(sed 's/#.*//' scripts/go-tools.txt | tr -s ' \t' '\n' | grep -v '^$')
if ((${#built[@]})); then done_phase "built ${built[*]}"; else done_phase "up to date"; fi

# --- summary -----------------------------------------------------------------------------
if ((worked)); then
  say "done in $(since "$t_start") s:"
  for line in "${summary[@]}"; do say "  $line"; done
else
  say "done in $(since "$t_start") s: everything was up to date"
fi
