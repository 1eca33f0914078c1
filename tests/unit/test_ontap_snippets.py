"""Every ONTAP snippet the notebooks run succeeds on the stand-in, in the notebooks' order.

Each flow starts from a fresh cluster, as each notebook starts from a fresh lab. The
stand-in checks thick volumes against aggregate space, so the cluster here has aggregates
large enough for the snippets' sizes (see ``FITS``); ``test_lab_inventory_aggregates_hold_
the_snippets`` runs the same flows on the aggregates the lab inventory defines."""
from __future__ import annotations

from pathlib import Path

import pytest

from tr4947 import inventory, paths
from tr4947.lab.ontap import bootstrap, rest, session, state
from tr4947.targets.base import ontap_lines, render_vars

REPO = Path(__file__).resolve().parents[2]
SNIPPETS = paths.SNIPPETS
NODES = ["cluster1-01", "cluster1-02"]
LIFS = [{"name": "lif_kafka_1", "address": "127.0.10.11", "node": "cluster1-01"},
        {"name": "lif_kafka_2", "address": "127.0.10.12", "node": "cluster1-02"}]
# Big enough for every flow below (the largest: FSX-5's six FlexGroups of 20MB x 4 + 2TB
# each on aggr1 next to two 1GB SVM root volumes, about 12TB; CVO-7's six 1TB volumes on
# aggr2).
FITS = [{"name": "aggr1", "node": "cluster1-01", "size": "16TB"},
        {"name": "aggr2", "node": "cluster1-02", "size": "8TB"},
        {"name": "aggr3", "node": "cluster1-01", "size": "8TB"},
        {"name": "aggr22", "node": "cluster1-02", "size": "8TB"}]
AFF_FLEXGROUP = {"name": "kafka_fg_vol01", "svm": {"name": "svm_kafka"},
                 "aggregates": [{"name": a} for a in ("aggr1", "aggr3", "aggr2", "aggr22")],
                 "constituents_per_aggregate": 8, "size": 10 * 1024 ** 4,
                 "nas": {"path": "/kafka_fg_vol01", "export_policy": {"name": "default"}},
                 "snapshot_policy": {"name": "none"}, "style": "flexgroup"}


def lines(name: str, **variables) -> list[str]:
    return ontap_lines(render_vars((SNIPPETS / name).read_text(), variables))


def run(s: session.Session, name: str, expect_error: str | None = None, **variables) -> list[str]:
    """Run a snippet line by line; every line succeeds (or fails with expect_error)."""
    outs = []
    for line in lines(name, **variables):
        r = s.run_sync(line)
        if expect_error:
            assert r.error and expect_error in r.output, f"{name}: {line!r}\n{r.output}"
        else:
            assert not r.error, f"{name}: {line!r} failed:\n{r.output}"
        outs.append(r.output)
    return outs


def fresh(root: Path, aggregates: list[dict]) -> session.Session:
    bootstrap.bootstrap(root, "cluster1", NODES, aggregates, ["svm_kafka"],
                        [{**l, "vserver": "svm_kafka"} for l in LIFS])
    return session.Session(root)


def functional_validation_and_efficiency(root: Path, aggregates: list[dict]) -> None:
    s = fresh(root, aggregates)
    run(s, "functional-validation/FV-1-volume-create.ontap")
    run(s, "functional-validation/FV-1-volume-modify.ontap")
    out = run(s, "functional-validation/FV-1-volume-show.ontap")[-1]
    assert "kafka_fg_vol01" in out and "true" in out
    run(s, "functional-validation/FV-2-lab-generic-nfsv3-volume.ontap")
    run(s, "storage-efficiency/EFF-1-volume-efficiency.ontap")
    run(s, "storage-efficiency/EFF-2-aggr-efficiency.ontap")
    run(s, "storage-efficiency/EFF-2-volume-space.ontap")


def cvo(root: Path, aggregates: list[dict]) -> None:
    s = fresh(root, aggregates)
    shown = run(s, "aws-cvo/CVO-1-volumes-ha.ontap")[-1]
    # the guide's volumes: all six with preserve-unlink on
    assert "kafka_aggr22_vol3" in shown and shown.count(" true") == 6, shown
    run(s, "aws-cvo/CVO-2-vnvram-stats.ontap")
    run(s, "aws-cvo/CVO-4-nfs-connections.ontap")
    shown = run(s, "aws-cvo/CVO-7-single-node-volumes.ontap")[-1]
    assert "kafka_aggr2_vol6" in shown and shown.count(" true") == 6, shown


def fsx(root: Path, aggregates: list[dict]) -> None:
    s = fresh(root, aggregates)
    # FSX-4: the FSx API makes the SVM (lab.fsx calls bootstrap.add_data_vserver)
    with state.transaction(root) as c:
        bootstrap.add_data_vserver(c, root, "svmkafkatest", lifs=[
            {"name": "svmkafkatest_nfs_1", "address": "127.0.10.21"}])
    run(s, "aws-fsx/FSX-5-volume-create.ontap")
    shown = run(s, "preflight/PRE-1-ontap-volumes.ontap", svm="svmkafkatest")[-1]
    assert shown.count("|true|") == 6, shown
    sizes = run(s, "aws-fsx/FSX-5-volume-size.ontap")
    assert all("size set to" in o for o in sizes[:-1])
    # As printed, FSX-5's `volume mount` repeats the junction `volume create` already set:
    # ONTAP refuses it, and so does the stand-in (the errata page lists it).
    run(s, "aws-fsx/FSX-5-volume-mount.ontap", expect_error="is already mounted at")


def aff(root: Path, aggregates: list[dict]) -> None:
    s = fresh(root, aggregates)
    # AFF-1: na_ontap_volume's POST /api/storage/volumes, through the REST router
    status, body, *_ = rest.route(root, "POST", ["storage", "volumes"],
                                  {"return_timeout": "60"}, AFF_FLEXGROUP)
    job = next(j for j in state.load(root).jobs if j.get("uuid") == body["job"]["uuid"])
    assert status == 201 and job["state"] == "success", job
    out = run(s, "aff-a900/AFF-1-volume-show.ontap", svm="svm_kafka")[0]
    assert "aggr1,aggr3,aggr2,aggr22" in out and " 32 " in out and "10TB" in out
    run(s, "aff-a900/AFF-2-pnfs.ontap", svm="svm_kafka")
    # As printed, AFF-2 puts NFS options on `vserver modify`: refused, as by ONTAP
    run(s, "aff-a900/AFF-2-pnfs.tr-as-written.ontap", svm="svm_kafka",
        expect_error='invalid argument "-v4.1-pnfs"')


def fsx_as_printed_then_pre2(root: Path, aggregates: list[dict]) -> None:
    """FSX-5 as the TR prints it (no -vserver: ONTAP picks the only data SVM, as on an FSx
    file system), then PRE-2's ONTAP part on each volume the audit finds without
    preserve-unlink."""
    bootstrap.bootstrap(root, "cluster1", NODES, aggregates, ["svmkafkatest"],
                        [{**l, "vserver": "svmkafkatest"} for l in LIFS])
    s = session.Session(root)
    run(s, "aws-fsx/FSX-5-volume-create.tr-as-written.ontap")
    shown = run(s, "preflight/PRE-1-ontap-volumes.ontap", svm="svmkafkatest")[-1]
    assert shown.count("|false|") == 7, shown         # six volumes and the SVM's root
    for n in range(1, 7):
        out = run(s, "preflight/PRE-2-preserve-unlink.ontap", svm="svmkafkatest",
                  volume=f"kafkafsxN{n}")[-1]
        assert f"kafkafsxN{n}" in out and "true" in out, out
    shown = run(s, "preflight/PRE-1-ontap-volumes.ontap", svm="svmkafkatest")[-1]
    assert shown.count("|true|") == 6 and shown.count("|false|") == 1, shown


FLOWS = [functional_validation_and_efficiency, cvo, fsx, fsx_as_printed_then_pre2, aff]


@pytest.mark.parametrize("flow", FLOWS, ids=lambda f: f.__name__)
def test_snippets_run_on_the_stand_in(tmp_path, flow):
    flow(tmp_path / "state", FITS)


def _lab_aggregates() -> list[dict]:
    return inventory.load("lab").ontap().get("ontap_aggregates")


@pytest.mark.parametrize("flow", FLOWS, ids=lambda f: f.__name__)
def test_lab_inventory_aggregates_hold_the_snippets(tmp_path, flow):
    """The lab's own aggregates hold every chapter's thick volumes (FV-1 3500GB on aggr1,
    FSX-5 six FlexGroups of about 2TB, CVO-7 six 1TB volumes on aggr2, AFF-1 2.5TB on each
    of aggr1 and aggr2)."""
    flow(tmp_path / "state", _lab_aggregates())
