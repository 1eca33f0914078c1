"""REC-1..REC-3: replace a failed broker, on direct-attached disks and on a shared volume.

Two clusters of three brokers (``das``: a local disk per broker; ``nfs``: an NFS volume per
broker) and one standby broker each. REC-1 fills a test topic replicated to all three brokers
and lets a consumer group commit offsets. REC-2 replaces broker 1 as the TR does: the broker
dies (SIGKILL), its address moves to the standby (``ip addr``, announced with gratuitous
ARP), and the standby starts as broker 1 with broker 1's configuration: on DAS from an empty
disk (formatted with the cluster's id), on NFS with broker 1's volume mounted where broker 1
had it. REC-3 measures how long the replacement takes: the TR's way (its log, from the start
line to the last fetcher removed / state loaded) and the cluster's (until no partition is
under-replicated).

To measure more than once, the replacement becomes the next round's broker 1 and the host it
replaced becomes the spare (its disk wiped: a new, empty disk), so rounds alternate between
two hosts.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from shlex import quote as q

from .. import kafka_tools as kt
from ..wait import until
from ..measure import recovery
from ..targets.kafka import KafkaCluster, bootstrap_of
from .record import agrees

CLUSTERS = ("das", "nfs")
TOPIC = "rec-test"
REC2 = {"das": "broker-recovery/REC-2-standby-das.sh",
        "nfs": "broker-recovery/REC-2-standby-nfs.sh"}


def clusters(t) -> dict[str, KafkaCluster]:
    """The inventory's das and nfs clusters; each needs brokers and a standby host."""
    out = {}
    for c in CLUSTERS:
        kc = t.cluster(c)
        if not kc.brokers or kc.standby is None:
            raise ValueError(f"cluster {c} needs brokers and a standby host "
                             f"(kafka_standby: true) in inventory {t.name}")
        out[c] = kc
    return out


def bootstrap(C: KafkaCluster, skip_first: bool = False) -> str:
    return bootstrap_of(C.brokers[1:] if skip_first else C.brokers)


def populate(t, rb, CL: dict[str, KafkaCluster], size_gb: float, scale: float,
             read_fraction: float, record: bool):
    """REC-1: the test topic on both clusters, filled to ``size_gb`` x ``scale`` per broker,
    a consumer group's offsets committed. Returns (records, Result)."""
    records = max(1000, int(size_gb * 1e9 * scale // 1024))
    r = t.run_snippet("broker-recovery/REC-1-populate.sh", t.hosts("clients")[0].name,
                      check=True, timeout=7200,
                      DAS=bootstrap(CL["das"]), NFS=bootstrap(CL["nfs"]), NUM_RECORDS=records,
                      READ_RECORDS=max(100, int(records * read_fraction)),
                      # Segments scaled with the data, so each partition has as many segments
                      # as in the TR's runs (an unclean restart re-checks the newest ones).
                      SEGMENT_BYTES=max(2**20, int(2**30 * scale)))
    if record:
        rb.show("REC-1", f"Create, fill and read the test topic on both clusters "
                         f"({records} records)", r, show=False)
    return records, r


def delete_topic(t, CL: dict[str, KafkaCluster]) -> None:
    """Remove the test topic and its consumer group from both clusters (before the next
    size is written), and wait until the brokers have deleted its files."""
    client = t.hosts("clients")[0].name
    for C in CL.values():
        bs = bootstrap(C)
        t.run(f"bin/kafka-topics.sh --bootstrap-server {bs} --delete --topic {TOPIC} && "
              f"bin/kafka-consumer-groups.sh --bootstrap-server {bs} --delete --group "
              "rec-test-readers", client, check=True)
        for b in C.brokers:
            d = str(b.get("kafka_log_dirs")).split(",")[0]
            until(lambda b=b, d=d: not t.run(f"ls -d {q(d)}/{TOPIC}-* 2>/dev/null || true",
                                                b.name, read_only=True).stdout.strip(),
                     180, 1, f"{b.name} to delete {TOPIC}'s files")


def plan_replacement(t, rb, C: KafkaCluster) -> None:
    """A dry run: the steps REC-2 would take on this cluster, each printed as its plan."""
    old, new = C.brokers[0], C.standby
    rb.show("REC-2", f"{C.name.upper()}: broker 1 fails", C.stop(old, kill=True))
    rb.show("REC-2", f"{C.name.upper()}: its address moves to the standby",
            C.move_address(old.kafka_address, old, new))
    rb.show("REC-2", f"{C.name.upper()}: the standby starts as broker 1",
            t.run_snippet(REC2[C.name], new.name))


def held(t, C: KafkaCluster) -> int:
    """Bytes broker 2 holds (it has a replica of every partition): the data per broker."""
    b2 = C.brokers[1]
    return t.du(b2.name, str(b2.get("kafka_log_dirs")).split(",")[0])


def committed_offsets(t, C: KafkaCluster):
    """(sum of the group's committed offsets, partitions listed, Result) - read-only."""
    r = t.run_snippet("broker-recovery/REC-3-consumer-offsets.sh", t.hosts("clients")[0].name,
                      read_only=True, check=True, BOOTSTRAP=bootstrap(C, skip_first=True).split(",")[0])
    rows = [line.split() for line in r.stdout.splitlines() if line.startswith("rec-test-readers ")]
    return sum(int(x[3]) for x in rows if x[3].isdigit()), len(rows), r


def end_offsets(t, C: KafkaCluster) -> dict[str, int]:
    r = t.run(f"bin/kafka-get-offsets.sh --bootstrap-server {bootstrap(C, skip_first=True)} "
              f"--topic {TOPIC}", t.hosts("clients")[0].name, read_only=True, check=True)
    return {f"{TOPIC}-{p}": int(o) for p, o in (line.split(":")[1:] for line in r.stdout.split())}


@dataclass
class Replacement:
    cluster: str
    round: int
    old: str
    new: str
    started: float
    isr_complete: float
    copied: int
    transcript: object
    log: object = None
    log_seconds: float = 0.0
    serving_seconds: float | None = None
    resumed: int = 0
    from_zero: int = 0
    partitions: int = 0
    extra: dict = field(default_factory=dict)

    @property
    def isr_seconds(self) -> float:
        return self.isr_complete - self.started


def replace_broker_1(t, C: KafkaCluster, isr_timeout: float, round_no: int) -> Replacement:
    """REC-2 on one cluster, then REC-3's measurements. The cluster's broker 1 is then the
    host that took over; the host it replaced is the spare."""
    t0 = time.monotonic()
    old, new = C.brokers[0], C.standby
    log_dir = str(old.get("kafka_log_dirs")).split(",")[0]
    address = old.kafka_address
    env = {"BOOTSTRAP": bootstrap(C, skip_first=True).split(",")[0]}
    if C.on_nfs:
        env["VOLUME"] = C.export()
    had = t.du(old.name, log_dir)
    # The standby is identical to broker 1: same server.properties. On DAS its disk is new
    # and empty; on NFS it has nothing mounted yet.
    t.copy_file(old.name, f"{old.get('kafka_home', kt.KAFKA_HOME)}/config/server.properties",
                new.name).check()
    mp = old.get("kafka_mountpoint")
    if C.on_nfs:
        t.run(f"if mountpoint -q {q(mp)}; then umount {q(mp)}; fi", new.name, check=True)
    else:
        t.run(f"rm -rf {q(log_dir)} && mkdir -p {q(log_dir)}", new.name, check=True)
    with recovery.IsrWatch(bootstrap(C, skip_first=True), int(old.get("kafka_node_id")),
                           {TOPIC, "__consumer_offsets"}) as w:
        # Broker 1 fails: its JVM dies, and with the host gone so does its NFS mount.
        killed = time.time()
        C.stop(old, kill=True)
        if C.on_nfs:
            t.run(f"umount -l {q(mp)}", old.name, check=True)
        # The cluster notices (the controller fences it after its session timeout) before the
        # standby takes over, as in the TR, where moving the address took longer than that.
        fenced = w.wait(lambda s: recovery.out_of_isr_at(s, killed), 120,
                        f"broker 1 of {C.name} leaving the ISR")
        C.move_address(address, old, new)
        # The standby is broker 1 now: the inventory's view follows (only this Target's copy).
        new.vars.update(kafka_address=address, kafka_node_id=old.get("kafka_node_id"),
                        kafka_log_dirs=old.get("kafka_log_dirs"))
        started = time.time()
        r = t.run_snippet(REC2[C.name], new.name, check=True, timeout=300, **env)
        complete = w.wait(lambda s: recovery.isr_complete_at(s, started), isr_timeout,
                          f"every partition of {C.name} in sync again",
                          abort=lambda: C.why_not(new.name) or None)
    has = t.du(new.name, log_dir)
    # Bytes the replacement had to fetch: all of it on an empty disk; on the same volume, only
    # what the log dir gained (nothing was produced meanwhile).
    copied = has if not C.on_nfs else max(0, has - had)
    # The old host is the spare now: its address is gone, its Kafka stopped.
    old.vars.pop("kafka_address", None)
    C.took_over(old, new)
    rep = Replacement(C.name, round_no, old.name, new.name, started, complete, copied, r,
                      extra={"fenced_after": fenced - killed, "killed": killed})
    measure_log(t, C, rep)
    rep.extra["step_seconds"] = time.monotonic() - t0
    return rep


def measure_log(t, C: KafkaCluster, rep: Replacement) -> None:
    """REC-3 from the replacement's log: the TR's recovery time, and where each partition's
    replica started (offset 0: copied again; the cluster's end offset: found in place); and
    the consumer group's committed offsets after the recovery. The four reads are
    independent and run at the same time (two of them start a JVM for Kafka's tools)."""
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(4) as ex:
        log_f = ex.submit(t.run_snippet, "broker-recovery/REC-3-recovery-log.sh", rep.new,
                          read_only=True, check=True)
        lines_f = ex.submit(t.run, "grep -E 'starts at leader epoch|LogLoader|SHUTDOWN to "
                            "STARTING' logs/server.log", rep.new, read_only=True, check=True)
        ends_f = ex.submit(end_offsets, t, C)
        committed_f = ex.submit(committed_offsets, t, C)
    r = log_f.result()
    rec = recovery.recovery_from_log(r.stdout)
    offsets = recovery.replica_start_offsets(lines_f.result().stdout, TOPIC)
    ends = ends_f.result()
    rep.extra["committed_after"] = committed_f.result()[0]
    with_data = [tp for tp, o in ends.items() if o > 0]
    rep.log, rep.log_seconds, rep.serving_seconds = r, rec.seconds, rec.serving_seconds
    rep.partitions = len(with_data)
    rep.resumed = sum(1 for tp in with_data if offsets.get(tp) == ends[tp])
    rep.from_zero = sum(1 for tp in with_data if offsets.get(tp) == 0)


# --- the chapter ---------------------------------------------------------------------------------------
#: The TR's recovery times (minutes), per data size (GB) and cluster.
TR_MINUTES = {(110, "das"): 10, (110, "nfs"): 3, (1000, "das"): 48, (1000, "nfs"): 3}


class BrokerRecovery:
    """REC-1..REC-3 on both clusters, at several data sizes, several replacements each."""

    def __init__(self, run):
        self.run, self.t, self.rec = run, run.target, run.rec
        self.clusters = clusters(self.t)
        self.replacements: list[Replacement] = []
        self.sizes: dict[float, dict[str, int]] = {}

    def replace(self, sizes_gb: list[float], scale: float, repeats: int, read_fraction: float,
                isr_timeout_s: float) -> None:
        """For each size: the test topic written (REC-1), broker 1 replaced ``repeats`` times
        on each cluster (REC-2) and each replacement measured (REC-3)."""
        CL = self.clusters
        print(f"sizes per broker {sizes_gb} GB x {scale}; {repeats} replacements per size and "
              "cluster")
        for size in sizes_gb:
            if size != sizes_gb[0]:
                delete_topic(self.t, CL)
            records, pop = populate(self.t, self.rec, CL, size, scale, read_fraction,
                                    record=size == sizes_gb[0])
            if pop.planned:
                for C in CL.values():
                    plan_replacement(self.t, self.rec, C)
                return
            print(f"{size:>5} GB: {records:,} records of 1 KB written to both clusters in "
                  f"{pop.duration:.0f} s")
            self.sizes[size] = {c: held(self.t, C) for c, C in CL.items()}
            before = {c: committed_offsets(self.t, C)[0] for c, C in CL.items()}
            for _ in range(repeats):
                for c, C in CL.items():
                    r = replace_broker_1(self.t, C, isr_timeout_s,
                                         1 + sum(x.cluster == c for x in self.replacements))
                    self.rec.measured(r.isr_complete - r.extra["killed"], f"REC-3 {c} round "
                                      f"{r.round}")
                    r.extra.update(size=size, held=self.sizes[size][c],
                                   committed_before=before[c])
                    self.replacements.append(r)
                    print(f"{size:>5} GB, {c}, round {r.round} ({r.extra['step_seconds']:.0f} s): "
                          f"{r.old} -> {r.new}; log {r.log_seconds:.1f} s, ISR complete "
                          f"{r.isr_seconds:.1f} s, copied {r.copied / 1e9:.3f} GB, "
                          f"{r.resumed}/{r.partitions} partitions found in place")

    def results(self) -> None:
        """The transcripts of the first replacement per cluster, the times per size and
        cluster (median, min-max), DAS / NFS beside the TR's ratio, and a chart."""
        from ..measure.spread import series, spread
        reps = self.replacements
        if not reps:
            return
        first_size = next(iter(self.sizes))
        first = {c: next(r for r in reps if r.cluster == c) for c in CLUSTERS}
        for c in CLUSTERS:
            self.rec.show("REC-2", f"{c.upper()} cluster: the standby takes over as broker 1",
                          first[c].transcript, show=False)
            self.rec.show("REC-3", f"{c.upper()} cluster: start and end of the recovery in the "
                          f"replacement's log ({first_size} GB run)", first[c].log, show=False)
        rows, ratio, times = [], [], {}
        for size in self.sizes:
            for c in CLUSTERS:
                rs = [r for r in reps if r.extra["size"] == size and r.cluster == c]
                times[(size, c)] = (spread(r.log_seconds for r in rs),
                                    spread(r.isr_seconds for r in rs))
                rows.append([size, f"{self.sizes[size][c] / 1e9:.3f}", c.upper(),
                             spread(r.copied / 1e9 for r in rs).fmt(3),
                             times[(size, c)][0].fmt(1), times[(size, c)][1].fmt(1),
                             f"{min(r.resumed for r in rs)}-{max(r.resumed for r in rs)} of "
                             f"{rs[0].partitions}"])
        self.rec.table("REC-3", "Lab: time to recover broker 1 (median, min-max and number of "
                       "replacements)",
                       ["TR size (GB)", "Lab data per broker (GB)", "Cluster",
                        "Copied to the replacement (GB)",
                        "TR method: start to last fetcher/loading line (s)",
                        "Until no partition is under-replicated (s)",
                        "Partitions with data found in place"], rows,
                       note="Both times count from the replacement broker's start. The log time "
                            "is the TR's method; the ISR time is when the cluster has every "
                            "replica in sync again.",
                       key=["TR size (GB)", "Cluster", "Until no partition is under-replicated (s)"])
        for size in self.sizes:
            d, n = times[(size, "das")], times[(size, "nfs")]
            ratio.append([size, f"{TR_MINUTES[(size, 'das')] / TR_MINUTES[(size, 'nfs')]:.1f}"
                          if (size, "das") in TR_MINUTES else "-",
                          f"{d[0].median / n[0].median:.1f}", f"{d[1].median / n[1].median:.1f}",
                          "no" if d[1].overlaps(n[1], 1) else "yes"])
        self.rec.table("REC-3", "DAS time divided by NFS time (medians)",
                       ["Size (GB, TR)", "TR-4947", "Lab, from the log", "Lab, ISR complete",
                        "Lab ranges apart (DAS vs NFS, ISR)"], ratio)
        self.rec.chart("REC-3", "Recovery time versus data per broker (median, min-max)", {
            "type": "line", "x_label": "lab data per broker (GB)", "y_label": "seconds",
            "series": [series(f"{c.upper()}, {how}",
                              [round(self.sizes[s][c] / 1e9, 3) for s in self.sizes],
                              [times[(s, c)][k] for s in self.sizes])
                       for c in CLUSTERS
                       for k, how in ((1, "until ISR complete"), (0, "from the log"))]})
        self.times = times

    def invariants(self) -> None:
        """What holds on every run (nbval compares it): where the replacement's partitions
        started, and whether the consumer group's committed offsets survived."""
        for c in CLUSTERS:
            rs = [r for r in self.replacements if r.cluster == c]
            if not rs:
                print(f"{c.upper()}: planned only")
                continue
            started = ("the offsets the cluster had (data found in place)"
                       if all(r.resumed == r.partitions for r in rs)
                       else "offset 0 (data copied again)"
                       if all(r.from_zero == r.partitions for r in rs) else "mixed offsets")
            kept = all(r.extra["committed_after"] == r.extra["committed_before"] > 0 for r in rs)
            print(f"{c.upper()}: on all {len(rs)} replacements the test-topic replicas holding "
                  f"data started from {started}; consumer group offsets "
                  f"{'survived' if kept else 'were LOST'}")
            self.rec.text("REC-3", "", f"{c.upper()} cluster: on every replacement ({len(rs)}), "
                          f"the replacement's test-topic replicas started from {started}, and "
                          "the consumer group's committed offsets "
                          f"{'were intact after the recovery' if kept else 'were lost'}.",
                          show=False)

    def verdicts(self) -> None:
        """The TR's recovery claims beside the replacements measured here."""
        from ..measure.spread import ratio, spread
        reps = self.replacements
        if not reps or not hasattr(self, "times"):
            return
        rec, times, sizes = self.rec, self.times, list(self.sizes)
        fenced = spread(r.extra["fenced_after"] for r in reps)
        # Kafka's controller fenced the killed brokers: real Kafka decided.
        rec.verdict("REC-2", "rec.lag-setting", "differs",
                    evidence=rec.evidence(real=["kafka", "kafka-tools"], also=["nfs-layer"]),
                    tr="replica.lag.time.max.ms=100000000 keeps the swapped broker in the ISR",
                    lab=fenced.as_dict("s", 1),
                    why="With the setting in place, every killed broker left the ISR when the "
                        f"controller fenced it, {fenced.fmt(1)} s after the kill: the setting "
                        "only keeps slow live followers in the ISR.",
                    action="Keep replica.lag.time.max.ms at its default (30 s): a 28-hour "
                           "value lets one slow follower stall acks=all producers.")
        tr_seconds = {(110, "das"): 571.1, (110, "nfs"): 191.9, (1000, "das"): 48 * 60.0,
                      (1000, "nfs"): 180.0}
        for size, c, claim in ((110, "das", "rec.time-das-110gb"), (110, "nfs", "rec.time-nfs-110gb"),
                               (1000, "das", "rec.time-das-1tb"), (1000, "nfs", "rec.time-nfs-1tb")):
            key = next((s for s in sizes if s == size), None)
            if key is None:
                rec.verdict("REC-3", claim, "not-measured", evidence=rec.evidence(),
                            tr=f"{tr_seconds[(size, c)]:.0f} s",
                            lab=None, why=f"This run did not include the {size} GB size.",
                            action="Run REC-1 to REC-3 at your own data size.")
                continue
            lab_gb = self.sizes[key][c] / 1e9
            rec.verdict("REC-3", claim, "not-reproducible-at-lab-scale",
                        evidence=rec.evidence(real=["kafka", "kafka-tools"],
                                              also=["nfs-layer"] if c == "nfs" else []),
                        tr=f"about {tr_seconds[(size, c)] / 60:.0f} min at {size} GB per broker",
                        lab=times[(key, c)][0].as_dict("s", 1),
                        why=f"The lab holds {lab_gb:.3f} GB per broker (the TR's size x the "
                            "scale), so its times are seconds, not minutes; the TR method's log "
                            "lines are what is timed.",
                        action="Time a replacement on your own cluster with REC-3 before "
                               "relying on either figure."
                               + (" After a host failure, add the NFSv4 lease the standby "
                                  "waits for before it can lock the log directory (30 s by "
                                  "default; failure drills, DRL-5)." if c == "nfs" else ""))
        big = sizes[-1]
        d, n = times[(big, "das")][1], times[(big, "nfs")][1]
        apart = not d.overlaps(n, 1)
        rec.verdict("REC-3", "rec.speedup", "not-reproducible-at-lab-scale",
                    evidence=rec.evidence(real=["kafka", "kafka-tools"], also=["nfs-layer"]),
                    tr="almost nine times faster on NFS (1 TB per broker)",
                    lab=ratio(d, n, "x (DAS / NFS, until ISR complete)"),
                    why=f"At {self.sizes[big]['das'] / 1e9:.2f} GB per broker DAS took "
                        f"{d.fmt(1)} s and NFS {n.fmt(1)} s until the ISR was complete"
                        + (" (ranges apart)" if apart else " (ranges overlap)")
                        + "; the DAS time grows with the data a replacement copies, the NFS "
                          "time does not, so the ratio at 1 TB cannot be measured here.",
                    action="Expect the gap to grow with data per broker; measure it at yours.")
        das = [r for r in reps if r.cluster == "das"]
        nfs = [r for r in reps if r.cluster == "nfs"]
        copy_all = all(r.from_zero == r.partitions for r in das)
        in_place = all(r.resumed == r.partitions for r in nfs)
        # Kafka's own log lines (the offset each replica started from) decide; the NFS
        # volume the standby remounts is the lab's NFS layer over a local disk.
        ev = rec.evidence(real=["kafka", "kafka-tools"], also=["nfs-layer"])
        rec.verdict("REC-3", "guide.rec-copy-vs-remount",
                    agrees(ev) if copy_all and in_place else "differs", evidence=ev, tr="-",
                    lab=f"DAS: {sum(r.from_zero == r.partitions for r in das)} of {len(das)} "
                        f"replacements copied every replica from offset 0; NFS: "
                        f"{sum(r.resumed == r.partitions for r in nfs)} of {len(nfs)} found "
                        "every replica in place",
                    why="Each replica's first log line on the replacement gives the offset it "
                        "started from: 0 on an empty disk, the cluster's end offset on the "
                        "failed broker's volume.",
                    action="On NFS, remount the failed broker's volume on the standby, after "
                           "the NFSv4 lease if its host died (30 s by default); on DAS, budget "
                           "the full copy.")
        kept = all(r.extra["committed_after"] == r.extra["committed_before"] > 0 for r in reps)
        ev = rec.evidence(real=["kafka", "kafka-tools"], also=["nfs-layer"])
        rec.verdict("REC-3", "rec.offsets", "differs" if kept else agrees(ev), evidence=ev,
                    tr="consumer offsets 0 on the DAS replacement, kept on NFS",
                    lab=f"committed offsets intact after {sum(r.extra['committed_after'] == r.extra['committed_before'] for r in reps)} "
                        f"of {len(reps)} replacements (DAS and NFS)",
                    why="A consumer group's offsets live in __consumer_offsets, replicated on "
                        "the other brokers: they survive a replacement on DAS as on NFS; a "
                        "replica's own log starting at offset 0 is not the group's offset.",
                    action="Read consumer lag with kafka-consumer-groups after a replacement; "
                           "it does not reset on DAS.")
        rec.verdict("REC-3", "guide.rec-group-offsets", agrees(ev) if kept else "differs",
                    evidence=ev,
                    tr="-", lab=f"{len(reps)} replacements",
                    why="Committed offsets were the same before and after every replacement.",
                    action="No consumer action is needed after a broker replacement.")
