"""FV-1..FV-8 on the lab: the silly-rename failure and ONTAP's fix, asserted.

Two 4-broker clusters: fv_c1 on an NFSv4.1 mount of a volume with preserve-unlink, fv_c2 on
an NFSv3 mount of a generic volume. Same topic, same load (acks=all), same reassignment, run
with the chapter's own snippets. While the partitions move, a reader on broker 1's host keeps
the topic's segment files open (snippets/functional-validation/FV-6-hold-segments-open.sh):
Kafka 4.1.1 closes its own handles before deleting, so an open file is what makes an NFS client
silly-rename (see the chapter).

Expected, as in the TR: on fv_c2, broker 1 cannot delete the moved partition's "-delete"
directory (DirectoryNotEmptyException), takes its log dir offline and shuts down, leaving the
hidden files behind; fv_c1 keeps all four brokers, deletes the directory and still holds every
acknowledged record. Either half failing fails the test.
"""
from __future__ import annotations

import json
import os
import re

import pytest

from tr4947 import kafka_tools as kt
from tr4947.lab import kafka
from tr4947.lab.lab import Lab
from tr4947.targets.lab import LabTarget

from .conftest import remapped_inventory, require_lab

pytestmark = [pytest.mark.lab, pytest.mark.slow]

TOPIC = "__a_demo_topic"
SNIP = "functional-validation/"
RECORDS = int(os.environ.get("TR4947_FV_RECORDS", "50000"))   # TR: 3,000,000


@pytest.fixture
def fv_lab(lab_env):
    require_lab()
    base, root = lab_env
    lab = Lab(remapped_inventory(base / "inventory", offset=200), root=root)
    try:
        lab.up(["fv_c1", "fv_c2"])
        yield lab, LabTarget(lab.inv, root=root)
    finally:
        lab.down()


def brokers(lab, cluster):
    return [n for n in lab.nodes(cluster) if not n.is_controller and not n.standby]


def test_silly_rename_nfsv3_broker_dies_preserve_unlink_survives(fv_lab):
    lab, t = fv_lab
    bs = {c: kafka.bootstrap_servers(brokers(lab, c)) for c in ("fv_c1", "fv_c2")}
    b1 = {c: brokers(lab, c)[0] for c in bs}
    env = {"CLUSTER1": bs["fv_c1"], "CLUSTER2": bs["fv_c2"], "NUM_RECORDS": str(RECORDS)}

    # FV-3, FV-4: the topic and the load, on both clusters.
    t.run_snippet(SNIP + "FV-3-topic-create.sh", "client-1", env=env, check=True)
    perf = t.run_snippet(SNIP + "FV-4-producer-perf.sh", "client-1", env=env, check=True,
                         timeout=900).stdout
    acked = dict(zip(bs, kt.records_sent(perf)))
    assert acked == {"fv_c1": RECORDS, "fv_c2": RECORDS}, perf

    # The condition: broker 1's segment files are open on its host.
    for c in bs:
        r = t.run_snippet(SNIP + "FV-6-hold-segments-open.sh", b1[c].name, check=True)
        assert "holds open" in r.stdout, r.output

    # FV-6: a plan that moves a replica off broker 1, executed on each cluster.
    t.run_snippet(SNIP + "FV-6-topics-to-move.json", "client-1", dest="/tmp/topics.json",
                  check=True)
    for c in bs:
        e = {**env, "BOOTSTRAP": bs[c]}
        before = kt.replicas(t.run(f"kafka-topics --bootstrap-server={bs[c]} --describe "
                                   f"--topic {TOPIC}", "client-1", check=True).stdout)
        for _ in range(10):
            t.run_snippet(SNIP + "FV-6-reassign-generate.sh", "client-1", env=e, check=True)
            plan = json.loads(t.run("cat /tmp/reassignment-file.json", "client-1").stdout)
            if 1 in kt.brokers_giving_up_replicas(before, kt.assignment(plan)):
                break
        else:
            pytest.fail(f"{c}: --generate never moved a replica off broker 1")
        t.run_snippet(SNIP + "FV-6-reassign-execute.sh", "client-1", env=e, check=True)
        if c == "fv_c1":
            kt.until(lambda: kt.reassignment_done(t.run_snippet(
                SNIP + "FV-6-reassign-verify.sh", "client-1", env=e, check=True).stdout),
                300, 3, "fv_c1's reassignment")

    # FV-7: fv_c2's broker 1 dies on the silly-renamed files.
    victim = b1["fv_c2"]
    procs = lab.procs()
    kt.until(lambda: not procs[victim.name].alive() and
             not kafka.port_open(victim.address, victim.port), 240, 2,
             "fv_c2's broker 1 to fail on the silly-renamed files")
    log = kafka.read_log(victim)
    assert "DirectoryNotEmptyException" in log, kafka.tail(victim, 60)
    assert re.search(r"Shutdown broker because all log dirs in .* have failed", log), \
        kafka.tail(victim, 60)
    ok, transcript = kafka.health_check(victim.address, victim.port)
    assert not ok and "Connection refused" in transcript
    # FV-8: what is left in the "-delete" directory the broker failed to remove are the
    # hidden, silly-renamed files. (Other "-delete" directories may still hold ordinary
    # segments: the broker shut down before it got to them.)
    failed = set(re.findall(rf"DirectoryNotEmptyException: \S*/({TOPIC}-\d+\.\w+-delete)", log))
    assert failed, kafka.tail(victim, 60)
    leftovers = [p for d in victim.log_dirs() for name in failed for p in (d / name).iterdir()]
    assert leftovers and all(p.name.startswith((".fuse_hidden", ".nfs")) for p in leftovers), \
        leftovers

    # fv_c1 (preserve-unlink): the same open files did not matter.
    def reaped():
        return not [p for n in brokers(lab, "fv_c1") for d in n.log_dirs()
                    for p in d.glob(f"{TOPIC}-*-delete")]
    kt.until(reaped, 120, 2, "fv_c1's -delete directories to be removed")
    for n in brokers(lab, "fv_c1"):
        assert procs[n.name].alive() and kafka.port_open(n.address, n.port), kafka.tail(n, 60)
        assert "DirectoryNotEmptyException" not in kafka.read_log(n)
    offsets = t.run(f"kafka-get-offsets --bootstrap-server {bs['fv_c1']} --topic {TOPIC}",
                    "client-1", check=True).stdout
    assert sum(int(line.rsplit(":", 1)[1]) for line in offsets.split()) >= acked["fv_c1"]
    r = t.run(f"kafka-console-consumer --bootstrap-server {bs['fv_c1']} --topic {TOPIC} "
              "--from-beginning --timeout-ms 30000 > /dev/null", "client-1", timeout=600)
    consumed = int(re.search(r"Processed a total of (\d+) messages", r.stderr).group(1))
    assert consumed >= acked["fv_c1"], (consumed, acked, r.stderr)
