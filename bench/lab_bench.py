"""Lab benchmark: bring-up time, resident memory, producer throughput NFS vs DAS.

Prints figures, asserts nothing. Runs in its own LAB_STATE and on moved loopback addresses,
so a running dev lab is not disturbed. Throughput uses the TR's client settings
(batch.size=1048576, linger.ms=1, 1 KB records, acks=all) and enough records to get past JIT
warm-up (TR4947_BENCH_RECORDS, default 1,000,000; the TR used 3,000,000).
"""
from __future__ import annotations

import os
import re
import sys
import tempfile
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

RECORDS = int(os.environ.get("TR4947_BENCH_RECORDS", "1000000"))
PROPS = {"batch.size": 1048576, "linger.ms": 1, "acks": "all"}


def rss_mb(lab) -> float:
    from tr4947.lab.lab import _lab_processes
    total = 0
    for p in _lab_processes(lab.root):
        try:
            total += p.memory_info().rss
        except psutil.Error:
            pass
    return total / 2 ** 20


def produce(lab, cluster: str, topic: str) -> float:
    from tr4947.lab import kafka
    brokers = [n for n in lab.nodes(cluster) if not n.is_controller and not n.standby]
    bs = kafka.bootstrap_servers(brokers)
    kafka.topics(bs, "--create", "--topic", topic, "--partitions", "6",
                 "--replication-factor", "2", root=lab.root, timeout=120).check_returncode()
    cp = kafka.producer_perf(bs, topic, RECORDS, 1024, PROPS, root=lab.root, timeout=1800)
    m = re.findall(r"records/sec \(([\d.]+) MB/sec\)", cp.stdout)
    if cp.returncode or not m:
        raise RuntimeError(cp.stdout[-1000:] + cp.stderr[-1000:])
    return float(m[-1])


def main() -> int:
    base = Path(tempfile.mkdtemp(prefix="tr4947-bench-"))
    root = base / "state"
    os.environ["TR4947_LAB_STATE"] = str(root)
    from lab.conftest import remapped_inventory
    from tr4947.lab.lab import Lab
    inv = remapped_inventory(base / "inventory", offset=100)
    lab = Lab(inv, root=root, echo=None)
    try:
        t0 = time.monotonic()
        lab.up(["fv_c1"])
        up_fv = time.monotonic() - t0
        print(f"lab bring-up (ONTAP stand-in + fv_c1: 1 controller, 4 brokers): {up_fv:.1f} s")
        t0 = time.monotonic()
        lab.up(["das", "nfs"])
        print(f"bring-up of das + nfs (2 controllers, 6 brokers): {time.monotonic() - t0:.1f} s")
        print(f"resident memory of the lab (sum RSS, 3 controllers, 10 brokers, sshd, bindfs): "
              f"{rss_mb(lab):.0f} MiB")
        das = produce(lab, "das", "bench_das")
        nfs = produce(lab, "nfs", "bench_nfs")
        print(f"producer throughput, {RECORDS} x 1 KB, RF 2, acks=all, batch.size=1 MiB, "
              f"linger.ms=1:")
        print(f"  DAS (plain directories):          {das:7.1f} MB/s")
        print(f"  NFS (lab NFSv4.1 bindfs mounts):  {nfs:7.1f} MB/s")
        print(f"  NFS / DAS:                        {nfs / das:7.2f}")
    finally:
        lab.down()
        import shutil
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
