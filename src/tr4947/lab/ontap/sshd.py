"""SSH front end of the ONTAP stand-in: the clustershell over a real SSH server.

    python -m tr4947.lab.ontap.sshd --listen 127.0.10.1:2222 --state-root DIR

* interactive logins get ONTAP's prompt (``cluster1::> ``, ``cluster1::*> `` above admin),
  line editing and echo from asyncssh's line editor when the client asks for a pty;
* ``ssh admin@host 'volume show'`` (exec requests) runs the ;-separated commands and exits
  with 1 if one printed an error (0 otherwise);
* users ``admin`` and ``fsxadmin``, password or keyboard-interactive ("Password:") auth
  against ``<root>/ontap/passwords.json``; passwords are compared in constant time and
  never logged;
* the host key is generated once into ``<root>/ontap/ssh_host_key``;
* logs go to stderr; SIGTERM/SIGINT close the listener and exit 0. The lab orchestrator
  owns the process (no pid file).
"""
from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from pathlib import Path

import asyncssh

from . import service
from . import bootstrap as _boot
from .session import Session

log = logging.getLogger("tr4947.ontap.sshd")


def host_key(root: Path) -> Path:
    f = Path(root) / "ontap" / "ssh_host_key"
    if not f.exists():
        f.parent.mkdir(parents=True, exist_ok=True)
        key = asyncssh.generate_private_key("ssh-ed25519")
        fd = os.open(f, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(key.export_private_key())
    return f


class _Server(asyncssh.SSHServer):
    def __init__(self, root: Path):
        self.root = root
        self.peer = "?"

    def connection_made(self, conn):
        self.peer = "%s:%s" % (conn.get_extra_info("peername") or ("?", "?"))[:2]

    def begin_auth(self, username: str) -> bool:
        return True

    def password_auth_supported(self) -> bool:
        return True

    def _check(self, username: str, password: str) -> bool:
        ok = _boot.check_password(self.root, username, password)
        log.info("login %s from %s: %s", username, self.peer, "accepted" if ok else "denied")
        return ok

    def validate_password(self, username: str, password: str) -> bool:
        return self._check(username, password)

    def kbdint_auth_supported(self) -> bool:
        return True

    def get_kbdint_challenge(self, username, lang, submethods):
        return "", "", "", [("Password: ", False)]

    def validate_kbdint_response(self, username, responses):
        return len(responses) == 1 and self._check(username, responses[0])


async def _handle(process: asyncssh.SSHServerProcess, root: Path) -> None:
    user = process.get_extra_info("username")
    peer = (process.get_extra_info("peername") or ("?",))[0]
    try:
        session = Session(root, user, "ssh", peer)
    except FileNotFoundError as exc:
        process.stderr.write(f"{exc}\n")
        process.exit(1)
        return

    async def ask(prompt: str) -> str:
        process.stdout.write(prompt)
        try:
            line = await process.stdin.readline()
        except (asyncssh.BreakReceived, asyncssh.TerminalSizeChanged):
            line = ""
        return line.rstrip("\r\n")

    def emit(text: str) -> None:
        if text:
            process.stdout.write(text.rstrip("\n") + "\n")

    if process.command is not None:
        log.info("%s exec: %s", user, process.command)
        r = await session.run(process.command, ask)
        emit(r.output)
        process.exit(1 if r.error else 0)
        return

    log.info("%s interactive session", user)
    process.stdout.write("\n")
    while True:
        process.stdout.write(session.prompt)
        try:
            line = await process.stdin.readline()
        except asyncssh.TerminalSizeChanged:
            continue
        except (asyncssh.BreakReceived, asyncssh.SignalReceived):
            process.stdout.write("\n")
            continue
        if not line:                                    # EOF
            break
        line = line.strip()
        if not line:
            continue
        if line in ("exit", "quit", "logout", "lo"):
            break
        log.info("%s: %s", user, line)
        r = await session.run(line, ask)
        emit(r.output)
        process.stdout.write("\n") if r.output else None
    process.exit(0)


async def serve(address: str, port: int, root: Path) -> None:
    _boot.ensure_passwords(root)
    server = await asyncssh.create_server(
        lambda: _Server(root), address, port, server_host_keys=[str(host_key(root))],
        process_factory=lambda p: _handle(p, root), encoding="utf-8",
        # ONTAP does not offer public-key auth to unconfigured users
        public_key_auth=False, keepalive_interval=30)
    log.info("ONTAP stand-in SSH listening on %s:%s (state %s)", address, port, root)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    log.info("stopping")
    server.close()
    await server.wait_closed()


def main(argv: list[str] | None = None) -> int:
    # asyncssh's own debug logging would describe auth exchanges: keep it quiet.
    logging.getLogger("asyncssh").setLevel(logging.WARNING)
    return service.run("python -m tr4947.lab.ontap.sshd", "ONTAP clustershell stand-in over SSH",
                       "127.0.10.1:2222",
                       lambda addr, port, root: asyncio.run(serve(addr, port, root)), argv)


if __name__ == "__main__":
    sys.exit(main())
