"""The Target API without a network: default-deny planning, needs= propagation, the read-only
check of clustershell steps, snippet variables, secrets sent on stdin, errors, and the lab
target's refusal of an inventory that is not the lab's. Commands that do run, run in local
bash through the Target's own command building (tests/support/targets.py)."""
from __future__ import annotations

import hashlib
import shlex

import pytest

from tr4947 import inventory, secrets, targets
from tr4947.inventory import InventoryError
from tr4947.targets.base import (Result, ResultSet, Target, TargetError, ontap_lines,
                                 ontap_reads_only, plain_path, render_vars, replace_values)
from tr4947.targets.lab import LabTarget, check_lab_addresses

from ..support.targets import NoTransport, TransportUsed, local_target, write_inventory


@pytest.fixture
def real(tmp_path):
    return write_inventory(tmp_path)


def planned_target(inv, echo=False) -> NoTransport:
    return NoTransport(inv, confirm=False, echo=echo)


# --- default-deny ----------------------------------------------------------------------------
def test_a_step_that_changes_state_is_planned_printed_and_reaches_no_host(real, tmp_path,
                                                                           capsys):
    t = planned_target(real, echo=True)
    assert t.kind == "real" and not t.confirm
    r = t.run("systemctl stop kafka", "b1")
    assert r.planned and r.exit_code is None and r.ok
    assert r.stdout == "DRY RUN: would run on b1 (192.0.2.1):\nsystemctl stop kafka"
    assert r.stdout in capsys.readouterr().out                  # the plan is printed
    rs = t.run(["rm", "-rf", "/data dir"], "brokers")
    assert isinstance(rs, ResultSet) and [x.host for x in rs] == ["b1", "b2"]
    assert rs.planned and all(x.command == "rm -rf '/data dir'" for x in rs)
    snip = tmp_path / "fv1.ontap"
    snip.write_text("set -privilege advanced\n# comment\nvolume create -vserver {{ svm }} \\\n"
                    "  -volume v1 -is-preserve-unlink-enabled true\n")
    r = t.run_snippet(snip, "cluster1", svm="svm_kafka")
    assert r.planned and r.stdout.splitlines()[1:] == [
        "set -privilege advanced",
        "volume create -vserver svm_kafka -volume v1 -is-preserve-unlink-enabled true"]
    # Placing a file is a change too, whatever the file is.
    assert t.put("b1", "/tmp/x.json", "{}", check=False).planned
    assert t.run_snippet(_write(tmp_path / "p.json", "{}"), "b1").planned


def test_read_only_steps_run_without_confirm_and_changes_with_it(real):
    t = local_target(real, confirm=False)
    r = t.run("echo read", "b1", read_only=True)
    assert (r.exit_code, r.stdout, r.planned) == (0, "read\n", False)
    ep, command, stdin = t._pool.calls[-1]
    assert (ep.address, ep.port, command, stdin) == ("192.0.2.1", 22, "echo read", None)
    assert t.run("echo change", "b1").planned and len(t._pool.calls) == 1
    t.confirm = True
    r = t.run("echo change", "b2")
    assert r.stdout == "change\n" and t._pool.calls[-1][0].address == "192.0.2.2"


def test_a_read_of_a_planned_step_is_planned_and_of_a_real_one_runs(real):
    t = local_target(real, confirm=False)
    made = t.run("mkdir /x", "b1")
    both = t.run("ls /x", "brokers", read_only=True, needs=[made])
    assert all(r.planned for r in both) and t._pool.calls == []
    assert both[0].stdout == ("DRY RUN: would read on b1 (192.0.2.1), once the planned step "
                              "it reads from has run:\nls /x")
    # A ResultSet counts by its members: one planned host is enough.
    group = ResultSet([Result("b1", "x", 0, "", "", 0.1, "now"), made])
    assert t.run("echo a", "b2", read_only=True, needs=group).planned
    done = Result("b1", "mkdir /x", 0, "", "", 0.1, "now")
    r = t.run("echo ran", "b2", read_only=True, needs=[done, ResultSet([done])])
    assert not r.planned and r.stdout == "ran\n"


def test_a_confirmed_target_runs_planned_needs_as_plans_too(real):
    """confirm=True does not make a read of something that was never made run."""
    t = local_target(real, confirm=True)
    planned = Result("b1", "mkdir /x", None, "DRY RUN", "", 0.0, "now", planned=True)
    assert t.run("ls /x", "b1", needs=planned).planned and t._pool.calls == []


# --- the clustershell's read-only check --------------------------------------------------------
@pytest.mark.parametrize("line,reads", [
    ("volume show", True),
    ("volume show -vserver svm_kafka -fields is-preserve-unlink-enabled", True),
    ("network connections active show -service nfs*", True),
    ("volume show-space", True),
    ("version", True),
    ("set -privilege advanced -confirmations off", True),
    ("set advanced; volume show", True),
    ("rows 0", True),
    ("", True),
    ("volume create -vserver svm_kafka -volume v -aggregate aggr1", False),
    ("volume modify -vserver svm_kafka -volume v -comment show", False),
    ("statistics start -object nfsv4_1", False),
    # The clustershell runs ;-separated commands in turn: each must be a read.
    ("volume show; volume delete -vserver svm_kafka -volume v", False),
    ("set -privilege advanced; volume modify -vserver s -volume v -size 1g", False),
    ('volume show -comment "a; volume delete"', True),
])
def test_ontap_reads_only(line, reads):
    assert ontap_reads_only(line) is reads


class OntapRecorder(NoTransport):
    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.ontap_calls = []

    def _ontap(self, h, lines, timeout):
        self.ontap_calls.append((h.name, lines))
        return Result(h.name, "\n".join(lines), 0, "ok", "", 0.0, "now")


def test_a_modifying_clustershell_step_declared_read_only_is_refused(real, tmp_path):
    t = OntapRecorder(real, confirm=True, echo=False)
    for line in ("volume delete -vserver svm_target -volume v",
                 "volume show; volume delete -vserver svm_target -volume v"):
        with pytest.raises(ValueError, match="declared read-only, but .* changes cluster1"):
            t.run(line, "cluster1", read_only=True)
    snip = _write(tmp_path / "s.ontap", "volume show\nvolume offline -vserver s -volume v\n")
    with pytest.raises(ValueError, match="'volume offline -vserver s -volume v' changes"):
        t.run_snippet(snip, "cluster1", read_only=True)
    assert t.ontap_calls == []                      # refused before anything was sent
    # A real read runs (even unconfirmed), as one session of the snippet's lines.
    t.confirm = False
    reads = _write(tmp_path / "r.ontap", "set -privilege advanced\n# c\nvolume show \\\n -fields size\n")
    assert t.run_snippet(reads, "cluster1", read_only=True).stdout == "ok"
    assert t.ontap_calls == [("cluster1", ["set -privilege advanced", "volume show -fields size"])]


def test_ontap_lines():
    assert ontap_lines("# c\n\nvolume show\nvolume create -a 1 \\\n  -b 2\n") == \
        ["volume show", "volume create -a 1 -b 2"]
    assert ontap_lines("volume show \\") == ["volume show"]


def test_a_confirmed_clustershell_step_without_a_password_fails_before_contacting(real,
                                                                                 monkeypatch):
    monkeypatch.delenv("ONTAP_PASSWORD", raising=False)

    def no_ssh(*a, **kw):
        raise TransportUsed("connected without a password")
    monkeypatch.setattr("tr4947.transports.ssh.clustershell", no_ssh)
    t = Target(real, confirm=True, echo=False)
    r = t.run("volume create -vserver svm_target -volume v", "cluster1")
    assert r.exit_code == 255 and "ONTAP_PASSWORD is not set" in r.stderr


# --- snippet variables ------------------------------------------------------------------------
HOSTILE = "a b; touch /tmp/pwned-$$ `id` $(id) 'q'"


def test_render_vars_shell_quotes_values_in_a_shell_snippet(tmp_path):
    text = render_vars('printf "%s\\n" {{ v }}\n', {"v": HOSTILE}, ".sh")
    assert text == f'printf "%s\\n" {shlex.quote(HOSTILE)}\n'
    t = local_target(write_inventory(tmp_path), confirm=True)
    r = t.run_snippet(_write(tmp_path / "s.sh", 'printf "%s\\n" {{ v }}\n'), "b1", v=HOSTILE,
                      check=True)
    assert r.stdout == HOSTILE + "\n"               # one word, nothing executed


@pytest.mark.parametrize("value", ["svm kafka", "svm;volume delete -volume x", "a|b", 'x"y',
                                   "", "$(id)"])
def test_render_vars_refuses_a_clustershell_value_that_is_not_one_word(value):
    with pytest.raises(ValueError, match="cannot go into a clustershell command"):
        render_vars("volume show -vserver {{ svm }}", {"svm": value}, ".ontap")


def test_render_vars_other_files_and_missing_names():
    assert render_vars("-vserver {{ s }} -junction-path {{ j }}",
                       {"s": "svm_kafka", "j": "/kafka_fg_vol01"}, ".ontap") == \
        "-vserver svm_kafka -junction-path /kafka_fg_vol01"
    assert render_vars('{"t": "{{ t }}"}', {"t": "a b"}, ".json") == '{"t": "a b"}'
    assert render_vars("no variables ${X}", {}, ".sh") == "no variables ${X}"
    with pytest.raises(ValueError, match="snippet variable missing: 'svm' is undefined"):
        render_vars("volume show -vserver {{ svm }}", {}, ".ontap")


def test_a_shell_snippets_transcript_shows_the_environment_it_used(tmp_path):
    t = local_target(write_inventory(tmp_path), confirm=True)
    snip = _write(tmp_path / "s.sh", ': "${BOOTSTRAP:=a:9092}"\necho "$BOOTSTRAP"\n')
    r = t.run_snippet(snip, "b1", env={"BOOTSTRAP": "b:9092", "UNUSED": "x"})
    assert r.stdout == "b:9092\n"
    assert r.command == 'export BOOTSTRAP=b:9092\n: "${BOOTSTRAP:=a:9092}"\necho "$BOOTSTRAP"'
    r = t.run_snippet(snip, "b1")
    assert r.command.startswith(": ") and r.stdout == "a:9092\n"


# --- how a command reaches a host -------------------------------------------------------------
SECRET = "Target-unit-Secret-4947"


def test_secrets_in_env_go_on_stdin_never_in_the_command(real):
    t = local_target(real, confirm=True)
    opaque = "Opaque-registered-0815"
    secrets.register(opaque)                        # a secret by value, under a plain name
    r = t.run('printf %s "$FSXADMIN_PASSWORD" | sha256sum; printf %s "$TOKENISH" | sha256sum; '
              'echo "$REGION"; cat', "b1",
              env={"FSXADMIN_PASSWORD": SECRET, "REGION": "us-east-1", "TOKENISH": opaque},
              input="the command's own input\n", check=True)
    _ep, command, stdin = t._pool.calls[-1]
    assert SECRET not in command and opaque not in command
    assert command.splitlines()[:3] == ["IFS= read -r FSXADMIN_PASSWORD; export FSXADMIN_PASSWORD",
                                        "export REGION=us-east-1",
                                        "IFS= read -r TOKENISH; export TOKENISH"]
    assert stdin == f"{SECRET}\n{opaque}\nthe command's own input\n"
    # ... and they arrived whole: the host saw exactly these values.
    sums = [line.split()[0] for line in r.stdout.splitlines()[:2]]
    assert sums == [hashlib.sha256(v.encode()).hexdigest() for v in (SECRET, opaque)]
    assert r.stdout.splitlines()[2:] == ["us-east-1", "the command's own input"]


def test_a_secret_the_host_prints_is_masked_in_results_and_errors(real):
    t = local_target(real, confirm=True)
    with pytest.raises(TargetError) as ei:
        t.run('echo "login $ONTAP_PASSWORD"; exit 1', "b1", env={"ONTAP_PASSWORD": SECRET},
              check=True)
    assert SECRET not in str(ei.value) and "login ********" in str(ei.value)
    assert ei.value.result.stdout == "login ********\n"


def test_a_secret_given_only_in_env_is_masked_in_the_plan(real, tmp_path, capsys):
    """Not in this process's environment, not registered: its name alone makes it a secret."""
    t = planned_target(real, echo=True)
    snip = _write(tmp_path / "fs.sh", 'aws fsx create-file-system --x "FsxAdminPassword=$FSXADMIN_PASSWORD"\n')
    r = t.run_snippet(snip, "client-1", env={"FSXADMIN_PASSWORD": SECRET + "-plan"})
    assert r.planned and "export FSXADMIN_PASSWORD=********" in r.stdout
    assert SECRET + "-plan" not in r.stdout + r.transcript() + capsys.readouterr().out


def test_environment_names_must_be_shell_names(real):
    t = local_target(real, confirm=True)
    with pytest.raises(ValueError, match="not a shell name"):
        t.run("true", "b1", env={"A;rm -rf /": "x"})
    assert t._pool.calls == []


def test_commands_run_in_kafka_home_unless_told_otherwise(tmp_path):
    f = tmp_path / "k" / "hosts.yml"
    f.parent.mkdir()
    f.write_text("all:\n  hosts:\n    b1: {ansible_host: 192.0.2.1, kafka_home: /opt/kafka}\n")
    t = local_target(inventory.load(f), confirm=True)
    t.run("true", "b1")
    t.run("true", "b1", cwd="/var/tmp")
    assert [c.splitlines()[0] for _ep, c, _i in t._pool.calls] == ["cd /opt/kafka",
                                                                  "cd /var/tmp"]


def test_errors_carry_host_command_exit_code_and_output(real):
    t = local_target(real, confirm=True)
    with pytest.raises(TargetError) as ei:
        t.run("echo starting; echo boom >&2; exit 3", "b1", check=True)
    e = ei.value
    assert (e.host, e.exit_code) == ("b1", 3)
    assert "boom" in e.output_tail and "starting" in e.output_tail
    assert "exit code 3" in str(e) and "echo boom" in str(e)
    late = Result("b1", "sleep 9", None, "", "", 5.0, "now", timed_out=True)
    with pytest.raises(TargetError, match=r"timed out after 5s \(process group killed\)"):
        late.check()


def test_put_sends_the_content_on_stdin(real, tmp_path):
    t = local_target(real, confirm=True)
    dest = tmp_path / "sub" / "f.txt"
    r = t.put("b1", str(dest), "line 1\n'quoted' $HOME\n")
    assert r.ok and r.stdout == f"wrote {dest} (22 bytes)"
    assert dest.read_text() == "line 1\n'quoted' $HOME\n"
    assert "$HOME" not in t._pool.calls[-1][1]
    with pytest.raises(ValueError, match="give an absolute path"):
        t.put("b1", "/tmp/a b", "x")


@pytest.mark.parametrize("path", ["relative/x", "/tmp/../etc/passwd", "/tmp/$(id)", "/tmp/a b",
                                  "/tmp/x;rm"])
def test_plain_path_refuses_what_a_shell_would_read(path):
    with pytest.raises(ValueError):
        plain_path(path, "file")


# --- values that differ per target ------------------------------------------------------------
def test_lab_values_map_the_lab_svm_and_lifs_in_order(real):
    lab = inventory.load("lab").ontap()
    lifs = [lif["address"] for lif in lab.get("ontap_data_lifs")]
    assert planned_target(real).lab_values() == {lab.get("ontap_svm"): "svm_target",
                                                 lifs[0]: "192.0.2.11", lifs[1]: "192.0.2.12"}


def test_replace_values_whole_values_in_one_pass():
    assert replace_values("-vserver svm_kafka -volume svm_kafka_2", {"svm_kafka": "vs1"}) == \
        "-vserver vs1 -volume svm_kafka_2"
    assert replace_values("198.18.10.1 198.18.10.11 198.18.10.12.",
                          {"198.18.10.11": "198.18.10.12", "198.18.10.12": "198.18.10.13"}) == \
        "198.18.10.1 198.18.10.12 198.18.10.13."
    assert replace_values("x", None) == "x"


def test_reach_changes_where_and_how_a_host_is_reached(real, capsys):
    t = planned_target(real)
    t.reach("cluster1", address="198.51.100.7", password="Reach-Secret-1", user="fsxadmin")
    h = t.inventory.host("cluster1")
    assert (h.address, h.get("ansible_user")) == ("198.51.100.7", "fsxadmin")
    assert t.ontap_password(h) == "Reach-Secret-1"
    assert "Reach-Secret-1" not in secrets.redact("login Reach-Secret-1")
    r = t.run("volume show", "cluster1")
    assert r.stdout.startswith("DRY RUN: would run on cluster1 (198.51.100.7):")
    # The file is not changed: a play reads the inventory as written.
    assert inventory.load(real.path).host("cluster1").address == "192.0.2.10"


def test_secret_of_a_real_target_comes_from_the_environment(real, monkeypatch):
    t = planned_target(real)
    monkeypatch.delenv("FSXADMIN_PASSWORD", raising=False)
    assert t.secret("FSXADMIN_PASSWORD") is None
    monkeypatch.setenv("FSXADMIN_PASSWORD", "From-the-env-77")
    assert t.secret("FSXADMIN_PASSWORD") == "From-the-env-77"
    assert secrets.redact("From-the-env-77") == secrets.MASK


# --- the lab target only for the lab ------------------------------------------------------------
def test_a_lab_inventory_with_an_address_off_the_lab_network_is_refused(tmp_path):
    inv = write_inventory(tmp_path, kind="lab")                 # 192.0.2.x, says lab
    with pytest.raises(InventoryError, match="target_kind: lab, but these addresses are not on "
                                             "the lab network") as ei:
        LabTarget(inv)
    assert "b1: 192.0.2.1" in str(ei.value) and "cluster1 LIF a: 192.0.2.11" in str(ei.value)
    with pytest.raises(InventoryError):
        targets.open(str(inv.path))
    # One stray address is enough, a LIF included; a name is not an address.
    lab = dict(ontap="198.19.10.1", lif1="198.19.10.11", lif2="198.19.10.12", b1="198.19.1.1",
               b2="127.0.0.2", client="198.18.5.1")
    check_lab_addresses(write_inventory(tmp_path / "ok", kind="lab", **lab))
    for key, bad in (("lif2", "10.0.0.12"), ("b2", "broker-2.example.com"),
                     ("client", "198.20.5.1")):
        inv = write_inventory(tmp_path / key, kind="lab", **{**lab, key: bad})
        with pytest.raises(InventoryError, match=bad.replace(".", r"\.")):
            check_lab_addresses(inv)


def test_the_same_hosts_without_target_kind_lab_open_as_a_real_target(tmp_path):
    t = targets.open(str(write_inventory(tmp_path, kind="real").path))
    assert type(t) is Target and t.kind == "real" and t.confirm is False


def _write(p, text):
    p.write_text(text)
    return p
