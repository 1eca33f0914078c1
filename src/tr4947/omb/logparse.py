"""An OMB run's time series, read from the log lines it prints.

The periodic ``Pub rate ... | Cons rate ... | Backlog ... | Pub Latency (ms) ...`` lines carry
throughput and publish latency every reporting period; WorkloadGenerator's other lines mark
where the phases begin. Reading the log (rather than this runner's own sidecar) works the same
for the real OMB on a real target, so the performance notebooks chart both alike.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

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
PHASES = ("warmup", "steady", "producer-only", "drain", "mixed")


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


def _seconds(m: re.Match) -> float:
    h, mi, s, ms = (int(m.group(i)) for i in range(1, 5))
    return h * 3600 + mi * 60 + s + ms / 1000


def _f(x: str) -> float:
    return float("nan") if x == "NaN" else float(x)


def parse(log: str) -> Run:
    """Samples and phase starts of the last run in ``log`` (a later "Starting warm-up"
    or WORKLOAD header starts over)."""
    run = Run()
    t0 = prev = None
    phase = "setup"
    day = 0.0
    for raw in log.splitlines():
        line = raw.strip()
        m = _TIME.match(line)
        if not m:
            continue
        t = _seconds(m) + day
        if prev is not None and t < prev - 12 * 3600:       # crossed midnight
            day += 86400
            t += 86400
        prev = t
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
