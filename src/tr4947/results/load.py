"""A load record on the page: what each run was asked to publish and what it achieved, and a
visible warning when a run did not hold its rate.

A run that achieved less than 95 % of its target rate (tr4947.procedures.record.HELD) was
past what the target could carry: its latency is queueing, its throughput is a ceiling, and
no verdict is drawn from it. The warning sits on the result it concerns (the procedure's
partial), so a reader sees it beside the figures, not only in the ledger.

Every word comes from the edition's Translator (tr4947.results.i18n): the renderer's own
through ``tr._``, what the procedure recorded (the title, each run's name) through
``tr.text``.
"""
from __future__ import annotations

from typing import Any

from .i18n import Translator


def not_held(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in data["runs"] if not r.get("held")]


def percent(tr: Translator, ratio: float) -> str:
    return tr._("{value} %", value=tr.number(round(ratio * 100)))


def render(rec: dict[str, Any], tr: Translator | None = None, where: str = "") -> str:
    """The load record as a warning (when a run did not hold) and a compact table."""
    tr = tr or Translator("en")
    where = where or f"{rec.get('id', '?')} load"
    data = rec["data"]
    runs, missed = data["runs"], not_held(data)
    threshold = percent(tr, data.get("threshold", 0.95))
    out = []
    # A calibration's attempts step down from a high rate until one holds: one that fell short
    # is how the search goes, not a missed run (older records say so only in their title).
    calibration = data.get("calibration") or str(rec.get("title", "")).startswith("Calibration")
    if calibration:
        out.append("[NOTE.load-calibration]\n"
                   + tr._("A calibration: each attempt asks for a lower rate until one holds, so "
                          "{missed} of {runs} attempts fell short of their rate on the way down "
                          "by design. They are not measured runs, and no verdict is drawn from "
                          "them.", missed=len(missed), runs=len(runs))
                   + "\n")
    elif missed:
        # A paragraph admonition: the result around it is an example block (====), and a
        # delimited block with the same delimiter would close it.
        out.append("[WARNING.load-not-held]\n"
                   + (tr._("This run did not hold its target rate (below {threshold} of "
                           "it): the target could not carry that rate, so its latency is "
                           "queueing, its throughput is a ceiling, and no verdict is drawn "
                           "from it.", threshold=threshold) if len(runs) == 1 else
                      tr._("{missed} of {runs} runs did not hold their target rate (below "
                           "{threshold} of it): the target could not carry that rate, so "
                           "their latency is queueing, their throughput is a ceiling, and no "
                           "verdict is drawn from them.",
                           missed=len(missed), runs=len(runs), threshold=threshold))
                   + "\n")                            # a blank line ends the paragraph
    # The rates' unit, as the runs recorded it: OMB's messages, or the drills' records.
    if {r.get("unit") for r in runs} == {"records/s"}:
        rates = [tr._("Asked (records/s)"), tr._("Achieved (records/s)")]
    else:
        rates = [tr._("Asked (msg/s)"), tr._("Achieved (msg/s)")]
    header = [tr._("Run"), *rates, tr._("Achieved / asked"), tr._("Held")]
    lines = [f".{tr.text(rec['title'], f'{where} title')}",
             '[%header,cols="34,16,16,16,10",role="result-table load-table"]', "|==="]
    lines.append(" ".join(f"|{h}" for h in header))
    for r in runs:
        ratio = percent(tr, r["ratio"]) if r.get("ratio") is not None else "–"
        no = tr._("no")
        held = tr._("yes") if r.get("held") else "[.not-held]#" + no + "#"
        name = tr.text(r["name"], f"{where} run")
        lines.append(f"|{name} |{tr.number(round(r['target']))} "
                     f"|{tr.number(round(r['achieved']))} |{ratio} |{held}")
    lines.append("|===")
    return "\n".join(out + lines) + "\n"
