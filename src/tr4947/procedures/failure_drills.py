"""DRL-0..DRL-5: failure drills. What Kafka on NFS (and on DAS, where the fault exists there)
does when its storage, its network or a whole host fails, with every acknowledged record
checked afterwards.

The practice is that of Kafka's own system tests (kafkatest's replication tests: bounces and
hard kills checked with the verifiable producer and consumer) and of Jepsen: inject the fault
under load, read everything back, report what was lost, not what was sent.

DRL-0  The load and its check. On each cluster a topic with three replicas and
       ``min.insync.replicas=2``. Through every run of a drill, Kafka's verifiable producer
       writes at a fixed rate with ``acks=all`` (idempotent, retrying) and prints every
       acknowledgement; afterwards the verifiable consumer reads the topic back. Lab only:
       the NFS brokers' volumes are mounted with ``x-lab-nopassthrough`` for the drills (and
       as before afterwards), so that the lab's NFS layer sees every write.
DRL-1  NFS server pause: broker 1's mount stops answering for a set time (the lab's hook).
DRL-2  LIF migration: the data LIF broker 1 mounts from moves to the partner node, and back.
DRL-3  Volume full: broker 1's volume is set just above what it holds and Kafka's writes fill
       it; the broker stops; the fix (``volume size``) and a restart; the preflight's space
       check before, on the full volume and after the fix.
DRL-4  Network partition: broker 1's host loses its link for a set time (DAS and NFS).
DRL-5  Hard host loss: broker 1's host goes off the network and every process on it dies at
       once; the standby takes over its address and node id (DAS: empty disk; NFS: the same
       volume, whose NFSv4 lock the dead client still holds until its lease runs out).

Per run (one fault): time to detect (the cluster takes broker 1 out of an in-sync replica set
or fences it), time until the producer's partitions all acknowledge again, time until every
ISR is full again; per drill and cluster: acknowledged records lost and duplicated, the rate
held before each fault, median and range over the runs. Everything goes through the Target
(SSH to the hosts, the clustershell to ONTAP); on a real target without ``confirm`` every
step that changes something is planned, and nothing is read that a planned step would make.
"""
from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from shlex import quote as q

from .. import kafka_tools as kt
from ..inventory import Host
from ..targets.kafka import KafkaCluster, bootstrap_of
from ..measure import drills as m
from ..measure.spread import spread
from ..wait import port_open, until
from . import space_check as sc
from .nfs_audit import FAIL, PASS, default_svm
from .record import agrees

SNIP = "failure-drills/"
TOPIC = "drills"
CLUSTERS = ("das", "nfs")
PRODUCER_CONFIG = "failure-drills/DRL-0-producer.properties"
TAKEOVER_CONFIG = "config/drill-takeover.properties"
NO_PASSTHROUGH = "x-lab-nopassthrough"
#: How far ahead a cut is scheduled on the host it cuts off (its SSH answer must be home first).
LEAD_CUT_S = 3.0
#: The guide's claims each drill checks (docs/data/claims.yaml).
CLAIMS = {"DRL-1": "guide.drill-nfs-pause", "DRL-2": "guide.drill-lif-migration",
          "DRL-3": "guide.drill-volume-full", "DRL-4": "guide.drill-partition",
          "DRL-5": "guide.drill-host-loss"}
#: What exercised each drill (record.Recorder.evidence): Kafka, its verifiable producer and
#: consumer and Linux (link down, SIGKILL) are real everywhere; an NFS pause is the lab's NFS
#: client layer's hook, a LIF move and its one-second pause the ONTAP stand-in's, a full
#: volume the stand-in's space accounting, the NFSv4 lock lease the stand-in's lease.
EVIDENCE = {
    "DRL-1": dict(real=["kafka", "kafka-clients", "linux"], model=["nfs-layer"]),
    "DRL-2": dict(real=["kafka", "kafka-clients", "linux"],
                  model=["ontap-stand-in", "modelled-timing"], also=["nfs-layer"]),
    "DRL-3": dict(real=["kafka", "kafka-clients", "linux"], model=["ontap-space"],
                  also=["nfs-layer"]),
    "DRL-4": dict(real=["kafka", "kafka-clients", "linux"], also=["nfs-layer"]),
    "DRL-5": dict(real=["kafka", "kafka-clients", "linux"], also=["nfs-layer", "ontap-lease"]),
}
LEASE_CLAIM = "guide.drill-lock-lease"
SPACE_CLAIM = "guide.drill-preflight-space"
#: Lines of Kafka's log an operator looks for after each drill (brokers and controllers).
LOG_PATTERN = ("Fencing broker|unfence has been granted|has been unfenced|new incarnation of "
               "broker|Shrinking ISR|Expanding ISR|ISR updated|No space left|Stopping serving "
               "logs|Shutdown broker|Halting|Failed to acquire lock|Transition from|Error "
               "connecting to node|Disconnecting from node|NOT_ENOUGH_REPLICAS")


@dataclass
class Side:
    """One cluster as the drills use it: the KafkaCluster view (where each broker keeps its
    log: tr4947.targets.kafka), and what the drills fix at the start, since a host-loss
    drill moves broker 1 to its standby: broker 1, its standby, and on NFS broker 1's
    volume, export, mount point, mount options and data LIF."""
    cluster: KafkaCluster
    brokers: list[Host]
    standby: Host | None
    volume: str | None = None               # ONTAP volume of broker 1 (None: DAS)
    export: str | None = None               # lif:/junction
    mountpoint: str | None = None
    options: str = "vers=4.1"               # the inventory's NFS mount options
    lif: dict = field(default_factory=dict)  # the data LIF broker 1 mounts from
    rec: object = None                      # where it records: the run's Recorder, or
                                            # its SideRecords while both clusters run

    @classmethod
    def of(cls, kc: KafkaCluster) -> "Side":
        b1 = kc.brokers[0]
        return cls(kc, list(kc.brokers), kc.standby, kc.volume(b1), kc.export(b1),
                   kc.mountpoint(b1), kc.mount_options(b1), kc.lif(b1))

    @property
    def name(self) -> str:
        return self.cluster.name

    @property
    def controllers(self) -> list[Host]:
        return self.cluster.controllers

    @property
    def b1(self) -> Host:
        return self.brokers[0]

    @property
    def nfs(self) -> bool:
        return self.volume is not None

    def bootstrap(self, skip_b1: bool = False) -> str:
        return bootstrap_of(self.brokers[1:] if skip_b1 else self.brokers)

    @property
    def node_id(self) -> int:
        return self.cluster.node_id(self.b1)

    def log_dir(self, h: Host | None = None) -> str:
        return self.cluster.log_dir(h or self.b1)

    def export_of(self, h: Host) -> str | None:
        return self.cluster.export(h)


def sides(t) -> dict[str, Side]:
    """The inventory's ``das`` and ``nfs`` clusters (those it has), as the drills use them."""
    out = {}
    for c in CLUSTERS:
        if c not in t.inventory.groups:
            continue
        kc = t.cluster(c)
        if len(kc.brokers) < 3:
            raise ValueError(f"cluster {c} of {t.name} needs three brokers for the drills "
                             f"(topic with three replicas); it has {len(kc.brokers)}")
        out[c] = Side.of(kc)
    if not out:
        raise ValueError(f"target {t.name} has neither a das nor an nfs Kafka cluster")
    return out


@dataclass
class Run:
    """One fault: when it began and ended, what the cluster looked like meanwhile, and what
    it cost (filled in by measure())."""
    drill: str
    cluster: str
    n: int
    fault: float                        # epoch seconds
    heal: float | None = None
    end: float = 0.0                    # the run's window ends here (the next run's start)
    until: float | None = None          # ... or here, when the drill repairs things afterwards
    steady: float = 0.0                 # from here to the fault, the producer's rate is measured
    extra: dict = field(default_factory=dict)
    detect_s: float | None = None
    resume_s: float | None = None
    stall_s: float = 0.0
    isr_s: float | None = None
    shrank: bool = False
    rate: float = 0.0                   # acknowledged records/s just before the fault
    lost: int = 0


@dataclass
class Outcome:
    """One drill on one cluster: its runs and the check of everything it acknowledged."""
    drill: str
    cluster: str
    runs: list[Run]
    check: m.Check
    producer: m.ProducerLog
    target_rate: float
    unchanged: bool
    transcripts: dict = field(default_factory=dict)
    samples: list = field(default_factory=list)

    @property
    def held(self) -> bool:
        return all(r.rate >= 0.95 * self.target_rate for r in self.runs)


class FailureDrills:
    """DRL-0..DRL-5 on the target's ``das`` and ``nfs`` clusters (see the module doc)."""

    def __init__(self, run, repeats: int = 3, rate: float = 300, lead_s: float = 4,
                 settle_s: float = 3, recover_timeout_s: float = 180):
        self.run, self.t, self.rec = run, run.target, run.rec
        self._barrier: threading.Barrier | None = None
        self.sides = sides(self.t)
        for s in self.sides.values():
            s.rec = self.rec              # each cluster's records; buffered while both run
        self.repeats, self.rate = int(repeats), float(rate)
        self.lead_s, self.settle_s, self.timeout = lead_s, settle_s, recover_timeout_s
        self.client = self.t.hosts("clients")[0].name
        self.ontap = self.t.inventory.ontap().name if "ontap" in self.t.inventory.groups \
            else None
        self.svm = default_svm(self.t) if self.ontap else None
        self.outcomes: list[Outcome] = []
        self.setup = None                   # DRL-0's first step: planned on a dry run
        self.hook = False                   # the lab's NFS drill hook is on the NFS brokers
        self.found: dict | None = None      # the lab as DRL-0 left it (see state())

    def _both(self, fn) -> list:
        """``fn(side)`` for every cluster at once, one thread each (the same fault at the
        same moment on DAS and NFS). Each side records into its own SideRecords meanwhile;
        they go to the run's Recorder afterwards, cluster by cluster. The first error is
        raised once both are done."""
        def one(s: Side):
            s.rec = SideRecords()
            try:
                return fn(s), s.rec, None
            except Exception as exc:        # noqa: BLE001 - raised below, after the other
                self._barrier.abort()       # the other cluster must not wait for this one
                return None, s.rec, exc
            finally:
                s.rec = self.rec
        sides = list(self.sides.values())
        self._barrier = threading.Barrier(len(sides))
        try:
            with ThreadPoolExecutor(len(sides)) as pool:
                done = list(pool.map(one, sides))
        finally:
            self._barrier = None
        for _, kept, _ in done:
            kept.replay(self.rec)
        for _, _, exc in done:
            if exc is not None:
                raise exc
        return [out for out, _, _ in done]

    @property
    def dry(self) -> bool:
        """A dry run: DRL-0's first change was only planned, so is every later step."""
        return self.setup is not None and self.setup.planned

    # --- DRL-0 --------------------------------------------------------------------------------
    def prepare(self) -> None:
        """DRL-0: the drills topic on each cluster, the producer's settings on the client,
        and (where the lab's NFS hook exists) the NFS brokers' volumes mounted without
        passthrough."""
        t = self.t
        first = None
        for c, s in self.sides.items():
            r = t.run_snippet(SNIP + "DRL-0-topic.sh", self.client, check=True, timeout=180,
                              BOOTSTRAP=s.bootstrap())
            first = first or r
            self.rec.show("DRL-0", f"{c.upper()}: the drills topic", r, show=c == "nfs")
        self.setup = first
        self.rec.show("DRL-0", "The verifiable producer's settings, on the client",
                      t.run_snippet(PRODUCER_CONFIG, self.client, check=True), show=False)
        nfs = self.sides.get("nfs")
        if nfs is None:
            return
        # The lab's NFS layer has a pause hook, which needs the brokers' volumes mounted
        # without FUSE passthrough. Both are lab-only: on a real target neither is looked
        # for nor planned (a real client has no such hook and mount knows no such option).
        if self.run.is_lab:
            hook = t.run("command -v tr4947-nfsctl || true", nfs.b1.name, read_only=True,
                         needs=self.setup)
            self.hook = not hook.planned and bool(hook.stdout.strip())
        if self.hook:
            self._remount(nfs, self._options(nfs),
                          "Lab: NFS brokers' volumes mounted without passthrough")
        if not self.dry:
            self.found = self.state()
            print(f"lab state recorded: {len(self.found['hosts'])} hosts, "
                  f"volumes {self.found['volumes']}, LIFs {self.found['lifs']}")

    def _remount(self, s: Side, options: str, title: str) -> None:
        """DRL-0-remount.sh on every NFS broker at once (no load runs between the drills),
        then until all of them serve again."""
        def one(b: Host):
            return self.t.run_snippet(SNIP + "DRL-0-remount.sh", b.name, check=True,
                                      timeout=300, VOLUME=s.export_of(b),
                                      MOUNTPOINT=s.mountpoint, OPTIONS=options)
        with ThreadPoolExecutor(len(s.brokers)) as pool:
            done = list(pool.map(one, s.brokers))
        s.rec.show("DRL-0", f"{title} ({s.b1.name}; the others alike)", done[0])
        if not done[0].planned:
            s.cluster.wait_serving(s.brokers, 240)

    def restore(self) -> None:
        """After the drills: the NFS brokers' volumes mounted with the inventory's options
        again (DRL-0), and the lab compared with what DRL-0 recorded."""
        nfs = self.sides.get("nfs")
        if nfs is not None and self.hook:
            self._remount(nfs, _extra(nfs.options), "After the drills: the volumes as they were")

    def state(self, sides: list[Side] | None = None) -> dict:
        """What a drill must leave as it found it, read-only, for ``sides`` (default: both
        clusters): per host its addresses, NFS mounts (and the client layer's mode) and
        whether Kafka runs; per cluster whether broker 1 is registered and how many
        partitions of the drills topic are under-replicated; the size of broker 1's volume
        and where its data LIF is."""
        t = self.t
        out: dict = {"hosts": {}, "clusters": {}, "volumes": {}, "lifs": {}}
        probe = ("ip -4 -brief addr show dev {dev} | awk '{{$2=\"\"; print}}'; "
                 "nfsstat -m 2>/dev/null | sed 's/,clientaddr=[^,]*//' | grep -v '^$'; "
                 "pgrep -f {proc} > /dev/null && echo kafka running || echo kafka stopped")
        for s in sides or list(self.sides.values()):
            for h in s.brokers + ([s.standby] if s.standby else []):
                r = t.run(probe.format(dev=q(h.get("kafka_interface", "eth0")),
                                       proc=q(h.get("kafka_process", kt.KAFKA_PROCESS))),
                          h.name, read_only=True, check=True)
                out["hosts"][h.name] = r.stdout.strip()
            w = m.Watch(s.bootstrap(), s.node_id, {TOPIC})
            sample = None
            for _ in range(20):
                sample = w.poll()
                if sample is not None:
                    break
                time.sleep(0.5)
            out["clusters"][s.name] = None if sample is None else \
                (sample.broker_registered, sample.under_replicated)
            if self.ontap and s.nfs:
                rows, _ = sc.space_audit(t, s.volume, self.svm)
                out["volumes"][s.volume] = rows[0].size if rows else None
            if self.ontap and s.lif:
                r = t.run_snippet(SNIP + "DRL-2-lif-show.ontap", self.ontap, read_only=True,
                                  check=True, svm=self.svm, lif=s.lif["name"])
                out["lifs"][s.lif["name"]] = [
                    (x.get("home-node"), x.get("curr-node"), x.get("is-home"))
                    for x in sc.fields_table(r.stdout)]
        return out

    # --- the load around one drill on one cluster (DRL-0) ---------------------------------------
    def _drill(self, proc: str, s: Side, inject, title: str, after=None) -> Outcome | None:
        """``repeats`` runs of ``inject(s, n, watch) -> Run`` on cluster ``s`` under the
        verifiable producer, then the check; recorded under ``proc``."""
        t = self.t
        prefix = f"{proc[-1]}{CLUSTERS.index(s.name) + 1}"
        out = f"/tmp/drill-{proc}-{s.name}.jsonl"
        env = {"BOOTSTRAP": s.bootstrap(), "VALUE_PREFIX": prefix}
        started = t.run_snippet(SNIP + "DRL-0-producer-start.sh", self.client, check=True,
                                timeout=180, needs=self.setup, RATE=int(self.rate), OUT=out,
                                **env)
        if started.planned:
            s.rec.show(proc, f"{s.name.upper()}: load on", started, show=False)
            inject(s, 0, None)
            if after:
                after()
            t.run_snippet(SNIP + "DRL-0-producer-stop.sh", self.client, needs=started, OUT=out)
            return None
        print(f"{proc} {s.name}: producer at {self.rate:.0f} records/s (values {prefix}.n)")
        runs: list[Run] = []
        transcripts: dict = {"load": started}
        w = m.Watch(s.bootstrap(skip_b1=True), s.node_id, {TOPIC})
        with w:
            try:
                # The producer's first seconds are its warm-up (it may run ahead of its rate
                # to catch up with a slow start): the rate before the first fault is measured
                # after them.
                time.sleep(2 * self.lead_s)
                steady = [time.time() - self.lead_s]
                for n in range(self.repeats):
                    if runs:
                        time.sleep(self.settle_s)
                        steady.append(time.time())
                        time.sleep(self.lead_s)
                    if self._barrier is not None:
                        # Both clusters' faults at the same moment: neither measures its rate
                        # or its recovery while the other is recovering.
                        self._barrier.wait(timeout=900)
                    r = inject(s, n, w)
                    r.steady = steady[-1]
                    runs.append(r)
                    print(f"  {proc} {s.name} run {n + 1}: fault at {_clock(r.fault)}, healed "
                          f"{_secs(r.heal - r.fault if r.heal else None)} later"
                          + "".join(f", {k} {_fmt(v)}" for k, v in r.extra.items()
                                    if not k.startswith("_")))
                time.sleep(self.settle_s)
                if after:
                    after()
            finally:
                stopped = t.run_snippet(SNIP + "DRL-0-producer-stop.sh", self.client,
                                        timeout=300, OUT=out)
            samples = list(w.samples)
        transcripts["stop"] = stopped
        produced = m.parse_producer(t.read_file(self.client, out).stdout)
        consumed = t.run_snippet(SNIP + "DRL-0-consume.sh", self.client, check=True, timeout=420,
                                 OUT=out + ".read", **env)
        transcripts["check"] = consumed
        read = m.parse_consumed(t.read_file(self.client, out + ".read").stdout)
        result = m.check(produced, read, prefix)
        self._measure(runs, produced, samples, result)
        if runs:
            # The drill's measurement window: the producer under watch from its steady start
            # to the last run's end (overlapping DAS and NFS windows count once in a run's
            # timing, tr4947.runbook.profile).
            s.rec.measured(runs[-1].end - steady[0], f"{proc} {s.name}", end=runs[-1].end)
        unchanged = self._same_as_found(s, f"{proc} {s.name}")
        o = Outcome(proc, s.name, runs, result, produced, self.rate, unchanged, transcripts,
                    samples)
        self.outcomes.append(o)
        print(f"{proc} {s.name}: {result.acked} acknowledged, {len(result.lost)} lost, "
              f"{result.duplicates} duplicates; lab as found: {'yes' if unchanged else 'NO'}")
        return o

    def _measure(self, runs: list[Run], produced: m.ProducerLog, samples: list,
                 result: m.Check) -> None:
        lost = set(result.lost)
        for i, r in enumerate(runs):
            r.end = runs[i + 1].fault - self.lead_s if i + 1 < len(runs) else \
                (produced.acks[-1].t if produced.acks else r.fault)
            if r.until is not None:
                r.end = min(r.end, r.until)
            window = m.in_window(produced.acks, r.fault - 60, r.end)
            st = m.stall(window, r.fault, r.end)
            r.resume_s, r.stall_s = st.resumed_s, st.longest_s
            d = m.detected_at(samples, r.fault)
            r.detect_s = None if d is None or d > r.end else d - r.fault
            r.shrank = m.isr_shrank([x for x in samples if x.t <= r.end], r.fault)
            full = m.isr_full_at(samples, r.fault)
            r.isr_s = None if full is None else full - r.fault
            # The rate held before the fault: from the end of the settling after the previous
            # run (or the warm-up) to the fault, at most the last 10 s.
            r.rate = m.rate(produced.acks, max(r.steady, r.fault - 10), r.fault)
            start = runs[i - 1].end if i else 0
            r.lost = sum(1 for a in produced.acks if start < a.t <= r.end and a.value in lost)

    def _same_as_found(self, s: Side, what: str) -> bool:
        """Is cluster ``s`` (its hosts, broker 1's volume and LIF) as DRL-0 found it?"""
        if self.found is None:
            return True
        now = self.state([s])
        before = {k: {n: v for n, v in self.found[k].items() if n in now[k]} for k in now}
        for k in now:
            if now[k] != before[k]:
                print(f"{what}: the lab differs from before the drill in {k}: "
                      f"{before[k]} -> {now[k]}")
        return now == before

    # --- waiting ------------------------------------------------------------------------------------
    def _recovered(self, w, r: Run, what: str) -> None:
        """Until every ISR is full again, if the fault made one shrink."""
        if m.isr_shrank(w.samples, r.fault):
            w.wait(lambda smp: m.isr_full_at(smp, r.fault), self.timeout,
                   f"every ISR of {r.cluster} full again after {what}")

    def _reachable(self, host: str, timeout: float = 180) -> None:
        """Until ``host`` answers over SSH again (after its link came back)."""
        last: list = []

        def answers() -> bool:
            r = self.t.run("true", host, read_only=True, timeout=10)
            last[:] = [r]
            return r.exit_code == 0
        until(answers, timeout, 1, f"{host} to answer over SSH again",
              seen=lambda: (f"exit {last[0].exit_code}, timed out {last[0].timed_out}: "
                            f"{last[0].output[-300:]}") if last else "nothing")

    def _log_lines(self, proc: str, s: Side, r: Run, hosts: list[Host]) -> None:
        """The log lines an operator would see, from the first run of a drill."""
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(r.fault - 1))
        for h in hosts:
            got = self.t.run_snippet(SNIP + "DRL-0-log-lines.sh", h.name, read_only=True,
                                     PATTERN=LOG_PATTERN, SINCE=since, LINES=14)
            s.rec.show(proc, f"{s.name.upper()}, run 1: what {h.name}'s log says", got,
                          show=False)

    # --- DRL-1 ------------------------------------------------------------------------------------
    def pause(self, seconds: float) -> None:
        """DRL-1: broker 1's NFS mount stops answering for ``seconds``, ``repeats`` times."""
        s = self.sides.get("nfs")
        if s is None or not self.hook:
            self._not_run("DRL-1", "its fault is the lab's NFS layer pausing a mount "
                          "(tr4947-nfsctl pause), which a real NFS client has no counterpart "
                          "for; on a real target, DRL-2 (the data LIF moved with ONTAP's own "
                          "commands) and DRL-4 (the broker host cut off) drill the outage")
            return

        def inject(s: Side, n: int, w) -> Run | None:
            r = self.t.run_snippet(SNIP + "DRL-1-pause.sh", s.b1.name, check=True,
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
            self._recovered(w, run, "the pause")
            if n == 0:
                self._log_lines("DRL-1", s, run, [s.b1, s.brokers[1]])
            return run
        o = self._drill("DRL-1", s, inject, "NFS server pause")
        self._report("DRL-1", [o], f"{seconds:g} s pause of broker 1's NFS mount")

    # --- DRL-2 ------------------------------------------------------------------------------------
    def lif_migration(self, away_s: float) -> None:
        """DRL-2: the data LIF broker 1 mounts from moves to the partner node and, ``away_s``
        later, back home."""
        s = self.sides.get("nfs")
        if s is None or not s.lif or not self.ontap:
            self._not_run("DRL-2", "needs an NFS cluster on ONTAP and the data LIF broker 1 "
                                   "mounts from in the inventory (ontap_data_lifs)")
            return
        args = {"svm": self.svm, "lif": s.lif["name"]}
        # The LIF's home node and another node of the cluster (its HA partner), from ONTAP.
        lif = self.t.run_snippet(SNIP + "DRL-2-lif-show.ontap", self.ontap, read_only=True,
                                 check=True, needs=self.setup, **args)
        nodes = self.t.run_snippet(SNIP + "DRL-2-nodes.ontap", self.ontap, read_only=True,
                                   check=True, needs=self.setup)
        home = next((x.get("home-node") for x in sc.fields_table(lif.stdout)), None)
        others = [x["node"] for x in sc.fields_table(nodes.stdout)
                  if x.get("node") not in (home, None)]
        partner = others[0] if others else "PARTNER_NODE"
        if not lif.planned and not others:
            self._not_run("DRL-2", f"ONTAP shows no node besides {home} to move the LIF to")
            return
        self.rec.show("DRL-2", "ONTAP: the cluster's nodes", nodes, prompt="::>", show=False)

        def inject(s: Side, n: int, w) -> Run | None:
            before = self.t.run_snippet(SNIP + "DRL-2-nfsstat.sh", s.b1.name, read_only=True,
                                        needs=self.setup)
            r1 = self.t.run_snippet(SNIP + "DRL-2-lif-migrate.ontap", self.ontap, check=True,
                                    node=partner, **args)
            fault = time.time()
            where = self.t.run_snippet(SNIP + "DRL-2-lif-show.ontap", self.ontap,
                                       read_only=True, check=True, needs=r1, **args)
            if not r1.planned:
                time.sleep(max(0.0, fault + away_s - time.time()))
            r2 = self.t.run_snippet(SNIP + "DRL-2-lif-revert.ontap", self.ontap, check=True,
                                    **args)
            heal = time.time()
            home_again = self.t.run_snippet(SNIP + "DRL-2-lif-show.ontap", self.ontap,
                                            read_only=True, check=True, needs=r2, **args)
            if n == 0:
                for title, x in ((f"The LIF moves to {partner}", r1), ("Where it is", where),
                                 ("Back home", r2), ("Where it is", home_again)):
                    s.rec.show("DRL-2", title, x, prompt="::>")
            if r1.planned:
                return None
            run = Run("DRL-2", s.name, n, fault, heal)
            self._recovered(w, run, "the LIF moves")
            time.sleep(2)
            if n == 0:
                after = self.t.run_snippet(SNIP + "DRL-2-nfsstat.sh", s.b1.name, read_only=True)
                s.rec.show("DRL-2", f"{s.b1.name}: the NFS client's counters before the "
                              "move", before, show=False)
                s.rec.show("DRL-2", "... and after it and back", after)
                self._log_lines("DRL-2", s, run, [s.b1])
            run.extra["_back"] = heal
            return run
        o = self._drill("DRL-2", s, inject, "LIF migration")
        if o:
            for r in o.runs:
                # the move there, up to the move back; then the move back on its own
                there = m.stall(m.in_window(o.producer.acks, r.fault - 60, r.heal), r.fault,
                                r.heal)
                r.resume_s, r.stall_s = there.resumed_s, there.longest_s
                back = m.stall(m.in_window(o.producer.acks, r.extra["_back"] - 60, r.end),
                               r.extra["_back"], r.end)
                r.extra["after the revert: producers resumed (s)"] = back.resumed_s
        self._report("DRL-2", [o], f"LIF {s.lif['name']} to {partner} and back after "
                                   f"{away_s:g} s")

    # --- DRL-3 ------------------------------------------------------------------------------------
    def volume_full(self, fill_rate: int, full_percent: int, floor_mb: int = 18) -> None:
        """DRL-3: Kafka's own writes (``fill_rate`` 1 KB records a second) grow broker 1's
        volume to ``floor_mb``; the volume is then set so that it is ``full_percent`` used
        and the writes fill the rest; the broker stops; ``volume size`` gives the volume its
        size back and the broker restarts. The preflight's space check runs before, on the
        nearly full volume and after the fix."""
        s = self.sides.get("nfs")
        if s is None or not self.ontap:
            self._not_run("DRL-3", "needs an NFS cluster on ONTAP")
            return
        t = self.t
        checks: dict[str, str] = {}

        def space(title: str | None, needs=None) -> sc.SpaceRow | None:
            rows, r = sc.space_audit(t, s.volume, self.svm, needs=needs or self.setup)
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
            fill = t.run_snippet(SNIP + "DRL-3-fill.sh", self.client, check=True, timeout=120,
                                 needs=self.setup, BOOTSTRAP=s.bootstrap(), RATE=fill_rate)
            if not fill.planned:
                until(lambda: (space(None) or before).used >= floor_mb * 2 ** 20, self.timeout,
                      0.5, f"{s.volume} to hold {floor_mb} MB")
            # Set the volume so that what it holds is ``full_percent`` of its usable size (the
            # size less the snapshot reserve); the writes go on, so if the volume has grown
            # past that size meanwhile, ONTAP refuses and the size is worked out again.
            shrink = None
            for _ in range(5):
                now = space(None, needs=fill)
                want = "NEARLY_FULL" if now is None else f"{nearly_full_mb(now, full_percent)}MB"
                shrink = t.run_snippet(SNIP + "DRL-3-volume-size.ontap", self.ontap,
                                       svm=self.svm, volume=s.volume, size=want)
                if shrink.ok and "smaller than the used space" not in shrink.stdout:
                    break
            shrink.check()
            fault = time.time()
            full = space("the volume nearly full" if first else None, needs=shrink)
            halted = None
            if not shrink.planned:
                until(lambda: not s.cluster.alive(s.b1), self.timeout, 0.5,
                      f"Kafka on {s.b1.name} to stop on the full volume")
                halted = time.time()
            df = t.run_snippet(SNIP + "DRL-3-df.sh", s.b1.name, read_only=True, needs=shrink,
                               MOUNTPOINT=s.mountpoint)
            stop = t.run_snippet(SNIP + "DRL-3-fill-stop.sh", self.client, needs=fill)
            grow = t.run_snippet(SNIP + "DRL-3-volume-size.ontap", self.ontap, check=True,
                                 svm=self.svm, volume=s.volume,
                                 size=size if isinstance(size, str) else
                                 f"{size // 2 ** 20}MB")
            heal = time.time()
            again = t.run_snippet(SNIP + "DRL-3-restart.sh", s.b1.name, check=True)
            if first:
                s.rec.show("DRL-3", "Kafka's writes fill the volume", fill, show=False)
                s.rec.show("DRL-3", f"The volume is set to {want}", shrink, prompt="::>")
                s.rec.show("DRL-3", f"{s.b1.name}: the volume as the client sees it, once "
                              "Kafka has stopped", df)
                s.rec.show("DRL-3", "The writes that filled it stop", stop, show=False)
                s.rec.show("DRL-3", "The fix: the volume gets its size back", grow,
                              prompt="::>")
                s.rec.show("DRL-3", f"{s.b1.name}: Kafka starts again", again)
            if shrink.planned:
                return None
            s.cluster.wait_serving([s.b1], 240)
            run = Run("DRL-3", s.name, n, fault, heal)
            run.extra["broker stopped after (s)"] = halted - fault
            run.extra["volume used when set (%)"] = full.percent_used if full else None
            self._recovered(w, run, "the restart")
            if first:
                space("after the fix")
                self._log_lines("DRL-3", s, run, [s.b1])
            return run
        o = self._drill("DRL-3", s, inject, "Volume full")
        t.run(f"bin/kafka-topics.sh --bootstrap-server {q(s.bootstrap())} --delete "
              "--if-exists --topic drills-fill", self.client, needs=self.setup)
        self._report("DRL-3", [o], f"volume {s.volume} filled by Kafka's writes")
        if o is not None:
            ok = checks.get("the volume nearly full") == FAIL and \
                checks.get("after the fix") == PASS
            # The guide's space check ran; the space it read is the ONTAP stand-in's.
            ev = self.rec.evidence(real=["guide-code"], model=["ontap-space"])
            s.rec.verdict("DRL-3", SPACE_CLAIM, agrees(ev) if ok else "differs", tr="-",
                             evidence=ev,
                             lab=f"nearly full: {checks.get('the volume nearly full', '-')}; "
                                 f"after the fix: {checks.get('after the fix', '-')}",
                             why="the space check read the volume as ONTAP reports it, on the "
                                 "nearly full volume (autosize off) and after the fix",
                             action="run the preflight's space check on every Kafka volume, "
                                    "or turn autosize on with a maximum that fits the aggregate")

    # --- DRL-4 ------------------------------------------------------------------------------------
    def partition(self, seconds: float) -> None:
        """DRL-4: broker 1's host loses its link for ``seconds`` (on each cluster)."""
        def inject(s: Side, n: int, w) -> Run | None:
            # A few seconds ahead: the command's answer must be home before the link goes.
            at = time.time() + LEAD_CUT_S
            r = self.t.run_snippet(SNIP + "DRL-4-partition.sh", s.b1.name, check=True,
                                   needs=self.setup,
                                   DEV=s.b1.get("kafka_interface", "eth0"),
                                   AT=f"{at:.3f}", HEAL_AT=f"{at + seconds:.3f}")
            if n == 0:
                s.rec.show("DRL-4", f"{s.name.upper()}: {s.b1.name} is cut off for "
                              f"{seconds:g} s", r)
            if r.planned:
                return None
            time.sleep(max(0.0, at + seconds + 0.5 - time.time()))
            self._reachable(s.b1.name)
            marks = self.t.run_snippet(SNIP + "DRL-4-marks.sh", s.b1.name, read_only=True,
                                       check=True).stdout.split()
            run = Run("DRL-4", s.name, n, float(marks[0]), float(marks[1]))
            self._recovered(w, run, "the heal")
            if n == 0:
                self._log_lines("DRL-4", s, run, [s.b1, s.controllers[0]])
            return run
        outcomes = self._both(lambda s: self._drill("DRL-4", s, inject, "Network partition"))
        self._report("DRL-4", outcomes, f"broker 1's host cut off for {seconds:g} s")

    # --- DRL-5 ------------------------------------------------------------------------------------
    def host_loss(self, down_s: float) -> None:
        """DRL-5: broker 1's host fails at once; the spare takes over its address and node id.
        As in REC-2's rounds, the host that failed, repaired, is the spare of the next run, so
        the two hosts take turns; after the last run broker 1's own host takes broker 1 back
        (not measured) and the standby is as it was."""
        def one(s: Side) -> Outcome | None:
            if s.standby is None:
                self._not_run("DRL-5", f"cluster {s.name} has no standby (kafka_standby: true)",
                              s.rec)
                return None
            home, spare = s.b1, s.standby
            saved = {h.name: dict(h.vars) for h in (home, spare)}
            try:
                return self._drill("DRL-5", s, lambda s, n, w: self._host_loss_run(
                    s, n, w, down_s, home), "Host loss",
                    after=lambda: self._give_back(s, home, spare))
            finally:
                s.brokers[0], s.standby = home, spare
                for h in (home, spare):
                    h.vars.clear()
                    h.vars.update(saved[h.name])
        outcomes = self._both(one)
        self._report("DRL-5", outcomes, "broker 1's host lost at once; the spare takes over")
        nfs = next((o for o in outcomes if o and o.cluster == "nfs"), None)
        if nfs is not None:
            held = [r.extra.get("lock held after the failure (s)") for r in nfs.runs]
            lease = nfs.runs[0].extra.get("_lease")
            got = [h for h in held if h is not None]
            if got and lease:
                sp = spread(got)
                ok = len(got) == len(held) and all(lease - 5 <= h <= lease + 5 for h in got)
                ev = self.rec.evidence(real=["kafka", "linux"], model=["ontap-lease"],
                                        also=["nfs-layer"])
                self.rec.verdict("DRL-5", LEASE_CLAIM, "not-measured" if not nfs.held else
                                 agrees(ev) if ok else "differs", evidence=ev,
                                 tr="-", lab=sp.as_dict("s"),
                                 why=("the producer did not hold its rate before every fault; "
                                      if not nfs.held else "")
                                 + f"the lock on broker 1's .lock stayed with the dead client "
                                     f"for {sp.fmt(1)} s, against a {lease} s NFSv4 lease (the "
                                     "claim holds within 5 s of it; lab: the ONTAP stand-in's "
                                     "model of the lease)",
                                 action="count the lease in an NFS replacement's time, and "
                                        "break the lock only when the old host is surely down",
                                 load_held=nfs.held)

    def _host_loss_run(self, s: Side, n: int, w, down_s: float, home: Host) -> Run | None:
        """One host loss: broker 1's host now (``s.b1``) fails, the spare (``s.standby``)
        takes over; then the two swap roles for the next run."""
        t, old, new = self.t, s.b1, s.standby
        address = f"{old.kafka_address}/{old.get('kafka_prefix', 24)}"
        first = n == 0
        kafka_home = old.get("kafka_home", kt.KAFKA_HOME)
        # The spare is identical to broker 1: broker 1's configuration (a standby gets a copy
        # under its own name; broker 1's own host has it already) and, on DAS, an empty disk.
        config = "config/server.properties" if new is home else TAKEOVER_CONFIG
        if new is not home:
            copied = t.put(new.name, f"{kafka_home}/{config}",
                           "(broker 1's config/server.properties)", needs=self.setup) \
                if self.dry else t.copy_file(home.name, f"{kafka_home}/config/server.properties",
                                             new.name, f"{kafka_home}/{config}")
            if first:
                s.rec.show("DRL-5", f"{s.name.upper()}: the standby gets broker 1's "
                              "configuration", copied, show=False)
        if not s.nfs:
            t.run(f"rm -rf {q(s.log_dir(new))} && mkdir -p {q(s.log_dir(new))}", new.name,
                  check=True, needs=self.setup)
        at = time.time() + LEAD_CUT_S
        r = t.run_snippet(SNIP + "DRL-5-host-loss.sh", old.name, check=True, needs=self.setup,
                          DEV=old.get("kafka_interface", "eth0"), ADDRESS=address,
                          AT=f"{at:.3f}", DOWN_SECONDS=down_s)
        if first:
            s.rec.show("DRL-5", f"{s.name.upper()}: {old.name} fails", r)
        run = None if r.planned else Run("DRL-5", s.name, n, at)
        if run is not None:
            w.wait(lambda smp: m.detected_at(smp, at), self.timeout,
                   f"the cluster to notice {old.name}'s loss")
        took = t.run_snippet(SNIP + "DRL-5-take-address.sh", new.name, check=True, needs=r,
                             DEV=new.get("kafka_interface", "eth0"), ADDRESS=address)
        if s.nfs:
            start = t.run_snippet(SNIP + "DRL-5-standby-nfs.sh", new.name, check=True, needs=r,
                                  VOLUME=s.export, MOUNTPOINT=s.mountpoint,
                                  OPTIONS=self._options(s), CONFIG=config)
        else:
            start = t.run_snippet(SNIP + "DRL-5-standby-das.sh", new.name, check=True, needs=r,
                                  BOOTSTRAP=s.bootstrap(skip_b1=True).split(",")[0],
                                  CONFIG=config)
        if first:
            s.rec.show("DRL-5", f"{s.name.upper()}: the standby takes broker 1's address",
                          took)
            s.rec.show("DRL-5", f"{s.name.upper()}: the standby starts as broker 1", start)
        # The spare is broker 1 now, the failed host the spare (this Target's view only).
        new.vars.update(kafka_address=old.kafka_address, kafka_node_id=old.get("kafka_node_id"),
                        kafka_log_dirs=old.get("kafka_log_dirs"))
        s.brokers[0], s.standby = new, old
        if run is None:
            return None
        run.extra["spare started after (s)"] = time.time() - at
        if s.nfs:
            self._lock_wait(s, run, first, config)
        s.cluster.wait_serving([new], 240)
        run.heal = time.time()
        self._recovered(w, run, "the takeover")
        time.sleep(self.settle_s)
        run.until = time.time()
        if first:
            self._log_lines("DRL-5", s, run, [new, s.controllers[0]])
        self._reachable(old.name)
        marks = t.run_snippet(SNIP + "DRL-5-marks.sh", old.name, read_only=True,
                              check=True).stdout.split()
        run.extra["host down for (s)"] = float(marks[1]) - float(marks[0])
        return run

    def _options(self, s: Side) -> str:
        """Mount options besides the NFS version, which the snippets pin to 4.1 themselves:
        the inventory's others, and on the lab the drills' x-lab-nopassthrough."""
        extra = _extra(s.options)
        return ",".join(o for o in (extra, NO_PASSTHROUGH if self.hook else "") if o)

    def _lock_wait(self, s: Side, run: Run, first: bool, config: str) -> None:
        """NFS: Kafka on the new broker 1 stops at once while the dead client's lock is held;
        wait for the lock (DRL-5-lock-wait.sh) and start again. How long it was held, from
        the failure, is the run's ``lock held`` figure."""
        t, sb = self.t, s.b1
        # Either it serves (the lock was free) or it exits: Kafka gives up on a held lock.
        until(lambda: not s.cluster.alive(sb) or port_open(
            sb.kafka_address, int(sb.get("kafka_port", 9092)), 0.5), 120, 0.5,
              f"Kafka on {sb.name} to start or stop")
        if s.cluster.alive(sb):
            run.extra["lock held after the failure (s)"] = None
            return
        refused = t.run_snippet(SNIP + "DRL-0-log-lines.sh", sb.name, read_only=True,
                                PATTERN="Failed to acquire lock", LINES=2,
                                SINCE=time.strftime("%Y-%m-%d %H:%M:%S",
                                                    time.localtime(run.fault)))
        lease = t.run_snippet(SNIP + "DRL-5-lease.ontap", self.ontap, read_only=True,
                              svm=self.svm)
        waited = t.run_snippet(SNIP + "DRL-5-lock-wait.sh", sb.name, check=True, timeout=300,
                               LOCK=f"{s.log_dir()}/.lock", CONFIG=config)
        free = float(waited.stdout.split("lock free at ")[1].split()[0])
        run.extra["lock held after the failure (s)"] = free - run.fault
        got = [x.get("v4-lease-seconds") for x in sc.fields_table(lease.stdout)]
        run.extra["_lease"] = int(got[0]) if got and str(got[0]).isdigit() else None
        if first:
            s.rec.show("DRL-5", "NFS: Kafka on the standby stops at once", refused)
            s.rec.show("DRL-5", "ONTAP: the SVM's NFSv4 lease", lease, prompt="::>")
            s.rec.show("DRL-5", "NFS: the standby waits for the lock, then starts Kafka",
                          waited)

    def _give_back(self, s: Side, home: Host, spare: Host) -> None:
        """After the last run (not measured): broker 1's own host takes broker 1 back if the
        standby has it (a clean handover), and the standby gives back what it took over, so
        the next drill finds the lab as this one did."""
        t, cur = self.t, s.b1
        address = home.kafka_address
        other = spare if cur is home else cur
        a = t.run_snippet(SNIP + "DRL-5-restore-standby.sh", other.name, check=True,
                          timeout=300, needs=self.setup, MOUNTPOINT=s.mountpoint or "",
                          LOG_DIR=s.log_dir(other))
        s.rec.show("DRL-5", f"{s.name.upper()}, afterwards: the standby stops and gives "
                      "back what it took", a, show=False)
        if cur is home or a.planned:
            return
        self._reachable(home.name)
        s.cluster.move_address(address, cur, home)
        b = t.run_snippet(SNIP + "DRL-5-restore-host.sh", home.name, check=True, timeout=300,
                          VOLUME=s.export or "", MOUNTPOINT=s.mountpoint or "/mnt/data",
                          OPTIONS=self._options(s))
        s.rec.show("DRL-5", f"{s.name.upper()}, afterwards: broker 1's own host is broker 1 "
                      "again", b, show=False)
        s.brokers[0], s.standby = home, spare
        s.cluster.wait_serving([home], 240)
        w = m.Watch(s.bootstrap(), s.node_id, {TOPIC})
        until(lambda: (x := w.poll()) is not None and x.broker_registered
              and x.under_replicated == 0, self.timeout, 0.5,
              f"{s.name}: every ISR full after {home.name} came back")

    # --- reporting ----------------------------------------------------------------------------------
    def _not_run(self, proc: str, why: str, rec=None) -> None:
        (rec or self.rec).text(proc, "", f"Not run on target {self.t.name}: {why}.")

    def _report(self, proc: str, outcomes: list[Outcome | None], what: str) -> None:
        """The drill's table (per cluster: median, min-max, n), its load record and its
        claim's verdict."""
        done = [o for o in outcomes if o is not None]
        if not done:
            return
        rows, loads = [], []
        extras = sorted({k for o in done for r in o.runs for k in r.extra
                         if not k.startswith("_")})
        for o in done:
            rs = o.runs
            rows.append([o.cluster.upper(), len(rs), o.check.acked, len(o.check.lost),
                         o.check.duplicates, len(o.producer.errors),
                         _spread([r.detect_s for r in rs], "never"),
                         _spread([r.resume_s for r in rs], "-"),
                         _spread([r.stall_s for r in rs], "-"),
                         _spread([r.isr_s for r in rs], "never shrank")]
                        + [_spread([r.extra.get(k) for r in rs], "-") for k in extras])
            loads += [{"name": f"{o.cluster} run {r.n + 1}", "unit": "records/s",
                       "target": o.target_rate, "achieved": round(r.rate, 1)} for r in rs]
        header = ["Cluster", "Runs", "Acknowledged", "Lost", "Duplicates", "Refused",
                  "Detected after (s)", "Producers resumed after (s)",
                  "Longest stall of a partition (s)", "ISR full again after (s)"] + \
            [k[0].upper() + k[1:] for k in extras]
        self.rec.table(proc, f"{what}: median (min-max, n) over the runs", header, rows,
                       note="Times count from the fault. Detected: the cluster took broker 1 "
                            "out of an in-sync replica set or fenced it. Producers resumed: the "
                            "last partition whose acknowledgements had stopped for more than a "
                            "second acknowledged again. Lost: acknowledged records the "
                            "verifiable consumer did not read back. Refused: sends the "
                            "producer gave up on (not acknowledged, so not owed).",
                       key=["Cluster", "Lost", "Producers resumed after (s)"])
        self.rec.load(proc, f"{what}: the producer's rate before each fault (from the end of "
                            "the settling after the previous run, at most 10 s)", loads)
        for o in done:
            if o.producer.errors:
                kinds: dict[str, int] = {}
                for e in o.producer.errors:
                    k = f"{e.get('exception', '?')}: {str(e.get('message', ''))[:160]}"
                    kinds[k] = kinds.get(k, 0) + 1
                self.rec.text(proc, "", f"{o.cluster.upper()}: the producer gave up on "
                              f"{len(o.producer.errors)} send(s), which the cluster never "
                              "acknowledged: " + "; ".join(f"{n} x {k}" for k, n in
                                                          kinds.items()) + ".")
            tr = o.transcripts
            self.rec.show(proc, f"{o.cluster.upper()}: the verifiable producer's summary",
                          tr["stop"], show=False)
            self.rec.show(proc, f"{o.cluster.upper()}: everything read back", tr["check"],
                          show=False)
        self._verdict(proc, done)

    def _verdict(self, proc: str, done: list[Outcome]) -> None:
        lost = sum(len(o.check.lost) for o in done)
        held = all(o.held for o in done)
        whole = all(o.unchanged for o in done)
        recovered = all(r.resume_s is not None for o in done for r in o.runs)
        n = sum(len(o.runs) for o in done)
        ev = self.rec.evidence(**EVIDENCE[proc])
        if not held:
            verdict = "not-measured"
        else:
            verdict = agrees(ev) if lost == 0 and recovered else "differs"
        self.rec.verdict(
            proc, CLAIMS[proc], verdict, tr="-", evidence=ev,
            lab=f"{lost} acknowledged records lost in {n} runs "
                f"({', '.join(o.cluster.upper() for o in done)}); producers "
                + ("resumed after every fault" if recovered else "did not resume after every "
                   "fault"),
            why=("the producer did not hold its rate before every fault" if not held else
                 f"the verifiable consumer read back every acknowledged record of {n} runs"
                 if lost == 0 else f"{lost} acknowledged records were not read back")
            + ("" if whole else "; the lab was not as the drill found it afterwards"),
            action="keep acks=all with min.insync.replicas=2 and three replicas",
            load_held=held)

    def summary(self) -> None:
        """What holds on every run (what nbval compares): per drill and cluster, whether any
        acknowledged record was lost and whether the lab was left as found."""
        for o in sorted(self.outcomes, key=lambda o: (o.drill, CLUSTERS.index(o.cluster))):
            print(f"{o.drill} {o.cluster}: {len(o.runs)} runs, acknowledged records lost: "
                  f"{'none' if not o.check.lost else len(o.check.lost)}, lab as found: "
                  f"{'yes' if o.unchanged else 'no'}")
        if not self.outcomes:
            print("planned only" if self.dry else "no drill ran")


def _extra(options: str) -> str:
    """NFS mount options without the version (vers=, nfsvers=, minorversion=)."""
    return ",".join(o for o in options.split(",") if o and o.split("=")[0] not in
                    ("vers", "nfsvers", "minorversion"))


def _kept(name: str):
    def keep(self, *args, **kwargs) -> None:
        self.calls.append((name, args, kwargs))
    keep.__name__ = name
    keep.__doc__ = f"Recorder.{name}, kept until replay()."
    return keep


class SideRecords:
    """One cluster's records while both clusters run a drill at once (DRL-4, DRL-5): kept
    in order and handed to the run's Recorder when both are done, so each cluster's records
    come together. It has the Recorder's recording methods and nothing else: a misspelt one
    fails at once, in the thread that called it."""

    def __init__(self):
        self.calls: list[tuple[str, tuple, dict]] = []

    console, show, table, text, chart, load, verdict, measured = map(
        _kept, ("console", "show", "table", "text", "chart", "load", "verdict", "measured"))

    def replay(self, rec) -> None:
        for name, args, kwargs in self.calls:
            getattr(rec, name)(*args, **kwargs)


def nearly_full_mb(r: sc.SpaceRow, percent: float) -> int:
    """The size (whole MB, at least ONTAP's 20 MB) at which what volume ``r`` holds is
    ``percent`` of its usable space (the size less the snapshot reserve)."""
    import math
    usable = (r.used + r.available) / r.size if r.size else 1.0
    return max(20, math.ceil(r.used * 100 / percent / usable / 2 ** 20))


def _spread(values, none: str) -> str:
    got = [v for v in values if v is not None]
    if not got:
        return none
    s = spread(got).fmt(1)
    return s if len(got) == len(values) else f"{s}; {len(values) - len(got)} x {none}"


def _fmt(v) -> str:
    return "-" if v is None else f"{v:.1f}" if isinstance(v, float) else str(v)


def _secs(v) -> str:
    return "-" if v is None else f"{v:.1f} s"


def _clock(t: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(t)) + f".{int(t % 1 * 10)}"
