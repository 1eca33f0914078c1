"""java.util.Properties text, as OMB's Kafka driver loads ``commonConfig``/``producerConfig``...

The driver YAML holds these as multi-line strings; OMB calls ``Properties.load(new
StringReader(...))`` on them, so the syntax is Java's, not YAML's: ``#``/``!`` comments,
``key=value``, ``key: value`` or ``key value``, backslash line continuations and escapes.
"""
from __future__ import annotations

_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


class PropertiesError(ValueError):
    """Text Java's Properties.load refuses; ``line`` is the 0-based line in the text."""

    def __init__(self, message: str, line: int):
        super().__init__(message)
        self.line = line


def _logical_lines(text: str):
    """(0-based index of the line it starts on, logical line)."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        start = i
        line = lines[i].lstrip(" \t\f")
        i += 1
        if not line or line[0] in "#!":
            continue
        # A line ending in an odd number of backslashes continues on the next line.
        while (len(line) - len(line.rstrip("\\"))) % 2 == 1 and i <= len(lines):
            line = line[:-1]
            if i < len(lines):
                line += lines[i].lstrip(" \t\f")
            i += 1
        yield start, line


def _unescape(s: str) -> str:
    out, i = [], 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            n = s[i + 1]
            if n == "u":
                # Java's Properties.load: IllegalArgumentException "Malformed \\uxxxx encoding."
                hexd = s[i + 2:i + 6]
                if len(hexd) < 4 or any(ch not in "0123456789abcdefABCDEF" for ch in hexd):
                    raise ValueError(f"malformed \\uxxxx escape {s[i:i + 6]!r} (Java's "
                                     f"Properties.load refuses it; write \\\\u for a backslash)")
                out.append(chr(int(hexd, 16)))
                i += 6
                continue
            out.append(_ESCAPES.get(n, n))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def parse_properties(text: str | None) -> dict[str, str]:
    """Parse Java properties text into an ordered dict (later keys win, as in Java)."""
    return {k: v for k, v, _ in parse_properties_lines(text)}


def parse_properties_lines(text: str | None) -> list[tuple[str, str, int]]:
    """(key, value, 0-based line in ``text``) for every property, in order; text Java would
    refuse (a malformed \\u escape) raises :class:`PropertiesError` with its line."""
    props: list[tuple[str, str, int]] = []
    if not text:
        return props
    for start, line in _logical_lines(text):
        # The key ends at the first unescaped '=', ':' or whitespace.
        i = 0
        while i < len(line):
            if line[i] == "\\":
                i += 2
                continue
            if line[i] in "=: \t\f":
                break
            i += 1
        key, rest = line[:i], line[i:]
        rest = rest.lstrip(" \t\f")
        if rest[:1] in ("=", ":"):
            rest = rest[1:].lstrip(" \t\f")
        try:
            props.append((_unescape(key), _unescape(rest), start))
        except ValueError as e:
            raise PropertiesError(str(e), start) from None
    return props
