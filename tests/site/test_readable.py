"""Results a French or Japanese reader, a phone and a printer can read (issue 28), checked in
Debian's headless Chromium at 1,400 px and 390 px in the three editions: what the reader sees
is measured (element boxes, computed styles, pixels of screenshots), not the HTML's wording.

Run after a site build, e.g. TR4947_SITE_BUILT=1 pytest tests/site/test_readable.py."""
from __future__ import annotations

import io
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from tr4947 import paths
from tr4947.results.i18n import Translator, has_words, record_strings

from ..support.chromium import settled

playwright = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.browser

EDITIONS = ["", "fr", "ja"]
WIDTHS = [1400, 390]
LANG = {"": "en", "fr": "fr", "ja": "ja"}
CASES = [pytest.param(e, w, id=f"{LANG[e]}-{w}") for e in EDITIONS for w in WIDTHS]


class Page:
    """One page of the built site in a fresh context at a given width; problems (console
    errors, failed requests) are collected."""

    def __init__(self, browser, site, edition, name, width, hash=""):
        self.context = browser.new_context(viewport={"width": width, "height": 900})
        self.page = self.context.new_page()
        self.problems = []
        self.page.on("console", lambda m: self.problems.append(m.text) if m.type == "error"
                     else None)
        self.page.on("pageerror", lambda e: self.problems.append(str(e)))
        self.page.on("requestfailed", lambda r: self.problems.append(f"failed: {r.url}"))
        self.url = (site / "tr4947" / edition / f"{name}.html").as_uri() + hash
        self.page.goto(self.url, wait_until="load")
        settled(self.page)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.context.close()

    def js(self, expr, arg=None):
        return self.page.evaluate(expr, arg)


def image(png: bytes):
    """A screenshot as an array of RGB pixels (rows, columns, 3)."""
    import numpy
    from PIL import Image
    return numpy.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)


def pixels_near(img, rgb, tol=12) -> int:
    """How many pixels of an image are within ``tol`` of a colour."""
    import numpy
    return int((numpy.abs(img - numpy.array(rgb)) <= tol).all(axis=2).sum())


def colourful(img) -> int:
    """How many pixels are strongly coloured (a series' line or a legend key, not text)."""
    return int((img.max(axis=2) - img.min(axis=2) > 80).sum())


# --- 1. results in the reader's language --------------------------------------------------------
class _ResultText(HTMLParser):
    """The words of a page's result blocks, without commands and their output (shown as
    they ran, in every edition)."""

    SKIP = ("pre", "code", "script", "style")

    def __init__(self):
        super().__init__()
        self.depth, self.skip, self.text = 0, 0, []
        self.stack = []

    def handle_starttag(self, tag, attrs):
        cls = dict(attrs).get("class") or ""
        result = "exampleblock" in cls.split() and "result" in cls.split()
        self.stack.append((tag, result, tag in self.SKIP or "transcript-env" in cls))
        self.depth += result
        self.skip += self.stack[-1][2]

    def handle_endtag(self, tag):
        while self.stack:
            t, result, skip = self.stack.pop()
            self.depth -= result
            self.skip -= skip
            if t == tag:
                break

    def handle_data(self, data):
        if self.depth and not self.skip:
            self.text.append(data)


def english_result_strings(lang: str) -> set[str]:
    """Recorded strings with words whose translation differs from the English: if one of
    them shows on a French or Japanese page, that page shows untranslated result text."""
    tr = Translator(lang)
    found = set()
    for f in (paths.REPO / "results").glob("*/*.json"):
        for _, s in record_strings(json.loads(f.read_text())):
            if len(s) >= 12 and has_words(s) and tr.text(s) != s:
                found.add(s)
    return found


@pytest.mark.parametrize("edition", ["fr", "ja"])
def test_no_english_result_text_on_any_translated_page(site, edition):
    english = english_result_strings(edition)
    assert len(english) > 200
    shown_somewhere = 0
    bad = {}
    for page in sorted((site / "tr4947" / edition).glob("*.html")):
        p = _ResultText()
        p.feed(page.read_text())
        text = " ".join(" ".join(p.text).split()).replace("\u2019", "'")
        shown_somewhere += bool(text)
        left = sorted(s for s in english if " ".join(s.split()) in text)
        if left:
            bad[page.name] = left[:3]
    assert shown_somewhere >= 8, "no result blocks found on the pages"
    assert bad == {}


# The words of the page's chrome (header, footer, toolbars, cues, labels drawn by CSS, folds,
# provenance) in English: none of them may show on a French or Japanese page.
ENGLISH_CHROME = ["Search the guide", "On this page", "Previous", "Next", "Chapters", "Copy",
                  "Copy to clipboard", "Wrap lines", "Do not wrap", "Scroll sideways",
                  "An executable rendering", "Results marked", "come from an embedded lab",
                  "LAB RESULT", "COMPUTED", "produced by", "figure published by NetApp",
                  "more lines", "more periods", "lines of output not printed",
                  "Open the diagram", "Close", "Provenance details", "Inputs digest",
                  "Parameters", "Embedded lab", "Set for this run on the lab"]


@pytest.mark.parametrize("edition", ["fr", "ja"])
def test_no_english_chrome_folds_or_provenance_labels_on_any_translated_page(walked, site, edition):
    """Every word the page's frame and the result blocks' furniture add is the edition's:
    header, footer, toolbars, scroll cues, the labels CSS draws, folds ("N more lines", the
    benchmark excerpts' "N more periods"), the provenance badge and the labels of its
    details. Measured in the browser (what a reader sees, attributes included)."""
    bad = {}
    for path in sorted((site / "tr4947" / edition).glob("*.html")):
        seen = walked[(edition, path.name)]["chrome"]      # tests/site/walk.py's CHROME
        found = sorted({f"{where}: {text[:80]}" for where, text in seen for w in ENGLISH_CHROME
                        if re.search(r"(?<![\w-])" + re.escape(w) + r"(?![\w-])", text)})
        if found:
            bad[path.name] = found[:4]
    assert bad == {}


@pytest.mark.parametrize("edition", ["fr", "ja"])
def test_provenance_labels_are_the_editions(site, edition):
    """The labels of a result's provenance details are the catalogue's, not the English ones
    (where the two differ), on every page that has results."""
    tr = Translator(edition)
    english = set()
    for page in sorted((site / "tr4947").glob("*.html")):
        english |= set(re.findall(r'<td class="hdlist1">\s*([^<]+?)\s*</td>', page.read_text()))
    assert {"Run", "Target", "Commit"} <= english
    wrong = {}
    for page in sorted((site / "tr4947" / edition).glob("*.html")):
        labels = set(re.findall(r'<td class="hdlist1">\s*([^<]+?)\s*</td>', page.read_text()))
        left = sorted(l for l in labels & english if tr._(l) != l)
        if left:
            wrong[page.name] = left
    assert wrong == {}


@pytest.mark.parametrize("edition", ["fr", "ja"])
def test_provenance_versions_row_names_are_the_editions(site, edition):
    english_names = ("stand-in", "client layer", "passthrough")
    found = set()
    for page in sorted((site / "tr4947" / edition).glob("*.html")):
        for row in re.findall(r'<td class="hdlist2">\s*<p>(.*?)</p>', page.read_text(), re.S):
            found |= {w for w in english_names if w in row}
    assert found == set()


@pytest.mark.parametrize("edition,width", CASES)
def test_results_words_numbers_and_charts_in_the_pages_language(browser, site, edition, width):
    lang = LANG[edition]
    with Page(browser, site, edition, "cpu-utilization", width) as p:
        title = p.js("() => document.querySelector('.exampleblock.result > .title').textContent")
        expect = {"en": "Lab result: CPU-1", "fr": "Résultat du lab\u00a0: CPU-1",
                  "ja": "ラボの結果：CPU-1"}[lang]
        assert title == expect
        cells = p.js("() => [...document.querySelectorAll('.result-table td')].map(t => t.innerText)")
        assert ({"en": "10,000", "fr": "10\u202f000", "ja": "10,000"}[lang]) in cells
        chart = p.page.locator(".exampleblock.result-chart img").first
        alt, src = chart.get_attribute("alt"), chart.get_attribute("src")
        assert re.search(r"\d", alt)
        if lang == "ja":
            assert re.search(r"[\u3040-\u30ff]", alt)
        if lang == "fr":
            assert "en fonction de" in alt
        # Each edition has its own drawing of the chart (its words are in its language).
        own = (Path(urlparse(p.url).path).parent / src).resolve()
        other = site / "tr4947" / ("fr" if lang != "fr" else "ja") / own.relative_to(
            (site / "tr4947" / edition).resolve())
        assert own.read_bytes() != other.read_bytes()
        assert p.problems == []


# --- 2. tables that fit ---------------------------------------------------------------------------
@pytest.mark.parametrize("edition,width", CASES)
def test_tables_fit_or_say_they_scroll(browser, site, edition, width):
    tr = Translator(LANG[edition])
    with Page(browser, site, edition, "preflight", width) as p:
        frames = p.js("""() => [...document.querySelectorAll('article .table-frame')].map(f => {
            const s = f.querySelector('.table-scroll'), cue = f.querySelector('.scroll-cue')
            const c = cue.getBoundingClientRect()
            return {over: s.scrollWidth > s.clientWidth + 1, cue: c.width > 0 && c.height > 0,
                    within: f.getBoundingClientRect().right <= document.documentElement.clientWidth + 1}
        })""")
        assert frames and all(f["within"] for f in frames)
        assert all(f["cue"] == f["over"] for f in frames), frames
        assert p.js("() => document.documentElement.scrollWidth") <= width + 1
        # The audit's Verdict and Fix: right after the broker, inside the visible frame.
        heads = p.js("""() => {
            const t = document.querySelector('.result-table'), s = t.closest('.table-scroll')
            const r = s.getBoundingClientRect()
            return [...t.querySelectorAll('th')].map(th => {
                const b = th.getBoundingClientRect()
                return {text: th.innerText.trim(), visible: b.left >= r.left - 1 && b.right <= r.right + 1}
            })}""")
        names = [h["text"] for h in heads]
        assert names[:4] == [tr.text(x) for x in ("Broker", "Log dir", "Verdict", "Fix")]
        if width == 1400:
            assert all(h["visible"] for h in heads[:4]), heads[:4]
        # Long identifiers may wrap at / _ -: break opportunities, none of them copied.
        assert p.js("() => document.querySelectorAll('.result-table td wbr').length") > 20
        # The first column stays in view when the table scrolls.
        scrolled = p.js("""() => {
            const s = document.querySelector('.result-table').closest('.table-scroll')
            s.scrollLeft = 200
            const c = s.querySelector('td').getBoundingClientRect(), r = s.getBoundingClientRect()
            return Math.abs(c.left - r.left) < 2 || s.scrollLeft === 0}""")
        assert scrolled
        assert p.problems == []


@pytest.mark.parametrize("edition", EDITIONS)
def test_the_home_pages_ledger_shows_every_verdict_without_scrolling(browser, site, edition):
    """Answer first: at 1,400 px the home page's short ledger (the rows that differ, claim
    and verdict in one cell beside what to do) fits its column, so its last column is in
    view on every row; each verdict is a coloured badge, and a differing claim's colour is
    not a reproduced one's (the ledger page has both)."""
    with Page(browser, site, edition, "index", 1400) as p:
        t = p.js("""() => {
            const t = document.querySelector('table.ledger'), s = t.closest('.table-scroll')
            const r = (s || t).getBoundingClientRect(), th = [...t.querySelectorAll('th')].pop()
            const b = th.getBoundingClientRect()
            const bg = c => { const e = document.querySelector('.' + c)
                              return e ? getComputedStyle(e).backgroundColor : null }
            return {over: s ? s.scrollWidth > s.clientWidth + 1 : false,
                    rows: t.tBodies[0].rows.length, last_in_view: b.right <= r.right + 1,
                    badges: [...t.tBodies[0].rows].filter(
                        row => row.cells[0].querySelector('[class^=verdict-]')).length,
                    differs: bg('verdict-differs')}}""")
        assert not t["over"] and t["last_in_view"], t
        assert t["badges"] == t["rows"] > 0, t
        assert t["differs"] and t["differs"] != "rgba(0, 0, 0, 0)", t
        assert p.problems == []
    with Page(browser, site, edition, "ledger", 1400) as p:
        colours = p.js("""() => ['verdict-reproduced', 'verdict-differs'].map(c => {
            const e = document.querySelector('.' + c)
            return e ? getComputedStyle(e).backgroundColor : null})""")
        assert None not in colours and colours[0] != colours[1], colours


def test_the_scroll_cue_is_seen(browser, site):
    """A pixel check: the right edge of a scrolling table is shaded, the left edge not."""
    with Page(browser, site, "", "preflight", 390) as p:
        frame = p.page.locator(".table-frame.is-scrollable").first
        frame.scroll_into_view_if_needed()
        img = image(frame.screenshot())
        h, w = img.shape[:2]
        band = img[h // 3:h - 4]
        assert band[:, w - 6:w - 1].mean() < band[:, 2:7].mean() - 8, \
            "no shade where the table goes on"


# --- 3. charts ------------------------------------------------------------------------------------
def glyph_sizes(svg: str) -> list[float]:
    """Font sizes (px at the drawing's natural width) of the chart's text (glyph paths)."""
    return [float(s) * 100 * 4 / 3 for s in re.findall(
        r'<g transform="translate\([^)]*\) scale\(([\d.]+) -[\d.]+\)"', svg)]


@pytest.mark.parametrize("edition,width", CASES)
def test_charts_are_readable_at_the_pages_width(browser, site, edition, width):
    with Page(browser, site, edition, "aws-cvo", width) as p:
        charts = p.js("""() => [...document.querySelectorAll('.exampleblock.result-chart')].map(c => {
            const shown = [...c.querySelectorAll('img')].filter(i => i.getBoundingClientRect().width > 0)
            const box = c.querySelector(':scope > .content').getBoundingClientRect()
            return shown.map(i => ({src: i.currentSrc || i.src, w: i.getBoundingClientRect().width,
                                    box: box.width, natural: i.naturalWidth}))})""")
        assert len(charts) >= 4
        for shown in charts:
            assert len(shown) == 1, "one drawing of a chart at a time"
            img = shown[0]
            assert ("wide" if width == 1400 else "narrow") in img["src"]
            assert img["w"] <= img["box"] + 1                 # never wider than its column
            svg = Path(unquote(urlparse(img["src"]).path)).read_text()
            sizes = glyph_sizes(svg)
            assert sizes and min(sizes) * img["w"] / img["natural"] >= 11, \
                f"{img['src']}: text {min(sizes) * img['w'] / img['natural']:.1f} px"
        assert p.problems == []


@pytest.mark.parametrize("edition", EDITIONS)
def test_a_charts_legend_and_notes_sit_below_its_plot(browser, site, edition):
    """Measured in the SVG itself: the legend's box starts below the plot area's box; and a
    screenshot shows coloured lines in the plot and coloured legend keys below it."""
    with Page(browser, site, edition, "aws-cvo", 1400) as p:
        img = p.page.locator(".exampleblock.result-chart img:visible").first
        img.scroll_into_view_if_needed()
        src = img.evaluate("i => i.currentSrc")
        shot = image(img.screenshot())
        doc = p.context.new_page()
        doc.goto(src)
        boxes = doc.evaluate("""() => {
            const box = s => { const e = document.querySelector(s); if (!e) return null
                               const b = e.getBBox(); return {y: b.y, bottom: b.y + b.height} }
            return {plot: box('[id$="-patch_2"]'), legend: box('[id$="-legend_1"]')}}""")
        doc.close()
        assert boxes["plot"] and boxes["legend"], boxes
        assert boxes["legend"]["y"] >= boxes["plot"]["bottom"] - 1, boxes
        split = int(shot.shape[0] * boxes["plot"]["bottom"] / doc_height(src))
        assert colourful(shot[:split]) > 200          # the series
        assert colourful(shot[split:]) > 50           # the legend keys


def doc_height(svg_url: str) -> float:
    svg = Path(unquote(urlparse(svg_url).path)).read_text()
    return float(re.search(r'viewBox="0 0 [\d.]+ ([\d.]+)"', svg).group(1))


# --- 4. provenance --------------------------------------------------------------------------------
@pytest.mark.parametrize("edition,width", CASES)
def test_provenance_is_a_short_badge_with_details_behind_a_toggle(browser, site, edition, width):
    with Page(browser, site, edition, "preflight", width) as p:
        badge = p.page.locator(".exampleblock.result .paragraph.provenance p").first
        badge.scroll_into_view_if_needed()
        text = badge.inner_text()
        assert re.search(r"\b[0-9a-f]{7}\b", text) and "2026" in text and "lab" in text
        box = badge.bounding_box()
        line = float(p.js("e => parseFloat(getComputedStyle(e).lineHeight)", badge.element_handle()))
        assert box["height"] <= line * (1.6 if width == 1400 else 3.2), box
        details = p.page.locator(".exampleblock.result details.provenance-details").first
        run = p.js("() => document.querySelector('.provenance-details td.hdlist2').textContent")
        assert not details.evaluate("d => d.open")
        assert not p.page.get_by_text(run.strip(), exact=True).first.is_visible()
        details.locator("summary").click()
        assert p.page.get_by_text(run.strip(), exact=True).first.is_visible()
        # A pixel check: the badge is a light pill on the result's tinted background.
        shot = image(badge.screenshot())
        assert pixels_near(shot, (255, 255, 255), 3) > shot.shape[0] * shot.shape[1] * 0.5
        assert p.problems == []


@pytest.mark.parametrize("edition", EDITIONS)
def test_a_run_that_did_not_hold_its_rate_is_a_visible_warning(browser, site, edition):
    """The warning inside a result block (here FSX-6's, whose RF 3 runs did not hold their
    rate) is an admonition the reader sees, with its orange rule, not a stray paragraph."""
    with Page(browser, site, edition, "aws-fsx", 1400) as p:
        warning = p.page.locator(".exampleblock.result .admonitionblock.warning.load-not-held").first
        warning.scroll_into_view_if_needed()
        assert warning.is_visible()
        shot = image(warning.screenshot())
        assert pixels_near(shot, (0xc2, 0x41, 0x0c), 30) > 100      # the warning's orange rule


# --- 5. transcripts -------------------------------------------------------------------------------
@pytest.mark.parametrize("edition,width", CASES)
def test_transcripts_tell_command_from_output_and_copy_only_the_command(browser, site, edition,
                                                                         width):
    with Page(browser, site, edition, "functional-validation", width) as p:
        t = p.page.locator(".exampleblock.transcript:has(.transcript-env):has(.transcript-cmd)").first
        t.scroll_into_view_if_needed()
        parts = t.evaluate("""t => {
            const cmd = t.querySelector('.transcript-cmd pre'), out = t.querySelector('.transcript-out pre')
            const btn = t.querySelector('.transcript-cmd .copy-button')
            const code = cmd.querySelector('code')
            return {cmd: cmd.innerText, prompt: getComputedStyle(code, '::before').content,
                    select: getComputedStyle(code, '::before').userSelect,
                    cmdColor: getComputedStyle(cmd).color, outColor: getComputedStyle(out).color,
                    cmdBg: getComputedStyle(cmd).backgroundColor, outBg: getComputedStyle(out).backgroundColor,
                    btn: btn.getBoundingClientRect().toJSON(), pre: cmd.getBoundingClientRect().toJSON(),
                    envCopy: t.querySelectorAll('.transcript-env .copy-button').length,
                    env: t.querySelector('.transcript-env pre').innerText}}""")
        # What a reader copies: the command, no prompt, none of the lab's plumbing.
        assert parts["prompt"] == '"$ "' and parts["select"] == "none"
        assert not parts["cmd"].startswith("$") and "export " not in parts["cmd"]
        assert ':="' not in parts["cmd"] and not re.search(r'^: "\$\{\w+:=', parts["cmd"], re.M)
        assert "export " in parts["env"] and parts["envCopy"] == 0
        # The Copy button sits above the command, clear of its text.
        assert parts["btn"]["bottom"] <= parts["pre"]["top"] + 1
        # Command and output look different: the output is dimmer and on another ground.
        lum = lambda c: sum(int(x) for x in re.findall(r"\d+", c)[:3])  # noqa: E731
        assert lum(parts["outColor"]) > lum(parts["cmdColor"]) + 60
        assert parts["cmdBg"] != parts["outBg"]
        shot = image(t.locator(".transcript-cmd pre").screenshot())
        assert pixels_near(shot, (0xee, 0xf3, 0xfa), 4) > shot.shape[0] * shot.shape[1] * 0.4
        assert p.problems == []


@pytest.mark.parametrize("edition,width", CASES)
def test_long_outputs_fold_and_lines_wrap_on_request(browser, site, edition, width):
    with Page(browser, site, edition, "functional-validation", width) as p:
        fold = p.page.locator("details.transcript-fold").first
        fold.scroll_into_view_if_needed()
        summary = fold.locator("summary").inner_text()
        count = int(re.search(r"\d+", summary).group(0))
        word = {"en": "more lines", "fr": "lignes de plus", "ja": "行"}[LANG[edition]]
        assert word in summary and count >= 5
        hidden = fold.locator("pre")
        assert not hidden.is_visible()
        fold.locator("summary").click()
        assert hidden.is_visible() and hidden.inner_text().count("\n") + 1 >= count
        # Wrap: a long line no longer needs sideways scrolling, and the choice is kept.
        wide = p.page.locator(".exampleblock.transcript pre").filter(
            has_text=re.compile(r".{120,}")).first
        wide.scroll_into_view_if_needed()
        assert wide.evaluate("e => e.scrollWidth > e.clientWidth + 1")
        button = wide.locator("xpath=ancestor::div[contains(concat(' ', normalize-space(@class), "
                              "' '), ' transcript ')][1]").locator(".wrap-button").first
        button.click()
        assert wide.evaluate("e => e.scrollWidth <= e.clientWidth + 1")
        assert button.get_attribute("aria-pressed") == "true"
        p.page.reload()
        settled(p.page)
        assert p.page.locator(".exampleblock.transcript.wrap").count() > 0
        p.page.locator(".wrap-button").first.click()          # leave the default for others
        assert p.problems == []


# --- 6. header, search, language switch, Japanese ------------------------------------------------
@pytest.mark.parametrize("edition,width", CASES)
def test_header_has_the_editions_title_and_no_stray_checkbox(browser, site, edition, width):
    import yaml
    descriptor = paths.REPO / ("docs/" + edition if edition else "") / "antora.yml"
    title = yaml.safe_load(descriptor.read_text())["asciidoc"]["attributes"]["page-ui-site-title"]
    with Page(browser, site, edition, "sizing", width) as p:
        assert p.page.title().endswith(" · " + title)
        assert p.page.locator(".header .brand").inner_text() == title
        assert not p.page.locator("#search-field .filter").is_visible()
        p.page.focus("#search-input")
        p.page.wait_for_function("() => window.antoraSearch", timeout=30000)
        p.page.wait_for_timeout(200)
        assert not p.page.locator("#search-field .filter").is_visible()   # search.css loaded


def test_the_search_index_loads_on_first_use_and_hits_show_their_section(browser, site):
    with Page(browser, site, "", "sizing", 1400) as p:
        loaded = p.js("() => [...document.scripts].some(s => /search-index/.test(s.src))"
                      " || !!window.antoraSearch")
        assert not loaded, "the search index loads with the page"
        p.page.fill("#search-input", "FlexGroup")
        p.page.wait_for_selector(".search-result-item", timeout=30000)
        hits = p.js("""() => [...document.querySelectorAll('.search-result-document-hit')].map(h => ({
            section: (h.querySelector('.search-result-section-title') || {}).innerText || '',
            text: h.innerText, marked: h.querySelectorAll('.search-result-highlight').length,
            href: h.querySelector('a').href}))""")
        sections = [h for h in hits if h["section"] and "#" in h["href"]]
        assert sections, hits[:3]
        # A section hit shows that section's text with the match in it, not the page's opening.
        for h in sections[:5]:
            assert h["marked"] and "flexgroup" in h["text"].lower(), h
        assert p.problems == []


@pytest.mark.parametrize("edition", EDITIONS)
def test_the_language_switch_keeps_the_section(browser, site, edition):
    target = "ja" if edition != "ja" else "fr"
    with Page(browser, site, edition, "broker-recovery", 1400, "#rec-2") as p:   # an explicit anchor
        with p.page.expect_navigation(wait_until="load"):   # not the page already loaded
            p.page.click(f".language-switch a[hreflang={target}]")
        assert p.page.url.endswith(f"/tr4947/{target}/broker-recovery.html#rec-2"), p.page.url
    with Page(browser, site, edition, "broker-recovery", 1400) as p:       # a generated id
        heads = p.js("() => [...document.querySelectorAll('article.doc h2[id]')].map(h => h.id)")
        last = 0                                       # "Test setup": its id is generated
        assert heads[last].startswith("_")
        p.js("i => document.querySelectorAll('article.doc h2')[i].scrollIntoView()", last)
        # A reader's click where the link is (locator.click would scroll the page first).
        box = p.page.locator(f".language-switch a[hreflang={target}]").bounding_box()
        # Under CI's load the old page can still answer a bare wait_for_load_state.
        with p.page.expect_navigation(wait_until="load", timeout=60000):
            p.page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        where = """() => { const h = document.getElementById(decodeURIComponent(location.hash.slice(1)))
            return h ? {index: [...document.querySelectorAll('article.doc h2[id]')].indexOf(h),
                        top: h.getBoundingClientRect().top} : null }"""
        p.page.wait_for_timeout(900)                   # the landing's second scroll (site.js)
        try:                                           # a loaded machine may be later still
            p.page.wait_for_function(f"() => {{ const l = ({where})(); return l && l.top >= 0 && l.top < 300 }}",
                                     timeout=10000)
        except Exception:
            pass                                       # the assertion below says where it is
        landed = p.js(where)
        assert landed and landed["index"] == last and 0 <= landed["top"] < 300, landed


def test_japanese_pages_have_no_stray_spaces_and_a_japanese_face(browser, site):
    stray = {}
    for page in sorted((site / "tr4947" / "ja").glob("*.html")):
        html = re.sub(r"<pre[\s>].*?</pre>", "", page.read_text(), flags=re.S)
        found = re.findall(r"[。、][ \n]+(?=[^\s<])", html)
        if found:
            stray[page.name] = len(found)
    assert stray == {}
    with Page(browser, site, "ja", "silly-rename", 1400) as p:
        family = p.js("() => getComputedStyle(document.querySelector('article.doc p')).fontFamily")
        assert "IPAexGothic" in family and "Noto Sans CJK JP" in family
        # The face is installed and used: text set in it measures differently from a fallback.
        assert p.js("""() => { const c = document.createElement('canvas').getContext('2d')
            const w = f => { c.font = f; return c.measureText('Kafka ブローカー 0123').width }
            return w('16px IPAexGothic, monospace') !== w('16px monospace') }""")
        assert p.js("() => getComputedStyle(document.querySelector('article.doc p')).textAlign") \
            in ("start", "left")
