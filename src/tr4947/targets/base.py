"""The Target API: the one door through which notebooks and procedures reach a target.

A Target is one Ansible inventory (playbook/inventory/<name>/). Every kind of target is
reached the same way: shell commands and file placement on Linux hosts over SSH, the ONTAP
clustershell over SSH, the ONTAP REST API over HTTPS, the AWS CLI on an admin host. Only
bring-up and tear-down differ (the lab target builds its hosts first: targets/lab.py).

``run`` executes a command on a host or on every host of a group; ``run_snippet`` executes a
file from snippets/:

* ``.sh``   runs in the host's shell (vars are Jinja-substituted and exported as env vars);
* ``.ontap`` runs through the ONTAP clustershell, one command per line (``#`` comments and
  blank lines skipped, a trailing ``\\`` continues a line);
* ``.json`` / ``.yaml`` / ``.yml`` / ``.properties`` / anything else is a file to place on the
  host at ``dest`` (default ``/tmp/<file name>``).

Commands on a host run in its ``kafka_home`` when the inventory gives one (the TR's commands
say ``bin/kafka-topics.sh``). Environment values reach the command as ``export`` lines, which
the host logs with the command; a secret (by its name or because it was registered with
tr4947.secrets) is instead read from stdin (``read -r NAME``), so it never appears in a
command line, a process list or a host's log.

Safety (default-deny): a step runs only if it is declared read-only (``read_only=True``) or
the Target was opened with ``confirm=True``. Anything else, file placement included, returns
a planned Result (``exit_code None``, stdout ``DRY RUN: would run ...``) and prints the plan.
A read-only clustershell step is checked: a line that is not a read (``show``, ``version``,
``set``) is a programming error. A read that needs what an earlier step made (``needs=``
that step's Result) is planned too when that step was only planned: there is nothing to
read yet, and a dry run contacts nothing it need not.

Lab values in snippets: a snippet shows the lab's SVM name and data LIF addresses, as the
guide prints them. On another target ``lab_values()`` maps them to the target's own (from its
inventory); ``run_snippet(..., replace=...)`` and ``add_fstab_lines(..., servers=...)`` apply
such a mapping to what runs, so a page shows real lines and a target gets its own values.
"""
from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Iterable, Mapping

from .. import secrets
from ..inventory import Host, Inventory
from ..transports import ssh
from .files import BACKUP_SUFFIX, plain_path, snippet_path
from .kafka import KafkaCluster
from .result import Result, ResultSet, TargetError, now_iso

DEFAULT_TIMEOUT = 600.0
ONTAP_GROUP = "ontap"


def _ontap_word(v: object) -> str:
    """A value for a clustershell line: one word of ONTAP name characters, or refused (the
    clustershell splits on spaces and ';' ends a command)."""
    s = str(v)
    if not re.fullmatch(r"[\w.:/@*!-]+", s):
        raise ValueError(f"{s!r} cannot go into a clustershell command: give a value of "
                         "letters, digits and . _ : / - only")
    return s


def render_vars(text: str, variables: Mapping[str, object], kind: str = "") -> str:
    """Jinja-substitute ``{{ name }}`` (undefined names are an error, not an empty string).
    What goes in must stay one word of the language it lands in: shell-quoted in a ``.sh``
    snippet, checked for a clustershell (``.ontap``) line; files to place get it as is."""
    if "{{" not in text and "{%" not in text:
        return text
    import jinja2
    finalize = {".sh": lambda v: shlex.quote(str(v)), ".ontap": _ontap_word}.get(kind)
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                             finalize=finalize)
    try:
        return env.from_string(text).render(**variables)
    except jinja2.UndefinedError as exc:
        raise ValueError(f"snippet variable missing: {exc.message}; pass it as "
                         f"run_snippet(..., name=value)") from None


def replace_values(text: str, values: Mapping[str, str] | None) -> str:
    """``text`` with each whole value in ``values`` replaced (``198.18.10.1`` does not touch
    ``198.18.10.11``, ``svm_kafka`` does not touch ``svm_kafka2``)."""
    values = {k: v for k, v in (values or {}).items() if k != v}
    if not values:
        return text
    # One pass, so a replacement is never replaced again ({a: b, b: c} gives b and c).
    alt = "|".join(re.escape(k) for k in sorted(values, key=len, reverse=True))
    return re.sub(rf"(?<![\w.-])(?:{alt})(?![\w-]|\.\w)", lambda m: values[m.group(0)], text)


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


def ontap_reads_only(line: str) -> bool:
    """True for clustershell lines that only read: ``... show``/``show-*``, ``version``,
    and ``set`` (the session's privilege and confirmations, nothing on the cluster). The
    clustershell runs ``;``-separated commands in turn, so every one of them must read."""
    return all(_command_reads_only(c) for c in _ontap_commands(line))


def _ontap_commands(line: str) -> list[str]:
    """``a; b`` -> ['a', 'b'], keeping a ; inside double quotes (as the clustershell does)."""
    out, cur, quoted = [], "", False
    for ch in line:
        if ch == '"':
            quoted = not quoted
        if ch == ";" and not quoted:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return [c for c in out + [cur] if c.strip()] or [""]


def _command_reads_only(line: str) -> bool:
    words = []
    for w in line.split():
        if w.startswith("-") or "=" in w:
            break
        words.append(w.lower())
    if not words:
        return True
    return words[-1].startswith("show") or words in (["version"], ["set"], ["rows"]) or \
        words[0] == "set" or words[0] == "rows"


class Target:
    """Where procedures run: hosts from an inventory, reached over SSH and REST."""

    kind = "real"

    def __init__(self, inventory: Inventory, confirm: bool = False, echo: bool = True):
        self.inventory = inventory
        self.name = inventory.name
        self.confirm = confirm
        self.echo = echo
        self._passwords: dict[str, str] = {}     # host name -> login found by a step (reach)
        self._pool = ssh.Pool()

    # --- hosts ------------------------------------------------------------------------------
    def hosts(self, pattern: str) -> list[Host]:
        return self.inventory.select(pattern)

    def host(self, name: str) -> Host:
        return self.inventory.host(name)

    def is_ontap(self, host: Host) -> bool:
        return ONTAP_GROUP in host.groups

    def cluster(self, name: str = "kafka") -> KafkaCluster:
        """The Kafka cluster ``name`` of the inventory (a child group of ``kafka``; the default,
        ``kafka`` itself, is every Kafka host of the target): what the chapters start, stop,
        wait for and read Kafka through."""
        return KafkaCluster(self, name)

    def reach(self, host: str, address: str | None = None, password: str | None = None,
              user: str | None = None) -> None:
        """From now on reach ``host`` at ``address`` and log in as ``user`` with ``password``:
        values an earlier step found rather than ones written in the inventory (FSx: the
        management address describe-file-systems reports, fsxadmin and the password FSX-1
        set). Only this Target's copy of the inventory changes, not the file (Ansible plays
        read the file)."""
        h = self.inventory.host(host)
        if address:
            h.vars["ansible_host"] = address
        if user:
            h.vars["ansible_user"] = user
        if password:
            secrets.register(password)
            self._passwords[h.name] = password

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

    # --- credentials (overridden by the lab target, which knows its own) ----------------------
    def ontap_password(self, host: Host | None = None) -> str:
        """The ONTAP login's password: one a step found (reach), else ONTAP_PASSWORD from the
        environment (or ansible-vault, which puts it there); never from a file of ours."""
        import os
        h = host or self.inventory.ontap()
        pw = self._passwords.get(h.name) or os.environ.get("ONTAP_PASSWORD")
        if not pw:
            raise TargetError(h.name, "(login)", None, "",
                              f"ONTAP_PASSWORD is not set: export the password of "
                              f"{h.get('ansible_user', 'admin')}@{h.address} (or load it from "
                              "ansible-vault) first")
        secrets.register(pw)
        return pw

    def ontap_ca_bundle(self) -> str | bool:
        """What to verify the ONTAP REST certificate against: the inventory's ontap_ca_bundle,
        else the system trust store; ``ontap_validate_certs: false`` switches checks off."""
        h = self.inventory.ontap()
        ca = h.get("ontap_ca_bundle")
        if ca:
            return str(Path(ca).expanduser())
        return bool(h.get("ontap_validate_certs", True))

    def secret(self, name: str) -> str | None:
        """A secret a procedure must send (e.g. FSXADMIN_PASSWORD): from the environment (or
        ansible-vault, which puts it there), registered with the redactor; None when it is not
        set (a dry run sends nothing, so it plans without it)."""
        import os
        value = os.environ.get(name)
        secrets.register(value)
        return value

    def ontap_rest(self):
        """A netapp_ontap HostConnection to the cluster management address (use as a
        context manager). Reading needs no confirm; changes go through confirmed steps."""
        from ..transports import ontap_rest
        h = self.inventory.ontap()
        return ontap_rest.connection(h.address, int(h.get("ontap_rest_port", 443)),
                                     h.get("ansible_user", "admin"), self.ontap_password(h),
                                     self.ontap_ca_bundle())

    def stand_ins(self) -> dict[str, str]:
        """What stands in for a real system on this target (none on a real one), with
        versions: part of every run's provenance."""
        return {}

    # --- bring-up and tear-down (the lab builds; a real target is there already) --------------
    def provision(self, clusters: Iterable[str] = (), kafka: str = "installed",
                  fresh: bool = False, kafka_version: str | None = None) -> str:
        """Make sure the hosts a chapter needs exist. A real target has them: nothing is
        changed, the answer says so (``kafka_version`` is whatever the clusters run; a
        chapter that needs a particular one checks what they report)."""
        return f"target {self.name}: using the systems its inventory describes"

    def release(self) -> str:
        """Leave the target as the chapter found it (the lab target takes down what it
        brought up); a real target keeps what the chapter made."""
        return f"target {self.name}: nothing to release"

    def reset(self) -> str:
        """After a failed chapter: the lab takes down whatever runs; a real target is left
        alone (an operator decides). Returns what was done, '' for nothing."""
        return ""

    def running(self) -> bool:
        """Whether a built target (the lab) is up now; a real target is always there."""
        return False

    # --- running ------------------------------------------------------------------------------
    def run(self, command: str | list[str], host: str, *, read_only: bool = False,
            timeout: float = DEFAULT_TIMEOUT, check: bool = False,
            env: Mapping[str, str] | None = None, input: str | None = None,
            needs: Result | Iterable[Result] | None = None,
            cwd: str | None = None) -> Result | ResultSet:
        """Run a command on a host (a Result) or on every host of a group (a ResultSet).

        On an ONTAP host the command is a clustershell command; elsewhere a shell command
        (a list is quoted for the shell). ``read_only``: the command changes nothing, so it
        runs without confirm. ``needs``: Results of earlier steps this one reads from; if
        any of them was only planned, so is this call.
        """
        cmd = command if isinstance(command, str) else shlex.join(str(c) for c in command)
        _register_secrets(env)

        def step(h: Host) -> Result:
            if self.is_ontap(h):
                self._check_reads(h, [cmd], read_only)
                return self._guarded(h, cmd, read_only,
                                     lambda: self._ontap(h, [cmd], timeout), needs)
            return self._guarded(h, cmd, read_only,
                                 lambda: self._shell(h, cmd, timeout, dict(env or {}), input, cwd),
                                 needs)
        return self._per_host(host, step, check)

    def run_snippet(self, path: str | Path, host: str, *, read_only: bool = False,
                    timeout: float = DEFAULT_TIMEOUT, check: bool = False,
                    dest: str | None = None, env: Mapping[str, str] | None = None,
                    needs: Result | Iterable[Result] | None = None,
                    replace: Mapping[str, str] | None = None,
                    **variables) -> Result | ResultSet:
        """Execute (or place) a snippet file on a host or group; see the module doc.
        ``replace``: values the snippet shows -> the ones to run with (see lab_values)."""
        p = snippet_path(path)
        text = replace_values(render_vars(p.read_text(), variables, p.suffix), replace)
        _register_secrets({**variables, **dict(env or {})})

        def step(h: Host) -> Result:
            if p.suffix == ".ontap":
                lines = ontap_lines(text)
                self._check_reads(h, lines, read_only)
                return self._guarded(h, "\n".join(lines), read_only,
                                     lambda: self._ontap(h, lines, timeout), needs)
            if p.suffix == ".sh":
                e = {**{k: str(v) for k, v in variables.items()}, **dict(env or {})}
                label = with_env(text.strip(), e)
                r = self._guarded(h, label, read_only,
                                  lambda: self._shell(h, text, timeout, e, None, None), needs)
                r.command = label
                return r
            target_path = dest or f"/tmp/{p.name}"
            label = f"cat > {target_path} <<'EOF'\n{text.rstrip()}\nEOF"
            return self._guarded(h, label, False,
                                 lambda: self._put(h, target_path, text), needs)
        return self._per_host(host, step, check)

    def put(self, host: str, dest: str, content: str, *, check: bool = True,
            needs: Result | Iterable[Result] | None = None) -> Result | ResultSet:
        """Place a file on a host or group (a state change: planned without confirm)."""
        dest = plain_path(dest, "destination")
        label = f"cat > {dest} <<'EOF'\n{content.rstrip()}\nEOF"
        return self._per_host(host, lambda h: self._guarded(
            h, label, False, lambda: self._put(h, dest, content), needs), check)

    def read_file(self, host: str, path: str, *, check: bool = True,
                  needs: Result | Iterable[Result] | None = None) -> Result | ResultSet:
        """A file's content (read-only)."""
        return self.run(["cat", plain_path(path, "file")], host, read_only=True, check=check,
                        needs=needs)

    def du(self, host: str, path: str) -> int:
        """Bytes allocated under ``path`` on the host (read-only; sparse index files count
        as what they hold)."""
        r = self.run(["du", "-s", "-B1", plain_path(path, "du")], host, read_only=True,
                     check=True)
        return int(r.stdout.split()[0])

    def copy_file(self, src_host: str, path: str, dst_host: str, dest: str | None = None,
                  transform=None) -> Result:
        """Copy a file from one host to another through the control node (``transform``:
        a function applied to the text on the way)."""
        src = self.read_file(src_host, path)
        if src.planned:
            return src
        text = transform(src.stdout) if transform else src.stdout
        return self.put(dst_host, dest or path, text)

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
        Always a state change: planned without confirm."""
        from . import fstab as fs
        original = snippet_path(path).read_text()
        text = fs.with_servers(original, servers)
        lines = "\n".join(fs.entries(text))
        own = {lif["address"] for lif in self.inventory.ontap().get("ontap_data_lifs") or []}
        # Only a snippet's own address that nothing replaced is suspect: one the caller gave
        # (such as an FSx SVM's NFS endpoint just read from AWS) is this target's.
        replaced = (lambda a: True) if isinstance(servers, str) and servers else \
            (lambda a: a in (servers or {}))
        stray = [a for a in fs.lab_servers("\n".join(fs.entries(original)), own)
                 if not replaced(a)]
        if stray:
            raise ValueError(
                f"{Path(path).name}: NFS server(s) {', '.join(stray)} are lab "
                f"addresses and target {self.name!r} has no address for them; give one with "
                "servers= (the inventory's ontap_data_lifs feed lab_values())")
        script = fs.add_script(plain_path(fstab, "fstab"), backup and plain_path(backup, "backup"))
        env = {fs.LINES_VAR: lines}
        label = f"export {fs.LINES_VAR}={shlex.quote(lines)}\n{script.strip()}"

        def step(h: Host) -> Result:
            r = self._guarded(h, label, False,
                              lambda: self._shell(h, script, timeout, dict(env), None, None), needs)
            r.command = label
            return r
        return self._per_host(host, step, check)

    def apply_properties(self, path: str | Path | None, host: str, dest: str, *,
                         keep: tuple[str, ...] | None = None, backup: str | None = None,
                         timeout: float = DEFAULT_TIMEOUT, check: bool = False,
                         needs: Result | Iterable[Result] | None = None,
                         text: str | None = None) -> Result | ResultSet:
        """Apply a ``.properties`` snippet to the file ``dest`` on a host or group, as an
        operator applies the TR's broker configuration to a broker that already has one: the
        broker's identity (``keep``, default broker_config.IDENTITY: ids, listeners,
        controllers or ZooKeeper) stays its own, every other setting of the snippet is set,
        and the file is copied to ``backup`` (default ``<dest>.tr4947.bak``) before it
        changes. A host without the file gets the snippet as it is. ``text``: properties made
        from a snippet (e.g. broker 1's file turned into broker 2's) instead of ``path``.
        Always a state change: planned without confirm."""
        from .. import broker_config
        keep = broker_config.IDENTITY if keep is None else keep
        dest = plain_path(dest, "properties")
        backup = plain_path(backup or dest + BACKUP_SUFFIX, "backup")
        text = snippet_path(path).read_text() if text is None else text
        wanted = broker_config.settings(text, keep)
        label = (f"# set in {dest} (the file is copied to {backup} first; the host's own "
                 f"{', '.join(k for k in keep if k in broker_config.keys(text))} stay):\n"
                 + "\n".join(f"{k}={v}" for k, v in wanted.items()))

        def apply(h: Host) -> Result:
            cur = self._shell(h, f"cat {dest}", timeout, {}, None, None)
            existing = cur.stdout if cur.exit_code == 0 else ""
            merged = broker_config.onto(existing, text, keep)
            if existing and merged == existing:
                cur.stdout = f"{dest} already has these settings: nothing changed\n"
                cur.command = label
                return cur
            if existing:
                saved = self._shell(h, f"cp -p {dest} {backup}", timeout, {}, None, None)
                if saved.exit_code != 0:
                    return saved
            r = self._put(h, dest, merged)
            r.command = label
            if existing:
                r.stdout = (f"{len(wanted)} setting(s) applied to {dest}; "
                            f"the file as it was: {backup}\n")
            return r

        return self._per_host(
            host, lambda h: self._guarded(h, label, False, lambda: apply(h), needs), check)

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

    # --- the dry-run guard ------------------------------------------------------------------------
    def _check_reads(self, host: Host, lines: list[str], read_only: bool) -> None:
        if read_only:
            bad = [line for line in lines if not ontap_reads_only(line)]
            if bad:
                raise ValueError(f"declared read-only, but {bad[0]!r} changes {host.name}: "
                                 "drop read_only=True (it then needs confirm=True)")

    def _guarded(self, host: Host, label: str, read_only: bool, action,
                 needs: Result | Iterable[Result] | None = None) -> Result:
        if not read_only and not self.confirm:
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

    # --- the transports ---------------------------------------------------------------------------
    def _endpoint(self, h: Host, password: str | None = None) -> ssh.Endpoint:
        return ssh.Endpoint.of(h, password)

    def _shell(self, h: Host, command: str, timeout: float, env: dict[str, str],
               input: str | None, cwd: str | None) -> Result:
        started = now_iso()
        wd = cwd or h.get("kafka_home")
        head, feed = [], []
        _register_secrets(env)
        for k, v in env.items():
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k):
                raise ValueError(f"environment variable name {k!r} is not a shell name")
            if secrets.is_secret(k, str(v)):
                # From stdin, never on the command line (ps, the host's command log).
                head.append(f"IFS= read -r {k}; export {k}")
                feed.append(str(v))
            else:
                head.append(f"export {k}={shlex.quote(str(v))}")
        if wd:
            head.insert(0, f"cd {shlex.quote(wd)}")
        full = "\n".join(head + [command])
        stdin = "".join(f"{v}\n" for v in feed) + (input or "") if feed or input is not None \
            else None
        c = self._pool.run(self._endpoint(h), full, stdin, timeout)
        return Result(h.name, command, c.exit_code, secrets.redact(c.stdout),
                      secrets.redact(c.stderr), c.seconds, started, timed_out=c.timed_out)

    def _ontap(self, h: Host, lines: list[str], timeout: float) -> Result:
        started = now_iso()
        try:
            ep = self._endpoint(h, self.ontap_password(h))
        except TargetError as exc:
            return Result(h.name, "\n".join(lines), 255, "", str(exc).split("\n")[0], 0.0,
                          started)
        c = ssh.clustershell(ep, lines, timeout, h.get("ontap_cluster_name", h.name))
        return Result(h.name, "\n".join(lines), c.exit_code, c.stdout, c.stderr, c.seconds,
                      started, timed_out=c.timed_out)

    def _put(self, h: Host, dest: str, content: str) -> Result:
        dest = plain_path(dest, "destination")
        r = self._shell(h, f"mkdir -p {shlex.quote(str(Path(dest).parent))} && "
                           f"cat > {shlex.quote(dest)}", 120, {}, content, "/")
        r.command = f"put {dest}"
        if r.exit_code == 0:
            r.stdout = f"wrote {dest} ({len(content)} bytes)"
        return r

    def forget(self, host: str) -> None:
        """Drop the open SSH connection to ``host`` (its address is moving to another host)."""
        self._pool.forget(self._endpoint(self.host(host)))

    def close(self) -> None:
        self._pool.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _register_secrets(env: Mapping[str, object] | None) -> None:
    """Values a step is given under a secret's name (FSXADMIN_PASSWORD...) are masked from
    then on, in plans, outputs and errors, even when this process's environment never held
    them."""
    for k, v in (env or {}).items():
        if secrets.is_secret(k):
            secrets.register(str(v))


def _any_planned(needs: Result | Iterable[Result] | None) -> bool:
    if needs is None:
        return False
    items = [needs] if isinstance(needs, Result) else list(needs)
    # A ResultSet (one Result per host) counts by its members.
    flat = [x for i in items for x in (i if isinstance(i, list) else [i])]
    return any(r.planned for r in flat)
