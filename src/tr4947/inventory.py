"""Targets are Ansible inventories: playbook/inventory/<name>/ (hosts.yml naming the hosts and
groups, their variables in group_vars/ and host_vars/ beside it, as Ansible lays them out).

Parsed with Ansible's own InventoryManager + VariableManager rather than plain YAML, so the
Python side sees exactly what ansible-runner's plays see: group-variable inheritance and
precedence, host_vars/ and group_vars/ directories next to the inventory, INI or YAML
inventories, and vault-encrypted values. Reimplementing that precedence would drift; Ansible
parses this inventory in ~50 ms.
"""
from __future__ import annotations

import ipaddress
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

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


def resolve(target: str | os.PathLike | None = None) -> Path:
    """The inventory a target names, as an absolute path, resolved once per run: a name
    under playbook/inventory/, or a path to an inventory file or directory (relative to the
    current directory). No target: $TR4947_TARGET, else the lab."""
    target = target or os.environ.get("TR4947_TARGET") or "lab"
    return inventory_path(target).resolve()


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


# --- validation -----------------------------------------------------------------------------
# Inventory values reach shells, the clustershell, file paths and URLs. Each known variable is
# checked on load against what it may be, so a typo or a hostile value is refused with the
# file, the host, the variable and what is allowed, before anything runs.
_HOSTNAME = re.compile(r"^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
                       r"(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$")
_PATH = re.compile(r"^~?/[A-Za-z0-9._/@+=-]*$")
_ONTAP_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,202}$")
_WORD = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")


def _is_address(v: Any) -> bool:
    if not isinstance(v, str):
        return False
    try:
        ipaddress.ip_address(v)
        return True
    except ValueError:
        return bool(_HOSTNAME.match(v))


def _is_port(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 65535


def _matches(rx: re.Pattern) -> Callable[[Any], bool]:
    return lambda v: isinstance(v, str) and bool(rx.match(v))


def _list_of(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda v: isinstance(v, list) and all(check(x) for x in v)


_ADDRESS = "a host name or an IP address"
_PORT_TEXT = "a port number, 1 to 65535"
_PATH_TEXT = "an absolute path (or ~/...) of letters, digits and . _ / @ + = -"
_NAME_TEXT = ("an ONTAP object name: letters, digits, _ . -, starting with a letter, digit "
              "or _, at most 203 characters")
RULES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "ansible_host": (_is_address, _ADDRESS),
    "kafka_address": (_is_address, _ADDRESS),
    "nfs_lif": (_is_address, _ADDRESS),
    "lab_aws_address": (_is_address, _ADDRESS),
    "lab_control_address": (_is_address, _ADDRESS),
    "ansible_port": (_is_port, _PORT_TEXT),
    "kafka_port": (_is_port, _PORT_TEXT),
    "kafka_controller_port": (_is_port, _PORT_TEXT),
    "ontap_rest_port": (_is_port, _PORT_TEXT),
    "lab_aws_port": (_is_port, _PORT_TEXT),
    "ansible_user": (_matches(re.compile(r"^[a-z_][a-z0-9_.-]{0,31}$")),
                     "a user name: lower-case letters, digits, _ . -"),
    "kafka_home": (_matches(_PATH), _PATH_TEXT),
    "omb_home": (_matches(_PATH), _PATH_TEXT),
    "kafka_mountpoint": (_matches(_PATH), _PATH_TEXT),
    "kafka_log_dirs": (_matches(re.compile(r"^~?/[A-Za-z0-9._/@+=-]*(,~?/[A-Za-z0-9._/@+=-]*)*$")),
                       "absolute paths separated by commas"),
    "ansible_ssh_private_key_file": (_matches(_PATH), _PATH_TEXT),
    "ontap_ca_bundle": (_matches(_PATH), _PATH_TEXT),
    "ssh_askpass": (_matches(_PATH), _PATH_TEXT),
    "ontap_svm": (_matches(re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,46}$")),
                  "an SVM name: letters, digits, _ . -, at most 47 characters"),
    "ontap_cluster_name": (_matches(_ONTAP_NAME), _NAME_TEXT),
    "nfs_volume": (_matches(_ONTAP_NAME), _NAME_TEXT),
    "flexgroup_aggregates": (_list_of(_matches(_ONTAP_NAME)), "a list of aggregate names"),
    "ontap_nodes": (_list_of(_matches(_ONTAP_NAME)), "a list of node names"),
    "kafka_cluster": (_matches(_WORD), "a cluster name: letters, digits, _ . -"),
    "kafka_interface": (_matches(re.compile(r"^[A-Za-z0-9_.-]{1,15}$")),
                        "a network interface name, at most 15 characters"),
    "kafka_node_id": (lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
                      "a whole number, 0 or more"),
    "kafka_prefix": (lambda v: isinstance(v, int) and 0 <= v <= 32, "a prefix length, 0 to 32"),
    "nfs_mount_options": (_matches(re.compile(r"^[A-Za-z0-9_.=:-]+(,[A-Za-z0-9_.=:-]+)*$")),
                          "mount options such as vers=4.1,nconnect=16"),
    "kafka_storage": (lambda v: v in ("nfs", "das"), "nfs or das"),
    "kafka_role": (lambda v: v in ("broker", "controller"), "broker or controller"),
    "target_kind": (lambda v: v in ("lab", "real"), "lab or real"),
    "aws_subnet_ids": (_list_of(_matches(re.compile(r"^subnet-[0-9a-f]{8,17}$"))),
                       "a list of subnet ids (subnet-0123abcd...)"),
    "aws_region": (_matches(re.compile(r"^[a-z]{2}(-[a-z]+)+-\d$")), "a region such as us-east-1"),
}


def _check_lifs(v: Any) -> bool:
    return isinstance(v, list) and all(
        isinstance(x, dict) and _ONTAP_NAME.match(str(x.get("name", "")))
        and _is_address(x.get("address")) and set(x) <= {"name", "address", "node"}
        for x in v)


RULES["ontap_data_lifs"] = (_check_lifs, "a list of {name: LIF name, address: host name or IP"
                                         "[, node: node name]}")


def _vars_files(path: Path) -> list[Path]:
    """The group_vars/ and host_vars/ files Ansible reads beside an inventory file (or in an
    inventory directory): <name>.yml, .yaml, .json, no suffix, or a <name>/ directory of them."""
    base = path if path.is_dir() else path.parent
    return sorted(f for d in ("group_vars", "host_vars") for f in (base / d).rglob("*")
                  if f.is_file() and f.suffix in (".yml", ".yaml", ".json", "")
                  and not f.name.startswith("."))


def _where(inv: "Inventory", host: str, key: str, value: Any) -> str:
    """", <file> line N" of the line that sets ``key`` for ``host``: its host_vars, then the
    group_vars of its groups, then the inventory file (where the value shows)."""
    base = inv.path if inv.path.is_dir() else inv.path.parent
    groups = inv.hosts[host].groups + ["all"] if host in inv.hosts else ["all"]
    names = [("host_vars", host)] + [("group_vars", g) for g in groups]
    candidates = [f for d, n in names for f in _vars_files(inv.path)
                  if f.relative_to(base).parts[:2] in ((d, n), (d, n + f.suffix))]
    key_line = re.compile(rf"^\s*(- )?{re.escape(key)}\s*:")
    for f in candidates + ([inv.path] if inv.path.is_file() else []):
        try:
            text = f.read_text().splitlines()
        except OSError:
            continue
        needle = str(value)[:40]
        for n, line in enumerate(text, 1):
            if (f in candidates and key_line.match(line)) or (needle and needle in line):
                shown = f.relative_to(base) if f.is_relative_to(base) else f
                return f", {shown} line {n}"
    return ""


def _read_yaml_first(path: Path) -> None:
    """Ansible only warns about a file it cannot parse and goes on with an empty inventory;
    a YAML inventory is read here first so its mistakes stop the run, with their line. The
    group_vars/ and host_vars/ files beside it are read too: each must be a mapping."""
    files = [path] if path.is_file() else sorted(
        p for p in path.rglob("*") if p.suffix in (".yml", ".yaml") and p.is_file()
        and not p.relative_to(path).parts[0] in ("group_vars", "host_vars"))
    vars_files = [f for f in _vars_files(path) if f.suffix != ".json"]
    import yaml
    for f in files + vars_files:
        if f.suffix not in (".yml", ".yaml", "") or (f.suffix == "" and f not in vars_files
                                                     and f.name != "hosts"):
            continue
        text = f.read_text()
        if f.name == "hosts" and not text.lstrip().startswith(("all:", "---")):
            continue                                      # an INI inventory: Ansible's job
        try:
            doc = yaml.safe_load(text)
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark
            where = f", line {mark.line + 1}, column {mark.column + 1}" if mark else ""
            tab = " (tabs are not allowed for indentation in YAML)" if "\t" in text else ""
            raise InventoryError(f"inventory {f}{where}: not valid YAML: {exc.problem}{tab}")\
                from None
        except yaml.YAMLError as exc:
            raise InventoryError(f"inventory {f}: not valid YAML: {exc}") from None
        if f in vars_files:
            if doc is not None and not isinstance(doc, dict):
                raise InventoryError(f"inventory {f}: a variables file must be a mapping of "
                                     f"name: value, not a {type(doc).__name__}")
        elif f == path or f.parent == path:
            if doc is None:
                raise InventoryError(f"inventory {f} is empty: describe the hosts under "
                                     "all: children: (see playbook/inventory/aff/hosts.yml)")
            if not isinstance(doc, dict):
                raise InventoryError(f"inventory {f}: the top level must be a mapping such as "
                                     f"'all:', not a {type(doc).__name__}")


def validate(inv: Inventory) -> Inventory:
    if not inv.hosts:
        raise InventoryError(f"inventory {inv.path} has no hosts: describe them under "
                             "all: children: <group>: hosts: (see playbook/inventory/aff/)")
    bad: dict[tuple[str, str], list[str]] = {}          # (variable, value) -> hosts
    problems = []
    for h in inv.hosts.values():
        for key, value in h.vars.items():
            rule = RULES.get(key)
            if rule and not rule[0](value):
                bad.setdefault((key, repr(value)), []).append(h.name)
        if not _WORD.match(h.name) and not _is_address(h.name):
            problems.append(f"host name {h.name!r}: use letters, digits and _ . - (an "
                            "inventory alias) or an address")
    for (key, shown), hosts in bad.items():
        value = inv.hosts[hosts[0]].vars[key]
        who = f"host {hosts[0]}" if len(hosts) == 1 else f"hosts {', '.join(hosts[:3])}" + \
            (f" and {len(hosts) - 3} more" if len(hosts) > 3 else "")
        problems.append(f"{who}: {key} {shown} is not {RULES[key][1]}"
                        f"{_where(inv, hosts[0], key, value)}")
    if problems:
        raise InventoryError(f"inventory {inv.path}: " + ("; ".join(problems[:8]))
                             + (f" (and {len(problems) - 8} more)" if len(problems) > 8 else ""))
    return inv


def load(name_or_path: str | os.PathLike = "lab") -> Inventory:
    """Read an inventory: a name under playbook/inventory/ or a path to a file/dir."""
    _import_ansible()
    from ansible.inventory.manager import InventoryManager
    from ansible.parsing.dataloader import DataLoader
    from ansible.vars.manager import VariableManager

    path = inventory_path(name_or_path)
    _read_yaml_first(path)
    loader = DataLoader()
    vault_file = os.environ.get("TR4947_VAULT_PASSWORD_FILE")
    if vault_file:
        from ansible.parsing.vault import get_file_vault_secret
        secret = get_file_vault_secret(filename=vault_file, loader=loader)
        secret.load()
        loader.set_vault_secrets([("default", secret)])
    im = InventoryManager(loader=loader, sources=[str(path)])
    vm = VariableManager(loader=loader, inventory=im)
    hosts = {}
    for h in im.get_hosts():
        v = vm.get_vars(host=h, include_hostvars=False)
        v = {k: _plain(val) for k, val in v.items() if k not in _MAGIC}
        hosts[h.name] = Host(h.name, v, [g.name for g in h.get_groups() if g.name != "all"])
    groups = {g.name: [h.name for h in g.get_hosts()] for g in im.groups.values()}
    children = {g.name: [c.name for c in g.child_groups] for g in im.groups.values()}
    name = path.parent.name if path.is_file() else path.name
    return validate(Inventory(name, path, hosts, groups, children))
