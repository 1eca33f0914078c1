"""The drills' load (DRL-0): Kafka's verifiable producers on the client, as a service the
Harness composes (as kafkatest composes its VerifiableProducer): started on one cluster at a
rate, several of them sharing it, stopped, their acknowledgements read back, their files
removed; whether they are back at their pace; and one calibration step.

Each producer is asked for its share of the rate, rounded to a whole number of records a
second (:meth:`Producers.each`): the pace it keeps, so the one its records' due times count
from."""
from __future__ import annotations

import time
from shlex import quote as q

from ...measure import drills as m
from .sides import CLUSTERS, Side

SNIP = "failure-drills/"
#: Before the next fault of a drill, the producers are back at their pace when their
#: acknowledgements over the last PACE_WINDOW_S come within PACE_BAND of the rate (a catch-up
#: burst after a long fault runs above it); the wait for it gives up after PACE_WAIT_S.
PACE_WINDOW_S = 3.0
PACE_BAND = (0.8, 1.25)
PACE_WAIT_S = 180
#: A calibration step: the producers' warm-up, then the window their rate is measured over.
CALIBRATION_WARMUP_S = 8
CALIBRATION_WINDOW_S = 20
#: A calibration step holds when every cluster's producers achieve this share of the rate
#: with their records acknowledged this soon after they were due, on average.
CALIBRATION_LATENCY_MS = 500


class Producers:
    """The load's producers, for the Harness ``h`` (its target, client, rate, producer count
    and DRL-0's first step)."""

    def __init__(self, h):
        self.h = h

    def start(self, s: Side, rate: float, out: str, prefix: str):
        """The load's producers on cluster ``s`` at ``rate`` records/s together (values
        ``<prefix><j>.<n>``, output ``<out>.<j>``)."""
        return self.h.t.run_snippet(SNIP + "DRL-0-producer-start.sh", self.h.client,
                                    check=True, timeout=180, needs=self.h.setup,
                                    BOOTSTRAP=s.bootstrap(), VALUE_PREFIX=prefix, OUT=out,
                                    PRODUCERS=self.h.producers, RATE=self.each(rate))

    def each(self, rate: float | None = None) -> int:
        """Records/s one producer is asked for when the load is ``rate`` (default: the
        drills' rate) together: what it paces itself at, so what its due times count from."""
        return max(1, round((self.h.rate if rate is None else rate) / self.h.producers))

    def stop(self, out: str):
        return self.h.t.run_snippet(SNIP + "DRL-0-producer-stop.sh", self.h.client,
                                    timeout=300, OUT=out, PRODUCERS=self.h.producers)

    def read(self, out: str, prefix: str) -> m.ProducerLog:
        return m.parse_producers({f"{prefix}{j}": self.h.t.read_file(self.h.client,
                                                                     f"{out}.{j}").stdout
                                  for j in range(1, self.h.producers + 1)})

    def clean(self, out: str) -> None:
        """The load's files on the client (producers', group's, the check's) removed."""
        if not self.h.dry:
            self.h.t.run(f"rm -f {q(out)} {q(out)}.*", self.h.client, timeout=60)

    def at_pace(self, out: str, deadline: float) -> float:
        """Until the producers of ``out`` acknowledge at their pace again (PACE_BAND of the
        rate over the last PACE_WINDOW_S), at most until ``deadline``; the time they were
        (or the deadline's, and the run's rate then shows it)."""
        lines = int(self.each() * (PACE_WINDOW_S + 2)) + 50
        while True:
            got = self.h.t.run(f"for f in {q(out)}.[0-9]; do tail -n {lines} \"$f\"; done",
                               self.h.client, read_only=True, timeout=60)
            now = time.time()
            acks = sorted(m.parse_producer(got.stdout).acks, key=lambda a: a.t)
            held = m.rate(acks, now - PACE_WINDOW_S - 0.5, now - 0.5)
            low, high = (b * self.h.rate for b in PACE_BAND)
            if low <= held <= high or now >= deadline:
                if now >= deadline:
                    print(f"  the producers were not back at their pace after "
                          f"{PACE_WAIT_S} s ({held:,.0f} records/s)")
                return now
            time.sleep(1)


    def try_rate(self, s: Side, rate: float) -> "Tried":
        """One calibration step on cluster ``s``: the load at ``rate`` for the warm-up and
        the window, stopped, and what it achieved."""
        out = f"/tmp/drill-calibration-{s.name}.jsonl"
        prefix = f"9{CLUSTERS.index(s.name) + 1}0"
        try:
            try:
                started = self.start(s, rate, out, prefix)
                time.sleep(CALIBRATION_WARMUP_S)
                t0 = time.time()
                time.sleep(CALIBRATION_WINDOW_S)
                t1 = time.time()
            finally:
                self.stop(out)          # also those a failed start left running
            produced = self.read(out, prefix)
        finally:
            self.clean(out)
        return Tried(s.name, started.planned, produced, self.each(rate), t0, t1)

class Tried:
    """One calibration step on one cluster, as omb.calibrate reads it (name, planned, load)."""

    def __init__(self, name: str, planned: bool, produced: m.ProducerLog, each: float,
                 t0: float, t1: float):
        self.name, self.planned = name, planned
        self.produced, self.each, self.t0, self.t1 = produced, each, t0, t1

    def load(self, rate: float) -> dict:
        """The step as a load record's run: asked and achieved records/s, and how long
        after their due time the window's records were acknowledged, on average."""
        acks = m.in_window(self.produced.acks, self.t0, self.t1)
        late = [a.t - d for a in acks
                if (d := self.produced.due(a.value, self.each)) is not None]
        return {"name": self.name, "unit": "records/s", "target": round(rate, 1),
                "achieved": round(m.rate(self.produced.acks, self.t0, self.t1), 1),
                "window_s": round(self.t1 - self.t0, 1),
                "publish_latency_avg_ms": round(1000 * sum(late) / len(late), 1)
                if late else float("inf")}
