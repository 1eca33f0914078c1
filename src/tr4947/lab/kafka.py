"""The lab's Kafka side: real Apache Kafka (KRaft) processes on loopback addresses.

Each lab host has a root directory, LAB_STATE/hosts/<inventory_hostname>/, that stands for
its file system: an absolute path from the inventory (``/demo/broker_demo_1``) lives at
``<root>/demo/broker_demo_1``. A node keeps its config in <root>/config and its logs in
<root>/logs. Processes are plain ``java -cp 'libs/*' kafka.Kafka server.properties``, as
Kafka's own bin/kafka-server-start.sh runs them, so the TR's tools and settings apply as is.

Supervision (pid files, stopping, clean-up) is lab.py's job; this module knows Kafka.
"""
from __future__ import annotations

import base64
import hashlib
import os
import shlex
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from .. import paths
from ..inventory import Host

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
    "kafka-storage": "kafka.tools.StorageTool",
    "kafka-server-start": "kafka.Kafka",
}

# Tools are short-lived: C1 only and SerialGC start ~2x faster. The load generator is not:
# it needs C2 to reach a meaningful rate (see DESIGN.md: JIT warm-up dominates short runs).
TOOL_JVM = "-Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.awt.headless=true"
PERF_JVM = "-Xmx512m -XX:+UseSerialGC -Djava.awt.headless=true"


def host_root(name: str, root: Path | None = None) -> Path:
    return (root or paths.LAB_STATE) / "hosts" / name


def prepare_host(host_dir: Path, bin_dir: Path) -> None:
    """A lab host's own file system: tmp/, and bin/ pointing at the lab's Kafka tool
    wrappers (as an installed Kafka's bin/), so `bin/kafka-topics.sh` runs on any host."""
    (host_dir / "tmp").mkdir(parents=True, exist_ok=True)
    link = host_dir / "bin"
    if not link.is_symlink() and not link.exists():
        link.symlink_to(bin_dir)


def on_host(host_dir: Path, path: str) -> Path:
    """An absolute path on a lab host -> the real path under the host's root."""
    return host_dir / path.lstrip("/")


@dataclass
class Node:
    """One Kafka process (controller or broker) of a lab cluster."""
    host: Host
    root: Path                      # the lab state dir

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
        return self.host.address

    @property
    def port(self) -> int:
        key = "kafka_controller_port" if self.is_controller else "kafka_port"
        return int(self.host.get(key, 9093 if self.is_controller else 9092))

    @property
    def dir(self) -> Path:
        return host_root(self.name, self.root)

    @property
    def config_dir(self) -> Path:
        return self.dir / "config"

    @property
    def logs_dir(self) -> Path:
        return self.dir / "logs"

    @property
    def properties_file(self) -> Path:
        return self.config_dir / "server.properties"

    @property
    def server_log(self) -> Path:
        return self.logs_dir / "server.log"

    @property
    def stdout_log(self) -> Path:
        return self.logs_dir / "kafkaServer.out"

    def log_dirs(self) -> list[Path]:
        return [on_host(self.dir, d.strip())
                for d in str(self.host.get("kafka_log_dirs")).split(",") if d.strip()]

    @property
    def mountpoint(self) -> Path | None:
        mp = self.host.get("kafka_mountpoint")
        return on_host(self.dir, mp) if mp and self.host.get("kafka_storage") == "nfs" \
            and not self.is_controller else None

    @property
    def bootstrap(self) -> str:
        return f"{self.address}:{self.port}"


def nodes(hosts: Iterable[Host], root: Path | None = None) -> list[Node]:
    return [Node(h, root or paths.LAB_STATE) for h in hosts]


def cluster_id(cluster: str) -> str:
    """A stable KRaft cluster id per lab cluster (22 chars of base64url, like `random-uuid`)."""
    digest = hashlib.sha256(f"tr4947-lab-{cluster}".encode()).digest()[:16]
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def quorum_voters(controllers: Iterable[Node]) -> str:
    return ",".join(f"{c.node_id}@{c.address}:{c.port}" for c in controllers)


def bootstrap_servers(brokers: Iterable[Node]) -> str:
    return ",".join(b.bootstrap for b in brokers)


def _fmt(v) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def server_properties(node: Node, controllers: list[Node], node_id: int | None = None) -> str:
    """server.properties for a controller or broker (node_id overrides, for a standby)."""
    nid = node.node_id if node_id is None else node_id
    props: dict[str, object] = {
        "process.roles": "controller" if node.is_controller else "broker",
        "node.id": nid,
        # Static quorum (the TR's fixed ZooKeeper ensemble); so no --standalone at format.
        "controller.quorum.voters": quorum_voters(controllers),
        "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "log.dirs": ",".join(str(d) for d in node.log_dirs()),
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


def log4j2_properties(log_file: Path | None, level: str = "INFO") -> str:
    """log4j2 config: brokers log to a file; tools log WARN to stderr so stdout stays clean."""
    if log_file is None:
        return ("status = warn\n"
                "appender.err.type = Console\nappender.err.name = STDERR\n"
                "appender.err.target = SYSTEM_ERR\n"
                "appender.err.layout.type = PatternLayout\n"
                "appender.err.layout.pattern = [%d] %p %m (%c)%n\n"
                f"rootLogger.level = {level}\nrootLogger.appenderRef.err.ref = STDERR\n")
    return ("status = warn\n"
            "appender.file.type = File\nappender.file.name = FILE\n"
            f"appender.file.fileName = {log_file}\n"
            "appender.file.layout.type = PatternLayout\n"
            "appender.file.layout.pattern = [%d] %p %m (%c)%n\n"
            f"rootLogger.level = {level}\nrootLogger.appenderRef.file.ref = FILE\n"
            # Per-request logging would dominate the file and the disk I/O on 2 cores.
            "logger.request.name = kafka.request.logger\nlogger.request.level = WARN\n"
            "logger.authorizer.name = kafka.authorizer.logger\nlogger.authorizer.level = WARN\n")


def tools_log4j2(root: Path | None = None) -> Path:
    f = (root or paths.LAB_STATE) / "config" / "tools-log4j2.properties"
    if not f.exists():
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(log4j2_properties(None, "WARN"))
    return f


def write_config(node: Node, controllers: list[Node], node_id: int | None = None) -> Path:
    node.config_dir.mkdir(parents=True, exist_ok=True)
    node.logs_dir.mkdir(parents=True, exist_ok=True)
    node.properties_file.write_text(server_properties(node, controllers, node_id))
    (node.config_dir / "log4j2.properties").write_text(log4j2_properties(node.server_log))
    return node.properties_file


def java() -> str:
    home = os.environ.get("JAVA_HOME")
    return str(Path(home) / "bin" / "java") if home else "java"


def java_cmd(main: str, args: list[str], jvm: str, log4j: Path) -> list[str]:
    return [java(), *shlex.split(jvm), f"-Dlog4j2.configurationFile={log4j}",
            "-cp", f"{paths.kafka_libs()}/*", main, *args]


def format_storage(node: Node, timeout: float = 120) -> subprocess.CompletedProcess:
    """kafka-storage format (idempotent: an already formatted dir is kept, as on a restart)."""
    for d in node.log_dirs():
        d.mkdir(parents=True, exist_ok=True)
    cmd = java_cmd("kafka.tools.StorageTool",
                   ["format", "-t", cluster_id(node.cluster), "-c", str(node.properties_file),
                    "--ignore-formatted"], TOOL_JVM, tools_log4j2(node.root))
    cp = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if cp.returncode != 0:
        raise RuntimeError(f"kafka-storage format failed for {node.name} "
                           f"(exit {cp.returncode}): {(cp.stdout + cp.stderr)[-2000:]}")
    return cp


def server_cmd(node: Node) -> list[str]:
    heap = node.host.get("kafka_controller_heap_opts" if node.is_controller else "kafka_heap_opts",
                         "-Xmx256m")
    jvm = f"{heap} {node.host.get('kafka_jvm_opts', '-XX:+UseSerialGC')}"
    # -Dkafka.logs.dir as bin/kafka-run-class.sh sets it; the lab root in the command line
    # lets `lab down` recognise its own processes even when procs.json is lost.
    return java_cmd("kafka.Kafka", [str(node.properties_file)],
                    f"{jvm} -Dkafka.logs.dir={node.logs_dir} -Dtr4947.lab={node.root}",
                    node.config_dir / "log4j2.properties")


def spawn(node: Node) -> subprocess.Popen:
    """Start the node's JVM in its own session (a Ctrl-C to the CLI must not reach it:
    the orchestrator decides the order of shutdown)."""
    node.logs_dir.mkdir(parents=True, exist_ok=True)
    out = open(node.stdout_log, "ab")
    try:
        return subprocess.Popen(server_cmd(node), stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, cwd=node.dir, start_new_session=True)
    finally:
        out.close()


# --- health and readiness ---------------------------------------------------------------
def port_open(address: str, port: int, timeout: float = 1.0) -> bool:
    """TCP connect, as the TR's `telnet <broker> 9092` health check."""
    try:
        with socket.create_connection((address, port), timeout=timeout):
            return True
    except OSError:
        return False


def health_check(address: str, port: int = 9092, timeout: float = 2.0) -> tuple[bool, str]:
    """(alive, telnet-like transcript)."""
    lines = [f"Trying {address}..."]
    try:
        with socket.create_connection((address, port), timeout=timeout):
            lines += [f"Connected to {address}.", "Connection closed by foreign host."]
            return True, "\n".join(lines)
    except ConnectionRefusedError:
        lines += [f"telnet: connect to address {address}: Connection refused",
                  "telnet: Unable to connect to remote host"]
    except OSError as exc:
        lines += [f"telnet: connect to address {address}: {exc.strerror or exc}",
                  "telnet: Unable to connect to remote host"]
    return False, "\n".join(lines)


def registered_brokers(bootstrap: str, timeout: float = 5.0) -> set[int]:
    """Broker ids in the cluster metadata (KRaft leaves fenced brokers out of it)."""
    from confluent_kafka.admin import AdminClient
    import logging
    quiet = logging.getLogger("tr4947.lab.librdkafka")
    quiet.addHandler(logging.NullHandler())
    quiet.propagate = False
    admin = AdminClient({"bootstrap.servers": bootstrap, "logger": quiet,
                         "socket.connection.setup.timeout.ms": 3000})
    try:
        md = admin.list_topics(timeout=timeout)
        return set(md.brokers)
    except Exception:
        return set()


def wait_ready(node: Node, alive, timeout: float = 180, bootstrap: str | None = None) -> float:
    """Wait until the port answers and (brokers) the broker is registered and unfenced.

    ``alive()`` tells whether the process still runs, so a broker that dies during start-up
    fails fast with its log tail instead of a timeout. Returns the seconds waited.
    """
    t0 = time.monotonic()
    delay = 0.2
    while True:
        if not alive():
            raise RuntimeError(f"{node.name} exited during start-up; last log lines:\n"
                               + tail(node, 25))
        if port_open(node.address, node.port, 0.5):
            if node.is_controller or node.node_id in registered_brokers(
                    bootstrap or node.bootstrap, timeout=3):
                return time.monotonic() - t0
        if time.monotonic() - t0 > timeout:
            raise TimeoutError(f"{node.name} not ready after {timeout:.0f}s "
                               f"({node.address}:{node.port}); last log lines:\n" + tail(node, 25))
        time.sleep(delay)
        delay = min(delay * 1.5, 2.0)


def tail(node: Node, lines: int = 50) -> str:
    out = []
    for f in (node.server_log, node.stdout_log):
        if f.exists():
            text = f.read_text(errors="replace").splitlines()[-lines:]
            out.append(f"--- {f}\n" + "\n".join(text))
    return "\n".join(out) or "(no log yet)"


def read_log(node: Node) -> str:
    return node.server_log.read_text(errors="replace") if node.server_log.exists() else ""


# --- Kafka's CLI tools ------------------------------------------------------------------
def tool(name: str, args: list[str], timeout: float = 300, root: Path | None = None,
         jvm: str | None = None, input: str | None = None) -> subprocess.CompletedProcess:
    """Run one of Kafka's tools (by its bin/ name) and capture its output."""
    main = TOOLS[name.removesuffix(".sh")]
    if jvm is None:
        jvm = PERF_JVM if name.startswith("kafka-producer-perf") else TOOL_JVM
    cmd = java_cmd(main, [str(a) for a in args], jvm, tools_log4j2(root))
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, input=input,
                          start_new_session=True)


def topics(bootstrap: str, *args: str, **kw) -> subprocess.CompletedProcess:
    return tool("kafka-topics", ["--bootstrap-server", bootstrap, *args], **kw)


def producer_perf(bootstrap: str, topic: str, num_records: int, record_size: int = 1024,
                  props: dict | None = None, throughput: int = -1, **kw) -> subprocess.CompletedProcess:
    p = {"acks": "all", "bootstrap.servers": bootstrap, **(props or {})}
    return tool("kafka-producer-perf-test",
                ["--topic", topic, "--throughput", throughput, "--num-records", num_records,
                 "--record-size", record_size, "--producer-props",
                 *[f"{k}={v}" for k, v in p.items()]], **kw)


def reassign(bootstrap: str, *args: str, **kw) -> subprocess.CompletedProcess:
    return tool("kafka-reassign-partitions", ["--bootstrap-server", bootstrap, *args], **kw)


def console_consume(bootstrap: str, topic: str, max_messages: int | None = None,
                    timeout_ms: int = 20000, extra: list[str] | None = None,
                    **kw) -> subprocess.CompletedProcess:
    args = ["--bootstrap-server", bootstrap, "--topic", topic, "--from-beginning",
            "--timeout-ms", timeout_ms, *(extra or [])]
    if max_messages:
        args += ["--max-messages", max_messages]
    return tool("kafka-console-consumer", args, **kw)


def wrapper_scripts(bin_dir: Path, root: Path | None = None) -> list[Path]:
    """bin/kafka-*.sh (and Confluent's names without .sh, which the TR also uses) that call
    the same Java classes as Kafka's own scripts, so the TR's commands run as written."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    log4j = tools_log4j2(root)
    libs = paths.kafka_libs()
    written = []
    for name, main in TOOLS.items():
        if name == "kafka-server-start":
            # As Kafka's script: heap/JVM opts from the environment, logs to LOG_DIR, and
            # `-daemon` detaches with console output in LOG_DIR/kafkaServer.out
            # (kafka-run-class.sh's nohup ... &).
            body = ('LOG_DIR=${LOG_DIR:-$PWD/logs}; mkdir -p "$LOG_DIR"\n'
                    'daemon=; if [ "$1" = "-daemon" ]; then daemon=1; shift; fi\n'
                    'printf \'status = warn\\nappender.f.type = File\\nappender.f.name = F\\n'
                    'appender.f.fileName = %s/server.log\\nappender.f.layout.type = PatternLayout\\n'
                    'appender.f.layout.pattern = [%%d] %%p %%m (%%c)%%n\\nrootLogger.level = INFO\\n'
                    'rootLogger.appenderRef.f.ref = F\\n'
                    'logger.request.name = kafka.request.logger\\nlogger.request.level = WARN\\n\' '
                    '"$LOG_DIR" > "$LOG_DIR/log4j2.properties"\n'
                    f'set -- {java()} ${{KAFKA_HEAP_OPTS:--Xmx320m}} '
                    '${KAFKA_JVM_PERFORMANCE_OPTS:--XX:+UseSerialGC} '
                    '-Dkafka.logs.dir="$LOG_DIR" -Dlog4j2.configurationFile="$LOG_DIR/log4j2.properties" '
                    f"-cp '{libs}/*' {main} \"$@\"\n"
                    'if [ -n "$daemon" ]; then\n'
                    '  nohup "$@" >> "$LOG_DIR/kafkaServer.out" 2>&1 < /dev/null &\n'
                    'else\n  exec "$@"\nfi\n')
        else:
            jvm = PERF_JVM if name.startswith("kafka-producer-perf") else TOOL_JVM
            body = (f"exec {java()} ${{KAFKA_OPTS:-{jvm}}} -Dlog4j2.configurationFile={log4j} "
                    f"-cp '{libs}/*' {main} \"$@\"\n")
        text = (f"#!/bin/sh\n# Lab stand-in for Kafka's bin/{name}.sh: same class "
                f"({main}), lab JVM settings.\n" + body)
        for fname in (f"{name}.sh", name):
            f = bin_dir / fname
            f.write_text(text)
            f.chmod(0o755)
            written.append(f)
    return written
