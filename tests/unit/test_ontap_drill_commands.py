"""The ONTAP stand-in's commands the failure drills use, strict like ONTAP: moving a data
LIF and sending it home, growing a volume (by hand or by autosize), and the NFSv4 lease and
grace periods of an SVM."""
from __future__ import annotations

import pytest

from tr4947.lab.ontap import session, state

MiB = 1024 ** 2


@pytest.fixture
def root(ontap_one_volume):
    return ontap_one_volume


def run(root, cmd: str, privilege: str = "advanced"):
    r = session.Session(root).run_sync(f"set -privilege {privilege} -confirmations off; {cmd}")
    return r


def ok(root, cmd: str) -> str:
    r = run(root, cmd)
    assert not r.error, r.output
    return r.output


def lif(root) -> state.Lif:
    return next(l for l in state.load(root).lifs.values() if l.name == "lif1")


# --- network interface migrate / revert ----------------------------------------------------------
def test_migrate_moves_the_lif_and_revert_sends_it_home(root):
    assert lif(root).curr_node == ""
    ok(root, "network interface migrate -vserver svm_kafka -lif lif1 -destination-node cluster1-02 "
             "-destination-port e0e")
    l = lif(root)
    assert (l.curr_node, l.curr_port, l.node, l.port) == ("cluster1-02", "e0e", "cluster1-01", "e0d")
    shown = ok(root, "network interface show -vserver svm_kafka")
    assert "cluster1-02" in shown and "false" in shown            # not home
    ok(root, "network interface migrate -vserver svm_kafka -lif lif1 -destination-node cluster1-01")
    assert (lif(root).curr_node, lif(root).curr_port) == ("cluster1-01", "e0e")   # port kept
    ok(root, "network interface revert -vserver svm_kafka -lif lif1")
    assert (lif(root).curr_node, lif(root).curr_port) == ("", "")
    assert "true" in ok(root, "network interface show -vserver svm_kafka")


@pytest.mark.parametrize("cmd,message", [
    ("network interface migrate -vserver svm_kafka -lif lif1 -destination-node cluster1-09",
     'Node "cluster1-09" does not exist'),
    ("network interface migrate -vserver svm_kafka -lif nolif -destination-node cluster1-02",
     "There are no entries matching your query."),
    ("network interface migrate -vserver nosvm -lif lif1 -destination-node cluster1-02",
     'Vserver "nosvm" does not exist.'),
    ("network interface migrate -vserver svm_kafka -lif lif1", "-destination-node"),
    ("network interface revert -vserver svm_kafka -lif nolif",
     "There are no entries matching your query."),
])
def test_migrate_and_revert_refuse_what_ontap_refuses(root, cmd, message):
    r = run(root, cmd)
    assert r.error and message in r.output, r.output
    assert lif(root).curr_node == ""                               # nothing moved


# --- volume size / autosize ------------------------------------------------------------------------
def test_volume_size_grows_by_a_relative_amount_and_shrinks(root):
    out = ok(root, "volume size -vserver svm_kafka -volume v1 +50MB")
    assert out.strip() == 'vol size: Volume "svm_kafka:v1" size set to 150m.'
    assert state.load(root).volumes["svm_kafka:v1"].size == 150 * MiB
    ok(root, "volume size -vserver svm_kafka -volume v1 -20MB")
    assert state.load(root).volumes["svm_kafka:v1"].size == 130 * MiB
    assert "has size 130m" in ok(root, "volume size -vserver svm_kafka -volume v1")


def test_volume_size_refuses_less_than_is_used(root):
    vol = state.load(root).volumes["svm_kafka:v1"]
    (state.backing_dir(vol, root) / "data").write_bytes(b"x" * 40 * MiB)
    r = run(root, "volume size -vserver svm_kafka -volume v1 30MB")
    assert r.error and "New size is smaller than the used space." in r.output
    assert state.load(root).volumes["svm_kafka:v1"].size == 100 * MiB


def test_autosize_shows_and_sets_the_grow_mode(root):
    assert ok(root, "volume autosize -vserver svm_kafka -volume v1").strip() == \
        'Volume autosize is currently OFF for volume "svm_kafka:v1".'
    ok(root, "volume autosize -vserver svm_kafka -volume v1 -mode grow -maximum-size 200MB "
             "-grow-threshold-percent 90")
    v = state.load(root).volumes["svm_kafka:v1"]
    assert (v.autosize_mode, v.autosize_maximum, v.autosize_grow_threshold) == ("grow", 200 * MiB, 90)
    shown = ok(root, "volume autosize -vserver svm_kafka -volume v1")
    assert 'currently ON for volume "svm_kafka:v1"' in shown
    assert "grow to a maximum of 200m when the volume-used space is above 90%" in shown
    assert "currently in mode grow" in shown
    # growing the volume by hand past the maximum resets it to 120% of the new size
    ok(root, "volume size -vserver svm_kafka -volume v1 250MB")
    assert state.load(root).volumes["svm_kafka:v1"].autosize_maximum == 300 * MiB
    ok(root, "volume autosize -vserver svm_kafka -volume v1 -reset true")
    assert state.load(root).volumes["svm_kafka:v1"].autosize_mode == "off"


def test_autosize_default_maximum_is_120_percent(root):
    ok(root, "volume autosize -vserver svm_kafka -volume v1 -mode grow")
    assert state.load(root).volumes["svm_kafka:v1"].autosize_maximum == 120 * MiB


@pytest.mark.parametrize("args,message", [
    ("-maximum-size 50MB", "Maximum autosize cannot be less than the current volume size."),
    ("-grow-threshold-percent 40 -shrink-threshold-percent 60",
     "The grow threshold must be greater than the shrink threshold."),
    ("-grow-threshold-percent 101", '"-grow-threshold-percent" must be between 1 and 100'),
    ("-mode shrink", 'is an invalid value for field "-mode'),
])
def test_autosize_refuses_bad_settings(root, args, message):
    r = run(root, f"volume autosize -vserver svm_kafka -volume v1 {args}")
    assert r.error and message in r.output, r.output
    assert state.load(root).volumes["svm_kafka:v1"].autosize_mode == "off"


# --- vserver nfs modify -v4-lease-seconds / -v4-grace-seconds --------------------------------------
def test_lease_and_grace_defaults_and_changes(root):
    vs = state.load(root).vservers["svm_kafka"]
    assert (vs.nfs_v4_lease_seconds, vs.nfs_v4_grace_seconds) == (30, 45)
    ok(root, "vserver nfs modify -vserver svm_kafka -v4-lease-seconds 10")
    ok(root, "vserver nfs modify -vserver svm_kafka -v4-grace-seconds 90 -v4-lease-seconds 60")
    vs = state.load(root).vservers["svm_kafka"]
    assert (vs.nfs_v4_lease_seconds, vs.nfs_v4_grace_seconds) == (60, 90)
    assert "60" in ok(root, "vserver nfs show -vserver svm_kafka -fields v4-lease-seconds")


@pytest.mark.parametrize("args,message", [
    ("-v4-lease-seconds 5", "must be at least 10 seconds"),
    ("-v4-lease-seconds 50", "cannot be greater than the NFSv4 grace timeout (45 seconds)"),
    ("-v4-grace-seconds 20", "cannot be greater than the NFSv4 grace timeout (20 seconds)"),
])
def test_lease_and_grace_refusals(root, args, message):
    r = run(root, f"vserver nfs modify -vserver svm_kafka {args}")
    assert r.error and message in r.output, r.output
    vs = state.load(root).vservers["svm_kafka"]
    assert (vs.nfs_v4_lease_seconds, vs.nfs_v4_grace_seconds) == (30, 45)


def test_lease_needs_advanced_privilege(root):
    r = run(root, "vserver nfs modify -vserver svm_kafka -v4-lease-seconds 20", privilege="admin")
    assert r.error and "v4-lease-seconds" in r.output, r.output
    assert state.load(root).vservers["svm_kafka"].nfs_v4_lease_seconds == 30
