"""The drills say which configuration they ran on: DRL-0 reads the settings broker 1 was
started with (its properties file; a key it leaves out has Kafka's default), each outcome keeps
them, and each verdict says the follower lag allowance. Where a drill ran on both Kafka's
default and the TR's value, it says what the TR's changed at each length both ran; where it
ran on the TR's only, whether its longest fault outlasted Kafka's default (only then could
the setting have decided a run)."""
from types import SimpleNamespace as NS

import pytest

from tr4947.procedures.failure_drills import configs as cf
from tr4947.procedures.failure_drills import _lengths
from tr4947.procedures.failure_drills.harness import WAITING
from tr4947.procedures.failure_drills.report import lag_clauses, lengths_text, tr_value_note

FILE_LINES = """\
replica.lag.time.max.ms=100000000
min.insync.replicas=2
"""


def test_the_settings_are_the_files_lines_and_kafkas_defaults_for_the_rest():
    assert cf.started_with(FILE_LINES) == {"replica.lag.time.max.ms": "100000000",
                                           "min.insync.replicas": "2",
                                           "unclean.leader.election.enable": "false"}
    assert cf.started_with("") == {"replica.lag.time.max.ms": "30000",
                                   "min.insync.replicas": "1",
                                   "unclean.leader.election.enable": "false"}


def run(fault_len, shrank=False, waiting=None, fenced=None, stall=None):
    extra = {}
    if waiting is not None:
        extra[WAITING] = waiting
    return NS(fault=100.0, heal=100.0 + fault_len, shrank=shrank, extra=extra, partitions=6,
              fenced_s=fenced, stall_s=fault_len if stall is None else stall)


def outcome(cluster, *faults, lag="100000000", length=None, runs=None):
    return NS(cluster=cluster, settings={"replica.lag.time.max.ms": lag} if lag else {},
              length=length, runs=runs or [run(f) for f in faults])


def test_a_tr_lag_and_short_faults_say_the_setting_did_not_decide_the_runs():
    said = lag_clauses([outcome("das", 15, 14.2), outcome("nfs", 15.3)])
    assert said[0] == "broker 1 ran with replica.lag.time.max.ms=100000000"
    assert "the TR's test setting" in said[1]
    assert said[2] == ("the longest fault lasted 15.3 s, shorter than that default, so the "
                       "setting did not decide these runs")


def test_a_fault_past_the_default_says_the_follower_would_have_left_the_isr():
    said = lag_clauses([outcome("nfs", 10, 45)])
    assert said[2].startswith("the longest fault lasted 45.0 s, longer than that default")


def test_kafkas_default_is_named_and_nothing_more():
    assert lag_clauses([outcome("nfs", 45, lag="30000")]) == \
        ["broker 1 ran with replica.lag.time.max.ms=30000"]


def test_a_dry_run_read_nothing_and_says_nothing():
    assert lag_clauses([outcome("nfs", 10, lag=None)]) == []


def test_side_by_side_says_what_the_tr_value_changed_at_each_length_both_ran():
    checklist = [outcome("nfs", lag="30000", length=10, runs=[run(10, False, 6)] * 3),
                 outcome("nfs", lag="30000", length=60,
                         runs=[run(60, True, 2), run(60, True, 2), run(60, True, 3)])]
    tr = [outcome("nfs", length=60, runs=[run(60, False, 6)] * 3)]
    said = lag_clauses(checklist + tr)
    assert said == [
        "broker 1 ran with replica.lag.time.max.ms=30000/100000000",
        "at 60 s, broker 1 left the ISR in 3 of 3 runs with Kafka's default and in 0 of 3 with "
        "the TR's value; partitions still waiting when the fault ended: 2 and 6 of 6 (median)"]
    # the 10 s length ran on the checklist only: nothing to compare there
    assert not any(c.startswith("at 10 s") for c in said)


def test_the_tr_value_is_advised_against_only_where_a_run_used_it():
    from tr4947.procedures.failure_drills.report import _tr_lag
    assert _tr_lag(outcome("nfs", 60))
    assert not _tr_lag(outcome("nfs", 60, lag="30000"))
    assert not _tr_lag(outcome("nfs", 60, lag=None))


def test_a_switch_is_needed_only_when_a_value_differs():
    wanted = cf.CONFIGS[cf.CHECKLIST]
    assert not cf.needs_switch(cf.started_with(""), wanted)      # the default already
    assert cf.needs_switch(cf.started_with(FILE_LINES), wanted)
    assert cf.properties(wanted) == "replica.lag.time.max.ms=30000\n"


def test_only_lengths_past_the_allowance_run_again_on_the_tr_value():
    assert cf.outlasting([10, 60, 180], cf.CONFIGS[cf.CHECKLIST]) == [60, 180]
    assert cf.outlasting([10, 30], cf.CONFIGS[cf.CHECKLIST]) == []
    assert cf.outlasting([12], {cf.LAG: "4000"}) == [12]


class Rec:
    def __init__(self):
        self.texts = []

    def text(self, proc, title, body):
        self.texts.append(body)


def drills_with(checklist_lag="30000"):
    return NS(rec=Rec(), configs={cf.CHECKLIST: {cf.LAG: checklist_lag}})


def test_the_note_on_the_tr_value_comes_from_the_runs():
    h = drills_with()
    tr_value_note(h, "DRL-4", [outcome("das", runs=[run(60, fenced=9.1), run(60, fenced=9.5)]),
                               None])
    assert h.rec.texts == [
        "Not run beside it with the TR's replica.lag.time.max.ms: in every run (2) the "
        "controller fenced broker 1 9.3 (9.1-9.5, n=2) s after the fault began, before the "
        "checklist's allowance (30 s) ran out, and a fenced broker leaves every in-sync "
        "replica set whatever that setting says."]
    # short waits, or fenced in time: the setting could not change any run
    h = drills_with()
    tr_value_note(h, "DRL-6", [outcome("nfs", runs=[run(15, stall=6.2), run(15, stall=4.0),
                                                    run(40, fenced=8.0)])])
    assert h.rec.texts == [
        "Not run beside it with the TR's replica.lag.time.max.ms: in 2 of 3 runs no partition "
        "waited as long as the checklist's allowance (30 s; the longest wait was 6.2 s), and "
        "in the other 1 the controller fenced broker 1 before it ran out, so that setting "
        "could not change the outcome."]
    # a run with a long wait and no fencing in time is named, not hidden
    h = drills_with()
    tr_value_note(h, "DRL-4", [outcome("nfs", runs=[run(60, fenced=9.0), run(60, fenced=None)])])
    assert "in 1 of 2 runs a partition waited longer than the checklist's allowance" \
        in h.rec.texts[0]


def test_fault_lengths_are_checked_and_named():
    assert _lengths("unreachable_s", [10, 60]) == [10.0, 60.0]
    assert _lengths("unreachable_s", 15) == [15.0]
    for bad in ([], [0], [10, -1], ["10"], [True]):
        with pytest.raises(ValueError, match=r"unreachable_s: give fault lengths in seconds"):
            _lengths("unreachable_s", bad)
    assert lengths_text([10, 60, 180]) == "10, 60 and 180 s"
    assert lengths_text([15]) == "15 s"


def test_refused_sends_are_grouped_by_kind_whatever_counts_their_messages_carry():
    from tr4947.procedures.failure_drills.report import refusals
    errs = [{"exception": "org.apache.kafka.common.errors.TimeoutException",
             "message": f"Expiring {n} record(s) for drills-0:{ms} ms has passed since batch "
                        "creation"} for n, ms in ((12, 120001), (7, 120004), (12, 120010))]
    errs.append({"exception": "org.apache.kafka.common.errors.NotEnoughReplicasException",
                 "message": "Messages are rejected since there are fewer in-sync replicas"})
    got = refusals(errs)
    assert got[0] == ("org.apache.kafka.common.errors.TimeoutException: Expiring <n> record(s) "
                      "for drills-<n>:<n> ms has passed since batch creation", 3)
    assert got[1][1] == 1 and len(got) == 2


def test_a_drill_at_several_lengths_charts_what_each_length_cost():
    """One series per cluster and configuration, a point per length: the median and range
    of its runs; runs without a figure are left out, a series without any is not drawn."""
    from tr4947.measure.drills import Through
    from tr4947.procedures.failure_drills.report import length_chart
    from tr4947.procedures.failure_drills.runs import Outcome, Run

    def through(p99):
        return Through(0, None, 0.1, p99, p99, 0, 0)

    def load(cluster, config, length, p99s, resumed):
        runs = [Run("DRL-1", cluster, i, 0.0, group=through(p), resume_s=r)
                for i, (p, r) in enumerate(zip(p99s, resumed))]
        return Outcome("DRL-1", cluster, runs, None, None, 1800, True, config=config,
                       length=length)
    charts = []
    h = NS(rec=NS(chart=lambda proc, title, spec: charts.append((proc, title, spec))))
    length_chart(h, "DRL-1", [load("nfs", cf.CHECKLIST, 10, [9.0, 10.0, 11.0], [9, 9, 9]),
                              load("nfs", cf.CHECKLIST, 180, [170.0, 174.0, None],
                                   [None, 181, 185]),
                              load("nfs", cf.TR, 180, [None, None, None], [None] * 3)])
    (_, e2e_title, e2e), (_, _, resumed) = charts
    assert "End-to-end latency p99" in e2e_title
    assert e2e["series"] == [{"name": "NFS, deploy checklist", "x": [10, 180],
                              "y": [10.0, 172.0], "low": [9.0, 170.0], "high": [11.0, 174.0]}]
    assert [s["name"] for s in resumed["series"]] == ["NFS, deploy checklist"]
    assert resumed["series"][0]["y"] == [9, 183]


def test_the_calibration_steps_down_to_the_first_rate_both_clusters_hold():
    """Harness.calibrate with each cluster's load simulated: a rate holds where every
    cluster's producers achieve 95 % of it with their records acknowledged within the
    latency bound of their due time; the drills then run at it. A step's latency is counted
    from each producer's own start."""
    from tr4947.measure.drills import Ack, ProducerLog
    from tr4947.procedures.failure_drills import harness as H
    from tr4947.procedures.failure_drills import load as L

    T0, window = 1_000.0, (1_010.0, 1_030.0)

    def tried(name, rate, lab_max):
        # each of two producers paces rate / 2 from its own start; what is past the lab's
        # capacity is acknowledged ever later (a backlog), so the achieved rate falls short
        each, log = rate / 2, ProducerLog()
        for j, start in ((1, T0), (2, T0 + 0.5)):
            log.starts[f"91{j}"] = start
            share = min(each, lab_max / 2)
            for n in range(int(each * 40)):
                log.acks.append(Ack(start + n / share + 0.02, n % 6, f"91{j}.{n}"))
        log.acks.sort(key=lambda a: a.t)
        return L.Tried(name, False, log, each, *window)

    tables, loads = [], []
    h = H.Harness.__new__(H.Harness)
    h.producers, h.rate, h.setup, h.calibration = 2, 300.0, None, None
    h.rec = NS(table=lambda *a, **k: tables.append((a, k)),
               load=lambda *a, **k: loads.append((a, k)), text=None)
    capacity = {"das": 1400, "nfs": 1100}
    h.both = lambda fn: [fn(NS(name=c)) for c in capacity]
    h.load = NS(try_rate=lambda s, rate: tried(s.name, rate, capacity[s.name]))
    h.calibrate(2000, 300, 0.8)
    asked = [(r[0], r[1], r[4]) for r in h.calibration.rows]
    # 2,000 and 1,600 are past both; 1,280 only past NFS's; 1,024 both hold
    assert asked == [("2,000", "das", "no"), ("2,000", "nfs", "no"), ("1,600", "das", "no"),
                     ("1,600", "nfs", "no"), ("1,280", "das", "yes"), ("1,280", "nfs", "no"),
                     ("1,024", "das", "yes"), ("1,024", "nfs", "yes")]
    assert h.rate == 1024 and h.calibration.held_rate == 1024
    # a held step's records came 20 ms after they were due, from each producer's own start
    held = [ld for ld in h.calibration.loads if ld["target"] == 1024]
    assert all(ld["publish_latency_avg_ms"] == pytest.approx(20, abs=1) for ld in held), held
    assert loads and loads[0][1] == {"calibration": True}


def test_the_soft_mount_drill_checks_its_options_and_outage_before_anything_runs():
    from tr4947.procedures.failure_drills import _soft
    _soft("soft,timeo=50,retrans=1", 60)                 # major timeout 15 s: fine
    for opts, drop, says in [
            ("hard,timeo=50", 60, "give a soft mount's options"),
            ("timeo=50", 60, "give a soft mount's options"),  # hard by default
            ("soft,timeo=50,retrans=1", 15, r"longer than the soft mount's major timeout \(15 s"),
            ("soft", 300, r"major timeout \(360 s"),          # TCP's defaults: 60 + 120 + 180
            ("soft,timeo=fast", 60, "timeo='fast': give a whole number"),
            (["soft"], 60, "give its mount options as text"),
            ("soft,timeo=50", True, "soft_drop_s: give an outage in seconds")]:
        with pytest.raises(ValueError, match=says):
            _soft(opts, drop)
