"""The runner: which chapters must run, how a notebook runs, and one run = one record.

For each chapter on a target (a notebook of notebooks/ with its default parameters, and each
variant its metadata declares: the same notebook with other parameters, filed under
``<notebook>.<variant>``, as the functional-validation chapter on the TR's Kafka 3.2.3):

1. **Up to date?** Its inputs (tr4947.runbook.inputs) are digested and compared with the
   committed run record ``results/<target>/<chapter>.json``. Same digest: the committed
   results stand ("up to date (run <id>)") and nothing runs, unless forced or named.
2. **Run.** papermill executes it with the parameters injected as papermill parameters
   (``target``, ``confirm``, ``results_dir`` and any ``-p NAME=VALUE``; a name the notebook
   does not declare is refused, listing the ones it does). Everything goes to a staging
   directory, build/runs/<run id>/.
3. **Record.** Only a complete run replaces the committed results: the run record (records
   plus provenance: run id, target and kind, times, parent commit, input digest and the
   inputs that differ from that commit, tool versions, parameters) is written to
   ``results/<target>/<chapter>.json`` and, for the lab with default parameters, the
   executed notebook (outputs of this run, stamped with the same run id) to notebooks/.
   A failed run leaves the previous results in place and adds ``last_failure`` to their
   record, which the page shows.
"""
from __future__ import annotations

import json
import os
import re
import secrets as pysecrets
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from .. import paths
from . import engine
from .inputs import Inputs, chapter_inputs

NOTEBOOKS = paths.REPO / "notebooks"
RESULTS = paths.REPO / "results"
RUNNER_PARAMETERS = ("target", "confirm", "results_dir")


class RunbookError(RuntimeError):
    """A usage error (unknown notebook, unknown parameter): nothing ran."""


@dataclass
class Outcome:
    notebook: str
    status: str                     # ran | up-to-date | failed
    seconds: float
    run_id: str = ""
    error: str = ""
    why: str = ""


@dataclass(frozen=True)
class Chapter:
    """One notebook run with one set of parameters, and the name its results are filed
    under: the notebook's stem, or ``<stem>.<variant>`` for a variant declared in the
    notebook's metadata (``"tr4947_variants": {"kafka-3.2.3": {"kafka_version": "3.2.3"}}``):
    papermill's one notebook, several parameter sets."""
    name: str
    path: Path
    parameters: dict = field(default_factory=dict, hash=False, compare=False)

    @property
    def variant(self) -> str | None:
        return self.name[len(self.path.stem) + 1:] or None


def as_chapter(chapter: "Chapter | Path") -> Chapter:
    return chapter if isinstance(chapter, Chapter) else Chapter(Path(chapter).stem, Path(chapter))


def variants(path: Path) -> list[Chapter]:
    """The notebook's default run and the variants its metadata declares."""
    nb = nbformat.read(path, as_version=4)
    declared = nb.metadata.get("tr4947_variants") or {}
    return [Chapter(path.stem, path)] + [Chapter(f"{path.stem}.{v}", path, dict(p))
                                         for v, p in declared.items()]


def chapters(selected: list[str] | None = None, lab: bool = True) -> list[Chapter]:
    """Every chapter, or the ``selected`` ones: a notebook's name selects it with its
    variants, ``<notebook>.<variant>`` that variant alone. On a target that is not the lab
    (``lab=False``) a variant runs only when named: it asks for something the lab builds
    (e.g. another Kafka release), which a reader's cluster has only if it runs it."""
    every = [c for p in notebooks() for c in variants(p)]
    names = {c.name for c in every}
    unknown = [s for s in selected or () if s not in names]
    if unknown:
        raise RunbookError(f"unknown chapter(s): {', '.join(unknown)}; "
                           f"choose from: {', '.join(c.name for c in every)}")
    return [c for c in every
            if (not selected or c.name in selected or c.path.stem in selected)
            and (lab or not c.variant or c.name in (selected or ()))]


def is_lab(target: str) -> bool:
    from ..inventory import load
    return load(target).kind == "lab"


def notebooks() -> list[Path]:
    return sorted(NOTEBOOKS.glob("*.ipynb"))


def notebook(name: str) -> Path:
    """The chapter notebook ``name`` (a file: a variant is the same notebook, see chapters())."""
    by_name = {p.stem: p for p in notebooks()}
    if name not in by_name:
        raise RunbookError(f"unknown notebook {name}; choose from: {', '.join(by_name)}")
    return by_name[name]


def declared_parameters(path: Path) -> dict[str, dict]:
    """The notebook's parameters cell, as papermill reads it: name -> default, type, help."""
    import papermill as pm
    return pm.inspect_notebook(str(path))


def check_parameters(path: Path, parameters: dict) -> None:
    declared = declared_parameters(path)
    unknown = [k for k in parameters if k not in declared]
    if unknown:
        listing = "\n".join(f"  {k} = {v.get('default')}" + (f"   # {v['help']}" if v.get("help")
                                                             else "")
                            for k, v in declared.items())
        raise RunbookError(f"{path.stem}: no parameter named {', '.join(unknown)}. "
                           f"Its parameters:\n{listing}")
    wrong = [_type_problem(k, declared[k].get("default"), v) for k, v in parameters.items()
             if k not in RUNNER_PARAMETERS]
    wrong = [w for w in wrong if w]
    if wrong:
        raise RunbookError(f"{path.stem}: " + "; ".join(wrong))
    missing = [k for k in RUNNER_PARAMETERS if k not in declared]
    if missing:
        raise RunbookError(f"{path.stem}: its parameters cell lacks {', '.join(missing)} "
                           "(every chapter notebook takes target, confirm and results_dir)")


_KINDS = {bool: "true or false", int: "a whole number", float: "a number", str: "text",
          list: "a list such as [1, 2]", dict: "a mapping such as {a: 1}"}


def _type_problem(name: str, default_src: str | None, value) -> str | None:
    """A value of another kind than the parameter's default (3 -> a whole number, 0.5 -> a
    number, [..] -> a list) is refused: a notebook given "abc" for repeats would fail half
    way, after the lab was up. A default of None takes anything."""
    import ast
    try:
        default = ast.literal_eval(default_src) if default_src else None
    except (ValueError, SyntaxError):
        return None                                   # an expression: nothing to compare
    if default is None:
        return None
    want = type(default)
    ok = (isinstance(value, want) and not (want is int and isinstance(value, bool))) or \
        (want is float and isinstance(value, int) and not isinstance(value, bool))
    if ok:
        return None
    return (f"-p {name}={value!r}: {name} takes {_KINDS.get(want, want.__name__)} (default "
            f"{default_src})")


def target_label(target: str) -> str:
    """The name results are filed under: the inventory's name (its directory), also when
    the target is given as a path to an inventory."""
    if "/" not in str(target):
        return str(target)
    from .inputs import inventory_dir
    return inventory_dir(target).name


def record_path(target: str, notebook: str, results: Path = RESULTS) -> Path:
    return Path(results) / target_label(target) / f"{notebook}.json"


def committed(target: str, notebook: str, results: Path = RESULTS) -> dict | None:
    f = record_path(target, notebook, results)
    return json.loads(f.read_text()) if f.exists() else None


def freshness(chapter: "Chapter | Path", target: str, parameters: dict,
              results: Path = RESULTS) -> tuple[Inputs, str | None]:
    """(inputs, why it must run) - why is None when the committed results are current."""
    chapter = as_chapter(chapter)
    inputs = chapter_inputs(chapter.path, target,
                            {"confirm": False, **chapter.parameters, **parameters})
    rec = committed(target, chapter.name, results)
    if rec is None or not rec.get("run"):
        return inputs, "never run"
    run = rec["run"]
    if run.get("digest") == inputs.digest:
        return inputs, None
    changed = inputs.changed(run.get("inputs", {}))
    if inputs.parameters != run.get("parameters", {}):
        changed.append("parameters")
    shown = ", ".join(changed[:6]) + (f" and {len(changed) - 6} more" if len(changed) > 6 else "")
    return inputs, f"inputs changed since run {run.get('id')}: {shown or 'parameters'}"


# --- provenance -------------------------------------------------------------------------------------
def git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=paths.REPO, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def tool_versions(kind: str, parameters: dict | None = None) -> dict[str, str]:
    import importlib.metadata as md
    out = {"Kafka": (parameters or {}).get("kafka_version") or paths.kafka_version(),
           "Python": sys.version.split()[0]}
    try:
        java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr
        m = re.search(r'version "([^"]+)"', java)
        out["Java"] = m.group(1) if m else "?"
    except OSError:
        pass
    for pkg in ("papermill", "confluent-kafka", "netapp-ontap", "ansible-core", "awscli"):
        try:
            out[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            pass
    if kind == "lab":
        try:
            out["moto (FSx stand-in)"] = md.version("moto")
        except md.PackageNotFoundError:
            pass
        from ..lab.ontap import state
        out["ONTAP stand-in"] = state.Cluster().version
    return out


def _provenance(run_id: str, inputs: Inputs, header: dict, started: str) -> dict:
    head = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=all", "--", *inputs.files)
    dirty = sorted({line[3:].split(" -> ")[-1] for line in status.splitlines() if line})
    return {"id": run_id, "target": inputs.target, "kind": header.get("kind", "lab"),
            "started": started, "finished": header.get("finished"),
            "commit": head, "inputs_changed_since_commit": dirty,
            "digest": inputs.digest, "inputs": inputs.files,
            "parameters": inputs.parameters,
            "versions": tool_versions(header.get("kind", "lab"), inputs.parameters)}


def _write_json(path: Path, doc: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=1, sort_keys=False) + "\n")
    os.replace(tmp, path)


def strip_volatile_metadata(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Drop papermill's timing metadata and the injected parameters cell, so the committed
    notebook is the source notebook with this run's outputs."""
    nb.metadata.pop("papermill", None)
    nb.cells = [c for c in nb.cells
                if "injected-parameters" not in c.get("metadata", {}).get("tags", [])]
    for cell in nb.cells:
        cell.metadata.pop("papermill", None)
        cell.metadata.pop("execution", None)
    return nb


# --- running -------------------------------------------------------------------------------------------
def run_one(chapter: "Chapter | Path", target: str, parameters: dict, inputs: Inputs,
            out=sys.stderr, timeout_s: float | None = None, results: Path = RESULTS) -> Outcome:
    import papermill as pm
    from papermill.exceptions import PapermillExecutionError

    chapter = as_chapter(chapter)
    path, name = chapter.path, chapter.name
    run_id = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + "-" + pysecrets.token_hex(3)
    stage = paths.BUILD / "runs" / run_id
    stage.mkdir(parents=True, exist_ok=True)
    executed = stage / path.name
    params = {"target": target, "results_dir": str(stage), **chapter.parameters, **parameters}
    started = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime())
    t0 = time.monotonic()
    try:
        pm.execute_notebook(str(path), str(executed), parameters=params,
                            engine_name=engine.register(), progress_bar=False,
                            cwd=str(NOTEBOOKS), kernel_name="python3",
                            execution_timeout=timeout_s)
    except PapermillExecutionError as exc:
        return _failed(name, target, run_id, time.monotonic() - t0, executed,
                       f"cell {exc.exec_count}: {exc.ename}: {exc.evalue}", out, results)
    except Exception as exc:                 # kernel died, timeout, papermill's own errors
        last = (str(exc).strip().splitlines() or [""])[-1]
        return _failed(name, target, run_id, time.monotonic() - t0, executed,
                       f"{type(exc).__name__}: {last}", out, results)
    seconds = time.monotonic() - t0
    rec_file = stage / f"{path.stem}.records.json"
    if not rec_file.exists():
        return _failed(name, target, run_id, seconds, executed,
                       f"the notebook wrote no records ({rec_file.name})", out, results)
    recs = json.loads(rec_file.read_text())
    # A variant's results are its own chapter's: its partials sit beside the default run's.
    doc = {"notebook": path.stem, "chapter": recs["header"]["chapter"]
           + (f".{chapter.variant}" if chapter.variant else ""),
           "run": _provenance(run_id, inputs, recs["header"], started),
           "records": recs["records"]}
    nb = strip_volatile_metadata(nbformat.read(executed, as_version=4))
    nb.metadata["tr4947"] = {"run_id": run_id, "target": target, "digest": inputs.digest}
    # One run, one record: the record and the notebook are replaced together, each atomically.
    _write_json(record_path(target, name, results), doc)
    nbformat.write(nb, executed)
    default_params = (not chapter.parameters and set(parameters) <= {"confirm"}
                      and not parameters.get("confirm"))
    # The committed notebook carries the committed record's run: only a run that writes the
    # committed results (not a test's or a benchmark's own results root) replaces it.
    if target == "lab" and default_params and Path(results).resolve() == RESULTS.resolve():
        tmp = path.with_suffix(".tmp")
        nbformat.write(nb, tmp)
        os.replace(tmp, path)
    kept = paths.BUILD / "notebooks" / target_label(target) / f"{name}.ipynb"
    kept.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(executed, kept)
    shutil.rmtree(stage, ignore_errors=True)
    return Outcome(name, "ran", seconds, run_id)


def _failed(name: str, target: str, run_id: str, seconds: float, executed: Path, error: str,
            out, results: Path = RESULTS) -> Outcome:
    """The previous results stay; their record says that a later run failed, and why."""
    from ..secrets import redact
    error = redact(error)
    f = record_path(target, name, results)
    doc = json.loads(f.read_text()) if f.exists() else {"notebook": name, "chapter": name,
                                                        "run": None, "records": []}
    doc["last_failure"] = {"run_id": run_id, "at": time.strftime("%Y-%m-%dT%H:%M:%S+00:00",
                                                                   time.gmtime()),
                           "error": error, "executed_notebook": str(executed)}
    _write_json(f, doc)
    print(f"  FAILED after {seconds:.0f}s: {error}\n  executed notebook with the error: "
          f"{executed}", file=out)
    return Outcome(name, "failed", seconds, run_id, error)


def run(target: str = "lab", selected: list[str] | None = None, force: bool = False,
        parameters: dict | None = None, out=sys.stderr,
        results: Path = RESULTS) -> list[Outcome]:
    parameters = dict(parameters or {})
    chs = chapters(selected, lab=is_lab(target))
    for ch in chs:
        check_parameters(ch.path, {**ch.parameters, **parameters, "target": target})
    outcomes: list[Outcome] = []
    for i, ch in enumerate(chs, 1):
        inputs, why = freshness(ch, target, parameters, results)
        if force or selected:
            why = why or ("forced" if force else "named on the command line")
        rec = committed(target, ch.name, results)
        if why is None:
            print(f"[{i}/{len(chs)}] {ch.name}: up to date (run {rec['run']['id']})", file=out)
            outcomes.append(Outcome(ch.name, "up-to-date", 0.0, rec["run"]["id"]))
            continue
        print(f"[{i}/{len(chs)}] {ch.name} on {target}: runs ({why})", file=out, flush=True)
        try:
            o = run_one(ch, target, parameters, inputs, out, results=results)
        except KeyboardInterrupt:
            # Ctrl-C or SIGTERM mid-chapter: the record says so, the lab goes down, and the
            # interrupt carries on to the caller (nothing else runs).
            _failed(ch.name, target, "interrupted", 0.0, Path("-"), "interrupted (Ctrl-C or "
                    "SIGTERM) before the chapter finished", out, results)
            _leave_lab_clean(target, out)
            raise
        o.why = why
        if o.status == "ran":
            print(f"  done in {o.seconds:.0f}s (run {o.run_id})", file=out)
        _leave_lab_clean(target, out)
        outcomes.append(o)
    return outcomes


def _leave_lab_clean(target: str, out) -> None:
    """Each chapter starts on a lab that is down: one that failed half way (its last cell,
    which takes the lab down, never ran) must not leave hosts running for the next."""
    from .. import targets
    from ..targets import playbooks
    # A kernel killed during a play leaves its Ansible artifacts (with the play's
    # environment) in memory; they go now, not at the next play.
    playbooks.clear_stale_artifacts()
    try:
        said = targets.open(target, echo=False).reset()
        if said:
            print(f"  {said}", file=out)
    except Exception as exc:  # report, never mask the notebook's own outcome
        print(f"  WARNING: clean-up after the run failed: {exc}", file=out)
