"""Broker files edited as an operator edits them: values replaced in place, comments and
order kept, missing keys appended; the lab maps a host's directories for the JVM."""
from pathlib import Path

from tr4947 import broker_config, paths
from tr4947.lab.brokers import effective_properties

BASE = """# Broker 1
node.id=1
listeners=PLAINTEXT://127.0.4.1:9092
advertised.listeners=PLAINTEXT://127.0.4.1:9092
log.dirs=/kafka_aggr3_vol1/broker1,/kafka_aggr3_vol2/broker1
num.io.threads=64
num.io.threads=8
"""


def test_for_broker_changes_id_address_and_log_dirs_in_place():
    text = broker_config.for_broker(BASE, 2, "127.0.4.2", log_dirs="/a/broker2,/b/broker2")
    lines = text.splitlines()
    assert lines[0] == "# Broker 1"
    assert lines[1:5] == ["node.id=2", "listeners=PLAINTEXT://127.0.4.2:9092",
                          "advertised.listeners=PLAINTEXT://127.0.4.2:9092",
                          "log.dirs=/a/broker2,/b/broker2"]
    # an untouched duplicate key stays as written (the last one wins, as in Java)
    assert broker_config.keys(text)["num.io.threads"] == "8"


def test_set_properties_replaces_duplicates_once_and_appends_missing_keys():
    text = broker_config.set_properties(BASE, {"num.io.threads": 96, "queued.max.requests": 2000},
                                        why="AFF-4 tuning")
    assert text.count("num.io.threads=") == 1 and "num.io.threads=96" in text
    assert text.rstrip().endswith("# --- AFF-4 tuning ---\nqueued.max.requests=2000")


def test_merge_file_applies_a_tuning_snippet():
    tuning = (paths.SNIPPETS / "aff-a900" / "AFF-4-broker-tuning.properties").read_text()
    k = broker_config.keys(broker_config.merge_file(BASE, tuning))
    assert k["num.io.threads"] == "96" and k["num.network.threads"] == "96"
    assert k["queued.max.requests"] == "2000" and k["node.id"] == "1"


def test_lab_maps_only_the_hosts_directories(tmp_path: Path):
    text = effective_properties(BASE + "metadata.log.dir=/var/lib/kafka/meta\n", tmp_path)
    k = broker_config.keys(text)
    assert k["log.dirs"] == f"{tmp_path}/kafka_aggr3_vol1/broker1,{tmp_path}/kafka_aggr3_vol2/broker1"
    assert k["metadata.log.dir"] == f"{tmp_path}/var/lib/kafka/meta"
    assert k["listeners"] == "PLAINTEXT://127.0.4.1:9092"


def test_onto_keeps_the_brokers_identity_and_sets_the_rest():
    existing = ("# my broker\nbroker.id=7\nlisteners=PLAINTEXT://kafka-7.corp:9092\n"
                "zookeeper.connect=zk.corp:2181\nnum.io.threads=8\n")
    text = broker_config.onto(existing, BASE + "queued.max.requests=2000\n")
    k = broker_config.keys(text)
    assert k["broker.id"] == "7" and k["listeners"] == "PLAINTEXT://kafka-7.corp:9092"
    assert "node.id" not in k and "advertised.listeners" not in k     # the snippet's identity
    assert k["zookeeper.connect"] == "zk.corp:2181"
    assert k["num.io.threads"] == "8"            # the snippet's last value (Java's rule)
    assert k["log.dirs"] == "/kafka_aggr3_vol1/broker1,/kafka_aggr3_vol2/broker1"
    assert k["queued.max.requests"] == "2000"
    assert text.splitlines()[0] == "# my broker"
    # applied twice, nothing changes; a broker without a file gets the snippet as it is
    assert broker_config.onto(text, BASE + "queued.max.requests=2000\n") == text
    assert broker_config.onto("", BASE) == BASE
