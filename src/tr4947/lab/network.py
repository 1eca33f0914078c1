"""The lab network: a switch and hosts that exist only inside namespaces the lab creates.

    switch   network namespace ``<prefix>-switch`` holding bridge ``br0``, attached to no
             physical interface: one veth port per host (``h0``, ``h1``...) and ``ctl``
    host     network namespace ``<prefix>-<host>``: ``lo`` and ``eth0`` with the host's
             address(es) from the inventory; no default route, so nothing leaves the lab
    control  veth ``t4c-<id>`` in this machine's namespace: the control node's address on the
             lab network (the notebooks, ansible and the aws CLI reach hosts through it); the
             only route it adds is the lab subnet's

The subnet comes from the inventory (``lab_network``, default 198.18.0.0/16: RFC 2544's range
for benchmarking networks, routed nowhere). Every name carries the lab's id (a hash of its
state directory), so a test lab and a developer's lab never share a namespace or interface.
Built with iproute2 in batches (one ``ip -batch`` per namespace), so a lab of 20 hosts is
wired in well under a second.
"""
from __future__ import annotations

import hashlib
import ipaddress
import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..netguard import CONTROL_PREFIX, LAB_RANGE, route_owner

NETNS_DIR = Path("/run/netns")


class NetworkError(RuntimeError):
    pass


def lab_id(state_root: Path) -> str:
    return hashlib.sha1(str(Path(state_root).resolve()).encode()).hexdigest()[:4]


def _ip(*args: str, batch: list[str] | None = None, ns: str | None = None,
        check: bool = True) -> subprocess.CompletedProcess:
    cmd = ["ip"] + (["-n", ns] if ns else []) + list(args)
    if batch is not None:
        cmd += ["-batch", "-"]
    cp = subprocess.run(cmd, input="\n".join(batch) + "\n" if batch is not None else None,
                        capture_output=True, text=True, timeout=60)
    if check and cp.returncode != 0:
        what = " ".join(cmd) + (f" <<< {batch!r}" if batch else "")
        raise NetworkError(f"{what}: {cp.stderr.strip() or cp.stdout.strip()}")
    return cp


@dataclass
class HostLink:
    name: str                                   # inventory host name
    addresses: list[str]                        # first one is the host's own
    anyip: str | None = None                    # a subnet the host answers for as a whole
    port: str = ""                              # switch-side port name, set by add_host


@dataclass
class Network:
    state_root: Path
    subnet: ipaddress.IPv4Network
    control_address: str
    hosts: dict[str, HostLink] = field(default_factory=dict)

    @classmethod
    def for_lab(cls, state_root: Path, subnet: str, control_address: str) -> "Network":
        net = ipaddress.ip_network(subnet)
        if not net.subnet_of(LAB_RANGE) and not net.is_loopback:
            raise NetworkError(f"lab_network {subnet} is outside {LAB_RANGE} (the range set "
                               "aside for benchmarking networks): the lab never addresses "
                               "anything that could exist outside this machine")
        if ipaddress.ip_address(control_address) not in net:
            raise NetworkError(f"lab_control_address {control_address} is not in {subnet}")
        return cls(Path(state_root), net, control_address)

    # --- names ----------------------------------------------------------------------------
    @property
    def id(self) -> str:
        return lab_id(self.state_root)

    @property
    def prefix(self) -> str:
        return f"tr4947-{self.id}"

    @property
    def switch(self) -> str:
        return f"{self.prefix}-switch"

    @property
    def control_link(self) -> str:
        # Interface names are limited to 15 characters: "t4c-" + 4 hex digits.
        return f"{CONTROL_PREFIX}{self.id}"

    def netns(self, host: str) -> str:
        return f"{self.prefix}-{host}"

    def netns_path(self, host: str) -> Path:
        return NETNS_DIR / self.netns(host)

    def check(self, address: str) -> None:
        if ipaddress.ip_address(address) not in self.subnet:
            raise NetworkError(f"{address} is not on the lab network {self.subnet}")

    # --- building ---------------------------------------------------------------------------
    def create(self) -> None:
        """The switch and the control node's port (idempotent)."""
        if not (NETNS_DIR / self.switch).exists():
            busy = route_owner(self.subnet.network_address + 1, default=False)
            if busy and busy != self.control_link:
                raise NetworkError(
                    f"{self.subnet} is already routed through {busy} on this machine (another "
                    "lab, or a real network): take that lab down (`tr4947 lab down`) or give "
                    "this one another lab_network")
            _ip("netns", "add", self.switch)
            _ip(ns=self.switch, batch=["link set lo up", "link add br0 type bridge",
                                       # no STP, no forwarding delay: ports forward at once
                                       "link set br0 type bridge stp_state 0 forward_delay 0",
                                       "link set br0 up"])
        if not Path(f"/sys/class/net/{self.control_link}").exists():
            _ip("link", "add", self.control_link, "type", "veth", "peer", "name", "ctl",
                "netns", self.switch)
            _ip(ns=self.switch, batch=["link set ctl master br0", "link set ctl up"])
            _ip("addr", "add", f"{self.control_address}/{self.subnet.prefixlen}", "dev",
                self.control_link)
            _ip("link", "set", self.control_link, "up")

    def add_hosts(self, links: list[HostLink]) -> None:
        """One namespace per host, its veth on the switch, its addresses (idempotent)."""
        new = [h for h in links if not self.netns_path(h.name).exists()]
        taken = {p.port for p in self.hosts.values()} | set(self._switch_ports())
        n = 0
        for h in new:
            for a in h.addresses:
                self.check(a)
            _ip("netns", "add", self.netns(h.name))
            while f"h{n}" in taken:
                n += 1
            h.port = f"h{n}"
            taken.add(h.port)
        if new:
            _ip(ns=self.switch, batch=[
                line for h in new for line in (
                    f"link add {h.port} type veth peer name eth0 netns {self.netns(h.name)}",
                    f"link set {h.port} master br0", f"link set {h.port} up")])
        for h in new:
            cmds = ["link set lo up"] + [
                f"addr add {a}/{self.subnet.prefixlen} dev eth0" for a in h.addresses]
            cmds.append("link set eth0 up")
            if h.anyip:
                # Answer for a whole block (the storage side: every LIF FSx or ONTAP adds later
                # is reachable at once, without plumbing an address per LIF).
                cmds.append(f"route add local {h.anyip} dev lo")
            _ip(ns=self.netns(h.name), batch=cmds)
        for h in links:
            self.hosts[h.name] = h

    def _switch_ports(self) -> list[str]:
        cp = _ip("-o", "link", "show", "master", "br0", ns=self.switch, check=False)
        return [line.split(":")[1].strip().split("@")[0] for line in cp.stdout.splitlines()
                if ":" in line]

    # --- address moves (the lab side of "move broker 1's IP to the standby") -----------------
    # The operator's commands for this run over SSH on the hosts themselves (Target methods);
    # nothing here is used for that.

    # --- tearing down -----------------------------------------------------------------------
    def remove(self) -> list[str]:
        """Delete every namespace of this lab and the control port. Returns what was removed.
        Processes still inside a host namespace keep it alive: stop them first."""
        removed = []
        for ns in self.namespaces():
            _ip("netns", "del", ns, check=False)
            removed.append(ns)
        if Path(f"/sys/class/net/{self.control_link}").exists():
            _ip("link", "del", self.control_link, check=False)
            removed.append(self.control_link)
        # The kernel frees a namespace's interfaces asynchronously: wait for the control port.
        deadline = time.monotonic() + 10
        while Path(f"/sys/class/net/{self.control_link}").exists() and \
                time.monotonic() < deadline:
            time.sleep(0.1)
        return removed

    def namespaces(self) -> list[str]:
        if not NETNS_DIR.is_dir():
            return []
        return sorted(p.name for p in NETNS_DIR.iterdir() if p.name.startswith(self.prefix + "-"))

    def leftovers(self) -> list[str]:
        out = [f"network namespace {n}" for n in self.namespaces()]
        if Path(f"/sys/class/net/{self.control_link}").exists():
            out.append(f"interface {self.control_link} ({self.control_address})")
        return out

    def up(self) -> bool:
        return Path(f"/sys/class/net/{self.control_link}").exists()


def netns_inode(path: Path) -> int | None:
    try:
        return os.stat(path).st_ino
    except OSError:
        return None
