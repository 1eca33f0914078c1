"""The site at a glance on a desktop and a phone (issue 38), in Debian's headless Chromium:
every page of the three editions at 1,400 x 900 and at 390 px, measured in the browser.

- a page opens at its title (the navigation scrolls itself to the current chapter, never the
  window);
- tables use the screen: at 1,400 px at most five tables of the whole site (three editions)
  are wider than the room they have; at 390 px every table that scrolls says so;
- diagrams: each edition's diagram has the same participants, nodes and messages as the
  English one (the mermaid sources as built), their text is 11 px or more at 1,400 px, a
  click opens one full size; a screenshot of one diagram per edition is saved under
  build/screenshots/ for a reader of the test run.

Run after a site build, e.g. TR4947_SITE_BUILT=1 pytest tests/site/test_glance.py."""
from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from tr4947 import paths

from ..support.chromium import settled
from .walk import EDITIONS as LANG
from .walk import site_pages, walk

EDITIONS = list(LANG)                   # "" is English, at the component's root
SHOTS = paths.BUILD / "screenshots"


def visit(context, path: Path):
    page = context.new_page()
    problems = []
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.goto(path.as_uri(), wait_until="load")
    settled(page)
    return page, problems


# --- 1. a page opens at its title, 2. tables use the screen -------------------------------------
# The 1,400 px walk is the session's (conftest.walked); the 390 px one is this module's.
@pytest.fixture(scope="module")
def at_390(browser, site):
    return walk(browser, site, 390)


def tables_of(pages: dict, width: int) -> list[dict]:
    for (edition, name), p in pages.items():
        assert p["problems"] == [], (edition, name, p["problems"])
        assert p["page_width"] <= width + 1, \
            f"{LANG[edition]}/{name}: the page scrolls sideways ({p['page_width']} px)"
    return [t for p in pages.values() for t in p["tables"]]


@pytest.mark.browser
@pytest.mark.parametrize("edition", EDITIONS, ids=lambda e: LANG[e])
def test_every_page_opens_with_its_title_in_view(walked, site, edition):
    away = {}
    for (ed, name), p in walked.items():
        where = p["title"]
        if ed == edition and (where["scrollY"] != 0 or where["top"] < where["header"]
                              or where["bottom"] > 900 or not where["navItemInView"]
                              or p["problems"]):
            away[name] = {**where, "problems": p["problems"]}
    assert [ed for ed, _ in walked].count(edition) == len(site_pages(site, edition))
    assert away == {}


@pytest.mark.browser
def test_at_most_five_tables_overflow_their_column_at_1400(walked):
    tables = tables_of(walked, 1400)
    assert len(tables) > 300                               # about 122 tables an edition
    over = [(t["page"], t["title"]) for t in tables if t["over"]]
    assert len(over) <= 5, over
    # a table wider than its room says so, and no table reaches past the window
    assert all(t["cue"] for t in tables if t["over"])
    assert all(t["right"] <= 1400 for t in tables)


@pytest.mark.browser
def test_at_390_every_overflowing_table_shows_the_scroll_cue(at_390):
    tables = tables_of(at_390, 390)
    shown = [t for t in tables if t["shown"]]
    assert len(shown) > 300
    missing = [(t["page"], t["title"]) for t in shown if t["over"] and not t["cue"]]
    assert missing == []
    assert all(t["cue"] == t["over"] for t in shown)       # and no cue on a table that fits
    # authored prose tables are one card per row on a phone: they do not scroll
    assert any(t["cards"] for t in shown)
    assert not any(t["over"] for t in shown if t["cards"])


# --- 3. diagrams ---------------------------------------------------------------------------------
def mermaid_sources(page: Path) -> list[str]:
    return [html.unescape(m) for m in
            re.findall(r'<div class="mermaid[^"]*"[^>]*>(.*?)</div>', page.read_text(), re.S)]


def shape(source: str) -> list[str]:
    """A diagram without its words: one entry per statement, with the node and participant
    IDs, arrows and keywords that must be the same in every edition."""
    lines = [l.strip() for l in source.strip().splitlines() if l.strip()]
    kind = lines[0].split()[0]
    out = [lines[0]]
    for line in lines[1:]:
        if kind == "sequenceDiagram":
            m = re.match(r"(participant|actor)\s+(\S+)", line)
            if m:
                out.append(f"{m.group(1)} {m.group(2)}")
            elif re.match(r"Note\s", line):
                out.append(re.sub(r"\s+", " ", line.split(":", 1)[0]))
            elif ":" in line:
                out.append(re.sub(r"\s+", "", line.split(":", 1)[0]))
            else:
                out.append(line)
        else:
            line = re.sub(r'"[^"]*"', '""', line)                       # labels
            line = re.sub(r"\|[^|]*\|", "", line)                        # |edge label|
            line = re.sub(r"--[^->\"]*[^->\s\"][^->\"]*-->", "-->", line)   # -- edge label -->
            line = re.sub(r'--\s*""\s*-->', "-->", line)
            line = re.sub(r'-\.\s*(""|[^.\s][^.]*?)\s*\.->', "-.->", line)
            out.append(re.sub(r"\s+", "", line))
    return out


def test_every_editions_diagrams_have_the_english_ones_shape(site):
    """Participants, messages, notes, nodes and edges, statement by statement; a statement
    lost to a joined line (the Japanese line-break bug) or a participant renamed fails."""
    english = {p.name: mermaid_sources(p) for p in site_pages(site, "")}
    assert sum(len(v) for v in english.values()) >= 12
    differ = {}
    for edition in ("fr", "ja"):
        for path in site_pages(site, edition):
            theirs = mermaid_sources(path)
            ours = english.get(path.name, [])
            assert len(theirs) == len(ours), f"{edition}/{path.name}: {len(theirs)} diagrams, English {len(ours)}"
            for i, (a, b) in enumerate(zip(ours, theirs)):
                if shape(a) != shape(b):
                    sa, sb = shape(a), shape(b)
                    first = next((j for j, (x, y) in enumerate(zip(sa, sb)) if x != y), min(len(sa), len(sb)))
                    differ[f"{edition}/{path.name}#{i + 1}"] = (sa[first:first + 2], sb[first:first + 2])
    assert differ == {}


def test_the_diagram_shape_sees_a_lost_line():
    english = 'sequenceDiagram\n    participant P as a (b)\n    participant K as c\n    P->>K: d\n'
    joined = 'sequenceDiagram\n    participant P as a（b）    participant K as c\n    P->>K: d\n'
    assert shape(english) != shape(joined)
    assert shape('flowchart LR\n  A["x"] -- no --> B["y"]\n  C -. scrapes .-> A') == \
        shape('flowchart LR\n  A["x"] -- "non" --> B["y"]\n  C -. "lit" .-> A')




@pytest.mark.browser
@pytest.mark.parametrize("edition", EDITIONS, ids=lambda e: LANG[e])
def test_diagrams_are_readable_and_open_full_size(walked, browser, site, edition):
    """Every diagram as the session's walk saw it at 1,400 px (drawn once the page settled):
    text 11 px or more, as many boxes and messages as the English one; the first diagram of
    failure-drills opens full size on a click, and its screenshot is kept."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    small, drawn = {}, {}
    for path in site_pages(site, edition):
        if not mermaid_sources(path):
            continue
        seen = walked[(edition, path.name)]
        assert seen["problems"] == [], (path.name, seen["problems"])
        assert seen["drawn"] == seen["diagrams"] == len(seen["diagram_text"]), path.name
        drawn[path.name] = [{k: d[k] for k in ("actors", "messages", "nodes", "edges")}
                            for d in seen["diagram_text"]]
        for i, d in enumerate(seen["diagram_text"]):
            if d["n"] == 0 or d["min"] < 11:
                small[f"{path.name}#{i + 1}"] = round(d["min"], 1)
    assert len(drawn) >= 10
    assert small == {}, f"diagram text under 11 px at 1,400 px: {small}"
    if edition:                     # the drawings have as many boxes and messages as the English
        english = {name: [{k: d[k] for k in ("actors", "messages", "nodes", "edges")}
                          for d in walked[("", name)]["diagram_text"]] for name in drawn}
        assert drawn == english
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page, problems = visit(context, site / "tr4947" / edition / "failure-drills.html")
    page.wait_for_selector("article.doc .mermaid.opens", timeout=60000)
    box = page.locator("article.doc .mermaid").first
    box.scroll_into_view_if_needed()
    box.screenshot(path=str(SHOTS / f"diagram-failure-drills-{LANG[edition]}.png"))
    box.click()
    dialog = page.locator("dialog.diagram-dialog")
    dialog.wait_for(state="visible")
    full = dialog.evaluate("""d => { const s = d.querySelector('svg'), r = s.getBoundingClientRect()
        return {w: r.width, natural: s.viewBox.baseVal.width} }""")
    assert abs(full["w"] - full["natural"]) < 2, full              # drawn at its natural size
    assert dialog.locator(".diagram-close").inner_text() == \
        {"en": "Close", "fr": "Fermer", "ja": "閉じる"}[LANG[edition]]
    page.keyboard.press("Escape")
    dialog.wait_for(state="hidden")
    assert problems == []
    context.close()


# --- 6. transcripts: a command's comments are comments -------------------------------------------
@pytest.mark.browser
@pytest.mark.parametrize("edition", EDITIONS, ids=lambda e: LANG[e])
def test_comments_in_a_transcripts_command_are_highlighted_as_comments(browser, site, edition):
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page, problems = visit(context, site / "tr4947" / edition / "failure-drills.html")
    lines = page.evaluate("""() => [...document.querySelectorAll('.transcript-cmd pre code')].flatMap(code => {
        const out = [], lines = code.innerHTML.split('\\n')
        lines.forEach(l => { const t = l.replace(/<[^>]+>/g, '')
            if (/^\\s*#/.test(t)) out.push({text: t.slice(0, 60), comment: /^\\s*<span class="hljs-comment">/.test(l)
                                            && !/hljs-(keyword|built_in|meta|string)/.test(l)}) })
        return out })""")
    context.close()
    assert len(lines) > 10
    assert [l["text"] for l in lines if not l["comment"]] == []
    assert problems == []


# --- 7. the PDFs: table headers whole, Japanese line breaking, ASCII names ------------------------
def pdf_of(site, edition) -> Path:
    import yaml
    descriptor = paths.REPO / ("docs/" + edition if edition else "") / "antora.yml"
    name = yaml.safe_load(descriptor.read_text())["asciidoc"]["attributes"]["page-pdf"]
    return site / "tr4947" / edition / name


def pdf_words(pdf: Path) -> list[tuple[int, float, float, float, str]]:
    """Every word of a PDF with its page and box (pdftotext -bbox): (page, x, top, bottom, text)."""
    import subprocess
    xhtml = subprocess.run(["pdftotext", "-bbox", str(pdf), "-"], capture_output=True, text=True,
                           check=True).stdout
    words, page = [], 0
    for m in re.finditer(r'<page |<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="[\d.]+" yMax="([\d.]+)">([^<]*)</word>',
                         xhtml):
        if m.group(0) == "<page ":
            page += 1
            continue
        words.append((page, float(m.group(1)), float(m.group(2)), float(m.group(3)), html.unescape(m.group(4))))
    return words


def header_words(site, edition) -> set[str]:
    """The Latin words of every table header of an edition's pages (as built)."""
    found = set()
    for path in site_pages(site, edition):
        for th in re.findall(r"<th[^>]*>(.*?)</th>", path.read_text(), re.S):
            text = html.unescape(re.sub(r"<[^>]+>", "", th))
            found |= {w for w in re.findall(r"[^\W\d_]{4,}", text) if w.isascii() or edition == "fr"}
    return found


def cut_header_words(words, headers) -> list[str]:
    """Header words the PDF sets in two pieces, one above the other in the same column
    ("Broke" over "r")."""
    by_page: dict[int, list] = {}
    for w in words:
        by_page.setdefault(w[0], []).append(w)
    cut = []
    for page, ws in by_page.items():
        for (_, x, top, bottom, text) in ws:
            if len(text) < 3 or text in headers or not any(h.startswith(text) and h != text for h in headers):
                continue
            for (_, x2, top2, _, text2) in ws:
                # the rest of the word right below it, in the same column (nothing after it
                # but a hyphen: a prose line that starts below "exécution" is not a rest)
                tail = re.fullmatch(r"([^\W\d_]+)-?", text2)
                if abs(x2 - x) < 2 and 0 < top2 - top < (bottom - top) * 1.8 and tail \
                        and text + tail.group(1) in headers:
                    cut.append(f"page {page}: {text}/{text2}")
    return cut


def test_the_cut_word_check_sees_a_cut_header():
    words = [(1, 50.0, 100.0, 108.0, "Broke"), (1, 50.0, 109.0, 117.0, "r"), (1, 90.0, 100.0, 108.0, "Verdict")]
    assert cut_header_words(words, {"Broker", "Verdict"}) == ["page 1: Broke/r"]
    assert cut_header_words(words[2:], {"Broker", "Verdict"}) == []


@pytest.mark.parametrize("edition", EDITIONS, ids=lambda e: LANG[e])
def test_pdf_table_headers_are_never_cut_inside_a_word(site, edition):
    pdf = pdf_of(site, edition)
    assert pdf.exists(), f"no PDF {pdf}"
    headers = header_words(site, edition)
    assert len(headers) > (10 if edition == "ja" else 50)
    assert cut_header_words(pdf_words(pdf), headers) == []


#: A Japanese line never starts with these (kinsoku): closing brackets and 。、：
NO_LINE_START = "）」』】〕］〉》。、：，．"


def test_the_japanese_pdf_breaks_lines_the_japanese_way(site):
    import subprocess
    pdf = pdf_of(site, "ja")
    text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    assert len(lines) > 2000
    bad = [f"{prev[-20:]} | {l[:40]}" for prev, l in zip([""] + lines, lines) if l[0] in NO_LINE_START]
    # None (kinsoku, scripts/pdf/tr4947_pdf.rb; 200 of about 19,600 lines before it): also
    # where a link or inline code meets a bracket (prawn breaks between styled pieces), in
    # the first line after a page break and in table headers.
    assert not bad, f"{len(bad)} lines start with a closing bracket or 。、： (previous | line):\n" + \
        "\n".join(bad)


def test_every_pdf_has_an_ascii_file_name(site):
    pdfs = list((site / "tr4947").rglob("*.pdf"))
    assert len(pdfs) == 3
    assert all(p.name.isascii() for p in pdfs), [p.name for p in pdfs]
    for edition in EDITIONS:
        assert pdf_of(site, edition).exists()


# --- 5. chart labels: never broken inside a number or a word ---------------------------------------
def test_chart_labels_break_only_between_words():
    from tr4947.results.charts import _wrap
    for width in range(40, 400, 10):
        fr = _wrap("TR-4947, RF 1 sync : ~3218 Mo/s soutenus = 3\u202f069 Mio/s", width, "fr")
        assert any("3\u202f069" in line for line in fr), fr
        ja = _wrap("プロデューサーとコンシューマーの「ラボ」の合計 MiB/s", width, "ja")
        assert any("「ラボ」" in line for line in ja), ja
        assert all(line[0] not in "）」、。：" for line in ja), ja
        assert all(not line.endswith(("（", "「")) for line in ja), ja
