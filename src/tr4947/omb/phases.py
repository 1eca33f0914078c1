"""OMB's backlog run (``consumerBacklogSizeGB > 0``) as a state machine.

WorkloadGenerator.buildAndDrainBacklog, step by step:

1. after the warm-up, pause every consumer ("Stopping all consumers to build backlog");
   producers go on: the *producer-only* phase;
2. every second, backlog bytes = (subscriptionsPerTopic x sent - received) x messageSize;
   once it reaches consumerBacklogSizeGB x 2^30: "--- Completed backlog build in N s ---",
   "--- Start draining backlog ---", resume the consumers: the *drain* phase;
3. every 100 ms, backlog messages = subscriptionsPerTopic x sent - received; once it is at
   most max(1000, (1 - backlogDrainRatio) x requested / messageSize): "--- Completed backlog
   draining in N s ---": the *mixed* phase (producers and consumers together);
4. the mixed phase lasts testDurationMinutes; only then may the run end (OMB's
   needToWaitForBacklogDraining), however long the first three took.

Counters are totals since the run started (OMB's getCountersStats), so the warm-up's
traffic is already consumed when the build starts. The runner feeds :meth:`update` with
counters at :attr:`poll_interval` and carries out the actions it returns.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

GiB = 1024 ** 3

PRODUCER_ONLY, DRAIN, MIXED, DONE = "producer-only", "drain", "mixed", "done"


@dataclass
class BacklogPhases:
    requested_bytes: int
    message_size: int
    subscriptions_per_topic: int
    drain_ratio: float
    mixed_seconds: float
    log: Callable[[str], None] = lambda msg: None
    state: str = PRODUCER_ONLY
    #: (phase, start time) in the order entered.
    history: list[tuple[str, float]] = field(default_factory=list)
    _t_phase: float = 0.0
    _mixed_end: float | None = None

    @property
    def min_backlog(self) -> int:
        """Messages that may remain for the drain to count as complete (OMB's minBacklog)."""
        capacity = self.requested_bytes // self.message_size
        return max(1000, int((1.0 - self.drain_ratio) * capacity))

    @property
    def poll_interval(self) -> float:
        """How often OMB checks the counters in the current phase (mixed: not at all)."""
        return {PRODUCER_ONLY: 1.0, DRAIN: 0.1}.get(self.state, 0.5)

    @property
    def need_wait(self) -> bool:
        """True until the mixed phase has run its full length (the run may not end before)."""
        return self.state != DONE

    @property
    def label(self) -> str:
        return MIXED if self.state == DONE else self.state

    def start(self, now: float) -> list[str]:
        """Enter the producer-only phase. Returns the actions to take: ["pause"]."""
        self.log("Stopping all consumers to build backlog")
        self.state, self._t_phase = PRODUCER_ONLY, now
        self.history.append((PRODUCER_ONLY, now))
        return ["pause"]

    def backlog_messages(self, sent: int, received: int) -> int:
        return self.subscriptions_per_topic * sent - received

    def update(self, now: float, sent: int | None = None, received: int | None = None) -> list[str]:
        """Advance with the current total counters; returns actions (["resume"] when the
        drain starts). Counters are only needed in the producer-only and drain phases."""
        if self.state == PRODUCER_ONLY:
            size = self.backlog_messages(sent, received) * self.message_size
            if size >= self.requested_bytes:
                self.log(f"--- Completed backlog build in {now - self._t_phase:.0f} s ---")
                self.log("--- Start draining backlog ---")
                self.state, self._t_phase = DRAIN, now
                self.history.append((DRAIN, now))
                return ["resume"]
        elif self.state == DRAIN:
            if self.backlog_messages(sent, received) <= self.min_backlog:
                self.log(f"--- Completed backlog draining in {now - self._t_phase:.0f} s ---")
                self.state, self._t_phase = MIXED, now
                self._mixed_end = now + self.mixed_seconds
                self.history.append((MIXED, now))
        elif self.state == MIXED and now >= self._mixed_end:
            self.state = DONE
        return []
