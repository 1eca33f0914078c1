"""Targets are Ansible inventories: playbook/inventory/<name>/.

Parsed with Ansible's own InventoryManager + VariableManager rather than plain YAML, so the
Python side sees exactly what ansible-runner's plays see: group-variable inheritance and
precedence, host_vars/ and group_vars/ directories next to the inventory, INI or YAML
inventories, and vault-encrypted values. Reimplementing that precedence would drift; Ansible
parses this inventory in ~50 ms.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import paths

# Variables Ansible adds to every host that describe Ansible itself, not the target.
_MAGIC = {"ansible_config_file", "ansible_facts", "ansible_playbook_python", "ansible_version",
          "groups", "inventory_dir", "inventory_file", "playbook_dir", "omit",
          "inventory_hostname_short"}


class InventoryError(LookupError):
    pass


def _plain(value: Any) -> Any:
    """Ansible 2.19 hands out tagged str/int/dict subclasses; give callers plain types."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    if value is None:
        return None
    # Vaulted values: decrypt lazily through str() (secrets stay out of logs by the caller).
    return str(value)


@dataclass
class Host:
    name: str
    vars: dict[str, Any]
    groups: list[str] = field(default_factory=list)

    @property
    def address(self) -> str:
        """Where the control node reaches the host (SSH)."""
        return self.vars.get("ansible_host", self.name)

    @property
    def kafka_address(self) -> str:
        """The address a broker listens on, when it is not the host's own: an address that
        can move to another host (the TR's REC-2 moves broker 1's to the standby)."""
        return self.vars.get("kafka_address", self.address)

    def get(self, key: str, default: Any = None) -> Any:
        return self.vars.get(key, default)


@dataclass
class Inventory:
    name: str
    path: Path
    hosts: dict[str, Host]
    groups: dict[str, list[str]]         # group -> host names (recursive, inventory order)
    children: dict[str, list[str]]       # group -> direct child groups

    @property
    def kind(self) -> str:
        """"lab" or "real" (all.vars.target_kind; anything not the lab is real)."""
        kinds = {h.get("target_kind", "real") for h in self.hosts.values()}
        return "lab" if kinds == {"lab"} else "real"

    def host(self, name_or_address: str) -> Host:
        if name_or_address in self.hosts:
            return self.hosts[name_or_address]
        for h in self.hosts.values():
            if h.address == name_or_address:
                return h
        raise InventoryError(
            f"unknown host {name_or_address!r} in inventory {self.name!r}; hosts: "
            + ", ".join(self.hosts) + "; groups: " + ", ".join(sorted(self.groups)))

    def select(self, pattern: str) -> list[Host]:
        """A host name, a host address or a group name -> hosts."""
        if pattern in self.groups:
            return [self.hosts[h] for h in self.groups[pattern]]
        return [self.host(pattern)]

    # --- lab conventions -------------------------------------------------------------
    def kafka_clusters(self) -> list[str]:
        return list(self.children.get("kafka", []))

    def cluster(self, name: str) -> list[Host]:
        if name not in self.kafka_clusters():
            raise InventoryError(
                f"unknown Kafka cluster {name!r} in inventory {self.name!r}; valid clusters: "
                + ", ".join(self.kafka_clusters()))
        return [self.hosts[h] for h in self.groups[name]]

    def ontap(self) -> Host:
        hosts = self.groups.get("ontap", [])
        if not hosts:
            raise InventoryError(f"inventory {self.name!r} has no host in group 'ontap'")
        return self.hosts[hosts[0]]


def _import_ansible() -> None:
    """Import ansible's display with plain file streams in place: on import it patches and
    reconfigures sys.stdout/stderr, which a notebook kernel has replaced by objects without a
    file behind them (or a pipe that cannot be reconfigured), and it then prints two warnings
    (fork-safety, encoding) into the reader's output. It writes through sys.stdout as it is at
    print time, so the streams it patched at import need not be the ones it uses."""
    import os
    import sys
    if "ansible.utils.display" in sys.modules:
        return
    out, err = sys.stdout, sys.stderr
    with open(os.devnull, "w") as o, open(os.devnull, "w") as e:
        sys.stdout, sys.stderr = o, e
        try:
            import ansible.utils.display  # noqa: F401
        finally:
            sys.stdout, sys.stderr = out, err


def inventory_path(name_or_path: str | os.PathLike) -> Path:
    # A target name wins over a same-named relative path (the repo has a lab/ directory).
    d = paths.INVENTORY / str(name_or_path)
    p = Path(name_or_path)
    if not d.is_dir() and p.exists():
        return p
    if not d.is_dir():
        valid = sorted(x.name for x in paths.INVENTORY.iterdir() if x.is_dir()) \
            if paths.INVENTORY.is_dir() else []
        raise InventoryError(f"unknown target/inventory {str(name_or_path)!r}; valid: "
                             + (", ".join(valid) or "(none)"))
    for f in ("hosts.yml", "hosts.yaml", "hosts"):
        if (d / f).exists():
            return d / f
    return d


def load(name_or_path: str | os.PathLike = "lab") -> Inventory:
    """Read an inventory: a name under playbook/inventory/ or a path to a file/dir."""
    _import_ansible()
    from ansible.inventory.manager import InventoryManager
    from ansible.parsing.dataloader import DataLoader
    from ansible.vars.manager import VariableManager

    path = inventory_path(name_or_path)
    loader = DataLoader()
    vault_file = os.environ.get("TR4947_VAULT_PASSWORD_FILE")
    if vault_file:
        from ansible.parsing.vault import get_file_vault_secret
        secret = get_file_vault_secret(filename=vault_file, loader=loader)
        secret.load()
        loader.set_vault_secrets([("default", secret)])
    im = InventoryManager(loader=loader, sources=[str(path)])
    if not im.hosts and not im.groups.get("all"):
        raise InventoryError(f"inventory {path} could not be parsed (no hosts)")
    vm = VariableManager(loader=loader, inventory=im)
    hosts = {}
    for h in im.get_hosts():
        v = vm.get_vars(host=h, include_hostvars=False)
        v = {k: _plain(val) for k, val in v.items() if k not in _MAGIC}
        hosts[h.name] = Host(h.name, v, [g.name for g in h.get_groups() if g.name != "all"])
    groups = {g.name: [h.name for h in g.get_hosts()] for g in im.groups.values()}
    children = {g.name: [c.name for c in g.child_groups] for g in im.groups.values()}
    name = path.parent.name if path.is_file() else path.name
    return Inventory(name, path, hosts, groups, children)
