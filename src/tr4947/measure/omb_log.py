"""Reading an OMB run from the log lines it prints (OMB's own, or this project's runner's).

* :func:`parse`: the time series. The periodic ``Pub rate ... | Cons rate ... | Backlog ... |
  Pub Latency (ms) ...`` lines carry throughput and publish latency every reporting period;
  WorkloadGenerator's other lines mark where the phases begin.
* :func:`benchmark_window`: when the benchmark phase ran (wall clock) and its mean rates; CPU
  is taken over exactly that window, so warm-up, topic creation and worker start-up are left
  out, as the TR's 5-minute steady runs leave them out.

OMB's lines start with the local time of day, ``HH:MM:SS.mmm [thread] LEVEL Logger - ...``;
the date is the caller's (the day the run happened). Reading the log rather than a sidecar
works the same for the real OMB on a real target.
"""
from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass, field
from typing import Iterator

_TIME = re.compile(r"^(\d{2}):(\d{2}):(\d{2})\.(\d{3}) ")
_NUM = r"\s*(-?[\d.]+|NaN)"
PERIOD = re.compile(
    rf"Pub rate{_NUM} msg/s /{_NUM} MB/s \| Pub err{_NUM} err/s \| "
    rf"Cons rate{_NUM} msg/s /{_NUM} MB/s \| Backlog:{_NUM} K \| "
    rf"Pub Latency \(ms\) avg:{_NUM} - 50%:{_NUM} - 99%:{_NUM} - 99\.9%:{_NUM} - Max:{_NUM}")

#: (marker in the log message, phase that begins with it), in the order OMB logs them.
MARKERS = [
    ("Starting warm-up traffic", "warmup"),
    ("Starting benchmark traffic", "steady"),
    ("Stopping all consumers to build backlog", "producer-only"),
    ("Start draining backlog", "drain"),
    ("Completed backlog draining", "mixed"),
]
START = "Starting benchmark traffic"
END = "----- Aggregated Pub Latency"


def _timed(log: str, day: _dt.date) -> Iterator[tuple[float, str]]:
    """(epoch seconds, line) for every timestamped line; a run that crosses midnight moves to
    the next day."""
    prev = None
    for raw in log.splitlines():
        line = raw.strip()
        m = _TIME.match(line)
        if not m:
            continue
        h, mi, s, ms = (int(m.group(i)) for i in range(1, 5))
        t = _dt.datetime.combine(day, _dt.time(h, mi, s, ms * 1000)).timestamp()
        if prev is not None and t < prev - 12 * 3600:
            day += _dt.timedelta(days=1)
            t += 86400
        prev = t
        yield t, line


@dataclass
class Sample:
    t: float                 # seconds since the first timestamped line
    phase: str
    publish_rate: float      # msg/s
    publish_mbs: float       # MiB/s (OMB's "MB/s")
    error_rate: float
    consume_rate: float
    consume_mbs: float
    backlog_k: float         # thousands of messages
    latency_avg: float       # publish latency, ms
    latency_50: float
    latency_99: float
    latency_999: float
    latency_max: float

    @property
    def total_mbs(self) -> float:
        """Producer plus consumer throughput: the TR's "total throughput"."""
        return self.publish_mbs + self.consume_mbs


@dataclass
class Run:
    samples: list[Sample] = field(default_factory=list)
    #: phase -> seconds (since the first line) at which it began
    phase_starts: dict[str, float] = field(default_factory=dict)

    def of(self, *phases: str) -> list[Sample]:
        return [s for s in self.samples if s.phase in phases]


def _f(x: str) -> float:
    return float("nan") if x == "NaN" else float(x)


def parse(log: str, day: _dt.date | None = None) -> Run:
    """Samples and phase starts of the last run in ``log`` (a later WORKLOAD header starts
    over)."""
    run = Run()
    t0 = None
    phase = "setup"
    for t, line in _timed(log, day or _dt.date.today()):
        if t0 is None:
            t0 = t
        if "--- WORKLOAD :" in line:
            run, t0, phase = Run(), t, "setup"
            continue
        for marker, name in MARKERS:
            if marker in line:
                # A backlog run logs "Starting benchmark traffic" after the pause line:
                # the phase stays producer-only.
                if not (name == "steady" and phase == "producer-only"):
                    phase = name
                    run.phase_starts.setdefault(name, round(t - t0, 3))
                if name == "producer-only":
                    # OMB's backlog thread may log its pause just after "Starting
                    # benchmark traffic": that traffic is producer-only too.
                    run.phase_starts.pop("steady", None)
        p = PERIOD.search(line)
        if p:
            v = [_f(x) for x in p.groups()]
            run.samples.append(Sample(round(t - t0, 3), phase, *v))
    _majority_phases(run)
    return run


def _majority_phases(run: Run) -> None:
    """A period that spans a phase change belongs to the phase it spent most of its time in
    (its line is logged after the change, so by itself it would always count as the later)."""
    starts = sorted(run.phase_starts.items(), key=lambda kv: kv[1])
    if not starts:
        return
    prev_t = None
    for s in run.samples:
        a = prev_t if prev_t is not None else max(
            (t for _, t in starts if t <= s.t), default=s.t)
        b = s.t
        share: dict[str, float] = {}
        for i, (name, t) in enumerate(starts):
            end = starts[i + 1][1] if i + 1 < len(starts) else float("inf")
            overlap = min(b, end) - max(a, t)
            if overlap > 0:
                share[name] = share.get(name, 0.0) + overlap
        if share:
            s.phase = max(share, key=share.get)
        prev_t = b


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


def benchmark_window(log: str, day: _dt.date | None = None) -> BenchmarkWindow:
    """The benchmark phase of one OMB run (the last one in ``log``). ValueError if the log
    has no complete benchmark phase (the run failed or was cut short)."""
    start = end = None
    periods: list[tuple[float, ...]] = []
    for t, line in _timed(log, day or _dt.date.today()):
        if START in line:
            start, end, periods = t, None, []
        elif start is not None and end is None:
            if END in line:
                end = t
            else:
                p = PERIOD.search(line)
                if p:
                    periods.append(tuple(_f(x) for x in p.groups()))
    if start is None or end is None or not periods:
        raise ValueError("no complete benchmark phase in the OMB log (expected a "
                         f"'{START}' line, periodic 'Pub rate' lines and an aggregated-latency "
                         "line): did the run fail?")
    n = len(periods)
    mean = [sum(p[i] for p in periods) / n for i in range(5)]
    return BenchmarkWindow(start, end, mean[0], mean[1], mean[3], mean[2], n)
