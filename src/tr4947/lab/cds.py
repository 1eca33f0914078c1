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


def _java(version: str, jvm: str, main: str, args: list[str], log4j: Path,
          archive_at_exit: Path | None = None) -> list[str]:
    libs = paths.kafka_libs(version)
    log_flag = ("-Dlog4j.configuration=file:" if kafka.uses_zookeeper(version)
                else "-Dlog4j2.configurationFile=") + str(log4j)
    dump = [f"-XX:ArchiveClassesAtExit={archive_at_exit}"] if archive_at_exit else []
    return [kafka.java(), *jvm.split(), *dump, log_flag, "-cp", f"{libs}/*", main, *args]


def _build(version: str, into: Path) -> None:
    tools = kafka.tools(version)
    with tempfile.TemporaryDirectory(prefix="tr4947-cds-") as tmp:
        tmp = Path(tmp)
        log4j = tmp / "log4j.properties"
        log4j.write_text(kafka._log4j("stderr", "WARN") if kafka.uses_zookeeper(version)
                         else kafka._log4j2("stderr", "WARN"))
        broker, controller = _free_port(), _free_port()
        config = tmp / "server.properties"
        # One node that is broker and controller (KRaft; early access but working in 3.2):
        # it loads what a broker loads to start and serve.
        config.write_text(
            "process.roles=broker,controller\nnode.id=1\n"
            f"controller.quorum.voters=1@127.0.0.1:{controller}\n"
            "controller.listener.names=CONTROLLER\n"
            f"listeners=PLAINTEXT://127.0.0.1:{broker},CONTROLLER://127.0.0.1:{controller}\n"
            "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT\n"
            f"log.dirs={tmp / 'data'}\noffsets.topic.replication.factor=1\n")
        run = dict(cwd=tmp, stdin=subprocess.DEVNULL, capture_output=True, text=True)
        fmt = subprocess.run(_java(version, kafka.TOOL_JVM, tools["kafka-storage"],
                                   ["format", "--cluster-id", "MkU3OEVBNTcwNTJENDM2Qg",
                                    "--config", str(config)], log4j), timeout=120, **run)
        if fmt.returncode:
            raise RuntimeError(f"kafka-storage format failed: {fmt.stderr[-300:]}")
        parts = {k: tmp / f"{k}.jsa" for k in KINDS}
        out = open(tmp / "server.out", "w")
        server = subprocess.Popen(
            _java(version, "-Xmx320m -XX:+UseSerialGC", kafka.SERVER_MAIN, [str(config)],
                  log4j, parts["server"]), cwd=tmp, stdin=subprocess.DEVNULL, stdout=out,
            stderr=subprocess.STDOUT, start_new_session=True)
        try:
            deadline = time.monotonic() + 120
            while not _serving(broker):
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the archive's broker did not start: "
                                       + (tmp / "server.out").read_text()[-300:])
                time.sleep(0.2)
            topics = subprocess.run(
                _java(version, kafka.TOOL_JVM, tools["kafka-topics"],
                      ["--bootstrap-server", f"127.0.0.1:{broker}", "--create", "--topic",
                       "cds", "--partitions", "1", "--replication-factor", "1"], log4j,
                      parts["tools"]), timeout=120, **run)
            if topics.returncode:
                raise RuntimeError(f"kafka-topics failed: {topics.stderr[-300:]}")
            # The archive is written as the JVM exits, after a clean shutdown.
            server.send_signal(signal.SIGTERM)
            server.wait(90)
        finally:
            if server.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(server.pid, signal.SIGKILL)
                server.wait(10)
            out.close()
        for kind, part in parts.items():
            # -Xshare:on fails instead of falling back: the archive maps on this JDK.
            check = subprocess.run(
                [kafka.java(), "-Xshare:on", f"-XX:SharedArchiveFile={part}", "-cp",
                 f"{paths.kafka_libs(version)}/*", "-version"], timeout=60, **run)
            if check.returncode or not part.is_file():
                raise RuntimeError(f"the {kind} archive does not map: {check.stderr[-300:]}")
        for kind, part in parts.items():
            os.replace(part, into / f"{kind}.jsa")


def _serving(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.3):
        return True
    return False
