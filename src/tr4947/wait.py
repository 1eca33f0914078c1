"""Waiting for something to become true, the one way the project does it.

Lab bring-up, a broker that must serve, a reassignment that must finish, a topic's files that
must go: each is a poll with a deadline that, when it gives up, says what it waited for and
what it saw last, so a timeout in a chapter's output explains itself.
"""
from __future__ import annotations

import socket
import time
from typing import Callable, TypeVar

T = TypeVar("T")


def until(check: Callable[[], T], timeout: float, interval: float = 1.0,
          what: str = "the condition", seen: Callable[[], str] | None = None,
          backoff: float = 1.0, max_interval: float | None = None) -> T:
    """Call check() until it returns something truthy and return that; after ``timeout``
    seconds a TimeoutError that says what was waited for and, with ``seen``, what was seen
    last. ``backoff`` > 1 grows the interval after each try, up to ``max_interval``."""
    deadline = time.monotonic() + timeout
    delay = interval
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            last = f"; last seen: {seen()}" if seen else ""
            raise TimeoutError(f"gave up after {timeout:.0f}s waiting for {what}{last}")
        time.sleep(delay)
        delay = min(delay * backoff, max_interval or delay * backoff)


def port_open(address: str, port: int, timeout: float = 1.0) -> bool:
    """A TCP connect succeeds (as the TR's `telnet <broker> 9092` health check)."""
    try:
        with socket.create_connection((address, port), timeout=timeout):
            return True
    except OSError:
        return False
