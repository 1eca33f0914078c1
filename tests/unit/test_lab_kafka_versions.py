"""The lab installs more than one Kafka release: its own (KRaft) and the TR's 3.2.3 (with
ZooKeeper). Each release's bin/ wrappers must call classes that exist in that release's jars
(Kafka 4 moved the tools to org.apache.kafka.tools), and a ZooKeeper-era cluster must be
configured and started as one."""
from __future__ import annotations

import zipfile

import pytest

from tr4947 import kafka_tools, paths
from tr4947.inventory import Host
from tr4947.lab import kafka


def classes_in(version: str) -> set[str]:
    try:
        libs = paths.kafka_libs(version)
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    out = set()
    for jar in libs.glob("*.jar"):
        with zipfile.ZipFile(jar) as z:
            out |= {n[:-6].replace("/", ".") for n in z.namelist() if n.endswith(".class")}
    return out


@pytest.mark.parametrize("version", paths.kafka_versions())
def test_every_wrapper_runs_a_class_of_its_own_release(version):
    have = classes_in(version)
    mains = dict(kafka.tools(version), server=kafka.SERVER_MAIN)
    if kafka.uses_zookeeper(version):
        mains["zookeeper"] = kafka.ZOOKEEPER_MAIN
    missing = {name: cls for name, cls in mains.items() if cls not in have}
    assert not missing, f"Kafka {version}: no such class in its jars: {missing}"


@pytest.mark.parametrize("version", paths.kafka_versions())
def test_installed_scripts_name_that_release_and_its_logging(version):
    files = kafka.install_files(version=version)
    topics = files["/opt/kafka/bin/kafka-topics.sh"][0]
    assert f"kafka-{version}/libs" in topics and kafka.tools(version)["kafka-topics"] in topics
    zk = kafka.uses_zookeeper(version)
    assert ("-Dlog4j.configuration=file:" in topics) == zk       # log4j 1 (reload4j) in 3.x
    assert ("/opt/kafka/bin/zookeeper-server-start.sh" in files) == zk


def host(role: str, **extra) -> Host:
    addr = "198.18.2.100" if role == "controller" else "198.18.2.1"
    return Host(f"c-{role}", {"kafka_cluster": "c", "kafka_role": role, "ansible_host": addr,
                              "kafka_node_id": 100 if role == "controller" else 1,
                              "kafka_cluster_id": "Y3aEpLyG8stbRx_zN6pPDQ",
                              "kafka_log_dirs": "/var/lib/kafka/metadata" if role == "controller"
                              else "/demo/broker_demo_1", **extra})


def test_a_zookeeper_era_cluster_is_configured_as_one():
    ctl, brk = host("controller"), host("broker")
    for h in (ctl, brk):
        h.vars.update(kafka.version_vars(h, "3.2.3"))
    c, b = kafka.Node(ctl), kafka.Node(brk)
    assert c.port == 2181 and c.zookeeper
    props = kafka.server_properties(b, [c])
    assert "broker.id=1\n" in props and "zookeeper.connect=198.18.2.100:2181\n" in props
    assert "process.roles" not in props and "node.id" not in props
    zk = kafka.zookeeper_properties(c)
    assert "clientPortAddress=198.18.2.100\n" in zk and "dataDir=/var/lib/kafka/metadata\n" in zk
    # No KRaft format step before a ZooKeeper-era start; the controller host starts ZooKeeper.
    assert "kafka-storage" not in kafka_tools.start_command(brk)
    assert "zookeeper-server-start.sh -daemon" in kafka_tools.start_command(ctl)


def test_the_labs_own_release_stays_kraft():
    ctl, brk = host("controller"), host("broker")
    assert kafka.version_vars(brk, paths.kafka_version()) == {"kafka_version":
                                                              paths.kafka_version()}
    props = kafka.server_properties(kafka.Node(brk), [kafka.Node(ctl)])
    assert "process.roles=broker\n" in props and "controller.quorum.voters=100@198.18.2.100:9093" \
        in props
    assert "kafka-storage.sh format" in kafka_tools.start_command(brk)


def test_a_release_the_lab_does_not_install_is_refused_with_the_ones_it_does():
    with pytest.raises(FileNotFoundError, match="3.2.3"):
        paths.kafka_libs("2.8.2")
    with pytest.raises(ValueError, match="MAJOR.MINOR"):
        kafka.uses_zookeeper("latest")
