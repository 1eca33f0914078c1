"""SSH for targets: real inventories (SshTarget) and the ONTAP clustershell (also used by the
lab, whose ONTAP stand-in is a real SSH server).

asyncssh runs on one background event loop thread, so the synchronous Target API works the
same in a script and inside Jupyter (which already runs a loop of its own).

Credentials: keys from ``ansible_ssh_private_key_file`` or the SSH agent / default keys;
passwords from the environment (``ONTAP_PASSWORD`` for ONTAP hosts, ``TR4947_SSH_PASSWORD``
otherwise) or from a vault-encrypted ``ansible_password`` in the inventory. A password is
registered with the redactor before first use and never logged.
"""
from __future__ import annotations

import asyncio
import os
import re
import threading
import time
from pathlib import Path

from ..inventory import Host, Inventory
from ..runbook import secrets
from .base import Result, Target, TargetError, now_iso, strip_ansi

# ONTAP's prompt: "cluster1::> " (admin) or "cluster1::*> " (advanced/diagnostic).
PROMPT = re.compile(r"(?m)^[\w.\-]+::\*?> ?$")
CONFIRM = re.compile(r"\{y\|n\}:?\s*$|\[y/n\]\s*$", re.I)


class _Loop:
    """One asyncio loop in a daemon thread, shared by all SSH connections of the process."""
    _lock = threading.Lock()
    _loop: asyncio.AbstractEventLoop | None = None

    @classmethod
    def get(cls) -> asyncio.AbstractEventLoop:
        with cls._lock:
            if cls._loop is None:
                cls._loop = asyncio.new_event_loop()
                threading.Thread(target=cls._loop.run_forever, name="tr4947-ssh",
                                 daemon=True).start()
            return cls._loop

    @classmethod
    def run(cls, coro, timeout: float | None = None):
        fut = asyncio.run_coroutine_threadsafe(coro, cls.get())
        return fut.result(timeout)


async def _connect(address: str, port: int, username: str, password: str | None,
                   client_keys: list[str] | None, known_hosts, connect_timeout: float = 15):
    import asyncssh
    kw = dict(host=address, port=port, username=username, known_hosts=known_hosts,
              connect_timeout=connect_timeout)
    if password:
        kw["password"] = password
        # Password auth only: do not offer a local user's keys to a lab server.
        kw.setdefault("client_keys", None)
        kw["preferred_auth"] = "password,keyboard-interactive"
    if client_keys:
        kw["client_keys"] = client_keys
    return await asyncssh.connect(**kw)


def apply_backspaces(text: str) -> str:
    """What a terminal shows: each backspace erases the character before it (the
    clustershell's line editor redraws the typed line this way)."""
    while True:
        new = re.sub(r"[^\x08\n]\x08", "", text)
        if new == text:
            return new.replace("\x08", "")
        text = new


async def _clustershell(conn, lines: list[str], timeout: float,
                        answer_confirmations: bool) -> tuple[str, int | None]:
    """Run clustershell commands in one interactive session (privilege level persists from
    line to line, as when an operator types them). Returns (transcript, exit code): 0 when
    no command printed an ONTAP error, 1 otherwise."""
    # Wide terminal: the clustershell must not wrap (and redraw) long command lines.
    proc = await conn.create_process(term_type="dumb", term_size=(4096, 200))
    buf = ""
    failed = False

    async def read_until_prompt(deadline: float) -> str:
        nonlocal buf
        while True:
            m = None
            for m in PROMPT.finditer(buf):
                pass
            if m and m.end() >= len(buf.rstrip(" ")):
                out, buf = buf[:m.start()], ""
                return out
            if CONFIRM.search(buf):
                out, buf = buf, ""
                return out
            left = deadline - time.monotonic()
            if left <= 0:
                raise asyncio.TimeoutError
            chunk = await asyncio.wait_for(proc.stdout.read(65536), left)
            if not chunk:
                out, buf = buf, ""
                return out
            buf = apply_backspaces(buf + strip_ansi(chunk).replace("\r\n", "\n").replace("\r", ""))

    deadline = time.monotonic() + timeout
    await read_until_prompt(deadline)                       # banner + first prompt
    transcript = []
    prompt_text = "::> "
    def strip_echo(out: str, typed: str) -> str:
        """Drop the terminal's echo of what was just typed (it may be echoed twice)."""
        while typed and out.startswith(typed):
            out = out[len(typed):]
        return out[1:] if out.startswith("\n") else out

    for line in lines:
        proc.stdin.write(line + "\n")
        out = strip_echo(await read_until_prompt(deadline), line)
        body = ""
        while CONFIRM.search(out):
            reply = "y" if answer_confirmations else "n"
            body += out.rstrip("\n") + " " + reply + "\n"
            proc.stdin.write(reply + "\n")
            out = strip_echo(await read_until_prompt(deadline), reply)
        body += out
        if re.search(r"(?m)^Error: ", body):
            failed = True
        # Transcript as the operator saw it: prompt and command, then what ONTAP answered.
        transcript.append(f"{prompt_text}{line}\n{body.strip(chr(10))}".rstrip())
        prompt_text = "::*> " if re.match(r"set\s+(-priv\w*\s+)?(adv|diag)", line) \
            else ("::> " if re.match(r"set\s+(-priv\w*\s+)?admin", line) else prompt_text)
    try:
        proc.stdin.write("exit\n")
        proc.stdin.write_eof()
    except Exception:
        pass
    proc.close()
    return "\n".join(transcript) + "\n", (1 if failed else 0)


def ontap_run(address: str, port: int, username: str, password: str | None, lines: list[str],
              timeout: float, host_name: str, known_hosts=None, client_keys=None,
              cluster_name: str = "cluster1") -> Result:
    """Run clustershell lines over SSH and return one Result (prompt-prefixed transcript)."""
    secrets.register(password)
    started, t0 = now_iso(), time.monotonic()

    async def go():
        conn = await _connect(address, port, username, password, client_keys, known_hosts)
        async with conn:
            return await _clustershell(conn, lines, timeout, answer_confirmations=True)

    label = "\n".join(lines)
    try:
        text, code = _Loop.run(asyncio.wait_for(go(), timeout + 20))
    except (asyncio.TimeoutError, TimeoutError):
        return Result(host_name, label, None, "", f"timed out after {timeout:.0f}s",
                      time.monotonic() - t0, started, timed_out=True)
    except OSError as exc:
        return Result(host_name, label, 255, "", f"ssh: connect to {address} port {port}: {exc}",
                      time.monotonic() - t0, started)
    except Exception as exc:   # asyncssh.PermissionDenied, DisconnectError...
        return Result(host_name, label, 255, "", f"ssh: {type(exc).__name__}: {exc}",
                      time.monotonic() - t0, started)
    text = text.replace("::> ", f"{cluster_name}::> ").replace("::*> ", f"{cluster_name}::*> ")
    return Result(host_name, label, code, secrets.redact(text), "", time.monotonic() - t0, started)


class SshTarget(Target):
    """A real target: broker/client hosts over SSH, ONTAP clustershell over SSH."""

    kind = "real"

    def __init__(self, inventory: Inventory, confirm: bool = False, echo: bool = True):
        super().__init__(inventory, confirm, echo)
        self._conns: dict[str, object] = {}

    def _password(self, host: Host) -> str | None:
        env = "ONTAP_PASSWORD" if self.is_ontap(host) else "TR4947_SSH_PASSWORD"
        # A login a step found (reach) wins: it belongs to the system this run made.
        pw = self._passwords.get(host.name) or os.environ.get(env) \
            or host.get("ansible_password") or host.get("ontap_password")
        secrets.register(pw)
        return pw

    def _known_hosts(self):
        # Verify host keys (asyncssh's default: ~/.ssh/known_hosts) unless explicitly disabled
        # for a throw-away test bed. () = default files; None = no check.
        return None if os.environ.get("TR4947_SSH_INSECURE") == "1" else ()

    def _forget(self, host: Host) -> None:
        conn = self._conns.pop(host.name, None)
        if conn is not None:
            try:
                conn.close()
            except Exception:
                pass

    def _keys(self, host: Host):
        k = host.get("ansible_ssh_private_key_file")
        return [str(Path(k).expanduser())] if k else None

    async def _conn(self, host: Host):
        conn = self._conns.get(host.name)
        if conn is None:
            kh = self._known_hosts()
            conn = await _connect(host.address, int(host.get("ansible_port", 22)),
                                  host.get("ansible_user", os.environ.get("USER", "root")),
                                  None if self._keys(host) else self._password(host),
                                  self._keys(host), kh)
            self._conns[host.name] = conn
        return conn

    def _shell(self, host, command, timeout, env, input):
        started, t0 = now_iso(), time.monotonic()

        async def go():
            conn = await self._conn(host)
            exports = "".join(f"export {k}={_q(v)}; " for k, v in env.items())
            return await conn.run(exports + command, input=input, timeout=timeout, check=False)

        try:
            r = _Loop.run(go(), timeout + 30)
        except Exception as exc:
            import asyncssh
            if isinstance(exc, asyncssh.TimeoutError):
                # The channel is closed, which makes sshd hang up the session's process group.
                return Result(host.name, command, None, exc.stdout or "", exc.stderr or "",
                              time.monotonic() - t0, started, timed_out=True)
            return Result(host.name, command, 255, "", f"ssh: {type(exc).__name__}: {exc}",
                          time.monotonic() - t0, started)
        return Result(host.name, command, r.exit_status, secrets.redact(r.stdout or ""),
                      secrets.redact(r.stderr or ""), time.monotonic() - t0, started)

    def _ontap(self, host, lines, timeout):
        return ontap_run(host.address, int(host.get("ansible_port", 22)),
                         host.get("ansible_user", "admin"), self._password(host), lines, timeout,
                         host.name, known_hosts=self._known_hosts(),
                         cluster_name=host.get("ontap_cluster_name", host.name))

    def _put(self, host, dest, content):
        started, t0 = now_iso(), time.monotonic()

        async def go():
            conn = await self._conn(host)
            async with conn.start_sftp_client() as sftp:
                async with sftp.open(dest, "w") as f:
                    await f.write(content)

        try:
            _Loop.run(go(), 120)
        except Exception as exc:
            return Result(host.name, f"put {dest}", 1, "", f"{type(exc).__name__}: {exc}",
                          time.monotonic() - t0, started)
        return Result(host.name, f"put {dest}", 0, f"wrote {dest} ({len(content)} bytes)", "",
                      time.monotonic() - t0, started)

    def close(self):
        for c in self._conns.values():
            try:
                c.close()
            except Exception:
                pass
        self._conns.clear()


def _q(v: str) -> str:
    import shlex
    return shlex.quote(str(v))


__all__ = ["SshTarget", "ontap_run", "TargetError"]
