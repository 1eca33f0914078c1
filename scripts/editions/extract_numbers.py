#!/usr/bin/env python3
"""Helpers for comparing the TR-4947 editions (plain-text seeds in ../shared/seeds).

Sub-commands:

  numbers [EDITION ...]   every number with its unit (if any), one per line: edition:line: token
  grep PATTERN            a regular expression in every edition, with line numbers
  align OTHER             lines of the en2025 code/config blocks that do not appear verbatim in
                          edition OTHER, with the closest line found there (difflib)
  check                   every quote in docs/data/tr-*.yaml is on (or within 2 lines of) its line

The output is a reading aid: the data files are written by hand after reading the text.
"""
from __future__ import annotations

import difflib
import os
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "docs" / "data"
SEED_FILES = {
    "en2024": "000_dba8e80dff13687b.txt",
    "en2025": "001_e2b5251a99221f11.txt",
    "fr": "002_6e866ae0ae595e84.txt",
    "fsx-page": "003_4925a7b39b2e9379.txt",
    "ja": "004_49f3b6974f918f57.txt",
}
SLACK = 2  # a quote may sit this many lines away from the recorded line

UNITS = (r"(?:GBps|MBps|GPps|Gbit/s|Mbit/s|Go/s|Mo/s|GB/Sec|MB/Sec|GB/sec|GB/秒|MB/秒|MB/s|"
         r"msg/s|err/s|GiB|GB|TB|MB|KB|Go|To|Ko|T|G|M|k|ms|minutes|minute|min|分|%|IOPS|IOPs|iops|"
         r"Iops|messages|milliseconds|s)")
NUMBER = re.compile(r"(?<![\w.])(~\s?)?(\d[\d,.' ]*\d|\d)(\s?" + UNITS + r")?(?![\w])")


def seeds_dir() -> Path | None:
    for cand in (os.environ.get("TR4947_SEEDS"),
                 os.environ.get("TR4947_SHARED") and Path(os.environ["TR4947_SHARED"]) / "seeds",
                 REPO.parent / "shared" / "seeds", Path("/work/shared/seeds")):
        if cand and Path(cand).is_dir():
            return Path(cand)
    return None


def lines_of(edition: str) -> list[str]:
    d = seeds_dir()
    if d is None:
        sys.exit("seeds not found: set TR4947_SEEDS or put shared/seeds beside the repository")
    return (d / SEED_FILES[edition]).read_text(encoding="utf-8").splitlines()


def cmd_numbers(editions: list[str]) -> None:
    for ed in editions or list(SEED_FILES):
        for n, line in enumerate(lines_of(ed), 1):
            for m in NUMBER.finditer(line):
                print(f"{ed}:{n}: {m.group(0).strip()}")


def cmd_grep(pattern: str) -> None:
    rx = re.compile(pattern)
    for ed in SEED_FILES:
        for n, line in enumerate(lines_of(ed), 1):
            if rx.search(line):
                print(f"{ed}:{n}: {line.strip()[:160]}")


def code_lines(lines: list[str]) -> list[tuple[int, str]]:
    """(line number, text) of the non-empty lines inside ``` fences."""
    out, inside = [], False
    for n, line in enumerate(lines, 1):
        if line.strip().startswith("```"):
            inside = not inside
            continue
        if inside and line.strip():
            out.append((n, line.strip()))
    return out


def norm(s: str) -> str:
    return re.sub(r"\s+", " ", s).strip()


def cmd_align(other: str, base: str = "en2025") -> None:
    base_lines = code_lines(lines_of(base))
    other_all = [(n, l.strip()) for n, l in enumerate(lines_of(other), 1) if l.strip()]
    other_set = {norm(l) for _, l in other_all}
    texts = [norm(l) for _, l in other_all]
    for n, line in base_lines:
        if norm(line) in other_set:
            continue
        best = difflib.get_close_matches(norm(line), texts, n=1, cutoff=0.5)
        if best:
            i = texts.index(best[0])
            print(f"{base}:{n}: {line[:110]}\n{other}:{other_all[i][0]}: {other_all[i][1][:110]}\n")
        else:
            print(f"{base}:{n}: {line[:110]}\n{other}: (nothing close)\n")


def quote_found(lines: list[str], quote: str, line: int, whole_line: bool = False) -> bool:
    """The quote is on the line or within SLACK lines of it (the whole line when whole_line)."""
    lo, hi = max(1, line - SLACK), min(len(lines), line + SLACK)
    if whole_line:
        return any(lines[i - 1].rstrip() == quote.rstrip() for i in range(lo, hi + 1))
    return any(quote in lines[i - 1] for i in range(lo, hi + 1))


def problems() -> list[str]:
    import yaml
    out = []
    figures = yaml.safe_load((DATA / "tr-published-figures.yaml").read_text(encoding="utf-8"))
    cache = {ed: lines_of(ed) for ed in SEED_FILES}
    for fig in figures["figures"]:
        for ed in SEED_FILES:
            p = fig["editions"].get(ed)
            if p is None:
                continue
            if not quote_found(cache[ed], p["value"], p["line"]):
                out.append(f"{fig['id']} {ed}:{p['line']}: {p['value']!r} not there")
    diffs = yaml.safe_load((DATA / "tr-edition-differences.yaml").read_text(encoding="utf-8"))
    for d in diffs["differences"]:
        for side, ed in (("en", d["en_source"]), ("other", d["edition"])):
            quote, line = d[side], d["lines"][side]
            if quote is None:
                if line is not None:
                    out.append(f"{d['id']} {side}: no quote but a line")
                continue
            if not quote_found(cache[ed], quote, line, d.get("whole_line", False)):
                out.append(f"{d['id']} {side} {ed}:{line}: {quote!r} not there")
    return out


def cmd_check() -> None:
    bad = problems()
    print("\n".join(bad) or "all quotes found")
    sys.exit(1 if bad else 0)


def main(argv: list[str]) -> None:
    if not argv:
        sys.exit(__doc__)
    cmd, rest = argv[0], argv[1:]
    if cmd == "numbers":
        cmd_numbers(rest)
    elif cmd == "grep":
        cmd_grep(rest[0])
    elif cmd == "align":
        cmd_align(rest[0], *(rest[1:2]))
    elif cmd == "check":
        cmd_check()
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
