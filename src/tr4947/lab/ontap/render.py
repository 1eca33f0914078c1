"""How the clustershell prints: fixed-width tables that wrap long values, ``-fields``
tables (padded, or with the session's ``-showseparator``), ``-instance`` records and the "N entries were displayed." footer."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Col:
    title: str                 # may contain "\n" for a two-line header
    width: int
    right: bool = False


def _cell(text: str, col: Col) -> str:
    return text.rjust(col.width) if col.right else text.ljust(col.width)


def table(cols: list[Col], rows: list[list[str]], footer: bool = True) -> str:
    """ONTAP's default show layout: a value wider than its column pushes the rest of the
    row onto the next line, indented to the next column (as `volume show` prints
    ``svmkafkatest`` then ``          kafkafsxN1   -  ...``)."""
    pos, p = [], 0
    for c in cols:
        pos.append(p)
        p += c.width + 1
    head_lines = max(c.title.count("\n") + 1 for c in cols)
    out = []
    for k in range(head_lines):
        parts = []
        for c in cols:
            t = c.title.split("\n")
            t = [""] * (head_lines - len(t)) + t          # bottom-align titles
            parts.append(_cell(t[k], c))
        out.append(" ".join(parts).rstrip())
    out.append(" ".join("-" * c.width for c in cols))
    for row in rows:
        line = ""
        for i, (c, v) in enumerate(zip(cols, row)):
            if i and len(line) >= pos[i]:
                out.append(line.rstrip())
                line = ""
            line = line.ljust(pos[i]) + _cell(v, c)
        out.append(line.rstrip())
    text = "\n".join(out)
    if footer:
        text += entries(len(rows))
    return text


def entries(n: int) -> str:
    return f"\n{n} entries were displayed." if n > 1 else ""


def fields_table(names: list[str], rows: list[list[str]], separator: str = " ",
                 titles: list[str] | None = None) -> str:
    """``-fields`` output: lower-case field names, then one line per record.

    With the session's default separator (a space) the columns are as wide as their widest
    value, single-space separated (ONTAP pads every column, the last one too) and a line of
    dashes sits under the names. After ``set -showseparator X`` (how scripts read ONTAP) there
    is no padding and no dashes: the field names, then the fields' long titles, then the
    records, each value followed by X; a value holding a space or X is double-quoted. As
    ONTAP prints it, e.g. ``vserver|volume|junction-path|`` / ``Vserver Name|Volume
    Name|Junction Path|`` / ``svm_kafka|kafka_vol|/kafka_vol|``."""
    if separator != " ":
        def cell(v: str) -> str:
            return f'"{v}"' if (" " in v or "\t" in v or (separator and separator in v)) else v
        out = ["".join(n + separator for n in names),
               "".join(t + separator for t in (titles or names))]
        out += ["".join(cell(v) + separator for v in r) for r in rows]
        return "\n".join(out) + entries(len(rows))
    widths = [max([len(n)] + [len(r[i]) for r in rows]) for i, n in enumerate(names)]
    out = [" ".join(n.ljust(w) for n, w in zip(names, widths)) + " ",
           " ".join("-" * w for w in widths) + " "]
    for r in rows:
        out.append(" ".join(v.ljust(w) for v, w in zip(r, widths)) + " ")
    return "\n".join(out) + entries(len(rows))


def instance(records: list[list[tuple[str, str]]]) -> str:
    """``-instance``: one block per record, labels right-aligned to the colon."""
    blocks = []
    for rec in records:
        w = max(len(k) for k, _ in rec)
        blocks.append("\n".join(f"{k.rjust(w)}: {v}" for k, v in rec))
    return "\n\n".join(blocks) + entries(len(records))


def none_found(what: str = "entries") -> str:
    return "There are no entries matching your query."
