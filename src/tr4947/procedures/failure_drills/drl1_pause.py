"""DRL-1, NFS server pause: broker 1's NFS mount stops answering for a set time (the lab's
NFS layer's hook; a real NFS client has no counterpart, so on a real target it does not run).

The pause runs at several lengths, on either side of Kafka's timeouts (the follower lag
allowance, 30 s by default; the producer's delivery timeout, 120 s), on the deploy checklist's
configuration. The lengths that outlast the checklist's lag allowance run again with the TR's
test value of it, side by side: there, a follower on the paused broker stays in every ISR, so
every partition waits for it."""
from __future__ import annotations

import json
import time

from . import configs as cf
from .harness import SNIP, Harness
from .report import lengths_text, not_run, report
from .runs import Run
from .sides import Side


def run(harness: Harness, lengths: list[float]) -> None:
    """DRL-1: broker 1's NFS mount stops answering for each of ``lengths`` seconds,
    ``repeats`` times each; the lengths past the checklist's lag allowance also on the TR's."""
    s = harness.sides.get("nfs")
    if s is None or not harness.hook:
        not_run(harness, "DRL-1", "its fault is the lab's NFS layer pausing a mount "
                         "(tr4947-nfsctl pause), which a real NFS client has no counterpart "
                         "for; on a real target, DRL-2 (the data LIF moved with ONTAP's own "
                         "commands) and DRL-4 (the broker host cut off) drill the outage")
        return
    outcomes = [_pause(harness, s, x) for x in lengths]
    longer = cf.outlasting(lengths, harness.configs[cf.CHECKLIST])
    if longer and cf.TR in harness.configs:
        harness.configure(cf.TR, only=s.name, proc="DRL-1")
        try:
            outcomes += [_pause(harness, s, x) for x in longer]
        finally:
            harness.configure(cf.CHECKLIST, only=s.name, proc="DRL-1")
    report(harness, "DRL-1", outcomes, "broker 1's NFS mount paused for "
           + lengths_text(lengths))


def _pause(harness: Harness, s: Side, seconds: float):
    first = not any(o.drill == "DRL-1" for o in harness.outcomes)
    load = harness.load_label(s, seconds)

    def inject(s: Side, n: int, w) -> Run | None:
        r = harness.t.run_snippet(SNIP + "DRL-1-pause.sh", s.b1.name, check=True,
                                  MOUNTPOINT=s.mountpoint, PAUSE_SECONDS=seconds)
        if n == 0 and first:
            s.rec.show("DRL-1", f"NFS: {s.b1.name}'s mount pauses for {seconds:g} s", r)
        if r.planned:
            return None
        # When the pause began: the status's time less what had passed of the pause (the
        # snippet prints the layer's status, one JSON line, then `date`).
        lines = r.stdout.strip().splitlines()
        status, said_at = json.loads(lines[-2]), float(lines[-1])
        began = said_at - (seconds - float(status["pause_left"]))
        run = Run("DRL-1", s.name, n, began, began + seconds)
        time.sleep(max(0.0, run.heal - time.time()))
        harness.recovered(w, run, "the pause")
        if n == 0:
            harness.log_lines("DRL-1", s, run, [s.b1, s.brokers[1]], load)
        return run
    return harness.drill("DRL-1", s, inject, "NFS server pause", length=seconds)

