"""Benchmark: warm Antora build time of the whole guide and its page count.

Goal (Foundation issue): the full guide builds in under 15 s on 2 cores, warm.
Prints its figures; asserts nothing.   .venv/bin/python bench/site_build.py [-n 3]
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=3, help="builds to time after one warm-up build")
    args = ap.parse_args()
    cmd = ["npx", "--no-install", "antora", "antora-playbook.yml"]
    subprocess.run(cmd, cwd=REPO, capture_output=True, check=True)          # warm-up
    times = []
    for _ in range(args.n):
        t0 = time.monotonic()
        subprocess.run(cmd, cwd=REPO, capture_output=True, check=True)
        times.append(time.monotonic() - t0)
    site = REPO / "build" / "site" / "tr4947"
    pages = len(list(site.glob("*.html")))
    pdfs = len(list(site.glob("*.pdf")))
    print(f"site build (warm, incl. PDF): min {min(times):.2f} s, median {statistics.median(times):.2f} s "
          f"over {args.n} builds; {pages} pages, {pdfs} PDF")
    med = statistics.median(times)
    print(f"goal: under 15 s warm on 2 cores -> {'met' if med < 15 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
