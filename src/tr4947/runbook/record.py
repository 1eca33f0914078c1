"""What a notebook records for the guide, and the run record the runner makes of it.

A notebook opens one :class:`Recorder` (:func:`start`) and records each procedure's outputs
under the procedure's stable ID (``FV-3``, ``REC-3``...): console transcripts, tables,
charts, text. Each recording method also prints what it records, so the notebook's output is
what the page will show. Records go to ``<results_dir>/<notebook>.records.json``.

The runner (tr4947.runbook.execute) turns one successful execution into one run record,
``results/<target>/<notebook>.json``: the records plus the run's provenance (run id, target
and kind, time, the parent commit, the digest of the inputs and which of them differed from
that commit, tool versions, parameters). A notebook run by hand in JupyterLab writes its
records under build/ and never touches the committed results.
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Sequence

from .. import paths
from ..secrets import redact

ID = re.compile(r"^[A-Z]{2,5}-\d+[a-z]?$")
KINDS = ("lab", "real", "computed")


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


@dataclass
class Record:
    id: str                           # procedure ID (docs/data/procedures.yaml)
    kind: str                         # console | table | chart | text
    title: str
    data: dict[str, Any]


@dataclass
class Header:
    notebook: str
    chapter: str
    target: str
    kind: str                         # lab | real | computed (no measurement)
    parameters: dict[str, Any] = field(default_factory=dict)
    started: str = field(default_factory=now)
    finished: str | None = None


class Recorder:
    """Collects one notebook run's records (see the module doc)."""

    def __init__(self, header: Header, results_dir: Path, echo: bool = True):
        self.header = header
        self.records: list[Record] = []
        self.echo = echo
        self.path = Path(results_dir) / f"{header.notebook}.records.json"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._save()

    # Recording methods return None on purpose: a cell ending in one must not display the
    # record itself.
    def _add(self, rec: Record, shown: str) -> None:
        if not ID.match(rec.id):
            raise ValueError(f"procedure ID {rec.id!r} is not like FV-3 (see "
                             "docs/data/procedures.yaml)")
        self.records.append(rec)
        self._save()
        if self.echo and shown:
            print(shown.rstrip("\n"), flush=True)

    def console(self, proc_id: str, title: str, command: str, output: str, *,
                prompt: str = "$", exit_code: int | None = 0, host: str = "",
                duration: float | None = None, show: bool = True) -> None:
        """A command and what it printed, as a terminal transcript."""
        command, output = redact(command), redact(output)
        self._add(Record(proc_id, "console", title, {
            "command": command, "output": output, "prompt": prompt, "exit_code": exit_code,
            "host": host, "duration": duration}), output if show else "")

    def show(self, proc_id: str, title: str, result, *, command: str | None = None,
             prompt: str = "$", show: bool = True) -> None:
        """A Target Result (or each Result of a ResultSet): printed (its output, or the plan
        of a dry run) and recorded as a console transcript."""
        results = result if isinstance(result, list) else [result]
        for r in results:
            out = r.stdout if r.planned else r.output
            if len(results) > 1 and show and self.echo:
                print(f"[{r.host}]")
            if "::" in prompt or prompt == "":
                # A clustershell transcript already shows each command at its own prompt.
                self.console(proc_id, title, "", out, prompt="", exit_code=r.exit_code,
                             host="", duration=r.duration, show=show)
            else:
                self.console(proc_id, title, command or r.command, out, prompt=prompt,
                             exit_code=r.exit_code, host=r.host, duration=r.duration, show=show)

    def table(self, proc_id: str, title: str, header: Sequence[str],
              rows: Sequence[Sequence[Any]], *, note: str = "", show: bool = True) -> None:
        rows = [[redact(str(c)) for c in r] for r in rows]
        self._add(Record(proc_id, "table", title, {"header": list(header), "rows": rows,
                                                   "note": note}),
                  text_table(title, list(header), rows) if show else "")

    def text(self, proc_id: str, title: str, body: str, *, show: bool = True) -> None:
        body = redact(body)
        self._add(Record(proc_id, "text", title, {"body": body}), body if show else "")

    def chart(self, proc_id: str, title: str, spec: dict[str, Any]) -> None:
        """A chart described as data (series, axes); the site draws it with matplotlib, so a
        page's picture always comes from recorded numbers."""
        n = sum(len(s.get("y", [])) for s in spec.get("series", []))
        self._add(Record(proc_id, "chart", title, spec),
                  f"[chart] {title}: {len(spec.get('series', []))} series, {n} points")

    def finish(self) -> Path:
        self.header.finished = now()
        self._save()
        return self.path

    def _save(self) -> None:
        doc = {"header": asdict(self.header), "records": [asdict(r) for r in self.records]}
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(doc, indent=1))
        os.replace(tmp, self.path)


def text_table(title: str, header: list[str], rows: list[list[str]]) -> str:
    cols = list(zip(header, *rows)) if rows else [(h,) for h in header]
    w = [min(40, max(len(str(c)) for c in col)) for col in cols]
    line = lambda r: "  ".join(str(c)[:40].ljust(w[i]) for i, c in enumerate(r))  # noqa: E731
    return "\n".join([f"{title}" if title else "", line(header),
                      "  ".join("-" * x for x in w)] + [line(r) for r in rows]).lstrip("\n")


def start(notebook: str, chapter: str, target, parameters: dict | None = None,
          results_dir: str | os.PathLike | None = None, kind: str | None = None) -> Recorder:
    """The Recorder of a notebook run. ``target``: the Target (or its name); ``kind``
    "computed" for a run that measured nothing; ``results_dir``: the runner's staging
    directory (default: build/results/<target>/ for a run by hand)."""
    name = getattr(target, "name", target)
    kind = kind or ({"lab": "lab"}.get(getattr(target, "kind", ""), "real"))
    if kind not in KINDS:
        raise ValueError(f"kind {kind!r}: one of {', '.join(KINDS)}")
    results_dir = Path(results_dir or paths.BUILD / "results" / name)
    params = {k: v for k, v in (parameters or {}).items() if k != "results_dir"}
    return Recorder(Header(notebook, chapter, name, kind, params), results_dir)


def load(path: Path) -> dict[str, Any]:
    return json.loads(Path(path).read_text())
