"""DRL-1, NFS server unreachable: broker 1's host loses its path to the data LIF for a set time
(nftables drops every packet between the host and the LIF's address, as a failed switch port
or a firewall change would), while the host itself stays on the network. The same step runs
on the lab and on a real target: it needs ``nft`` on the broker host, and where that is
missing the drill is refused, with the reason, before anything runs.

The lengths lie on either side of Kafka's timeouts (the follower lag allowance, 30 s by
default; the producer's delivery timeout, 120 s), on the deploy checklist's configuration.
The lengths that outlast the checklist's lag allowance run again with the TR's test value of
it, side by side: there, a follower on the cut-off broker stays in every ISR, so every
partition waits for it.

On the lab the packets are really dropped (Linux's nftables, in the broker host's network
namespace), but the broker's data are local to its NFS client layer: the layer notices the
silent server through its keepalive (NFS NULL each second; no answer for 3 s shuts its gate)
and from then on every request of the mount waits, as a kernel client's do at once. The
layer's own measure of that silence is each run's "client saw no answer for (s)"."""
from __future__ import annotations

import time

from . import configs as cf
from .harness import Harness
from .report import lengths_text, not_run, report
from .runs import Run
from .sides import Side

#: The column each run gets from the lab's NFS layer (its keepalive's measured silence).
CLIENT_SILENT = "client saw no answer for (s)"


def run(harness: Harness, lengths: list[float]) -> None:
    """DRL-1: broker 1's host cannot reach its NFS server for each of ``lengths`` seconds,
    ``repeats`` times each; the lengths past the checklist's lag allowance also on the TR's."""
    s = harness.sides.get("nfs")
    if s is None:
        not_run(harness, "DRL-1", "needs an NFS cluster")
        return
    if not harness.nft.get(s.name):
        not_run(harness, "DRL-1", f"nft (nftables) is not installed on {s.b1.name}, and this "
                         "drill drops the host's traffic to its NFS LIF with it; install "
                         "nftables there to run it")
        return
    outcomes = [_cut_off(harness, s, x) for x in lengths]
    longer = cf.outlasting(lengths, harness.configs[cf.CHECKLIST])
    if longer and cf.TR in harness.configs:
        harness.configure(cf.TR, only=s.name, proc="DRL-1")
        try:
            outcomes += [_cut_off(harness, s, x) for x in longer]
        finally:
            harness.configure(cf.CHECKLIST, only=s.name, proc="DRL-1")
    report(harness, "DRL-1", outcomes, "broker 1's host cut off from its NFS server for "
           + lengths_text(lengths))


def _cut_off(harness: Harness, s: Side, seconds: float):
    first = not any(o.drill == "DRL-1" for o in harness.outcomes)
    load = harness.load_label(s, seconds)

    def inject(s: Side, n: int, w) -> Run | None:
        before = harness.client_outages(s)
        r, at = harness.scheduled(s, "DRL-1-lif-drop.sh", seconds, MOUNTPOINT=s.mountpoint)
        if n == 0 and first:
            s.rec.show("DRL-1", f"NFS: {s.b1.name} cannot reach its NFS server for "
                                f"{seconds:g} s", r)
        if r.planned:
            return None
        time.sleep(max(0.0, at + seconds + 0.5 - time.time()))
        run = Run("DRL-1", s.name, n, *harness.marks(s, "DRL-1-marks.sh"))
        harness.recovered(w, run, "the heal")
        silences = harness.outages_since(s, before)
        if silences:
            run.extra[CLIENT_SILENT] = silences[0]
        if n == 0:
            harness.log_lines("DRL-1", s, run, [s.b1, s.brokers[1]], load)
        return run
    return harness.drill("DRL-1", s, inject, "NFS server unreachable", length=seconds)
