"""The ONTAP stand-in over real SSH: OpenSSH client + sshpass against the asyncssh server."""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

import pytest

from tr4947.lab.ontap import bootstrap

pytestmark = pytest.mark.lab
ADDR = "127.0.10.201"


def free_port(addr: str) -> int:
    with socket.socket() as s:
        s.bind((addr, 0))
        return s.getsockname()[1]


@pytest.fixture
def sshd(tmp_path, monkeypatch):
    if not shutil.which("ssh") or not shutil.which("sshpass"):
        pytest.skip("openssh-client/sshpass not installed")
    monkeypatch.delenv("TR4947_ONTAP_PASSWORD", raising=False)
    root = tmp_path / "state"
    bootstrap.bootstrap(root, "cluster1", ["cluster1-01"], [{"name": "aggr1", "size": "2TB"}],
                        ["svm_kafka"], [{"name": "lif1", "address": "127.0.10.211",
                                         "vserver": "svm_kafka"}])
    pw_file = root / "ontap" / "passwords.json"
    assert oct(pw_file.stat().st_mode & 0o777) == "0o600"
    port = free_port(ADDR)
    log = tmp_path / "sshd.log"
    with open(log, "wb") as out:
        p = subprocess.Popen([sys.executable, "-m", "tr4947.lab.ontap.sshd", "--listen",
                              f"{ADDR}:{port}", "--state-root", str(root)],
                             stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 20
    while True:
        try:
            socket.create_connection((ADDR, port), 0.2).close()
            break
        except OSError:
            assert p.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "sshd did not listen"
            time.sleep(0.1)
    pw = json.loads(pw_file.read_text())

    def ssh(command: str | None, user="admin", password=None, stdin=None, tty=False):
        env = dict(os.environ, SSHPASS=password or pw[user])
        cmd = ["sshpass", "-e", "ssh", "-o", "StrictHostKeyChecking=no", "-o",
               "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR", "-p", str(port)]
        cmd += ["-tt"] if tty else []
        cmd += [f"{user}@{ADDR}"] + ([command] if command else [])
        return subprocess.run(cmd, env=env, input=stdin, capture_output=True, text=True,
                              timeout=30)
    try:
        yield ssh, pw, log, p
    finally:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()


def test_exec_commands(sshd):
    ssh, pw, log, _ = sshd
    r = ssh("volume show")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("Vserver   Volume       Aggregate    State")
    assert "svm_kafka_root" in r.stdout
    r = ssh("volume create -vserver svm_kafka -volume k -aggregate aggr1 -size 1g "
            "-is-preserve-unlink-enabled true")
    assert r.returncode == 1 and 'Error: invalid argument "-is-preserve-unlink-enabled"' in r.stdout
    r = ssh("set -privilege advanced -confirmations off; volume create -vserver svm_kafka "
            "-volume k -aggregate aggr1 -size 1g -junction-path /k -is-preserve-unlink-enabled "
            "true; volume show -volume k -fields is-preserve-unlink-enabled")
    assert r.returncode == 0 and "Job succeeded: Successful" in r.stdout
    assert r.stdout.strip().splitlines()[-1].split() == ["svm_kafka", "k", "true"]
    assert ssh("version", user="fsxadmin").stdout.startswith("NetApp Release")


def test_interactive_session(sshd):
    ssh, pw, log, _ = sshd
    r = ssh(None, stdin="set advanced\ny\nvolume show -fields is-preserve-unlink-enabled\nexit\n",
            tty=True)
    out = r.stdout.replace("\r\n", "\n")
    assert "cluster1::> " in out and "cluster1::*> " in out
    assert "Do you want to continue? {y|n}:" in out
    assert "is-preserve-unlink-enabled" in out


def test_wrong_password_and_no_secret_in_logs(sshd):
    ssh, pw, log, proc = sshd
    r = ssh("version", password="wrong-password")
    assert r.returncode != 0 and "NetApp" not in r.stdout
    ssh("volume show")
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(10) == 0                                    # clean exit on SIGTERM
    text = log.read_text()
    assert "denied" in text and "accepted" in text
    for secret in pw.values():
        assert secret not in text
    assert (log.parent / "state" / "ontap" / "ssh_host_key").stat().st_mode & 0o077 == 0
