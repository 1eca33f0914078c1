"""Run the project's Ansible playbooks against a target (ansible-runner, through
tr4947.transports.ansible).

Credentials: the ONTAP password reaches the play only as ``ONTAP_PASSWORD`` in the play's
environment, from the Target (the lab's own, or ONTAP_PASSWORD on a real target); the REST
certificate is trusted through ``REQUESTS_CA_BUNDLE`` (certificate checks stay on). The
playbooks say once, in ``module_defaults``, how every netapp.ontap module reaches the cluster.

Safety, as Ansible users expect it: on a real target without ``confirm`` the playbook runs in
check mode with ``--diff`` (``ansible-playbook --check --diff``). The netapp.ontap modules
support check mode: they read the cluster over its REST API and report what they would change
without sending any change. The result is a plan: the playbook, inventory and endpoint, then
what each task would do. A dry run stays a plan when check mode finds that a task would fail
(``would_fail``; the plan says so and why): check mode can also fail where a task needs what
an earlier one would have made, so the reader judges. Without a password there is nothing to
log in with, so the plan is the playbook's tasks only, and it says why check mode did not
run.

Artifacts: each run's ansible-runner artifacts are kept, with secrets masked, in the
directory the caller names (``artifact_dir=``), else the target's ``artifacts_dir`` (the
runner can point it at the run's folder), else build/ansible/ (the newest 20 runs).
"""
from __future__ import annotations

import difflib
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import paths, secrets
from ..transports import ansible as transport
from .base import Target, TargetError

PRIVATE_DATA_DIR = paths.REPO / "playbook"
#: Where runs keep their artifacts when neither the caller nor the target says (newest 20).
DEFAULT_ARTIFACTS = paths.BUILD / "ansible"
KEEP_LAST = 20


class PlaybookError(RuntimeError):
    pass


@dataclass
class TaskResult:
    task: str
    host: str
    item: str
    status: str                 # ok | changed | failed | skipped (check mode: would be)
    detail: str                 # module result in brief: actions, modify, msg
    diff: str = ""              # what --diff shows for it (unified diff), if the module says


@dataclass
class PlaybookRun:
    playbook: str
    target: str
    planned: bool                # nothing was changed (a dry run: check mode or the plan only)
    rc: int | None = None
    status: str = ""
    stats: dict[str, dict[str, int]] = field(default_factory=dict)
    tasks: list[TaskResult] = field(default_factory=list)
    plan: str = ""
    stdout: str = ""
    ident: str = ""
    events: list[dict] = field(default_factory=list, repr=False)
    check_mode: bool = False     # ran as ansible-playbook --check --diff
    artifacts: Path | None = None

    @property
    def ok(self) -> bool:
        """A run that succeeded, or a plan (a dry run changes nothing, so it fails nothing:
        check mode's verdict is ``would_fail``, and the plan says it)."""
        return self.planned or self.rc == 0

    @property
    def would_fail(self) -> bool:
        """Check mode found that the run, as it stands, would fail (check mode can also fail
        where a task needs what an earlier one would have made: read the plan)."""
        return self.check_mode and self.rc != 0

    def total(self, key: str) -> int:
        """Sum of one play-recap counter (changed, ok, failures...) over all hosts."""
        return sum(self.stats.get(key, {}).values())

    def recap(self) -> str:
        """Ansible's PLAY RECAP line(s), from the run's stats."""
        if self.planned and not self.check_mode:
            return "not run (dry run)"
        hosts = sorted({h for counts in self.stats.values() for h in counts})
        keys = ("ok", "changed", "dark", "failures", "skipped", "rescued", "ignored")
        label = {"dark": "unreachable", "failures": "failed"}
        return "\n".join(f"{h:<12}: " + "  ".join(
            f"{label.get(k, k)}={self.stats.get(k, {}).get(h, 0)}" for k in keys) for h in hosts)

    def check(self) -> "PlaybookRun":
        if not self.ok:
            failed = [t for t in self.tasks if t.status == "failed"]
            why = "; ".join(f"{t.task} [{t.item}]: {t.detail}" for t in failed) or self.stdout[-2000:]
            raise PlaybookError(f"playbook {self.playbook} failed on {self.target} "
                                f"(rc {self.rc}, {self.status}): {why}")
        return self


def _project_file(playbook: str) -> Path:
    f = PRIVATE_DATA_DIR / "project" / playbook
    if not f.exists():
        have = sorted(p.name for p in (PRIVATE_DATA_DIR / "project").glob("*.yml"))
        raise FileNotFoundError(f"playbook {playbook} not found in {f.parent}; have: "
                                + ", ".join(have))
    return f


def _credentials(target: Target) -> dict[str, str]:
    """Environment for the play: ONTAP_PASSWORD and the CA bundle to trust."""
    env = {"ONTAP_PASSWORD": target.ontap_password()}       # registered with the redactor
    ca = target.ontap_ca_bundle()
    if isinstance(ca, str):
        env["REQUESTS_CA_BUNDLE"] = ca
    return env


def clear_stale_artifacts() -> list[Path]:
    """Private artifacts of runs whose process is gone (a kernel killed mid-run)."""
    return transport.clear_stale()


def _inventory_shown(target: Target) -> Path:
    p = target.inventory.path
    return p.relative_to(paths.REPO) if p.is_relative_to(paths.REPO) else p


def plan(target: Target, playbook: str, run: PlaybookRun | None = None,
         why_not: str = "") -> str:
    """What a run would do: the playbook's plays and tasks and where they go, then (``run``,
    a check-mode run) what Ansible found each task would do, or (``why_not``) why check mode
    did not run."""
    import yaml
    f = _project_file(playbook)
    ontap = target.inventory.ontap()
    lines = [f"DRY RUN: would run ansible-playbook {playbook} -i {_inventory_shown(target)}",
             f"  ONTAP REST API: https://{ontap.address}:{ontap.get('ontap_rest_port', 443)}/api "
             f"as {ontap.get('ansible_user', 'admin')} (password from ONTAP_PASSWORD)"]
    for play in yaml.safe_load(f.read_text()) or []:
        lines.append(f"  play: {play.get('name', '')} (hosts: {play.get('hosts')})")
        for task in play.get("tasks", []):
            module = next((k for k in task if "." in k or k.startswith("na_")), "?")
            lines.append(f"    task: {task.get('name', module)} -> {module}")
    if run is None:
        lines.append(f"Ansible's check mode did not run: {why_not}" if why_not else "")
        lines = [x for x in lines if x]
        lines.append("Nothing was contacted. Re-run with confirm=True to apply.")
        return secrets.redact("\n".join(lines))
    lines.append(f"Check mode (ansible-playbook --check --diff) read the cluster over its REST "
                 f"API and changed nothing: netapp.ontap modules send no change in check mode. "
                 f"Result: {run.status} (rc {run.rc})"
                 + (": as it stands, the run would fail." if run.would_fail else "."))
    verbs = {"changed": "would change", "ok": "no change", "failed": "FAILED",
             "skipped": "skipped"}
    for t in run.tasks:
        item = f" [{t.item}]" if t.item else ""
        lines.append(f"  {t.task}{item}: {verbs.get(t.status, t.status)}"
                     + (f": {t.detail}" if t.detail else ""))
        lines += ["    " + d for d in t.diff.splitlines()]
    if not run.tasks and run.stdout.strip():
        lines += ["  " + x for x in run.stdout.strip().splitlines()[-15:]]
    lines += ["  PLAY RECAP " + x for x in run.recap().splitlines()]
    lines.append("Re-run with confirm=True to apply.")
    return secrets.redact("\n".join(lines))


def run(target: Target, playbook: str, *, extravars: dict[str, Any] | None = None,
        echo: bool | None = None, timeout: int = 600,
        artifact_dir: str | Path | None = None) -> PlaybookRun:
    """Run ``playbook`` (a file in playbook/project/) against ``target``'s inventory; on a
    real target without confirm, in check mode with --diff (see the module doc)."""
    echo = target.echo if echo is None else echo
    _project_file(playbook)
    check = not target.confirm
    try:
        env = _credentials(target)
    except TargetError as exc:
        if not check:
            raise
        reason = str(exc).split("\n")[0].split(": ", 1)[-1]
        text = plan(target, playbook, why_not=f"{reason} (check mode logs in to read the "
                                              "cluster)")
        if echo:
            print(text, flush=True)
        return PlaybookRun(playbook, target.name, planned=True, plan=text)

    ident = f"{Path(playbook).stem}-{target.name}-{time.strftime('%Y%m%dT%H%M%S')}-" \
            f"{uuid.uuid4().hex[:6]}"
    keep = artifact_dir or getattr(target, "artifacts_dir", None)
    job = transport.run(PRIVATE_DATA_DIR, playbook, target.inventory.path, env=env, ident=ident,
                        keep=Path(keep) if keep else DEFAULT_ARTIFACTS,
                        reaches=[target.inventory.ontap().address], extravars=extravars,
                        check=check, diff=check, timeout=timeout,
                        keep_last=None if keep else KEEP_LAST)
    out = PlaybookRun(playbook, target.name, planned=check, rc=job.rc, status=job.status,
                      stats=job.stats, tasks=_task_results(job.events), stdout=job.stdout,
                      ident=ident, events=job.events, check_mode=check, artifacts=job.artifacts)
    if check:
        out.plan = plan(target, playbook, out)
        if echo:
            print(out.plan, flush=True)
    return out


def _diff_text(diff: Any) -> str:
    """A module's ``diff`` (before/after, as Ansible's --diff prints it) as a unified diff."""
    out = []
    for d in diff if isinstance(diff, list) else [diff]:
        if not isinstance(d, dict):
            continue
        if d.get("prepared"):
            out.append(str(d["prepared"]).rstrip())
            continue
        before, after = d.get("before", ""), d.get("after", "")
        if not isinstance(before, str) or not isinstance(after, str):
            import json
            before = json.dumps(before, indent=2, sort_keys=True, default=str)
            after = json.dumps(after, indent=2, sort_keys=True, default=str)
        out += list(difflib.unified_diff(
            before.splitlines(), after.splitlines(), d.get("before_header", "before"),
            d.get("after_header", "after"), lineterm="", n=3))
    return "\n".join(out)


def _task_results(events: list[dict]) -> list[TaskResult]:
    out = []
    for e in events:
        kind = e.get("event", "")
        if kind not in ("runner_on_ok", "runner_on_failed", "runner_item_on_ok",
                        "runner_item_on_failed", "runner_on_skipped"):
            continue
        d = e.get("event_data", {})
        res = d.get("res", {}) or {}
        if kind in ("runner_on_ok", "runner_on_failed") and res.get("results") is not None:
            continue                     # a loop's summary event; its items come separately
        status = ("failed" if "failed" in kind else "skipped" if "skipped" in kind
                  else "changed" if res.get("changed") else "ok")
        item = res.get("item", d.get("item", ""))
        if isinstance(item, dict):
            item = item.get("name", str(item))
        detail = []
        for k in ("actions", "modify"):
            if res.get(k):
                detail.append(f"{k}: {res[k]}")
        if res.get("msg"):
            detail.append(str(res["msg"]))
        out.append(TaskResult(d.get("task", ""), d.get("host", ""), str(item or ""), status,
                              secrets.redact("; ".join(detail)),
                              secrets.redact(_diff_text(res.get("diff"))) if res.get("diff")
                              else ""))
    return out
