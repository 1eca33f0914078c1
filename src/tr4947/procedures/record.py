"""What a chapter records for the guide: the one place recording happens.

Procedures record each step's outputs under the step's stable procedure ID (``FV-3``,
``REC-3``...): console transcripts, tables, charts, text, the load a benchmark was asked for
and what it achieved, and verdicts (a TR claim set beside what the run showed). Each
recording method also prints what it records, so a notebook's output is what its page will
show.

Records are appended to ``records.jsonl`` in the run's directory, one JSON object a line, the
run's header first and a ``finished`` line last: nothing already written is ever rewritten
(as ansible-runner keeps a job's events), so a chapter killed half way leaves every record it
made, readable, and a run without its ``finished`` line is known to be incomplete. The runner
(tr4947.runbook) turns one complete run into one run record, ``results/<target>/<chapter>.json``.
"""
from __future__ import annotations

import datetime as _dt
import json
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Sequence

from ..secrets import redact

ID = re.compile(r"^[A-Z]{2,5}-\d+[a-z]?$")
KINDS = ("lab", "real", "computed")
#: What a verdict may say about a TR claim (docs/data/claims.yaml lists the claims).
#: "reproduced" is kept for a decisive mechanism that ran as real software; one that ran on
#: the lab's own model of it says so ("reproduced-on-lab-model"), and arithmetic on published
#: figures is "consistent-arithmetic".
VERDICTS = ("reproduced", "reproduced-on-lab-model", "consistent-arithmetic", "differs",
            "not-reproducible-at-lab-scale", "not-measured")
#: What exercised a claim (a verdict's evidence, its ``kind``): real software, the lab's model
#: of something, arithmetic on published figures, or nothing (a claim not measured).
EVIDENCE_KINDS = ("real", "model", "arithmetic", "none")
#: The word a verdict that agrees with the TR gets, by what its decisive step ran on.
AGREES = {"real": "reproduced", "model": "reproduced-on-lab-model",
          "arithmetic": "consistent-arithmetic"}
#: Real software a verdict's evidence may name (the renderer words each, with the run's
#: versions): Kafka's brokers, its command-line tools, its Java clients, the guide's OMB
#: benchmark (confluent-kafka clients), Linux itself (processes, network, accounting), Ansible
#: with netapp.ontap, the AWS CLI, the guide's own code (an audit, a formula), and on a real
#: target what the lab models: ONTAP, the Linux kernel's NFS client, FSx for ONTAP.
REAL = ("kafka", "kafka-tools", "kafka-clients", "omb", "linux", "ansible", "aws-cli",
        "guide-code", "ontap", "linux-nfs", "fsx")
#: The lab's models a verdict's evidence may name: the lab's NFS client layer (a FUSE server
#: implementing silly rename and preserve-unlink), the ONTAP stand-in (its commands), its
#: block-hash efficiency model, its NFSv4 lock lease, its space accounting, moto's FSx API,
#: and a timing the lab models (a LIF move's pause).
MODELS = ("nfs-layer", "ontap-stand-in", "ontap-efficiency", "ontap-lease", "ontap-space",
          "fsx-moto", "modelled-timing")
#: What each model stands for on a real target (None: nothing, the real thing has its own).
REAL_OF = {"nfs-layer": "linux-nfs", "ontap-stand-in": "ontap", "ontap-efficiency": "ontap",
           "ontap-lease": "ontap", "ontap-space": "ontap", "fsx-moto": "fsx",
           "modelled-timing": None}
#: Published figures arithmetic may be done on.
FIGURES = ("tr",)
#: A load-driven run holds its rate when it achieves at least this share of its target.
HELD = 0.95
FILE = "records.jsonl"


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


@dataclass
class Record:
    id: str                           # procedure ID (shared/tr4947/PROCEDURES.md)
    kind: str                         # console | table | chart | text | load | verdict
    title: str
    data: dict[str, Any]


@dataclass
class Header:
    notebook: str
    chapter: str
    target: str
    kind: str                         # lab | real | computed (no measurement)
    run_id: str = ""
    started: str = field(default_factory=now)


class Recorder:
    """Appends one run's records to ``<directory>/records.jsonl`` (see the module doc)."""

    def __init__(self, header: Header, directory: Path, echo: bool = True):
        self.header = header
        self.records: list[Record] = []
        self.echo = echo
        self.path = Path(directory) / FILE
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._append({"header": asdict(header)}, mode="w")

    def computed(self) -> None:
        """This run measured nothing (a calculation from published figures): its results are
        labelled computed, not lab or real."""
        self.header.kind = "computed"
        self._append({"kind": "computed"})

    # Recording methods return None on purpose: a cell ending in one must not display the
    # record itself.
    def _add(self, rec: Record, shown: str) -> None:
        if not ID.match(rec.id):
            raise ValueError(f"procedure ID {rec.id!r} is not like FV-3 (the IDs are those of "
                             "the chapters' headings and snippet files)")
        self.records.append(rec)
        self._append({"record": asdict(rec)})
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
              rows: Sequence[Sequence[Any]], *, note: str = "", key: Sequence[str] = (),
              show: bool = True) -> None:
        """A table; ``key``: the columns a reader needs first (kept in view when it is wide)."""
        rows = [[redact(str(c)) for c in r] for r in rows]
        data = {"header": list(header), "rows": rows, "note": note}
        if key:
            unknown = [k for k in key if k not in header]
            if unknown:
                raise ValueError(f"key column(s) {unknown} are not in the header {list(header)}")
            data["key"] = list(key)
        self._add(Record(proc_id, "table", title, data),
                  text_table(title, list(header), rows) if show else "")

    def text(self, proc_id: str, title: str, body: str, *, show: bool = True) -> None:
        body = redact(body)
        self._add(Record(proc_id, "text", title, {"body": body}), body if show else "")

    def chart(self, proc_id: str, title: str, spec: dict[str, Any]) -> None:
        """A chart described as data (series, axes); the site draws it, so a page's picture
        always comes from recorded numbers."""
        n = sum(len(s.get("y", [])) for s in spec.get("series", []))
        self._add(Record(proc_id, "chart", title, spec),
                  f"[chart] {title}: {len(spec.get('series', []))} series, {n} points")

    def load(self, proc_id: str, title: str, runs: Sequence[dict[str, Any]], *,
             calibration: bool = False) -> None:
        """What a load-driven step asked for and what it got, per run (and phase): each run
        ``{"name", "unit", "target", "achieved", ...}`` (publish rate; ``consume_achieved``
        and anything else measured may follow). ``held`` is decided here, once: achieved at
        least 95 % of target. A step whose runs did not hold yields no verdict.
        ``calibration``: these are a calibration's attempts (stepping down until a rate
        holds), not measured runs: one that fell short is how a calibration searches, not a
        missed run, and the pages count them apart."""
        out = []
        for r in runs:
            if not {"name", "unit", "target", "achieved"} <= set(r):
                raise ValueError(f"a load run needs name, unit, target and achieved: {r}")
            target, achieved = float(r["target"]), float(r["achieved"])
            out.append({**r, "ratio": round(achieved / target, 4) if target else None,
                        "held": bool(target) and achieved >= HELD * target})
        held = sum(r["held"] for r in out)
        for r in out:
            if r.get("window_s"):
                self.measured(r["window_s"], f"{proc_id} {r['name']}")
        data = {"runs": out, "threshold": HELD}
        if calibration:
            data["calibration"] = True
        self._add(Record(proc_id, "load", title, data),
                  f"[load] {title}: {held} of {len(out)} "
                  f"{'calibration attempt(s)' if calibration else 'run(s)'} held >= {HELD:.0%} "
                  "of their target rate" + "".join(
                      f"\n  {r['name']}: {r['achieved']:.4g} of {r['target']:.4g} {r['unit']} "
                      f"({(r['ratio'] or 0):.0%}){'' if r['held'] else '  NOT HELD'}"
                      for r in out))

    def evidence(self, *, real: Sequence[str] = (), model: Sequence[str] = (),
                 also: Sequence[str] = (), arithmetic: str | None = None) -> dict[str, Any]:
        """What exercised a claim, for ``verdict(evidence=...)``: ``real``, the real software
        that ran (REAL); ``model``, the lab's models the decisive step ran on (MODELS);
        ``also``, lab models that took part without deciding; ``arithmetic``, the published
        figures (FIGURES) a calculation used. On a real target the models are the real
        things they stand for (the kernel's NFS client, ONTAP, FSx), so the same call gives
        real evidence there. Nothing at all: kind "none" (a claim not measured)."""
        real, model, also = list(real), list(model), list(also)
        if self.header.kind == "real":
            real += [x for x in (REAL_OF.get(m) for m in model + also) if x and x not in real]
            model, also = [], []
        kind = ("arithmetic" if arithmetic else "model" if model else "real" if real
                else "none")
        ev = {"kind": kind, "real": real, "model": model, "also": also}
        if arithmetic:
            ev["figures"] = arithmetic
        check_evidence(ev)
        return ev

    def verdict(self, proc_id: str, claim: str, verdict: str, *, tr: str, lab: Any,
                why: str, evidence: dict[str, Any], action: str = "",
                load_held: bool | None = None) -> None:
        """A TR claim (its id in docs/data/claims.yaml) beside what this run showed. ``lab``:
        the run's figure (a Spread's as_dict(), a number with a unit, or words);
        ``evidence``: what exercised the claim (``evidence()``), checked against the word:
        "reproduced" only when the decisive step ran as real software. A run that did not
        hold its load rate yields no verdict: only not-measured is accepted from it, so the
        ledger can never draw one from it."""
        if verdict not in VERDICTS:
            raise ValueError(f"verdict {verdict!r}: one of {', '.join(VERDICTS)}")
        check_evidence(evidence)
        word_of = {v: k for k, v in AGREES.items()}
        if verdict in word_of and evidence["kind"] != word_of[verdict]:
            raise ValueError(
                f"{claim}: {verdict!r} with {evidence['kind']} evidence: the word for a run that "
                f"agrees is {AGREES.get(evidence['kind'], 'not-measured')!r} (reproduced is kept "
                "for a decisive step that ran as real software)")
        if evidence["kind"] == "none" and verdict != "not-measured":
            raise ValueError(f"{claim}: {verdict!r} with nothing run: not-measured")
        if load_held is False and verdict != "not-measured":
            raise ValueError(f"{claim}: no verdict from a run that did not hold its load "
                             "rate: record not-measured and say why")
        self._add(Record(proc_id, "verdict", claim, {
            "claim": claim, "verdict": verdict, "tr": tr, "lab": lab, "why": redact(why),
            "action": action, "load_held": load_held, "evidence": evidence}),
            f"[verdict] {claim}: {verdict} (TR: {tr}; lab: {lab}; evidence: "
            f"{describe_evidence(evidence)})")

    def measured(self, seconds: float, what: str, end: float | None = None) -> None:
        """Time spent inside a measurement window (a benchmark phase, an idle baseline, a
        timed recovery, a drill under watch), ending at ``end`` (epoch seconds; default now):
        the runner counts the union of a run's windows into its timing (overlapping ones,
        two clusters measured at once, count once: tr4947.runbook.profile), so `tr4947
        runbook --profile` can say how much of a chapter's time goes to measuring and how
        much around it. Not a record: nothing is shown."""
        self._append({"measured": {"seconds": round(float(seconds), 2), "what": what,
                                   "end": round(time.time() if end is None else end, 2)}})

    def finish(self) -> Path:
        self._append({"finished": now()})
        return self.path

    def _append(self, obj: dict, mode: str = "a") -> None:
        with open(self.path, mode) as f:
            f.write(json.dumps(obj) + "\n")


def agrees(evidence: dict[str, Any]) -> str:
    """The verdict word for a run that agrees with the claim, by what decided it:
    reproduced (real software), reproduced-on-lab-model, consistent-arithmetic."""
    return AGREES[evidence["kind"]]


def check_evidence(ev: Any) -> None:
    """A verdict's evidence as ``Recorder.evidence`` makes it, or ValueError saying what is
    wrong."""
    if not isinstance(ev, dict):
        raise ValueError(f"evidence {ev!r}: a dict from Recorder.evidence()")
    kind = ev.get("kind")
    if kind not in EVIDENCE_KINDS:
        raise ValueError(f"evidence kind {kind!r}: one of {', '.join(EVIDENCE_KINDS)}")
    for key, known in (("real", REAL), ("model", MODELS), ("also", MODELS)):
        unknown = [x for x in ev.get(key, []) if x not in known]
        if unknown:
            raise ValueError(f"evidence {key} {unknown}: each one of {', '.join(known)}")
    if kind == "real" and not ev.get("real"):
        raise ValueError("real evidence names the software that ran")
    if kind == "model" and not ev.get("model"):
        raise ValueError("model evidence names the lab's model the decisive step ran on")
    if kind == "arithmetic" and ev.get("figures") not in FIGURES:
        raise ValueError(f"arithmetic evidence names its figures: one of {', '.join(FIGURES)}")
    if kind == "none" and (ev.get("real") or ev.get("model")):
        raise ValueError("evidence of kind none names nothing that ran")


def describe_evidence(ev: dict[str, Any]) -> str:
    """Evidence in a line, for a notebook's output (the pages word it per edition)."""
    parts = [f"{ev['kind']}"]
    if ev.get("real"):
        parts.append("ran: " + ", ".join(ev["real"]))
    if ev.get("model"):
        parts.append("on the lab's model: " + ", ".join(ev["model"]))
    if ev.get("also"):
        parts.append("also modelled: " + ", ".join(ev["also"]))
    if ev.get("figures"):
        parts.append(f"figures: {ev['figures']}")
    return "; ".join(parts)


def start(notebook: str, chapter: str, target: str, directory: str | Path,
          kind: str = "lab", run_id: str = "") -> Recorder:
    """A Recorder for a run of ``notebook`` (results on page ``chapter``) on ``target`` (its
    name), appending to ``directory``/records.jsonl."""
    if kind not in KINDS:
        raise ValueError(f"kind {kind!r}: one of {', '.join(KINDS)}")
    return Recorder(Header(notebook, chapter, target, kind, run_id), Path(directory))


def read(path: Path) -> dict[str, Any]:
    """A records.jsonl back as {header, records, finished}: ``finished`` is None for a run
    that did not reach its end."""
    header, records, finished, measured = None, [], None, []
    for line in Path(path).read_text().splitlines():
        obj = json.loads(line)
        if "header" in obj:
            header = obj["header"]
        elif "record" in obj:
            records.append(obj["record"])
        elif obj.get("kind") == "computed":
            header["kind"] = "computed"
        elif "measured" in obj:
            measured.append(obj["measured"])
        elif "finished" in obj:
            finished = obj["finished"]
    if header is None:
        raise ValueError(f"{path}: no header line")
    return {"header": header, "records": records, "finished": finished, "measured": measured}


def text_table(title: str, header: list[str], rows: list[list[str]]) -> str:
    cols = list(zip(header, *rows)) if rows else [(h,) for h in header]
    w = [min(40, max(len(str(c)) for c in col)) for col in cols]
    line = lambda r: "  ".join(str(c)[:40].ljust(w[i]) for i, c in enumerate(r))  # noqa: E731
    return "\n".join([f"{title}" if title else "", line(header),
                      "  ".join("-" * x for x in w)] + [line(r) for r in rows]).lstrip("\n")
