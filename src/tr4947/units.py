"""ONTAP's size syntax and display, in one place.

ONTAP sizes are binary (1KB = 1024 bytes, 1TB = 1024^4) and accept an optional unit
suffix of B, K(B), M(B), G(B), T(B), P(B), case-insensitive: ``100GB``, ``1TB``, ``500g``,
``2.5t``. ``volume size`` also takes a leading ``+``/``-`` for a relative change.
Display keeps about four significant digits and drops a zero fraction, as ONTAP prints
them: ``1GB``, ``512.5MB``, ``12.34MB``, ``1.50TB``, ``1023MB``.
"""
from __future__ import annotations

import math
import re

UNITS = ["B", "KB", "MB", "GB", "TB", "PB"]
_FACTOR = {"": 1, "B": 1, "K": 1024, "M": 1024 ** 2, "G": 1024 ** 3, "T": 1024 ** 4,
           "P": 1024 ** 5}
_SIZE = re.compile(r"^(?P<sign>[+-]?)(?P<num>\d+(?:\.\d+)?)\s*(?P<unit>[bkmgtp]?)b?$", re.I)


def parse_size(text: str, allow_relative: bool = False) -> tuple[int, str]:
    """``'100GB'`` -> (107374182400, ''); ``'+2TB'`` -> (2199023255552, '+').

    Raises ValueError for anything ONTAP would not take as a size."""
    m = _SIZE.match(text.strip())
    if not m or (m.group("sign") and not allow_relative):
        raise ValueError(text)
    unit = m.group("unit").upper()
    # A bare number is bytes in ONTAP's <size> type.
    value = float(m.group("num")) * _FACTOR[unit]
    return int(round(value)), m.group("sign")


def _number(value: float) -> str:
    if value == int(value):
        return str(int(value))
    if value < 100:
        return f"{value:.2f}"
    if value < 1000:
        return f"{value:.1f}"
    return f"{value:.0f}"


def format_size(n: int | float | None, short: bool = False) -> str:
    """Bytes -> ONTAP display (``'1.50TB'``; ``short`` -> ``'1.50t'`` as `vol size` prints)."""
    if n is None:
        return "-"
    n = float(n)
    i = 0
    while i < len(UNITS) - 1 and abs(n) >= 1024:
        n /= 1024
        i += 1
    # An exact value prints bare ("1TB"); anything else keeps its decimals ("1.00t").
    text = _number(n)
    # Rounding can push 1023.99 to "1024": show it in the next unit instead.
    if text == "1024" and i < len(UNITS) - 1:
        text, i = "1", i + 1
    unit = UNITS[i]
    if short:
        unit = unit[0].lower() if unit != "B" else "b"
    return text + unit


def df_human(n: int) -> str:
    """coreutils ``df -h`` style: powers of 1024, rounded up, one decimal below 10."""
    if n < 1024:
        return str(n) if n else "0"
    units = "KMGTPE"
    v = float(n)
    for u in units:
        v /= 1024
        if v < 1024 or u == units[-1]:
            if v < 10:
                r = math.ceil(v * 10) / 10
                if r >= 10:
                    return f"{math.ceil(r)}{u}"
                return f"{r:.1f}{u}"
            r = math.ceil(v)
            if r >= 1024 and u != units[-1]:
                return f"1.0{units[units.index(u) + 1]}"
            return f"{r}{u}"
    return str(n)
