"""Executing the runbook: notebooks run by papermill (engine, execute), results recorded
(record) with secrets kept out (secrets). Notebooks start with :func:`open_runbook`."""
from __future__ import annotations

import os
from pathlib import Path

from .record import Provenance, Recorder


def open_runbook(notebook: str, chapter: str, target: str | None = None,
                 parameters: dict | None = None, versions: dict | None = None,
                 results_dir: str | Path | None = None, kind: str | None = None) -> Recorder:
    """The Recorder a notebook uses. Target and results dir default to what the runner set."""
    from .. import paths
    target = target or os.environ.get("TR4947_TARGET", "lab")
    results_dir = Path(results_dir or os.environ.get(
        "TR4947_RESULTS_DIR", paths.BUILD / "results" / target))
    prov = Provenance(target=target, kind=kind or ("lab" if target == "lab" else "real"),
                      notebook=notebook, parameters=dict(parameters or {}),
                      versions=dict(versions or {}))
    return Recorder(notebook, chapter, prov, results_dir)
