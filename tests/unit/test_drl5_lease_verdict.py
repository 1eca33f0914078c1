"""DRL-5's lock-lease verdict, from the NFS runs alone: every run set records one, and a set
in which no spare waited for the lock says that nothing measured the hold (the verdict used
to be skipped then, and the ledger lost its row)."""
from __future__ import annotations

from types import SimpleNamespace as NS

from tr4947.procedures import record
from tr4947.procedures.failure_drills.drl5_host_loss import HELD, LEASE_CLAIM, SPARE, _lease_verdict
from tr4947.procedures.failure_drills.runs import Outcome, Run


def harness(tmp_path, lab=True):
    return NS(rec=record.start("x.ipynb", "failure-drills", "lab", tmp_path),
              run=NS(is_lab=lab))


def nfs(*runs, rate=1800.0):
    rs = []
    for i, (spare, held) in enumerate(runs):
        r = Run("DRL-5", "nfs", i, 0.0, rate=rate, lease_s=30)
        r.extra = {SPARE: spare, HELD: held}
        rs.append(r)
    return Outcome("DRL-5", "nfs", rs, None, None, 1800.0, True)


def the_verdict(h):
    [v] = [r for r in h.rec.records if r.kind == "verdict"]
    assert v.data["claim"] == LEASE_CLAIM
    return v.data


def test_no_spare_waited_gives_not_measured_with_when_the_spares_started(tmp_path):
    h = harness(tmp_path)
    _lease_verdict(h, nfs((13.8, None), (18.3, None), (15.0, None)))
    v = the_verdict(h)
    assert v["verdict"] == "not-measured"
    assert v["lab"] == "-"          # the spares' start times are not a hold time
    assert "started 15.0 s (13.8-18.3, n=3) after the failure" in v["why"]
    assert "all 3 runs" in v["why"] and "a 30 s NFSv4 lease" in v["why"]
    assert "last renewal" in v["why"] and "lab:" in v["why"]


def test_on_a_real_target_the_why_names_no_lab_model(tmp_path):
    h = harness(tmp_path, lab=False)
    _lease_verdict(h, nfs((13.8, None), (18.3, None), (15.0, None)))
    assert "lab:" not in the_verdict(h)["why"]


def test_holds_within_five_seconds_of_the_lease_agree(tmp_path):
    h = harness(tmp_path)
    _lease_verdict(h, nfs((14.0, 29.0), (15.0, 31.5), (33.0, None)))
    v = the_verdict(h)
    assert v["verdict"] != "differs" and v["verdict"] != "not-measured"
    assert "found the lock free" in v["why"]


def test_a_hold_far_short_of_the_lease_differs(tmp_path):
    h = harness(tmp_path)
    _lease_verdict(h, nfs((14.0, 16.0), (15.0, 29.0), (14.5, None)))
    assert the_verdict(h)["verdict"] == "differs"


def test_a_run_short_of_its_rate_yields_no_verdict_even_with_holds(tmp_path):
    h = harness(tmp_path)
    _lease_verdict(h, nfs((14.0, 29.0), (15.0, 30.0), (14.5, 30.5), rate=1000.0))
    assert the_verdict(h)["verdict"] == "not-measured"
