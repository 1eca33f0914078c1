"""Render mermaid diagrams to PNG for the PDF, offline: Debian's chromium (through
playwright) runs the same local mermaid.min.js and options the site uses.

Input on stdin: JSON [{"source": "..."}]; argument: output directory.
Output on stdout: JSON [{"file": "<name>.png", "width": <CSS px>}] in the same order.
A diagram already rendered (same source, same mermaid) is reused from the output directory.
Exits non-zero with a message on stderr when a diagram does not render.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MERMAID = REPO / "node_modules" / "mermaid" / "dist" / "mermaid.min.js"
CHROMIUM = "/usr/bin/chromium"
# The site's settings (ui/partials/mermaid-script.hbs); no HTML labels, so text is crisp.
INIT = {"startOnLoad": False, "theme": "neutral", "securityLevel": "strict",
        "flowchart": {"nodeSpacing": 30, "rankSpacing": 40},
        "themeCSS": ".sequenceNumber { font-size: 14px; }"}
SCALE = 2  # device pixels per CSS pixel: sharp when printed


def key(source: str) -> str:
    h = hashlib.sha256(MERMAID.read_bytes()[:4096] + json.dumps(INIT).encode() + source.encode())
    return h.hexdigest()[:16]


def main() -> int:
    out_dir = Path(sys.argv[1])
    out_dir.mkdir(parents=True, exist_ok=True)
    diagrams = json.load(sys.stdin)
    results, todo = [], []
    for d in diagrams:
        name = f"mermaid-{key(d['source'])}"
        png, meta = out_dir / f"{name}.png", out_dir / f"{name}.json"
        results.append({"file": png.name, "meta": meta})
        if not meta.exists():            # written last: its PNG is complete
            todo.append((d["source"], png, meta))
    if todo:
        from playwright.sync_api import sync_playwright
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            page = browser.new_page(device_scale_factor=SCALE, viewport={"width": 1000, "height": 800})
            page.set_content("<!doctype html><html><body style='margin:0;background:#fff'>"
                             "<div id='d'></div></body></html>")
            page.add_script_tag(path=str(MERMAID))
            page.evaluate(f"mermaid.initialize({json.dumps(INIT)})")
            for i, (source, png, meta) in enumerate(todo):
                try:
                    svg = page.evaluate("async ([id, src]) => (await mermaid.render(id, src)).svg",
                                        [f"m{i}", source])
                except Exception as exc:  # mermaid's parse error, with the line it stopped at
                    print(f"mermaid diagram failed to render: {exc}\n{source}", file=sys.stderr)
                    browser.close()
                    return 1
                page.evaluate("svg => { document.getElementById('d').innerHTML = svg; }", svg)
                el = page.locator("#d svg")
                box = el.bounding_box()
                # The editions' PDFs are converted in parallel and may share a diagram: each
                # file appears whole (written aside, then renamed), the PNG before its meta.
                tmp = f".{os.getpid()}.tmp"
                el.screenshot(path=str(png) + tmp, omit_background=False, type="png")
                os.replace(str(png) + tmp, png)
                Path(str(meta) + tmp).write_text(json.dumps({"width": round(box["width"])}))
                os.replace(str(meta) + tmp, meta)
            browser.close()
    json.dump([{"file": r["file"], **json.loads(r["meta"].read_text())} for r in results], sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
