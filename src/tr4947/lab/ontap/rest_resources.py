"""The ONTAP REST resources the TR's procedures need, over the same state as the clustershell.

Only the endpoints and fields that ``netapp.ontap.na_ontap_volume``, ``na_ontap_rest_info``
and the ``netapp-ontap`` library use for AFF-1/AFF-2 exist here; everything else is a 404
or a 400, as on a real cluster asked for something it does not have:

* ``GET  /api/cluster``, ``/api/cluster/nodes``, ``/api/cluster/jobs[/{uuid}]``
* ``GET  /api/svm/svms``, ``/api/storage/aggregates``
* ``GET|POST /api/storage/volumes``, ``GET|PATCH|DELETE /api/storage/volumes/{uuid}``
* ``GET|PATCH /api/protocols/nfs/services[/{svm.uuid}]`` (pNFS, TCP transfer size)

Changes go through the clustershell's own command handlers (``commands.volume_create`` and
friends), so a REST request is validated exactly like the equivalent CLI command and a volume
created here is the same state entry ``volume show`` lists and lab storage mounts. Errors use
ONTAP's REST envelope ``{"error": {"message", "code", "target"}}``: schema errors (unknown
field, bad value) answer 400 at once; errors of the operation itself fail the job, as ONTAP's
asynchronous volume jobs do.
"""
from __future__ import annotations

import datetime as _dt
import re
import uuid as _uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from . import commands, state
from .cli import CliError, match_query

# Snapshot policies every SVM has on a new cluster (one list with the clustershell).
SNAPSHOT_POLICIES = commands.SNAPSHOT_POLICIES
# Query parameters that are not field filters.
CONTROL = {"fields", "max_records", "return_records", "return_timeout", "order_by"}


class RestError(Exception):
    """An ONTAP REST error: HTTP status plus the error envelope."""

    def __init__(self, status: int, message: str, code: str, target: str | None = None):
        super().__init__(message)
        self.status, self.message, self.code, self.target = status, message, code, target

    def body(self) -> dict:
        err = {"message": self.message, "code": self.code}
        if self.target is not None:
            err["target"] = self.target
        return {"error": err}


def not_found(target: str = "uuid") -> RestError:
    return RestError(404, "entry doesn't exist", "4", target)


def unexpected(name: str) -> RestError:
    return RestError(400, f'Unexpected argument "{name}".', "262179", name)


def invalid(field: str, value: Any, kind: str) -> RestError:
    return RestError(400, f'The value "{value}" is invalid for field "{field}" ({kind})',
                     "262196", field)


# --- ids -------------------------------------------------------------------------------------
def stable_uuid(*parts: str) -> str:
    """Objects the state model keeps without a uuid (nodes, aggregates) get a stable one."""
    return str(_uuid.uuid5(_uuid.NAMESPACE_URL, "tr4947-lab/" + "/".join(parts)))


def _version(c: state.Cluster) -> dict:
    m = re.search(r"(\d+)\.(\d+)\.(\d+)", c.version)
    gen, major, minor = (int(x) for x in m.groups()) if m else (9, 12, 1)
    return {"full": c.version, "generation": gen, "major": major, "minor": minor}


# --- records ----------------------------------------------------------------------------------
def cluster_record(c: state.Cluster, root: Path) -> dict:
    return {"name": c.name, "uuid": stable_uuid(c.name), "version": _version(c),
            "_links": {"self": {"href": "/api/cluster"}}}


def node_record(c: state.Cluster, name: str) -> dict:
    u = stable_uuid(c.name, "node", name)
    return {"uuid": u, "name": name, "version": _version(c), "state": "up",
            "_links": {"self": {"href": f"/api/cluster/nodes/{u}"}}}


def svm_record(c: state.Cluster, v: state.Vserver) -> dict:
    return {"uuid": v.uuid, "name": v.name, "state": "running", "subtype": "default",
            "language": v.language.lower(), "comment": v.comment,
            "nfs": {"enabled": v.nfs_access, "allowed": True},
            "_links": {"self": {"href": f"/api/svm/svms/{v.uuid}"}}}


def aggregate_record(c: state.Cluster, a: state.Aggregate, root: Path,
                     need_space: bool = True) -> dict:
    u = stable_uuid(c.name, "aggregate", a.name)
    # Measuring walks the volumes' data: only when a space field is asked for.
    used = commands._aggr_used(c, a, root) if need_space else 0
    return {"uuid": u, "name": a.name, "state": "online",
            "node": {"name": a.node, "uuid": stable_uuid(c.name, "node", a.node)},
            "space": {"block_storage": {"size": a.size, "used": used,
                                        "available": a.size - used}},
            "_links": {"self": {"href": f"/api/storage/aggregates/{u}"}}}


def _unix_permissions(perms: str) -> int:
    """REST reports ``---rwxr-xr-x`` as the integer 755 (the octal digits)."""
    return int(oct(commands._mode(perms))[2:])


def volume_record(c: state.Cluster, v: state.Volume, root: Path,
                  need_space: bool = True) -> dict:
    vs = c.vservers[v.vserver]
    # Measuring walks the volume's data: only when a space field is asked for.
    used = commands._used(v, root) if need_space else 0
    rec = {
        "uuid": v.uuid, "name": v.name, "state": v.state, "style": v.style,
        "type": v.type.lower(), "comment": v.comment,
        "svm": {"name": vs.name, "uuid": vs.uuid},
        "aggregates": [{"name": a, "uuid": stable_uuid(c.name, "aggregate", a)}
                       for a in v.aggregates],
        "nas": {"path": v.junction_path or "", "security_style": v.security_style,
                "unix_permissions": _unix_permissions(v.unix_permissions),
                "uid": 0, "gid": 0, "export_policy": {"name": v.export_policy}},
        "snapshot_policy": {"name": v.snapshot_policy},
        "guarantee": {"type": v.space_guarantee},
        "space": {"size": v.size, "used": used, "available": commands._avail(v, used),
                  "snapshot": {"reserve_percent": v.percent_snapshot_space},
                  "logical_space": {"enforcement": False, "reporting": False}},
        "efficiency": {"compression": "inline" if v.compression else "none",
                       "dedupe": "inline" if v.inline_dedupe else "none",
                       "policy": {"name": v.efficiency_policy}},
        "encryption": {"enabled": False},
        "tiering": {"policy": "none"},
        "snaplock": {"type": "non_snaplock"},
        # ONTAP's default inode count: one per 32 KiB, at most 2^31 - 1.
        "files": {"maximum": min(v.size // 32768, 2 ** 31 - 1)},
        "constituents_per_aggregate": v.aggr_list_multiplier if v.style == "flexgroup" else None,
        "_links": {"self": {"href": f"/api/storage/volumes/{v.uuid}"}},
    }
    if rec["constituents_per_aggregate"] is None:
        del rec["constituents_per_aggregate"]
    # A volume without a QoS policy has no qos.policy, as on ONTAP (fields left unset are
    # omitted from REST records).
    return rec


def nfs_record(c: state.Cluster, v: state.Vserver) -> dict:
    return {"svm": {"name": v.name, "uuid": v.uuid}, "enabled": v.nfs_access,
            "state": "online" if v.nfs_access else "offline",
            "protocol": {"v3_enabled": v.nfs_v3, "v40_enabled": v.nfs_v40,
                         "v41_enabled": v.nfs_v41,
                         "v41_features": {"pnfs_enabled": v.nfs_v41_pnfs}},
            "transport": {"tcp_enabled": True, "udp_enabled": True,
                          "tcp_max_transfer_size": v.tcp_max_xfer_size},
            "_links": {"self": {"href": f"/api/protocols/nfs/services/{v.uuid}"}}}


def job_record(j: dict) -> dict:
    rec = {k: j[k] for k in ("uuid", "description", "state", "message", "code", "start_time",
                             "end_time") if k in j}
    rec["_links"] = {"self": {"href": f"/api/cluster/jobs/{j['uuid']}"}}
    return rec


# --- field paths, selection and queries --------------------------------------------------------
def paths_of(rec: Any, prefix: str = "") -> set[str]:
    """Every dotted field path of a record (objects and leaves), lists of objects included."""
    out: set[str] = set()
    if isinstance(rec, list):
        for item in rec:
            out |= paths_of(item, prefix)
        return out
    if not isinstance(rec, dict):
        return out
    for k, v in rec.items():
        if k == "_links":
            continue
        p = f"{prefix}{k}"
        out.add(p)
        out |= paths_of(v, p + ".")
    return out


def _pick(rec: Any, parts: list[str]) -> Any:
    if isinstance(rec, list):
        picked = [_pick(x, parts) for x in rec]
        return [x for x in picked if x is not None]
    if not parts:
        return rec
    if not isinstance(rec, dict) or parts[0] not in rec:
        return None
    sub = _pick(rec[parts[0]], parts[1:])
    return None if sub is None else {parts[0]: sub}


def _merge(a: dict, b: dict) -> dict:
    for k, v in b.items():
        if isinstance(v, dict) and isinstance(a.get(k), dict):
            _merge(a[k], v)
        elif isinstance(v, list) and isinstance(a.get(k), list) and len(v) == len(a[k]):
            a[k] = [_merge(x, y) if isinstance(x, dict) and isinstance(y, dict) else y
                    for x, y in zip(a[k], v)]
        else:
            a[k] = v
    return a


def parse_fields(raw: str | None, known: set[str]) -> list[str] | None:
    """The ``fields`` parameter: None (defaults), ['*'] (all) or validated paths."""
    if raw is None:
        return None
    names = [f.strip() for f in raw.split(",") if f.strip()]
    if not names:
        return None
    if "*" in names or "**" in names:
        return ["*"]
    for n in names:
        if n not in known:
            raise RestError(400, f'The value "{n}" is invalid for field "fields" (<field,...>)',
                            "262197", "fields")
    return names


def select(rec: dict, fields: list[str] | None, default: list[str]) -> dict:
    if fields == ["*"]:
        return rec
    out: dict = {}
    for f in list(dict.fromkeys(default + (fields or []))):
        got = _pick(rec, f.split("."))
        if got is not None:
            _merge(out, got)
    if "_links" in rec:
        out["_links"] = rec["_links"]
    return out


def _values(rec: Any, parts: list[str]) -> list[Any]:
    if isinstance(rec, list):
        return [v for x in rec for v in _values(x, parts)]
    if not parts:
        return [rec]
    if not isinstance(rec, dict) or parts[0] not in rec:
        return []
    return _values(rec[parts[0]], parts[1:])


def _as_text(v: Any) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def matches(rec: dict, query: dict[str, str]) -> bool:
    for k, q in query.items():
        vals = _values(rec, k.split("."))
        if not any(match_query(_as_text(v), q) for v in vals):
            return False
    return True


# --- request bodies ----------------------------------------------------------------------------
def flatten(body: Any, prefix: str = "") -> dict[str, Any]:
    """{"svm": {"name": "x"}, "nas.path": "/p"} -> {"svm.name": "x", "nas.path": "/p"}.
    Lists are leaves (e.g. aggregates)."""
    if not isinstance(body, dict):
        raise RestError(400, "Invalid JSON input in the request body.", "262145")
    out: dict[str, Any] = {}
    for k, v in body.items():
        p = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(flatten(v, p + "."))
        else:
            out[p] = v
    return out


@dataclass
class F:
    """A writable field: kind is str|int|bool|enum|aggregates; ops: where it is accepted."""
    kind: str = "str"
    choices: tuple[str, ...] = ()
    ops: str = "post,patch"


VOLUME_FIELDS: dict[str, F] = {
    "name": F(ops="post"), "svm.name": F(ops="post"), "svm.uuid": F(ops="post"),
    "aggregates": F("aggregates", ops="post"),
    "constituents_per_aggregate": F("int", ops="post"),
    "style": F("enum", ("flexvol", "flexgroup"), ops="post"),
    "size": F("int"),
    "state": F("enum", ("online", "offline", "restricted")),
    "type": F("enum", ("rw", "dp"), ops="post"),
    "comment": F(),
    "language": F(ops="post"),
    "nas.path": F(), "nas.security_style": F("enum", ("unix", "ntfs", "mixed")),
    "nas.unix_permissions": F("int"), "nas.export_policy.name": F(),
    "snapshot_policy.name": F(), "qos.policy.name": F(),
    "guarantee.type": F("enum", ("none", "volume")),
    "space.snapshot.reserve_percent": F("int"),
    "efficiency.compression": F("enum", ("inline", "background", "both", "none")),
    "efficiency.policy.name": F(),
    "encryption.enabled": F("bool"),
    "tiering.policy": F("enum", ("all", "auto", "backup", "none", "snapshot_only")),
}

NFS_FIELDS: dict[str, F] = {
    "enabled": F("bool", ops="patch"),
    "protocol.v3_enabled": F("bool", ops="patch"),
    "protocol.v40_enabled": F("bool", ops="patch"),
    "protocol.v41_enabled": F("bool", ops="patch"),
    "protocol.v41_features.pnfs_enabled": F("bool", ops="patch"),
    "transport.tcp_max_transfer_size": F("int", ops="patch"),
}


def validate_body(body: dict, schema: dict[str, F], op: str, collection: str) -> dict[str, Any]:
    flat = flatten(body)
    for k, v in flat.items():
        f = schema.get(k)
        if f is None and k not in known_fields(collection):
            raise unexpected(k)
        if f is None:
            # A real ONTAP field the stand-in does not model: refuse rather than ignore it.
            raise RestError(400, f'Field "{k}" is not supported by the lab ONTAP stand-in.',
                            "262179", k)
        if op not in f.ops:
            raise RestError(400, f'Field "{k}" cannot be set in this operation.', "262186", k)
        if f.kind == "int" and (isinstance(v, bool) or not isinstance(v, int)):
            raise invalid(k, v, "<integer>")
        if f.kind == "bool" and not isinstance(v, bool):
            raise invalid(k, v, "<true|false>")
        if f.kind == "str" and not isinstance(v, str):
            raise invalid(k, v, "<string>")
        if f.kind == "enum" and v not in f.choices:
            raise invalid(k, v, "<" + "|".join(f.choices) + ">")
        if f.kind == "aggregates":
            if not isinstance(v, list) or not v or not all(
                    isinstance(a, dict) and a and set(a) <= {"name", "uuid"} for a in v):
                raise invalid(k, v, "<[{name|uuid}, ...]>")
    return flat


# --- the clustershell handlers as the back end -------------------------------------------------
class _Ctx:
    """What a clustershell handler needs from its session."""

    def __init__(self, root: Path):
        self.root = root
        self.privilege = "advanced"
        self.confirmations = False
        self.jobs = False              # the REST request's own job is recorded by run_job


def cli_message(exc: CliError) -> str:
    text = str(exc)
    for prefix in ("Error: command failed: ", "Error: "):
        if text.startswith(prefix):
            return text[len(prefix):]
    return text


def _aggr_names(c: state.Cluster, aggrs: list[dict]) -> list[str]:
    by_uuid = {stable_uuid(c.name, "aggregate", n): n for n in c.aggregates}
    out = []
    for a in aggrs:
        if "name" in a:
            out.append(a["name"])
        elif a["uuid"] in by_uuid:
            out.append(by_uuid[a["uuid"]])
        else:
            raise CliError(f'Error: command failed: Aggregate with UUID "{a["uuid"]}" does not exist.')
    return out


def _bad_name(field: str, value: Any, kind: str, flexgroup: bool = False) -> RestError | None:
    rule = state.name_problem(kind, value, flexgroup=flexgroup)
    if rule is None:
        return None
    shown = commands._printable(value) if isinstance(value, str) else value
    return RestError(400, f'The value "{shown}" is invalid for field "{field}" '
                          f'(<{kind.replace("-", " ")} name>). {rule}', "262196", field)


def check_volume_body(c: state.Cluster, flat: dict[str, Any], op: str) -> None:
    """What ONTAP refuses at once (HTTP 400, nothing started, no job): missing required
    fields, names that break ONTAP's naming rules, malformed junction paths, and settings
    the lab cluster cannot honour. Everything else is checked by the job."""
    if op == "post":
        if "name" not in flat:
            raise RestError(400, 'Missing value for required field "name".', "2", "name")
        if "svm.name" not in flat and "svm.uuid" not in flat:
            raise RestError(400, 'Missing value for required field "svm.name" or "svm.uuid".',
                            "2", "svm.name")
        if not flat.get("aggregates"):
            # "aggregates.name or aggregates.uuid - Existing aggregates in which to create the
            # volume" is a required property of POST /storage/volumes (ONTAP REST reference).
            raise RestError(400, 'Missing value for required field "aggregates.name" or '
                                 '"aggregates.uuid".', "2", "aggregates")
        flexgroup = flat.get("style") == "flexgroup" or len(flat["aggregates"]) > 1 or \
            "constituents_per_aggregate" in flat
        err = _bad_name("name", flat["name"], "volume", flexgroup)
        if err:
            raise err
        if "svm.name" in flat and (err := _bad_name("svm.name", flat["svm.name"], "vserver")):
            raise err
        for ag in flat["aggregates"]:
            if "name" in ag and (err := _bad_name("aggregates.name", ag["name"], "aggregate")):
                raise err
    for field, kind in (("nas.export_policy.name", "export-policy"),
                        ("snapshot_policy.name", "snapshot-policy")):
        if field in flat and (err := _bad_name(field, flat[field], kind)):
            raise err
    jp = flat.get("nas.path")
    if jp:
        problem = commands._junction_problem(jp)
        if problem:
            raise RestError(400, problem, "262196", "nas.path")
    if flat.get("encryption.enabled"):
        raise RestError(400, "Volume encryption requires the Onboard Key Manager or an "
                             "external key manager, and none is configured.", "262196",
                        "encryption.enabled")


def create_volume(root: Path, flat: dict[str, Any]) -> state.Volume:
    """POST /api/storage/volumes through `volume create` (raises CliError like the CLI)."""
    c = state.load(root)
    check_volume_body(c, flat, "post")
    svm = flat.get("svm.name")
    if svm is None and "svm.uuid" in flat:
        svm = next((v.name for v in c.vservers.values() if v.uuid == flat["svm.uuid"]), None)
        if svm is None:
            raise CliError(f'Error: command failed: SVM with UUID "{flat["svm.uuid"]}" not found.')
    if svm is None:
        raise RestError(400, 'Missing value for required field "svm.name" or "svm.uuid".', "2",
                        "svm.name")
    aggrs = _aggr_names(c, flat.get("aggregates") or [])
    flexgroup = flat.get("style") == "flexgroup" or len(aggrs) > 1 or \
        "constituents_per_aggregate" in flat
    if flat.get("style") == "flexvol" and (len(aggrs) > 1 or "constituents_per_aggregate" in flat):
        raise CliError('Error: command failed: A FlexVol volume can only be created on a single '
                       'aggregate; use "style": "flexgroup" for more than one.')
    a: dict[str, Any] = {"vserver": svm, "volume": flat["name"]}
    a["aggr-list" if flexgroup else "aggregate"] = aggrs if flexgroup else aggrs[0]
    if "constituents_per_aggregate" in flat:
        a["aggr-list-multiplier"] = flat["constituents_per_aggregate"]
    _volume_args(c, svm, flat, a)
    commands.volume_create(_Ctx(root), a)
    vol = state.load(root).volumes[f"{svm}:{flat['name']}"]
    _after_change(root, vol.key, flat)
    return state.load(root).volumes[vol.key]


def _volume_args(c: state.Cluster, svm: str, flat: dict, a: dict) -> None:
    """REST fields -> clustershell parameters (shared by create and modify)."""
    simple = {"size": "size", "state": "state", "comment": "comment",
              "nas.security_style": "security-style", "nas.export_policy.name": "policy",
              "guarantee.type": "space-guarantee", "snapshot_policy.name": "snapshot-policy",
              "space.snapshot.reserve_percent": "percent-snapshot-space", "type": "type",
              "language": "language"}
    for k, p in simple.items():
        if k in flat:
            a[p] = flat[k].upper() if k == "type" else flat[k]
    if "nas.path" in flat and flat["nas.path"]:
        a["junction-path"] = flat["nas.path"]
    if "nas.unix_permissions" in flat:
        a["unix-permissions"] = "0" + str(flat["nas.unix_permissions"]).zfill(3)
    pol = flat.get("snapshot_policy.name")
    if pol is not None and pol not in SNAPSHOT_POLICIES:
        raise CliError(f'Error: command failed: Snapshot policy "{pol}" does not exist in '
                       f'Vserver "{svm}".')
    qos = flat.get("qos.policy.name")
    if qos is not None and qos != "none":
        # The lab cluster has no QoS policy groups; "none" is ONTAP's keyword for no policy.
        raise CliError(f'Error: command failed: Policy group "{qos}" does not exist.')


def _after_change(root: Path, key: str, flat: dict) -> None:
    """Attributes the clustershell handlers do not take: efficiency (encryption was refused
    by check_volume_body before anything changed)."""
    comp = flat.get("efficiency.compression")
    if comp is not None or "efficiency.policy.name" in flat:
        with state.transaction(root) as c:
            vol = c.volumes[key]
            if comp is not None:
                if comp != "none" and vol.efficiency_state != "enabled":
                    vol.efficiency_state = "enabled"
                vol.compression = comp in ("inline", "both")
            if "efficiency.policy.name" in flat:
                vol.efficiency_policy = flat["efficiency.policy.name"]


def modify_volume(root: Path, vol: state.Volume, flat: dict[str, Any]) -> None:
    """PATCH /api/storage/volumes/{uuid} through `volume modify`, `mount` and `unmount`.
    A new junction path is checked before anything changes, so a PATCH either applies
    whole or not at all."""
    c = state.load(root)
    ctx = _Ctx(root)
    a: dict[str, Any] = {"vserver": vol.vserver, "volume": vol.name}
    path = flat.pop("nas.path", None)
    if path and path != vol.junction_path:
        commands._check_junction(c, c.vservers[vol.vserver], path)
    _volume_args(c, vol.vserver, flat, a)
    a.pop("junction-path", None)
    if "size" in a:
        a["size"] = (a["size"], None)
    for k in ("type", "language"):
        a.pop(k, None)
    if len(a) > 2:
        commands.volume_modify(ctx, a)
    if path is not None:
        current = state.load(root).volumes[vol.key].junction_path
        if path == "" and current:
            commands.volume_unmount(ctx, {"vserver": vol.vserver, "volume": vol.name})
        elif path and path != current:
            if current:
                commands.volume_unmount(ctx, {"vserver": vol.vserver, "volume": vol.name})
            commands.volume_mount(ctx, {"vserver": vol.vserver, "volume": vol.name,
                                        "junction-path": path})
    _after_change(root, vol.key, flat)


def delete_volume(root: Path, vol: state.Volume) -> None:
    """DELETE /api/storage/volumes/{uuid}. Unlike the clustershell (unmount, offline, then
    delete), REST deletes in one call; the same refusals apply (a Vserver's root volume, a
    volume lab clients still mount), and only the volume's own backing dir is removed."""
    with state.transaction(root) as c:
        current = c.volumes.get(vol.key)
        if current is None or current.uuid != vol.uuid:
            raise CliError(f'Error: command failed: Volume "{vol.name}" in Vserver '
                           f'"{vol.vserver}" does not exist.')
        commands.delete_volume(root, c, current)


def modify_nfs(root: Path, svm: str, flat: dict[str, Any]) -> None:
    """PATCH /api/protocols/nfs/services/{svm.uuid} through `vserver nfs modify`."""
    a: dict[str, Any] = {"vserver": svm}
    ed = lambda b: "enabled" if b else "disabled"   # noqa: E731
    for k, p in (("protocol.v3_enabled", "v3"), ("protocol.v40_enabled", "v4.0"),
                 ("protocol.v41_enabled", "v4.1"),
                 ("protocol.v41_features.pnfs_enabled", "v4.1-pnfs")):
        if k in flat:
            a[p] = ed(flat[k])
    if "enabled" in flat:
        a["access"] = flat["enabled"]
    if "transport.tcp_max_transfer_size" in flat:
        a["tcp-max-xfer-size"] = flat["transport.tcp_max_transfer_size"]
    commands.nfs_modify(_Ctx(root), a)


# --- jobs ---------------------------------------------------------------------------------------
def _now() -> str:
    return _dt.datetime.now().astimezone().isoformat(timespec="seconds")


def run_job(root: Path, description: str, work: Callable[[], Any]) -> dict:
    """Run ``work`` as an ONTAP job: its CliError becomes the job's failure message. The job
    is recorded in the state (``job show`` lists it) and returned."""
    start = _now()
    job = {"uuid": str(_uuid.uuid4()), "description": description, "start_time": start}
    try:
        work()
        job.update(state="success", message="success", code=0)
    except CliError as exc:
        job.update(state="failure", message=cli_message(exc), code=917927)
    except state.UnsafePath as exc:              # refused before anything was touched
        job.update(state="failure", message=str(exc), code=917927)
    job["end_time"] = _now()
    with state.transaction(root) as c:
        job["id"] = c.next_job_id
        c.next_job_id += 1
        c.jobs = (c.jobs + [{**job, "time": start}])[-50:]
    return job


def find_job(c: state.Cluster, uuid: str) -> dict:
    for j in c.jobs:
        if j.get("uuid") == uuid:
            return j
    raise not_found("uuid")


# --- collections ----------------------------------------------------------------------------------
@dataclass
class Collection:
    """A GET-able collection: records, default fields and what ``fields`` may name."""
    records: Callable[[state.Cluster, Path, bool], list[dict]]
    default: list[str]
    key: str = "uuid"


COLLECTIONS: dict[str, Collection] = {
    "cluster/nodes": Collection(lambda c, r, s: [node_record(c, n) for n in c.nodes],
                                ["uuid", "name"]),
    "cluster/jobs": Collection(lambda c, r, s: [job_record(j) for j in c.jobs if "uuid" in j],
                               ["uuid"]),
    "svm/svms": Collection(lambda c, r, s: [svm_record(c, v) for v in sorted(
        c.data_vservers(), key=lambda v: v.name)], ["uuid", "name"]),
    "storage/aggregates": Collection(lambda c, r, s: [aggregate_record(c, a, r, s) for a in (
        c.aggregates[k] for k in sorted(c.aggregates))], ["uuid", "name"]),
    "storage/volumes": Collection(lambda c, r, s: [volume_record(c, v, r, s) for v in sorted(
        c.volumes.values(), key=lambda v: (v.vserver, v.name))], ["uuid", "name"]),
    "protocols/nfs/services": Collection(lambda c, r, s: [nfs_record(c, v) for v in sorted(
        c.data_vservers(), key=lambda v: v.name)], ["svm.uuid", "svm.name"], key="svm.uuid"),
}


# What ``fields`` and query parameters may name: the field paths of ONTAP's own REST schema
# for the resource, as the netapp-ontap library publishes it (a field the lab does not model is
# accepted and, like an unset field on ONTAP, omitted from the record).
SCHEMAS = {"cluster": "Cluster", "cluster/nodes": "Node", "cluster/jobs": "Job",
           "svm/svms": "Svm", "storage/aggregates": "Aggregate", "storage/volumes": "Volume",
           "protocols/nfs/services": "NfsService"}
_schema_cache: dict[str, frozenset[str]] = {}


def _schema_paths(schema, prefix: str = "", depth: int = 0, seen: tuple = ()) -> set[str]:
    from marshmallow import fields as mf
    out: set[str] = set()
    for name, f in schema.fields.items():
        key = f.data_key or name
        if key == "_links":
            continue
        p = prefix + key
        out.add(p)
        inner = f.inner if isinstance(f, mf.List) else f
        if isinstance(inner, mf.Nested) and depth < 5:
            sub = inner.schema
            if type(sub) not in seen:
                out |= _schema_paths(sub, p + ".", depth + 1, seen + (type(sub),))
    return out


def known_fields(name: str) -> frozenset[str]:
    """Field paths of one collection's ONTAP schema (cached per process)."""
    if name not in _schema_cache:
        import importlib
        import warnings
        cls = SCHEMAS[name]
        with warnings.catch_warnings():        # marshmallow deprecation notes in the models
            warnings.simplefilter("ignore")
            mod = importlib.import_module(
                "netapp_ontap.resources." + re.sub(r"(?<!^)(?=[A-Z])", "_", cls).lower())
            _schema_cache[name] = frozenset(_schema_paths(getattr(mod, cls + "Schema")()))
    return _schema_cache[name]
