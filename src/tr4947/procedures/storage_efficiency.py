"""EFF-1, EFF-2: data written with producer compression off, and what ONTAP saves on it.

The brokers of one cluster share one volume (as the TR's did); its inline compression and
deduplication are switched on (EFF-1), OMB writes with the driver that switches producer
compression off, and ONTAP reports the aggregate's efficiency and the volume's logical and
physical space (EFF-2). To measure more than once, the test topic is deleted (and its files
with it) and the data written again.
"""
from __future__ import annotations

from .. import paths
from ..measure import efficiency
from ..measure.spread import spread
from ..omb import parse_workload
from ..wait import until
from . import omb
from .context import ChapterRun
from .record import HELD, agrees

SNIP = "storage-efficiency/"
WORKLOAD_FILE = "workloads/1-topic-100-partitions-1kb-random.yaml"
DRIVER_FILE = "driver-kafka/kafka-no-compression.yaml"
#: The TR's figures (EFF-2), as published.
TR = {"aggregate": "1.70:1", "volume": "1.49:1 (recomputed from 420.3 GB / 281.7 GB)",
      "saved": "33%", "space": "420.3 GB / 281.7 GB", "by": "138 GB / 0 B"}


class StorageEfficiency:
    def __init__(self, run: ChapterRun, cluster: str, volume: str):
        self.run, self.t, self.rec = run, run.target, run.rec
        self.cluster, self.volume = cluster, volume
        self.ontap = self.t.inventory.ontap().name
        self.client = self.t.hosts("clients")[0].name
        brokers = self.t.cluster(cluster).brokers
        self.data_dirs = {h.name: str(h.get("kafka_log_dirs")).split(",")[0] for h in brokers}
        print(f"{len(brokers)} brokers on one volume ({volume}); ONTAP host {self.ontap}")

    def enable_efficiency(self) -> None:
        """EFF-1: inline compression and deduplication on the Kafka volume."""
        r = self.t.run_snippet(SNIP + "EFF-1-volume-efficiency.ontap", self.ontap, check=True)
        self.rec.show("EFF-1", "Inline efficiency on the Kafka volume", r, prompt="::>")

    def files(self) -> dict[str, str]:
        driver = (paths.SNIPPETS / SNIP / "EFF-1-driver-no-compression.yaml").read_text()
        return {WORKLOAD_FILE: (paths.SNIPPETS / SNIP / "EFF-1-workload.yaml").read_text(),
                DRIVER_FILE: omb.with_bootstrap(driver, self.t.cluster(self.cluster).bootstrap())}

    def calibrate(self, start: float, floor: float, step: float, latency_ms: float,
                  margin: float, duration_s: float, rate_scale: float | None = None) -> None:
        """The publish rate this target holds for EFF-1's workload: from ``start`` msg/s down
        by ``step``; the chapter then writes at ``margin`` x that rate (self.rate_scale, a
        fraction of the workload's producerRate). ``rate_scale`` given: that, no
        calibration."""
        rate = parse_workload(paths.SNIPPETS / SNIP / "EFF-1-workload.yaml").producerRate
        self.rate_scale = rate_scale if rate_scale is not None else floor / rate
        if rate_scale is not None:
            print(f"writing at {rate * rate_scale:,.0f} msg/s (given, not calibrated)")
            return

        def run_at(r):
            run = omb.run(self.t, self.client, f"{self.cluster} at {r:,.0f} msg/s",
                          SNIP + "EFF-1-benchmark.sh", self.files(),
                          {"rate": r / rate, "duration_s": duration_s, "warmup_s": 0},
                          timeout=1800)
            if not run.planned:
                self.clear()
            return [run]
        cal = omb.calibrate(run_at, start, floor, step, latency_ms)
        if cal is None:
            return
        chosen = margin * (cal.held_rate or floor)
        cal.table(self.rec, "EFF-1", "Calibration: the publish rate this lab holds for EFF-1's "
                  "workload",
                  note=(f"Held at {cal.held_rate:,.0f} msg/s (achieved >= 95 % with an average "
                        f"publish latency <= {latency_ms:.0f} ms); the data is written at "
                        f"{margin:.0%} of it, {chosen:,.0f} msg/s." if cal.held_rate else
                        f"Nothing held down to {floor:,.0f} msg/s: the runs below are marked "
                        "and yield no verdict."))
        self.rate_scale = chosen / rate

    def produce_and_measure(self, produce_gb: float, scale: float, repeats: int) -> list[dict]:
        """EFF-1 then EFF-2, ``repeats`` times: write ``produce_gb`` x ``scale`` at the
        calibrated rate (the topic deleted before each run), read the savings."""
        rate = parse_workload(paths.SNIPPETS / SNIP / "EFF-1-workload.yaml").producerRate
        rate_scale = self.rate_scale
        target = rate * rate_scale
        # Long enough to write produce_gb x scale at the scaled rate (1 KiB messages).
        duration = max(10, round(produce_gb * 1e9 * scale / (target * 1024)))
        print(f"writing {produce_gb * scale * 1000:,.0f} MB at {target:,.0f} msg/s: "
              f"{duration} s per run")
        lab_scale = {"rate": rate_scale, "duration_s": duration, "warmup_s": 0}
        measured, loads = [], []
        for i in range(repeats):
            self.clear()
            run = omb.run(self.t, self.client, f"run {i + 1}", SNIP + "EFF-1-benchmark.sh",
                          self.files(), lab_scale, timeout=4 * 3600)
            if i == 0:
                self.rec.console("EFF-1", "OMB with producer compression off: milestones",
                                 run.command.command, omb.excerpt(run.command.stdout)
                                 if not run.planned else run.command.stdout,
                                 host=self.client, show=False)
            m = self.read_savings(record=i == repeats - 1, needs=run.command)
            if m is None:
                break
            loads.append(run.load(target))
            measured.append(m)
            print(f"run {i + 1}: {duration} s; aggregate {m['aggregate'].ratio:.2f}:1; volume "
                  f"logical {m['volume']['logical-used']}, physical "
                  f"{m['volume']['physical-used']} ({m['logical'] / m['physical']:.2f}:1)")
        if loads:
            self.rec.load("EFF-1", f"OMB publish rate asked and achieved ({duration} s per run)",
                          loads)
        self.held = bool(loads) and all(r["achieved"] >= HELD * r["target"] for r in loads)
        return measured

    def read_savings(self, record: bool, needs=None) -> dict | None:
        """EFF-2 as ONTAP reports it (read-only): the aggregate's ratio and the volume's space."""
        agg_out = self.t.run_snippet(SNIP + "EFF-2-aggr-efficiency.ontap", self.ontap,
                                     read_only=True, check=True, needs=needs)
        vol_out = self.t.run_snippet(SNIP + "EFF-2-volume-space.ontap", self.ontap,
                                     read_only=True, check=True, needs=needs)
        if record:
            self.rec.show("EFF-2", "storage aggregate show-efficiency", agg_out, prompt="::>")
            self.rec.show("EFF-2", "Logical and physical space of the Kafka volume", vol_out,
                          prompt="::>")
        if agg_out.planned:
            return None
        agg = efficiency.parse_aggregate_efficiency(agg_out.output)[0]
        vol = next(v for v in efficiency.parse_fields_table(vol_out.output)
                   if v["volume"] == self.volume)
        return {"aggregate": agg, "volume": vol,
                "logical": efficiency.size(vol["logical-used"]),
                "physical": efficiency.size(vol["physical-used"]),
                "dedupe": efficiency.size(vol["dedupe-space-saved"]),
                "compression": efficiency.size(vol["compression-space-saved"])}

    def clear(self) -> None:
        """Delete the runs' topic and wait until every broker has removed its files (the
        volume then holds none of an earlier run's data)."""
        if self.t.confirm is False and not self.run.is_lab:
            return                               # a dry run: nothing was written
        omb.delete_test_topics(self.t, self.client, self.t.cluster(self.cluster).bootstrap())
        for host, d in self.data_dirs.items():
            until(lambda host=host, d=d: not self.t.run(
                f"ls -d {d}/test-topic-* 2>/dev/null || true", host,
                read_only=True).stdout.strip(),
                180, 1, f"{host} to delete the test topic's files")

    def compare_with_tr(self, measured: list[dict]) -> None:
        """EFF-2: the lab's ratios (median, min-max) beside the TR's."""
        if not measured:
            return
        ratio = spread(m["aggregate"].ratio for m in measured)
        vol_ratio = spread(m["logical"] / m["physical"] for m in measured)
        saved = spread(100 * (1 - m["physical"] / m["logical"]) for m in measured)
        last = measured[-1]["volume"]
        rows = [["Total storage efficiency ratio (aggregate)", TR["aggregate"],
                 f"{ratio.fmt(2)} :1"],
                ["Logical / physical (volume)", TR["volume"], f"{vol_ratio.fmt(2)} :1"],
                ["Space saved (volume)", TR["saved"], f"{saved.fmt(0)} %"],
                ["Logical / physical space used, last run", TR["space"],
                 f"{last['logical-used']} / {last['physical-used']}"],
                ["Saved by deduplication / by compression, last run", TR["by"],
                 f"{last['dedupe-space-saved']} / {last['compression-space-saved']}"]]
        self.rec.table("EFF-2", f"Lab beside TR-4947 (median, min-max over {len(measured)} runs)",
                       ["", "TR-4947", f"Lab (volume {self.volume})"], rows,
                       note="The lab volume holds every replica of every partition (replication "
                            "factor 3 on brokers that share one volume), so the blocks the replicas "
                            "hold in common deduplicate (each replica rolls its own segments, so "
                            "they are not byte-identical files); compression keeps only the 8 KiB groups that fit "
                            f"one 4 KiB block, and saved {last['compression-space-saved']} of "
                            f"{last['logical-used']} in the last run. The ratio depends entirely "
                            "on this data.")

    def check_tr_figures(self) -> None:
        checks = efficiency.check_tr_figures()
        self.rec.table("EFF-2", "The TR's figures checked against each other",
                       ["Check", "Published", "Recomputed", "Agrees"],
                       [[c.what, c.published, c.recomputed, "yes" if c.agrees else "no"]
                        for c in checks])

    def verdicts(self, measured: list[dict]) -> None:
        """The TR's efficiency claims beside what the stand-in measured on this data."""
        if not measured:
            return
        ratio = spread(m["aggregate"].ratio for m in measured)
        saved = spread(100 * (1 - m["physical"] / m["logical"]) for m in measured)
        held = getattr(self, "held", False)
        scale = ("the lab's own OMB data (half-random payloads, replication factor 3 on one "
                 "shared volume), measured by the ONTAP stand-in's model, not by ONTAP")
        # Kafka wrote the data for real (OMB's workload); what ONTAP would save on it is the
        # ONTAP stand-in's block-hash model of deduplication and compression.
        ev = self.rec.evidence(real=["kafka", "omb"], model=["ontap-efficiency"],
                               also=["nfs-layer"])
        scaled = "not-reproducible-at-lab-scale" if held else "not-measured"
        self.rec.verdict("EFF-2", "eff.ratio", scaled, evidence=ev,
                         tr=TR["aggregate"], lab=ratio.as_dict(":1", 2), load_held=held,
                         why=f"A ratio is a property of the data: this is {scale}.",
                         action="Measure the ratio on your own topics: EFF-2's two commands "
                                "read it from ONTAP after a representative day of data.")
        self.rec.verdict("EFF-2", "eff.savings", scaled, evidence=ev,
                         tr=TR["saved"], lab=saved.as_dict("%", 1), load_held=held,
                         why=f"Savings depend on the data: this is {scale}.",
                         action="Size capacity from your own measured savings, not from 33 %.")
        dedupe = all(m["dedupe"] > 0 for m in measured)
        compressed = any(m["compression"] > 0 for m in measured)
        share = 100 * measured[-1]["compression"] / measured[-1]["logical"]
        mech = agrees(ev) if dedupe and not compressed else "differs"
        if not held:
            mech = "not-measured"
        self.rec.verdict("EFF-2", "eff.mechanisms", mech, evidence=ev, tr=TR["by"],
                         lab=f"deduplicated in {sum(m['dedupe'] > 0 for m in measured)} of "
                             f"{len(measured)} runs, compressed in "
                             f"{sum(m['compression'] > 0 for m in measured)}",
                         load_held=held,
                         why=("As on the TR's volume line, the savings come from deduplication "
                              "(blocks the replicas hold in common) and none from compression." if not compressed
                              else "Deduplication of blocks the replicas hold in common saved space, as on the "
                              "TR's volume line; unlike it, compression saved "
                              f"{share:.1f} % of the logical data in the last run.")
                             if held else "The runs did not hold their publish rate: no verdict.",
                         action="Keep inline deduplication on Kafka volumes shared by "
                                "replicas; producer-side compression is the bigger lever.")
        self.rec.verdict("EFF-2", "guide.eff-replica-dedupe",
                         (agrees(ev) if dedupe else "differs") if held else "not-measured",
                         evidence=ev,
                         tr="-", lab=f"deduplicated bytes > 0 in "
                                     f"{sum(m['dedupe'] > 0 for m in measured)} of "
                                     f"{len(measured)} runs",
                         load_held=held,
                         why="Every replica of a partition lands on the one shared volume, and "
                             "identical 4 KiB blocks are stored once.",
                         action="Expect deduplication only where replicas share a volume.")
        self.rec.verdict("EFF-2", "guide.eff-8k-groups",
                         (agrees(ev) if not compressed else "differs") if held
                         else "not-measured", evidence=ev,
                         tr="-", lab=f"compressed bytes > 0 in "
                                     f"{sum(m['compression'] > 0 for m in measured)} of "
                                     f"{len(measured)} runs",
                         load_held=held,
                         why=("Half-random 8 KiB groups do not compress into one 4 KiB block, "
                              "so inline adaptive compression keeps none of them."
                              if not compressed else
                              f"Compression saved {share:.1f} % of the logical data in the last "
                              "run: some 8 KiB groups on the volume fit one 4 KiB block, so the "
                              "data as Kafka wrote it is not all half-random groups."),
                         action="Do not count on inline compression for compressed or random "
                                "payloads; compress in the producer.")

    @staticmethod
    def consistency(measured: list[dict]) -> None:
        """What nbval compares: the stand-in's ratio is its own logical / physical, and the
        data did shrink, by both mechanisms."""
        for i, m in enumerate(measured, 1):
            agg = m["aggregate"]
            print(f"run {i}: aggregate ratio matches its logical/physical: "
                  f"{abs(agg.ratio - agg.computed_ratio) <= 0.01 * agg.ratio}; saved: "
                  f"{m['physical'] < m['logical']}; by deduplication: {m['dedupe'] > 0}; "
                  f"by compression: {m['compression'] > 0}")
