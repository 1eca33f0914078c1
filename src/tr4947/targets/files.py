"""Files a step reads or edits: the snippets it runs, the host paths it may name, and where a
host file's previous version is kept."""
from __future__ import annotations

import re
from pathlib import Path

from .. import paths

#: A host file a step edits is first copied to <file> + this (fstab, server.properties).
BACKUP_SUFFIX = ".tr4947.bak"


def plain_path(path: str, what: str) -> str:
    """``path`` if it is absolute and made of letters, digits, '.', '_', '-' and '/' only,
    without '..': it names a file on a host in a command, so nothing in it may be read by
    the shell as anything but a path."""
    if not re.fullmatch(r"/[\w./-]+", path) or ".." in path.split("/"):
        raise ValueError(f"{what} path {path!r}: give an absolute path of letters, digits, "
                         "'.', '_', '-' and '/' (no '..')")
    return path


def snippet_path(path: str | Path) -> Path:
    """A snippet by its path under snippets/ (or an existing path)."""
    p = Path(path)
    if not p.is_absolute() and not p.exists():
        p = paths.SNIPPETS / p
    if not p.exists():
        raise FileNotFoundError(f"snippet {path} not found (looked in {paths.SNIPPETS})")
    return p
