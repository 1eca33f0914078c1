"""No secret of the lab reaches what the runs leave in the repository or the site.

Every secret the lab makes (its ONTAP logins, the fsxadmin password FSX-1 sends) starts with
secrets.LAB_MARKER, and the committed results and notebooks were produced by runs that used
them: if any of them had leaked through a path the redactor does not cover, the marker would
be in these files. The lab test tests/lab/test_secret_leaks.py searches the lab's state,
build/ and Ansible's artifacts during and after runs, a killed one included."""
from __future__ import annotations

from pathlib import Path

from tr4947 import paths, secrets

from ..support.secret_search import files_with_marker as search

WHERE = ["results", "notebooks", "docs", "snippets", "playbook", "build/site", "build/generated",
         "build/notebooks", "build/results", "build/ansible"]


def files_with_marker(roots: list[Path]) -> list[str]:
    return [str(f.relative_to(paths.REPO)) for f in search(roots)]


def test_no_lab_secret_in_results_notebooks_docs_or_site():
    roots = [paths.REPO / w for w in WHERE]
    assert any((paths.REPO / "results").rglob("*.json")), "no run records to search"
    assert files_with_marker(roots) == []


def test_the_search_finds_a_planted_secret(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "REPO", tmp_path)
    (tmp_path / "results" / "lab").mkdir(parents=True)
    (tmp_path / "results" / "lab" / "x.json").write_text(
        '{"output": "login ' + secrets.lab_secret(b"k" * 32, "ontap:admin") + '"}')
    assert files_with_marker([tmp_path / "results"]) == ["results/lab/x.json"]
