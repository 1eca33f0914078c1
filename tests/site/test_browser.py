"""Every page in a real headless Chromium (Debian's), from file:// URLs, fully offline."""
import re
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from ..support.chromium import settled

playwright = pytest.importorskip("playwright.sync_api")

pytestmark = pytest.mark.browser


def open_page(browser, url, **ctx):
    context = browser.new_context(**ctx)
    page = context.new_page()
    problems = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}")
            if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"failed request: {r.url}"))
    page.goto(url, wait_until="load")
    settled(page)
    return context, page, problems


def test_every_page_renders_cleanly(walked, pages):
    renders_cleanly(walked, "", pages)


@pytest.mark.parametrize("edition", ["fr", "ja"])
def test_every_translated_page_renders_cleanly(walked, site, edition):
    """The translated mermaid labels still parse, images and copy buttons are all there."""
    translated = sorted((site / "tr4947" / edition).glob("*.html"))
    assert len(translated) == len(list((site / "tr4947").glob("*.html")))
    renders_cleanly(walked, edition, translated)


def renders_cleanly(walked: dict, edition: str, pages: list[Path]) -> None:
    """Each page as it opened in the session's walk (tests/site/walk.py): no console error,
    script error or failed request; every mermaid diagram an SVG (the walk waited for them)
    and none mermaid's error diagram; images loaded; a copy button on every listing."""
    for path in pages:
        seen = walked[(edition, path.name)]
        problems = ([f"console error: {m}" for m in seen["console"]]
                    + [f"page error: {e}" for e in seen["problems"]]
                    + [f"failed request: {u}" for u in seen["failed"]])
        assert problems == [], f"{path.name}: {problems}"
        assert seen["drawn"] == seen["diagrams"], \
            f"{path.name}: {seen['diagrams'] - seen['drawn']} diagram(s) never drawn"
        assert seen["diagram_errors"] == 0, \
            f"{path.name}: {seen['diagram_errors']} mermaid diagram(s) failed to parse"
        assert seen["broken"] == [], f"{path.name}: broken images {seen['broken']}"
        assert seen["buttons"] == seen["listings"], \
            f"{path.name}: {seen['listings']} listings, {seen['buttons']} copy buttons"


def test_internal_links_and_fragments_resolve(walked, pages):
    bad = []
    for path in pages:
        for href in walked[("", path.name)]["hrefs"]:
            u = urlparse(href)
            if u.scheme != "file":
                continue
            target = Path(unquote(u.path))
            if not target.exists():
                bad.append(f"{path.name} -> {href}")
                continue
            if u.fragment and target.suffix == ".html":
                ids = set(re.findall(r'id="([^"]+)"', target.read_text()))
                if unquote(u.fragment) not in ids:
                    bad.append(f"{path.name} -> {href} (no such anchor)")
    assert bad == []


def test_highlighting_and_mermaid_on_a_procedure_page(browser, site):
    context, page, problems = open_page(browser, (site / "tr4947" / "functional-validation.html").as_uri())
    page.wait_for_function("() => document.querySelector('.mermaid svg')", timeout=60000)  # generous: the machine may be busy
    assert page.locator("pre code.hljs").count() > 0
    assert page.locator(".toc a").count() > 3
    assert problems == []
    context.close()


def test_mermaid_is_fetched_only_by_pages_with_a_diagram(browser, site):
    """mermaid.min.js is 2.7 MB: the ledger (no diagram) does not fetch it; functional-validation
    (diagrams) fetches it once and every diagram becomes an SVG."""
    for name, diagrams in (("ledger.html", False), ("functional-validation.html", True)):
        context = browser.new_context()
        page = context.new_page()
        fetched = []
        page.on("request", lambda r: fetched.append(r.url) if "mermaid" in r.url else None)
        page.goto((site / "tr4947" / name).as_uri(), wait_until="load")
        if diagrams:
            page.wait_for_function(
                "() => [...document.querySelectorAll('.mermaid')].every(e => e.querySelector('svg'))",
                timeout=60000)
            assert len(fetched) == 1 and fetched[0].endswith("/js/vendor/mermaid.min.js"), fetched
        else:
            settled(page)
            assert page.locator(".mermaid").count() == 0 and fetched == [], fetched
        context.close()


def test_search_finds_the_silly_rename_chapter(browser, site):
    context, page, problems = open_page(browser, (site / "tr4947" / "index.html").as_uri())
    page.fill("#search-input", "silly rename")
    page.keyboard.press("Enter")
    page.wait_for_selector(".search-result-item a", timeout=30000)  # the index loads on first use
    links = page.evaluate("() => [...document.querySelectorAll('.search-result-item a')].map(a => a.href)")
    assert any("silly-rename.html" in l for l in links), links
    assert problems == []
    context.close()


def test_phone_width_has_no_page_scroll_and_nav_opens(browser, site):
    context, page, problems = open_page(browser, (site / "tr4947" / "aws-fsx.html").as_uri(),
                                        viewport={"width": 375, "height": 800})
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= 376, f"page scrolls sideways at 375 px: {width}px wide"
    nav = page.locator("#nav")
    assert not nav.is_visible() or nav.bounding_box()["x"] < -100
    page.click(".nav-toggle")
    page.wait_for_function("() => document.getElementById('nav').getBoundingClientRect().x >= -1",
                           timeout=5000)             # it slides in (a CSS transition)
    assert page.get_attribute(".nav-toggle", "aria-expanded") == "true"
    context.close()


def test_results_are_labelled_with_provenance(browser, site):
    context, page, _ = open_page(browser, (site / "tr4947" / "aws-fsx.html").as_uri())
    label = page.evaluate("() => getComputedStyle(document.querySelector('.exampleblock.result.lab > .title'), '::before').content")
    assert "LAB RESULT" in label
    prov = page.locator(".exampleblock.result .provenance").first.inner_text()
    assert "Embedded lab" in prov and "commit" in prov and re.search(r"\b[0-9a-f]{7}\b", prov)
    context.close()


# --- the French and Japanese editions -------------------------------------------------------
JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


def listings(page) -> list[str]:
    return page.evaluate("() => [...document.querySelectorAll('.listingblock pre')]"
                         ".map(p => p.innerText)")


def test_editions_share_code_and_switch_to_the_same_chapter(browser, site):
    """A French and a Japanese page: translated headings, the English page's code blocks
    unchanged, and the language switch lands on the same chapter in the other edition."""
    ctx, en, _ = open_page(browser, (site / "tr4947" / "functional-validation.html").as_uri())
    en_h1, en_code = en.inner_text("h1"), listings(en)
    ctx.close()
    ctx, fr, problems = open_page(browser, (site / "tr4947/fr/functional-validation.html").as_uri())
    assert fr.get_attribute("html", "lang") == "fr"
    fr_h1 = fr.inner_text("h1")
    assert fr_h1 != en_h1 and "validation" in fr_h1.lower()
    assert listings(fr) == en_code and len(en_code) > 10
    assert fr.locator(".toc .toc-title").inner_text() == "Sur cette page"
    # English first, then the translations by language code, whatever Antora's version order.
    assert [a.get_attribute("hreflang") for a in fr.locator(".language-switch a").all()] \
        == ["en", "fr", "ja"]
    fr.click(".language-switch a[hreflang=ja]")
    fr.wait_for_load_state("load")
    assert fr.url.endswith("/tr4947/ja/functional-validation.html"), fr.url
    assert fr.get_attribute("html", "lang") == "ja"
    assert JAPANESE.search(fr.inner_text("h1")), fr.inner_text("h1")
    assert listings(fr) == en_code
    fr.click(".language-switch a[hreflang=en]")
    fr.wait_for_load_state("load")
    assert fr.url.endswith("/tr4947/functional-validation.html"), fr.url
    assert problems == []
    ctx.close()


@pytest.mark.parametrize("lang,term,chapter", [
    ("fr", "courtier", "broker-recovery.html"),
    ("ja", "ブローカー", "broker-recovery.html"),
])
def test_search_stays_in_the_readers_edition(browser, site, lang, term, chapter):
    """A French term finds French pages, a Japanese term Japanese pages (the index holds
    every edition, each with its language's stemmer or segmenter); none from another one."""
    ctx, page, problems = open_page(browser, (site / "tr4947" / lang / "index.html").as_uri())
    page.fill("#search-input", term)
    page.keyboard.press("Enter")
    page.wait_for_selector(".search-result-item a", timeout=30000)  # the index loads on first use
    links = page.evaluate("() => [...document.querySelectorAll('.search-result-item a')]"
                          ".map(a => a.href)")
    assert links and all(f"/tr4947/{lang}/" in l for l in links), links
    assert any(l.split("#")[0].endswith(chapter) for l in links), links
    assert problems == []
    ctx.close()


def test_labels_around_results_follow_the_edition(browser, site):
    ctx, page, _ = open_page(browser, (site / "tr4947/fr/aws-fsx.html").as_uri())
    label = page.evaluate("() => getComputedStyle(document.querySelector("
                          "'.exampleblock.result.lab > .title'), '::before').content")
    assert "RÉSULTAT DU LAB" in label
    block = page.locator(".exampleblock.result.lab > .title").first.inner_text()
    assert block.startswith("Résultat du lab")
    prov = page.locator(".exampleblock.result .provenance").first.inner_text()
    assert "Lab intégré" in prov and "{label-" not in page.content()
    ctx.close()
