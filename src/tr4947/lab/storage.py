"""Lab storage: NFS mounts of ONTAP stand-in volumes, made with bindfs (FUSE).

The machine has no kernel NFS. A lab "NFS mount" of ``addr:/junction`` is a bindfs mount
of the volume's backing directory, chosen the way an NFS client and ONTAP would decide:

* the data LIF at ``addr`` picks the SVM; the junction picks the volume (a path below a
  junction mounts that subdirectory, as NFS allows);
* the NFS version is the one asked for (``vers=``/``nfsvers=``/``minorversion=``/``-t nfs4``)
  or, without one, negotiated like the Linux client: 4.2, 4.1, 4.0, then 3 (4.2 is served
  when the SVM has v4.1 enabled, as ONTAP 9.8+ does); a version the SVM has disabled fails
  like mount.nfs;
* semantics: ``posix-unlink`` (bindfs ``-o hard_remove``: an unlinked open file vanishes
  from the directory) only for NFSv4.1+ on a volume with ``-is-preserve-unlink-enabled
  true``; otherwise ``silly-rename`` (default bindfs: the file is renamed ``.fuse_hidden*``
  until closed, so removing its directory fails with ENOTEMPTY - what NFS silly rename does
  to Kafka).

Mounts are recorded in ``<root>/mounts.json`` (the stand-in's ``network connections active
show`` lists them; nconnect=N gives N connections). bindfs always names the backing dir as
the file system source in /proc/mounts; the type is ``fuse.nfs``/``fuse.nfs4`` and the
lab's ``df`` and ``mount`` show ``addr:/junction`` like a real NFS client.

Command line (the shims installed into the lab's bin/ call this):
    python -m tr4947.lab.storage mount|umount|df [mount(8)/umount(8)/df(1) arguments]
"""
from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import json
import math
import os
import re
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from .. import paths
from .ontap import space, state, units

SEMANTICS_POSIX = "posix-unlink"
SEMANTICS_SILLY = "silly-rename"


class MountError(Exception):
    """A mount/umount/df failure; ``str()`` is the message the real tool prints,
    ``code`` its exit status (mount(8): 1 usage, 32 mount failure)."""

    def __init__(self, message: str, code: int = 32):
        super().__init__(message)
        self.code = code


USAGE = """
Usage:
 mount [-lhV]
 mount -a [options]
 mount [options] [--source] <source> | [--target] <directory>
 mount [options] <source> <directory>

Lab mount: NFS sources (-t nfs|nfs4, or <addr>:/<path>) are served by the lab's ONTAP
stand-in; anything else is passed to the system mount.
Options:
 -a, --all               mount all filesystems mentioned in fstab
 -T, --fstab <path>      alternative file to /etc/fstab
 -t, --types <list>      limit the set of filesystem types
 -o, --options <list>    comma-separated list of mount options
 -r, --read-only         mount the filesystem read-only (same as -o ro)
 -w, --rw, --read-write  mount the filesystem read-write (default)
 -v, --verbose           say what is being done
""".strip("\n")


# --- mount(8) argument parsing -----------------------------------------------------------------
@dataclass
class MountRequest:
    source: str | None = None
    mountpoint: str | None = None
    fstype: str | None = None
    options: str = ""
    all: bool = False
    fstab: str | None = None
    verbose: bool = False
    fake: bool = False


def _usage_error(msg: str) -> MountError:
    return MountError(f"mount: {msg}\nTry 'mount --help' for more information.", 1)


def parse_mount_argv(argv: list[str]) -> MountRequest:
    """mount(8) arguments (with or without the leading ``mount``) -> MountRequest."""
    args = list(argv)
    if args and os.path.basename(args[0]) in ("mount", "mount.nfs", "mount.nfs4"):
        args = args[1:]
    req = MountRequest()
    opts: list[str] = []
    positional: list[str] = []
    i = 0

    def value(flag: str) -> str:
        nonlocal i
        if i + 1 >= len(args):
            raise _usage_error(f"option requires an argument -- '{flag.lstrip('-')}'")
        i += 1
        return args[i]

    while i < len(args):
        a = args[i]
        if a in ("-t", "--types"):
            req.fstype = value(a)
        elif a.startswith("-t") and len(a) > 2 and not a.startswith("--"):
            req.fstype = a[2:]
        elif a.startswith("--types="):
            req.fstype = a.split("=", 1)[1]
        elif a in ("-o", "--options"):
            opts.append(value(a))
        elif a.startswith("-o") and len(a) > 2 and not a.startswith("--"):
            opts.append(a[2:])
        elif a.startswith("--options="):
            opts.append(a.split("=", 1)[1])
        elif a in ("-T", "--fstab"):
            req.fstab = value(a)
        elif a.startswith("--fstab="):
            req.fstab = a.split("=", 1)[1]
        elif a in ("--source",):
            req.source = value(a)
        elif a in ("--target",):
            req.mountpoint = value(a)
        elif a == "--":
            positional += args[i + 1:]
            break
        elif a.startswith("--"):
            flag = a[2:]
            if flag == "all":
                req.all = True
            elif flag in ("read-only",):
                opts.append("ro")
            elif flag in ("rw", "read-write"):
                opts.append("rw")
            elif flag == "verbose":
                req.verbose = True
            elif flag == "fake":
                req.fake = True
            else:
                raise _usage_error(f"unrecognized option '{a}'")
        elif a.startswith("-") and len(a) > 1:
            for ch in a[1:]:
                if ch == "a":
                    req.all = True
                elif ch == "r":
                    opts.append("ro")
                elif ch == "w":
                    opts.append("rw")
                elif ch == "v":
                    req.verbose = True
                elif ch == "f":
                    req.fake = True
                elif ch in "ns":
                    pass                            # no mtab / sloppy: no effect here
                else:
                    raise _usage_error(f"invalid option -- '{ch}'")
        else:
            positional.append(a)
        i += 1
    req.options = ",".join(o for o in opts if o)
    if len(positional) > 2:
        raise _usage_error("bad usage")
    if len(positional) == 2:
        if req.source or req.mountpoint:
            raise _usage_error("bad usage")
        req.source, req.mountpoint = positional
    elif len(positional) == 1:
        # `mount /mnt/x` or `mount addr:/vol`: the other half comes from fstab
        p = positional[0]
        if req.source and not req.mountpoint:
            req.mountpoint = p
        elif req.mountpoint and not req.source:
            req.source = p
        elif _is_nfs_source(p):
            req.source = p
        else:
            req.mountpoint = p
    if req.all and (req.source or req.mountpoint):
        raise _usage_error("bad usage")
    return req


def _is_nfs_source(s: str | None) -> bool:
    return bool(s) and re.match(r"^\[?[\w.\-:]+\]?:/", s) is not None


# --- NFS mount options ------------------------------------------------------------------------
_FLAGS = {
    "rw", "ro", "hard", "soft", "softerr", "intr", "nointr", "noatime", "atime", "relatime",
    "norelatime", "strictatime", "nodiratime", "diratime", "defaults", "auto", "noauto",
    "user", "nouser", "users", "owner", "group", "exec", "noexec", "suid", "nosuid", "dev",
    "nodev", "sync", "async", "_netdev", "nofail", "bg", "fg", "ac", "noac", "cto", "nocto",
    "lock", "nolock", "sharecache", "nosharecache", "resvport", "noresvport", "fsc", "nofsc",
    "rdirplus", "nordirplus", "tcp", "udp", "acl", "noacl", "posix", "noposix", "mand",
    "nomand", "silent", "loud", "comment",
}
_VALUED = {
    "vers", "nfsvers", "minorversion", "nconnect", "rsize", "wsize", "timeo", "retrans",
    "proto", "port", "mountport", "mountproto", "mountvers", "mounthost", "mountaddr", "sec",
    "actimeo", "acregmin", "acregmax", "acdirmin", "acdirmax", "lookupcache", "local_lock",
    "namlen", "addr", "clientaddr", "retry", "max_connect", "context", "fscontext",
    "defcontext", "rootcontext", "xprtsec", "write", "trunkdiscovery", "comment",
}
_VERSIONS = ("2", "3", "4", "4.0", "4.1", "4.2")


@dataclass
class NfsOptions:
    vers: str | None              # "3", "4.0", "4.1", "4.2", "4" (any 4.x) or None (negotiate)
    nconnect: int = 1
    read_only: bool = False
    noauto: bool = False
    raw: list[str] = field(default_factory=list)


def _bad_option() -> MountError:
    return MountError("mount.nfs: an incorrect mount option was specified", 32)


def parse_nfs_options(options: str, fstype: str = "nfs") -> NfsOptions:
    raw = [o.strip() for o in (options or "").split(",") if o.strip()]
    vers = minor = None
    nconnect, ro, noauto = 1, False, False
    for o in raw:
        key, eq, val = o.partition("=")
        if key.startswith("x-") or key.startswith("comment"):
            continue                                       # userspace-only (systemd, fstab)
        if not eq:
            if key not in _FLAGS:
                raise _bad_option()
            ro = True if key == "ro" else False if key == "rw" else ro
            noauto = noauto or key == "noauto"
            continue
        if key not in _VALUED:
            raise _bad_option()
        if key in ("vers", "nfsvers"):
            if val not in _VERSIONS:
                raise _bad_option()
            vers = val
        elif key == "minorversion":
            if val not in ("0", "1", "2"):
                raise _bad_option()
            minor = val
        elif key == "nconnect":
            # Linux accepts 1..16 (NFS_MAX_CONNECTIONS)
            if not val.isdigit() or not 1 <= int(val) <= 16:
                raise _bad_option()
            nconnect = int(val)
        elif key in ("rsize", "wsize", "timeo", "retrans", "port", "namlen", "actimeo",
                     "acregmin", "acregmax", "acdirmin", "acdirmax", "retry") and not val.isdigit():
            raise _bad_option()
    if fstype == "nfs4":
        if vers in ("2", "3"):
            raise _bad_option()
        vers = vers or "4"
    if vers == "4" and minor is not None:
        vers = f"4.{minor}"
    elif minor is not None and vers is None:
        vers = f"4.{minor}"
    elif vers == "4.0" or (vers and vers.startswith("4.")):
        pass
    return NfsOptions(vers, nconnect, ro, noauto, raw)


def semantics_for(vers: str, preserve_unlink: bool) -> str:
    """The TR's table: NFSv4.1+ AND -is-preserve-unlink-enabled -> POSIX unlink."""
    return SEMANTICS_POSIX if preserve_unlink and vers in ("4.1", "4.2") else SEMANTICS_SILLY


def _served(vs: state.Vserver, v: str) -> bool:
    return {"3": vs.nfs_v3, "4.0": vs.nfs_v40, "4.1": vs.nfs_v41, "4.2": vs.nfs_v41}.get(v, False)


def negotiate(vs: state.Vserver, asked: str | None) -> str:
    """The version a Linux client ends up with against this SVM, or MountError."""
    if not vs.nfs_access:
        raise MountError("mount.nfs: Connection refused", 32)
    if asked == "2":
        raise MountError("mount.nfs: Protocol not supported", 32)
    if asked == "3":
        if not vs.nfs_v3:
            raise MountError("mount.nfs: requested NFS version or transport protocol is not "
                             "supported", 32)
        return "3"
    candidates = {None: ["4.2", "4.1", "4.0", "3"], "4": ["4.2", "4.1", "4.0"]}.get(
        asked, [asked])
    for v in candidates:
        if _served(vs, v):
            return v
    raise MountError("mount.nfs: Protocol not supported", 32)


# --- the registry of lab mounts ---------------------------------------------------------------
@dataclass
class Mount:
    source: str                  # "127.0.10.11:/kafka_fg_vol01" (normalised)
    mountpoint: str
    options: str                 # as given
    fstype: str                  # nfs | nfs4 (what the client asked for)
    vers: str                    # negotiated: 3, 4.0, 4.1, 4.2
    nconnect: int
    semantics: str
    volume: str                  # "svm:vol"
    backing: str
    client: str = "127.0.0.1"
    time: str = ""
    pid: int | None = None
    read_only: bool = False

    @property
    def address(self) -> str:
        return self.source.rsplit(":", 1)[0].strip("[]")

    @property
    def junction(self) -> str:
        return self.source.split(":", 1)[1]

    def proc_options(self) -> str:
        """The option string a real client would show in /proc/mounts."""
        base = ["ro" if self.read_only else "rw", "relatime", f"vers={self.vers}",
                "rsize=65536", "wsize=65536", "namlen=255", "hard", "proto=tcp"]
        if self.nconnect > 1:
            base.append(f"nconnect={self.nconnect}")
        base += ["timeo=600", "retrans=2", "sec=sys", f"clientaddr={self.client}",
                 "local_lock=none", f"addr={self.address}"]
        return ",".join(base)


def _root(root: Path | None) -> Path:
    return Path(root) if root else paths.LAB_STATE


def _registry(root: Path | None) -> Path:
    return _root(root) / "mounts.json"


@contextlib.contextmanager
def _locked(root: Path | None):
    f = _registry(root)
    f.parent.mkdir(parents=True, exist_ok=True)
    with open(f.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        entries = _read(root)
        yield entries
        tmp = f.with_suffix(".tmp")
        tmp.write_text(json.dumps([dataclasses.asdict(m) for m in entries], indent=1))
        os.replace(tmp, f)


def _read(root: Path | None) -> list[Mount]:
    f = _registry(root)
    if not f.exists():
        return []
    return [Mount(**m) for m in json.loads(f.read_text() or "[]")]


def _proc_mounts() -> list[tuple[str, str, str]]:
    """(source, mountpoint, type) from /proc/mounts, octal escapes decoded."""
    out = []
    dec = lambda s: re.sub(r"\\(\d{3})", lambda m: chr(int(m.group(1), 8)), s)  # noqa: E731
    with open("/proc/mounts") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3:
                out.append((dec(parts[0]), dec(parts[1]), parts[2]))
    return out


def _mounted_points() -> set[str]:
    return {mp for _s, mp, _t in _proc_mounts()}


def list_mounts(root: Path | None = None) -> list[Mount]:
    """Lab mounts that are really mounted now (stale registry entries are left out)."""
    live = _mounted_points()
    return [m for m in _read(root) if m.mountpoint in live]


# --- mount / umount ------------------------------------------------------------------------------
def _split_source(source: str) -> tuple[str, str]:
    m = re.match(r"^(\[[^\]]+\]|[^:/\s]+):(/.*)$", source or "")
    if not m:
        raise MountError("mount.nfs: remote share not in 'host:dir' format", 32)
    path = "/" + re.sub(r"/+", "/", m.group(2)).strip("/")
    return m.group(1).strip("[]"), path


def _resolve(c: state.Cluster, addr: str, path: str, source: str):
    """(vserver, volume, subpath) for addr:/path, like ONTAP's namespace lookup: the
    volume whose junction is the longest prefix of path."""
    try:
        vs = c.vserver_for_address(addr)
    except LookupError:
        raise MountError("mount.nfs: Connection refused", 32) from None
    best = None
    for vol in c.volumes.values():
        j = vol.junction_path
        if vol.vserver != vs.name or not j or not vol.junction_active:
            continue
        if path == j or path.startswith(j.rstrip("/") + "/"):
            if best is None or len(j) > len(best.junction_path):
                best = vol
    if best is None or best.state != "online":
        raise MountError(f"mount.nfs: access denied by server while mounting {source}", 32)
    if best.is_vsroot and path != "/":
        # a path below the SVM root that is not a junction does not exist on a lab SVM
        raise MountError(f"mount.nfs: mounting {source} failed, reason given by server: "
                         "No such file or directory", 32)
    sub = path[len(best.junction_path):].strip("/")
    return vs, best, sub


def _bindfs_pid(mountpoint: str) -> int | None:
    try:
        import psutil
    except ImportError:
        return None
    for p in psutil.process_iter(["name", "cmdline"]):
        if p.info["name"] == "bindfs" and mountpoint in (p.info["cmdline"] or []):
            return p.pid
    return None


def mount(source: str, mountpoint, options: str = "vers=3", fstype: str = "nfs",
          root: Path | None = None, client: str | None = None) -> Mount:
    """Mount a lab volume at mountpoint (see the module docstring for the rules)."""
    if fstype not in ("nfs", "nfs4"):
        raise MountError(f"mount: unknown filesystem type '{fstype}' for the lab", 32)
    root = _root(root)
    mp = str(Path(mountpoint).absolute())
    opts = parse_nfs_options(options, fstype)
    addr, path = _split_source(source)
    norm = f"{addr}:{path}"
    if not Path(mp).is_dir():
        raise MountError(f"mount.nfs: mount point {mp} does not exist", 32)
    c = state.load(root)
    vs, vol, sub = _resolve(c, addr, path, source)
    vers = negotiate(vs, opts.vers)
    sem = semantics_for(vers, vol.is_preserve_unlink_enabled)
    backing = state.backing_dir(vol, root) / sub
    if not backing.is_dir():
        raise MountError(f"mount.nfs: mounting {source} failed, reason given by server: "
                         "No such file or directory", 32)
    with _locked(root) as entries:
        if mp in _mounted_points():
            raise MountError(f"mount.nfs: {mp} is busy or already mounted", 32)
        fuse_opts = ["subtype=" + ("nfs4" if vers.startswith("4") else "nfs")]
        if sem == SEMANTICS_POSIX:
            fuse_opts.append("hard_remove")
        if opts.read_only:
            fuse_opts.append("ro")
        cmd = ["bindfs", "-o", ",".join(fuse_opts), str(backing), mp]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
        if r.returncode != 0:
            raise MountError(f"mount.nfs: {r.stderr.strip() or 'bindfs failed'}", 32)
        m = Mount(source=norm, mountpoint=mp, options=options or "", fstype=fstype, vers=vers,
                  nconnect=opts.nconnect, semantics=sem, volume=vol.key, backing=str(backing),
                  client=client or os.environ.get("LAB_HOST_ADDRESS", "127.0.0.1"),
                  time=time.strftime("%Y-%m-%dT%H:%M:%S"), pid=_bindfs_pid(mp),
                  read_only=opts.read_only)
        entries[:] = [e for e in entries if e.mountpoint != mp] + [m]
    return m


def _fusermount(mp: str, lazy: bool = False) -> subprocess.CompletedProcess:
    return subprocess.run(["fusermount3", "-u" + ("z" if lazy else ""), mp],
                          capture_output=True, text=True, timeout=30)


def umount(mountpoint, root: Path | None = None, lazy: bool = False) -> None:
    mp = str(Path(mountpoint).absolute())
    with _locked(root) as entries:
        if mp not in _mounted_points() or not any(e.mountpoint == mp for e in entries):
            entries[:] = [e for e in entries if e.mountpoint != mp]
            raise MountError(f"umount: {mp}: not mounted.", 32)
        r = _fusermount(mp, lazy)
        if r.returncode != 0:
            if "busy" in r.stderr.lower():
                raise MountError(f"umount: {mp}: target is busy.", 32)
            raise MountError(f"umount: {mp}: {r.stderr.strip()}", 32)
        entries[:] = [e for e in entries if e.mountpoint != mp]


def unmount_all(root: Path | None = None) -> list[str]:
    """Unmount every lab mount under root, including FUSE mounts left by a crash (found in
    /proc/mounts by their backing dir or mountpoint under root); lazily when busy or stale.
    Idempotent; returns the mountpoints it unmounted."""
    root = _root(root).absolute()
    prefix = str(root).rstrip("/") + "/"
    targets = []
    with _locked(root) as entries:
        for m in entries:
            targets.append(m.mountpoint)
        for src, mp, typ in _proc_mounts():
            if typ.startswith("fuse") and (src.startswith(prefix) or mp.startswith(prefix)):
                targets.append(mp)
        live = _mounted_points()
        done = []
        # deepest first, so nested mounts do not keep their parents busy
        for mp in sorted(dict.fromkeys(targets), key=len, reverse=True):
            if mp not in live:
                continue
            if _fusermount(mp).returncode != 0:
                _fusermount(mp, lazy=True)
            done.append(mp)
        entries[:] = []
    return done


def mount_all(fstab: Path, root: Path | None = None, types: str | None = None,
              map_path=None) -> list[Mount]:
    """``mount -a`` for the nfs/nfs4 lines of fstab: lines already mounted and ``noauto``
    lines are skipped; every line is tried, failures are reported together."""
    fstab = Path(fstab)
    if not fstab.exists():
        raise MountError(f"mount: {fstab}: parse error: can't open file", 32)
    wanted = set(types.split(",")) if types else {"nfs", "nfs4"}
    done, errors = [], []
    live = _mounted_points()
    for line in fstab.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        f = line.split()
        if len(f) < 3:
            errors.append(f"mount: {fstab}: parse error at line: {line}")
            continue
        spec, file, vfstype = f[:3]
        opts = f[3] if len(f) > 3 else "defaults"
        if vfstype not in ("nfs", "nfs4") or vfstype not in wanted:
            continue
        if "noauto" in opts.split(","):
            continue
        mp = map_path(file) if map_path else file
        if str(Path(mp).absolute()) in live:
            continue
        try:
            done.append(mount(spec, mp, opts, vfstype, root=root))
        except MountError as exc:
            errors.append(str(exc))
    if errors:
        err = MountError("\n".join(errors), 64 if done else 32)
        err.mounted = done
        raise err
    return done


def fstab_entry(fstab: Path, key: str) -> tuple[str, str, str, str] | None:
    """(spec, file, type, options) of the fstab line whose spec or file is key."""
    if not Path(fstab).exists():
        return None
    for line in Path(fstab).read_text().splitlines():
        f = line.split()
        if len(f) >= 3 and not f[0].startswith("#") and key in (f[0], f[1]):
            return f[0], f[1], f[2], (f[3] if len(f) > 3 else "defaults")
    return None


# --- df ------------------------------------------------------------------------------------------
def _df_numbers(m: Mount, root: Path | None) -> tuple[int, int, int]:
    c = state.load(_root(root))
    vol = c.volumes.get(m.volume)
    if vol is None:                                    # volume deleted under a live mount
        return 0, 0, 0
    size = int(vol.size * (100 - vol.percent_snapshot_space) / 100)
    used = space.used_bytes(state.backing_dir(vol, _root(root)))
    return size, used, max(0, size - used)


def _mount_of(path: str, mounts: list[Mount]) -> Mount | None:
    p = str(Path(path).absolute())
    best = None
    for m in mounts:
        if p == m.mountpoint or p.startswith(m.mountpoint.rstrip("/") + "/"):
            if best is None or len(m.mountpoint) > len(best.mountpoint):
                best = m
    return best


def df_h(paths: list | None = None, root: Path | None = None, human: bool = True,
         show_type: bool = False, under: str | None = None) -> str:
    """``df -h`` table for lab mounts (all, those holding ``paths``, or those whose
    mountpoint is under ``under``): Size from the volume size less its snapshot reserve
    (what an NFS client sees), Used from the bytes in the volume."""
    mounts = list_mounts(root)
    if paths:
        sel = []
        for p in paths:
            m = _mount_of(str(p), mounts)
            if m is None:
                raise MountError(f"df: {p}: not on a lab NFS mount", 1)
            sel.append(m)
    else:
        sel = [m for m in mounts if not under or m.mountpoint.startswith(under.rstrip("/") + "/")
               or m.mountpoint == under]
    rows = []
    for m in sel:
        size, used, avail = _df_numbers(m, root)
        pct = f"{math.ceil(used * 100 / (used + avail))}%" if used + avail else "-"
        if human:
            nums = [units.df_human(size), units.df_human(used), units.df_human(avail)]
        else:
            nums = [str(-(-size // 1024)), str(-(-used // 1024)), str(-(-avail // 1024))]
        rows.append([m.source] + ([("nfs4" if m.vers.startswith("4") else "nfs")]
                                  if show_type else []) + nums + [pct, m.mountpoint])
    head = ["Filesystem"] + (["Type"] if show_type else []) + (
        ["Size", "Used", "Avail", "Use%"] if human else ["1K-blocks", "Used", "Available", "Use%"]
    ) + ["Mounted on"]
    table = [head] + rows
    widths = [max(len(r[i]) for r in table) for i in range(len(head))]
    nleft = 2 if show_type else 1
    out = []
    for r in table:
        cells = [r[i].ljust(widths[i]) if i < nleft else r[i].rjust(widths[i])
                 for i in range(len(head) - 1)]
        out.append(" ".join(cells) + " " + r[-1])
    return "\n".join(out) + "\n"


def das_dir(name: str, root: Path | None = None) -> Path:
    """A plain directory standing in for a broker's local disk (DAS)."""
    d = _root(root) / "das" / name
    d.mkdir(parents=True, exist_ok=True)
    return d


# --- shims and command line ----------------------------------------------------------------
SYSTEM_DIRS = ("/usr/bin", "/bin", "/usr/sbin", "/sbin")


def _system(tool: str) -> str:
    for d in SYSTEM_DIRS:
        p = os.path.join(d, tool)
        if os.access(p, os.X_OK):
            return p
    return tool


def install_shims(bin_dir: Path) -> list[Path]:
    """Write bin_dir/mount, umount, df: NFS work goes to the lab, the rest to the system
    tools, so the TR's `mount -t nfs ...`, `mount -a` and `df -h` run as written."""
    bin_dir = Path(bin_dir)
    bin_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for tool in ("mount", "umount", "df"):
        f = bin_dir / tool
        f.write_text("#!/bin/sh\n"
                     f"# Lab shim for {tool}: NFS sources/mountpoints -> the ONTAP stand-in's\n"
                     f"# volumes (tr4947.lab.storage); everything else -> {_system(tool)}.\n"
                     f"exec {shlex.quote(sys.executable)} -m tr4947.lab.storage {tool} \"$@\"\n")
        f.chmod(0o755)
        written.append(f)
    return written


def _host_root() -> str | None:
    return os.environ.get("TR4947_HOST_ROOT") or None


def _map(path: str) -> str:
    """A lab host's absolute path -> the real path under its root (TR4947_HOST_ROOT)."""
    hr = _host_root()
    if not hr or not path.startswith("/"):
        return path
    real_roots = (hr, str(paths.LAB_STATE))
    if any(path == r or path.startswith(r.rstrip("/") + "/") for r in real_roots):
        return path
    return hr.rstrip("/") + path


def _default_fstab() -> str:
    hr = _host_root()
    return os.path.join(hr, "etc", "fstab") if hr else "/etc/fstab"


def _delegate(tool: str, argv: list[str]) -> int:
    return subprocess.call([_system(tool)] + argv)


def _cli_mount(argv: list[str]) -> int:
    if any(a in ("-h", "--help") for a in argv):
        print(USAGE)
        return 0
    if any(a in ("-V", "--version") for a in argv):
        return _delegate("mount", argv)
    req = parse_mount_argv(["mount"] + argv)
    root = paths.LAB_STATE
    if req.all:
        fstab = req.fstab or _default_fstab()
        done = mount_all(Path(_map(fstab) if req.fstab else fstab), root,
                         types=req.fstype, map_path=_map)
        if req.verbose:
            for m in done:
                print(f"{m.mountpoint}               : successfully mounted")
        return 0
    if not req.source and not req.mountpoint:
        lab = list_mounts(root)
        mine = {m.mountpoint for m in lab}
        r = subprocess.run([_system("mount")] + argv, capture_output=True, text=True)
        for line in r.stdout.splitlines():
            parts = line.split(" on ", 1)
            if len(parts) == 2 and parts[1].split(" type ")[0] in mine:
                continue
            print(line)
        for m in lab:
            if req.fstype and req.fstype not in (m.fstype, "nfs4" if m.vers.startswith("4") else "nfs"):
                continue
            print(f"{m.source} on {m.mountpoint} type "
                  f"{'nfs4' if m.vers.startswith('4') else 'nfs'} ({m.proc_options()})")
        return r.returncode
    if not (req.source and req.mountpoint):
        key = req.source or req.mountpoint
        ent = fstab_entry(Path(_map(req.fstab) if req.fstab else _default_fstab()), key)
        if ent is None:
            if req.fstype in ("nfs", "nfs4") or _is_nfs_source(key):
                raise MountError(f"mount: {key}: can't find in /etc/fstab.", 1)
            return _delegate("mount", argv)
        req.source, req.mountpoint, t, o = ent
        req.fstype = req.fstype or t
        req.options = ",".join(x for x in (o, req.options) if x)
    nfs = req.fstype in ("nfs", "nfs4") or (req.fstype is None and _is_nfs_source(req.source))
    if not nfs:
        return _delegate("mount", argv)
    if req.fake:
        return 0
    m = mount(req.source, _map(req.mountpoint), req.options, req.fstype or "nfs", root=root)
    if req.verbose:
        print(f"mount.nfs: timeout set for {time.ctime()}\n"
              f"mount.nfs: trying text-based options '{m.options or 'vers=' + m.vers}'")
    return 0


def _umount_all(argv: list[str], lazy: bool) -> int:
    """``umount -a [-t nfs,nfs4]`` on a lab host: every lab mount of this host (of those
    types). Never handed to the system's umount, which would act on the real machine."""
    types = None
    for i, a in enumerate(argv):
        if a in ("-t", "--types") and i + 1 < len(argv):
            types = set(argv[i + 1].split(","))
        elif a.startswith("--types="):
            types = set(a.split("=", 1)[1].split(","))
    hr = _host_root().rstrip("/") + "/"
    rc = 0
    for m in list_mounts(paths.LAB_STATE):
        shown = "nfs4" if m.vers.startswith("4") else "nfs"
        if not m.mountpoint.startswith(hr) or (types and not ({m.fstype, shown} & types)):
            continue
        try:
            umount(m.mountpoint, paths.LAB_STATE, lazy=lazy)
        except MountError as exc:
            print(str(exc), file=sys.stderr)
            rc = exc.code
    return rc


def _cli_umount(argv: list[str]) -> int:
    lazy = any(a in ("-l", "--lazy") for a in argv)
    if any(a in ("-a", "--all") for a in argv) and _host_root():
        return _umount_all(argv, lazy)
    targets = [a for a in argv if not a.startswith("-")]
    if not targets:
        print("umount: bad usage\nTry 'umount --help' for more information.", file=sys.stderr)
        return 1
    root = paths.LAB_STATE
    lab = list_mounts(root)
    rc = 0
    other = []
    for t in targets:
        real = _map(t)
        m = next((m for m in lab if m.mountpoint == str(Path(real).absolute())
                  or m.source == t), None)
        if m is None:
            other.append(t)
            continue
        try:
            umount(m.mountpoint, root, lazy=lazy)
        except MountError as exc:
            print(str(exc), file=sys.stderr)
            rc = exc.code
    if other:
        rc = _delegate("umount", [a for a in argv if a.startswith("-")] + other) or rc
    return rc


def _cli_df(argv: list[str]) -> int:
    flags = [a for a in argv if a.startswith("-")]
    known = {"-h", "--human-readable", "-T", "--print-type", "-hT", "-Th"}
    if any(f not in known for f in flags):
        return _delegate("df", argv)
    human = any("h" in f.lstrip("-") or f == "--human-readable" for f in flags)
    show_type = any(f in ("-T", "--print-type", "-hT", "-Th") for f in flags)
    targets = [a for a in argv if not a.startswith("-")]
    root = paths.LAB_STATE
    lab = list_mounts(root)
    mine = [t for t in targets if _mount_of(_map(t), lab)]
    others = [t for t in targets if t not in mine]
    rc = 0
    if not targets or mine:
        sys.stdout.write(df_h([_map(t) for t in mine] or None, root, human=human,
                              show_type=show_type, under=_host_root() if not targets else None))
    if others:
        rc = _delegate("df", flags + others)
    return rc


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in ("mount", "umount", "df"):
        print("usage: python -m tr4947.lab.storage mount|umount|df [arguments]", file=sys.stderr)
        return 1
    tool, rest = argv[0], argv[1:]
    try:
        return {"mount": _cli_mount, "umount": _cli_umount, "df": _cli_df}[tool](rest)
    except MountError as exc:
        print(str(exc), file=sys.stderr)
        return exc.code
    except FileNotFoundError as exc:               # no lab state
        print(f"{tool}: {exc}", file=sys.stderr)
        return 32


if __name__ == "__main__":
    sys.exit(main())
