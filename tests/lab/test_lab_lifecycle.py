"""Lab lifecycle: up is idempotent; down leaves no process, mount or state - also after a
crash (SIGKILLed orchestrator and brokers, stale mounts) and after Ctrl-C during up."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tr4947.lab.lab import Lab, _lab_processes

from .conftest import remapped_inventory, require_lab

pytestmark = [pytest.mark.lab]

# One small cluster keeps these tests quick; the fv clusters are exercised by test_silly_rename.
CLUSTER = "fv_c1"


def lab_mounts(root: Path) -> list[str]:
    return [line.split()[1] for line in Path("/proc/mounts").read_text().splitlines()
            if line.split()[1].startswith(str(root) + "/")]


def assert_clean(root: Path):
    assert not _lab_processes(root), _lab_processes(root)
    assert not lab_mounts(root), lab_mounts(root)
    assert not root.exists(), sorted(p.name for p in root.iterdir())


@pytest.fixture
def lab(lab_env):
    require_lab()
    base, root = lab_env
    inv = remapped_inventory(base / "inventory", offset=150)
    lab = Lab(inv, root=root)
    yield lab, inv, root
    lab.down()
    assert_clean(root)


def test_up_is_idempotent_and_down_cleans(lab):
    lab, _inv, root = lab
    first = lab.up([CLUSTER])
    assert len(first["started"][CLUSTER]) == 5
    pids = {k: v.pid for k, v in lab.procs().items()}
    second = lab.up([CLUSTER])
    assert second["started"][CLUSTER] == [] and second["seconds"] < 30
    assert {k: v.pid for k, v in lab.procs().items()} == pids
    rows = {r["component"]: r["state"] for r in lab.status()}
    assert rows[f"{CLUSTER}-broker-1"] == "running" and rows["ontap-sshd"] == "running"
    assert lab_mounts(root)
    lab.down()
    assert_clean(root)
    lab.down()                                      # again: nothing to do, no error


def test_down_after_crash(lab):
    lab, _inv, root = lab
    lab.up([CLUSTER])
    # A crash: every Kafka JVM SIGKILLed, procs.json lost, mounts left behind.
    for p in lab.procs().values():
        if p.kind != "ontap-sshd":
            os.kill(p.pid, signal.SIGKILL)
    (root / "procs.json").unlink()
    assert lab_mounts(root)
    lab.down()
    assert_clean(root)


def _cli(inv: Path, root: Path, *args) -> subprocess.Popen:
    env = {**os.environ, "TR4947_LAB_STATE": str(root)}
    return subprocess.Popen([sys.executable, "-m", "tr4947.cli", "lab", *args,
                             "--inventory", str(inv)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)


def _wait_for(pred, timeout, what):
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.3)


def _brokers_starting(root: Path) -> bool:
    for p in _lab_processes(root):
        try:
            if "kafka.Kafka" in p.cmdline():
                return True
        except psutil.Error:          # a format JVM that just exited (zombie)
            continue
    return False


def test_sigkill_orchestrator_mid_up_then_down(lab):
    lab, inv, root = lab
    p = _cli(inv, root, "up", "--cluster", CLUSTER)
    _wait_for(lambda: _brokers_starting(root), 180, "Kafka processes to start")
    p.kill()                                        # the orchestrator dies mid-up
    p.wait()
    assert _lab_processes(root)                     # it left processes and mounts behind
    p = _cli(inv, root, "down")
    out, _ = p.communicate(timeout=180)
    assert p.returncode == 0, out
    assert_clean(root)


def test_ctrl_c_during_up_cleans_up(lab):
    lab, inv, root = lab
    p = _cli(inv, root, "up", "--cluster", CLUSTER)
    _wait_for(lambda: _brokers_starting(root), 180, "Kafka processes to start")
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=180)
    assert p.returncode == 130, out
    assert "interrupted" in out
    assert_clean(root)
