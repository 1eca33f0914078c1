"""One owner of a run, thin notebooks and a freeze that cannot miss an input.

* The runner resolves the target once: a name, a relative path (from wherever the reader
  stands) and an absolute path to the same inventory all run a chapter to its end, filed
  under the inventory's name; the notebook's kernel (whose working directory is notebooks/)
  never resolves it again.
* Code started as a program (``python -m tr4947.lab.nfsclient`` on every lab host,
  ``python -m tr4947.omb`` behind the TR's bin/benchmark) is an input: editing it in a
  scratch copy of the repository makes the chapters that ran it stale, naming the file.
* Notebooks are thin: parameters, calls into tr4947.procedures, what a reader sees.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from tr4947 import paths

NOTEBOOKS = sorted((paths.REPO / "notebooks").glob("*.ipynb"))
#: What a notebook may import: the procedures (and attach, which hands it its run).
ALLOWED_IMPORT = re.compile(r"^(from tr4947\.procedures(\.\w+)? import [\w, ]+|"
                            r"import tr4947\.procedures(\.\w+)?)$")


def code_lines(nb_path: Path) -> int:
    nb = nbformat.read(nb_path, as_version=4)
    return sum(len(c.source.splitlines()) for c in nb.cells if c.cell_type == "code")


def test_notebooks_are_thin():
    per = {p.stem: code_lines(p) for p in NOTEBOOKS}
    total = sum(per.values())
    print("notebook code lines: " + ", ".join(f"{k} {v}" for k, v in per.items())
          + f"; total {total}")
    assert total <= 600, f"{total} code lines across the notebooks (at most 600)"
    fat = {k: v for k, v in per.items() if v > 80}
    assert not fat, f"notebooks over 80 code lines: {fat}: move the logic into procedures/"


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_notebook_imports_only_procedures(nb_path):
    nb = nbformat.read(nb_path, as_version=4)
    imports = [line.strip() for c in nb.cells if c.cell_type == "code"
               for line in c.source.splitlines()
               if re.match(r"\s*(import|from)\s", line)]
    wrong = [i for i in imports if not ALLOWED_IMPORT.match(i)]
    assert not wrong, (f"{nb_path.stem} imports beyond tr4947.procedures: {wrong} (a notebook "
                       "holds parameters and calls into procedures; the procedures reach the "
                       "Target API)")
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    for forbidden in ("targets.open", ".release()", "runbook.", "paths.SNIPPETS"):
        assert forbidden not in code, f"{nb_path.stem} uses {forbidden}: the runner owns that"


def test_the_allow_list_refuses_what_it_should():
    assert ALLOWED_IMPORT.match("from tr4947.procedures import attach")
    assert ALLOWED_IMPORT.match("from tr4947.procedures.sizing import Sizing")
    for bad in ("from tr4947 import targets", "from tr4947.measure.spread import spread",
                "import tr4947.lab", "from tr4947.procedures import attach; import os"):
        assert not ALLOWED_IMPORT.match(bad), bad


# --- the target, resolved once -----------------------------------------------------------------------
def runbook(*args, cwd, timeout=600):
    return subprocess.run([sys.executable, "-m", "tr4947.runbook", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": str(paths.REPO / "src")})


@pytest.mark.parametrize("form", ["name", "relative", "relative-elsewhere", "absolute"])
def test_a_target_given_any_way_runs_a_chapter_to_its_end(form, tmp_path):
    """sizing without its storage measurement opens the lab target and records a computed
    run (nothing is brought up): enough to prove which inventory the kernel was handed."""
    hosts = paths.INVENTORY / "lab" / "hosts.yml"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    target, cwd = {"name": ("lab", paths.REPO),
                   "relative": ("playbook/inventory/lab/hosts.yml", paths.REPO),
                   "relative-elsewhere": (os.path.relpath(hosts, elsewhere), elsewhere),
                   "absolute": (str(hosts), elsewhere)}[form]
    r = runbook("sizing", "--target", target, "-p", "measure_storage=false",
                "--results", str(tmp_path / "results"), cwd=cwd)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "provisioned in" not in r.stdout, r.stdout      # a computed run brings nothing up
    doc = json.loads((tmp_path / "results" / "lab" / "sizing.json").read_text())
    assert doc["run"]["target"] == "lab" and doc["run"]["kind"] == "computed"
    assert any(rec["kind"] == "table" for rec in doc["records"])


def test_target_from_the_environment(tmp_path):
    r = subprocess.run([sys.executable, "-m", "tr4947.runbook", "--status", "--json",
                        "--results", str(tmp_path)], cwd=tmp_path, capture_output=True,
                       text=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": str(paths.REPO / "src"),
                            "TR4947_TARGET": str(paths.INVENTORY / "aws-cvo")})
    assert r.returncode == 0, r.stderr
    status = json.loads(r.stdout)
    assert status["target"] == "aws-cvo" and status["kind"] == "real"
    # On a real target a variant runs only when named.
    assert "functional-validation.kafka-3.2.3" not in [c["chapter"] for c in status["chapters"]]


# --- a freeze that cannot miss an input ----------------------------------------------------------------
@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    """A copy of the repository's tracked files (and any not yet committed), as a fresh
    clone has them."""
    root = tmp_path_factory.mktemp("scratch")
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                            "--exclude-standard"], cwd=paths.REPO, capture_output=True,
                           check=True).stdout.decode().split("\0")
    for f in filter(None, files):
        src = paths.REPO / f
        if src.is_file():
            (root / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, root / f)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


def status(root: Path) -> dict[str, dict]:
    r = subprocess.run([sys.executable, "-m", "tr4947.runbook", "--status", "--json"],
                       cwd=root, capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PYTHONPATH": str(root / "src")})
    assert r.returncode == 0, r.stderr
    return {c["chapter"]: c for c in json.loads(r.stdout)["chapters"]}


@pytest.mark.parametrize("module,who", [
    ("src/tr4947/lab/nfsclient.py", "chapters that ran on the lab's NFS mounts"),
    ("src/tr4947/omb/__main__.py", "chapters that ran OMB's bin/benchmark")])
def test_editing_code_started_as_a_program_makes_its_chapters_stale(scratch, module, who):
    before = status(scratch)
    ran_it = [name for name in before
              if module in json.loads((scratch / "results" / "lab" / f"{name}.json")
                                      .read_text())["run"]["inputs"]]
    assert ran_it, f"no committed chapter lists {module} among its inputs ({who})"
    f = scratch / module
    original = f.read_text()
    try:
        # A statement, not a comment: the digest follows what the code does (a comment
        # stales nothing, tests/runbook/test_digest_meaning.py).
        f.write_text(original + "\nSCRATCH_EDIT = 1\n")
        after = status(scratch)
    finally:
        f.write_text(original)
    for name in ran_it:
        assert not after[name]["up_to_date"], f"{name} ran {module} but is still up to date"
        assert module in after[name]["why"], after[name]["why"]
    if module.endswith("nfsclient.py"):
        nfs = [n for n in before if n.split(".")[0] in (
            "functional-validation", "preflight", "broker-recovery", "cpu-utilization",
            "storage-efficiency", "aws-cvo-storage", "aws-cvo-performance", "aws-fsx",
            "aws-fsx-performance", "aff-a900-performance", "sizing")]
        assert set(nfs) <= set(ran_it), f"NFS chapters not frozen on nfsclient.py: " \
                                         f"{set(nfs) - set(ran_it)}"
