"""The French and Japanese editions are the English guide translated, not rewritten: every
page exists in each edition with the same includes (snippets, result partials), anchors,
results markers, listings and cross-reference targets, in the same order, so that one runbook
run serves all three editions and the language switcher always lands on the same chapter.
Each edition's component descriptor names the UI's words."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from .conftest import MODULE, REPO

EDITIONS = {"fr": REPO / "docs" / "fr", "ja": REPO / "docs" / "ja"}
PAGES = sorted(p.name for p in (MODULE / "pages").glob("*.adoc"))

KEPT_LINE = re.compile(r"^(include::.*|//\s*results:.*|\[#[\w-]+\]|:notebook:.*)$")
XREF = re.compile(r"xref:([^\[\s]+)\[")
JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


def skeleton(text: str) -> dict[str, list]:
    """What a translation must keep: kept lines, listing blocks (verbatim), the number of
    literal blocks (mermaid labels are translated), xref targets, heading levels with the
    procedure ID of a procedure title."""
    kept, listings, literal, xrefs, headings = [], [], 0, [], []
    fence, block = None, []
    for line in text.splitlines():
        s = line.rstrip()
        if fence:
            if s == fence:
                if fence.startswith("-"):
                    listings.append("\n".join(block))
                fence, block = None, []
            else:
                block.append(s)
            continue
        if re.fullmatch(r"-{4,}|\.{4,}", s):
            fence = s
            literal += s.startswith(".")
            continue
        if KEPT_LINE.match(s):
            kept.append(s)
        xrefs += XREF.findall(s)
        m = re.match(r"^(=+)\s+([A-Z]{2,5}-\d+[a-z]?:)?", s)
        if m:
            headings.append((len(m.group(1)), m.group(2) or ""))
    return {"kept lines": kept, "listings": listings, "literal blocks": literal,
            "xref targets": xrefs, "headings": headings}


def test_every_edition_has_every_page_and_no_other():
    for lang, root in EDITIONS.items():
        have = sorted(p.name for p in (root / "modules/ROOT/pages").glob("*.adoc"))
        assert have == PAGES, f"{lang}: pages differ from the English edition's"


@pytest.mark.parametrize("lang", EDITIONS)
@pytest.mark.parametrize("page", PAGES)
def test_a_translated_page_keeps_the_english_skeleton(lang, page):
    en = skeleton((MODULE / "pages" / page).read_text(encoding="utf-8"))
    tr_file = EDITIONS[lang] / "modules/ROOT/pages" / page
    tr = skeleton(tr_file.read_text(encoding="utf-8"))
    for part, value in en.items():
        assert tr[part] == value, f"{lang}/{page}: {part} differ from the English page's"


@pytest.mark.parametrize("lang", EDITIONS)
def test_the_nav_lists_the_same_chapters_in_the_same_order(lang):
    en = XREF.findall((MODULE / "nav.adoc").read_text(encoding="utf-8"))
    tr = XREF.findall((EDITIONS[lang] / "modules/ROOT/nav.adoc").read_text(encoding="utf-8"))
    assert tr == en


def test_the_japanese_edition_is_japanese():
    """A page left in English would pass the skeleton test: each Japanese page's prose holds
    Japanese, and not one of its paragraphs is an English paragraph of the source page."""
    for page in PAGES:
        text = (EDITIONS["ja"] / "modules/ROOT/pages" / page).read_text(encoding="utf-8")
        assert len(JAPANESE.findall(text)) > 200, f"ja/{page}: hardly any Japanese"


def test_no_paragraph_is_left_untranslated():
    for lang, root in EDITIONS.items():
        for page in PAGES:
            en = (MODULE / "pages" / page).read_text(encoding="utf-8")
            tr = (root / "modules/ROOT/pages" / page).read_text(encoding="utf-8")
            prose = {p for p in re.split(r"\n\s*\n", en) if len(p.split()) > 25
                     and not re.search(r"^(----|\.\.\.\.|\||include::)", p, re.M)}
            left = [p[:80] for p in prose if p in tr]
            assert not left, f"{lang}/{page}: English paragraph(s) left as they were: {left}"


@pytest.mark.parametrize("descriptor", [REPO / "antora.yml", *(r / "antora.yml" for r in
                                                                EDITIONS.values())],
                         ids=lambda p: str(p.relative_to(REPO)))
def test_each_edition_names_its_ui_words(descriptor):
    """The words around and inside results come from the renderer's message catalogues
    (tests/unit/test_results_i18n.py); the UI's words and the PDF's title page from here."""
    attrs = yaml.safe_load(descriptor.read_text(encoding="utf-8"))["asciidoc"]["attributes"]
    for key in ("page-lang", "page-ui-search", "page-ui-toc", "page-ui-language",
                "page-ui-site-title", "pdf-edition", "pdf-disclaimer"):
        assert attrs.get(key), f"{descriptor}: no {key}"
