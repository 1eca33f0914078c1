"""Broker files edited as an operator edits them: values replaced in place, comments and
order kept, missing keys appended, the broker's identity kept (broker_config and
Target.apply_properties, whose file edits run in local bash here)."""
import pytest

from tr4947 import broker_config, paths
from tr4947.targets.base import BACKUP_SUFFIX

from ..support.targets import NoTransport, local_target, write_inventory

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


# What a broker of a real (ZooKeeper-era) cluster already has: its own identity.
BROKER = ("# broker-1 of the CVO cluster\n"
          "broker.id=0\n"
          "listeners=PLAINTEXT://ip-10-20-2-11.ec2.internal:9092\n"
          "advertised.listeners=PLAINTEXT://ip-10-20-2-11.ec2.internal:9092\n"
          "zookeeper.connect=ip-10-20-2-31.ec2.internal:2181\n"
          "log.dirs=/tmp/kafka-logs\n"
          "num.io.threads=8\n")


@pytest.fixture
def broker(tmp_path):
    t = local_target(write_inventory(tmp_path), confirm=True)
    conf = tmp_path / "server.properties"
    conf.write_text(BROKER)
    return t, conf


def test_apply_properties_keeps_the_brokers_identity_and_a_backup(broker):
    t, conf = broker
    snippet = paths.SNIPPETS / "aws-cvo" / "CVO-5-server-ha.properties"
    tr = broker_config.keys(snippet.read_text())
    r = t.apply_properties(snippet, "b1", str(conf), check=True)
    now = broker_config.keys(conf.read_text())
    mine = broker_config.keys(BROKER)
    for k in ("broker.id", "listeners", "advertised.listeners", "zookeeper.connect"):
        assert now[k] == mine[k]
    for k in set(broker_config.IDENTITY) - set(mine):
        assert k not in now                       # the snippet's (lab) identity never arrives
    assert now["log.dirs"] == tr["log.dirs"] and now["num.io.threads"] == tr["num.io.threads"]
    assert conf.read_text().startswith("# broker-1 of the CVO cluster\n")   # edited in place
    backup = conf.with_name(conf.name + BACKUP_SUFFIX)
    assert backup.read_text() == BROKER
    assert r.stdout.startswith(f"{len(broker_config.settings(snippet.read_text()))} setting(s) "
                               f"applied to {conf}; the file as it was: {backup}")
    # The transcript says what was set and what stayed, not the whole file.
    assert r.command.startswith(f"# set in {conf} (the file is copied to {backup} first; the "
                                "host's own ")
    # A second run changes nothing and keeps the first backup.
    edited = conf.read_text()
    again = t.apply_properties(snippet, "b1", str(conf), check=True)
    assert again.stdout == f"{conf} already has these settings: nothing changed\n"
    assert conf.read_text() == edited and backup.read_text() == BROKER


def test_apply_properties_on_a_host_without_the_file_places_the_snippet(broker, tmp_path):
    t, _conf = broker
    text = "node.id=4\nnum.io.threads=16\n"
    dest = tmp_path / "new" / "server.properties"
    t.apply_properties(None, "b1", str(dest), text=text, check=True)
    assert dest.read_text() == text
    assert not dest.with_name(dest.name + BACKUP_SUFFIX).exists()


def test_apply_properties_unconfirmed_is_a_plan_that_reads_nothing(tmp_path):
    t = NoTransport(write_inventory(tmp_path), confirm=False, echo=False)
    r = t.apply_properties(None, "b1", "/opt/kafka/config/server.properties",
                           text="node.id=9\nnum.io.threads=96\n")
    conf = "/opt/kafka/config/server.properties"
    assert r.planned and r.stdout.splitlines()[-2:] == [
        f"# set in {conf} (the file is copied to {conf}{BACKUP_SUFFIX} first; the host's own "
        "node.id stay):", "num.io.threads=96"]
