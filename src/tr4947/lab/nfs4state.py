"""The storage stand-in's per-client NFS state: sessions, leases, byte-range locks, space.

Each lab mount's client (tr4947-nfs, see lab/nfs-client) keeps one connection to the NFS
service on the data LIF it mounted from: ``GET /session`` upgraded to line JSON (one request
per line, one answer per line, matched by ``id``). Over it:

* ``hello`` names the mount (the id the service granted) and the client (an id the client
  keeps across reconnections, as an NFSv4 client id); the answer carries the SVM's
  ``-v4-lease-seconds`` and ``-v4-grace-seconds``;
* every request renews the client's lease (NFSv4.1's SEQUENCE does the same), ``renew``
  exists for idle clients;
* ``lock`` / ``unlock`` / ``testlk``: POSIX byte-range locks, held here for every client of
  the volume (so a lock taken on one host's mount is seen by every other host's); a client
  that stops renewing loses its locks only when its lease has run out, as on ONTAP, so a
  standby broker sees a dead broker's ``.lock`` held until then;
* ``space``: the volume's size (less the snapshot reserve) and used bytes, after applying
  ``volume autosize``; the client refuses writes past it with ENOSPC;
* ``bye`` (a clean unmount) releases the client's state at once.

When a LIF moves (``network interface migrate``/``revert``, or ``storage failover
takeover``/``giveback`` moving it to the partner node and back), the service closes every
session on its address and refuses new ones until the LIF's ``moving_until`` in the ONTAP
state: the move's time plus the state's modelled ``migrate_seconds`` for a migration or
revert, the recorded end of the takeover or giveback for those (wall-clock times, written by
the stand-in's CLI in another process; see tr4947.lab.ontap.state). Clients block their I/O,
reconnect and go on, and measure how long they were cut off (tr4947-nfs's status).

What the lab does not model: the grace period after a server restart (the stand-in's NFS
service keeps no state across restarts, so there is nothing to reclaim), delegations, and
share reservations (open modes).
"""
from __future__ import annotations

import json
import logging
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from .ontap import space, state

log = logging.getLogger("tr4947.lab.nfs4state")

EAGAIN, ESTALE, EINVAL = 11, 116, 22
MAX = 2 ** 64 - 1


@dataclass
class Lock:
    volume: str
    file: int
    client: str
    owner: int
    start: int
    end: int            # inclusive, as FUSE sends it (MAX: to the end of the file)
    type: str           # "r" | "w"
    pid: int = 0

    def overlaps(self, start: int, end: int) -> bool:
        return self.start <= end and start <= self.end


@dataclass
class Client:
    id: str
    address: str
    lease: float
    renewed: float

    def expired(self, now: float) -> bool:
        return now > self.renewed + self.lease


class NfsState:
    def __init__(self, root: Path):
        self.root = Path(root)
        self.mu = threading.Lock()
        self.clients: dict[str, Client] = {}
        self.locks: list[Lock] = []
        self.sessions: dict[socket.socket, str] = {}       # connection -> LIF address
        self._stop = threading.Event()

    # --- leases ---------------------------------------------------------------------------
    def _lease(self, lif: str) -> tuple[int, int]:
        try:
            vs = state.load(self.root).vserver_for_address(lif)
            return vs.nfs_v4_lease_seconds, vs.nfs_v4_grace_seconds
        except (LookupError, FileNotFoundError):
            return 30, 45

    def _expire(self, now: float) -> None:
        """Locks of clients whose lease ran out are released (caller holds mu)."""
        dead = {c.id for c in self.clients.values() if c.expired(now)}
        if dead:
            gone = [lk for lk in self.locks if lk.client in dead]
            if gone:
                log.info("lease expired for %s: %d lock(s) released", sorted(dead), len(gone))
            self.locks = [lk for lk in self.locks if lk.client not in dead]
            for d in dead:
                del self.clients[d]

    # --- locks ----------------------------------------------------------------------------
    def _conflict(self, volume: str, file: int, client: str, owner: int, start: int, end: int,
                  typ: str) -> Lock | None:
        for lk in self.locks:
            if lk.volume == volume and lk.file == file and lk.overlaps(start, end) and \
                    (lk.client, lk.owner) != (client, owner) and "w" in (typ, lk.type):
                return lk
        return None

    def _cut(self, volume: str, file: int, client: str, owner: int, start: int, end: int) -> None:
        """Remove [start, end] from this owner's locks on the file (POSIX: a new lock or an
        unlock replaces what the owner held in that range)."""
        out = []
        for lk in self.locks:
            if (lk.volume, lk.file, lk.client, lk.owner) != (volume, file, client, owner) or \
                    not lk.overlaps(start, end):
                out.append(lk)
                continue
            if lk.start < start:
                out.append(Lock(**{**lk.__dict__, "end": start - 1}))
            if lk.end > end:
                out.append(Lock(**{**lk.__dict__, "start": end + 1}))
        self.locks = out

    def _owned(self, volume: str, file: int, client: str, owner: int) -> int:
        return sum(1 for lk in self.locks
                   if (lk.volume, lk.file, lk.client, lk.owner) == (volume, file, client, owner))

    def locks_of(self, volume: str | None = None) -> list[Lock]:
        with self.mu:
            self._expire(time.monotonic())
            return [lk for lk in self.locks if volume is None or lk.volume == volume]

    # --- requests -------------------------------------------------------------------------
    def handle(self, client: str, volume: str, backing: Path, req: dict) -> dict:
        op = req.get("op")
        if op == "null":
            # NFS's NULL procedure (the client's keepalive): an answer and nothing else. It
            # renews no lease: NULL carries no state.
            return {"ok": True}
        now = time.monotonic()
        with self.mu:
            c = self.clients.get(client)
            if c is not None:
                c.renewed = now
            self._expire(now)
            if op == "renew":
                return {"ok": True}
            if op in ("lock", "unlock", "testlk"):
                try:
                    file, owner = int(req["file"]), int(req["owner"])
                    start, end = int(req.get("start", 0)), int(req.get("end", MAX))
                    typ = req.get("type", "w")
                except (KeyError, TypeError, ValueError):
                    return {"ok": False, "errno": EINVAL, "error": "bad lock request"}
                if op == "unlock":
                    self._cut(volume, file, client, owner, start, end)
                    return {"ok": True, "remaining": self._owned(volume, file, client, owner)}
                hit = self._conflict(volume, file, client, owner, start, end, typ)
                if op == "testlk":
                    return {"ok": True, "conflict": None if hit is None else {
                        "start": hit.start, "end": hit.end, "type": hit.type,
                        "pid": hit.pid if hit.client == client else 0}}
                if hit is not None:
                    return {"ok": False, "errno": EAGAIN,
                            "error": f"held by another client ({hit.client})"}
                self._cut(volume, file, client, owner, start, end)
                self.locks.append(Lock(volume, file, client, owner, start, end, typ,
                                       int(req.get("pid", 0))))
                return {"ok": True}
            if op == "bye":
                self.locks = [lk for lk in self.locks if lk.client != client]
                self.clients.pop(client, None)
                return {"ok": True}
        if op == "space":
            return {"ok": True, **self.space(volume, backing)}
        return {"ok": False, "errno": EINVAL, "error": f"unknown op {op!r}"}

    def space(self, volume: str, backing: Path) -> dict:
        """(size less the snapshot reserve, used) of a volume, autosize applied."""
        used = space.used_bytes(backing)       # now: the client trusts it at the edge
        vol = apply_autosize(self.root, volume, used)
        if vol is None:
            return {"size": 0, "used": used}
        return {"size": int(vol.size * (100 - vol.percent_snapshot_space) / 100), "used": used}

    # --- sessions -------------------------------------------------------------------------
    def serve_session(self, conn: socket.socket, rfile, wfile, lif: str, peer: str,
                      mounts: list) -> None:
        """One client connection, after the HTTP upgrade: hello, then requests until EOF."""
        def send(obj: dict) -> None:
            wfile.write((json.dumps(obj) + "\n").encode())
            wfile.flush()
        line = rfile.readline()
        try:
            hello = json.loads(line)
        except ValueError:
            return
        m = next((m for m in mounts if m.id == hello.get("mount")), None)
        if hello.get("op") != "hello" or m is None or not hello.get("client"):
            send({"id": hello.get("id"), "ok": False, "errno": ESTALE,
                  "error": "Stale file handle: no such mount on this server"})
            return
        lease, grace = self._lease(lif)
        client = str(hello["client"])
        with self.mu:
            c = self.clients.get(client)
            if c is None:
                self.clients[client] = Client(client, peer, lease, time.monotonic())
            else:
                c.lease, c.renewed, c.address = lease, time.monotonic(), peer
            self.sessions[conn] = lif
        send({"id": hello.get("id"), "ok": True, "lease": lease, "grace": grace})
        try:
            while not self._stop.is_set():
                line = rfile.readline()
                if not line:
                    break
                try:
                    req = json.loads(line)
                except ValueError:
                    continue
                with self.mu:
                    if client in self.clients:
                        self.clients[client].lease = self._lease(lif)[0]
                ans = self.handle(client, m.volume, Path(m.backing), req)
                ans["id"] = req.get("id")
                send(ans)
        except OSError:
            pass
        finally:
            with self.mu:
                self.sessions.pop(conn, None)

    def away_until(self, address: str) -> float:
        """Wall-clock time until which the data LIF on ``address`` is moving (0: it is not),
        as the ONTAP state records it. Read at each call: the CLI that moved the LIF runs
        in another process, and a session must be refused at once, not when the watcher
        next polls."""
        try:
            c = state.load(self.root)
        except (FileNotFoundError, ValueError):
            return 0.0
        return max((l.moving_until for l in c.lifs.values()
                    if l.address == address and l.role == "data"), default=0.0)

    def session_allowed(self, lif: str) -> bool:
        return time.time() >= self.away_until(lif)

    def drop_lif(self, address: str) -> int:
        """Close every session on a LIF's address (the LIF moved); returns how many. New
        sessions are refused until the state's end of the move (session_allowed)."""
        with self.mu:
            conns = [s for s, a in self.sessions.items() if a == address]
        for s in conns:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        if conns:
            log.info("LIF %s moved: %d NFS connection(s) dropped, sessions refused for %.1f s",
                     address, len(conns), max(0.0, self.away_until(address) - time.time()))
        return len(conns)

    def watch_lifs(self, interval: float = 0.2) -> threading.Thread:
        """A thread that drops a LIF's sessions whenever it moves: its current node or port
        changes, or a new move is recorded (a migration and a revert between two polls)."""
        def where() -> dict[str, tuple[str, str, float]]:
            try:
                c = state.load(self.root)
            except (FileNotFoundError, ValueError):
                return {}
            return {l.address: (l.curr_node or l.node, l.curr_port or l.port, l.moving_until)
                    for l in c.lifs.values() if l.role == "data"}

        def run():
            f = self.root / "ontap" / "state.json"
            last_mtime, places = None, where()
            while not self._stop.wait(interval):
                try:
                    mtime = f.stat().st_mtime_ns
                except FileNotFoundError:
                    continue
                if mtime == last_mtime:
                    continue
                last_mtime = mtime
                now = where()
                for addr, place in now.items():
                    if addr in places and places[addr] != place:
                        self.drop_lif(addr)
                places = now
        t = threading.Thread(target=run, name="lif-watch", daemon=True)
        t.start()
        return t

    def stop(self) -> None:
        self._stop.set()


def apply_autosize(root: Path, volume: str, used: int):
    """The volume after ``volume autosize -mode grow``: when used space passes the grow
    threshold, the volume grows (to bring it back under the threshold, by at least 5% of its
    size: modelled; ONTAP picks its increment itself) up to its maximum autosize. Returns the
    volume (None if it is gone)."""
    vol = state.load(root).volumes.get(volume)
    if vol is None or vol.autosize_mode not in ("grow", "grow_shrink"):
        return vol
    maximum, thr = space.autosize_defaults(vol)
    if used * 100 <= vol.size * thr or vol.size >= maximum:
        return vol
    with state.transaction(root) as c:
        vol = c.volumes.get(volume)
        if vol is None:
            return None
        maximum, thr = space.autosize_defaults(vol)
        want = max(int(vol.size * 1.05), -(-used * 100 // thr) + 1)
        new = min(maximum, space.round_4k(want))
        if new > vol.size:
            log.info("autosize: %s grows from %d to %d bytes", volume, vol.size, new)
            vol.size = new
        return vol
