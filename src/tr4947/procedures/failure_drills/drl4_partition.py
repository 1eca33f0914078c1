"""DRL-4, network partition: broker 1's host loses its link for a set time, on both clusters
at once."""
from __future__ import annotations

import time

from .harness import LEAD_CUT_S, SNIP, Harness
from .report import report
from .runs import Run
from .sides import Side


def run(harness: Harness, seconds: float) -> None:
    """DRL-4: broker 1's host loses its link for ``seconds`` (on each cluster)."""
    def inject(s: Side, n: int, w) -> Run | None:
        # A few seconds ahead: the command's answer must be home before the link goes.
        at = time.time() + LEAD_CUT_S
        r = harness.t.run_snippet(SNIP + "DRL-4-partition.sh", s.b1.name, check=True,
                                  needs=harness.setup,
                                  DEV=s.b1.get("kafka_interface", "eth0"),
                                  AT=f"{at:.3f}", HEAL_AT=f"{at + seconds:.3f}")
        if n == 0:
            s.rec.show("DRL-4", f"{s.name.upper()}: {s.b1.name} is cut off for "
                          f"{seconds:g} s", r)
        if r.planned:
            return None
        time.sleep(max(0.0, at + seconds + 0.5 - time.time()))
        harness.reachable(s.b1.name)
        marks = harness.t.run_snippet(SNIP + "DRL-4-marks.sh", s.b1.name, read_only=True,
                                      check=True).stdout.split()
        run = Run("DRL-4", s.name, n, float(marks[0]), float(marks[1]))
        harness.recovered(w, run, "the heal")
        if n == 0:
            harness.log_lines("DRL-4", s, run, [s.b1, s.controllers[0]])
        return run
    outcomes = harness.both(lambda s: harness.drill("DRL-4", s, inject, "Network partition"))
    report(harness, "DRL-4", outcomes, f"broker 1's host cut off for {seconds:g} s")
