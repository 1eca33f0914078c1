"""One OMB runner producer (tr4947.omb) beside Kafka's own Java producer (kafka-producer-perf-test).

Why: the runner must not be the bottleneck of a benchmark. One runner producer (one client
with its own connections, as one OMB producer) must publish 1 KB messages at >= 0.95 times
the rate of Kafka's ProducerPerformance with the same settings, to the same cluster, from the
same host.

    .venv/bin/python bench/omb_vs_perftest.py                 # own single-node KRaft broker
    .venv/bin/python bench/omb_vs_perftest.py --bootstrap 127.0.1.1:9092,127.0.1.2:9092 --rf 2

How, for each of --rounds rounds, perf-test first, then the runner (alternating, so a busy
stretch of a shared machine hits both):

- Same settings: acks, batch.size, linger.ms, enable.idempotence given to both explicitly;
  record size, partitions, no keys; everything else each client's default (the runner's
  driver translation sets Java's defaults where librdkafka's differ, e.g. buffer.memory).
  Both send as fast as they can (perf-test --throughput -1, runner producerRate 10,000,000).
- Same window: each runs --warmup s, then --duration s measured. perf-test's figure is the
  mean of its 5 s reports that started after the warm-up (it runs with more records than it
  can send and is stopped when the window is over); the runner's is OMB's, the mean of its
  benchmark-phase publishRate samples (--period s each). Both count acknowledged messages.
- The runner's count is checked against the broker's high watermarks.
- Load: CPU time of each client per message over its measured window (the whole process, and
  its busiest thread: the one that caps a client when the host, not the cluster, is the
  limit), the broker's CPU per MB it took (what a client's request sizes cost it), interrupt
  time (loopback TCP), and the CPU other processes on the machine used meanwhile. On a
  shared host where the broker gets a fraction of a core, the rates compare how far each
  client's traffic goes on that fraction; the CPU figures say what each client costs.
"""
from __future__ import annotations

import argparse
import multiprocessing
import os
import queue
import re
import signal
import statistics
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.minikafka import MiniKafka  # noqa: E402  (the runner's test broker)
from tr4947.lab import kafka as lab_kafka  # noqa: E402
from tr4947.omb import run  # noqa: E402

WINDOW_RE = re.compile(r"^(\d+) records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\)")
PERF_MAIN = "org.apache.kafka.tools.ProducerPerformance"
HZ = os.sysconf("SC_CLK_TCK")
REQUIRED = 0.95


# --- CPU accounting from /proc ---------------------------------------------------------------
def _stat(path: str) -> list[str] | None:
    try:
        with open(path) as f:
            return f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None


def machine_busy() -> tuple[float, float]:
    """CPU seconds all cores spent busy since boot, and of those in interrupts (loopback TCP
    is processed there, for whichever process sends: no process is charged for it)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + v[4]
    return (sum(v[:8]) - idle) / HZ, (v[5] + v[6]) / HZ


def tree_cpu(root: int) -> dict[int, float]:
    """CPU seconds of ``root`` and every process below it (broker, clients, workers)."""
    parent, cpu = {}, {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            f = _stat(f"/proc/{d}/stat")
            if f:
                parent[int(d)] = int(f[1])
                cpu[int(d)] = (int(f[11]) + int(f[12])) / HZ
    out, todo = {}, [root]
    while todo:
        p = todo.pop()
        if p in cpu:
            out[p] = cpu[p]
        todo += [c for c, pp in parent.items() if pp == p]
    return out


def threads_cpu(pid: int) -> dict[str, float]:
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        f = _stat(f"/proc/{pid}/task/{tid}/stat")
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as c:
                name = c.read().strip()
        except OSError:
            continue
        if f:
            out[f"{name} ({tid})"] = (int(f[11]) + int(f[12])) / HZ
    return out


class Snap:
    """Machine, process-tree and client-thread CPU at one instant."""

    def __init__(self, client: int | None):
        self.t = time.monotonic()
        self.busy, self.irq = machine_busy()
        self.tree = tree_cpu(os.getpid())
        self.client = client
        self.threads = threads_cpu(client) if client else {}


def load(a: Snap, b: Snap, messages: float, broker: int | None, record_size: int) -> dict:
    """CPU between two snapshots: per message for the client, per MB for the broker, in
    cores for interrupts and for every process that is not this benchmark's."""
    dt = b.t - a.t
    d = {p: b.tree[p] - a.tree.get(p, 0.0) for p in b.tree}
    th = {k: v - a.threads.get(k, 0.0) for k, v in b.threads.items()}
    top = max(th, key=th.get) if th else "?"
    irq = b.irq - a.irq
    mb = messages * record_size / 1024 / 1024
    return {"client_us": d.get(b.client, 0.0) / messages * 1e6 if messages else 0.0,
            "thread": top.rsplit(" (", 1)[0],
            "thread_us": th.get(top, 0.0) / messages * 1e6 if messages else 0.0,
            "broker_cores": d.get(broker, 0.0) / dt if broker else float("nan"),
            "broker_ms_mb": d.get(broker, 0.0) / mb * 1e3 if broker and mb else float("nan"),
            "irq_cores": irq / dt,
            "others_cores": max(0.0, (b.busy - a.busy) - irq - sum(d.values())) / dt,
            "loadavg": os.getloadavg()[0]}


# --- the two clients ---------------------------------------------------------------------------
def perf_test(bootstrap: str, topic: str, args, props: dict, log4j: Path, broker) -> dict:
    """ProducerPerformance for warm-up + duration, its 5 s reports read as they come."""
    cmd = lab_kafka.java_cmd(PERF_MAIN, [
        "--topic", topic, "--num-records", str(10 ** 10), "--record-size", str(args.record_size),
        "--throughput", "-1", "--producer-props", f"bootstrap.servers={bootstrap}",
        *[f"{k}={v}" for k, v in props.items()]], args.java_opts, log4j)
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    lines: queue.Queue = queue.Queue()
    errors: list[str] = []   # stderr's tail, read as it comes so the JVM never blocks on it

    def read():
        for line in proc.stdout:
            lines.put((time.monotonic(), line))
        lines.put((time.monotonic(), None))

    def read_errors():
        for line in proc.stderr:
            errors[:] = (errors + [line])[-40:]
    threading.Thread(target=read, daemon=True).start()
    threading.Thread(target=read_errors, daemon=True).start()
    windows = []   # (end, start, records, rate, snapshot at the end)
    start_snap = Snap(proc.pid)
    try:
        while True:
            try:
                t, line = lines.get(timeout=60)
            except queue.Empty:
                raise RuntimeError("ProducerPerformance reported nothing for 60 s:\n"
                                   + "".join(errors)) from None
            if line is None:
                raise RuntimeError(f"ProducerPerformance ended early (exit {proc.wait()}):\n"
                                   + "".join(errors))
            m = WINDOW_RE.match(line)
            if not m:
                continue
            records, rate = int(m.group(1)), float(m.group(2))
            end = t - t0
            windows.append((end, end - records / rate if rate else end, records, rate,
                            Snap(proc.pid)))
            if end >= args.warmup + args.duration:
                break
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)   # its own session: only this JVM
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
    measured = [w for w in windows if w[1] >= args.warmup - 0.5]
    if not measured:
        raise RuntimeError(f"no ProducerPerformance report after the warm-up: {windows}")
    before = windows[windows.index(measured[0]) - 1][4] if windows.index(measured[0]) else start_snap
    mbs = statistics.mean(w[3] for w in measured) * args.record_size / 1024 / 1024
    return {"mbs": mbs, "windows": [round(w[3] * args.record_size / 1024 / 1024, 1) for w in windows],
            "n_measured": len(measured),
            **load(before, measured[-1][4], sum(w[2] for w in measured), broker,
                   args.record_size)}


def runner(bootstrap: str, args, props: dict, broker) -> dict:
    workload = {"name": "bench producer-only", "topics": 1, "partitionsPerTopic": args.partitions,
                "messageSize": args.record_size, "useRandomizedPayloads": True,
                "randomBytesRatio": 1.0, "randomizedPayloadPoolSize": 100,
                "subscriptionsPerTopic": 0, "consumerPerSubscription": 0,
                "producersPerTopic": 1, "producerRate": 10_000_000,
                "consumerBacklogSizeGB": 0, "testDurationMinutes": 1, "warmupDurationMinutes": 1}
    driver = {"name": "Kafka",
              "driverClass": "io.openmessaging.benchmark.driver.kafka.KafkaBenchmarkDriver",
              "replicationFactor": args.rf, "reset": True, "topicConfig": "",
              "commonConfig": f"bootstrap.servers={bootstrap}\n",
              "producerConfig": "".join(f"{k}={v}\n" for k, v in props.items()),
              "consumerConfig": "auto.offset.reset=earliest\n"}
    snaps = []   # (sample, snapshot) at each reporting period's end

    def on_event(e):
        if e["event"] == "sample":
            worker = next((p.pid for p in multiprocessing.active_children()
                           if p.name.startswith("omb-producer")), None)
            snaps.append((e, Snap(worker)))
    res = run(workload, driver, bootstrap, output=False, echo=args.verbose, progress=on_event,
              duration_s=args.duration, warmup_s=args.warmup,
              stats_period_s=args.period, producer_processes=1,
              drain_at_end=True)  # in-flight sends complete at the end: counts exact
    sent = res.totals["totalMessagesSent"]
    held = broker_count(bootstrap, res.lab_run["topics"])
    delete_topics(bootstrap, res.lab_run["topics"])
    if held != sent:
        raise RuntimeError(f"runner counted {sent} messages sent, the broker holds {held}")
    bench = [i for i, (e, _) in enumerate(snaps) if e["recorded"]]
    if not bench or bench[0] == 0:
        raise RuntimeError("the runner reported no benchmark period after a warm-up period")
    messages = sum(snaps[i][0]["publishRate"] * (snaps[i][0]["t"] - snaps[i - 1][0]["t"])
                   for i in bench)
    return {"mbs": res.mean("publishRate") * args.record_size / 1024 / 1024,
            "windows": [round(e["publishMBs"], 1) for e, _ in snaps], "n_measured": len(bench),
            "client": res.lab_run["client"],
            **load(snaps[bench[0] - 1][1], snaps[bench[-1]][1], messages, broker,
                   args.record_size)}


# --- the cluster -------------------------------------------------------------------------------
def broker_count(bootstrap: str, topics: list[str]) -> int:
    """Messages the broker holds for these topics (sum of partition high watermarks): the
    runner's own count is checked against it, so a counting error cannot inflate its MB/s."""
    from confluent_kafka import Consumer, TopicPartition
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "omb-bench-count", "log_level": 3})
    try:
        md = c.list_topics(timeout=30)
        n = 0
        for t in topics:
            for p in md.topics[t].partitions:
                # The high watermark counts every message ever appended (retention may have
                # deleted old segments since: the low watermark moves, this does not).
                _lo, hi = c.get_watermark_offsets(TopicPartition(t, p), timeout=30)
                n += hi
        return n
    finally:
        c.close()


def create_topic(bootstrap: str, topic: str, partitions: int, rf: int) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic
    a = AdminClient({"bootstrap.servers": bootstrap, "log_level": 3})
    a.create_topics([NewTopic(topic, partitions, rf)])[topic].result(60)


def delete_topics(bootstrap: str, topics: list[str]) -> None:
    """Drop a measured topic at once: its data (still dirty in the page cache) must not be
    written back while the other client is being measured."""
    from confluent_kafka.admin import AdminClient
    a = AdminClient({"bootstrap.servers": bootstrap, "log_level": 3})
    for f in a.delete_topics(topics, operation_timeout=60).values():
        f.result(60)


def bench(bootstrap: str, args, broker: int | None) -> dict:
    props = {"acks": args.acks, "batch.size": args.batch_size, "linger.ms": args.linger_ms,
             "enable.idempotence": args.idempotence}
    log4j = Path("/tmp") / f"omb-bench-log4j2-{uuid.uuid4().hex[:6]}.properties"
    log4j.write_text("status = warn\nappender.e.type = Console\nappender.e.name = E\n"
                     "appender.e.target = SYSTEM_ERR\nappender.e.layout.type = PatternLayout\n"
                     "appender.e.layout.pattern = %p %m%n\nrootLogger.level = WARN\n"
                     "rootLogger.appenderRef.e.ref = E\n")
    perfs, ombs = [], []
    t0 = time.monotonic()
    try:
        for rnd in range(args.rounds):
            topic = f"perftest-{uuid.uuid4().hex[:8]}"
            create_topic(bootstrap, topic, args.partitions, args.rf)
            try:
                perfs.append(perf_test(bootstrap, topic, args, props, log4j, broker))
            finally:
                delete_topics(bootstrap, [topic])
            ombs.append(runner(bootstrap, args, props, broker))
            for name, r in (("perf-test", perfs[-1]), ("runner   ", ombs[-1])):
                print(f"round {rnd + 1} {name} {r['mbs']:6.1f} MB/s | client CPU "
                      f"{r['client_us']:.2f} us/msg, busiest thread {r['thread']!r} "
                      f"{r['thread_us']:.2f} us/msg | broker {r['broker_cores']:.2f} cores, "
                      f"{r['broker_ms_mb']:.2f} ms/MB | interrupts {r['irq_cores']:.2f} cores | "
                      f"other processes {r['others_cores']:.2f} cores | load avg "
                      f"{r['loadavg']:.2f} | {r['n_measured']} windows of "
                      f"{r['windows']} MB/s measured (the last ones)", flush=True)
    finally:
        log4j.unlink(missing_ok=True)
    return {"perf": perfs, "omb": ombs, "wall": time.monotonic() - t0, "props": props}


def _spread(xs: list[float], fmt: str = ".1f") -> str:
    return (f"median {statistics.median(xs):{fmt}}, range {min(xs):{fmt}}-{max(xs):{fmt}}, "
            f"n={len(xs)}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bootstrap", help="existing cluster (default: start a single-node KRaft broker)")
    p.add_argument("--rf", type=int, default=1, help="replication factor (default 1)")
    p.add_argument("--partitions", type=int, default=6)
    p.add_argument("--record-size", type=int, default=1024)
    p.add_argument("--acks", default="all")
    p.add_argument("--batch-size", type=int, default=1048576)
    p.add_argument("--linger-ms", type=int, default=1)
    p.add_argument("--idempotence", choices=("true", "false"), default="true",
                   help="enable.idempotence for both (default true: the Java client's default)")
    p.add_argument("--java-opts", default=lab_kafka.PERF_JVM,
                   help="perf-test JVM options (default: the lab's kafka-producer-perf-test)")
    # 15 s: on a busy 2-core host perf-test's JIT takes 10-15 s to reach its steady rate.
    p.add_argument("--warmup", type=float, default=15, help="warm-up seconds (both)")
    p.add_argument("--duration", type=float, default=30, help="measured seconds (both)")
    p.add_argument("--period", type=float, default=5,
                   help="runner reporting period (perf-test reports every 5 s)")
    p.add_argument("--rounds", type=int, default=3, help="alternating perf-test/runner rounds")
    p.add_argument("--verbose", action="store_true", help="show the runner's OMB log lines")
    args = p.parse_args()
    if args.rounds < 1 or args.duration < 10 or args.warmup < 0:
        p.error("--rounds >= 1, --duration >= 10 (two 5 s perf-test reports), --warmup >= 0")

    load0 = os.getloadavg()
    print(f"host: {os.cpu_count()} CPUs, load average {load0[0]:.2f} {load0[1]:.2f} "
          f"{load0[2]:.2f} (1, 5, 15 min) at start", flush=True)
    if args.bootstrap:
        r = bench(args.bootstrap, args, None)
        cluster = f"{args.bootstrap} (given), replication factor {args.rf}"
    else:
        with MiniKafka(extra_props={"log.retention.bytes": 1 << 30,
                                    "log.segment.bytes": 256 << 20}) as k:
            r = bench(k.bootstrap, args, k.proc.pid)
        cluster = "one single-node KRaft broker on this host (tests/support/minikafka.py)"
    perf = [x["mbs"] for x in r["perf"]]
    omb = [x["mbs"] for x in r["omb"]]
    ratio = statistics.median(omb) / statistics.median(perf)
    pairs = [o / q for o, q in zip(omb, perf)]
    mps = 1024 * 1024 / args.record_size / 1000
    load1 = os.getloadavg()
    print(f"\nsettings (both clients): {args.record_size} B records, {args.partitions} partitions, "
          f"no keys, " + ", ".join(f"{k}={v}" for k, v in r["props"].items())
          + f"; cluster: {cluster}")
    print(f"  perf-test: {PERF_MAIN} --throughput -1, JVM {args.java_opts}")
    print(f"  runner: one OMB producer (producersPerTopic 1, one process), producerRate "
          f"10,000,000, {r['omb'][0]['client']}")
    print(f"  window: {args.warmup:g} s warm-up then {args.duration:g} s measured, each; "
          f"{args.rounds} alternating rounds, {r['wall']:.0f} s in all")
    for name, xs in (("kafka-producer-perf-test", r["perf"]), ("tr4947.omb runner (1 producer)", r["omb"])):
        v = [x["mbs"] for x in xs]
        print(f"{name:31s}: {statistics.median(v):6.1f} MB/s = "
              f"{statistics.median(v) * mps:5.0f}k msg/s ({_spread(v)})")
        print(f"{'':31s}  client CPU {_spread([x['client_us'] for x in xs], '.2f')} us/msg; "
              f"busiest thread ({xs[0]['thread']!r}) {_spread([x['thread_us'] for x in xs], '.2f')} "
              f"us/msg")
        print(f"{'':31s}  broker CPU {_spread([x['broker_ms_mb'] for x in xs], '.2f')} ms/MB "
              f"({_spread([x['broker_cores'] for x in xs], '.2f')} cores)")
        print(f"{'':31s}  other processes {_spread([x['others_cores'] for x in xs], '.2f')} "
              f"cores; interrupts {_spread([x['irq_cores'] for x in xs], '.2f')} cores")
    print(f"machine load: load average {load0[0]:.2f} at start, {load1[0]:.2f} at end; other "
          f"processes used {min(x['others_cores'] for x in r['perf'] + r['omb']):.2f}-"
          f"{max(x['others_cores'] for x in r['perf'] + r['omb']):.2f} of {os.cpu_count()} "
          f"cores during the measured windows")
    print(f"ratio runner/perf-test    : {ratio:.2f} (median over median; per round "
          f"{', '.join(f'{x:.2f}' for x in pairs)}); requirement >= {REQUIRED}: "
          f"{'PASS' if ratio >= REQUIRED else 'FAIL'}")
    return 0 if ratio >= REQUIRED else 1


if __name__ == "__main__":
    sys.exit(main())
