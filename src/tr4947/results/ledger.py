"""The claims ledger and each chapter's verdict block, drawn from the run records' verdicts.

Every claim of docs/data/claims.yaml is one ledger row: what the TR claims (in the edition's
language), the TR's figure, what the lab's run showed (its figure with its spread), the
verdict and why, and what an operator should do. The rows come from the verdict records the
procedures wrote (tr4947.procedures.record.Recorder.verdict), never from the pages: when a
result changes, the ledger and the chapter's verdict block change with it. Results of other
targets (results/<target>/, a reader's own cluster) get a verdict column of their own.

A verdict drawn from a run that did not hold its load rate cannot exist (the Recorder refuses
it); a claim no run judged shows as not measured, with the reason the record gave.

    rows(claims, docs)            -> Row per claim, with a Verdict per target
    ledger(rows, tr)              -> the ledger table (AsciiDoc), in the edition of ``tr``
    verdict_block(rows, page, tr) -> the block at the top of a chapter page

Words: the claim's statement is the edition's own (claims.yaml has one per edition); the
renderer's words are messages (``tr._``); what a procedure recorded (why, what to do, the
lab's figure in words) and the TR's figure go through ``tr.text`` like every recorded string.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .claims import CLAIMS
from .i18n import Translator, has_words

VERDICTS = ("reproduced", "reproduced-on-lab-model", "consistent-arithmetic", "differs",
            "not-reproducible-at-lab-scale", "not-measured")
#: The role each verdict gets on the page (ui/css colours them). A verdict that agrees on a
#: lab model or by arithmetic keeps the agreeing colour's role and adds its own.
VERDICT_ROLE = {"reproduced": "verdict-reproduced",
                "reproduced-on-lab-model": "verdict-reproduced.verdict-model",
                "consistent-arithmetic": "verdict-reproduced.verdict-arithmetic",
                "differs": "verdict-differs",
                "not-reproducible-at-lab-scale": "verdict-scale",
                "not-measured": "verdict-none"}


@dataclass
class Verdict:
    target: str
    kind: str                      # lab | real | computed
    chapter: str                   # the run record's chapter (a variant's own name)
    run_id: str
    data: dict[str, Any]
    versions: dict[str, str] = field(default_factory=dict)   # the run's software versions

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
                run.get("id", "?"), rec["data"], run.get("versions") or {})
    return list(by_id.values())


def targets(rs: list[Row]) -> list[str]:
    """The targets that judged any claim: the lab first, then the others by name."""
    names = {t for r in rs for t in r.verdicts}
    return sorted(names, key=lambda t: (t != "lab", t))


# --- words ------------------------------------------------------------------------------------------
def verdict_word(v: str, tr: Translator) -> str:
    # One literal message per verdict, so Babel extracts each.
    return {"reproduced": tr._("reproduced"),
            "reproduced-on-lab-model": tr._("reproduced on the lab's model"),
            "consistent-arithmetic": tr._("consistent arithmetic"),
            "differs": tr._("differs"),
            "not-reproducible-at-lab-scale": tr._("not reproducible at lab scale"),
            "not-measured": tr._("not measured")}[v]


# --- evidence ---------------------------------------------------------------------------------------
# What exercised a claim (tr4947.procedures.record.Recorder.evidence), in the edition's words:
# the real software with the run's versions, the lab's models, the published figures.
def _real_word(x: str, versions: dict[str, str], tr: Translator) -> str:
    v = versions.get
    return {
        "kafka": tr._("Kafka {version} brokers", version=v("Kafka", "")).replace("  ", " "),
        "kafka-tools": tr._("Kafka's command-line tools"),
        "kafka-clients": tr._("Kafka's Java producer and consumer"),
        "omb": tr._("the guide's OMB benchmark (confluent-kafka {version})",
                    version=v("confluent-kafka", "")),
        "linux": tr._("Linux (processes, network, accounting)"),
        "ansible": tr._("ansible-playbook with netapp.ontap"),
        "aws-cli": tr._("the AWS CLI"),
        "guide-code": tr._("the guide's own code (audit, formula)"),
        "ontap": tr._("ONTAP"),
        "linux-nfs": tr._("the Linux kernel's NFS client"),
        "fsx": tr._("FSx for NetApp ONTAP"),
    }.get(x, x)


def _model_word(x: str, tr: Translator) -> str:
    return {
        "nfs-layer": tr._("the lab's NFS client layer (its silly rename and preserve-unlink)"),
        "ontap-stand-in": tr._("the ONTAP stand-in's commands"),
        "ontap-efficiency": tr._("the ONTAP stand-in's deduplication and compression model"),
        "ontap-lease": tr._("the ONTAP stand-in's NFSv4 lease"),
        "ontap-space": tr._("the ONTAP stand-in's space accounting"),
        "fsx-moto": tr._("moto's model of the FSx API"),
        "modelled-timing": tr._("a timing the lab models (a LIF move's pause, a takeover's or giveback's time)"),
    }.get(x, x)


def evidence(v: Verdict | None, tr: Translator) -> str:
    """What exercised the claim, in a sentence or two: the decisive kind first."""
    if v is None:
        return "–"
    ev = v.data.get("evidence")
    if not ev:
        return tr._("not recorded (a run before evidence was kept)")
    sep = tr._(", ")
    real = sep.join(_real_word(x, v.versions, tr) for x in ev.get("real", []))
    model = sep.join(_model_word(x, tr) for x in ev.get("model", []))
    also = sep.join(_model_word(x, tr) for x in ev.get("also", []))
    out = []
    kind = ev.get("kind")
    if kind == "arithmetic":
        out.append(tr._("Arithmetic on the TR's published figures."))
    elif kind == "model":
        out.append(tr._("The decisive step ran on the lab's model: {models}.", models=model))
    elif kind == "real":
        out.append(tr._("The decisive step ran as real software."))
    else:
        out.append(tr._("Nothing ran that could test it."))
    if real and kind != "none":
        out.append(tr._("Real: {software}.", software=real))
    if also:
        out.append(tr._("Also in the path, modelled: {models}.", models=also))
    return ("" if tr.lang == "ja" else " ").join(out)


def decimals_of(v: float) -> int:
    """The decimals a recorded figure was kept with (46.0 is recorded as 46)."""
    s = f"{v:g}"
    return len(s.split(".", 1)[1]) if "." in s and "e" not in s else 0


def number(v: float, tr: Translator, decimals: int | None = None) -> str:
    """A recorded figure with the precision it was recorded with (or ``decimals``), in the
    locale's notation."""
    return tr.number(v, decimals=decimals_of(v) if decimals is None else decimals)


def unit(u: str, tr: Translator, where: str) -> str:
    """A unit as recorded ("MiB/s", "x (DAS / NFS, until ISR complete)") in the edition's
    notation: a bare unit converted (French writes Mio/s), one with words translated."""
    return tr.text(u, where) if has_words(u) else tr.unit(u)


def figure(lab: Any, tr: Translator, where: str = "") -> str:
    """A recorded figure in words: a spread as ``median (low–high, n=N) unit``; a dict of
    figures (per cluster, per percentile) one after the other; a sentence translated."""
    if lab is None:
        return "–"
    if isinstance(lab, (int, float)) and not isinstance(lab, bool):
        return number(lab, tr)
    if isinstance(lab, dict) and "median" in lab:
        u = f" {unit(lab['unit'], tr, where)}" if lab.get("unit") else ""
        med = number(lab["median"], tr)
        if lab.get("low") is None or lab.get("n", 1) == 1:
            n = tr._(", ") + f"n={lab['n']}" if lab.get("n") else ""
            return f"{med}{u}{n}"
        # One precision for the three, so a range reads 46.0–86.2, not 46–86.2.
        d = max(decimals_of(lab[k]) for k in ("median", "low", "high"))
        med = number(lab["median"], tr, d)
        return (f"{med}{u} ({number(lab['low'], tr, d)}–{number(lab['high'], tr, d)}, "
                f"n={lab['n']})")
    if isinstance(lab, dict):
        if "unit" in lab and not any(isinstance(v, dict) for v in lab.values()):
            return "; ".join(f"{k.upper()} {figure(v, tr, where)}" for k, v in lab.items()
                             if k != "unit") + f" ({unit(lab['unit'], tr, where)})"
        return "; ".join(f"{k.upper()} {figure(v, tr, where)}" for k, v in lab.items())
    return tr.text(str(lab), where)


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|")


def _verdict_cell(v: Verdict | None, tr: Translator) -> str:
    if v is None:
        none = tr._("no run yet")
        return f"[.verdict-none]#{none}#"
    held = "" if v.data.get("load_held") is not False else " " + tr._("(rate not held)")
    return f"[.{VERDICT_ROLE[v.verdict]}]#{verdict_word(v.verdict, tr)}#{held}"


def _claim_link(c: dict[str, Any], tr: Translator) -> str:
    # A statement with "=" (nconnect=16) is read as the macro's attributes, cutting it at a
    # comma or leaving the raw target as the link's text: quoted, it stays whole. (Without
    # "=" the text is taken as it is, quotes included, so only then is it quoted.)
    text = _cell(c["statement"][tr.lang])
    if "=" in text:
        text = '"' + text.replace('"', '\\"') + '"'
    return f'xref:{c["page"]}.adoc#{c["section"]}[{text}]'


def anchor(claim_id: str) -> str:
    """The ledger row's anchor (ledger.adoc#claim-cpu-rise), so that the home page's findings
    and the conclusion can name the rows they rest on."""
    return "claim-" + claim_id.replace(".", "-")


def _tr_figure(c: dict[str, Any], tr: Translator) -> str:
    return _cell(tr.text(c["tr"], f"claims.yaml {c['id']} tr")) if c.get("tr") else "–"


def _recorded(v: Verdict, key: str, tr: Translator) -> str:
    return _cell(tr.text(v.data[key], f"{v.chapter} {v.data['claim']} {key}"))


# --- the ledger -------------------------------------------------------------------------------------
def tally(rs: list[Row]) -> dict[str, int]:
    """How many of the lab's verdicts say each word ("none": claims no run judged)."""
    out = {k: sum(1 for r in rs if r.verdicts.get("lab") and
                  r.verdicts["lab"].verdict == k) for k in VERDICTS}
    out["none"] = sum(1 for r in rs if "lab" not in r.verdicts)
    return out


def summary(rs: list[Row], tr: Translator) -> str:
    """"56 claims: 12 reproduced, 3 differ, ..." for the lab's verdicts."""
    counts = tally(rs)
    words = {"reproduced": tr._("{count} reproduced", count=counts["reproduced"]),
             "reproduced-on-lab-model": tr._("{count} reproduced on the lab's model",
                                             count=counts["reproduced-on-lab-model"]),
             "consistent-arithmetic": tr._("{count} consistent arithmetic",
                                           count=counts["consistent-arithmetic"]),
             "differs": tr._("{count} differ", count=counts["differs"]),
             "not-reproducible-at-lab-scale": tr._("{count} not reproducible at lab scale",
                                                   count=counts["not-reproducible-at-lab-scale"]),
             "not-measured": tr._("{count} not measured", count=counts["not-measured"]),
             "none": tr._("{count} with no run yet", count=counts["none"])}
    return tr._("{count} claims: {verdicts}", count=len(rs),
                verdicts=tr._(", ").join(words[k] for k, n in counts.items() if n))


def ledger(rs: list[Row], tr: Translator | None = None, full: bool = True) -> str:
    """The claims ledger as an AsciiDoc table: claim, verdict and evidence first (side by
    side, read at a glance), then the TR's figure, the lab's, other targets' verdicts, why
    and what to do. ``full=False``: the home page's short summary (``home``)."""
    tr = tr or Translator("en")
    if not full:
        return home(rs, tr)
    others = [x for x in targets(rs) if x != "lab"]
    head = [tr._("Claim and verdict"), tr._("Evidence"), tr._("TR-4947"),
            tr._("Lab figure")] + \
        [tr._("Verdict on {target}", target=f"`{o}`") for o in others] + \
        [tr._("Why"), tr._("What to do")]
    widths = [28, 18, 14, 14] + [12] * len(others) + [18, 14]
    # The claim and its verdict share the first cell, the one pinned when the table scrolls
    # sideways: both stay in view at any width, a phone's included.
    role = "ledger result-table pin"
    lines = [f'[%header,cols="{",".join(f"{w}" for w in widths)}",role="{role}"]',
             "|==="]
    lines.append(" ".join(f"|{h}" for h in head))
    for r in rs:
        lab = r.verdicts.get("lab")
        where = f"{lab.chapter} {r.claim['id']} lab" if lab else ""
        cells = [f"[[{anchor(r.claim['id'])}]]{_claim_link(r.claim, tr)} +\n"
                 f"{_verdict_cell(lab, tr)}", _cell(evidence(lab, tr)),
                 _tr_figure(r.claim, tr),
                 _cell(figure(lab.data.get("lab"), tr, where)) if lab else "–"]
        cells += [_verdict_cell(r.verdicts.get(o), tr) for o in others]
        cells.append(_recorded(lab, "why", tr) if lab else "–")
        cells.append(_recorded(lab, "action", tr) if lab and lab.data.get("action")
                     else "–")
        lines.append(" ".join(f"a|{c}" if i == 0 else f"|{c}" for i, c in enumerate(cells)))
    lines.append("|===")
    return f"[.ledger-summary]\n{tr.period(summary(rs, tr))}\n\n" + "\n".join(lines) + "\n"


def home(rs: list[Row], tr: Translator | None = None) -> str:
    """The home page's short ledger: the count of each verdict, then only the rows an
    operator must act on (where the lab's run differs from the claim), claim and verdict
    side by side with what to do; the whole ledger is on its own page."""
    tr = tr or Translator("en")
    act = [r for r in rs if r.verdicts.get("lab") and r.verdicts["lab"].verdict == "differs"]
    out = [f"[.ledger-summary]\n{tr.period(summary(rs, tr))}",
           tr._("The whole ledger, with the evidence behind each verdict: {link}.",
                link="xref:ledger.adoc[]")]
    if act:
        lines = ["." + tr._("Where the runs differ from the claim: what to do"),
                 '[%header,cols="50,50",role="ledger result-table fit"]', "|===",
                 f"|{tr._('Claim and verdict')} |{tr._('What to do')}"]
        for r in act:
            v = r.verdicts["lab"]
            lines.append(f"a|{_claim_link(r.claim, tr)} +\n{_verdict_cell(v, tr)} "
                         f"|{_recorded(v, 'action', tr) if v.data.get('action') else '–'}")
        lines.append("|===")
        out.append("\n".join(lines))
    return "\n\n".join(out) + "\n"


def verdict_block(rs: list[Row], page: str, tr: Translator | None = None) -> str:
    """The block at the top of a chapter page: each of its claims, the TR's figure, what the
    lab showed, the verdict and what to do. '' for a page with no claims."""
    tr = tr or Translator("en")
    mine = [r for r in rs if r.claim["page"] == page]
    if not mine:
        return ""
    title = tr._("What the TR claims, what the runs showed")
    out = ["[.verdicts]\n." + title, "****"]
    for r in mine:
        v = r.verdicts.get("lab")
        where = f"{v.chapter} {r.claim['id']} lab" if v else ""
        out.append(f"* <<{r.claim['section']},{_cell(r.claim['statement'][tr.lang])}>> "
                   f"{_verdict_cell(v, tr)} +")
        lab = _cell(figure(v.data.get("lab"), tr, where)) if v else "–"
        between = "" if tr.lang == "ja" else " "          # Japanese: no space after 。
        out.append(tr._("TR-4947: {tr}; lab: {lab}.", tr=_tr_figure(r.claim, tr), lab=lab)
                   + (between + _recorded(v, "why", tr) if v else "") + " +")
        if v:
            out.append(tr._("_Evidence_: {evidence}", evidence=_cell(evidence(v, tr)))
                       + (" +" if v.data.get("action") else ""))
        if v and v.data.get("action"):
            out.append(tr._("_What to do_: {action}", action=_recorded(v, "action", tr)))
    out.append("****")
    return "\n".join(out) + "\n"
