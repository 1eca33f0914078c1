"""Hostile and broken input is refused clearly, with nothing lost.

One table of broken workload YAML, driver YAML, lab-scale text, sizing calls and
``python -m tr4947.omb`` invocations. Each case states the refusal it expects (the file, the
line where there is one, the field and what is allowed) and checks that nothing ran: loader
cases go through :func:`tr4947.omb.run` with Kafka's AdminClient and the worker pool replaced by
tripwires and must leave the output directory empty; CLI cases must exit 2 with one stderr
line, no traceback, no run started and no result file.

``pytest -rA`` (or ``-s``) shows the summary line ``bad-input (loaders): N cases, N refused as
expected``.
"""
from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

import tr4947
from tr4947 import sizing
from tr4947.omb import runner
from tr4947.omb.runner import LabScale
from tr4947.omb.workload import ConfigError

# A valid workload; the line numbers below are the lines of these fields.
GOOD_WORKLOAD = """\
name: lab
topics: 1
partitionsPerTopic: 4
messageSize: 1024
useRandomizedPayloads: true
randomBytesRatio: 0.5
randomizedPayloadPoolSize: 10
subscriptionsPerTopic: 1
consumerPerSubscription: 1
producersPerTopic: 1
producerRate: 1000
consumerBacklogSizeGB: 0
testDurationMinutes: 5
"""
W_LINE = {k.split(":")[0]: i + 1 for i, k in enumerate(GOOD_WORKLOAD.splitlines())}

# A valid driver; an unreachable broker and a short API timeout, so a check that wrongly let
# a case through fails fast instead of waiting for Kafka.
GOOD_DRIVER = """\
name: Kafka
driverClass: io.openmessaging.benchmark.driver.kafka.KafkaBenchmarkDriver
replicationFactor: 1
reset: false
topicConfig: |
  min.insync.replicas=1
commonConfig: |
  bootstrap.servers=127.0.0.1:9
  default.api.timeout.ms=2000
producerConfig: |
  acks=all
  linger.ms=1
consumerConfig: |
  auto.offset.reset=earliest
"""


def workload(**changes) -> str:
    """GOOD_WORKLOAD with fields replaced in place (same line) or, if new, appended."""
    lines = GOOD_WORKLOAD.splitlines()
    for k, v in changes.items():
        if k in W_LINE:
            lines[W_LINE[k] - 1] = f"{k}: {v}"
        else:
            lines.append(f"{k}: {v}")
    return "\n".join(lines) + "\n"


def driver(old: str = "", new: str = "") -> str:
    assert not old or old in GOOD_DRIVER
    return GOOD_DRIVER.replace(old, new) if old else GOOD_DRIVER


@dataclass
class Case:
    id: str
    kind: str                       # workload | driver | scale | sizing | cli
    data: object                    # YAML text (str/bytes), scale text, a callable, CLI spec
    expect: str                     # substring of the refusal; {w}/{d} = the file's path


CASES = [
    # --- workload files: range, type and structure -----------------------------------------
    Case("test-duration-zero", "workload", workload(testDurationMinutes=0),
         "{w}, line 13: testDurationMinutes: 0 is not allowed (must be >= 1"),
    Case("test-duration-negative", "workload", workload(testDurationMinutes=-5),
         "{w}, line 13: testDurationMinutes: -5 is not allowed (must be >= 1"),
    Case("warmup-negative", "workload", workload(warmupDurationMinutes=-3),
         "{w}, line 14: warmupDurationMinutes: -3 is not allowed (must be >= 0"),
    Case("message-size-1e12", "workload", workload(messageSize=10**12),
         "{w}, line 4: messageSize: 1000000000000 is not allowed (must be between 1 and "
         "1000000000 bytes; librdkafka, the runner's Kafka client, sends at most"),
    Case("message-size-zero", "workload", workload(messageSize=0),
         "{w}, line 4: messageSize: 0 is not allowed (must be between 1 and 1000000000 bytes"),
    Case("topics-zero", "workload", workload(topics=0),
         "{w}, line 2: topics: 0 is not allowed (must be >= 1"),
    Case("topics-beyond-java-int", "workload", workload(topics=2**31),
         "{w}, line 2: topics: 2147483648 is not allowed (must be <= 2147483647"),
    Case("partitions-negative", "workload", workload(partitionsPerTopic=-1),
         "{w}, line 3: partitionsPerTopic: -1 is not allowed (must be >= 1"),
    Case("random-ratio-above-one", "workload", workload(randomBytesRatio=1.5),
         "{w}, line 6: randomBytesRatio: 1.5 is not allowed (must be between 0.0 and 1.0"),
    Case("random-ratio-nan", "workload", workload(randomBytesRatio=".nan"),
         "{w}, line 6: randomBytesRatio: nan is not allowed (must be a finite number"),
    Case("drain-ratio-negative", "workload", workload(backlogDrainRatio=-0.1),
         "{w}, line 14: backlogDrainRatio: -0.1 is not allowed (must be between 0.0 and 1.0"),
    Case("producer-rate-negative", "workload", workload(producerRate=-100),
         "{w}, line 11: producerRate: -100 is not allowed (must be >= 0"),
    Case("backlog-negative", "workload", workload(consumerBacklogSizeGB=-1),
         "{w}, line 12: consumerBacklogSizeGB: -1 is not allowed (must be between 0 and"),
    Case("no-producers", "workload", workload(producersPerTopic=0),
         "{w}, line 10: producersPerTopic: 0 is not allowed (must be >= 1"),
    Case("subscription-without-consumers", "workload", workload(consumerPerSubscription=0),
         "{w}, line 9: consumerPerSubscription: 0 is not allowed with subscriptionsPerTopic: 1"),
    Case("backlog-without-rate", "workload", workload(consumerBacklogSizeGB=1, producerRate=0),
         "{w}, line 11: Cannot probe producer sustainable rate when building backlog"),
    Case("int-as-text", "workload", workload(topics="four"),
         "{w}, line 2: topics: 'four' is not a valid int (must be a whole number"),
    Case("fractional-int", "workload", workload(messageSize=1.5),
         "{w}, line 4: messageSize: 1.5 is not a valid int"),
    Case("bool-as-word", "workload", workload(useRandomizedPayloads="maybe"),
         "{w}, line 5: useRandomizedPayloads: 'maybe' is not a valid bool (must be true or false"),
    Case("null-value", "workload", workload(topics=""),
         "{w}, line 2: topics: has no value (null)"),
    Case("list-value", "workload", workload(topics="[1, 2]"),
         "{w}, line 2: topics: a list is not allowed here (must be a single value)"),
    Case("missing-duration", "workload", GOOD_WORKLOAD.replace("testDurationMinutes: 5\n", ""),
         "{w}: testDurationMinutes: missing, and OMB's default 0 is not allowed (must be >= 1"),
    Case("unknown-field", "workload", workload(producerRat=1000),
         "{w}, line 14: unknown workload field(s) producerRat (line 14)"),
    Case("duplicate-key", "workload", workload(topics=1) + "topics: 2\n",
         "{w}, line 14: topics is given 2 times (lines 2, 14)"),
    Case("unknown-key-distributor", "workload", workload(keyDistributor="KEY_ROUND_ROBN"),
         "{w}, line 14: keyDistributor: 'KEY_ROUND_ROBN' is not one of OMB's"),
    Case("empty-file", "workload", "", "workload file {w} is empty"),
    Case("comments-only", "workload", "# nothing here\n", "workload file {w} is empty"),
    Case("not-a-mapping", "workload", "- topics: 1\n- partitionsPerTopic: 4\n",
         "{w}, line 1: a workload file must be a YAML mapping"),
    Case("malformed-yaml", "workload", "topics: 1\n  partitionsPerTopic: [4\n",
         "{w}, line 2, column 21: YAML syntax error: mapping values are not allowed here"),
    Case("tab-indent", "workload", "topics: 1\n\tpartitionsPerTopic: 4\n",
         "{w}, line 2, column 1: YAML syntax error: found character '\\t'"),
    Case("two-documents", "workload", GOOD_WORKLOAD + "---\ntopics: 2\n",
         "{w}, line 14, column 1: YAML syntax error: but found another document"),
    Case("python-tag", "workload",
         "topics: !!python/object/apply:os.system ['touch PWNED']\n",
         "{w}, line 1: could not determine a constructor for the tag"),
    Case("binary-file", "workload", b"topics: 1\n\xff\xfe\x00\x01\x02", "{w}, line 2: not UTF-8 text"),
    Case("nul-character", "workload", "topics: 1\nname: a\x00b\n",
         "{w}, line 2: character #x0000 is not allowed in YAML"),
    Case("nested-too-deep", "workload", "topics: " + "[" * 5000 + "]" * 5000 + "\n",
         "{w}: YAML nested too deeply"),
    Case("huge-file", "workload", "# " + "x" * (1 << 20) + "\n",
         "{w}: more than 1048576 bytes, so not an OMB workload file"),
    # --- driver files -------------------------------------------------------------------------
    Case("rf-zero", "driver", driver("replicationFactor: 1", "replicationFactor: 0"),
         "{d}, line 3: replicationFactor: 0 is not allowed (must be between 1 and 32767"),
    Case("rf-beyond-short", "driver", driver("replicationFactor: 1", "replicationFactor: 40000"),
         "{d}, line 3: replicationFactor: 40000 is not allowed (must be between 1 and 32767"),
    Case("rf-as-word", "driver", driver("replicationFactor: 1", "replicationFactor: three"),
         "{d}, line 3: replicationFactor: 'three' is not a valid int"),
    Case("no-driver-class", "driver",
         driver("driverClass: io.openmessaging.benchmark.driver.kafka.KafkaBenchmarkDriver\n"),
         "{d}: driverClass: missing"),
    Case("pulsar-driver", "driver",
         driver("driver.kafka.KafkaBenchmarkDriver", "driver.pulsar.PulsarBenchmarkDriver"),
         "{d}, line 2: driverClass: 'io.openmessaging.benchmark.driver.pulsar.PulsarBenchmarkDriver'"
         " is not allowed (this runner implements only OMB's Kafka driver"),
    Case("config-as-mapping", "driver",
         driver("producerConfig: |\n  acks=all\n  linger.ms=1\n", "producerConfig:\n  acks: all\n"),
         "{d}, line 10: producerConfig: a mapping is not allowed (must be Java properties text"),
    Case("config-null", "driver", driver("topicConfig: |\n  min.insync.replicas=1\n",
                                         "topicConfig:\n"),
         "{d}, line 5: topicConfig: null is not allowed (must be Java properties text"),
    Case("property-not-a-number", "driver",
         driver("default.api.timeout.ms=2000", "default.api.timeout.ms=soon"),
         "{d}, line 9: commonConfig: default.api.timeout.ms=soon is not allowed (must be a whole number"),
    Case("property-bad-escape", "driver",
         driver("auto.offset.reset=earliest\n", "auto.offset.reset=earliest\n  client.id=\\u00zz\n"),
         "{d}, line 15: consumerConfig: malformed \\uxxxx escape"),
    Case("property-twice", "driver", driver("linger.ms=1\n", "linger.ms=1\n  acks=1\n"),
         "{d}, line 13: producerConfig: property acks is set twice (lines 11 and 13)"),
    Case("min-isr-above-rf", "driver", driver("min.insync.replicas=1", "min.insync.replicas=2"),
         "{d}, line 6: topicConfig: min.insync.replicas=2 is not allowed with replicationFactor 1"),
    Case("unmappable-property", "driver",
         driver("linger.ms=1\n", "linger.ms=1\n  partitioner.class=com.example.P\n"),
         "{d}, line 13: producerConfig: producer property 'partitioner.class'"),
    Case("driver-unknown-field", "driver", driver() + "replicationFactr: 3\n",
         "{d}, line 15: unknown driver field(s) replicationFactr (line 15)"),
    Case("driver-empty", "driver", "", "driver file {d} is empty"),
    # The TR's kafka-sync.yaml as printed: driverClass's value wrapped onto its own line.
    Case("tr-printed-driver", "driver",
         driver("driverClass: io.", "driverClass:\nio."),
         "{d}, line 4, column 1: YAML syntax error: could not find expected ':'"),
    # --- lab scale (TR4947_OMB_SCALE text) ------------------------------------------------------
    Case("scale-rate-negative", "scale", "rate=-1",
         "rate: -1.0 is not allowed (must be > 0"),
    Case("scale-duration-zero", "scale", "duration_s=0",
         "duration_s: 0.0 is not allowed (must be > 0"),
    Case("scale-warmup-negative", "scale", "warmup_s=-5",
         "warmup_s: -5.0 is not allowed (must be >= 0"),
    Case("scale-backlog-negative", "scale", "backlog_gb=-1",
         "backlog_gb: -1.0 is not allowed (must be >= 0"),
    Case("scale-partitions-zero", "scale", "partitions=0",
         "partitions: 0 is not allowed (must be >= 1"),
    Case("scale-processes-zero", "scale", "producer_processes=0",
         "producer_processes: 0 is not allowed (must be >= 1"),
    Case("scale-message-too-big", "scale", "message_size=2000000000",
         "message_size: 2000000000 is not allowed (must be >= 1 and <= 1000000000"),
    Case("scale-period-nan", "scale", "stats_period_s=nan",
         "stats_period_s: nan is not allowed (must be a finite number)"),
    Case("scale-unknown", "scale", "duration=20", "unknown lab scale option 'duration'"),
    Case("scale-bad-bool", "scale", "drain_at_end=maybe",
         "drain_at_end: 'maybe' is not allowed (must be true or false)"),
    Case("scale-twice", "scale", "rate=0.1,rate=0.2",
         "lab scale option rate is given twice"),
    Case("scale-fraction-for-int", "scale", "partitions=2.5",
         "partitions: '2.5' is not a number (a whole number)"),
    # --- sizing -------------------------------------------------------------------------------
    Case("sizing-negative-throughput", "sizing", lambda: sizing.storage_per_broker(-3.4, 4, 3),
         "t_cluster: -3.4 is not allowed (must be >= 0"),
    Case("sizing-zero-brokers", "sizing", lambda: sizing.storage_per_broker(3.4, 0, 1),
         "brokers: 0 is not allowed (must be >= 1"),
    Case("sizing-negative-brokers", "sizing", lambda: sizing.Plan(3.4, -4, 1),
         "brokers: -4 is not allowed (must be >= 1"),
    Case("sizing-rf-zero", "sizing", lambda: sizing.max_cluster_throughput(10.2, 0),
         "r: 0 is not allowed (must be >= 1"),
    Case("sizing-rf-above-brokers", "sizing", lambda: sizing.storage_per_broker(3.4, 2, 3),
         "r: replication factor 3 is not allowed with 2 brokers (must be <= brokers"),
    Case("sizing-nan", "sizing", lambda: sizing.storage_aggregate_from_measurement(float("nan"), 3),
         "t_cluster_measured: nan is not allowed (must be a finite number >= 0"),
    Case("sizing-inf-storage", "sizing", lambda: sizing.Plan(1.0, 3, 3, float("inf")),
         "storage_aggregate: inf is not allowed"),
    Case("sizing-bad-factor", "sizing", lambda: sizing.table(3.4, 3, (3, 2, -1)),
         "factors: -1 is not allowed (must be >= 1"),
    Case("sizing-bool-brokers", "sizing", lambda: sizing.storage_per_broker(1.0, True, 1),
         "brokers: True is not allowed (must be a whole number >= 1"),
    # --- the bin/benchmark command line --------------------------------------------------------
    Case("cli-bad-workload", "cli", {"workloads": [workload(testDurationMinutes=-5)]},
         "{w0}, line 13: testDurationMinutes: -5 is not allowed (must be >= 1"),
    # A good workload first: the broken second one must stop the command before any run.
    Case("cli-second-workload-bad", "cli",
         {"workloads": [GOOD_WORKLOAD, workload(messageSize=10**12)]},
         "{w1}, line 4: messageSize: 1000000000000 is not allowed"),
    Case("cli-bad-driver", "cli",
         {"driver": driver("replicationFactor: 1\n", "replicationFactor 1\n")},
         "{d}, line 4, column 1: YAML syntax error"),
    Case("cli-empty-workload", "cli", {"workloads": [""]}, "workload file {w0} is empty"),
    Case("cli-missing-file", "cli", {"workloads": None}, "workload file {w0} not found"),
    Case("cli-rate-scale-option", "cli", {"args": ["--rate", "-1"]},
         "--rate: -1.0 is not allowed (must be > 0"),
    Case("cli-scale-env", "cli", {"env": "producer_processes=0"},
         "$TR4947_OMB_SCALE: producer_processes: 0 is not allowed (must be >= 1"),
    Case("cli-duration-nan", "cli", {"args": ["--duration-s", "nan"]},
         "--duration-s: nan is not allowed (must be a finite number)"),
]


@pytest.fixture
def tripwires(monkeypatch):
    """Kafka's AdminClient and the worker pool fail the test if a run gets that far."""
    import confluent_kafka.admin

    def started(*a, **kw):
        raise AssertionError("a run started: the input was not refused before Kafka was touched")

    monkeypatch.setattr(confluent_kafka.admin, "AdminClient", started)
    monkeypatch.setattr(runner, "_Workers", started)


def _write(path: Path, content) -> Path:
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


def _only_inputs(tmp_path: Path, inputs: set[Path]) -> list[Path]:
    """Files in tmp_path that the test did not write itself (results, sidecars, side effects)."""
    return [p for p in tmp_path.rglob("*") if p.is_file() and p not in inputs]


def _cli(case: Case, tmp_path: Path) -> tuple[str, dict]:
    spec = case.data
    wl_texts = spec.get("workloads", [GOOD_WORKLOAD])
    names = {}
    inputs = set()
    wls = []
    for i, text in enumerate(wl_texts if wl_texts is not None else [None]):
        p = tmp_path / "workloads" / f"w{i}.yaml"
        p.parent.mkdir(exist_ok=True)
        if text is not None:
            inputs.add(_write(p, text))
        names[f"w{i}"] = f"workloads/w{i}.yaml"
        wls.append(f"workloads/w{i}.yaml")
    d = _write(tmp_path / "driver.yaml", spec.get("driver", GOOD_DRIVER))
    inputs.add(d)
    names["d"] = "driver.yaml"
    env = {k: v for k, v in os.environ.items() if k != runner.SCALE_ENV}
    # The package under test, wherever this test imported it from.
    env["PYTHONPATH"] = os.pathsep.join(
        [str(Path(tr4947.__file__).resolve().parents[1])] + sys.path)
    if "env" in spec:
        env[runner.SCALE_ENV] = spec["env"]
    cp = subprocess.run([sys.executable, "-m", "tr4947.omb", "--drivers", "driver.yaml", *wls,
                         "--output-dir", str(tmp_path), *spec.get("args", [])],
                        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    err_lines = [ln for ln in cp.stderr.splitlines() if ln.strip()]
    assert cp.returncode == 2, (cp.returncode, cp.stdout[-2000:], cp.stderr[-2000:])
    assert len(err_lines) == 1 and err_lines[0].startswith("benchmark: error: "), cp.stderr
    assert "Traceback" not in cp.stderr
    assert "WORKLOAD :" not in cp.stdout and "Created" not in cp.stdout, cp.stdout
    assert _only_inputs(tmp_path, inputs) == []
    return err_lines[0], names


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_refused_clearly_and_nothing_ran(case, tmp_path, tripwires):
    inputs: set[Path] = set()
    if case.kind in ("workload", "driver"):
        w = _write(tmp_path / "w.yaml", case.data if case.kind == "workload" else GOOD_WORKLOAD)
        d = _write(tmp_path / "d.yaml", case.data if case.kind == "driver" else GOOD_DRIVER)
        inputs |= {w, d}
        out = tmp_path / "out"
        with pytest.raises(ConfigError) as exc:
            runner.run(w, d, "127.0.0.1:9", output_dir=out)
        message = str(exc.value)
        expect = case.expect.format(w=w, d=d)
        assert not out.exists()
        assert not (tmp_path / "PWNED").exists() and not Path("PWNED").exists()
    elif case.kind == "scale":
        with pytest.raises(ConfigError) as exc:
            LabScale.parse(case.data)
        message, expect = str(exc.value), case.expect
    elif case.kind == "sizing":
        with pytest.raises(ValueError) as exc:
            case.data()
        message, expect = str(exc.value), case.expect
    else:
        message, names = _cli(case, tmp_path)
        expect = case.expect.format(**names)
    assert expect in message, f"\nexpected: {expect}\n     got: {message}"
    assert "\n" not in message and "<unicode string>" not in message
    assert _only_inputs(tmp_path, inputs) == [] or case.kind == "cli"


def test_every_scale_option_is_checked_by_run_too(tmp_path, tripwires):
    """run()'s keyword arguments get the same range checks as the environment text."""
    w = _write(tmp_path / "w.yaml", GOOD_WORKLOAD)
    d = _write(tmp_path / "d.yaml", GOOD_DRIVER)
    for kw, expect in [({"consumers_per_subscription": -1}, "must be >= 1"),
                       ({"rate": float("inf")}, "must be a finite number"),
                       ({"drain_at_end": "yes"}, "must be true or false")]:
        with pytest.raises(ConfigError, match=expect):
            runner.run(w, d, "127.0.0.1:9", output_dir=tmp_path / "out", **kw)
    assert not (tmp_path / "out").exists()


def test_payloads_too_big_for_memory_are_refused_before_they_are_built(tmp_path, tripwires):
    w = _write(tmp_path / "w.yaml", workload(messageSize=10**9, randomizedPayloadPoolSize=10**6))
    d = _write(tmp_path / "d.yaml", GOOD_DRIVER)
    with pytest.raises(ConfigError, match=r"w\.yaml: payloads of 1000000000000000 bytes .* more "
                                          r"than half this machine's memory"):
        runner.run(w, d, "127.0.0.1:9", output_dir=tmp_path / "out")


def test_the_good_inputs_pass_the_same_checks(tmp_path):
    """The table's inputs are broken only where each case breaks them."""
    w = _write(tmp_path / "w.yaml", GOOD_WORKLOAD)
    d = _write(tmp_path / "d.yaml", GOOD_DRIVER)
    runner.check(w, d, "127.0.0.1:9", **LabScale.parse("rate=0.5,warmup_s=0"))
