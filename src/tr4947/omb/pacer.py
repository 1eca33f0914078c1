"""Publish rate control.

:class:`Pacer` follows OMB's UniformRateLimiter: message *n* is *intended* to go out at
``start + n / rate``; the difference between the actual send time and the intended one is the
"publish delay" OMB reports. Python cannot sleep per message at 100k msg/s, so the pacer hands
out *bursts*: everything that is due now, then sleeps until the next message is due. Over any
window longer than a few milliseconds the rate is exact; if the sink is slower than the
target, messages fall behind schedule, the delay grows and :meth:`Pacer.keeping_up` says so.

:class:`RateController` is OMB's controller for ``producerRate: 0`` (find the maximum
sustainable rate): every 3 s, ramp up while producers and consumers keep up, back off when
either falls more than 1,000 messages behind.
"""
from __future__ import annotations

import time


class Pacer:
    #: Burst cap: keeps command handling and delivery callbacks responsive.
    MAX_BURST = 2000

    def __init__(self, rate: float, clock=time.perf_counter, sleep=time.sleep):
        self.clock = clock
        self.sleep = sleep
        self.set_rate(rate)

    def set_rate(self, rate: float) -> None:
        """(Re)start the schedule at ``rate`` msg/s (as OMB replaces its rate limiter)."""
        self.rate = max(float(rate), 1.0)
        self.start = self.clock()
        self.scheduled = 0  # messages handed out since start

    def due(self) -> tuple[int, float]:
        """(number of messages due now, now). 0 means: call :meth:`wait` first."""
        now = self.clock()
        n = int((now - self.start) * self.rate) + 1 - self.scheduled
        return (min(n, self.MAX_BURST) if n > 0 else 0), now

    def intended(self, i: int) -> float:
        """Intended send time of the i-th message of the schedule."""
        return self.start + i / self.rate

    def take(self, n: int) -> int:
        """Mark n messages as sent; returns the schedule index of the first."""
        first = self.scheduled
        self.scheduled += n
        return first

    def wait(self, max_wait: float = 0.005) -> None:
        """Sleep until the next message is due (at most ``max_wait``)."""
        delay = self.intended(self.scheduled) - self.clock()
        if delay > 0:
            self.sleep(min(delay, max_wait))

    def behind(self) -> float:
        """Seconds the schedule is behind (0 if on time)."""
        return max(0.0, self.clock() - self.intended(self.scheduled))

    def keeping_up(self, tolerance_s: float = 0.5) -> bool:
        return self.behind() <= tolerance_s


class RateController:
    """OMB's RateController (PUBLISH/RECEIVE_BACKLOG_LIMIT 1000, ramping factor 0.01..1)."""

    def __init__(self, publish_backlog_limit: int = 1000, receive_backlog_limit: int = 1000,
                 min_ramping: float = 0.01, max_ramping: float = 1.0):
        self.publish_backlog_limit = publish_backlog_limit
        self.receive_backlog_limit = receive_backlog_limit
        self.min_ramping = min_ramping
        self.max_ramping = max_ramping
        self.ramping = max_ramping
        self.prev_published = 0
        self.prev_received = 0

    def next_rate(self, rate: float, period_s: float, total_published: int,
                  total_received: int | None) -> float:
        """``total_received=None``: no subscriptions, nothing to keep up with (OMB would
        count every message as receive backlog and throttle to ~0)."""
        expected = int(rate * period_s)
        published = total_published - self.prev_published
        self.prev_published = total_published
        if total_received is not None:
            received = total_received - self.prev_received
            self.prev_received = total_received
            receive_backlog = total_published - total_received
            if receive_backlog > self.receive_backlog_limit:
                return self._down(period_s, received, expected, receive_backlog)
        publish_backlog = expected - published
        if publish_backlog > self.publish_backlog_limit:
            return self._down(period_s, published, expected, publish_backlog)
        self.ramping = min(self.max_ramping, self.ramping * 2)
        return rate + rate * self.ramping

    def _down(self, period_s, actual, expected, backlog) -> float:
        self.ramping = max(self.min_ramping, self.ramping / 2)
        next_expected = max(0, expected - backlog)
        return min(actual / period_s, next_expected / period_s)
