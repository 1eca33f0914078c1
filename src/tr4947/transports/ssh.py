"""SSH: shell commands on Linux hosts and the ONTAP clustershell, for every target.

asyncssh runs on one background event loop thread, so the synchronous Target API works the
same in a script and inside Jupyter (which already runs a loop of its own). Connections are
kept per endpoint and reused: a command is one new channel on an open connection.

Host keys are always checked, against the known_hosts file the inventory names (Ansible's
``ansible_ssh_common_args: -o UserKnownHostsFile=...``) or the user's ~/.ssh/known_hosts;
``TR4947_SSH_INSECURE=1`` switches the check off for a throw-away test bed, visibly.
"""
from __future__ import annotations

import asyncio
import os
import re
import shlex
import threading
import time
from dataclasses import dataclass

from .. import netguard, secrets

# ONTAP's prompt: "cluster1::> " (admin) or "cluster1::*> " (advanced/diagnostic).
PROMPT = re.compile(r"(?m)^[\w.\-]+::\*?> ?$")
CONFIRM = re.compile(r"\{y\|n\}:?\s*$|\[y/n\]\s*$", re.I)
_ansi = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def strip_ansi(text: str) -> str:
    return _ansi.sub("", text)


@dataclass(frozen=True)
class Endpoint:
    """Where and as whom to log in."""
    address: str
    port: int = 22
    user: str = "root"
    password: str | None = None          # ONTAP logins; Linux hosts use keys
    key_file: str | None = None
    known_hosts: str | None = None       # None: ~/.ssh/known_hosts

    @classmethod
    def of(cls, host, password: str | None = None) -> "Endpoint":
        """From an inventory Host (Ansible's connection variables)."""
        key = host.get("ansible_ssh_private_key_file")
        return cls(host.get("ansible_host", host.name), int(host.get("ansible_port", 22)),
                   host.get("ansible_user", os.environ.get("USER", "root")), password,
                   os.path.expanduser(key) if key else None,
                   known_hosts_file(host.get("ansible_ssh_common_args", "")))


def known_hosts_file(ssh_args: str) -> str | None:
    """The UserKnownHostsFile of Ansible's ``ansible_ssh_common_args``, if it names one."""
    words = shlex.split(ssh_args or "")
    for i, w in enumerate(words):
        opt = w[2:] if w.startswith("-o") and len(w) > 2 else (
            words[i + 1] if w == "-o" and i + 1 < len(words) else "")
        key, _, value = opt.partition("=")
        if key.lower() == "userknownhostsfile" and value:
            return os.path.expanduser(value)
    return None


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


async def _connect(ep: Endpoint, connect_timeout: float = 15):
    import asyncssh
    netguard.check(ep.address)
    if os.environ.get("TR4947_SSH_INSECURE") == "1":
        known_hosts = None
    elif ep.known_hosts:
        known_hosts = ep.known_hosts
    else:
        known_hosts = ()                                # asyncssh: the default files
    kw = dict(host=ep.address, port=ep.port, username=ep.user, known_hosts=known_hosts,
              connect_timeout=connect_timeout, keepalive_interval=30)
    if ep.password:
        secrets.register(ep.password)
        kw["password"] = ep.password
        # Password auth only: do not offer a local user's keys to ONTAP.
        kw["client_keys"] = None
        kw["preferred_auth"] = "password,keyboard-interactive"
    elif ep.key_file:
        kw["client_keys"] = [ep.key_file]
    return await asyncssh.connect(**kw)


@dataclass
class Completed:
    exit_code: int | None            # None: killed by the timeout
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool = False


class Pool:
    """Open connections, one per endpoint, reused by every command to it."""

    def __init__(self):
        self._conns: dict[Endpoint, object] = {}

    async def _conn(self, ep: Endpoint):
        conn = self._conns.get(ep)
        if conn is not None and conn.is_closed():
            conn = None
        if conn is None:
            conn = await _connect(ep)
            self._conns[ep] = conn
        return conn

    def run(self, ep: Endpoint, command: str, input: str | None = None,
            timeout: float = 600) -> Completed:
        """One command in the login shell's ``-c`` (what sshd does with an exec request)."""
        t0 = time.monotonic()

        async def go():
            conn = await self._conn(ep)
            return await conn.run(command, input=input, timeout=timeout, check=False)

        try:
            r = _Loop.run(go(), timeout + 30)
        except Exception as exc:
            import asyncssh
            if isinstance(exc, asyncssh.TimeoutError):
                # The channel is closed, which makes sshd hang up the session's process group.
                return Completed(None, exc.stdout or "", exc.stderr or "",
                                 time.monotonic() - t0, timed_out=True)
            self.forget(ep)
            return Completed(255, "", f"ssh: {ep.user}@{ep.address}:{ep.port}: "
                             f"{type(exc).__name__}: {exc}", time.monotonic() - t0)
        return Completed(r.exit_status, r.stdout or "", r.stderr or "", time.monotonic() - t0)

    def forget(self, ep: Endpoint) -> None:
        conn = self._conns.pop(ep, None)
        if conn is not None:
            try:
                conn.close()
            except Exception:
                pass

    def close(self) -> None:
        for ep in list(self._conns):
            self.forget(ep)


# --- the ONTAP clustershell -------------------------------------------------------------------------
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


def clustershell(ep: Endpoint, lines: list[str], timeout: float,
                 cluster_name: str = "cluster1") -> Completed:
    """Clustershell lines in one session over SSH; stdout is the prompt-prefixed transcript
    (secrets masked)."""
    t0 = time.monotonic()

    async def go():
        conn = await _connect(ep)
        async with conn:
            return await _clustershell(conn, lines, timeout, answer_confirmations=True)

    try:
        text, code = _Loop.run(asyncio.wait_for(go(), timeout + 20))
    except (asyncio.TimeoutError, TimeoutError):
        return Completed(None, "", f"timed out after {timeout:.0f}s", time.monotonic() - t0,
                         timed_out=True)
    except OSError as exc:
        return Completed(255, "", f"ssh: connect to {ep.address} port {ep.port}: {exc}",
                         time.monotonic() - t0)
    except Exception as exc:   # asyncssh.PermissionDenied, DisconnectError...
        return Completed(255, "", f"ssh: {type(exc).__name__}: {exc}", time.monotonic() - t0)
    text = text.replace("::> ", f"{cluster_name}::> ").replace("::*> ", f"{cluster_name}::*> ")
    return Completed(code, secrets.redact(text), "", time.monotonic() - t0)
