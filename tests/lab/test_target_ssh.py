"""The Target over SSH on a test lab's recovery cluster (das, Kafka installed): default-deny on
a real-kind target proved from the hosts' own command logs, secrets that never reach a
command line, a log or a disk, a broker address moved between hosts, and Kafka started,
killed, stopped and waited for, all as an operator does it over SSH."""
from __future__ import annotations

import hashlib
import re
import secrets as pysecrets
import threading

import pytest

from tr4947.transports import kafka_admin
from tr4947.wait import port_open

from .conftest import own_lab, wait_for

pytestmark = pytest.mark.lab

CTL, B1, B2, B3, STANDBY = ("das-controller", "das-broker-1", "das-broker-2", "das-broker-3",
                            "das-standby")


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    with own_lab(tmp_path_factory.mktemp("target"), ["das"], kafka_state="installed") as tl:
        yield tl


def exists_on(tl, host: str, path: str) -> bool:
    return tl.exec(host, f"test -e {path}", check=False).returncode == 0


def test_default_deny_nothing_reaches_a_host_without_confirm(lab):
    rt = lab.real_target(confirm=False)
    before = lab.commands(B1)
    steps = [rt.run("touch /tmp/deny-marker", B1),
             rt.put(B1, "/tmp/deny-put", "x\n"),
             rt.apply_properties(None, B1, "/opt/kafka/config/server.properties",
                                 text="num.io.threads=99\n"),
             *rt.cluster("das").start([B1]),
             *rt.cluster("das").stop([B1], kill=True),
             *rt.cluster("das").move_address("198.19.3.1", B1, STANDBY)]
    assert all(r.planned and r.stdout.startswith("DRY RUN: would run on ") for r in steps)
    # Not one of them reached the host: its sshd logged nothing new, nothing was made.
    assert lab.commands(B1) == before and lab.commands(STANDBY) == []
    assert not exists_on(lab, B1, "/tmp/deny-marker") and not exists_on(lab, B1, "/tmp/deny-put")
    assert "num.io.threads=99" not in lab.exec(B1, "cat /opt/kafka/config/server.properties").stdout
    # A read runs (and is logged as it ran: in kafka_home), and so does a confirmed change.
    r = rt.run("cat /etc/hostname", B1, read_only=True, check=True)
    assert r.stdout == "das-broker-1\n"
    assert lab.commands(B1)[len(before):] == ["cd /opt/kafka\ncat /etc/hostname"]
    ct = lab.real_target(confirm=True)
    ct.run("touch /tmp/deny-marker", B1, check=True)
    assert exists_on(lab, B1, "/tmp/deny-marker")
    assert lab.commands(B1)[-1] == "cd /opt/kafka\ntouch /tmp/deny-marker"


def test_a_secret_in_env_reaches_the_command_and_nothing_else(lab):
    t = lab.target()
    secret = "Das-Secret-" + pysecrets.token_urlsafe(12)
    host = B2
    done = {}

    def step():
        done["r"] = t.run('sleep 6; printf %s "$APP_PASSWORD" | sha256sum', host,
                          env={"APP_PASSWORD": secret}, timeout=120)
    worker = threading.Thread(target=step)
    worker.start()
    try:
        # While it runs: every process's command line on the host, as `ps` would show it.
        seen = wait_for(lambda: (lambda out: out if "sleep 6" in out else "")(
            lab.exec(host, "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; echo; "
                           "done 2>/dev/null").stdout), 60, "the command to run on the host")
        assert "APP_PASSWORD" in seen and secret not in seen
        ps = t.run("ps -eww -o args", host, read_only=True, check=True).stdout
        assert secret not in ps
    finally:
        worker.join(180)
    r = done["r"]
    assert r.exit_code == 0
    assert r.stdout.split()[0] == hashlib.sha256(secret.encode()).hexdigest()  # it arrived
    logged = lab.commands(host)[-2]
    assert logged.endswith('IFS= read -r APP_PASSWORD; export APP_PASSWORD\n'
                           'sleep 6; printf %s "$APP_PASSWORD" | sha256sum')
    # Not in the command log, sshd's log, nor anywhere in the host's own files.
    assert secret not in "\n".join(lab.commands(host))
    assert secret not in (lab.root / "hosts" / host / "console.log").read_text()
    # Everything the host wrote is in its upper directory (its own layer of the root).
    upper = lab.lab.host(host).upper
    hits = [f for f in upper.rglob("*") if f.is_file() and not f.is_symlink()
            and secret.encode() in f.read_bytes()]
    assert hits == []


def eth0(t, host: str) -> str:
    return t.run("ip -o -4 addr show dev eth0", host, read_only=True, check=True).stdout


def test_move_address_between_hosts_and_back(lab):
    t = lab.target()
    address = t.host(B3).kafka_address
    assert address == "198.19.3.3" and address in eth0(t, B3)
    das = t.cluster("das")
    out = das.move_address(address, B3, STANDBY)
    assert out.ok and len(out) == 2
    assert f"inet {address}/16 " in eth0(t, STANDBY) and address not in eth0(t, B3)
    # The old host is still reachable at its own address (ansible_host).
    assert t.run("hostname", B3, check=True).stdout == "das-broker-3\n"
    # Peers reach the address at the standby now: the client's neighbour entry (updated by
    # the gratuitous ARP, or learned afresh) is the standby's interface.
    mac = t.run("cat /sys/class/net/eth0/address", STANDBY, check=True).stdout.strip()
    seen = t.run(f"timeout 5 bash -c 'exec 3<>/dev/tcp/{address}/22' && "
                 f"ip neigh show {address}", "client-1", check=True).stdout
    assert mac in seen, (mac, seen)
    back = das.move_address(address, STANDBY, B3)
    assert back.ok and address in eth0(t, B3) and address not in eth0(t, STANDBY)


def test_kafka_started_killed_and_stopped_over_ssh(lab):
    t = lab.target()
    das = t.cluster("das")
    started = das.start([B2, B1, CTL])             # controllers first, whatever the order
    assert started.ok and [r.host for r in started] == [CTL, B2, B1]
    assert all("kafka-server-start.sh -daemon" in r.command for r in started)
    # Kafka runs in each host's own pid namespace, found by the host's own pgrep.
    for h in (CTL, B1, B2):
        pids = das.pids(h)
        assert len(pids) == 1 and pids[0] < 1000, (h, pids)
    assert kafka_admin.registered_brokers(das.bootstrap(skip=[B3])) == {1, 2}
    assert any("kafka-server-start.sh -daemon" in c for c in lab.commands(B1))

    # A crash: SIGKILL. Its JVM is gone, its port closed, and waiting for it says why at once.
    das.stop([B2], kill=True)
    assert das.pids(B2) == []
    assert not port_open("198.19.3.2", 9092, 1.0)
    with pytest.raises(RuntimeError, match="das-broker-2 will not serve: its Kafka process is "
                                           "not running; end of its log"):
        das.wait_serving([B2], timeout=120)
    # Started again, it rejoins the cluster with its data.
    das.start([B2])
    wait_for(lambda: kafka_admin.registered_brokers(t.cluster("das").bootstrap(skip=[B3])) == {1, 2},
             120, "broker 2 to be back in the cluster's metadata")

    # A clean stop (Kafka's own stop script: SIGTERM), brokers before the controller.
    das.stop([B1, B2, CTL])
    assert [das.pids(h) for h in (CTL, B1, B2)] == [[], [], []]
    log = das.logs(B1, "shut(ting)? down|Shutdown", lines=50).stdout
    assert re.search(r"(?i)shut.*down.*complete|Kafka Server shut down", log), log
