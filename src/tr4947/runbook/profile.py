"""Where a runbook's time went: `tr4947 runbook --profile`.

From the run records' timing (written by the runner, tr4947.runbook.execute): per chapter,
the whole run, its provisioning, the union of the measurement windows its procedures reported
(benchmark phases, idle baselines, timed recoveries, drills), and the rest (bring-ups inside
the notebook, tool start-up, readiness waits, resets). The share outside the windows is what
a faster runbook can win without measuring less.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable


def union_seconds(windows: Iterable[tuple[float, float]]) -> float:
    """Length of the union of (start, end) intervals: overlapping windows (two clusters
    measured at once) count once."""
    total, end_so_far = 0.0, None
    for start, end in sorted(windows):
        if end_so_far is None or start > end_so_far:
            total += end - start
            end_so_far = end
        elif end > end_so_far:
            total += end - end_so_far
            end_so_far = end
    return total


def measured_seconds(entries: list[dict]) -> float:
    """The time inside measurement windows, from a run's ``measured`` entries: windows with
    their end time as a union, the older ones (seconds only) summed.

    Windows reported together after the fact share one end time: a load record reports
    each of its runs' windows when the step is over (Recorder.load), and the runs came one
    after another. Such a burst counts as one block, its windows' sum ending there (its runs'
    own ends are not recorded yet; a window that ends at a real time, a recovery or a drill,
    is placed exactly)."""
    bursts: dict[float, float] = {}
    for e in entries:
        if "end" in e:
            bursts[e["end"]] = bursts.get(e["end"], 0.0) + e["seconds"]
    timed = [(end - seconds, end) for end, seconds in bursts.items()]
    return union_seconds(timed) + sum(e["seconds"] for e in entries if "end" not in e)


def rows(results: Path, target: str = "lab") -> list[dict]:
    out = []
    for f in sorted((Path(results) / target).glob("*.json")):
        timing = (json.loads(f.read_text()).get("run") or {}).get("timing")
        if not timing:
            continue
        total, prov, meas = timing["total_s"], timing.get("provision_s", 0.0), \
            timing["measured_s"]
        out.append({"chapter": f.stem, "total_s": total, "provision_s": prov,
                    "measured_s": meas, "other_s": max(0.0, total - prov - meas)})
    return out


def report(results: Path, target: str = "lab") -> str:
    rs = rows(results, target)
    if not rs:
        return f"no run records with timing under {Path(results) / target}"
    head = f"{'chapter':<34} {'total':>7} {'provision':>9} {'measuring':>9} {'other':>7} {'outside':>7}"
    lines = [head, "-" * len(head)]
    for r in sorted(rs, key=lambda r: -r["total_s"]):
        outside = 1 - r["measured_s"] / r["total_s"] if r["total_s"] else 0.0
        lines.append(f"{r['chapter']:<34} {r['total_s']:>6.0f}s {r['provision_s']:>8.0f}s "
                     f"{r['measured_s']:>8.0f}s {r['other_s']:>6.0f}s {outside:>6.0%}")
    t = {k: sum(r[k] for r in rs) for k in ("total_s", "provision_s", "measured_s", "other_s")}
    lines.append("-" * len(head))
    lines.append(f"{'all ' + str(len(rs)) + ' chapters':<34} {t['total_s']:>6.0f}s "
                 f"{t['provision_s']:>8.0f}s {t['measured_s']:>8.0f}s {t['other_s']:>6.0f}s "
                 f"{1 - t['measured_s'] / t['total_s']:>6.0%}")
    lines.append(f"outside measurement windows: {t['total_s'] - t['measured_s']:.0f} s of "
                 f"{t['total_s']:.0f} s ({1 - t['measured_s'] / t['total_s']:.0%}): "
                 f"provisioning {t['provision_s']:.0f} s, the rest of the notebooks "
                 f"{t['other_s']:.0f} s")
    return "\n".join(lines)
