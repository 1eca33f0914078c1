"""DRL-1, NFS server pause: broker 1's NFS mount stops answering for a set time (the lab's
NFS layer's hook; a real NFS client has no counterpart, so on a real target it does not run)."""
from __future__ import annotations

import json
import time

from .harness import SNIP, Harness
from .report import not_run, report
from .runs import Run
from .sides import Side


def run(harness: Harness, seconds: float) -> None:
    """DRL-1: broker 1's NFS mount stops answering for ``seconds``, ``repeats`` times."""
    s = harness.sides.get("nfs")
    if s is None or not harness.hook:
        not_run(harness, "DRL-1", "its fault is the lab's NFS layer pausing a mount "
                         "(tr4947-nfsctl pause), which a real NFS client has no counterpart "
                         "for; on a real target, DRL-2 (the data LIF moved with ONTAP's own "
                         "commands) and DRL-4 (the broker host cut off) drill the outage")
        return

    def inject(s: Side, n: int, w) -> Run | None:
        r = harness.t.run_snippet(SNIP + "DRL-1-pause.sh", s.b1.name, check=True,
                                  MOUNTPOINT=s.mountpoint, PAUSE_SECONDS=seconds)
        if n == 0:
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
            harness.log_lines("DRL-1", s, run, [s.b1, s.brokers[1]])
        return run
    o = harness.drill("DRL-1", s, inject, "NFS server pause")
    report(harness, "DRL-1", [o], f"{seconds:g} s pause of broker 1's NFS mount")
