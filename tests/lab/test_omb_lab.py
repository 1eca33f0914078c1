"""The OMB runner against a real broker: a single-node KRaft Kafka (tests/support/minikafka.py,
started and always torn down here). Produced and consumed counts match, the producers hold
the target rate, the backlog phases come in OMB's order, the result file is valid OMB JSON,
the command line has OMB's shape. Then OMB as the chapters run it: on a test lab's client host,
through the Target (procedures.omb.run: the TR's files placed, the TR's command run over SSH,
OMB's log and result read back), against a broker on the lab network."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import tr4947
from tr4947 import paths
from tr4947.omb import result as R
from tr4947.omb import run
from tr4947.procedures import omb

from ..support.minikafka import MiniKafka
from .conftest import own_lab

pytestmark = pytest.mark.lab

FIX = paths.REPO / "tests" / "fixtures" / "omb"
DRIVER = {"name": "Kafka",
          "driverClass": "io.openmessaging.benchmark.driver.kafka.KafkaBenchmarkDriver",
          "replicationFactor": 1, "reset": True,
          "topicConfig": "min.insync.replicas=1\n",
          "commonConfig": "bootstrap.servers=replaced-by-bootstrap:9092\ndefault.api.timeout.ms=120000\n",
          "producerConfig": "acks=all\nlinger.ms=1\nbatch.size=1048576\n",
          "consumerConfig": "auto.offset.reset=earliest\nenable.auto.commit=false\n"
                            "max.partition.fetch.bytes=10485760\n"}
RATE = 2000


def workload(**kw):
    w = {"name": "lab test", "topics": 1, "partitionsPerTopic": 4, "messageSize": 1024,
         "useRandomizedPayloads": True, "randomBytesRatio": 0.5, "randomizedPayloadPoolSize": 10,
         "subscriptionsPerTopic": 1, "consumerPerSubscription": 2, "producersPerTopic": 2,
         "producerRate": RATE, "consumerBacklogSizeGB": 0, "testDurationMinutes": 5,
         "warmupDurationMinutes": 1}
    w.update(kw)
    return w


@pytest.fixture(scope="module")
def kafka():
    with MiniKafka("127.0.20.1") as k:
        yield k


def test_produce_consume_counts_match_rate_held_and_result_file_is_valid(kafka, tmp_path):
    samples = []
    res = run(workload(), DRIVER, kafka.bootstrap, output_dir=tmp_path,
              duration_s=6, warmup_s=10, stats_period_s=2,
              drain_at_end=True, producer_processes=1, consumer_processes=1,
              progress=lambda e: samples.append(e) if e["event"] == "sample" else None)
    totals = res.totals
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
    # Percentiles of one histogram are ordered, and the slowest message took some time.
    e2e = [data[f"aggregatedEndToEndLatency{p}"] for p in ("50pct", "99pct", "Max")]
    assert 0 <= e2e[0] <= e2e[1] <= e2e[2] and e2e[2] > 0, e2e
    side = R.read_sidecar(f)
    assert side["labScale"]["duration_s"] == 6
    assert side["labRun"]["totals"] == totals and len(side["samples"]) == 8
    assert any(line.startswith("Pub rate ") for line in (x.split(" - ", 1)[-1] for x in res.log))

    # The rate. Per period it is noisy on a busy machine: OMB counts a message as sent in
    # its acknowledgement callback, so a slow acknowledgement moves counts from one period to
    # the next. Over the whole paced run it is not: the producers follow OMB's schedule
    # (message n at start + n/rate, catching up when behind) from the warm-up's start until
    # they are stopped after the benchmark's last period, and every message is acknowledged
    # by the end (drain). So the count must be the rate times that time: at least 90% of
    # it up to the last period (10% for producers that fell behind at the very end), at most
    # the schedule up to the benchmark phase's end.
    phases = {p["phase"]: p for p in res.phases}
    start = phases["warmup"]["start"]
    last_period = res.samples[-1]["t"]
    print(f"sent {totals['totalMessagesSent']} in {last_period - start:.1f}-"
          f"{phases['steady']['end'] - start:.1f} s of pacing at {RATE}/s; at most "
          f"{max(x['behindSeconds'] for x in res.samples):.2f} s behind")
    assert 0.9 * RATE * (last_period - start) <= totals["totalMessagesSent"] \
        <= RATE * (phases["steady"]["end"] - start) + RATE * 0.5


def test_backlog_phases_in_omb_order(kafka, tmp_path):
    res = run(workload(producerRate=20000, consumerBacklogSizeGB=1), DRIVER, kafka.bootstrap,
              output=tmp_path / "backlog.json", backlog_gb=0.02,
              duration_s=4, warmup_s=0, stats_period_s=0.5,
              drain_at_end=True)
    names = [p["phase"] for p in res.phases]
    assert names == ["setup", "producer-only", "drain", "mixed"]
    msgs = [line.split(" - ", 1)[1] for line in res.log]
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
    after = res.samples[max(i for i, x in enumerate(res.samples)
                            if x["phase"] == "producer-only") + 1:]
    assert after and max(x["consumeRate"] for x in after) > 0
    totals = res.totals
    assert totals["totalMessagesReceived"] == totals["totalMessagesSent"]
    json.loads((tmp_path / "backlog.json").read_text())


def benchmark_cli(*args, cwd=None) -> subprocess.CompletedProcess:
    """What a lab client's /opt/benchmark/bin/benchmark runs (python -m tr4947.omb)."""
    env = {**os.environ, "PYTHONPATH": str(Path(tr4947.__file__).resolve().parents[1])}
    return subprocess.run([sys.executable, "-m", "tr4947.omb", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_cli_runs_the_tr_command_shape(kafka, tmp_path):
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
    cp = benchmark_cli("--drivers", "driver-kafka/kafka-throughput.yaml",
                       "workloads/1-topic-4-partitions-1kb.yaml", "--bootstrap", kafka.bootstrap,
                       "--duration-s", "2", "--warmup-s", "0",
                       "--stats-period-s", "2", cwd=tmp_path)
    assert cp.returncode == 0, cp.stdout[-3000:] + cp.stderr[-3000:]
    assert "Pub rate" in cp.stdout and "Writing test result into" in cp.stdout
    out = list(tmp_path.glob("1-topic-4-partitions-1kb-Kafka-*.json"))
    assert len(out) == 1 and json.loads(out[0].read_text())["workload"] == "cli"
    assert "not found" not in cp.stdout  # the payload file was used


def test_cli_usage_errors():
    cp = benchmark_cli("-drivers", "x.yaml", "w.yaml")
    assert cp.returncode == 2 and "did you mean --drivers" in cp.stderr
    cp = benchmark_cli("w.yaml")
    assert cp.returncode == 2 and "no driver given" in cp.stderr


# --- OMB on a lab client host, as the performance chapters run it ------------------------------
def test_omb_on_the_lab_client_through_the_target(tmp_path):
    with own_lab(tmp_path) as tl:
        t = tl.target()
        control = t.inventory.hosts["client-1"].get("lab_control_address")
        # A broker on the lab network (the control node's own address there): the client
        # reaches it as it reaches any broker, over the lab switch.
        with MiniKafka(control) as k:
            driver = omb.with_bootstrap(
                (paths.SNIPPETS / "aws-fsx" / "FSX-6-driver-sync-rf1.yaml").read_text(),
                k.bootstrap)
            files = {"workloads/1-topic-100-partitions-1kb.yaml":
                     (paths.SNIPPETS / "aws-cvo" / "CVO-6-workload.yaml").read_text(),
                     "driver-kafka/kafka-sync.yaml": driver}
            scale = {"duration_s": 6, "warmup_s": 2, "rate": 0.0005, "partitions": 2,
                     "producers_per_topic": 1, "consumers_per_subscription": 1,
                     "message_size": 1024, "stats_period_s": 2, "producer_processes": 1,
                     "consumer_processes": 1}
            r = omb.run(t, "client-1", "CVO-7 sync, lab scale", "aws-cvo/CVO-7-benchmark-sync.sh",
                        files, scale=scale, timeout=900)
        assert not r.planned and r.command.ok, r.command.output[-3000:]
        # The TR's command ran as printed, on the client, over SSH.
        tr = ("cd /opt/benchmark\nbin/benchmark --drivers driver-kafka/kafka-sync.yaml "
              "workloads/1-topic-100-partitions-1kb.yaml")
        ran = [c for c in tl.commands("client-1") if tr in c]
        assert len(ran) == 1 and "export TR4947_OMB_SCALE=duration_s=6," in ran[0]
        # OMB's result, read back from where OMB wrote it on the client.
        assert r.result_path.startswith("/opt/benchmark/") and r.result_path.endswith(".json")
        assert list(r.result) == R.FIELDS and r.result["driver"] == "Kafka"
        assert len(r.result["publishRate"]) == 3 and r.result["aggregatedPublishLatency99pct"] > 0
        assert r.result["topics"] == 4 and r.result["partitions"] == 2
        # ... and its log: the time series and the benchmark window.
        phases = [s.phase for s in r.series.samples]
        assert phases == ["warmup", "steady", "steady", "steady"], phases
        w = r.window()
        assert w.periods == 3 and 5.5 <= w.seconds <= 12 and w.publish_rate > 0
        s = r.summary()
        assert s["samples"] == 3 and s["publish_mean"] > 0 and s["consume_mean"] > 0
        assert "Starting benchmark traffic" in omb.excerpt(r.command.stdout)
