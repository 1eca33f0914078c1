"""Lab brokers that run the ``server.properties`` a procedure placed on their host.

The performance chapters configure brokers the TR's way: its ``server.properties`` (six
``log.dirs`` on NFS mounts, larger thread pools) is placed on each broker host at the TR's
path. A lab host's absolute paths live under its root directory (LabTarget maps them in
commands), so the file the broker JVM reads is that file with its directory settings mapped
the same way; everything else is used as written. KRaft also needs every log dir formatted
with the cluster's id before the first start, which the TR's ZooKeeper-era brokers did not.

Processes are recorded like any lab node's, so ``lab down`` (and Lab.stop_node) stop them.
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

from .. import broker_config
from . import kafka
from .lab import Lab, LabError, _record

#: Settings that name directories of the broker's host.
DIR_KEYS = ("log.dirs", "log.dir", "metadata.log.dir")


def effective_properties(text: str, host_dir: Path) -> str:
    """``text`` with the host's absolute directories mapped under ``host_dir``."""
    k = broker_config.keys(text)
    changes = {}
    for key in DIR_KEYS:
        if key in k:
            changes[key] = ",".join(
                str(kafka.on_host(host_dir, d.strip())) if d.strip().startswith("/") else d.strip()
                for d in k[key].split(",") if d.strip())
    return broker_config.set_properties(text, changes)


def _check_address(text: str, node: kafka.Node) -> None:
    listeners = broker_config.keys(text).get("listeners", "")
    m = re.search(r"//([^:/,]*):(\d+)", listeners)
    if m and (m.group(1), int(m.group(2))) != (node.address, node.port):
        raise LabError(f"{node.name}: its server.properties listens on {m.group(1)}:{m.group(2)}, "
                       f"but the host is {node.address}:{node.port} in the inventory "
                       "(a file copied from another broker without changing listeners?)")


def format_dirs(node: kafka.Node, properties: Path, timeout: float = 120) -> None:
    cmd = kafka.java_cmd("kafka.tools.StorageTool",
                         ["format", "-t", kafka.cluster_id(node.cluster), "-c", str(properties),
                          "--ignore-formatted"], kafka.TOOL_JVM, kafka.tools_log4j2(node.root))
    cp = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if cp.returncode != 0:
        raise LabError(f"kafka-storage format failed for {node.name} (exit {cp.returncode}): "
                       f"{(cp.stdout + cp.stderr)[-2000:]}")


def start(lab: Lab, name: str, properties: str, heap: str | None = None,
          timeout: float = 240) -> kafka.Node:
    """Start broker ``name`` with the server.properties at host path ``properties``."""
    node = kafka.Node(lab.inv.host(name), lab.root)
    if node.is_controller:
        raise LabError(f"{name} is a controller; start it with Lab.start_node")
    rec = lab.procs().get(name)
    if rec and rec.alive():
        raise LabError(f"{name} is already running (pid {rec.pid}); stop it first")
    src = kafka.on_host(node.dir, properties)
    if not src.is_file():
        raise LabError(f"{name}: no {properties} on the host (place the broker's "
                       "server.properties there first)")
    text = src.read_text()
    _check_address(text, node)
    if heap:
        node.host.vars["kafka_heap_opts"] = heap
    node.config_dir.mkdir(parents=True, exist_ok=True)
    node.logs_dir.mkdir(parents=True, exist_ok=True)
    node.properties_file.write_text(
        f"# {properties} of lab host {name}, with its directories mapped under the host's "
        "root (tr4947.lab.brokers).\n" + effective_properties(text, node.dir))
    (node.config_dir / "log4j2.properties").write_text(kafka.log4j2_properties(node.server_log))
    format_dirs(node, node.properties_file)
    p = kafka.spawn(node)
    proc = _record(p, node.name, node.role, address=node.address, port=node.port,
                   cluster=node.cluster)
    lab._add_proc(proc)
    kafka.wait_ready(node, proc.alive, timeout=timeout, bootstrap=node.bootstrap)
    return node
