"""Verdicts a reader can trust at a glance (issue 36), checked in the built site with headless
Chromium, in the three editions:

* on the ledger page, at 1,400 px and at 390 px, the claim and the verdict of each of the
  first ten rows are both inside the screen without scrolling sideways;
* every chapter page that tests a claim opens with its verdict block (nothing of the page's
  own comes before it);
* no claim is cut or shows a raw cross-reference: every claim link of the ledger reads the
  whole statement of docs/data/claims.yaml in the page's language, and no page shows a raw
  ``page.adoc#anchor`` target.

Run after a site build, e.g. TR4947_SITE_BUILT=1 pytest tests/site/test_ledger_glance.py."""
from __future__ import annotations

import re

import pytest

from tr4947.results.claims import load_claims

from ..support.chromium import settled

pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.browser

EDITIONS = {"": "en", "fr": "fr", "ja": "ja"}
CHAPTERS = sorted({c["page"] for c in load_claims()})


def open_page(browser, site, edition: str, name: str, width: int):
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    page.goto((site / "tr4947" / edition / f"{name}.html").as_uri(), wait_until="load")
    settled(page)
    return context, page


def plain(s: str) -> str:
    return " ".join(s.replace("\u2019", "'").replace("\u00a0", " ").replace("\u202f", " ")
                    .split())


@pytest.mark.parametrize("edition", list(EDITIONS))
@pytest.mark.parametrize("width", [1400, 390])
def test_claim_and_verdict_side_by_side_without_scrolling(browser, site, edition, width):
    context, page = open_page(browser, site, edition, "ledger", width)
    try:
        rows = page.evaluate("""() => {
            const table = document.querySelector('table.ledger');
            if (!table) return null;
            return [...table.querySelectorAll('tbody tr')].slice(0, 10).map(tr => {
                const cell = tr.querySelector('td');
                const a = cell && cell.querySelector('a[href]');
                const v = cell && cell.querySelector('[class*="verdict-"]');
                const box = e => { if (!e) return null; const r = e.getBoundingClientRect();
                                   return [r.left, r.right, r.width]; };
                return {claim: box(a), verdict: box(v), text: a ? a.textContent : ''};
            });
        }""")
        inner = page.evaluate("() => window.innerWidth")
    finally:
        context.close()
    assert rows, f"{EDITIONS[edition]}: no ledger table on the ledger page"
    assert len(rows) == 10
    for r in rows:
        for what in ("claim", "verdict"):
            box = r[what]
            assert box, f"{EDITIONS[edition]} {width}px: a row without its {what}: {r['text']}"
            left, right, w = box
            assert w > 0 and left >= 0 and right <= inner + 0.5, \
                f"{EDITIONS[edition]} {width}px: the {what} of '{r['text'][:50]}' is off screen " \
                f"({left:.0f}-{right:.0f} of {inner})"


@pytest.mark.parametrize("edition", list(EDITIONS))
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_chapter_opens_with_its_verdict_block(browser, site, edition, chapter):
    context, page = open_page(browser, site, edition, chapter, 1400)
    try:
        before = page.evaluate("""() => {
            const doc = document.querySelector('article.doc') || document.querySelector('.doc');
            const v = doc && doc.querySelector('.verdicts');
            if (!v) return null;
            const earlier = [...doc.querySelectorAll('p, h2, h3, table, pre')].filter(e =>
                !v.contains(e) && !e.closest('h1') &&
                (e.compareDocumentPosition(v) & Node.DOCUMENT_POSITION_FOLLOWING));
            return earlier.map(e => e.tagName + ': ' + e.textContent.slice(0, 60));
        }""")
    finally:
        context.close()
    assert before is not None, f"{EDITIONS[edition]}/{chapter}: no verdict block"
    assert before == [], f"{EDITIONS[edition]}/{chapter}: before the verdict block: {before}"


@pytest.mark.parametrize("edition", list(EDITIONS))
def test_every_claim_reads_whole_and_no_raw_xref_shows(browser, site, edition):
    lang = EDITIONS[edition]
    statements = {plain(c["statement"][lang]) for c in load_claims()}
    context, page = open_page(browser, site, edition, "ledger", 1400)
    try:
        links = page.evaluate("""() => [...document.querySelectorAll('table.ledger tbody tr')]
            .map(tr => { const a = tr.querySelector('td a[href]');
                         return a ? a.textContent : ''; })""")
    finally:
        context.close()
    assert len(links) == len(statements)
    cut = [x for x in links if plain(x) not in statements]
    assert not cut, f"{lang}: claims that do not read whole: {cut[:3]}"
    raw = []
    shown = re.compile(r">[^<]*\b[\w-]+\.adoc#[\w-]+")
    for html in sorted((site / "tr4947" / edition).glob("*.html")):
        body = html.read_text().split('<article class="doc">', 1)[-1]
        body = re.sub(r"<(pre|code)[^>]*>.*?</\1>", "", body, flags=re.S)
        if shown.search(body):
            raw.append(f"{html.name}: {shown.search(body).group(0)[:80]}")
    assert not raw, f"{lang}: a raw cross-reference shows: {raw}"
