"""The lab-remote inventory is the lab's, less how the lab builds itself: a real target."""
import yaml

from tr4947 import inventory, targets
from tr4947.lab import remote_inventory as ri


def test_committed_files_are_current():
    assert ri.committed() == ri.render(), "run python -m tr4947.lab.remote_inventory --write"


def test_lab_only_settings_are_gone_and_reach_settings_kept():
    tree = ri.render()
    docs = {rel: yaml.safe_load(text) for rel, text in tree.items()}

    def keys(node):
        if isinstance(node, dict):
            return set(node) | set().union(*(keys(v) for v in node.values()))
        if isinstance(node, list):
            return set().union(*(keys(v) for v in node)) if node else set()
        return set()
    assert not set().union(*(keys(d) for d in docs.values())) & ri.LAB_ONLY
    assert docs["group_vars/all.yml"]["ansible_ssh_private_key_file"].endswith("id_ed25519")
    assert docs["host_vars/cluster1.yml"]["ansible_host"]
    # A variables file with nothing left (the shared broker settings) is not written.
    assert "group_vars/cpu_and_recovery.yml" not in tree
    assert set(tree) < {"hosts.yml"} | {f"{d}/{p.name}" for d in ("group_vars", "host_vars")
                                        for p in (ri.SOURCE / d).glob("*.yml")}


def test_a_new_lab_only_key_would_not_leak(tmp_path):
    (tmp_path / "group_vars").mkdir()
    (tmp_path / "hosts.yml").write_text("all:\n  vars: {target_kind: lab, kafka_port: 9092}\n"
                                        "  hosts:\n    h1:\n")
    (tmp_path / "group_vars" / "all.yml").write_text("kafka_heap_opts: -Xmx1g\nkafka_home: /k\n")
    tree = ri.render(tmp_path)
    assert yaml.safe_load(tree["hosts.yml"]) == {"all": {"vars": {"kafka_port": 9092},
                                                         "hosts": {"h1": None}}}
    assert yaml.safe_load(tree["group_vars/all.yml"]) == {"kafka_home": "/k"}


def test_write_removes_what_the_lab_no_longer_has(tmp_path):
    stale = tmp_path / "host_vars" / "gone.yml"
    stale.parent.mkdir()
    stale.write_text("ansible_host: 192.0.2.1\n")
    ri.write(ri.render(), tmp_path)
    assert not stale.exists() and ri.committed(tmp_path) == ri.render()


def test_opens_as_a_real_target_with_the_labs_hosts():
    remote = targets.open("lab-remote", echo=False)
    lab = targets.open("lab", echo=False)
    assert remote.kind != "lab" and not remote.confirm
    assert [(h.name, h.address) for h in remote.hosts("all")] == \
        [(h.name, h.address) for h in lab.hosts("all")]
    # Every variable a remote site has is the lab's own value.
    lab_inv, remote_inv = inventory.load("lab"), inventory.load("lab-remote")
    for name, h in remote_inv.hosts.items():
        for k, v in h.vars.items():
            if k not in ("inventory_dir", "inventory_file"):
                assert lab_inv.hosts[name].vars[k] == v, (name, k)
