"""Storage efficiency as ONTAP reports it, and the TR's figures checked against each other.

The numbers come from ONTAP's own commands (``storage aggregate show-efficiency -instance``,
``volume show -fields ...`` with a field separator), read as scripts read them, on any
target. On the lab the
stand-in computes them from the data really written (tr4947.lab.ontap.space: 4 KiB block
deduplication within a volume, then zlib level 1 over 8 KiB compression groups).

The TR's EFF-2 figures are checked with the same arithmetic: a ratio is logical / physical,
a saving is 1 - physical / logical (so 1.70:1 means 41% saved, and 33% saved means 1.49:1).
"""
from __future__ import annotations

import csv
import re
from dataclasses import dataclass

from ..units import parse_size

#: TR-4947 EFF-2, as published (aggregate aggr1 of the CVO instance and volume kafka_vol).
TR_EFF2 = {"ratio": 1.70, "logical": "420.3GB", "physical": "281.7GB",
           "volume_used": "281GB", "volume_saved": "138GB", "volume_saved_percent": 33}


def size(text: str) -> int:
    """ONTAP size text (``420.3GB``, ``512KB``, ``0B``) -> bytes (ONTAP units are binary)."""
    return parse_size(text.strip())[0]


def ratio_of(text: str) -> float:
    """``'1.70:1'`` -> 1.70."""
    m = re.fullmatch(r"\s*([\d.]+):1\s*", text)
    if not m:
        raise ValueError(f"not an efficiency ratio like 1.70:1: {text!r}")
    return float(m.group(1))


@dataclass
class AggregateEfficiency:
    aggregate: str
    ratio: float                   # Total Storage Efficiency Ratio
    logical: int                   # Logical Space Used for All Volumes (bytes)
    physical: int                  # Physical Space Used for All Volumes (bytes)

    @property
    def computed_ratio(self) -> float:
        return self.logical / self.physical if self.physical else 1.0


def parse_aggregate_efficiency(text: str) -> list[AggregateEfficiency]:
    """Blocks of ``storage aggregate show-efficiency -instance`` (``Name: value`` lines)."""
    out = []
    for block in re.split(r"\n\s*\n", text):
        fields = dict((k.strip(), v.strip()) for k, v in
                      (l.split(":", 1) for l in block.splitlines() if ": " in l))
        name = fields.get("Name of the Aggregate")
        if not name:
            continue
        try:
            out.append(AggregateEfficiency(
                name, ratio_of(fields["Total Storage Efficiency Ratio"]),
                size(fields["Logical Space Used for All Volumes"]),
                size(fields["Physical Space Used for All Volumes"])))
        except KeyError as exc:
            raise ValueError(f"aggregate {name}: no {exc.args[0]!r} line in the "
                             "show-efficiency output (use -instance)") from None
    if not out:
        raise ValueError("no aggregate in the show-efficiency output (expected "
                         "'Name of the Aggregate:' lines; use -instance)")
    return out


#: The field separator the guide's ONTAP snippets set before a ``-fields`` read.
SEPARATOR = "|"


def parse_fields_table(text: str, separator: str = SEPARATOR) -> list[dict[str, str]]:
    """Records of a clustershell ``show -fields`` table printed after ``set -showseparator
    "|"``, as scripts read ONTAP: a line of field names, a line of their titles, then one line
    per record, every value followed by the separator and a value holding a space or the
    separator in double quotes. The csv module reads the lines, so a value with spaces (a
    comment, a description) comes back whole; ONTAP's padded layout is refused, since its
    values cannot be told apart from the padding."""
    if len(separator) != 1:
        raise ValueError(f"separator {separator!r}: one character (csv reads the lines)")
    lines = text.splitlines()

    def cells(line: str) -> list[str] | None:
        if not line.endswith(separator):
            return None
        row = next(csv.reader([line], delimiter=separator, quotechar='"', strict=True))
        return row[:-1] if row and row[-1] == "" else None
    for i, line in enumerate(lines[:-1]):
        header = cells(line)
        if not header or not all(re.fullmatch(r"[a-z0-9][a-z0-9.-]*", h) for h in header):
            continue
        titles = cells(lines[i + 1])
        if titles is None or len(titles) != len(header):
            continue
        rows = []
        for l in lines[i + 2:]:
            vals = cells(l)
            if vals is None or len(vals) != len(header):
                break                   # "N entries were displayed." or the next command
            rows.append(dict(zip(header, vals)))
        return rows
    raise ValueError(f"no '-fields' table printed with the separator {separator!r} in the "
                     f"output (run `set -showseparator \"{separator}\"` before the show "
                     "command)")


@dataclass
class Check:
    what: str
    published: str
    recomputed: str
    agrees: bool


def check_tr_figures(fig: dict = TR_EFF2) -> list[Check]:
    """Recompute the TR's EFF-2 figures from each other."""
    logical, physical = size(fig["logical"]), size(fig["physical"])
    q = logical / physical
    used, saved = size(fig["volume_used"]), size(fig["volume_saved"])
    vol_pct = 100 * saved / (used + saved)
    ratio_saving = 100 * (1 - 1 / fig["ratio"])
    return [
        Check("ratio = logical / physical", f"{fig['ratio']:.2f}:1",
              f"{fig['logical']} / {fig['physical']} = {q:.2f}:1", abs(q - fig["ratio"]) < 0.01),
        Check("saving implied by the ratio", "~33% (space savings in the text)",
              f"1 - 1/{fig['ratio']:.2f} = {ratio_saving:.0f}%", abs(ratio_saving - 33) < 1),
        Check("volume saving = saved / (used + saved)", f"{fig['volume_saved_percent']}%",
              f"{fig['volume_saved']} / ({fig['volume_used']} + {fig['volume_saved']}) = "
              f"{vol_pct:.0f}%", round(vol_pct) == fig["volume_saved_percent"]),
        Check("volume ratio = (used + saved) / used", f"{fig['ratio']:.2f}:1",
              f"({fig['volume_used']} + {fig['volume_saved']}) / {fig['volume_used']} = "
              f"{(used + saved) / used:.2f}:1", abs((used + saved) / used - fig["ratio"]) < 0.01),
    ]
