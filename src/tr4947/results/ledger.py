"""The claims ledger and each chapter's verdict block, drawn from the run records' verdicts.

Every claim of docs/data/claims.yaml is one ledger row: what the TR claims (in the edition's
language), the TR's figure, what the lab's run showed (its figure with its spread), the
verdict and why, and what an operator should do. The rows come from the verdict records the
procedures wrote (tr4947.procedures.record.Recorder.verdict), never from the pages: when a
result changes, the ledger and the chapter's verdict block change with it. Results of other
targets (results/<target>/, a reader's own cluster) get a verdict column of their own.

A verdict drawn from a run that did not hold its load rate cannot exist (the Recorder refuses
it); a claim no run judged shows as not measured, with the reason the record gave.

    rows(claims, docs)          -> Row per claim, with a Verdict per target
    ledger(rows, t)             -> the ledger table (AsciiDoc), in the edition of ``t``
    verdict_block(rows, page, t) -> the block at the top of a chapter page
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import yaml

from .. import paths

CLAIMS = paths.REPO / "docs" / "data" / "claims.yaml"
VERDICT_WORDS = {"reproduced": "reproduced", "differs": "differs",
                 "not-reproducible-at-lab-scale": "not reproducible at lab scale",
                 "not-measured": "not measured"}
#: The role each verdict gets on the page (ui/css colours them).
VERDICT_ROLE = {"reproduced": "verdict-reproduced", "differs": "verdict-differs",
                "not-reproducible-at-lab-scale": "verdict-scale",
                "not-measured": "verdict-none"}


def load_claims(path: Path = CLAIMS) -> list[dict[str, Any]]:
    return yaml.safe_load(path.read_text())["claims"]


@dataclass
class Verdict:
    target: str
    kind: str                      # lab | real | computed
    chapter: str                   # the run record's chapter (a variant's own name)
    run_id: str
    data: dict[str, Any]

    @property
    def verdict(self) -> str:
        return self.data["verdict"]


@dataclass
class Row:
    claim: dict[str, Any]
    verdicts: dict[str, Verdict] = field(default_factory=dict)   # target -> its verdict


def rows(claims: list[dict[str, Any]], docs: list[dict[str, Any]]) -> list[Row]:
    """One Row per claim, with the verdict each target's run records gave it (the last
    record of a target wins: a variant's record may judge a claim of its own)."""
    by_id = {c["id"]: Row(c) for c in claims}
    for doc in docs:
        run = doc.get("run") or {}
        for rec in doc.get("records", []):
            if rec.get("kind") != "verdict":
                continue
            claim = rec["data"].get("claim")
            if claim not in by_id:
                raise ValueError(f"{doc.get('chapter')}: a verdict for claim {claim!r}, which "
                                 f"{CLAIMS.name} does not list")
            by_id[claim].verdicts[run.get("target", "?")] = Verdict(
                run.get("target", "?"), run.get("kind", "lab"), doc.get("chapter", "?"),
                run.get("id", "?"), rec["data"])
    return list(by_id.values())


def targets(rs: list[Row]) -> list[str]:
    """The targets that judged any claim: the lab first, then the others by name."""
    names = {t for r in rs for t in r.verdicts}
    return sorted(names, key=lambda t: (t != "lab", t))


# --- words ------------------------------------------------------------------------------------------
def figure(lab: Any, t: Callable[[str], str] = str) -> str:
    """A recorded figure in words: a spread as ``median (low-high, n=N) unit``."""
    if lab is None:
        return "–"
    if isinstance(lab, dict) and "median" in lab:
        unit = f" {t(lab['unit'])}" if lab.get("unit") else ""
        med = lab["median"]
        if lab.get("low") is None or lab.get("n", 1) == 1:
            n = f" (n={lab['n']})" if lab.get("n") else ""
            return f"{med:g}{unit}{n}"
        return f"{med:g}{unit} ({lab['low']:g}–{lab['high']:g}, n={lab['n']})"
    if isinstance(lab, dict):
        if set(lab) >= {"unit"} and not any(isinstance(v, dict) for v in lab.values()):
            unit = lab["unit"]
            return "; ".join(f"{k.upper()} {v:g}" for k, v in lab.items() if k != "unit") \
                + f" ({t(unit)})"
        return "; ".join(f"{k.upper()} {figure(v, t)}" for k, v in lab.items())
    return t(str(lab))


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|")


def _verdict_cell(v: Verdict | None, t: Callable[[str], str]) -> str:
    if v is None:
        return t("no run yet")
    word = t(VERDICT_WORDS[v.verdict])
    held = "" if v.data.get("load_held") is not False else f" ({t('rate not held')})"
    return f"[.{VERDICT_ROLE[v.verdict]}]#{word}#{held}"


def _claim_link(c: dict[str, Any], lang: str) -> str:
    return f"xref:{c['page']}.adoc#{c['section']}[{_cell(c['statement'][lang])}]"


# --- the ledger -------------------------------------------------------------------------------------
def ledger(rs: list[Row], lang: str = "en", t: Callable[[str], str] = str,
           full: bool = True) -> str:
    """The claims ledger as an AsciiDoc table. ``full``: with why and what to do (the ledger
    page); otherwise claim, TR, lab, verdict (the home page)."""
    others = [x for x in targets(rs) if x != "lab"]
    head = [t("Claim"), t("TR-4947"), t("Lab"), t("Verdict")] + \
        [f"{t('Verdict on')} `{o}`" for o in others] + ([t("Why")] if full else [])
    widths = [30, 18, 18, 12] + [12] * len(others) + ([22] if full else [])
    lines = [f'[%header,cols="{",".join(f"{w}" for w in widths)}",role="ledger result-table"]',
             "|==="]
    lines.append(" ".join(f"|{h}" for h in head))
    for r in rs:
        lab = r.verdicts.get("lab")
        cells = [_claim_link(r.claim, lang), _cell(r.claim.get("tr") or "–"),
                 _cell(figure(lab.data.get("lab"), t)) if lab else "–",
                 _verdict_cell(lab, t)]
        cells += [_verdict_cell(r.verdicts.get(o), t) for o in others]
        if full:
            cells.append(_cell(t(lab.data["why"])) if lab else "–")
        lines.append(" ".join(f"a|{c}" if i == 0 else f"|{c}" for i, c in enumerate(cells)))
    lines.append("|===")
    counts = {k: sum(1 for r in rs if (r.verdicts.get("lab") and
                                       r.verdicts["lab"].verdict == k)) for k in VERDICT_WORDS}
    summary = ", ".join(f"{n} {t(VERDICT_WORDS[k])}" for k, n in counts.items() if n)
    return (f"[.ledger-summary]\n{len(rs)} {t('claims')}: {summary}.\n\n"
            + "\n".join(lines) + "\n")


def verdict_block(rs: list[Row], page: str, lang: str = "en",
                  t: Callable[[str], str] = str) -> str:
    """The block at the top of a chapter page: each of its claims, the TR's figure, what the
    lab showed, the verdict and what to do. '' for a page with no claims."""
    mine = [r for r in rs if r.claim["page"] == page]
    if not mine:
        return ""
    out = [f"[.verdicts]\n.{t('What the TR claims, what the runs showed')}", "****"]
    for r in mine:
        v = r.verdicts.get("lab")
        out.append(f"* <<{r.claim['section']},{_cell(r.claim['statement'][lang])}>> "
                   f"{_verdict_cell(v, t)} +")
        out.append(f"{t('TR-4947')}: {_cell(r.claim.get('tr') or '–')}; "
                   f"{t('Lab')}: {_cell(figure(v.data.get('lab'), t)) if v else '–'}. "
                   + (_cell(t(v.data["why"])) if v else "") + " +")
        if v and v.data.get("action"):
            out.append(f"_{t('What to do')}_: {_cell(t(v.data['action']))}")
    out.append("****")
    return "\n".join(out) + "\n"
