"""nbval catches doc drift: a notebook whose stored output no longer matches a fresh run fails,
and the failure shows what differs."""
import shutil
import subprocess
import sys

import nbformat

from tr4947 import paths

NOTEBOOKS = paths.REPO / "notebooks"


def nbval(nb_path, cwd):
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval",
         "--nbval-sanitize-with", str(NOTEBOOKS / "sanitize.cfg"), str(nb_path)],
        cwd=cwd, capture_output=True, text=True, timeout=300)


def test_unchanged_notebook_passes(tmp_path):
    nb = tmp_path / "sizing.ipynb"
    shutil.copy(NOTEBOOKS / "sizing.ipynb", nb)
    res = nbval(nb, tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr


def test_altered_stored_output_fails_with_a_readable_diff(tmp_path):
    nb_path = tmp_path / "sizing.ipynb"
    nb = nbformat.read(NOTEBOOKS / "sizing.ipynb", as_version=4)
    cell = next(c for c in nb.cells if c.cell_type == "code" and c.get("outputs")
                and "computed GBps" in "".join(o.get("text", "") for o in c.outputs))
    out = next(o for o in cell.outputs if o.get("text"))
    assert "  2            5.1" in out["text"]
    out["text"] = out["text"].replace("  2            5.1", "  2            5.7")
    nbformat.write(nb, nb_path)
    res = nbval(nb_path, tmp_path)
    assert res.returncode != 0
    report = res.stdout
    assert "Cell outputs differ" in report
    assert "5.7" in report and "5.1" in report        # both sides of the diff are shown
