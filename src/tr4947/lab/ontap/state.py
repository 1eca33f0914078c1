"""The lab ONTAP stand-in's state: SVMs, LIFs, aggregates, volumes and the nodes' storage
failover (HA) state with its modelled times, persisted as JSON.

This is the contract between the stand-in's clustershell/REST front ends (which change it)
and lab storage (which reads it to decide how a mount behaves). Every volume owns a backing
directory under the lab state dir; its attributes decide mount semantics:

* ``is_preserve_unlink_enabled`` + an NFSv4.1 mount -> POSIX unlink
* anything else (NFSv3, or the attribute off)     -> silly rename (``.nfs<fileid><counter>``)

(carried out by the clients' NFS layer, tr4947-nfs: see lab/nfs-client)

Writers hold an exclusive ``flock`` for the whole read-modify-write, so the SSH server, the
REST server and the CLI can share one state file safely.

Object names follow ONTAP's naming rules (:func:`name_problem`) and every path the stand-in
touches is derived from validated names and confined to ``<root>/volumes/`` after symlinks
are resolved (:func:`backing_dir`): a name such as ``../../x`` never reaches the file system.
"""
from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import json
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from ... import paths

GiB = 1024 ** 3


@dataclass
class Volume:
    name: str
    vserver: str
    aggregates: list[str]
    size: int                                  # bytes
    junction_path: str | None = None
    is_preserve_unlink_enabled: bool = False
    state: str = "online"
    style: str = "flexvol"                     # or "flexgroup"
    security_style: str = "unix"
    export_policy: str = "default"
    space_guarantee: str = "volume"
    compression: bool = False                  # inline compression (volume efficiency)
    inline_dedupe: bool = False
    efficiency_state: str = "disabled"         # volume efficiency on|off
    uuid: str = ""
    # --- added for the clustershell stand-in (defaults keep old state files loadable) ---
    type: str = "RW"
    unix_permissions: str = "---rwxr-xr-x"
    snapshot_policy: str = "default"
    percent_snapshot_space: int = 5            # ONTAP's default snapshot reserve
    aggr_list_multiplier: int = 1              # FlexGroup constituents per aggregate
    junction_active: bool = True
    comment: str = ""
    is_vsroot: bool = False
    efficiency_policy: str = "auto"
    # Last measured space numbers (bytes), written by `storage aggregate show-efficiency`
    # and `volume efficiency show` from the data really in the backing dir (efficiency.py).
    logical_used: int | None = None
    physical_used: int | None = None
    efficiency_measured_at: str = ""
    # `volume autosize` (ONTAP's defaults: off; maximum 120% of the size when enabled).
    autosize_mode: str = "off"                 # off | grow | grow_shrink
    autosize_maximum: int = 0                  # bytes (0: 120% of the size)
    autosize_minimum: int = 0
    autosize_grow_threshold: int = 0           # percent (0: ONTAP's size-dependent default)
    autosize_shrink_threshold: int = 50

    @property
    def key(self) -> str:
        return f"{self.vserver}:{self.name}"


@dataclass
class Lif:
    name: str
    address: str                               # loopback address, e.g. 127.0.10.11
    vserver: str
    data_protocols: list[str] = field(default_factory=lambda: ["nfs"])
    role: str = "data"                         # data | cluster-mgmt | node-mgmt
    node: str = ""                             # home node (network interface show)
    port: str = "e0d"                          # home port (cosmetic)
    netmask_length: int = 8                    # loopback /8
    # Where it is now (`network interface migrate`/`revert`, storage failover); "" means at
    # home. The lab's NFS service drops the connections on the LIF's address when it moves.
    curr_node: str = ""
    curr_port: str = ""
    # Wall-clock time (time.time(), so every process reads it alike) until which the LIF is
    # moving: its NFS service refuses new sessions until then (see tr4947.lab.nfs4state).
    moving_until: float = 0.0
    # ONTAP's -auto-revert: whether the LIF goes home by itself once its home node is back
    # (on giveback). ONTAP's default for `network interface create` is false.
    auto_revert: bool = False


@dataclass
class Vserver:
    name: str
    nfs_v3: bool = True
    nfs_v40: bool = False
    nfs_v41: bool = False
    nfs_v41_pnfs: bool = False
    tcp_max_xfer_size: int = 65536
    uuid: str = ""
    # --- added for the clustershell stand-in ---
    type: str = "data"                         # data | admin | node
    nfs_access: bool = True
    export_policies: list[str] = field(default_factory=lambda: ["default"])
    root_volume: str = ""
    root_aggregate: str = ""
    language: str = "C.UTF-8"
    comment: str = ""
    # NFSv4 state (ONTAP's defaults): a client's locks outlive it by at most the lease; after
    # a server restart, clients have the grace period to reclaim them.
    nfs_v4_lease_seconds: int = 30
    nfs_v4_grace_seconds: int = 45


@dataclass
class Aggregate:
    name: str
    node: str
    size: int                                  # bytes
    # Name of an attached object store (FabricPool, as FSx for ONTAP's aggregates have), or "".
    object_store: str = ""
    # The node that owns it now, "" meaning its home node (``node``); differs only while the
    # home node is taken over (`storage failover takeover`).
    owner: str = ""

    @property
    def current_node(self) -> str:
        return self.owner or self.node


@dataclass
class Failover:
    """One node's storage-failover (HA) state. The two nodes of an HA pair are each other's
    partner; a node without one (a one-node cluster) cannot be taken over."""
    node: str
    partner: str = ""
    taken_over_by: str = ""                    # "" unless in takeover
    # The last takeover and giveback of this node, wall-clock times (time.time()) so the NFS
    # service and the CLI, in other processes, see the same window.
    takeover_start: float = 0.0
    takeover_end: float = 0.0
    giveback_start: float = 0.0
    giveback_end: float = 0.0


# The stand-in's modelled times (seconds), not measured on any ONTAP system; `lab up` may set
# them (bootstrap's ``timing``). Takeover and giveback: ONTAP's giveback reference says
# relocating an SFO aggregate takes "anywhere from a few seconds to a couple of minutes",
# client outage included; 5 s is the low end of that, so a drill still runs in seconds. A LIF
# migration: 1 s, as the lab's NFS service used before this was kept in the state (ONTAP
# documents that a manual migration can take up to 15 s).
TAKEOVER_SECONDS = 5.0
GIVEBACK_SECONDS = 5.0
MIGRATE_SECONDS = 1.0


@dataclass
class Cluster:
    name: str = "cluster1"
    version: str = "NetApp Release 9.12.1 (lab stand-in)"
    nodes: list[str] = field(default_factory=lambda: ["cluster1-01", "cluster1-02"])
    aggregates: dict[str, Aggregate] = field(default_factory=dict)
    vservers: dict[str, Vserver] = field(default_factory=dict)
    lifs: dict[str, Lif] = field(default_factory=dict)
    volumes: dict[str, Volume] = field(default_factory=dict)   # key "vserver:name"
    # statistics start/show samples: name -> {object, counters..., started}
    statistics: dict[str, dict] = field(default_factory=dict)
    # clustershell jobs ("[Job N] Job succeeded"): the next id and a short history. A new
    # lab cluster has run no job yet, so its first job is 1.
    next_job_id: int = 1
    jobs: list[dict] = field(default_factory=list)
    # Storage failover: node -> its HA state (see ha(); missing in older state files).
    failover: dict[str, Failover] = field(default_factory=dict)
    takeover_seconds: float = TAKEOVER_SECONDS
    giveback_seconds: float = GIVEBACK_SECONDS
    migrate_seconds: float = MIGRATE_SECONDS

    def ha(self, node: str) -> Failover:
        """A node's HA state. Nodes pair up in the order they were listed (01 with 02, 03 with
        04), as a cluster of two-node HA pairs does; an odd node out has no partner."""
        if node not in self.failover:
            i = self.nodes.index(node)
            j = i ^ 1
            self.failover[node] = Failover(node, self.nodes[j] if j < len(self.nodes) else "")
        return self.failover[node]

    def data_vservers(self) -> list[Vserver]:
        return [v for v in self.vservers.values() if v.type == "data"]

    # --- look-ups used by lab storage -----------------------------------------------
    def vserver_for_address(self, address: str) -> Vserver:
        for lif in self.lifs.values():
            if lif.address == address and lif.role == "data":
                return self.vservers[lif.vserver]
        raise LookupError(f"no data LIF answers on {address}")

# --- names -------------------------------------------------------------------------------------
# ONTAP's naming rules for the objects the stand-in creates or looks up by name.
# * Volumes: "The name of volume must start with an alphabetic character (a to z or A to Z) or
#   an underscore (_). The name must be 197 or fewer characters in length for FlexGroup
#   volumes, and 203 or fewer characters in length for all other types of volumes" (ONTAP REST
#   API reference, Volume.name, as published in NetApp's netapp-ontap library). The rest of
#   the name is letters, digits and underscores (ONTAP's volume naming convention; the
#   reference text is silent on it, so this part is modelled).
# * Vservers: at most 47 characters, "all" is reserved, an FQDN such as data.example.com is
#   recommended (ONTAP CLI reference, vserver create -vserver,
#   https://docs.netapp.com/us-en/ontap-cli-98//vserver-create.html); the character set
#   (letters, digits, ".", "-", "_", starting with a letter or "_") is modelled.
# * Export policies: "The policy name can be up to 256 characters long" (Create an ONTAP NFS
#   export policy, https://docs.netapp.com/us-en/ontap/nfs-config/create-export-policy-task.html);
#   character set modelled as for vservers.
# * Aggregates, snapshot policies, LIFs: character set modelled like volumes (LIFs and
#   snapshot policies also allow "-" and "."), lengths modelled.
_NAME_RULES: dict[str, tuple[str, int, str]] = {
    # kind: (regex, max length, what the rule says)
    "volume": (r"[A-Za-z_][A-Za-z0-9_]*", 203,
               "Volume names must start with a letter or an underscore (_), contain only "
               "letters, digits and underscores, and be at most 203 characters long (197 for "
               "a FlexGroup volume)."),
    "vserver": (r"[A-Za-z_][A-Za-z0-9_.-]*", 47,
                "Vserver names must start with a letter or an underscore (_), contain only "
                "letters, digits, \".\", \"-\" and \"_\", be at most 47 characters long, and "
                "not be \"all\"."),
    "aggregate": (r"[A-Za-z_][A-Za-z0-9_]*", 250,
                  "Aggregate names must start with a letter or an underscore (_), contain only "
                  "letters, digits and underscores, and be at most 250 characters long."),
    "export-policy": (r"[A-Za-z_][A-Za-z0-9_.-]*", 256,
                      "Export policy names must start with a letter or an underscore (_), "
                      "contain only letters, digits, \".\", \"-\" and \"_\", and be at most 256 "
                      "characters long."),
    "snapshot-policy": (r"[A-Za-z_][A-Za-z0-9_.-]*", 256,
                        "Snapshot policy names must start with a letter or an underscore (_), "
                        "contain only letters, digits, \".\", \"-\" and \"_\", and be at most 256 "
                        "characters long."),
    "lif": (r"[A-Za-z_][A-Za-z0-9_.-]*", 252,
            "LIF names must start with a letter or an underscore (_), contain only letters, "
            "digits, \".\", \"-\" and \"_\", and be at most 252 characters long."),
}
FLEXGROUP_NAME_MAX = 197


def name_problem(kind: str, name: object, flexgroup: bool = False) -> str | None:
    """None if ``name`` is a valid ONTAP name of this kind, else the rule it breaks."""
    pattern, longest, rule = _NAME_RULES[kind]
    if kind == "volume" and flexgroup:
        longest = FLEXGROUP_NAME_MAX
    if not isinstance(name, str) or not name:
        return rule
    if len(name) > longest or not re.fullmatch(pattern, name, flags=re.ASCII):
        return rule
    if kind == "vserver" and name.lower() == "all":
        return rule
    return None


class UnsafePath(ValueError):
    """A path the stand-in was asked to touch would leave its state directory."""


def volumes_dir(root: Path | None = None) -> Path:
    """Where every volume's backing directory lives: ``<root>/volumes``."""
    return Path(root or paths.LAB_STATE) / "volumes"


def backing_dir(vol: Volume, root: Path | None = None) -> Path:
    """The directory that holds a volume's data (what a lab NFS mount exposes):
    ``<root>/volumes/<vserver>/<volume>``.

    Both names must be valid ONTAP names, and the path, resolved through any symlink, must
    be exactly that directory under the resolved ``<root>/volumes``; anything else raises
    UnsafePath before a caller can create, chmod or delete it."""
    for kind, name in (("vserver", vol.vserver), ("volume", vol.name)):
        if name_problem(kind, name):
            raise UnsafePath(f"invalid {kind} name {name!r}: refusing to derive a path from it")
    root = Path(root or paths.LAB_STATE)
    base = volumes_dir(root)
    d = base / vol.vserver / vol.name
    real_root = root.resolve()
    real_base = base.resolve()
    if real_base != real_root / "volumes":
        raise UnsafePath(f"{base} resolves to {real_base}, outside the lab state {real_root}")
    if d.resolve() != real_base / vol.vserver / vol.name:
        raise UnsafePath(f"{d} resolves to {d.resolve()}, not to the volume's own directory "
                         f"under {real_base}")
    return d


def make_backing_dir(vol: Volume, root: Path | None, mode: int) -> Path:
    """Create the volume's directory (a fresh one: an existing path is refused) with mode."""
    d = backing_dir(vol, root)
    if d.exists() or d.is_symlink():
        raise UnsafePath(f"{d} already exists; a new volume gets a new, empty directory")
    d.parent.mkdir(parents=True, exist_ok=True)
    d.mkdir()
    backing_dir(vol, root)                     # nothing swapped in meanwhile
    os.chmod(d, mode)
    return d


def chmod_backing_dir(vol: Volume, root: Path | None, mode: int) -> None:
    d = backing_dir(vol, root)
    if d.is_symlink():
        raise UnsafePath(f"{d} is a symlink")
    os.chmod(d, mode)


def remove_backing_dir(vol: Volume, root: Path | None) -> None:
    """Delete the volume's own directory and nothing else (symlinks inside are removed,
    never followed)."""
    d = backing_dir(vol, root)
    if d.is_symlink():
        raise UnsafePath(f"{d} is a symlink")
    if d.exists():
        shutil.rmtree(d)


def _state_file(root: Path | None) -> Path:
    return (root or paths.LAB_STATE) / "ontap" / "state.json"


def _decode(raw: dict) -> Cluster:
    c = Cluster(**{k: v for k, v in raw.items()
                   if k not in ("aggregates", "vservers", "lifs", "volumes", "failover")})
    c.aggregates = {k: Aggregate(**v) for k, v in raw.get("aggregates", {}).items()}
    c.vservers = {k: Vserver(**v) for k, v in raw.get("vservers", {}).items()}
    c.lifs = {k: Lif(**v) for k, v in raw.get("lifs", {}).items()}
    c.volumes = {k: Volume(**v) for k, v in raw.get("volumes", {}).items()}
    c.failover = {k: Failover(**v) for k, v in raw.get("failover", {}).items()}
    return c


def load(root: Path | None = None) -> Cluster:
    """Read the state (a snapshot; use :func:`transaction` to change it)."""
    f = _state_file(root)
    if not f.exists():
        raise FileNotFoundError(f"lab ONTAP state {f} does not exist: run `tr4947 lab up` first")
    return _decode(json.loads(f.read_text()))


def save(cluster: Cluster, root: Path | None = None) -> None:
    f = _state_file(root)
    f.parent.mkdir(parents=True, exist_ok=True)
    tmp = f.with_suffix(".tmp")
    tmp.write_text(json.dumps(dataclasses.asdict(cluster), indent=1, sort_keys=True))
    os.replace(tmp, f)                        # atomic: readers never see half a file


@contextlib.contextmanager
def transaction(root: Path | None = None) -> Iterator[Cluster]:
    """Lock, load, yield for changes, save on success (nothing is saved on error)."""
    f = _state_file(root)
    f.parent.mkdir(parents=True, exist_ok=True)
    with open(f.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        cluster = load(root) if f.exists() else Cluster()
        yield cluster
        save(cluster, root)
