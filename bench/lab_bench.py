"""Lab benchmark: bring-up time, resident memory, producer throughput on DAS and NFS, for
today's lab (hosts of their own on a network, reached over SSH) beside the lab before that
change (commit BASELINE: processes on loopback addresses), both measured in this run.

The NFS volumes are measured twice, on the lab's NFS client layer (tr4947-nfs, FUSE
passthrough where the kernel allows it; the line names the mode that ran) and on bindfs,
the layer the lab used before it, each in a lab of its own brought up in this run; for
each, NFS / DAS producer throughput of that lab and the FUSE server's CPU time per MiB the
NFS brokers wrote (its processes on the NFS brokers' hosts, before and after the run).

Prints figures, asserts nothing; exits 1 if a measurement fails. Each lab runs with a
state directory of its own (today's on 198.19.0.0/16, a test lab's range), so a developer's
lab is not disturbed. Throughput: the TR's client settings (batch.size=1048576,
linger.ms=1, 1 KB records, acks=all) and enough records to get past JIT warm-up
(TR4947_BENCH_RECORDS, default 1,000,000; the TR used 3,000,000).

  .venv/bin/python bench/lab_bench.py [--skip-baseline] [--skip-bindfs]
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
BASELINE = "eb14790"           # the last commit with the loopback lab
RECORDS = int(os.environ.get("TR4947_BENCH_RECORDS", "1000000"))
PROPS = "acks=all batch.size=1048576 linger.ms=1"
FIGURES = {
    "fv_c1": r"bring-up \(ONTAP stand-in \+ fv_c1[^)]*\): ([\d.]+) s",
    "das_nfs": r"bring-up of das \+ nfs[^:]*: ([\d.]+) s",
    "rss": r"resident memory[^:]*: (\d+) MiB",
    "das": r"DAS[^:]*:\s+([\d.]+) MB/s",
    "nfs": r"NFS \([^:]*:\s+([\d.]+) MB/s",
}


def lab_rss(lab) -> float:
    """Sum of the resident memory of the lab's processes: every process in one of its
    network namespaces (hosts' init and sshd, Kafka, the FUSE NFS clients, the stand-ins)
    and the control node's processes that name its state directory."""
    from tr4947.lab import hosts as H
    procs = {p.pid: p for p in H.processes_in([Path("/run/netns") / ns
                                                for ns in lab.net.namespaces()])}
    key = str(lab.root)
    for p in psutil.process_iter(["cmdline"]):
        try:
            if key in " ".join(p.info["cmdline"] or []) or \
                    key in p.environ().get("TR4947_LAB_STATE", ""):
                procs.setdefault(p.pid, p)
        except psutil.Error:
            continue
    total = 0
    for p in procs.values():
        try:
            total += p.memory_info().rss
        except psutil.Error:
            continue
    return total / 2 ** 20


FUSE_SERVERS = ("tr4947-nfs", "bindfs")
RF = 2


def fuse_cpu(lab, cluster: str) -> float:
    """CPU seconds used so far by the FUSE servers on a cluster's broker hosts."""
    from tr4947.lab import hosts as H
    total = 0.0
    for h in lab.inv.cluster(cluster):
        for p in H.processes_in([Path("/run/netns") / lab.net.netns(h.name)]):
            try:
                if p.name() in FUSE_SERVERS:
                    c = p.cpu_times()
                    total += c.user + c.system
            except psutil.Error:
                continue
    return total


def nfs_layer(lab) -> str:
    """The layer an NFS broker's volume is mounted with, as its mount registry says."""
    import json
    h = next(h for h in lab.inv.cluster("nfs") if h.get("nfs_volume"))
    r = lab.exec(h.name, "cat /run/tr4947/nfs-mounts.json")
    return json.loads(r.stdout)[0].get("layer") or "?"


def produce(t, cluster: str, topic: str) -> float:
    client = t.hosts("clients")[0].name
    bs = t.cluster(cluster).bootstrap()
    t.run(f"bin/kafka-topics.sh --bootstrap-server {bs} --create --topic {topic} "
          "--partitions 6 --replication-factor 2", client, check=True, timeout=120)
    r = t.run(f"bin/kafka-producer-perf-test.sh --topic {topic} --num-records {RECORDS} "
              f"--record-size 1024 --throughput -1 --producer-props {PROPS} "
              f"bootstrap.servers={bs}", client, check=True, timeout=1800)
    m = re.findall(r"records/sec \(([\d.]+) MB/sec\)", r.stdout)
    if not m:
        raise RuntimeError(r.output[-1000:])
    return float(m[-1])


def produce_both(tl, out: dict, suffix: str = "") -> None:
    """DAS then NFS producer throughput, the NFS brokers' FUSE CPU and the NFS layer."""
    from tr4947 import targets
    t = targets.open(str(tl.inventory), echo=False)
    try:
        out["das" + suffix] = produce(t, "das", "bench_das")
        cpu0 = fuse_cpu(tl.lab, "nfs")
        out["nfs" + suffix] = produce(t, "nfs", "bench_nfs")
        mib = RECORDS * 1024 * RF / 2 ** 20
        out["cpu" + suffix] = (fuse_cpu(tl.lab, "nfs") - cpu0) * 1000 / mib
        out["layer" + suffix] = nfs_layer(tl.lab)
    finally:
        t.close()


def measure_today() -> dict:
    from tests.lab.conftest import own_lab
    out = {}
    with tempfile.TemporaryDirectory(prefix="tr4947-bench-") as tmp:
        with own_lab(Path(tmp), up=False) as tl:
            t0 = time.monotonic()
            tl.lab.up(["fv_c1"])
            out["fv_c1"] = time.monotonic() - t0
            t0 = time.monotonic()
            tl.lab.up(["das", "nfs"])
            out["das_nfs"] = time.monotonic() - t0
            out["rss"] = lab_rss(tl.lab)
            produce_both(tl, out)
    return out


def measure_bindfs() -> dict:
    """The same DAS and NFS runs on a lab whose NFS mounts use bindfs (the earlier layer)."""
    from tests.lab.conftest import own_lab
    out: dict = {}
    os.environ["TR4947_NFS_LAYER"] = "bindfs"
    try:
        with tempfile.TemporaryDirectory(prefix="tr4947-bench-bindfs-") as tmp:
            with own_lab(Path(tmp), up=False) as tl:
                tl.lab.up(["das", "nfs"])
                produce_both(tl, out)
    finally:
        del os.environ["TR4947_NFS_LAYER"]
    return out


def measure_baseline() -> dict[str, float]:
    """The baseline commit's own bench, from a temporary worktree of it."""
    with tempfile.TemporaryDirectory(prefix="tr4947-baseline-") as tmp:
        wt = Path(tmp) / "wt"
        subprocess.run(["git", "worktree", "add", "-q", "--detach", str(wt), BASELINE],
                       cwd=REPO, check=True)
        try:
            env = {**os.environ, "PYTHONPATH": str(wt / "src")}
            p = subprocess.run([sys.executable, str(wt / "bench" / "lab_bench.py")], cwd=wt,
                               env=env, capture_output=True, text=True, timeout=3600)
            if p.returncode:
                raise RuntimeError(f"baseline bench failed:\n{p.stdout[-1500:]}{p.stderr[-1500:]}")
            figures = {}
            for k, rx in FIGURES.items():
                m = re.search(rx, p.stdout)
                if m:
                    figures[k] = float(m.group(1))
            return figures
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(wt)], cwd=REPO)
            shutil.rmtree(wt, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--skip-baseline", action="store_true",
                    help=f"only today's lab (no worktree of {BASELINE})")
    ap.add_argument("--skip-bindfs", action="store_true",
                    help="no second lab with the NFS volumes on bindfs")
    a = ap.parse_args()
    load = os.getloadavg()
    try:
        now = measure_today()
        bindfs = {} if a.skip_bindfs else measure_bindfs()
        before = {} if a.skip_baseline else measure_baseline()
    except Exception as exc:  # a failed measurement is reported as failed, never as figures
        print(f"FAILED: {exc}")
        return 1
    rows = [("bring-up: ONTAP stand-in + fv_c1 (s)", "fv_c1"),
            ("bring-up: das + nfs on top (s)", "das_nfs"),
            ("resident memory, all lab processes (MiB)", "rss"),
            (f"producer, {RECORDS:,} x 1 KB, RF 2, DAS (MB/s)", "das"),
            (f"producer, {RECORDS:,} x 1 KB, RF 2, NFS (MB/s)", "nfs")]
    print(f"{'lab figure':<48} {'today':>9} {'before':>9} {'ratio':>7}")
    for label, k in rows:
        b = before.get(k)
        print(f"{label:<48} {now[k]:9.1f} " + (f"{b:9.1f} {now[k] / b:7.2f}" if b else
                                               f"{'-':>9} {'-':>7}"))
    print(f"NFS / DAS throughput: today {now['nfs'] / now['das']:.2f}"
          + (f", before {before['nfs'] / before['das']:.2f}" if before.get("das") else ""))
    print(f"\nNFS client layers ({RECORDS:,} x 1 KB, RF {RF}; each with the DAS run of its own lab):")
    print(f"{'layer':<52} {'DAS MB/s':>9} {'NFS MB/s':>9} {'NFS/DAS':>8} {'FUSE CPU ms/MiB':>16}")
    for d, sfx in ((now, ""), (bindfs, "")):
        if not d:
            continue
        print(f"{d['layer' + sfx]:<52} {d['das' + sfx]:9.1f} {d['nfs' + sfx]:9.1f} "
              f"{d['nfs' + sfx] / d['das' + sfx]:8.2f} {d['cpu' + sfx]:16.3f}")
    print(f"machine load (1/5/15 min) at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
          f"at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {os.cpu_count()} CPUs")
    if before.get("fv_c1"):
        slower = max(now["fv_c1"] / before["fv_c1"], now["das_nfs"] / before["das_nfs"])
        print(f"bring-up, slowest ratio today/before: {slower:.2f} (limit 1.25): "
              + ("within" if slower <= 1.25 else "OVER"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
