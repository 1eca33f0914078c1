"""The lab's life cycle on a test lab: up is idempotent, status tells what runs, hosts are
machines of their own, and down leaves nothing (no namespace, control port, process or state
dir), also after a crash: the orchestrator SIGKILLed in the middle of `tr4947 lab up` and a
host's pid 1 SIGKILLed, and after Ctrl-C during up."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

import tr4947
from tr4947 import inventory
from tr4947.lab import hosts as H
from tr4947.lab.lab import Lab, LabError
from tr4947.lab.network import NETNS_DIR

from .conftest import own_lab, wait_for

pytestmark = pytest.mark.lab

# The storage side and the clients: what `up([])` builds (from the inventory).
INFRA = ["cluster1", "aws"] + [h.name for h in inventory.load("lab").select("clients")]


def lab_processes(lab: Lab) -> list[psutil.Process]:
    """Processes inside this lab's namespaces (as seen from this machine)."""
    return H.processes_in([NETNS_DIR / ns for ns in lab.net.namespaces()])


def inits(lab: Lab) -> list[psutil.Process]:
    """The lab's hosts' pid 1 (tini) processes."""
    out = []
    for p in lab_processes(lab):
        try:
            if p.name() == "tini":
                out.append(p)
        except psutil.Error:                      # ended while we looked
            continue
    return out


def assert_gone(lab: Lab, pids: list[int]) -> None:
    assert lab.leftovers() == []
    assert lab.net.namespaces() == [] and not lab.net.up()
    assert not Path(f"/sys/class/net/{lab.net.control_link}").exists()
    assert not lab.root.exists()
    alive = [p for p in pids if psutil.pid_exists(p)
             and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
    assert alive == [], [psutil.Process(p).cmdline() for p in alive]


def test_up_is_idempotent_status_tells_and_down_leaves_nothing(tmp_path):
    with own_lab(tmp_path, up=False) as tl:
        lab = tl.lab
        assert lab.leftovers() == [] and lab.status()[0]["state"] == "down"
        first = lab.up([])
        assert first["hosts"] == INFRA and first["kafka_started"] == []
        recs = lab.running()
        assert sorted(recs) == sorted(INFRA)
        second = lab.up([])
        assert second["hosts"] == []
        assert {k: (r.pid, r.create_time) for k, r in lab.running().items()} == \
            {k: (r.pid, r.create_time) for k, r in recs.items()}
        rows = {r["host"]: r for r in lab.status()}
        assert {h: rows[h]["state"] for h in INFRA} == dict.fromkeys(INFRA, "running")
        assert (rows["cluster1"]["role"], rows["cluster1"]["address"]) == ("ontap", "198.19.10.1")
        assert rows["client-1"]["role"] == "client" and rows["das-broker-1"]["state"] == "down"
        assert "network 198.19.0.0/16 (up)" in lab.format_status()
        pids = [p.pid for p in lab_processes(lab)]
        assert len(pids) >= 6                      # each host: unshare, tini and its servers
        out = lab.down()
        assert out["stopped"] == len(INFRA)
        assert set(out["removed"]) == {lab.net.switch, lab.net.control_link,
                                       *(lab.net.netns(h) for h in INFRA)}
        assert_gone(lab, pids)
        assert lab.down()["stopped"] == 0          # again: nothing to do, no error


def test_hosts_are_machines_of_their_own(tmp_path):
    with own_lab(tmp_path) as tl:
        t = tl.target()
        fstab = Path("/etc/fstab").read_bytes()
        r = t.run("hostname; echo $$; ps -e -o pid=,comm= | sort -n | head -n 1; "
                  "echo 'lab:/v /v nfs defaults 0 0' >> /etc/fstab; cat /etc/fstab; "
                  "ip -o -4 addr show dev eth0", "client-1", check=True)
        lines = r.stdout.splitlines()
        assert lines[0] == "client-1"
        assert lines[2].split() == ["1", "tini"]              # its own pid namespace
        assert lines[3:5] == ["# /etc/fstab of lab host client-1", "lab:/v /v nfs defaults 0 0"]
        assert "inet 198.19.5.1/16 " in lines[5]
        # one route, the lab's: no way off the lab network
        assert t.run("ip route", "client-1", check=True).stdout.split() == \
            "198.19.0.0/16 dev eth0 proto kernel scope link src 198.19.5.1".split()
        # Its files are its own: this machine's /etc/fstab did not change; the line is in
        # the host's upper directory.
        assert Path("/etc/fstab").read_bytes() == fstab
        assert "lab:/v" in tl.lab.host("client-1").path("/etc/fstab").read_text()
        assert "lab:/v" not in tl.exec("cluster1", "cat /etc/fstab").stdout
        # The lab's state (keys, passwords) is hidden from a Linux host: it sees only the
        # volumes' directory the NFS client exposes.
        assert (tl.root / "ontap" / "passwords.json").exists()
        assert t.run(f"ls -A {tl.root}", "client-1", check=True).stdout.split() == ["volumes"]
        for secret in ("ontap/passwords.json", "control/ssh/id_ed25519"):
            assert t.run(f"cat {tl.root}/{secret}", "client-1").exit_code != 0


def cli(tl, *args) -> subprocess.Popen:
    env = {**os.environ, "TR4947_LAB_STATE": str(tl.root),
           "PYTHONPATH": str(Path(tr4947.__file__).resolve().parents[1])}
    return subprocess.Popen([sys.executable, "-m", "tr4947.cli", "lab", *args, "--inventory",
                             str(tl.inventory)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)


def test_down_after_a_crash_mid_up(tmp_path):
    with own_lab(tmp_path, up=False) as tl:
        lab = tl.lab
        p = cli(tl, "up", "--cluster", "fv_c1", "--hosts-only")
        try:
            # Mid-way: hosts are running, the orchestrator is still at work.
            wait_for(lambda: inits(lab), 180, "a lab host to run",
                     seen=lambda: lab.net.namespaces())
            assert p.poll() is None
        finally:
            p.kill()                              # the orchestrator dies, SIGKILL
            out = p.communicate(timeout=60)[0]
        # ... and one host with it: its pid 1, SIGKILL (every process of the host goes too).
        victim = wait_for(lambda: inits(lab), 60, "a lab host's pid 1")[0]
        victim_ns = os.readlink(f"/proc/{victim.pid}/ns/pid")
        victim.kill()
        wait_for(lambda: not any(os.path.exists(f"/proc/{x.pid}") and
                                 _pid_ns(x.pid) == victim_ns for x in lab_processes(lab)),
                 30, "the killed host's processes to end")
        pids = [x.pid for x in lab_processes(lab)]
        left = lab.leftovers()
        assert f"network namespace {lab.net.switch}" in left, left
        assert f"interface {lab.net.control_link} (198.19.0.1)" in left
        assert any(s.startswith("process ") and s.endswith("in a lab namespace") for s in left)
        # A new `up` does not build over the wreck: it says what to do.
        with pytest.raises(LabError, match=r"exist but their hosts are not running \(a "
                                           r"crashed lab\?\): `tr4947 lab down` first"):
            Lab(tl.inventory, root=tl.root, echo=None).up([])
        # `tr4947 lab down`, a process that knows nothing of the crashed one, cleans it all.
        down = cli(tl, "down")
        text = down.communicate(timeout=300)[0]
        assert down.returncode == 0, out + text
        assert "lab down:" in text
        assert_gone(lab, pids)


def _pid_ns(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None


def test_ctrl_c_during_up_cleans_up(tmp_path):
    with own_lab(tmp_path, up=False) as tl:
        lab = tl.lab
        p = cli(tl, "up", "--cluster", "fv_c1", "--hosts-only")
        try:
            wait_for(lambda: lab.net.namespaces(), 180, "up to create the lab's namespaces")
        finally:
            p.send_signal(signal.SIGINT)
            out = p.communicate(timeout=300)[0]
        assert p.returncode == 130, out
        assert "interrupted: tearing the lab down" in out
        assert "lab up interrupted; everything it started was cleaned up" in out
        assert_gone(lab, [])
