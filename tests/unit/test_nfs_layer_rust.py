"""The lab's NFS client layer (lab/nfs-client, Rust) tested as Rust code: its unit tests,
clippy with warnings as errors, and rustfmt, as a Rust project's CI runs them.

The build goes into the target directory scripts/setup.sh builds the release binary in
($TR4947_CACHE or ~/.cache/tr4947, then nfs-client), with the locked dependencies, so the
dependencies are compiled once for setup and these tests alike. Setup installs cargo with
rustup (~/.cargo/bin) and the clippy and rustfmt components."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

CRATE = Path(__file__).resolve().parents[2] / "lab" / "nfs-client"
CACHE = Path(os.environ.get("TR4947_CACHE") or Path.home() / ".cache" / "tr4947")
TARGET = CACHE / "nfs-client"


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path.home() / '.cargo' / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return env


def _cargo(*args: str, timeout: float = 900) -> None:
    env = _env()
    if not shutil.which("cargo", path=env["PATH"]):
        pytest.fail("cargo is not installed (scripts/setup.sh installs it with rustup: run `make setup`)")
    cmd = ["cargo", *args]
    p = subprocess.run(cmd, cwd=CRATE, env=env, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        pytest.fail(f"`{' '.join(cmd)}` in {CRATE} failed (exit {p.returncode}):\n{p.stdout}\n{p.stderr}",
                    pytrace=False)


def test_cargo_test_passes():
    _cargo("test", "--locked", "--target-dir", str(TARGET))


def test_clippy_finds_nothing():
    _cargo("clippy", "--locked", "--target-dir", str(TARGET), "--all-targets", "--", "-D", "warnings")


def test_rustfmt_has_nothing_to_change():
    # `cargo fmt --check` prints the diff it would apply; rustfmt.toml in the crate sets the width.
    _cargo("fmt", "--check")
