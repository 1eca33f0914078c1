"""Where a lab secret ended up: every file below some roots that holds secrets.LAB_MARKER
(each secret the lab makes starts with it, so one byte search finds them all)."""
from __future__ import annotations

from pathlib import Path

from tr4947 import secrets


def files_with_marker(roots: list[Path]) -> list[Path]:
    marker = secrets.LAB_MARKER.encode()
    hits = []
    for root in roots:
        for f in (Path(root).rglob("*") if Path(root).is_dir() else []):
            try:
                if f.is_file() and not f.is_symlink() and marker in f.read_bytes():
                    hits.append(f)
            except OSError:
                continue
    return hits
