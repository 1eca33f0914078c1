"""CPU-1, CPU-2: broker CPU per producer rate, on direct-attached disks and on NFS.

Two clusters of three brokers with the TR's broker settings (CPU-1, checked from what each
broker logged at start-up) get the TR's OMB workload at a given producer rate (CPU-2). Each
broker host samples its own broker's CPU time (the sampler snippet), and the CPU a broker
used is taken over exactly OMB's benchmark window, as a share of one core, less what the same
broker uses idle (measured the same way with no load), and per GB the producers wrote.
"""
from __future__ import annotations

import re

from .. import paths
from ..measure import cpu, kafka_config
from ..javaprops import parse_properties
from . import omb
from .record import agrees

SNIP = "cpu-utilization/"
CLUSTERS = ("das", "nfs")
WORKLOAD_FILE = "workloads/1-topic-100-partitions-1kb.yaml"
DRIVER_FILE = "driver-kafka/kafka-group-all.yaml"
#: KRaft, listener and log-dir lines differ per broker by design; the rest are the TR's settings.
PER_BROKER = {"process.roles", "node.id", "listeners", "advertised.listeners",
              "controller.quorum.voters", "controller.listener.names",
              "listener.security.protocol.map", "log.dirs", "broker.id", "zookeeper.connect"}


def check_settings(t, rb) -> bool:
    """CPU-1: the TR's broker settings as each broker reports them (read-only)."""
    tr = parse_properties((paths.SNIPPETS / SNIP / "CPU-1-broker.properties").read_text())
    tr = {k: v for k, v in tr.items() if k not in PER_BROKER}
    checks = {}
    for c in CLUSTERS:
        for h in t.cluster(c).brokers:
            log = t.run("sed -n '/KafkaConfig values/,/^\\[/p' logs/server.log", h.name,
                        read_only=True, check=True).stdout
            checks[h.name] = {s.key: s for s in kafka_config.compare(tr, log)}
    first = {c: t.cluster(c).brokers[0].name for c in CLUSTERS}
    rows = [[k, v] + [checks[first[c]][k].effective or "(not a known setting)" for c in CLUSTERS]
            for k, v in tr.items()]
    applied = all(s.applied for per in checks.values() for s in per.values())
    rb.table("CPU-1", "The TR's broker settings as the brokers report them (broker 1 of each "
             "cluster)", ["Setting", "TR-4947", "DAS broker 1", "NFS broker 1"], rows,
             note=(f"Read from each broker's start-up log. All {len(tr)} settings are in effect "
                   f"on all {len(checks)} brokers.") if applied else
             "Some settings are not in effect: see the table.")
    return applied


def place(t, client: str, cluster: str, rate: int) -> list:
    """The TR's workload with ``rate`` as its producerRate (the TR changed it between runs)
    and OMB's stock group-all driver pointed at ``cluster``."""
    workload = (paths.SNIPPETS / SNIP / "CPU-2-workload.yaml").read_text()
    driver = (paths.SNIPPETS / SNIP / "CPU-2-driver-group-all.yaml").read_text()
    return {WORKLOAD_FILE: re.sub(r"(?m)^producerRate: \d+", f"producerRate: {rate}", workload),
            DRIVER_FILE: omb.with_bootstrap(driver, t.cluster(cluster).bootstrap())}


def message_bytes() -> int:
    """The workload's messageSize (the TR's 1 KiB), in bytes."""
    text = (paths.SNIPPETS / SNIP / "CPU-2-workload.yaml").read_text()
    return int(re.search(r"(?m)^messageSize: (\d+)", text).group(1))


def start_samplers(t, cluster: str, interval: float = 1.0):
    from ..targets import ResultSet
    return ResultSet(t.run_snippet(SNIP + "CPU-2-sample-broker-cpu.sh", h.name, check=True,
                                   env={"INTERVAL": str(interval)})
                     for h in t.cluster(cluster).brokers)


def stop_samplers(t, cluster: str, needs=None) -> dict[str, list[cpu.Sample]]:
    out = {}
    for h in t.cluster(cluster).brokers:
        t.run("kill $(cat /tmp/cpu-sampler.pid) 2>/dev/null; true", h.name, needs=needs)
        r = t.read_file(h.name, "/tmp/cpu-samples.tsv", needs=needs)
        out[h.name] = [] if r.planned else cpu.parse_samples(r.stdout)
    return out


def idle(t, cluster: str, seconds: float) -> dict[str, float]:
    """Each broker's CPU (% of a core) with no load: the baseline."""
    import time
    started = start_samplers(t, cluster)
    if started.planned:
        stop_samplers(t, cluster, needs=started)
        return {}
    t0 = time.time()
    time.sleep(seconds)
    t1 = time.time()
    samples = stop_samplers(t, cluster)
    return {h: cpu.usage_between(s, t0, t1).percent_of_core for h, s in samples.items()}


def clients_for(t) -> dict[str, str]:
    """Each cluster's OMB client host: its own where the target has two clients (the lab
    does), else the one client for both."""
    names = [h.name for h in t.hosts("clients")]
    return {c: names[i % len(names)] for i, c in enumerate(CLUSTERS)}


def together(clients: dict[str, str]) -> bool:
    """Whether the two clusters can be loaded at the same time (one client each)."""
    return len(set(clients.values())) == len(CLUSTERS)


def measure_both(t, clients: dict[str, str], rate: int, scale: dict | None,
                 baselines: dict[str, dict[str, float]]) -> dict[str, dict]:
    """CPU-2 at one rate on both clusters: at the same time when each has its own client, so
    that whatever else the machine does weighs on both alike; else one after the other.
    Returns cluster -> measure()'s figures."""
    def one(c):
        return measure(t, clients[c], c, rate, scale, baselines.get(c, {}))
    if not together(clients):
        return {c: one(c) for c in CLUSTERS}
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(len(CLUSTERS)) as ex:
        return dict(zip(CLUSTERS, ex.map(one, CLUSTERS)))


def idle_both(t, seconds: float, clients: dict[str, str]) -> dict[str, dict[str, float]]:
    """The idle baselines, both clusters sampled over the same seconds when they are loaded
    together (each cluster's idle includes the other's being idle too)."""
    if not together(clients):
        return {c: idle(t, c, seconds) for c in CLUSTERS}
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(len(CLUSTERS)) as ex:
        return dict(zip(CLUSTERS, ex.map(lambda c: idle(t, c, seconds), CLUSTERS)))


def measure(t, client: str, cluster: str, rate: int, scale: dict | None,
            baseline: dict[str, float]) -> dict:
    """One OMB run at ``rate`` (the TR's; the lab scale's ``rate`` multiplies it) against
    ``cluster`` with every broker's CPU sampled. Returns the run, its window, its load (asked
    and achieved), each broker's CPU % above its idle baseline, the FUSE daemons', and both
    as CPU-seconds per MB written."""
    started = start_samplers(t, cluster)
    run = omb.run(t, client, f"{cluster.upper()}, {rate} msg/s", SNIP + "CPU-2-benchmark.sh",
                  place(t, client, cluster, rate), scale, timeout=1800, needs=started)
    samples = stop_samplers(t, cluster, needs=run.command)
    if run.planned:
        return {"run": run, "planned": True}
    w = run.window()
    brokers = {h: cpu.usage_between(s, w.start, w.end) for h, s in samples.items()}
    fuse = {h: cpu.usage_between(s, w.start, w.end, "fuse") for h, s in samples.items()}
    # Decimal MB from the message rate, not from OMB's "MB/s" (MiB/s, printed with one
    # decimal: at a few dozen 1 KiB messages a second it reads 0.0, and nothing per MB).
    written_mb = w.publish_rate * message_bytes() * w.seconds / 1e6
    above = sum(u.cpu_seconds - baseline.get(h, 0.0) / 100 * u.wall_seconds
                for h, u in brokers.items())
    fuse_s = sum(u.cpu_seconds for u in fuse.values())
    return {
        "run": run, "window": w, "rate": rate, "cluster": cluster, "load": run.load(),
        "broker_pct": sum(u.percent_of_core - baseline.get(h, 0.0)
                          for h, u in brokers.items()) / len(brokers),
        "broker_raw_pct": sum(u.percent_of_core for u in brokers.values()) / len(brokers),
        "fuse_pct": sum(u.percent_of_core for u in fuse.values()) / len(fuse),
        # CPU-seconds per MB written, all brokers together: above idle, and the NFS client's.
        "broker_s_per_mb": above / written_mb if written_mb > 0 else float("nan"),
        "fuse_s_per_mb": fuse_s / written_mb if written_mb > 0 else float("nan"),
        "written_mb": written_mb,
    }


def benchmark_both(t, clients: dict[str, str], rate: float, scale: dict) -> dict[str, object]:
    """OMB alone (no CPU sampling) at ``rate`` msg/s on both clusters: calibration runs."""
    def one(c):
        return omb.run(t, clients[c], f"{c.upper()}, calibration at {rate:.0f} msg/s",
                       SNIP + "CPU-2-benchmark.sh", place(t, clients[c], c, 1),
                       {**scale, "rate": rate}, timeout=900)
    if not together(clients):
        return {c: one(c) for c in CLUSTERS}
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(len(CLUSTERS)) as ex:
        return dict(zip(CLUSTERS, ex.map(one, CLUSTERS)))


# --- the chapter ---------------------------------------------------------------------------------------
class CpuUtilization:
    """CPU-1 and CPU-2 on the das and nfs clusters, as the cpu-utilization notebook runs them:
    the TR's settings checked, the idle baselines, a calibration that finds the rate this
    target holds for the TR's workload, then the TR's rates scaled by one factor below it,
    each run held or marked."""

    def __init__(self, run, duration_s: float, warmup_s: float, stats_period_s: float,
                 processes: int):
        self.run, self.t, self.rec = run, run.target, run.rec
        self.duration_s = duration_s
        self.processes = processes
        self.clients = clients_for(self.t)
        self.lab_scale = {"duration_s": duration_s, "warmup_s": warmup_s,
                          "stats_period_s": stats_period_s, "producer_processes": processes,
                          "consumer_processes": processes}
        self.runs: list[dict] = []
        self.baseline: dict[str, dict[str, float]] = {}
        self.factor: float | None = None
        print("clusters: " + "; ".join(f"{c} {self.t.cluster(c).bootstrap()}"
                                       for c in CLUSTERS))

    def settings(self) -> None:
        """CPU-1: the TR's settings in effect on every broker."""
        print(f"all TR settings in effect: {check_settings(self.t, self.rec)}")

    def idle(self, idle_s: float) -> None:
        """A warm-up run (not measured: JIT, page cache, topic metadata), then each broker's
        idle CPU, the baseline its loaded CPU is compared against."""
        both = together(self.clients)
        print("DAS and NFS loaded " + (
            "at the same time, from " + " and ".join(f"{self.clients[c]} ({c})" for c in CLUSTERS)
            if both else f"one after the other, from {self.clients['das']}"))
        warm = benchmark_both(self.t, self.clients, 100, {**self.lab_scale, "duration_s": 10})
        print("warm-up run: " + ("planned" if any(w.planned for w in warm.values())
                                 else "done on both (not measured)"))
        self.baseline = idle_both(self.t, idle_s, self.clients)
        self.rec.measured(idle_s, "CPU-2 idle baselines")
        for c, b in self.baseline.items():
            print(f"{c} brokers idle: " + (", ".join(f"{h} {v:.1f}%" for h, v in b.items())
                                           or "planned"))

    def calibrate(self, top_rate: int, start: float, floor: float, step: float,
                  latency_ms: float, margin: float, duration_s: float,
                  scale: float | None = None) -> None:
        """The rate this target holds for the TR's workload on both clusters at once: from
        ``start`` x ``top_rate`` down by ``step`` until both clusters achieve >= 95 % of it
        with an average publish latency <= ``latency_ms``. The factor the TR's rates are then
        run at (self.factor): ``margin`` x the held rate / ``top_rate`` (the highest TR rate
        runs a margin below what held); ``floor`` when nothing held down to ``floor`` x
        ``top_rate`` (the runs are then marked). ``scale`` given: that factor, no calibration."""
        if scale is not None:                 # given: no calibration
            self.factor = scale
            print(f"the TR's rates run at {scale:g} x (given, not calibrated)")
            return
        cal = omb.calibrate(
            lambda rate: list(benchmark_both(self.t, self.clients, rate,
                                             {**self.lab_scale, "duration_s": duration_s})
                              .values()),
            top_rate * start, top_rate * floor, step, latency_ms)
        if cal is None:                        # planned only
            self.factor = floor
            return
        factor = margin * cal.held_rate / top_rate if cal.held_rate else None
        cal.table(self.rec, "CPU-2", "Calibration: the rate this lab holds for the TR's workload",
                  note=(f"Held at {cal.held_rate:,.0f} msg/s on both clusters at once (achieved "
                        f">= 95 % with an average publish latency <= {latency_ms:.0f} ms). The "
                        f"TR's rates run at {factor:.4g} x (the highest, {top_rate:,} msg/s, at "
                        f"{margin:.0%} of the held rate), keeping the ratios between them."
                        if factor else f"Nothing held down to {top_rate * floor:,.0f} msg/s: "
                        "the runs below are marked and yield no verdict."))
        self.factor = factor if factor else floor

    def measure(self, rates: list[int], repeats: int) -> None:
        """CPU-2: ``repeats`` runs per TR rate (x the calibrated factor) on both clusters."""
        scale = {**self.lab_scale, "rate": self.factor}
        for i in range(repeats):
            for rate in rates:
                for c, m in measure_both(self.t, self.clients, rate, scale,
                                         self.baseline).items():
                    if m.get("planned"):
                        continue
                    self.runs.append(m)
                    ld = m["load"]
                    print(f"run {i + 1}: {rate:>7,} msg/s (lab {ld['target']:,.0f}) {c}: "
                          f"achieved {ld['achieved']:,.0f} msg/s; broker "
                          f"{m['broker_pct']:.1f}% of a core above idle, FUSE "
                          f"{m['fuse_pct']:.1f}%")
        if self.runs:
            self.rec.load("CPU-2", "OMB publish rate asked and achieved, per run",
                          [{**m["load"], "name": f"{m['cluster'].upper()} at "
                                                  f"{m['rate']:,} msg/s (TR), run {k + 1}"}
                           for k, m in enumerate(self.runs)])

    def _by(self, rates):
        from ..measure.spread import spread
        by = {(r, c): [m for m in self.runs if m["rate"] == r and m["cluster"] == c]
              for r in rates for c in CLUSTERS}
        return by, spread

    def results(self, rates: list[int]) -> None:
        from ..measure.spread import series
        from .record import HELD
        if not self.runs:
            return
        by, spread = self._by(rates)
        f = self.factor
        cpu_ = {k: spread(m["broker_pct"] for m in v) for k, v in by.items()}
        per_mb = {k: spread(1000 * m["broker_s_per_mb"] for m in v) for k, v in by.items()}
        fuse = {r: spread(m["fuse_pct"] for m in by[(r, "nfs")]) for r in rates}
        fuse_mb = {r: spread(1000 * m["fuse_s_per_mb"] for m in by[(r, "nfs")]) for r in rates}
        achieved = {k: spread(m["load"]["achieved"] for m in v) for k, v in by.items()}
        held = {k: sum(m["load"]["achieved"] >= HELD * m["load"]["target"] for m in v)
                for k, v in by.items()}
        rows = [[f"{r:,}", f"{r * f:,.0f}", c.upper(), achieved[(r, c)].fmt(0),
                 f"{held[(r, c)]} of {len(by[(r, c)])}", cpu_[(r, c)].fmt(1),
                 per_mb[(r, c)].fmt(1),
                 f"{fuse[r].fmt(1)} / {fuse_mb[r].fmt(1)}" if c == "nfs" else "-"]
                for r in rates for c in CLUSTERS]
        both = together(self.clients)
        p = self.processes
        self.rec.table("CPU-2", "Lab: broker CPU per producer rate (per broker, % of one core "
                       "above idle)",
                       ["TR rate (msg/s)", "Lab rate (msg/s)", "Cluster",
                        "Achieved (msg/s)", "Runs that held", "Broker CPU above idle (%)",
                        "Broker CPU-ms above idle per MB", "NFS client (FUSE): % / CPU-ms per MB"],
                       rows,
                       note=f"Median, min-max and number of runs; each run's window is OMB's "
                            f"benchmark phase ({self.duration_s} s). The TR's rates run at "
                            f"{f:.4g} x, below the rate the calibration found held. CPU is "
                            "the broker process's user and system time from /proc less the "
                            "same broker's idle CPU ("
                            + "; ".join(f"{c.upper()} {sum(b.values()) / len(b):.1f}%"
                                        for c, b in self.baseline.items())
                            + "), averaged over the three brokers; per MB: all three brokers' "
                            "CPU above idle over the window divided by the MB the producers "
                            "wrote. The NFS client's share is the FUSE daemon on each NFS "
                            "broker host, the work a kernel NFS client does in the broker "
                            "host's kernel. " + ("Both clusters ran each rate at the same time, "
                                                 "each from its own OMB client." if both else
                                                 "The clusters ran one after the other.")
                            + f" Each client ran its producers in {p} and its consumers in {p} "
                            f"OMB worker process{'es' if p > 1 else ''}.",
                       key=["Lab rate (msg/s)", "Cluster", "Runs that held",
                            "Broker CPU above idle (%)"])
        self.rec.table("CPU-2", "Lowest to highest rate: the lab beside TR-4947",
                       ["", "TR-4947 (host CPU, %)",
                        "Lab (broker process above idle, % of a core)"],
                       [["DAS, lowest -> highest rate", "31 -> 70",
                         f"{cpu_[(rates[0], 'das')].median:.1f} -> "
                         f"{cpu_[(rates[-1], 'das')].median:.1f}"],
                        ["NFS, lowest -> highest rate", "26 -> 38",
                         f"{cpu_[(rates[0], 'nfs')].median:.1f} -> "
                         f"{cpu_[(rates[-1], 'nfs')].median:.1f} (FUSE client "
                         f"{fuse[rates[0]].median:.1f} -> {fuse[rates[-1]].median:.1f})"]],
                       note="TR-4947's figures are host CPU of i3en.2xlarge brokers (8 vCPUs) "
                            "from Grafana at 10k to 100k msg/s; the lab's are per-process CPU "
                            f"on a shared 2-core machine at {f:.4g} times those rates.")
        said = []
        for r in rates:
            d, n = cpu_[(r, "das")], cpu_[(r, "nfs")]
            if d.overlaps(n, 1):
                said.append(f"at {r * f:,.0f} msg/s the DAS and NFS brokers' ranges overlap "
                            f"(DAS {d.fmt(1)}, NFS {n.fmt(1)})")
            else:
                lower = "NFS" if n.median < d.median else "DAS"
                said.append(f"at {r * f:,.0f} msg/s the {lower} brokers used less CPU "
                            f"(DAS {d.fmt(1)}, NFS {n.fmt(1)}; ranges apart)")
        hi = rates[-1]
        self.rec.text("CPU-2", "What the lab shows", (
            "On the lab, " + "; ".join(said) + ". Per MB written, the DAS brokers used "
            f"{per_mb[(hi, 'das')].fmt(1)} CPU-ms above idle at the highest rate and the NFS "
            f"brokers {per_mb[(hi, 'nfs')].fmt(1)}, plus {fuse_mb[hi].fmt(1)} in the NFS "
            "client. What the lab can show: how each broker's own CPU grows with the rate "
            "when the rate is held, and the NFS client's cost beside it. What it cannot: the "
            "TR's host CPU at 10,000 to 100,000 msg/s on 8-vCPU brokers, where page-cache "
            "writeback and interrupts on a real disk are part of the DAS figure; the lab's DAS "
            "and NFS data land on the same local disk."))
        self.rec.chart("CPU-2", "Broker CPU above idle versus the achieved producer rate "
                       "(median and min-max)", {
                           "type": "line", "x_label": "achieved producer rate, msg/s (lab)",
                           "y_label": "% of one core above idle, per broker",
                           "series": [
                               series("DAS broker", [round(achieved[(r, "das")].median)
                                                     for r in rates],
                                      [cpu_[(r, "das")] for r in rates]),
                               series("NFS broker", [round(achieved[(r, "nfs")].median)
                                                     for r in rates],
                                      [cpu_[(r, "nfs")] for r in rates]),
                               series("NFS client (FUSE) on the broker host",
                                      [round(achieved[(r, "nfs")].median) for r in rates],
                                      [fuse[r] for r in rates])]})
        first = self.runs[0]
        self.rec.console("CPU-2", f"OMB on the client ({first['cluster'].upper()} cluster, "
                         f"{first['rate']:,} msg/s run): milestones",
                         first["run"].command.command, omb.excerpt(first["run"].command.stdout),
                         host=self.clients[first["cluster"]], show=False)
        self.cpu, self.fuse, self.held = cpu_, fuse, held

    def verdicts(self, rates: list[int]) -> None:
        if not self.runs:
            return
        from ..measure.spread import ratio
        from .record import HELD
        by, spread = self._by(rates)
        lo, hi = rates[0], rates[-1]
        all_held = all(m["load"]["achieved"] >= HELD * m["load"]["target"] for m in self.runs)
        # The TR's host CPU includes the kernel's NFS client: the NFS broker's figure is the
        # broker plus its host's FUSE daemon, the lab's stand-in for that client.
        host = {k: spread(m["broker_pct"] + (m["fuse_pct"] if k[1] == "nfs" else 0.0)
                          for m in v) for k, v in by.items()}
        # Kafka, OMB's load and Linux's process accounting are real; the NFS side's client
        # CPU is the lab's NFS client layer (a FUSE daemon), not the kernel's NFS client.
        ev = self.rec.evidence(real=["kafka", "omb", "linux"], model=["nfs-layer"])
        for r, claim, tr in ((lo, "cpu.low-rate", "DAS 31 %, NFS 26 % at 10,000 msg/s"),
                             (hi, "cpu.high-rate", "DAS 70 %, NFS 38 % at 100,000 msg/s")):
            self.rec.verdict(
                "CPU-2", claim, "not-reproducible-at-lab-scale" if all_held else "not-measured",
                tr=tr, evidence=ev,
                lab={"das": host[(r, "das")].as_dict("% of a core", 1),
                     "nfs": host[(r, "nfs")].as_dict("% of a core (broker + NFS client)", 1)},
                load_held=all_held,
                why=f"The lab runs {r * self.factor:,.0f} msg/s on a shared 2-core machine; "
                    "its CPU is per broker process above idle, the TR's is host CPU of 8-vCPU "
                    "brokers.",
                action="Measure broker host CPU on your own brokers at your rates.")
        rise = {c: (host[(hi, c)].median - host[(lo, c)].median) for c in CLUSTERS}
        apart = not host[(hi, "das")].overlaps(host[(hi, "nfs")], 1)
        if not all_held:
            verdict, why = "not-measured", "Not every run held its rate: no verdict."
        elif not apart:
            verdict = "not-reproducible-at-lab-scale"
            why = ("At the lab's highest rate the DAS and NFS ranges (NFS with its client) "
                   "overlap: these runs cannot tell the two apart.")
        elif rise["nfs"] < rise["das"]:
            verdict, why = agrees(ev), "NFS (with its client) rose less than DAS, ranges apart."
        else:
            verdict, why = "differs", "NFS (with its client) rose as much as DAS or more."
        self.rec.verdict("CPU-2", "cpu.rise", verdict, evidence=ev,
                         tr="DAS +39 points, NFS +12 points from 10k to 100k msg/s",
                         lab={"das": round(rise["das"], 1), "nfs": round(rise["nfs"], 1),
                              "unit": "points of a core, lowest to highest lab rate"},
                         load_held=all_held, why=why,
                         action="Compare DAS and NFS broker CPU on your hardware before "
                                "counting on a CPU saving.")
        d, n = host[(hi, "das")], host[(hi, "nfs")]
        if not all_held:
            verdict, why = "not-measured", "Not every run held its rate: no verdict."
        elif not apart:
            verdict, why = "not-reproducible-at-lab-scale", ("The ranges overlap at the "
                                                             "highest rate.")
        elif n.median <= 0.75 * d.median:
            verdict, why = agrees(ev), f"NFS {n.fmt(1)} against DAS {d.fmt(1)}, ranges apart."
        else:
            verdict, why = "differs", f"NFS {n.fmt(1)} against DAS {d.fmt(1)}, ranges apart."
        self.rec.verdict("CPU-2", "cpu.one-third", verdict, evidence=ev,
                         tr="almost one-third less CPU on NFS",
                         lab=ratio(n, d, "x (NFS with its client / DAS, highest lab rate)"),
                         load_held=all_held, why=why,
                         action="Treat the TR's CPU saving as specific to its hardware until "
                                "measured on yours.")

    def invariants(self) -> None:
        """Checked by nbval: every run measured the brokers over a complete benchmark window."""
        ok = [m for m in self.runs if m["window"].periods >= 1]
        print(f"{len(ok)} of {len(self.runs)} runs measured over a complete window")
