"""The benchmark cluster of the performance chapters (CVO-7, FSX-6, AFF-5/6) on a target.

Three brokers and one OMB client, set up the way the TR describes: NFS mounts on every broker
(from /etc/fstab with ``mount -a``, or the TR's ``mount`` command), the TR's
``server.properties`` applied to each broker's own file (its identity kept: ``node.id``,
listeners, controllers) with its own ``log.dirs``, Kafka started, OMB on the client.

Each layout is a deployment of its own, as the TR's were: the notebook declares the cluster
(``metadata.tr4947.provision``), the runner provisions it before the first step, and
``deploy()`` asks for a fresh copy of it for each later layout (the lab builds one; a real
target is the cluster its inventory describes, which the operator deploys per layout).
"""
from __future__ import annotations

import json

from .. import broker_config, paths
from ..targets import fstab as fs
from ..targets.files import BACKUP_SUFFIX
from ..measure.mounts import nfs_mounts
from . import omb


#: The TR's OMB command per driver, and the names its driver files are placed under.
COMMAND = {"sync": "aws-cvo/CVO-7-benchmark-sync.sh",
           "throughput": "aws-cvo/CVO-7-benchmark-throughput.sh"}
DRIVER_NAME = {"sync": "driver-kafka/kafka-sync.yaml",
               "throughput": "driver-kafka/kafka-throughput.yaml"}
WORKLOAD_NAME = "workloads/1-topic-100-partitions-1kb.yaml"


def snippet(name: str) -> str:
    return (paths.SNIPPETS / name).read_text()


class Testbed:
    """The benchmark cluster (a KafkaCluster of the target) and its OMB client."""

    def __init__(self, t, cluster: str = "nfs", client: str | None = None):
        self.t = t
        self.kafka = t.cluster(cluster)
        self.client = client or t.hosts("clients")[0].name
        self.brokers = [h.name for h in self.kafka.brokers]
        self.controllers = [h.name for h in self.kafka.controllers]
        self._fstab_added: dict[str, bool] = {}
        self.mounted: list = []             # the last mount()'s Results (for needs=)
        self._used = False                  # whether a layout has used the cluster yet

    @property
    def bootstrap(self) -> str:
        return self.kafka.bootstrap()

    def config_path(self, host: str) -> str:
        h = self.t.host(host)
        return f"{h.get('kafka_home', '/opt/kafka')}/config/server.properties"

    def files(self, workload: str, kind: str, driver: str) -> dict[str, str]:
        """OMB's files for a run: the workload snippet, and the ``kind`` driver snippet
        pointed at this cluster, under the names the TR's command uses."""
        return {WORKLOAD_NAME: snippet(workload),
                DRIVER_NAME[kind]: omb.with_bootstrap(snippet(driver), self.bootstrap)}

    def benchmark(self, name: str, kind: str, workload: str, driver: str, scale: dict | None,
                  needs=None):
        """One OMB run with the TR's command for ``kind``; the topics go afterwards."""
        run = omb.run(self.t, self.client, name, COMMAND[kind],
                      self.files(workload, kind, driver), scale, needs=needs)
        if not run.planned:
            omb.delete_test_topics(self.t, self.client, self.bootstrap)
        return run

    # --- deployment ---------------------------------------------------------------------------
    def deploy(self, run) -> str:
        """The cluster for a layout, as the notebook declares it (Kafka installed, nothing
        mounted): for the first, the one the run was provisioned with; for each later one, a
        fresh copy (``run``: the ChapterRun)."""
        self._fstab_added.clear()
        if not self._used:
            self._used = True
            return run.provisioned or "the cluster the run was provisioned with"
        return run.provision()

    def mount(self, *snippets: str, fstab: str | None = None, servers=None,
              replace: dict | None = None, needs=None, **variables) -> dict[str, dict]:
        """On every broker: add the lines of the ``fstab`` snippet to /etc/fstab (with
        ``servers``: this target's NFS addresses), then run the mount snippets (``replace``:
        the lab values they show -> this target's). Returns {host: {mount point: source}} from
        the last snippet's ``df``/``mount`` output."""
        out = {}
        self.mounted = []
        for host in self.brokers:
            added = None
            if fstab:
                if self._fstab_added.get(host):    # the previous layout's lines out again
                    self.t.run(f"mv {fs.FSTAB}{BACKUP_SUFFIX} {fs.FSTAB}", host, check=True)
                added = self.t.add_fstab_lines(fstab, host, servers=servers, check=True,
                                               needs=needs)
                self._fstab_added[host] = bool(fs.added(added)) or \
                    self._fstab_added.get(host, False)
            r = None
            for s in snippets:
                r = self.t.run_snippet(s, host, check=True, needs=added or needs,
                                       replace=replace, **variables)
            if r is not None:
                self.mounted.append(r)
            out[host] = nfs_mounts(r.stdout if r is not None and not r.planned else "")
        return out

    def configure(self, base: str, log_dirs=None, extra: str | None = None,
                  why: str = "") -> list[tuple[str, str]]:
        """Broker 1's file ``base`` turned into each broker's (``log_dirs(n)``: broker n's
        ``log.dirs``; None keeps base's), with ``extra`` properties on top (a tuning snippet),
        applied to each broker's own server.properties. Returns (host, the properties)."""
        rows = []
        for n, host in enumerate(self.brokers, 1):
            h = self.t.host(host)
            text = broker_config.for_broker(base, n, h.kafka_address,
                                            log_dirs=log_dirs(n) if log_dirs else None)
            if extra:
                text = broker_config.merge_file(text, extra, why)
            self.t.apply_properties(None, host, self.config_path(host), text=text, check=True)
            rows.append((host, text))
        return rows

    def start(self, heap: str | None = None):
        return self.kafka.start(heap=heap)

    # --- what the brokers report -----------------------------------------------------------
    def effective(self, host: str, keys: list[str]) -> dict[str, str]:
        """Values a running broker logged in its KafkaConfig dump (what it really uses)."""
        pattern = "^\\s+(" + "|".join(k.replace(".", "\\.") for k in keys) + ") = "
        r = self.kafka.logs(host, pattern, lines=len(keys))
        vals = {}
        for line in r.stdout.splitlines():
            k, _, v = line.strip().partition(" = ")
            vals[k] = v
        return vals

    def thread_counts(self) -> dict[str, int]:
        """JVM threads of each broker (what a larger thread pool costs), read on its host."""
        out = {}
        for host in self.brokers:
            r = self.t.run("ls /proc/$(pgrep -f 'kafka\\.Kafka' | head -n 1)/task | wc -l", host,
                           read_only=True)
            if r.ok and r.stdout.strip().isdigit():
                out[host] = int(r.stdout.strip())
        return out

    def log_dirs(self) -> list[dict]:
        """kafka-log-dirs --describe: per broker and log dir, the benchmark topics' replicas."""
        r = self.t.run(f"bin/kafka-log-dirs.sh --bootstrap-server {self.bootstrap} --describe",
                       self.client, read_only=True, check=True)
        data = json.loads(next(line for line in r.stdout.splitlines() if line.startswith("{")))
        return [{"broker": b["broker"], "logDir": d["logDir"],
                 "partitions": [p for p in d["partitions"] if p["partition"].startswith("test-topic")]}
                for b in sorted(data["brokers"], key=lambda b: b["broker"])
                for d in sorted(b["logDirs"], key=lambda d: d["logDir"])]


def copies(log_dirs: list[dict]) -> float:
    """Average number of copies of each partition's data on the volumes (replicas x size
    relative to the largest replica): about the replication factor once followers caught up."""
    by_part: dict[str, list[int]] = {}
    for d in log_dirs:
        for p in d["partitions"]:
            by_part.setdefault(p["partition"], []).append(p["size"])
    ratios = [sum(s) / max(s) for s in by_part.values() if max(s) > 0]
    return sum(ratios) / len(ratios) if ratios else 0.0


def acks_all_on(t, tb: Testbed, topic_properties: dict[str, str], replicas: int = 1) -> str:
    """What a producer with acks=all gets from a topic with ``replicas`` replicas and the
    driver's topic settings (FSX-6: the CVO-6 drivers ask min.insync.replicas=2): one record
    sent with Kafka's console producer on the client. Returns "delivered" or Kafka's error."""
    topic = f"test-topic-rf{replicas}-check"
    configs = " ".join(f"--config {k}={v}" for k, v in topic_properties.items())
    r = t.run(f"bin/kafka-topics.sh --bootstrap-server {tb.bootstrap} --create --topic {topic} "
              f"--partitions 1 --replication-factor {replicas} {configs} > /dev/null && "
              f"echo probe | bin/kafka-console-producer.sh --bootstrap-server {tb.bootstrap} "
              f"--topic {topic} --producer-property acks=all --producer-property "
              "delivery.timeout.ms=15000 --producer-property request.timeout.ms=10000 2>&1; "
              f"bin/kafka-topics.sh --bootstrap-server {tb.bootstrap} --delete --topic {topic}",
              tb.client, timeout=120)
    if r.planned:
        return "planned"
    import re
    m = re.search(r"(NOT_ENOUGH_REPLICAS\w*|NotEnoughReplicas\w*)", r.output)
    return m.group(1) if m else ("delivered" if r.ok else f"failed: {r.output[-200:]}")
