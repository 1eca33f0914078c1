"""A notebook parameter's value outside what the chapter declares (metadata.tr4947.parameters)
is refused with exit 2 before anything runs, naming the values it takes; the committed result
is untouched. One case per chapter notebook, and every parameter of every notebook has a
declared schema (so no value goes unchecked)."""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys

import nbformat
import pytest

from tr4947 import paths
from tr4947.runbook import chapters

#: chapter -> (a bad -p, words the refusal must contain)
CASES = {
    "aff-a900-performance": ("broker_heap=lots", "broker_heap takes text"),
    "aff-a900-storage": ("confirm=maybe", "use --target"),   # confirm is the runner's
    "aws-cvo-performance": ("layouts=[ha, triple]", "layouts[1] takes one of ha, single"),
    "aws-cvo-storage": ("broker=-rf", "broker takes text"),
    "aws-fsx-performance": ("replication_factors=[2]", "one of 1, 3"),
    "aws-fsx": ("tr_as_printed=3", "tr_as_printed takes true or false or null"),
    "broker-recovery": ("scale=-5", "scale takes a number from 0 (excluded) to 1"),
    "cpu-utilization": ("rates=[10000]", "rates takes a list"),
    "failure-drills": ("full_percent=120", "full_percent takes a number from 50 to 99"),
    "functional-validation": ("kafka_version=latest", "kafka_version takes null or text"),
    "preflight": ("clusters=fv_c1", "clusters takes a list of texts"),
    "sizing": ("scale=-5", "scale takes a number from 0 (excluded) to 1"),
    "storage-efficiency": ("repeats=0", "repeats takes a whole number from 1 to 20"),
}


def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else "-"


@pytest.mark.parametrize("chapter", sorted(CASES))
def test_bad_input_value_refused(chapter, tmp_path):
    param, expect = CASES[chapter]
    record = paths.REPO / "results" / "lab" / f"{chapter}.json"
    before = digest(record)
    p = subprocess.run([sys.executable, "-m", "tr4947.runbook", chapter, "-p", param],
                       cwd=paths.REPO, capture_output=True, text=True, timeout=120,
                       env={**os.environ, "TR4947_LAB_STATE": str(tmp_path / "lab")})
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert expect in p.stderr and "Traceback" not in p.stderr, p.stderr
    assert digest(record) == before, "a refused run replaced the committed result"
    assert not (tmp_path / "lab").exists(), "a refused run built lab state"


def test_every_notebook_has_a_case_and_every_parameter_a_schema():
    assert set(CASES) == {p.stem for p in chapters.notebooks()}
    for path in chapters.notebooks():
        declared = set(chapters.declared_parameters(path)) - {"target", "results_dir"}
        schemas = set(chapters.schemas(path))
        assert declared <= schemas, f"{path.stem}: no schema for {declared - schemas}"


def test_chapter_help_lists_the_values():
    p = subprocess.run([sys.executable, "-m", "tr4947.runbook", "storage-efficiency", "--help"],
                       cwd=paths.REPO, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "repeats = 3  [a whole number from 1 to 20]" in p.stdout
    assert "cluster = \"fv_c1\"" in p.stdout
