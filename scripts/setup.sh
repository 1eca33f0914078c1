#!/usr/bin/env bash
# Installs everything the project needs, from the package registries only:
#   Debian packages (scripts/apt-packages.txt), a Python venv pinned by requirements.txt,
#   Node packages pinned by package-lock.json, and Apache Kafka's jars from Maven Central.
# Idempotent: each part keeps a stamp (hash of its pin file) and is skipped when unchanged,
# so a warm run takes about a second.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
cache=${TR4947_CACHE:-$HOME/.cache/tr4947}
mkdir -p "$cache"

say() { printf '[setup] %s\n' "$*"; }
hash_of() { cat "$@" | sha256sum | cut -c1-16; }

# --- Debian packages -------------------------------------------------------------------
mapfile -t apt_pkgs < <(sed 's/#.*//' scripts/apt-packages.txt | tr -s ' \t' '\n' | grep -v '^$')
missing=()
for p in "${apt_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  say "installing Debian packages: ${missing[*]}"
  sudo_cmd=""; [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# --- Python virtual environment --------------------------------------------------------
want=$(hash_of requirements.txt pyproject.toml)
if [ "$(cat .venv/.stamp 2>/dev/null)" != "$want" ]; then
  say "creating Python environment in .venv (pinned by requirements.txt)"
  python3 -m venv .venv
  .venv/bin/pip install -q --upgrade pip
  .venv/bin/pip install -q -r requirements.txt
  .venv/bin/pip install -q --no-deps -e .
  .venv/bin/python -m ipykernel install --sys-prefix --name python3 >/dev/null
  echo "$want" > .venv/.stamp
fi

# --- Node packages (Antora, extensions, mermaid, highlight.js) -------------------------
want=$(hash_of package-lock.json)
if [ "$(cat node_modules/.stamp 2>/dev/null)" != "$want" ]; then
  say "installing Node packages (pinned by package-lock.json)"
  npm ci --no-audit --no-fund --loglevel=error
  echo "$want" > node_modules/.stamp
fi

# --- Apache Kafka jars from Maven Central ----------------------------------------------
# lab/kafka/pom.xml pins the lab's Kafka; pom-<version>.xml the other releases the guide runs
# (the TR's own 3.2.3 with ZooKeeper, for the functional-validation chapter).
for pom in lab/kafka/pom.xml lab/kafka/pom-*.xml; do
  [ -f "$pom" ] || continue
  kafka_version=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$pom")
  libs="$cache/kafka-$kafka_version/libs"
  want=$(hash_of "$pom")
  if [ "$(cat "$libs/.stamp" 2>/dev/null)" != "$want" ]; then
    say "resolving Apache Kafka $kafka_version jars from Maven Central into $libs"
    rm -rf "$libs"
    mvn -q -B -f "$pom" dependency:copy-dependencies \
        -DoutputDirectory="$libs" -DincludeScope=runtime
    echo "$want" > "$libs/.stamp"
  fi
done

# --- The lab's NFS client layer (tr4947-nfs, Rust, from lab/nfs-client) -----------------
# Built from source with the locked dependencies from crates.io into the cache; stamped by
# a hash of the crate's files, so a warm setup skips it.
crate=lab/nfs-client
nfs_target="$cache/nfs-client"
want=$(cd "$crate" && find Cargo.toml Cargo.lock src -type f | sort | xargs cat | sha256sum | cut -c1-16)
if [ "$(cat "$nfs_target/.stamp" 2>/dev/null)" != "$want" ] || [ ! -x "$nfs_target/release/tr4947-nfs" ]; then
  [ -x "$HOME/.cargo/bin/cargo" ] && PATH="$HOME/.cargo/bin:$PATH"     # rustup's place
  command -v cargo >/dev/null || { echo "[setup] cargo not found: install Rust (rustup, or Debian's cargo if it is 1.85 or newer)" >&2; exit 1; }
  say "building the lab's NFS client layer (tr4947-nfs) with cargo into $nfs_target"
  cargo build --release --locked -q --manifest-path "$crate/Cargo.toml" --target-dir "$nfs_target"
  echo "$want" > "$nfs_target/.stamp"
fi
