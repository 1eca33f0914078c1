"""No 12-word run of the TR's sentences in the guide's prose (shared/tools/prose-overlap)."""
from __future__ import annotations

import re
import subprocess
import sys

import pytest

from .conftest import REPO, shared_dir

SHARED = shared_dir()
TOOL = SHARED / "tools" / "prose-overlap" if SHARED else None
pytestmark = pytest.mark.skipif(
    TOOL is None or not TOOL.is_file(),
    reason="shared/tools/prose-overlap not found (set TR4947_SHARED, or keep ../shared beside the repo)")


def run_tool(docs):
    return subprocess.run([sys.executable, str(TOOL), str(docs)], capture_output=True, text=True,
                          timeout=300)


def test_guide_does_not_repeat_the_tr_wording():
    res = run_tool(REPO / "docs")
    assert res.returncode == 0, res.stdout + res.stderr


def test_tool_catches_a_copied_sentence(tmp_path):
    """Guards the guard: a sentence lifted from the TR must be reported."""
    seed = SHARED / "seeds" / "001_e2b5251a99221f11.txt"
    if not seed.is_file():
        pytest.skip("seed 001 not available")
    words = re.findall(r"[A-Za-z0-9]+", seed.read_text(encoding="utf-8", errors="replace"))
    copied = " ".join(words[400:420])
    (tmp_path / "copied.adoc").write_text(f"= Page\n\n{copied}\n", encoding="utf-8")
    res = run_tool(tmp_path)
    assert res.returncode == 1 and "as in the TR" in res.stdout, res.stdout + res.stderr
