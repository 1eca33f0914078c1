"""The package's layering (shared/REVIEW.md) holds: import-linter checks the contracts in
pyproject.toml, and a copy of the package with one import running back up is refused."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

from tr4947 import paths

LINT = [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; "
        "sys.exit(lint_imports_command())"]


def lint(src, config=None):
    return subprocess.run(LINT + (["--config", str(config)] if config else []),
                          cwd=paths.REPO, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(src)})


def test_the_contracts_are_kept():
    r = lint(paths.REPO / "src")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "0 broken" in r.stdout and "6 kept" in r.stdout, r.stdout


def test_an_import_running_back_up_is_refused(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(paths.REPO / "src" / "tr4947", src / "tr4947",
                    ignore=shutil.ignore_patterns("__pycache__"))
    storage = src / "tr4947" / "lab" / "storage.py"
    storage.write_text(storage.read_text() + "\nfrom ..targets import base  # noqa\n")
    r = lint(src, paths.REPO / "pyproject.toml")
    assert r.returncode != 0
    assert "The lab sits beside the targets" in r.stdout and "BROKEN" in r.stdout
    assert "tr4947.lab.storage -> tr4947.targets.base" in r.stdout
