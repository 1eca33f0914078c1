"""Broken and hostile inventories are refused on load, naming the file, the host, the
variable (the line where it can be found) and what is allowed; nothing is opened or run."""
from __future__ import annotations

from dataclasses import dataclass

import pytest

from tr4947 import inventory, targets

GOOD = """\
all:
  vars:
    kafka_port: 9092
  children:
    ontap:
      hosts:
        cluster1:
          ansible_host: 192.0.2.10
          ontap_svm: svm_kafka
          ontap_data_lifs:
            - {name: lif1, address: 192.0.2.11}
    kafka:
      children:
        c1:
          vars: {kafka_cluster: c1, kafka_mountpoint: /data/kafka}
          hosts:
            broker-1: {ansible_host: broker-1.example.invalid, kafka_node_id: 1}
"""


@dataclass
class Case:
    id: str
    text: str
    expect: tuple[str, ...]


def swap(old: str, new: str) -> str:
    assert old in GOOD
    return GOOD.replace(old, new)


CASES = [
    Case("empty-file", "", ("is empty",)),
    Case("only-comments", "# nothing here\n", ("is empty",)),
    Case("tab-indented", GOOD.replace("  vars:", "\tvars:"),
         ("line 2", "tabs are not allowed")),
    Case("unclosed-flow", swap("{name: lif1, address: 192.0.2.11}", "{name: lif1"),
         ("not valid YAML", "line")),
    Case("top-level-list", "- all\n- hosts\n", ("top level must be a mapping",)),
    Case("no-hosts", "all:\n  children:\n    ontap: {}\n", ("has no hosts",)),
    Case("shell-in-address", swap("192.0.2.10", "'192.0.2.10; rm -rf /'"),
         ("host cluster1", "ansible_host", "not a host name or an IP address", "line 8")),
    Case("space-in-address", swap("192.0.2.10", "'192.0.2.10 other'"),
         ("ansible_host",)),
    Case("backtick-address", swap("broker-1.example.invalid", "'`reboot`'"),
         ("host broker-1", "ansible_host")),
    Case("port-zero", swap("kafka_port: 9092", "kafka_port: 0"), ("kafka_port", "1 to 65535")),
    Case("port-too-big", swap("kafka_port: 9092", "kafka_port: 70000"), ("kafka_port",)),
    Case("port-text", swap("kafka_port: 9092", "kafka_port: ninety"), ("kafka_port",)),
    Case("svm-with-semicolon", swap("svm_kafka", "'svm; volume delete *'"),
         ("ontap_svm", "an SVM name")),
    Case("svm-too-long", swap("svm_kafka", "s" * 48), ("ontap_svm", "at most 47")),
    Case("relative-mountpoint", swap("/data/kafka", "data/kafka"),
         ("kafka_mountpoint", "absolute path")),
    Case("mountpoint-with-space", swap("/data/kafka", "'/data/my kafka'"),
         ("kafka_mountpoint",)),
    Case("mountpoint-with-subst", swap("/data/kafka", "'/data/$(id)'"), ("kafka_mountpoint",)),
    Case("node-id-negative", swap("kafka_node_id: 1", "kafka_node_id: -1"),
         ("kafka_node_id", "0 or more")),
    Case("lif-bad-address", swap("address: 192.0.2.11", "address: 'a b'"),
         ("ontap_data_lifs",)),
    Case("lif-unknown-key", swap("address: 192.0.2.11", "address: 192.0.2.11, mtu: 9000"),
         ("ontap_data_lifs",)),
    Case("host-alias-with-slash", swap("broker-1: {", "'../broker': {"),
         ("host name", "inventory alias")),
    Case("storage-kind-typo", swap("kafka_cluster: c1,", "kafka_cluster: c1, kafka_storage: nsf,"),
         ("kafka_storage", "nfs or das")),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_refused(case, tmp_path):
    d = tmp_path / "inv"
    d.mkdir()
    (d / "hosts.yml").write_text(case.text)
    with pytest.raises(inventory.InventoryError) as exc:
        inventory.load(d)
    msg = str(exc.value)
    assert str(d / "hosts.yml") in msg or str(d) in msg, msg
    for part in case.expect:
        assert part in msg, f"{part!r} not in {msg!r}"
    assert "\n" not in msg.strip(), "one clear line, not a dump"
    # targets.open refuses it the same way, before any connection is made.
    with pytest.raises(inventory.InventoryError):
        targets.open(str(d), echo=False)


# The committed inventories keep their variables in group_vars/ and host_vars/, as Ansible
# lays an inventory out: mistakes there are refused too, naming that file and line.
LAYOUT = "all:\n  children:\n    ontap:\n      hosts:\n        cluster1:\n" \
         "    kafka:\n      children:\n        c1:\n          hosts:\n            broker-1:\n"
VARS = {"group_vars/all.yml": "kafka_port: 9092\n",
        "group_vars/c1.yml": "kafka_cluster: c1\nkafka_mountpoint: /data/kafka\n",
        "host_vars/cluster1.yml": "ansible_host: 192.0.2.10\nontap_svm: svm_kafka\n",
        "host_vars/broker-1.yml": "ansible_host: broker-1.example.invalid\nkafka_node_id: 1\n"}
LAYOUT_CASES = [
    Case("host-vars-bad-address", "host_vars/cluster1.yml|ontap_svm: svm_kafka\n"
         "ansible_host: '192.0.2.10; reboot'\n",
         ("host cluster1", "ansible_host", "host_vars/cluster1.yml line 2")),
    Case("group-vars-bad-port", "group_vars/all.yml|# ports\nkafka_port: ninety\n",
         ("kafka_port", "group_vars/all.yml line 2")),
    Case("group-vars-bad-path", "group_vars/c1.yml|kafka_cluster: c1\nkafka_mountpoint: data\n",
         ("host broker-1", "kafka_mountpoint", "group_vars/c1.yml line 2")),
    Case("group-vars-not-yaml", "group_vars/c1.yml|kafka_cluster: [c1\n",
         ("group_vars/c1.yml", "not valid YAML", "line")),
    Case("host-vars-a-list", "host_vars/broker-1.yml|- ansible_host: x\n",
         ("host_vars/broker-1.yml", "must be a mapping")),
]


def write_layout(d, change: str = ""):
    (d / "hosts.yml").write_text(LAYOUT)
    files = dict(VARS)
    if change:
        rel, text = change.split("|", 1)
        files[rel] = text
    for rel, text in files.items():
        (d / rel).parent.mkdir(parents=True, exist_ok=True)
        (d / rel).write_text(text)


@pytest.mark.parametrize("case", LAYOUT_CASES, ids=lambda c: c.id)
def test_refused_in_group_and_host_vars(case, tmp_path):
    d = tmp_path / "inv"
    d.mkdir()
    write_layout(d, case.text)
    with pytest.raises(inventory.InventoryError) as exc:
        inventory.load(d)
    msg = str(exc.value)
    for part in case.expect:
        assert part in msg, f"{part!r} not in {msg!r}"
    assert "\n" not in msg.strip()


def test_the_good_layout_loads_as_ansible_reads_it(tmp_path):
    d = tmp_path / "inv"
    d.mkdir()
    write_layout(d)
    inv = inventory.load(d)
    assert inv.ontap().get("ontap_svm") == "svm_kafka" and inv.ontap().address == "192.0.2.10"
    assert [(h.name, h.get("kafka_node_id"), h.get("kafka_port"), h.get("kafka_mountpoint"))
            for h in inv.cluster("c1")] == [("broker-1", 1, 9092, "/data/kafka")]


def test_the_good_inventory_loads(tmp_path):
    d = tmp_path / "inv"
    d.mkdir()
    (d / "hosts.yml").write_text(GOOD)
    inv = inventory.load(d)
    assert inv.kind == "real" and inv.ontap().get("ontap_svm") == "svm_kafka"
    assert [h.name for h in inv.cluster("c1")] == ["broker-1"]


def test_every_committed_inventory_passes():
    for d in sorted(inventory.paths.INVENTORY.iterdir()):
        if d.is_dir():
            inventory.load(d.name)
