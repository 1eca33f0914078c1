"""scripts/setup.sh checks what it cannot install itself before it installs anything: a
machine without Maven, or with a Node or Java that is too old, is told so within seconds,
with the command that installs it, and nothing is installed.

Each case runs a copy of setup.sh in a scratch directory (it works on the checkout it sits
in), with a PATH made of this machine's commands less the one taken away, or with a stand-in
that reports an old version first on the PATH."""
from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tr4947 import paths

PINS = ["scripts/setup.sh", "scripts/apt-packages.txt", "scripts/go-tools.txt",
        "requirements.txt", "pyproject.toml", "package-lock.json"]


def checkout(tmp: Path) -> Path:
    d = tmp / "checkout"
    for f in PINS + [str(p.relative_to(paths.REPO)) for p in paths.KAFKA_POMS.glob("pom*.xml")]:
        (d / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(paths.REPO / f, d / f)
    return d


def path_without(tmp: Path, *names: str, fakes: dict[str, str] | None = None) -> str:
    """This machine's PATH as one directory of links, less ``names``, with ``fakes`` (name ->
    shell script) in their place."""
    d = tmp / "bin"
    d.mkdir()
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


def setup(tmp: Path, path: str, *args: str) -> tuple[subprocess.CompletedProcess, float, Path]:
    d = checkout(tmp)
    env = {**os.environ, "PATH": path, "TR4947_CACHE": str(tmp / "cache")}
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
])
def test_a_too_old_version_is_named_with_the_fix(tmp_path, name, script, expect):
    r, took, d = setup(tmp_path, path_without(tmp_path, fakes={name: script}))
    assert r.returncode == 1 and took < 10, (r.stdout, r.stderr)
    for part in expect:
        assert part in r.stderr, r.stderr
    nothing_installed(tmp_path, d)


def test_every_missing_one_is_named_in_one_go(tmp_path):
    r, _took, d = setup(tmp_path, path_without(tmp_path, "mvn", "go", "cargo"))
    assert r.returncode == 1
    for part in ("Maven (mvn)", "Go 1.21 or later (go)", "Rust's cargo"):
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
