"""The open run a chapter notebook works in: its Target, its Recorder, its provisioning.

A notebook never opens or releases a target itself. Its second cell calls :func:`attach`,
and what it gets back depends on who runs it:

* **The runner** (``tr4947 runbook``, tr4947.runbook) owns the run. It has resolved the
  target once, opened it, provisioned what the notebook declares and written
  ``<results_dir>/run.json``; ``attach`` reads that file, opens the same inventory (by its
  absolute path: nothing is resolved again, whatever the kernel's working directory) and
  records into the run's directory. The runner releases and resets the target afterwards.
* **By hand** (JupyterLab, nbval): there is no run file, so ``attach`` resolves ``target``
  itself, provisions what the notebook declares and records under
  build/results/<target>/<notebook>/; :meth:`ChapterRun.finish` then releases what it
  brought up.

What a notebook declares, in its metadata (``metadata.tr4947``): the page its results go to
(``chapter``), its variants (other parameter sets, filed under their own names) and what the
target must provide before the first step (``provision``)::

    "provision": {"clusters": ["fv_c1", "fv_c2"], "kafka": "installed",
                  "kafka_version": "{kafka_version}", "when": "measure_storage"}

A string ``"{name}"`` takes the value of the notebook parameter ``name``; ``when`` names a
boolean parameter without which nothing is provisioned.

A chapter that needs other deployments later in its run declares them too, as named
``stages`` (the performance chapters: each layout a fresh cluster, as the TR deployed each;
CVO-8's DAS and NFS clusters side by side)::

    "provision": {"clusters": ["nfs"], "kafka": "installed",
                  "stages": {"compare": {"clusters": ["das", "nfs"], "kafka": "started"}}}

and asks for them by name (:meth:`ChapterRun.provision`), so every cluster a chapter runs on
is one its metadata declares, never one a procedure builds on its own.
"""
from __future__ import annotations

import json
import os
import secrets
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .. import paths
from . import record
from .record import Recorder

RUN_FILE = "run.json"
NOTEBOOKS = paths.REPO / "notebooks"
PROVISION_KEYS = {"clusters", "kafka", "fresh", "kafka_version", "when", "stages"}


@dataclass
class RunFile:
    """What the runner hands a notebook's kernel: the run, resolved once."""
    run_id: str
    notebook: str
    chapter: str
    target: str                     # the name results are filed under
    inventory: str                  # absolute path of the target's inventory
    kind: str                       # lab | real
    confirm: bool
    provisioned: str                # what provisioning did, for the notebook to print

    def write(self, directory: Path) -> Path:
        from ..atomic import write_json
        return write_json(Path(directory) / RUN_FILE, asdict(self))

    @classmethod
    def read(cls, directory: str | os.PathLike | None) -> "RunFile | None":
        if directory is None:
            return None
        f = Path(directory) / RUN_FILE
        return cls(**json.loads(f.read_text())) if f.exists() else None


def new_run_id() -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + "-" + secrets.token_hex(3)


# --- what a notebook declares -------------------------------------------------------------------
def declared(notebook: str | os.PathLike) -> dict[str, Any]:
    """A notebook's ``metadata.tr4947`` (by name: notebooks/<name>.ipynb, or a path)."""
    p = Path(notebook)
    if p.suffix != ".ipynb":
        p = NOTEBOOKS / f"{notebook}.ipynb"
    meta = json.loads(p.read_text()).get("metadata", {})
    return meta.get("tr4947") or {}


def provision_spec(declaration: dict[str, Any], parameters: dict[str, Any],
                   stage: str | None = None) -> dict | None:
    """The notebook's ``provision`` (or its stage ``stage``) with its parameters filled in:
    keyword arguments for Target.provision, or None when there is nothing to provision."""
    spec = dict(declaration.get("provision") or {})
    stages = spec.pop("stages", None) or {}
    if stage is not None:
        if stage not in stages:
            raise ValueError(f"provision: no stage {stage!r} declared; declared: "
                             f"{sorted(stages) or 'none'} (metadata.tr4947.provision.stages)")
        spec = dict(stages[stage])
        if "stages" in spec:
            raise ValueError(f"provision stage {stage!r}: a stage declares no stages of its own")
    if not spec:
        return None
    unknown = set(spec) - PROVISION_KEYS
    if unknown:
        raise ValueError(f"provision: unknown key(s) {sorted(unknown)}; "
                         f"known: {sorted(PROVISION_KEYS)}")

    def value(v):
        if isinstance(v, str) and v.startswith("{") and v.endswith("}"):
            name = v[1:-1]
            if name not in parameters:
                raise ValueError(f"provision names parameter {name!r}, which the notebook "
                                 "does not have")
            return parameters[name]
        return [value(x) for x in v] if isinstance(v, list) else v
    spec = {k: value(v) for k, v in spec.items()}
    if "when" in spec and not spec.pop("when"):
        return None
    spec.pop("when", None)
    spec.setdefault("fresh", True)
    if isinstance(spec.get("clusters"), str):
        spec["clusters"] = [spec["clusters"]]
    return spec


def provision(target, spec: dict | None) -> str:
    """Provision ``spec`` on ``target``; what was done, in one line ('' for nothing)."""
    if not spec:
        return ""
    return target.provision(**spec)


# --- the open run ------------------------------------------------------------------------------------
class ChapterRun:
    """A chapter's run: ``target`` (the Target), ``rec`` (its Recorder), and what attach
    was told. Procedures take it as their first argument."""

    def __init__(self, target, rec: Recorder, notebook: str, by_runner: bool,
                 provisioned: str = ""):
        self.target = target
        self.rec = rec
        self.notebook = notebook
        self.by_runner = by_runner
        self.provisioned = provisioned

    def provision(self, stage: str | None = None) -> str:
        """A deployment the notebook declares, fresh: its ``provision`` again (None: another
        copy of what the run started with, as a new layout gets) or its stage ``stage``.
        What was done, in one line."""
        spec = provision_spec(declared(self.notebook), {}, stage)
        return provision(self.target, spec) or "nothing declared to provision"

    @property
    def is_lab(self) -> bool:
        return self.target.kind == "lab"

    def finish(self) -> None:
        """The chapter's last step: its records are complete. By hand, the target is also
        released (the lab goes down if this run brought it up); under the runner, the runner
        does that."""
        self.rec.finish()
        print(f"{len(self.rec.records)} results recorded for the guide")
        if not self.by_runner:
            print(self.target.release())


def attach(notebook: str, target: str = "lab", confirm: bool = False,
           results_dir: str | os.PathLike | None = None, **parameters) -> ChapterRun:
    """The notebook ``notebook``'s run (see the module doc). ``parameters``: the notebook's
    own parameters that its provisioning names (by hand only; the runner has them)."""
    from .. import targets
    given = RunFile.read(results_dir)
    if given is not None:
        t = targets.open(given.inventory, confirm=given.confirm)
        # The run's Ansible artifacts (scrubbed of secrets) are kept with the run.
        t.artifacts_dir = Path(results_dir) / "ansible"
        rec = record.start(notebook, given.chapter, given.target, results_dir, given.kind,
                           given.run_id)
        run = ChapterRun(t, rec, notebook, True, given.provisioned)
    else:
        decl = declared(notebook)
        chapter = decl.get("chapter", notebook)
        t = targets.open(target, confirm=confirm)
        directory = Path(results_dir or paths.BUILD / "results" / t.name / notebook)
        rec = record.start(notebook, chapter, t.name, directory, t.kind, new_run_id())
        said = provision(t, provision_spec(decl, parameters))
        run = ChapterRun(t, rec, notebook, False, said)
    print(f"target {run.target.name} ({run.target.kind})"
          + (f"; {run.provisioned}" if run.provisioned else ""))
    return run
