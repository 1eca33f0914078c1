"""Run the project's Ansible playbooks against a target through ansible-runner.

``playbook/`` is ansible-runner's private data dir: ``project/`` holds the playbooks,
``env/`` the runner settings and non-secret environment, ``inventory/<target>/`` the targets.
A run always names one inventory file (ansible-runner would otherwise merge every target
under ``inventory/``).

Credentials: the ONTAP password reaches the play only as ``ONTAP_PASSWORD`` in the play's
environment, from the Target (the lab's own, or ONTAP_PASSWORD on a real target); the REST
certificate is trusted through ``REQUESTS_CA_BUNDLE`` (certificate checks stay on).
ansible-runner writes the job's environment into its artifacts (``command``), so a run's
artifacts never touch the disk: they live in a private directory in memory (/dev/shm, mode
0700) that is removed when the run ends, and any left by a killed run are removed before the
next one starts.

Safety: on a real target without ``confirm`` nothing runs and nothing is contacted; the
plan (playbook, inventory, ONTAP endpoint, tasks) is returned and printed instead.
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import paths, secrets
from .base import Target

PRIVATE_DATA_DIR = paths.REPO / "playbook"


class PlaybookError(RuntimeError):
    pass


@dataclass
class TaskResult:
    task: str
    host: str
    item: str
    status: str                 # ok | changed | failed | skipped
    detail: str                 # module result in brief: actions, modify, msg


@dataclass
class PlaybookRun:
    playbook: str
    target: str
    planned: bool
    rc: int | None = None
    status: str = ""
    stats: dict[str, dict[str, int]] = field(default_factory=dict)
    tasks: list[TaskResult] = field(default_factory=list)
    plan: str = ""
    stdout: str = ""
    ident: str = ""
    events: list[dict] = field(default_factory=list, repr=False)

    @property
    def ok(self) -> bool:
        return self.planned or self.rc == 0

    def total(self, key: str) -> int:
        """Sum of one play-recap counter (changed, ok, failures...) over all hosts."""
        return sum(self.stats.get(key, {}).values())

    def recap(self) -> str:
        """Ansible's PLAY RECAP line(s), from the run's stats."""
        if self.planned:
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


ARTIFACTS_PREFIX = "tr4947-ansible-"


def _artifact_root() -> Path:
    shm = Path("/dev/shm")
    return shm if shm.is_dir() and os.access(shm, os.W_OK) else Path(tempfile.gettempdir())


def clear_stale_artifacts() -> list[Path]:
    """Artifacts of runs whose process is gone (a kernel killed mid-run)."""
    removed = []
    for d in _artifact_root().glob(ARTIFACTS_PREFIX + "*"):
        pid = d.name.removeprefix(ARTIFACTS_PREFIX).split("-")[0]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            shutil.rmtree(d, ignore_errors=True)
            removed.append(d)
    return removed


def plan(target: Target, playbook: str) -> str:
    """What a run would do, read from the playbook and the inventory only."""
    import yaml
    f = _project_file(playbook)
    ontap = target.inventory.ontap()
    lines = [f"DRY RUN: would run ansible-playbook {playbook} "
             f"-i {target.inventory.path.relative_to(paths.REPO) if target.inventory.path.is_relative_to(paths.REPO) else target.inventory.path}",
             f"  ONTAP REST API: https://{ontap.address}:{ontap.get('ontap_rest_port', 443)}/api "
             f"as {ontap.get('ansible_user', 'admin')} (password from ONTAP_PASSWORD)"]
    for play in yaml.safe_load(f.read_text()) or []:
        lines.append(f"  play: {play.get('name', '')} (hosts: {play.get('hosts')})")
        for task in play.get("tasks", []):
            module = next((k for k in task if "." in k or k.startswith("na_")), "?")
            lines.append(f"    task: {task.get('name', module)} -> {module}")
    lines.append("Nothing was contacted. Re-run with confirm=True to apply.")
    return secrets.redact("\n".join(lines))


def run(target: Target, playbook: str, *, extravars: dict[str, Any] | None = None,
        echo: bool | None = None, timeout: int = 600) -> PlaybookRun:
    """Run ``playbook`` (a file in playbook/project/) against ``target``'s inventory."""
    echo = target.echo if echo is None else echo
    _project_file(playbook)
    if not target.confirm:
        text = plan(target, playbook)
        if echo:
            print(text, flush=True)
        return PlaybookRun(playbook, target.name, planned=True, plan=text)

    import ansible_runner
    clear_stale_artifacts()
    env = _credentials(target)
    # The venv's ansible-playbook, whatever PATH the caller (a notebook kernel) has.
    env["PATH"] = f"{Path(sys.executable).parent}:{os.environ.get('PATH', '/usr/bin:/bin')}"
    ident = f"{Path(playbook).stem}-{target.name}-{uuid.uuid4().hex[:8]}"
    artifacts = Path(tempfile.mkdtemp(prefix=f"{ARTIFACTS_PREFIX}{os.getpid()}-",
                                      dir=_artifact_root()))
    try:
        r = ansible_runner.run(private_data_dir=str(PRIVATE_DATA_DIR), playbook=playbook,
                               inventory=str(target.inventory.path), envvars=env,
                               extravars=extravars or None, ident=ident, quiet=True,
                               timeout=timeout, artifact_dir=str(artifacts),
                               suppress_env_files=True)
        events = list(r.events)
        stdout = r.stdout.read() if r.stdout else ""
        out = PlaybookRun(playbook, target.name, planned=False, rc=r.rc, status=r.status,
                          stats=_plain_stats(r.stats), tasks=_task_results(events),
                          stdout=secrets.redact(stdout), ident=ident, events=events)
    finally:
        shutil.rmtree(artifacts, ignore_errors=True)
    return out


def _plain_stats(stats: dict | None) -> dict[str, dict[str, int]]:
    return {k: dict(v) for k, v in (stats or {}).items() if isinstance(v, dict)}


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
                              secrets.redact("; ".join(detail))))
    return out
