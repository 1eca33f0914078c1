"""Run records -> AsciiDoc partials and chart images, when the site is built.

The committed results are the run records, ``results/<target>/<notebook>.json`` (written by
tr4947.runbook.execute, one per chapter notebook and target). The Antora build runs this
module first (the collector extension's ``run`` step, see antora.yml) and scans what it
writes, so generated content never sits among the authored pages:

  build/generated/modules/ROOT/partials/results/<chapter>/<ID>.adoc
        every target's result for procedure ID (what a page includes)
  build/generated/modules/ROOT/partials/results/<target>/<chapter>/<ID>.adoc
        one target's records for ID, each labelled with what produced it, then provenance
  build/generated/modules/ROOT/images/results/<target>/<chapter>/<ID>-<n>.svg
        charts drawn from the recorded numbers

Provenance, on every result block: the run id, target and kind, when it ran, the parent
commit (linked), how many of the run's inputs differed from that commit, the digest of its
inputs, tool versions and parameters. A run that failed after the recorded one is said so
above the results it did not replace.

    python -m tr4947.results.render [--out build/generated] [--results results]
"""
from __future__ import annotations

import functools
import hashlib
import json
import re
import sys
from collections import OrderedDict
from pathlib import Path
from typing import Any

from .. import paths

OUT = paths.BUILD / "generated"
MODULE = Path("modules") / "ROOT"
RESULTS = paths.REPO / "results"
LAB_TARGETS = {"lab"}

# --- the words around results, per edition ------------------------------------------------------
# The partials are the same for the English, French and Japanese editions of the guide: every
# word the renderer adds around a result is an AsciiDoc attribute reference, {label-...}, which
# each edition's component descriptor (antora.yml, docs/fr/antora.yml, docs/ja/antora.yml)
# defines in its language. Results themselves (commands, output, the notebook's titles) are not
# translated.
def L(name: str) -> str:
    return "{label-" + name + "}"


#: Every label the partials use (tests check that each edition defines all of them).
LABELS = ("lab-result", "computed", "result-from", "src-ontap", "src-fsx", "src-nfs", "src-ssh",
          "src-omb", "prov-lab", "prov-computed", "prov-real", "run", "target", "ran", "commit",
          "inputs-changed", "digest", "parameters", "failed", "failed-kept", "failed-none",
          "no-result", "no-result-how", "variant")

# --- what produced a transcript (lab runs only: a real target's tools are the real ones) ---------
# Rules applied in order to a console record: (test on the record, label).
_SOURCES = [
    (lambda r: r["prompt"].startswith("::") or r["prompt"] == "" and "::>" in r["output"][:200],
     L("src-ontap")),
    (lambda r: re.search(r"(^|\s)aws fsx\b", r["command"]) is not None, L("src-fsx")),
    (lambda r: re.search(r"(^|\n|\s)(mount|df|umount)(\s|$)", r["command"]) is not None
     or "type nfs" in r["output"], L("src-nfs")),
    (lambda r: re.search(r"(^|\s)ssh fsxadmin@", r["command"]) is not None, L("src-ssh")),
    (lambda r: "bin/benchmark" in r["command"], L("src-omb")),
]


def source_label(data: dict) -> str | None:
    for test, label in _SOURCES:
        try:
            if test(data):
                return label
        except (KeyError, TypeError):
            continue
    return None


# --- blocks ----------------------------------------------------------------------------------------
def _listing(text: str) -> str:
    """A literal listing whose delimiter cannot collide with the content."""
    fence = "----"
    while any(line.strip() == fence for line in text.splitlines()):
        fence += "-"
    return f"[source,console,subs=\"verbatim\"]\n{fence}\n{text.rstrip()}\n{fence}\n"


def _cell(value: Any) -> str:
    return str(value).replace("|", "\\|")


def render_record(rec: dict[str, Any], image_rel: str | None, lab: bool) -> str:
    kind, title, data = rec["kind"], rec["title"], rec["data"]
    if kind == "console":
        head = f"{data.get('host') + ' ' if data.get('host') else ''}{data.get('prompt', '$')} "
        body = (head + data["command"].rstrip() + "\n" if data["command"] else "") \
            + data["output"].rstrip()
        if data.get("exit_code") not in (0, None):
            body += f"\n[exit code {data['exit_code']}]"
        label = source_label(data) if lab else None
        return (f".{title}\n" + _listing(body)
                + (f"[.source-label]\n{label}.\n" if label else ""))
    if kind == "table":
        cols = len(data["header"])
        lines = [f".{title}", f'[%header,cols="{cols}*",role="result-table"]', "|==="]
        lines.append(" ".join(f"|{_cell(h)}" for h in data["header"]))
        lines += [" ".join(f"|{_cell(c)}" for c in row) for row in data["rows"]]
        lines.append("|===")
        out = "\n".join(lines) + "\n"
        if data.get("note"):
            out += "\n" + data["note"] + "\n"
        return out
    if kind == "text":
        return f".{title}\n{data['body']}\n" if title else data["body"] + "\n"
    if kind == "chart":
        return f".{title}\nimage::{image_rel}[{_cell(title)},role=result-chart]\n"
    raise ValueError(f"unknown record kind {kind!r}")


def provenance_line(run: dict[str, Any]) -> str:
    kind = run.get("kind", "lab")
    who = {"lab": L("prov-lab"), "computed": L("prov-computed"),
           }.get(kind, f"{L('prov-real')} `{run['target']}`")
    commit = run.get("commit") or "?"
    changed = run.get("inputs_changed_since_commit") or []
    bits = [who, f"{L('run')} `{run.get('id', '?')}`", f"{L('target')} `{run['target']}` ({kind})",
            f"{L('ran')} {run.get('started', '?')}",
            f"{L('commit')} {{repo-url}}/commit/{commit}[`{commit[:10]}`]"
            + (f" ({L('inputs-changed')}: {len(changed)})" if changed else ""),
            f"{L('digest')} `{run.get('digest', '?')}`"]
    versions = ", ".join(f"{k} {v}" for k, v in sorted((run.get("versions") or {}).items()))
    if versions:
        bits.append(versions)
    params = ", ".join(f"{k}={v}" for k, v in sorted((run.get("parameters") or {}).items()))
    if params:
        bits.append(f"{L('parameters')}: {params}")
    return "[.provenance]\n" + " · ".join(bits) + "\n"


def failure_note(doc: dict[str, Any], target: str = "?") -> str:
    f = doc.get("last_failure")
    if not f:
        return ""
    kept = doc["run"]["id"] if doc.get("run") else None
    error = str(f["error"]).rstrip()
    # The error is quoted as a literal block: a log tail keeps its `==>`, `--` and `*` as
    # printed instead of becoming arrows, dashes and bold. Its fence is longer than any
    # line of dots in it.
    dots = max([4] + [len(x) + 1 for x in error.splitlines() if x and set(x) == {"."}])
    return ("[WARNING]\n====\n"
            f"{L('failed')} (`{doc['run']['target'] if doc.get('run') else target}`, "
            f"{L('run')} `{f['run_id']}`, {f['at']}):\n\n"
            f"{'.' * dots}\n{error}\n{'.' * dots}\n\n"
            + (f"{L('failed-kept')} `{kept}`." if kept else f"{L('failed-none')}")
            + "\n====\n")


# --- files --------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def _charts_code() -> str:
    """A digest of the drawing code, part of every chart's cache key: a change to it redraws
    every chart. Read once per process, not once per chart."""
    from . import charts
    return hashlib.sha256(Path(charts.__file__).read_bytes()).hexdigest()


class Writer:
    """Writes only what changed (and draws only charts whose numbers changed), so a warm site
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

    def chart(self, rel: Path, spec: dict, title: str, lab: bool) -> Path:
        from . import charts
        f = self.out / rel
        self.kept.add(str(rel))
        key = hashlib.sha256(json.dumps([spec, title, lab, _charts_code()],
                                        sort_keys=True).encode()).hexdigest()
        if self.index.get(str(rel)) != key or not f.exists():
            charts.draw(spec, title, f, lab=lab)
            self.index[str(rel)] = key
            self.written.append(f)
        return f

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


def render_doc(doc: dict[str, Any], w: Writer) -> dict[str, list[str]]:
    """One run record -> its target's partials; returns {chapter: [procedure IDs]}."""
    run = doc.get("run")
    chapter = doc["chapter"]
    target = run["target"] if run else doc.get("target", "lab")
    kind = run.get("kind", "lab") if run else "lab"
    role = kind if kind in ("lab", "computed") else "real"
    by_id: "OrderedDict[str, list]" = OrderedDict()
    for rec in doc.get("records", []):
        by_id.setdefault(rec["id"], []).append(rec)
    warn = failure_note(doc)
    # A variant (the notebook run with other parameters) is filed as <notebook>.<variant>.
    variant = chapter.split(".", 1)[1] if "." in chapter else ""
    source = f"results/{target}/{doc['notebook']}{'.' + variant if variant else ''}.json"
    for proc_id, recs in by_id.items():
        parts = []
        for n, rec in enumerate(recs, 1):
            image_rel = None
            if rec["kind"] == "chart":
                image_rel = f"results/{target}/{chapter}/{proc_id}-{n}.svg"
                w.chart(MODULE / "images" / image_rel, rec["data"], rec["title"],
                        lab=role == "lab")
            parts.append(render_record(rec, image_rel, lab=role == "lab"))
        label = {"lab": L("lab-result"), "computed": L("computed")}.get(
            role, f"{L('result-from')} {target}")
        proc_label = f"{proc_id} ({L('variant')} {variant})" if variant else proc_id
        body = (f"// GENERATED by tr4947.results.render from {source}; do not edit.\n" + warn +
                f"[.result.{role}]\n.{label}: {proc_label}\n====\n" + "\n".join(parts) + "\n"
                + (provenance_line(run) if run else "") + "====\n")
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


def render_all(results: Path = RESULTS, out: Path = OUT,
               pages: Path | None = None) -> list[Path]:
    """Every run record under ``results`` -> partials and charts under ``out``; a result a
    page in ``pages`` includes that no run recorded gets a placeholder that says so."""
    w = Writer(out)
    found: dict[tuple[str, str], list[str]] = {}      # (chapter, ID) -> targets
    for f in sorted(Path(results).glob("*/*.json")):
        doc = _load(f)
        target = f.parent.name
        for chapter, ids in render_doc(doc, w).items():
            for proc_id in ids:
                found.setdefault((chapter, proc_id), []).append(target)
    failures = _failures(results)
    for chapter, proc_id in _included_by_pages(pages or paths.DOCS / "pages"):
        if (chapter, proc_id) not in found:
            # A page asks for a result no run has recorded (a chapter never run, or one whose
            # only run failed): the page says so instead of the build failing.
            w.text(MODULE / "partials" / "results" / chapter / f"{proc_id}.adoc",
                   _placeholder(chapter, proc_id, failures.get(chapter, [])))
    for (chapter, proc_id), targets in found.items():
        ordered = sorted(set(targets), key=lambda t: (t not in LAB_TARGETS, t))
        lines = [f"// GENERATED: every target's result for {proc_id}; do not edit."]
        lines += [f"include::partial$results/{t}/{chapter}/{proc_id}.adoc[]\n" for t in ordered]
        w.text(MODULE / "partials" / "results" / chapter / f"{proc_id}.adoc",
               "\n".join(lines) + "\n")
    w.finish()
    return w.written


_INCLUDE = re.compile(r"include::partial\$results/([\w.-]+)/([A-Z]{2,5}-\d+[a-z]?)\.adoc\[\]")


def _included_by_pages(pages: Path) -> list[tuple[str, str]]:
    return sorted({m.groups() for p in pages.glob("*.adoc") for m in _INCLUDE.finditer(p.read_text())})


def _failures(results: Path) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for f in sorted(Path(results).glob("*/*.json")):
        doc = json.loads(f.read_text())
        if doc.get("last_failure") and not doc.get("run"):
            out.setdefault(doc.get("chapter", ""), []).append(failure_note(doc, f.parent.name))
    return out


def _placeholder(chapter: str, proc_id: str, failures: list[str]) -> str:
    return (f"// GENERATED: no run has recorded {proc_id} yet; do not edit.\n"
            + "".join(failures)
            + f"[NOTE]\n====\n{L('no-result')}: {proc_id}. {L('no-result-how')}: "
            f"`.venv/bin/tr4947 runbook` (xref:running.adoc[]).\n====\n")


def main(argv: list[str] | None = None) -> int:
    from ..usage import Parser
    p = Parser(prog="python -m tr4947.results.render",
               description="Render the committed run records into the site's generated "
                           "partials and charts (the Antora build runs this first).")
    p.add_argument("--results", type=Path, default=RESULTS, help="run records (default results/)")
    p.add_argument("--out", type=Path, default=OUT, help="content root to write "
                   "(default build/generated)")
    a = p.parse_args(argv)
    if not a.results.is_dir():
        # Rendering an empty set would remove every generated page part.
        p.error(f"--results {a.results}: no such directory (run records live in "
                "results/<target>/)")
    written = render_all(a.results, a.out)
    print(f"rendered {len(written)} changed file(s) into {a.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
