"""AFF-1 end to end on a lab of its own: the TR's playbook (corrected) through ansible-runner
against the ONTAP stand-in's REST API, twice (creates, then changes nothing); the FlexGroup
read back with the netapp-ontap library and over SSH, and mounted by lab storage; the
playbook as the TR prints it fails the way Ansible fails it; no artifact holds the password."""
from __future__ import annotations

import pytest

from tr4947 import inventory
from tr4947.lab.lab import Lab
from tr4947.targets import playbooks
from tr4947.targets.lab import LabTarget

from .conftest import remapped_inventory, require_lab

pytestmark = pytest.mark.lab

TIB = 1024 ** 4


@pytest.fixture(scope="module")
def lab_target(tmp_path_factory):
    require_lab()
    import os
    base = tmp_path_factory.mktemp("aff-lab")
    root = base / "state"
    old = os.environ.get("TR4947_LAB_STATE")
    os.environ["TR4947_LAB_STATE"] = str(root)
    inv_path = remapped_inventory(base / "inventory", offset=50)
    lab = Lab(inv_path, root=root, echo=None)
    try:
        lab.up([])                          # the ONTAP stand-in only: SSH and REST
        yield LabTarget(inventory.load(inv_path), root=root, echo=False)
    finally:
        lab.down()
        if old is None:
            os.environ.pop("TR4947_LAB_STATE", None)
        else:
            os.environ["TR4947_LAB_STATE"] = old


def test_tr_playbook_as_printed_fails(lab_target):
    run = playbooks.run(lab_target, "AFF-1-flexgroup.tr-as-written.yml")
    assert run.rc != 0 and run.total("failures") == 1
    failed = [t for t in run.tasks if t.status == "failed"]
    assert failed and "'item' is undefined" in failed[0].detail


def test_playbook_creates_then_is_idempotent(lab_target):
    first = playbooks.run(lab_target, "AFF-1-flexgroup.yml").check()
    assert first.total("changed") == 1
    assert [t.detail for t in first.tasks] == ["actions: ['create']"]
    second = playbooks.run(lab_target, "AFF-1-flexgroup.yml").check()
    assert second.total("changed") == 0 and second.total("ok") == 1
    assert [t.status for t in second.tasks] == ["ok"]


def test_flexgroup_read_back_with_netapp_ontap(lab_target):
    from netapp_ontap.resources import Volume

    from tr4947.targets import ontap_rest
    with ontap_rest.connection(lab_target):
        v = Volume.find(name="kafka_fg_vol01", **{"svm.name": "svm_kafka"},
                        fields="style,aggregates.name,constituents_per_aggregate,space.size,"
                               "nas.path,snapshot_policy.name,state")
    assert v.style == "flexgroup" and v.state == "online"
    assert [a.name for a in v.aggregates] == ["aggr1", "aggr3", "aggr2", "aggr22"]
    assert v.constituents_per_aggregate == 8 and v.space.size == 10 * TIB
    assert v.nas.path == "/kafka_fg_vol01" and v.snapshot_policy.name == "none"


def test_flexgroup_read_back_with_na_ontap_rest_info(lab_target):
    run = playbooks.run(lab_target, "flexgroup-info.yml").check()
    assert run.total("changed") == 0
    ev = [e for e in run.events if e.get("event") == "runner_on_ok"
          and e["event_data"].get("task") == "Volume info"]
    rec = ev[0]["event_data"]["res"]["ontap_info"]["storage_volumes"]["records"][0]
    assert rec["style"] == "flexgroup" and rec["constituents_per_aggregate"] == 8
    assert rec["space"]["size"] == 10 * TIB and rec["nas"]["path"] == "/kafka_fg_vol01"


def test_clustershell_and_lab_storage_see_the_same_volume(lab_target):
    ontap = lab_target.inventory.ontap().name
    r = lab_target.run("volume show -vserver svm_kafka -volume kafka_fg_vol01 "
                       "-fields constituent-count,volume-style-extended", ontap, check=True)
    assert "32" in r.output and "flexgroup" in r.output
    from tr4947.lab import storage
    from tr4947.lab.ontap import state
    lif = lab_target.inventory.ontap().get("ontap_data_lifs")[0]["address"]
    mp = lab_target.root / "mnt-fg"
    mp.mkdir()
    storage.mount(f"{lif}:/kafka_fg_vol01", str(mp), options="vers=4.1,nconnect=16",
                  root=lab_target.root)
    try:
        (mp / "probe").write_text("written through the mount")
        vol = state.load(lab_target.root).volumes["svm_kafka:kafka_fg_vol01"]
        assert (state.backing_dir(vol, lab_target.root) / "probe").read_text() == \
            "written through the mount"
    finally:
        storage.umount(str(mp), root=lab_target.root)


def test_no_artifact_holds_the_password(lab_target):
    pw = lab_target._ontap_password(lab_target.inventory.ontap())
    arts = playbooks.PRIVATE_DATA_DIR / "artifacts"
    files = [f for f in arts.rglob("*") if f.is_file()]
    assert files, "ansible-runner wrote no artifacts"
    leaks = [f for f in files if pw in f.read_text(errors="ignore")]
    assert not leaks
