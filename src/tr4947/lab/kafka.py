"""Apache Kafka on the lab's hosts: an installation at /opt/kafka and a configuration per node.

Kafka's jars come from Maven Central (lab/kafka/pom.xml, resolved by scripts/setup.sh), which
ships no ``bin/`` scripts: the lab writes its own ``bin/kafka-*.sh`` (and Confluent's names
without ``.sh``, which the TR also uses) that call the same Java classes as Kafka's scripts,
so the TR's commands run as printed. ``kafka-server-start.sh -daemon`` and
``kafka-server-stop.sh`` behave as Kafka's: the broker runs detached, logs to
``$LOG_DIR`` (``/opt/kafka/logs``), and stop signals every ``kafka.Kafka`` JVM of the host
(each lab host has its own pid namespace, so that is the host's own broker).

Each node's ``server.properties`` is generated from inventory variables: dedicated KRaft
controllers (``process.roles=controller``, the TR's ZooKeeper ensemble) and broker-only
nodes, so a standby can take over a broker's ``node.id`` and address without changing the
quorum. Paths are the host's own (``log.dirs=/demo/broker_demo_1``): no mapping.
"""
from __future__ import annotations

import base64
import hashlib
import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from .. import paths
from ..inventory import Host

KAFKA_HOME = "/opt/kafka"
TOOLS = {
    # wrapper name (as in Kafka's bin/)   -> main class
    "kafka-topics": "org.apache.kafka.tools.TopicCommand",
    "kafka-producer-perf-test": "org.apache.kafka.tools.ProducerPerformance",
    "kafka-consumer-perf-test": "org.apache.kafka.tools.ConsumerPerformance",
    "kafka-reassign-partitions": "org.apache.kafka.tools.reassign.ReassignPartitionsCommand",
    "kafka-console-consumer": "org.apache.kafka.tools.consumer.ConsoleConsumer",
    "kafka-console-producer": "org.apache.kafka.tools.ConsoleProducer",
    "kafka-consumer-groups": "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
    "kafka-log-dirs": "org.apache.kafka.tools.LogDirsCommand",
    "kafka-metadata-quorum": "org.apache.kafka.tools.MetadataQuorumCommand",
    "kafka-get-offsets": "org.apache.kafka.tools.GetOffsetShell",
    "kafka-broker-api-versions": "org.apache.kafka.tools.BrokerApiVersionsCommand",
    "kafka-storage": "kafka.tools.StorageTool",
}
SERVER_MAIN = "kafka.Kafka"

# Tools are short-lived: C1 only and SerialGC start ~2x faster. The load generator is not:
# it needs C2 to reach a meaningful rate (JIT warm-up dominates short runs).
TOOL_JVM = "-Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.awt.headless=true"
PERF_JVM = "-Xmx512m -XX:+UseSerialGC -Djava.awt.headless=true"


def java() -> str:
    home = os.environ.get("JAVA_HOME")
    return str(Path(home) / "bin" / "java") if home else "/usr/bin/java"


def java_cmd(main: str, args: list[str], jvm: str, log4j: Path | str) -> list[str]:
    """A Kafka class run as Kafka's kafka-run-class.sh runs it (for processes outside the
    lab's hosts, e.g. the OMB runner's own test broker)."""
    return [java(), *shlex.split(jvm), f"-Dlog4j2.configurationFile={log4j}",
            "-cp", f"{paths.kafka_libs()}/*", main, *args]


def cluster_id(cluster: str) -> str:
    """A stable KRaft cluster id per lab cluster (22 chars of base64url, like `random-uuid`)."""
    digest = hashlib.sha256(f"tr4947-lab-{cluster}".encode()).digest()[:16]
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


@dataclass
class Node:
    """One Kafka process (controller or broker) of a lab cluster, on its own host."""
    host: Host

    @property
    def name(self) -> str:
        return self.host.name

    @property
    def cluster(self) -> str:
        return self.host.get("kafka_cluster")

    @property
    def role(self) -> str:
        return self.host.get("kafka_role", "broker")

    @property
    def is_controller(self) -> bool:
        return self.role == "controller"

    @property
    def standby(self) -> bool:
        return bool(self.host.get("kafka_standby"))

    @property
    def node_id(self) -> int:
        return int(self.host.get("kafka_node_id", 0))

    @property
    def address(self) -> str:
        return self.host.kafka_address

    @property
    def port(self) -> int:
        key = "kafka_controller_port" if self.is_controller else "kafka_port"
        return int(self.host.get(key, 9093 if self.is_controller else 9092))

    @property
    def bootstrap(self) -> str:
        return f"{self.address}:{self.port}"

    def log_dirs(self) -> list[str]:
        return [d.strip() for d in str(self.host.get("kafka_log_dirs", "")).split(",")
                if d.strip()]


def nodes(hosts: Iterable[Host]) -> list[Node]:
    return [Node(h) for h in hosts]


def quorum_voters(controllers: Iterable[Node]) -> str:
    return ",".join(f"{c.node_id}@{c.address}:{c.port}" for c in controllers)


def bootstrap_servers(brokers: Iterable[Node]) -> str:
    return ",".join(b.bootstrap for b in brokers)


def _fmt(v) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def server_properties(node: Node, controllers: list[Node]) -> str:
    """server.properties of a controller or broker (a standby gets broker 1's identity only
    when it takes over: REC-2 writes that file)."""
    props: dict[str, object] = {
        "process.roles": "controller" if node.is_controller else "broker",
        "node.id": node.node_id,
        # Static quorum (the TR's fixed ZooKeeper ensemble); so no --standalone at format.
        "controller.quorum.voters": quorum_voters(controllers),
        "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "log.dirs": ",".join(node.log_dirs()),
    }
    if node.is_controller:
        props["listeners"] = f"CONTROLLER://{node.address}:{node.port}"
    else:
        props.update({
            "listeners": f"PLAINTEXT://{node.address}:{node.port}",
            "advertised.listeners": f"PLAINTEXT://{node.address}:{node.port}",
            "inter.broker.listener.name": "PLAINTEXT",
        })
        props.update(node.host.get("kafka_server_properties_common") or {})
        props.update(node.host.get("kafka_server_properties") or {})
    head = (f"# Lab {node.role} {node.name} of cluster {node.cluster}, generated by "
            f"tr4947.lab.kafka from playbook inventory variables.\n")
    return head + "".join(f"{k}={_fmt(v)}\n" for k, v in props.items())


def _log4j2(target: str, level: str) -> str:
    if target == "stderr":
        appender = ("appender.out.type = Console\nappender.out.name = OUT\n"
                    "appender.out.target = SYSTEM_ERR\n")
    else:
        appender = ("appender.out.type = File\nappender.out.name = OUT\n"
                    f"appender.out.fileName = {target}\n")
    return ("status = warn\n" + appender +
            "appender.out.layout.type = PatternLayout\n"
            "appender.out.layout.pattern = [%d] %p %m (%c)%n\n"
            f"rootLogger.level = {level}\nrootLogger.appenderRef.out.ref = OUT\n"
            # Per-request logging would dominate the file and the disk I/O on 2 cores.
            "logger.request.name = kafka.request.logger\nlogger.request.level = WARN\n"
            "logger.authorizer.name = kafka.authorizer.logger\nlogger.authorizer.level = WARN\n")


def install_files(heap: str = "-Xmx320m", jvm_opts: str = "-XX:+UseSerialGC",
                  home: str = KAFKA_HOME) -> dict[str, tuple[str, int]]:
    """The files of a Kafka installation on a lab host: {host path: (text, mode)}.
    ``heap``/``jvm_opts``: the defaults of KAFKA_HEAP_OPTS / KAFKA_JVM_PERFORMANCE_OPTS."""
    libs = paths.kafka_libs()
    tools_log4j = f"{home}/config/tools-log4j2.properties"
    files: dict[str, tuple[str, int]] = {
        f"{home}/config/tools-log4j2.properties": (_log4j2("stderr", "WARN"), 0o644),
        f"{home}/config/log4j2.properties": (_log4j2("${sys:kafka.logs.dir}/server.log", "INFO"),
                                             0o644),
    }
    head = "#!/bin/sh\n# Lab stand-in for Kafka's bin/{name}.sh (tr4947.lab.kafka): {what}.\n"
    for name, main in TOOLS.items():
        jvm = PERF_JVM if name.startswith("kafka-producer-perf") else TOOL_JVM
        body = (head.format(name=name, what=f"runs {main} as Kafka's script does")
                + f"exec {java()} ${{KAFKA_OPTS:-{jvm}}} "
                  f"-Dlog4j2.configurationFile=${{KAFKA_LOG4J_CONFIG:-{tools_log4j}}} "
                  f"-cp '{libs}/*' {main} \"$@\"\n")
        files[f"{home}/bin/{name}.sh"] = (body, 0o755)
    # As Kafka's kafka-server-start.sh: heap and JVM options from the environment, logs in
    # LOG_DIR, `-daemon` detaches (kafka-run-class.sh's nohup ... &) with the console output
    # in LOG_DIR/kafkaServer.out; the working directory does not matter.
    files[f"{home}/bin/kafka-server-start.sh"] = (
        head.format(name="kafka-server-start", what="starts kafka.Kafka") +
        f'LOG_DIR=${{LOG_DIR:-{home}/logs}}; mkdir -p "$LOG_DIR"\n'
        'daemon=; if [ "$1" = "-daemon" ]; then daemon=1; shift; fi\n'
        'if [ $# -lt 1 ]; then echo "USAGE: $0 [-daemon] server.properties [--override '
        'property=value]*" >&2; exit 1; fi\n'
        f'set -- {java()} ${{KAFKA_HEAP_OPTS:-{heap}}} ${{KAFKA_JVM_PERFORMANCE_OPTS:-{jvm_opts}}} '
        f'-Dkafka.logs.dir="$LOG_DIR" -Dlog4j2.configurationFile={home}/config/log4j2.properties '
        f"-cp '{libs}/*' {SERVER_MAIN} \"$@\"\n"
        'if [ -n "$daemon" ]; then\n'
        '  nohup "$@" >> "$LOG_DIR/kafkaServer.out" 2>&1 < /dev/null &\n'
        'else\n  exec "$@"\nfi\n', 0o755)
    # As Kafka's kafka-server-stop.sh: signal (TERM by default) every kafka.Kafka JVM.
    files[f"{home}/bin/kafka-server-stop.sh"] = (
        head.format(name="kafka-server-stop", what="signals the host's kafka.Kafka JVM") +
        'SIGNAL=${SIGNAL:-TERM}\n'
        "PIDS=$(ps ax | grep -i 'kafka\\.Kafka' | grep java | grep -v grep | awk '{print $1}')\n"
        'if [ -z "$PIDS" ]; then echo "No kafka server to stop"; exit 1; fi\n'
        'kill -s "$SIGNAL" $PIDS\n', 0o755)
    for name in list(files):
        if name.startswith(f"{home}/bin/") and name.endswith(".sh"):
            bare = name.removesuffix(".sh")
            files[bare] = files[name]
    return files


def start_command(node: Node, home: str = KAFKA_HOME) -> str:
    """What the inventory's ``kafka_start`` says for a lab node: KRaft storage formatted once
    with the cluster's id (``--ignore-formatted``: a restart keeps its data), then the TR's
    ``kafka-server-start.sh -daemon``."""
    cfg = f"{home}/config/server.properties"
    return (f"{home}/bin/kafka-storage.sh format --ignore-formatted "
            f"--cluster-id {node.host.get('kafka_cluster_id', cluster_id(node.cluster))} "
            f"--config {cfg} > /dev/null && {home}/bin/kafka-server-start.sh -daemon {cfg}")
