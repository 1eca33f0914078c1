"""AFF-1 end to end on a test lab: the TR's playbook (corrected) through ansible-runner against
the ONTAP stand-in's REST API over the lab network.

* On the lab as a real target (lab-remote's view of it) without confirm, the playbook runs as
  ``ansible-playbook --check --diff``: the plan says it would create the FlexGroup, the
  stand-in received only GET requests, and no volume exists afterwards.
* With confirm it creates the FlexGroup, then changes nothing the second time; check mode
  then says there is nothing to change.
* The FlexGroup is read back with netapp-ontap, na_ontap_rest_info, the clustershell and a
  mount; the playbook as the TR prints it fails the way Ansible fails it.
* Artifacts: ansible-runner writes the play's environment (with the password) into its
  artifacts while the play runs, in a private directory in memory; what is kept afterwards
  (command line, events, stdout, rc, status) holds no password.
"""
from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from tr4947.lab.ontap import audit, state
from tr4947.targets import playbooks
from tr4947.transports import ansible as transport

from .conftest import own_lab

pytestmark = pytest.mark.lab

TIB = 1024 ** 4


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    with own_lab(tmp_path_factory.mktemp("aff")) as tl:
        yield tl, tl.target()


@pytest.fixture
def real(lab, monkeypatch):
    """The same lab opened as a real site (no target_kind: lab): default-deny, the password
    from ONTAP_PASSWORD as a reader exports it."""
    tl, _t = lab
    monkeypatch.setenv("ONTAP_PASSWORD", tl.lab.credentials()["ontap_passwords"]["admin"])
    return tl.real_target(confirm=False)


@pytest.fixture
def private_dirs(monkeypatch):
    """What each job's private artifact directory held just before it was removed."""
    seen = []
    rmtree = shutil.rmtree

    def inspect(path, *a, **kw):
        p = Path(path)
        if p.name.startswith(transport.PRIVATE_PREFIX):
            files = {f: f.read_bytes() for f in p.rglob("*") if f.is_file()}
            seen.append((p, stat.S_IMODE(p.stat().st_mode), files))
        return rmtree(path, *a, **kw)
    monkeypatch.setattr(transport.shutil, "rmtree", inspect)
    return seen


def mine_left() -> list[Path]:
    return list(transport.private_root().glob(f"{transport.PRIVATE_PREFIX}{os.getpid()}-*"))


def rest_log(tl, since: int) -> list[dict]:
    return [e for e in audit.read(tl.root)[since:] if e["channel"] == "rest"]


def kept_files(run) -> dict[str, bytes]:
    return {str(f.relative_to(run.artifacts)): f.read_bytes()
            for f in run.artifacts.rglob("*") if f.is_file()}


def test_tr_playbook_as_printed_fails(lab, tmp_path):
    _tl, t = lab
    run = playbooks.run(t, "AFF-1-flexgroup.tr-as-written.yml", artifact_dir=tmp_path)
    assert run.rc != 0 and run.total("failures") == 1
    failed = [x for x in run.tasks if x.status == "failed"]
    assert failed and "'item' is undefined" in failed[0].detail
    # A failed run leaves its artifacts to read afterwards.
    assert b"'item' is undefined" in kept_files(run)["stdout"]


def test_check_mode_on_a_real_target_plans_the_create_and_changes_nothing(lab, real, tmp_path):
    tl, _t = lab
    before = len(audit.read(tl.root))
    run = playbooks.run(real, "AFF-1-flexgroup.yml", artifact_dir=tmp_path)
    assert run.planned and run.check_mode and run.ok and run.rc == 0 and not run.would_fail
    assert [(x.task, x.item, x.status, x.detail) for x in run.tasks] == [
        ("Edit volumes", "kafka_fg_vol01", "changed", "actions: ['create']")]
    plan = run.plan.splitlines()
    assert plan[0].startswith("DRY RUN: would run ansible-playbook AFF-1-flexgroup.yml -i ")
    assert any(x.startswith("Check mode (ansible-playbook --check --diff) read the cluster")
               for x in plan)
    assert "  Edit volumes [kafka_fg_vol01]: would change: actions: ['create']" in plan
    assert any(x.startswith("  PLAY RECAP localhost") and "changed=1" in x for x in plan)
    assert plan[-1] == "Re-run with confirm=True to apply."
    # It did reach the cluster, and only read it; nothing was created.
    requests = rest_log(tl, before)
    assert requests and all(e["command"].startswith("GET ") for e in requests), requests
    assert "svm_kafka:kafka_fg_vol01" not in state.load(tl.root).volumes
    assert b"--check" in kept_files(run)["command"]


def test_check_mode_that_would_fail_is_a_plan_that_says_so(lab, real, tmp_path):
    run = playbooks.run(real, "AFF-1-flexgroup.tr-as-written.yml", artifact_dir=tmp_path)
    assert run.planned and run.ok and run.would_fail and run.check() is run
    assert "as it stands, the run would fail." in run.plan
    assert any(x.startswith("  Edit volumes: FAILED: ") and "'item' is undefined" in x
               for x in run.plan.splitlines())


def test_playbook_creates_then_is_idempotent_and_keeps_scrubbed_artifacts(lab, private_dirs,
                                                                          tmp_path):
    tl, t = lab
    password = t.ontap_password()
    first = playbooks.run(t, "AFF-1-flexgroup.yml", artifact_dir=tmp_path).check()
    assert first.total("changed") == 1 and not first.check_mode
    assert [x.detail for x in first.tasks] == ["actions: ['create']"]
    second = playbooks.run(t, "AFF-1-flexgroup.yml", artifact_dir=tmp_path).check()
    assert second.total("changed") == 0 and second.total("ok") == 1
    assert [x.status for x in second.tasks] == ["ok"]
    assert "ok=1" in second.recap() and "changed=0" in second.recap()
    # While a job ran, its artifacts were in a private in-memory directory, and they did hold
    # the password (which is why they are scrubbed before they are kept) ...
    assert len(private_dirs) == 2
    for d, mode, files in private_dirs:
        assert d.parent == Path("/dev/shm") and mode == 0o700
        assert any(password.encode() in data for data in files.values()), sorted(files)
        assert not d.exists()
    assert mine_left() == []
    # ... what is kept is each run's own, complete and without it.
    for run in (first, second):
        assert run.artifacts.parent == tmp_path and run.artifacts.name == run.ident
        files = kept_files(run)
        assert {"command", "stdout", "rc", "status"} <= set(files)
        assert any(f.startswith("job_events/") for f in files)
        assert json.loads(files["command"])["env"].startswith("(not kept")
        assert files["rc"].strip() == b"0"
        for name, data in files.items():
            assert password.encode() not in data, name
    for f in playbooks.PRIVATE_DATA_DIR.rglob("*"):
        if f.is_file() and f.stat().st_size < 10 * 1024 ** 2:
            assert password.encode() not in f.read_bytes(), f
    assert password not in first.stdout + second.stdout


def test_check_mode_after_the_create_finds_nothing_to_change(lab, real, tmp_path):
    tl, _t = lab
    before = len(audit.read(tl.root))
    run = playbooks.run(real, "AFF-1-flexgroup.yml", artifact_dir=tmp_path).check()
    assert run.check_mode and [(x.status, x.detail) for x in run.tasks] == [("ok", "")]
    assert "  Edit volumes [kafka_fg_vol01]: no change" in run.plan.splitlines()
    assert all(e["command"].startswith("GET ") for e in rest_log(tl, before))


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


def test_flexgroup_read_back_with_na_ontap_rest_info(lab, tmp_path):
    _tl, t = lab
    run = playbooks.run(t, "flexgroup-info.yml", artifact_dir=tmp_path).check()
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


def test_stale_private_artifacts_of_a_killed_run_are_cleared(lab, tmp_path):
    _tl, t = lab
    # A run killed mid-way (its process gone) left its private artifacts behind.
    gone = subprocess.Popen(["true"])
    gone.wait()
    stale = transport.private_root() / f"{transport.PRIVATE_PREFIX}{gone.pid}-x1"
    stale.mkdir(mode=0o700)
    (stale / "command").write_text("ONTAP_PASSWORD=left-behind")
    alive = transport.private_root() / f"{transport.PRIVATE_PREFIX}1-x2"   # pid 1 runs
    alive.mkdir(mode=0o700)
    try:
        playbooks.run(t, "flexgroup-info.yml", artifact_dir=tmp_path).check()
        assert not stale.exists() and alive.exists()
    finally:
        shutil.rmtree(stale, ignore_errors=True)
        shutil.rmtree(alive, ignore_errors=True)


def test_without_a_directory_runs_keep_the_newest_in_build(lab, monkeypatch, tmp_path):
    _tl, t = lab
    monkeypatch.setattr(playbooks, "DEFAULT_ARTIFACTS", tmp_path / "ansible")
    monkeypatch.setattr(playbooks, "KEEP_LAST", 2)
    runs = [playbooks.run(t, "flexgroup-info.yml").check() for _ in range(3)]
    assert sorted(p.name for p in (tmp_path / "ansible").iterdir()) == \
        sorted(r.ident for r in runs[1:])
