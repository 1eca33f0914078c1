"""Target API: dry runs on real targets, hard timeouts, errors that carry the output."""
from __future__ import annotations

import os
import textwrap
import time

import psutil
import pytest

from tr4947 import inventory
from tr4947.targets.base import TargetError, ontap_lines, run_local
from tr4947.targets.lab import LabTarget
from tr4947.targets.ssh import SshTarget


def _inv(tmp_path, kind):
    f = tmp_path / f"{kind}" / "hosts.yml"
    f.parent.mkdir()
    f.write_text(textwrap.dedent(f"""\
        all:
          vars: {{target_kind: {kind}}}
          children:
            ontap:
              hosts: {{cluster1: {{ansible_host: 192.0.2.10, ansible_user: admin}}}}
            brokers:
              hosts:
                b1: {{ansible_host: 192.0.2.1}}
                b2: {{ansible_host: 192.0.2.2}}
        """))
    return inventory.load(f)


class Boom(SshTarget):
    """A real-kind target that must not touch anything."""
    def _shell(self, *a, **k):
        raise AssertionError("a dry run executed a command")
    _ontap = _put = _shell


def test_dry_run_on_real_target_plans_and_runs_nothing(tmp_path, capsys):
    t = Boom(_inv(tmp_path, "real"), confirm=False)
    assert t.kind == "real"
    r = t.run("systemctl stop kafka", "b1", changes_state=True)
    assert r.planned and r.exit_code is None
    assert r.stdout.startswith("DRY RUN: would run on b1 (192.0.2.1)")
    assert "systemctl stop kafka" in r.stdout
    assert "DRY RUN" in capsys.readouterr().out          # the plan is printed
    rs = t.run("rm -rf /data", "brokers", changes_state=True)
    assert [x.host for x in rs] == ["b1", "b2"] and all(x.planned for x in rs)
    snip = tmp_path / "fv1.ontap"
    snip.write_text("set -privilege advanced\n# comment\nvolume create -vserver {{ svm }} \\\n"
                    "  -volume v1 -is-preserve-unlink-enabled true\n")
    r = t.run_snippet(snip, "cluster1", changes_state=True, svm="svm_kafka")
    assert r.planned and "volume create -vserver svm_kafka -volume v1" in r.stdout


def test_confirm_runs_state_changing_commands(tmp_path):
    calls = []

    class Rec(SshTarget):
        def _shell(self, host, command, *a):
            calls.append((host.name, command))
            from tr4947.targets.base import Result
            return Result(host.name, command, 0, "done", "", 0.0, "now")
    t = Rec(_inv(tmp_path, "real"), confirm=True)
    assert t.run("systemctl stop kafka", "b2", changes_state=True).exit_code == 0
    assert calls == [("b2", "systemctl stop kafka")]


def test_ontap_lines():
    assert ontap_lines("# c\n\nvolume show\nvolume create -a 1 \\\n  -b 2\n") == \
        ["volume show", "volume create -a 1 -b 2"]


def test_timeout_kills_the_process_group(tmp_path):
    marker = f"tr4947-timeout-{os.getpid()}"
    t0 = time.monotonic()
    # The shell starts a background child that would outlive a plain kill of the shell.
    r = run_local(["bash", "-c", f"sleep 300 & exec -a {marker} sleep 301"], host="h",
                  label="sleepers", timeout=1.0, env=None)
    assert r.timed_out and r.exit_code is None
    assert time.monotonic() - t0 < 15
    time.sleep(0.3)
    left = [p for p in psutil.process_iter(["cmdline"])
            if p.info["cmdline"] and (marker in p.info["cmdline"][0]
                                      or p.info["cmdline"] == ["sleep", "300"] and
                                      p.ppid() == 1 and p.create_time() > time.time() - 20)]
    assert not left, left
    with pytest.raises(TargetError) as ei:
        r.check()
    assert "timed out" in str(ei.value)


def test_errors_carry_host_command_exit_code_and_output(tmp_path):
    inv = _inv(tmp_path, "lab")
    root = tmp_path / "state"
    root.mkdir()
    t = LabTarget(inv, root=root)
    with pytest.raises(TargetError) as ei:
        t.run("echo starting; echo boom >&2; exit 3", "b1", check=True)
    e = ei.value
    assert (e.host, e.exit_code) == ("b1", 3)
    assert "boom" in e.output_tail and "starting" in e.output_tail
    assert "exit code 3" in str(e) and "echo boom" in str(e)
    r = t.run("echo x", "b1", timeout=5)
    assert r.ok and r.stdout == "x\n" and r.duration >= 0 and r.started


def test_lab_target_maps_host_paths(tmp_path):
    inv = _inv(tmp_path, "lab")
    root = tmp_path / "state"
    root.mkdir()
    t = LabTarget(inv, root=root)
    t.run_snippet(_write(tmp_path / "topics.json", '{"topics": [{"topic": "{{ topic }}"}]}'),
                  "b1", topic="__a_demo_topic")
    assert (root / "hosts/b1/tmp/topics.json").read_text() == \
        '{"topics": [{"topic": "__a_demo_topic"}]}'
    r = t.run("cat /tmp/topics.json; echo; ls -d /tmp", "b1")
    assert "__a_demo_topic" in r.stdout
    assert r.stdout.splitlines()[1] == "/tmp"        # the host's path, as the TR shows it
    r2 = t.run("ls /tmp/topics.json", "b2")          # another host: its own /tmp
    assert r2.exit_code != 0



def test_lab_target_leaves_remote_paths_alone(tmp_path):
    """`lif:/kafka_fg_vol01` names a path on the NFS server: mapping it into the host's root
    would mount the wrong thing. Local paths in the same command are still mapped."""
    inv = _inv(tmp_path, "lab")
    t = LabTarget(inv, root=tmp_path)
    host = inv.host("b1")
    root = str(t.host_root(host))
    cmd = t._map_in(host, "mount -t nfs -o vers=4.1 127.0.10.11:/kafka_fg_vol01 /demo")
    assert cmd == f"mount -t nfs -o vers=4.1 127.0.10.11:/kafka_fg_vol01 {root}/demo"
    assert t._map_in(host, ': "${D:=/demo/broker_demo_1}"') == \
        f': "${{D:={root}/demo/broker_demo_1}}"'

def test_secrets_are_masked_in_errors(tmp_path, monkeypatch):
    monkeypatch.setenv("ONTAP_PASSWORD", "s3cr3t-Pa55")
    inv = _inv(tmp_path, "lab")
    root = tmp_path / "state"
    root.mkdir()
    t = LabTarget(inv, root=root)
    with pytest.raises(TargetError) as ei:
        t.run("echo $ONTAP_PASSWORD; exit 1", "b1", check=True)
    assert "s3cr3t-Pa55" not in str(ei.value)


def _write(p, text):
    p.write_text(text)
    return p


def test_snippet_transcript_shows_the_environment_it_used(tmp_path):
    inv = _inv(tmp_path, "lab")
    root = tmp_path / "state"
    root.mkdir()
    t = LabTarget(inv, root=root)
    snip = _write(tmp_path / "s.sh", ': "${BOOTSTRAP:=a:9092}"\necho "$BOOTSTRAP"\n')
    r = t.run_snippet(snip, "b1", env={"BOOTSTRAP": "b:9092", "UNUSED": "x"})
    assert r.stdout.strip() == "b:9092"
    assert r.command.startswith("export BOOTSTRAP=b:9092\n: ")    # not the default alone
    assert "UNUSED" not in r.command
    r = t.run_snippet(snip, "b1")
    assert r.command.startswith(": ") and r.stdout.strip() == "a:9092"
