"""The ONTAP stand-in prints what its own state produces, not values from the TR's
transcripts: job ids from 1, ONTAP's documented default sizes, and NFS connections listed
from the lab's mount registry."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tr4947.lab import storage
from tr4947.lab.ontap import bootstrap, rest, session, state

MiB, TiB = 1024 ** 2, 1024 ** 4


@pytest.fixture
def sh(tmp_path):
    root = tmp_path / "state"
    bootstrap.bootstrap(root, "cluster1", ["cluster1-01", "cluster1-02"],
                        [{"name": "aggr1", "node": "cluster1-01", "size": "8TB"},
                         {"name": "aggr2", "node": "cluster1-02", "size": "8TB"}],
                        ["svm_kafka"],
                        [{"name": "lif_kafka_1", "address": "198.18.10.11", "node": "cluster1-01",
                          "vserver": "svm_kafka"},
                         {"name": "lif_kafka_2", "address": "198.18.10.12", "node": "cluster1-02",
                          "vserver": "svm_kafka"}])
    s = session.Session(root)
    assert not s.run_sync("set -privilege advanced -confirmations off").error
    return s


def ok(s, line):
    r = s.run_sync(line)
    assert not r.error, f"{line!r} failed:\n{r.output}"
    return r.output


def test_jobs_are_numbered_from_1_in_order_across_clustershell_and_rest(sh):
    assert state.load(sh.root).next_job_id == 1 and state.load(sh.root).jobs == []
    ids = []
    for n in range(3):
        out = ok(sh, f"volume create -vserver svm_kafka -volume v{n} -aggregate aggr1 -size 1g")
        ids.append(int(re.fullmatch(r"\[Job (\d+)\] Job succeeded: Successful", out).group(1)))
    assert ids == [1, 2, 3]
    # A REST job takes the next number of the same counter
    status, body, *_ = rest.route(sh.root, "POST", ["storage", "volumes"], {}, {
        "name": "r1", "svm": {"name": "svm_kafka"}, "aggregates": [{"name": "aggr2"}]})
    assert status == 202
    job = next(j for j in state.load(sh.root).jobs if j.get("uuid") == body["job"]["uuid"])
    assert job["id"] == 4 and job["state"] == "success"
    # A refused create uses no job number: nothing was started
    assert sh.run_sync("volume create -vserver svm_kafka -volume v0 -aggregate aggr1").error
    assert ok(sh, "volume create -vserver svm_kafka -volume v9 -aggregate aggr1") == \
        "[Job 5] Job succeeded: Successful"
    assert [j["id"] for j in state.load(sh.root).jobs] == [1, 2, 3, 4, 5]


def test_default_sizes_are_ontaps(sh):
    ok(sh, "volume create -vserver svm_kafka -volume flex -aggregate aggr1")
    ok(sh, "volume create -vserver svm_kafka -volume fg4 -aggr-list aggr1")
    ok(sh, "volume create -vserver svm_kafka -volume fg16 -aggr-list aggr1,aggr2 "
           "-aggr-list-multiplier 8")
    vols = state.load(sh.root).volumes
    assert vols["svm_kafka:flex"].size == 20 * MiB                 # FlexVol: 20MB
    assert vols["svm_kafka:fg4"].size == 4 * 20 * MiB              # 4 constituents x 20MB
    assert vols["svm_kafka:fg16"].size == 16 * 20 * MiB
    assert vols["svm_kafka:flex"].space_guarantee == "volume"      # thick by default
    # REST without size: POST /storage/volumes documents 20MB
    rest.route(sh.root, "POST", ["storage", "volumes"], {}, {
        "name": "r20", "svm": {"name": "svm_kafka"}, "aggregates": [{"name": "aggr1"}]})
    assert state.load(sh.root).volumes["svm_kafka:r20"].size == 20 * MiB
    # FSX-5's +2TB on a FlexGroup made without -size is 2TB + 80MB, not the TR's 2.10t
    assert ok(sh, "volume size -vserver svm_kafka -volume fg4 -new-size +2TB") == \
        'vol size: Volume "svm_kafka:fg4" size set to 2.00t.'


def _mounts(root: Path, entries: list[dict]) -> None:
    """The NFS service's registry as its clients left it: every mount granted; those no
    longer mounted (``live`` false) released again by their client's umount."""
    records = []
    for i, e in enumerate(entries):
        records.append({"source": f"{e['server']}:/{e['vol']}", "mountpoint": e["mp"],
                        "options": f"vers={e['vers']},nconnect={e['nconnect']}",
                        "fstype": "nfs", "vers": e["vers"], "nconnect": e["nconnect"],
                        "semantics": "posix", "volume": f"svm_kafka:{e['vol']}",
                        "backing": "/nonexistent", "client": e["client"],
                        "time": f"2024-01-01T00:00:{i:02d}", "id": f"m{i}"})
    (root / "mounts.json").write_text(json.dumps(records))
    for i, e in enumerate(entries):
        if not e.get("live", True):
            assert storage.release(root, e["client"], f"m{i}")


def _rows(out: str) -> list[list[str]]:
    # "<node> <cid> <remote-host>": the rows CVO-4's notebook counts
    return [l.split() for l in out.splitlines() if re.fullmatch(r"\S+ +\d+ +\S+ *", l)]


def test_connections_come_from_the_mount_registry(sh):
    b1, b2 = "198.18.4.1", "198.18.4.2"
    entries = (
        # broker 1: three mounts per LIF, nconnect=16: one shared set of 16 per LIF
        [{"client": b1, "server": "198.18.10.11", "vol": f"a{i}", "mp": f"/m/a{i}",
          "vers": "4.1", "nconnect": 16} for i in range(3)]
        + [{"client": b1, "server": "198.18.10.12", "vol": f"b{i}", "mp": f"/m/b{i}",
            "vers": "4.1", "nconnect": 16} for i in range(3)]
        # broker 2: NFSv3 without nconnect, then a later mount asking for 8 joins it (1)
        + [{"client": b2, "server": "198.18.10.11", "vol": "c", "mp": "/m/c", "vers": "3",
            "nconnect": 1},
           {"client": b2, "server": "198.18.10.11", "vol": "d", "mp": "/m/d", "vers": "3",
            "nconnect": 8},
           # a mount its client has unmounted (released) holds no connection
           {"client": b2, "server": "198.18.10.12", "vol": "e", "mp": "/m/e", "vers": "4.1",
            "nconnect": 4, "live": False}])
    _mounts(sh.root, entries)
    out = ok(sh, "network connections active show -service nfs* -fields remote-host")
    rows = _rows(out)
    assert f"{len(rows)} entries were displayed." in out
    assert len(rows) == 16 + 16 + 1
    by_client = {}
    for node, cid, host in rows:
        by_client[host] = by_client.get(host, 0) + 1
    assert by_client == {b1: 32, b2: 1}
    # each connection is on the node of the LIF it goes to
    assert sorted(r[0] for r in rows if r[2] == b1) == ["cluster1-01"] * 16 + ["cluster1-02"] * 16
    cids = [int(r[1]) for r in rows]
    assert len(set(cids)) == len(cids)
    # the TR's transcript numbers its connections from 2315762677: nothing here does
    assert not any(2315762677 <= c < 2315762677 + 100000 for c in cids)
    # the listing follows the registry: a second, different registry lists other ids
    _mounts(sh.root, entries[:1])
    again = _rows(ok(sh, "network connections active show -fields remote-host"))
    assert len(again) == 16 and {r[2] for r in again} == {b1}
    ports = ok(sh, "network connections active show -fields remote-port")
    got = [int(l.split()[-1]) for l in ports.splitlines() if re.fullmatch(r"\S+ +\d+ +\d+ *", l)]
    assert len(got) == 16 and len(set(got)) == 16 and all(665 <= p <= 1023 for p in got)


def test_no_connections_without_mounts(sh):
    _mounts(sh.root, [])
    assert ok(sh, "network connections active show -service nfs*") == \
        "There are no entries matching your query."
