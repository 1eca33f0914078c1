"""One story from the ledger to the conclusion (issue 36): the home page's findings and the
conclusion say nothing the verdict records do not support.

Every paragraph (or list) of the home page's "What it found" section and of the conclusion is
preceded by an annotation naming the ledger rows it rests on and the verdict it states for
each:

    // ledger: cpu.rise=differs guide.rec-copy-vs-remount=reproduced eff.ratio=unshown

A verdict is a word of the ledger (reproduced, reproduced-on-lab-model, consistent-arithmetic,
differs, not-reproducible-at-lab-scale, not-measured) or a group: ``agrees`` (reproduced,
reproduced-on-lab-model or consistent-arithmetic) and ``unshown`` (not reproducible at lab
scale or not measured). ``// ledger: none`` marks a paragraph that states no result. The
test fails when a paragraph has no annotation, when its text does not link each row it names
(``xref:ledger.adoc#claim-<id>``), or when the lab's verdict record for a row is not what the
paragraph states: a sentence cannot call a benefit shown that the ledger marks otherwise.
The French and Japanese pages carry the same annotations and are checked the same way."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tr4947.results import claims, ledger

from .conftest import REPO

EDITIONS = {"en": REPO / "docs" / "modules" / "ROOT" / "pages",
            "fr": REPO / "docs" / "fr" / "modules" / "ROOT" / "pages",
            "ja": REPO / "docs" / "ja" / "modules" / "ROOT" / "pages"}
GROUPS = {"agrees": {"reproduced", "reproduced-on-lab-model", "consistent-arithmetic"},
          "unshown": {"not-reproducible-at-lab-scale", "not-measured"}}
ANNOTATION = re.compile(r"^//\s*ledger:\s*(.*)$")
ROW_LINK = re.compile(r"xref:ledger\.adoc#(claim-[\w-]+)\[")


def lab_verdicts() -> dict[str, str]:
    docs = [json.loads(f.read_text()) for f in sorted((REPO / "results" / "lab").glob("*.json"))]
    return {r.claim["id"]: r.verdicts["lab"].verdict
            for r in ledger.rows(claims.load_claims(), docs) if "lab" in r.verdicts}


def blocks(text: str) -> list[tuple[str | None, str]]:
    """(annotation or None, text) for each prose block: blocks are separated by blank lines;
    headings, attribute lines, includes, comments and block delimiters are not prose."""
    out = []
    for chunk in re.split(r"\n\s*\n", text):
        lines = [x for x in chunk.splitlines() if x.strip()]
        note = next((m.group(1).strip() for x in lines if (m := ANNOTATION.match(x))), None)
        prose = [x for x in lines if not re.match(r"^(//|=|:|include::|\[|----|====|\.\S)", x)]
        if prose:
            out.append((note, "\n".join(prose)))
    return out


def story(lang: str) -> list[tuple[str, str | None, str]]:
    """(where, annotation, text) for the findings section and the conclusion's body."""
    index = (EDITIONS[lang] / "index.adoc").read_text()
    m = re.search(r"\[#findings\]\n==[^\n]*\n(.*?)(?=\n\[#|\n== )", index, re.S)
    assert m, f"{lang}/index.adoc: no [#findings] section"
    conclusion = (EDITIONS[lang] / "conclusion.adoc").read_text()
    body = conclusion.split("\n\n", 1)[1]
    return ([(f"{lang}/index.adoc#findings", n, t) for n, t in blocks(m.group(1))]
            + [(f"{lang}/conclusion.adoc", n, t) for n, t in blocks(body)])


def parse(note: str) -> dict[str, str]:
    if note == "none":
        return {}
    out = {}
    for part in note.split():
        claim, _, word = part.partition("=")
        assert word, f"'{part}': a ledger row and its verdict, claim=verdict"
        out[claim] = word
    return out


@pytest.mark.parametrize("lang", list(EDITIONS))
def test_every_paragraph_names_its_ledger_rows(lang):
    known = {c["id"] for c in claims.load_claims()}
    problems = []
    for where, note, text in story(lang):
        if note is None:
            problems.append(f"{where}: no '// ledger:' annotation before: {text[:80]}")
            continue
        rows = parse(note)
        unknown = set(rows) - known
        linked = set(ROW_LINK.findall(text))
        wanted = {ledger.anchor(c) for c in rows}
        if unknown:
            problems.append(f"{where}: unknown ledger rows {sorted(unknown)}")
        if linked != wanted:
            problems.append(f"{where}: the text links {sorted(linked)} but the annotation "
                            f"names {sorted(wanted)}: {text[:80]}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("lang", list(EDITIONS))
def test_no_paragraph_states_a_verdict_the_ledger_does_not_give(lang):
    verdicts = lab_verdicts()
    wrong = []
    for where, note, text in story(lang):
        for claim, word in parse(note or "none").items():
            got = verdicts.get(claim)
            allowed = GROUPS.get(word, {word})
            if got not in allowed:
                wrong.append(f"{where}: states {claim} {word}, the ledger says {got}: "
                             f"{text[:80]}")
    assert not wrong, "\n".join(wrong)


def test_the_three_editions_tell_the_same_story():
    en = [n for _, n, _ in story("en")]
    for lang in ("fr", "ja"):
        assert [n for _, n, _ in story(lang)] == en, lang


def test_the_annotation_catches_a_benefit_the_ledger_marks_otherwise(monkeypatch):
    """The check itself: a finding that calls the CPU saving shown is refused."""
    verdicts = {"cpu.one-third": "differs"}
    note = parse("cpu.one-third=agrees")
    assert any(verdicts[c] not in GROUPS.get(w, {w}) for c, w in note.items())


PAGES_WITH_CLAIMS = sorted({c["page"] for c in claims.load_claims()})


@pytest.mark.parametrize("lang", list(EDITIONS))
@pytest.mark.parametrize("page", PAGES_WITH_CLAIMS)
def test_every_chapter_with_claims_opens_with_its_verdict_block(lang, page):
    """The verdict block comes first: right after the page's title and attributes, before
    any prose or section."""
    text = (EDITIONS[lang] / f"{page}.adoc").read_text()
    head = []
    for line in text.splitlines()[1:]:
        if line.startswith(":") or not line.strip():
            continue
        head.append(line)
        if len(head) == 1:
            break
    assert head and head[0] == f"include::partial$results/{page}/verdicts.adoc[opts=optional]", \
        f"{lang}/{page}.adoc does not open with its verdict block: {head[:1]}"
