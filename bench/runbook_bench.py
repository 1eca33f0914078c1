"""Benchmark: the runbook cold (every chapter forced), cached (nothing changed), `make site` on
a fresh clone after setup, and where the cold run's time goes: per chapter, the time inside
measurement windows (benchmark phases, idle baselines, timed recoveries: what the run records
report) and outside them (bring-ups, tool start-up, waits), and a per-step profile. First, a
host reference (a lab broker's start time), so runs on different days can be compared.

Prints its figures, asserts nothing; a run that fails is reported as failed (exit 1), never
as a goal met. The cold run writes its run records to a temporary results root, so the
committed results and notebooks are not touched.

  .venv/bin/python bench/runbook_bench.py [--skip-cold] [--skip-clone]
"""
from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PY = str(REPO / ".venv" / "bin" / "python")
FRESH_GOAL_S = 180
OUTSIDE_GOAL = 0.25      # at most this share of a cold run outside measurement windows
STEP = re.compile(r"^\s+\[(?P<nb>[\w-]+)\]\s+\d+/\d+ (?P<title>.{1,60}?)\s+(?P<s>[\d.]+)s\s+\(total")
DONE = re.compile(r"^\s+done in (?P<s>\d+)s")
HEAD = re.compile(r"^\[\d+/\d+\] (?P<nb>[\w-]+)")


def timed(cmd: list[str], cwd: Path = REPO, log: Path | None = None) -> tuple[float, int, str]:
    t0 = time.monotonic()
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if log:
        log.write_text(p.stdout)
    return time.monotonic() - t0, p.returncode, p.stdout


def profile(output: str) -> tuple[dict[str, float], list[tuple[float, str, str]]]:
    chapters, steps, current = {}, [], None
    for line in output.splitlines():
        if m := HEAD.match(line):
            current = m["nb"]
        elif (m := DONE.match(line)) and current:
            chapters[current] = float(m["s"])
        elif m := STEP.match(line):
            steps.append((float(m["s"]), m["nb"], m["title"].strip()))
    return chapters, sorted(steps, reverse=True)


def windows(results: Path) -> dict[str, tuple[float, float]]:
    """chapter -> (total seconds, seconds inside measurement windows), from the run records'
    timing (tr4947.runbook.execute: provisioning and the notebook; the windows the procedures
    reported)."""
    import json
    out = {}
    for f in sorted(results.glob("*/*.json")):
        timing = (json.loads(f.read_text()).get("run") or {}).get("timing")
        if timing:
            out[f.stem] = (timing["total_s"], timing["measured_s"])
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--skip-cold", action="store_true", help="skip the forced run of every chapter")
    ap.add_argument("--skip-clone", action="store_true", help="skip `make site` on a fresh clone")
    a = ap.parse_args()
    failed = False
    rows = []
    # The lab's figures move with the host (other tenants, clock): a broker's start time,
    # measured now, says how fast this host was when the runbook times below were taken.
    sys.path.insert(0, str(REPO / "bench"))
    import jvm_start
    from tr4947.lab import cds
    try:
        archive = cds.ensure(say=print).get("server")
        starts = sorted(jvm_start.broker(archive)[0] for _ in range(3))
        print(f"host reference: a lab broker starts in {starts[1]:.2f} s (median of 3, "
              f"{'with' if archive else 'without'} its CDS archive; bench/jvm_start.py)")
    except Exception as exc:  # a reference only: the runbook figures still stand
        print(f"host reference: not measured ({exc})")
    if not a.skip_cold:
        with tempfile.TemporaryDirectory(prefix="tr4947-bench-") as tmp:
            log = Path(tmp) / "cold.log"
            secs, rc, out = timed([PY, "-m", "tr4947.runbook", "--force", "--results", tmp], log=log)
            chapters, steps = profile(out)
            rows.append(("runbook, cold (every chapter forced)", secs, rc))
            split = windows(Path(tmp))
            print("cold run, per chapter: total, inside measurement windows, outside (s)")
            for nb, (total, inside) in sorted(split.items(), key=lambda x: -x[1][0]):
                print(f"  {nb:<34} {total:7.0f} {inside:7.0f} {total - inside:7.0f}"
                      f"  ({(total - inside) / total:.0%} outside)" if total else "")
            tot = sum(t for t, _ in split.values())
            ins = sum(i for _, i in split.values())
            if tot:
                print(f"  {'all chapters':<34} {tot:7.0f} {ins:7.0f} {tot - ins:7.0f}  "
                      f"({(tot - ins) / tot:.0%} outside; goal {OUTSIDE_GOAL:.0%}: "
                      + ("met" if (tot - ins) / tot <= OUTSIDE_GOAL else "NOT met") + ")")
            print("cold run, the 12 longest steps (s):")
            for s, nb, title in steps[:12]:
                print(f"  {s:7.1f}  {nb:<22} {title}")
            if rc:
                failed = True
                print(out[-2000:])
    secs, rc, _ = timed([PY, "-m", "tr4947.runbook"])
    rows.append(("runbook, cached (nothing changed)", secs, rc))
    if not a.skip_clone:
        with tempfile.TemporaryDirectory(prefix="tr4947-clone-") as tmp:
            clone = Path(tmp) / "guide"
            subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
            secs, rc, out = timed(["make", "-s", "setup"], cwd=clone)
            rows.append(("fresh clone: make setup", secs, rc))
            if rc == 0:
                secs, rc, out = timed(["make", "-s", "site"], cwd=clone)
                ran = [line for line in out.splitlines() if ": runs (" in line]
                rows.append((f"fresh clone: make site after setup ({len(ran)} chapter(s) ran)",
                             secs, rc))
                fresh = secs
            subprocess.run([str(clone / ".venv/bin/tr4947"), "lab", "down"], cwd=clone,
                           capture_output=True)
            shutil.rmtree(clone, ignore_errors=True)
    print(f"{'measurement':<58} {'seconds':>8}  exit")
    for name, s, rc in rows:
        print(f"{name:<58} {s:8.1f}  {rc}")
        failed |= rc != 0
    if failed:
        print("FAILED: a run above exited non-zero; its time says nothing about the goals")
        return 1
    if not a.skip_clone:
        print(f"fresh clone, make site after setup: {fresh:.0f} s (goal {FRESH_GOAL_S} s): "
              + ("met" if fresh <= FRESH_GOAL_S else "NOT met"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
