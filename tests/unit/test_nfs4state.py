"""The storage stand-in's NFSv4 state (tr4947.lab.nfs4state): byte-range locks shared by every
client of a volume, released by their owner, by a clean goodbye, or when the holder's lease
has run out; the volume's space with autosize applied."""
from __future__ import annotations

import time

import pytest

from tr4947.lab import nfs4state
from tr4947.lab.nfs4state import MAX, NfsState
from tr4947.lab.ontap import bootstrap, session, state

VOL = "svm_kafka:logs"


@pytest.fixture
def nfs(tmp_path):
    root = tmp_path / "state"
    bootstrap.bootstrap(root, "cluster1", ["cluster1-01"], [{"name": "aggr1", "size": "2TB"}],
                        ["svm_kafka"], [{"name": "lif1", "address": "198.18.10.11",
                                         "vserver": "svm_kafka"}])
    r = session.Session(root).run_sync("volume create -vserver svm_kafka -volume logs "
                                       "-aggregate aggr1 -size 20MB -junction-path /logs")
    assert not r.error, r.output
    n = NfsState(root)
    for c in ("a", "b"):
        n.clients[c] = nfs4state.Client(c, "198.18.1.1", 30, time.monotonic())
    n.backing = state.backing_dir(state.load(root).volumes[VOL], root)
    return n


def req(n, client, **r):
    return n.handle(client, VOL, n.backing, r)


def lock(n, client, owner=1, start=0, end=MAX, type="w"):
    return req(n, client, op="lock", file=7, owner=owner, start=start, end=end, type=type, pid=42)


def test_a_write_lock_excludes_other_clients_and_owners_until_unlocked(nfs):
    assert lock(nfs, "a")["ok"]
    r = lock(nfs, "b")
    assert (r["ok"], r["errno"]) == (False, 11)
    assert not lock(nfs, "a", owner=2)["ok"]               # another process on the same client
    t = req(nfs, "b", op="testlk", file=7, owner=1, start=0, end=10, type="r")
    assert t["conflict"] == {"start": 0, "end": MAX, "type": "w", "pid": 0}
    assert req(nfs, "a", op="unlock", file=7, owner=1, start=0, end=MAX)["remaining"] == 0
    assert lock(nfs, "b")["ok"]


def test_read_locks_share_and_ranges_split(nfs):
    assert lock(nfs, "a", type="r")["ok"] and lock(nfs, "b", type="r")["ok"]
    assert not lock(nfs, "b", owner=5, start=100, end=200)["ok"]
    req(nfs, "a", op="unlock", file=7, owner=1, start=0, end=MAX)
    req(nfs, "b", op="unlock", file=7, owner=1, start=0, end=MAX)
    assert lock(nfs, "a", start=0, end=99)["ok"]
    # unlocking the middle leaves two pieces
    assert req(nfs, "a", op="unlock", file=7, owner=1, start=40, end=59)["remaining"] == 2
    assert lock(nfs, "b", start=40, end=59)["ok"]
    assert not lock(nfs, "b", start=30, end=45)["ok"]


def test_bye_releases_at_once_and_a_silent_client_only_when_its_lease_ends(nfs):
    lock(nfs, "a")
    assert req(nfs, "a", op="bye")["ok"]
    assert lock(nfs, "b")["ok"]
    req(nfs, "b", op="unlock", file=7, owner=1, start=0, end=MAX)
    nfs.clients["a"] = nfs4state.Client("a", "x", 0.3, time.monotonic())
    assert lock(nfs, "a")["ok"]
    assert not lock(nfs, "b")["ok"]                       # "a" renewed just now
    time.sleep(0.2)
    assert not lock(nfs, "b")["ok"]
    time.sleep(0.2)                                       # 0.4 s without a word from "a"
    assert lock(nfs, "b")["ok"]
    assert "a" not in nfs.clients


def test_null_is_answered_and_renews_no_lease(nfs):
    nfs.clients["a"] = nfs4state.Client("a", "x", 0.3, time.monotonic())
    assert lock(nfs, "a")["ok"]
    for _ in range(4):                                    # the keepalive, through 0.4 s
        assert req(nfs, "a", op="null") == {"ok": True}
        time.sleep(0.1)
    assert lock(nfs, "b")["ok"], "NULL kept a's lease alive"


def test_space_is_the_size_less_the_snapshot_reserve_and_autosize_grows_it(nfs):
    (nfs.backing / "seg").write_bytes(b"x" * 4 * 1024 * 1024)
    s = req(nfs, "a", op="space")
    assert (s["size"], s["used"]) == (int(20 * 2 ** 20 * 0.95), 4 * 2 ** 20)
    r = session.Session(nfs.root).run_sync("volume autosize -vserver svm_kafka -volume logs "
                                           "-mode grow -maximum-size 40MB")
    assert not r.error, r.output
    (nfs.backing / "seg2").write_bytes(b"x" * 15 * 1024 * 1024)     # 19 MiB: above 85%
    s = req(nfs, "a", op="space")
    size = state.load(nfs.root).volumes[VOL].size
    assert 20 * 2 ** 20 < size <= 40 * 2 ** 20 and 19 * 2 ** 20 * 100 <= size * 85
    assert s["size"] == int(size * 0.95)


def test_unknown_and_malformed_requests_are_refused(nfs):
    assert req(nfs, "a", op="frobnicate")["ok"] is False
    assert req(nfs, "a", op="lock", file="x", owner=1)["errno"] == 22
