"""The ONTAP stand-in's clustershell over SSH, reached through the Target as any ONTAP is: one
interactive session per step (privilege persists from line to line, confirmations answered),
errors as ONTAP prints them, the read-only check refusing a modifying command before it is
sent, and a real-kind target's default-deny and password handling. The stand-in records
every command it was asked to run (its command log, as ONTAP's audit log would) and its SSH
server logs every login: that is how these tests know what reached it."""
from __future__ import annotations

import pytest

from tr4947.lab.ontap import audit, state

from .conftest import own_lab

pytestmark = pytest.mark.lab

ONTAP = "cluster1"
SNIP = "functional-validation/"


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    with own_lab(tmp_path_factory.mktemp("ontap")) as tl:
        yield tl


def received(tl) -> str:
    """What the stand-in's SSH server logged (logins and every line it ran)."""
    return (tl.root / "hosts" / ONTAP / "console.log").read_text()


def commands(tl) -> list[dict]:
    """The stand-in's command log: every command it was asked to run, by whom, from where."""
    return audit.read(tl.root)


def test_clustershell_over_ssh_as_an_operator_types_it(lab):
    t = lab.target()
    r = t.run("volume show", ONTAP, read_only=True, check=True)
    assert r.stdout.startswith("cluster1::> volume show\nVserver   Volume       Aggregate")
    assert "svm_kafka_root" in r.stdout
    # At admin privilege the parameter does not exist: ONTAP's error, exit code 1.
    r = t.run("volume create -vserver svm_kafka -volume k -aggregate aggr1 -size 1g "
              "-is-preserve-unlink-enabled true", ONTAP)
    assert r.exit_code == 1 and 'Error: invalid argument "-is-preserve-unlink-enabled"' in r.stdout
    # FV-1 as the guide prints it: two lines, one session, the second at advanced privilege
    # (the confirmation answered as an operator answers it).
    r = t.run_snippet(SNIP + "FV-1-volume-create.ontap", ONTAP, check=True)
    lines = r.stdout.splitlines()
    assert lines[0] == "cluster1::> set -privilege advanced"
    assert "Do you want to continue? {y|n}:  y" in r.stdout
    assert any(line.startswith("cluster1::*> volume create -vserver svm_kafka -volume "
                               "kafka_fg_vol01") for line in lines)
    assert "Job succeeded: Successful" in r.stdout
    show = t.run_snippet(SNIP + "FV-1-volume-show.ontap", ONTAP, read_only=True, check=True)
    assert show.stdout.strip().splitlines()[-1].split() == [
        "svm_kafka", "kafka_fg_vol01", "true", "/kafka_fg_vol01", "3.42TB"]
    assert state.load(lab.root).volumes["svm_kafka:kafka_fg_vol01"].is_preserve_unlink_enabled
    log = commands(lab)
    assert {"channel": "ssh", "user": "admin", "from": "198.19.0.1", "command": "volume show",
            "reads_only": True, "ok": True}.items() <= log[0].items()
    # the refused create (no such parameter at admin) and FV-1's, which changed the cluster
    assert [e["ok"] for e in log if e["command"].startswith("volume create")] == [False, True]
    assert [e["command"].split(" -")[0] for e in log if not e["reads_only"]] == ["volume create"]


def test_a_modifying_command_declared_read_only_never_reaches_the_cluster(lab):
    t = lab.target()
    t.run("volume create -vserver svm_kafka -volume keep -aggregate aggr1 -size 1g",
          ONTAP, check=True)
    for line in ("volume offline -vserver svm_kafka -volume keep",
                 "volume show -volume keep; volume offline -vserver svm_kafka -volume keep"):
        with pytest.raises(ValueError, match="declared read-only, but .* changes cluster1"):
            t.run(line, ONTAP, read_only=True)
    assert not [e for e in commands(lab) if "offline" in e["command"]]
    assert "volume offline" not in received(lab)
    assert state.load(lab.root).volumes["svm_kafka:keep"].state == "online"


def test_a_real_target_plans_changes_and_logs_in_only_with_the_password(lab, monkeypatch):
    passwords = lab.lab.credentials()["ontap_passwords"]
    assert passwords.get("admin")
    monkeypatch.delenv("ONTAP_PASSWORD", raising=False)
    t = lab.real_target(confirm=False)
    before, ran_before = received(lab), len(commands(lab))
    r = t.run("volume delete -vserver svm_kafka -volume kafka_fg_vol01", ONTAP)
    assert r.planned and r.stdout.startswith("DRY RUN: would run on cluster1 (198.19.10.1):")
    # A read needs the password: without it, nothing is attempted.
    r = t.run("version", ONTAP, read_only=True)
    assert r.exit_code == 255 and "ONTAP_PASSWORD is not set" in r.stderr
    assert received(lab) == before
    monkeypatch.setenv("ONTAP_PASSWORD", "not-the-password")
    r = t.run("version", ONTAP, read_only=True)
    assert r.exit_code == 255 and "PermissionDenied" in r.stderr
    monkeypatch.setenv("ONTAP_PASSWORD", passwords["admin"])
    r = t.run("version", ONTAP, read_only=True, check=True)
    assert r.stdout.splitlines()[1] == "NetApp Release 9.12.1 (lab stand-in)"
    new = received(lab)[len(before):]
    assert "login admin from 198.19.0.1" in new and ": denied" in new and ": accepted" in new
    assert [e["command"] for e in commands(lab)[ran_before:]] == ["version"]
    for secret in [*passwords.values(), "not-the-password"]:
        assert secret not in received(lab)
    assert "svm_kafka:kafka_fg_vol01" in state.load(lab.root).volumes      # the plan only planned
