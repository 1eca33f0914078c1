"""Files a step edits on a host: the paths it may name, and where the file's previous version
is kept."""
from __future__ import annotations

import re

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
