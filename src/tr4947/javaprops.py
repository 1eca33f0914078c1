"""java.util.Properties text, parsed as Java parses it: OMB's driver settings
(``commonConfig``/``producerConfig``... in the driver YAML, which OMB loads with
``Properties.load``) and brokers' ``server.properties`` alike. The syntax is Java's, not
YAML's: ``#``/``!`` comments, ``key=value``, ``key: value`` or ``key value``, backslash line
continuations and escapes.

Parsed with javaproperties, whose parser follows Properties.load and, unlike a dict-shaped
reader, yields every entry in order with its source text: the driver's checks name a key set
twice and the line each entry starts on.
"""
from __future__ import annotations

import re

import javaproperties

_EOL = re.compile(r"\r\n|\r|\n")


class PropertiesError(ValueError):
    """Text Java's Properties.load refuses; ``line`` is the 0-based line in the text."""

    def __init__(self, message: str, line: int):
        super().__init__(message)
        self.line = line


def parse_properties(text: str | None) -> dict[str, str]:
    """Parse Java properties text into an ordered dict (later keys win, as in Java)."""
    return {k: v for k, v, _ in parse_properties_lines(text)}


def parse_properties_lines(text: str | None) -> list[tuple[str, str, int]]:
    """(key, value, 0-based line in ``text``) for every property, in order; text Java would
    refuse (a malformed \\u escape) raises :class:`PropertiesError` with its line."""
    props: list[tuple[str, str, int]] = []
    if not text:
        return props
    line = 0                          # where the next element starts
    elements = javaproperties.parse(text)
    while True:
        try:
            e = next(elements)
        except StopIteration:
            return props
        except javaproperties.InvalidUEscapeError as exc:
            # Java: IllegalArgumentException "Malformed \uxxxx encoding."
            raise PropertiesError(f"malformed \\uxxxx escape {exc.escape!r} (Java's "
                                  "Properties.load refuses it; write \\\\u for a backslash)",
                                  line) from None
        if isinstance(e, javaproperties.KeyValue):
            props.append((e.key, e.value, line))
        line += len(_EOL.findall(e.source)) or 1
