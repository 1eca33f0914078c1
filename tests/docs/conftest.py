"""What the guide's structure tests know about the repository: pages, nav, snippets, and the
chapter/procedure map in shared/tr4947/PROCEDURES.md (with an embedded fallback)."""
from __future__ import annotations

import os
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MODULE = REPO / "docs" / "modules" / "ROOT"
PAGES = MODULE / "pages"
NAV = MODULE / "nav.adoc"
SNIPPETS = REPO / "snippets"

# Used when PROCEDURES.md is not available (e.g. a clone without the shared folder).
FALLBACK_CHAPTERS = [
    "index", "why-nfs", "silly-rename", "functional-validation", "cpu-utilization",
    "broker-recovery", "storage-efficiency", "aws-cvo", "aws-fsx", "aff-a900", "sizing",
    "conclusion", "references", "errata", "running",
]
FALLBACK_PROCEDURES = {
    **{f"FV-{i}": "functional-validation" for i in range(1, 9)},
    "CPU-1": "cpu-utilization", "CPU-2": "cpu-utilization",
    **{f"REC-{i}": "broker-recovery" for i in range(1, 4)},
    "EFF-1": "storage-efficiency", "EFF-2": "storage-efficiency",
    **{f"CVO-{i}": "aws-cvo" for i in range(1, 8)},
    **{f"FSX-{i}": "aws-fsx" for i in range(1, 8)},
    **{f"AFF-{i}": "aff-a900" for i in range(1, 7)},
    "SIZ-1": "sizing",
}


def shared_dir() -> Path | None:
    """The shared folder: $TR4947_SHARED, /work/shared, or ../shared next to the repository."""
    for cand in (os.environ.get("TR4947_SHARED"), "/work/shared", REPO.parent / "shared"):
        if cand and Path(cand).is_dir():
            return Path(cand)
    return None


def procedures_md() -> Path | None:
    shared = shared_dir()
    if shared and (shared / "tr4947" / "PROCEDURES.md").is_file():
        return shared / "tr4947" / "PROCEDURES.md"
    return None


def _table_after(text: str, heading: str) -> list[list[str]]:
    """Rows (cells stripped) of the first Markdown table after a '## heading' line."""
    lines = text.splitlines()
    start = next(i for i, l in enumerate(lines) if l.strip().lower().startswith(heading.lower()))
    rows, seen = [], False
    for line in lines[start + 1:]:
        s = line.strip()
        if s.startswith("|"):
            seen = True
            cells = [c.strip() for c in s.strip("|").split("|")]
            if all(re.fullmatch(r":?-+:?", c) for c in cells if c):
                continue
            rows.append(cells)
        elif seen:
            break
    return rows[1:]  # drop the header row


def parse_procedures(text: str) -> tuple[list[str], dict[str, str]]:
    """(chapter page names in order, {procedure ID: chapter}) from PROCEDURES.md text."""
    chapters = [r[0].strip("` ") for r in _table_after(text, "## Chapters")]
    procs = {r[0].strip("` "): r[1].strip("` ") for r in _table_after(text, "## Procedures")}
    return chapters, procs


GUIDE_CHAPTERS = REPO / "docs" / "data" / "guide-chapters.yaml"


def with_guide_chapters(chapters: list[str], procs: dict[str, str]) -> tuple[list[str], dict]:
    """The TR's chapters and procedures plus the guide's own (docs/data/guide-chapters.yaml)."""
    import yaml
    own = yaml.safe_load(GUIDE_CHAPTERS.read_text(encoding="utf-8"))
    chapters = list(chapters)
    for c in own.get("chapters", []):
        chapters.insert(chapters.index(c["after"]) + 1, c["page"])
    return chapters, {**procs, **own.get("procedures", {})}


def expected() -> tuple[list[str], dict[str, str], str]:
    md = procedures_md()
    if md is None:
        return (*with_guide_chapters(FALLBACK_CHAPTERS, FALLBACK_PROCEDURES),
                "embedded fallback")
    chapters, procs = parse_procedures(md.read_text(encoding="utf-8"))
    return (*with_guide_chapters(chapters, procs), f"{md} and {GUIDE_CHAPTERS.name}")


def nav_pages(text: str) -> list[str]:
    """Page names (without .adoc) of the nav's xrefs, in order."""
    return re.findall(r"xref:([\w./-]+?)\.adoc", text)


def nav_sections(text: str) -> list[tuple[str, list[str]]]:
    """(title, page names) for each list of a nav file: Antora renders every list, with the
    block title ('.Title') above it, as one group of the navigation."""
    sections: list[tuple[str, list[str]]] = []
    title = ""
    for line in text.splitlines():
        s = line.strip()
        if re.match(r"^\.[^.\s]", s):
            title = s[1:].strip()
            sections.append((title, []))
        elif s.startswith("*"):
            if not sections:
                sections.append(("", []))
            sections[-1][1].extend(nav_pages(s))
    return sections


def guide_nav() -> list[tuple[str, list[str]]]:
    """The nav groups docs/data/guide-chapters.yaml gives: (group title, pages)."""
    import yaml
    own = yaml.safe_load(GUIDE_CHAPTERS.read_text(encoding="utf-8"))
    return [(g["group"], list(g["pages"])) for g in own.get("nav", [])]


def guide_pages() -> set[str]:
    """The pages the guide adds to the TR's chapters."""
    import yaml
    own = yaml.safe_load(GUIDE_CHAPTERS.read_text(encoding="utf-8"))
    return {c["page"] for c in own.get("chapters", [])}


def section_problems(page_text: str, proc_id: str) -> list[str]:
    """What is wrong with procedure proc_id's section on a page ([] when it is right):
    a level-2 section titled '<ID>: ...' with the anchor [#<id>] right above it, and a
    '// results: <ID>' marker where its results are (or will be) embedded."""
    problems = []
    lines = page_text.splitlines()
    title = re.compile(rf"^==\s+{re.escape(proc_id)}:\s+\S")
    idx = [i for i, l in enumerate(lines) if title.match(l)]
    if len(idx) != 1:
        problems.append(f"{proc_id}: expected one '== {proc_id}: ...' section, found {len(idx)}")
        return problems
    above = next((l.strip() for l in reversed(lines[:idx[0]]) if l.strip()), "")
    if above != f"[#{proc_id.lower()}]":
        problems.append(f"{proc_id}: anchor [#{proc_id.lower()}] missing above its title")
    if not re.search(rf"^//\s*results:\s*{re.escape(proc_id)}\s*$", page_text, re.M):
        problems.append(f"{proc_id}: no '// results: {proc_id}' marker")
    return problems


INCLUDE_EXAMPLE = re.compile(r"^include::example\$([^\[]+)\[", re.M)


def example_includes() -> dict[str, list[str]]:
    """{snippet path relative to snippets/: [pages including it]}."""
    found: dict[str, list[str]] = {}
    for page in sorted(PAGES.glob("*.adoc")):
        for target in INCLUDE_EXAMPLE.findall(page.read_text(encoding="utf-8")):
            found.setdefault(target, []).append(page.name)
    return found


def snippet_files() -> list[str]:
    return sorted(str(p.relative_to(SNIPPETS)) for p in SNIPPETS.rglob("*") if p.is_file())


NOTEBOOKS = REPO / "notebooks"


def committed_notebooks() -> list[Path]:
    """Notebooks under version control (a notebook still being written is not yet owed a link);
    all notebooks when git is not available."""
    import subprocess
    try:
        out = subprocess.run(["git", "ls-files", "notebooks/*.ipynb"], cwd=REPO, text=True,
                             capture_output=True, check=True).stdout.split()
        return [REPO / f for f in out]
    except (OSError, subprocess.CalledProcessError):
        return sorted(NOTEBOOKS.glob("*.ipynb"))


def notebook_chapters(notebook_text: str) -> set[str]:
    """The chapter (page) a notebook records results for: its metadata.tr4947.chapter."""
    import json
    chapter = json.loads(notebook_text).get("metadata", {}).get("tr4947", {}).get("chapter")
    return {chapter} if chapter else set()
