"""What every drill shares (DRL-0): the Harness holds the run, the target and both clusters;
it prepares the drills (the topic, the producer's settings, on the lab the NFS mounts without
passthrough, so that the lab's NFS layer sees every write) and restores them, runs a drill on
both clusters at once, runs one drill on one cluster under the load (its producers: load.py)
and checks what came back, measures each fault, waits for recovery, and reads what the lab
looks like (state) to tell whether a drill left it as it found it."""
from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from shlex import quote as q

from ... import kafka_tools as kt
from ...inventory import Host
from ...measure import drills as m
from ...wait import until
from .. import space_check as sc
from ..nfs_audit import default_svm
from . import configs as cf
from .configs import started_with
from .load import (CALIBRATION_LATENCY_MS, CALIBRATION_WARMUP_S, CALIBRATION_WINDOW_S,
                   PACE_WAIT_S, SNIP, Producers)
from .runs import Outcome, Run
from .sides import CLUSTERS, Side, SideRecords, sides

TOPIC = "drills"
PRODUCER_CONFIG = "failure-drills/DRL-0-producer.properties"
NO_PASSTHROUGH = "x-lab-nopassthrough"
#: A run's column for a drill at several lengths: partitions that had not acknowledged since
#: the fault when it ended.
WAITING = "partitions still waiting when the fault ended"
#: The consumer group that reads each load while the drill runs: its members (verifiable
#: consumers), and how long its stop waits for it to read what was acknowledged.
GROUP_MEMBERS = 2
GROUP_WAIT_S = 120
#: How far ahead a cut is scheduled on the host it cuts off (its SSH answer must be home first:
#: under the drills' load an answer took longer than 3 s, and a cut that comes first leaves the
#: step without its exit code). The fault's time is the scheduled one, so this costs only time.
LEAD_CUT_S = 8.0
#: Lines of Kafka's log an operator looks for after each drill (brokers and controllers).
LOG_PATTERN = ("Fencing broker|unfence has been granted|has been unfenced|new incarnation of "
               "broker|Shrinking ISR|Expanding ISR|ISR updated|No space left|Stopping serving "
               "logs|Shutdown broker|Halting|Failed to acquire lock|Transition from|Error "
               "connecting to node|Disconnecting from node|NOT_ENOUGH_REPLICAS")


class Harness:
    """The drills' shared state and steps: the run, its target and Recorder, the clusters
    (Side), the load's parameters, and what DRL-0 set up and found."""

    def __init__(self, run, repeats: int = 3, rate: float = 300, lead_s: float = 4,
                 settle_s: float = 3, recover_timeout_s: float = 240,
                 configs: dict[str, dict[str, str]] | None = None, producers: int = 1):
        self.run, self.t, self.rec = run, run.target, run.rec
        self._barrier: threading.Barrier | None = None
        self.sides = sides(self.t)
        for s in self.sides.values():
            s.rec = self.rec              # each cluster's records; buffered while both run
        self.repeats, self.rate = int(repeats), float(rate)
        #: verifiable producers per load; ``rate`` is theirs together, shared equally
        self.producers = int(producers)
        self.load = Producers(self)         # their start, stop, read-back, pace (load.py)
        self.calibration = None             # what calibrate() tried and found
        self.lead_s, self.settle_s, self.timeout = lead_s, settle_s, recover_timeout_s
        self.client = self.t.hosts("clients")[0].name
        self.ontap = self.t.inventory.ontap().name if "ontap" in self.t.inventory.groups \
            else None
        self.svm = default_svm(self.t) if self.ontap else None
        self.outcomes: list[Outcome] = []
        self.setup = None                   # DRL-0's first step: planned on a dry run
        self.lab_layer = False              # the lab's NFS client layer is on the NFS brokers
        self.nft: dict[str, bool] = {}      # per cluster: broker 1's host has nft (DRL-1, DRL-7)
        self.found: dict | None = None      # the lab as DRL-0 left it (see state())
        self.settings: dict[str, dict[str, str]] = {}   # per cluster: broker 1's, now
        self.configs = configs or cf.CONFIGS    # what each configuration sets (configs.py)
        self.current: dict[str, str | None] = {c: None for c in self.sides}  # None: as found
        self._admins: dict[str, object] = {}    # per cluster: the preferred elections' client
        self._once: set[str] = set()

    def both(self, fn) -> list:
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

    def once(self, key: str) -> bool:
        """True the first time ``key`` is asked for (what a drill shows only once)."""
        if key in self._once:
            return False
        self._once.add(key)
        return True

    @property
    def dry(self) -> bool:
        """A dry run: DRL-0's first change was only planned, so is every later step."""
        return self.setup is not None and self.setup.planned

    # --- DRL-0 --------------------------------------------------------------------------------
    def prepare(self) -> None:
        """DRL-0: whether broker 1's host has nft, the drills topic on each cluster, the
        producer's settings on the client, and (where the lab's NFS layer is) the NFS
        brokers' volumes mounted without passthrough."""
        t = self.t
        first = None
        for c, s in self.sides.items():
            r = t.run_snippet(SNIP + "DRL-0-topic.sh", self.client, check=True, timeout=180,
                              BOOTSTRAP=s.bootstrap())
            first = first or r
            self.rec.show("DRL-0", f"{c.upper()}: the drills topic", r, show=c == "nfs")
        self.setup = first
        for c, s in self.sides.items():
            self._read_settings(s, "as found")
            # DRL-1 and DRL-7 cut broker 1's host off its NFS server with nftables: whether
            # the host has nft is read before any drill (a dry run, which reads nothing after
            # a planned step, plans those drills as if it had).
            if c == "nfs":
                r = t.run("command -v nft || true", s.b1.name, read_only=True, needs=self.setup)
                self.nft[c] = r.planned or bool(r.stdout.strip())
        # Every drill runs on the deploy checklist's settings; DRL-1 also on the TR's.
        self.configure(cf.CHECKLIST)
        self.rec.show("DRL-0", "The verifiable producer's settings, on the client",
                      t.run_snippet(PRODUCER_CONFIG, self.client, check=True), show=False)
        nfs = self.sides.get("nfs")
        if nfs is None:
            return
        # The lab's NFS layer stalls a mount's requests when its server stops answering, and
        # fails them on a soft mount: with FUSE passthrough, reads and writes would bypass it,
        # so the brokers' volumes are mounted without. Both are lab-only: on a real target
        # neither is looked for nor planned (mount knows no such option).
        if self.run.is_lab:
            layer = t.run("command -v tr4947-nfsctl || true", nfs.b1.name, read_only=True,
                          needs=self.setup)
            self.lab_layer = not layer.planned and bool(layer.stdout.strip())
        if self.lab_layer:
            self._remount(nfs, self.options(nfs),
                          "Lab: NFS brokers' volumes mounted without passthrough")
        if not self.dry:
            self.found = self.state()
            print(f"lab state recorded: {len(self.found['hosts'])} hosts, "
                  f"volumes {self.found['volumes']}, LIFs {self.found['lifs']}")

    def _read_settings(self, s: Side, when: str, proc: str = "DRL-0") -> None:
        """What decides how a fault plays out, as broker 1 was started with it (each drill's
        outcome keeps it, and its verdict says it)."""
        cfg = self.t.run_snippet(SNIP + "DRL-0-broker-config.sh", s.b1.name, read_only=True,
                                 check=True, needs=self.setup)
        self.settings[s.name] = {} if cfg.planned else started_with(cfg.stdout)
        s.rec.show(proc, f"{s.name.upper()}: broker 1's settings that decide the drills, "
                            f"{when}", cfg, show=s.name == "nfs")

    # --- the load's rate (DRL-0) ------------------------------------------------------------
    def calibrate(self, start: float, floor: float, step: float = 0.85) -> None:
        """DRL-0: the highest rate the lab holds with both clusters loaded at once, as CPU-2
        finds its rate (omb.calibrate): the producers on every cluster at ``start`` records/s,
        then down by ``step`` until every cluster's achieve 95 % of it with their records
        acknowledged within CALIBRATION_LATENCY_MS of their due time on average, or the rate
        falls below ``floor``. The drills then run at that rate (at ``floor`` if none held,
        and their load records say that they did not hold it)."""
        from ..omb import calibrate
        if self.dry:
            self.rec.text("DRL-0", "", f"Planned: the drills' rate calibrated from {start:,.0f} "
                          f"records/s down by x{step:g} (floor {floor:,.0f}), "
                          f"{self.producers} verifiable producer(s) per cluster.")
            return

        def run_at(rate: float) -> list:
            self.rate = rate
            return self.both(lambda s: self.load.try_rate(s, rate))
        cal = calibrate(run_at, start, floor, step, CALIBRATION_LATENCY_MS)
        self.calibration = cal
        self.rate = cal.held_rate if cal.held_rate is not None else floor
        cal.table(self.rec, "DRL-0", "The drills' load, calibrated on both clusters at once",
                  unit="records/s",
                  note=f"{self.producers} verifiable producers per cluster, their rates "
                       f"together; each step {CALIBRATION_WINDOW_S} s after "
                       f"{CALIBRATION_WARMUP_S} s of warm-up. Held: at least 95 % of the rate "
                       "achieved, with records acknowledged on average at most "
                       f"{CALIBRATION_LATENCY_MS} ms after they were due. The drills run at "
                       "the highest rate held (lab figures: the lab's two clusters share "
                       "one machine).")
        print(f"DRL-0: the drills run at {self.rate:,.0f} records/s "
              f"({self.producers} producers per cluster)"
              + ("" if cal.held_rate is not None else ": no rate tried held, the floor"))

    # --- the configuration the drills run on (configs.py) -----------------------------------
    def configure(self, name: str | None, only: str | None = None,
                  proc: str = "DRL-0") -> None:
        """Every broker of every cluster (``only``: of that one) onto configuration ``name``
        (configs.CONFIGS; None: the files as DRL-0 found them), one restart at a time;
        recorded under ``proc``."""
        chosen = [s for c, s in self.sides.items() if only in (None, c)]
        if len(chosen) > 1:
            self.both(lambda s: self._switch(s, name, proc))
        else:
            for s in chosen:
                self._switch(s, name, proc)

    def _switch(self, s: Side, name: str | None, proc: str) -> None:
        if self.current[s.name] == name:
            return
        t, label = self.t, cf.LABELS[name]
        restart, shown = [], None
        for b in s.brokers:
            path = cf.config_path(b)
            # The file as DRL-0 found it, kept once (the restore puts it back).
            kept = t.run(f"test -e {q(path + cf.FOUND_SUFFIX)} || cp -p {q(path)} "
                         f"{q(path + cf.FOUND_SUFFIX)}", b.name, check=True, needs=self.setup)
            if name is None:
                # The file comes back as it was; the broker restarts only where a setting
                # the drills change differs from it.
                now = t.read_file(b.name, path, needs=kept)
                was = t.read_file(b.name, path + cf.FOUND_SUFFIX, needs=kept)
                changed = now.planned or any(
                    started_with(now.stdout).get(k) != started_with(was.stdout).get(k)
                    for k in {k for c in self.configs.values() for k in c})
                r = t.run_snippet(SNIP + "DRL-0-config-restore.sh", b.name, check=True,
                                  needs=kept, CONFIG=path, FOUND=path + cf.FOUND_SUFFIX,
                                  SWITCHED=path + cf.SWITCH_SUFFIX)
            else:
                now = t.read_file(b.name, path, needs=kept)
                wanted = self.configs[name]
                changed = now.planned or cf.needs_switch(started_with(now.stdout), wanted)
                r = t.apply_properties(None, b.name, path, text=cf.properties(wanted),
                                       backup=path + cf.SWITCH_SUFFIX, check=True,
                                       needs=kept) if changed else now
            shown = shown or r
            if changed:
                restart.append(b)
        what = ("the brokers' files as DRL-0 found them" if name is None else
                ", ".join(f"{k}={v}" for k, v in self.configs[name].items()))
        s.rec.show(proc, f"{s.name.upper()}: {label}: {what} ({s.b1.name}; the others "
                         "alike), then each broker restarted in turn", shown)
        for b in restart:
            self._restart(s, b, "back on its file as found" if name is None else
                          f"with the {label} settings")
        self.current[s.name] = name
        self._read_settings(s, label, proc)

    def _restart(self, s: Side, b: Host, why: str) -> None:
        """Broker ``b`` stopped cleanly and started, then until every partition of the cluster
        has its full ISR again (so that the next restart takes no second replica away)."""
        stopped = s.cluster.stop([b])
        if stopped.planned:
            s.cluster.start([b])
            return
        s.cluster.start([b], timeout=240)
        print(f"{s.name}: {b.name} restarted {why}")
        self.whole(s, b, f"after {b.name} restarted")

    def whole(self, s: Side, b: Host | None = None, why: str = "") -> None:
        """Until broker ``b`` (default: broker 1) of cluster ``s`` is registered and every
        partition of the cluster has its full ISR."""
        w = m.Watch(s.bootstrap(), s.cluster.node_id(b or s.b1), None)
        with w:
            w.wait(m.whole_at, self.timeout, f"every ISR of {s.name} full {why}".rstrip())

    def preferred_leaders(self, s: Side) -> None:
        """Before a drill's load: every partition of the drills topic led by its preferred
        replica (the first of its replica list), so that each drill starts with broker 1
        leading its share, whatever restarts and earlier drills moved. Kafka's own
        rebalancing would do it only at its next five-minute check, in the middle of a drill.
        The Admin API's preferred election, from the control node, as kafka-leader-election.sh
        --election-type PREFERRED does it. The first time, the leaders are recorded."""
        if self.dry:
            if not self.outcomes:
                s.rec.text("DRL-0", "", "Planned before each drill's load: a preferred leader "
                           "election on the drills topic (Kafka's Admin API, as "
                           "kafka-leader-election.sh --election-type PREFERRED does).")
            return
        from confluent_kafka import ElectionType, TopicPartition

        from ...transports import kafka_admin
        # A preferred replica can lead again only once it is back in the ISR.
        self.whole(s, why="before the load")
        # One client per cluster for every election (broker 1's address stays the same
        # through every drill: DRL-5's spare takes it over).
        admin = self._admins.get(s.name)
        if admin is None:
            admin = self._admins[s.name] = kafka_admin.client(
                s.bootstrap(), **{"request.timeout.ms": 30000})
        parts = admin.list_topics(TOPIC, timeout=30).topics[TOPIC].partitions
        wanted = [TopicPartition(TOPIC, p) for p in sorted(parts)]
        # ELECTION_NOT_NEEDED for a partition already led by its preferred replica is fine.
        admin.elect_leaders(ElectionType.PREFERRED, wanted).result(timeout=60)

        def led() -> list | None:
            md = admin.list_topics(TOPIC, timeout=30).topics[TOPIC].partitions
            rows = [[p, md[p].replicas[0], md[p].leader] for p in sorted(md)]
            return rows if all(r[1] == r[2] for r in rows) else None
        rows = until(led, 60, 0.5, f"every partition of {s.name}'s drills topic led by its "
                                   "preferred replica")
        if not any(o.cluster == s.name for o in self.outcomes):
            s.rec.table("DRL-0", f"{s.name.upper()}: the drills topic's leaders before the "
                                 "first load, after a preferred leader election",
                        ["Partition", "Preferred leader", "Leader"], rows)

    def _remount(self, s: Side, options: str, title: str, brokers: list[Host] | None = None,
                 proc: str = "DRL-0") -> None:
        """DRL-0-remount.sh on ``brokers`` (default: every NFS broker) at once (no load runs
        meanwhile), then until all of them serve again."""
        brokers = brokers or s.brokers

        def one(b: Host):
            return self.t.run_snippet(SNIP + "DRL-0-remount.sh", b.name, check=True,
                                      timeout=300, VOLUME=s.export_of(b),
                                      MOUNTPOINT=s.mountpoint, OPTIONS=options)
        with ThreadPoolExecutor(len(brokers)) as pool:
            done = list(pool.map(one, brokers))
        others = "; the others alike" if len(brokers) > 1 else ""
        s.rec.show(proc, f"{title} ({brokers[0].name}{others})", done[0])
        if not done[0].planned:
            s.cluster.wait_serving(brokers, 240)

    def remount(self, s: Side, b: Host, options: str, title: str, proc: str) -> None:
        """One NFS broker's volume mounted again with ``options`` as well as the drills' (the
        lab only: see prepare)."""
        extra = self.options(s)
        self._remount(s, ",".join(o for o in (options, extra) if o), title, [b], proc)

    def restore(self) -> None:
        """After the drills: every broker's configuration file as DRL-0 found it (restarted
        where it differs), and the NFS brokers' volumes mounted with the inventory's options
        again (DRL-0)."""
        self.configure(None)
        nfs = self.sides.get("nfs")
        if nfs is not None and self.lab_layer:
            self._remount(nfs, _extra(nfs.options), "After the drills: the volumes as they were")

    def options(self, s: Side) -> str:
        """Mount options besides the NFS version, which the snippets pin to 4.1 themselves:
        the inventory's others, and on the lab the drills' x-lab-nopassthrough."""
        extra = _extra(s.options)
        return ",".join(o for o in (extra, NO_PASSTHROUGH if self.lab_layer else "") if o)

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
    def drill(self, proc: str, s: Side, inject, title: str, after=None,
              length: float | None = None, restore=None) -> Outcome | None:
        """``repeats`` runs of ``inject(s, n, watch) -> Run`` on cluster ``s`` under the
        verifiable producer, then the check; recorded under ``proc``. ``after()``: once the
        last run is over, still under load; ``restore()``: once the load is over and checked,
        before the lab is compared with what DRL-0 found (a drill that changes the lab on
        purpose puts it back there). ``length``: the fault's set length, for a drill run at
        several (its runs then also count the partitions still waiting when the fault
        ended)."""
        t = self.t
        # Values <drill><cluster><k>.n: the k-th load of this drill on this cluster (each
        # check reads back only its own load's values; the verifiable producer's prefix is
        # a number).
        k = sum(1 for o in self.outcomes if (o.drill, o.cluster) == (proc, s.name))
        if k > 9:
            raise ValueError(f"{proc} on {s.name}: at most 10 loads per drill and cluster")
        prefix = f"{proc[-1]}{CLUSTERS.index(s.name) + 1}{k}"
        out = f"/tmp/drill-{proc}-{s.name}-{k}.jsonl"
        self.preferred_leaders(s)
        # What earlier loads wrote goes, so that this load's check reads only its own.
        trim = t.run_snippet(SNIP + "DRL-0-topic-trim.sh", self.client, check=True,
                             timeout=180, needs=self.setup, BOOTSTRAP=s.bootstrap(),
                             OUT=out + ".trim")
        if self.once(f"trim {s.name}"):
            s.rec.show("DRL-0", f"{s.name.upper()}: before each load, the records earlier "
                                "loads left deleted", trim, show=False)
        # The group first: it reads from the end of the topic, so it must hold every partition
        # before the first record of this load is written.
        group = {"OUT": out + ".group", "MEMBERS": GROUP_MEMBERS, "VALUE_PREFIX": prefix}
        readers = t.run_snippet(SNIP + "DRL-0-group-start.sh", self.client, check=True,
                                timeout=180, needs=self.setup, BOOTSTRAP=s.bootstrap(),
                                GROUP=f"drill-live-{prefix}-{int(time.time())}", **group)
        try:
            started = self.load.start(s, self.rate, out, prefix)
        except Exception:
            self.load.stop(out)           # those that did start
            t.run_snippet(SNIP + "DRL-0-group-stop.sh", self.client, timeout=120, ACKED=0,
                          WAIT=0, **group)
            self.load.clean(out)
            raise
        if started.planned:
            s.rec.show(proc, f"{s.name.upper()}: load on", started, show=False)
            inject(s, 0, None)
            if after:
                after()
            t.run_snippet(SNIP + "DRL-0-producer-stop.sh", self.client, needs=started, OUT=out,
                          PRODUCERS=self.producers)
            t.run_snippet(SNIP + "DRL-0-group-stop.sh", self.client, needs=readers, **group)
            if restore:
                restore()
            return None
        try:
            return self._load(proc, s, inject, after, length, prefix, out, group, started,
                              readers, restore)
        finally:
            self.load.clean(out)

    def _load(self, proc: str, s: Side, inject, after, length: float | None, prefix: str,
              out: str, group: dict, started, readers, restore=None) -> Outcome:
        """drill()'s load, once it is on: the runs, the producers and the group stopped, the
        check and the measurements."""
        t = self.t
        env = {"BOOTSTRAP": s.bootstrap(), "VALUE_PREFIX": prefix}
        print(f"{proc} {s.name}: {self.producers} producer(s) at {self.rate:,.0f} records/s "
              f"together (values {prefix}<j>.n)")
        runs: list[Run] = []
        loaded = False
        transcripts: dict = {"load": started, "group": readers}
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
                        # Not before the producers are back at their pace (a long fault
                        # leaves a backlog that they send in a burst).
                        steady.append(self.load.at_pace(out, time.time() + PACE_WAIT_S))
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
                loaded = True
            finally:
                produced = None
                try:
                    stopped = self.load.stop(out)
                    produced = self.load.read(out, prefix)
                finally:
                    # Until the group has read everything acknowledged (or GROUP_WAIT_S); at
                    # once when the load failed.
                    ok = loaded and produced is not None
                    transcripts["group stop"] = t.run_snippet(
                        SNIP + "DRL-0-group-stop.sh", self.client, timeout=GROUP_WAIT_S + 120,
                        ACKED=len(produced.values) if ok else 0,
                        WAIT=GROUP_WAIT_S if ok else 0, **group)
            samples = list(w.samples)
        transcripts["stop"] = stopped
        readers_log = m.parse_group([t.read_file(self.client, f"{group['OUT']}.{i}").stdout
                                     for i in range(1, GROUP_MEMBERS + 1)], prefix)
        consumed = t.run_snippet(SNIP + "DRL-0-consume.sh", self.client, check=True, timeout=420,
                                 OUT=out + ".read", **env)
        transcripts["check"] = consumed
        read = m.parse_consumed(t.read_file(self.client, out + ".read").stdout)
        result = m.check(produced, read, prefix)
        self._measure(runs, produced, samples, result, waiting=length is not None,
                      group=readers_log)
        if runs:
            # The drill's measurement window: the producer under watch from its steady start
            # to the last run's end (overlapping DAS and NFS windows count once in a run's
            # timing, tr4947.runbook.profile).
            s.rec.measured(runs[-1].end - steady[0], f"{proc} {s.name}", end=runs[-1].end)
        if restore:
            restore()
        unchanged = self._same_as_found(s, f"{proc} {s.name}")
        o = Outcome(proc, s.name, runs, result, produced, self.rate, unchanged, transcripts,
                    samples, config=self.current[s.name],
                    settings=dict(self.settings.get(s.name, {})), length=length)
        self.outcomes.append(o)
        print(f"{proc} {s.name}: {result.acked} acknowledged, {len(result.lost)} lost, "
              f"{result.duplicates} duplicates; lab as found: {'yes' if unchanged else 'NO'}")
        return o

    def _measure(self, runs: list[Run], produced: m.ProducerLog, samples: list,
                 result: m.Check, waiting: bool = False,
                 group: m.GroupLog | None = None) -> None:
        lost = set(result.lost)
        # Built once for the load's runs (each can hold hundreds of thousands of records).
        times = m.LoadTimes.of(produced, group, self.load.each()) \
            if group is not None else None
        for i, r in enumerate(runs):
            r.end = runs[i + 1].fault - self.lead_s if i + 1 < len(runs) else \
                (produced.acks[-1].t if produced.acks else r.fault)
            if r.until is not None:
                r.end = min(r.end, r.until)
            window = m.in_window(produced.acks, r.fault - 60, r.end)
            st = m.stall(window, r.fault, r.end)
            r.resume_s, r.stall_s = st.resumed_s, st.longest_s
            if waiting and r.heal is not None:
                # Which partitions the fault held for its whole length, and which resumed
                # before it ended (the cluster worked around broker 1).
                at_heal = m.stall(m.in_window(produced.acks, r.fault - 60, r.heal), r.fault,
                                  r.heal)
                r.extra[WAITING] = at_heal.silent
                r.partitions = at_heal.of
            fenced = m.fenced_at(samples, r.fault, r.end)
            r.fenced_s = None if fenced is None else fenced - r.fault
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
            if group is not None:
                r.group = m.group_through(produced, group, self.load.each(),
                                          r.fault, r.end, times=times)

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

    # --- the lab's NFS client layer's own account of its outages ----------------------------------
    def client_status(self, s: Side) -> dict | None:
        """The lab's NFS layer's status of broker 1's mount (one JSON object: its outages, a
        soft mount's EIOs), or None where there is no such layer (a real client)."""
        if not self.lab_layer:
            return None
        r = self.t.run_snippet(SNIP + "DRL-0-client-outages.sh", s.b1.name, read_only=True,
                               check=True, MOUNTPOINT=s.mountpoint)
        try:
            return json.loads(r.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            return None

    def client_outages(self, s: Side) -> dict | None:
        """What the lab's NFS layer on broker 1's mount says of its outages (how many, the
        last few in ms), or None where there is no such layer (a real client)."""
        try:
            server = (self.client_status(s) or {})["server"]
            return {"outages": int(server["outages"]),
                    "outages_ms": [int(x) for x in server.get("outages_ms", [])]}
        except (ValueError, KeyError, TypeError):
            return None

    def outages_since(self, s: Side, before: dict | None) -> list[float]:
        """The outages (s) broker 1's mount measured since ``before`` (client_outages), oldest
        first: one per reconnection, or per time the server fell silent with the connection
        up. Empty without the lab's layer."""
        after = self.client_outages(s) if before is not None else None
        if after is None:
            return []
        k = after["outages"] - before["outages"]
        return [round(ms / 1000, 2) for ms in after["outages_ms"][-k:]] if k > 0 else []

    # --- a fault that moves broker 1's storage path away and back (DRL-2, DRL-6) ------------------
    def back_home(self, w, run: Run, what: str, s: Side, measured: dict | None,
                  outage_keys: tuple[str, str]) -> None:
        """After the move back: until every ISR is full again, then the outages broker 1's
        NFS client measured since ``measured`` (client_outages), one per move, as the run's
        ``outage_keys`` columns."""
        self.recovered(w, run, what)
        time.sleep(2)                       # the client's last reconnection is reported
        for key, seconds in zip(outage_keys, self.outages_since(s, measured)):
            run.extra[key] = seconds

    @staticmethod
    def there_and_back(o: Outcome | None, back_key: str) -> None:
        """Each run's producer stall in two: the run's own up to the move back (its heal),
        then the move back's, to the run's end, as the ``back_key`` column."""
        for r in o.runs if o else []:
            there = m.stall(m.in_window(o.producer.acks, r.fault - 60, r.heal), r.fault, r.heal)
            r.resume_s, r.stall_s = there.resumed_s, there.longest_s
            back = m.stall(m.in_window(o.producer.acks, r.heal - 60, r.end), r.heal, r.end)
            r.extra[back_key] = back.resumed_s

    # --- waiting ----------------------------------------------------------------------------------
    def recovered(self, w, r: Run, what: str) -> None:
        """Until every ISR is full again, if the fault made one shrink (whichever replica
        left it: a paused leader drops its followers once it runs again)."""
        if m.isr_shrank(w.samples, r.fault):
            w.wait(lambda smp: m.whole_again_at(smp, r.fault), self.timeout,
                   f"every ISR of {r.cluster} full again after {what}")

    def scheduled(self, s: Side, snippet: str, seconds: float, **env):
        """A fault broker 1's host schedules for itself (DRL-1, DRL-4, DRL-7): ``snippet`` is
        told to begin it LEAD_CUT_S from now (AT) and end it ``seconds`` later (HEAL_AT), so
        that its answer is home before the fault can cut the session off. Returns the step's
        result and AT."""
        at = time.time() + LEAD_CUT_S
        r = self.t.run_snippet(SNIP + snippet, s.b1.name, check=True, needs=self.setup,
                               AT=f"{at:.3f}", HEAL_AT=f"{at + seconds:.3f}", **env)
        return r, at

    def marks(self, s: Side, snippet: str) -> tuple[float, float]:
        """When a scheduled fault really began and ended, as broker 1's host wrote them."""
        out = self.t.run_snippet(SNIP + snippet, s.b1.name, read_only=True,
                                 check=True).stdout.split()
        return float(out[0]), float(out[1])

    def reachable(self, host: str, timeout: float = 180) -> None:
        """Until ``host`` answers over SSH again (after its link came back)."""
        last: list = []

        def answers() -> bool:
            r = self.t.run("true", host, read_only=True, timeout=10)
            last[:] = [r]
            return r.exit_code == 0
        until(answers, timeout, 1, f"{host} to answer over SSH again",
              seen=lambda: (f"exit {last[0].exit_code}, timed out {last[0].timed_out}: "
                            f"{last[0].output[-300:]}") if last else "nothing")

    def log_lines(self, proc: str, s: Side, r: Run, hosts: list[Host],
                  load: str = "") -> None:
        """The log lines an operator would see, from the first run of a drill (``load``:
        which of the drill's loads, where it has several: configuration and length)."""
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(r.fault - 1))
        for h in hosts:
            got = self.t.run_snippet(SNIP + "DRL-0-log-lines.sh", h.name, read_only=True,
                                     PATTERN=LOG_PATTERN, SINCE=since, LINES=14)
            s.rec.show(proc, f"{s.name.upper()}{load}, run 1: what {h.name}'s log says", got,
                          show=False)

    def load_label(self, s: Side, length: float) -> str:
        """How a drill at several lengths and configurations names one of its loads."""
        return f", {length:g} s, {cf.LABELS[self.current[s.name]]}"


def _extra(options: str) -> str:
    """NFS mount options without the version (vers=, nfsvers=, minorversion=)."""
    return ",".join(o for o in options.split(",") if o and o.split("=")[0] not in
                    ("vers", "nfsvers", "minorversion"))


def _fmt(v) -> str:
    return "-" if v is None else f"{v:.1f}" if isinstance(v, float) else str(v)


def _secs(v) -> str:
    return "-" if v is None else f"{v:.1f} s"


def _clock(t: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(t)) + f".{int(t % 1 * 10)}"
