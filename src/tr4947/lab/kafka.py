"""Apache Kafka on the lab's hosts: an installation at /opt/kafka and a configuration per node.

Kafka's jars come from Maven Central (lab/kafka/pom.xml for the lab's Kafka, and a pom per
other release the guide runs, e.g. lab/kafka/pom-3.2.3.xml for the TR's own; resolved by
scripts/setup.sh), which ship no ``bin/`` scripts: the lab writes its own ``bin/kafka-*.sh``
(and Confluent's names without ``.sh``, which the TR also uses) that call the same Java classes
as that release's scripts, so the TR's commands run as printed. ``kafka-server-start.sh
-daemon`` and ``kafka-server-stop.sh`` behave as Kafka's: the broker runs detached, logs to
``$LOG_DIR`` (``/opt/kafka/logs``), and stop signals every ``kafka.Kafka`` JVM of the host
(each lab host has its own pid namespace, so that is the host's own broker).

Each node's ``server.properties`` is generated from inventory variables. Kafka 3.3 and later:
dedicated KRaft controllers (``process.roles=controller``) and broker-only nodes, so a standby
can take over a broker's ``node.id`` and address without changing the quorum. Before 3.3 (the
TR ran 3.2.3, when KRaft was not yet production-ready): the same controller hosts run
ZooKeeper (``zookeeper-server-start.sh``, the TR's ensemble) and brokers register with it
(``broker.id``, ``zookeeper.connect``). Paths are the host's own
(``log.dirs=/demo/broker_demo_1``): no mapping.
"""
from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from .. import paths
from ..inventory import Host
from ..kafka_tools import KAFKA_HOME  # noqa: F401 - where the guide's commands expect Kafka
ZOOKEEPER_PORT = 2181

# wrapper name (as in Kafka's bin/) -> main class, per release line. Kafka 4 moved the tools
# from the Scala core (kafka.admin, kafka.tools) to org.apache.kafka.tools.
TOOLS_4 = {
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
    # Kafka's system tests (kafkatest) count every acknowledged record with these two; the
    # release ships them in kafka-tools without a bin/ script of their own.
    "kafka-verifiable-producer": "org.apache.kafka.tools.VerifiableProducer",
    "kafka-verifiable-consumer": "org.apache.kafka.tools.VerifiableConsumer",
}
TOOLS_3_2 = {
    "kafka-topics": "kafka.admin.TopicCommand",
    "kafka-producer-perf-test": "org.apache.kafka.tools.ProducerPerformance",
    "kafka-consumer-perf-test": "kafka.tools.ConsumerPerformance",
    "kafka-reassign-partitions": "kafka.admin.ReassignPartitionsCommand",
    "kafka-console-consumer": "kafka.tools.ConsoleConsumer",
    "kafka-console-producer": "kafka.tools.ConsoleProducer",
    "kafka-consumer-groups": "kafka.admin.ConsumerGroupCommand",
    "kafka-log-dirs": "kafka.admin.LogDirsCommand",
    "kafka-get-offsets": "kafka.tools.GetOffsetShell",
    "kafka-broker-api-versions": "kafka.admin.BrokerApiVersionsCommand",
    "kafka-storage": "kafka.tools.StorageTool",
    "zookeeper-shell": "org.apache.zookeeper.ZooKeeperMainWithTlsSupportForKafka",
    "kafka-verifiable-producer": "org.apache.kafka.tools.VerifiableProducer",
    "kafka-verifiable-consumer": "org.apache.kafka.tools.VerifiableConsumer",
}
SERVER_MAIN = "kafka.Kafka"
ZOOKEEPER_MAIN = "org.apache.zookeeper.server.quorum.QuorumPeerMain"


def _release(version: str) -> tuple[int, int]:
    try:
        major, minor = (int(x) for x in version.split(".")[:2])
    except ValueError:
        raise ValueError(f"Kafka version {version!r}: expected MAJOR.MINOR.PATCH") from None
    return major, minor


def uses_zookeeper(version: str) -> bool:
    """Kafka before 3.3 runs with ZooKeeper (KRaft was early access until 3.3)."""
    return _release(version) < (3, 3)


def tools(version: str) -> dict[str, str]:
    major, minor = _release(version)
    if major >= 4:
        return TOOLS_4
    if (major, minor) == (3, 2):
        return TOOLS_3_2
    raise ValueError(f"Kafka {version}: the lab installs {paths.kafka_version()} or "
                     f"{', '.join(v for v in paths.kafka_versions() if v != paths.kafka_version())}")


def version_vars(host: Host, version: str) -> dict[str, object]:
    """The inventory variables of a lab node when its cluster runs Kafka ``version``: for a
    ZooKeeper-era release, no KRaft cluster id (nothing to format) and, on the controller
    hosts, ZooKeeper's start and stop scripts, port and process."""
    out: dict[str, object] = {"kafka_version": version}
    if not uses_zookeeper(version):
        return out
    out["kafka_cluster_id"] = None
    if host.get("kafka_role") == "controller":
        out.update(kafka_start="bin/zookeeper-server-start.sh -daemon config/zookeeper.properties",
                   kafka_stop="bin/zookeeper-server-stop.sh",
                   kafka_controller_port=ZOOKEEPER_PORT, kafka_process="QuorumPeerMain")
    return out

# Tools are short-lived: C1 only and SerialGC start ~2x faster. The load generator is not:
# it needs C2 to reach a meaningful rate (JIT warm-up dominates short runs).
TOOL_JVM = "-Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.awt.headless=true"
PERF_JVM = "-Xmx512m -XX:+UseSerialGC -Djava.awt.headless=true"


def java() -> str:
    home = os.environ.get("JAVA_HOME")
    return str(Path(home) / "bin" / "java") if home else "/usr/bin/java"


def log4j_flag(version: str | None, config: Path | str) -> str:
    """The JVM flag that points a Kafka ``version``'s log4j at ``config`` (Kafka 3: log4j 1
    through reload4j; Kafka 4: log4j2)."""
    return ("-Dlog4j.configuration=file:" if uses_zookeeper(version or paths.kafka_version())
            else "-Dlog4j2.configurationFile=") + str(config)


def java_cmd(main: str, args: list[str], jvm: str, log4j: Path | str | None = None,
             version: str | None = None, archive: Path | None = None,
             archive_at_exit: Path | None = None) -> list[str]:
    """A Kafka class run as Kafka's kafka-run-class.sh runs it, for JVMs outside the lab's
    hosts (the class-data sharing builds, the benches): ``jvm`` options (TOOL_JVM,
    PERF_JVM...), ``archive`` maps a class-data sharing archive, ``archive_at_exit`` writes
    one. The lab hosts' bin/ scripts (install_files) run the same line in shell form."""
    share = ([f"-XX:SharedArchiveFile={archive}"] if archive else []) + \
            ([f"-XX:ArchiveClassesAtExit={archive_at_exit}"] if archive_at_exit else [])
    return [java(), *shlex.split(jvm), *share,
            *([log4j_flag(version, log4j)] if log4j else []),
            "-cp", f"{paths.kafka_libs(version)}/*", main, *args]


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
    def version(self) -> str:
        """The Kafka release this node runs (the inventory's kafka_version, or the lab's)."""
        return str(self.host.get("kafka_version") or paths.kafka_version())

    @property
    def zookeeper(self) -> bool:
        return uses_zookeeper(self.version)

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


def _fmt(v) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def server_properties(node: Node, controllers: list[Node]) -> str:
    """server.properties of a controller or broker (a standby gets broker 1's identity only
    when it takes over: REC-2 writes that file). A ZooKeeper-era controller host gets
    zookeeper_properties() instead."""
    if node.zookeeper:
        props: dict[str, object] = {
            "broker.id": node.node_id,
            "zookeeper.connect": ",".join(f"{c.address}:{c.port}" for c in controllers),
            "log.dirs": ",".join(node.log_dirs()),
        }
    else:
        props = {
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
    head = (f"# Lab {node.role} {node.name} of cluster {node.cluster} (Kafka {node.version}), "
            "generated by tr4947.lab.kafka from playbook inventory variables.\n")
    return head + "".join(f"{k}={_fmt(v)}\n" for k, v in props.items())


def zookeeper_properties(node: Node) -> str:
    """config/zookeeper.properties of a ZooKeeper-era controller host: Kafka's own sample,
    listening on the host's address only, data in its first kafka_log_dirs entry."""
    props = {"dataDir": (node.log_dirs() or ["/var/lib/zookeeper"])[0],
             "clientPort": node.port, "clientPortAddress": node.address,
             "maxClientCnxns": 0, "admin.enableServer": False}
    head = (f"# Lab ZooKeeper {node.name} of cluster {node.cluster} (Kafka {node.version}), "
            "generated by tr4947.lab.kafka from playbook inventory variables.\n")
    return head + "".join(f"{k}={_fmt(v)}\n" for k, v in props.items())


def _log4j(target: str, level: str) -> str:
    """Kafka 3's logging configuration (log4j 1 through reload4j), as its config/ holds."""
    if target == "stderr":
        appender = ("log4j.appender.out=org.apache.log4j.ConsoleAppender\n"
                    "log4j.appender.out.Target=System.err\n")
    else:
        appender = ("log4j.appender.out=org.apache.log4j.FileAppender\n"
                    f"log4j.appender.out.File={target}\n")
    return (f"log4j.rootLogger={level}, out\n" + appender +
            "log4j.appender.out.layout=org.apache.log4j.PatternLayout\n"
            "log4j.appender.out.layout.ConversionPattern=[%d] %p %m (%c)%n\n"
            "log4j.logger.kafka.request.logger=WARN\nlog4j.logger.kafka.authorizer.logger=WARN\n")


def _log4j2(target: str, level: str) -> str:
    """Kafka 4's (log4j 2)."""
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


def _daemon_script(head: str, home: str, main: str, out_file: str, usage: str,
                   heap: str, jvm_opts: str, log_flag: str, libs: Path) -> str:
    """As Kafka's kafka-server-start.sh / zookeeper-server-start.sh: heap and JVM options
    from the environment, logs in LOG_DIR, ``-daemon`` detaches (kafka-run-class.sh's nohup
    ... &) with the console output in LOG_DIR/<out_file>; the working directory does not
    matter."""
    return (head + f'LOG_DIR=${{LOG_DIR:-{home}/logs}}; mkdir -p "$LOG_DIR"\n'
            'daemon=; if [ "$1" = "-daemon" ]; then daemon=1; shift; fi\n'
            f'if [ $# -lt 1 ]; then echo "USAGE: $0 [-daemon] {usage}" >&2; exit 1; fi\n'
            f'set -- {java()} ${{KAFKA_HEAP_OPTS:-{heap}}} ${{KAFKA_JVM_PERFORMANCE_OPTS:-{jvm_opts}}} '
            f'-Dkafka.logs.dir="$LOG_DIR" {log_flag} '
            f"-cp '{libs}/*' {main} \"$@\"\n"
            'if [ -n "$daemon" ]; then\n'
            f'  nohup "$@" >> "$LOG_DIR/{out_file}" 2>&1 < /dev/null &\n'
            'else\n  exec "$@"\nfi\n')


def _stop_script(head: str, pattern: str, what: str) -> str:
    """As Kafka's kafka-server-stop.sh / zookeeper-server-stop.sh: signal (TERM by default)
    every JVM of the host running ``pattern``."""
    return (head + 'SIGNAL=${SIGNAL:-TERM}\n'
            f"PIDS=$(ps ax | grep -i '{pattern}' | grep java | grep -v grep | awk '{{print $1}}')\n"
            f'if [ -z "$PIDS" ]; then echo "No {what} to stop"; exit 1; fi\n'
            'kill -s "$SIGNAL" $PIDS\n')


def install_files(heap: str = "-Xmx320m", jvm_opts: str = "-XX:+UseSerialGC",
                  home: str = KAFKA_HOME, version: str | None = None,
                  archives: dict[str, Path] | None = None) -> dict[str, tuple[str, int]]:
    """The files of a Kafka ``version`` installation (default: the lab's) on a lab host:
    {host path: (text, mode)}. ``heap``/``jvm_opts``: the defaults of KAFKA_HEAP_OPTS /
    KAFKA_JVM_PERFORMANCE_OPTS. ``archives``: class-data sharing archives ("tools",
    "server"; see tr4947.lab.cds) that the JVMs map by default."""
    archives = archives or {}
    share = {k: f" -XX:SharedArchiveFile={p}" for k, p in archives.items()}
    version = version or paths.kafka_version()
    libs = paths.kafka_libs(version)
    zk = uses_zookeeper(version)
    if zk:                                    # Kafka 3: log4j 1 (reload4j)
        tools_cfg, server_cfg = f"{home}/config/tools-log4j.properties", \
            f"{home}/config/log4j.properties"
        files = {tools_cfg: (_log4j("stderr", "WARN"), 0o644),
                 server_cfg: (_log4j("${kafka.logs.dir}/server.log", "INFO"), 0o644)}
        flag = "-Dlog4j.configuration=file:"
    else:
        tools_cfg, server_cfg = f"{home}/config/tools-log4j2.properties", \
            f"{home}/config/log4j2.properties"
        files = {tools_cfg: (_log4j2("stderr", "WARN"), 0o644),
                 server_cfg: (_log4j2("${sys:kafka.logs.dir}/server.log", "INFO"), 0o644)}
        flag = "-Dlog4j2.configurationFile="
    head = (f"#!/bin/sh\n# Lab stand-in for Kafka {version}'s bin/{{name}}.sh "
            "(tr4947.lab.kafka): {what}.\n")
    for name, main in tools(version).items():
        jvm = (PERF_JVM if name.startswith("kafka-producer-perf") else TOOL_JVM) \
            + share.get("tools", "")
        body = (head.format(name=name, what=f"runs {main} as Kafka's script does")
                + f"exec {java()} ${{KAFKA_OPTS:-{jvm}}} "
                  f"{flag}${{KAFKA_LOG4J_CONFIG:-{tools_cfg}}} "
                  f"-cp '{libs}/*' {main} \"$@\"\n")
        files[f"{home}/bin/{name}.sh"] = (body, 0o755)
    files[f"{home}/bin/kafka-server-start.sh"] = (_daemon_script(
        head.format(name="kafka-server-start", what=f"starts {SERVER_MAIN}"), home, SERVER_MAIN,
        "kafkaServer.out", "server.properties [--override property=value]*", heap,
        jvm_opts + share.get("server", ""),
        flag + server_cfg, libs), 0o755)
    files[f"{home}/bin/kafka-server-stop.sh"] = (_stop_script(
        head.format(name="kafka-server-stop", what="signals the host's kafka.Kafka JVM"),
        "kafka\\.Kafka", "kafka server"), 0o755)
    if zk:
        files[f"{home}/bin/zookeeper-server-start.sh"] = (_daemon_script(
            head.format(name="zookeeper-server-start", what=f"starts {ZOOKEEPER_MAIN}"), home,
            ZOOKEEPER_MAIN, "zookeeper.out", "zookeeper.properties", heap,
            jvm_opts + share.get("server", ""),
            flag + server_cfg, libs), 0o755)
        files[f"{home}/bin/zookeeper-server-stop.sh"] = (_stop_script(
            head.format(name="zookeeper-server-stop", what="signals the host's ZooKeeper JVM"),
            "QuorumPeerMain", "zookeeper server"), 0o755)
    for name in list(files):
        if name.startswith(f"{home}/bin/") and name.endswith(".sh"):
            bare = name.removesuffix(".sh")
            files[bare] = files[name]
    return files
