"""The failure drills on a lab of their own: each drill leaves the lab as it found it, and
DRL-1 runs an outage longer than the brokers' follower lag allowance again on the TR's value
of it, through a rolling restart, and back; the brokers' files end as they were found.
DRL-1's outage is nftables dropping the host's traffic to its LIF, which the lab's NFS layer
notices through its keepalive; DRL-7's soft mount turns the same outage into EIO, and the
broker stops.

After DRL-0 and after each of the drills that change the most (DRL-2 moves a LIF, DRL-6 has
the partner node take over broker 1's storage and give it back, DRL-3 shrinks and grows a
volume and restarts a broker, DRL-5 kills a host, moves its address to the standby and back,
DRL-7 remounts broker 1 soft and hard again and restarts it),
the lab is read through its back door (the hosts' namespaces and the ONTAP
stand-in's state file, so nothing of the procedure's own reading is trusted): every host has
the addresses, NFS mounts (with their client layer's mode) and Kafka process it had, the
volumes their sizes, the LIFs and aggregates their nodes, no node is taken over, and every
broker serves. Each drill also lost no
acknowledged record. The comparison itself must be able to fail: a LIF left on the partner
node is seen."""
from __future__ import annotations

import json

import pytest

from tr4947.lab.ontap import session, state
from tr4947.procedures import record
from tr4947.procedures.context import ChapterRun
from tr4947.procedures.failure_drills import FailureDrills
from tr4947.procedures.failure_drills import configs as cf
from tr4947.procedures.failure_drills.drl1_lif_unreachable import CLIENT_SILENT
from tr4947.procedures.failure_drills.drl7_soft_mount import FAILED, STOP_WAIT_S, STOPPED
from tr4947.procedures.failure_drills.harness import WAITING

from .conftest import own_lab

pytestmark = pytest.mark.lab

HOSTS = ["das-broker-1", "das-broker-2", "das-broker-3", "das-standby",
         "nfs-broker-1", "nfs-broker-2", "nfs-broker-3", "nfs-standby"]
PROBE = ("ip -4 -brief addr show dev eth0 | awk '{$2=\"\"; print}'; "
         "cat /run/tr4947/nfs-mounts.json 2>/dev/null || echo '[]'; "
         "pgrep -f 'kafka\\.Kafka' > /dev/null && echo kafka || echo no-kafka")


def looked_at(tl) -> dict:
    """The lab as its back door shows it (no SSH, no clustershell)."""
    hosts = {}
    for h in HOSTS:
        out = tl.exec(h, PROBE).stdout.splitlines()
        addrs, mounts, kafka = out[0], json.loads("\n".join(out[1:-1]) or "[]"), out[-1]
        hosts[h] = (addrs.split(), sorted((m["mountpoint"], m["source"], m["options"],
                                           m["layer"]) for m in mounts), kafka)
    c = state.load(tl.root)
    return {"hosts": hosts,
            "volumes": {k: v.size for k, v in c.volumes.items() if k.endswith("kafka_nfs_b1")},
            "lifs": {l.name: (l.curr_node or l.node, l.curr_port or l.port)
                     for l in c.lifs.values() if l.role == "data"},
            "aggregates": {g.name: g.current_node for g in c.aggregates.values()},
            "taken_over": {n: c.ha(n).taken_over_by for n in c.nodes}}


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    # The clusters start on the test's "checklist" allowance (the lab's own start on the TR's),
    # so that DRL-0 and the restore find nothing to restart: the test's one rolling restart
    # is DRL-1's switch to the TR's value and back.
    with own_lab(tmp_path_factory.mktemp("drills"), ["das", "nfs"], kafka_state="started",
                 replace={"replica.lag.time.max.ms: 100000000":
                          "replica.lag.time.max.ms: 6000"}) as tl:
        yield tl


#: The brokers' configuration files, through the back door.
CONFIG = "/opt/kafka/config/server.properties"
FILES = "cat {c}; echo ---; ls {c}.drills-found {c}.drills-switch.bak 2>/dev/null || true"
#: A follower lag allowance short enough for a test's pause to outlast it (the chapter's
#: checklist value is Kafka's 30 s), and the TR's.
SHORT_LAG = {cf.CHECKLIST: {cf.LAG: "6000"}, cf.TR: {cf.LAG: "100000000"}}


def config_files(tl) -> dict:
    return {h: tl.exec(h, FILES.format(c=CONFIG)).stdout for h in HOSTS if "broker" in h}


@pytest.fixture(scope="module")
def found_configs(lab):
    return config_files(lab)


@pytest.fixture(scope="module")
def drills(lab, found_configs, tmp_path_factory):
    t = lab.target()
    rec = record.start("failure-drills", "failure-drills", "lab",
                       tmp_path_factory.mktemp("records"), "lab", "test")
    d = FailureDrills(ChapterRun(t, rec, "failure-drills", by_runner=True), repeats=1,
                      rate=200, lead_s=3, settle_s=2, configs=SHORT_LAG, producers=2)
    d.prepare()
    assert d.lab_layer, "the lab's NFS brokers have its NFS client layer"
    assert d.harness.nft == {"nfs": True}, "broker 1's host has nft (DRL-1, DRL-7)"
    return d


def test_an_outage_past_the_lag_allowance_runs_again_on_the_tr_value(lab, drills):
    # DRL-0 found every broker on the "checklist" allowance already: nothing to switch, but
    # the file as found is kept for the restore
    now = config_files(lab)
    assert all("replica.lag.time.max.ms=6000" in f and ".drills-found" in f
               for f in now.values()), now
    assert drills.harness.settings["nfs"][cf.LAG] == "6000"
    drills.lif_unreachable([15])
    ran = [(o.length, o.config, o.settings[cf.LAG]) for o in drills.outcomes
           if o.drill == "DRL-1"]
    # 15 s outlasts the 6 s allowance, so it ran again on the TR's value, through a rolling
    # restart of the NFS brokers
    assert ran == [(15, cf.CHECKLIST, "6000"), (15, cf.TR, "100000000")]
    by = {(o.length, o.config): o for o in drills.outcomes if o.drill == "DRL-1"}
    long_, tr = by[15, cf.CHECKLIST], by[15, cf.TR]
    for o in (long_, tr):
        assert o.check.lost == [], (o.length, o.config, o.check.lost[:5])
    # under the TR's allowance broker 1 stayed in every ISR through the outage. (Whether it
    # left an ISR under the small one depends on how much of its follower's work the lab's
    # stall holds: the chapter reports it per run, and it is not asserted here.)
    assert not tr.runs[0].shrank and tr.runs[0].detect_s is None
    # The client noticed the silence through its keepalive (3 s without an answer) and
    # measured it: about the outage, less the time it took to notice.
    for o in (long_, tr):
        silent = o.runs[0].extra[CLIENT_SILENT]
        assert 15 - 5 <= silent <= 15 + 3, (o.config, silent)
    # each run of a drill at several lengths counts the partitions the outage still held
    # when it ended, of the topic's six
    for o in (long_, tr):
        assert 0 <= o.runs[0].extra[WAITING] <= o.runs[0].partitions == 6
    # A consumer group read each load while it ran, and received every acknowledged record
    # of the run; the outage made it late (the records broker 1 held reached it after the
    # outage), and the latency counts from when each record was due.
    for o in (long_, tr):
        g = o.runs[0].group
        assert g is not None and g.unread == 0, (o.config, g)
        assert g.e2e_max_s is not None and g.e2e_max_s > 5, (o.config, g)
        assert g.caught_up_s is not None and g.caught_up_s > 5, (o.config, g)
    # and the NFS cluster is back on the "checklist" allowance for the drills after DRL-1
    assert drills.harness.current["nfs"] == cf.CHECKLIST
    assert all("replica.lag.time.max.ms=6000" in f for h, f in config_files(lab).items()
               if h.startswith("nfs")), config_files(lab)


def test_the_drills_leave_the_lab_as_they_found_it(lab, drills, found_configs):
    found = looked_at(lab)
    # DRL-0 mounted the NFS brokers' volumes without passthrough
    assert all("no passthrough" in m[3] for h in HOSTS[4:7] for m in found["hosts"][h][1])
    drills.lif_migration(2)
    assert looked_at(lab) == found, "after DRL-2"
    drills.storage_failover(6)
    assert looked_at(lab) == found, "after DRL-6"
    # The client layer measured its own outage at the takeover: the LIF refused sessions
    # for the stand-in's modelled takeover time, then the client's backoff found it again.
    window = state.load(lab.root).takeover_seconds
    drl6 = next(o for o in drills.outcomes if o.drill == "DRL-6")
    outage = drl6.runs[0].extra["NFS client outage at the takeover (s)"]
    assert window - 0.5 <= outage <= window + 8, (outage, window)   # + backoff, a busy machine
    assert drl6.runs[0].resume_s is not None, "the producers resumed after the takeover"
    drills.volume_full(2000, 90)
    assert looked_at(lab) == found, "after DRL-3"
    drills.host_loss(5)
    assert looked_at(lab) == found, "after DRL-5"
    # A soft mount with a major timeout of 2 + 4 = 6 s, cut off for 20 s: its writes fail
    # with EIO, Kafka takes the log directory offline and broker 1 stops; it is started
    # again and its volume mounted hard again.
    drills.soft_mount("soft,timeo=20,retrans=1", 20)
    assert looked_at(lab) == found, "after DRL-7"
    drl7 = next(o for o in drills.outcomes if o.drill == "DRL-7")
    stopped, failed = drl7.runs[0].extra[STOPPED], drl7.runs[0].extra[FAILED]
    # (it stops once its log directory is offline, which closes the directory's files: on a
    # soft mount each close can wait the major timeout again, even past the outage)
    assert stopped is not None and 6 <= stopped <= 20 + STOP_WAIT_S, stopped
    assert failed and failed > 0, failed
    for o in drills.outcomes:
        assert o.check.lost == [], (o.drill, o.cluster, o.check.lost[:5])
        assert o.unchanged, (o.drill, o.cluster)
        assert len(o.runs) == 1
    assert {(o.drill, o.cluster) for o in drills.outcomes if o.drill != "DRL-1"} == {
        ("DRL-2", "nfs"), ("DRL-6", "nfs"), ("DRL-3", "nfs"), ("DRL-5", "das"),
        ("DRL-5", "nfs"), ("DRL-7", "nfs")}
    # DRL-5 on NFS waited for the dead client's lock, about the SVM's 30 s lease
    nfs5 = next(o for o in drills.outcomes if o.drill == "DRL-5" and o.cluster == "nfs")
    held = nfs5.runs[0].extra["lock held after the failure (s)"]
    assert 20 <= held <= 40, held
    drills.restore()
    # every load's files on the client are gone (producers', the group's, the check's)
    left = lab.exec("client-1", "ls /tmp | grep -E '^drill-(DRL-|calibration)' || true").stdout
    assert left.strip() == "", left
    assert all("passthrough)" in m[3] and "no passthrough" not in m[3]
               for h in HOSTS[4:7] for m in looked_at(lab)["hosts"][h][1])
    # every broker has its file as found again, and the drills' copies are gone
    assert config_files(lab) == found_configs


def test_a_lif_left_away_is_seen(lab, drills):
    before = looked_at(lab)
    found = drills.state()
    s = session.Session(lab.root, "admin")
    s.run_sync("network interface migrate -vserver svm_kafka -lif lif_kafka_1 "
               "-destination-node cluster1-02")
    try:
        assert looked_at(lab)["lifs"] != before["lifs"]
        assert drills.state()["lifs"] != found["lifs"]
    finally:
        s.run_sync("network interface revert -vserver svm_kafka -lif lif_kafka_1")
    assert drills.state()["lifs"] == found["lifs"]


def test_on_a_real_target_with_confirm_a_drill_runs_through_its_real_mechanism_or_is_refused(
        lab, found_configs, tmp_path, monkeypatch):
    """The same hosts opened as a real site (lab-remote: default-deny, no lab-only setting),
    with confirm: DRL-1 cuts broker 1's host off its NFS server with nftables over SSH, as an
    operator would, and loses nothing; DRL-7, which would remount a production volume soft,
    is refused with its reason before it does anything; no lab-only step is taken."""
    found = looked_at(lab)
    # a reader's credentials: the ONTAP password from the environment
    monkeypatch.setenv("ONTAP_PASSWORD", lab.lab.credentials()["ontap_passwords"]["admin"])
    t = lab.real_target(confirm=True)
    rec = record.start("failure-drills", "failure-drills", "lab-remote", tmp_path, "real", "test")
    d = FailureDrills(ChapterRun(t, rec, "failure-drills", by_runner=True), repeats=1,
                      rate=200, lead_s=3, settle_s=2, configs=SHORT_LAG, producers=1)
    d.prepare()
    assert not d.lab_layer and d.harness.nft == {"nfs": True}
    d.lif_unreachable([5])
    d.soft_mount("soft,timeo=20,retrans=1", 20)
    d.restore()
    o = next(o for o in d.outcomes if o.drill == "DRL-1")
    assert o.check.lost == [] and o.unchanged, o.check.lost[:5]
    shown = [r for r in rec.records if r.kind == "console"]
    assert not any(r.data["output"].startswith("DRY RUN") for r in shown)
    drop = next(r for r in shown if r.id == "DRL-1" and "cannot reach its NFS server" in r.title)
    assert "nft -c -f /run/drill-lif-drop.nft" in drop.data["command"], drop.data
    for r in shown:
        for lab_only in ("x-lab-nopassthrough", "tr4947-nfsctl", "soft,timeo"):
            assert lab_only not in r.data["command"] and lab_only not in r.title, (lab_only, r)
    refused = [r.data["body"] for r in rec.records if r.kind == "text" and r.id == "DRL-7"]
    assert refused and "lab only" in refused[0], refused
    assert not any(o.drill == "DRL-7" for o in d.outcomes)
    assert looked_at(lab) == found
    assert config_files(lab) == found_configs
