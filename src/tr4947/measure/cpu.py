"""CPU time of processes, sampled from /proc (through psutil) while a workload runs.

The TR read broker CPU from Grafana (node_exporter: the broker host's CPU). On the lab every
process shares one machine, so host CPU would mix both clusters, the load generator and the
storage stand-in. Instead CPU is attributed by process: each labelled group (the DAS
brokers, the NFS brokers, the bindfs processes that play the storage system, the benchmark)
is sampled separately. A process's CPU time (user + system, from /proc/<pid>/stat) includes
the kernel work done in its own context (its system calls: the page cache, the FUSE request
queue); kernel threads (writeback, kworkers) are not attributed to anyone.

Usage::

    with CpuSampler({"das brokers": [pid1, pid2, pid3]}, interval=1.0) as s:
        run_the_workload()
    usage = s.usage(start, end)        # {"das brokers": Usage(...)} over a wall-clock window
"""
from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping

import psutil


@dataclass
class Sample:
    t: float                          # wall clock (time.time())
    cpu: dict[str, float]             # label -> cumulative CPU seconds of the group
    machine_busy: float               # cumulative non-idle CPU seconds of the whole machine


@dataclass
class Usage:
    """CPU used by one group over a window."""
    cpu_seconds: float
    wall_seconds: float
    processes: int

    @property
    def cores(self) -> float:
        """Average number of cores busy (1.0 = one core fully used)."""
        return self.cpu_seconds / self.wall_seconds if self.wall_seconds > 0 else 0.0

    @property
    def percent_of_core(self) -> float:
        return 100.0 * self.cores

    def percent_per_process(self) -> float:
        """Average per process, in % of one core (the TR's per-broker view)."""
        return self.percent_of_core / self.processes if self.processes else 0.0


def process_cpu_seconds(p: psutil.Process) -> float:
    """user + system CPU seconds of one process (its threads; not its children)."""
    t = p.cpu_times()
    return t.user + t.system


def machine_busy_seconds() -> float:
    t = psutil.cpu_times()
    return t.user + t.nice + t.system + getattr(t, "irq", 0.0) + getattr(t, "softirq", 0.0) \
        + getattr(t, "steal", 0.0)


def usage_between(samples: list[Sample], label: str, start: float, end: float,
                  processes: int) -> Usage:
    """CPU of one group between the first sample at/after ``start`` and the last at/before
    ``end``. Raises ValueError when the window holds fewer than two samples (the window
    was shorter than the sampling interval, or the sampler was not running)."""
    inside = [s for s in samples if start <= s.t <= end]
    if len(inside) < 2:
        raise ValueError(f"fewer than two CPU samples between {start:.1f} and {end:.1f} "
                         f"({len(samples)} samples in all): sample more often or measure "
                         "a longer window")
    a, b = inside[0], inside[-1]
    return Usage(b.cpu[label] - a.cpu[label], b.t - a.t, processes)


def machine_between(samples: list[Sample], start: float, end: float) -> Usage:
    """Whole-machine CPU over the window (every process, every core): shows how busy the
    machine was, including anything else running on it."""
    inside = [s for s in samples if start <= s.t <= end]
    if len(inside) < 2:
        raise ValueError("fewer than two CPU samples in the window")
    a, b = inside[0], inside[-1]
    return Usage(b.machine_busy - a.machine_busy, b.t - a.t, os.cpu_count() or 1)


class CpuSampler:
    """Samples the cumulative CPU time of labelled process groups in a background thread.

    ``groups`` maps a label to pids, or to a callable returning pids (re-evaluated at each
    sample, for processes that start during the run). A process that exits keeps its last
    reading, so a group's total never goes backwards.
    """

    def __init__(self, groups: Mapping[str, Iterable[int] | Callable[[], Iterable[int]]],
                 interval: float = 1.0):
        if interval <= 0:
            raise ValueError("interval must be > 0 seconds")
        if not groups:
            raise ValueError("no process groups to sample")
        self.groups = dict(groups)
        self.interval = interval
        self.samples: list[Sample] = []
        self._last: dict[int, float] = {}           # pid -> last CPU seconds read
        self._procs: dict[int, psutil.Process] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._members: dict[str, set[int]] = {k: set() for k in self.groups}

    def _pids(self, label: str) -> list[int]:
        g = self.groups[label]
        return list(g() if callable(g) else g)

    def _read(self, pid: int) -> float:
        try:
            p = self._procs.get(pid)
            if p is None:
                p = self._procs[pid] = psutil.Process(pid)
            self._last[pid] = process_cpu_seconds(p)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            pass                                    # exited: keep the last reading
        return self._last.get(pid, 0.0)

    def sample(self) -> Sample:
        cpu = {}
        for label in self.groups:
            pids = self._pids(label)
            self._members[label].update(pids)
            # Exited members keep contributing their last reading.
            cpu[label] = sum(self._read(p) for p in self._members[label])
        s = Sample(time.time(), cpu, machine_busy_seconds())
        self.samples.append(s)
        return s

    def processes(self, label: str) -> int:
        return len(self._members[label])

    def usage(self, start: float, end: float) -> dict[str, Usage]:
        return {k: usage_between(self.samples, k, start, end, self.processes(k))
                for k in self.groups}

    def machine(self, start: float, end: float) -> Usage:
        return machine_between(self.samples, start, end)

    def _loop(self) -> None:
        nxt = time.monotonic()
        while not self._stop.is_set():
            self.sample()
            nxt += self.interval
            self._stop.wait(max(0.0, nxt - time.monotonic()))

    def start(self) -> "CpuSampler":
        if self._thread is not None:
            raise RuntimeError("sampler already started")
        self._thread = threading.Thread(target=self._loop, name="cpu-sampler", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join(5)
        self._thread = None
        self.sample()                               # a last reading at the very end

    def __enter__(self) -> "CpuSampler":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
