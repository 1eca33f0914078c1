"""Class-data sharing (CDS) archives for the lab's Kafka JVMs.

Every Kafka tool call and every broker start is a new JVM that reads and verifies a few
thousand classes from the jars before it does any work: about 0.8 s of CPU for a tool and
2 s for a broker on this machine kind, and the runbook starts hundreds of them on 2 cores.
A dynamic CDS archive (JDK 13 and later, ``-XX:ArchiveClassesAtExit``) holds those classes
ready to map, which roughly halves each start (``bench/lab_bench.py`` prints both).

The archives are made once per Kafka release and JDK, on the control node, by a short real
run: a single-node KRaft cluster on loopback started with ``-XX:ArchiveClassesAtExit``, and
``kafka-topics --create`` against it for the tools' archive. They live beside the release's
jars in the cache. They are an optimisation only: a JVM given a missing, stale or foreign
archive ignores it without a word (``-Xshare:auto``, the default), so a lab without them
works exactly as before, only slower; a failed build says so once and the lab goes on.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Callable

from .. import paths
from ..wait import port_open
from . import kafka

KINDS = ("tools", "server")


def _java_id() -> str:
    """The JDK the archives belong to: its binary's real path and modification time (a JDK
    upgrade replaces the file; the JVM also refuses an archive of another build itself)."""
    real = os.path.realpath(kafka.java())
    st = os.stat(real)
    return hashlib.sha256(f"{real}:{st.st_mtime_ns}".encode()).hexdigest()[:12]


def directory(version: str | None = None) -> Path:
    version = version or paths.kafka_version()
    return paths.kafka_libs(version).parent / "cds" / _java_id()


def archives(version: str | None = None) -> dict[str, Path]:
    """{"tools"|"server": archive} of the archives that exist for ``version`` (no build)."""
    d = directory(version)
    return {k: d / f"{k}.jsa" for k in KINDS if (d / f"{k}.jsa").is_file()}


def ensure(version: str | None = None, say: Callable[[str], None] = print) -> dict[str, Path]:
    """The archives of ``version``, built first if missing (about 15 s, once). One builder at
    a time per release (a file lock); a failed build is reported and leaves no archive."""
    version = version or paths.kafka_version()
    have = archives(version)
    if len(have) == len(KINDS):
        return have
    d = directory(version)
    d.mkdir(parents=True, exist_ok=True)
    with open(d / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        have = archives(version)
        if len(have) == len(KINDS):
            return have
        t0 = time.monotonic()
        try:
            _build(version, d)
        except (OSError, RuntimeError, subprocess.SubprocessError) as exc:
            say(f"Kafka {version}: no class-data sharing archive ({exc}); JVMs start "
                "without one (slower, otherwise the same)")
            return archives(version)
        say(f"Kafka {version}: class-data sharing archives for tools and brokers made in "
            f"{time.monotonic() - t0:.0f} s (once per release and JDK, in {d})")
        return archives(version)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


#: JVM flags of the single node's broker (the lab's broker heap and collector).
NODE_JVM = "-Xmx320m -XX:+UseSerialGC"


class SingleNode:
    """A one-node KRaft cluster (broker and controller in one JVM) on free loopback ports,
    its files under ``root``: formatted on creation, started with :meth:`start`. What the
    archives are made from, and what ``bench/jvm_start.py`` times a broker start on."""

    def __init__(self, root: Path, version: str | None = None):
        self.root, self.version = Path(root), version or paths.kafka_version()
        self.tools = kafka.tools(self.version)
        self.log4j = self.root / "log4j.properties"
        self.log4j.write_text(kafka._log4j("stderr", "WARN") if kafka.uses_zookeeper(self.version)
                              else kafka._log4j2("stderr", "WARN"))
        self.port, controller = _free_port(), _free_port()
        self.config = self.root / "server.properties"
        # KRaft combined mode (early access but working in 3.2): it loads what a broker
        # loads to start and serve.
        self.config.write_text(
            "process.roles=broker,controller\nnode.id=1\n"
            f"controller.quorum.voters=1@127.0.0.1:{controller}\n"
            "controller.listener.names=CONTROLLER\n"
            f"listeners=PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{controller}\n"
            "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT\n"
            f"log.dirs={self.root / 'data'}\noffsets.topic.replication.factor=1\n")
        fmt = self.run_tool("kafka-storage", ["format", "--cluster-id", "MkU3OEVBNTcwNTJENDM2Qg",
                                              "--config", str(self.config)])
        if fmt.returncode:
            raise RuntimeError(f"kafka-storage format failed: {fmt.stderr[-300:]}")

    def java(self, jvm: str, main: str, args: list[str], archive: Path | None = None,
             archive_at_exit: Path | None = None) -> list[str]:
        """A JVM command line; ``archive`` maps an archive, ``archive_at_exit`` writes one."""
        return kafka.java_cmd(main, args, jvm, self.log4j, self.version, archive,
                              archive_at_exit)

    def run_tool(self, name: str, args: list[str], **share) -> subprocess.CompletedProcess:
        """A Kafka tool with the lab wrappers' flags, to completion (2 minutes at most)."""
        return subprocess.run(self.java(kafka.TOOL_JVM, self.tools[name], args, **share),
                              cwd=self.root, stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, timeout=120)

    def start(self, stdout=subprocess.DEVNULL, **share) -> subprocess.Popen:
        """The node's JVM, in its own session (so a kill takes all of it)."""
        return subprocess.Popen(self.java(NODE_JVM, kafka.SERVER_MAIN, [str(self.config)], **share),
                                cwd=self.root, stdin=subprocess.DEVNULL, stdout=stdout,
                                stderr=subprocess.STDOUT, start_new_session=True)

    def wait_serving(self, proc: subprocess.Popen, timeout: float = 120,
                     why: Callable[[], str] = lambda: "") -> None:
        """Until the broker port accepts connections; RuntimeError if the JVM exits first or
        ``timeout`` passes (``why()`` is added to the message)."""
        deadline = time.monotonic() + timeout
        while not port_open("127.0.0.1", self.port, 0.3):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the single-node broker did not start: " + why())
            time.sleep(0.05)

    @staticmethod
    def stop(proc: subprocess.Popen, grace: float = 0) -> None:
        """SIGTERM and ``grace`` seconds for a clean exit (an archive is written then), else
        (or with no grace) SIGKILL to the whole session."""
        if grace and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(grace)
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


def _build(version: str, into: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="tr4947-cds-") as tmp:
        node = SingleNode(Path(tmp), version)
        parts = {k: node.root / f"{k}.jsa" for k in KINDS}
        with open(node.root / "server.out", "w") as out:
            server = node.start(stdout=out, archive_at_exit=parts["server"])
            try:
                node.wait_serving(server, why=lambda: (node.root / "server.out").read_text()[-300:])
                topics = node.run_tool("kafka-topics", [
                    "--bootstrap-server", f"127.0.0.1:{node.port}", "--create", "--topic", "cds",
                    "--partitions", "1", "--replication-factor", "1"],
                    archive_at_exit=parts["tools"])
                if topics.returncode:
                    raise RuntimeError(f"kafka-topics failed: {topics.stderr[-300:]}")
                # The archive is written as the JVM exits, after a clean shutdown.
                node.stop(server, grace=90)
            finally:
                node.stop(server)
        for kind, part in parts.items():
            # -Xshare:on fails instead of falling back: the archive maps on this JDK.
            check = subprocess.run(
                [kafka.java(), "-Xshare:on", f"-XX:SharedArchiveFile={part}", "-cp",
                 f"{paths.kafka_libs(version)}/*", "-version"], cwd=node.root,
                stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
            if check.returncode or not part.is_file():
                raise RuntimeError(f"the {kind} archive does not map: {check.stderr[-300:]}")
        for kind, part in parts.items():
            os.replace(part, into / f"{kind}.jsa")
