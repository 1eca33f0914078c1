"""KafkaCluster, the one view of a cluster that chapters take: roles, and where each broker
keeps its log (its log dir, and on NFS its volume, export, mount point and data LIF), read
from the inventory; a standby taking over broker 1 keeps broker 1 first."""
from __future__ import annotations

import pytest

from tests.support.targets import NoTransport
from tr4947 import inventory


@pytest.fixture
def t():
    return NoTransport(inventory.load("lab"), confirm=False, echo=False)


def test_roles_and_bootstrap(t):
    nfs = t.cluster("nfs")
    assert [h.name for h in nfs.brokers] == ["nfs-broker-1", "nfs-broker-2", "nfs-broker-3"]
    assert nfs.standby.name == "nfs-standby" and [h.name for h in nfs.controllers] == \
        ["nfs-controller"]
    assert nfs.bootstrap(skip=["nfs-broker-1"]).split(",") == [
        f"{h.kafka_address}:{h.get('kafka_port', 9092)}" for h in nfs.brokers[1:]]


def test_where_a_broker_keeps_its_log(t):
    nfs, das = t.cluster("nfs"), t.cluster("das")
    b1 = nfs.brokers[0]
    assert nfs.on_nfs and not das.on_nfs
    assert nfs.volume() == b1.get("nfs_volume") == "kafka_nfs_b1"
    junction = (b1.get("kafka_volumes") or {}).get("kafka_nfs_b1", {}).get(
        "junction_path", "/kafka_nfs_b1")
    assert nfs.export() == f"{b1.get('nfs_lif')}:{junction}"
    assert nfs.log_dir() == "/mnt/data/kafka" and nfs.node_id() == 1
    assert nfs.lif()["address"] == b1.get("nfs_lif") and nfs.lif().get("name")
    assert das.export() is None and das.mountpoint() is None and das.lif() == {}


def test_a_standby_takes_over_broker_1_in_its_place(t):
    nfs = t.cluster("nfs")
    old, new = nfs.brokers[0], nfs.standby
    nfs.took_over(old, new)
    assert nfs.brokers[0] is new and nfs.standby is old
    assert [h.name for h in nfs.brokers[1:]] == ["nfs-broker-2", "nfs-broker-3"]
