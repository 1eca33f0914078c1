"""snippets/ is the single source of every command and configuration file: pages show them
(include::example$...) and notebooks execute them. Two ways to break that are caught here: a
command typed by hand into a procedure section of a page, and a snippet no notebook runs
(a page would show something nothing ever executed)."""
from __future__ import annotations

import re

import nbformat

from tr4947.runbook import chapters, inputs

from .conftest import PAGES, SNIPPETS, expected, snippet_files

CHAPTERS, PROCEDURES, _SOURCE = expected()
LISTING_START = re.compile(r"^\[(source|listing)\b[^\]]*\]\s*$")


def hand_typed_listings(page_text: str) -> list[str]:
    """Listing blocks inside procedure sections ('== ID: ...' up to the next '== ') whose
    body is anything but include::example$ lines."""
    problems, section = [], None
    lines = page_text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r"^==\s+([A-Z]{2,4}-\d+):", line)
        if m:
            section = m.group(1)
        elif re.match(r"^==\s", line):
            section = None
        if section and LISTING_START.match(line) and i + 1 < len(lines) \
                and re.fullmatch(r"-{4,}|\.{4,}", lines[i + 1].strip()):
            fence = lines[i + 1].strip()
            j = i + 2
            body = []
            while j < len(lines) and lines[j].strip() != fence:
                body.append(lines[j])
                j += 1
            typed = [b for b in body if b.strip() and not b.startswith("include::example$")]
            if typed:
                problems.append(f"{section}: {typed[0].strip()[:80]}")
            i = j
        i += 1
    return problems


def test_procedure_sections_show_only_snippets():
    found = {p.name: hand_typed_listings(p.read_text(encoding="utf-8"))
             for p in sorted(PAGES.glob("*.adoc"))}
    found = {k: v for k, v in found.items() if v}
    assert not found, f"listings typed into procedure sections instead of snippets/: {found}"


def test_every_snippet_is_executed_by_a_notebook():
    used = set()
    for nb in chapters.notebooks():
        used |= {str(p.relative_to(SNIPPETS))
                 for p in inputs.snippets_used(nbformat.read(nb, as_version=4))}
    never_run = [s for s in snippet_files() if s not in used]
    assert not never_run, f"snippets that no notebook in notebooks/ executes: {never_run}"


# --- the checks themselves must be able to fail ---------------------------------------------

def test_hand_typed_listing_is_found_only_in_procedure_sections():
    page = ("== Intro\n[source,bash]\n----\necho fine here\n----\n"
            "[#fv-1]\n== FV-1: Create\n[source,bash]\n----\n"
            "include::example$functional-validation/FV-1-volume-create.ontap[]\n----\n"
            "[source,bash]\n----\nvolume create -volume typed\n----\n"
            "== Afterwards\n[source,bash]\n----\necho fine again\n----\n")
    assert hand_typed_listings(page) == ["FV-1: volume create -volume typed"]


def test_snippet_use_is_found_by_path_or_by_name():
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell('t.run_snippet("sizing/SIZ-1-formula.txt", "h")'),
        nbformat.v4.new_code_cell('SNIP = "functional-validation/"\n'
                                  't.run_snippet(SNIP + "FV-5-health-check.sh", "h")')])
    names = {p.name for p in inputs.snippets_used(nb)}
    assert "FV-5-health-check.sh" in names
    assert "FV-4-producer-perf.sh" not in names
