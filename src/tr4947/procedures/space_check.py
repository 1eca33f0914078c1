"""PRE-1's space check: will a volume take what the broker writes next?

A third read-only snippet, PRE-1-volume-space.ontap, reads how full a volume is and whether
autosize would grow it. The failure drills run it around a volume that fills up (DRL-3).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .nfs_audit import FAIL, PASS, SNIP, default_svm


# A broker whose log directory cannot be written (ENOSPC: the volume is full) takes the
# directory offline and, when it has no other, halts (failure drills, DRL-3). ONTAP grows a
# volume by itself only with autosize on; otherwise it stays full until someone resizes it.
# The check fails a volume that is used past its autosize grow threshold (the point where
# ONTAP itself would grow it: 85 to 98 %, by size, unless set) and that autosize will not
# grow (off, or already at its maximum).
SPACE_HEADER = ["Volume", "Size", "Used", "Available", "Used %", "Autosize", "Verdict", "Fix"]


@dataclass
class SpaceRow:
    volume: str
    size: int
    used: int
    available: int
    percent_used: int
    autosize: str                   # off | grow | grow_shrink
    max_autosize: int
    threshold: int                  # autosize grow threshold, percent
    verdict: str = PASS
    fix: str = ""
    note: str = ""


def fields_table(text: str) -> list[dict[str, str]]:
    """Rows of an ONTAP ``show ... -fields`` table as {field: value}: the header names the
    fields and the dashes line under it gives each column's place, so a value may hold
    spaces (``Connected to cluster1-02``). The table ends at the "entries were displayed"
    line or the next prompt."""
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    sep = next((i for i, line in enumerate(lines)
                if i and "-" in line and set(line) <= {"-", " "}), None)
    if sep is None:
        return []
    starts = [m.start() for m in re.finditer(r"-+", lines[sep])]
    names = lines[sep - 1].split()
    if len(names) != len(starts):
        return []
    rows = []
    for line in lines[sep + 1:]:
        if DISPLAYED.match(line.strip()) or "::>" in line:
            break
        cells = [line[a:b].strip() for a, b in zip(starts, starts[1:] + [None])]
        if cells[0]:                    # not a wrapped line of the row above
            rows.append(dict(zip(names, cells)))
    return rows


DISPLAYED = re.compile(r"\d+ entr(y was|ies were) displayed\.$")


def parse_volume_space(text: str) -> list[SpaceRow]:
    """Rows of ``volume show -fields size,used,available,percent-used,autosize-mode,
    max-autosize,autosize-grow-threshold-percent`` (ONTAP's -fields table, any column order)."""
    from ..units import parse_size
    rows = []
    for v in fields_table(text):
        try:
            rows.append(SpaceRow(v["volume"], parse_size(v["size"])[0], parse_size(v["used"])[0],
                                 parse_size(v["available"])[0],
                                 int(v["percent-used"].rstrip("%")), v["autosize-mode"],
                                 parse_size(v["max-autosize"])[0],
                                 int(v["autosize-grow-threshold-percent"].rstrip("%"))))
        except (KeyError, ValueError):
            continue
    return rows


def space_verdict(r: SpaceRow, svm: str) -> SpaceRow:
    """The row with its verdict, fix and note filled in (see the section comment)."""
    grows = r.autosize in ("grow", "grow_shrink") and r.size < r.max_autosize
    if r.percent_used < r.threshold:
        r.verdict = PASS
        r.note = ("autosize off: the volume grows only when someone resizes it"
                  if r.autosize == "off" else "")
    elif grows:
        r.verdict = PASS
        r.note = f"{r.percent_used}% used: autosize grows it (up to the maximum)"
    else:
        r.verdict = FAIL
        from ..units import format_size
        r.fix = (f"volume autosize -vserver {svm} -volume {r.volume} -mode grow "
                 f"-maximum-size {format_size(max(2 * r.size, r.max_autosize))}"
                 if r.autosize == "off" else
                 f"volume size -vserver {svm} -volume {r.volume} -new-size "
                 f"+{format_size(r.size)}")
        r.note = (f"{r.percent_used}% used, past the {r.threshold}% grow threshold, and "
                  + ("autosize is off" if r.autosize == "off" else "autosize is at its maximum")
                  + ": the broker stops when the volume is full")
    return r


def space_audit(t, volume: str, svm: str | None = None, needs=None) -> tuple[list[SpaceRow], object]:
    """PRE-1's space check of one volume, read-only: (rows, the clustershell transcript);
    no rows while ``needs`` is only planned."""
    svm = default_svm(t, svm)
    r = t.run_snippet(SNIP + "PRE-1-volume-space.ontap", t.inventory.ontap().name,
                      read_only=True, check=True, svm=svm, volume=volume, needs=needs)
    return ([] if r.planned else [space_verdict(x, svm) for x in parse_volume_space(r.stdout)]), r


def record_space(rb, proc: str, title: str, rows: list[SpaceRow]) -> str:
    """The space check as a table; returns its verdict (pass / FAIL)."""
    from ..units import format_size
    verdict = FAIL if any(r.verdict == FAIL for r in rows) else PASS
    rb.table(proc, title, SPACE_HEADER,
             [[r.volume, format_size(r.size), format_size(r.used), format_size(r.available),
               f"{r.percent_used}%", (f"{r.autosize} (max {format_size(r.max_autosize)}, "
                                      f"grows past {r.threshold}%)"),
               r.verdict, r.fix or "-"] for r in rows],
             note="; ".join(r.note for r in rows if r.note), key=["Volume", "Used %", "Verdict"])
    return verdict
