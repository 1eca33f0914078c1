"""The lab target: the embedded lab, reached exactly as a real site is.

A LabTarget is a Target (SSH to every host, the clustershell over SSH, REST, the AWS CLI on
the client) whose inventory says ``target_kind: lab``. What it adds is what only a lab can
do: build its hosts before a chapter (``provision``) and take down what it built
(``release``), through the lab's public API (tr4947.lab.Lab). Its credentials come from the
lab too: the SSH key and known_hosts the lab generated, the ONTAP stand-in's password, the
REST certificate, the AWS stand-in's access key.

The lab exists to be changed, so state-changing steps run without ``confirm``; that is why an
inventory may only call itself a lab when every address in it is on the lab network (or
loopback): a real system can never be opened this way.
"""
from __future__ import annotations

import ipaddress
from dataclasses import replace
from typing import Iterable

from .. import secrets
from ..inventory import Host, Inventory, InventoryError
from ..netguard import LAB_RANGE
from ..transports import ssh
from .base import Target


def check_lab_addresses(inv: Inventory) -> None:
    """``target_kind: lab`` only for an inventory whose every address is the lab's."""
    bad = []
    for h in inv.hosts.values():
        for key in ("ansible_host",):
            addr = h.get(key)
            if addr is None:
                continue
            try:
                a = ipaddress.ip_address(str(addr))
            except ValueError:
                bad.append(f"{h.name}: {addr} (not an IP address)")
                continue
            if not (a in LAB_RANGE or a.is_loopback):
                bad.append(f"{h.name}: {addr}")
        for lif in h.get("ontap_data_lifs") or []:
            try:
                a = ipaddress.ip_address(str(lif.get("address")))
                if not (a in LAB_RANGE or a.is_loopback):
                    bad.append(f"{h.name} LIF {lif.get('name')}: {a}")
            except ValueError:
                bad.append(f"{h.name} LIF {lif.get('name')}: {lif.get('address')}")
    if bad:
        raise InventoryError(
            f"inventory {inv.name} says target_kind: lab, but these addresses are not on the "
            f"lab network ({LAB_RANGE}) or loopback: {'; '.join(bad)}. A lab runs "
            "state-changing steps without confirm, so a real system must not be described "
            "as one: remove target_kind: lab (then nothing changes without confirm=True)")


class LabTarget(Target):
    kind = "lab"

    def __init__(self, inventory: Inventory, echo: bool = True):
        check_lab_addresses(inventory)
        super().__init__(inventory, confirm=True, echo=echo)
        # The inventory as written: a running lab's hosts may differ (another Kafka release),
        # which the Lab applies to this view; a fresh bring-up starts from the file again.
        self._written = {name: dict(h.vars) for name, h in inventory.hosts.items()}
        from ..lab import Lab
        self.lab = Lab(inventory, echo=None)
        self._brought_up = False

    # --- credentials from the lab ---------------------------------------------------------------
    def _creds(self) -> dict:
        return self.lab.credentials()

    def _endpoint(self, h: Host, password: str | None = None) -> ssh.Endpoint:
        ep = super()._endpoint(h, password)
        c = self._creds()
        # The lab's own key and known_hosts (the inventory names the default state dir's).
        return replace(ep, key_file=None if password else c["ssh_key"],
                       known_hosts=c["known_hosts"])

    def ontap_password(self, host: Host | None = None) -> str:
        h = host or self.inventory.ontap()
        if h.name in self._passwords:
            return self._passwords[h.name]
        pw = self._creds()["ontap_passwords"].get(h.get("ansible_user", "admin"))
        if not pw:
            return super().ontap_password(h)
        secrets.register(pw)
        return pw

    def ontap_ca_bundle(self) -> str:
        return self._creds()["ontap_ca_bundle"]

    def secret(self, name: str) -> str:
        """The lab makes the secrets its procedures send (derived from its key: never stored
        in clear, the same in every process); the environment can still set one."""
        import os
        value = os.environ.get(name) or self.lab.secret(f"env:{name}")
        secrets.register(value)
        return value

    def stand_ins(self) -> dict[str, str]:
        return self.lab.stand_ins()

    # --- bring-up and tear-down ---------------------------------------------------------------------
    def provision(self, clusters: Iterable[str] = (), kafka: str = "installed",
                  fresh: bool = False, kafka_version: str | None = None) -> str:
        """Bring up the storage side, the clients and ``clusters``' hosts; with
        ``kafka="started"`` also their volumes, mounts and Kafka. ``fresh``: a lab already
        running is taken down first (a chapter that creates volumes needs a clean one).
        ``kafka_version``: ``clusters`` run that Kafka release instead of the lab's (hosts
        are built for it, so a running lab is taken down first, as with ``fresh``)."""
        was_up = bool(self.lab.running())
        fresh = fresh or bool(kafka_version)
        if fresh or not was_up:
            for name, values in self._written.items():
                self.inventory.hosts[name].vars.clear()
                self.inventory.hosts[name].vars.update(values)
            self.lab.forget_host_vars()
        if kafka_version:
            self.lab.use_kafka_version(clusters, kafka_version)
        if fresh and was_up:
            self.lab.down()
            was_up = False
        self._brought_up = self._brought_up or not was_up
        r = self.lab.up(list(clusters), kafka_state=kafka)
        self._pool.close()                 # hosts may be new: no stale connections
        what = ", ".join(r["clusters"]) or "storage and clients only"
        return (f"lab: {what}; {len(r['hosts'])} host(s) started"
                + (f", Kafka started on {', '.join(r['kafka_started'])}" if r["kafka_started"]
                   else "") + f" ({r['seconds']:.0f} s)")

    def release(self) -> str:
        """Take the lab down if this target brought it up (the chapter found it down)."""
        self.close()
        if self._brought_up:
            self.lab.down()
            self._brought_up = False
            return "lab: taken down (the chapter found it down)"
        return "lab: left running (it was running before the chapter)"

    def running(self) -> bool:
        return bool(self.lab.running())

    def reset(self) -> str:
        self.close()
        if self.lab.records():
            self.lab.down()
            self._brought_up = False
            return "lab taken down (the chapter left it running)"
        return ""
