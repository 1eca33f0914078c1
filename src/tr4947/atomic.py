"""Files written whole or not at all: the one way the project replaces a file it owns.

A reader (the site build, another lab process, a test) must never see half a run record, a
half-written registry or a credentials file with the wrong mode. Each writer writes a
temporary file beside the target (same file system, so the rename is atomic) and renames it
over the target; ``mode`` is set before the first byte is written, so a secret is never
readable by others even for a moment.
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
from pathlib import Path
from typing import Any, Callable, Iterator


def write_bytes(path: str | os.PathLike, data: bytes, mode: int | None = None) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666 if mode is None else mode)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise
    return path


def write_text(path: str | os.PathLike, text: str, mode: int | None = None) -> Path:
    return write_bytes(path, text.encode(), mode)


def write_json(path: str | os.PathLike, doc: Any, mode: int | None = None,
               indent: int | None = 1, **dumps) -> Path:
    text = json.dumps(doc, indent=indent, **dumps)
    return write_text(path, text + ("\n" if indent is not None else ""), mode)


@contextlib.contextmanager
def locked_json(path: str | os.PathLike, default: Callable[[], Any] = list,
                dump: Callable[[Any], Any] = lambda doc: doc) -> Iterator[Any]:
    """A JSON document shared by processes: read under an exclusive lock (``path`` + .lock),
    handed to the caller to change in place, written back whole when the block ends without
    an error. ``dump`` turns the document into JSON-able data (dataclasses...)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            doc = json.loads(path.read_text() or "null")
        except FileNotFoundError:
            doc = None
        doc = default() if doc is None else doc
        yield doc
        write_json(path, dump(doc))
