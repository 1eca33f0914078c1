"""Kafka broker configuration files, edited the way an operator edits them.

The TR prints one broker's ``server.properties`` and says the others differ only in a few
lines (``log.dirs``, the broker id, its address). :func:`set_properties` makes those changes
on the text itself: a key that is present keeps its place and gets the new value, a key that
is not is appended under a comment saying why. Comments and order are kept, so the file a
broker gets is still recognisably the TR's.
"""
from __future__ import annotations

import re
from typing import Mapping

from .javaprops import parse_properties

_KEY = re.compile(r"^\s*([^#!\s=:][^=:\s]*)\s*[=:\s]")


def keys(text: str) -> dict[str, str]:
    """The effective key -> value mapping (Java properties rules; the last one wins)."""
    return parse_properties(text)


def set_properties(text: str, changes: Mapping[str, object], why: str = "") -> str:
    """``text`` with each key of ``changes`` set. Every occurrence of a key is replaced (a file
    that sets a key twice keeps one line, at the first place); missing keys are appended."""
    out: list[str] = []
    done: set[str] = set()
    for line in text.splitlines():
        m = _KEY.match(line)
        k = m.group(1) if m else None
        if k in changes:
            if k not in done:
                out.append(f"{k}={_fmt(changes[k])}")
                done.add(k)
            continue
        out.append(line)
    missing = [k for k in changes if k not in done]
    if missing:
        if why:
            out.append(f"# --- {why} ---")
        out += [f"{k}={_fmt(changes[k])}" for k in missing]
    return "\n".join(out) + "\n"


def merge_file(text: str, other: str, why: str = "") -> str:
    """``text`` with every property of another properties file (e.g. a tuning snippet or a
    ``log.dirs`` line) set."""
    return set_properties(text, keys(other), why)


#: What makes a broker this broker in its cluster: its id, its addresses, how it finds the
#: controllers (KRaft) or ZooKeeper. A snippet shows the lab's; a real broker keeps its own.
IDENTITY = ("process.roles", "node.id", "broker.id", "listeners", "advertised.listeners",
            "controller.quorum.voters", "controller.quorum.bootstrap.servers",
            "controller.listener.names", "listener.security.protocol.map",
            "inter.broker.listener.name", "zookeeper.connect")


def settings(snippet: str, keep: tuple[str, ...] = IDENTITY) -> dict[str, str]:
    """The properties of a snippet that a broker takes over (all but the ``keep`` keys)."""
    return {k: v for k, v in keys(snippet).items() if k not in keep}


def onto(existing: str, snippet: str, keep: tuple[str, ...] = IDENTITY,
         why: str = "added by TR-4947 runbook") -> str:
    """A broker's ``server.properties`` with a snippet's settings applied, the way an operator
    applies the TR's file to a running cluster: the ``keep`` keys (the broker's identity) stay
    as the broker has them, every other setting of the snippet is set. A broker without a file
    gets the snippet as it is."""
    if not existing.strip():
        return snippet
    return set_properties(existing, settings(snippet, keep), why)


def for_broker(base: str, node_id: int, address: str, port: int = 9092,
               log_dirs: str | None = None) -> str:
    """Broker 1's file turned into broker ``node_id``'s: its id, listeners and log dirs."""
    changes: dict[str, object] = {"node.id": node_id}
    k = keys(base)
    for name in ("listeners", "advertised.listeners"):
        if name in k:
            changes[name] = re.sub(r"//[^:/,]*:\d+", f"//{address}:{port}", k[name], count=1)
    if log_dirs is not None:
        changes["log.dirs"] = log_dirs
    return set_properties(base, changes)


def _fmt(v: object) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)
