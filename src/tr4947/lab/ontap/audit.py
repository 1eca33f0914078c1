"""The stand-in's command log: every clustershell command and REST request it was asked to
run, who asked, from where, whether it only reads, and whether it succeeded.

    <state root>/ontap/commands.log     one JSON object per line

A command reads only when it is a ``show`` (``show-*``), ``version``, or a session setting
(``set``); a REST request when it is a GET. The test suite reads this log to prove that a dry
run sent nothing that changes the cluster (the way ONTAP's own audit log would show it).
"""
from __future__ import annotations

import datetime as _dt
import fcntl
import json
from pathlib import Path


def log_file(root: Path) -> Path:
    return Path(root) / "ontap" / "commands.log"


def reads_only(command_path: str) -> bool:
    """A clustershell command (its path, e.g. ``volume show``) that changes nothing."""
    words = command_path.split()
    return bool(words) and (words[-1].startswith("show") or words == ["version"]
                            or words[0] in ("set", "rows"))


def record(root: Path, channel: str, user: str, peer: str, command: str, reads: bool,
           ok: bool) -> None:
    entry = {"time": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds"),
             "channel": channel, "user": user, "from": peer, "command": command,
             "reads_only": reads, "ok": ok}
    f = log_file(root)
    f.parent.mkdir(parents=True, exist_ok=True)
    with open(f, "a") as out:
        fcntl.flock(out, fcntl.LOCK_EX)
        out.write(json.dumps(entry) + "\n")


def read(root: Path) -> list[dict]:
    f = log_file(root)
    if not f.exists():
        return []
    return [json.loads(line) for line in f.read_text().splitlines() if line.strip()]
