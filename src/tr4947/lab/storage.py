"""The storage stand-in's NFS service: which volume a mount gets, and with which semantics.

The machine has no kernel NFS. A lab host's ``mount -t nfs <lif>:/<junction> /demo`` (see
nfsclient.py) asks this service, over the lab network, on the data LIF it names (port 2049,
the NFS port), what an NFS server and client would settle between them:

* the data LIF the request reached picks the SVM (the address the client connected to, as
  on ONTAP); an address that is no data LIF refuses the connection;
* the junction picks the volume (a path below a junction mounts that subdirectory);
* the NFS version is the one asked for or, without one, negotiated like the Linux client:
  4.2, 4.1, 4.0, then 3 (4.2 is served when the SVM has v4.1 enabled, as ONTAP 9.8+ does);
  a version the SVM has disabled fails as mount.nfs does;
* semantics: ``posix-unlink`` only for NFSv4.1+ on a volume with
  ``-is-preserve-unlink-enabled true``; otherwise ``silly-rename`` - what NFS silly rename
  does to Kafka (the client's layer, tr4947-nfs, then renames an unlinked open file to
  ``.nfs<fileid><counter>`` until it is closed, as the Linux client does, so removing its
  directory fails with ENOTEMPTY; with ``posix-unlink`` the name goes at once).

The answer names the volume's backing directory, which the client then exposes with its
FUSE layer (tr4947-nfs, lab/nfs-client): the data path is a local directory, the control
path crosses the network. The service records every mount it granted
(``<root>/mounts.json``: client address, server address, version, nconnect), which ONTAP's
``network connections active show`` lists, answers ``statfs`` (size, used, available) for
``df``, and keeps each client's session (``GET /session``: leases, locks, space, dropped
when the LIF moves; see nfs4state.py).

    python -m tr4947.lab.storage --listen 0.0.0.0:2049 --state-root DIR
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import logging
import re
import socket
import struct
import sys
import time
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

from .. import paths
from ..atomic import locked_json
from .nfs4state import NfsState
from .ontap import service, space, state

log = logging.getLogger("tr4947.lab.storage")

NFS_PORT = 2049
SEMANTICS_POSIX = "posix-unlink"
SEMANTICS_SILLY = "silly-rename"


class MountError(Exception):
    """A refused mount; ``str()`` is what mount.nfs prints, ``code`` its exit status."""

    def __init__(self, message: str, code: int = 32):
        super().__init__(message)
        self.code = code


# --- what the server decides ----------------------------------------------------------------
def semantics_for(vers: str, preserve_unlink: bool) -> str:
    """The TR's table: NFSv4.1+ AND -is-preserve-unlink-enabled -> POSIX unlink."""
    return SEMANTICS_POSIX if preserve_unlink and vers in ("4.1", "4.2") else SEMANTICS_SILLY


def _served(vs: state.Vserver, v: str) -> bool:
    return {"3": vs.nfs_v3, "4.0": vs.nfs_v40, "4.1": vs.nfs_v41, "4.2": vs.nfs_v41}.get(v, False)


def negotiate(vs: state.Vserver, asked: str | None) -> str:
    """The version a Linux client ends up with against this SVM, or MountError."""
    if not vs.nfs_access:
        raise MountError("mount.nfs: Connection refused")
    if asked == "2":
        raise MountError("mount.nfs: Protocol not supported")
    if asked == "3":
        if not vs.nfs_v3:
            raise MountError("mount.nfs: requested NFS version or transport protocol is not "
                             "supported")
        return "3"
    candidates = {None: ["4.2", "4.1", "4.0", "3"], "4": ["4.2", "4.1", "4.0"]}.get(
        asked, [asked])
    for v in candidates:
        if _served(vs, v):
            return v
    raise MountError("mount.nfs: Protocol not supported")


def resolve(c: state.Cluster, lif_address: str, path: str, source: str):
    """(vserver, volume, subpath) for lif:/path, like ONTAP's namespace lookup: the volume
    whose junction is the longest prefix of path."""
    try:
        vs = c.vserver_for_address(lif_address)
    except LookupError:
        raise MountError("mount.nfs: Connection refused") from None
    path = "/" + re.sub(r"/+", "/", path).strip("/")
    best = None
    for vol in c.volumes.values():
        j = vol.junction_path
        if vol.vserver != vs.name or not j or not vol.junction_active:
            continue
        if path == j or path.startswith(j.rstrip("/") + "/"):
            if best is None or len(j) > len(best.junction_path):
                best = vol
    if best is None or best.state != "online":
        raise MountError(f"mount.nfs: access denied by server while mounting {source}")
    if best.is_vsroot and path != "/":
        # a path below the SVM root that is not a junction does not exist on a lab SVM
        raise MountError(f"mount.nfs: mounting {source} failed, reason given by server: "
                         "No such file or directory")
    sub = path[len(best.junction_path):].strip("/")
    if ".." in sub.split("/"):
        raise MountError(f"mount.nfs: access denied by server while mounting {source}")
    return vs, best, sub


# --- the registry of granted mounts ----------------------------------------------------------------
@dataclass
class Mount:
    source: str                  # "198.18.10.11:/kafka_fg_vol01" (normalised)
    mountpoint: str              # on the client
    options: str                 # as given
    fstype: str                  # nfs | nfs4 (what the client asked for)
    vers: str                    # negotiated: 3, 4.0, 4.1, 4.2
    nconnect: int
    semantics: str
    volume: str                  # "svm:vol"
    backing: str
    client: str = ""             # the client's address, as the server saw the connection
    time: str = ""
    id: str = ""
    read_only: bool = False

    @property
    def address(self) -> str:
        return self.source.rsplit(":", 1)[0].strip("[]")

    @property
    def junction(self) -> str:
        return self.source.split(":", 1)[1]


def _registry(root: Path | None) -> Path:
    return (Path(root) if root else paths.LAB_STATE) / "mounts.json"


def _entries(raw: list[dict]) -> list[Mount]:
    fields = {f.name for f in dataclasses.fields(Mount)}
    return [Mount(**{k: v for k, v in m.items() if k in fields}) for m in raw]


def _read(root: Path | None) -> list[Mount]:
    f = _registry(root)
    return _entries(json.loads(f.read_text() or "[]")) if f.exists() else []


@contextlib.contextmanager
def _locked(root: Path | None):
    """The grants, locked against the service's other requests, written back whole."""
    with locked_json(_registry(root)) as raw:
        entries = _entries(raw)
        yield entries
        raw[:] = [dataclasses.asdict(m) for m in entries]


def list_mounts(root: Path | None = None) -> list[Mount]:
    """Mounts granted and not yet released (what the clients told the server)."""
    return _read(root)


def grant(root: Path, lif_address: str, client: str, path: str, *, vers: str | None,
          fstype: str, options: str, nconnect: int, mountpoint: str,
          read_only: bool = False) -> Mount:
    source = f"{lif_address}:{path}"
    c = state.load(root)
    vs, vol, sub = resolve(c, lif_address, path, source)
    v = negotiate(vs, vers)
    backing = state.backing_dir(vol, root) / sub
    if not backing.is_dir():
        raise MountError(f"mount.nfs: mounting {source} failed, reason given by server: "
                         "No such file or directory")
    m = Mount(source=f"{lif_address}:/{path.strip('/')}" if path.strip("/") else source,
              mountpoint=mountpoint, options=options, fstype=fstype, vers=v, nconnect=nconnect,
              semantics=semantics_for(v, vol.is_preserve_unlink_enabled), volume=vol.key,
              backing=str(backing), client=client, time=time.strftime("%Y-%m-%dT%H:%M:%S"),
              id=uuid.uuid4().hex[:12], read_only=read_only)
    with _locked(root) as entries:
        entries[:] = [e for e in entries
                      if not (e.client == client and e.mountpoint == mountpoint)] + [m]
    return m


def release(root: Path, client: str, mount_id: str) -> bool:
    with _locked(root) as entries:
        n = len(entries)
        entries[:] = [e for e in entries if not (e.id == mount_id and e.client == client)]
        return len(entries) < n


def statfs(root: Path, mount_id: str) -> dict:
    """Size, used and available bytes of a granted mount's volume, as an NFS client's df
    shows them: size less the snapshot reserve, used from the bytes in the volume."""
    m = next((e for e in _read(root) if e.id == mount_id), None)
    if m is None:
        raise MountError("Stale file handle", 116)
    c = state.load(root)
    vol = c.volumes.get(m.volume)
    if vol is None:                                    # volume deleted under a live mount
        return {"size": 0, "used": 0, "avail": 0}
    size = int(vol.size * (100 - vol.percent_snapshot_space) / 100)
    used = space.used_bytes(state.backing_dir(vol, root))
    return {"size": size, "used": used, "avail": max(0, size - used)}


# --- the service ------------------------------------------------------------------------------------
class _Handler(BaseHTTPRequestHandler):
    server_version = "tr4947-lab-nfs"
    protocol_version = "HTTP/1.1"
    root: Path
    nfs: NfsState

    def log_message(self, fmt, *args):            # one line per request, to the log
        log.info("%s %s", self.client_address[0], fmt % args)

    def _reply(self, code: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)
        self.close_connection = True

    def _lif(self) -> str:
        return self.connection.getsockname()[0]

    def do_POST(self):
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            if self.path == "/mount":
                m = grant(self.root, self._lif(), self.client_address[0], str(body["path"]),
                          vers=body.get("vers"), fstype=body.get("fstype", "nfs"),
                          options=str(body.get("options", "")),
                          nconnect=int(body.get("nconnect", 1)),
                          mountpoint=str(body["mountpoint"]),
                          read_only=bool(body.get("read_only")))
                self._reply(200, dataclasses.asdict(m))
            elif self.path == "/umount":
                release(self.root, self.client_address[0], str(body["id"]))
                self._reply(200, {})
            else:
                self._reply(404, {"error": f"no such call {self.path}"})
        except MountError as exc:
            self._reply(403, {"error": str(exc), "code": exc.code})
        except (KeyError, ValueError, TypeError) as exc:
            self._reply(400, {"error": f"bad request: {exc}"})

    def _session(self) -> None:
        """A client's NFS connection: the HTTP request is upgraded to line JSON."""
        lif = self._lif()
        if self.headers.get("Upgrade") != "tr4947-nfs":
            return self._reply(400, {"error": "a session needs Upgrade: tr4947-nfs"})
        if not self.nfs.session_allowed(lif):       # the LIF is moving
            self.close_connection = True
            return
        self.send_response(101)
        self.send_header("Upgrade", "tr4947-nfs")
        self.send_header("Connection", "Upgrade")
        self.end_headers()
        self.wfile.flush()
        self.nfs.serve_session(self.connection, self.rfile, self.wfile, lif,
                               self.client_address[0], _read(self.root))
        self.close_connection = True

    def do_GET(self):
        url = urlsplit(self.path)
        q = dict(parse_qsl(url.query))
        if url.path == "/session":
            return self._session()
        try:
            if url.path == "/statfs":
                self._reply(200, statfs(self.root, q.get("id", "")))
            else:
                self._reply(404, {"error": f"no such call {url.path}"})
        except MountError as exc:
            self._reply(403, {"error": str(exc), "code": exc.code})


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False          # client sessions last as long as their mounts
    allow_reuse_address = True

    def verify_request(self, request, client_address):
        # Only data LIFs serve NFS: any other address of the storage host refuses, as a
        # connection to a port nothing listens on would.
        lif = request.getsockname()[0]
        try:
            state.load(self.root).vserver_for_address(lif)
            return True
        except (LookupError, FileNotFoundError):
            # Linger 0: the close sends a reset at once, so the client reads a refusal
            # whatever it was doing (not a broken pipe it might take for something else).
            request.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            return False


def serve(address: str, port: int, root: Path) -> None:
    nfs = NfsState(root)
    handler = type("Handler", (_Handler,), {"root": root, "nfs": nfs})
    httpd = _Server((address, port), handler)
    httpd.root = root
    nfs.watch_lifs()
    log.info("lab NFS service listening on %s:%s (state %s)", address, port, root)
    try:
        service.serve_forever(httpd)
    finally:
        nfs.stop()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tr4947.lab.storage",
                                 description="the storage stand-in's NFS mount service")
    ap.add_argument("--listen", default=f"0.0.0.0:{NFS_PORT}", help="ADDRESS:PORT")
    ap.add_argument("--state-root", type=Path, default=None)
    a = ap.parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=logging.INFO,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    addr, _, port = a.listen.rpartition(":")
    serve(addr, int(port), (a.state_root or paths.LAB_STATE).resolve())
    return 0


if __name__ == "__main__":
    sys.exit(main())
