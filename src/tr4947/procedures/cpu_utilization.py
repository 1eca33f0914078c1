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
        for h in t.kafka_hosts(c):
            log = t.run("sed -n '/KafkaConfig values/,/^\\[/p' logs/server.log", h.name,
                        read_only=True, check=True).stdout
            checks[h.name] = {s.key: s for s in kafka_config.compare(tr, log)}
    first = {c: t.kafka_hosts(c)[0].name for c in CLUSTERS}
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
            DRIVER_FILE: omb.with_bootstrap(driver, t.bootstrap(cluster))}


def start_samplers(t, cluster: str, interval: float = 1.0):
    from ..targets import ResultSet
    return ResultSet(t.run_snippet(SNIP + "CPU-2-sample-broker-cpu.sh", h.name, check=True,
                                   env={"INTERVAL": str(interval)})
                     for h in t.kafka_hosts(cluster))


def stop_samplers(t, cluster: str, needs=None) -> dict[str, list[cpu.Sample]]:
    out = {}
    for h in t.kafka_hosts(cluster):
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
