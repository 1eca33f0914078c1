"""OMB workload/driver YAML parsing: the TR's files as written, OMB's names and defaults,
unknown fields, Java properties text and the Java -> librdkafka translation."""
from pathlib import Path

import pytest

from tr4947.omb.driver import consumer_config, parse_driver, producer_config
from tr4947.javaprops import PropertiesError, parse_properties, parse_properties_lines
from tr4947.omb.workload import ConfigError, parse_workload, workload_file_name

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "omb"
#: The smallest workload the loader accepts (every field OMB's default would break is given).
W0 = {"topics": 1, "partitionsPerTopic": 1, "messageSize": 10, "producersPerTopic": 1,
      "testDurationMinutes": 1}


def driver(**kw) -> dict:
    """A complete driver mapping (all fields OMB's Kafka driver needs), changed by ``kw``."""
    d = {"name": "K", "driverClass": "io.openmessaging.benchmark.driver.kafka.KafkaBenchmarkDriver",
         "replicationFactor": 1, "topicConfig": "", "commonConfig": "bootstrap.servers=h:1\n",
         "producerConfig": "", "consumerConfig": ""}
    d.update(kw)
    return d


def test_tr_cpu_workload_reads_as_written():
    w = parse_workload(FIX / "tr-cpu-1-topic-100-partitions-1kb.yaml")
    assert w.name == "4 producer / 4 consumers on 1 topic"
    assert (w.topics, w.partitionsPerTopic, w.messageSize) == (1, 100, 1024)
    assert w.payloadFile == "payload/payload-1Kb.data"
    assert (w.subscriptionsPerTopic, w.consumerPerSubscription, w.producersPerTopic) == (1, 4, 4)
    assert w.producerRate == 40000 and w.testDurationMinutes == 5
    # OMB defaults for fields the TR leaves out
    assert w.warmupDurationMinutes == 1 and w.backlogDrainRatio == 1.0
    assert w.keyDistributor == "NO_KEY" and w.useRandomizedPayloads is False
    assert w.total_producers == 4 and w.total_consumers == 4


def test_tr_cvo_workload_has_no_name_and_randomized_payloads():
    w = parse_workload(FIX / "tr-cvo-1-topic-100-partitions-1kb.yaml")
    assert w.name is None
    assert w.useRandomizedPayloads and w.randomBytesRatio == 0.5
    assert w.randomizedPayloadPoolSize == 100 and w.messageSize == 32768
    assert w.total_producers == 160 and w.total_consumers == 320 and w.producerRate == 1_000_000


def test_workload_file_name_is_omb_result_prefix():
    assert workload_file_name("workloads/1-topic-100-partitions-1kb.yaml") == \
        "1-topic-100-partitions-1kb"


def test_unknown_workload_field_is_named():
    with pytest.raises(ConfigError, match=r"producerRat\b.*OMB itself would silently ignore"):
        parse_workload({**W0, "producerRat": 1000})


def test_lenient_ignores_unknown_fields_like_omb(caplog):
    w = parse_workload({**W0, "producerRat": 1000}, strict=False)
    assert w.producerRate == 0
    assert "producerRat" in caplog.text


@pytest.mark.parametrize("field,value,msg", [
    ("topics", "four", "not a valid int"),
    ("messageSize", 1.5, "not a valid int"),
    ("useRandomizedPayloads", "yes", "not a valid bool"),
])
def test_wrong_types_are_rejected(field, value, msg):
    with pytest.raises(ConfigError, match=msg):
        parse_workload({**W0, field: value})


def test_backlog_without_rate_is_rejected_as_in_omb():
    with pytest.raises(ConfigError, match="Cannot probe producer sustainable rate"):
        parse_workload({**W0, "subscriptionsPerTopic": 1, "consumerPerSubscription": 1,
                        "consumerBacklogSizeGB": 1, "producerRate": 0})


def test_tr_drivers_read_as_written():
    sync = parse_driver(FIX / "kafka-sync.yaml")
    thr = parse_driver(FIX / "kafka-throughput.yaml")
    assert sync.name == thr.name == "Kafka" and sync.replicationFactor == 3
    assert sync.topic_properties == {"min.insync.replicas": "2", "flush.messages": "1",
                                     "flush.ms": "0"}
    assert thr.topic_properties == {"min.insync.replicas": "2"}
    assert thr.common_properties["default.api.timeout.ms"] == "1200000"
    # commonConfig reaches producer and consumer, *Config on top (as OMB builds them)
    assert thr.producer_properties["request.timeout.ms"] == "1200000"
    assert thr.producer_properties["batch.size"] == "1048576"
    assert thr.consumer_properties["max.partition.fetch.bytes"] == "10485760"


def test_java_properties_syntax():
    text = ("# comment\n! also a comment\n  a=1\nb : two words \nc\tx\nd=line\\\n   continued\n"
            "e=\\u0041\\t\nf=\n")
    assert parse_properties(text) == {"a": "1", "b": "two words ", "c": "x",
                                      "d": "linecontinued", "e": "A\t", "f": ""}
    assert parse_properties("") == {} and parse_properties(None) == {}


def test_every_entry_keeps_its_line_and_java_reads_hash_colon_as_a_comment():
    text = "#: not=metadata\n\n  a=1\nb \\\n   = 2\na=3\nsmile=\\uD83D\\uDE00\n"
    # Java keeps a key's last value; the driver check wants every occurrence and its line.
    assert parse_properties_lines(text) == [("a", "1", 2), ("b", "2", 3), ("a", "3", 5),
                                            ("smile", "\U0001F600", 6)]
    assert parse_properties(text)["a"] == "3"
    with pytest.raises(PropertiesError, match=r"malformed \\uxxxx escape") as e:
        parse_properties_lines("x=1\n\n y=\\u00zz\n")
    assert e.value.line == 2


def test_producer_properties_are_translated_for_librdkafka():
    thr = parse_driver(FIX / "kafka-throughput.yaml")
    pc = producer_config(thr, bootstrap="127.0.0.1:9092")
    assert pc.config["bootstrap.servers"] == "127.0.0.1:9092"
    assert pc.config["acks"] == "all" and pc.config["linger.ms"] == "1"
    assert pc.config["batch.size"] == "1048576"
    # librdkafka caps request.timeout.ms at 900000 (the TR's 1200000 means "no timeout")
    assert pc.config["request.timeout.ms"] == "900000"
    # Java defaults the driver does not set are made explicit
    assert pc.config["queue.buffering.max.kbytes"] == "32768"
    assert pc.config["partitioner"] == "murmur2_random"
    assert any("default.api.timeout.ms" in n for n in pc.notes)


def test_renamed_and_converted_properties():
    d = parse_driver(driver(producerConfig="buffer.memory=67108864\ndelivery.timeout.ms=5000\n"
                                           "max.request.size=2097152\n",
                            consumerConfig="fetch.max.wait.ms=100\npartition.assignment.strategy="
                                           "org.apache.kafka.clients.consumer.RoundRobinAssignor\n"))
    p, c = producer_config(d), consumer_config(d)
    assert p.config["queue.buffering.max.kbytes"] == "65536"
    assert p.config["message.timeout.ms"] == "5000"
    assert p.config["message.max.bytes"] == "2097152"
    assert c.config["fetch.wait.max.ms"] == "100"
    assert c.config["partition.assignment.strategy"] == "roundrobin"


def test_unmappable_property_is_rejected_by_name():
    d = parse_driver(driver(producerConfig="partitioner.class=com.example.MyPartitioner\n"))
    with pytest.raises(ConfigError, match="partitioner.class"):
        producer_config(d)


def test_producer_setting_in_common_config_is_ignored_by_consumer():
    d = parse_driver(driver(commonConfig="bootstrap.servers=h:1\nacks=all\n"))
    c = consumer_config(d)
    assert "acks" not in c.config and any("acks" in n for n in c.notes)


def test_unknown_driver_field_and_wrong_driver_class():
    with pytest.raises(ConfigError, match="replicationFactr"):
        parse_driver(driver(replicationFactr=3))
    with pytest.raises(ConfigError, match="only OMB's Kafka driver"):
        parse_driver(driver(driverClass="io.openmessaging.benchmark.driver.pulsar.PulsarBenchmarkDriver"))


def test_properties_given_as_yaml_mapping_get_a_hint():
    with pytest.raises(ConfigError, match=r"producerConfig: a mapping is not allowed \(must be "
                                          r"Java properties text, e.g. 'producerConfig: \|'"):
        parse_driver(driver(producerConfig={"acks": "all"}))


def test_missing_bootstrap_is_explained():
    d = parse_driver(driver(commonConfig=""))
    with pytest.raises(ConfigError, match="bootstrap.servers"):
        producer_config(d)


def test_lab_scale_from_environment_text_and_sizes():
    from tr4947.omb.runner import LabScale
    kw = LabScale.parse("duration_s=20, rate=0.01,"
                        "partitions=8,drain_at_end=true")
    assert kw == {"duration_s": 20.0, "rate": 0.01,
                  "partitions": 8, "drain_at_end": True}
    sc = LabScale.from_kwargs(**kw)
    w = parse_workload(FIX / "tr-cvo-1-topic-100-partitions-1kb.yaml")
    run_w = LabScale.from_kwargs(partitions=8, producers_per_topic=2,
                                 consumers_per_subscription=3).apply(w)
    assert (run_w.partitionsPerTopic, run_w.producersPerTopic,
            run_w.consumerPerSubscription) == (8, 2, 3)
    assert run_w.messageSize == w.messageSize == 32768 and w.partitionsPerTopic == 100
    assert sc.duration_s == 20.0 and sc.rate == 0.01
    with pytest.raises(ConfigError, match="unknown lab scale option 'duration'"):
        LabScale.parse("duration=20")
    with pytest.raises(ConfigError, match="not a number"):
        LabScale.parse("rate=fast")
    with pytest.raises(ConfigError, match=r"partitions: 0 is not allowed "
                                          r"\(must be >= 1"):
        LabScale.from_kwargs(partitions=0)


def test_message_size_override_cannot_resize_a_payload_file():
    from tr4947.omb.runner import LabScale
    w = parse_workload(FIX / "tr-cpu-1-topic-100-partitions-1kb.yaml")
    with pytest.raises(ConfigError, match="cannot resize a payloadFile"):
        LabScale.from_kwargs(message_size=512).apply(w)


REPO = Path(__file__).resolve().parents[2]
OMB_FILES = sorted(REPO.glob("snippets/**/*.yaml")) + sorted(FIX.glob("*.yaml"))


@pytest.mark.parametrize("path", OMB_FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_snippet_and_fixture_loads_exactly_as_written(path):
    """The loaders' checks refuse none of the project's OMB files and change no value."""
    import dataclasses

    import yaml
    from tr4947.omb.driver import DriverConfig, admin_config
    from tr4947.omb.workload import Workload
    raw = yaml.safe_load(path.read_text())
    if "driverClass" in raw:
        d = parse_driver(path)
        assert d.to_dict() == {**DriverConfig().to_dict(), "reset": False, **raw}
        producer_config(d, "b:1"), consumer_config(d, "b:1"), admin_config(d, "b:1")
    else:
        w = parse_workload(path)
        defaults = {f.name: f.default for f in dataclasses.fields(Workload)}
        assert w.to_dict() == {**defaults, **raw}


def test_the_project_has_omb_files_to_check():
    names = {p.name for p in OMB_FILES}
    assert len(OMB_FILES) >= 14 and {"CVO-6-workload.yaml", "kafka-sync.yaml"} <= names


def test_lenient_mode_warns_where_strict_refuses(caplog):
    text = ("topics: 1\npartitionsPerTopic: 1\nmessageSize: 10\nproducersPerTopic: 1\n"
            "testDurationMinutes: 1\nkeyDistributor: KEY_ROUND_ROBN\ntopics: 2\n")
    with pytest.raises(ConfigError, match=r"workload YAML, line 7: topics is given 2 times"):
        parse_workload(text)
    w = parse_workload(text, strict=False)
    # As OMB: YAML keeps the last value, an unknown enum constant reads as NO_KEY.
    assert w.topics == 2 and w.keyDistributor == "NO_KEY"
    assert "line 7: topics is given 2 times" in caplog.text and "KEY_ROUND_ROBN" in caplog.text


def test_property_lines_follow_the_yaml_block_style():
    """Literal blocks (|) give each property its own file line; a folded block cannot, so the
    error names the block's line."""
    base = ("name: K\ndriverClass: io.openmessaging.benchmark.driver.kafka.KafkaBenchmarkDriver\n"
            "replicationFactor: 1\ntopicConfig: ''\ncommonConfig: 'bootstrap.servers=h:1'\n"
            "consumerConfig: ''\n")
    with pytest.raises(ConfigError, match=r"driver YAML, line 9: producerConfig: buffer.memory=x"):
        parse_driver(base + "producerConfig: |\n  acks=all\n  buffer.memory=x\n")
    with pytest.raises(ConfigError, match=r"driver YAML, line 7: producerConfig: buffer.memory=x"):
        parse_driver(base + "producerConfig: >\n  acks=all\n\n  buffer.memory=x\n")
