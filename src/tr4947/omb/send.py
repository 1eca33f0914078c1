"""Producing in batches: how a producer process hands the pacer's bursts to librdkafka.

OMB's producer calls ``send()`` once per message. Done per message from Python, that call and
its argument handling cost more than librdkafka's own work (bench/omb_vs_perftest.py), so here
each burst the pacer releases (every message due now) goes to each client in one
``produce_batch()`` call: librdkafka's ``rd_kafka_produce_batch``, which enqueues the messages
exactly as ``produce()`` does (the configured partitioner per message, the same queue limits),
stamping them all with the time of the call. Publish latency is measured from that stamp, so a
message is never timed from later than it was handed over.

What stays per message is what OMB picks per message: a payload drawn at random from the
pool and a key from the workload's keyDistributor. Those are drawn in bulk with numpy into a
ring of message dicts (:class:`MessageRing`); each burst is a slice of it.
"""
from __future__ import annotations

import string
import time
from collections.abc import Callable, Sequence

import numpy as np
from confluent_kafka import KafkaError

#: OMB's KeyDistributor: 10,000 distinct keys of 7 characters.
KEY_COUNT = 10_000
KEY_LENGTH = 7
#: Messages built at a time. Larger than any burst (Pacer.MAX_BURST), so a burst never holds
#: the same dict twice and a failed message's ``_error`` mark belongs to that message alone.
RING = 16_384


def key_pool(rng: np.random.Generator) -> np.ndarray:
    letters = np.frombuffer(string.ascii_letters.encode(), dtype=np.uint8)
    chars = letters[rng.integers(0, len(letters), (KEY_COUNT, KEY_LENGTH))]
    pool = np.empty(KEY_COUNT, dtype=object)
    pool[:] = [row.tobytes() for row in chars]
    return pool


class MessageRing:
    """Message dicts for ``produce_batch``, built :data:`RING` at a time.

    Payload: one of ``payloads`` at random for every message (OMB: ``payloads.get(
    random.nextInt(payloads.size()))``). Key (OMB's KeyDistributor): none for NO_KEY; for
    KEY_ROUND_ROBIN the 10,000 keys in turn; for RANDOM_NANO one of them at random.
    """

    def __init__(self, payloads: Sequence[bytes], key_distributor: str = "NO_KEY",
                 rng: np.random.Generator | None = None, size: int = RING):
        if not payloads:
            raise ValueError("no payloads to send")
        self.rng = rng or np.random.default_rng()
        self.size = size
        self.payloads = np.empty(len(payloads), dtype=object)
        self.payloads[:] = list(payloads)
        self.kind = key_distributor
        self.keys = None if key_distributor == "NO_KEY" else key_pool(self.rng)
        self.next_key = 0
        self.ring: list[dict] = []
        self.pos = 0

    def _build(self) -> list[dict]:
        n, npay = self.size, len(self.payloads)
        values = (self.payloads[self.rng.integers(0, npay, n)] if npay > 1
                  else np.repeat(self.payloads, n)).tolist()
        if self.keys is None:
            return [{"value": v} for v in values]
        if self.kind == "KEY_ROUND_ROBIN":
            idx = (self.next_key + np.arange(n)) % KEY_COUNT
            self.next_key = int(idx[-1] + 1) % KEY_COUNT
        else:
            idx = self.rng.integers(0, KEY_COUNT, n)
        return [{"value": v, "key": k} for v, k in zip(values, self.keys[idx].tolist())]

    def take(self, n: int) -> list[dict]:
        """The next ``n`` messages (``n`` <= the ring size)."""
        if n > self.size:
            raise ValueError(f"burst of {n} messages is larger than the ring ({self.size})")
        if self.pos + n > len(self.ring):
            # What is left comes first: round-robin keys stay in order.
            self.ring = self.ring[self.pos:] + self._build()
            self.pos = 0
        out = self.ring[self.pos:self.pos + n]
        self.pos += n
        return out


class BatchSender:
    """Hands bursts to one or more clients (one per OMB producer), one ``produce_batch`` call
    per client per burst, the burst split evenly between them (the remainder rotates).

    A full client queue (queue.buffering.max.kbytes, Java's buffer.memory) refuses the rest of
    the batch: the sender serves that client's delivery reports for up to 1 ms and hands the
    refused messages over again, as Java's ``send()`` blocks until there is room; the wait
    shows as publish delay. ``interrupted()`` (a command from the coordinator) ends the burst
    early, so stats keep their period when the cluster cannot keep up.
    """

    def __init__(self, producers: Sequence, topics: Sequence[str], ring: MessageRing,
                 on_delivery: Callable, clock: Callable[[], float] = time.perf_counter):
        self.producers = list(producers)
        missing = [p for p in self.producers if not hasattr(p, "produce_batch")]
        if missing:
            import confluent_kafka
            raise RuntimeError(f"confluent-kafka {confluent_kafka.version()[0]} has no "
                               f"Producer.produce_batch; install the version requirements.txt "
                               f"pins")
        self.topics = list(topics)
        self.ring = ring
        self.on_delivery = on_delivery
        self.clock = clock
        self.rr = 0
        #: Messages the clients refused for a reason other than a full queue (send errors).
        self.errors = 0

    def send(self, n: int, interrupted: Callable[[], bool] = lambda: False
             ) -> tuple[int, list[tuple[int, float]]]:
        """Hand over up to ``n`` messages. Returns (messages handed over, including refused
        ones; [(count, time of the produce_batch call)] for those the clients took, in
        order)."""
        k = len(self.producers)
        base, extra = divmod(n, k)
        pieces: list[tuple[int, float]] = []
        handed = 0
        for j in range(k):
            i = (self.rr + j) % k
            m = base + (1 if j < extra else 0)
            if not m:
                continue
            done = self._send_one(self.producers[i], self.topics[i], m, pieces, interrupted)
            handed += done
            if done < m:
                break
        self.rr = (self.rr + 1) % k
        return handed, pieces

    def _send_one(self, p, topic: str, m: int, pieces: list, interrupted) -> int:
        msgs = self.ring.take(m)
        handed = 0
        while msgs:
            t = self.clock()
            good = p.produce_batch(topic, msgs, on_delivery=self.on_delivery)
            if good:
                pieces.append((good, t))
            if good == len(msgs):
                return handed + good
            retry = []
            for msg in msgs:
                err = msg.pop("_error", None)
                if err is None:
                    continue
                if err.code() == KafkaError._QUEUE_FULL:
                    retry.append(msg)
                else:
                    self.errors += 1
            handed += len(msgs) - len(retry)
            msgs = retry
            if msgs:
                p.poll(0.001)
                if interrupted():
                    break
        return handed
