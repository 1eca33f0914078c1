"""nbval catches doc drift: a notebook whose stored output no longer matches a fresh run fails,
and the failure shows what differs. Three cases, each run as CI runs it (pytest --nbval with
the repo's sanitizers, in a subprocess):

* the sizing notebook's computation, unchanged: passes;
* the same with one stored number altered: fails, and the report shows both numbers;
* the AFF storage notebook run against a copy of snippets/ in which one ONTAP command was
  changed: fails, and the report shows the command as it now runs.

The sizing cases use the notebook's pure computation (measure_storage = False and the
measurement cells left out), so they need no lab; the snippet case brings up the ONTAP
stand-in only, like the notebook itself.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import nbformat
import pytest

from tr4947 import paths

#: The executed notebooks: the sources with their last run's outputs, what nbval compares.
EXECUTED = paths.REPO / "results" / "lab"
SANITIZE = paths.REPO / "results" / "nbval-sanitize.cfg"


def nbval(nb_path, cwd, env=None, timeout=300):
    return subprocess.run(
        # The sanitize file as --opt=value: a separate argument would be taken for a path,
        # and pytest would find this repository's pyproject.toml above it and run with our
        # addopts (xdist's workers among them, each running cells of its own).
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval",
         f"--nbval-sanitize-with={SANITIZE}", str(nb_path)],
        cwd=cwd, capture_output=True, text=True, timeout=timeout,
        env={**os.environ, **(env or {})})


def sizing_computation() -> nbformat.NotebookNode:
    """sizing.ipynb up to its calculator, with the storage measurement switched off."""
    nb = nbformat.read(EXECUTED / "sizing.ipynb", as_version=4)
    params = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    assert "measure_storage = True" in params.source
    params.source = params.source.replace("measure_storage = True", "measure_storage = False")
    # The set-up cell says whether it measures: not compared here, it does not. (In the
    # executed copy papermill's injected-parameters cell comes first: skip it.)
    setup = next(c for c in nb.cells[nb.cells.index(params) + 1:] if c.cell_type == "code"
                 and "injected-parameters" not in c.metadata.get("tags", []))
    setup.metadata.setdefault("tags", []).append("nbval-ignore-output")
    cut = next(i for i, c in enumerate(nb.cells)
               if c.cell_type == "markdown" and "The lab's storage" in c.source)
    nb.cells = nb.cells[:cut]
    return nb


def test_unchanged_notebook_passes(tmp_path):
    nb = tmp_path / "sizing.ipynb"
    nbformat.write(sizing_computation(), nb)
    res = nbval(nb, tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    assert " passed" in res.stdout and "failed" not in res.stdout


def test_altered_stored_output_fails_with_a_readable_diff(tmp_path):
    nb_path = tmp_path / "sizing.ipynb"
    nb = sizing_computation()
    cell = next(c for c in nb.cells if c.cell_type == "code" and c.get("outputs")
                and "Computed (GBps)" in "".join(o.get("text", "") for o in c.outputs))
    out = next(o for o in cell.outputs if "Computed (GBps)" in o.get("text", ""))
    # The table's replication-factor-2 row: "2   5.1   5.1" (computed, then published).
    row = next(ln for ln in out["text"].splitlines() if re.match(r"2\s+5\.1\s", ln))
    out["text"] = out["text"].replace(row, row.replace("5.1", "5.7", 1))
    nbformat.write(nb, nb_path)
    res = nbval(nb_path, tmp_path)
    assert res.returncode != 0
    report = res.stdout
    assert "Cell outputs differ" in report
    assert "5.7" in report and "5.1" in report        # both sides of the diff are shown
    assert "1 failed" in report                       # only the altered cell


@pytest.mark.lab
def test_altered_snippet_command_fails_with_the_new_command_in_the_diff(tmp_path):
    from tr4947.lab.lab import Lab, LabError, preflight
    try:
        preflight()
    except LabError as exc:
        pytest.skip(str(exc))
    if Lab().running():
        pytest.skip("the default lab is running (this test runs a notebook on it)")
    def run_with(old: str, new: str, name: str):
        snippets = tmp_path / name / "snippets"
        shutil.copytree(paths.SNIPPETS, snippets)
        pnfs = snippets / "aff-a900" / "AFF-2-pnfs.ontap"
        text = pnfs.read_text()
        assert old in text
        pnfs.write_text(text.replace(old, new))
        nb = tmp_path / name / "aff-a900-storage.ipynb"
        shutil.copy(EXECUTED / "aff-a900-storage.ipynb", nb)
        try:
            return nbval(nb, tmp_path / name, env={"TR4947_SNIPPETS": str(snippets)})
        finally:
            Lab(echo=lambda m: None).down()      # also when the notebook's clean-up never ran

    # A command whose output the page shows: the transcript drifts, and pytest's diff sets
    # the command as it now runs against the one the page shows.
    res = run_with("-fields v4.1,v4.1-pnfs,tcp-max-xfer-size", "-fields v4.1-pnfs,tcp-max-xfer-size",
                   "show")
    assert res.returncode != 0, res.stdout
    report = res.stdout
    assert "Cell outputs differ" in report
    # (pytest's diff may cut a line's first characters: "-fields" can read "ields")
    assert "ields v4.1-pnfs,tcp-max-xfer-size" in report
    assert "ields v4.1,v4.1-pnfs,tcp-max-xfer-size" in report
    # A setting the procedure reads back (over REST): the run stops and says what did not take.
    res = run_with("-tcp-max-xfer-size 262144", "-tcp-max-xfer-size 65536", "setting")
    assert res.returncode != 0, res.stdout
    assert "did not take" in res.stdout and "'tcp_max_transfer_size': 65536" in res.stdout
