"""The drills say which configuration they ran on: DRL-0 reads the settings broker 1 was
started with (its properties file; a key it leaves out has Kafka's default), and each verdict says the follower lag allowance and, where it is the TR's
test value, whether the drill's longest fault outlasted Kafka's default (only then could the
setting have decided a run)."""
from types import SimpleNamespace as NS

from tr4947.procedures.failure_drills.harness import started_with
from tr4947.procedures.failure_drills.report import lag_clauses

FILE_LINES = """\
replica.lag.time.max.ms=100000000
min.insync.replicas=2
"""


def test_the_settings_are_the_files_lines_and_kafkas_defaults_for_the_rest():
    assert started_with(FILE_LINES) == {"replica.lag.time.max.ms": "100000000",
                                        "min.insync.replicas": "2",
                                        "unclean.leader.election.enable": "false"}
    assert started_with("") == {"replica.lag.time.max.ms": "30000", "min.insync.replicas": "1",
                                "unclean.leader.election.enable": "false"}


def outcome(cluster, *faults):
    return NS(cluster=cluster, runs=[NS(fault=100.0, heal=100.0 + f) for f in faults])


def harness(lag):
    return NS(settings={"das": {"replica.lag.time.max.ms": lag},
                        "nfs": {"replica.lag.time.max.ms": lag}} if lag else {})


def test_a_tr_lag_and_short_faults_say_the_setting_did_not_decide_the_runs():
    said = lag_clauses(harness("100000000"), [outcome("das", 15, 14.2), outcome("nfs", 15.3)])
    assert said[0] == "broker 1 ran with replica.lag.time.max.ms=100000000"
    assert "the TR's test setting" in said[1]
    assert said[2] == ("the longest fault lasted 15.3 s, shorter than that default, so the "
                       "setting did not decide these runs")


def test_a_fault_past_the_default_says_the_follower_would_have_left_the_isr():
    said = lag_clauses(harness("100000000"), [outcome("nfs", 10, 45)])
    assert said[2].startswith("the longest fault lasted 45.0 s, longer than that default")


def test_kafkas_default_is_named_and_nothing_more():
    assert lag_clauses(harness("30000"), [outcome("nfs", 45)]) == \
        ["broker 1 ran with replica.lag.time.max.ms=30000"]


def test_a_dry_run_read_nothing_and_says_nothing():
    assert lag_clauses(harness(None), [outcome("nfs", 10)]) == []
