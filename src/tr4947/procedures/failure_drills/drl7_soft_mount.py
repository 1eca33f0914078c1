"""DRL-7, soft mount: DRL-1's fault (broker 1's host cut off from its NFS server) on a broker
whose volume is mounted ``soft``, beside DRL-1's hard mount at the same length.

A soft mount gives up on a request once its major timeout has passed (nfs(5): the mount's
timeo and retrans, see tr4947.nfs_timeouts) and the application gets EIO. For Kafka, an
I/O error on a log directory takes that directory offline; a broker whose every log
directory is offline stops. A hard mount (the deploy checklist's) waits the outage out
instead, as DRL-1 shows.

Lab only: the drill remounts broker 1's volume ``soft`` for its runs and ``hard`` again
after, which on a real cluster would put a production log volume on the mount option the
checklist rules out. On the lab the soft timeout is the lab's NFS client layer's (it fails
a request that waited the major timeout with EIO, as the kernel does); Kafka's reaction to
the error is Kafka's own."""
from __future__ import annotations

import time

from ... import nfs_timeouts
from ..record import agrees
from .harness import SNIP, Harness
from .report import not_run, report
from .runs import Run
from .sides import Side

SOFT_CLAIM = "guide.drill-soft-mount-offline"
#: How long after the path is back broker 1 may still stop: taking a log directory offline
#: closes its files, and on a soft mount each close waits the major timeout again.
STOP_WAIT_S = 120
#: Each run's columns.
STOPPED = "broker stopped after (s)"
FAILED = "requests failed with EIO"


def run(harness: Harness, options: str, drop_s: float) -> None:
    """DRL-7: broker 1's volume mounted with ``options`` (soft, with its timeo and retrans),
    then its host cut off from the NFS server for ``drop_s`` seconds, ``repeats`` times;
    broker 1 restarted after each; the volume mounted as before at the end."""
    to = nfs_timeouts.from_options(options)     # checked by FailureDrills (_soft)
    s = harness.sides.get("nfs")
    if s is None:
        not_run(harness, "DRL-7", "needs an NFS cluster")
        return
    if not (harness.run.is_lab and harness.lab_layer):
        not_run(harness, "DRL-7", "it remounts broker 1's log volume soft, the mount option "
                         "the deploy checklist rules out for Kafka; on a production cluster "
                         "that is the risk itself, so the drill runs on the lab only")
        return
    if not harness.nft.get(s.name):
        not_run(harness, "DRL-7", f"nft (nftables) is not installed on {s.b1.name}")
        return
    harness.remount(s, s.b1, options, f"Lab: broker 1's volume mounted {to.words}", "DRL-7")
    hard = []

    def mount_hard() -> None:
        if not hard:
            hard.append(True)
            harness.remount(s, s.b1, "", "After DRL-7: broker 1's volume mounted hard again",
                            "DRL-7")
    try:
        # Hard again once the load is over and checked, before the lab is compared with
        # what DRL-0 found; or, if the drill failed, on the way out.
        o = harness.drill("DRL-7", s, lambda s, n, w: _inject(harness, s, n, w, drop_s),
                          "Soft mount", restore=mount_hard)
    finally:
        mount_hard()
    report(harness, "DRL-7", [o], f"broker 1's volume mounted {to.words} (major timeout "
           f"{to.major_s:g} s), its host cut off from the NFS server for {drop_s:g} s")
    if o is not None:
        _verdict(harness, s, o, to, drop_s)


def _inject(harness: Harness, s: Side, n: int, w, drop_s: float) -> Run | None:
    t = harness.t
    before = _soft_timeouts(harness, s)
    r, at = harness.scheduled(s, "DRL-1-lif-drop.sh", drop_s, MOUNTPOINT=s.mountpoint)
    if n == 0:
        s.rec.show("DRL-7", f"NFS: {s.b1.name} cannot reach its NFS server for {drop_s:g} s",
                   r)
    if r.planned:
        return None
    # Broker 1 stops once a write fails and its log directory goes offline (which can end
    # after the path is back), or lives on.
    stopped = None
    while time.time() < at + drop_s + STOP_WAIT_S:
        if not s.cluster.alive(s.b1):
            stopped = time.time()
            break
        time.sleep(0.5)
    time.sleep(max(0.0, at + drop_s + 0.5 - time.time()))
    run = Run("DRL-7", s.name, n, *harness.marks(s, "DRL-1-marks.sh"))
    run.extra[STOPPED] = None if stopped is None else round(stopped - run.fault, 1)
    failed = _soft_timeouts(harness, s)
    run.extra[FAILED] = None if failed is None or before is None else failed - before
    if stopped is not None:
        again = t.run_snippet(SNIP + "DRL-3-restart.sh", s.b1.name, check=True)
        if n == 0:
            s.rec.show("DRL-7", f"{s.b1.name}: Kafka starts again", again)
        s.cluster.wait_serving([s.b1], 240)
    harness.recovered(w, run, "the restart" if stopped is not None else "the heal")
    if n == 0:
        harness.log_lines("DRL-7", s, run, [s.b1], "")
    return run


def _soft_timeouts(harness: Harness, s: Side) -> int | None:
    """The requests broker 1's mount has failed with EIO so far (the lab's NFS layer)."""
    try:
        return int((harness.client_status(s) or {})["soft_timeouts"])
    except (ValueError, KeyError, TypeError):
        return None


def _verdict(harness: Harness, s: Side, o, to: nfs_timeouts.Timeouts, drop_s: float) -> None:
    stops = [r.extra.get(STOPPED) for r in o.runs]
    stopped = [x for x in stops if x is not None]
    ok = len(stopped) == len(stops)
    ev = harness.rec.evidence(real=["kafka", "kafka-clients", "linux"], model=["nfs-layer"])
    s.rec.verdict("DRL-7", SOFT_CLAIM, agrees(ev) if ok else "differs", tr="-", evidence=ev,
                  lab=f"broker 1 stopped in {len(stopped)} of {len(stops)} runs"
                      + (f", {min(stopped):g}-{max(stopped):g} s after the cut" if stopped
                         else ""),
                  why=f"on a {to.words} mount (major timeout {to.major_s:g} s) cut off from "
                      f"its server for {drop_s:g} s, Kafka's writes failed with EIO, its log "
                      "directory went offline and the broker stopped; the hard mount of DRL-1 "
                      "waited the same outage out",
                  action="mount Kafka's volumes hard (the default) with timeo=600,retrans=2; "
                         "never soft")
