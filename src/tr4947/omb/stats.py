"""Latency histograms, counters and OMB's log line format.

Latencies are recorded in microseconds into HdrHistograms, as OMB's WorkerStats does (publish
and publish-delay up to 60 s, end-to-end up to 12 h). OMB uses 5 significant digits; this
runner uses 3 (0.1% value resolution): pure-Python histograms with 5 digits are ~100x larger
and too slow to merge every period.

Hot paths do not call ``record_value`` per message (2 us each in pure Python): workers append
raw values to a list (in whatever unit the client gives them: librdkafka's delivery latency is
in seconds) and :class:`LatencyBuffer` converts and folds them in with numpy once in a while.
Every value is recorded; the histogram is the one per-message ``record_value`` calls build.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from hdrh.histogram import HdrHistogram

SIGNIFICANT_DIGITS = 3
PUBLISH_MAX_US = 60_000_000           # OMB: TimeUnit.SECONDS.toMicros(60)
E2E_MAX_US = 12 * 3600 * 1_000_000    # OMB: TimeUnit.HOURS.toMicros(12)


def new_histogram(highest: int = PUBLISH_MAX_US) -> HdrHistogram:
    return HdrHistogram(1, highest, SIGNIFICANT_DIGITS)


class LatencyBuffer:
    """Collects raw latency values (us) cheaply; ``fold()`` moves them into a histogram."""

    def __init__(self, highest: int = PUBLISH_MAX_US, drop_nonpositive: bool = False,
                 scale: float = 1.0):
        self.highest = highest
        #: OMB records end-to-end latency only when > 0 (millisecond timestamps make
        #: sub-millisecond deliveries 0); publish latencies are clamped to >= 1 us instead.
        self.drop_nonpositive = drop_nonpositive
        #: Factor from the unit of ``values`` to microseconds (1e6 for seconds).
        self.scale = scale
        self.values: list[float] = []     # scalars, appended by delivery callbacks
        self.arrays: list[np.ndarray] = []  # whole bursts (publish delay), in microseconds
        self.hist = new_histogram(highest)

    def fold(self) -> int:
        """Record everything collected so far; returns how many ``values`` that was (a
        producer counts its delivered messages this way instead of once per message)."""
        n = len(self.values)
        if not n and not self.arrays:
            return 0
        parts = list(self.arrays)
        if n:
            v = np.array(self.values, dtype=np.float64)
            if self.scale != 1.0:
                v *= self.scale
            parts.append(v)
        a = np.concatenate(parts) if len(parts) > 1 else parts[0]
        # Cleared in place: workers hold a bound .append of this list.
        self.values.clear()
        self.arrays = []
        if self.drop_nonpositive:
            a = a[a > 0]
            if not a.size:
                return n
        a = a.astype(np.int64)
        # OMB clamps to the highest trackable value.
        np.clip(a, 1, self.highest, out=a)
        # Quantise to the histogram's resolution first, so np.unique yields few values.
        bits = np.maximum(0, np.floor(np.log2(a)).astype(np.int64) - 10)
        q = (a >> bits) << bits
        vals, counts = np.unique(q, return_counts=True)
        for v, c in zip(vals.tolist(), counts.tolist()):
            self.hist.record_value(v, c)
        return n

    def take(self) -> HdrHistogram:
        """The histogram of everything recorded since the last take (then starts afresh)."""
        self.fold()
        h, self.hist = self.hist, new_histogram(self.highest)
        return h

    def reset(self) -> None:
        self.values.clear()
        self.arrays = []
        self.hist = new_histogram(self.highest)


def encode(h: HdrHistogram) -> bytes:
    return h.encode()


def decode(b: bytes, highest: int = PUBLISH_MAX_US) -> HdrHistogram:
    h = new_histogram(highest)
    if b:
        h.decode_and_add(b)
    return h


def merge(dst: HdrHistogram, src: HdrHistogram) -> HdrHistogram:
    if src.get_total_count():
        dst.add(src)
    return dst


@dataclass
class LatencySummary:
    """What OMB reads from one histogram: mean, percentiles, max (in the histogram's unit)."""
    avg: float = 0.0
    p50: float = 0.0
    p75: float = 0.0
    p95: float = 0.0
    p99: float = 0.0
    p999: float = 0.0
    p9999: float = 0.0
    p99999: float = 0.0
    max: float = 0.0
    count: int = 0

    PERCENTILES = (50, 75, 95, 99, 99.9, 99.99, 99.999)

    @classmethod
    def of(cls, h: HdrHistogram) -> "LatencySummary":
        """The same values as hdrh's get_mean_value/get_value_at_percentile, in one numpy pass
        over the non-empty buckets: hdrh walks every bucket in Python once per percentile
        (0.1 s per histogram, longer than a lab stats period on a busy machine)."""
        n = h.get_total_count()
        if not n:
            return cls()
        counts = np.ctypeslib.as_array(h.counts)[:h.counts_len]
        nz = np.flatnonzero(counts)
        cum = np.cumsum(counts[nz])

        def value_at(i: int) -> int:   # what hdrh's iterators report for bucket i
            return h.get_highest_equivalent_value(h.get_value_from_index(int(i)))

        mean = sum(int(counts[i]) * h._hdr_median_equiv_value(value_at(i)) for i in nz) / n
        pcts = [value_at(nz[np.searchsorted(cum, h.get_target_count_at_percentile(p))])
                for p in cls.PERCENTILES]
        return cls(mean, *pcts, h.get_max_value(), n)


def quantiles(h: HdrHistogram, scale: float = 1.0) -> dict[float, float]:
    """OMB's ``aggregated...Quantiles``: ``percentiles(100).forEach(v -> put(v.getPercentile(),
    v.getValueIteratedTo() / scale))``. The key is getPercentile(), the share of values up to
    this one (e.g. 50.0013...), not the tick iterated to; equal keys overwrite (a TreeMap)."""
    out: dict[float, float] = {}
    if not h.get_total_count():
        return out
    for it in h.get_percentile_iterator(100):
        out[float(it.percentile)] = it.value_iterated_to / scale
    return out


@dataclass
class PeriodStats:
    """Counters and interval histograms of one reporting period (OMB's PeriodStats)."""
    messagesSent: int = 0
    messageSendErrors: int = 0
    bytesSent: int = 0
    messagesReceived: int = 0
    bytesReceived: int = 0
    totalMessagesSent: int = 0
    totalMessageSendErrors: int = 0
    totalMessagesReceived: int = 0
    publishLatency: HdrHistogram = field(default_factory=new_histogram)
    publishDelayLatency: HdrHistogram = field(default_factory=new_histogram)
    endToEndLatency: HdrHistogram = field(default_factory=lambda: new_histogram(E2E_MAX_US))

    def add(self, o: dict) -> None:
        """Add one worker's stats message (see worker.py) into this period."""
        for k in ("messagesSent", "messageSendErrors", "bytesSent", "messagesReceived",
                  "bytesReceived", "totalMessagesSent", "totalMessageSendErrors",
                  "totalMessagesReceived"):
            setattr(self, k, getattr(self, k) + o.get(k, 0))
        for k, hi in (("publishLatency", PUBLISH_MAX_US), ("publishDelayLatency", PUBLISH_MAX_US),
                      ("endToEndLatency", E2E_MAX_US)):
            if o.get(k):
                merge(getattr(self, k), decode(o[k], hi))


# --- OMB's number formats ---------------------------------------------------------------
def _java_round1(x: float) -> str:
    """DecimalFormat("0.0"): one decimal, HALF_EVEN rounding."""
    if x is None or (isinstance(x, float) and (math.isnan(x) or math.isinf(x))):
        return "NaN" if x is None or math.isnan(x) else ("∞" if x > 0 else "-∞")
    from decimal import Decimal, ROUND_HALF_EVEN
    return str(Decimal(repr(float(x))).quantize(Decimal("0.1"), rounding=ROUND_HALF_EVEN))


def pad(x: float, width: int) -> str:
    """PaddingDecimalFormat("0.0", width): left-padded with spaces to ``width``."""
    return _java_round1(x).rjust(width)


def rate_fmt(x: float) -> str:
    return pad(x, 7)


def throughput_fmt(x: float) -> str:
    return pad(x, 4)


dec = throughput_fmt


def period_line(publish_rate, publish_mbs, error_rate, consume_rate, consume_mbs, backlog,
                pub: LatencySummary, delay: LatencySummary) -> str:
    """OMB WorkloadGenerator's periodic log line (publish latency in ms, delay in us)."""
    ms = 1000.0
    return (f"Pub rate {rate_fmt(publish_rate)} msg/s / {throughput_fmt(publish_mbs)} MB/s | "
            f"Pub err {rate_fmt(error_rate)} err/s | "
            f"Cons rate {rate_fmt(consume_rate)} msg/s / {throughput_fmt(consume_mbs)} MB/s | "
            f"Backlog: {dec(backlog / 1000.0)} K | "
            f"Pub Latency (ms) avg: {dec(pub.avg / ms)} - 50%: {dec(pub.p50 / ms)} - "
            f"99%: {dec(pub.p99 / ms)} - 99.9%: {dec(pub.p999 / ms)} - "
            f"Max: {throughput_fmt(pub.max / ms)} | "
            f"Pub Delay Latency (us) avg: {dec(delay.avg)} - 50%: {dec(delay.p50)} - "
            f"99%: {dec(delay.p99)} - 99.9%: {dec(delay.p999)} - Max: {throughput_fmt(delay.max)}")


def aggregated_line(pub: LatencySummary, delay: LatencySummary) -> str:
    ms = 1000.0
    return (f"----- Aggregated Pub Latency (ms) avg: {dec(pub.avg / ms)} - 50%: {dec(pub.p50 / ms)} - "
            f"95%: {dec(pub.p95 / ms)} - 99%: {dec(pub.p99 / ms)} - 99.9%: {dec(pub.p999 / ms)} - "
            f"99.99%: {dec(pub.p9999 / ms)} - Max: {throughput_fmt(pub.max / ms)} | "
            f"Pub Delay (us)  avg: {dec(delay.avg)} - 50%: {dec(delay.p50)} - 95%: {dec(delay.p95)} - "
            f"99%: {dec(delay.p99)} - 99.9%: {dec(delay.p999)} - 99.99%: {dec(delay.p9999)} - "
            f"Max: {throughput_fmt(delay.max)}")
