"""DRL-4, network partition: broker 1's host loses its link for a set time, on both clusters
at once, at several lengths on either side of Kafka's timeouts (on the deploy checklist's
configuration: a cut-off broker is fenced by the controller once its heartbeats stop, which
takes it out of every ISR whatever the follower lag allowance says)."""
from __future__ import annotations

import time

from .harness import Harness
from .report import lengths_text, report
from .runs import Run
from .sides import Side


def run(harness: Harness, lengths: list[float]) -> None:
    """DRL-4: broker 1's host loses its link for each of ``lengths`` seconds (on each
    cluster), ``repeats`` times each."""
    outcomes = []
    for seconds in lengths:
        outcomes += harness.both(lambda s, x=seconds: _cut(harness, s, x))
    report(harness, "DRL-4", outcomes, "broker 1's host cut off for " + lengths_text(lengths))


def _cut(harness: Harness, s: Side, seconds: float):
    first = not any(o.drill == "DRL-4" and o.cluster == s.name for o in harness.outcomes)
    load = harness.load_label(s, seconds)

    def inject(s: Side, n: int, w) -> Run | None:
        # A few seconds ahead: the command's answer must be home before the link goes.
        r, at = harness.scheduled(s, "DRL-4-partition.sh", seconds,
                                  DEV=s.b1.get("kafka_interface", "eth0"))
        if n == 0 and first:
            s.rec.show("DRL-4", f"{s.name.upper()}: {s.b1.name} is cut off for "
                          f"{seconds:g} s", r)
        if r.planned:
            return None
        time.sleep(max(0.0, at + seconds + 0.5 - time.time()))
        harness.reachable(s.b1.name)
        run = Run("DRL-4", s.name, n, *harness.marks(s, "DRL-4-marks.sh"))
        harness.recovered(w, run, "the heal")
        if n == 0:
            harness.log_lines("DRL-4", s, run, [s.b1, s.controllers[0]], load)
        return run
    return harness.drill("DRL-4", s, inject, "Network partition", length=seconds)
