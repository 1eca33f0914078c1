"""Benchmark: `make setup` and `make site` on a fresh clone with empty caches, as on a fresh
machine (the Debian packages and the system's toolchains aside: those are the machine's).

The clone gets a HOME of its own, so everything setup and the site build download or build
lands there, never in the real caches: ~/.cache/tr4947 (setup's cache, $TR4947_CACHE is
unset so setup takes $HOME/.cache/tr4947), ~/.cache/uv, ~/.cache/pip, ~/.m2, ~/.npm,
~/go and the Go build cache, and CARGO_HOME (crates.io's registry). rustup's toolchains are
found where they are (RUSTUP_HOME), and ~/.npmrc is copied (the machine's npm settings).

Prints setup's phase lines and times, then `make site`'s parts and times (runbook, Antora
HTML, PDFs), and how long each took in all; asserts nothing.

    .venv/bin/python bench/fresh_setup.py                 # clone of HEAD: setup, then make site
    .venv/bin/python bench/fresh_setup.py --no-site       # setup only
    .venv/bin/python bench/fresh_setup.py --setup FILE    # with this setup.sh instead of the clone's
                                                          # (e.g. an older one from `git show`)
    .venv/bin/python bench/fresh_setup.py --site-twice    # and a second make site, nothing changed

`make site` on the clone runs the chapters whose inputs changed since their committed
results on the lab; the bench says which first (tr4947 runbook --status) and, unless
--lab is given, builds the site without running any (scripts/site.sh with RUNBOOK=0), so it
never brings up a lab beside one that is running. The second `make site` (--site-twice)
shows what is left with nothing changed (the PDFs come from the clone HOME's
~/.cache/tr4947/pdf-cache, filled by the first).

Figures from 2 cores depend on what else runs: the load average is printed with them.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# setup's summary: "[setup]   Python environment     68.6 s  installed (189 packages)"
SUMMARY = re.compile(r"\[setup\]   (\S.{0,19}?) +([\d.]+) s  ")


def fresh_env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    real_home = Path(os.environ.get("HOME", "/root"))
    for var in ("TR4947_CACHE", "CARGO_HOME", "GOPATH", "GOMODCACHE", "GOCACHE", "UV_CACHE_DIR",
                "PIP_CACHE_DIR", "npm_config_cache", "XDG_CACHE_HOME", "VIRTUAL_ENV"):
        env.pop(var, None)
    env["HOME"] = str(home)
    # rustup's toolchains stay where they are (not a download cache: a toolchain is the
    # machine's, like its Go or Java); crates.io's registry goes to the new CARGO_HOME.
    rustup = Path(os.environ.get("RUSTUP_HOME", real_home / ".rustup"))
    if rustup.is_dir():
        env["RUSTUP_HOME"] = str(rustup)
    npmrc = real_home / ".npmrc"
    if npmrc.is_file():
        shutil.copy(npmrc, home / ".npmrc")
    return env


def run(cmd: list[str], cwd: Path, env: dict[str, str], log: Path) -> tuple[int, float, list[str]]:
    """Run, echoing the lines that say where time goes, the whole output into log."""
    t0 = time.monotonic()
    lines: list[str] = []
    # A session of its own: stopped or interrupted, the bench stops the whole command (setup
    # stops its phases on TERM) before it removes the clone.
    with log.open("w") as out, subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE,
                                                  stderr=subprocess.STDOUT, text=True,
                                                  errors="replace", start_new_session=True) as p:
        try:
            read_lines(p, out, lines)
        except BaseException:
            os.killpg(p.pid, signal.SIGTERM)
            p.wait()
            raise
    return p.returncode, time.monotonic() - t0, lines


def read_lines(p: subprocess.Popen, out, lines: list[str]) -> None:
    """Each line into the log and ``lines``; setup's, site.sh's and its parts' on the console."""
    assert p.stdout
    parts = False                  # scripts/site.sh's closing lines: each part's time
    for line in p.stdout:
        out.write(line)
        line = line.rstrip("\n")
        lines.append(line)
        parts = (parts or line.startswith("Site built in")) and not line.startswith("Open ")
        if parts or line.startswith(("[setup]", "== ", "[site]")):
            print("   ", line, flush=True)


def setup_phases(lines: list[str]) -> dict[str, float]:
    """Each phase's own time, from setup's summary."""
    took: dict[str, float] = {}
    for line in lines:
        m = SUMMARY.search(line)
        if m:
            took[m.group(1)] = float(m.group(2))
    return took


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--setup", type=Path, help="use this setup.sh instead of the clone's own")
    ap.add_argument("--no-site", action="store_true", help="setup only")
    ap.add_argument("--site-twice", action="store_true", help="then make site again, nothing changed")
    ap.add_argument("--lab", action="store_true",
                    help="let make site run the chapters whose inputs changed (on the lab)")
    ap.add_argument("--keep", action="store_true", help="keep the clone and its HOME (printed)")
    args = ap.parse_args()
    sys.stdout.reconfigure(line_buffering=True)      # in order with the commands' lines
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))   # so that the clone is removed

    tmp = Path(tempfile.mkdtemp(prefix="tr4947-fresh-"))
    clone, home = tmp / "clone", tmp / "home"
    home.mkdir()
    try:
        subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
        head = subprocess.run(["git", "-C", str(clone), "log", "-1", "--format=%h %s"],
                              capture_output=True, text=True, check=True).stdout.strip()
        print(f"fresh clone of {REPO} at {head[:80]}")
        if args.setup:
            shutil.copy(args.setup, clone / "scripts" / "setup.sh")
            print(f"setup.sh from {args.setup}")
        env = fresh_env(home)
        print(f"HOME={home} (empty: setup's cache, uv/pip, Maven, npm, Go and cargo caches)")

        print("== make setup (cold)")
        rc, took, lines = run(["make", "setup"], clone, env, tmp / "setup.log")
        phases = setup_phases(lines)
        verdict = "ok" if rc == 0 else f"FAILED (exit {rc}), its log: {tmp / 'setup.log'}"
        print(f"setup: {verdict}, {took:.1f} s wall")
        for name, t in phases.items():
            print(f"  {name:<20} {t:6.1f} s")
        print(f"  {'sum of the phases':<20} {sum(phases.values()):6.1f} s  (wall {took:.1f} s)")
        load = os.getloadavg()
        print(f"  load average now: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on {os.cpu_count()} cores")
        if rc:
            args.keep = True
            return 1

        rc2, took2, _ = run(["make", "setup"], clone, env, tmp / "setup-warm.log")
        print(f"setup again (warm): {took2:.1f} s wall{'' if rc2 == 0 else f' FAILED (exit {rc2})'}")

        if args.no_site:
            return 0
        status = subprocess.run([".venv/bin/python", "-m", "tr4947.runbook", "--status", "--json"],
                                cwd=clone, env=env, capture_output=True, text=True)
        try:
            stale = [c["chapter"] for c in json.loads(status.stdout)["chapters"] if not c["up_to_date"]]
        except (ValueError, KeyError):
            stale = ["(runbook --status failed: " + status.stderr.strip()[-200:] + ")"]
        print(f"chapters make site would run: {', '.join(stale) or 'none'}")
        site_env = dict(env)
        if stale and not args.lab:
            site_env["RUNBOOK"] = "0"
            print("  (built without running them: RUNBOOK=0; --lab runs them)")
        for n in range(2 if args.site_twice else 1):
            label = "make site" + (" (again, nothing changed)" if n else " (cold)")
            print(f"== {label}")
            rc, took, _ = run(["make", "site"], clone, site_env, tmp / f"site-{n}.log")
            print(f"{label}: {'ok' if rc == 0 else f'FAILED (exit {rc})'}, {took:.1f} s wall "
                  f"(setup included, warm)")
            if rc:
                args.keep = True
        return 0
    finally:
        if args.keep:
            print(f"kept: {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
