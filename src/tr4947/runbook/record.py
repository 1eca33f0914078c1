"""Records what a notebook step produced, for rendering into the guide.

A notebook opens one :class:`Recorder` (through :func:`tr4947.runbook.open_runbook`) and
records each procedure's outputs under the procedure's stable ID (``FV-3``, ``REC-3``...):
console transcripts, tables, charts, free text. Records are appended to a JSON file next to
the executed notebook; :mod:`tr4947.results.render` turns them into AsciiDoc partials.

Every record carries enough provenance to stand on its own: the target (name and kind),
when it ran, the git commit, tool versions and the notebook's parameters.
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import re
import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Sequence

from .. import paths
from .secrets import redact

ID = re.compile(r"^[A-Z]{2,4}-\d+[a-z]?$")


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


def git_commit() -> str:
    """Short commit of the checkout, with ``+dirty`` when the work tree has changes."""
    try:
        sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=paths.REPO,
                             capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=paths.REPO, capture_output=True, text=True).stdout.strip()
        return sha + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


@dataclass
class Provenance:
    target: str
    kind: str                         # "lab", "real" or "computed" (no measurement)
    notebook: str
    started: str = field(default_factory=_now)
    finished: str | None = None
    commit: str = field(default_factory=git_commit)
    versions: dict[str, str] = field(default_factory=dict)
    parameters: dict[str, Any] = field(default_factory=dict)


@dataclass
class Record:
    id: str                           # procedure ID from PROCEDURES.md
    kind: str                         # console | table | chart | text
    title: str
    data: dict[str, Any]
    at: str = field(default_factory=_now)


class Recorder:
    """Collects records for one notebook run and writes them to ``<results_dir>/<notebook>.json``."""

    def __init__(self, notebook: str, chapter: str, provenance: Provenance, results_dir: Path):
        self.notebook = notebook
        self.chapter = chapter
        self.provenance = provenance
        self.records: list[Record] = []
        self.path = Path(results_dir) / f"{notebook}.json"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._save()

    # --- recording ----------------------------------------------------------------------
    # Recording methods return None on purpose: a notebook cell ending in one must not
    # display the record (its timestamp would be volatile output for nbval).
    def _add(self, rec: Record) -> None:
        if not ID.match(rec.id):
            raise ValueError(f"procedure ID {rec.id!r} is not like FV-3 (see PROCEDURES.md)")
        self.records.append(rec)
        self._save()

    def console(self, proc_id: str, title: str, command: str, output: str, *,
                prompt: str = "$", exit_code: int | None = 0, host: str = "",
                duration: float | None = None) -> None:
        """A command and what it printed, as a terminal transcript."""
        self._add(Record(proc_id, "console", title, {
            "command": redact(command), "output": redact(output), "prompt": prompt,
            "exit_code": exit_code, "host": host, "duration": duration}))

    def result(self, proc_id: str, title: str, result, *, command: str | None = None,
               prompt: str = "$") -> None:
        """Record a Target Result (or each Result of a ResultSet) as a console transcript."""
        for r in (result if isinstance(result, list) else [result]):
            out = r.stdout if r.planned else r.output
            if "::" in prompt or prompt == "":
                # A clustershell transcript already shows each command at its own prompt.
                self.console(proc_id, title, "", out, prompt="", exit_code=r.exit_code,
                             host="", duration=r.duration)
                continue
            self.console(proc_id, title, command or r.command, out, prompt=prompt,
                         exit_code=r.exit_code, host=r.host, duration=r.duration)

    def table(self, proc_id: str, title: str, header: Sequence[str],
              rows: Sequence[Sequence[Any]], *, note: str = "") -> None:
        self._add(Record(proc_id, "table", title, {
            "header": list(header), "rows": [[redact(str(c)) for c in r] for r in rows],
            "note": note}))

    def text(self, proc_id: str, title: str, body: str) -> None:
        self._add(Record(proc_id, "text", title, {"body": redact(body)}))

    def chart(self, proc_id: str, title: str, spec: dict[str, Any]) -> None:
        """A chart described as data (series, axes); the renderer draws it with matplotlib,
        so a page's picture always comes from recorded numbers."""
        self._add(Record(proc_id, "chart", title, spec))

    def finish(self) -> Path:
        self.provenance.finished = _now()
        self._save()
        return self.path

    # --- storage ------------------------------------------------------------------------
    def _save(self) -> None:
        doc = {"notebook": self.notebook, "chapter": self.chapter,
               "provenance": asdict(self.provenance),
               "records": [asdict(r) for r in self.records]}
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(doc, indent=1))
        os.replace(tmp, self.path)


def load(path: Path) -> dict[str, Any]:
    return json.loads(Path(path).read_text())
