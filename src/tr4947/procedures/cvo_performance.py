"""CVO-6..CVO-8: the TR's OMB workload and drivers on the two Cloud Volumes ONTAP layouts,
and the CVO-versus-instance-storage comparison on the das and nfs clusters.

CVO-6 shows the workload and the two driver files as the runner reads them. CVO-7 builds each
layout as the TR did (its volumes, six NFS mounts per broker, six log dirs per broker, Kafka
started), audits it and runs both drivers. CVO-8 runs both drivers on a cluster with local
disks and one on NFS volumes, alternating, several times each.
"""
from __future__ import annotations

from .. import broker_config, paths
from ..measure.spread import ratio, series, spread
from ..omb import LabScale, parse_driver, parse_workload
from ..omb.driver import consumer_config, producer_config
from . import omb
from . import nfs_audit as pf
from .context import ChapterRun
from .performance import COMMAND, Testbed, snippet

WORKLOAD = "aws-cvo/CVO-6-workload.yaml"
DRIVER = {"sync": "aws-cvo/CVO-6-driver-sync.yaml",
          "throughput": "aws-cvo/CVO-6-driver-throughput.yaml"}
LAYOUT = {
    "ha": {"name": "HA pair", "volumes": "aws-cvo/CVO-1-volumes-ha.ontap",
           "fstab": "aws-cvo/CVO-3-nfs-mounts.fstab", "mount": "aws-cvo/CVO-3-mount.sh",
           "server": "aws-cvo/CVO-5-server-ha.properties",
           "log_dirs": {2: "aws-cvo/CVO-5-ha-broker2-log-dirs.properties",
                        3: "aws-cvo/CVO-5-ha-broker3-log-dirs.properties"}},
    "single": {"name": "single node", "volumes": "aws-cvo/CVO-7-single-node-volumes.ontap",
               "fstab": "aws-cvo/CVO-7-single-node-mounts.fstab",
               "mount": "aws-cvo/CVO-7-single-node-mount.sh",
               "server": "aws-cvo/CVO-5-server-single.properties",
               "log_dirs": {2: "aws-cvo/CVO-5-single-broker2-log-dirs.properties",
                            3: "aws-cvo/CVO-5-single-broker3-log-dirs.properties"}},
}
#: The TR's published totals, MBps: CVO-7 per layout and driver (and what kind of figure),
#: CVO-8's charts (the values survive only in the French edition's figure text;
#: docs/data/tr-published-figures.yaml, CVO-DAS.*.total).
TR = {("ha", "sync"): (1236, "sustained"), ("ha", "throughput"): (1412, "peak"),
      ("single", "sync"): (1962, "sustained"), ("single", "throughput"): (1660, "peak")}
TR_DAS = {"throughput": {"EC2 instance storage": 1340, "CVO HA pair": 1412,
                         "CVO single node": 1660},
          "sync": {"EC2 instance storage": 1263, "CVO HA pair": 1236, "CVO single node": 1962}}
CLUSTERS = ("das", "nfs")


class CvoPerformance:
    def __init__(self, run: ChapterRun, drivers: list[str], scale: dict | None,
                 broker_heap: str):
        self.run, self.t, self.rec = run, run.target, run.rec
        self.drivers, self.scale, self.heap = list(drivers), scale, broker_heap
        self.tb = Testbed(self.t)
        self.ontap = self.t.inventory.ontap().name
        self.values = self.t.lab_values()  # the lab's SVM and LIFs snippets show -> the target's
        self.results: dict[str, list] = {}
        self.compared: dict[tuple[str, str], list] = {}
        print(f"brokers {', '.join(self.tb.brokers)}; OMB client {self.tb.client}")

    # --- CVO-6 ----------------------------------------------------------------------------------
    def workload(self) -> None:
        """The TR's workload as OMB reads it, beside the lab run's settings."""
        w = parse_workload(paths.SNIPPETS / WORKLOAD)
        sc = self.scale or {}
        lab = LabScale.from_kwargs(**sc)
        run_w = dict(lab.apply(w).to_dict(), producerRate=int(w.producerRate * lab.rate))
        rows = [[f, w.to_dict()[f], run_w[f]] for f in (
            "topics", "partitionsPerTopic", "messageSize", "useRandomizedPayloads",
            "randomBytesRatio", "randomizedPayloadPoolSize", "subscriptionsPerTopic",
            "consumerPerSubscription", "producersPerTopic", "producerRate",
            "consumerBacklogSizeGB")]
        rows.append(["testDurationMinutes", w.testDurationMinutes,
                     f"{sc['duration_s']} s" if sc else w.testDurationMinutes])
        rows.append(["warmupDurationMinutes (not in the file, OMB's default)",
                     w.warmupDurationMinutes, f"{sc['warmup_s']} s" if sc else
                     w.warmupDurationMinutes])
        rows.append(["producers / consumers / partitions in total",
                     f"{w.total_producers} / {w.total_consumers} / "
                     f"{w.topics * w.partitionsPerTopic}",
                     f"{w.topics * run_w['producersPerTopic']} / "
                     f"{w.topics * w.subscriptionsPerTopic * run_w['consumerPerSubscription']} / "
                     f"{w.topics * run_w['partitionsPerTopic']}"])
        self.rec.table("CVO-6", "The TR's workload as OMB reads it, and the lab run's settings",
                       ["Workload setting", "TR file", "Lab run"], rows,
                       note="producerRate is a ceiling: the TR's 1,000,000 messages per second "
                            "of 32 KiB (about 31 GiB/s) is far above what its cluster carried, "
                            "and the lab's scaled rate is far above what the lab carries, so "
                            "both runs go as fast as the cluster accepts.")

    def drivers_table(self) -> None:
        """The two driver files as the runner reads them."""
        drv = {k: parse_driver(paths.SNIPPETS / f) for k, f in DRIVER.items()}
        rows = [["replicationFactor", drv["sync"].replicationFactor,
                 drv["throughput"].replicationFactor]]
        for where, get in [("topic", lambda d: d.topic_properties),
                           ("producer", lambda d: d.producer_properties),
                           ("consumer", lambda d: d.consumer_properties)]:
            for key in dict.fromkeys([*get(drv["sync"]), *get(drv["throughput"])]):
                if key != "bootstrap.servers":
                    rows.append([f"{where}: {key}", get(drv["sync"]).get(key, "-"),
                                 get(drv["throughput"]).get(key, "-")])
        notes = {k: list(dict.fromkeys(n.split(": ", 1)[1] for n in
                                       producer_config(d, "x:1").notes
                                       + consumer_config(d, "x:1").notes))
                 for k, d in drv.items()}
        self.rec.table("CVO-6", "The two drivers as the runner reads them (producers and "
                       "consumers get commonConfig too)",
                       ["Setting", "sync driver", "throughput driver"], rows,
                       note="Both files parse as written (after the YAML repairs listed on the "
                            "errata page). The runner drives librdkafka, so Java-only client "
                            "settings are named instead of being silently dropped: "
                            + ("; ".join(f"{k} driver: {n}" for k, ns in notes.items()
                                         for n in ns) or "none") + ".")

    # --- CVO-7 ----------------------------------------------------------------------------------
    def layouts(self, layouts: list[str]) -> None:
        """Each layout built fresh, audited, and both drivers run on it."""
        for layout in layouts:
            spec = LAYOUT[layout]
            tb = self.tb
            print(f"== {spec['name']}: {tb.deploy(self.run)}")
            vols = self.t.run_snippet(spec["volumes"], self.ontap, check=True,
                                      replace=self.values)
            mounts = tb.mount(spec["mount"], fstab=spec["fstab"], servers=self.values,
                              needs=vols)

            def log_dirs(n):
                f = spec["log_dirs"].get(n)
                return broker_config.keys(snippet(f))["log.dirs"] if f else None
            rows = []
            for host, text in tb.configure(snippet(spec["server"]), log_dirs):
                dirs = broker_config.keys(text)["log.dirs"].split(",")
                on_nfs = [d for d in dirs if any(d.startswith(m + "/") for m in mounts[host])]
                rows.append([host, len(dirs), len(on_nfs), len(mounts[host])])
            tb.start(self.heap)
            if not vols.planned and not all(d == n == m == 6 for _, d, n, m in rows):
                raise RuntimeError(f"every broker needs six log dirs on its six NFS mounts: {rows}")
            self.rec.table("CVO-7", f"{spec['name']}: each broker's log dirs on its NFS mounts",
                           ["Broker host", "log.dirs", "on NFS mounts",
                            "NFS mounts (nconnect=16)"], rows)
            audit, _ = pf.audit(self.t, hosts=tb.brokers, needs=vols)
            if not vols.planned:
                pf.record(self.rec, "CVO-7", f"{spec['name']}: preflight audit (PRE-1) of the "
                          "brokers as built", audit)
            self.results[layout] = []
            for kind in self.drivers:
                run = omb.run(self.t, tb.client, f"{spec['name']}, {kind} driver",
                              COMMAND[kind], tb.files(WORKLOAD, kind, DRIVER[kind]),
                              self.scale)
                self.results[layout].append(run)
                if run.planned:
                    continue
                s = run.summary()
                print(f"{run.name}: {s['total_mean']:.1f} MB/s producer+consumer on average, "
                      f"peak {s['total_peak']:.1f} MB/s")
                self.rec.console("CVO-7", f"{run.name}: the TR's command and OMB's log (excerpt)",
                                 run.command.command, omb.excerpt(run.command.stdout),
                                 host=tb.client, show=False)
            if not any(r.planned for r in self.results[layout]):
                self.rec.load("CVO-7", f"{spec['name']}: OMB publish rate asked and achieved",
                              [r.load() for r in self.results[layout]])
                dirs = tb.log_dirs()
                self.rec.table("CVO-7", f"{spec['name']}: where the last run's partitions went "
                               "(kafka-log-dirs)", ["Broker", "Log dir", "Partitions", "MiB"],
                               [[d["broker"], d["logDir"], len(d["partitions"]),
                                 f"{sum(p['size'] for p in d['partitions']) / 2**20:.0f}"]
                                for d in dirs], show=False)
                omb.delete_test_topics(self.t, tb.client, tb.bootstrap)

    def layout_results(self) -> None:
        """CVO-7's charts and table: each layout and driver beside the TR's figure."""
        rows = []
        for layout, runs in self.results.items():
            done = [r for r in runs if not r.planned]
            if not done:
                continue
            ref = [(f"TR-4947, {kind} driver: ~{TR[(layout, kind)][0]} MBps "
                    f"({TR[(layout, kind)][1]})", TR[(layout, kind)][0]) for kind in self.drivers]
            name = LAYOUT[layout]["name"]
            self.rec.chart("CVO-7", f"{name}: producer + consumer MiB/s, TR-4947 dashed (log "
                           "scale)", omb.throughput_chart(done, reference=ref))
            self.rec.chart("CVO-7", f"{name}: publish latency per driver",
                           omb.latency_chart(done))
            for r, kind in zip(runs, self.drivers):
                s = r.summary()
                tr, what = TR[(layout, kind)]
                rows.append([name, kind, f"~{tr} MBps ({what})", f"{s['total_mean']:.1f}",
                             f"{s['total_peak']:.1f}", f"{s['pub_p99_ms']:.0f}",
                             f"{s['e2e_p99_ms']:.0f}"])
        if rows:
            self.rec.table("CVO-7", "TR-4947's published throughput and the lab's figures (one "
                           "run each)",
                           ["Layout", "Driver", "TR-4947 (AWS, CVO)", "Lab: mean MiB/s",
                            "Lab: peak MiB/s", "Lab: publish p99 ms", "Lab: end-to-end p99 ms"],
                           rows,
                           note="Totals are producer plus consumer throughput, as the TR counts "
                                "them. Lab figures come from one run each on one machine with 2 "
                                "cores and FUSE mounts of local disk: they show that the TR's "
                                "workload and drivers run, not Cloud Volumes ONTAP's throughput, "
                                "and one run each cannot rank the layouts or drivers against "
                                "each other.")

    # --- CVO-8 ----------------------------------------------------------------------------------
    def compare(self, repeats: int, duration_s: float) -> None:
        """Both drivers on the das and nfs clusters, ``repeats`` times each, alternating the
        clusters so that a slower stretch of the machine hits both."""
        missing = [c for c in CLUSTERS if c not in self.t.inventory.kafka_clusters()]
        if missing:
            print(f"target {self.t.name}: no {' or '.join(missing)} cluster in its inventory; "
                  "CVO-8 needs both (skipped)")
            return
        print(self.run.provision("compare"))
        beds = {c: Testbed(self.t, c) for c in CLUSTERS}
        scale = dict(self.scale, duration_s=duration_s) if self.scale else None
        self.compare_duration = duration_s
        for i in range(1, repeats + 1):
            for kind in self.drivers:
                for c in (CLUSTERS if i % 2 else CLUSTERS[::-1]):
                    b = beds[c]
                    r = b.benchmark(f"{c.upper()}, {kind} driver, run {i}", kind, WORKLOAD,
                                    DRIVER[kind], scale)
                    self.compared.setdefault((c, kind), []).append(r)
                    if r.planned:
                        continue
                    s = r.summary()
                    print(f"{r.name}: {s['total_mean']:.1f} MiB/s producer+consumer on average "
                          f"(producer {s['publish_mean']:.1f}, consumer {s['consume_mean']:.1f})")

    def compare_results(self) -> None:
        done = {k: [r for r in v if not r.planned] for k, v in self.compared.items()}
        if not (done and all(done.values())):
            return
        self.rec.load("CVO-8", "OMB publish rate asked and achieved, per run",
                      [r.load() for v in done.values() for r in v])
        tot = {k: spread(r.summary()["total_mean"] for r in v) for k, v in done.items()}
        pub = {k: spread(r.summary()["publish_mean"] for r in v) for k, v in done.items()}
        con = {k: spread(r.summary()["consume_mean"] for r in v) for k, v in done.items()}
        rows = []
        for kind in self.drivers:
            d, n = tot[("das", kind)], tot[("nfs", kind)]
            tr = TR_DAS[kind]
            rows.append([kind, f"{tr['EC2 instance storage']} / {tr['CVO HA pair']} / "
                               f"{tr['CVO single node']}",
                         d.fmt(1), n.fmt(1), f"{n.median / d.median:.2f}",
                         "ranges overlap" if d.overlaps(n, 1) else
                         ("NFS higher" if n.low > d.high else "DAS higher")])
        self.rec.table("CVO-8", "Total throughput (producer plus consumer): TR-4947 and the "
                       "lab's DAS and NFS clusters",
                       ["Driver", "TR-4947, MBps: EC2 / CVO HA / CVO single node",
                        "Lab DAS, MiB/s", "Lab NFS, MiB/s", "Lab NFS / DAS (medians)",
                        "Lab: can the runs tell them apart?"], rows,
                       note=f"Lab figures: median, min-max and number of runs, each the mean "
                            f"over OMB's benchmark phase ({self.compare_duration} s after the "
                            "warm-up) at the lab scale of CVO-7. Both lab clusters ran on one "
                            "2-core machine, the NFS one through a FUSE client: the lab shows "
                            "that the comparison runs and how far its own runs spread, not how "
                            "EC2 disks and Cloud Volumes ONTAP compare.",
                       key=["Driver", "Lab NFS / DAS (medians)"])
        self.rec.table("CVO-8", "Lab: producer and consumer throughput per cluster and driver "
                       "(MiB/s)", ["Driver", "Cluster", "Producer", "Consumer", "Total"],
                       [[kind, c.upper(), pub[(c, kind)].fmt(1), con[(c, kind)].fmt(1),
                         tot[(c, kind)].fmt(1)] for kind in self.drivers for c in CLUSTERS],
                       show=False)
        self.rec.chart("CVO-8", "Total MiB/s per driver on the DAS and NFS clusters (median, "
                       "min-max)",
                       {"type": "bar", "x_label": "OMB driver",
                        "y_label": "producer + consumer MiB/s (lab)",
                        "series": [series(f"{c.upper()} cluster", list(self.drivers),
                                          [tot[(c, k)] for k in self.drivers])
                                   for c in CLUSTERS]})

    def verdicts(self) -> None:
        """CVO-7 and CVO-8's claims: the TR's AWS figures beside the lab's."""
        for layout, kind, claim, what in (
                ("ha", "sync", "cvo.ha-sync-throughput", "total_mean"),
                ("ha", "throughput", "cvo.ha-throughput-peak", "total_peak"),
                ("single", "sync", "cvo.sn-sync-throughput", "total_mean"),
                ("single", "throughput", "cvo.sn-throughput-peak", "total_peak")):
            runs = [r for r in self.results.get(layout, []) if not r.planned
                    and kind in r.name]
            if not runs:
                self.rec.verdict("CVO-7", claim, "not-measured", evidence=self.rec.evidence(),
                                 tr=f"~{TR[(layout, kind)][0]} MBps", lab=None,
                                 why="This run did not include that layout and driver.",
                                 action="Run CVO-7 with both layouts and drivers.")
                continue
            loads = [r.load() for r in runs]
            omb.throughput_verdict(
                self.rec, "CVO-7", claim, f"~{TR[(layout, kind)][0]} MBps "
                f"({TR[(layout, kind)][1]})",
                spread(r.summary()[what] for r in runs).as_dict("MiB/s", 1),
                omb.held(loads), f"One lab run of the {LAYOUT[layout]['name']} layout.")
        done = [r for rs in self.results.values() for r in rs if not r.planned]
        if done:
            omb.throughput_verdict(
                self.rec, "CVO-7", "cvo.drivers", "sync steady, throughput bursty",
                f"{len(done)} runs, one per layout and driver",
                omb.held([r.load() for r in done]),
                "One run per layout and driver cannot rank how steady the drivers are.")
        compared = {k: [r for r in v if not r.planned] for k, v in self.compared.items()}
        for kind in self.drivers:
            das, nfs = compared.get(("das", kind)), compared.get(("nfs", kind))
            for claim, layout in ((f"cvo.vs-das-ha-{'sync' if kind == 'sync' else 'throughput'}",
                                   "CVO HA pair"),
                                  (f"cvo.vs-das-sn-{'sync' if kind == 'sync' else 'throughput'}",
                                   "CVO single node")):
                if not (das and nfs):
                    self.rec.verdict("CVO-8", claim, "not-measured",
                                     evidence=self.rec.evidence(),
                                     tr=f"{layout} vs EC2 instance storage", lab=None,
                                     why="CVO-8 did not run (no das and nfs clusters).",
                                     action="Run CVO-8 on a target with both clusters.")
                    continue
                d = spread(r.summary()["total_mean"] for r in das)
                n = spread(r.summary()["total_mean"] for r in nfs)
                tr = TR_DAS[kind]
                omb.throughput_verdict(
                    self.rec, "CVO-8", claim,
                    f"{layout} {tr[layout]} MBps, EC2 instance storage "
                    f"{tr['EC2 instance storage']} MBps ({kind} driver)",
                    ratio(n, d, "x (lab NFS / DAS, medians)"),
                    omb.held([r.load() for r in das + nfs]),
                    f"Lab NFS {n.fmt(1)} and DAS {d.fmt(1)} MiB/s"
                    + (" (ranges overlap)." if d.overlaps(n, 1) else " (ranges apart)."))
