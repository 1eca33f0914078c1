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

Messages without a key are partitioned as OMB's Java producer partitions them
(:class:`StickyPartitioner`), and handed over a partition at a time.
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


#: librdkafka's worst-case framing of a v2 record (varints at their longest) and of a record
#: batch (RD_KAFKAP_MESSAGE_V2_MAX_OVERHEAD, RD_KAFKAP_MSGSET_V2_SIZE): what it reserves when
#: it decides whether one more message fits in a batch.
RECORD_OVERHEAD = 36
BATCH_OVERHEAD = 61
#: librdkafka's message.max.bytes default, which also caps a batch.
LIBRDKAFKA_MAX_MESSAGE_BYTES = 1_000_000


def messages_per_batch(config: dict, message_bytes: int) -> int:
    """How many messages of ``message_bytes`` (value + key) librdkafka puts in one full batch:
    batch.size, capped by message.max.bytes, less the framing it reserves."""
    cap = min(int(config.get("batch.size", 1_000_000)),
              int(config.get("message.max.bytes", LIBRDKAFKA_MAX_MESSAGE_BYTES)))
    return max(1, (cap - BATCH_OVERHEAD) // (message_bytes + RECORD_OVERHEAD))


class StickyPartitioner:
    """Java's partitioner for messages without a key (Kafka 3.3+, KIP-794, which OMB's
    producers run): a producer sends to one partition until a batch's worth (batch.size
    bytes) has gone there, then to a partition drawn at random (Java weighs the draw by the
    partitions' queue lengths when they differ; uniform otherwise, as here).

    librdkafka's own sticky partitioner switches on time instead (every
    sticky.partitioning.linger.ms, 2 x linger.ms by default): at a high rate with a short
    linger its batches are a fraction of batch.size (measured on one broker here at
    batch.size 1 MB, linger.ms 1: 343-788 KB per request over runs, against 869 KB for
    Java's producer), so the broker handles more requests for the same bytes; at a low rate
    it spreads a producer's messages over all partitions where Java keeps them on one for a
    batch's worth. Here a stint is the messages that fill one librdkafka batch
    (:func:`messages_per_batch`), handed over with an explicit partition, which also spares
    librdkafka its per-message partitioner.
    """

    def __init__(self, partitions: int, per_batch: int,
                 rng: np.random.Generator | None = None):
        if partitions < 1 or per_batch < 1:
            raise ValueError(f"partitions {partitions} and messages per batch {per_batch} "
                             f"must be >= 1")
        self.partitions = partitions
        self.per_batch = per_batch
        self.rng = rng or np.random.default_rng()
        self.partition = int(self.rng.integers(partitions))
        self.left = per_batch

    def split(self, n: int) -> list[tuple[int, int]]:
        """The next ``n`` messages as [(partition, count)], in order."""
        out = []
        while n > 0:
            k = min(n, self.left)
            out.append((self.partition, k))
            n -= k
            self.left -= k
            if not self.left:
                self.partition = int(self.rng.integers(self.partitions))
                self.left = self.per_batch
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
                 on_delivery: Callable, clock: Callable[[], float] = time.perf_counter,
                 partitioners: Sequence[StickyPartitioner] | None = None):
        self.producers = list(producers)
        missing = [p for p in self.producers if not hasattr(p, "produce_batch")]
        if missing:
            import confluent_kafka
            raise RuntimeError(f"confluent-kafka {confluent_kafka.version()[0]} has no "
                               f"Producer.produce_batch; install the version requirements.txt "
                               f"pins")
        self.topics = list(topics)
        #: One per client for messages without a key; None: librdkafka's partitioner (keys).
        self.partitioners = list(partitioners) if partitioners is not None else None
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
            msgs = self.ring.take(m)
            if self.partitioners is None:
                done = self._send_one(self.producers[i], self.topics[i], msgs, None, pieces,
                                      interrupted)
            else:
                done, at = 0, 0
                for part, count in self.partitioners[i].split(m):
                    sent = self._send_one(self.producers[i], self.topics[i],
                                          msgs[at:at + count], part, pieces, interrupted)
                    done += sent
                    at += count
                    if sent < count:
                        break   # interrupted; the stint's unsent rest is not given back
            handed += done
            if done < m:
                break
        self.rr = (self.rr + 1) % k
        return handed, pieces

    def _send_one(self, p, topic: str, msgs: list[dict], partition: int | None, pieces: list,
                  interrupted) -> int:
        handed = 0
        kw = {"on_delivery": self.on_delivery}
        if partition is not None:
            kw["partition"] = partition
        while msgs:
            t = self.clock()
            good = p.produce_batch(topic, msgs, **kw)
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
