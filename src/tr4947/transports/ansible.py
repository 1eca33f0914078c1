"""ansible-runner: one playbook of the project against one inventory, its artifacts kept.

``playbook/`` is ansible-runner's private data dir: ``project/`` holds the playbooks and their
``ansible.cfg`` (ansible-playbook runs there), ``env/settings`` the runner's settings,
``inventory/<target>/`` the targets. A run always names one inventory file (ansible-runner
would otherwise merge every target under ``inventory/``).

Artifacts: ansible-runner writes a job's artifacts (its command line with the whole
environment, which holds the ONTAP password; every event; stdout; rc; status) while the job
runs. So the job writes them into a private directory in memory (/dev/shm, mode 0700). When it
ends, whatever its outcome, they are copied to the directory the caller keeps (a run's folder,
e.g. build/runs/<run id>/ansible/<ident>/) with the environment left out of ``command`` and
every known secret masked in every file, and the private copy is removed. A killed job's
private directory is removed before the next job starts (its process is gone).
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import netguard, secrets

PRIVATE_PREFIX = "tr4947-ansible-"


@dataclass
class Job:
    rc: int | None
    status: str
    stats: dict[str, dict[str, int]] = field(default_factory=dict)
    events: list[dict] = field(default_factory=list, repr=False)
    stdout: str = ""                    # what ansible-playbook printed, secrets masked
    artifacts: Path | None = None       # the kept, scrubbed artifacts of this job


def private_root() -> Path:
    shm = Path("/dev/shm")
    return shm if shm.is_dir() and os.access(shm, os.W_OK) else Path(tempfile.gettempdir())


def clear_stale() -> list[Path]:
    """Private artifact directories of jobs whose process is gone (a kernel killed mid-run)."""
    removed = []
    for d in private_root().glob(PRIVATE_PREFIX + "*"):
        pid = d.name.removeprefix(PRIVATE_PREFIX).split("-")[0]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            shutil.rmtree(d, ignore_errors=True)
            removed.append(d)
    return removed


def run(private_data_dir: Path, playbook: str, inventory: Path, *, env: dict[str, str],
        ident: str, keep: Path, reaches: list[str] = (), extravars: dict[str, Any] | None = None,
        check: bool = False, diff: bool = False, timeout: int = 600,
        keep_last: int | None = None) -> Job:
    """Run ``playbook`` with ``env`` added to the job's environment (``--check``/``--diff`` when
    asked); ``reaches``: the addresses the play connects to (checked by netguard first). Its
    scrubbed artifacts end up in ``keep/<ident>/`` (only the newest ``keep_last`` of ``keep``'s
    jobs are kept, when given)."""
    import ansible_runner
    for address in reaches:
        netguard.check(address)
    clear_stale()
    for name, value in env.items():
        if secrets.is_secret(name):
            secrets.register(value)
    env = dict(env)
    # The venv's ansible-playbook, whatever PATH the caller (a notebook kernel) has.
    env["PATH"] = f"{Path(sys.executable).parent}:{os.environ.get('PATH', '/usr/bin:/bin')}"
    private = Path(tempfile.mkdtemp(prefix=f"{PRIVATE_PREFIX}{os.getpid()}-",
                                    dir=private_root()))
    cmdline = " ".join(x for x, on in (("--check", check), ("--diff", diff)) if on)
    try:
        r = ansible_runner.run(private_data_dir=str(private_data_dir), playbook=playbook,
                               inventory=str(inventory), envvars=env,
                               extravars=extravars or None, ident=ident, quiet=True,
                               timeout=timeout, artifact_dir=str(private),
                               suppress_env_files=True, cmdline=cmdline or None)
        events = list(r.events)
        stdout = r.stdout.read() if r.stdout else ""
        job = Job(r.rc, r.status, _plain_stats(r.stats), events, secrets.redact(stdout))
    finally:
        kept = _keep(private / ident, Path(keep) / ident)
        shutil.rmtree(private, ignore_errors=True)
        if keep_last:
            _rotate(Path(keep), keep_last)
    job.artifacts = kept
    return job


def _plain_stats(stats: dict | None) -> dict[str, dict[str, int]]:
    return {k: dict(v) for k, v in (stats or {}).items() if isinstance(v, dict)}


def _keep(src: Path, dest: Path) -> Path | None:
    """Copy a job's artifacts, scrubbed: ``command`` without the environment, and every file
    with each known secret masked (secrets.redact)."""
    if not src.is_dir():
        return None
    shutil.rmtree(dest, ignore_errors=True)
    for f in sorted(src.rglob("*")):
        if not f.is_file() or f.is_symlink():
            continue
        text = f.read_bytes().decode("utf-8", errors="replace")
        if f.name == "command" and f.parent == src:
            try:
                cmd = json.loads(text)
                cmd["env"] = "(not kept: the job's environment holds its credentials)"
                text = json.dumps(cmd, indent=1)
            except (ValueError, TypeError):
                text = ""
        out = dest / f.relative_to(src)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(secrets.redact(text))
    return dest


def _rotate(root: Path, keep_last: int) -> None:
    jobs = sorted((d for d in root.iterdir() if d.is_dir()), key=lambda d: d.stat().st_mtime)
    for d in jobs[:-keep_last]:
        shutil.rmtree(d, ignore_errors=True)
