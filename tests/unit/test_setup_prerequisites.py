"""scripts/setup.sh checks what it cannot install itself before it installs anything: a
machine without Maven, or with a Node or Java that is too old, is told so within seconds,
with the command that installs it, and nothing is installed.

Each case runs a copy of setup.sh in a scratch directory (it works on the checkout it sits
in), with a PATH made of this machine's commands less the one taken away, or with a stand-in
that reports an old version first on the PATH. CARGO_HOME points at an empty directory, so
that rustup's cargo (which setup also looks for there) does not stand in for the one taken
away, unless a case puts one there."""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tr4947 import paths

PINS = ["scripts/setup.sh", "scripts/apt-packages.txt", "scripts/go-tools.txt",
        "requirements.txt", "pyproject.toml", "package-lock.json", "lab/nfs-client/Cargo.toml"]
RUST_VERSION = re.search(r'^rust-version = "([\d.]+)"',
                         (paths.REPO / "lab/nfs-client/Cargo.toml").read_text(), re.M).group(1)


def checkout(tmp: Path) -> Path:
    d = tmp / "checkout"
    for f in PINS + [str(p.relative_to(paths.REPO)) for p in paths.KAFKA_POMS.glob("pom*.xml")]:
        (d / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(paths.REPO / f, d / f)
    return d


def path_without(tmp: Path, *names: str, fakes: dict[str, str] | None = None,
                 d: Path | None = None) -> str:
    """This machine's PATH as one directory of links, less ``names``, with ``fakes`` (name ->
    shell script) in their place."""
    d = d or tmp / "bin"
    d.mkdir(parents=True)
    for entry in os.environ["PATH"].split(os.pathsep):
        p = Path(entry)
        if not p.is_dir():
            continue
        for f in p.iterdir():
            if f.name in names or (d / f.name).exists() or not os.access(f, os.X_OK):
                continue
            (d / f.name).symlink_to(f.resolve() if f.is_symlink() else f)
    for name, script in (fakes or {}).items():
        (d / name).unlink(missing_ok=True)
        (d / name).write_text("#!/bin/sh\n" + script + "\n")
        (d / name).chmod(0o755)
    return str(d)


def fake(d: Path, name: str, script: str) -> None:
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_text("#!/bin/sh\n" + script + "\n")
    (d / name).chmod(0o755)


def setup(tmp: Path, path: str, *args: str, edit: dict[str, str] | None = None
          ) -> tuple[subprocess.CompletedProcess, float, Path]:
    """Run setup.sh from a scratch checkout (``edit``: file -> new text, in that checkout)."""
    d = checkout(tmp)
    for f, text in (edit or {}).items():
        (d / f).write_text(text)
    env = {**os.environ, "PATH": path, "TR4947_CACHE": str(tmp / "cache"),
           "CARGO_HOME": str(tmp / "cargo-home")}
    t0 = time.monotonic()
    r = subprocess.run(["/bin/bash", str(d / "scripts" / "setup.sh"), *args], cwd=d, env=env,
                       capture_output=True, text=True, timeout=120)
    return r, time.monotonic() - t0, d


def nothing_installed(tmp: Path, d: Path) -> None:
    assert not (d / ".venv").exists() and not (d / "node_modules").exists()
    assert not (tmp / "cache").exists()


def test_without_maven_setup_stops_at_once_naming_it(tmp_path):
    r, took, d = setup(tmp_path, path_without(tmp_path, "mvn"))
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert took < 10, f"took {took:.1f} s"
    assert "Maven (mvn)" in r.stderr and "install: apt-get install maven" in r.stderr
    assert "nothing was installed" in r.stderr
    assert "Java" not in r.stderr and "Node" not in r.stderr      # only what is missing
    nothing_installed(tmp_path, d)


@pytest.mark.parametrize("name, script, expect", [
    ("node", 'echo v18.20.4', ("Node.js 20 or later (node is v18.20.4)", "nodejs 20.x")),
    ("java", 'echo \'openjdk version "11.0.22" 2024-01-16\' >&2',
     ("Java 17 or later (java is 11)", "apt-get install openjdk-17-jre-headless")),
    ("python3", 'case "$*" in *version_info*) exit 1;; *-V*) echo Python 3.9.2;; esac',
     ("Python 3.11 or later (python3 is 3.9.2)", "apt-get install python3 python3-venv")),
    ("go", 'case "$*" in *GOVERSION*) echo go1.19.8;; esac',
     ("Go 1.21 or later (go is 1.19.8", "bookworm-backports golang-go")),
    # Debian 12's cargo: older than the crate's rust-version; the fix is rustup.
    ("cargo", 'echo "cargo 1.63.0"',
     (f"Rust's cargo {RUST_VERSION} or later (cargo is 1.63.0; lab/nfs-client/Cargo.toml's "
      f"rust-version is {RUST_VERSION})", "rustup (Debian 12's cargo is 1.63)", "sh.rustup.rs")),
])
def test_a_too_old_version_is_named_with_the_fix(tmp_path, name, script, expect):
    r, took, d = setup(tmp_path, path_without(tmp_path, fakes={name: script}))
    assert r.returncode == 1 and took < 10, (r.stdout, r.stderr)
    for part in expect:
        assert part in r.stderr, r.stderr
    nothing_installed(tmp_path, d)


def test_cargo_is_held_to_the_crates_own_rust_version(tmp_path):
    """The minimum is read from lab/nfs-client/Cargo.toml, not written into setup.sh: a crate
    that asks for more refuses this machine's own cargo, naming both versions."""
    cargo_toml = (paths.REPO / "lab/nfs-client/Cargo.toml").read_text()
    asks = re.sub(r'^rust-version = ".*"', 'rust-version = "99.0"', cargo_toml, flags=re.M)
    r, _took, d = setup(tmp_path, os.environ["PATH"], "--check",
                        edit={"lab/nfs-client/Cargo.toml": asks})
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert "Rust's cargo 99.0 or later (cargo is 1." in r.stderr and "rustup" in r.stderr, r.stderr
    nothing_installed(tmp_path, d)


def test_rustups_cargo_stands_in_for_a_too_old_one_on_the_path(tmp_path):
    """Debian's cargo first on the PATH, rustup's in CARGO_HOME/bin (not on the PATH, as
    before a new login shell): setup takes rustup's, and says which version it found."""
    fake(tmp_path / "cargo-home" / "bin", "cargo", 'echo "cargo 1.95.0 (rustup)"')
    path = path_without(tmp_path, fakes={"cargo": 'echo "cargo 1.63.0"'})
    r, _took, d = setup(tmp_path, path, "--check")
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert "cargo 1.95.0" in r.stdout.splitlines()[-1], r.stdout
    nothing_installed(tmp_path, d)


def test_every_missing_one_is_named_in_one_go(tmp_path):
    r, _took, d = setup(tmp_path, path_without(tmp_path, "mvn", "go", "cargo"))
    assert r.returncode == 1
    for part in ("Maven (mvn)", "Go 1.21 or later (go)", f"Rust's cargo {RUST_VERSION} or later (cargo)"):
        assert part in r.stderr, r.stderr
    nothing_installed(tmp_path, d)


def test_check_reports_what_it_found_and_installs_nothing(tmp_path):
    r, _took, d = setup(tmp_path, os.environ["PATH"], "--check")
    assert r.returncode == 0, r.stderr
    line = r.stdout.strip().splitlines()[-1]
    assert line.startswith("[setup] [1/") and "prerequisites:" in line
    for part in ("Python 3.", "Java ", "Maven", "Node ", "Go ", "cargo "):
        assert part in line, line
    nothing_installed(tmp_path, d)


# --- The phases side by side: a failure, or Ctrl-C, stops them all and leaves nothing --------

def parallel_checkout(tmp: Path, npm: str) -> tuple[Path, dict[str, str], Path]:
    """A scratch checkout whose Python environment is up to date (its stamp) and whose other
    phases are stand-ins: npm runs ``npm``; mvn, cargo and go sleep (noting their pids); every
    Debian package reads as installed. Returns the checkout, its environment, the pid file."""
    d = checkout(tmp)
    (d / ".venv").mkdir()
    stamp = subprocess.run("cat requirements.txt pyproject.toml | sha256sum | cut -c1-16",
                           shell=True, cwd=d, capture_output=True, text=True, check=True).stdout
    (d / ".venv" / ".stamp").write_text(stamp)
    pids = tmp / "pids"
    sleeper = f'echo $$ >> {pids}; exec sleep 300'
    path = path_without(tmp, "rustup", fakes={
        "dpkg-query": "printf 'install ok installed'",
        "npm": npm,
        "mvn": sleeper,
        "go": f'case "$*" in *GOVERSION*) echo go1.22.0;; *) {sleeper};; esac',
        "cargo": f'case "$*" in --version) echo "cargo 1.95.0";; *) {sleeper};; esac',
    })
    (tmp / "t").mkdir()
    env = {**os.environ, "PATH": path, "TR4947_CACHE": str(tmp / "cache"),
           "CARGO_HOME": str(tmp / "cargo-home"), "TMPDIR": str(tmp / "t")}
    return d, env, pids


def alive(pids: Path) -> list[int]:
    left = []
    for pid in map(int, pids.read_text().split()):
        try:
            os.kill(pid, 0)
            left.append(pid)
        except ProcessLookupError:
            pass
    return left


def wait_for_sleepers(pids: Path, n: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if pids.exists() and len(pids.read_text().split()) >= n:
            return
        time.sleep(0.1)
    seen = len(pids.read_text().split()) if pids.exists() else 0
    raise AssertionError(f"{seen} of the {n} phases' stand-ins started within 30 s")
    raise AssertionError(f"the stand-ins did not start: {pids.read_text() if pids.exists() else ''}")


def test_a_failed_phase_stops_the_others_with_its_own_message(tmp_path):
    # npm fails once the three others are running, so that there is something to stop.
    pids = tmp_path / "pids"
    d, env, pids = parallel_checkout(
        tmp_path, f'while [ $(cat {pids} 2>/dev/null | wc -l) -lt 3 ]; do sleep 0.1; done; '
                  'echo "npm ERR! the registry said no"; exit 3')
    t0 = time.monotonic()
    r = subprocess.run(["/bin/bash", str(d / "scripts" / "setup.sh")], cwd=d, env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert time.monotonic() - t0 < 30                      # not the sleepers' 300 s
    out = r.stdout
    assert "Node packages: FAILED (exit 3 of: npm ci" in out, out
    assert "npm ERR! the registry said no" in out, out     # the end of its own log
    assert "stopping: " in out and "Kafka jars" in out.split("stopping: ")[1], out
    assert "done in" not in out
    assert len(pids.read_text().split()) == 3
    assert alive(pids) == [], "processes left behind"
    assert list((tmp_path / "t").iterdir()) == [], "temporary files left behind"


def test_ctrl_c_stops_every_phase_and_leaves_nothing(tmp_path):
    d, env, pids = parallel_checkout(tmp_path, npm=f'echo $$ >> {tmp_path / "pids"}; exec sleep 300')
    # Its output goes to a file, not a pipe: the test waits for setup.sh itself, and a process
    # left behind shows as one (below), not as a read that never ends. SIGINT is at its
    # default in setup.sh, as from a terminal, whatever the test runner's is.
    log = tmp_path / "out"
    with log.open("w") as out_file:
        p = subprocess.Popen(["/bin/bash", str(d / "scripts" / "setup.sh")], cwd=d, env=env,
                             stdout=out_file, stderr=subprocess.STDOUT, text=True,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        try:
            wait_for_sleepers(pids, 4)
            p.send_signal(signal.SIGINT)
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                raise AssertionError("setup.sh still running 30 s after Ctrl-C; it said:\n"
                                     + log.read_text()) from None
        finally:
            p.kill()
    out = log.read_text()
    assert p.returncode == 130, out
    assert "interrupted" in out and "stopping: " in out, out
    assert alive(pids) == [], "processes left behind"
    assert list((tmp_path / "t").iterdir()) == [], "temporary files left behind"


@pytest.mark.parametrize("jobs", ["", "1"], ids=["side by side", "TR4947_SETUP_JOBS=1"])
def test_phases_that_succeed_each_say_so_and_the_summary_keeps_their_order(tmp_path, jobs):
    """Stand-ins that do their job at once (npm makes node_modules, mvn the libs directories
    it is given, cargo the binary, go the tool): both ways end with the summary in phase
    order, and a second run finds everything up to date."""
    d, env, _pids = parallel_checkout(tmp_path, npm="mkdir -p node_modules")
    bin_dir = Path(env["PATH"])
    fake(bin_dir, "mvn", r'''for a; do case $a in -DoutputDirectory=*) out=${a#-DoutputDirectory=};; esac; done
for v in $(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' lab/kafka/pom*.xml); do
  mkdir -p "$(printf '%s' "$out" | sed "s/\${kafka.version}/$v/")"; done''')
    fake(bin_dir, "cargo", r'''case "$*" in --version) echo "cargo 1.95.0";; *)
for a; do [ "$prev" = --target-dir ] && t=$a; prev=$a; done
mkdir -p "$t/release" && touch "$t/release/tr4947-nfs" && chmod +x "$t/release/tr4947-nfs";; esac''')
    fake(bin_dir, "go", r'''case "$*" in *GOVERSION*) echo go1.22.0;; *)
mkdir -p "$GOBIN" && touch "$GOBIN/actionlint" && chmod +x "$GOBIN/actionlint";; esac''')
    (d / "lab/nfs-client/src").mkdir(parents=True)
    (d / "lab/nfs-client/Cargo.lock").write_text("")
    env["TR4947_SETUP_JOBS"] = jobs
    r = subprocess.run(["/bin/bash", str(d / "scripts" / "setup.sh")], cwd=d, env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, (r.stdout, r.stderr)
    summary = r.stdout.split("] done in ")[1].splitlines()[1:]
    names = ["prerequisites", "Debian packages", "Python environment", "Node packages",
             "Kafka jars", "NFS client layer", "Go tools"]
    assert [line.split("   ")[1].strip() for line in summary] == names, summary
    kafka_line = next(line for line in r.stdout.splitlines() if "Kafka jars: resolved" in line)
    assert "(one Maven run)" in kafka_line
    for pom in paths.KAFKA_POMS.glob("pom*.xml"):
        version = re.search(r"<kafka.version>(.*)</kafka.version>", pom.read_text()).group(1)
        assert version in kafka_line and (tmp_path / f"cache/kafka-{version}/libs/.stamp").exists()
    assert list((tmp_path / "t").iterdir()) == []
    again = subprocess.run(["/bin/bash", str(d / "scripts" / "setup.sh")], cwd=d, env=env,
                           capture_output=True, text=True, timeout=60)
    assert again.returncode == 0 and "everything was up to date" in again.stdout, again.stdout
