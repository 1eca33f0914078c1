"""Broker CPU over a benchmark's window, from the samples a broker host takes of itself.

The TR read broker CPU from Grafana (node_exporter: the broker host's CPU). Each broker host
here samples its own broker process once a second (snippets/cpu-utilization/
CPU-2-sample-broker-cpu.sh): the process's user + system clock ticks from /proc/<pid>/stat,
which include the kernel work done in its context (its system calls: the page cache, on NFS
the client's request path), and beside it any FUSE daemon on the host (the lab's NFS client
process, whose work an NFS client does in the kernel). Kernel threads (writeback, kworkers)
are not attributed to anyone.

From those samples: the CPU seconds used between the first sample at/after a window's start
and the last at/before its end, as a share of one core; an idle window measured the same way
(the broker with no load) is the baseline the load is compared against.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Sample:
    t: float                       # epoch seconds (the host's clock)
    broker: float                  # cumulative CPU seconds of the broker process
    fuse: float                    # cumulative CPU seconds of the host's FUSE daemons


def parse_samples(text: str) -> list[Sample]:
    """The sampler's lines: ``time ticks_per_second broker_ticks fuse_ticks``."""
    out = []
    for line in text.splitlines():
        f = line.split()
        if len(f) != 4:
            continue
        try:
            t, hz, b, fu = float(f[0]), float(f[1]), float(f[2]), float(f[3])
        except ValueError:
            continue
        if hz > 0:
            out.append(Sample(t, b / hz, fu / hz))
    return out


@dataclass
class Usage:
    """CPU used by one process (or group) over a window."""
    cpu_seconds: float
    wall_seconds: float

    @property
    def percent_of_core(self) -> float:
        """Average share of one core (100 = one core fully busy)."""
        return 100.0 * self.cpu_seconds / self.wall_seconds if self.wall_seconds > 0 else 0.0


def usage_between(samples: list[Sample], start: float, end: float,
                  what: str = "broker") -> Usage:
    """CPU of ``what`` ("broker" or "fuse") between the first sample at/after ``start`` and
    the last at/before ``end``. ValueError when the window holds fewer than two samples (it
    was shorter than the sampling interval, or the sampler was not running)."""
    inside = [s for s in samples if start <= s.t <= end]
    if len(inside) < 2:
        raise ValueError(f"fewer than two CPU samples between {start:.1f} and {end:.1f} "
                         f"({len(samples)} samples in all): was the sampler running through "
                         "the window?")
    a, b = inside[0], inside[-1]
    used = getattr(b, what) - getattr(a, what)
    if used < 0:
        raise ValueError(f"the {what} CPU time went backwards between samples: the process "
                         "was restarted during the window")
    return Usage(used, b.t - a.t)


def per_gb(cpu_seconds: float, megabytes: float) -> float:
    """CPU seconds per GB written (MB as OMB reports it, i.e. MiB)."""
    return cpu_seconds / (megabytes / 1024) if megabytes > 0 else float("nan")
