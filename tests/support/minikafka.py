"""A throw-away single-node KRaft Kafka (combined broker+controller): the OMB runner's test
broker.

Why not the lab: the lab builds inventory-described clusters (dedicated controllers, standby
brokers, volumes) on hosts of their own; the runner's tests only need *a* real broker on this
machine, started and always torn down by the test itself, touching no lab state.
(bench/omb_vs_perftest.py uses it too.)

Usage::

    with MiniKafka() as k:
        run(workload, driver, bootstrap=k.bootstrap)
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

from tr4947 import paths

#: Combined-mode node; small heap, SerialGC: 2 cores are shared with everything else.
BROKER_JVM = ["-Xmx512m", "-Xms256m", "-XX:+UseSerialGC", "-Djava.awt.headless=true"]
TOOL_JVM = ["-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"]


def _die_with_parent() -> None:
    """In the child before exec: SIGKILL when the test process dies without its teardown
    (pytest killed by a timeout or SIGTERM), so no broker outlives the run."""
    import ctypes
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def free_port(address: str) -> int:
    with socket.socket() as s:
        s.bind((address, 0))
        return s.getsockname()[1]


def _log4j2(path: Path, log_file: Path | None) -> Path:
    if log_file is None:
        body = ("appender.err.type = Console\nappender.err.name = ERR\n"
                "appender.err.target = SYSTEM_ERR\nappender.err.layout.type = PatternLayout\n"
                "appender.err.layout.pattern = [%d] %p %m (%c)%n\n"
                "rootLogger.level = WARN\nrootLogger.appenderRef.err.ref = ERR\n")
    else:
        body = (f"appender.f.type = File\nappender.f.name = F\nappender.f.fileName = {log_file}\n"
                "appender.f.layout.type = PatternLayout\n"
                "appender.f.layout.pattern = [%d] %p %m (%c)%n\n"
                "rootLogger.level = INFO\nrootLogger.appenderRef.f.ref = F\n"
                "logger.req.name = kafka.request.logger\nlogger.req.level = WARN\n")
    path.write_text("status = warn\n" + body)
    return path


class MiniKafka:
    """One ``kafka.Kafka`` JVM on ``address`` (a free port), storage under a temp dir."""

    def __init__(self, address: str = "127.0.0.1", workdir: Path | None = None,
                 extra_props: dict | None = None, start_timeout: float = 120):
        self.address = address
        self.port = free_port(address)
        self.controller_port = free_port(address)
        self._own_dir = workdir is None
        self.dir = Path(workdir or tempfile.mkdtemp(prefix="tr4947-omb-kafka-"))
        self.extra_props = extra_props or {}
        self.start_timeout = start_timeout
        self.proc: subprocess.Popen | None = None

    @property
    def bootstrap(self) -> str:
        return f"{self.address}:{self.port}"

    def _java(self, main: str, args: list[str], jvm: list[str], log4j: Path) -> list[str]:
        return ["java", *jvm, f"-Dlog4j2.configurationFile={log4j}",
                "-cp", f"{paths.kafka_libs()}/*", main, *args]

    def start(self) -> "MiniKafka":
        data = self.dir / "data"
        data.mkdir(parents=True, exist_ok=True)
        props = {
            "process.roles": "broker,controller",
            "node.id": 1,
            "controller.quorum.bootstrap.servers": f"{self.address}:{self.controller_port}",
            "listeners": (f"PLAINTEXT://{self.address}:{self.port},"
                          f"CONTROLLER://{self.address}:{self.controller_port}"),
            "advertised.listeners": f"PLAINTEXT://{self.address}:{self.port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "log.dirs": data,
            "offsets.topic.replication.factor": 1,
            "transaction.state.log.replication.factor": 1,
            "transaction.state.log.min.isr": 1,
            # A consumer group's first join otherwise waits 3 s for more members.
            "group.initial.rebalance.delay.ms": 0,
            "num.partitions": 1,
            **self.extra_props,
        }
        cfg = self.dir / "server.properties"
        cfg.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        tools_log4j = _log4j2(self.dir / "tools-log4j2.properties", None)
        server_log4j = _log4j2(self.dir / "log4j2.properties", self.dir / "server.log")
        fmt = subprocess.run(
            self._java("kafka.tools.StorageTool",
                       ["format", "-t", uuid.uuid4().hex[:22], "-c", str(cfg), "--standalone"],
                       TOOL_JVM, tools_log4j),
            capture_output=True, text=True, timeout=120)
        if fmt.returncode != 0:
            raise RuntimeError(f"kafka-storage format failed: {fmt.stdout}{fmt.stderr}")
        out = open(self.dir / "stdout.log", "ab")
        try:
            # Own session: a Ctrl-C in the test runner must not kill it before teardown.
            self.proc = subprocess.Popen(
                self._java("kafka.Kafka", [str(cfg)], BROKER_JVM, server_log4j),
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True, preexec_fn=_die_with_parent)
        finally:
            out.close()
        self._wait_ready()
        return self

    def _wait_ready(self) -> None:
        from confluent_kafka.admin import AdminClient
        t0 = time.monotonic()
        while time.monotonic() - t0 < self.start_timeout:
            if self.proc.poll() is not None:
                raise RuntimeError(f"broker exited during start-up:\n{self.log_tail()}")
            try:
                with socket.create_connection((self.address, self.port), timeout=0.5):
                    pass
                md = AdminClient({"bootstrap.servers": self.bootstrap,
                                  "log_level": 0}).list_topics(timeout=3)
                if md.brokers:
                    return
            except Exception:
                pass
            time.sleep(0.5)
        self.stop()
        raise TimeoutError(f"broker not ready after {self.start_timeout}s:\n{self.log_tail()}")

    def log_tail(self, n: int = 30) -> str:
        out = []
        for name in ("server.log", "stdout.log"):
            f = self.dir / name
            if f.exists():
                out += f.read_text(errors="replace").splitlines()[-n:]
        return "\n".join(out)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            # Only our own process group (we started it with start_new_session).
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        self.proc = None
        if self._own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> "MiniKafka":
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc) -> None:
        self.stop()
