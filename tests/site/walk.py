"""Every page of the three editions opened once in the session's Chromium and read for every
test that looks at pages as they open (test_browser, test_readable, test_glance), instead of
one walk per test: loading and laying out some 190 pages is most of what those tests cost.

A page is read once it has settled (ui/js/site.js's <html data-settled>): where its title is,
its errors (console, script, failed requests), how wide it is, its tables, its diagrams,
images, listings and links; last, with every ``details`` opened, the words its furniture shows
(CHROME), since opening them moves the page."""
from __future__ import annotations

from pathlib import Path

from ..support.chromium import settled

EDITIONS = {"": "en", "fr": "fr", "ja": "ja"}

#: Where the page's title is once settled: the navigation scrolls itself to the current
#: chapter, never the window.
TITLE = """() => {
    const h = document.querySelector('h1.page'), b = h.getBoundingClientRect()
    const header = document.querySelector('.header').getBoundingClientRect().bottom
    const nav = document.querySelector('#nav'), cur = nav.querySelector('.is-current')
    const n = nav.getBoundingClientRect(), c = cur ? cur.getBoundingClientRect() : null
    return {scrollY: window.scrollY, top: b.top, bottom: b.bottom, header,
            navItemInView: !c || (c.top >= n.top - 1 && c.bottom <= n.bottom + 1)}}"""

#: Each table frame: does it overflow its room, does it say so, where is it.
TABLES = """() => [...document.querySelectorAll('article.doc .table-frame')].map(f => {
    const s = f.querySelector('.table-scroll'), cue = f.querySelector('.scroll-cue').getBoundingClientRect()
    const t = f.querySelector('table'), r = f.getBoundingClientRect()
    return {over: s.scrollWidth > s.clientWidth + 1, cue: cue.width > 0 && cue.height > 0,
            shown: r.width > 0 && r.height > 0, right: r.right, cards: getComputedStyle(t).display === 'block',
            title: ((f.querySelector('.table-title') || t.querySelector('th') || {}).textContent || '').slice(0, 60)}})"""

#: Diagrams drawn (a diagram mermaid cannot parse still becomes an SVG: its error diagram),
#: images loaded, a copy button per listing, the links.
CONTENT = """() => {
    const boxes = [...document.querySelectorAll('.mermaid')]
    return {
      diagrams: boxes.length, drawn: boxes.filter(e => e.querySelector('svg')).length,
      diagram_errors: boxes.filter(e => e.querySelector('svg[aria-roledescription=error]')
                                        || /Syntax error/.test(e.textContent)).length,
      broken: [...document.images].filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src),
      listings: document.querySelectorAll('.listingblock pre').length,
      buttons: document.querySelectorAll('.listingblock .copy-button').length,
      hrefs: [...document.querySelectorAll('a[href]')].map(a => a.href),
      page_width: document.documentElement.scrollWidth}}"""

#: Each drawn diagram's smallest text as shown (px), its natural width, and what it holds.
DIAGRAMS = """() => [...document.querySelectorAll('article.doc .mermaid svg')].map(svg => {
    const vb = svg.viewBox.baseVal, r = svg.getBoundingClientRect(), scale = r.width / vb.width
    const sizes = [...svg.querySelectorAll('text, foreignObject span, foreignObject div, foreignObject p')]
        .filter(t => t.textContent.trim()).map(t => parseFloat(getComputedStyle(t).fontSize) * scale)
    return {min: Math.min(...sizes), n: sizes.length, w: r.width, natural: vb.width,
            actors: svg.querySelectorAll('text.actor').length, messages: svg.querySelectorAll('text.messageText').length,
            nodes: svg.querySelectorAll('g.node').length, edges: svg.querySelectorAll('path.flowchart-link, .edgePaths path').length}})"""

#: The words the page's frame and the result blocks' furniture add (header, footer, toolbars,
#: scroll cues, labels drawn by CSS, folds, the provenance badge and its details' labels),
#: attributes included. Read with every ``details`` open.
CHROME = """() => {
    document.querySelectorAll('details').forEach(d => d.open = true)
    const seen = []
    const add = (where, t) => { if (t && t.trim()) seen.push([where, t.trim()]) }
    document.querySelectorAll('.header, .footer, .toc, .pagination, .code-toolbar, .scroll-cue,'
        + ' details.transcript-fold > summary, details.provenance-details > .title, details.provenance-details summary,'
        + ' .provenance-details td.hdlist1, .paragraph.provenance, .transcript-env > .title, .nav-title')
      .forEach(e => add(e.className || e.tagName, e.innerText || e.textContent))
    document.querySelectorAll('[title], [aria-label], [placeholder]').forEach(e => {
      for (const a of ['title', 'aria-label', 'placeholder']) add(a, e.getAttribute(a)) })
    document.querySelectorAll('.exampleblock.result > .title, .paragraph.provenance p, .paragraph.source-label p,'
        + ' .table-frame.tr-figure > .table-title, .admonitionblock td.icon i')
      .forEach(e => add('::before', getComputedStyle(e, '::before').content.replace(/^"|"$/g, '')))
    document.querySelectorAll('.table-frame.tr-figure > .table-title')
      .forEach(e => add('::after', getComputedStyle(e, '::after').content.replace(/^"|"$/g, '')))
    return seen }"""


def site_pages(site: Path, edition: str) -> list[Path]:
    """An edition's pages ("" is English, at the component's root)."""
    root = site / "tr4947"
    return sorted((root / edition).glob("*.html")) if edition else sorted(root.glob("*.html"))


def walk(browser, site: Path, width: int, height: int = 900) -> dict[tuple[str, str], dict]:
    """(edition, page file name) -> what the page showed at ``width`` x ``height``: title,
    problems (script errors), console (console errors), failed (requests), page_width,
    tables (each with its page), diagrams, drawn, diagram_errors, diagram_text (DIAGRAMS),
    broken (images), listings, buttons, hrefs, chrome."""
    context = browser.new_context(viewport={"width": width, "height": height})
    seen: dict[tuple[str, str], dict] = {}
    try:
        for edition, lang in EDITIONS.items():
            for path in site_pages(site, edition):
                page = context.new_page()
                problems, console, failed = [], [], []
                page.on("pageerror", lambda e, p=problems: p.append(str(e)))
                page.on("console", lambda m, c=console: c.append(m.text)
                        if m.type == "error" else None)
                page.on("requestfailed", lambda r, f=failed: f.append(r.url))
                page.goto(path.as_uri(), wait_until="load")
                settled(page)
                seen[(edition, path.name)] = {
                    "title": page.evaluate(TITLE),
                    "tables": [{"page": f"{lang}/{path.name}", **t} for t in page.evaluate(TABLES)],
                    **page.evaluate(CONTENT),
                    "diagram_text": page.evaluate(DIAGRAMS),
                    "chrome": page.evaluate(CHROME),
                    "problems": problems, "console": console, "failed": failed}
                page.close()
    finally:
        context.close()
    return seen
