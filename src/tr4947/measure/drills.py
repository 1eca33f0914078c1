"""What a failure drill measures, from what Kafka's verifiable clients and the cluster print.

The load of a drill is Kafka's verifiable producer (org.apache.kafka.tools.VerifiableProducer,
as kafkatest runs it): it writes increasing integers and prints one JSON line per record the
cluster acknowledged (``producer_send_success``: the time of the acknowledgement, partition,
offset, value) or refused (``producer_send_error``). Afterwards Kafka's verifiable consumer
reads the topic back (``record_data`` lines, one per record read). From the two:

* **lost**: acknowledged values that were not read back (kafkatest's and Jepsen's measure:
  what was lost, not what was sent);
* **duplicates**: values read back more than once;
* per fault (a *run*), from the acknowledgement times: how long the producer's partitions
  stalled and when the last one **resumed**, and the rate the producer held just before the
  fault (the load record's achieved rate);
* from a consumer group of verifiable consumers reading the topic while the drill runs
  (``record_data`` lines as they arrive): how far the group fell behind, when it caught up,
  the end-to-end latency from each record's due send time to its read, and rebalances;
* from samples of the cluster's metadata (tr4947.measure.recovery.IsrSample): when the
  cluster **detected** the fault (the broker left an in-sync replica set or its registration
  was fenced) and when every partition's **ISR was full** again.

Times are epoch seconds (the lab's hosts and the control node share one clock; on a real
site, hosts kept in step by NTP).
"""
from __future__ import annotations

import json
import math
from bisect import bisect_left, bisect_right
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable

from .recovery import IsrSample, IsrWatch, whole, whole_at

#: A partition whose acknowledgements stop for longer than this has stalled (the producer
#: at the drills' rate acknowledges every partition several times a second).
STALL_S = 1.0


@dataclass(frozen=True)
class Ack:
    t: float                # epoch seconds of the acknowledgement
    partition: int
    value: str


@dataclass
class ProducerLog:
    """One load's acknowledgements and refusals, from one verifiable producer or several
    (:func:`parse_producers`: each writes its own values, ``<its prefix>.<n>``)."""
    acks: list[Ack] = field(default_factory=list)
    errors: list[dict] = field(default_factory=list)
    started: float | None = None            # startup_complete (of several: the first)
    summary: dict = field(default_factory=dict)   # tool_data: sent, acked, avg_throughput...
    #: Per value prefix, when its producer started (one producer: its own prefix, if known).
    starts: dict[str, float] = field(default_factory=dict)

    @property
    def values(self) -> set[str]:
        return {a.value for a in self.acks}

    def due(self, value: str, rate: float) -> float | None:
        """When ``value`` was due to be sent by a producer pacing itself at ``rate`` records
        a second from its start (value n at start + n / rate); None when its start is not
        known."""
        head, _, n = value.rpartition(".")
        start = self.starts.get(head, self.started if not self.starts else None)
        if start is None or rate <= 0:
            return None
        return start + _number(value) / rate


def load_of(value: str) -> str:
    """The load a drill value belongs to: its prefix without the producer's digit
    (``1203.57`` -> ``120``: load 120, its third producer, its 58th record)."""
    return value.rpartition(".")[0][:-1]


def events(text: str) -> Iterable[dict]:
    """The JSON events a verifiable client printed, one object per line (log lines and a
    line cut short by a kill are skipped)."""
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            yield json.loads(line)
        except ValueError:
            continue


def parse_producer(text: str) -> ProducerLog:
    """The verifiable producer's stdout."""
    out = ProducerLog()
    for ev in events(text):
        name = ev.get("name")
        if name == "producer_send_success":
            out.acks.append(Ack(ev["timestamp"] / 1000.0, int(ev["partition"]), str(ev["value"])))
        elif name == "producer_send_error":
            out.errors.append(ev)
        elif name == "startup_complete":
            out.started = ev["timestamp"] / 1000.0
        elif name == "tool_data":
            out.summary = ev
    out.acks.sort(key=lambda a: a.t)
    return out


def parse_producers(texts: dict[str, str]) -> ProducerLog:
    """Several verifiable producers' stdouts as one load: ``texts`` maps each producer's
    value prefix to what it printed. Their acknowledgements in time order, their refusals,
    each one's start (:meth:`ProducerLog.due`), and their summaries added up."""
    out = ProducerLog()
    for prefix, text in texts.items():
        one = parse_producer(text)
        out.acks.extend(one.acks)
        out.errors.extend(one.errors)
        if one.started is not None:
            out.starts[prefix] = one.started
        for k in ("sent", "acked"):
            if k in one.summary:
                out.summary[k] = out.summary.get(k, 0) + one.summary[k]
    out.started = min(out.starts.values(), default=None)
    out.acks.sort(key=lambda a: a.t)
    return out


def parse_consumed(text: str) -> Counter:
    """Values read back: the verifiable consumer's ``record_data`` JSON lines, or bare
    values one per line (what the chapter's consume step keeps of them)."""
    seen: Counter = Counter()
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if line.startswith("{"):
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            if ev.get("name") == "record_data":
                seen[str(ev["value"])] += 1
        else:
            seen[line] += 1
    return seen


@dataclass(frozen=True)
class Read:
    t: float                # epoch seconds the group's member received the record
    partition: int
    value: str


@dataclass
class GroupLog:
    """What a consumer group of verifiable consumers printed while a drill ran: the first
    read of every value (later copies are a rebalance's re-reads), and when a member's
    partitions were taken away (``partitions_revoked``: a rebalance began)."""
    reads: list[Read] = field(default_factory=list)
    revoked: list[float] = field(default_factory=list)
    members: int = 0


def parse_group(texts: Iterable[str], prefix: str | None = None) -> GroupLog:
    """The members' stdouts (``kafka-verifiable-consumer.sh --verbose``): ``record_data``
    lines (with ``prefix``: only this load's values, :func:`load_of`) and
    ``partitions_revoked`` lines. An event's ``timestamp`` is when the member made it."""
    first: dict[str, Read] = {}
    out = GroupLog()
    for text in texts:
        out.members += 1
        for ev in events(text):
            name, t = ev.get("name"), ev.get("timestamp", 0) / 1000.0
            if name == "record_data":
                v = str(ev["value"])
                if prefix is not None and load_of(v) != prefix:
                    continue
                if v not in first or t < first[v].t:
                    first[v] = Read(t, int(ev["partition"]), v)
            elif name == "partitions_revoked" and ev.get("partitions"):
                out.revoked.append(t)
    out.reads = sorted(first.values(), key=lambda r: r.t)
    out.revoked.sort()
    return out


@dataclass
class Through:
    """The consumer group through one fault (:func:`group_through`)."""
    behind_most: int                # most acknowledged records not yet read, at any moment
    caught_up_s: float | None       # from the fault to the last late read (None: none late)
    e2e_p50_s: float | None         # end-to-end latency of the records sent in the window
    e2e_p99_s: float | None
    e2e_max_s: float | None
    rebalances: int                 # rebalances that began in the window
    unread: int                     # acknowledged in the window, never read by the group


@dataclass
class LoadTimes:
    """One load's acknowledgement and first-read times by value, and their sorted times:
    built once per load (up to hundreds of thousands of records), read by every run's
    :func:`group_through`."""
    acked: dict[str, float]
    read: dict[str, float]
    ack_ts: list[float]
    read_ts: list[float]                # reads of acknowledged values
    due: dict[str, float] | None        # when each value read was due (None: not paced)

    @classmethod
    def of(cls, produced: ProducerLog, group: GroupLog, rate: float) -> "LoadTimes":
        acked = {a.value: a.t for a in produced.acks}
        read = {r.value: r.t for r in group.reads}
        due = {v: produced.due(v, rate) for v in read}
        return cls(acked, read, sorted(acked.values()),
                   sorted(t for v, t in read.items() if v in acked),
                   due if all(d is not None for d in due.values()) else None)


def group_through(produced: ProducerLog, group: GroupLog, rate: float, fault: float,
                  end: float, late_s: float = STALL_S,
                  times: LoadTimes | None = None) -> Through:
    """How the group's reading went from ``fault`` to ``end``.

    * behind: acknowledged records the group had not read yet (the consumer lag an operator
      watches, in records), at its most;
    * caught up: from the fault to the last read of a record that reached the group more than
      ``late_s`` after it was due (below): when the application was on time again;
    * end-to-end latency, for every record the producer was due to send in the window: from
      then to the group's read. The verifiable producer paces its sends at ``rate`` from its
      start (value n is due at start + n / rate, and at the drills' rates its sends never
      block), so a record held back by the fault counts from when it was due, not from
      when a stalled client got round to it. ``rate`` is each producer's (several: each
      paces its own values from its own start);
    * rebalances: the moments a member's partitions were revoked, one per rebalance (members
      revoked within 5 s of each other count once).
    """
    lt = times or LoadTimes.of(produced, group, rate)
    acked, read, ack_ts, read_ts, due = lt.acked, lt.read, lt.ack_ts, lt.read_ts, lt.due
    behind = 0
    # The lag at each read and each acknowledgement in the window.
    window = ack_ts[bisect_left(ack_ts, fault):bisect_right(ack_ts, end)] + \
        read_ts[bisect_left(read_ts, fault):bisect_right(read_ts, end)]
    for t in window:
        behind = max(behind, bisect_right(ack_ts, t) - bisect_right(read_ts, t))
    paced = due is not None

    def sent(v: str) -> float:
        """When record ``v`` was due (without its producer's start: when acknowledged)."""
        return due[v] if paced else acked.get(v, read[v])
    late = [t for v, t in read.items() if fault <= t <= end and t - sent(v) > late_s]
    caught = max(late) - fault if late else None
    e2e = sorted(t - sent(v) for v, t in read.items() if paced and fault <= sent(v) <= end)
    rebalances, last = 0, None
    for t in group.revoked:
        if fault <= t <= end and (last is None or t - last > 5):
            rebalances += 1
            last = t
    unread = sum(1 for v, t in acked.items() if fault <= t <= end and v not in read)

    def pct(q: float) -> float | None:          # nearest rank
        return e2e[max(0, math.ceil(q * len(e2e)) - 1)] if e2e else None
    return Through(behind, caught, pct(0.5), pct(0.99), e2e[-1] if e2e else None, rebalances,
                   unread)


@dataclass
class Check:
    acked: int
    read: int                               # distinct values read back
    lost: list[str]                         # acknowledged, not read back
    duplicates: int                         # extra copies read
    unacked_read: int                       # read back without an acknowledgement


def check(produced: ProducerLog, consumed: Counter, prefix: str | None = None) -> Check:
    """Every acknowledged value against what was read back. ``prefix``: only values of one
    load (:func:`load_of`) count among those read."""
    read = {v: n for v, n in consumed.items() if prefix is None or load_of(v) == prefix}
    acked = produced.values
    lost = sorted(acked - set(read), key=_number)
    return Check(len(acked), len(read), lost, sum(n - 1 for n in read.values() if n > 1),
                 len(set(read) - acked))


def _number(v: str) -> float:
    try:
        return float(v.rsplit(".", 1)[-1])
    except ValueError:
        return float("inf")


def by_partition(acks: Iterable[Ack]) -> dict[int, list[float]]:
    out: dict[int, list[float]] = {}
    for a in acks:
        out.setdefault(a.partition, []).append(a.t)
    for ts in out.values():
        ts.sort()
    return out


@dataclass
class Stall:
    resumed_s: float | None                 # from the fault to the last partition's resumption
    longest_s: float                        # the longest gap of one partition
    stalled: int                            # partitions that stalled
    of: int                                 # partitions acknowledged around the fault
    silent: int = 0                         # partitions still silent at the end


def stall(acks: list[Ack], fault: float, end: float, threshold: float = STALL_S) -> Stall:
    """How the producer's partitions stalled after ``fault`` (up to ``end``). A partition
    stalled when more than ``threshold`` seconds passed between two of its acknowledgements
    (the first counted from its last one before the fault); ``longest_s`` is the longest such
    silence, ``resumed_s`` the time from the fault to the acknowledgement that ended the last
    stall of any partition (0 when nothing stalled; None when a partition was still silent at
    ``end``), ``silent`` the number of partitions silent for longer than ``threshold`` at
    ``end``."""
    parts = by_partition(a for a in acks if a.t <= end)
    resumed: float | None = 0.0
    longest, stalled, silent = 0.0, 0, 0
    for ts in parts.values():
        i = bisect_right(ts, fault)                 # the first acknowledgement after the fault
        prev = ts[i - 1] if i > 0 else fault
        after = ts[i:]
        if after:
            gaps = [(after[0] - prev, after[0])] + [(b - a, b) for a, b in zip(after, after[1:])]
        else:                                       # silent from its last one to the end
            gaps = [(end - prev, None)]
        longest = max([longest] + [g for g, _ in gaps])
        big = [at for g, at in gaps if g > threshold]
        if end - (after[-1] if after else prev) > threshold:
            silent += 1
        if big:
            stalled += 1
            resumed = None if big[-1] is None or resumed is None else max(resumed, big[-1] - fault)
    return Stall(resumed, longest, stalled, len(parts), silent)


def rate(acks: list[Ack], start: float, end: float) -> float:
    """Acknowledgements per second in [start, end)."""
    if end <= start:
        return 0.0
    ts = [a.t for a in acks]
    return (bisect_left(ts, end) - bisect_left(ts, start)) / (end - start)


def in_window(acks: list[Ack], start: float, end: float) -> list[Ack]:
    ts = [a.t for a in acks]
    return acks[bisect_left(ts, start):bisect_right(ts, end)]


def detected_at(samples: list[IsrSample], fault: float) -> float | None:
    """First sample at or after ``fault`` in which the watched broker had left an in-sync
    replica set or was no longer registered (fenced)."""
    for s in samples:
        if s.t >= fault and s.partitions and (s.without_broker > 0 or not s.broker_registered):
            return s.t
    return None


def fenced_at(samples: list[IsrSample], fault: float, until: float | None = None) -> float | None:
    """First sample at or after ``fault`` (and at most ``until``) in which the watched broker
    was no longer registered: the controller had fenced it."""
    for s in samples:
        if until is not None and s.t > until:
            break
        if s.t >= fault and s.partitions and not s.broker_registered:
            return s.t
    return None


def isr_full_at(samples: list[IsrSample], fault: float) -> float | None:
    """After a detected fault: the first sample with the broker registered and no partition
    under-replicated. None when the ISR never shrank (nothing to recover) or never recovered
    (see :func:`isr_shrank`)."""
    seen = detected_at(samples, fault)
    if seen is None:
        return None
    for s in samples:
        if s.t > seen and whole(s):
            return s.t
    return None


def whole_again_at(samples: list[IsrSample], fault: float) -> float | None:
    """After ``fault``: the first sample with the broker registered and no partition
    under-replicated that follows one with a partition under-replicated, whichever replica
    was missing (None: not yet, or no ISR shrank)."""
    shrank = False
    for s in samples:
        if s.t < fault or not s.partitions:
            continue
        if s.under_replicated > 0:
            shrank = True
        elif shrank and whole(s):
            return s.t
    return None


def isr_shrank(samples: list[IsrSample], fault: float) -> bool:
    return any(s.t >= fault and s.under_replicated > 0 for s in samples)


class Watch(IsrWatch):
    """tr4947.measure.recovery's ISR watch, made for faults that leave a broker's connections
    hanging (a cut link sends no reset): each metadata request gives up after ``timeout``
    seconds, so that a request sent to the unreachable broker costs one missed sample, not
    the samples of the whole outage (librdkafka drops the connection and asks another
    broker next time)."""

    def __init__(self, bootstrap: str, broker_id: int, topics: Iterable[str] | None = None,
                 interval: float = 0.25, timeout: float = 1.5):
        super().__init__(bootstrap, broker_id, topics, interval)
        from ..transports import kafka_admin
        ms = str(int(timeout * 1000))
        self.admin = kafka_admin.client(bootstrap, **{
            "socket.timeout.ms": ms, "socket.connection.setup.timeout.ms": ms,
            "reconnect.backoff.max.ms": "1000"})
        self.timeout = timeout

    def poll(self) -> IsrSample | None:
        import time as _time
        from .recovery import summarize
        try:
            md = self.admin.list_topics(timeout=self.timeout)
        except Exception:                      # no broker answered in time: a missed sample
            self.errors += 1
            return None
        s = summarize(_time.time(), md, self.broker_id, self.topics)
        self.samples.append(s)
        return s
