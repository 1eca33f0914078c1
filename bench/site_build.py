"""Benchmark: warm Antora build time of the whole guide (three editions: English, French,
Japanese, with their PDFs) beside the English edition alone, measured in the same run.

Goal (Foundation issue): the full guide builds in under 15 s on 2 cores, warm.
Prints its figures; asserts nothing.   .venv/bin/python bench/site_build.py [-n 3]
"""
from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PLAYBOOK = REPO / "antora-playbook.yml"


def timed_builds(playbook: Path, n: int) -> list[float]:
    cmd = ["npx", "--no-install", "antora", str(playbook.name)]
    subprocess.run(cmd, cwd=REPO, capture_output=True, check=True)          # warm-up
    times = []
    for _ in range(n):
        t0 = time.monotonic()
        subprocess.run(cmd, cwd=REPO, capture_output=True, check=True)
        times.append(time.monotonic() - t0)
    return times


def counts() -> str:
    site = REPO / "build" / "site" / "tr4947"
    pages = len(list(site.rglob("*.html")))
    pdfs = len(list(site.rglob("*.pdf")))
    return f"{pages} pages, {pdfs} PDF"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=3, help="builds to time after one warm-up build")
    args = ap.parse_args()
    # The English edition alone: the same playbook with only the English content root. It
    # must sit beside the real one (Antora resolves `url: .` from the playbook's directory).
    one = REPO / ".bench-playbook-en.yml"
    one.write_text(re.sub(r"start_paths: \[[^\]]*\]", "start_paths: [.]", PLAYBOOK.read_text()))
    try:
        t1 = timed_builds(one, args.n)
        c1 = counts()
    finally:
        one.unlink(missing_ok=True)
    t3 = timed_builds(PLAYBOOK, args.n)
    c3 = counts()
    m1, m3 = statistics.median(t1), statistics.median(t3)
    print(f"site build, English only (warm, incl. PDF): median {m1:.2f} s (min {min(t1):.2f}) "
          f"over {args.n} builds; {c1}")
    print(f"site build, three editions (warm, incl. PDFs): median {m3:.2f} s (min {min(t3):.2f}) "
          f"over {args.n} builds; {c3}; {m3 / m1:.2f}x the English-only build")
    print(f"goal: under 15 s warm on 2 cores -> {'met' if m3 < 15 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
