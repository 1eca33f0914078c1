"""Worker processes: the Kafka clients of one benchmark run.

OMB's producers and consumers are separate clients; here they live in a few worker processes
(producers and consumers in different ones) so that the GIL of one Python process does not cap
the whole benchmark. The coordinator (runner.py) talks to each worker over a Pipe with small
commands; every command gets exactly one reply, so the coordinator stays in lock step.

Commands: ("start", rate) ("rate", rate) ("probe",) ("pause",) ("resume",) ("stats",)
("counters",) ("reset_latencies",) ("stop_load",) ("close",).
"""
from __future__ import annotations

import logging
import os
import time
import traceback

import numpy as np

from .pacer import Pacer
from .send import BatchSender, MessageRing, StickyPartitioner, messages_per_batch
from .stats import E2E_MAX_US, PUBLISH_MAX_US, LatencyBuffer

FOLD_EVERY_S = 0.25


def _quiet_logger(name: str) -> logging.Logger:
    lg = logging.getLogger(name)
    if not lg.handlers:
        h = logging.StreamHandler()
        h.setFormatter(logging.Formatter("%(asctime)s %(name)s %(message)s"))
        lg.addHandler(h)
    lg.setLevel(logging.WARNING)
    lg.propagate = False
    return lg


class _Counters:
    def __init__(self):
        self.purged = 0
        self.sent = self.errors = self.bytes_sent = 0
        self.received = self.bytes_received = 0
        self.total_sent = self.total_errors = self.total_received = 0

    def period(self) -> dict:
        d = {"messagesSent": self.sent, "messageSendErrors": self.errors,
             "bytesSent": self.bytes_sent, "messagesReceived": self.received,
             "bytesReceived": self.bytes_received, **self.totals()}
        self.sent = self.errors = self.bytes_sent = self.received = self.bytes_received = 0
        return d

    def totals(self) -> dict:
        return {"totalMessagesSent": self.total_sent,
                "totalMessageSendErrors": self.total_errors,
                "totalMessagesReceived": self.total_received}


def _guarded(body):
    """Report a start-up failure (e.g. a config librdkafka rejects) to the coordinator."""
    def run(conn, spec):
        try:
            body(conn, spec)
        except Exception:
            try:
                conn.send(("error", traceback.format_exc()))
            except Exception:
                pass
    run.__name__ = body.__name__
    return run


def _producer_worker(conn, spec: dict) -> None:
    from confluent_kafka import KafkaError, Message, Producer

    logger = _quiet_logger(f"tr4947.omb.librdkafka.p{spec['index']}")
    conf = {**spec["config"], "logger": logger}
    topics = spec["topics"]  # one entry per OMB producer
    producers = [Producer(conf) for _ in topics]
    payloads = spec["payloads"]
    sizes = {len(x) for x in payloads}
    if len(sizes) != 1:
        raise ValueError(f"payloads of different sizes {sorted(sizes)}: OMB's are all messageSize")
    msg_bytes = sizes.pop()
    c = _Counters()
    # Publish latency: librdkafka's own per-message figure (seconds from the produce call to
    # the delivery report), one per delivered message, in microseconds when folded.
    pub = LatencyBuffer(PUBLISH_MAX_US, scale=1e6)
    delay = LatencyBuffer(PUBLISH_MAX_US)
    lat_append = pub.values.append
    latency = Message.latency
    purge_codes = (KafkaError._PURGE_QUEUE, KafkaError._PURGE_INFLIGHT)

    def on_delivery(err, msg):
        # The one piece of Python every message still runs: keep it to an append. Counts of
        # sent messages and bytes come from the number of latencies (settle()).
        if err is None:
            lat_append(latency(msg))
        elif err.code() in purge_codes:
            c.purged += 1          # dropped at stop_load on purpose: not a send error
        else:
            c.errors += 1
            c.total_errors += 1

    def on_probe(err, msg):
        if err is None:
            c.total_sent += 1

    keyless = spec["keyDistributor"] == "NO_KEY"
    per_batch = messages_per_batch(spec["config"], msg_bytes)
    sender = BatchSender(producers, topics, MessageRing(payloads, spec["keyDistributor"]),
                         on_delivery, partitioners=[
                             StickyPartitioner(spec["partitions"], per_batch) for _ in producers
                         ] if keyless else None)
    refused = 0

    def settle():
        """Fold the delivery reports served so far into the histogram and the counters."""
        nonlocal refused
        n = pub.fold()
        c.sent += n
        c.total_sent += n
        c.bytes_sent += n * msg_bytes
        e, refused = sender.errors - refused, sender.errors
        c.errors += e
        c.total_errors += e

    pacer = None
    max_behind = 0.0
    loading = False
    last_fold = time.perf_counter()
    conn.send(("ready", {"pid": os.getpid(), "producers": len(producers)}))
    try:
        while True:
            if conn.poll(0):
                cmd = conn.recv()
                op = cmd[0]
                reply = None
                if op == "start":
                    pacer = Pacer(cmd[1])
                    loading = True
                elif op == "rate":
                    if pacer is not None:
                        pacer.set_rate(cmd[1])
                elif op == "probe":
                    for p, t in zip(producers, topics):
                        p.produce(t, b"\0" * 10, key=b"key", on_delivery=on_probe)
                        p.poll(0)
                elif op == "stats":
                    settle()
                    reply = {**c.period(), "publishLatency": pub.take().encode(),
                             "publishDelayLatency": delay.take().encode(),
                             "behind_s": max(max_behind, pacer.behind()) if pacer else 0.0}
                    max_behind = 0.0
                elif op == "counters":
                    settle()
                    reply = c.totals()
                elif op == "reset_latencies":
                    settle()
                    pub.reset(), delay.reset()
                elif op == "stop_load":
                    # The measurement is over. Messages still waiting in the client's queue
                    # are dropped rather than sent: a saturated run queues buffer.memory per
                    # producer, and sending it all (as OMB's close() does) only costs time.
                    # In-flight requests complete unless cmd[1] says to drop them too (then
                    # the broker may hold a few messages the counters do not).
                    loading = False
                    in_flight = len(cmd) > 1 and bool(cmd[1])
                    for p in producers:
                        p.purge(in_queue=True, in_flight=in_flight, blocking=False)
                    for p in producers:
                        p.flush(30)
                    settle()
                    reply = {**c.totals(), "purged": c.purged}
                elif op == "close":
                    loading = False
                    for p in producers:
                        p.flush(10)
                    settle()
                    conn.send(("ok", c.totals()))
                    return
                elif op in ("pause", "resume"):
                    pass
                conn.send(("ok", reply))
                continue

            if not loading:
                for p in producers:
                    p.poll(0.01)
                continue

            n, t0 = pacer.due()
            if n == 0:
                for p in producers:
                    p.poll(0)
                pacer.wait()
                continue
            first = pacer.scheduled
            handed, pieces = sender.send(n, lambda: conn.poll(0))
            pacer.take(handed)
            # Worst lag of the schedule this period (catch-up bursts hide it from a
            # snapshot taken at the end of the period).
            max_behind = max(max_behind, t0 - pacer.intended(first))
            if pieces:
                # Publish delay (OMB: send time - intended time) of each message handed over:
                # the time of its produce_batch call against its slot in the schedule.
                counts, times = zip(*pieces)
                sent_at = np.repeat(np.array(times), counts)
                intended = pacer.start + (first + np.arange(len(sent_at))) / pacer.rate
                delay.arrays.append((sent_at - intended) * 1e6)
            for p in producers:
                p.poll(0)
            t1 = time.perf_counter()
            if t1 - last_fold > FOLD_EVERY_S:
                settle()
                delay.fold()
                last_fold = t1
    except (EOFError, KeyboardInterrupt, BrokenPipeError):
        pass
    except Exception:
        try:
            conn.send(("error", traceback.format_exc()))
        except Exception:
            pass
    finally:
        for p in producers:
            p.flush(5)


def _consumer_worker(conn, spec: dict) -> None:
    from confluent_kafka import Consumer, KafkaError

    logger = _quiet_logger(f"tr4947.omb.librdkafka.c{spec['index']}")
    consumers = []
    for topic, group in spec["subscriptions"]:
        cons = Consumer({**spec["config"], "group.id": group, "logger": logger})
        cons.subscribe([topic])
        consumers.append(cons)
    auto_commit = str(spec["config"].get("enable.auto.commit", "true")).lower() == "true"
    batch = int(spec.get("max_poll_records") or 500)
    c = _Counters()
    e2e = LatencyBuffer(E2E_MAX_US, drop_nonpositive=True)
    paused = False
    last_pause = last_fold = time.perf_counter()
    many = len(consumers) > 1
    conn.send(("ready", {"pid": os.getpid(), "consumers": len(consumers)}))

    def pause_all():
        for cons in consumers:
            a = cons.assignment()
            if a:
                cons.pause(a)

    try:
        while True:
            if conn.poll(0):
                cmd = conn.recv()
                op = cmd[0]
                reply = None
                if op == "pause":
                    paused = True
                    pause_all()
                elif op == "resume":
                    paused = False
                    for cons in consumers:
                        a = cons.assignment()
                        if a:
                            cons.resume(a)
                elif op == "stats":
                    reply = {**c.period(), "endToEndLatency": e2e.take().encode()}
                elif op == "counters":
                    reply = c.totals()
                elif op == "reset_latencies":
                    e2e.reset()
                elif op == "close":
                    for cons in consumers:
                        cons.close()
                    consumers = []
                    conn.send(("ok", c.totals()))
                    return
                conn.send(("ok", reply))
                continue

            got = 0
            for cons in consumers:
                msgs = cons.consume(num_messages=batch, timeout=0 if many else 0.05)
                if not msgs:
                    continue
                now_ms = time.time() * 1000.0
                n = 0
                nbytes = 0
                for m in msgs:
                    if m.error() is not None:
                        if m.error().code() != KafkaError._PARTITION_EOF:
                            logger.warning("consumer error: %s", m.error())
                        continue
                    n += 1
                    nbytes += len(m)
                    # OMB: e2e = now(ms) - record timestamp(ms), in us.
                    e2e.values.append((now_ms - m.timestamp()[1]) * 1000.0)
                c.received += n
                c.total_received += n
                c.bytes_received += nbytes
                got += n
                if not auto_commit and n:
                    # OMB's KafkaBenchmarkConsumer commits asynchronously after each poll.
                    try:
                        cons.commit(asynchronous=True)
                    except Exception:
                        pass
            now = time.perf_counter()
            if paused and now - last_pause > 0.2:
                pause_all()  # partitions assigned by a rebalance after the pause
                last_pause = now
            if now - last_fold > FOLD_EVERY_S:
                e2e.fold()
                last_fold = now
            if not got and many:
                time.sleep(0.005)
    except (EOFError, KeyboardInterrupt, BrokenPipeError):
        pass
    except Exception:
        try:
            conn.send(("error", traceback.format_exc()))
        except Exception:
            pass
    finally:
        for cons in consumers:
            try:
                cons.close()
            except Exception:
                pass


def producer_worker(conn, spec: dict) -> None:
    _guarded(_producer_worker)(conn, spec)


def consumer_worker(conn, spec: dict) -> None:
    _guarded(_consumer_worker)(conn, spec)
