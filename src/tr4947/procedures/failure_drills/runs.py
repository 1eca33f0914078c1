"""What a drill measures: one fault (Run) and one drill on one cluster (Outcome)."""
from __future__ import annotations

from dataclasses import dataclass, field

from ...measure import drills as m


@dataclass
class Run:
    """One fault: when it began and ended, what the cluster looked like meanwhile, and what
    it cost (filled in by measure())."""
    drill: str
    cluster: str
    n: int
    fault: float                        # epoch seconds
    heal: float | None = None
    end: float = 0.0                    # the run's window ends here (the next run's start)
    until: float | None = None          # ... or here, when the drill repairs things afterwards
    steady: float = 0.0                 # from here to the fault, the producer's rate is measured
    extra: dict = field(default_factory=dict)
    detect_s: float | None = None
    resume_s: float | None = None
    stall_s: float = 0.0
    isr_s: float | None = None
    shrank: bool = False
    rate: float = 0.0                   # acknowledged records/s just before the fault
    lost: int = 0
    partitions: int = 0                 # the producer's partitions around the fault
    fenced_s: float | None = None       # when the controller fenced broker 1, from the fault
    lease_s: int | None = None          # DRL-5 on NFS: the SVM's NFSv4 lease, as read then
    group: m.Through | None = None      # the consumer group through the fault


@dataclass
class Outcome:
    """One drill on one cluster: its runs and the check of everything it acknowledged."""
    drill: str
    cluster: str
    runs: list[Run]
    check: m.Check
    producer: m.ProducerLog
    target_rate: float
    unchanged: bool
    transcripts: dict = field(default_factory=dict)
    samples: list = field(default_factory=list)
    config: str | None = None           # the configuration it ran on (configs.CONFIGS key)
    settings: dict = field(default_factory=dict)    # broker 1's, as DRL-0 read them then
    length: float | None = None         # the fault's set length, where the drill has several

    @property
    def held(self) -> bool:
        return all(r.rate >= 0.95 * self.target_rate for r in self.runs)
