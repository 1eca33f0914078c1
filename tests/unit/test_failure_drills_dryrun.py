"""The failure drills on lab-remote (the lab described as a remote site, a real target) without
confirm: every step that would break or repair something is planned and printed, in the order
the drills would take it, and nothing reaches a host, ONTAP or Kafka: no shell, clustershell or
file placement, no network connection at all (a dry run reads nothing that a planned step
would make, so it needs no read either)."""
from __future__ import annotations

import socket

import pytest

from tr4947 import inventory
from tr4947.procedures import record
from tr4947.procedures.context import ChapterRun
from tr4947.procedures.failure_drills import FailureDrills

from ..support.targets import NoTransport


class Contacted(AssertionError):
    pass


@pytest.fixture
def no_network(monkeypatch):
    def refuse(*a, **kw):
        raise Contacted(f"network use during a dry run: {a[1:2] or a}")
    for name in ("connect", "connect_ex"):
        monkeypatch.setattr(socket.socket, name, refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    # librdkafka (the ISR watch) opens its sockets in C: fail on its first use instead.
    import confluent_kafka.admin
    monkeypatch.setattr(confluent_kafka.admin, "AdminClient", refuse)


@pytest.fixture
def dry(tmp_path, no_network):
    t = NoTransport(inventory.load("lab-remote"), confirm=False, echo=False)
    rec = record.start("failure-drills", "failure-drills", "lab-remote", tmp_path, "real", "test")
    rec.echo = False
    return FailureDrills(ChapterRun(t, rec, "failure-drills", by_runner=True))


def plans(d: FailureDrills) -> list[tuple[str, str]]:
    """(procedure, planned command) of every console record, in order."""
    return [(r.id, r.data["output"]) for r in d.rec.records
            if r.kind == "console" and r.data["output"].startswith("DRY RUN")]


def test_every_drill_plans_its_faults_and_repairs_and_reaches_nothing(dry):
    dry.prepare()
    assert dry.dry and dry.found is None
    dry.calibrate(1800, 300)
    dry.lif_unreachable(10)
    dry.lif_migration(5)
    dry.volume_full(2000, 90)
    dry.partition(15)
    dry.host_loss(10)
    dry.storage_failover(15)
    dry.soft_mount("soft,timeo=50,retrans=1", 60)
    dry.restore()
    dry.summary()
    planned = plans(dry)
    text = "\n".join(f"{p}: {c}" for p, c in planned)
    for proc, what in [
            ("DRL-0", "kafka-topics.sh --bootstrap-server \"$BOOTSTRAP\" --create"),
            # each load: what earlier loads left is deleted, then several producers start
            ("DRL-0", "kafka-delete-records.sh --bootstrap-server"),
            ("DRL-1", "for j in $(seq 1 \"$PRODUCERS\")"),
            # DRL-1's fault is an operator's: nftables drops the host's traffic to its LIF
            ("DRL-1", "nft -c -f /run/drill-lif-drop.nft"),
            ("DRL-1", "nft delete table inet tr4947_drill"),
            ("DRL-2", "for j in $(seq 1 \"$PRODUCERS\")"),
            ("DRL-2", "network interface migrate -vserver svm_kafka -lif lif_kafka_1"),
            ("DRL-2", "network interface revert -vserver svm_kafka -lif lif_kafka_1"),
            ("DRL-3", "volume size -vserver svm_kafka -volume kafka_nfs_b1 -new-size"),
            ("DRL-3", "kafka-server-start.sh"),
            ("DRL-4", "ip link set \"$DEV\" down"),
            ("DRL-5", "kill -KILL"),
            ("DRL-5", "ip addr add \"$ADDRESS\""),
            ("DRL-5", "kafka-storage.sh format"),
            ("DRL-5", "mount -t nfs -o \"vers=4.1${OPTIONS:+,$OPTIONS}\" \"$VOLUME\""),
            ("DRL-6", "storage failover takeover -ofnode"),
            ("DRL-6", "storage failover giveback -ofnode"),
            ("DRL-6", "network interface revert -vserver svm_kafka -lif lif_kafka_1")]:
        assert any(p == proc and what in c for p, c in planned), f"{proc} did not plan {what}:\n{text}"
    # No lab-only step in a real target's plan: no lab mount option, no lab layer, no soft
    # remount; DRL-7, which would put a production volume on a soft mount, is refused with
    # its reason before it runs.
    for lab_only in ("x-lab-nopassthrough", "tr4947-nfsctl", "Lab:", "soft,timeo"):
        assert lab_only not in text and not any(lab_only in r.title for r in dry.rec.records
                                                if r.kind == "console"), lab_only
    assert not any(p == "DRL-7" for p, _ in planned)
    refused = [r.data["body"] for r in dry.rec.records if r.kind == "text" and r.id == "DRL-7"]
    assert refused and "lab only" in refused[0] and "checklist rules out" in refused[0], refused
    # both clusters: the partition and the host loss are planned on each broker 1
    for host in ("das-broker-1", "nfs-broker-1"):
        assert any(p == "DRL-4" and f"on {host} " in c for p, c in planned), host
        assert any(p == "DRL-5" and f"on {host} " in c for p, c in planned), host
    # the calibration is planned, not run: the rate stays as given
    assert any("calibrated from 1,800 records/s" in r.data["body"] for r in dry.rec.records
               if r.kind == "text" and r.id == "DRL-0")
    assert dry.harness.rate == 300 and dry.harness.calibration is None
    # nothing was measured, so nothing is claimed
    assert not [r for r in dry.rec.records if r.kind in ("verdict", "load")]
    assert dry.outcomes == []


def test_the_chapters_steps_all_plan_on_a_real_target(dry):
    """No step of the chapter is declared read-only that changes something: a dry run plans
    at least one step per drill, and the only records are plans and texts."""
    dry.prepare()
    for step in (lambda: dry.lif_unreachable(1), lambda: dry.lif_migration(1),
                 lambda: dry.volume_full(100, 90), lambda: dry.partition(1),
                 lambda: dry.host_loss(1)):
        before = len(plans(dry))
        step()
        assert len(plans(dry)) > before
    kinds = {r.kind for r in dry.rec.records}
    assert kinds <= {"console", "text"}, kinds


def test_a_sides_records_keep_their_order_and_refuse_what_a_recorder_cannot_do():
    """While both clusters run a drill at once, each records into its own SideRecords:
    replayed in order into the run's Recorder; a method the Recorder does not have fails at
    once (the proxy it replaced accepted any name and failed only at replay, or never)."""
    from tr4947.procedures.failure_drills import SideRecords
    kept = SideRecords()
    kept.show("DRL-4", "first", "r1")
    kept.text("DRL-4", "", "second")
    with pytest.raises(AttributeError):
        kept.shwo("DRL-4", "misspelt", "r")

    class Rec:
        def __init__(self):
            self.got = []

        def show(self, *a, **kw):
            self.got.append(("show", a))

        def text(self, *a, **kw):
            self.got.append(("text", a))
    rec = Rec()
    kept.replay(rec)
    assert rec.got == [("show", ("DRL-4", "first", "r1")), ("text", ("DRL-4", "", "second"))]
