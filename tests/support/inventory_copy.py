"""Copies of the committed inventories for tests: an inventory is a directory (hosts.yml with
group_vars/ and host_vars/ beside it), so a copy takes every file, edited alike."""
from __future__ import annotations

from pathlib import Path
from typing import Callable


def copy_inventory(src: Path, dest: Path, edit: Callable[[str], str] = lambda t: t) -> Path:
    """``src`` (an inventory directory) copied to ``dest`` with ``edit`` applied to the text of
    every file; returns ``dest/hosts.yml``."""
    src, dest = Path(src), Path(dest)
    for f in sorted(src.rglob("*")):
        if f.is_file():
            out = dest / f.relative_to(src)
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(edit(f.read_text()))
    return dest / "hosts.yml"


def tree_text(inventory_dir: Path) -> str:
    """Every file of an inventory directory, concatenated (for assertions on its values)."""
    return "".join(f.read_text() for f in sorted(Path(inventory_dir).rglob("*")) if f.is_file())
