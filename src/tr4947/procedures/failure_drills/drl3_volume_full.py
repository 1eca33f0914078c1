"""DRL-3, volume full: Kafka's own writes fill broker 1's volume, set just above what it holds,
until the broker stops; the fix (``volume size``) and a restart; the preflight's space check
before, on the nearly full volume and after the fix."""
from __future__ import annotations

import time
from shlex import quote as q

from ...wait import until
from .. import space_check as sc
from ..nfs_audit import FAIL, PASS
from ..record import agrees
from .harness import SNIP, Harness
from .report import not_run, report
from .runs import Run
from .sides import Side

SPACE_CLAIM = "guide.drill-preflight-space"


def run(harness: Harness, fill_rate: int, full_percent: int, floor_mb: int = 18) -> None:
    """DRL-3: Kafka's own writes (``fill_rate`` 1 KB records a second) grow broker 1's
    volume to ``floor_mb``; the volume is then set so that it is ``full_percent`` used
    and the writes fill the rest; the broker stops; ``volume size`` gives the volume its
    size back and the broker restarts. The preflight's space check runs before, on the
    nearly full volume and after the fix."""
    s = harness.sides.get("nfs")
    if s is None or not harness.ontap:
        not_run(harness, "DRL-3", "needs an NFS cluster on ONTAP")
        return
    t = harness.t
    checks: dict[str, str] = {}

    def space(title: str | None, needs=None) -> sc.SpaceRow | None:
        rows, r = sc.space_audit(t, s.volume, harness.svm, needs=needs or harness.setup)
        if title:
            s.rec.show("DRL-3", f"Preflight space check: {title}", r, prompt="::>",
                          show=False)
            if rows:
                checks[title] = sc.record_space(s.rec, "DRL-3", f"Preflight space "
                                                f"check: {title}", rows)
        return rows[0] if rows else None

    def inject(s: Side, n: int, w) -> Run | None:
        first = n == 0
        before = space("before the drill" if first else None)
        size = (before.size if before else None) or "SIZE"
        fill = t.run_snippet(SNIP + "DRL-3-fill.sh", harness.client, check=True, timeout=120,
                             needs=harness.setup, BOOTSTRAP=s.bootstrap(), RATE=fill_rate)
        if not fill.planned:
            until(lambda: (space(None) or before).used >= floor_mb * 2 ** 20, harness.timeout,
                  0.5, f"{s.volume} to hold {floor_mb} MB")
        # Set the volume so that what it holds is ``full_percent`` of its usable size (the
        # size less the snapshot reserve); the writes go on, so if the volume has grown
        # past that size meanwhile, ONTAP refuses and the size is worked out again.
        shrink = None
        for _ in range(5):
            now = space(None, needs=fill)
            want = "NEARLY_FULL" if now is None else f"{nearly_full_mb(now, full_percent)}MB"
            shrink = t.run_snippet(SNIP + "DRL-3-volume-size.ontap", harness.ontap,
                                   svm=harness.svm, volume=s.volume, size=want)
            if shrink.ok and "smaller than the used space" not in shrink.stdout:
                break
        shrink.check()
        fault = time.time()
        full = space("the volume nearly full" if first else None, needs=shrink)
        halted = None
        if not shrink.planned:
            try:
                until(lambda: not s.cluster.alive(s.b1), harness.timeout, 0.5,
                      f"Kafka on {s.b1.name} to stop on the full volume")
                halted = time.time()
            except TimeoutError:
                # The size was not enforced on the broker's writes: the run says so, and the
                # repair below still gives the volume its size back.
                s.rec.text("DRL-3", "", f"Kafka on {s.b1.name} did not stop within "
                           f"{harness.timeout:g} s of the volume being set nearly full: its "
                           "writes were not refused (on the lab's NFS layer with FUSE "
                           "passthrough, as on lab-remote, data goes around the size limit; "
                           "ONTAP refuses them itself).")
        df = t.run_snippet(SNIP + "DRL-3-df.sh", s.b1.name, read_only=True, needs=shrink,
                           MOUNTPOINT=s.mountpoint)
        stop = t.run_snippet(SNIP + "DRL-3-fill-stop.sh", harness.client, needs=fill)
        grow = t.run_snippet(SNIP + "DRL-3-volume-size.ontap", harness.ontap, check=True,
                             svm=harness.svm, volume=s.volume,
                             size=size if isinstance(size, str) else
                             f"{size // 2 ** 20}MB")
        heal = time.time()
        # Started again only if it stopped (a second broker on the same log directory would
        # not start, and must not be tried).
        again = t.run_snippet(SNIP + "DRL-3-restart.sh", s.b1.name, check=True) \
            if halted is not None or shrink.planned else None
        if first:
            s.rec.show("DRL-3", "Kafka's writes fill the volume", fill, show=False)
            s.rec.show("DRL-3", f"The volume is set to {want}", shrink, prompt="::>")
            s.rec.show("DRL-3", f"{s.b1.name}: the volume as the client sees it, once "
                          "Kafka has stopped", df)
            s.rec.show("DRL-3", "The writes that filled it stop", stop, show=False)
            s.rec.show("DRL-3", "The fix: the volume gets its size back", grow,
                          prompt="::>")
            if again is not None:
                s.rec.show("DRL-3", f"{s.b1.name}: Kafka starts again", again)
        if shrink.planned:
            return None
        s.cluster.wait_serving([s.b1], 240)
        run = Run("DRL-3", s.name, n, fault, heal)
        run.extra["broker stopped after (s)"] = None if halted is None else halted - fault
        run.extra["volume used when set (%)"] = full.percent_used if full else None
        harness.recovered(w, run, "the restart")
        if first:
            space("after the fix")
            harness.log_lines("DRL-3", s, run, [s.b1])
        return run
    o = harness.drill("DRL-3", s, inject, "Volume full")
    t.run(f"bin/kafka-topics.sh --bootstrap-server {q(s.bootstrap())} --delete "
          "--if-exists --topic drills-fill", harness.client, needs=harness.setup)
    report(harness, "DRL-3", [o], f"volume {s.volume} filled by Kafka's writes")
    if o is not None:
        ok = checks.get("the volume nearly full") == FAIL and \
            checks.get("after the fix") == PASS
        # The guide's space check ran; the space it read is the ONTAP stand-in's.
        ev = harness.rec.evidence(real=["guide-code"], model=["ontap-space"])
        s.rec.verdict("DRL-3", SPACE_CLAIM, agrees(ev) if ok else "differs", tr="-",
                         evidence=ev,
                         lab=f"nearly full: {checks.get('the volume nearly full', '-')}; "
                             f"after the fix: {checks.get('after the fix', '-')}",
                         why="the space check read the volume as ONTAP reports it, on the "
                             "nearly full volume (autosize off) and after the fix",
                         action="run the preflight's space check on every Kafka volume, "
                                "or turn autosize on with a maximum that fits the aggregate")


def nearly_full_mb(r: sc.SpaceRow, percent: float) -> int:
    """The size (whole MB, at least ONTAP's 20 MB) at which what volume ``r`` holds is
    ``percent`` of its usable space (the size less the snapshot reserve)."""
    import math
    usable = (r.used + r.available) / r.size if r.size else 1.0
    return max(20, math.ceil(r.used * 100 / percent / usable / 2 ** 20))
