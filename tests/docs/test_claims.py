"""The claims catalogue (docs/data/claims.yaml): the list of claims the ledger and the chapter
verdicts are drawn from. Each claim must point at a page and a section that exist in all three
editions, at a procedure the guide has, and at published figures that exist; ids are unique
and stable in form; every result the TR publishes is claimed somewhere."""
from __future__ import annotations

import re

import pytest
import yaml

from .conftest import REPO, expected

CLAIMS = REPO / "docs" / "data" / "claims.yaml"
FIGURES = REPO / "docs" / "data" / "tr-published-figures.yaml"
EDITIONS = {
    "en": REPO / "docs" / "modules" / "ROOT" / "pages",
    "fr": REPO / "docs" / "fr" / "modules" / "ROOT" / "pages",
    "ja": REPO / "docs" / "ja" / "modules" / "ROOT" / "pages",
}
AREAS = {"fv", "why", "cpu", "rec", "eff", "cvo", "fsx", "aff", "siz", "guide"}
ID = re.compile(r"^([a-z]+)\.[a-z0-9]+(?:-[a-z0-9]+)*$")
JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
#: Results the TR publishes that no claim needs to carry by itself: the producer and consumer
#: bars of the CVO-against-DAS charts are claimed through their chart's total, and the sizing
#: table's header is a unit, not a result.
NOT_CLAIMED = re.compile(r"^(CVO-DAS\.\w+\.\w+\.\w+\.(producer|consumer)|SIZ-1\.header)$")


def claims() -> list[dict]:
    return yaml.safe_load(CLAIMS.read_text(encoding="utf-8"))["claims"]


def published() -> dict[str, dict]:
    return {f["id"]: f for f in yaml.safe_load(FIGURES.read_text(encoding="utf-8"))["figures"]}


def anchors(text: str) -> set[str]:
    """Explicit anchors of an AsciiDoc page: block [#id] (alone or with a role) and inline
    [[id]]. Section ids generated from titles are left out: they differ between editions."""
    return set(re.findall(r"^\[#([\w:-]+)(?:[.%][^\]]*)?\]\s*$", text, re.M)) | \
        set(re.findall(r"\[\[([\w.:-]+)\]\]", text))


def shape_problems(c: dict, procedures: set[str], figures: set[str]) -> list[str]:
    """What is wrong with one catalogue entry ([] when nothing is)."""
    cid = c.get("id", "?")
    out = []
    m = ID.match(str(cid))
    if not m or m.group(1) not in AREAS:
        out.append(f"{cid}: id must be <area>.<name> with an area in {sorted(AREAS)}")
    if c.get("origin") not in ("tr", "guide"):
        out.append(f"{cid}: origin must be tr or guide")
    elif (c["origin"] == "guide") != str(cid).startswith("guide."):
        out.append(f"{cid}: guide claims, and only they, have ids starting with guide.")
    if c.get("origin") == "tr" and not (isinstance(c.get("tr"), str) and c["tr"].strip()):
        out.append(f"{cid}: a TR claim needs the TR's figure or statement in tr")
    if "tr" not in c:
        out.append(f"{cid}: no tr key (null for a guide claim the TR does not make)")
    if c.get("procedure") not in procedures:
        out.append(f"{cid}: procedure {c.get('procedure')!r} is not a procedure of the guide")
    for f in c.get("figures") or []:
        if f not in figures:
            out.append(f"{cid}: figure {f!r} is not in {FIGURES.name}")
    st = c.get("statement") or {}
    if set(st) != {"en", "fr", "ja"}:
        out.append(f"{cid}: statement needs exactly en, fr and ja")
    else:
        for lang, s in st.items():
            if not (isinstance(s, str) and s.strip()) or len(s) > 220:
                out.append(f"{cid}: statement.{lang} must be one short sentence")
            elif lang != "ja" and (not s.rstrip().endswith(".") or re.search(r"\.\s+[A-Z]", s)):
                out.append(f"{cid}: statement.{lang} must be one sentence ending in a full stop")
        if st.get("fr") == st.get("en"):
            out.append(f"{cid}: statement.fr is the English sentence")
        if not JAPANESE.search(str(st.get("ja", ""))) or not str(st.get("ja", "")).endswith("。"):
            out.append(f"{cid}: statement.ja must be a Japanese sentence")
    return out


def test_ids_are_unique_and_entries_well_formed():
    cs = claims()
    assert len(cs) >= 40
    ids = [c["id"] for c in cs]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    assert dupes == [], f"duplicate claim ids: {dupes}"
    procedures, figures = set(expected()[1]), set(published())
    problems = [p for c in cs for p in shape_problems(c, procedures, figures)]
    assert problems == []


@pytest.mark.parametrize("lang", EDITIONS)
def test_every_claim_points_at_a_section_of_its_page(lang):
    missing = []
    for c in claims():
        page = EDITIONS[lang] / f"{c['page']}.adoc"
        if not page.is_file():
            missing.append(f"{c['id']}: no page {lang}/{page.name}")
        elif c["section"] not in anchors(page.read_text(encoding="utf-8")):
            missing.append(f"{c['id']}: {lang}/{page.name} has no [#{c['section']}]")
    assert missing == []


def test_every_published_result_is_claimed():
    claimed = {f for c in claims() for f in c.get("figures") or []}
    unclaimed = [fid for fid, f in published().items()
                 if f["kind"] == "result" and fid not in claimed and not NOT_CLAIMED.match(fid)]
    assert unclaimed == [], f"results the TR publishes that no claim carries: {unclaimed}"


def test_the_tr_and_the_guide_both_have_claims_on_every_tested_chapter():
    pages = {c["page"] for c in claims() if c["origin"] == "tr"}
    for chapter in ("functional-validation", "cpu-utilization", "broker-recovery",
                    "storage-efficiency", "aws-cvo", "aws-fsx", "aff-a900", "sizing"):
        assert chapter in pages, f"no TR claim on {chapter}"


# --- the checks themselves must be able to fail ---------------------------------------------

def test_shape_check_reports_broken_entries():
    procs, figs = {"FV-7"}, {"FV-7.c1.alive"}
    good = {"id": "fv.fix", "origin": "tr", "page": "functional-validation", "section": "fv-7",
            "procedure": "FV-7", "tr": "alive", "figures": ["FV-7.c1.alive"],
            "statement": {"en": "It works.", "fr": "Ça marche.", "ja": "動作する。"}}
    assert shape_problems(good, procs, figs) == []
    for change in ({"id": "Fv.Fix"}, {"id": "zz.fix"}, {"origin": "guide"}, {"tr": ""},
                   {"procedure": "FV-9"}, {"figures": ["FV-7.nope"]},
                   {"statement": {"en": "It works.", "fr": "It works.", "ja": "動作する。"}},
                   {"statement": {"en": "It works. It really does.", "fr": "Oui.",
                                  "ja": "動作する。"}},
                   {"statement": {"en": "It works.", "fr": "Oui.", "ja": "works."}}):
        assert shape_problems({**good, **change}, procs, figs), change


def test_anchor_reader_sees_block_and_inline_anchors_only():
    text = "[#fv-7]\n== FV-7: x\n[#what-it-checks.role]\n== What\n|[[ja.row]]Japanese\n== Plain\n"
    assert anchors(text) == {"fv-7", "what-it-checks", "ja.row"}
