"""The SSH transport's pure parts: Ansible's connection variables to an endpoint, the
known_hosts file from ansible_ssh_common_args, what a terminal shows of the clustershell's
echo, and the lab-network guard every connection passes first."""
from __future__ import annotations

import socket

import pytest

from tr4947 import netguard
from tr4947.inventory import Host
from tr4947.transports import ontap_rest, ssh


@pytest.mark.parametrize("args,found", [
    ("-o UserKnownHostsFile=/tmp/lab/known_hosts", "/tmp/lab/known_hosts"),
    ("-oUserKnownHostsFile=/k -o StrictHostKeyChecking=yes", "/k"),
    ("-o StrictHostKeyChecking=yes -o userknownhostsfile=/k2", "/k2"),
    ("-o 'UserKnownHostsFile=/with space/kh'", "/with space/kh"),
    ("-o StrictHostKeyChecking=no", None),
    ("", None),
])
def test_known_hosts_file_from_ansible_ssh_args(args, found):
    assert ssh.known_hosts_file(args) == found


def test_endpoint_from_an_inventory_host(monkeypatch):
    monkeypatch.setenv("HOME", "/home/op")
    h = Host("b1", {"ansible_host": "192.0.2.1", "ansible_port": "2222",
                    "ansible_user": "ec2-user",
                    "ansible_ssh_private_key_file": "~/.ssh/k.pem",
                    "ansible_ssh_common_args": "-o UserKnownHostsFile=~/kh"})
    ep = ssh.Endpoint.of(h, password=None)
    assert ep == ssh.Endpoint("192.0.2.1", 2222, "ec2-user", None, "/home/op/.ssh/k.pem",
                              "/home/op/kh")
    monkeypatch.setenv("USER", "someone")
    bare = ssh.Endpoint.of(Host("h2", {}), password="pw")
    assert (bare.address, bare.port, bare.user, bare.password, bare.key_file,
            bare.known_hosts) == ("h2", 22, "someone", "pw", None, None)


def test_what_a_terminal_shows():
    assert ssh.apply_backspaces("volume shw\x08\x08how") == "volume show"
    assert ssh.apply_backspaces("ab\x08\x08\x08c") == "c"
    assert ssh.strip_ansi("\x1b[1mcluster1::>\x1b[0m \x1b[?25l") == "cluster1::> "
    assert ssh.PROMPT.search("out\ncluster1::*> ") and ssh.PROMPT.search("x\nFsxId0a-b::> ")
    assert not ssh.PROMPT.search("cluster1::> volume show")
    assert ssh.CONFIRM.search("Do you want to continue? {y|n}: ")


@pytest.fixture
def lab_network_down(tmp_path, monkeypatch):
    routes = tmp_path / "route"
    routes.write_text("Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\tMTU\t"
                      "Window\tIRTT\neth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n")
    monkeypatch.setattr(netguard, "ROUTE_TABLE", routes)
    tried = []

    def refuse(*a, **kw):
        tried.append(a)
        raise AssertionError(f"a connection was attempted: {a}")
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    return tried


def test_no_ssh_connection_to_a_lab_address_while_the_lab_is_down(lab_network_down):
    pool = ssh.Pool()
    c = pool.run(ssh.Endpoint("198.18.5.1"), "hostname", timeout=5)
    assert c.exit_code == 255 and "LabNetworkDown" in c.stderr
    assert "tr4947 lab up" in c.stderr
    shell = ssh.clustershell(ssh.Endpoint("198.18.10.1", user="admin", password="pw"),
                             ["version"], 5)
    assert shell.exit_code == 255 and "lab network is not up" in shell.stderr
    with pytest.raises(netguard.LabNetworkDown):
        ontap_rest.connection("198.18.10.1", 443, "admin", "pw", True)
    assert lab_network_down == []
