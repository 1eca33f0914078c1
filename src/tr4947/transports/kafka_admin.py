"""Kafka's admin protocol from the control node (confluent-kafka's AdminClient, librdkafka).

What a chapter asks a cluster directly, as a client would see it: which brokers are in its
metadata (KRaft leaves fenced brokers out), and the partitions' leaders and in-sync replicas
over time (REC-3, the drills). Like every transport, it refuses a lab address while the lab
network is down (tr4947.netguard), before librdkafka opens a socket; librdkafka's own log
goes to a logger of ours that prints nothing, since a broker that is restarting is what the
chapters measure, not an error.
"""
from __future__ import annotations

import logging
import time
from typing import Callable

from .. import netguard
from ..wait import port_open

_QUIET = logging.getLogger("tr4947.kafka_admin")
_QUIET.addHandler(logging.NullHandler())
_QUIET.propagate = False


def client(bootstrap: str, **config):
    """An AdminClient for ``bootstrap`` (host:port,...), every host checked by netguard."""
    from confluent_kafka.admin import AdminClient
    for hostport in bootstrap.split(","):
        netguard.check(hostport.rsplit(":", 1)[0].strip("[]"))
    return AdminClient({"bootstrap.servers": bootstrap, "logger": _QUIET, **config})


def registered_brokers(bootstrap: str, timeout: float = 5.0) -> set[int]:
    """Broker ids in the cluster's metadata; empty when no broker answers in time."""
    admin = client(bootstrap, **{"socket.connection.setup.timeout.ms": 3000})
    try:
        return set(admin.list_topics(timeout=timeout).brokers)
    except Exception:                  # KafkaException, a timeout: nobody serves yet
        return set()


def wait_serving(nodes: list[tuple[str, str, int, int | None]], timeout: float = 240,
                 why_not: Callable[[str], str] | None = None) -> float:
    """Wait until every node listens and every broker is registered with its cluster.
    ``nodes``: (name, address, port, broker id or None for a controller). ``why_not(name)``
    explains a node that will never come (e.g. its process died: the log tail) and stops the
    wait early. Returns the seconds waited; TimeoutError says which nodes are missing."""
    t0 = time.monotonic()
    bootstrap = ",".join(f"{a}:{p}" for _n, a, p, b in nodes if b is not None)
    for _n, address, _p, _b in nodes:
        netguard.check(address)
    delay = 0.2
    while True:
        waiting = [n for n in nodes if not port_open(n[1], n[2], 0.5)]
        brokers = {b for _n, _a, _p, b in nodes if b is not None}
        if not waiting and brokers:
            missing = brokers - registered_brokers(bootstrap, timeout=3)
            waiting = [n for n in nodes if n[3] in missing]
        if not waiting:
            return time.monotonic() - t0
        if why_not:
            for n in waiting:
                reason = why_not(n[0])
                if reason:
                    raise RuntimeError(f"{n[0]} will not serve: {reason}")
        if time.monotonic() - t0 > timeout:
            raise TimeoutError(f"not serving after {timeout:.0f}s: " + ", ".join(
                f"{n[0]} ({n[1]}:{n[2]})" for n in waiting))
        time.sleep(delay)
        delay = min(delay * 1.5, 2.0)
