"""netguard: a lab address is contacted only while this machine routes it through a lab's
control port; otherwise it would follow the default route off the machine. Routing tables
are written here in /proc/net/route's own format (little-endian hex)."""
from __future__ import annotations

import ipaddress
import socket

import pytest

from tr4947 import netguard

HEAD = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT"


def hexle(address: str) -> str:
    """An IPv4 address as /proc/net/route writes it."""
    return ipaddress.ip_address(address).packed[::-1].hex().upper()


def table(*routes: tuple[str, str]) -> str:
    """(interface, network) pairs -> the text of /proc/net/route."""
    rows = [HEAD]
    for iface, net in routes:
        n = ipaddress.ip_network(net)
        rows.append(f"{iface}\t{hexle(str(n.network_address))}\t00000000\t0001\t0\t0\t0\t"
                    f"{hexle(str(n.netmask))}\t0\t0\t0")
    return "\n".join(rows) + "\n"


MACHINE = table(("eth0", "0.0.0.0/0"), ("eth0", "192.0.2.0/24"))
WITH_LAB = MACHINE + table(("t4c-e807", "198.18.0.0/16")).split("\n", 1)[1]
WITH_TWO = WITH_LAB + table(("t4c-1a2b", "198.19.0.0/16"),
                            ("br-test", "198.19.7.0/24")).split("\n", 1)[1]


def test_hex_is_the_kernels():
    # the row the kernel writes for a lab up on 198.18.0.0/16
    assert hexle("198.18.0.0") == "000012C6" and hexle("255.255.0.0") == "0000FFFF"


@pytest.mark.parametrize("routes,address,default,owner", [
    (MACHINE, "198.18.5.1", True, "eth0"),           # lab down: the default route would take it
    (MACHINE, "198.18.5.1", False, None),
    (WITH_LAB, "198.18.5.1", True, "t4c-e807"),
    (WITH_LAB, "198.19.5.1", True, "eth0"),          # the other half of the range: not this lab
    (WITH_TWO, "198.19.5.1", False, "t4c-1a2b"),
    (WITH_TWO, "198.19.7.9", False, "br-test"),      # longest prefix wins
    (WITH_TWO, "192.0.2.7", False, "eth0"),
    (HEAD + "\n", "198.18.5.1", True, None),
])
def test_route_owner_longest_prefix(routes, address, default, owner):
    assert netguard.route_owner(ipaddress.ip_address(address), default, routes) == owner


def test_route_owner_reads_a_file_and_a_missing_one_routes_nothing(tmp_path):
    f = tmp_path / "route"
    f.write_text(WITH_LAB + "\n")
    assert netguard.route_owner(ipaddress.ip_address("198.18.1.1"), routes=f) == "t4c-e807"
    assert netguard.route_owner(ipaddress.ip_address("198.18.1.1"),
                                routes=tmp_path / "nope") is None


@pytest.fixture
def routes(tmp_path, monkeypatch):
    f = tmp_path / "route"
    monkeypatch.setattr(netguard, "ROUTE_TABLE", f)
    return f


def test_check_refuses_a_lab_address_while_the_lab_network_is_down(routes):
    routes.write_text(MACHINE)
    with pytest.raises(netguard.LabNetworkDown, match=r"198\.18\.10\.1 is a lab address and the "
                                                      r"lab network is not up .* via eth0\)"):
        netguard.check("198.18.10.1")
    routes.write_text(HEAD + "\n")
    with pytest.raises(netguard.LabNetworkDown, match="via nothing"):
        netguard.check("198.19.0.1")
    assert issubclass(netguard.LabNetworkDown, ConnectionRefusedError)


def test_check_lets_a_routed_lab_address_and_other_addresses_through(routes, monkeypatch):
    routes.write_text(WITH_LAB)
    netguard.check("198.18.10.1")
    netguard.check("192.0.2.10")                       # not a lab address: not our business
    netguard.check("203.0.113.9")
    # names are resolved first; one that resolves into the lab is checked like an address
    monkeypatch.setattr(socket, "gethostbyname",
                        lambda n: {"lab-host": "198.19.0.5"}.get(n) or (_ for _ in ()).throw(
                            socket.gaierror(n)))
    with pytest.raises(netguard.LabNetworkDown, match="lab-host is a lab address"):
        netguard.check("lab-host")
    netguard.check("does-not-resolve.example.invalid")  # the connection fails by itself


def test_a_bridge_that_is_not_a_labs_control_port_does_not_count(routes):
    routes.write_text(WITH_TWO)
    with pytest.raises(netguard.LabNetworkDown, match="via br-test"):
        netguard.check("198.19.7.1")


def test_the_lab_address_range_is_defined_once():
    """netguard.LAB_RANGE is the lab's range; every other module takes it from there (five
    modules had their own copy, free to drift apart)."""
    import re
    from tr4947 import paths
    defined = re.compile(r"ip_network\(\s*[\"']198\.1[89]\.")
    where = [str(f.relative_to(paths.REPO)) for f in (paths.REPO / "src").rglob("*.py")
             if defined.search(f.read_text())]
    assert where == ["src/tr4947/netguard.py"], where
