#!/usr/bin/env python3
"""Put an include of each procedure's rendered results under its `// results: <ID>` marker.

Pages mark where a procedure's results belong with `// results: FV-3`. Once a run has
rendered partials/results/<chapter>/<ID>.adoc, the include goes right below the marker
(idempotent), replacing the "will be embedded here" placeholder sentence.
"""
import re
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs" / "modules" / "ROOT"
MARK = re.compile(r"^// results: ([A-Z]+-\d+)\s*$")


def main() -> int:
    changed = 0
    for page in sorted((DOCS / "pages").glob("*.adoc")):
        chapter = page.stem
        lines = page.read_text().splitlines()
        out = []
        for i, line in enumerate(lines):
            m = MARK.match(line)
            if m and (DOCS / "partials" / "results" / chapter / f"{m.group(1)}.adoc").exists():
                inc = f"include::partial$results/{chapter}/{m.group(1)}.adoc[]"
                if out and "will be embedded here" in out[-1]:
                    out.pop()                 # the placeholder sentence gives way to results
                out.append(line)
                if i + 1 >= len(lines) or lines[i + 1] != inc:
                    out.append(inc)
                    changed += 1
                continue
            out.append(line)
        page.write_text("\n".join(out) + "\n")
    print(f"linked {changed} result include(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
