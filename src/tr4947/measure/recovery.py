"""Broker recovery time, measured two ways.

1. From the replacement broker's own log, as the TR does: from the line that says the
   server is starting to the last line that says it has taken over its partitions
   (``Removed fetcher for partitions``) or loaded its coordinator state (``Finished
   loading``). The TR's brokers were ZooKeeper-era (``starting (kafka.server.KafkaServer)``);
   KRaft brokers log ``Transition from SHUTDOWN to STARTING``. Both are recognised.
2. From the cluster's view: polling the metadata until every partition's in-sync replica
   set is complete again (no under-replicated partition), counted from the moment the
   replacement was started. That is when the cluster has its redundancy back.

Also read from the log: the offset each partition's replica started from on the replacement
(``Follower <tp> starts at leader epoch E from offset N``: 0 on an empty disk, the old
broker's end offset when the data was found in place), and the producer-state lines the TR
quotes (``Loading producer state till offset N`` / ``Reloading from producer snapshot ...
from offset N``): the TR's observation that offsets started at 0 on DAS and carried on from
the old broker's on NFS.
"""
from __future__ import annotations

import datetime as _dt
import re
import threading
import time
from dataclasses import dataclass
from typing import Iterable

LOG_LINE = re.compile(r"^\s*(?:\d+\s+)?\[(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}),(\d{3})\] (\w+) (.*)$")
#: The replacement broker starts: ZooKeeper-era brokers (the TR's) and KRaft brokers.
START_MARKERS = ("starting (kafka.server.KafkaServer)", "Transition from SHUTDOWN to STARTING")
#: The TR's end of recovery: DAS (replication done) and NFS (coordinator state loaded).
END_MARKERS = ("Removed fetcher for partitions", "Finished loading")
STARTED_MARKERS = ("started (kafka.server.KafkaServer)", "Kafka Server started")
PRODUCER_STATE = re.compile(
    r"\[LogLoader partition=(?P<tp>\S+?), dir=[^\]]*\] (?:Loading producer state till offset "
    r"(?P<load>\d+)|Reloading from producer snapshot and rebuilding producer state from offset "
    r"(?P<reload>\d+))")


@dataclass
class LogLine:
    time: _dt.datetime
    level: str
    message: str
    raw: str


def parse_line(raw: str) -> LogLine | None:
    """A log4j line ``[yyyy-MM-dd HH:mm:ss,SSS] LEVEL message`` (an optional leading line
    number, as in the TR's excerpts, is allowed); None for anything else."""
    m = LOG_LINE.match(raw)
    if not m:
        return None
    t = _dt.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S").replace(
        microsecond=int(m.group(2)) * 1000)
    return LogLine(t, m.group(3), m.group(4), raw.rstrip("\n"))


def lines(text: str) -> list[LogLine]:
    return [p for p in (parse_line(r) for r in text.splitlines()) if p]


@dataclass
class LogRecovery:
    start: LogLine
    end: LogLine
    started: LogLine | None = None          # "Kafka Server started", when present

    @property
    def seconds(self) -> float:
        return (self.end.time - self.start.time).total_seconds()

    @property
    def serving_seconds(self) -> float | None:
        """Seconds from start to the server reporting itself started."""
        return (self.started.time - self.start.time).total_seconds() if self.started else None


def recovery_from_log(text: str, end_markers: Iterable[str] = END_MARKERS) -> LogRecovery:
    """Recovery of the most recent start in a broker's log, measured as the TR measures it.
    ValueError (saying which line is missing) when the log has no start or no end line."""
    parsed = lines(text)
    starts = [i for i, l in enumerate(parsed) if any(m in l.message for m in START_MARKERS)]
    if not starts:
        raise ValueError("no start line in the broker log (looked for: "
                         + " | ".join(START_MARKERS) + ")")
    after = parsed[starts[-1]:]
    ends = [l for l in after if any(m in l.message for m in end_markers)]
    if not ends:
        raise ValueError("the broker log has a start line but no end line after it (looked "
                         f"for: {' | '.join(end_markers)}): has the broker finished starting?")
    started = next((l for l in after if any(m in l.message for m in STARTED_MARKERS)), None)
    return LogRecovery(after[0], ends[-1], started)


def producer_state_offsets(text: str, topic: str | None = None) -> dict[str, int]:
    """{topic-partition: highest offset the replacement rebuilt producer state from} for the
    logs it loaded after its most recent start. 0 means the log started empty."""
    parsed = lines(text)
    starts = [i for i, l in enumerate(parsed) if any(m in l.message for m in START_MARKERS)]
    out: dict[str, int] = {}
    for l in parsed[starts[-1] if starts else 0:]:
        m = PRODUCER_STATE.search(l.message)
        if not m:
            continue
        tp = m.group("tp")
        if topic and not tp.startswith(topic + "-"):
            continue
        off = int(m.group("load") or m.group("reload"))
        out[tp] = max(out.get(tp, 0), off)
    return out


REPLICA_START = re.compile(
    r"(?:Follower|Leader) (?P<tp>\S+?)(?: with topic id \S+)? starts at leader epoch \d+ from "
    r"offset (?P<off>\d+)")


def replica_start_offsets(text: str, topic: str | None = None) -> dict[str, int]:
    """{topic-partition: log end offset the replacement's replica started from} (the
    state-change lines ``Follower <tp> starts at leader epoch E from offset N``), after its
    most recent start. 0: an empty log that must be copied again; the old broker's end offset:
    data found in place. The last such line per partition counts."""
    parsed = lines(text)
    starts = [i for i, l in enumerate(parsed) if any(m in l.message for m in START_MARKERS)]
    out: dict[str, int] = {}
    for l in parsed[starts[-1] if starts else 0:]:
        m = REPLICA_START.search(l.message)
        if m and (not topic or m.group("tp").startswith(topic + "-")):
            out[m.group("tp")] = int(m.group("off"))
    return out


# --- the cluster's view ------------------------------------------------------------------------
@dataclass
class IsrSample:
    t: float                                  # epoch seconds
    partitions: int
    under_replicated: int                     # ISR smaller than the replica list
    without_broker: int                       # partitions whose ISR lacks the watched broker
    broker_registered: bool


def summarize(t: float, metadata, broker_id: int, topics: Iterable[str] | None = None) -> IsrSample:
    """One sample from a confluent_kafka ClusterMetadata (topics: all but internal '__'
    topics other than __consumer_offsets when None)."""
    total = under = without = 0
    for name, tm in metadata.topics.items():
        if topics is not None and name not in topics:
            continue
        if topics is None and name.startswith("__") and name != "__consumer_offsets":
            continue
        for p in tm.partitions.values():
            total += 1
            if set(p.isrs) != set(p.replicas):
                under += 1
            if broker_id in p.replicas and broker_id not in p.isrs:
                without += 1
    return IsrSample(t, total, under, without, broker_id in metadata.brokers)


def whole(sample: IsrSample | None) -> bool:
    """Is the cluster whole in ``sample``: the watched broker registered and every partition
    with its full ISR?"""
    return bool(sample is not None and sample.partitions and sample.broker_registered
                and sample.under_replicated == 0)


def whole_at(samples: list[IsrSample]) -> float | None:
    """The time of the last sample if the cluster is whole in it (None: not, or no sample
    yet): what a wait for a whole cluster polls."""
    return samples[-1].t if samples and whole(samples[-1]) else None


def isr_complete_at(samples: list[IsrSample], since: float) -> float | None:
    """Epoch time of the first sample at/after ``since`` in which the cluster is whole (None
    if that never happened)."""
    return next((s.t for s in samples if s.t >= since and whole(s)), None)


def out_of_isr_at(samples: list[IsrSample], since: float) -> float | None:
    """First time at/after ``since`` when the broker was gone from the cluster: not
    registered and missing from the ISR of every partition it hosts."""
    for s in samples:
        if s.t >= since and not s.broker_registered and s.partitions and \
                s.without_broker > 0 and s.under_replicated >= s.without_broker:
            return s.t
    return None


class IsrWatch:
    """Polls cluster metadata in a background thread (tr4947.transports.kafka_admin)."""

    def __init__(self, bootstrap: str, broker_id: int, topics: Iterable[str] | None = None,
                 interval: float = 0.5):
        from ..transports import kafka_admin
        self.admin = kafka_admin.client(bootstrap)
        self.broker_id = broker_id
        self.topics = set(topics) if topics is not None else None
        self.interval = interval
        self.samples: list[IsrSample] = []
        self.errors = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def poll(self) -> IsrSample | None:
        try:
            md = self.admin.list_topics(timeout=5)
        except Exception:                      # a broker restarting; try again next time
            self.errors += 1
            return None
        s = summarize(time.time(), md, self.broker_id, self.topics)
        self.samples.append(s)
        return s

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.poll()
            self._stop.wait(self.interval)

    def start(self) -> "IsrWatch":
        self._thread = threading.Thread(target=self._loop, name="isr-watch", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(10)
            self._thread = None

    def wait(self, predicate, timeout: float, what: str, abort=None) -> float:
        """Wait until predicate(samples) returns a time; TimeoutError naming ``what``.
        ``abort()``: checked every few seconds; a non-empty answer (why it can never happen,
        e.g. the broker died) ends the wait with a RuntimeError saying so."""
        deadline = time.monotonic() + timeout
        checked = time.monotonic()
        while time.monotonic() < deadline:
            t = predicate(self.samples)
            if t is not None:
                return t
            if abort and time.monotonic() - checked > 3:
                checked = time.monotonic()
                why = abort()
                if why:
                    raise RuntimeError(f"{what} will not happen: {why}")
            time.sleep(0.2)
        last = self.samples[-1] if self.samples else None
        raise TimeoutError(f"{what} did not happen within {timeout:.0f}s (last view: {last})")

    def __enter__(self) -> "IsrWatch":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
