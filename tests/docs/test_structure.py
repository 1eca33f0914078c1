"""The guide's structure: chapters in the TR's order, one section per procedure, and
snippets/ as the single, fully used source of what the pages show."""
from __future__ import annotations

import re

import pytest

from .conftest import (MODULE, NAV, PAGES, REPO, SNIPPETS, committed_notebooks, example_includes,
                       expected, guide_nav, guide_pages, nav_pages, nav_sections,
                       notebook_chapters, parse_procedures, section_problems, snippet_files)

CHAPTERS, PROCEDURES, SOURCE = expected()


EDITION_NAVS = {"fr": REPO / "docs" / "fr" / "modules" / "ROOT" / "nav.adoc",
                "ja": REPO / "docs" / "ja" / "modules" / "ROOT" / "nav.adoc"}


def test_nav_is_grouped_as_guide_chapters_says():
    """Understand, validate, performance, operate, reference: the English nav has the groups
    of docs/data/guide-chapters.yaml, with those titles and those pages in that order."""
    assert nav_sections(NAV.read_text(encoding="utf-8")) == guide_nav()


@pytest.mark.parametrize("lang", EDITION_NAVS)
def test_translated_navs_have_the_same_groups(lang):
    """Group titles are translated; the groups and their pages are the English nav's."""
    sections = nav_sections(EDITION_NAVS[lang].read_text(encoding="utf-8"))
    assert [pages for _, pages in sections] == [pages for _, pages in guide_nav()]
    assert all(title for title, _ in sections), f"{lang}: a nav group without a title"


def nav_order_problems(groups: list[tuple[str, list[str]]], chapters: list[str],
                       tr_chapters: list[str]) -> list[str]:
    """Every chapter exactly once across the groups, and the TR's chapters in the TR's order
    within each group ([] when both hold)."""
    flat = [p for _, pages in groups for p in pages]
    problems = [f"{p}: in the nav {flat.count(p)} times" for p in sorted(set(flat))
                if flat.count(p) != 1]
    problems += [f"{p}: not in the nav" for p in chapters if p not in flat]
    problems += [f"{p}: in the nav but not a chapter" for p in flat if p not in chapters]
    for title, pages in groups:
        tr = [p for p in pages if p in tr_chapters]
        if tr != sorted(tr, key=tr_chapters.index):
            problems.append(f"{title}: the TR's chapters out of the TR's order: {tr}")
    return problems


def test_nav_lists_every_chapter_once_in_tr_order_within_groups():
    tr_chapters = [c for c in CHAPTERS if c not in guide_pages()]
    assert nav_order_problems(guide_nav(), CHAPTERS, tr_chapters) == [], f"chapters from {SOURCE}"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_chapter_page_exists(chapter):
    assert (PAGES / f"{chapter}.adoc").is_file()


def test_no_page_outside_the_chapter_list():
    assert sorted(p.stem for p in PAGES.glob("*.adoc")) == sorted(CHAPTERS)


@pytest.mark.parametrize("proc_id", sorted(PROCEDURES))
def test_procedure_has_a_section_on_its_chapter_page(proc_id):
    page = PAGES / f"{PROCEDURES[proc_id]}.adoc"
    assert page.is_file(), f"{proc_id}: chapter page {page.name} missing"
    assert section_problems(page.read_text(encoding="utf-8"), proc_id) == []


def test_every_included_snippet_exists():
    missing = {t: pages for t, pages in example_includes().items()
               if not (SNIPPETS / t).is_file()}
    assert not missing, f"include::example$ targets without a file in snippets/: {missing}"


def test_every_snippet_is_shown_by_a_page():
    used = set(example_includes())
    unused = [s for s in snippet_files() if s not in used]
    assert not unused, f"snippets no page includes: {unused}"


def test_snippets_are_named_after_their_procedure():
    bad = []
    for s in snippet_files():
        chapter, _, name = s.partition("/")
        proc = "-".join(name.split("-")[:2])
        if PROCEDURES.get(proc) != chapter:
            bad.append(s)
    assert not bad, f"expected snippets/<chapter>/<ID>-<slug>.<ext> with ID in that chapter: {bad}"


# --- the checks themselves must be able to fail -------------------------------------------

def test_section_check_reports_missing_and_broken_sections():
    good = "[#fv-1]\n== FV-1: Create the volume\n\ntext\n// results: FV-1\n"
    assert section_problems(good, "FV-1") == []
    assert section_problems("== FV-2: Other\n", "FV-1")            # no section
    assert section_problems(good.replace("[#fv-1]", ""), "FV-1")   # no anchor
    assert section_problems(good.replace("// results: FV-1", ""), "FV-1")  # no marker
    assert section_problems(good + "[#fv-1]\n== FV-1: Again\n", "FV-1")    # duplicate


def test_procedures_parser_reads_both_tables():
    text = ("## Chapters\n\n| page | TR section |\n| --- | --- |\n| index | x |\n| sizing | y |\n\n"
            "## Procedures\n\n| ID | chapter | procedure | published |\n| --- | --- | --- | --- |\n"
            "| SIZ-1 | sizing | formula | table |\n")
    assert parse_procedures(text) == (["index", "sizing"], {"SIZ-1": "sizing"})


def test_nav_parser_keeps_order():
    assert nav_pages("* xref:b.adoc[B]\n* xref:a.adoc#x[A]\n") == ["b", "a"]


def test_nav_sections_parser_reads_titled_lists():
    text = ".Understand\n* xref:index.adoc[O]\n* xref:why.adoc[W]\n\n.Reference\n* xref:errata.adoc[E]\n"
    assert nav_sections(text) == [("Understand", ["index", "why"]), ("Reference", ["errata"])]


def test_nav_order_check_sees_duplicates_gaps_and_disorder():
    chapters, tr = ["a", "b", "c", "x"], ["a", "b", "c"]
    assert nav_order_problems([("G", ["a", "b"]), ("H", ["x", "c"])], chapters, tr) == []
    assert nav_order_problems([("G", ["b", "a"]), ("H", ["x", "c"])], chapters, tr)   # order
    assert nav_order_problems([("G", ["a", "b"]), ("H", ["x"])], chapters, tr)        # missing
    assert nav_order_problems([("G", ["a", "b", "a"]), ("H", ["x", "c"])], chapters, tr)
    assert nav_order_problems([("G", ["a", "b", "y"]), ("H", ["x", "c"])], chapters, tr)


def test_every_notebook_is_linked_from_its_chapter_page():
    """Each chapter page links the notebook that runs it (an Antora attachment: a missing
    file is a build warning, so the link is checked by the site build too)."""
    missing = []
    for nb in committed_notebooks():
        for chapter in notebook_chapters(nb.read_text(encoding="utf-8")):
            link = f"xref:attachment$notebooks/{nb.name}["
            if link not in (PAGES / f"{chapter}.adoc").read_text(encoding="utf-8"):
                missing.append(f"{chapter}.adoc should link {link}...]")
    assert not missing, missing


def test_every_notebook_is_offered_to_run_on_its_chapter_page():
    """Download, step by step in JupyterLab, or whole: the run-notebook partial, set for this
    notebook, on the chapter page whose results it records."""
    partial = (MODULE / "partials" / "run-notebook.adoc").read_text(encoding="utf-8")
    assert "xref:attachment$notebooks/{notebook}.ipynb[" in partial
    assert "make notebook CHAPTER={notebook}" in partial and "tr4947 runbook {notebook}" in partial
    missing = []
    for nb in committed_notebooks():
        offer = f":notebook: {nb.stem}\ninclude::partial$run-notebook.adoc[]"
        for chapter in notebook_chapters(nb.read_text(encoding="utf-8")):
            if offer not in (PAGES / f"{chapter}.adoc").read_text(encoding="utf-8"):
                missing.append(f"{chapter}.adoc should offer {nb.stem}")
    assert not missing, missing


def test_notebook_chapter_parser():
    assert notebook_chapters('{"metadata": {"tr4947": {"chapter": "aws-fsx"}}}') == {"aws-fsx"}
    assert notebook_chapters('{"metadata": {}}') == set()


XREF_TO_SECTION_WITHOUT_TEXT = re.compile(r"xref:[\w./-]+\.adoc#[\w-]+\[\]")


def test_xrefs_to_another_pages_section_have_link_text():
    """Asciidoctor cannot fetch a section title from another page: an xref like
    xref:page.adoc#section[] is rendered as the raw 'page.adoc#section'."""
    bad = [f"{p.name}: {m}" for p in sorted(PAGES.glob("*.adoc"))
           for m in XREF_TO_SECTION_WITHOUT_TEXT.findall(p.read_text(encoding="utf-8"))]
    assert not bad, bad


def test_empty_text_xref_pattern():
    assert XREF_TO_SECTION_WITHOUT_TEXT.findall("see xref:errata.adoc#kafka-4[] and")
    assert not XREF_TO_SECTION_WITHOUT_TEXT.findall("xref:errata.adoc#kafka-4[Kafka 4] xref:errata.adoc[]")


def test_lab_kafka_version_statements_match_the_pinned_version():
    """Every 'Kafka 4.x.y' the pages state is the version the lab actually runs (lab/kafka/pom.xml)."""
    from tr4947 import paths
    pinned = paths.kafka_version()
    stated = {v for p in PAGES.glob("*.adoc")
              for v in re.findall(r"Kafka (4\.\d+\.\d+)", p.read_text(encoding="utf-8"))}
    assert stated and stated == {pinned}, f"pages state {sorted(stated)}, the lab pins {pinned}"
