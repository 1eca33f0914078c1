"""FV-1..FV-8 on test labs: the silly-rename failure and ONTAP's fix, asserted.

One cluster at a time (2 cores): fv_c2, its brokers' log dirs on an NFSv3 mount of a volume
without preserve-unlink, then fv_c1, on an NFSv4.1 mount of a volume with it. Each gets the
chapter's steps over SSH, as procedures/functional_validation.py runs them: the volume made
with the clustershell snippet, each broker's mount with the FV-2 snippet, Kafka started, the
topic, a load acknowledged with acks=all, then a reassignment that moves a replica off broker
1 while a reader on broker 1's host holds the topic's segment files open
(FV-6-hold-segments-open.sh: Kafka closes its own handles before deleting, so an open file
is what makes an NFS client silly-rename).

Expected, as in the TR: on fv_c2, broker 1 cannot delete the moved partition's "-delete"
directory (DirectoryNotEmptyException), takes its log dir offline and shuts down, leaving the
hidden files behind; on fv_c1 broker 1 deletes the directory, every broker keeps serving and
every acknowledged record is still there. Either half failing fails the test.
"""
from __future__ import annotations

import json
import re

import pytest

from tr4947 import kafka_tools as kt
from tr4947.procedures.functional_validation import SNIP, TOPIC, FunctionalValidation

from .conftest import own_lab, wait_for

pytestmark = [pytest.mark.lab, pytest.mark.slow]

RECORDS = 20_000                  # the TR's 3,000,000 at 1 KiB; enough for one segment each
CLIENT = "client-1"


def bring_up(t, c: str):
    """FV-1/FV-2 for one cluster: its volume (clustershell), each broker's mount (FV-2
    snippet, the inventory's export), then Kafka on the controller and the brokers."""
    volume = {"fv_c1": "FV-1-volume-create.ontap",
              "fv_c2": "FV-2-lab-generic-nfsv3-volume.ontap"}[c]
    t.run_snippet(SNIP + volume, "cluster1", check=True)
    mount = {"fv_c1": "FV-2-mount-cluster1.sh", "fv_c2": "FV-2-mount-cluster2.sh"}[c]
    k = t.cluster(c)
    for h in k.brokers:
        export = k.export(h)
        r = t.run_snippet(SNIP + mount, h.name, env={"NFS_EXPORT": export}, check=True)
        assert r.stdout.startswith(f"{export} on /demo type "), r.output
    k.start()


def load_and_reassign(t, fv: FunctionalValidation, c: str) -> dict:
    """FV-3, FV-4, the reader, FV-6: returns what moved and how many records were acked."""
    k = fv.clusters[c]
    bootstrap = k.bootstrap()
    t.run(f"bin/kafka-topics.sh --bootstrap-server {bootstrap} --create --topic {TOPIC} "
          "--partitions 4 --replication-factor 2", CLIENT, check=True)
    perf = t.run(f"bin/kafka-producer-perf-test.sh --topic {TOPIC} --throughput -1 "
                 f"--num-records {RECORDS} --record-size 1024 "
                 f"--producer-props acks=all bootstrap.servers={bootstrap}", CLIENT,
                 check=True, timeout=900)
    acked = kt.records_sent(perf.stdout)
    assert acked == [RECORDS], perf.output[-2000:]
    # The condition: broker 1's segment files are open on its host.
    r = t.run_snippet(SNIP + "FV-6-hold-segments-open.sh", k.brokers[0].name, check=True,
                      env={"DATA_DIR": k.log_dir()})
    assert "holds open:" in r.stdout and f"{TOPIC}-" in r.stdout, r.output
    # A plan that moves a replica off broker 1, executed.
    t.run_snippet(SNIP + "FV-6-topics-to-move.json", CLIENT, dest="/tmp/topics.json",
                  check=True)
    # (FV-3's describe snippet reads both clusters; one runs here.)
    before = kt.replicas(t.run(f"bin/kafka-topics.sh --bootstrap-server {bootstrap} "
                               f"--describe --topic {TOPIC}", CLIENT, check=True).stdout)
    e = {"BOOTSTRAP": bootstrap}
    for _ in range(10):
        t.run_snippet(SNIP + "FV-6-reassign-generate.sh", CLIENT, env=e, check=True)
        plan = json.loads(t.read_file(CLIENT, "/tmp/reassignment-file.json").stdout)
        after = kt.assignment(plan)
        if 1 in kt.brokers_giving_up_replicas(before, after):
            break
    else:
        pytest.fail(f"{c}: --generate never moved a replica off broker 1")
    t.run_snippet(SNIP + "FV-6-reassign-execute.sh", CLIENT, env=e, check=True)
    return {"before": before, "after": after, "acked": RECORDS}


def test_nfsv3_without_preserve_unlink_broker_1_dies_on_the_silly_renamed_files(tmp_path):
    c = "fv_c2"
    with own_lab(tmp_path, [c], kafka_state="installed") as tl:
        t = tl.target()
        bring_up(t, c)
        fv = FunctionalValidation.on(t, None, RECORDS)
        k = fv.clusters[c]
        b1 = k.brokers[0]
        move = load_and_reassign(t, fv, c)
        outcome = fv.wait_settled(c, move, timeout=300)
        assert outcome == "dead", outcome
        # FV-7/FV-8: what broker 1 logged, and its JVM is gone.
        log = t.run_snippet(SNIP + "FV-8-broker-log.sh", b1.name, read_only=True).stdout
        assert "DirectoryNotEmptyException" in log, log
        assert re.search(r"Shutdown broker because all log dirs in .* have failed", log), log
        wait_for(lambda: not k.alive(b1), 60, "broker 1's JVM to exit")
        health = t.run_snippet(SNIP + "FV-5-health-check.sh", CLIENT, read_only=True,
                               env={"BROKERS": b1.kafka_address}, check=True).stdout
        assert health.strip() == f"{b1.kafka_address}:9092 unable to connect"
        # What is left in the "-delete" directory it failed to remove: the silly-renamed
        # files, named as the Linux client names them (.nfs, 16 hex digits of the file id, 8
        # of the client's counter; other "-delete" dirs may still hold plain segments: the
        # broker shut down before it got to them).
        failed = set(re.findall(rf"({TOPIC}-\d+\.\w+-delete)", log))
        assert failed, log
        for name in failed:
            left = t.run(["ls", "-A", f"{k.log_dir()}/{name}"], b1.name, read_only=True,
                         check=True).stdout.split()
            assert left and all(re.fullmatch(r"\.nfs[0-9a-f]{24}", f) for f in left), (name, left)
        # The other brokers are still up.
        for h in k.brokers[1:]:
            assert k.alive(h), h.name


def test_nfsv41_with_preserve_unlink_the_same_move_just_works(tmp_path):
    c = "fv_c1"
    with own_lab(tmp_path, [c], kafka_state="installed") as tl:
        t = tl.target()
        bring_up(t, c)
        fv = FunctionalValidation.on(t, None, RECORDS)
        k = fv.clusters[c]
        b1 = k.brokers[0]
        move = load_and_reassign(t, fv, c)
        e = {"BOOTSTRAP": k.bootstrap()}
        last = {}

        def verified():
            last["r"] = t.run_snippet(SNIP + "FV-6-reassign-verify.sh", CLIENT, env=e,
                                      read_only=True, check=True)
            return kt.reassignment_done(last["r"].stdout)
        wait_for(verified, 300, "the reassignment to complete",
                 seen=lambda: last["r"].stdout[-300:], interval=3)
        # Broker 1 deleted the moved partitions, "-delete" dirs included, although the
        # reader held their files open (it may end by itself once all its files are gone).
        assert fv.wait_settled(c, move, timeout=300) == "settled"
        assert fv.leftovers(c) == []
        log = t.run_snippet(SNIP + "FV-8-broker-log.sh", b1.name, read_only=True).stdout
        assert "DirectoryNotEmptyException" not in log and "have failed" not in log, log
        for h in k.brokers:
            assert k.alive(h), h.name
        assert fv.alive(c)
        # Every acknowledged record is still there, and readable.
        assert fv.records_in_topic(c) >= move["acked"]
        r = t.run(f"bin/kafka-console-consumer.sh --bootstrap-server {k.bootstrap()} "
                  f"--topic {TOPIC} --from-beginning --timeout-ms 30000 > /dev/null", CLIENT,
                  timeout=600)
        consumed = int(re.search(r"Processed a total of (\d+) messages", r.stderr).group(1))
        assert consumed >= move["acked"], r.stderr
