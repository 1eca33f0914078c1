"""The producer's batched hot path: what it hands to librdkafka, what it records.

librdkafka runs for real here (confluent-kafka's Producer), pointed at a port nothing listens
on: produce_batch enqueues, a full queue refuses, purge() releases, exactly as with a broker;
only deliveries never happen. What needs a broker (delivery, publish latency) is in
tests/lab/test_omb_lab.py and bench/omb_vs_perftest.py.
"""
import itertools
import threading
import time
from collections import Counter
from multiprocessing import Pipe

import numpy as np
import pytest
from confluent_kafka import KafkaError, Producer
from hdrh.histogram import HdrHistogram

from tr4947.omb.send import (KEY_COUNT, KEY_LENGTH, RING, BatchSender, MessageRing,
                             StickyPartitioner, messages_per_batch)
from tr4947.omb.stats import PUBLISH_MAX_US, LatencyBuffer, decode, new_histogram
from tr4947.omb.worker import producer_worker

NOWHERE = "127.0.0.1:9"   # the discard port: nothing listens, no message is ever delivered


def producer(**conf) -> Producer:
    return Producer({"bootstrap.servers": NOWHERE, "log_level": 0, **conf})


def release(p: Producer) -> None:
    """Purge p's queue and serve the delivery reports (all purge errors)."""
    p.purge(in_queue=True, in_flight=True, blocking=False)
    p.flush(5)


# --- MessageRing ---------------------------------------------------------------------------------
def test_payloads_are_drawn_at_random_from_the_pool_and_bursts_hold_distinct_dicts():
    pool = [bytes([i]) * 16 for i in range(100)]
    ring = MessageRing(pool, rng=np.random.default_rng(1))
    seen = Counter()
    for _ in range(60):   # several refills
        burst = ring.take(2000)
        assert len({id(m) for m in burst}) == 2000          # no dict twice in a burst
        assert all(set(m) == {"value"} for m in burst)      # NO_KEY: no key at all
        seen.update(m["value"] for m in burst)
    assert set(seen) == set(pool)
    # 120,000 draws over 100 payloads: each near 1,200 (a fixed or cycling choice would not be)
    assert max(seen.values()) < 1.2 * 1200 and min(seen.values()) > 0.8 * 1200
    with pytest.raises(ValueError):
        ring.take(RING + 1)


def test_round_robin_keys_follow_each_other_across_refills():
    ring = MessageRing([b"x"], "KEY_ROUND_ROBIN", size=3000)
    keys = [m["key"] for _ in range(10) for m in ring.take(2000)]   # 20,000 = two cycles
    assert len(set(keys)) == KEY_COUNT
    assert keys[:KEY_COUNT] == keys[KEY_COUNT:]                     # the same order each cycle
    assert all(len(k) == KEY_LENGTH and k.isalpha() for k in keys)


def test_random_keys_come_from_the_ten_thousand():
    ring = MessageRing([b"x"], "RANDOM_NANO", rng=np.random.default_rng(2))
    keys = [m["key"] for _ in range(10) for m in ring.take(2000)]
    assert set(keys) <= set(ring.keys.tolist()) and len(set(keys)) > 8000
    assert keys[:KEY_COUNT] != keys[KEY_COUNT:]


# --- partitioning of messages without a key (Java's sticky partitioner) ------------------------
def test_a_stint_is_what_fills_one_librdkafka_batch():
    # batch.size 1 MiB is capped by librdkafka's message.max.bytes (1,000,000); each 1 KiB
    # record is reserved 36 bytes of framing, the batch 61.
    assert messages_per_batch({"batch.size": "1048576"}, 1024) == (1_000_000 - 61) // 1060
    assert messages_per_batch({"batch.size": "16384"}, 1024) == (16384 - 61) // 1060
    assert messages_per_batch({"batch.size": "16384", "message.max.bytes": "2000000"},
                              100) == (16384 - 61) // 136
    assert messages_per_batch({"batch.size": "1000"}, 5000) == 1


def test_sticky_partitions_change_after_a_batch_and_spread_evenly():
    sp = StickyPartitioner(10, 943, rng=np.random.default_rng(3))
    seq = []
    for n in [1, 2000, 500, 943, 7, 4000] * 40:
        pieces = sp.split(n)
        assert sum(c for _, c in pieces) == n
        seq += [part for part, c in pieces for _ in range(c)]
    # runs of one partition are whole stints (a run can be two stints when the draw repeats)
    runs, start = [], 0
    for i in range(1, len(seq) + 1):
        if i == len(seq) or seq[i] != seq[start]:
            runs.append(i - start)
            start = i
    assert all(r % 943 == 0 for r in runs[:-1])
    per = Counter(seq)
    assert set(per) == set(range(10))
    assert max(per.values()) < 1.5 * len(seq) / 10   # uniform draws, 300 stints


def test_keyless_bursts_go_a_partition_at_a_time():
    p = producer()
    got = []
    s = BatchSender([p], ["t"], MessageRing([b"x" * 100]), lambda e, m: got.append(m.partition()),
                    partitioners=[StickyPartitioner(4, 150, rng=np.random.default_rng(5))])
    assert s.send(1000)[0] == 1000 and s.send(200)[0] == 200
    release(p)
    # purged before any metadata: librdkafka reports the partition each message was given
    runs = [len(list(g)) for _, g in itertools.groupby(got)]
    assert len(got) == 1200 and set(got) <= {0, 1, 2, 3}
    assert all(r % 150 == 0 for r in runs)


# --- BatchSender against real librdkafka -------------------------------------------------------
def test_a_full_queue_refuses_the_rest_and_the_sender_hands_it_over_once_there_is_room():
    p = producer(**{"queue.buffering.max.messages": 500})
    reports = []
    s = BatchSender([p], ["t"], MessageRing([b"x" * 100]), lambda e, m: reports.append(e))
    waits = []

    def interrupted():   # nothing is ever delivered: make room by purging the queue
        waits.append(len(reports))
        release(p)
        return False
    handed, pieces = s.send(1200, interrupted)
    assert handed == 1200 and s.errors == 0
    assert [c for c, _ in pieces] == [500, 500, 200]            # refused twice, all sent once
    assert [t for _, t in pieces] == sorted(t for _, t in pieces)
    assert waits == [0, 500]
    assert len(reports) == 1000 and {e.code() for e in reports} == {KafkaError._PURGE_QUEUE}
    release(p)
    assert len(reports) == 1200                                 # the last 200


def test_a_command_ends_a_burst_the_queue_cannot_take():
    p = producer(**{"queue.buffering.max.messages": 300})
    s = BatchSender([p], ["t"], MessageRing([b"x" * 100]), lambda e, m: None)
    handed, pieces = s.send(1000, lambda: True)
    assert handed == 300 and pieces[0][0] == 300 and len(pieces) == 1
    release(p)


def test_a_message_the_client_refuses_for_good_is_a_send_error_not_a_retry():
    p = producer(**{"message.max.bytes": 1000})
    s = BatchSender([p], ["t"], MessageRing([b"x" * 2000, b"y" * 2000]), lambda e, m: None)
    handed, pieces = s.send(50)
    assert handed == 50 and pieces == [] and s.errors == 50
    release(p)


def test_a_burst_is_split_evenly_between_the_clients_of_a_process():
    ps = [producer() for _ in range(3)]
    topics = ["a", "b", "c"]
    reports = Counter()
    s = BatchSender(ps, topics, MessageRing([b"x" * 10]), lambda e, m: reports.update([m.topic()]))
    for _ in range(30):
        assert s.send(100)[0] == 100
    for p in ps:
        release(p)
    assert reports == {"a": 1000, "b": 1000, "c": 1000}    # 33/33/34, the extra one rotating


# --- batched latency recording == per-message recording --------------------------------------
def _buckets(h: HdrHistogram) -> dict:
    c = np.ctypeslib.as_array(h.counts)[:h.counts_len]
    return {int(i): int(c[i]) for i in np.flatnonzero(c)}


@pytest.mark.parametrize("seed", range(4))
def test_batched_recording_builds_the_histogram_per_message_recording_builds(seed):
    rng = np.random.default_rng(seed)
    # Delivery latencies as librdkafka gives them: seconds, from microseconds to over the
    # 60 s the histogram tracks (clamped there, as OMB clamps), folded in several batches.
    secs = np.concatenate([rng.lognormal(np.log(0.004), 1.5, 20_000),
                           rng.uniform(1e-6, 3e-6, 50), [75.0, 60.0, 59.99]])
    buf = LatencyBuffer(PUBLISH_MAX_US, scale=1e6)
    folded = 0
    for part in np.array_split(secs, 7):
        buf.values.extend(part.tolist())
        folded += buf.fold()
    assert folded == len(secs)
    direct = new_histogram()
    for s in secs.tolist():
        direct.record_value(min(max(int(s * 1e6), 1), PUBLISH_MAX_US))
    got = buf.take()
    assert _buckets(got) == _buckets(direct)
    assert (got.get_total_count(), got.get_min_value(), got.get_max_value(),
            got.get_mean_value()) == (direct.get_total_count(), direct.get_min_value(),
                                      direct.get_max_value(), direct.get_mean_value())
    for pct in (50, 75, 95, 99, 99.9, 99.99, 100):
        assert got.get_value_at_percentile(pct) == direct.get_value_at_percentile(pct)


# --- the producer worker's loop: rate held, every message handed over timed -----------------------
def _worker(rate: float, payload: bytes = b"x" * 100):
    here, there = Pipe()
    spec = {"index": 0, "config": {"bootstrap.servers": NOWHERE, "log_level": 0,
                                   "queue.buffering.max.kbytes": 1048576,
                                   "queue.buffering.max.messages": 10_000_000},
            "topics": ["t"], "partitions": 4, "payloads": [payload], "keyDistributor": "NO_KEY"}
    th = threading.Thread(target=producer_worker, args=(there, spec), daemon=True)
    th.start()
    assert here.recv()[0] == "ready"

    def call(*cmd):
        here.send(cmd)
        msg = here.recv()
        assert msg[0] == "ok", msg
        return msg[1]
    return call, th


@pytest.mark.parametrize("rate", [2_000, 40_000])
def test_the_worker_holds_its_rate_and_times_every_message_it_hands_over(rate):
    call, th = _worker(rate)
    call("start", rate)
    time.sleep(0.3)
    # A period runs from one stats command to the next (the worker takes each within a
    # burst); the reply's own time (folding, encoding) is after it.
    t0 = time.monotonic()
    before = call("stats")                          # the warm-up period, discarded
    time.sleep(2.0)
    t1 = time.monotonic()
    st = call("stats")
    window = t1 - t0
    handed = decode(st["publishDelayLatency"]).get_total_count()
    # OMB's schedule: the window's share of it, less what was still due at its end, plus
    # what was due from before it (a descheduled worker catches up): each at most the lag
    # the worker reports for that period.
    due = rate * window
    assert due * 0.97 - rate * st["behind_s"] <= handed <= due * 1.03 + rate * before["behind_s"], \
        (handed, window, before["behind_s"], st["behind_s"])
    assert st["behind_s"] <= 0.5          # Pacer.keeping_up()'s tolerance: on schedule
    # Nothing is delivered without a broker: no sent message, no publish latency.
    assert st["messagesSent"] == 0 and decode(st["publishLatency"]).get_total_count() == 0
    stopped = call("stop_load", True)
    assert stopped["purged"] >= handed and stopped["totalMessageSendErrors"] == 0
    call("close")
    th.join(10)
    assert not th.is_alive()
