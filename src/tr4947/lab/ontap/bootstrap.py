"""Initial state of the lab cluster (what `lab up` asks for) and its logins.

Logins are kept as ONTAP keeps them: ``<root>/ontap/passwords.json`` (mode 0600) holds a
salted PBKDF2 hash per user, never the password. Whoever creates the lab chooses the
passwords (the lab derives them from its own key, see tr4947.lab.lab); a stand-in started
without them gets random ones nobody knows. Nothing here prints or logs a password.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
import uuid
from pathlib import Path

from ... import units
from ...atomic import write_json
from . import state

USERS = ("admin", "fsxadmin")
_ITERATIONS = 60_000
_verified: dict[tuple[str, str], str] = {}      # (user, sha256 of a tried password) -> hash


def passwords_file(root: Path) -> Path:
    return Path(root) / "ontap" / "passwords.json"


def _hash(password: str) -> dict:
    salt = os.urandom(16)
    dk = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, _ITERATIONS)
    return {"pbkdf2_sha256": base64.b64encode(dk).decode(), "salt": base64.b64encode(salt).decode(),
            "iterations": _ITERATIONS}


def _write(f: Path, data: dict) -> None:
    write_json(f, data, mode=0o600, indent=None)


def ensure_passwords(root: Path, initial: dict[str, str] | None = None) -> Path:
    """Create the login file once, with the hashes of ``initial`` (user -> password; a user
    not given gets a random password). An existing file is left alone."""
    f = passwords_file(root)
    if f.exists():
        return f
    initial = initial or {}
    _write(f, {u: _hash(initial.get(u) or secrets.token_urlsafe(18)) for u in USERS})
    return f


def check_password(root: Path, user: str, password: str) -> bool:
    """Whether ``password`` is ``user``'s (constant-time comparison of the hashes)."""
    try:
        entry = json.loads(passwords_file(root).read_text()).get(user)
    except (OSError, ValueError):
        return False
    if not isinstance(entry, dict) or not password:
        return False
    tried = (user, hashlib.sha256(entry["salt"].encode() + password.encode()).hexdigest())
    if _verified.get(tried) == entry["pbkdf2_sha256"]:       # REST calls re-send it each time
        return True
    dk = hashlib.pbkdf2_hmac("sha256", password.encode(), base64.b64decode(entry["salt"]),
                             int(entry.get("iterations", _ITERATIONS)))
    ok = hmac.compare_digest(base64.b64encode(dk).decode(), entry["pbkdf2_sha256"])
    if ok:
        _verified[tried] = entry["pbkdf2_sha256"]
    return ok


def set_password(root: Path, user: str, password: str) -> None:
    """Change one login's password (FSx: the FsxAdminPassword given at creation)."""
    f = ensure_passwords(root)
    data = json.loads(f.read_text())
    data[user] = _hash(password)
    _write(f, data)


def _check_name(kind: str, name) -> None:
    """Names given to the lab (inventory, FSx API) follow ONTAP's rules like any other."""
    rule = state.name_problem(kind, name)
    if rule:
        raise ValueError(f"invalid {kind} name {name!r} for the lab ONTAP stand-in: {rule}")


def add_data_vserver(c: state.Cluster, root: Path, spec: dict | str,
                     lifs: list[dict] | None = None) -> state.Vserver:
    """A data SVM with its 1GB root volume, NFS v3/v4.0/v4.1 on, pNFS off, and its LIFs."""
    spec = spec if isinstance(spec, dict) else {"name": spec}
    name = spec["name"]
    _check_name("vserver", name)
    if name in c.vservers:
        raise ValueError(f'Vserver "{name}" already exists')
    first_aggr = next(iter(c.aggregates))
    v = state.Vserver(name, nfs_v3=spec.get("v3", True), nfs_v40=spec.get("v4.0", True),
                      nfs_v41=spec.get("v4.1", True), nfs_v41_pnfs=spec.get("v4.1-pnfs", False),
                      uuid=str(uuid.uuid4()), root_volume=f"{name}_root",
                      root_aggregate=spec.get("aggregate", first_aggr))
    c.vservers[name] = v
    rv = state.Volume(f"{name}_root", name, [v.root_aggregate], state.GiB,
                      junction_path="/", uuid=str(uuid.uuid4()), is_vsroot=True,
                      unix_permissions="---rwxr-xr-x", snapshot_policy="default")
    c.volumes[rv.key] = rv
    state.make_backing_dir(rv, root, 0o755)
    for lif in lifs or []:
        add_lif(c, {**lif, "vserver": name})
    return v


def add_lif(c: state.Cluster, lif: dict) -> state.Lif:
    _check_name("lif", lif["name"])
    role = lif.get("role", "data")
    c.lifs[lif["name"]] = state.Lif(
        lif["name"], lif["address"], lif.get("vserver", c.name),
        data_protocols=lif.get("data_protocols", ["nfs"] if role == "data" else []),
        role=role, node=lif.get("node", c.nodes[0]),
        port=lif.get("port", "e0d" if role == "data" else "e0c"),
        auto_revert=bool(lif.get("auto_revert", False)))
    return c.lifs[lif["name"]]


def _size(v) -> int:
    return v if isinstance(v, int) else units.parse_size(str(v))[0]


def bootstrap(root: Path, cluster_name: str = "cluster1", nodes: list[str] | None = None,
              aggregates: list[dict] | None = None, vservers: list | None = None,
              lifs: list[dict] | None = None, version: str | None = None,
              timing: dict | None = None) -> state.Cluster:
    """Write the initial cluster: nodes (paired for storage failover), aggregates, data SVMs
    (each with its 1GB root volume, NFS v3/v4.0/v4.1 enabled as on the TR's systems, pNFS
    off, default export policy), LIFs; plus passwords and the SSH host key directory.
    ``timing`` may set the stand-in's modelled times (``takeover_seconds``,
    ``giveback_seconds``, ``migrate_seconds``; state.py has the defaults and why).
    Idempotent: an existing state is left alone and returned."""
    root = Path(root)
    ensure_passwords(root)
    f = root / "ontap" / "state.json"
    if f.exists():
        return state.load(root)
    nodes = nodes or [f"{cluster_name}-01"]
    with state.transaction(root) as c:
        c.name = cluster_name
        c.nodes = list(nodes)
        for n in nodes:
            c.ha(n)
        for k, v in (timing or {}).items():
            if k not in ("takeover_seconds", "giveback_seconds", "migrate_seconds") or \
                    isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 3600:
                raise ValueError(f"lab ONTAP timing {k}={v!r}: takeover_seconds, "
                                 "giveback_seconds or migrate_seconds, 0 to 3600 seconds")
            setattr(c, k, float(v))
        if version:
            c.version = version
        c.vservers[cluster_name] = state.Vserver(cluster_name, type="admin", nfs_v3=False,
                                                 nfs_access=False, export_policies=[])
        for n in nodes:
            c.vservers[n] = state.Vserver(n, type="node", nfs_v3=False, nfs_access=False,
                                          export_policies=[])
        for ag in aggregates or [{"name": "aggr1", "node": nodes[0], "size": "2TB"}]:
            _check_name("aggregate", ag["name"])
            # object_store: name of an attached object store (a FabricPool aggregate, as FSx
            # for ONTAP's are): its volumes default to, and may only have, guarantee "none".
            c.aggregates[ag["name"]] = state.Aggregate(ag["name"], ag.get("node", nodes[0]),
                                                       _size(ag.get("size", "2TB")),
                                                       object_store=ag.get("object_store", ""))
        for vs in vservers or ["svm_kafka"]:
            add_data_vserver(c, root, vs)
        for lif in lifs or []:
            add_lif(c, {"vserver": cluster_name, **lif})
    return state.load(root)
