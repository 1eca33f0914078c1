"""Benchmark: how long a Kafka JVM takes to start, with and without the lab's class-data
sharing archives (tr4947.lab.cds), measured in this run on the control node.

Tool: `kafka-storage random-uuid` (a whole JVM start for one line of output), with the
wrappers' flags. Broker: a single-node KRaft broker until its port accepts connections.
Both alternate with and without the archive, so a slower stretch of the machine hits both.
Prints wall and CPU seconds (median of the runs) and the ratio; asserts nothing; exits 1 if
a measurement fails.

  .venv/bin/python bench/jvm_start.py [--tools N] [--brokers N]
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from tr4947 import paths  # noqa: E402
from tr4947.lab import cds, kafka  # noqa: E402


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def tool(archive: Path | None) -> tuple[float, float]:
    cmd = kafka.java_cmd(kafka.tools(paths.kafka_version())["kafka-storage"], ["random-uuid"],
                         kafka.TOOL_JVM, archive=archive)
    c0, t0 = _children_cpu(), time.monotonic()
    subprocess.run(cmd, check=True, capture_output=True)
    return time.monotonic() - t0, _children_cpu() - c0


def broker(archive: Path | None) -> tuple[float, float]:
    with tempfile.TemporaryDirectory(prefix="tr4947-jvm-bench-") as tmp:
        node = cds.SingleNode(Path(tmp))
        t0 = time.monotonic()
        p = node.start(archive=archive)
        try:
            node.wait_serving(p)
            wall = time.monotonic() - t0
            with open(f"/proc/{p.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
            return wall, cpu
        finally:
            node.stop(p)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tools", type=int, default=7, help="tool starts per variant")
    ap.add_argument("--brokers", type=int, default=3, help="broker starts per variant")
    a = ap.parse_args()
    try:
        arch = cds.ensure(say=print)
        if len(arch) != len(cds.KINDS):
            print("FAILED: no class-data sharing archives were made")
            return 1
        rows = []
        for what, fn, n, archive in (("kafka-storage random-uuid (tool)", tool, a.tools, arch["tools"]),
                                     ("broker until its port is open", broker, a.brokers, arch["server"])):
            got = {True: [], False: []}
            for _ in range(n):
                for use in (True, False):
                    got[use].append(fn(archive if use else None))
            rows.append((what, n, got))
    except Exception as exc:  # reported as a failure, never as figures
        print(f"FAILED: {exc}")
        return 1
    print(f"{'JVM start (median of n)':<36} {'n':>3} {'with CDS':>14} {'without':>14} {'ratio':>6}")
    for what, n, got in rows:
        w = {k: statistics.median(x[0] for x in v) for k, v in got.items()}
        c = {k: statistics.median(x[1] for x in v) for k, v in got.items()}
        print(f"{what:<36} {n:3d} {w[True]:5.2f} s wall  {w[False]:5.2f} s wall  {w[True] / w[False]:6.2f}")
        print(f"{'':<36} {'':>3} {c[True]:5.2f} s CPU   {c[False]:5.2f} s CPU   {c[True] / c[False]:6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
