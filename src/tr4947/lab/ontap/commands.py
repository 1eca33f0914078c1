"""The clustershell commands the TR uses, as a declarative table over the lab state.

Each ``Command`` names its parameters (type, required, privilege, positional); handlers
receive typed values and the session, change the state inside a ``state.transaction`` and
return the text ONTAP prints. Error wording follows ONTAP where it could be checked (see
the module docstring of cli.py and the project's errata notes for what was verified).
"""
from __future__ import annotations

import datetime as _dt
import math
import textwrap
import time
import uuid as _uuid
import zlib
from typing import Any, Callable

from ... import units
from . import render, space, state
from .cli import CliError, Command, Param, Tree, match_query, priv_rank
from .render import Col

P = Param
TREE = Tree()


def command(path: str, params: list[Param], privilege: str = "admin", help: str = "",
            confirm=None):
    def deco(fn):
        TREE.add(Command(tuple(path.split()), fn, params, privilege, help, confirm))
        return fn
    return deco


for _p, _h in [("volume", "Manage virtual storage, including volumes, snapshots, and mirrors"),
               ("volume efficiency", "Manage volume efficiency"),
               ("storage", "Manage physical storage, including disks, aggregates, and failover"),
               ("storage aggregate", "Manage storage aggregates"),
               ("vserver", "Manage Vservers"), ("vserver nfs", "Manage the NFS configuration of a Vserver"),
               ("vserver export-policy", "Manage export policies and rules"),
               ("network", "Manage physical and virtual network connections"),
               ("network interface", "Manage logical interfaces"),
               ("network connections", "View cluster connections"),
               ("network connections active", "Show the active connections in this cluster"),
               ("statistics", "Display operational statistics"), ("job", "Manage jobs and job schedules")]:
    TREE.describe(tuple(_p.split()), _h)


# --- helpers -------------------------------------------------------------------------------
def _fail(msg: str) -> CliError:
    return CliError(f"Error: command failed: {msg}")


def _vserver(c: state.Cluster, name: str | None, data_only: bool = True) -> state.Vserver:
    if name is None:
        # The clustershell fills in -vserver when the cluster has exactly one data SVM
        # (FSx for ONTAP's transcripts rely on this: `volume create -volume kafkafsxN1 ...`).
        data = c.data_vservers()
        if len(data) == 1:
            return data[0]
        raise CliError("Error: Missing required parameter: -vserver")
    v = c.vservers.get(name)
    if v is None or (data_only and v.type != "data"):
        raise CliError(f'Error: Vserver "{name}" does not exist.')
    return v


def _volume(c: state.Cluster, vserver: str, name: str) -> state.Volume:
    vol = c.volumes.get(f"{vserver}:{name}")
    if vol is None:
        raise CliError(f'Error: entry doesn\'t exist: Volume "{name}" in Vserver "{vserver}".')
    return vol


def _job(c: state.Cluster, description: str) -> str:
    n = c.next_job_id
    c.next_job_id += 1
    c.jobs = (c.jobs + [{"id": n, "description": description, "state": "success",
                         "time": _dt.datetime.now().isoformat(timespec="seconds")}])[-50:]
    return f"[Job {n}] Job succeeded: Successful"


def _mode(perms: str) -> int:
    """``0777`` or ``---rwxr-xr-x`` -> 0o777."""
    if perms.isdigit():
        return int(perms, 8)
    bits = perms[-9:]
    mode = 0
    for i, ch in enumerate(bits):
        if ch != "-":
            mode |= 1 << (8 - i)
    return mode


def _perm_string(mode: int) -> str:
    s = "---"
    for i in range(9):
        s += "rwx"[i % 3] if mode & (1 << (8 - i)) else "-"
    return s


def _check_perms(raw: str) -> str:
    import re
    if re.fullmatch(r"0?[0-7]{3}", raw) or re.fullmatch(r"---([-r][-w][-xsStT]){3}", raw):
        return raw
    raise CliError(f'Error: "{raw}" is an invalid value for field "-unix-permissions '
                   '<unix perm>"')


def _used(vol: state.Volume, root) -> int:
    return space.used_bytes(state.backing_dir(vol, root))


def _avail(vol: state.Volume, used: int) -> int:
    return max(0, int(vol.size * (100 - vol.percent_snapshot_space) / 100) - used)


def _pct(vol: state.Volume, used: int) -> str:
    usable = vol.size * (100 - vol.percent_snapshot_space) / 100
    return f"{int(used * 100 / usable) if usable else 0}%"


def _aggr_of(vol: state.Volume) -> str:
    return "-" if vol.style == "flexgroup" else (vol.aggregates[0] if vol.aggregates else "-")


def _bool(v: bool) -> str:
    return "true" if v else "false"


def _ed(v: bool) -> str:
    return "enabled" if v else "disabled"


def _filter(records: list, args: dict, fields: dict[str, Callable]) -> list:
    for name, q in args.items():
        if name in fields and name not in ("fields", "instance"):
            records = [r for r in records if match_query(fields[name](r), str(q))]
    return records


def _show(records: list, args: dict, ctx, registry: dict[str, tuple], keys: list[str],
          default: Callable[[list], str], privilege_of: Callable[[str], str] | None = None) -> str:
    """Common -fields / -instance / default handling for show commands.

    registry: field -> (instance label, getter(record) -> str, privilege)."""
    visible = {k: v for k, v in registry.items()
               if priv_rank(v[2]) <= priv_rank(ctx.privilege)}
    if "fields" in args:
        names = []
        for f in args["fields"]:
            if f not in visible:
                raise CliError(f'Error: invalid argument "{f}" for "-fields"')
            names.append(f)
        cols = keys + [n for n in names if n not in keys]
        if not records:
            return render.none_found()
        return render.fields_table(cols, [[visible[n][1](r) for n in cols] for r in records],
                                   getattr(ctx, "separator", " "),
                                   [visible[n][0] or n for n in cols])
    if not records:
        return render.none_found()
    if args.get("instance"):
        return render.instance([[(v[0], v[1](r)) for k, v in visible.items() if v[0]]
                                for r in records])
    return default(records)


def _now() -> str:
    t = _dt.datetime.now()
    return f"{t.month}/{t.day}/{t.year} {t:%H:%M:%S}"


# --- set / version / exit -------------------------------------------------------------------
ADV_WARNING = ("Warning: These advanced commands are potentially dangerous; use them only when\n"
               "         directed to do so by NetApp personnel.\n"
               "Do you want to continue? {y|n}: ")
DIAG_WARNING = ("Warning: These diagnostic commands are for use by NetApp personnel only.\n"
                "Do you want to continue? {y|n}: ")


def _set_confirm(args, ctx):
    level = args.get("privilege")
    confirmations = args.get("confirmations", "on" if ctx.confirmations else "off") == "on"
    if not level or not confirmations or priv_rank(level) <= priv_rank(ctx.privilege):
        return None
    return ADV_WARNING if level == "advanced" else DIAG_WARNING


@command("set", [P("privilege", "enum", choices=("admin", "advanced", "diagnostic"),
                   positional=True, help="Privilege Level"),
                 P("confirmations", "enum", choices=("on", "off"), help="Confirmation Messages"),
                 P("showallfields", "bool", help="Show All Fields"),
                 P("showseparator", help="Show Separator", placeholder="<text>"),
                 P("rows", "int", help="Pagination Rows ('0' disables)"),
                 P("units", "enum", choices=("auto", "raw", "B", "KB", "MB", "GB", "TB", "PB"),
                   help="Data Units")],
         help="Display/Set CLI session settings", confirm=_set_confirm)
def set_cmd(ctx, a):
    if "confirmations" in a:
        ctx.confirmations = a["confirmations"] == "on"
    if "privilege" in a:
        ctx.privilege = a["privilege"]
    if "showseparator" in a:
        ctx.separator = a["showseparator"]
    return ""


@command("version", [], help="Display the cluster version")
def version_cmd(ctx, a):
    return state.load(ctx.root).version


# --- volume ---------------------------------------------------------------------------------
MiB, TiB = 1024 ** 2, 1024 ** 4
# "The minimum size for a flexible volume is 20 MB" (ONTAP CLI reference, volume size,
# https://docs.netapp.com/us-en/ontap-cli-9111//volume-size.html); POST /storage/volumes
# documents "size - 20MB" as the default (ONTAP REST API reference, netapp-ontap's Volume).
MIN_FLEXVOL = 20 * MiB
# A FlexVol of ONTAP 9.12.1 is at most 100TB ("Nominal size ... exceeded ... 100TB limit",
# EMS wafl.no.large.vvol.size.set, https://docs.netapp.com/us-en/ontap-ems/wafl-no-events.html;
# larger volumes need -is-large-size-enabled, which the stand-in does not offer).
MAX_FLEXVOL = 100 * TiB
# FlexGroup constituents are FlexVols: "The minimum size is 160 MB multiplied by the number of
# nodes" for 8 constituents per node (volume flexgroup deploy,
# https://docs.netapp.com/us-en/ontap-cli-93/volume-flexgroup-deploy.html), i.e. 20MB each, and
# at most the FlexVol maximum each. A FlexGroup created without -size gets that minimum per
# constituent (modelled: the reference is silent on a FlexGroup's default size).
# -aggr-list-multiplier defaults to 4, as constituents_per_aggregate does ("If a volume is
# being created on multiple aggregates and the "constituents_per_aggregate" field is not
# specified, the default value ... is 4", ONTAP REST API reference, netapp-ontap's Volume).
DEFAULT_MULTIPLIER = 4
# Snapshot policies every SVM has on a new cluster.
SNAPSHOT_POLICIES = ("default", "default-1weekly", "none")

VOLUME_CREATE = [
    P("vserver", "name", name_kind="vserver", help="Vserver Name"),
    P("volume", "name", required=True, name_kind="volume", help="Volume Name"),
    P("aggregate", "name", name_kind="aggregate", help="Aggregate Name"),
    P("aggr-list", "names", name_kind="aggregate",
      help="List of Aggregates for FlexGroup Constituents"),
    P("aggr-list-multiplier", "int", help="Aggregate Multiplier for FlexGroup Constituents"),
    P("size", "size", help="Volume Size"),
    P("state", "enum", choices=("online", "restricted", "offline"), help="Volume State"),
    P("policy", "name", name_kind="export-policy", help="Export Policy"),
    P("user", help="User ID"), P("group", help="Group ID"),
    P("security-style", "enum", choices=("unix", "ntfs", "mixed"), help="Security Style"),
    P("unix-permissions", help="UNIX Permissions", placeholder="<unix perm>"),
    P("junction-path", help="Junction Path", placeholder="<junction path>"),
    P("junction-active", "bool", help="Junction Active"),
    P("type", "enum", choices=("RW", "DP", "LS"), help="Volume Type"),
    P("snapshot-policy", "name", name_kind="snapshot-policy", help="Snapshot Policy"),
    P("percent-snapshot-space", "int", help="Space Reserved for Snapshot Copies"),
    P("space-guarantee", "enum", choices=("none", "volume"), help="Space Guarantee Style"),
    P("foreground", "bool", help="Foreground Process"),
    P("comment", help="Comment"), P("language", help="Language"),
    P("tiering-policy", "enum", choices=("snapshot-only", "auto", "none", "all"), help="Tiering Policy"),
    P("vsroot", "bool", privilege="advanced", help="Is Vserver Root Volume"),
    P("encrypt", "bool", help="Enable or Disable Encryption"),
    P("efficiency-policy", help="Efficiency Policy Name"),
    P("qos-policy-group", help="QoS Policy Group Name"),
    P("is-preserve-unlink-enabled", "bool", privilege="advanced", help="Is Preserve Unlink Enabled"),
]


def _constituents(vol: state.Volume) -> int:
    return len(vol.aggregates) * vol.aggr_list_multiplier if vol.style == "flexgroup" else 1


def _size_problem(vol: state.Volume, size: int) -> str | None:
    n = _constituents(vol)
    smallest, largest = MIN_FLEXVOL * n, MAX_FLEXVOL * n
    what = f" for a FlexGroup volume of {n} constituents" if vol.style == "flexgroup" else ""
    if size < smallest:
        return f"Requested size is too small (minimum {units.format_size(smallest)}{what})."
    if size > largest:
        return (f"Requested size is too large (maximum {units.format_size(largest)}{what}).")
    return None


def _share(vol: state.Volume, aggr: str) -> float:
    """The part of a volume an aggregate holds: a FlexGroup's constituents are spread
    evenly over its -aggr-list (an aggregate listed twice holds twice the share)."""
    return vol.aggregates.count(aggr) / len(vol.aggregates) if vol.aggregates else 0.0


def _footprint(vol: state.Volume, aggr: str, root, used: int | None = None) -> int:
    """Bytes a volume takes from an aggregate: its whole size while its space guarantee is
    "volume" and it is online (guarantees are honoured only for online volumes), else the
    bytes really written to it."""
    share = _share(vol, aggr)
    if not share:
        return 0
    if vol.space_guarantee == "volume" and vol.state == "online":
        return int(vol.size * share)
    return int((_used(vol, root) if used is None else used) * share)


def _approx(n: float, up: bool) -> str:
    """ONTAP's three significant digits in space messages ("347GB", "54.9GB"); rounded up
    for space to free and down for the largest size that fits, so the advice holds."""
    v, i = float(max(0, n)), 0
    while v >= 1024 and i < len(units.UNITS) - 1:
        v /= 1024
        i += 1
    digits = max(0, 3 - len(str(int(v))))
    f = 10 ** digits
    v = (math.ceil(v * f) if up else math.floor(v * f)) / f
    text = f"{v:.{digits}f}".rstrip("0").rstrip(".") if digits else str(int(v))
    return text + units.UNITS[i]


def _check_space(c: state.Cluster, vol: state.Volume, root, creating: bool,
                 attr: str = "size") -> None:
    """Refuse a thick (space guarantee "volume"), online volume that its aggregates cannot
    hold next to the others' guarantees and data. ``vol`` is the volume as it would be.

    Wording from ONTAP's refusal of a thick volume create (an ONTAP 9 transcript on FSx for
    ONTAP: 'Failed to create the volume on node "...". Reason: Request to create volume
    "thickvol3" failed because there is not enough space in aggregate "aggr1". Either create
    347GB of free space in the aggregate or select a size of at most 54.9GB for the new
    volume.'); growing a volume uses the same reason in `volume modify`'s 'Unable to set
    volume attribute' frame (modelled)."""
    if vol.space_guarantee != "volume" or vol.state != "online":
        return
    for name in dict.fromkeys(vol.aggregates):
        ag = c.aggregates[name]
        share = _share(vol, name)
        need = int(vol.size * share)
        avail = ag.size - _aggr_used(c, ag, root, exclude=vol.key)
        if need <= avail:
            continue
        fits = max(0, avail) / share
        if creating:
            raise _fail(f'Failed to create the volume on node "{ag.node}". Reason: Request to '
                        f'create volume "{vol.name}" failed because there is not enough space '
                        f'in aggregate "{name}". Either create {_approx(need - avail, True)} of '
                        f"free space in the aggregate or select a size of at most "
                        f"{_approx(fits, False)} for the new volume.")
        raise _fail(f'Unable to set volume attribute "{attr}" for volume "{vol.name}" on '
                    f'Vserver "{vol.vserver}". Reason: Request to provision volume "{vol.name}" '
                    f'failed because there is not enough space in aggregate "{name}". Either '
                    f"create {_approx(need - avail, True)} of free space in the aggregate or "
                    f"select a size of at most {_approx(fits, False)} for the volume.")


def _object_store_problem(c: state.Cluster, aggrs: list[str], guarantee: str) -> str | None:
    # FabricPool: 'Aggregates with attached object stores cannot contain volumes with a
    # guarantee other than "none".' (ONTAP 9 transcript on FSx for ONTAP, whose aggregates
    # have an object store attached).
    if guarantee != "none" and any(c.aggregates[a].object_store for a in aggrs):
        return ('Aggregates with attached object stores cannot contain volumes with a '
                'guarantee other than "none".')
    return None


def _default_guarantee(c: state.Cluster, aggrs: list[str]) -> str:
    # ONTAP's default is "volume" (thick) except where an object store forbids it; on AFF
    # systems it is "none" ("The -space-guarantee option defaults to none for AFF systems
    # ... Otherwise, it defaults to volume.", Configure volume provisioning options,
    # https://docs.netapp.com/us-en/ontap/san-admin/configure-volume-provisioning-options-task.html).
    # The lab cluster is not modelled as an AFF system.
    return "none" if any(c.aggregates[a].object_store for a in aggrs) else "volume"


def _junction_problem(jp: str) -> str | None:
    """ONTAP: a junction "Path must begin with '/' and must not end with '/'" (ONTAP REST API
    reference, Volume.nas.path); empty, "." and ".." components and control characters are
    refused too (modelled), and so is a path longer than 255 characters (FSx for ONTAP's
    JunctionPath limit)."""
    if not jp.startswith("/"):
        return f'Invalid junction path "{jp}". Junction paths must begin with "/".'
    if jp == "/":
        return None
    if jp.endswith("/"):
        return f'Invalid junction path "{jp}". Junction paths must not end with "/".'
    if len(jp) > 255 or any(p in ("", ".", "..") for p in jp[1:].split("/")) or \
            any(ord(ch) < 32 or ord(ch) == 127 for ch in jp):
        return (f'Invalid junction path "{_printable(jp)}". Each component must be a name: no '
                'empty, "." or ".." components, no control characters, at most 255 characters.')
    return None


def _printable(text: str) -> str:
    return text.encode("unicode_escape").decode("ascii")


def _check_junction(c: state.Cluster, vs: state.Vserver, jp: str) -> None:
    problem = _junction_problem(jp)
    if problem:
        raise _fail(problem)
    for other in c.volumes.values():
        if other.vserver == vs.name and other.junction_path == jp:
            raise _fail(f'Junction path "{jp}" is already in use by volume "{other.name}" '
                        f'in Vserver "{vs.name}".')


def _check_snapshot_policy(vs: state.Vserver, pol: str) -> None:
    if pol not in SNAPSHOT_POLICIES:
        raise _fail(f'Snapshot policy "{pol}" does not exist in Vserver "{vs.name}". The '
                    f"policies of a new cluster are: {', '.join(SNAPSHOT_POLICIES)}.")


def _check_percent(p: int) -> None:
    if p > 90:
        # modelled: ONTAP keeps the snapshot reserve well below the whole volume
        raise _fail(f'The value "{p}" for "-percent-snapshot-space" is out of range: use 0 '
                    "to 90.")


@command("volume create", VOLUME_CREATE, help="Create a new volume")
def volume_create(ctx, a):
    with state.transaction(ctx.root) as c:
        vs = _vserver(c, a.get("vserver"))
        name = a["volume"]
        if "aggregate" in a and "aggr-list" in a:
            raise _fail('Parameters "-aggregate" and "-aggr-list" cannot be specified together.')
        if "aggregate" not in a and "aggr-list" not in a:
            raise CliError("Error: Missing required parameter: -aggregate")
        if "aggr-list-multiplier" in a and "aggr-list" not in a:
            raise _fail('"-aggr-list-multiplier" requires "-aggr-list".')
        flexgroup = "aggr-list" in a
        if flexgroup and state.name_problem("volume", name, flexgroup=True):
            raise CliError(f'Error: "{name}" is an invalid value for field "-volume <volume '
                           f'name>"\n       '
                           + state.name_problem("volume", name, flexgroup=True))
        aggrs = a.get("aggr-list") or [a["aggregate"]]
        for ag in aggrs:
            if ag not in c.aggregates:
                raise _fail(f'Aggregate "{ag}" does not exist.')
        if f"{vs.name}:{name}" in c.volumes:
            raise _fail(f'Duplicate volume name "{name}".')
        mult = a.get("aggr-list-multiplier", DEFAULT_MULTIPLIER if flexgroup else 1)
        if flexgroup and not 1 <= mult <= 200:
            # FSx for ONTAP's ConstituentsPerAggregate range, 1 to 200 (modelled for ONTAP)
            raise _fail(f'The value "{mult}" for "-aggr-list-multiplier" is out of range: use '
                        "1 to 200.")
        guarantee = a.get("space-guarantee") or _default_guarantee(c, aggrs)
        problem = _object_store_problem(c, aggrs, guarantee)
        if problem:
            raise _fail(problem)
        if a.get("vsroot"):
            raise _fail(f'Vserver "{vs.name}" already has a root volume '
                        f'("{vs.root_volume}"); a Vserver has exactly one.')
        if a.get("encrypt"):
            raise _fail("Volume encryption requires the Onboard Key Manager or an external "
                        "key manager, and none is configured.")
        qos = a.get("qos-policy-group")
        if qos is not None and qos != "none":
            raise _fail(f'Policy group "{qos}" does not exist.')
        policy = a.get("policy", "default")
        if policy not in vs.export_policies:
            raise _fail(f'Export policy "{policy}" does not exist in Vserver "{vs.name}".')
        snap = a.get("snapshot-policy", "default")
        _check_snapshot_policy(vs, snap)
        _check_percent(a.get("percent-snapshot-space", 5))
        jp = a.get("junction-path")
        if jp is not None:
            _check_junction(c, vs, jp)
        perms = _check_perms(a.get("unix-permissions", "---rwxr-xr-x"))
        vol = state.Volume(
            name=name, vserver=vs.name, aggregates=aggrs, size=0, junction_path=jp,
            is_preserve_unlink_enabled=a.get("is-preserve-unlink-enabled", False),
            state=a.get("state", "online"), style="flexgroup" if flexgroup else "flexvol",
            security_style=a.get("security-style", "unix"), export_policy=policy,
            space_guarantee=guarantee, uuid=str(_uuid.uuid4()),
            type=a.get("type", "RW"), unix_permissions=_perm_string(_mode(perms)),
            snapshot_policy=snap, percent_snapshot_space=a.get("percent-snapshot-space", 5),
            aggr_list_multiplier=mult, junction_active=a.get("junction-active", True),
            comment=a.get("comment", ""), is_vsroot=False)
        # Without -size: ONTAP's documented 20MB default, per constituent for a FlexGroup.
        vol.size = space.round_4k(a["size"]) if "size" in a else MIN_FLEXVOL * _constituents(vol)
        problem = _size_problem(vol, vol.size)
        if problem:
            raise _fail(f'Unable to set volume attribute "size" for volume "{name}" on '
                        f'Vserver "{vs.name}". Reason: {problem}')
        _check_space(c, vol, ctx.root, creating=True)
        state.make_backing_dir(vol, ctx.root, _mode(perms))
        c.volumes[vol.key] = vol
        # A REST request runs as its own job (rest_resources.run_job): one job, one number.
        return _job(c, f"Create {name}") if getattr(ctx, "jobs", True) else ""


VOL_SELECT = [P("vserver", "query", positional=True, help="Vserver Name"),
              P("volume", "query", positional=True, required=True, help="Volume Name")]


def _targets(c, a) -> list[state.Volume]:
    vsq = a.get("vserver")
    if vsq is None:
        vsq = _vserver(c, None).name
    vols = [v for v in c.volumes.values()
            if match_query(v.vserver, vsq) and match_query(v.name, a["volume"])]
    if not vols:
        if not any(match_query(v.name, vsq) for v in c.vservers.values()):
            raise CliError(f'Error: Vserver "{vsq}" does not exist.')
        raise CliError("Error: There are no entries matching your query.")
    return sorted(vols, key=lambda v: (v.vserver, v.name))


def _resize(c: state.Cluster, vol: state.Volume, rel: tuple[int, str | None], root) -> None:
    n, sign = rel
    new = vol.size + n if sign == "+" else vol.size - n if sign == "-" else n
    new = space.round_4k(max(0, new))
    problem = _size_problem(vol, new)
    if problem:
        raise _fail(f'Unable to set volume attribute "size" for volume "{vol.name}" on Vserver '
                    f'"{vol.vserver}". Reason: {problem}')
    if new < _used(vol, root):
        raise _fail(f'Unable to set volume attribute "size" for volume "{vol.name}" on Vserver '
                    f'"{vol.vserver}". Reason: New size is smaller than the used space.')
    old = vol.size
    vol.size = new
    if vol.autosize_maximum and new > vol.autosize_maximum:
        vol.autosize_maximum = space.round_4k(int(new * 1.2))
    if new > old:
        _check_space(c, vol, root, creating=False)


def _vsroot_refusal(vol: state.Volume, new_state: str, many: bool) -> CliError:
    # Modelled: ONTAP keeps a Vserver's root volume (its namespace "/") online; a query that
    # also matches other volumes can exclude it with ONTAP's "!" query operator.
    hint = f' To change the others, leave it out of the query: -volume !{vol.name}' if many else ""
    return _fail(f'Unable to set volume attribute "state" for volume "{vol.name}" on Vserver '
                 f'"{vol.vserver}". Reason: Volume "{vol.name}" is the root volume of Vserver '
                 f'"{vol.vserver}" and cannot be made {new_state}: every other volume of the '
                 f"Vserver is reached through it.{hint}")


@command("volume modify", VOL_SELECT + [
    P("size", "relsize", help="Volume Size"),
    P("state", "enum", choices=("online", "restricted", "offline"), help="Volume State"),
    P("policy", "name", name_kind="export-policy", help="Export Policy"),
    P("unix-permissions", help="UNIX Permissions", placeholder="<unix perm>"),
    P("security-style", "enum", choices=("unix", "ntfs", "mixed"), help="Security Style"),
    P("space-guarantee", "enum", choices=("none", "volume"), help="Space Guarantee Style"),
    P("snapshot-policy", "name", name_kind="snapshot-policy", help="Snapshot Policy"),
    P("percent-snapshot-space", "int", help="Space Reserved for Snapshot Copies"),
    P("comment", help="Comment"),
    P("is-preserve-unlink-enabled", "bool", privilege="advanced", help="Is Preserve Unlink Enabled"),
], help="Modify volume attributes")
def volume_modify(ctx, a):
    """All or nothing (modelled): every matched volume is checked and changed in memory
    first; the state is saved, and directory modes set, only if all of them succeed."""
    with state.transaction(ctx.root) as c:
        vols = _targets(c, a)
        chmods: list[tuple[state.Volume, int]] = []
        for vol in vols:
            vs = c.vservers[vol.vserver]
            if "state" in a and a["state"] != "online" and vol.is_vsroot:
                raise _vsroot_refusal(vol, a["state"], len(vols) > 1)
            if "policy" in a and a["policy"] not in vs.export_policies:
                raise _fail(f'Export policy "{a["policy"]}" does not exist in Vserver '
                            f'"{vs.name}".')
            if "snapshot-policy" in a:
                _check_snapshot_policy(vs, a["snapshot-policy"])
            if "percent-snapshot-space" in a:
                _check_percent(a["percent-snapshot-space"])
            if "space-guarantee" in a:
                problem = _object_store_problem(c, vol.aggregates, a["space-guarantee"])
                if problem:
                    raise _fail(problem)
            if "unix-permissions" in a:
                m = _mode(_check_perms(a["unix-permissions"]))
                vol.unix_permissions = _perm_string(m)
                chmods.append((vol, m))
            if "policy" in a:
                vol.export_policy = a["policy"]
            for k, attr in (("security-style", "security_style"), ("comment", "comment"),
                            ("snapshot-policy", "snapshot_policy"),
                            ("percent-snapshot-space", "percent_snapshot_space"),
                            ("is-preserve-unlink-enabled", "is_preserve_unlink_enabled")):
                if k in a:
                    setattr(vol, attr, a[k])
            # Space: a bigger size, a guarantee switched on, or bringing a thick volume
            # online all need the aggregate to hold the whole volume.
            if "state" in a or "space-guarantee" in a:
                vol.state = a.get("state", vol.state)
                vol.space_guarantee = a.get("space-guarantee", vol.space_guarantee)
                _check_space(c, vol, ctx.root, creating=False,
                             attr="state" if "state" in a else "space-guarantee")
            if "size" in a:
                _resize(c, vol, a["size"], ctx.root)
        for vol, m in chmods:
            state.chmod_backing_dir(vol, ctx.root, m)
        if len(vols) == 1:
            return (f"Volume modify successful on volume {vols[0].name} of Vserver "
                    f"{vols[0].vserver}.")
        return f"{len(vols)} entries were modified."


VOL_ONE = [P("vserver", "name", positional=True, name_kind="vserver", help="Vserver Name"),
           P("volume", "name", positional=True, required=True, name_kind="volume",
             help="Volume Name")]


@command("volume size", VOL_ONE + [P("new-size", "relsize", positional=True,
                                     help="[+|-]<New Size>")],
         help="Set/Display the size of the volume.")
def volume_size(ctx, a):
    with state.transaction(ctx.root) as c:
        vs = _vserver(c, a.get("vserver"))
        vol = _volume(c, vs.name, a["volume"])
        if "new-size" not in a:
            return f'vol size: Volume "{vol.key}" has size {units.format_size(vol.size, True)}.'
        _resize(c, vol, a["new-size"], ctx.root)
        return f'vol size: Volume "{vol.key}" size set to {units.format_size(vol.size, True)}.'


# ONTAP: `volume autosize -vserver V -volume vol [-maximum-size S] [-minimum-size S]
# [-grow-threshold-percent N] [-shrink-threshold-percent N] [-mode {off|grow|grow_shrink}]
# [-reset true]`; with only the volume named it shows the settings. The maximum defaults to
# 120% of the volume size; the grow threshold's default depends on the volume size (85% to
# 98%). How the lab applies it (tr4947.lab.nfs4state.apply_autosize): when the used space
# passes the threshold, the volume grows toward the maximum, as ONTAP's "grow on use" does.
# The display text is modelled on ONTAP's.
@command("volume autosize", VOL_ONE + [
    P("maximum-size", "size", help="Maximum Autosize"),
    P("minimum-size", "size", help="Minimum Autosize"),
    P("grow-threshold-percent", "int", help="Autosize Grow Threshold Percentage"),
    P("shrink-threshold-percent", "int", help="Autosize Shrink Threshold Percentage"),
    P("mode", "enum", choices=("off", "grow", "grow_shrink"), help="Autosize Mode"),
    P("reset", "bool", help="Autosize Reset")],
    help="Set/Display the autosize settings of the flexible volume.")
def volume_autosize(ctx, a):
    with state.transaction(ctx.root) as c:
        vs = _vserver(c, a.get("vserver"))
        vol = _volume(c, vs.name, a["volume"])
        changes = set(a) - {"vserver", "volume"}
        if not changes:
            maximum, thr = space.autosize_defaults(vol)
            if vol.autosize_mode == "off":
                return f'Volume autosize is currently OFF for volume "{vol.key}".'
            return (f'Volume autosize is currently ON for volume "{vol.key}".\n'
                    f"The volume is set to grow to a maximum of "
                    f"{units.format_size(maximum, True)} when the volume-used space is above "
                    f"{thr}%.\n"
                    f"Volume autosize for volume '{vol.key}' is currently in mode "
                    f"{vol.autosize_mode}.")
        if a.get("reset"):
            vol.autosize_mode, vol.autosize_maximum, vol.autosize_minimum = "off", 0, 0
            vol.autosize_grow_threshold, vol.autosize_shrink_threshold = 0, 50
        for k in ("grow-threshold-percent", "shrink-threshold-percent"):
            if k in a and not 1 <= a[k] <= 100:
                raise _fail(f'The value for "-{k}" must be between 1 and 100.')
        grow = a.get("grow-threshold-percent", vol.autosize_grow_threshold)
        shrink = a.get("shrink-threshold-percent", vol.autosize_shrink_threshold)
        if grow and grow <= shrink:
            raise _fail("The grow threshold must be greater than the shrink threshold.")
        if "maximum-size" in a:
            if a["maximum-size"] < vol.size:
                raise _fail(f'Unable to set volume attribute "max-autosize" for volume '
                            f'"{vol.name}" on Vserver "{vol.vserver}". Reason: Maximum autosize '
                            "cannot be less than the current volume size.")
            problem = _size_problem(vol, space.round_4k(a["maximum-size"]))
            if problem:
                raise _fail(problem)
            vol.autosize_maximum = space.round_4k(a["maximum-size"])
        if "minimum-size" in a:
            vol.autosize_minimum = space.round_4k(a["minimum-size"])
        if "mode" in a:
            if a["mode"] != "off" and not vol.autosize_maximum:
                vol.autosize_maximum = space.round_4k(int(vol.size * 1.2))
            vol.autosize_mode = a["mode"]
        vol.autosize_grow_threshold, vol.autosize_shrink_threshold = grow, shrink
        return ""


def _set_state(ctx, a, new_state: str) -> str:
    with state.transaction(ctx.root) as c:
        vs = _vserver(c, a.get("vserver"))
        vol = _volume(c, vs.name, a["volume"])
        if vol.is_vsroot and new_state != "online":
            raise _vsroot_refusal(vol, new_state, False)
        vol.state = new_state
        _check_space(c, vol, ctx.root, creating=False, attr="state")
        return f'Volume "{vol.key}" is now {new_state}.'


@command("volume offline", VOL_ONE, help="Take an existing volume offline")
def volume_offline(ctx, a):
    return _set_state(ctx, a, "offline")


@command("volume online", VOL_ONE, help="Bring an existing volume online")
def volume_online(ctx, a):
    return _set_state(ctx, a, "online")


def _lab_mounts_of(root, key: str) -> list[str]:
    from .. import storage
    try:
        mounts = storage.list_mounts(root=root)
    except (OSError, ValueError):
        mounts = []
    return [m.mountpoint for m in mounts if m.volume == key]


def delete_volume(root, c: state.Cluster, vol: state.Volume) -> None:
    """Remove a volume from the state and its own backing dir (nothing else). Refused for
    a Vserver's root volume and while a lab client still has it mounted (its data would
    vanish under a live mount)."""
    if vol.is_vsroot:
        raise _fail(f'Cannot delete Vserver root volume "{vol.name}".')
    mounted = _lab_mounts_of(root, vol.key)
    if mounted:
        raise _fail(f'Volume "{vol.name}" in Vserver "{vol.vserver}" is mounted by lab clients '
                    f"at {', '.join(mounted)}; unmount it first.")
    state.backing_dir(vol, root)               # refuses before anything changes
    c.volumes.pop(vol.key, None)
    state.remove_backing_dir(vol, root)


def _delete_confirm(args, ctx):
    if not ctx.confirmations:
        return None
    return (f'Warning: Are you sure you want to delete volume "{args["volume"]}" in Vserver '
            f'"{args.get("vserver") or "-"}" ? {{y|n}}: ')


@command("volume delete", VOL_ONE, help="Delete an existing volume", confirm=_delete_confirm)
def volume_delete(ctx, a):
    with state.transaction(ctx.root) as c:
        vs = _vserver(c, a.get("vserver"))
        vol = _volume(c, vs.name, a["volume"])
        if vol.state != "offline" and not vol.is_vsroot:
            # modelled on ONTAP, which deletes only offline volumes from the clustershell
            raise _fail(f'Volume "{vol.name}" in Vserver "{vs.name}" must be offline to be '
                        f'deleted: run "volume unmount" and "volume offline" first.')
        delete_volume(ctx.root, c, vol)
        return _job(c, f"Delete {vol.name}")


@command("volume mount", [P("vserver", "name", name_kind="vserver", help="Vserver Name"),
                          P("volume", "name", required=True, name_kind="volume",
                            help="Volume Name"),
                          P("junction-path", required=True, help="Junction Path Of The Mounting Volume",
                            placeholder="<junction path>"),
                          P("active", "bool", help="Activate Junction Path"),
                          P("policy-override", "bool", help="Override The Export Policy")],
         help="Mount a volume on another volume with a junction-path")
def volume_mount(ctx, a):
    with state.transaction(ctx.root) as c:
        vs = _vserver(c, a.get("vserver"))
        vol = _volume(c, vs.name, a["volume"])
        jp = a["junction-path"]
        if vol.junction_path:
            raise _fail(f'Volume "{vol.name}" in Vserver "{vs.name}" is already mounted at '
                        f'"{vol.junction_path}".')
        _check_junction(c, vs, jp)
        vol.junction_path = jp
        vol.junction_active = a.get("active", True)
        return ""


@command("volume unmount", [P("vserver", "name", name_kind="vserver", help="Vserver Name"),
                            P("volume", "name", required=True, name_kind="volume",
                              help="Volume Name")],
         help="Unmount a volume")
def volume_unmount(ctx, a):
    with state.transaction(ctx.root) as c:
        vs = _vserver(c, a.get("vserver"))
        vol = _volume(c, vs.name, a["volume"])
        if vol.is_vsroot:
            # modelled: the root volume is the Vserver's namespace "/"
            raise _fail(f'Volume "{vol.name}" is the root volume of Vserver "{vs.name}" and '
                        "cannot be unmounted.")
        if not vol.junction_path:
            raise _fail(f'Volume "{vol.name}" in Vserver "{vs.name}" is not mounted.')
        vol.junction_path = None
        return ""


def _vol_fields(ctx) -> dict[str, tuple]:
    used_cache: dict[str, int] = {}
    meas_cache: dict[str, space.Measurement] = {}

    def used(v):
        if v.key not in used_cache:
            used_cache[v.key] = _used(v, ctx.root)
        return used_cache[v.key]

    def meas(v):
        # Efficiency fields: measured from the volume's data, only when asked for (it reads
        # every block), with the volume's own efficiency settings.
        if v.key not in meas_cache:
            on = v.efficiency_state == "enabled"
            meas_cache[v.key] = space.measure(state.backing_dir(v, ctx.root),
                                              dedupe=on and v.inline_dedupe,
                                              compression=on and v.compression)
        return meas_cache[v.key]

    def saved(v):
        m = meas(v)
        return m.dedupe_saved + m.compression_saved
    return {
        "vserver": ("Vserver Name", lambda v: v.vserver, "admin"),
        "volume": ("Volume Name", lambda v: v.name, "admin"),
        "aggregate": ("Aggregate Name", _aggr_of, "admin"),
        "aggr-list": ("List of Aggregates for FlexGroup Constituents",
                      lambda v: ",".join(v.aggregates) if v.style == "flexgroup" else "-", "admin"),
        "size": ("Volume Size", lambda v: units.format_size(v.size), "admin"),
        "available": ("Available Size", lambda v: units.format_size(_avail(v, used(v))), "admin"),
        "used": ("Used Size", lambda v: units.format_size(used(v)), "admin"),
        "percent-used": ("Used Percentage", lambda v: _pct(v, used(v)), "admin"),
        # `volume autosize` as in effect: the maximum and grow threshold ONTAP applies when
        # none was set (120% of the size; 85-98% by size, see autosize_defaults).
        "autosize-mode": ("Autosize Mode", lambda v: v.autosize_mode, "admin"),
        "max-autosize": ("Maximum Autosize",
                         lambda v: units.format_size(space.autosize_defaults(v)[0]), "admin"),
        "autosize-grow-threshold-percent": ("Autosize Grow Threshold Percentage",
                                            lambda v: f"{space.autosize_defaults(v)[1]}%", "admin"),
        "state": ("Volume State", lambda v: v.state, "admin"),
        "type": ("Volume Type", lambda v: v.type, "admin"),
        "volume-style-extended": ("Volume Style Extended", lambda v: v.style, "admin"),
        "constituent-count": ("Constituent Volume Count", lambda v: str(
            len(v.aggregates) * v.aggr_list_multiplier) if v.style == "flexgroup" else "-", "admin"),
        "junction-path": ("Junction Path", lambda v: v.junction_path or "-", "admin"),
        "junction-active": ("Junction Active", lambda v: _bool(v.junction_active)
                            if v.junction_path else "-", "admin"),
        "policy": ("Export Policy", lambda v: v.export_policy, "admin"),
        "security-style": ("Security Style", lambda v: v.security_style, "admin"),
        "unix-permissions": ("UNIX Permissions", lambda v: v.unix_permissions, "admin"),
        "space-guarantee": ("Space Guarantee Style", lambda v: v.space_guarantee, "admin"),
        "snapshot-policy": ("Snapshot Policy", lambda v: v.snapshot_policy, "admin"),
        "percent-snapshot-space": ("Space Reserved for Snapshot Copies",
                                   lambda v: f"{v.percent_snapshot_space}%", "admin"),
        "comment": ("Comment", lambda v: v.comment or "", "admin"),
        "uuid": ("Volume Instance UUID", lambda v: v.uuid, "admin"),
        "logical-used": ("Logical Used Size", lambda v: units.format_size(
            v.logical_used if v.logical_used is not None else space.logical_bytes(
                state.backing_dir(v, ctx.root))), "admin"),
        "physical-used": ("Physical Used Size", lambda v: units.format_size(meas(v).physical),
                          "admin"),
        "sis-space-saved": ("Space Saved by Storage Efficiency",
                            lambda v: units.format_size(saved(v)), "admin"),
        "sis-space-saved-percent": ("Percentage Saved by Storage Efficiency", lambda v: (
            f"{saved(v) * 100 // (meas(v).physical + saved(v))}%"
            if meas(v).physical + saved(v) else "0%"), "admin"),
        "dedupe-space-saved": ("Space Saved by Deduplication",
                               lambda v: units.format_size(meas(v).dedupe_saved), "admin"),
        "compression-space-saved": ("Space Saved by Compression",
                                    lambda v: units.format_size(meas(v).compression_saved), "admin"),
        "is-preserve-unlink-enabled": ("Is Preserve Unlink Enabled",
                                       lambda v: _bool(v.is_preserve_unlink_enabled), "advanced"),
    }


@command("volume show", [P("vserver", "query", positional=True, help="Vserver Name"),
                         P("volume", "query", positional=True, help="Volume Name"),
                         P("aggregate", "query", help="Aggregate Name"),
                         P("state", "query", help="Volume State"),
                         P("type", "query", help="Volume Type"),
                         P("junction-path", "query", help="Junction Path"),
                         P("policy", "query", help="Export Policy"),
                         P("volume-style-extended", "query", help="Volume Style Extended"),
                         P("is-preserve-unlink-enabled", "query", privilege="advanced",
                           help="Is Preserve Unlink Enabled"),
                         P("fields", "fields", help="Fields to display"),
                         P("instance", "flag", help="Display all fields")],
         help="Display a list of volumes")
def volume_show(ctx, a):
    c = state.load(ctx.root)
    reg = _vol_fields(ctx)
    vols = sorted(c.volumes.values(), key=lambda v: (v.vserver, v.name))
    vols = _filter(vols, a, {k: (lambda v, g=g: g[1](v)) for k, g in reg.items()}
                   | {"vserver": lambda v: v.vserver, "volume": lambda v: v.name})

    def default(rows):
        cols = [Col("Vserver", 9), Col("Volume", 12), Col("Aggregate", 12), Col("State", 10),
                Col("Type", 4), Col("Size", 10, True), Col("Available", 10, True),
                Col("Used%", 5, True)]
        return render.table(cols, [[reg[k][1](v) for k in ("vserver", "volume", "aggregate",
                                    "state", "type", "size", "available", "percent-used")]
                                   for v in rows])
    return _show(vols, a, ctx, reg, ["vserver", "volume"], default)


# --- volume efficiency ------------------------------------------------------------------------
EFF_SELECT = VOL_ONE


def _eff_target(c, a) -> state.Volume:
    vs = _vserver(c, a.get("vserver"))
    return _volume(c, vs.name, a["volume"])


@command("volume efficiency on", EFF_SELECT, help="Enable efficiency on a volume")
def eff_on(ctx, a):
    with state.transaction(ctx.root) as c:
        vol = _eff_target(c, a)
        vol.efficiency_state = "enabled"
        return f'Efficiency for volume "{vol.name}" of Vserver "{vol.vserver}" is enabled.'


@command("volume efficiency off", EFF_SELECT, help="Disable efficiency on a volume")
def eff_off(ctx, a):
    with state.transaction(ctx.root) as c:
        vol = _eff_target(c, a)
        vol.efficiency_state = "disabled"
        return f'Efficiency for volume "{vol.name}" of Vserver "{vol.vserver}" is disabled.'


@command("volume efficiency modify", EFF_SELECT + [
    P("policy", help="Efficiency Policy Name"),
    P("compression", "bool", help="Compression"),
    P("inline-compression", "bool", help="Inline Compression"),
    P("inline-dedupe", "bool", help="Inline Dedupe"),
    P("data-compaction", "bool", help="Data Compaction"),
    P("cross-volume-inline-dedupe", "bool", help="Cross Volume Inline Deduplication"),
    P("cross-volume-background-dedupe", "bool", help="Cross Volume Background Deduplication"),
], help="Modify the efficiency configuration of a volume")
def eff_modify(ctx, a):
    with state.transaction(ctx.root) as c:
        vol = _eff_target(c, a)
        if vol.efficiency_state != "enabled" and any(
                a.get(k) for k in ("compression", "inline-compression", "inline-dedupe")):
            raise _fail(f'Efficiency is not enabled on volume "{vol.name}" of Vserver '
                        f'"{vol.vserver}". Use "volume efficiency on" to enable it.')
        if "inline-compression" in a:
            vol.compression = a["inline-compression"]
        if "compression" in a and not a["compression"]:
            vol.compression = False
        if "inline-dedupe" in a:
            vol.inline_dedupe = a["inline-dedupe"]
        if "policy" in a:
            vol.efficiency_policy = a["policy"]
        return ""


def _measure(ctx, vols: list[state.Volume]) -> dict[str, space.Measurement]:
    """Measure the volumes' data and record the numbers in the state."""
    out = {}
    for v in vols:
        on = v.efficiency_state == "enabled"
        out[v.key] = space.measure(state.backing_dir(v, ctx.root),
                                   dedupe=on and v.inline_dedupe, compression=on and v.compression)
    with state.transaction(ctx.root) as c:
        for k, m in out.items():
            if k in c.volumes:
                c.volumes[k].logical_used = m.logical
                c.volumes[k].physical_used = m.physical
                c.volumes[k].efficiency_measured_at = _dt.datetime.now().isoformat(timespec="seconds")
    return out


@command("volume efficiency show", [P("vserver", "query", positional=True, help="Vserver Name"),
                                    P("volume", "query", positional=True, help="Volume Name"),
                                    P("fields", "fields", help="Fields to display"),
                                    P("instance", "flag", help="Display all fields")],
         help="Display a list of volumes with efficiency")
def eff_show(ctx, a):
    c = state.load(ctx.root)
    vols = sorted(c.volumes.values(), key=lambda v: (v.vserver, v.name))
    vols = _filter(vols, a, {"vserver": lambda v: v.vserver, "volume": lambda v: v.name})
    need = "fields" in a or a.get("instance")
    meas = _measure(ctx, vols) if need else {}

    def m(v, attr):
        return units.format_size(getattr(meas[v.key], attr)) if v.key in meas else "-"
    reg = {
        "vserver": ("Vserver Name", lambda v: v.vserver, "admin"),
        "volume": ("Volume Name", lambda v: v.name, "admin"),
        "state": ("State", lambda v: v.efficiency_state.capitalize(), "admin"),
        "policy": ("Efficiency Policy Name", lambda v: v.efficiency_policy, "admin"),
        "compression": ("Compression", lambda v: _bool(v.compression), "admin"),
        "inline-compression": ("Inline Compression", lambda v: _bool(v.compression), "admin"),
        "inline-dedupe": ("Inline Dedupe", lambda v: _bool(v.inline_dedupe), "admin"),
        "logical-data-size": ("Logical Data Size", lambda v: m(v, "logical"), "admin"),
        "physical-used": ("Physical Used", lambda v: m(v, "physical"), "admin"),
    }

    def default(rows):
        cols = [Col("Vserver", 10), Col("Volume", 16), Col("State", 9), Col("Status", 10),
                Col("Progress", 18), Col("Policy", 10)]
        return render.table(cols, [[v.vserver, v.name, v.efficiency_state.capitalize(),
                                    "Idle" if v.efficiency_state == "enabled" else "-",
                                    "Idle for 00:00:00" if v.efficiency_state == "enabled" else "-",
                                    v.efficiency_policy if v.efficiency_state == "enabled" else "-"]
                                   for v in rows])
    return _show(vols, a, ctx, reg, ["vserver", "volume"], default)


# --- storage aggregate ------------------------------------------------------------------------
def _aggr_used(c, ag: state.Aggregate, root, exclude: str | None = None) -> int:
    """Bytes of the aggregate taken by its volumes (``exclude``: a volume key left out):
    each online volume with a "volume" space guarantee reserves its whole size (its share
    of it for a FlexGroup's constituents), every other volume takes the bytes written to it.
    As in ONTAP, a reservation counts as used space of the aggregate."""
    return sum(_footprint(v, ag.name, root) for v in c.volumes.values()
               if v.key != exclude and ag.name in v.aggregates)


@command("storage aggregate show", [P("aggregate", "query", positional=True, help="Aggregate"),
                                    P("fields", "fields", help="Fields to display"),
                                    P("instance", "flag", help="Display all fields")],
         help="Display a list of aggregates")
def aggr_show(ctx, a):
    c = state.load(ctx.root)
    aggrs = [c.aggregates[k] for k in sorted(c.aggregates)]
    aggrs = _filter(aggrs, a, {"aggregate": lambda g: g.name})

    def nvols(g):
        return str(sum(1 for v in c.volumes.values() if g.name in v.aggregates))
    reg = {"aggregate": ("Aggregate", lambda g: g.name, "admin"),
           # ONTAP's Nodes column and -node field: the current owner (the partner during
           # a takeover); home-name/owner-name tell the two apart.
           "node": ("Node", lambda g: g.current_node, "admin"),
           "home-name": ("Home Name", lambda g: g.node, "admin"),
           "owner-name": ("Owner Name", lambda g: g.current_node, "admin"),
           "size": ("Size", lambda g: units.format_size(g.size), "admin"),
           "availsize": ("Available", lambda g: units.format_size(g.size - _aggr_used(c, g, ctx.root)), "admin"),
           "percent-used": ("Used Percentage", lambda g: f"{int(_aggr_used(c, g, ctx.root) * 100 / g.size)}%", "admin"),
           "state": ("State", lambda g: "online", "admin"),
           "volcount": ("Number Of Volumes", nvols, "admin"),
           "raidstatus": ("RAID Status", lambda g: "raid_dp, normal", "admin")}

    def default(rows):
        cols = [Col("Aggregate", 9), Col("Size", 8, True), Col("Available", 9, True),
                Col("Used%", 5, True), Col("State", 7), Col("#Vols", 6, True),
                Col("Nodes", 16), Col("RAID Status", 12)]
        return render.table(cols, [[reg[k][1](g) for k in ("aggregate", "size", "availsize",
                                    "percent-used", "state", "volcount", "node", "raidstatus")]
                                   for g in rows])
    return _show(aggrs, a, ctx, reg, ["aggregate"], default)


@command("storage aggregate show-efficiency", [
    P("aggregate", "query", positional=True, help="Name of the Aggregate"),
    P("details", "flag", help="Display details"), P("advanced", "flag", help="Display advanced"),
    P("instance", "flag", help="Display all fields")],
    help="Display aggregate storage efficiency details")
def aggr_eff(ctx, a):
    c = state.load(ctx.root)
    aggrs = [c.aggregates[k] for k in sorted(c.aggregates)]
    aggrs = _filter(aggrs, a, {"aggregate": lambda g: g.name})
    if not aggrs:
        return render.none_found()
    meas = _measure(ctx, list(c.volumes.values()))
    blocks = []
    for g in aggrs:
        logical = physical = 0
        for v in c.volumes.values():
            if g.name in v.aggregates:
                share = 1 / len(v.aggregates)
                logical += meas[v.key].logical * share
                physical += meas[v.key].physical * share
        ratio = f"{(logical / physical) if physical else 1.0:.2f}:1"
        # ONTAP: naming one aggregate (-aggregate) also shows its detailed view.
        if a.get("instance") or a.get("details") or a.get("advanced") or a.get("aggregate"):
            blocks.append("\n".join([
                f"Name of the Aggregate: {g.name}",
                f"Node where Aggregate Resides: {g.node}",
                f"Total Storage Efficiency Ratio: {ratio}",
                f"Total Data Reduction Efficiency Ratio Without Snapshots: {ratio}",
                f"Total Data Reduction Efficiency Ratio without snapshots and flexclones: {ratio}",
                f"Logical Space Used for All Volumes: {units.format_size(int(logical))}",
                f"Physical Space Used for All Volumes: {units.format_size(int(physical))}"]))
        else:
            blocks.append(f"Aggregate: {g.name}\n     Node: {g.node}\n\n"
                          f"Total Data Reduction Efficiency Ratio: {ratio}\n"
                          f"Total Storage Efficiency Ratio:        {ratio}")
    return "\n\n".join(blocks) + render.entries(len(blocks))


@command("df", [P("filesys", "query", positional=True, help="File System Name"),
                P("vserver", "query", help="Vserver"), P("volume", "query", help="Volume"),
                P("h", "flag", help="Human-Readable Sizes"),
                P("S", "flag", help="Show Space Savings (deprecated)")],
         help="Display free disk space")
def df_cmd(ctx, a):
    c = state.load(ctx.root)
    vols = sorted(c.volumes.values(), key=lambda v: (v.vserver, v.name))
    vols = _filter(vols, a, {"vserver": lambda v: v.vserver, "volume": lambda v: v.name,
                             "filesys": lambda v: f"/vol/{v.name}/"})
    if not vols:
        return render.none_found()
    fmt = units.format_size if a.get("h") else (lambda n: str(int(n) // 1024) + "KB")
    if a.get("S"):
        meas = _measure(ctx, vols)
        cols = [Col("Filesystem", 20), Col("used", 8, True), Col("total-saved", 11, True),
                Col("%total-saved", 12, True), Col("deduplicated", 12, True),
                Col("%deduplicated", 13, True), Col("compressed", 10, True),
                Col("%compressed", 11, True), Col("Vserver", 12)]
        rows = []
        for v in vols:
            m = meas[v.key]
            saved = m.dedupe_saved + m.compression_saved
            tot = m.physical + saved or 1
            rows.append([f"/vol/{v.name}/", fmt(m.physical), fmt(saved), f"{saved * 100 // tot}%",
                         fmt(m.dedupe_saved), f"{m.dedupe_saved * 100 // tot}%",
                         fmt(m.compression_saved), f"{m.compression_saved * 100 // tot}%", v.vserver])
        return ('Warning: The "-S" parameter is deprecated and may be removed in a future '
                'release. To show the efficiency ratio use "aggr show-efficiency" command.\n\n'
                + render.table(cols, rows))
    cols = [Col("Filesystem", 20), Col("total", 10, True), Col("used", 10, True),
            Col("avail", 10, True), Col("capacity", 8, True), Col("Mounted on", 16),
            Col("Vserver", 12)]
    rows = []
    for v in vols:
        u = _used(v, ctx.root)
        tot = int(v.size * (100 - v.percent_snapshot_space) / 100)
        rows.append([f"/vol/{v.name}/", fmt(tot), fmt(u), fmt(_avail(v, u)), _pct(v, u),
                     v.junction_path or "---", v.vserver])
    return render.table(cols, rows)


# --- vserver ----------------------------------------------------------------------------------
@command("vserver show", [P("vserver", "query", positional=True, help="Vserver"),
                          P("type", "query", help="Vserver Type"),
                          P("fields", "fields", help="Fields to display"),
                          P("instance", "flag", help="Display all fields")],
         help="Display Vservers")
def vserver_show(ctx, a):
    c = state.load(ctx.root)
    vss = sorted(c.vservers.values(), key=lambda v: ({"admin": 0, "node": 1}.get(v.type, 2), v.name))
    vss = _filter(vss, a, {"vserver": lambda v: v.name, "type": lambda v: v.type})
    data = lambda v, s: s if v.type == "data" else "-"   # noqa: E731
    reg = {"vserver": ("Vserver", lambda v: v.name, "admin"),
           "type": ("Vserver Type", lambda v: v.type, "admin"),
           "subtype": ("Vserver Subtype", lambda v: data(v, "default"), "admin"),
           "admin-state": ("Vserver Admin State", lambda v: data(v, "running"), "admin"),
           "operational-state": ("Vserver Operational State", lambda v: data(v, "running"), "admin"),
           "rootvolume": ("Root Volume", lambda v: v.root_volume or "-", "admin"),
           "aggregate": ("Aggregate", lambda v: v.root_aggregate or "-", "admin"),
           "allowed-protocols": ("Allowed Protocols", lambda v: data(v, "nfs"), "admin"),
           "language": ("Language", lambda v: data(v, v.language), "admin"),
           "comment": ("Comment", lambda v: v.comment or "-", "admin"),
           "uuid": ("Vserver UUID", lambda v: v.uuid or "-", "admin")}

    def default(rows):
        cols = [Col("Vserver", 11), Col("Type", 7), Col("Subtype", 10), Col("Admin\nState", 10),
                Col("Operational\nState", 11), Col("Root\nVolume", 10), Col("Aggregate", 10)]
        return render.table(cols, [[reg[k][1](v) for k in ("vserver", "type", "subtype",
                                    "admin-state", "operational-state", "rootvolume", "aggregate")]
                                   for v in rows])
    return _show(vss, a, ctx, reg, ["vserver"], default)


# The real `vserver modify` parameters (ONTAP 9.12). NFS settings such as -v4.1-pnfs and
# -tcp-max-xfer-size belong to `vserver nfs modify`: the TR's AFF-2 line is rejected here
# exactly as ONTAP rejects it.
@command("vserver modify", [P("vserver", "name", required=True, positional=True,
                              name_kind="vserver", help="Vserver"),
                            P("comment", help="Comment"), P("language", help="Default Volume Language Code"),
                            P("snapshot-policy", help="Snapshot Policy"),
                            P("quota-policy", help="Quota Policy"),
                            P("allowed-protocols", "list", help="Allowed Protocols"),
                            P("disallowed-protocols", "list", help="Disallowed Protocols"),
                            P("qos-policy-group", help="QoS Policy Group"),
                            P("max-volumes", help="Limit on Maximum Number of Volumes allowed"),
                            P("aggr-list", "list", help="List of Aggregates Assigned"),
                            P("is-space-reporting-logical", "bool", help="Logical Space Reporting"),
                            P("is-space-enforcement-logical", "bool", help="Logical Space Enforcement"),
                            P("anti-ransomware-default-volume-state", "enum",
                              choices=("disabled", "dry-run"), help="Default Anti_ransomware State of the Vserver's Volumes")],
         help="Modify a Vserver")
def vserver_modify(ctx, a):
    with state.transaction(ctx.root) as c:
        vs = _vserver(c, a["vserver"])
        if "comment" in a:
            vs.comment = a["comment"]
        if "language" in a:
            vs.language = a["language"]
        return ""


NFS_FIELDS = [("access", "General NFS Access", "nfs_access", "bool"),
              ("v3", "NFS v3", "nfs_v3", "ed"), ("v4.0", "NFS v4.0", "nfs_v40", "ed"),
              ("v4.1", "NFS v4.1", "nfs_v41", "ed"),
              ("v4.1-pnfs", "NFSv4.1 Parallel NFS Support", "nfs_v41_pnfs", "ed"),
              ("tcp-max-xfer-size", "TCP Maximum Transfer Size (bytes)", "tcp_max_xfer_size", "int"),
              ("v4-lease-seconds", "NFSv4 Lease Timeout Value (in secs)", "nfs_v4_lease_seconds", "int"),
              ("v4-grace-seconds", "NFSv4 Grace Timeout Value (in secs)", "nfs_v4_grace_seconds", "int")]


@command("vserver nfs show", [P("vserver", "query", positional=True, help="Vserver"),
                              P("fields", "fields", help="Fields to display"),
                              P("instance", "flag", help="Display all fields")],
         help="Display the NFS configurations of Vservers")
def nfs_show(ctx, a):
    c = state.load(ctx.root)
    vss = _filter(sorted(c.data_vservers(), key=lambda v: v.name), a,
                  {"vserver": lambda v: v.name})

    def val(v, attr, kind):
        x = getattr(v, attr)
        return _bool(x) if kind == "bool" else _ed(x) if kind == "ed" else str(x)
    reg = {"vserver": ("Vserver", lambda v: v.name, "admin")}
    for f, label, attr, kind in NFS_FIELDS:
        priv = "advanced" if f in ("tcp-max-xfer-size", "v4-lease-seconds",
                                   "v4-grace-seconds") else "admin"
        reg[f] = (label, lambda v, attr=attr, kind=kind: val(v, attr, kind), priv)

    def default(rows):
        blocks = []
        for v in rows:
            pairs = [("Vserver", v.name), ("General Access", _bool(v.nfs_access)),
                     ("v3", _ed(v.nfs_v3)), ("v4.0", _ed(v.nfs_v40)), ("v4.1", _ed(v.nfs_v41)),
                     ("UDP", "enabled"), ("TCP", "enabled"),
                     ("Default Windows User", "-"), ("Default Windows Group", "-")]
            w = max(len(k) for k, _ in pairs)
            blocks.append(f"Vserver: {v.name}\n\n" + "\n".join(
                f"{k.rjust(w)}:  {val_}" for k, val_ in pairs[1:]))
        return "\n\n".join(blocks) + render.entries(len(blocks))
    return _show(vss, a, ctx, reg, ["vserver"], default)


@command("vserver nfs modify", [P("vserver", "name", required=True, positional=True,
                                   name_kind="vserver", help="Vserver"),
                                P("access", "bool", help="General NFS Access"),
                                P("v3", "enum", choices=("enabled", "disabled"), help="NFS v3"),
                                P("v4.0", "enum", choices=("enabled", "disabled"), help="NFS v4.0"),
                                P("v4.1", "enum", choices=("enabled", "disabled"), help="NFS v4.1"),
                                P("v4.1-pnfs", "enum", choices=("enabled", "disabled"),
                                  help="NFSv4.1 Parallel NFS Support"),
                                P("udp", "enum", choices=("enabled", "disabled"), help="UDP Protocol"),
                                P("tcp", "enum", choices=("enabled", "disabled"), help="TCP Protocol"),
                                P("v4-id-domain", help="NFSv4 ID Mapping Domain"),
                                P("tcp-max-xfer-size", "int", privilege="advanced",
                                  help="TCP Maximum Transfer Size (bytes)"),
                                P("v4-lease-seconds", "int", privilege="advanced",
                                  help="NFSv4 Lease Timeout Value (in secs)"),
                                P("v4-grace-seconds", "int", privilege="advanced",
                                  help="NFSv4 Grace Timeout Value (in secs)")],
         help="Modify the NFS configuration of a Vserver")
def nfs_modify(ctx, a):
    with state.transaction(ctx.root) as c:
        vs = _vserver(c, a["vserver"])
        # ONTAP: the lease defaults to 30 s, is at least 10 s and at most the grace period
        # (45 s by default). The wording of the refusals is modelled.
        lease = a.get("v4-lease-seconds", vs.nfs_v4_lease_seconds)
        grace = a.get("v4-grace-seconds", vs.nfs_v4_grace_seconds)
        if "v4-lease-seconds" in a and lease < 10:
            raise _fail('The value for "-v4-lease-seconds" must be at least 10 seconds.')
        if lease > grace:
            raise _fail(f'The NFSv4 lease timeout ({lease} seconds) cannot be greater than the '
                        f'NFSv4 grace timeout ({grace} seconds).')
        vs.nfs_v4_lease_seconds, vs.nfs_v4_grace_seconds = lease, grace
        if "tcp-max-xfer-size" in a:
            n = a["tcp-max-xfer-size"]
            if n < 8192 or n > 1048576 or n % 4096:
                raise _fail("The value for \"-tcp-max-xfer-size\" must be a multiple of 4096 "
                            "between 8192 and 1048576.")
            vs.tcp_max_xfer_size = n
        for k, attr in (("v3", "nfs_v3"), ("v4.0", "nfs_v40"), ("v4.1", "nfs_v41"),
                        ("v4.1-pnfs", "nfs_v41_pnfs")):
            if k in a:
                setattr(vs, attr, a[k] == "enabled")
        if "access" in a:
            vs.nfs_access = a["access"]
        return ""


@command("vserver export-policy create", [P("vserver", "name", required=True, positional=True,
                                            name_kind="vserver", help="Vserver"),
                                          P("policyname", "name", required=True, positional=True,
                                            name_kind="export-policy", help="Policy Name")],
         help="Create a rule set")
def exp_create(ctx, a):
    with state.transaction(ctx.root) as c:
        vs = _vserver(c, a["vserver"])
        if a["policyname"] in vs.export_policies:
            raise _fail(f'Duplicate entry: export policy "{a["policyname"]}" already exists in '
                        f'Vserver "{vs.name}".')
        vs.export_policies = vs.export_policies + [a["policyname"]]
        return ""


@command("vserver export-policy show", [P("vserver", "query", positional=True, help="Vserver"),
                                        P("policyname", "query", positional=True, help="Policy Name")],
         help="Display a list of rule sets")
def exp_show(ctx, a):
    c = state.load(ctx.root)
    rows = [(v.name, p) for v in sorted(c.data_vservers(), key=lambda v: v.name)
            for p in v.export_policies]
    rows = _filter(rows, a, {"vserver": lambda r: r[0], "policyname": lambda r: r[1]})
    if not rows:
        return render.none_found()
    return render.table([Col("Vserver", 15), Col("Policy Name", 19)], [list(r) for r in rows])


# --- network ----------------------------------------------------------------------------------
@command("network interface show", [P("vserver", "query", positional=True, help="Vserver Name"),
                                    P("lif", "query", positional=True, help="Logical Interface"),
                                    P("fields", "fields", help="Fields to display"),
                                    P("instance", "flag", help="Display all fields")],
         help="Display logical interfaces")
def lif_show(ctx, a):
    c = state.load(ctx.root)
    lifs = sorted(c.lifs.values(), key=lambda l: (l.vserver, l.name))
    lifs = _filter(lifs, a, {"vserver": lambda l: l.vserver, "lif": lambda l: l.name})
    node = lambda l: l.node or (c.nodes[0] if c.nodes else "-")   # noqa: E731
    reg = {"vserver": ("Vserver Name", lambda l: l.vserver, "admin"),
           "lif": ("Logical Interface Name", lambda l: l.name, "admin"),
           "role": ("Role", lambda l: l.role, "admin"),
           "data-protocol": ("Data Protocol", lambda l: ",".join(l.data_protocols)
                             if l.role == "data" else "none", "admin"),
           "address": ("Network Address", lambda l: l.address, "admin"),
           "netmask-length": ("Bits in the Netmask", lambda l: str(l.netmask_length), "admin"),
           "home-node": ("Home Node", node, "admin"),
           "home-port": ("Home Port", lambda l: l.port, "admin"),
           "curr-node": ("Current Node", lambda l: l.curr_node or node(l), "admin"),
           "curr-port": ("Current Port", lambda l: l.curr_port or l.port, "admin"),
           "status-oper": ("Operational Status", lambda l: "up", "admin"),
           "status-admin": ("Administrative Status", lambda l: "up", "admin"),
           "is-home": ("Is Home", lambda l: _bool(_is_home(l)), "admin"),
           "auto-revert": ("Auto Revert", lambda l: _bool(l.auto_revert), "admin")}

    def default(rows):
        cols = [Col("Vserver", 11), Col("Logical\nInterface", 10), Col("Status\nAdmin/Oper", 10),
                Col("Network\nAddress/Mask", 18), Col("Current\nNode", 13),
                Col("Current\nPort", 7), Col("Is\nHome", 4)]
        out, last = [], None
        body = []
        for l in rows:
            vs = l.vserver if l.vserver != last else ""
            last = l.vserver
            if vs:
                body.append([vs, "", "", "", "", "", ""])
            body.append(["", l.name, "up/up", f"{l.address}/{l.netmask_length}",
                         l.curr_node or node(l), l.curr_port or l.port, _bool(_is_home(l))])
        text = render.table(cols, body, footer=False)
        # vserver header rows carry only the name
        out = [ln.rstrip() for ln in text.splitlines()]
        return "\n".join(out) + render.entries(len(rows))
    return _show(lifs, a, ctx, reg, ["vserver", "lif"], default)


def _is_home(lif: state.Lif) -> bool:
    return (not lif.curr_node or lif.curr_node == lif.node) and \
        (not lif.curr_port or lif.curr_port == lif.port)


def _move_lif(c: state.Cluster, lif: state.Lif, node: str, port: str, until: float) -> None:
    """Put a LIF on node:port ("" when that is home); if that moves it, it is away (its NFS
    service refuses sessions) until ``until``, a wall-clock time."""
    home = lif.node or (c.nodes[0] if c.nodes else "")
    before = (lif.curr_node or home, lif.curr_port or lif.port)
    lif.curr_node, lif.curr_port = ("", "") if (node, port) == (home, lif.port) else (node, port)
    if (lif.curr_node or home, lif.curr_port or lif.port) != before:
        lif.moving_until = until


def _lif(c: state.Cluster, vserver: str, name: str) -> state.Lif:
    if vserver not in c.vservers:
        raise CliError(f'Error: Vserver "{vserver}" does not exist.')
    for lif in c.lifs.values():
        if lif.vserver == vserver and lif.name == name:
            return lif
    raise CliError("Error: There are no entries matching your query.")


# ONTAP: `network interface migrate -vserver V -lif L -destination-node N
# [-destination-port P]` moves a LIF to a port of another node; `network interface revert`
# sends it back to its home node and port. Both print nothing when they succeed. The lab's
# NFS service drops the NFS connections on the LIF's address when it moves, and clients
# reconnect to the same address (see tr4947.lab.nfs4state). Refusal wording is modelled.
@command("network interface migrate", [
    P("vserver", "name", required=True, name_kind="vserver", help="Vserver Name"),
    P("lif", "name", required=True, name_kind="lif", help="Logical Interface Name"),
    P("destination-node", "text", required=True, help="Destination Node",
      placeholder="<nodename>"),
    P("destination-port", "text", help="Destination Port", placeholder="{<netport>|<ifgrp>}"),
    P("force", "bool", privilege="advanced", help="Force Migrate Data LIF Flag")],
    help="Migrate a logical interface to a different port")
def lif_migrate(ctx, a):
    with state.transaction(ctx.root) as c:
        lif = _lif(c, a["vserver"], a["lif"])
        node = a["destination-node"]
        if node not in c.nodes:
            raise _fail(f'Node "{node}" does not exist in the cluster.')
        _move_lif(c, lif, node, a.get("destination-port", lif.curr_port or lif.port),
                  time.time() + c.migrate_seconds)
        return ""


@command("network interface revert", [
    P("vserver", "name", required=True, positional=True, name_kind="vserver", help="Vserver Name"),
    P("lif", "name", required=True, positional=True, name_kind="lif",
      help="Logical Interface Name")],
    help="Revert a logical interface to its home port")
def lif_revert(ctx, a):
    with state.transaction(ctx.root) as c:
        lif = _lif(c, a["vserver"], a["lif"])
        _move_lif(c, lif, lif.node, lif.port, time.time() + c.migrate_seconds)
        return ""


def _connections(ctx, c: state.Cluster) -> list[dict]:
    """One row per TCP connection the lab's NFS clients hold, from the mounts recorded in
    the lab's mount registry (``<root>/mounts.json``) that are mounted now.

    The Linux client shares one transport per (client address, server address, NFS
    version): every mount of that server and version uses the connections the first such
    mount opened, nconnect=N of them, and later mounts' nconnect is ignored. So the rows are
    the sum of nconnect over those groups, whatever the number of mounts.

    Connection IDs and client ports come from the connections themselves: the ID is a
    CRC-32 of (client, server address, version, first mount's time, connection index), the
    port one of the Linux client's reserved source ports (665-1023), both made unique."""
    from .. import storage
    lif_by_addr = {l.address: l for l in c.lifs.values() if l.role == "data"}
    try:
        mounts = storage.list_mounts(root=ctx.root)
    except (OSError, ValueError, TypeError):              # no or unreadable registry
        mounts = []
    first: dict[tuple[str, str, str], storage.Mount] = {}
    for m in sorted(mounts, key=lambda m: (m.time, m.mountpoint)):
        first.setdefault((m.client, m.address, m.vers), m)
    rows, cids, ports = [], set(), {}
    for (client, address, vers), m in first.items():
        lif = lif_by_addr.get(address)
        if lif is None:
            continue
        used = ports.setdefault(client, set())
        for k in range(max(1, m.nconnect)):
            seed = f"{client}|{address}|{vers}|{m.time}|{k}".encode()
            cid = zlib.crc32(seed) or 1
            while cid in cids:
                cid = cid % 0xFFFFFFFF + 1
            cids.add(cid)
            port = 665 + zlib.crc32(seed[::-1]) % (1024 - 665)
            while port in used and len(used) < 1024 - 665:
                port = 1023 if port == 665 else port - 1
            used.add(port)
            rows.append({"node": lif.node or c.nodes[0], "cid": str(cid), "vserver": lif.vserver,
                         "lif-name": lif.name, "local-address": lif.address, "local-port": "2049",
                         "remote-ip": client, "remote-host": client, "remote-port": str(port),
                         "proto": "TCP", "service": "nfs"})
    rows.sort(key=lambda r: (r["node"], int(r["cid"])))
    return rows


@command("network connections active show", [
    P("node", "query", help="Node"), P("cid", "query", help="Connection ID"),
    P("vserver", "query", help="Vserver"), P("lif-name", "query", help="Logical Interface Name"),
    P("local-address", "query", help="Local IP address"), P("remote-ip", "query", help="Remote IP Address"),
    P("remote-host", "query", help="Remote Host"), P("proto", "query", help="Protocol"),
    P("service", "query", help="Protocol Service"),
    P("print-ip-addresses", "flag", help="Print IP addresses for remote hosts"),
    P("fields", "fields", help="Fields to display"), P("instance", "flag", help="Display all fields")],
    help="Show the active connections in this cluster")
def conn_show(ctx, a):
    c = state.load(ctx.root)
    rows = _connections(ctx, c)
    keys = ["node", "cid", "vserver", "lif-name", "local-address", "local-port", "remote-ip",
            "remote-host", "remote-port", "proto", "service"]
    rows = _filter(rows, a, {k: (lambda r, k=k: r[k]) for k in keys})
    labels = {"node": "Node", "cid": "Connection ID", "vserver": "Vserver",
              "lif-name": "Logical Interface Name", "local-address": "Local IP address",
              "local-port": "Local Port", "remote-ip": "Remote IP Address",
              "remote-host": "Remote Host", "remote-port": "Remote Port", "proto": "Protocol",
              "service": "Protocol Service"}
    reg = {k: (labels[k], (lambda r, k=k: r[k]), "admin") for k in keys}

    def default(rs):
        cols = [Col("\nCID", 10), Col("\nCtx", 3), Col("Vserver\nName", 10),
                Col("Interface\nName:Local Port", 21), Col("Remote\nHost:Port", 21),
                Col("\nProtocol/Service", 16)]
        out = []
        for node in dict.fromkeys(r["node"] for r in rs):
            body = [[r["cid"], "0", r["vserver"], f'{r["lif-name"]}:{r["local-port"]}',
                     f'{r["remote-host"]}:{r["remote-port"]}', f'{r["proto"]}/{r["service"]}']
                    for r in rs if r["node"] == node]
            text = render.table(cols, body, footer=False).split("\n")
            if not out:
                out = text[:3]
            out.append(f"Node: {node}")
            out += text[3:]
        return "\n".join(out) + render.entries(len(rs))
    return _show(rows, a, ctx, reg, ["node", "cid"], default)


# --- storage failover ---------------------------------------------------------------------------
# ONTAP's HA takeover and giveback (ONTAP 9 command reference: storage failover show,
# takeover, giveback, show-takeover, show-giveback). `takeover -ofnode N` (or `-bynode P`):
# N's partner P takes N's aggregates and N's data LIFs move to P's port of the same name;
# `giveback -ofnode N` sends the aggregates home, and the data LIFs of N with -auto-revert
# true go home with them ("LIF failover and giveback", ONTAP's network management docs: a LIF
# reverts to its home node when auto-revert is true and its home port can host it); the
# others stay on P until `network interface revert`. Each takes the state's modelled time,
# during which the moved LIFs refuse NFS sessions (the client outage of a takeover).
#
# From the documentation: the parameters, the show columns (Node, Partner, Takeover
# Possible, State Description), "Connected to <partner>", "Takeover in progress", the giveback states "Partial
# giveback" and "Waiting for cluster applications to come online on the local node",
# show-giveback's "No aggregates to give back" / "Done" / "In progress", and giveback's
# "Info: Run the storage failover show-giveback command..." line. Modelled: "In takeover",
# "Waiting for giveback (HA mailboxes)", "Non-HA mode", show-takeover's layout, and every
# refusal's wording.
NODE_HINT = "{<nodename>|local}"
TAKEOVER_OPTIONS = ("normal", "immediate", "allow-version-mismatch",
                    "allow-disk-inventory-mismatch", "force")
TREE.describe(("storage", "failover"), "Manage storage failover")


def _node_arg(c: state.Cluster, a: dict, name: str) -> str:
    """A -<name> {<nodename>|local} value: a node of the cluster ("local": the node the
    session runs on, the stand-in's first node)."""
    v = a[name]
    if v == "local" and c.nodes:
        return c.nodes[0]
    if v not in c.nodes:
        raise CliError(f'Error: "{v}" is an invalid value for field "-{name} {NODE_HINT}"')
    return v


def _one_of(a: dict, x: str, y: str) -> str:
    if (x in a) == (y in a):
        raise CliError(f'Error: Specify exactly one of "-{x}" or "-{y}".')
    return x if x in a else y


def _ha_phase(c: state.Cluster, node: str, now: float) -> str:
    """normal | taking-over | taken-over (this node's storage is on its partner) |
    in-takeover | giving-back (to this node) | giving-back-partner."""
    ha = c.ha(node)
    if ha.taken_over_by:
        return "taken-over"
    if ha.partner:
        p = c.ha(ha.partner)
        if p.taken_over_by == node:
            return "in-takeover"
        if now < p.giveback_end:
            return "giving-back-partner"
    if now < ha.giveback_end:
        return "giving-back"
    return "normal"


def _ha_row(c: state.Cluster, node: str, now: float) -> dict:
    ha = c.ha(node)
    phase = _ha_phase(c, node, now)
    if not ha.partner:
        possible, desc = "false", "Non-HA mode"
    elif phase == "taken-over":
        possible, desc = "-", "Waiting for giveback (HA mailboxes)"
    elif phase == "in-takeover":
        # The taker says so once it holds the partner's storage, not while it takes it over
        # (what a drill polls for before the giveback).
        busy = now < c.ha(ha.partner).takeover_end
        possible, desc = "false", "Takeover in progress" if busy else "In takeover"
    elif phase == "giving-back":
        possible, desc = "false", (f"Connected to {ha.partner}, Waiting for cluster "
                                   "applications to come online on the local node")
    elif phase == "giving-back-partner":
        possible, desc = "false", f"Connected to {ha.partner}, Partial giveback"
    else:
        possible, desc = "true", f"Connected to {ha.partner}"
    return {"node": node, "partner-name": ha.partner or "-", "possible": possible,
            "state-description": desc, "enabled": _bool(bool(ha.partner)),
            "mode": "ha" if ha.partner else "non_ha", "auto-giveback": "true"}


@command("storage failover show", [
    P("node", "query", positional=True, help="Node"),
    P("partner-name", "query", help="Partner Name"),
    P("possible", "query", help="Takeover Possible"),
    P("state-description", "query", help="State Description"),
    P("fields", "fields", help="Fields to display"), P("instance", "flag", help="Display all fields")],
    help="Display storage failover status")
def failover_show(ctx, a):
    c = state.load(ctx.root)
    now = time.time()
    rows = [_ha_row(c, n, now) for n in c.nodes]
    keys = ["node", "partner-name", "possible", "state-description", "enabled", "mode",
            "auto-giveback"]
    rows = _filter(rows, a, {k: (lambda r, k=k: r[k]) for k in keys})
    labels = {"node": "Node", "partner-name": "Partner Name", "possible": "Takeover Possible",
              "state-description": "State Description", "enabled": "Takeover Enabled",
              "mode": "HA Mode", "auto-giveback": "Auto Giveback Enabled"}
    reg = {k: (labels[k], (lambda r, k=k: r[k]), "admin") for k in keys}

    def default(rs):
        cols = [Col("\nNode", 14), Col("\nPartner", 14), Col("Takeover\nPossible", 8),
                Col("\nState Description", 37)]
        body = []
        for r in rs:
            first, *more = textwrap.wrap(r["state-description"], 37) or [""]
            body.append([r["node"], r["partner-name"], r["possible"], first])
            body += [["", "", "", m] for m in more]
        return render.table(cols, body, footer=False) + render.entries(len(rs))
    return _show(rows, a, ctx, reg, ["node"], default)


@command("storage failover takeover", [
    P("ofnode", "text", help="Node to Takeover", placeholder=NODE_HINT),
    P("bynode", "text", help="Node Initiating Takeover", placeholder=NODE_HINT),
    P("option", "enum", choices=TAKEOVER_OPTIONS, help="Takeover Option")],
    help="Take over the storage of a node's partner")
def failover_takeover(ctx, a):
    # -option is accepted as ONTAP accepts it; every option takes the same modelled time.
    which = _one_of(a, "ofnode", "bynode")
    with state.transaction(ctx.root) as c:
        now = time.time()
        named = _node_arg(c, a, which)
        partner = c.ha(named).partner
        if not partner:
            raise _fail("Failed to initiate takeover. Reason: Takeover is not possible: node "
                        f'"{named}" has no HA partner (non-HA mode).')
        victim, taker = (named, partner) if which == "ofnode" else (partner, named)
        for n in (victim, taker):
            ha = c.ha(n)
            if ha.taken_over_by:
                raise _fail(f'Failed to initiate takeover. Reason: Node "{n}" is already '
                            f'taken over by "{ha.taken_over_by}".')
            if now < ha.giveback_end:
                raise _fail(f'Failed to initiate takeover. Reason: A giveback to node "{n}" '
                            "is in progress.")
        ha = c.ha(victim)
        ha.taken_over_by = taker
        ha.takeover_start, ha.takeover_end = now, now + c.takeover_seconds
        for g in c.aggregates.values():
            if g.node == victim:
                g.owner = taker
        for lif in c.lifs.values():
            if lif.role == "data" and (lif.curr_node or lif.node) == victim:
                _move_lif(c, lif, taker, lif.curr_port or lif.port, ha.takeover_end)
    return ""


@command("storage failover giveback", [
    P("ofnode", "text", help="Node to which Control is Givenback", placeholder=NODE_HINT),
    P("fromnode", "text", help="Node Initiating Giveback", placeholder=NODE_HINT),
    P("require-partner-waiting", "bool", help="Require Partner in Waiting"),
    P("override-vetoes", "bool", help="Override Vetoes")],
    help="Return failed-over storage to its home node")
def failover_giveback(ctx, a):
    # The stand-in has no subsystem that vetoes a giveback: -override-vetoes changes nothing.
    which = _one_of(a, "ofnode", "fromnode")
    with state.transaction(ctx.root) as c:
        now = time.time()
        named = _node_arg(c, a, which)
        if which == "ofnode":
            home, taker, giver = named, c.ha(named).taken_over_by, c.ha(named).partner or named
        else:
            home = next((n for n in c.nodes if c.ha(n).taken_over_by == named), "")
            taker = giver = named
        if not taker or not home:
            raise _fail(f'Failed to initiate giveback. Reason: Node "{giver}" is not in '
                        "takeover state.")
        ha = c.ha(home)
        if now < ha.takeover_end:
            raise _fail(f'Failed to initiate giveback. Reason: The takeover of node "{home}" '
                        "is in progress.")
        ha.taken_over_by = ""
        ha.giveback_start, ha.giveback_end = now, now + c.giveback_seconds
        for g in c.aggregates.values():
            if g.node == home:
                g.owner = ""
        for lif in c.lifs.values():
            if lif.role == "data" and lif.auto_revert and (lif.node or c.nodes[0]) == home \
                    and lif.curr_node == taker:
                _move_lif(c, lif, home, lif.port, ha.giveback_end)
    return "Info: Run the storage failover show-giveback command to check giveback status."


def _aggr_status(end: float, now: float) -> str:
    return "Done" if now >= end else "In progress"


@command("storage failover show-takeover", [
    P("node", "query", positional=True, help="Node"),
    P("fields", "fields", help="Fields to display"), P("instance", "flag", help="Display all fields")],
    help="Display takeover status")
def failover_show_takeover(ctx, a):
    c = state.load(ctx.root)
    now = time.time()
    rows = []
    for n in c.nodes:
        ha = c.ha(n)
        took = [m for m in c.nodes if c.ha(m).taken_over_by == n]
        if took:
            end = max(c.ha(m).takeover_end for m in took)
            status = "Takeover in progress" if now < end else "Takeover completed"
        elif ha.taken_over_by:
            status = f"Taken over by {ha.taken_over_by}"
        else:
            status = "Not attempting takeover" if ha.partner else "Non-HA mode"
        aggrs = [(g.name, _aggr_status(c.ha(g.node).takeover_end, now))
                 for g in sorted(c.aggregates.values(), key=lambda g: g.name)
                 if g.owner == n]
        rows.append({"node": n, "node-status": status, "aggregates": aggrs})
    rows = _filter(rows, a, {"node": lambda r: r["node"]})
    reg = {"node": ("Node", lambda r: r["node"], "admin"),
           "node-status": ("Node Takeover Status", lambda r: r["node-status"], "admin")}

    def default(rs):
        cols = [Col("Node", 14), Col("Aggregate", 17), Col("Takeover Status", 45)]
        body = []
        for r in rs:
            body.append([r["node"], "", r["node-status"]])
            body += [["", name, st] for name, st in r["aggregates"]]
        return render.table(cols, body, footer=False) + render.entries(len(rs))
    return _show(rows, a, ctx, reg, ["node"], default)


@command("storage failover show-giveback", [
    P("node", "query", positional=True, help="Node"),
    P("fields", "fields", help="Fields to display"), P("instance", "flag", help="Display all fields")],
    help="Display giveback status")
def failover_show_giveback(ctx, a):
    c = state.load(ctx.root)
    now = time.time()
    rows = []
    for n in c.nodes:
        # the partner's aggregates this node holds (in takeover) or last gave back
        p = c.ha(n).partner
        ph = c.ha(p) if p else None
        if ph is None or not (ph.taken_over_by == n or ph.giveback_end):
            aggrs = []
        else:
            st = "Not attempted yet" if ph.taken_over_by == n else \
                _aggr_status(ph.giveback_end, now)
            aggrs = [(g.name, st) for g in sorted(c.aggregates.values(), key=lambda g: g.name)
                     if g.node == p]
        rows.append({"node": n, "aggregates": aggrs})
    rows = _filter(rows, a, {"node": lambda r: r["node"]})
    reg = {"node": ("Node", lambda r: r["node"], "admin"),
           "aggregates": ("Partner Aggregates", lambda r: ",".join(x for x, _ in r["aggregates"])
                          or "-", "admin")}

    def default(rs):
        cols = [Col("\nNode", 14), Col("Partner\nAggregate", 17), Col("\nGiveback Status", 45)]
        body = []
        for r in rs:
            if not r["aggregates"]:
                body.append([r["node"], "No aggregates to give back"])
                continue
            body.append([r["node"], "", ""])
            body += [["", name, st] for name, st in r["aggregates"]]
        return render.table(cols, body, footer=False) + render.entries(len(rs))
    return _show(rows, a, ctx, reg, ["node"], default)


# --- statistics ---------------------------------------------------------------------------------
def _io_ops() -> int:
    import psutil
    io = psutil.disk_io_counters()
    return (io.read_count + io.write_count) if io else 0


@command("statistics start", [P("object", required=True, help="Object"),
                              P("instance", help="Instance"), P("counter", "list", help="Counter"),
                              P("sample-id", help="Sample Identifier"),
                              P("node", help="Node")],
         privilege="advanced", help="Start data collection for a sample")
def stats_start(ctx, a):
    if a["object"] != "vnvram":
        raise CliError(f'Error: Object "{a["object"]}" was not found.')
    counters = a.get("counter", ["backing_store_iops"])
    for k in counters:
        if k != "backing_store_iops":
            raise CliError(f'Error: Counter "{k}" was not found for object "vnvram".')
    with state.transaction(ctx.root) as c:
        sid = a.get("sample-id") or f"sample_{len(c.statistics) + 1}"
        if sid in c.statistics:
            raise _fail(f'Sample "{sid}" already exists.')
        c.statistics[sid] = {"object": a["object"], "instance": a.get("instance", "vnvram"),
                             "counters": counters, "started": time.time(), "start_ops": _io_ops(),
                             "stopped": None, "stop_ops": None,
                             "node": a.get("node") or c.nodes[0]}
    return f"Statistics collection is being started for sample-id: {sid}"


def _sample(c, sid):
    s = c.statistics.get(sid)
    if s is None:
        raise CliError(f'Error: Sample "{sid}" was not found.')
    return s


@command("statistics show", [P("sample-id", help="Sample Identifier"),
                             P("object", "query", help="Object"), P("counter", "query", help="Counter")],
         privilege="advanced", help="Display performance data for a time interval")
def stats_show(ctx, a):
    c = state.load(ctx.root)
    sid = a.get("sample-id") or (list(c.statistics)[-1] if c.statistics else None)
    if sid is None:
        return render.none_found()
    s = _sample(c, sid)
    end = s["stopped"] or time.time()
    ops = (s["stop_ops"] if s["stop_ops"] is not None else _io_ops()) - s["start_ops"]
    elapsed = max(1, int(round(end - s["started"])))
    fmt = lambda t: f"{_dt.datetime.fromtimestamp(t):%-m/%-d/%Y %H:%M:%S}"   # noqa: E731
    lines = [f"Object: {s['object']}", f"Instance: {s['instance']}",
             f"Start-time: {fmt(s['started'])}", f"End-time: {fmt(end)}",
             f"Elapsed-time: {elapsed}s", f"Scope: {s['node']}", "",
             f"    Counter{'Value':>58}",
             f"    {'-' * 32} {'-' * 32}"]
    for k in s["counters"]:
        lines.append(f"    {k:<32} {int(ops / elapsed):>32}")
    return "\n".join(lines)


@command("statistics stop", [P("sample-id", help="Sample Identifier")], privilege="advanced",
         help="Stop data collection for a sample")
def stats_stop(ctx, a):
    with state.transaction(ctx.root) as c:
        sid = a.get("sample-id") or (list(c.statistics)[-1] if c.statistics else "")
        s = _sample(c, sid)
        s["stopped"], s["stop_ops"] = time.time(), _io_ops()
    return f"Statistics collection is being stopped for sample-id: {sid}"


# --- jobs -----------------------------------------------------------------------------------------
@command("job show", [P("id", "query", positional=True, help="Job ID")], help="Display a list of jobs")
def job_show(ctx, a):
    c = state.load(ctx.root)
    jobs = _filter(c.jobs, a, {"id": lambda j: j["id"]})
    if not jobs:
        return render.none_found()
    cols = [Col("Job ID", 6, True), Col("Name", 20), Col("Vserver", 10), Col("Node", 13),
            Col("State", 10)]
    return render.table(cols, [[str(j["id"]), j["description"], c.name, c.nodes[0], "Success"]
                               for j in jobs])


def dispatch(cmd: Command, ctx, args: dict[str, Any]) -> str:
    return cmd.handler(ctx, args)
