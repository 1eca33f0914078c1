"""Where a run's results are kept: ``results/<target>/`` (or a results root given instead).

    <chapter>.json    the run record: the records, and the run's provenance
    <chapter>.ipynb   the executed notebook: the source notebook with this run's outputs

Both come from one run and carry its id. The executed notebook is an output, kept apart from
its source in notebooks/ (which has no outputs and is never written by a run: it is an input
of the run, and a cache must not write into its own key). nbval re-executes the executed
notebooks (results/conftest.py) and compares their outputs; they keep the parameters the
run was given (papermill's injected cell, without the runner's staging directory), so a
variant re-executes as itself.

A failed run replaces nothing: the previous record stays and says that a later run failed,
and why (``last_failure``), which the page shows.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import nbformat

from .. import paths
from ..atomic import write_json, write_text
from ..secrets import redact

RESULTS = paths.REPO / "results"


def record_path(label: str, chapter: str, results: Path = RESULTS) -> Path:
    return Path(results) / label / f"{chapter}.json"


def notebook_path(label: str, chapter: str, results: Path = RESULTS) -> Path:
    return Path(results) / label / f"{chapter}.ipynb"


def committed(label: str, chapter: str, results: Path = RESULTS) -> dict | None:
    f = record_path(label, chapter, results)
    return json.loads(f.read_text()) if f.exists() else None


def executed_notebook(executed: Path, run: dict) -> nbformat.NotebookNode:
    """The executed notebook as it is kept: the runner's staging directory out of its
    injected parameters (papermill's cell and metadata), the run's stamp in its metadata."""
    nb = nbformat.read(executed, as_version=4)
    for cell in nb.cells:
        if "injected-parameters" in cell.metadata.get("tags", []):
            cell.source = "\n".join(line for line in cell.source.splitlines()
                                    if not line.startswith("results_dir ="))
        cell.metadata.pop("papermill", None)
        cell.metadata.pop("execution", None)
    pm = nb.metadata.get("papermill", {})
    pm.get("parameters", {}).pop("results_dir", None)
    for volatile in ("input_path", "output_path", "start_time", "end_time", "duration",
                     "environment_variables", "exception"):
        pm.pop(volatile, None)
    nb.metadata["tr4947_run"] = {"run_id": run["id"], "target": run["target"],
                                 "digest": run["digest"]}
    return nb


def save(label: str, chapter: str, doc: dict, executed: Path, results: Path = RESULTS) -> None:
    """One run, one record: the record and the executed notebook, each replaced atomically."""
    nb = executed_notebook(executed, doc["run"])
    write_json(record_path(label, chapter, results), doc)
    write_text(notebook_path(label, chapter, results), nbformat.writes(nb) + "\n")


def failed(label: str, chapter: str, run_id: str, error: str, executed: Path | None,
           results: Path = RESULTS) -> None:
    """The previous results stay; their record says that a later run failed, and why."""
    f = record_path(label, chapter, results)
    doc = json.loads(f.read_text()) if f.exists() else {"notebook": chapter.split(".")[0],
                                                        "chapter": chapter, "run": None,
                                                        "records": []}
    doc["last_failure"] = {"run_id": run_id,
                           "at": time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime()),
                           "error": redact(error),
                           "executed_notebook": str(executed) if executed else None}
    write_json(f, doc)
