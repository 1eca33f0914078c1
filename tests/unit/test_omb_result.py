"""Result JSON: OMB's TestResult field names and types, units and percentiles from known data,
the periodic log line format, OMB's default file name."""
import datetime as dt
import json

import pytest

from tr4947.omb import result as R
from tr4947.omb.stats import (E2E_MAX_US, LatencyBuffer, LatencySummary, new_histogram,
                              period_line)
from tr4947.omb.workload import parse_workload

# TestResult.java of upstream OMB (openmessaging/benchmark, benchmark-framework), in
# declaration order. (Some forks add *99999pct fields; upstream and its published results
# have none.)
OMB_FIELDS = """workload driver messageSize topics partitions producersPerTopic consumersPerTopic
publishRate publishErrorRate consumeRate backlog publishLatencyAvg publishLatency50pct
publishLatency75pct publishLatency95pct publishLatency99pct publishLatency999pct
publishLatency9999pct publishLatencyMax publishDelayLatencyAvg
publishDelayLatency50pct publishDelayLatency75pct publishDelayLatency95pct
publishDelayLatency99pct publishDelayLatency999pct publishDelayLatency9999pct
publishDelayLatencyMax aggregatedPublishLatencyAvg
aggregatedPublishLatency50pct aggregatedPublishLatency75pct aggregatedPublishLatency95pct
aggregatedPublishLatency99pct aggregatedPublishLatency999pct aggregatedPublishLatency9999pct
aggregatedPublishLatencyMax aggregatedPublishDelayLatencyAvg
aggregatedPublishDelayLatency50pct aggregatedPublishDelayLatency75pct
aggregatedPublishDelayLatency95pct aggregatedPublishDelayLatency99pct
aggregatedPublishDelayLatency999pct aggregatedPublishDelayLatency9999pct
aggregatedPublishDelayLatencyMax
aggregatedPublishLatencyQuantiles aggregatedPublishDelayLatencyQuantiles endToEndLatencyAvg
endToEndLatency50pct endToEndLatency75pct endToEndLatency95pct endToEndLatency99pct
endToEndLatency999pct endToEndLatency9999pct endToEndLatencyMax
aggregatedEndToEndLatencyQuantiles aggregatedEndToEndLatencyAvg aggregatedEndToEndLatency50pct
aggregatedEndToEndLatency75pct aggregatedEndToEndLatency95pct aggregatedEndToEndLatency99pct
aggregatedEndToEndLatency999pct aggregatedEndToEndLatency9999pct
aggregatedEndToEndLatencyMax""".split()
# Java types per TestResult: List<Long> / long fields; the rest of the numbers are doubles.
LONG = {"backlog"} | {f"publishDelayLatency{s}" for s in
                      "50pct 75pct 95pct 99pct 999pct 9999pct Max".split()} | {
    f"aggregatedPublishDelayLatency{s}" for s in "50pct 75pct 95pct 99pct 999pct 9999pct Max".split()}
INTS = {"messageSize", "topics", "partitions", "producersPerTopic", "consumersPerTopic"}


W = parse_workload({"name": "w", "topics": 2, "partitionsPerTopic": 8, "messageSize": 1024,
                    "subscriptionsPerTopic": 1, "consumerPerSubscription": 3,
                    "producersPerTopic": 4, "producerRate": 100, "testDurationMinutes": 1})


def hist_1_to_1000_ms(highest=60_000_000):
    h = new_histogram(highest)
    for ms in range(1, 1001):
        h.record_value(ms * 1000)  # us
    return h


def test_fields_names_order_and_header():
    r = R.new_test_result(W, "Kafka")
    assert list(r) == OMB_FIELDS
    assert (r["workload"], r["driver"], r["messageSize"], r["topics"], r["partitions"],
            r["producersPerTopic"], r["consumersPerTopic"]) == ("w", "Kafka", 1024, 2, 8, 4, 3)


def test_percentiles_units_and_types_from_known_data():
    r = R.new_test_result(W, "Kafka")
    pub = hist_1_to_1000_ms()
    delay = new_histogram()
    for us in (10, 20, 30, 40):
        delay.record_value(us)
    e2e = hist_1_to_1000_ms(E2E_MAX_US)
    R.add_period(r, 1000.0, 0.0, 990.0, 10, LatencySummary.of(pub), LatencySummary.of(delay),
                 LatencySummary.of(e2e))
    R.set_aggregated(r, pub, delay, e2e)
    # ms, 3 significant digits
    assert r["publishLatency50pct"][0] == pytest.approx(500, rel=2e-3)
    assert r["publishLatency99pct"][0] == pytest.approx(990, rel=2e-3)
    assert r["publishLatencyMax"][0] == pytest.approx(1000, rel=2e-3)
    assert r["publishLatencyAvg"][0] == pytest.approx(500.5, rel=2e-3)
    assert r["aggregatedPublishLatency999pct"] == pytest.approx(999, rel=2e-3)
    assert r["aggregatedEndToEndLatency50pct"] == pytest.approx(500, rel=2e-3)
    # publish delay stays in us and is a whole number (long in OMB)
    assert r["publishDelayLatency50pct"] == [20] and isinstance(r["publishDelayLatency50pct"][0], int)
    assert r["aggregatedPublishDelayLatencyMax"] == 40
    assert isinstance(r["backlog"][0], int)
    q = r["aggregatedPublishLatencyQuantiles"]
    # keys are getPercentile(): the share of values up to this one. 1000 values, one each:
    # the first tick lands on the first value (0.1%), the last on all of them (100%).
    assert min(q) == pytest.approx(0.1) and q[100.0] == pytest.approx(1000, rel=2e-3)
    assert q[50.0] == pytest.approx(500, rel=2e-3)

    text = R.to_json(r)
    back = json.loads(text)
    assert list(back) == OMB_FIELDS
    keys = back["aggregatedPublishLatencyQuantiles"]
    assert "100.0" in keys and "50.0" in keys  # Jackson writes Double keys as 50.0, 100.0
    assert all(isinstance(x, float) for x in back["publishRate"])


def test_latency_buffer_matches_direct_recording():
    buf = LatencyBuffer()
    direct = new_histogram()
    for v in list(range(1, 5000, 7)) + [123_456, 7_654_321]:
        buf.values.append(float(v))
        direct.record_value(v)
    h = buf.take()
    assert h.get_total_count() == direct.get_total_count()
    for p in (50, 90, 99, 99.9, 100):
        assert h.get_value_at_percentile(p) == direct.get_value_at_percentile(p)
    e2e = LatencyBuffer(drop_nonpositive=True)
    e2e.values.extend([0.0, -1000.0, 2000.0])
    assert e2e.take().get_total_count() == 1  # OMB records e2e only when > 0


def test_period_line_is_omb_format():
    pub = LatencySummary.of(hist_1_to_1000_ms())
    line = period_line(257759.2, 4027.5, 0.0, 257800.0, 4028.1, 1234, pub, LatencySummary())
    assert line.startswith("Pub rate 257759.2 msg/s / 4027.5 MB/s | Pub err     0.0 err/s | "
                           "Cons rate 257800.0 msg/s / 4028.1 MB/s | Backlog:  1.2 K | "
                           "Pub Latency (ms) avg: 500.5 - 50%: 500.2 - 99%: 990.2 - 99.9%: 999.4 - Max: 1000.4 | ")
    assert "| Pub Delay Latency (us) avg:  0.0 - 50%:  0.0" in line


def test_default_file_name_like_omb():
    when = dt.datetime(2024, 2, 8, 10, 51, 41)
    assert R.default_file_name("1-topic-1-partition-1kb", "Kafka", when) == \
        "1-topic-1-partition-1kb-Kafka-2024-02-08-10-51-41.json"


def test_result_json_schema_types_and_jackson_layout(tmp_path):
    """The file OMB's ResultsToCsv would read: exactly TestResult's fields (a plain Jackson
    ObjectMapper fails on any other), Java types, Jackson's pretty-printer layout."""
    r = R.new_test_result(W, "Kafka")
    pub = hist_1_to_1000_ms()
    delay = new_histogram()
    delay.record_value(3)
    e2e = hist_1_to_1000_ms(E2E_MAX_US)
    for _ in range(2):
        R.add_period(r, 1234.5, 0.0, 1200.0, 7, LatencySummary.of(pub), LatencySummary.of(delay),
                     LatencySummary.of(e2e))
    R.set_aggregated(r, pub, delay, e2e)
    path = R.write(r, tmp_path / "x.json")
    text = path.read_text()
    data = json.loads(text)
    assert list(data) == OMB_FIELDS
    for k, v in data.items():
        if k in ("workload", "driver"):
            assert isinstance(v, str)
        elif k in INTS:
            assert type(v) is int, k
        elif k.endswith("Quantiles"):
            assert v and all(isinstance(float(q), float) for q in v), k
            want = int if k == "aggregatedPublishDelayLatencyQuantiles" else float
            assert all(type(x) is want for x in v.values()), k
        elif isinstance(v, list):
            assert len(v) == 2 and all(type(x) is (int if k in LONG else float) for x in v), k
        else:
            assert type(v) is (int if k in LONG else float), k
    assert '  "workload" : "w",\n' in text            # "key" : value
    assert '  "publishRate" : [ 1234.5, 1234.5 ],\n' in text   # arrays on one line
    assert '\n    "100.0" : ' in text                  # map entries indented one level more
    with pytest.raises(ValueError, match="labRun"):
        R.to_json({**r, "labRun": {}})


@pytest.mark.parametrize("x,java", [
    (0.0, "0.0"), (50.0, "50.0"), (99.9, "99.9"), (54560.15650749273, "54560.15650749273"),
    (2.6357704466400003e-06, "2.6357704466400003E-6"), (0.0005, "5.0E-4"), (0.001, "0.001"),
    (1e7, "1.0E7"), (12345678.9, "1.23456789E7")])
def test_doubles_are_written_as_java_does(x, java):
    # Double.toString, which Jackson uses (and which names the quantile keys OMB writes)
    assert R.java_double(x) == java


def test_sidecar_keeps_lab_data_out_of_the_result(tmp_path):
    r = R.new_test_result(W, "Kafka")
    path = R.write(r, tmp_path / "w-Kafka-2024-01-01-00-00-00.json")
    side = R.write_sidecar({"labScale": {"rate": 0.1}, "samples": [{"t": 1.0}]}, path)
    assert side.name == "w-Kafka-2024-01-01-00-00-00.lab.yaml"
    assert not side.name.endswith(".json")   # ResultsToCsv reads every *.json it finds
    back = R.Result.load(path)
    assert back["workload"] == "w" and back.lab_scale == {"rate": 0.1}
    assert back.samples == [{"t": 1.0}]


@pytest.mark.parametrize("highest", [60_000_000, E2E_MAX_US])
@pytest.mark.parametrize("seed", range(6))
def test_latency_summary_reads_the_values_hdrh_reads(highest, seed):
    # LatencySummary.of computes in one numpy pass what hdrh computes bucket by bucket;
    # the values must be the same, including for one value and for spread-out data.
    import random
    rnd = random.Random(seed)
    h = new_histogram(highest)
    for _ in range([1, 3, 50, 5000, 20000, 2][seed]):
        h.record_value(max(1, int(rnd.lognormvariate(rnd.uniform(0, 14), 2.5))) % highest or 1)
    s = LatencySummary.of(h)
    pct = h.get_value_at_percentile
    assert (s.avg, s.p50, s.p75, s.p95, s.p99, s.p999, s.p9999, s.p99999, s.max, s.count) == (
        h.get_mean_value(), pct(50), pct(75), pct(95), pct(99), pct(99.9), pct(99.99),
        pct(99.999), h.get_max_value(), h.get_total_count())
