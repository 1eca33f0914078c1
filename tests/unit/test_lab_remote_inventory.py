"""The lab-remote inventory is the lab's, less how the lab builds itself: a real target."""
import yaml

from tr4947 import targets
from tr4947.lab import remote_inventory as ri


def test_committed_file_is_current():
    assert ri.FILE.read_text() == ri.render(), \
        "run python -m tr4947.lab.remote_inventory --write"


def test_lab_only_settings_are_gone_and_reach_settings_kept(tmp_path):
    doc = yaml.safe_load(ri.render())

    def keys(node):
        if isinstance(node, dict):
            return set(node) | set().union(*(keys(v) for v in node.values()))
        if isinstance(node, list):
            return set().union(*(keys(v) for v in node)) if node else set()
        return set()
    assert not keys(doc) & ri.LAB_ONLY
    assert doc["all"]["vars"]["ansible_ssh_private_key_file"].endswith("id_ed25519")
    assert doc["all"]["children"]["ontap"]["hosts"]["cluster1"]["ansible_host"]


def test_a_new_lab_only_key_would_not_leak(tmp_path):
    src = tmp_path / "hosts.yml"
    src.write_text("all:\n  vars: {target_kind: lab, kafka_heap_opts: -Xmx1g, kafka_port: 9092}\n")
    doc = yaml.safe_load(ri.render(src))
    assert doc == {"all": {"vars": {"kafka_port": 9092}}}


def test_opens_as_a_real_target_with_the_labs_hosts():
    remote = targets.open("lab-remote", echo=False)
    lab = targets.open("lab", echo=False)
    assert remote.kind != "lab" and not remote.confirm
    assert [(h.name, h.address) for h in remote.hosts("all")] == \
        [(h.name, h.address) for h in lab.hosts("all")]
