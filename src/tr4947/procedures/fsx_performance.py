"""FSX-6: the CVO workload with the TR's drivers on brokers whose log dirs are the six FSx
volumes, at replication factor 1 and 3, several runs each."""
from __future__ import annotations

from .. import broker_config, paths
from ..measure.spread import ratio, series, spread
from ..omb import parse_driver
from . import fsx, omb, performance
from . import nfs_audit as pf
from .context import ChapterRun
from .record import agrees
from .performance import Testbed, snippet

WORKLOAD = "aws-cvo/CVO-6-workload.yaml"
DRIVER = {(1, "sync"): "aws-fsx/FSX-6-driver-sync-rf1.yaml",
          (1, "throughput"): "aws-fsx/FSX-6-driver-throughput-rf1.yaml",
          (3, "sync"): "aws-cvo/CVO-6-driver-sync.yaml",
          (3, "throughput"): "aws-cvo/CVO-6-driver-throughput.yaml"}
#: The TR's sustained / peak totals, MBps, per replication factor and driver.
TR = {(1, "sync"): (3218, 3652), (1, "throughput"): (3679, 3908),
      (3, "sync"): (1252, 1382), (3, "throughput"): (1218, 1328)}


class FsxPerformance:
    def __init__(self, run: ChapterRun, create_file_system: bool):
        self.run, self.t, self.rec = run, run.target, run.rec
        self.tb = tb = Testbed(self.t)
        self.create_file_system = create_file_system
        print(tb.deploy(run))
        self.nfs_address = self.t.inventory.ontap().get("ontap_data_lifs")[0]["address"]
        self.needs = self.started = None
        if create_file_system:
            password = self.t.secret("FSXADMIN_PASSWORD")
            fs = fsx.create(self.t, self.rec, tb.client, password, record=False,
                            tr_as_printed=False)
            self.needs = fsx.volumes(self.t, self.rec, fs, password, record=False)[1]
            self.nfs_address = fs.nfs_address or "<NFS address from FSX-4>"
        self.runs: dict[tuple[int, str], list] = {}
        print(f"brokers {', '.join(tb.brokers)}; OMB client {tb.client}; NFS {self.nfs_address}")

    def brokers(self, heap: str) -> None:
        """Every broker mounts the six volumes (FSX-5's fstab) and keeps a log dir on each."""
        tb = self.tb
        mounts = tb.mount("aws-fsx/FSX-5-mount.sh", fstab="aws-fsx/FSX-5-nfs-mounts.fstab",
                          servers=self.nfs_address, needs=self.needs)
        line = broker_config.keys(snippet("aws-fsx/FSX-6-broker1-log-dirs.properties"))["log.dirs"]
        rows = []
        for host, text in tb.configure(snippet("aws-cvo/CVO-5-server-ha.properties"),
                                       lambda n: line.replace("/broker1", f"/broker{n}")):
            dirs = broker_config.keys(text)["log.dirs"].split(",")
            on_nfs = [d for d in dirs if any(d.startswith(m + "/") for m in mounts[host])]
            rows.append([host, len(dirs), len(on_nfs), len(mounts[host])])
        self.started = tb.start(heap)
        if not self.started.planned and not all(d == n == m == 6 for _, d, n, m in rows):
            raise RuntimeError(f"every broker needs six log dirs on the six volumes: {rows}")
        self.rec.table("FSX-6", "Each broker's log dirs on the six FSx volumes",
                       ["Broker host", "log.dirs", "on NFS mounts", "NFS mounts (nconnect=16)"],
                       rows)
        audit, _ = pf.audit(self.t, hosts=tb.brokers,
                            svm=fsx.SVM_NAME if self.create_file_system else None,
                            needs=self.started)
        if not self.started.planned:
            pf.record(self.rec, "FSX-6", "Preflight audit (PRE-1) of the brokers as built", audit)

    def rf1_acks_all(self) -> None:
        """Why the RF 1 drivers change min.insync.replicas: what acks=all gets from a topic
        with one replica and the CVO-6 sync driver's topic settings."""
        d = parse_driver(paths.SNIPPETS / "aws-cvo/CVO-6-driver-sync.yaml")
        outcome = self.rf1_outcome = performance.acks_all_on(self.t, self.tb,
                                                             d.topic_properties, replicas=1)
        settings = ", ".join(f"{k}={v}" for k, v in d.topic_properties.items())
        self.rec.table("FSX-6", "The CVO-6 sync driver's topic settings at replication factor 1",
                       ["Topic", "Producer", "Outcome"],
                       [[f"1 replica, {settings}", "acks=all", outcome]],
                       note=("Kafka 4.1.1 takes the write: its brokers compare the in-sync "
                             "replicas with the smaller of min.insync.replicas and the replica "
                             "count. Earlier brokers compared them with the configured value and "
                             "refused acks=all writes to such a topic, so on the TR's Kafka 3.2.3 "
                             "the CVO-6 drivers could not have run at replication factor 1 as "
                             "printed. The guide's RF 1 drivers set min.insync.replicas=1, which "
                             "means the same on every version.") if outcome == "delivered" else
                       "The broker refuses the write, so the guide's RF 1 drivers set "
                       "min.insync.replicas=1.")

    def benchmark(self, rfs: list[int], drivers: list[str], repeats: int,
                  scale: dict | None) -> None:
        """Both drivers at each replication factor, ``repeats`` times; the copies of the
        data on the volumes measured after each run."""
        tb = self.tb
        self.rfs, self.drivers, self.repeats = list(rfs), list(drivers), repeats
        for i in range(1, repeats + 1):
            for rf in rfs:
                for kind in drivers:
                    run = omb.run(self.t, tb.client, f"RF {rf}, {kind} driver, run {i}",
                                  performance.COMMAND[kind],
                                  tb.files(WORKLOAD, kind, DRIVER[(rf, kind)]), scale,
                                  needs=self.started)
                    self.runs.setdefault((rf, kind), []).append(run)
                    if run.planned:
                        continue
                    run.copies = performance.copies(tb.log_dirs())
                    omb.delete_test_topics(self.t, tb.client, tb.bootstrap)
                    s = run.summary()
                    print(f"{run.name}: {s['total_mean']:.1f} MB/s producer+consumer on "
                          f"average, peak {s['total_peak']:.1f} MB/s; {run.copies:.1f} copies "
                          "of the data on the volumes")
                    if i == 1:
                        self.rec.console("FSX-6", f"RF {rf}, {kind} driver: the TR's command "
                                         "and OMB's log (excerpt, run 1)", run.command.command,
                                         omb.excerpt(run.command.stdout), host=tb.client,
                                         show=False)

    def results(self) -> None:
        done = {k: [r for r in v if not r.planned] for k, v in self.runs.items()}
        if not (done and all(done.values())):
            return
        rfs, drivers = self.rfs, self.drivers
        self.rec.load("FSX-6", "OMB publish rate asked and achieved, per run",
                      [r.load() for v in done.values() for r in v])
        for rf in rfs:
            first = [done[(rf, k)][0] for k in drivers]
            ref = [(f"TR-4947, RF {rf} {k}: ~{TR[(rf, k)][0]} MBps sustained", TR[(rf, k)][0])
                   for k in drivers]
            self.rec.chart("FSX-6", f"RF {rf}: producer + consumer MiB/s over run 1, TR-4947 "
                           "dashed (log scale)", omb.throughput_chart(first, reference=ref))
            self.rec.chart("FSX-6", f"Replication factor {rf}: publish latency per driver "
                           "(run 1)", omb.latency_chart(first))
        tot = {k: spread(r.summary()["total_mean"] for r in v) for k, v in done.items()}
        peak = {k: spread(r.summary()["total_peak"] for r in v) for k, v in done.items()}
        copies = {k: spread(r.copies for r in v) for k, v in done.items()}
        rows = [[rf, kind, f"~{TR[(rf, kind)][0]} / ~{TR[(rf, kind)][1]}",
                 tot[(rf, kind)].fmt(1), peak[(rf, kind)].fmt(1), copies[(rf, kind)].fmt(1)]
                for rf in rfs for kind in drivers]
        self.rec.table("FSX-6", "TR-4947's published throughput and the lab's figures (median, "
                       "min-max and number of runs)",
                       ["Replication factor", "Driver",
                        "TR-4947: sustained / peak MBps (FSx, 4 GBps)", "Lab: mean MiB/s",
                        "Lab: peak MiB/s", "Lab: copies of the data on the volumes"], rows,
                       note="Totals are producer plus consumer throughput; each lab run's mean "
                            "and peak are over OMB's benchmark phase. The copies column is "
                            "measured after each run with kafka-log-dirs (replica bytes relative "
                            "to the largest replica of each partition): with replication factor "
                            "3 the volumes take every produced byte three times, the TR's "
                            "explanation for RF 3 reaching about a third of RF 1. Lab figures "
                            "come from one machine with 2 cores and FUSE mounts of local disk, "
                            "not from FSx for ONTAP.")
        if set(rfs) >= {1, 3}:
            ratio = []
            for kind in drivers:
                one, three = tot[(1, kind)], tot[(3, kind)]
                ratio.append([kind, f"{TR[(3, kind)][0] / TR[(1, kind)][0]:.2f}",
                              f"{three.median / one.median:.2f}",
                              "ranges overlap" if one.overlaps(three, 1) else
                              ("RF 3 lower" if three.high < one.low else "RF 3 higher")])
            self.rec.table("FSX-6", "Replication factor 3 divided by replication factor 1 "
                           "(sustained totals, medians)",
                           ["Driver", "TR-4947", "Lab", "Lab: can the runs tell them apart?"],
                           ratio, note=f"The lab's ratio is of the medians of {self.repeats} "
                                       "runs each; the verdict compares the runs' ranges.")
            self.rec.chart("FSX-6", "Total MiB/s per driver at replication factor 1 and 3 "
                           "(median, min-max)",
                           {"type": "bar", "x_label": "OMB driver",
                            "y_label": "producer + consumer MiB/s (lab)",
                            "series": [series(f"RF {rf}", list(drivers),
                                              [tot[(rf, k)] for k in drivers]) for rf in rfs]})

    def verdicts(self) -> None:
        done = {k: [r for r in v if not r.planned] for k, v in self.runs.items()}
        for (rf, kind), claim in (((1, "sync"), "fsx.rf1-sync"),
                                  ((1, "throughput"), "fsx.rf1-throughput"),
                                  ((3, "sync"), "fsx.rf3-sync"),
                                  ((3, "throughput"), "fsx.rf3-throughput")):
            runs = done.get((rf, kind))
            if not runs:
                self.rec.verdict("FSX-6", claim, "not-measured", evidence=self.rec.evidence(),
                                 tr=f"~{TR[(rf, kind)][0]} MBps sustained", lab=None,
                                 why="This run did not include it.",
                                 action="Run FSX-6 with both replication factors.")
                continue
            omb.throughput_verdict(
                self.rec, "FSX-6", claim,
                f"~{TR[(rf, kind)][0]} MBps sustained, ~{TR[(rf, kind)][1]} MBps peak",
                spread(r.summary()["total_mean"] for r in runs).as_dict("MiB/s", 1),
                omb.held([r.load() for r in runs]),
                f"Replication factor {rf}, {kind} driver, {len(runs)} lab runs.")
        if done.get((1, "throughput")) and done.get((3, "throughput")):
            one = spread(r.summary()["total_mean"] for r in done[(1, "throughput")])
            three = spread(r.summary()["total_mean"] for r in done[(3, "throughput")])
            omb.throughput_verdict(
                self.rec, "FSX-6", "fsx.rf-ratio", "RF 3 reaches about a third of RF 1",
                ratio(three, one, "x (RF 3 / RF 1, throughput driver)"),
                omb.held([r.load() for v in done.values() for r in v]),
                f"The lab's RF 3 / RF 1 is {three.median / one.median:.2f} with the volumes "
                f"taking {spread(r.copies for r in done[(3, 'throughput')]).median:.1f} copies "
                "of the data at RF 3.")
        outcome = getattr(self, "rf1_outcome", None)
        if outcome and outcome != "planned":
            # Kafka's own broker accepted or refused acks=all: real Kafka decided.
            ev = self.rec.evidence(real=["kafka", "kafka-clients"], also=["nfs-layer"])
            self.rec.verdict("FSX-6", "guide.fsx-rf1-min-isr",
                             agrees(ev) if outcome == "delivered" else "differs", evidence=ev,
                             tr="the CVO drivers (min.insync.replicas=2) at replication factor 1",
                             lab=f"acks=all to a one-replica topic: {outcome}",
                             why="Kafka 4.1 compares the in-sync replicas with the smaller of "
                                 "min.insync.replicas and the replica count; earlier releases "
                                 "refused such writes.",
                             action="Set min.insync.replicas=1 on RF 1 topics explicitly, as the "
                                    "guide's RF 1 drivers do.")
