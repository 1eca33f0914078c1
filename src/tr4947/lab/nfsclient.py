"""The NFS client of a lab host: ``mount``, ``umount``, ``df`` and ``nfsstat`` as the TR runs them.

A lab host has no kernel NFS client. These shims (installed as /usr/local/sbin/mount, umount,
df and nfsstat on every lab host, ahead of the system tools on root's PATH) take the real
tools' arguments and do an NFS client's part:

* ``mount -t nfs -o vers=4.1 <lif>:/<junction> /demo`` (and ``mount -a`` from /etc/fstab)
  asks the storage stand-in's NFS service on ``<lif>`` (port 2049, over the lab network;
  see tr4947.lab.storage) for the volume; the server decides the version and the semantics
  (POSIX unlink with preserve-unlink on NFSv4.1+, silly rename otherwise), and this client
  exposes the volume's data at ``/demo`` with the lab's NFS client layer, tr4947-nfs (a FUSE
  server built from lab/nfs-client): reads and writes go to the disk through FUSE
  passthrough, namespace requests through the server, which silly-renames an unlinked open
  file to ``.nfs<fileid><counter>`` as the Linux client does, or removes it at once with
  POSIX unlink. It keeps a connection to the NFS service (leases, locks, the volume's size,
  LIF moves). ``hard`` (the default) or ``soft``, with ``timeo`` and ``retrans``, decide how
  long a request waits for a server that does not answer (see tr4947.nfs_timeouts): a
  hard mount waits as long as it takes, a soft one fails the request with EIO after its
  major timeout. Mount options are checked as mount.nfs checks them; the userspace option
  ``x-lab-nopassthrough`` makes the layer serve data itself, so that a stall (a silent
  server, a pause) and the size limit (ENOSPC) see every write.
* ``mount`` without arguments lists the host's mounts, showing the lab's NFS mounts as a
  kernel client would (``<lif>:/<junction> on /demo type nfs4 (rw,...,vers=4.1,...)``): an
  emulated view, which the guide labels as such wherever it shows it.
* ``df`` reports the volume's size and use as the server reports them (NFS FSSTAT).
* ``nfsstat -m`` / ``nfsstat -c``: each mount's options, and the layer's request counters
  named after the NFS operations they stand for.

Anything that is not NFS goes to the system tools. The host's own record of its NFS mounts
is /run/tr4947/nfs-mounts.json (gone with the host, like the kernel's mount table); each
mount's layer has a control socket beside it (``status``, ``pause``, ``resume``: the drills'
hooks, see :func:`control`).
"""
from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import re
import select
import shutil
import socket
import subprocess
import tempfile
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from .. import nfs_timeouts, paths
from ..atomic import locked_json
from ..units import df_human

NFS_PORT = int(os.environ.get("TR4947_NFS_PORT", "2049"))
REGISTRY = Path(os.environ.get("TR4947_NFS_REGISTRY", "/run/tr4947/nfs-mounts.json"))
#: The userspace mount option that turns FUSE passthrough off for one mount (drills).
NO_PASSTHROUGH = "x-lab-nopassthrough"
#: TR4947_NFS_LAYER=bindfs mounts with bindfs instead: a comparison for bench/lab_bench.py only.
BINDFS_LAYER = "bindfs (bench comparison)"
SYSTEM_DIRS = ("/usr/bin", "/bin", "/usr/sbin", "/sbin")


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

Lab NFS client: NFS sources (-t nfs|nfs4, or <addr>:/<path>) are mounted from the lab's
storage stand-in (FUSE); anything else is passed to the system mount.
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
    passthrough: bool = True
    timeouts: nfs_timeouts.Timeouts = field(default_factory=nfs_timeouts.Timeouts)


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
    return NfsOptions(vers, nconnect, ro, noauto, raw, passthrough=NO_PASSTHROUGH not in raw,
                      timeouts=nfs_timeouts.from_options(",".join(raw)))


# --- the host's record of its NFS mounts -------------------------------------------------------
@dataclass
class ClientMount:
    source: str                  # "198.18.10.11:/kafka_fg_vol01" (normalised)
    mountpoint: str
    options: str                 # as given
    fstype: str                  # nfs | nfs4 (what was asked)
    vers: str                    # what the server granted
    nconnect: int
    semantics: str
    server_id: str               # the server's id of this mount (statfs, release)
    client: str = ""
    read_only: bool = False
    time: str = ""
    pid: int = 0                 # the layer's process (tr4947-nfs)
    control: str = ""            # its control socket
    layer: str = ""              # "tr4947-nfs 0.1.0 (FUSE passthrough)" or why not
    soft: bool = False           # as asked (hard unless soft/softerr)
    timeo: int = nfs_timeouts.DEFAULT_TIMEO
    retrans: int = nfs_timeouts.DEFAULT_RETRANS

    @property
    def address(self) -> str:
        return self.source.rsplit(":", 1)[0].strip("[]")

    def proc_options(self) -> str:
        """The option string a kernel NFS client would show in /proc/mounts."""
        base = ["ro" if self.read_only else "rw", "relatime", f"vers={self.vers}",
                "rsize=65536", "wsize=65536", "namlen=255", "soft" if self.soft else "hard",
                "proto=tcp"]
        if self.nconnect > 1:
            base.append(f"nconnect={self.nconnect}")
        base += [f"timeo={self.timeo}", f"retrans={self.retrans}", "sec=sys",
                 f"clientaddr={self.client}",
                 "local_lock=none", f"addr={self.address}"]
        return ",".join(base)

    @property
    def shown_type(self) -> str:
        return "nfs4" if self.vers.startswith("4") else "nfs"


def _entries(raw: list[dict]) -> list[ClientMount]:
    names = {f.name for f in dataclasses.fields(ClientMount)}
    return [ClientMount(**{k: v for k, v in m.items() if k in names}) for m in raw]


def _read() -> list[ClientMount]:
    return _entries(json.loads(REGISTRY.read_text() or "[]")) if REGISTRY.exists() else []


@contextlib.contextmanager
def _locked():
    """The registry, locked against the host's other mount/umount, written back whole."""
    with locked_json(REGISTRY) as raw:
        entries = _entries(raw)
        yield entries
        raw[:] = [dataclasses.asdict(m) for m in entries]


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


def list_mounts() -> list[ClientMount]:
    """This host's NFS mounts that are really mounted now."""
    live = _mounted_points()
    return [m for m in _read() if m.mountpoint in live]


# --- talking to the server -------------------------------------------------------------------------
def _split_source(source: str) -> tuple[str, str]:
    m = re.match(r"^(\[[^\]]+\]|[^:/\s]+):(/.*)$", source or "")
    if not m:
        raise MountError("mount.nfs: remote share not in 'host:dir' format", 32)
    path = "/" + re.sub(r"/+", "/", m.group(2)).strip("/")
    return m.group(1).strip("[]"), path


def _call(address: str, method: str, path: str, body: dict | None = None,
          timeout: float = 10) -> dict:
    url = f"http://{address}:{NFS_PORT}{path}"
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return json.loads(r.read() or b"{}")
    except urllib.error.HTTPError as exc:
        try:
            err = json.loads(exc.read() or b"{}")
        except ValueError:
            err = {}
        raise MountError(err.get("error") or f"mount.nfs: server error {exc.code}",
                         int(err.get("code", 32))) from None
    except ConnectionError:
        # Refused, reset, or a pipe the server broke: the server turned the connection away
        # (a busy machine decides which of them the client sees first).
        raise MountError("mount.nfs: Connection refused", 32) from None
    except (TimeoutError, OSError, urllib.error.URLError) as exc:
        reason = getattr(exc, "reason", exc)
        if isinstance(reason, ConnectionError) or "refused" in str(reason).lower() \
                or "reset" in str(reason).lower():
            raise MountError("mount.nfs: Connection refused", 32) from None
        raise MountError("mount.nfs: Connection timed out", 32) from None


def _host_address() -> str:
    """This host's own address on the lab network (what the server sees as the client)."""
    try:
        out = subprocess.run(["ip", "-4", "-o", "addr", "show", "dev", "eth0"],
                             capture_output=True, text=True, timeout=5).stdout
        m = re.search(r"inet (\d+\.\d+\.\d+\.\d+)", out)
        return m.group(1) if m else ""
    except OSError:
        return ""


# --- mount / umount -----------------------------------------------------------------------------------
def mount(source: str, mountpoint, options: str = "", fstype: str = "nfs") -> ClientMount:
    if fstype not in ("nfs", "nfs4"):
        raise MountError(f"mount: unknown filesystem type '{fstype}'", 32)
    mp = str(Path(mountpoint).absolute())
    opts = parse_nfs_options(options, fstype)
    addr, path = _split_source(source)
    if not Path(mp).is_dir():
        raise MountError(f"mount.nfs: mount point {mp} does not exist", 32)
    with _locked() as entries:
        if mp in _mounted_points():
            raise MountError(f"mount.nfs: {mp} is busy or already mounted", 32)
        granted = _call(addr, "POST", "/mount", {
            "path": path, "vers": opts.vers, "fstype": fstype, "options": options or "",
            "nconnect": opts.nconnect, "mountpoint": mp, "read_only": opts.read_only})
        vers = granted["vers"]
        try:
            started = _start_layer(granted, mp, opts, "nfs4" if vers.startswith("4") else "nfs")
        except MountError:
            _call(addr, "POST", "/umount", {"id": granted["id"]})
            raise
        m = ClientMount(source=granted["source"], mountpoint=mp, options=options or "",
                        fstype=fstype, vers=vers, nconnect=opts.nconnect,
                        semantics=granted["semantics"], server_id=granted["id"],
                        client=granted.get("client") or _host_address(),
                        read_only=opts.read_only, time=time.strftime("%Y-%m-%dT%H:%M:%S"),
                        soft=opts.timeouts.soft, timeo=opts.timeouts.timeo,
                        retrans=opts.timeouts.retrans, **started)
        entries[:] = [e for e in entries if e.mountpoint != mp] + [m]
    return m


def _layer_dir() -> Path:
    return REGISTRY.parent / "nfs"


def _start_layer(granted: dict, mp: str, opts: NfsOptions, subtype: str) -> dict:
    """Expose the granted volume at ``mp`` with the lab's NFS client layer; returns the
    registry fields it adds (pid, control socket, layer)."""
    if os.environ.get("TR4947_NFS_LAYER") == "bindfs":
        return _start_bindfs(granted, mp, opts, subtype)
    try:
        binary = paths.nfs_client_binary()
    except FileNotFoundError as exc:
        raise MountError(f"mount.nfs: {exc}", 32) from None
    d = _layer_dir()
    d.mkdir(parents=True, exist_ok=True)
    control = d / f"{granted['id']}.sock"
    argv = [str(binary), granted["backing"], mp, "--semantics", granted["semantics"],
            "--fsname", granted["source"], "--subtype", subtype, "--control", str(control),
            "--server", f"{granted['source'].rsplit(':', 1)[0].strip('[]')}:{NFS_PORT}",
            "--mount-id", granted["id"], "--silly-counter", str(REGISTRY.parent / "nfs-sillycounter")]
    if not opts.passthrough:
        argv.append("--no-passthrough")
    if opts.read_only:
        argv.append("--ro")
    to = opts.timeouts
    argv += ["--timeo", f"{to.timeo_s:g}"]
    if to.soft:
        argv += ["--soft", f"{to.major_s:g}"]
    log = open(d / f"{granted['id']}.log", "ab")
    try:
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log,
                             start_new_session=True, close_fds=True)
    finally:
        log.close()
    line = b""
    deadline = time.monotonic() + 30
    while not line.endswith(b"\n") and time.monotonic() < deadline:
        r, _, _ = select.select([p.stdout], [], [], 0.2)
        if r:
            chunk = os.read(p.stdout.fileno(), 4096)
            if not chunk:
                break
            line += chunk
    p.stdout.close()
    try:
        ready = json.loads(line or b"{}")
    except ValueError:
        ready = {}
    if not ready.get("ready"):
        if p.poll() is None:
            p.kill()
        p.wait(5)
        err = (d / f"{granted['id']}.log").read_text(errors="replace").strip().splitlines()
        why = next((ln.removeprefix("tr4947-nfs: ") for ln in err if ln.startswith("tr4947-nfs:")),
                   "the NFS client layer did not start")
        raise MountError(f"mount.nfs: {why}", 32)
    return {"pid": p.pid, "control": str(control), "layer": ready["layer"]}


def _start_bindfs(granted: dict, mp: str, opts: NfsOptions, subtype: str) -> dict:
    """The lab's layer before tr4947-nfs, kept for bench/lab_bench.py's comparison only."""
    fuse_opts = ["subtype=" + subtype, "nonempty"]
    if granted["semantics"] == "posix-unlink":
        fuse_opts.append("hard_remove")
    if opts.read_only:
        fuse_opts.append("ro")
    r = subprocess.run(["bindfs", "-o", ",".join(fuse_opts), granted["backing"], mp],
                       capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        raise MountError(f"mount.nfs: {r.stderr.strip() or 'bindfs failed'}", 32)
    return {"pid": 0, "control": "", "layer": BINDFS_LAYER}


def _fusermount(mp: str, lazy: bool = False) -> subprocess.CompletedProcess:
    return subprocess.run(["fusermount3", "-u" + ("z" if lazy else ""), mp],
                          capture_output=True, text=True, timeout=30)


def umount(mountpoint, lazy: bool = False) -> None:
    mp = str(Path(mountpoint).absolute())
    with _locked() as entries:
        mine = next((e for e in entries if e.mountpoint == mp), None)
        if mp not in _mounted_points() or mine is None:
            entries[:] = [e for e in entries if e.mountpoint != mp]
            raise MountError(f"umount: {mp}: not mounted.", 32)
        r = _fusermount(mp, lazy)
        if r.returncode != 0:
            if "busy" in r.stderr.lower():
                raise MountError(f"umount: {mp}: target is busy.", 32)
            raise MountError(f"umount: {mp}: {r.stderr.strip()}", 32)
        entries[:] = [e for e in entries if e.mountpoint != mp]
    if not lazy:
        _wait_gone(mine.pid, 10)        # the layer says goodbye to the server as it ends
    try:
        _call(mine.address, "POST", "/umount", {"id": mine.server_id}, timeout=5)
    except MountError:
        pass                    # the server may be gone; the client's side is done


def _wait_gone(pid: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while pid and time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        try:
            if os.waitpid(pid, os.WNOHANG)[0] == pid:   # our own child (tests)
                return
        except ChildProcessError:
            pass
        time.sleep(0.05)


def mount_all(fstab: Path, types: str | None = None) -> list[ClientMount]:
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
        if str(Path(file).absolute()) in live:
            continue
        try:
            done.append(mount(spec, file, opts, vfstype))
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


# --- df ---------------------------------------------------------------------------------------------
def _mount_of(path: str, mounts: list[ClientMount]) -> ClientMount | None:
    p = str(Path(path).absolute())
    best = None
    for m in mounts:
        if p == m.mountpoint or p.startswith(m.mountpoint.rstrip("/") + "/"):
            if best is None or len(m.mountpoint) > len(best.mountpoint):
                best = m
    return best


def df_table(paths: list | None = None, human: bool = True, show_type: bool = False) -> str:
    """``df`` for this host's NFS mounts (all, or those holding ``paths``): sizes from the
    server (the volume size less its snapshot reserve, used from the bytes in it)."""
    mounts = list_mounts()
    if paths:
        sel = []
        for p in paths:
            m = _mount_of(str(p), mounts)
            if m is None:
                raise MountError(f"df: {p}: not on an NFS mount", 1)
            sel.append(m)
    else:
        sel = mounts
    rows = []
    for m in sel:
        try:
            s = _call(m.address, "GET", f"/statfs?id={m.server_id}", timeout=5)
            size, used, avail = s["size"], s["used"], s["avail"]
        except MountError:
            size = used = avail = 0
        pct = f"{math.ceil(used * 100 / (used + avail))}%" if used + avail else "-"
        if human:
            nums = [df_human(size), df_human(used), df_human(avail)]
        else:
            nums = [str(-(-size // 1024)), str(-(-used // 1024)), str(-(-avail // 1024))]
        rows.append([m.source] + ([m.shown_type] if show_type else []) + nums
                    + [pct, m.mountpoint])
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


# --- the layer's control socket: the drills' hooks ------------------------------------------
def control(mountpoint, request: dict, timeout: float = 10) -> dict:
    """Send one request to the control socket of this host's NFS mount at ``mountpoint``
    (``{"op": "status"}``, ``{"op": "pause", "seconds": 5}``, ``{"op": "resume"}``)."""
    mp = str(Path(mountpoint).absolute())
    m = next((m for m in list_mounts() if m.mountpoint == mp), None)
    if m is None:
        raise MountError(f"{mp}: not an NFS mount of this host", 32)
    if not m.control:
        raise MountError(f"{mp}: mounted with {m.layer or 'a layer'} that has no control socket", 32)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(m.control)
        s.sendall((json.dumps(request) + "\n").encode())
        buf = b""
        while not buf.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
    answer = json.loads(buf or b"{}")
    if not answer.get("ok"):
        raise MountError(f"{mp}: {answer.get('error', 'no answer from the NFS client layer')}", 32)
    return answer


def status(mountpoint) -> dict:
    """The mount's layer, semantics, gate, connection and counters."""
    return control(mountpoint, {"op": "status"})


def pause(mountpoint, seconds: float | None = None) -> None:
    """Block every request of the mount (as a hard mount blocks while its server is away),
    for ``seconds`` or until :func:`resume`. Data moved by FUSE passthrough is not blocked:
    mount with ``-o x-lab-nopassthrough`` for a drill that must stop writes."""
    control(mountpoint, {"op": "pause", **({} if seconds is None else {"seconds": seconds})})


def resume(mountpoint) -> None:
    control(mountpoint, {"op": "resume"})


_LAYER: str | None = None


def layer() -> str:
    """Which NFS client layer the lab runs on this machine, for a run's provenance: e.g.
    ``tr4947-nfs 0.1.0 (FUSE passthrough)`` or ``tr4947-nfs 0.1.0 (no passthrough: <why>)``.
    Found by mounting a scratch directory with the layer (next to the lab's state, on the
    file system its volumes use) and asking it."""
    global _LAYER
    if _LAYER is not None:
        return _LAYER
    try:
        binary = paths.nfs_client_binary()
    except FileNotFoundError as exc:
        return f"tr4947-nfs missing ({exc})"
    if os.geteuid() != 0:
        return "tr4947-nfs (not probed: mounting needs root)"
    base = paths.LAB_STATE.parent if paths.LAB_STATE.parent.is_dir() else None
    tmp = Path(tempfile.mkdtemp(prefix="tr4947-nfs-probe-", dir=base))
    try:
        (tmp / "backing").mkdir()
        (tmp / "mnt").mkdir()
        p = subprocess.Popen([str(binary), str(tmp / "backing"), str(tmp / "mnt"),
                              "--semantics", "posix-unlink", "--threads", "1"],
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        try:
            line = p.stdout.readline()
            ready = json.loads(line or b"{}")
        finally:
            subprocess.run(["fusermount3", "-u", str(tmp / "mnt")], capture_output=True)
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        if not ready.get("ready"):
            return f"tr4947-nfs (did not start: {p.stderr.read().decode(errors='replace').strip()})"
        _LAYER = ready["layer"]
        return _LAYER
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# --- nfsstat ------------------------------------------------------------------------------------
# The layer counts FUSE requests; nfsstat shows them under the NFS operation each stands for
# (open/close/lock exist in NFSv4 only; in NFSv3, locks go to NLM and opens to no RPC).
NFS3_OPS = ["null", "getattr", "setattr", "lookup", "access", "readlink", "read", "write",
            "create", "mkdir", "symlink", "mknod", "remove", "rmdir", "rename", "link",
            "readdir", "readdirplus", "fsstat", "fsinfo", "pathconf", "commit"]
NFS4_OPS = ["null", "read", "write", "commit", "open", "close", "setattr", "renew", "lock",
            "lockt", "locku", "access", "getattr", "lookup", "remove", "rename", "link",
            "symlink", "create", "statfs", "readlink", "readdir"]
_FUSE_TO_NFS = {"lookup": "lookup", "getattr": "getattr", "setattr": "setattr",
                "readlink": "readlink", "read": "read", "write": "write", "create": "create",
                "mkdir": "mkdir", "symlink": "symlink", "mknod": "mknod", "unlink": "remove",
                "rmdir": "rmdir", "rename": "rename", "link": "link", "readdir": "readdir",
                "statfs": "fsstat", "access": "access", "fsync": "commit", "open": "open",
                "release": "close", "setlk": "lock", "getlk": "lockt"}


def _nfs_counts(st: dict, v4: bool) -> dict[str, int]:
    out: dict[str, int] = {}
    for fuse_op, n in st.get("ops", {}).items():
        name = _FUSE_TO_NFS.get(fuse_op)
        if name == "fsstat" and v4:
            name = "statfs"
        if name:
            out[name] = out.get(name, 0) + int(n)
    return out


def _table(names: list[str], counts: dict[str, int]) -> str:
    total = sum(counts.get(n, 0) for n in names) or 1
    lines = []
    for i in range(0, len(names), 5):
        row = names[i:i + 5]
        lines.append("".join(f"{n:<17}" for n in row).rstrip())
        lines.append("".join(f"{counts.get(n, 0):<10}{round(100 * counts.get(n, 0) / total):>3}%    "
                             for n in row).rstrip())
    return "\n".join(lines)


def nfsstat(argv: list[str]) -> str:
    """``nfsstat -m`` (each mount and its options) or ``nfsstat -c`` (client counters)."""
    mounts = list_mounts()
    if "-m" in argv or "--mounts" in argv:
        out = []
        for m in mounts:
            out.append(f"{m.mountpoint} from {m.source}\n Flags:\t{m.proc_options()}\n"
                       f" Layer:\t{m.layer} ({m.semantics})\n")
        return "\n".join(out)
    calls = retrans = 0
    by_vers: dict[str, dict[str, int]] = {}
    for m in mounts:
        try:
            st = status(m.mountpoint)
        except (MountError, OSError, ValueError):
            continue
        v = "4" if m.vers.startswith("4") else "3"
        counts = _nfs_counts(st, v == "4")
        if v == "4":
            counts["renew"] = counts.get("renew", 0)
        agg = by_vers.setdefault(v, {})
        for k, n in counts.items():
            agg[k] = agg.get(k, 0) + n
        calls += sum(counts.values())
        retrans += int(st.get("server", {}).get("retrans", 0))
    out = ["Client rpc stats:", f"{'calls':<11}{'retrans':<11}authrefrsh",
           f"{calls:<11}{retrans:<11}{calls}", ""]
    for v in sorted(by_vers):
        out += [f"Client nfs v{v}:", _table(NFS3_OPS if v == "3" else NFS4_OPS, by_vers[v]), ""]
    return "\n".join(out)


# --- command line (the shims) ----------------------------------------------------------------------
def _system(tool: str) -> str:
    for d in SYSTEM_DIRS:
        p = os.path.join(d, tool)
        if os.access(p, os.X_OK):
            return p
    return tool


def _delegate(tool: str, argv: list[str]) -> int:
    return subprocess.call([_system(tool)] + argv)


def shim(tool: str, python: str) -> str:
    """The /usr/local/sbin/<tool> script of a lab host."""
    return ("#!/bin/sh\n"
            f"# Lab NFS client ({tool}): NFS sources and mounts -> tr4947.lab.nfsclient (the\n"
            f"# storage stand-in over the lab network, FUSE); everything else -> {_system(tool)}.\n"
            f"exec {python} -m tr4947.lab.nfsclient {tool} \"$@\"\n")


def _cli_mount(argv: list[str]) -> int:
    if any(a in ("-h", "--help") for a in argv):
        print(USAGE)
        return 0
    if any(a in ("-V", "--version") for a in argv):
        return _delegate("mount", argv)
    req = parse_mount_argv(["mount"] + argv)
    if req.all:
        done = mount_all(Path(req.fstab or "/etc/fstab"), types=req.fstype)
        if req.verbose:
            for m in done:
                print(f"{m.mountpoint}               : successfully mounted")
        return 0
    if not req.source and not req.mountpoint:
        lab = list_mounts()
        mine = {m.mountpoint for m in lab}
        r = subprocess.run([_system("mount")] + argv, capture_output=True, text=True)
        for line in r.stdout.splitlines():
            parts = line.split(" on ", 1)
            if len(parts) == 2 and parts[1].split(" type ")[0] in mine:
                continue                    # the FUSE line of a lab NFS mount: shown below
            if req.fstype and req.fstype in ("nfs", "nfs4"):
                continue
            print(line)
        for m in lab:
            if req.fstype and req.fstype not in (m.fstype, m.shown_type):
                continue
            print(f"{m.source} on {m.mountpoint} type {m.shown_type} ({m.proc_options()})")
        return r.returncode
    if not (req.source and req.mountpoint):
        key = req.source or req.mountpoint
        ent = fstab_entry(Path(req.fstab or "/etc/fstab"), key)
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
    m = mount(req.source, req.mountpoint, req.options, req.fstype or "nfs")
    if req.verbose:
        print(f"mount.nfs: timeout set for {time.ctime()}\n"
              f"mount.nfs: trying text-based options '{m.options or 'vers=' + m.vers}'")
    return 0


def _cli_umount(argv: list[str]) -> int:
    lazy = any(a in ("-l", "--lazy") for a in argv)
    lab = list_mounts()
    if any(a in ("-a", "--all") for a in argv):
        types = None
        for i, a in enumerate(argv):
            if a in ("-t", "--types") and i + 1 < len(argv):
                types = set(argv[i + 1].split(","))
            elif a.startswith("--types="):
                types = set(a.split("=", 1)[1].split(","))
        rc = 0
        for m in sorted(lab, key=lambda m: len(m.mountpoint), reverse=True):
            if types and not ({m.fstype, m.shown_type} & types):
                continue
            try:
                umount(m.mountpoint, lazy=lazy)
            except MountError as exc:
                print(str(exc), file=sys.stderr)
                rc = exc.code
        if types and not types <= {"nfs", "nfs4"}:
            rc = _delegate("umount", argv) or rc
        return rc
    targets = [a for a in argv if not a.startswith("-")]
    if not targets:
        print("umount: bad usage\nTry 'umount --help' for more information.", file=sys.stderr)
        return 1
    rc = 0
    other = []
    for t in targets:
        m = next((m for m in lab if m.mountpoint == str(Path(t).absolute()) or m.source == t),
                 None)
        if m is None:
            other.append(t)
            continue
        try:
            umount(m.mountpoint, lazy=lazy)
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
    lab = list_mounts()
    mine = [t for t in targets if _mount_of(t, lab)]
    others = [t for t in targets if t not in mine]
    rc = 0
    if not targets or mine:
        sys.stdout.write(df_table(mine or None, human=human, show_type=show_type))
    if others:
        rc = _delegate("df", flags + others)
    return rc


def _cli_nfsstat(argv: list[str]) -> int:
    known = {"-m", "--mounts", "-c", "--client"}
    bad = [a for a in argv if a not in known]
    if bad:
        print(f"nfsstat: the lab's nfsstat knows -m and -c only, not {' '.join(bad)}",
              file=sys.stderr)
        return 2
    sys.stdout.write(nfsstat(argv))
    return 0


def _cli_nfsctl(argv: list[str]) -> int:
    """``nfsctl status|pause|resume MOUNTPOINT [SECONDS]``: the drills' hooks, JSON out."""
    if len(argv) < 2 or argv[0] not in ("status", "pause", "resume"):
        print("usage: nfsctl status|pause|resume MOUNTPOINT [SECONDS]", file=sys.stderr)
        return 2
    op, mp = argv[0], argv[1]
    req: dict = {"op": op}
    if op == "pause" and len(argv) > 2:
        try:
            req["seconds"] = float(argv[2])
        except ValueError:
            print(f"nfsctl: SECONDS must be a number, not {argv[2]!r}", file=sys.stderr)
            return 2
    print(json.dumps(control(mp, req)))
    return 0


TOOLS = {"mount": _cli_mount, "umount": _cli_umount, "df": _cli_df, "nfsstat": _cli_nfsstat,
         "nfsctl": _cli_nfsctl}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in TOOLS:
        print(f"usage: python -m tr4947.lab.nfsclient {'|'.join(TOOLS)} [arguments]",
              file=sys.stderr)
        return 1
    tool, rest = argv[0], argv[1:]
    try:
        return TOOLS[tool](rest)
    except MountError as exc:
        print(str(exc), file=sys.stderr)
        return exc.code


if __name__ == "__main__":
    sys.exit(main())
