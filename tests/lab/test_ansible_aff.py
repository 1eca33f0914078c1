"""AFF-1 end to end on a test lab: the TR's playbook (corrected) through ansible-runner against
the ONTAP stand-in's REST API over the lab network, twice (creates, then changes nothing);
the FlexGroup read back with netapp-ontap (Target.ontap_rest) and the clustershell, and
mounted on the client host; the playbook as the TR prints it fails the way Ansible fails it.
ansible-runner writes the play's environment (with the password) into its artifacts: they
live in a private directory in /dev/shm while the play runs and are gone after it."""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from tr4947.lab.ontap import state
from tr4947.targets import playbooks

from .conftest import own_lab

pytestmark = pytest.mark.lab

TIB = 1024 ** 4


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    with own_lab(tmp_path_factory.mktemp("aff")) as tl:
        yield tl, tl.target()


@pytest.fixture
def artifacts(monkeypatch):
    """What each run's artifact directory held just before the run removed it."""
    seen = []
    rmtree = shutil.rmtree

    def inspect(path, *a, **kw):
        p = Path(path)
        files = {f: f.read_bytes() for f in p.rglob("*") if f.is_file()}
        seen.append((p, stat.S_IMODE(p.stat().st_mode), files))
        return rmtree(path, *a, **kw)
    monkeypatch.setattr(playbooks.shutil, "rmtree", inspect)
    return seen


def mine_left() -> list[Path]:
    return list(playbooks._artifact_root().glob(f"{playbooks.ARTIFACTS_PREFIX}{os.getpid()}-*"))


def test_tr_playbook_as_printed_fails(lab):
    _tl, t = lab
    run = playbooks.run(t, "AFF-1-flexgroup.tr-as-written.yml")
    assert run.rc != 0 and run.total("failures") == 1
    failed = [x for x in run.tasks if x.status == "failed"]
    assert failed and "'item' is undefined" in failed[0].detail


def test_playbook_creates_then_is_idempotent_and_leaves_no_password(lab, artifacts):
    tl, t = lab
    password = t.ontap_password()
    first = playbooks.run(t, "AFF-1-flexgroup.yml").check()
    assert first.total("changed") == 1
    assert [x.detail for x in first.tasks] == ["actions: ['create']"]
    second = playbooks.run(t, "AFF-1-flexgroup.yml").check()
    assert second.total("changed") == 0 and second.total("ok") == 1
    assert [x.status for x in second.tasks] == ["ok"]
    assert "ok=1" in second.recap() and "changed=0" in second.recap()
    # While a run lasted, its artifacts were in a private in-memory directory, and they did
    # hold the password (which is why they must not outlive the run) ...
    assert len(artifacts) == 2
    for d, mode, files in artifacts:
        assert d.parent == Path("/dev/shm") and mode == 0o700
        assert any(password.encode() in data for data in files.values()), sorted(files)
        assert not d.exists()
    # ... and nothing of them is left: not in /dev/shm, not under playbook/.
    assert mine_left() == []
    for f in playbooks.PRIVATE_DATA_DIR.rglob("*"):
        if f.is_file() and f.stat().st_size < 10 * 1024 ** 2:
            assert password.encode() not in f.read_bytes(), f
    assert password not in first.stdout + second.stdout


def test_flexgroup_read_back_with_netapp_ontap(lab):
    _tl, t = lab
    from netapp_ontap.resources import Volume
    with t.ontap_rest():
        v = Volume.find(name="kafka_fg_vol01", **{"svm.name": "svm_kafka"},
                        fields="style,aggregates.name,constituents_per_aggregate,space.size,"
                               "nas.path,snapshot_policy.name,state")
    assert v.style == "flexgroup" and v.state == "online"
    assert [a.name for a in v.aggregates] == ["aggr1", "aggr3", "aggr2", "aggr22"]
    assert v.constituents_per_aggregate == 8 and v.space.size == 10 * TIB
    assert v.nas.path == "/kafka_fg_vol01" and v.snapshot_policy.name == "none"


def test_flexgroup_read_back_with_na_ontap_rest_info(lab):
    _tl, t = lab
    run = playbooks.run(t, "flexgroup-info.yml").check()
    assert run.total("changed") == 0
    ev = [e for e in run.events if e.get("event") == "runner_on_ok"
          and e["event_data"].get("task") == "Volume info"]
    rec = ev[0]["event_data"]["res"]["ontap_info"]["storage_volumes"]["records"][0]
    assert rec["style"] == "flexgroup" and rec["constituents_per_aggregate"] == 8
    assert rec["space"]["size"] == 10 * TIB and rec["nas"]["path"] == "/kafka_fg_vol01"


def test_clustershell_and_a_mount_see_the_same_volume(lab):
    tl, t = lab
    r = t.run("volume show -vserver svm_kafka -volume kafka_fg_vol01 "
              "-fields constituent-count,volume-style-extended", "cluster1", read_only=True,
              check=True)
    assert r.stdout.strip().splitlines()[-1].split()[2:] == ["32", "flexgroup"]
    lif = t.inventory.ontap().get("ontap_data_lifs")[0]["address"]
    t.run(f"mkdir -p /mnt/fg && mount -t nfs -o vers=4.1,nconnect=16 {lif}:/kafka_fg_vol01 "
          "/mnt/fg && echo 'written through the mount' > /mnt/fg/probe", "client-1", check=True)
    try:
        vol = state.load(tl.root).volumes["svm_kafka:kafka_fg_vol01"]
        assert (state.backing_dir(vol, tl.root) / "probe").read_text() == \
            "written through the mount\n"
    finally:
        t.run("umount /mnt/fg", "client-1", check=True)


def test_stale_artifacts_of_a_killed_run_are_cleared(lab):
    _tl, t = lab
    # A run killed mid-way (its process gone) left its artifacts behind.
    gone = subprocess.Popen(["true"])
    gone.wait()
    stale = playbooks._artifact_root() / f"{playbooks.ARTIFACTS_PREFIX}{gone.pid}-x1"
    stale.mkdir(mode=0o700)
    (stale / "command").write_text("ONTAP_PASSWORD=left-behind")
    alive = playbooks._artifact_root() / f"{playbooks.ARTIFACTS_PREFIX}1-x2"   # pid 1 runs
    alive.mkdir(mode=0o700)
    try:
        playbooks.run(t, "flexgroup-info.yml").check()
        assert not stale.exists() and alive.exists()
    finally:
        shutil.rmtree(stale, ignore_errors=True)
        shutil.rmtree(alive, ignore_errors=True)
