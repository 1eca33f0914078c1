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
from ..omb.properties import parse_properties
from . import omb

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
    """One OMB run at ``rate`` against ``cluster`` with every broker's CPU sampled; returns
    the window, each broker's CPU % (load less idle), the FUSE daemons', and CPU-seconds per
    GB written."""
    started = start_samplers(t, cluster)
    run = omb.run(t, client, f"{cluster.upper()}, {rate} msg/s", SNIP + "CPU-2-benchmark.sh",
                  place(t, client, cluster, rate), scale, timeout=1800, needs=started)
    samples = stop_samplers(t, cluster, needs=run.command)
    if run.planned:
        return {"run": run, "planned": True}
    w = run.window()
    brokers = {h: cpu.usage_between(s, w.start, w.end) for h, s in samples.items()}
    fuse = {h: cpu.usage_between(s, w.start, w.end, "fuse") for h, s in samples.items()}
    written_mb = w.publish_mbs * w.seconds
    return {
        "run": run, "window": w, "rate": rate, "cluster": cluster,
        "broker_pct": sum(u.percent_of_core - baseline.get(h, 0.0)
                          for h, u in brokers.items()) / len(brokers),
        "broker_raw_pct": sum(u.percent_of_core for u in brokers.values()) / len(brokers),
        "fuse_pct": sum(u.percent_of_core for u in fuse.values()) / len(fuse),
        "cpu_s_per_gb": cpu.per_gb(sum(u.cpu_seconds for u in brokers.values()), written_mb),
        "fuse_s_per_gb": cpu.per_gb(sum(u.cpu_seconds for u in fuse.values()), written_mb),
    }


# --- the chapter ---------------------------------------------------------------------------------------
class CpuUtilization:
    """CPU-1 and CPU-2 on the das and nfs clusters, as the cpu-utilization notebook runs them."""

    def __init__(self, run, scale: float, duration_s: float, warmup_s: float,
                 stats_period_s: float, processes: int):
        self.run, self.t, self.rec = run, run.target, run.rec
        self.scale = scale
        self.duration_s = duration_s
        self.processes = processes
        self.clients = clients_for(self.t)
        self.lab_scale = {"rate": scale, "duration_s": duration_s, "warmup_s": warmup_s,
                          "stats_period_s": stats_period_s, "producer_processes": processes,
                          "consumer_processes": processes}
        self.runs: list[dict] = []
        self.baseline: dict[str, dict[str, float]] = {}
        print("clusters: " + "; ".join(f"{c} {self.t.cluster(c).bootstrap()}" for c in CLUSTERS))

    def settings(self) -> None:
        """CPU-1: the TR's settings in effect on every broker."""
        print(f"all TR settings in effect: {check_settings(self.t, self.rec)}")

    def measure(self, rates: list[int], repeats: int, idle_s: float) -> None:
        """CPU-2: a warm-up run, the idle baselines, then ``repeats`` runs per rate on both
        clusters."""
        both = together(self.clients)
        print("DAS and NFS loaded " + (
            "at the same time, from " + " and ".join(f"{self.clients[c]} ({c})" for c in CLUSTERS)
            if both else f"one after the other, from {self.clients['das']}"))
        warm = measure_both(self.t, self.clients, rates[-1], {**self.lab_scale, "duration_s": 10},
                            {})
        print("warm-up run: " + ("planned" if any(w.get("planned") for w in warm.values())
                                 else "done on both (not measured)"))
        self.baseline = idle_both(self.t, idle_s, self.clients)
        for c, b in self.baseline.items():
            print(f"{c} brokers idle: " + (", ".join(f"{h} {v:.1f}%" for h, v in b.items())
                                           or "planned"))
        for i in range(repeats):
            for rate in rates:
                for c, m in measure_both(self.t, self.clients, rate, self.lab_scale,
                                         self.baseline).items():
                    if m.get("planned"):
                        continue
                    self.runs.append(m)
                    print(f"run {i + 1}: {rate:>6} msg/s (lab {rate * self.scale:.0f}) {c}: "
                          f"published {m['window'].publish_rate:.0f} msg/s over "
                          f"{m['window'].seconds:.0f} s; broker {m['broker_pct']:.1f}% of a "
                          f"core above idle, FUSE {m['fuse_pct']:.1f}%; "
                          f"{m['cpu_s_per_gb']:.1f} CPU-s per GB")
        if self.runs:
            self.rec.load("CPU-2", "OMB publish rate asked and achieved, per run",
                          [{**m["run"].load(m["rate"] * self.scale),
                            "name": f"{m['cluster'].upper()} at {m['rate']:,} msg/s (TR)"}
                           for m in self.runs])

    def results(self, rates: list[int]) -> None:
        from ..measure.spread import series, spread
        if not self.runs:
            return
        runs, scale = self.runs, self.scale
        by = {(r, c): [m for m in runs if m["rate"] == r and m["cluster"] == c]
              for r in rates for c in CLUSTERS}
        cpu_ = {k: spread(m["broker_pct"] for m in v) for k, v in by.items()}
        per_gb = {k: spread(m["cpu_s_per_gb"] for m in v) for k, v in by.items()}
        fuse = {r: spread(m["fuse_pct"] for m in by[(r, "nfs")]) for r in rates}
        rows = [[f"{r:,}", f"{r * scale:,.0f}", c.upper(),
                 spread(m["window"].publish_rate for m in by[(r, c)]).fmt(0),
                 cpu_[(r, c)].fmt(1), per_gb[(r, c)].fmt(1),
                 fuse[r].fmt(1) if c == "nfs" else "-"] for r in rates for c in CLUSTERS]
        both = together(self.clients)
        p = self.processes
        self.rec.table("CPU-2", "Lab: broker CPU per producer rate (per broker, % of one core "
                       "above idle)",
                       ["TR rate (msg/s)", "Lab rate (msg/s)", "Cluster",
                        "Produced, measured (msg/s)", "Broker CPU (%)",
                        "Broker CPU-s per GB written", "FUSE NFS client on the broker host (%)"],
                       rows,
                       note=f"Median, min-max and number of runs; each run's window is OMB's "
                            f"benchmark phase ({self.duration_s} s). CPU is the broker process's "
                            "user and system time from /proc, less the same broker's idle CPU ("
                            + "; ".join(f"{c.upper()} {sum(b.values()) / len(b):.1f}%"
                                        for c, b in self.baseline.items())
                            + "), averaged over the three brokers. CPU-seconds per GB: all three "
                            "brokers' CPU over the window divided by the GB the producers wrote "
                            "in it. " + ("Both clusters ran each rate at the same time, each "
                                         "from its own OMB client." if both else
                                         "The clusters ran one after the other.")
                            + f" Each client ran its producers in {p} and its consumers in {p} "
                            f"OMB worker process{'es' if p > 1 else ''}.",
                       key=["Lab rate (msg/s)", "Cluster", "Broker CPU (%)"])
        self.rec.table("CPU-2", "Lowest to highest rate: the lab beside TR-4947",
                       ["", "TR-4947 (host CPU, %)", "Lab (broker process, % of a core)"],
                       [["DAS, lowest -> highest rate", "31 -> 70",
                         f"{cpu_[(rates[0], 'das')].median:.1f} -> "
                         f"{cpu_[(rates[-1], 'das')].median:.1f}"],
                        ["NFS, lowest -> highest rate", "26 -> 38",
                         f"{cpu_[(rates[0], 'nfs')].median:.1f} -> "
                         f"{cpu_[(rates[-1], 'nfs')].median:.1f}"]],
                       note="TR-4947's figures are host CPU of i3en.2xlarge brokers (8 vCPUs) "
                            "from Grafana at 10k to 100k msg/s; the lab's are per-process CPU on "
                            f"a shared 2-core machine at {scale:g} times those rates.")
        said = []
        for r in rates:
            d, n = cpu_[(r, "das")], cpu_[(r, "nfs")]
            if d.overlaps(n, 1):
                said.append(f"at {r * scale:,.0f} msg/s the DAS and NFS brokers' ranges overlap "
                            f"(DAS {d.fmt(1)}, NFS {n.fmt(1)}): these runs cannot tell them apart")
            else:
                lower = "NFS" if n.median < d.median else "DAS"
                said.append(f"at {r * scale:,.0f} msg/s the {lower} brokers used less CPU "
                            f"(DAS {d.fmt(1)}, NFS {n.fmt(1)}), and the ranges do not overlap")
        lo, hi = rates[0], rates[-1]
        for c in CLUSTERS:
            a, b = cpu_[(lo, c)], cpu_[(hi, c)]
            trend = ("did not change beyond its range" if a.overlaps(b, 1) else
                     "rose" if a.high < b.low else "fell")
            said.append(f"from {lo * scale:,.0f} to {hi * scale:,.0f} msg/s the {c.upper()} "
                        f"brokers' CPU {trend} ({a.median:.1f}% to {b.median:.1f}%) while their "
                        f"CPU-seconds per GB went from {per_gb[(lo, c)].median:,.0f} to "
                        f"{per_gb[(hi, c)].median:,.0f}")
        self.rec.text("CPU-2", "What the lab shows", "On the lab, " + "; ".join(said) + ". "
                      f"The NFS brokers' FUSE client used {fuse[rates[-1]].fmt(1)}% of a core at "
                      "the highest rate: work that a kernel NFS client does inside the broker "
                      "host's kernel, counted here beside the broker.")
        self.rec.chart("CPU-2", "Broker CPU versus producer rate (median and min-max)", {
            "type": "line", "x_label": f"TR producer rate, msg/s (the lab runs x {scale})",
            "y_label": "% of one core above idle, per broker",
            "series": [series("DAS broker", rates, [cpu_[(r, "das")] for r in rates]),
                       series("NFS broker", rates, [cpu_[(r, "nfs")] for r in rates]),
                       series("NFS: FUSE client on the broker host", rates,
                              [fuse[r] for r in rates])]})
        first = runs[0]
        self.rec.console("CPU-2", f"OMB on the client ({first['cluster'].upper()} cluster, "
                         f"{first['rate']:,} msg/s run): milestones",
                         first["run"].command.command, omb.excerpt(first["run"].command.stdout),
                         host=self.clients[first["cluster"]], show=False)

    def invariants(self) -> None:
        """Checked by nbval: every run measured the brokers over a complete benchmark window."""
        ok = [m for m in self.runs if m["window"].periods >= 1]
        print(f"{len(ok)} of {len(self.runs)} runs measured over a complete window")
