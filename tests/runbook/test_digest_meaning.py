"""The freeze follows meaning: a chapter's digest changes when what runs changes, and only
then. Each test computes every lab chapter's digest on a mirror of the repository's inputs,
edits the mirror, and computes them again (no lab; the committed tree is never touched)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tr4947 import inventory, paths
from tr4947.runbook import execute, inputs

CHAPTERS = execute.chapters()
#: What a chapter's inputs are read from (inputs.py): the package, the NFS layer, the pins,
#: the playbooks. Snippets, notebooks and inventories are read where they are.
MIRRORED = ("src/tr4947", "lab/nfs-client/src", "lab/nfs-client/Cargo.toml",
            "lab/nfs-client/Cargo.lock", "lab/kafka", "playbook/project", *inputs.PINS)


@pytest.fixture
def mirror(tmp_path, monkeypatch):
    root = tmp_path / "repo"
    for rel in MIRRORED:
        src, dst = paths.REPO / rel, root / rel
        if src.is_dir():
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        elif src.exists():
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    monkeypatch.setattr(paths, "REPO", root)
    monkeypatch.setattr(paths, "KAFKA_POMS", root / "lab" / "kafka")
    monkeypatch.setattr(inputs, "SRC", root / "src" / "tr4947")
    monkeypatch.setattr(inputs, "LAB_PACKAGE", root / "src" / "tr4947" / "lab")
    monkeypatch.setattr(inputs, "NFS_LAYER", root / "lab" / "nfs-client")
    return root


def digests() -> dict[str, str]:
    lab = inventory.load("lab")          # read once: it is most of a digest's time
    return {c.name: inputs.chapter_inputs(c.path, lab, c.parameters).digest for c in CHAPTERS}


def mounts_nfs(chapter) -> bool:
    """A chapter whose lab brings up a cluster on NFS volumes (its declared provisioning)."""
    clusters = (chapter.declaration.get("provision") or {}).get("clusters") or []
    return any(c != "das" for c in clusters)


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{path}: {old!r} not found (the test's anchor moved)"
    path.write_text(text.replace(old, new, 1))


def test_a_comment_or_docstring_edited_in_the_lab_stales_nothing(mirror):
    before = digests()
    module = mirror / "src" / "tr4947" / "lab" / "nfsclient.py"
    text = module.read_text()
    # A new comment line, a changed docstring: nothing the interpreter runs.
    first_def = text.index("\ndef ")
    text = text[:first_def] + "\n# Why: a comment a reviewer asked for.\n" + text[first_def:]
    text = text.replace('"""', '"""Reworded. ', 1)
    module.write_text(text)
    assert digests() == before


def test_a_changed_statement_in_the_lab_stales_every_chapter_that_mounts_nfs(mirror):
    before = digests()
    module = mirror / "src" / "tr4947" / "lab" / "nfsclient.py"
    module.write_text(module.read_text() + "\nLAB_EDIT = 1\n")
    after = digests()
    nfs = [c.name for c in CHAPTERS if mounts_nfs(c)]
    assert nfs, "no chapter declares a cluster on NFS volumes"
    assert [n for n in nfs if after[n] == before[n]] == []


def test_a_pytest_or_linter_setting_stales_nothing(mirror):
    before = digests()
    edit(mirror / "pyproject.toml", 'timeout = 1200', 'timeout = 1500')
    edit(mirror / "pyproject.toml", '[tool.importlinter]',
         '[tool.importlinter]\ninclude_external_packages = false')
    assert digests() == before


def test_a_dependency_pin_in_pyproject_stales_every_chapter(mirror):
    before = digests()
    edit(mirror / "pyproject.toml", 'requires = ["setuptools>=68"]',
         'requires = ["setuptools>=69"]')
    after = digests()
    assert [c.name for c in CHAPTERS if after[c.name] == before[c.name]] == []


def test_the_nfs_layer_enters_by_its_sources_and_lock_file(mirror):
    before = digests()
    (mirror / "lab" / "nfs-client" / "notes.txt").write_text("not a source\n")
    assert digests() == before
    lock = mirror / "lab" / "nfs-client" / "Cargo.lock"
    lock.write_text(lock.read_text() + "\n")
    after = digests()
    assert [c.name for c in CHAPTERS if mounts_nfs(c) and after[c.name] == before[c.name]] == []


def test_python_meaning_keeps_strings_that_are_data():
    """Only docstrings go: a changed string constant or f-string is a changed statement."""
    a = b'X = "one"\ndef f():\n    """doc"""\n    return "a"\n'
    b = b'X = "one"\ndef f():\n    """other doc"""\n    return "a"  # note\n'
    c = b'X = "one"\ndef f():\n    """doc"""\n    return "b"\n'
    assert inputs.python_meaning(a) == inputs.python_meaning(b)
    assert inputs.python_meaning(a) != inputs.python_meaning(c)
