"""A broker's effective configuration, read from its own start-up log.

A Kafka broker logs every setting it runs with (``KafkaConfig values:`` followed by one
tab-indented ``key = value`` line per setting) and names every supplied key it does not know
(``The configuration 'x' was supplied but isn't a known config.``). Comparing the TR's
``server.properties`` with that block shows what a broker really applied, on any target.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

HEADER = "KafkaConfig values:"
ENTRY = re.compile(r"^\t(\S+) = (.*)$")
UNKNOWN = re.compile(r"The configuration '([^']+)' was supplied but isn't a known config")


def effective(log: str) -> dict[str, str]:
    """The last ``KafkaConfig values`` block of the log (the latest start)."""
    blocks: list[dict[str, str]] = []
    cur: dict[str, str] | None = None
    for line in log.splitlines():
        if HEADER in line:
            cur = {}
            blocks.append(cur)
            continue
        if cur is not None:
            m = ENTRY.match(line)
            if m:
                cur[m.group(1)] = m.group(2).strip()
            else:
                cur = None
    if not blocks:
        raise ValueError(f"no '{HEADER}' block in the broker log: has the broker started?")
    return blocks[-1]


def unknown_keys(log: str) -> set[str]:
    return set(UNKNOWN.findall(log))


@dataclass
class Setting:
    key: str
    wanted: str
    effective: str | None        # None: the broker does not know the key

    @property
    def applied(self) -> bool:
        return self.effective is not None and self.effective == self.wanted


def compare(wanted: dict[str, str], log: str) -> list[Setting]:
    eff = effective(log)
    return [Setting(k, str(v), eff.get(k)) for k, v in wanted.items()]
