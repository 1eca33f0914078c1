"""Run records -> AsciiDoc partials and chart images, per edition, when the site is built.

The committed results are the run records, ``results/<target>/<notebook>.json`` (written by
tr4947.runbook.execute, one per chapter notebook and target), one set in English for every
edition. The Antora build runs this module once per edition (the collector extension's ``run``
step in each edition's antora.yml) and scans what it writes, so generated content never sits
among the authored pages; each edition's pages find their own partials under the same names:

  build/generated/<edition>/modules/ROOT/partials/results/<chapter>/<ID>.adoc
        every target's result for procedure ID (what a page includes)
  build/generated/<edition>/modules/ROOT/partials/results/<target>/<chapter>/<ID>.adoc
        one target's records for ID, each labelled with what produced it, then provenance
  build/generated/<edition>/modules/ROOT/images/results/<target>/<chapter>/<ID>-<n>.<size>.svg
        charts drawn from the recorded numbers, wide and narrow, in the edition's words

Every word the renderer puts into a result comes from the edition's message catalogue
(tr4947.results.i18n); numbers and dates follow the edition's locale.

The partials serve the site and the PDF (Antora Assembler): where the two need different
markup, the partial tests the attribute ``tr4947-pdf``, which only antora-assembler.yml sets.
The attribute ``wbr`` is a break opportunity inside long identifiers: <wbr> on the site, a
zero-width space in the PDF.

    python -m tr4947.results.render [--edition en|fr|ja] [--out build/generated/<edition>]
                                    [--results results]
"""
from __future__ import annotations

import functools
import hashlib
import json
import re
import shlex
import sys
from collections import OrderedDict
from pathlib import Path
from typing import Any

from .. import paths
from . import claims, ledger, load
from .i18n import EDITIONS, Translator

OUT = paths.BUILD / "generated"
MODULE = Path("modules") / "ROOT"
RESULTS = paths.REPO / "results"
LAB_TARGETS = {"lab"}
PDF = "tr4947-pdf"
#: Example-block delimiters: a result is ====, the blocks inside it =======, a fold inside a
#: transcript ========. A page that wraps a result's include in an example block of its own
#: uses 5 or 6 (a block ends at the first line equal to its delimiter, nested or not).
INNER, FOLD = "=" * 7, "=" * 8


def _pdf(html: str, pdf: str) -> str:
    """Markup for the site and for the PDF, chosen when the partial is included."""
    out = ""
    if html:
        out += f"ifndef::{PDF}[]\n{html.rstrip()}\nendif::[]\n"
    if pdf:
        out += f"ifdef::{PDF}[]\n{pdf.rstrip()}\nendif::[]\n"
    return out


# --- what produced a transcript (lab runs only: a real target's tools are the real ones) ---------
def _sources(tr: Translator):
    """Rules applied in order to a console record: (test on the record, label)."""
    return [
        (lambda r: r["prompt"].startswith("::") or r["prompt"] == "" and "::>" in r["output"][:200],
         tr._("ONTAP clustershell answered by the lab's ONTAP stand-in (a strict model of "
              "ONTAP, not ONTAP)")),
        (lambda r: re.search(r"(^|\s)aws fsx\b", r["command"]) is not None,
         tr._("The real AWS CLI, answered by the lab's FSx stand-in (moto with the project's "
              "FSx extension), not by AWS")),
        (lambda r: re.search(r"(^|\n|\s)(mount|df|umount)(\s|$)", r["command"]) is not None
         or "type nfs" in r["output"],
         tr._("The lab's NFS client: FUSE mounts of the storage stand-in's volumes, shown as a "
              "kernel NFS client would show them (an emulated view)")),
        (lambda r: re.search(r"(^|\s)ssh fsxadmin@", r["command"]) is not None,
         tr._("SSH to the lab's ONTAP stand-in")),
        (lambda r: "bin/benchmark" in r["command"],
         tr._("The project's OMB-compatible runner (same command line, files and result JSON as "
              "OpenMessaging Benchmark)")),
    ]


def source_label(data: dict, tr: Translator | None = None) -> str | None:
    for test, label in _sources(tr or Translator("en")):
        try:
            if test(data):
                return label
        except (KeyError, TypeError):
            continue
    return None


# --- transcripts -----------------------------------------------------------------------------------
_EXPORT = re.compile(r"^export [A-Za-z_][A-Za-z0-9_]*=")
_DEFAULT = re.compile(r'^: "\$\{[A-Za-z_][A-Za-z0-9_]*:=[^}]*\}"\s*(#.*)?$')


def split_plumbing(command: str) -> tuple[list[str], list[str]]:
    """(lab-only lines, the command a reader runs). Lab-only: the ``export NAME=value`` lines
    the runner puts ahead of a snippet (the values this run used, a quoted value may span
    lines) and a snippet's ``: "${NAME:=default}"`` lines (its lab defaults). Left out, the
    command still runs the same given the reader's own NAME."""
    lines = command.rstrip("\n").splitlines()
    env, i = [], 0
    while i < len(lines) and _EXPORT.match(lines[i]):
        j = i
        while True:
            try:
                shlex.split("\n".join(lines[i:j + 1]))
                break
            except ValueError:                 # an open quote: the value goes on
                if j + 1 >= len(lines):
                    break
                j += 1
        env += lines[i:j + 1]
        i = j + 1
    rest = []
    for line in lines[i:]:
        (env if _DEFAULT.match(line) else rest).append(line)
    while rest and not rest[0].strip():
        rest.pop(0)
    return env, rest


_KEY_LINE = re.compile(r"error|exception|fail|warn|refused|denied|::\*?> |^\S*\$ ", re.I)
FOLD_AFTER, HEAD, TAIL, MIN_FOLD = 24, 10, 4, 5


def fold(lines: list[str]) -> list[tuple[bool, list[str]]]:
    """An output as (shown, lines) runs: a long one keeps its first and last lines and every
    key line (prompts, errors, warnings) in view and folds the runs between them."""
    n = len(lines)
    if n <= FOLD_AFTER:
        return [(True, lines)]
    keep = set(range(HEAD)) | set(range(n - TAIL, n))
    keep |= {i for i, line in enumerate(lines) if _KEY_LINE.search(line)}
    runs: list[tuple[bool, list[str]]] = []
    for i, line in enumerate(lines):
        shown = i in keep
        if runs and runs[-1][0] == shown:
            runs[-1][1].append(line)
        else:
            runs.append((shown, [line]))
    out: list[tuple[bool, list[str]]] = []
    for shown, run in runs:                     # short hidden runs are not worth a fold
        shown = shown or len(run) < MIN_FOLD
        if out and out[-1][0] == shown:
            out[-1][1].extend(run)
        else:
            out.append((shown, list(run)))
    return out


def _fence(lines: list[str], char: str) -> str:
    fence = char * 4
    while any(line.strip() == fence for line in lines):
        fence += char
    return fence


def _literal(lines: list[str], role: str, title: str = "") -> str:
    fence = _fence(lines, ".")
    return ((f".{title}\n" if title else "") + f"[.{role}]\n{fence}\n" + "\n".join(lines)
            + f"\n{fence}\n")


ELIDED = re.compile(r"^\.\.\. \((\d+) more periods\)$")


def _elided(line: str, tr: Translator) -> str:
    """The benchmark excerpt's mark for the periodic lines it left out (procedures/omb.py
    excerpt) is the guide's words, not output: in the edition's language."""
    m = ELIDED.match(line)
    return tr._("... ({count} more periods)", count=int(m.group(1))) if m else line


def console_block(rec: dict, tr: Translator, lab: bool, where: str) -> str:
    """A transcript. On the site: one block holding what the run set on the lab only (muted,
    outside what a reader copies), the command (its prompt is CSS, so never copied) and the
    output, a long one folded after its key lines. In the PDF: the same blocks, the prompt
    printed and the folded runs left out with a note saying so. (Example blocks, not open
    ones: a page may hold results inside an open block of its own.)"""
    data = rec["data"]
    title = tr.text(rec.get("title", ""), f"{where} title")
    env, cmd = split_plumbing(data.get("command") or "")
    prompt = data.get("prompt", "$") or ""
    host = data.get("host") or ""
    head = []
    if env:
        head.append(_literal(env, "transcript-env",
                             tr._("Set for this run on the lab, not part of the command")))
    if cmd:
        fence = _fence(cmd, "-")
        first = f"{prompt} {cmd[0]}" if prompt else cmd[0]
        lines = [f"ifdef::{PDF}[{first}]", f"ifndef::{PDF}[{cmd[0]}]", *cmd[1:]]
        kind = {"$": "", "#": " prompt-root"}.get(prompt, " prompt-none")
        head.append((f".{host}\n" if host else "")
                    + f'[source,console,role="transcript-cmd{kind}",subs="verbatim"]\n'
                    + f"{fence}\n" + "\n".join(lines) + f"\n{fence}\n")
    site, printed = list(head), list(head)
    output = [_elided(line, tr) for line in (data.get("output") or "").rstrip("\n").splitlines()]
    for shown, run in fold(output) if output else []:
        if shown:
            site.append(_literal(run, "transcript-out"))
            printed.append(_literal(run, "transcript-out"))
        else:
            site.append("[%collapsible.transcript-fold]\n."
                        + tr._("{count} more lines", count=len(run)) + f"\n{FOLD}\n"
                        + _literal(run, "transcript-out") + f"{FOLD}\n")
            printed.append("[.transcript-folded]\n" + tr._(
                "({count} lines of output not printed; the site shows them.)", count=len(run))
                + "\n")
    if data.get("exit_code") not in (0, None):
        code = "[.transcript-exit]\n" + tr._("exit code {code}", code=str(data["exit_code"])) + "\n"
        site.append(code)
        printed.append(code)
    label = source_label(data, tr) if lab else None
    t = f".{title}\n" if title else ""
    return _pdf(t + f"[.transcript]\n{INNER}\n" + "\n".join(site) + INNER,
                t + "[.transcript-print]\n****\n" + "\n".join(printed) + "****") + (
        f"[.source-label]\n{tr.period(label)}\n" if label else "")


# --- tables ----------------------------------------------------------------------------------------
#: Columns a reader looks for first: they follow the row's name (the first column), so a wide
#: audit shows which broker, its verdict and its fix before anything scrolls.
KEY_HEADERS = ("Broker", "Verdict", "Fix", "Outcome")
_NUMERIC_CELL = re.compile(r"^[~<>]?[-+]?\d[\d,.]*(\s?(%|s|ms|GB|GBps|MBps|MiB/s|MB/s|MiB)?)"
                           r"(\s\([^)]*\))?(\s?(%|:1))?$")
_BREAKABLE = re.compile(r"[/_-]")


def key_order(header: list[str], key: list[str] | None) -> list[int]:
    """Column order: a record's ``key`` columns first, in its order; without one, the first
    column then any of KEY_HEADERS; then the rest as recorded."""
    if key:
        first = [header.index(k) for k in key if k in header]
    else:
        first = [0] + [i for i, h in enumerate(header) if h in KEY_HEADERS and i > 0]
    return first + [i for i in range(len(header)) if i not in first]


def breakable(cell: str) -> str:
    """Long identifiers (paths, volume and host names) may wrap after / _ and -."""
    def token(t: str) -> str:
        if len(t) < 14 or any(c in t for c in "`{[+") or "://" in t:
            return t
        return _BREAKABLE.sub(lambda m: m.group(0) + "{wbr}", t)
    return " ".join(token(t) for t in cell.split(" "))


def _text_width(s: str) -> int:
    """A string's width in Latin-character units (a Japanese character is about two)."""
    return sum(2 if "\u3000" <= c <= "\uffef" else 1 for c in s)


#: Where the PDF may break a line in a cell: a space, after a hyphen, a {wbr} (breakable),
#: and between Japanese characters where Japanese allows it (scripts/pdf/tr4947_pdf.rb:
#: never before closing brackets and punctuation, never after an opening bracket).
_PDF_BREAK = re.compile(r"\s|(?<=-)|\{wbr\}|(?<![（「『【〔［〈《])(?=[\u3000-\u30ff\u3400-\u9fff\uff00-\uffef])"
                        r"(?![、。，．・：；？！）」』】〕］〉》ー々〜ぁぃぅぇぉっゃゅょゎァィゥェォッャュョヮヵヶ])"
                        r"|(?<=[、。，．：；？！）」』】〕])(?=[A-Za-z0-9`(\[/_.-])")

#: About how many Latin characters a result table holds across an A4 page in the PDF (9 pt).
PDF_LINE = 88


def _pdf_widths(header: list[str], rows: list[list[str]]) -> list[int]:
    """Relative column widths for the PDF. Each column first gets its longest unbreakable
    word (identifiers break after / _ -, Japanese between characters), so nothing is cut
    mid-word; what is left of the line goes to the columns with the most text."""
    need, want = [], []

    def words(x: str) -> list[str]:
        return [w for w in _PDF_BREAK.split(breakable(x)) if w]
    for c, h in enumerate(header):
        cells = [h] + [r[c] for r in rows if c < len(r)]
        # the header is set in bold: its words take about a fifth more room
        need.append(max([_text_width(w) * 1.2 for w in words(h)]
                        + [_text_width(w) for x in cells[1:] for w in words(x)], default=1) + 2)
        want.append(max(need[-1], min(max(_text_width(x) for x in cells), 40) + 2))
    need = [round(n) for n in need]
    spare = PDF_LINE - sum(need)
    room = sum(w - n for w, n in zip(want, need))
    if spare <= 0 or room <= 0:
        return need
    return [n + round(spare * (w - n) / room) for n, w in zip(need, want)]


def _pdf_font_scale(widths: list[int]) -> str:
    """For a table whose columns' longest words do not fit across the page at the table
    font: the font scale that makes them fit (scripts/pdf/tr4947_pdf.rb applies it), so the
    PDF never cuts a word; "" for a table that fits."""
    total = sum(widths)
    return f",pdf-font-scale={max(0.5, PDF_LINE / total):.2f}" if total > PDF_LINE else ""


def capitalised(title: str) -> str:
    """A caption starts with a capital, as "Table 8." before it asks ("volume kafka_nfs_b1
    filled..." reads "Volume kafka_nfs_b1 filled..."); a leading identifier (nfs-broker-1,
    kafka_nfs_b1) is left as it is."""
    if re.match(r"[^\W\d_A-Z]+(?=[\s:,'\u2019])", title) and not title[:1].isupper():
        return title[:1].upper() + title[1:]
    return title


#: A table this wide with this few rows (a drill's one row per cluster) reads better turned on
#: its side: one row per measure, one column per row of the record, so it fits the page.
TRANSPOSE_COLUMNS, TRANSPOSE_ROWS = 10, 3


def _transposed(header: list[str], rows: list[list[str]]) -> tuple[list[str], list[list[str]]]:
    """The first column's values become the header; every other column becomes a row."""
    return ([header[0]] + [r[0] for r in rows],
            [[header[i]] + [r[i] for r in rows] for i in range(1, len(header))])


def table_block(rec: dict, tr: Translator, where: str) -> str:
    data = rec["data"]
    header = [str(h) for h in data.get("header", [])]
    rows = [[str(c) for c in r] for r in data.get("rows", [])]
    if not header:
        return ""
    order = key_order(header, data.get("key"))
    header = [header[i] for i in order]
    rows = [[r[i] if i < len(r) else "" for i in order] for r in rows]
    if len(header) > TRANSPOSE_COLUMNS and len(rows) <= TRANSPOSE_ROWS:
        header, rows = _transposed(header, rows)
    numeric = [bool(cells) and all(_NUMERIC_CELL.match(x) for x in cells)
               for cells in ([r[c] for r in rows if c < len(r) and r[c] not in ("", "-")]
                             for c in range(len(header)))]
    shown_header = [tr.text(h, f"{where} header") for h in header]
    shown_rows = [[tr.text(c, f"{where} cell") for c in r] for r in rows]
    align = ",".join(">" if n else "<" for n in numeric)
    pdf_widths = _pdf_widths(shown_header, shown_rows)
    widths = ",".join(f"{'>' if n else '<'}{w}" for n, w in zip(numeric, pdf_widths))
    role = "result-table" + (" pin" if len(header) >= 4 else "")

    def cell(v: str) -> str:
        return breakable(v.replace("|", "\\|"))
    title = capitalised(tr.text(rec.get("title", ""), f"{where} title"))
    lines = [f".{title}"] if title else []
    lines.append(_pdf(f'[%header%autowidth,cols="{align}",role="{role}"]',
                      f'[%header,cols="{widths}",role="{role}"{_pdf_font_scale(pdf_widths)}]').rstrip())
    lines.append("|===")
    lines.append(" ".join(f"|{cell(h)}" for h in shown_header))
    lines += [" ".join(f"|{cell(c)}" for c in r) for r in shown_rows]
    lines.append("|===")
    out = "\n".join(lines) + "\n"
    if data.get("note"):
        out += "\n" + tr.text(data["note"], f"{where} note") + "\n"
    return out


# --- charts ----------------------------------------------------------------------------------------
def _attr_value(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def chart_block(rec: dict, tr: Translator, image_rel: str, alt: str, where: str) -> str:
    title = tr.text(rec.get("title", ""), f"{where} title")
    wide, narrow = image_rel + ".wide.svg", image_rel + ".narrow.svg"
    a = _attr_value(alt)
    html = ((f".{title}\n" if title else "") + f"[.result-chart]\n{INNER}\n"
            f"image::{wide}[{a},role=chart-wide,loading=lazy]\n\n"
            f"image::{narrow}[{a},role=chart-narrow,loading=lazy]\n{INNER}")
    pdf = (f".{title}\n" if title else "") + f"image::{wide}[{a},pdfwidth=100%]"
    return _pdf(html, pdf)


# --- one record -----------------------------------------------------------------------------------
def render_record(rec: dict[str, Any], image_rel: str | None, lab: bool,
                  tr: Translator | None = None, alt: str = "", where: str = "") -> str:
    tr = tr or Translator("en")
    kind = rec.get("kind")
    where = where or f"{rec.get('id', '?')} {kind}"
    if kind == "console":
        return console_block(rec, tr, lab, where)
    if kind == "table":
        return table_block(rec, tr, where)
    if kind == "text":
        body = tr.text(rec["data"].get("body", ""), f"{where} text")
        title = tr.text(rec.get("title", ""), f"{where} title")
        return f".{title}\n{body}\n" if title else body + "\n"
    if kind == "chart":
        return chart_block(rec, tr, image_rel or "", alt, where)
    if kind == "load":
        return load.render(rec, tr, where)
    if kind == "verdict":
        return ""          # shown in the page's verdict block and the ledger (ledger.py)
    # A kind this renderer does not know yet (a newer runner's record): the page goes on.
    print(f"render: record kind {kind!r} ({where}) is not shown by this renderer",
          file=sys.stderr)
    return f"// record kind {kind!r} not shown by this renderer\n"


# --- provenance -----------------------------------------------------------------------------------
#: What the guide's sources give now, per (target, chapter): the digest their inputs have
#: when the site is built (paths.CURRENT, written by `tr4947 runbook` and `--status` before
#: the build; absent, a result's currency is not stated).
CURRENT: dict[tuple[str, str], str] = {}


def load_current(path: Path = paths.CURRENT) -> dict[tuple[str, str], str]:
    """(target, chapter) -> the digest its inputs have now, from the runbook's status document
    (tr4947.runbook.execute.Runner.note_current writes one, for one target)."""
    try:
        doc = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return {}
    target = doc.get("target", "lab")
    return {(target, row["chapter"]): row["digest"] for row in doc.get("chapters", [])
            if row.get("digest")}


def currency(run: dict[str, Any], chapter: str, tr: Translator) -> tuple[str, bool]:
    """What the reader is told about whether this result is still the one its inputs give:
    (words, stale). Nothing when the build was not told what the inputs give now."""
    now = CURRENT.get((run.get("target", "lab"), chapter))
    if now is None:
        return "", False
    if now == run.get("digest"):
        return tr._("current: the guide's sources give the same digest"), False
    return tr._("stale: the guide's sources now give {digest}; a new run may give other "
                "figures", digest=f"`{now}`"), True


#: What our own software appends to its version string: "(lab stand-in)" from the ONTAP
#: stand-in, "(FUSE passthrough)" or "(no passthrough: <why>)" from the NFS client layer.
_QUALIFIER = re.compile(r"\((lab stand-in|FUSE passthrough|no passthrough: (?P<why>.*))\)$")


def _qualified(version: str, tr: Translator) -> str:
    """A version string with our own qualifier in the edition's words (the version stays)."""
    m = _QUALIFIER.search(version)
    if not m:
        return version
    if m["why"] is not None:
        words = tr._("(no passthrough: {why})", why=m["why"])
    else:
        words = {"lab stand-in": tr._("(lab stand-in)"),
                 "FUSE passthrough": tr._("(FUSE passthrough)")}[m[1]]
    return version[:m.start()] + words


def provenance(run: dict[str, Any], tr: Translator, chapter: str = "") -> str:
    """A one-line badge (who ran it, where, when, from which commit) and the rest behind a
    toggle; whether the result is current (its inputs' digest against what the guide's
    sources give now), with a warning above it when it is not."""
    kind = run.get("kind", "lab")
    who = {"lab": tr._("Embedded lab"), "computed": tr._("Computed, no measurement")}.get(
        kind, tr._("Real target"))
    commit = run.get("commit") or "?"
    link = f"{{repo-url}}/commit/{commit}[`{commit[:7]}`]" if commit != "?" else "`?`"
    badge = " · ".join([who, f"`{run.get('target', '?')}`", tr.date(run.get("started", "?")),
                        tr._("commit {commit}", commit=link)])
    out = ""
    state, stale = currency(run, chapter, tr)
    if stale:
        out += f"[WARNING.inputs-changed]\n{state}\n\n"
    out += f"[.provenance]\n{badge}\n"
    facts = [(tr._("Run"), f"`{run.get('id', '?')}`"),
             (tr._("Target"), f"`{run.get('target', '?')}` ({kind})"),
             (tr._("Ran"), tr._("{start} to {end}", start=tr.datetime(run.get("started", "?")),
                                 end=tr.datetime(run.get("finished", "?")))
              if run.get("finished") else tr.datetime(run.get("started", "?"))),
             (tr._("Commit"), f"{{repo-url}}/commit/{commit}[`{commit}`]"
              if commit != "?" else "?"),
             (tr._("Inputs digest"), f"`{run.get('digest', '?')}`"
              + (f" ({state})" if state else ""))]
    # Products and packages keep their names; what stood in for them is named in the edition.
    named = {"ONTAP stand-in": tr._("ONTAP stand-in"),
             "FSx stand-in (moto)": tr._("FSx stand-in (moto)"),
             "NFS client layer": tr._("NFS client layer")}
    versions = ", ".join(f"{named.get(k, k)} {_qualified(str(v), tr)}"
                         for k, v in sorted((run.get("versions") or {}).items()))
    if versions:
        facts.append((tr._("Versions"), versions))
    params = ", ".join(f"`{k}={v}`" for k, v in sorted((run.get("parameters") or {}).items()))
    if params:
        facts.append((tr._("Parameters"), params))
    details = "\n".join(f"{k}:: {v}" for k, v in facts)
    toggle = tr._("Provenance details")           # (Babel extracts no call inside an f-string)
    run_word = tr._("Run")
    out += _pdf(f"[%collapsible.provenance-details]\n.{toggle}\n{INNER}\n"
                f"[horizontal]\n{details}\n{INNER}",
                f"[.provenance]\n{run_word} `{run.get('id', '?')}`")
    return out


def failure_note(doc: dict[str, Any], target: str = "?", tr: Translator | None = None) -> str:
    tr = tr or Translator("en")
    f = doc.get("last_failure")
    if not f:
        return ""
    kept = doc["run"]["id"] if doc.get("run") else None
    error = str(f["error"]).rstrip()
    # The error is quoted as a literal block: a log tail keeps its `==>`, `--` and `*` as
    # printed instead of becoming arrows, dashes and bold. Its fence is longer than any
    # line of dots in it.
    dots = max([4] + [len(x) + 1 for x in error.splitlines() if x and set(x) == {"."}])
    who = doc["run"]["target"] if doc.get("run") else target
    return ("[WARNING]\n====\n"
            + tr._("The latest run of this chapter failed ({target}, run {run}, {at}):",
                   target=f"`{who}`", run=f"`{f['run_id']}`", at=tr.datetime(f["at"]))
            + f"\n\n{'.' * dots}\n{error}\n{'.' * dots}\n\n"
            + (tr._("The results below are those of the last complete run, {run}.",
                    run=f"`{kept}`") if kept
               else tr._("There are no results from an earlier complete run."))
            + "\n====\n")


# --- files ------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def _charts_code() -> str:
    """A digest of the drawing code, part of every chart's cache key: a change to it redraws
    every chart. Read once per process, not once per chart."""
    from . import charts
    return hashlib.sha256(Path(charts.__file__).read_bytes()).hexdigest()


class Writer:
    """Writes only what changed (and draws only charts whose plan changed), so a warm site
    build re-renders nothing."""

    def __init__(self, out: Path):
        self.out = Path(out)
        self.index_file = self.out / ".render-index.json"
        try:
            self.index = json.loads(self.index_file.read_text())
        except (FileNotFoundError, ValueError):
            self.index = {}
        self.written: list[Path] = []
        self.kept: set[str] = set()

    def text(self, rel: Path, body: str) -> Path:
        f = self.out / rel
        self.kept.add(str(rel))
        if not f.exists() or f.read_text() != body:
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(body)
            self.written.append(f)
        return f

    def chart(self, rel: Path, plan: dict, tr: Translator) -> list[Path]:
        """``rel`` without suffix: <rel>.wide.svg and <rel>.narrow.svg."""
        from . import charts
        key = hashlib.sha256(json.dumps([plan, _charts_code()], sort_keys=True,
                                        default=str).encode()).hexdigest()
        files = []
        for size in charts.SIZES:
            f = self.out / f"{rel}.{size}.svg"
            r = str(f.relative_to(self.out))
            self.kept.add(r)
            if self.index.get(r) != key or not f.exists():
                charts.draw(plan, f, size, tr)
                self.index[r] = key
                self.written.append(f)
            files.append(f)
        return files

    def finish(self) -> None:
        """Remove what an earlier build made that this one did not (a chapter renamed, a
        result gone), and keep the chart index."""
        base = self.out / MODULE
        for f in list(base.rglob("*")) if base.exists() else []:
            if f.is_file() and str(f.relative_to(self.out)) not in self.kept:
                f.unlink()
        self.index = {k: v for k, v in self.index.items() if k in self.kept}
        self.out.mkdir(parents=True, exist_ok=True)
        self.index_file.write_text(json.dumps(self.index, indent=0, sort_keys=True))


def render_doc(doc: dict[str, Any], w: Writer, tr: Translator | None = None,
               source: str = "") -> dict[str, list[str]]:
    """One run record -> its target's partials; returns {chapter: [procedure IDs]}."""
    from . import charts
    tr = tr or Translator("en")
    run = doc.get("run")
    chapter = doc["chapter"]
    target = run["target"] if run else doc.get("target", "lab")
    kind = run.get("kind", "lab") if run else "lab"
    role = kind if kind in ("lab", "computed") else "real"
    by_id: "OrderedDict[str, list]" = OrderedDict()
    for rec in doc.get("records", []):
        if rec.get("kind") != "verdict":      # verdicts go to the verdict block and ledger
            by_id.setdefault(rec["id"], []).append(rec)
    warn = failure_note(doc, tr=tr)
    # A variant (the notebook run with other parameters) is filed as <notebook>.<variant>.
    variant = chapter.split(".", 1)[1] if "." in chapter else ""
    source = source or f"results/{target}/{doc['notebook']}{'.' + variant if variant else ''}.json"
    for proc_id, recs in by_id.items():
        parts = []
        for n, rec in enumerate(recs, 1):
            image_rel, alt = None, ""
            where = f"{source} {proc_id} {rec.get('kind')}"
            if rec.get("kind") == "chart":
                image_rel = f"results/{target}/{chapter}/{proc_id}-{n}"
                p = charts.plan(rec["data"], tr, lab=role == "lab")
                w.chart(MODULE / "images" / image_rel, p, tr)
                alt = charts.alt_text(p, tr)
            parts.append(render_record(rec, image_rel, role == "lab", tr, alt, where))
        proc = tr._("{proc} (variant {variant})", proc=proc_id, variant=variant) if variant \
            else proc_id
        label = {"lab": tr._("Lab result: {proc}", proc=proc),
                 "computed": tr._("Computed: {proc}", proc=proc)}.get(
            role, tr._("Result from {target}: {proc}", target=target, proc=proc))
        body = (f"// GENERATED by tr4947.results.render from {source}; do not edit.\n" + warn +
                f"[.result.{role}]\n.{label}\n====\n" + "\n".join(parts) + "\n"
                + (provenance(run, tr, Path(source).stem) if run else "") + "====\n")
        w.text(MODULE / "partials" / "results" / target / chapter / f"{proc_id}.adoc", body)
    return {chapter: list(by_id)}


def _load(f: Path) -> dict[str, Any]:
    """A run record, or a clear error naming the file (a hand-edited or truncated record must
    not become an empty page)."""
    try:
        doc = json.loads(f.read_text())
    except ValueError as exc:
        raise SystemExit(f"{f}: not valid JSON ({exc}); restore it with `git checkout -- {f}` "
                         "or re-run the chapter") from None
    missing = [k for k in ("notebook", "chapter", "records") if k not in doc]
    if missing:
        raise SystemExit(f"{f}: not a run record (no {', '.join(missing)}); results/<target>/ "
                         "holds only what the runner writes")
    return doc


def render_all(results: Path = RESULTS, out: Path | None = None,
               pages: Path | None = None, edition: str = "en",
               tr: Translator | None = None) -> list[Path]:
    """Every run record under ``results`` -> one edition's partials and charts under ``out``;
    a result a page in ``pages`` includes that no run recorded gets a placeholder that says
    so. ``tr`` (the edition's Translator) collects what its catalogue lacked."""
    tr = tr or Translator(edition)
    w = Writer(out if out is not None else OUT / edition)
    found: dict[tuple[str, str], list[str]] = {}      # (chapter, ID) -> targets
    for f in sorted(Path(results).glob("*/*.json")):
        doc = _load(f)
        target = f.parent.name
        for chapter, ids in render_doc(doc, w, tr, f"results/{target}/{f.name}").items():
            for proc_id in ids:
                found.setdefault((chapter, proc_id), []).append(target)
    verdicts(results, w, tr)
    failures = _failures(results, tr)
    for chapter, proc_id in _included_by_pages(pages or paths.DOCS / "pages"):
        if (chapter, proc_id) not in found:
            # A page asks for a result no run has recorded (a chapter never run, or one whose
            # only run failed): the page says so instead of the build failing.
            w.text(MODULE / "partials" / "results" / chapter / f"{proc_id}.adoc",
                   _placeholder(chapter, proc_id, failures.get(chapter, []), tr))
    for (chapter, proc_id), targets in found.items():
        ordered = sorted(set(targets), key=lambda t: (t not in LAB_TARGETS, t))
        lines = [f"// GENERATED: every target's result for {proc_id}; do not edit."]
        lines += [f"include::partial$results/{t}/{chapter}/{proc_id}.adoc[]\n" for t in ordered]
        w.text(MODULE / "partials" / "results" / chapter / f"{proc_id}.adoc",
               "\n".join(lines) + "\n")
    w.finish()
    return w.written


def verdicts(results: Path, w: Writer, tr: Translator) -> None:
    """The claims ledger (whole, and the home page's summary) and each chapter page's verdict
    block, from every target's verdict records."""
    docs = [_load(f) for f in sorted(Path(results).glob("*/*.json"))]
    rs = ledger.rows(claims.load_claims(), docs)
    base = MODULE / "partials" / "results"
    head = "// GENERATED by tr4947.results.render from the verdict records; do not edit.\n"
    w.text(base / "ledger.adoc", head + ledger.ledger(rs, tr))
    w.text(base / "ledger-summary.adoc", head + ledger.ledger(rs, tr, full=False))
    for page in sorted({r.claim["page"] for r in rs}):
        w.text(base / page / "verdicts.adoc", head + ledger.verdict_block(rs, page, tr))


_INCLUDE = re.compile(r"include::partial\$results/([\w.-]+)/([A-Z]{2,5}-\d+[a-z]?)\.adoc\[\]")


def _included_by_pages(pages: Path) -> list[tuple[str, str]]:
    return sorted({m.groups() for p in pages.glob("*.adoc") for m in _INCLUDE.finditer(p.read_text())})


def _failures(results: Path, tr: Translator) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for f in sorted(Path(results).glob("*/*.json")):
        doc = json.loads(f.read_text())
        if doc.get("last_failure") and not doc.get("run"):
            out.setdefault(doc.get("chapter", ""), []).append(failure_note(doc, f.parent.name, tr))
    return out


def _placeholder(chapter: str, proc_id: str, failures: list[str], tr: Translator) -> str:
    return (f"// GENERATED: no run has recorded {proc_id} yet; do not edit.\n"
            + "".join(failures)
            + "[NOTE]\n====\n"
            + tr._("No result recorded yet: {proc}. Running this chapter's notebook records "
                   "it: {command} ({link}).", proc=proc_id,
                   command="`.venv/bin/tr4947 runbook`", link="xref:running.adoc[]")
            + "\n====\n")


def main(argv: list[str] | None = None) -> int:
    from ..usage import Parser
    p = Parser(prog="python -m tr4947.results.render",
               description="Render the committed run records into one edition's generated "
                           "partials and charts (the Antora build runs this first, once per "
                           "edition).")
    p.add_argument("--results", type=Path, default=RESULTS, help="run records (default results/)")
    p.add_argument("--edition", choices=EDITIONS, default="en",
                   help="the edition whose language the results are put in (default en)")
    p.add_argument("--out", type=Path, help="content root to write "
                   "(default build/generated/<edition>)")
    a = p.parse_args(argv)
    if not a.results.is_dir():
        # Rendering an empty set would remove every generated page part.
        p.error(f"--results {a.results}: no such directory (run records live in "
                "results/<target>/)")
    out = a.out or OUT / a.edition
    CURRENT.clear()
    CURRENT.update(load_current())
    tr = Translator(a.edition)
    written = render_all(a.results, out, edition=a.edition, tr=tr)
    missing = {s for _, s in tr.missing}
    print(f"rendered {len(written)} changed file(s) into {out}"
          + (f"; {len(missing)} result string(s) have no {a.edition} translation (listed by "
             f"python -m tr4947.results.i18n missing)" if missing else ""), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
