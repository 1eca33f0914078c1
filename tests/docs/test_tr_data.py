"""The TR's published figures and the differences between its editions (docs/data/tr-*.yaml).

The structure of both files is checked everywhere. Each quoted value is then checked against
the plain-text editions it was copied from (shared/seeds beside the repository): the quote must
be on the recorded line or within two lines of it (the whole line, when an entry says
whole_line). The published repository does not ship the seeds, so those checks skip there.
"""
from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

import pytest
import yaml

try:
    from .conftest import REPO, expected
except ImportError:  # collected without --import-mode=importlib (e.g. -o addopts="")
    import importlib.util

    _spec = importlib.util.spec_from_file_location("_docs_conftest", Path(__file__).with_name("conftest.py"))
    _conftest = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_conftest)
    REPO, expected = _conftest.REPO, _conftest.expected

DATA = REPO / "docs" / "data"
FIGURES = DATA / "tr-published-figures.yaml"
DIFFERENCES = DATA / "tr-edition-differences.yaml"

SEEDS = Path(os.environ.get("TR4947_SEEDS") or Path(__file__).resolve().parents[3] / "shared" / "seeds")
SEED_FILES = {
    "en2024": "000_dba8e80dff13687b.txt",
    "en2025": "001_e2b5251a99221f11.txt",
    "fr": "002_6e866ae0ae595e84.txt",
    "fsx-page": "003_4925a7b39b2e9379.txt",
    "ja": "004_49f3b6974f918f57.txt",
}
EDITIONS = tuple(SEED_FILES)
SLACK = 2
KINDS = {"figure", "unit", "command", "config", "table", "text"}
ORIGINS = {"translation", "edition", "extraction", "unclear"}
FIGURE_KINDS = {"result", "output", "setup"}
EVIDENCE = ("Recomputation: ", "Reading: ")


def figures() -> list[dict]:
    return yaml.safe_load(FIGURES.read_text(encoding="utf-8"))["figures"]


def differences() -> list[dict]:
    return yaml.safe_load(DIFFERENCES.read_text(encoding="utf-8"))["differences"]


def known_procedures() -> set[str]:
    return set(expected()[1])


# ---------------------------------------------------------------- structure (no seeds needed)

def test_figures_are_well_formed():
    figs, procs = figures(), known_procedures()
    assert len(figs) >= 100
    ids = [f["id"] for f in figs]
    assert len(ids) == len(set(ids)), "duplicate figure ids"
    problems = []
    for f in figs:
        fid = f["id"]
        if f.get("procedure") not in procs:
            problems.append(f"{fid}: unknown procedure {f.get('procedure')!r}")
        elif not (fid.startswith(f["procedure"] + ".") or fid.startswith("CVO-DAS.")):
            problems.append(f"{fid}: id does not start with its procedure {f['procedure']}")
        if not f.get("what") or "unit" not in f or f.get("kind") not in FIGURE_KINDS:
            problems.append(f"{fid}: needs what, unit and a kind in {sorted(FIGURE_KINDS)}")
        eds = f.get("editions") or {}
        if set(eds) != set(EDITIONS):
            problems.append(f"{fid}: editions must be exactly {EDITIONS}, got {sorted(eds)}")
        printed = [e for e in EDITIONS if eds.get(e) is not None]
        if not printed:
            problems.append(f"{fid}: no edition prints it")
        for e in printed:
            p = eds[e]
            if not (isinstance(p, dict) and isinstance(p.get("value"), str) and p["value"].strip()
                    and isinstance(p.get("line"), int) and p["line"] > 0):
                problems.append(f"{fid}.{e}: needs a non-empty value string and a line number")
        if f.get("same_as") and f["same_as"] not in ids:
            problems.append(f"{fid}: same_as {f['same_as']!r} is not an id")
    assert problems == []


def test_headline_figures_are_all_there():
    """The figures the guide compares its runs with must be recorded for the primary edition
    (or, for FSx, the web page), and the CVO against DAS values for every bar."""
    by_id = {f["id"]: f for f in figures()}
    must = {
        "en2025": ["CPU-2.das.10k", "CPU-2.das.100k", "CPU-2.nfs.10k", "CPU-2.nfs.100k",
                   "CPU-2.savings.low-rate", "CPU-2.savings.high-rate",
                   "REC-3.110GB.das", "REC-3.110GB.nfs", "REC-3.1TB.das", "REC-3.1TB.nfs",
                   "EFF-2.ratio", "EFF-2.logical", "EFF-2.physical", "CVO-4.entries",
                   "CVO-2.node01.backing-store-iops", "CVO-2.node02.backing-store-iops",
                   "CVO-7.ha.sync", "CVO-7.ha.throughput.peak", "CVO-7.sn.sync",
                   "CVO-7.sn.throughput.peak", "AFF-5.throughput", "AFF-6.producer.peak",
                   "AFF-6.omb.msg-rate", "AFF-6.omb.byte-rate", "AFF-6.consumer.peak",
                   "AFF-6.combined", "SIZ-1.rf3", "SIZ-1.rf2", "SIZ-1.rf1"],
        "fsx-page": [f"FSX-6.rf{rf}.{drv}{peak}" for rf in (1, 3) for drv in ("sync", "throughput")
                     for peak in ("", ".peak")]
                    + ["FSX-7.2GBps.total", "FSX-7.2GBps.storage", "FSX-7.4GBps.total",
                       "FSX-7.4GBps.storage"],
        "fr": [f"CVO-DAS.{layout}.{drv}.{sys}.{rate}" for layout in ("ha", "sn")
               for drv in ("sync", "throughput") for sys in ("ec2", "cvo")
               for rate in ("producer", "consumer", "total")],
    }
    missing = [(ed, fid) for ed, fids in must.items() for fid in fids
               if fid not in by_id or by_id[fid]["editions"].get(ed) is None]
    assert missing == []


def test_differences_are_well_formed():
    diffs, procs = differences(), known_procedures()
    assert len(diffs) >= 50
    ids = [d["id"] for d in diffs]
    assert len(ids) == len(set(ids)), "duplicate difference ids"
    problems = []
    for d in diffs:
        did = d["id"]
        if d.get("edition") not in {"fr", "ja", "en2024"}:
            problems.append(f"{did}: edition must be fr, ja or en2024")
        elif not did.startswith(d["edition"] + "."):
            problems.append(f"{did}: id does not start with its edition")
        if d.get("en_source") not in {"en2025", "fsx-page"}:
            problems.append(f"{did}: en_source must be en2025 or fsx-page")
        if d.get("procedure") not in procs:
            problems.append(f"{did}: unknown procedure {d.get('procedure')!r}")
        if not d.get("where"):
            problems.append(f"{did}: no where")
        if d.get("kind") not in KINDS:
            problems.append(f"{did}: kind {d.get('kind')!r} not in {sorted(KINDS)}")
        if d.get("origin") not in ORIGINS:
            problems.append(f"{did}: origin {d.get('origin')!r} not in {sorted(ORIGINS)}")
        ev = d.get("evidence") or ""
        if not ev.startswith(EVIDENCE) or len(ev) < len("Reading: ") + 10:
            problems.append(f"{did}: evidence must start with Recomputation: or Reading: and explain")
        lines = d.get("lines") or {}
        if set(lines) != {"en", "other"}:
            problems.append(f"{did}: lines must have en and other")
            continue
        if d.get("en") is None and d.get("other") is None:
            problems.append(f"{did}: both sides empty")
        if d.get("en") is not None and d.get("en") == d.get("other"):
            problems.append(f"{did}: en and other are the same text")
        for side in ("en", "other"):
            quote, line = d.get(side), lines[side]
            if (quote is None) != (line is None):
                problems.append(f"{did}: {side} quote and line must both be given or both null")
            elif quote is not None and not (isinstance(quote, str) and isinstance(line, int) and line > 0):
                problems.append(f"{did}: {side} needs a string and a line number")
    assert problems == []


def test_data_prose_is_short():
    """Descriptions are the project's own short words, not sentences copied from the TR."""
    long_ones = [f["id"] for f in figures() if len(f["what"]) > 120 or len(f.get("note", "")) > 400]
    long_ones += [d["id"] for d in differences() if len(d["evidence"]) > 500]
    assert long_ones == []


# ---------------------------------------------------------------- quotes against the seeds

@lru_cache(maxsize=None)
def seed_lines(edition: str) -> tuple[str, ...]:
    return tuple((SEEDS / SEED_FILES[edition]).read_text(encoding="utf-8").splitlines())


def need_seeds() -> None:
    if not all((SEEDS / name).is_file() for name in SEED_FILES.values()):
        pytest.skip(f"TR seeds not found in {SEEDS} (they are not published with the repository; "
                    "set TR4947_SEEDS to check the quotes)")


def where_quoted(edition: str, quote: str, line: int, whole_line: bool = False) -> str | None:
    """None when the quote is within SLACK lines of `line`; else what is there instead."""
    lines = seed_lines(edition)
    if line > len(lines):
        return f"the seed has only {len(lines)} lines"
    window = range(max(1, line - SLACK), min(len(lines), line + SLACK) + 1)
    for n in window:
        text = lines[n - 1]
        if (text.rstrip() == quote.rstrip()) if whole_line else (quote in text):
            return None
    elsewhere = [n for n, text in enumerate(lines, 1) if quote in text][:5]
    return f"line {line} reads {lines[line - 1]!r}; the quote is on lines {elsewhere or 'none'}"


def figure_quotes() -> list[tuple[str, str, str, int]]:
    return [(f["id"], ed, f["editions"][ed]["value"], f["editions"][ed]["line"])
            for f in figures() for ed in EDITIONS if f["editions"].get(ed)]


def difference_quotes() -> list[tuple[str, str, str, str, int, bool]]:
    out = []
    for d in differences():
        for side, ed in (("en", d["en_source"]), ("other", d["edition"])):
            if d[side] is not None:
                out.append((d["id"], side, ed, d[side], d["lines"][side], bool(d.get("whole_line"))))
    return out


@pytest.mark.parametrize("fid,edition,value,line", figure_quotes(),
                         ids=[f"{q[0]}-{q[1]}" for q in figure_quotes()])
def test_figure_is_printed_where_recorded(fid, edition, value, line):
    need_seeds()
    assert where_quoted(edition, value, line) is None, \
        f"{fid} ({edition}): {value!r} not near line {line}: {where_quoted(edition, value, line)}"


@pytest.mark.parametrize("did,side,edition,quote,line,whole", difference_quotes(),
                         ids=[f"{q[0]}-{q[1]}" for q in difference_quotes()])
def test_difference_is_printed_where_recorded(did, side, edition, quote, line, whole):
    need_seeds()
    problem = where_quoted(edition, quote, line, whole)
    assert problem is None, f"{did} {side} ({edition}): {quote!r} not near line {line}: {problem}"


def test_unit_differences_really_differ_in_unit():
    """A 'unit' entry keeps the number and changes the unit: the digits of the English value
    must appear in the other edition's quote."""
    bad = []
    for d in differences():
        if d["kind"] != "unit" or d["en"] is None or d["other"] is None:
            continue
        digits = re.findall(r"\d+(?:[.,]\d+)?", d["en"])
        if not digits:
            continue
        other = d["other"].replace(",", ".")
        if not all(x.replace(",", ".") in other for x in digits):
            bad.append(d["id"])
    assert bad == []


def test_cvo8_page_and_procedure_quote_the_figure_data():
    # CVO-8's published values exist only as figure text: the page's table and the
    # procedure's totals must be the recorded readings, not numbers typed again by hand.
    val = {f["id"]: float(f.get("reading") or f["editions"]["fr"]["value"])
           for f in figures() if f["id"].startswith("CVO-DAS.")}
    assert len(val) == 24
    page = (REPO / "docs/modules/ROOT/pages/aws-cvo.adoc").read_text(encoding="utf-8")
    table = page.split("[#cvo-8]", 1)[1].split("|===", 2)[1]
    rows = {}
    for line in table.strip().splitlines()[1:]:
        cells = [c.strip() for c in line.split("|")[1:]]
        rows[cells[0]] = [float(re.sub(r"\s*\^\(a\)\^", "", c)) for c in cells[1:]]
    for layout, lab in (("ha", "HA pair"), ("sn", "Single node")):
        for drv in ("throughput", "sync"):
            want = [val[f"CVO-DAS.{layout}.{drv}.{side}.{what}"] for side in ("ec2", "cvo")
                    for what in ("producer", "consumer", "total")]
            assert rows[f"{lab}, {drv} driver"] == want, (layout, drv)
    from tr4947.procedures.cvo_performance import TR_DAS as tr_das
    for drv, by in tr_das.items():
        assert by["EC2 instance storage"] == val[f"CVO-DAS.ha.{drv}.ec2.total"] \
            == val[f"CVO-DAS.sn.{drv}.ec2.total"]
        assert by["CVO HA pair"] == val[f"CVO-DAS.ha.{drv}.cvo.total"]
        assert by["CVO single node"] == val[f"CVO-DAS.sn.{drv}.cvo.total"]
