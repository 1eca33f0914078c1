"""Never send a packet anywhere but the lab when the destination is a lab address.

The lab lives on 198.18.0.0/15 (RFC 2544's benchmarking range), routed on this machine only
through the lab's control port while the lab is up. With the lab down, a connection to such
an address would follow the default route off this machine; every transport calls
:func:`check` first and refuses instead, naming the fix.
"""
from __future__ import annotations

import ipaddress
import os
import socket
from pathlib import Path

LAB_RANGE = ipaddress.ip_network("198.18.0.0/15")
CONTROL_PREFIX = "t4c-"          # the lab's control port (tr4947.lab.network)
ROUTE_TABLE = Path("/proc/net/route")


class LabNetworkDown(ConnectionRefusedError):
    pass


def route_owner(address: ipaddress.IPv4Address, default: bool = True,
                routes: str | os.PathLike | None = None) -> str | None:
    """The interface this machine's routing table sends ``address`` to (longest prefix of
    /proc/net/route; destination and mask are little-endian hex), or None. ``default``:
    whether the default route counts. ``routes``: the table as text, or a file holding it
    (default: ROUTE_TABLE)."""
    if routes is None or isinstance(routes, os.PathLike):
        try:
            routes = Path(routes or ROUTE_TABLE).read_text()
        except OSError:
            return None
    lines = routes.splitlines()[1:]
    best, owner = -1, None
    for line in lines:
        f = line.split()
        if len(f) < 8:
            continue
        dest = int.from_bytes(bytes.fromhex(f[1]), "little")
        mask = int.from_bytes(bytes.fromhex(f[7]), "little")
        if not default and mask == 0:
            continue
        if int(address) & mask == dest and bin(mask).count("1") > best:
            best, owner = bin(mask).count("1"), f[0]
    return owner


def check(host: str) -> None:
    """Refuse a lab address while the lab network is down (see the module doc)."""
    try:
        addr = ipaddress.ip_address(host)
    except ValueError:
        try:
            addr = ipaddress.ip_address(socket.gethostbyname(host))
        except OSError:
            return                          # unresolvable: the connection fails by itself
    if addr in LAB_RANGE:
        owner = route_owner(addr)
        if not (owner and owner.startswith(CONTROL_PREFIX)):
            raise LabNetworkDown(
                f"{host} is a lab address and the lab network is not up on this machine "
                f"(it would be routed via {owner or 'nothing'}): run `tr4947 lab up` first")
