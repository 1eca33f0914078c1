"""A load record on the page: what each run was asked to publish and what it achieved, and a
visible warning when a run did not hold its rate.

A run that achieved less than 95 % of its target rate (tr4947.procedures.record.HELD) was
past what the target could carry: its latency is queueing, its throughput is a ceiling, and
no verdict is drawn from it. The warning sits on the result it concerns (the procedure's
partial), so a reader sees it beside the figures, not only in the ledger.
"""
from __future__ import annotations

from typing import Any, Callable


def not_held(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in data["runs"] if not r.get("held")]


def render(rec: dict[str, Any], t: Callable[[str], str] = str,
           number: Callable[[float], str] = lambda v: f"{v:,.0f}") -> str:
    """The load record as a warning (when a run did not hold) and a compact table."""
    data = rec["data"]
    runs, missed = data["runs"], not_held(data)
    threshold = data.get("threshold", 0.95)
    out = []
    if missed:
        out.append(f"[WARNING.load-not-held]\n====\n{len(missed)} {t('of')} {len(runs)} "
                   + t("runs did not hold their target rate") + f" (< {threshold:.0%}): "
                   + t("the target could not carry it, so their latency is queueing, their "
                       "throughput a ceiling, and no verdict is drawn from them.")
                   + "\n====\n")
    header = [t("Run"), t("Asked (msg/s)"), t("Achieved (msg/s)"), t("Achieved / asked"),
              t("Held")]
    lines = [f".{t(rec['title'])}",
             '[%header,cols="34,16,16,16,10",role="result-table load-table"]', "|==="]
    lines.append(" ".join(f"|{h}" for h in header))
    for r in runs:
        ratio = f"{r['ratio']:.0%}" if r.get("ratio") is not None else "–"
        held = t("yes") if r.get("held") else f"[.not-held]#{t('no')}#"
        lines.append(f"|{t(r['name'])} |{number(r['target'])} |{number(r['achieved'])} "
                     f"|{ratio} |{held}")
    lines.append("|===")
    return "\n".join(out + lines) + "\n"
