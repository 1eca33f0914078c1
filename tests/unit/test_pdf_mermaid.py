"""The PDF build's mermaid extension (scripts/pdf/mermaid_images.rb): a diagram that cannot
be rendered is logged and shown as its source; the document still converts."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXTENSION = REPO / "scripts" / "pdf" / "mermaid_images.rb"

pytestmark = pytest.mark.skipif(shutil.which("asciidoctor-pdf") is None,
                                reason="asciidoctor-pdf (and its Ruby) come with make setup")
#: Asciidoctor as the PDF build loads it (the Ruby library asciidoctor-pdf runs on), to HTML:
#: the extension works on the document tree, before any converter.
CONVERT = "Asciidoctor.convert_file ARGV[0], to_file: ARGV[1], safe: :unsafe, " \
          "attributes: { 'imagesdir' => ARGV[2] }"

DOC = """= A page

[mermaid]
....
flowchart LR
  a --> b
....
"""


def test_a_diagram_that_fails_to_render_falls_back_to_its_source(tmp_path):
    # A renderer that fails, as render_mermaid.py does when the browser cannot start.
    failing = tmp_path / "python"
    failing.write_text("#!/bin/sh\necho 'chromium: cannot start' >&2\nexit 3\n")
    failing.chmod(0o755)
    page = tmp_path / "page.adoc"
    page.write_text(DOC)
    out = tmp_path / "page.html"
    r = subprocess.run(["ruby", "-r", "asciidoctor", "-r", str(EXTENSION), "-e", CONVERT,
                        str(page), str(out), str(tmp_path)],
                       capture_output=True, text=True, timeout=60,
                       env={"PATH": "/usr/bin:/bin", "TR4947_PYTHON": str(failing)})
    assert r.returncode == 0, r.stderr
    assert "mermaid diagrams not rendered for the PDF" in r.stderr
    assert "chromium: cannot start" in r.stderr
    html = out.read_text()
    assert "a --&gt; b" in html          # the source is shown instead
    assert "<img" not in html
