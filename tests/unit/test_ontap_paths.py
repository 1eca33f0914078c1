"""Every path the ONTAP stand-in touches stays inside <root>/volumes, even when the state or
the file system was tampered with (names that bypassed validation, symlinks)."""
from __future__ import annotations

import os

import pytest

from tr4947.lab.ontap import bootstrap, rest, session, state


@pytest.fixture
def lab(tmp_path):
    root = tmp_path / "state"
    bootstrap.bootstrap(root, "cluster1", ["cluster1-01"],
                        [{"name": "aggr1", "node": "cluster1-01", "size": "8TB"}], ["svm_kafka"], [])
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("x")
    os.chmod(victim, 0o750)
    s = session.Session(root)
    assert not s.run_sync("set -privilege advanced -confirmations off").error
    return root, victim, s


def _inject(root, name: str) -> state.Volume:
    """A volume entry written straight into the state, as a tampered state file would."""
    with state.transaction(root) as c:
        v = state.Volume(name, "svm_kafka", ["aggr1"], 1 << 30, space_guarantee="none",
                         uuid="11111111-2222-3333-4444-555555555555")
        c.volumes[v.key] = v
    return v


def test_backing_dir_refuses_names_that_leave_the_volumes_dir(lab):
    root, victim, _ = lab
    for name in ("../../../victim", "/abs", "a/b", "..", ""):
        with pytest.raises(state.UnsafePath):
            state.backing_dir(state.Volume(name, "svm_kafka", ["aggr1"], 1), root)
    with pytest.raises(state.UnsafePath):
        state.backing_dir(state.Volume("v", "../..", ["aggr1"], 1), root)


def test_a_symlinked_volume_dir_is_never_followed(lab):
    root, victim, s = lab
    v = _inject(root, "evil")
    (state.volumes_dir(root) / "svm_kafka" / "evil").symlink_to(victim)
    r = s.run_sync("volume modify -vserver svm_kafka -volume evil -unix-permissions 0777")
    assert r.error and "resolves to" in r.output
    assert oct(victim.stat().st_mode & 0o777) == oct(0o750)
    assert state.load(root).volumes["svm_kafka:evil"].unix_permissions == "---rwxr-xr-x"
    job = rest.route(root, "DELETE", ["storage", "volumes", v.uuid], {}, {})
    assert job[0] == 202
    failed = state.load(root).jobs[-1]
    assert failed["state"] == "failure" and "resolves to" in failed["message"]
    assert (victim / "keep.txt").read_text() == "x"
    assert "svm_kafka:evil" in state.load(root).volumes


def test_a_symlinked_vserver_dir_is_refused(lab):
    root, victim, s = lab
    vols = state.volumes_dir(root)
    (vols / "svm_other").symlink_to(victim)
    with pytest.raises(state.UnsafePath):
        state.backing_dir(state.Volume("v", "svm_other", ["aggr1"], 1), root)


def test_delete_removes_only_the_volumes_own_directory(lab):
    root, victim, s = lab
    for name in ("a", "ab"):
        assert not s.run_sync(f"volume create -vserver svm_kafka -volume {name} -aggregate aggr1 "
                              "-size 1g").error
    d_a = state.backing_dir(state.load(root).volumes["svm_kafka:a"], root)
    d_ab = state.backing_dir(state.load(root).volumes["svm_kafka:ab"], root)
    (d_a / "data").write_text("a")
    (d_ab / "data").write_text("ab")
    assert not s.run_sync("volume offline -vserver svm_kafka -volume a").error
    assert not s.run_sync("volume delete -vserver svm_kafka -volume a").error
    assert not d_a.exists() and (d_ab / "data").read_text() == "ab"
    assert sorted(p.name for p in d_a.parent.iterdir()) == ["ab", "svm_kafka_root"]
    assert (victim / "keep.txt").read_text() == "x"
