"""The Target API notebooks use to run the TR's procedures.

A Target is one Ansible inventory (playbook/inventory/<name>/). ``run`` executes a command on
a host or on every host of a group; ``run_snippet`` executes a file from snippets/:

* ``.sh``   runs in bash on the host (vars are Jinja-substituted and exported as env vars);
* ``.ontap`` runs through the ONTAP clustershell over SSH, one command per line
  (``#`` comments and blank lines skipped, a trailing ``\\`` continues a line);
* ``.json`` / ``.yaml`` / ``.yml`` / ``.properties`` / anything else is a file to place on the
  host at ``dest`` (default ``/tmp/<file name>``).

Safety: a call that changes state (``changes_state=True``) on a real target runs only when
the Target was opened with ``confirm=True``; otherwise it returns a planned Result
(``exit_code None``, stdout ``DRY RUN: would run ...``) and prints the plan. A read-only
call that reads what an earlier step made (``needs=`` that step's Result) is planned too when
that step was only planned (``DRY RUN: would read ...``): there is nothing to read yet, and a
dry run contacts nothing. The lab always runs (it is built to be destroyed).

Lab values in snippets: a snippet shows the lab's SVM name and data LIF addresses, as the
guide prints them. On another target ``lab_values()`` maps them to the target's own (from its
inventory); ``run_snippet(..., replace=...)`` and ``add_fstab_lines(..., servers=...)`` apply
such a mapping to what runs, so a page shows real lines and a target gets its own values.
"""
from __future__ import annotations

import datetime as _dt
import re
import shlex
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping

from .. import paths
from ..inventory import Host, Inventory
from ..runbook import secrets

DEFAULT_TIMEOUT = 600.0
ONTAP_GROUP = "ontap"
#: A host file a step edits is first copied to <file> + this (fstab, server.properties).
BACKUP_SUFFIX = ".tr4947.bak"


@dataclass
class Result:
    host: str
    command: str
    exit_code: int | None           # None: planned (dry run) or killed by the timeout
    stdout: str
    stderr: str
    duration: float
    started: str                    # ISO 8601, UTC
    planned: bool = False
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 or self.planned

    def check(self) -> "Result":
        if not self.ok:
            raise TargetError.from_result(self)
        return self

    @property
    def output(self) -> str:
        return self.stdout + (("\n" if self.stdout and self.stderr else "") + self.stderr)

    def transcript(self, prompt: str = "$ ") -> str:
        """Console transcript (command + output) for rendering; secrets masked."""
        return secrets.redact(f"{prompt}{self.command}\n{self.output}".rstrip() + "\n")

    def __str__(self) -> str:
        return self.transcript()


class ResultSet(list):
    """Results of one command on every host of a group."""

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self)

    def check(self) -> "ResultSet":
        for r in self:
            r.check()
        return self

    def by_host(self) -> dict[str, Result]:
        return {r.host: r for r in self}

    def __str__(self) -> str:
        return "\n".join(f"[{r.host}]\n{r.transcript()}" for r in self)


class TargetError(RuntimeError):
    """A step failed: which host, which command, its exit code and the end of its output."""

    def __init__(self, host: str, command: str, exit_code: int | None, output: str,
                 reason: str = "", result: Result | None = None):
        self.host, self.command, self.exit_code = host, command, exit_code
        self.output_tail = secrets.redact(output[-3000:])
        self.result = result
        what = reason or (f"exit code {exit_code}" if exit_code is not None else "no exit code")
        super().__init__(f"{secrets.redact(command)!s} failed on {host}: {what}\n"
                         f"--- output (tail) ---\n{self.output_tail}")

    @classmethod
    def from_result(cls, r: Result) -> "TargetError":
        reason = "timed out after %.0fs (process group killed)" % r.duration if r.timed_out else ""
        return cls(r.host, r.command, r.exit_code, r.output, reason, r)


def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def render_vars(text: str, variables: Mapping[str, object]) -> str:
    """Jinja-substitute ``{{ name }}`` (undefined names are an error, not an empty string)."""
    if "{{" not in text and "{%" not in text:
        return text
    import jinja2
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    try:
        return env.from_string(text).render(**variables)
    except jinja2.UndefinedError as exc:
        raise ValueError(f"snippet variable missing: {exc.message}; pass it as "
                         f"run_snippet(..., name=value)") from None


def replace_values(text: str, values: Mapping[str, str] | None) -> str:
    """``text`` with each whole value in ``values`` replaced (``127.0.10.1`` does not touch
    ``127.0.10.11``, ``svm_kafka`` does not touch ``svm_kafka2``)."""
    values = {k: v for k, v in (values or {}).items() if k != v}
    if not values:
        return text
    # One pass, so a replacement is never replaced again ({a: b, b: c} gives b and c).
    alt = "|".join(re.escape(k) for k in sorted(values, key=len, reverse=True))
    return re.sub(rf"(?<![\w.-])(?:{alt})(?![\w-]|\.\w)", lambda m: values[m.group(0)], text)


def plain_path(path: str, what: str) -> str:
    """``path`` if it is absolute and made of letters, digits, '.', '_', '-' and '/' only: it
    goes into a shell command unquoted, and a lab host's path mapping must recognise it."""
    if not re.fullmatch(r"/[\w./-]+", path):
        raise ValueError(f"{what} path {path!r}: give an absolute path of letters, digits, "
                         "'.', '_', '-' and '/'")
    return path


def with_env(script: str, env: Mapping[str, str]) -> str:
    """The script as it ran: preceded by `export NAME=value` for each variable it reads
    from the environment we gave it, so a transcript never shows a default that was not
    used (secrets are masked when the transcript is rendered)."""
    used = [k for k in env if re.search(rf"\$\{{?{re.escape(k)}\b", script)]
    head = "".join(f"export {k}={shlex.quote(str(env[k]))}\n" for k in used)
    return head + script


def ontap_lines(text: str) -> list[str]:
    """Clustershell commands of an .ontap snippet: one per line, `\\` continues a line."""
    lines, buf = [], ""
    for raw in text.splitlines():
        line = raw.rstrip()
        if buf:
            line = line.lstrip()
        if not buf and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.endswith("\\"):
            buf += line[:-1].rstrip() + " "
            continue
        lines.append((buf + line).strip())
        buf = ""
    if buf.strip():
        lines.append(buf.strip())
    return lines


class Target(ABC):
    """Where procedures run. Subclasses implement _shell, _ontap and _put."""

    kind = "real"

    def __init__(self, inventory: Inventory, confirm: bool = False, echo: bool = True):
        self.inventory = inventory
        self.name = inventory.name
        self.confirm = confirm
        self.echo = echo
        self._passwords: dict[str, str] = {}     # host name -> login found by a step (reach)

    # --- public API ---------------------------------------------------------------------
    def hosts(self, pattern: str) -> list[Host]:
        return self.inventory.select(pattern)

    def is_ontap(self, host: Host) -> bool:
        return ONTAP_GROUP in host.groups

    def reach(self, host: str, address: str | None = None, password: str | None = None) -> None:
        """From now on reach ``host`` at ``address`` and log in with ``password``: values an
        earlier step found rather than ones written in the inventory (FSx: the management
        address describe-file-systems reports, the fsxadmin password FSX-1 set). Only this
        Target's copy of the inventory changes, not the file (Ansible plays read the file);
        the lab logs in to its ONTAP stand-in with its own credentials."""
        h = self.inventory.host(host)
        if address:
            h.vars["ansible_host"] = address
        if password:
            secrets.register(password)
            self._passwords[h.name] = password
        self._forget(h)

    def _forget(self, host: Host) -> None:
        """Drop what is cached for a host whose address or login changed."""

    def lab_values(self) -> dict[str, str]:
        """The lab's values that snippets show -> this target's, from the inventories: the
        SVM name (``ontap_svm``) and the data LIF addresses (``ontap_data_lifs``, in order:
        the lab's first LIF is the target's first). Identity on the lab itself."""
        from .. import inventory
        lab = inventory.load("lab").ontap()
        mine = self.inventory.ontap()
        values = {}
        if lab.get("ontap_svm") and mine.get("ontap_svm"):
            values[lab.get("ontap_svm")] = mine.get("ontap_svm")
        for theirs, ours in zip(lab.get("ontap_data_lifs") or [], mine.get("ontap_data_lifs") or []):
            values[theirs["address"]] = ours["address"]
        return values

    def run(self, command: str | list[str], host: str, timeout: float = DEFAULT_TIMEOUT,
            check: bool = False, env: Mapping[str, str] | None = None,
            changes_state: bool = False, input: str | None = None,
            needs: Result | Iterable[Result] | None = None) -> Result | ResultSet:
        """Run a command on a host (a Result) or on every host of a group (a ResultSet).

        On an ONTAP host the command is a clustershell command; elsewhere a shell command
        (a list is quoted for the shell). ``needs``: Results of earlier steps this one reads
        from; if any of them was only planned, so is this call.
        """
        cmd = command if isinstance(command, str) else shlex.join(str(c) for c in command)

        def step(h: Host) -> Result:
            if self.is_ontap(h):
                return self._guarded(h, cmd, changes_state,
                                     lambda: self._ontap(h, [cmd], timeout), needs)
            return self._guarded(h, cmd, changes_state,
                                 lambda: self._shell(h, cmd, timeout, dict(env or {}), input),
                                 needs)
        return self._per_host(host, step, check)

    def run_snippet(self, path: str | Path, host: str, *, timeout: float = DEFAULT_TIMEOUT,
                    check: bool = False, changes_state: bool = False, dest: str | None = None,
                    env: Mapping[str, str] | None = None,
                    needs: Result | Iterable[Result] | None = None,
                    replace: Mapping[str, str] | None = None,
                    **variables) -> Result | ResultSet:
        """Execute (or place) a snippet file on a host or group; see the module doc.
        ``replace``: values the snippet shows -> the ones to run with (see lab_values)."""
        p = _snippet(path)
        text = replace_values(render_vars(p.read_text(), variables), replace)

        def step(h: Host) -> Result:
            if p.suffix == ".ontap":
                lines = ontap_lines(text)
                return self._guarded(h, "\n".join(lines), changes_state,
                                     lambda: self._ontap(h, lines, timeout), needs)
            if p.suffix == ".sh":
                e = {**{k: str(v) for k, v in variables.items()}, **dict(env or {})}
                label = with_env(text.strip(), e)
                r = self._guarded(h, label, changes_state,
                                  lambda: self._shell(h, text, timeout, e, None), needs)
                r.command = label
                return r
            target_path = dest or f"/tmp/{p.name}"
            label = f"cat > {target_path} <<'EOF'\n{text.rstrip()}\nEOF"
            return self._guarded(h, label, changes_state,
                                 lambda: self._put(h, target_path, text), needs)
        return self._per_host(host, step, check)

    def add_fstab_lines(self, path: str | Path, host: str, *,
                        servers: Mapping[str, str] | str | None = None,
                        fstab: str = "/etc/fstab", backup: str | None = None,
                        timeout: float = DEFAULT_TIMEOUT, check: bool = False,
                        needs: Result | Iterable[Result] | None = None) -> Result | ResultSet:
        """Add the mount lines of an fstab snippet to ``fstab`` on a host or group, as an
        operator edits the file: lines already there are not added twice, nothing else
        changes, and the file is copied to ``backup`` (default ``<fstab>.tr4947.bak``) before
        it changes (tr4947.targets.fstab). ``servers``: the NFS server each line shows -> this
        target's (a mapping such as lab_values(), or one address for every line).
        Always a state change: planned on a real target without confirm."""
        from . import fstab as fs
        text = fs.with_servers(_snippet(path).read_text(), servers)
        lines = "\n".join(fs.entries(text))
        if self.kind != "lab" and fs.lab_servers(lines):
            raise ValueError(
                f"{Path(path).name}: NFS server(s) {', '.join(fs.lab_servers(lines))} are lab "
                f"addresses and target {self.name!r} has no address for them; give one with "
                "servers= (the inventory's ontap_data_lifs feed lab_values())")
        script = fs.add_script(fstab, backup)
        env = {fs.LINES_VAR: lines}
        label = f"export {fs.LINES_VAR}={shlex.quote(lines)}\n{script.strip()}"

        def step(h: Host) -> Result:
            r = self._guarded(h, label, True,
                              lambda: self._shell(h, script, timeout, dict(env), None), needs)
            r.command = label
            return r
        return self._per_host(host, step, check)

    def apply_properties(self, path: str | Path, host: str, dest: str, *,
                         keep: tuple[str, ...] | None = None, backup: str | None = None,
                         timeout: float = DEFAULT_TIMEOUT, check: bool = False,
                         needs: Result | Iterable[Result] | None = None) -> Result | ResultSet:
        """Apply a ``.properties`` snippet to the file ``dest`` on a host or group, as an
        operator applies the TR's broker configuration to a broker that already has one: the
        broker's identity (``keep``, default broker_config.IDENTITY: ids, listeners,
        controllers or ZooKeeper) stays its own, every other setting of the snippet is set,
        and the file is copied to ``backup`` (default ``<dest>.tr4947.bak``) before it
        changes. A host without the file gets the snippet as it is (the lab's brokers: the
        snippet shows a lab broker). Always a state change: planned on a real target
        without confirm."""
        from .. import broker_config
        keep = broker_config.IDENTITY if keep is None else keep
        dest = plain_path(dest, "properties")
        backup = plain_path(backup or dest + BACKUP_SUFFIX, "backup")
        text = _snippet(path).read_text()
        wanted = broker_config.settings(text, keep)
        label = (f"# set in {dest} (the file is copied to {backup} first; the host's own "
                 f"{', '.join(k for k in keep if k in broker_config.keys(text))} stay):\n"
                 + "\n".join(f"{k}={v}" for k, v in wanted.items()))

        def apply(h: Host) -> Result:
            cur = self._shell(h, f"cat {dest}", timeout, {}, None)
            existing = cur.stdout if cur.exit_code == 0 else ""
            merged = broker_config.onto(existing, text, keep)
            if existing and merged == existing:
                cur.stdout = f"{dest} already has these settings: nothing changed\n"
                cur.command = label
                return cur
            if existing:
                saved = self._shell(h, f"cp -p {dest} {backup}", timeout, {}, None)
                if saved.exit_code != 0:
                    return saved
            r = self._put(h, dest, merged)
            r.command = label
            if existing:
                r.stdout = (f"{len(wanted)} setting(s) applied to {dest}; "
                            f"the file as it was: {backup}\n")
            return r

        return self._per_host(
            host, lambda h: self._guarded(h, label, True, lambda: apply(h), needs), check)

    def _per_host(self, host: str, step, check: bool) -> Result | ResultSet:
        """``step(h)`` on the host ``host`` names (a Result) or on every host of that group
        (a ResultSet). ``check``: the first failed step raises TargetError."""
        results = ResultSet()
        for h in self.hosts(host):
            r = step(h)
            if check:
                r.check()
            results.append(r)
        return results if host in self.inventory.groups else results[0]

    # --- dry-run guard ------------------------------------------------------------------
    def _guarded(self, host: Host, label: str, changes_state: bool, action,
                 needs: Result | Iterable[Result] | None = None) -> Result:
        if changes_state and self.kind != "lab" and not self.confirm:
            plan = f"DRY RUN: would run on {host.name} ({host.address}):\n{label}"
        elif _any_planned(needs):
            plan = (f"DRY RUN: would read on {host.name} ({host.address}), once the planned "
                    f"step it reads from has run:\n{label}")
        else:
            return action()
        # A plan is output like any other: masked before anyone sees or stores it.
        plan = secrets.redact(plan)
        if self.echo:
            print(plan, flush=True)
        return Result(host.name, label, None, plan, "", 0.0, now_iso(), planned=True)

    # --- to implement -------------------------------------------------------------------
    @abstractmethod
    def _shell(self, host: Host, command: str, timeout: float, env: dict[str, str],
               input: str | None) -> Result: ...

    @abstractmethod
    def _ontap(self, host: Host, lines: list[str], timeout: float) -> Result: ...

    @abstractmethod
    def _put(self, host: Host, dest: str, content: str) -> Result: ...

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _snippet(path: str | Path) -> Path:
    p = Path(path)
    if not p.is_absolute() and not p.exists():
        p = paths.SNIPPETS / p
    if not p.exists():
        raise FileNotFoundError(f"snippet {path} not found (looked in {paths.SNIPPETS})")
    return p


def _any_planned(needs: Result | Iterable[Result] | None) -> bool:
    if needs is None:
        return False
    items = [needs] if isinstance(needs, Result) else list(needs)
    # A ResultSet (one Result per host) counts by its members.
    flat = [x for i in items for x in (i if isinstance(i, list) else [i])]
    return any(r.planned for r in flat)


# --- running a local process with a hard timeout (used by the lab target) ---------------
def run_local(argv: list[str], *, host: str, label: str, timeout: float, env: dict | None,
              cwd: str | Path | None = None, input: str | None = None) -> Result:
    """Run a process in its own process group; on timeout kill the whole group (a shell's
    children, e.g. a Kafka tool's JVM, must not outlive the step)."""
    import os
    import signal
    import subprocess

    started, t0 = now_iso(), time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                            env=env, cwd=cwd, text=True, errors="replace",
                            start_new_session=True)
    timed_out = False
    try:
        out, err = proc.communicate(input=input, timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        for sig, grace in ((signal.SIGTERM, 3.0), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                proc.wait(grace)
                break
            except subprocess.TimeoutExpired:
                continue
        # Remaining group members (the shell may have exited first) get SIGKILL too.
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = proc.communicate()
    except BaseException:
        # Ctrl-C in a notebook: the step's processes go with it.
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
        raise
    return Result(host, label, None if timed_out else proc.returncode, out or "", err or "",
                  time.monotonic() - t0, started, timed_out=timed_out)


_ansi = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def strip_ansi(text: str) -> str:
    return _ansi.sub("", text)


def iter_hosts(hosts: Iterable[Host]) -> list[str]:
    return [h.name for h in hosts]
