"""The OMB runner against a real single-node KRaft broker (started and always torn down here):
produced and consumed counts match, the backlog phases come in OMB's order, the result file
is valid OMB JSON, and the CLI shim runs the TR's command shape."""
import json
import os
import subprocess
from pathlib import Path

import pytest

from tr4947.omb import result as R
from tr4947.omb import run
from tr4947.omb.minicluster import MiniKafka

pytestmark = pytest.mark.lab

REPO = Path(__file__).resolve().parents[2]
FIX = REPO / "tests" / "fixtures" / "omb"
DRIVER = {"name": "Kafka",
          "driverClass": "io.openmessaging.benchmark.driver.kafka.KafkaBenchmarkDriver",
          "replicationFactor": 1, "reset": True,
          "topicConfig": "min.insync.replicas=1\n",
          "commonConfig": "bootstrap.servers=replaced-by-bootstrap:9092\ndefault.api.timeout.ms=120000\n",
          "producerConfig": "acks=all\nlinger.ms=1\nbatch.size=1048576\n",
          "consumerConfig": "auto.offset.reset=earliest\nenable.auto.commit=false\n"
                            "max.partition.fetch.bytes=10485760\n"}


def workload(**kw):
    w = {"name": "lab test", "topics": 1, "partitionsPerTopic": 4, "messageSize": 1024,
         "useRandomizedPayloads": True, "randomBytesRatio": 0.5, "randomizedPayloadPoolSize": 10,
         "subscriptionsPerTopic": 1, "consumerPerSubscription": 2, "producersPerTopic": 2,
         "producerRate": 2000, "consumerBacklogSizeGB": 0, "testDurationMinutes": 5,
         "warmupDurationMinutes": 1}
    w.update(kw)
    return w


@pytest.fixture(scope="module")
def kafka():
    with MiniKafka("127.0.20.1") as k:
        yield k


def test_produce_consume_counts_match_and_result_file_is_valid(kafka, tmp_path):
    samples = []
    res = run(workload(), DRIVER, kafka.bootstrap, output_dir=tmp_path,
              duration_override_seconds=6, warmup_override_seconds=10, stats_period_seconds=2,
              drain_at_end=True, producer_processes=1, consumer_processes=1,
              progress=lambda e: samples.append(e) if e["event"] == "sample" else None)
    totals = res.totals
    assert totals["totalMessagesSent"] > 1_000
    assert totals["totalMessagesReceived"] == totals["totalMessagesSent"]
    assert totals["totalMessageSendErrors"] == 0
    # warm-up (10 s: start-up catch-up and a cold broker's JIT) gives 5 samples, benchmark 3
    assert len(res["publishRate"]) == 3 and len(samples) == 8
    f = res.path
    assert f.parent == tmp_path
    assert f.name.startswith("lab-test-Kafka-") and f.suffix == ".json"
    data = json.loads(f.read_text())
    assert list(data) == R.FIELDS          # nothing OMB's TestResult does not have
    assert data["workload"] == "lab test" and data["driver"] == "Kafka"
    assert data["aggregatedPublishLatency99pct"] > 0
    assert data["aggregatedEndToEndLatency50pct"] >= 0
    side = R.read_sidecar(f)
    assert side["labScale"]["durationOverrideSeconds"] == 6
    assert side["labRun"]["totals"] == totals and len(side["samples"]) == 8
    assert any(l.startswith("Pub rate ") for l in (x.split(" - ", 1)[-1] for x in res.log))

    # The pacer holds the target rate (2,000 msg/s) within 5% in the benchmark phase when
    # the lab can sustain it; if the producers' schedule fell behind (a busy machine), they
    # catch up afterwards, as OMB's rate limiter does, and the rate says nothing.
    # Acknowledgements that take long move counts from one period into the next (OMB counts
    # a message as sent in its callback), which shifts the mean as much as falling behind.
    # Only the benchmark phase counts: the warm-up is there to absorb a cold broker and JIT.
    bench = [x for x in res.samples if x["recorded"]]
    behind = max(x["behindSeconds"] for x in bench)
    ack = max(x["publishLatency99"] for x in bench)
    print(f"benchmark phase: {behind:.2f} s behind at most, publish p99 up to {ack:.0f} ms, "
          f"mean publish rate {res.mean('publishRate'):.0f} msg/s")
    if behind > 0.25 or ack > 250:
        pytest.skip(f"rate not checked, machine too busy to sustain 2,000 msg/s: producers "
                    f"{behind:.1f} s behind schedule, publish latency p99 up to {ack:.0f} ms "
                    "(everything else was checked)")
    assert res.mean("publishRate") == pytest.approx(2000, rel=0.05)


def test_backlog_phases_in_omb_order(kafka, tmp_path):
    res = run(workload(producerRate=20000, consumerBacklogSizeGB=1), DRIVER, kafka.bootstrap,
              output=tmp_path / "backlog.json", backlog_gb_override=0.02,
              duration_override_seconds=4, warmup_override_seconds=0, stats_period_seconds=0.5,
              drain_at_end=True)
    names = [p["phase"] for p in res.phases]
    assert names == ["setup", "producer-only", "drain", "mixed"]
    msgs = [l.split(" - ", 1)[1] for l in res.log]
    order = [m for m in msgs if m.startswith(("Stopping all consumers", "--- Completed backlog build",
                                                "--- Start draining", "--- Completed backlog draining"))]
    assert [o[:12] for o in order] == ["Stopping all", "--- Complete", "--- Start dr", "--- Complete"]
    assert "build" in order[1] and "draining" in order[3]
    # consumers were paused: over the build the backlog grows, and it gets near the requested
    # 0.02 GiB of 1 KiB messages (20,971) before the drain (periods of 0.5 s). (Messages a
    # consumer had already fetched when the pause arrived may still count in the first period.)
    assert res.lab_run["consumerBacklogBytes"] == int(0.02 * 1024 ** 3)
    build = [x for x in res.samples if x["phase"] == "producer-only"]
    assert len(build) < 2 or build[-1]["backlog"] > build[0]["backlog"]
    assert max(x["backlog"] for x in res.samples) >= 0.5 * 20_971
    # after the build the consumers were resumed and consumed again. A resumed consumer can
    # take more than a period to fetch, and then empties 20k messages within one, so the
    # consumption may show in the first mixed period rather than in a drain period.
    after = res.samples[max(i for i, x in enumerate(res.samples) if x["phase"] == "producer-only") + 1:]
    assert after and max(x["consumeRate"] for x in after) > 0
    totals = res.totals
    assert totals["totalMessagesReceived"] == totals["totalMessagesSent"]
    json.loads((tmp_path / "backlog.json").read_text())


def test_cli_shim_runs_the_tr_command_shape(kafka, tmp_path):
    wl = tmp_path / "workloads" / "1-topic-4-partitions-1kb.yaml"
    wl.parent.mkdir()
    wl.write_text("name: cli\ntopics: 1\npartitionsPerTopic: 4\nmessageSize: 1024\n"
                  "subscriptionsPerTopic: 1\nconsumerPerSubscription: 1\nproducersPerTopic: 1\n"
                  "producerRate: 1000\nconsumerBacklogSizeGB: 0\ntestDurationMinutes: 5\n"
                  "payloadFile: payload/payload-1Kb.data\n")
    (tmp_path / "payload").mkdir()
    (tmp_path / "payload" / "payload-1Kb.data").write_bytes(os.urandom(1024))
    (tmp_path / "driver-kafka").mkdir()
    (tmp_path / "driver-kafka" / "kafka-throughput.yaml").write_text(
        (FIX / "kafka-throughput.yaml").read_text().replace("replicationFactor: 3",
                                                            "replicationFactor: 1")
        .replace("min.insync.replicas=2", "min.insync.replicas=1"))
    shim = REPO / "src" / "tr4947" / "omb" / "bin" / "benchmark"
    cp = subprocess.run([str(shim), "--drivers", "driver-kafka/kafka-throughput.yaml",
                         "workloads/1-topic-4-partitions-1kb.yaml", "--bootstrap", kafka.bootstrap,
                         "--duration-override-seconds", "2", "--warmup-override-seconds", "0",
                         "--stats-period-seconds", "2"],
                        cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert cp.returncode == 0, cp.stdout[-3000:] + cp.stderr[-3000:]
    assert "Pub rate" in cp.stdout and "Writing test result into" in cp.stdout
    out = list(tmp_path.glob("1-topic-4-partitions-1kb-Kafka-*.json"))
    assert len(out) == 1 and json.loads(out[0].read_text())["workload"] == "cli"
    assert "not found" not in cp.stdout  # the payload file was used


def test_cli_usage_errors():
    shim = REPO / "src" / "tr4947" / "omb" / "bin" / "benchmark"
    cp = subprocess.run([str(shim), "-drivers", "x.yaml", "w.yaml"], capture_output=True, text=True)
    assert cp.returncode == 2 and "did you mean --drivers" in cp.stderr
    cp = subprocess.run([str(shim), "w.yaml"], capture_output=True, text=True)
    assert cp.returncode == 2 and "no driver given" in cp.stderr
