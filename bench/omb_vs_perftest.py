"""Producer throughput: the lab OMB runner (tr4947.omb) vs Kafka's own ProducerPerformance.

Why: the runner must not be the bottleneck of a lab benchmark. Both produce to the same
broker(s), in the same run, with the same client settings (acks, batch.size, linger.ms,
record size, partitions); the runner must reach >= 90% of perf-test's MB/s.

    .venv/bin/python bench/omb_vs_perftest.py                 # own single-node KRaft broker
    .venv/bin/python bench/omb_vs_perftest.py --bootstrap 127.0.1.1:9092,127.0.1.2:9092 --rf 2

perf-test is a single JVM over --records (DESIGN.md: ~3M records of 1 KB to be past JIT
warm-up). The runner produces with a producerRate far above what the cluster takes (as the
TR's producerRate: 1000000) for warm-up + duration; its figure is OMB's: the mean of the
benchmark phase's publishRate samples (warm-up excluded, as OMB excludes it). The runner's
average over its whole run, warm-up included, is printed too.
"""
from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.minikafka import MiniKafka  # noqa: E402  (the runner's test broker)
from tr4947.lab import kafka  # noqa: E402
from tr4947.omb import run  # noqa: E402

PERF_RE = re.compile(r"([\d.]+) records/sec \(([\d.]+) MB/sec\)")


def perf_test(bootstrap: str, topic: str, records: int, size: int, props: dict, log4j: Path) -> float:
    cmd = kafka.java_cmd(
        "org.apache.kafka.tools.ProducerPerformance",
        ["--topic", topic, "--num-records", str(records), "--record-size", str(size),
         "--throughput", "-1", "--producer-props", f"bootstrap.servers={bootstrap}",
         *[f"{k}={v}" for k, v in props.items()]], kafka.PERF_JVM, log4j)
    print("$", " ".join(cmd[cmd.index("org.apache.kafka.tools.ProducerPerformance"):]), flush=True)
    cp = subprocess.run(cmd, capture_output=True, text=True, timeout=900, start_new_session=True)
    last = [l for l in cp.stdout.splitlines() if "records sent" in l]
    if cp.returncode != 0 or not last:
        raise RuntimeError(f"ProducerPerformance failed:\n{cp.stdout[-2000:]}\n{cp.stderr[-2000:]}")
    print(last[-1], flush=True)
    return float(PERF_RE.search(last[-1]).group(2))


def broker_count(bootstrap: str, topics: list[str]) -> int:
    """Messages the broker holds for these topics (sum of partition high watermarks): the
    runner's own count is checked against it, so a counting error cannot inflate its MB/s."""
    from confluent_kafka import Consumer, TopicPartition
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "omb-bench-count"})
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
    a = AdminClient({"bootstrap.servers": bootstrap})
    a.create_topics([NewTopic(topic, partitions, rf)])[topic].result(60)


def delete_topics(bootstrap: str, topics: list[str]) -> None:
    """Drop a measured topic at once: its data (still dirty in the page cache) must not be
    written back while the other client is being measured."""
    from confluent_kafka.admin import AdminClient
    a = AdminClient({"bootstrap.servers": bootstrap})
    for f in a.delete_topics(topics, operation_timeout=60).values():
        f.result(60)


def bench(bootstrap: str, args) -> dict:
    props = {"acks": args.acks, "batch.size": args.batch_size, "linger.ms": args.linger_ms}
    log4j = Path("/tmp") / f"omb-bench-log4j2-{uuid.uuid4().hex[:6]}.properties"
    log4j.write_text("status = warn\nappender.e.type = Console\nappender.e.name = E\n"
                     "appender.e.target = SYSTEM_ERR\nappender.e.layout.type = PatternLayout\n"
                     "appender.e.layout.pattern = %p %m%n\nrootLogger.level = WARN\n"
                     "rootLogger.appenderRef.e.ref = E\n")
    def perf_once() -> float:
        topic = f"perftest-{uuid.uuid4().hex[:8]}"
        create_topic(bootstrap, topic, args.partitions, args.rf)
        try:
            return perf_test(bootstrap, topic, args.records, args.record_size, props, log4j)
        finally:
            delete_topics(bootstrap, [topic])


    workload = {"name": "bench producer-only", "topics": 1, "partitionsPerTopic": args.partitions,
                "messageSize": args.record_size, "useRandomizedPayloads": True,
                "randomBytesRatio": 1.0, "randomizedPayloadPoolSize": 100,
                "subscriptionsPerTopic": 0, "consumerPerSubscription": 0,
                "producersPerTopic": args.producers, "producerRate": 10_000_000,
                "consumerBacklogSizeGB": 0, "testDurationMinutes": 1, "warmupDurationMinutes": 1}
    driver = {"name": "Kafka",
              "driverClass": "io.openmessaging.benchmark.driver.kafka.KafkaBenchmarkDriver",
              "replicationFactor": args.rf, "reset": True, "topicConfig": "",
              "commonConfig": f"bootstrap.servers={bootstrap}\n",
              "producerConfig": "".join(f"{k}={v}\n" for k, v in props.items()),
              "consumerConfig": "auto.offset.reset=earliest\n"}
    # The machine is shared: alternate perf-test and runner for --rounds rounds and compare
    # medians, so a burst of someone else's load does not decide the ratio.
    perfs, ombs, wholes, sent_total, all_samples = [], [], [], 0, []
    t0 = time.monotonic()
    for rnd in range(args.rounds):
        perfs.append(perf_once())
        res = run(workload, driver, bootstrap, output=False, echo=args.verbose,
                  duration_s=args.duration, warmup_s=args.warmup,
                  stats_period_s=args.period, producer_processes=args.processes,
                  drain_at_end=True)  # in-flight sends complete at the end: counts exact
        ombs.append(res.mean("publishRate") * args.record_size / 1024 / 1024)
        sent = res.totals["totalMessagesSent"]
        held = broker_count(bootstrap, res.lab_run["topics"])
        delete_topics(bootstrap, res.lab_run["topics"])
        if held != sent:
            raise RuntimeError(f"runner counted {sent} messages sent, the broker holds {held}")
        load_s = sum(p["end"] - p["start"] for p in res.phases if p["phase"] in ("warmup", "steady"))
        wholes.append(sent * args.record_size / 1024 / 1024 / load_s if load_s else 0.0)
        all_samples.append([round(x["publishMBs"], 1) for x in res.samples])
        print(f"round {rnd + 1}: perf-test {perfs[-1]:.1f} MB/s, runner {ombs[-1]:.1f} MB/s "
              f"(samples {all_samples[-1]})", flush=True)
    log4j.unlink(missing_ok=True)
    wall = time.monotonic() - t0
    med = statistics.median
    return {"perf": med(perfs), "perfs": perfs, "omb": med(ombs), "ombs": ombs,
            "whole": med(wholes), "sent": sent, "wall": wall, "samples": all_samples}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bootstrap", help="existing cluster (default: start a single-node KRaft broker)")
    p.add_argument("--rf", type=int, default=1, help="replication factor (default 1)")
    p.add_argument("--partitions", type=int, default=6)
    p.add_argument("--records", type=int, default=3_000_000, help="perf-test records")
    p.add_argument("--record-size", type=int, default=1024)
    p.add_argument("--acks", default="all")
    p.add_argument("--batch-size", type=int, default=1048576)
    p.add_argument("--linger-ms", type=int, default=1)
    p.add_argument("--producers", type=int, default=2, help="OMB producersPerTopic")
    p.add_argument("--processes", type=int, default=None, help="runner producer processes")
    p.add_argument("--warmup", type=float, default=10, help="runner warm-up seconds")
    p.add_argument("--duration", type=float, default=30, help="runner benchmark seconds")
    p.add_argument("--period", type=float, default=5, help="runner reporting period")
    p.add_argument("--rounds", type=int, default=3, help="alternating perf-test/runner rounds")
    p.add_argument("--verbose", action="store_true", help="show the runner's OMB log lines")
    args = p.parse_args()

    if args.bootstrap:
        r = bench(args.bootstrap, args)
    else:
        with MiniKafka(extra_props={"log.retention.bytes": 1 << 30,
                                    "log.segment.bytes": 256 << 20}) as k:
            r = bench(k.bootstrap, args)
    ratio = r["omb"] / r["perf"] if r["perf"] else 0.0
    print(f"\nkafka ProducerPerformance : {r['perf']:8.1f} MB/s (median of {r['perfs']}, {args.records} records each)")
    print(f"tr4947.omb runner (OMB)   : {r['omb']:8.1f} MB/s (median of {[round(x, 1) for x in r['ombs']]}; each the mean of "
          f"its benchmark-phase samples)")
    print(f"tr4947.omb whole run      : {r['whole']:8.1f} MB/s (median; warm-up included; "
          f"counts checked against the broker's high watermarks)")
    print(f"ratio runner/perf-test    : {ratio:8.2f} (whole run: "
          f"{r['whole'] / r['perf'] if r['perf'] else 0:.2f}); requirement >= 0.90: "
          f"{'PASS' if ratio >= 0.9 else 'FAIL'}")
    return 0 if ratio >= 0.9 else 1


if __name__ == "__main__":
    sys.exit(main())
