"""Benchmark: the whole runbook on the lab, cold (forced) and cached, and a warm `make site`.

Prints its figures; asserts nothing. Goal from the pipeline issue: a warm rebuild with
nothing changed (`make site`) under 20 s.

  .venv/bin/python bench/runbook_bench.py [--skip-cold]
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def timed(cmd: list[str]) -> tuple[float, int]:
    t0 = time.monotonic()
    rc = subprocess.run(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    return time.monotonic() - t0, rc


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--skip-cold", action="store_true", help="skip the forced full run")
    args = ap.parse_args()
    py = str(REPO / ".venv" / "bin" / "python")
    rows = []
    if not args.skip_cold:
        rows.append(("runbook, cold (all notebooks forced)", *timed([py, "-m", "tr4947.runbook", "--force"])))
    rows.append(("runbook, cached (nothing changed)", *timed([py, "-m", "tr4947.runbook"])))
    rows.append(("make site, warm, nothing changed", *timed(["make", "-s", "site"])))
    print(f"{'measurement':<42} {'seconds':>8}  exit")
    for name, secs, rc in rows:
        print(f"{name:<42} {secs:8.1f}  {rc}")
    warm = rows[-1][1]
    print(f"goal: warm rebuild under 20 s -> {'met' if warm < 20 else 'NOT met'} ({warm:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
