"""Reading an OMB run from its log lines: when the benchmark phase ran (wall clock) and the
rates it reported. The CPU of a run is taken over exactly that window, so warm-up, topic
creation and worker start-up are left out, as the TR's 5-minute steady runs leave them out.

OMB's lines start with the local time of day, ``HH:MM:SS.mmm [main] INFO ...``; the date
is taken from the caller (the day the run happened).
"""
from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass

LINE = re.compile(r"^(\d{2}):(\d{2}):(\d{2})\.(\d{3}) \[[^\]]*\] \w+ \S+ - (.*)$")
PERIOD = re.compile(r"Pub rate\s+([\d.]+) msg/s /\s+([\d.]+) MB/s \| Pub err\s+([\d.]+) err/s \| "
                    r"Cons rate\s+([\d.]+) msg/s /\s+([\d.]+) MB/s")
START = "Starting benchmark traffic"
END = "----- Aggregated Pub Latency"


@dataclass
class BenchmarkWindow:
    start: float                 # epoch seconds: "Starting benchmark traffic"
    end: float                   # epoch seconds: the aggregated-latency line after the last period
    publish_rate: float          # msg/s, mean of the benchmark phase's periodic lines
    publish_mbs: float
    consume_rate: float
    errors: float                # err/s, mean
    periods: int

    @property
    def seconds(self) -> float:
        return self.end - self.start


def _epoch(m: re.Match, day: _dt.date) -> float:
    h, mi, s, ms = (int(m.group(i)) for i in range(1, 5))
    t = _dt.datetime.combine(day, _dt.time(h, mi, s, ms * 1000))
    return t.timestamp()                        # local time, as OMB logs it


def benchmark_window(log: str, day: _dt.date | None = None) -> BenchmarkWindow:
    """The benchmark phase of one OMB run (the last one in ``log``). ValueError if the log
    has no complete benchmark phase (the run failed or was cut short)."""
    day = day or _dt.date.today()
    start = end = None
    periods: list[tuple[float, ...]] = []
    prev = None
    for raw in log.splitlines():
        m = LINE.match(raw.strip())
        if not m:
            continue
        t = _epoch(m, day)
        if prev is not None and t < prev - 12 * 3600:
            day += _dt.timedelta(days=1)        # the run crossed midnight
            t = _epoch(m, day)
        prev = t
        msg = m.group(5)
        if START in msg:
            start, end, periods = t, None, []
        elif start is not None and end is None:
            if msg.startswith(END):
                end = t
            else:
                p = PERIOD.search(msg)
                if p:
                    periods.append(tuple(float(x) for x in p.groups()))
    if start is None or end is None or not periods:
        raise ValueError("no complete benchmark phase in the OMB log (expected a "
                         f"'{START}' line, periodic 'Pub rate' lines and an aggregated-latency "
                         "line): did the run fail?")
    n = len(periods)
    mean = [sum(p[i] for p in periods) / n for i in range(5)]
    return BenchmarkWindow(start, end, mean[0], mean[1], mean[3], mean[2], n)
