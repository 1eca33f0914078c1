"""Storage write throughput from GNU dd's summary line, for the sizing formula's
max(t_storage). dd with ``conv=fdatasync`` times the write *and* the flush to storage, so
the page cache does not inflate the figure."""
from __future__ import annotations

import re
from dataclasses import dataclass

# "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 5.1234 s, 210 MB/s"
DD = re.compile(r"^(\d+) bytes .*copied, ([\d.,]+) s, ", re.M)


@dataclass
class Write:
    bytes: int
    seconds: float

    @property
    def mb_per_s(self) -> float:
        """Decimal MB/s (10^6 bytes), as dd and the TR's MBps figures count."""
        return self.bytes / self.seconds / 1e6


def parse_dd(output: str) -> Write:
    m = None
    for m in DD.finditer(output):
        pass                                    # the last summary line counts
    if m is None:
        raise ValueError("no dd summary line ('N bytes ... copied, S s, R MB/s') in:\n"
                         + output[-500:])
    return Write(int(m.group(1)), float(m.group(2).replace(",", ".")))


def concurrent_rate(writes: list[Write]) -> float:
    """Aggregate MB/s of writers that ran at the same time: all bytes over the longest time
    (a conservative figure: the slowest writer sets the window)."""
    if not writes:
        raise ValueError("no writes")
    return sum(w.bytes for w in writes) / max(w.seconds for w in writes) / 1e6
