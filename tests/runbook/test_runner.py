"""The runner as an operator uses it: `tr4947 runbook ... --target NAME` reaches the notebook
(no fake: the real notebook runs in a real kernel against the example inventory, which names
hosts that cannot resolve, so a dry run that contacted anything would fail), unknown
parameters are refused before anything runs, and one run writes one record."""
from __future__ import annotations

import json
import subprocess
import sys

import nbformat
import pytest

from tr4947 import paths

RUNBOOK = [sys.executable, "-m", "tr4947.runbook"]


def runbook(*args, timeout=600):
    return subprocess.run([*RUNBOOK, *args], cwd=paths.REPO, capture_output=True, text=True,
                          timeout=timeout)


def test_an_unknown_parameter_is_refused_with_the_notebooks_own():
    r = runbook("sizing", "-p", "brokrs=6")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "no parameter named brokrs" in r.stderr
    # The refusal teaches: it lists what the notebook does take.
    assert "brokers = 8" in r.stderr and "calc_brokers" in r.stderr


def test_target_and_results_dir_are_the_runners(tmp_path):
    r = runbook("sizing", "-p", "target=aff")
    assert r.returncode == 2 and "use --target" in r.stderr


def test_target_reaches_the_notebook(tmp_path):
    """aws-cvo-storage on the aws-cvo example inventory, not confirmed: every step is planned
    for that inventory's hosts, and the record and the executed notebook say aws-cvo."""
    r = runbook("aws-cvo-storage", "--target", "aws-cvo", "-p", "broker=broker-1",
                "--results", str(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads((tmp_path / "aws-cvo" / "aws-cvo-storage.json").read_text())
    assert doc["run"]["target"] == "aws-cvo" and doc["run"]["kind"] == "real"
    plans = [rec["data"]["output"] for rec in doc["records"] if rec["kind"] == "console"]
    assert plans and all(p.startswith("DRY RUN: would") for p in plans), plans
    # The plans name the example inventory's hosts, not the lab's.
    text = "\n".join(plans)
    assert "CHANGE-ME-broker-1.example.invalid" in text and "198.18." not in text
    # The executed notebook is kept beside the record, from the same run; the source notebook
    # is never written by a run (it is an input of the run).
    nb = nbformat.read(tmp_path / "aws-cvo" / "aws-cvo-storage.ipynb", as_version=4)
    assert nb.metadata["tr4947_run"] == {"run_id": doc["run"]["id"], "target": "aws-cvo",
                                         "digest": doc["run"]["digest"]}
    injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert len(injected) == 1 and 'broker = "broker-1"' in injected[0].source
    assert "results_dir" not in injected[0].source, "the runner's staging dir is not kept"
    assert nb.metadata["papermill"]["parameters"] == {"target": "aws-cvo", "confirm": False,
                                                      "broker": "broker-1"}
    source = nbformat.read(paths.REPO / "notebooks" / "aws-cvo-storage.ipynb", as_version=4)
    assert all(not c.get("outputs") for c in source.cells if c.cell_type == "code")
    assert "tr4947_run" not in source.metadata


def test_a_failed_run_keeps_the_previous_results_and_says_so(tmp_path):
    """A chapter whose notebook fails (here: an unknown broker host, refused at its first
    step) leaves the record it had and adds last_failure, which the page shows."""
    prior = tmp_path / "aws-cvo" / "aws-cvo-storage.json"
    prior.parent.mkdir(parents=True)
    prior.write_text(json.dumps({"notebook": "aws-cvo-storage", "chapter": "aws-cvo",
                                 "run": {"id": "earlier", "target": "aws-cvo"},
                                 "records": [{"id": "CVO-1", "kind": "text", "title": "",
                                              "data": {"body": "kept"}}]}))
    r = runbook("aws-cvo-storage", "--target", "aws-cvo", "-p", "broker=no-such-host",
                "--results", str(tmp_path))
    assert r.returncode == 1
    doc = json.loads(prior.read_text())
    assert doc["run"]["id"] == "earlier" and doc["records"][0]["data"]["body"] == "kept"
    assert "no-such-host" in doc["last_failure"]["error"]
    from tr4947.results import render
    assert "failed" in render.failure_note(doc) and "`earlier`" in render.failure_note(doc)


@pytest.mark.parametrize("name", sorted(p.stem for p in (paths.REPO / "notebooks").glob("*.ipynb")))
def test_every_notebook_declares_the_runners_parameters(name):
    """papermill reads every assignment of the parameters cell (a comment holding '=' makes
    it skip the line, which would hide the parameter from the runner)."""
    import papermill as pm
    nb = nbformat.read(paths.REPO / "notebooks" / f"{name}.ipynb", as_version=4)
    cell = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    assigned = [line.split("=", 1)[0].strip() for line in cell.source.splitlines()
                if line and not line.startswith(("#", " ")) and "=" in line]
    declared = pm.inspect_notebook(str(paths.REPO / "notebooks" / f"{name}.ipynb"))
    assert list(declared) == assigned
    assert {"target", "confirm", "results_dir"} <= set(declared)


def test_sigterm_mid_chapter_records_the_interruption(tmp_path):
    """A runner stopped while a chapter runs (SIGTERM, as a CI timeout or `kill` sends it)
    exits as Ctrl-C does: the chapter's record says it was interrupted, no half result is
    filed, and the kernel it started is gone. The target is given as a path to an inventory,
    as a reader with their own inventory file does."""
    import os
    import signal
    import time
    inv = paths.REPO / "playbook" / "inventory" / "aws-cvo" / "hosts.yml"
    p = subprocess.Popen([*RUNBOOK, "aws-cvo-storage", "--target", str(inv), "-p",
                          "broker=broker-1", "--results", str(tmp_path)], cwd=paths.REPO,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         start_new_session=True)
    before = set((paths.REPO / "notebooks").iterdir())
    seen = []
    for line in p.stdout:
        seen.append(line)
        if "runs (" in line:          # printed just before the kernel starts
            time.sleep(0.5)
            os.kill(p.pid, signal.SIGTERM)
            break
    rest = p.communicate(timeout=120)[0]
    out = "".join(seen) + rest
    assert p.returncode != 0, out
    doc = json.loads((tmp_path / "aws-cvo" / "aws-cvo-storage.json").read_text())
    assert doc["run"] is None and doc["records"] == [], "an interrupted run files no results"
    assert "interrupted" in doc["last_failure"]["error"]
    # No kernel of this run survives it.
    time.sleep(1)
    left = subprocess.run(["pgrep", "-s", str(p.pid)], capture_output=True, text=True)
    assert left.stdout.strip() == "", f"processes left in the runner's session: {left.stdout}"
    # Nor anything in the repository: the killed kernel's sockets live in Jupyter's runtime
    # directory (in notebooks/ they broke the site build).
    assert set((paths.REPO / "notebooks").iterdir()) == before


def test_a_runbook_process_starts_without_compiling_the_iri_grammar():
    # rfc3987-syntax compiles a Lark grammar on import (about 1.2 s of every start); the
    # runbook's processes never validate an "iri" format, so they never import it, while
    # nbformat's validation still works.
    import subprocess
    import sys
    code = ("import tr4947.runbook.execute, sys, nbformat; "
            "nbformat.validate(nbformat.v4.new_notebook()); "
            "print(sorted(m for m, v in sys.modules.items() if v is not None and "
            "m.startswith(('rfc3987_syntax', 'lark'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"
