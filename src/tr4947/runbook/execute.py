"""Runs the chapter notebooks with papermill against a target, with caching.

For each notebook in notebooks/:
  key = sha256(code and markdown of the notebook, every snippet it names, parameters, target,
               the target's inventory)
If the key matches the last successful run and its results exist, the notebook is skipped
(unless forced). Otherwise it is executed into build/notebooks/<target>/, its records land in
build/results/<target>/, and the results are rendered into the site's partials.

A failed step stops that notebook (papermill raises), its output is reported, the lab is
torn down so nothing is left running, and the other notebooks still run.
On the lab target with default parameters the executed notebook (outputs refreshed, volatile
papermill metadata stripped) is written back to notebooks/: that is what nbval checks in CI.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat

from .. import paths
from . import engine

NOTEBOOKS = paths.REPO / "notebooks"


@dataclass
class Outcome:
    notebook: str
    status: str                     # ran | cached | failed
    seconds: float
    error: str = ""


def notebooks(selected: list[str] | None = None) -> list[Path]:
    found = sorted(NOTEBOOKS.glob("*.ipynb"))
    if not selected:
        return found
    by_name = {p.stem: p for p in found}
    unknown = [s for s in selected if s not in by_name]
    if unknown:
        raise SystemExit(f"unknown notebook(s): {', '.join(unknown)}; "
                         f"choose from: {', '.join(by_name)}")
    return [by_name[s] for s in selected]


def snippets_used(nb: nbformat.NotebookNode) -> list[Path]:
    """Snippet files a notebook names in its code, by path ("functional-validation/FV-1-...")
    or by file name alone (notebooks may join a chapter prefix and a name; names start with
    their procedure ID, so they are unique across chapters)."""
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    return sorted(p for p in paths.SNIPPETS.rglob("*")
                  if p.is_file() and (str(p.relative_to(paths.SNIPPETS)) in code
                                      or re.search(rf"[\"'/]{re.escape(p.name)}[\"']", code)))


def cache_key(path: Path, target: str, parameters: dict) -> str:
    nb = nbformat.read(path, as_version=4)
    h = hashlib.sha256()
    for cell in nb.cells:                       # sources only: outputs don't change the run
        h.update(cell.cell_type.encode() + b"\0" + cell.source.encode() + b"\0")
    for snip in snippets_used(nb):
        h.update(str(snip.relative_to(paths.SNIPPETS)).encode() + snip.read_bytes())
    h.update(json.dumps(parameters, sort_keys=True).encode())
    h.update(target.encode())
    inv = paths.INVENTORY / target
    for f in sorted(inv.rglob("*")) if inv.exists() else []:
        if f.is_file():
            h.update(f.read_bytes())
    return h.hexdigest()


def strip_volatile_metadata(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Drop papermill's timing metadata so committed notebooks diff cleanly."""
    nb.metadata.pop("papermill", None)
    for cell in nb.cells:
        cell.metadata.pop("papermill", None)
        cell.metadata.pop("execution", None)
    return nb


def run(target: str = "lab", selected: list[str] | None = None, force: bool = False,
        parameters: dict | None = None, update_sources: bool | None = None,
        out=sys.stderr) -> list[Outcome]:
    import papermill as pm
    from ..results import render

    parameters = dict(parameters or {})
    if update_sources is None:
        update_sources = target == "lab" and not parameters
    engine_name = engine.register()
    out_dir = paths.BUILD / "notebooks" / target
    results_dir = paths.BUILD / "results" / target
    cache_dir = paths.BUILD / "cache" / target
    for d in (out_dir, results_dir, cache_dir):
        d.mkdir(parents=True, exist_ok=True)
    # The notebooks read these instead of taking them as parameters, so a default lab run
    # injects no parameter cell and the executed notebook has the committed one's shape.
    os.environ["TR4947_TARGET"] = target
    os.environ["TR4947_RESULTS_DIR"] = str(results_dir)

    nbs = notebooks(selected)
    outcomes: list[Outcome] = []
    for i, path in enumerate(nbs, 1):
        name = path.stem
        key = cache_key(path, target, parameters)
        stamp = cache_dir / f"{name}.key"
        results = results_dir / f"{name}.json"
        print(f"[{i}/{len(nbs)}] {name} on target {target}", file=out, flush=True)
        if not force and stamp.exists() and stamp.read_text() == key and results.exists():
            print(f"  unchanged since the last run (cache key {key[:12]}): skipped", file=out)
            render.render_file(results)
            outcomes.append(Outcome(name, "cached", 0.0))
            continue
        t0 = time.monotonic()
        executed = out_dir / path.name
        try:
            pm.execute_notebook(str(path), str(executed), parameters=parameters or None,
                                engine_name=engine_name, progress_bar=False,
                                cwd=str(NOTEBOOKS), kernel_name="python3")
        except Exception as exc:                     # papermill's PapermillExecutionError & co.
            seconds = time.monotonic() - t0
            print(f"  FAILED after {seconds:.0f}s: {exc}", file=out)
            print(f"  executed notebook with the error: {executed}", file=out)
            stamp.unlink(missing_ok=True)
            _leave_lab_clean(target, out)
            outcomes.append(Outcome(name, "failed", seconds, str(exc)))
            continue
        seconds = time.monotonic() - t0
        if results.exists():
            render.render_file(results)
        if update_sources:
            nb = strip_volatile_metadata(nbformat.read(executed, as_version=4))
            nbformat.write(nb, path)
        stamp.write_text(key)
        print(f"  done in {seconds:.0f}s", file=out)
        outcomes.append(Outcome(name, "ran", seconds))
    return outcomes


def _leave_lab_clean(target: str, out) -> None:
    if target != "lab":
        return
    try:
        from ..lab.lab import Lab
        Lab("lab").down()
        print("  lab torn down after the failure", file=out)
    except Exception as exc:  # report, never mask the notebook's own failure
        print(f"  WARNING: lab clean-up failed: {exc}", file=out)
