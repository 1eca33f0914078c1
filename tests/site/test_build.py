"""The guide builds offline with no warnings, every nav entry is a page, the PDF is real."""
import re

import pytest

from pypdf import PdfReader

from tr4947 import paths


def warnings_in(text: str) -> list[str]:
    return [l for l in text.splitlines()
            if re.search(r'"level":"(warn|error|fatal)"|WARNING|ERROR', l)
            and "Unknown user config" not in l]          # npm's own notice about ~/.npmrc


def test_build_has_no_warnings(build):
    assert build.returncode == 0, build.stderr
    assert warnings_in(build.stdout + build.stderr) == []


def test_every_nav_entry_became_a_page(site):
    nav = (paths.DOCS / "nav.adoc").read_text()
    targets = re.findall(r"xref:([\w-]+)\.adoc", nav)
    assert len(targets) >= 15
    missing = [t for t in targets if not (site / "tr4947" / f"{t}.html").exists()]
    assert missing == []


def test_404_page_exists(site):
    html = (site / "404.html").read_text()
    assert "Page not found" in html


@pytest.fixture(scope="module")
def pdf(site):
    """The guide's PDF and its text (extracted once: it is the slow part)."""
    reader = PdfReader(site / "tr4947" / "tr-4947-kafka-on-netapp-nfs.pdf")
    text = re.sub(r"\s+", " ", " ".join((p.extract_text() or "") for p in reader.pages))
    return reader, text


def test_pdf_of_the_whole_guide(pdf):
    reader, text = pdf
    assert len(reader.pages) > 20
    for title in ("silly-rename", "Functional validation", "Sizing guidance", "Errata"):
        assert title.lower() in text.lower(), f"{title!r} missing from the PDF"


def test_pdf_shows_the_diagrams_not_their_source(pdf):
    """Every [mermaid] block of the pages is an image in the PDF (rendered offline by
    scripts/pdf/), and no diagram source leaks into the text."""
    reader, text = pdf
    for word in ("sequenceDiagram", "flowchart TB", "flowchart LR", "subgraph"):
        assert word not in text, f"mermaid source {word!r} printed in the PDF"
    pages = sorted((paths.DOCS / "pages").glob("*.adoc"))
    diagrams = sum(len(re.findall(r"^\[mermaid\]\s*$", p.read_text(), re.M)) for p in pages)
    images = sum(len(p.images) for p in reader.pages)
    assert diagrams > 0 and images >= diagrams, f"{diagrams} diagrams, {images} images in the PDF"


def test_every_page_links_the_pdf(pages):
    for page in pages:
        assert "tr-4947-kafka-on-netapp-nfs.pdf" in page.read_text(), page.name


# --- section titles -----------------------------------------------------------------------
_DELIM = re.compile(r"^(-{4,}|\.{4,}|={4,}|\*{4,}|_{4,}|\+{4,}|/{4,}|`{3,}.*)$")
_TITLE = re.compile(r"^(={2,6}) (\S.*)$")


def source_titles(text: str) -> list[tuple[int, str]]:
    """(line, title) of every line meant as a section title: '== ...' to '====== ...'
    outside delimited blocks (listings, literals, examples, comments, passthroughs)."""
    out, fence = [], None
    for n, line in enumerate(text.splitlines(), 1):
        m = _DELIM.match(line)
        if m:
            fence = None if fence == line.strip()[:4] else (fence or line.strip()[:4])
            continue
        if fence is None and (t := _TITLE.match(line)):
            out.append((n, t.group(2)))
    return out


def _plain(s: str) -> str:
    s = re.sub(r"<[^>]+>", "", s)
    s = re.sub(r"[`*_+#]|&#8217;|&#8216;|&#8220;|&#8221;|'|\"", "", s)
    s = s.replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
    return " ".join(s.split()).lower()


def missing_titles(source: str, html: str) -> list[str]:
    rendered = {_plain(h) for h in re.findall(r"<h[2-6][^>]*>(.*?)</h[2-6]>", html, re.S)}
    return [f"line {n}: {title}" for n, title in source_titles(source)
            if _plain(re.sub(r"\{[\w-]+\}", "", title)) not in
            {re.sub(r"\{[\w-]+\}", "", r) for r in rendered}]


#: Each edition's pages and where the site puts them (the French and Japanese editions are
#: versions fr and ja of the component).
EDITIONS = {"": paths.DOCS / "pages", "fr": paths.REPO / "docs/fr/modules/ROOT/pages",
            "ja": paths.REPO / "docs/ja/modules/ROOT/pages"}


def test_every_section_title_renders_as_a_heading(site):
    """A title line right after a paragraph line is body text to Asciidoctor, silently
    (in every edition: a translation can glue a title to a paragraph too)."""
    bad = {}
    for version, pages in EDITIONS.items():
        for page in sorted(pages.glob("*.adoc")):
            html = (site / "tr4947" / version / f"{page.stem}.html").read_text()
            miss = missing_titles(page.read_text(), html)
            if miss:
                bad[f"{version or 'en'}/{page.name}"] = miss
    assert bad == {}


# --- the editions' PDFs ---------------------------------------------------------------------
def edition_pdf(site, version: str):
    """An edition's PDF: Antora Assembler names it after the edition's title, and the
    edition's antora.yml says that name (page-pdf) for the header's link."""
    import yaml
    descriptor = paths.REPO / ("docs/" + version if version else "") / "antora.yml"
    name = yaml.safe_load(descriptor.read_text())["asciidoc"]["attributes"]["page-pdf"]
    return site / "tr4947" / version / name


def test_every_edition_has_its_pdf_and_every_page_links_it(site):
    from html import unescape
    for version in EDITIONS:
        pdf_file = edition_pdf(site, version)
        assert pdf_file.stat().st_size > 100_000, pdf_file
        for page in (site / "tr4947" / version).glob("*.html"):
            links = re.findall(r'class="pdf-link" href="([^"]+)"', page.read_text())
            assert links, page
            assert (page.parent / unescape(links[0])).resolve() == pdf_file.resolve(), page


def test_the_japanese_pdf_shows_japanese(site, tmp_path):
    """A page of the Japanese PDF rendered to PNG (pdftoppm) has ink on it, and its text layer
    holds the Japanese of the pages, with no replacement characters (a missing glyph)."""
    import subprocess
    pdf_file = edition_pdf(site, "ja")
    reader = PdfReader(pdf_file)
    text = " ".join((p.extract_text() or "") for p in reader.pages[:40])
    japanese = re.findall(r"[\u3040-\u30ff\u4e00-\u9fff]", text)
    assert len(japanese) > 2000, f"{len(japanese)} Japanese characters in the text layer"
    assert "\ufffd" not in text
    fonts = subprocess.run(["pdffonts", str(pdf_file)], capture_output=True, text=True).stdout
    assert "IPAexGothic" in fonts, fonts
    subprocess.run(["pdftoppm", "-png", "-r", "60", "-f", "3", "-l", "3", str(pdf_file),
                    str(tmp_path / "page")], check=True)
    png = next(tmp_path.glob("page*.png"))
    from PIL import Image
    img = Image.open(png).convert("L")
    dark = sum(img.histogram()[:128])
    assert dark > 2000, f"page 3 of the Japanese PDF is nearly blank ({dark} dark pixels)"


def test_the_french_pdf_is_french(site):
    reader = PdfReader(edition_pdf(site, "fr"))
    text = " ".join((p.extract_text() or "") for p in reader.pages[:30])
    assert "courtier" in text and "Validation fonctionnelle" in text


def test_the_title_check_sees_a_title_glued_to_a_paragraph():
    src = "Text of a paragraph.\n== Not a heading\n\n== A heading\n\n----\n== in a listing\n----\n"
    html = "<p>Text of a paragraph. == Not a heading</p><h2 id='_a'>A heading</h2>"
    assert missing_titles(src, html) == ["line 2: Not a heading"]


# --- the PDFs a printer reads (issue 28) ----------------------------------------------------------
TITLE_PAGES = {"": ("Kafka on NetApp NFS", "English edition", "not from NetApp hardware"),
               "fr": ("Kafka sur NFS NetApp", "Édition française", "non de matériel NetApp"),
               "ja": ("NetApp NFS 上の Kafka", "日本語版", "NetApp のハードウェアによるものではありません")}


@pytest.mark.parametrize("version", list(TITLE_PAGES), ids=["en", "fr", "ja"])
def test_the_pdf_title_page_says_what_the_book_is(site, version):
    """The guide's title, the edition, the date it was built and where its figures come from."""
    import datetime
    title, edition, disclaimer = TITLE_PAGES[version]
    first = re.sub(r"\s+", " ", PdfReader(edition_pdf(site, version)).pages[0].extract_text())
    first_tight = first.replace(" ", "")
    assert "TR-4947" in first and title.replace(" ", "") in first_tight, first
    assert edition.replace(" ", "") in first_tight, first
    assert str(datetime.date.today().year) in first
    assert disclaimer.replace(" ", "") in first_tight, first
    assert not re.search(r"Version (fr|ja)\b|バージョン ja", first)


def page_png(pdf_file, index: int, tmp_path):
    """One page of a PDF as an array of RGB pixels (pdftoppm, 60 dpi)."""
    import subprocess

    import numpy
    from PIL import Image
    stem = tmp_path / f"p{index}"
    subprocess.run(["pdftoppm", "-png", "-r", "60", "-f", str(index + 1), "-l", str(index + 1),
                    str(pdf_file), str(stem)], check=True)
    return numpy.asarray(Image.open(next(tmp_path.glob(f"p{index}*.png"))).convert("RGB")).astype(int)


def near(img, rgb, tol=20) -> int:
    import numpy
    return int((numpy.abs(img - numpy.array(rgb)) <= tol).all(axis=2).sum())


def test_lab_and_tr_figures_are_told_apart_in_the_pdf(site, pdf, tmp_path):
    """As on the site: a lab result carries a green LAB badge and rule, a table of the TR's
    published figures a grey TR-4947 badge and shaded rows."""
    reader, _ = pdf
    lab = tr = None
    for i, page in enumerate(reader.pages):          # the first page of each kind
        text = re.sub(r"\s+", " ", page.extract_text() or "")
        if lab is None and re.search(r"LAB ?Lab result: ", text):
            lab = i
        if tr is None and re.search(r"TR-4947 ?Published in TR-4947", text):
            tr = i
        if lab is not None and tr is not None:
            break
    assert lab is not None and tr is not None, (lab, tr)
    pdf_file = edition_pdf(site, "")
    lab_img, tr_img = page_png(pdf_file, lab, tmp_path), page_png(pdf_file, tr, tmp_path)
    assert near(lab_img, (0x1F, 0x7A, 0x4D), 25) > 60          # the badge and the rule
    assert near(tr_img, (0x6B, 0x72, 0x80), 20) > 20           # the TR badge
    assert near(tr_img, (0xF1, 0xF1, 0xEE), 3) > 500           # shaded rows


def test_the_japanese_pdf_is_not_justified(site):
    """Justified text stretches the spaces around Latin words (PDF word spacing, Tw); flush
    left, the Japanese PDF sets none."""
    reader = PdfReader(edition_pdf(site, "ja"))
    stretched = 0
    for page in reader.pages[2:40]:
        data = page.get_contents().get_data().decode("latin-1")
        stretched += sum(1 for v in re.findall(r"([-\d.]+) Tw\b", data) if float(v) != 0)
    assert stretched == 0
    # and the English one is (so the check can tell the two apart)
    en = PdfReader(edition_pdf(site, ""))
    data = "".join(p.get_contents().get_data().decode("latin-1") for p in en.pages[2:10])
    assert any(float(v) != 0 for v in re.findall(r"([-\d.]+) Tw\b", data))
