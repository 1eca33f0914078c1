"""Reading what Kafka's command-line tools print, and waiting for a cluster to get somewhere.

The runbook runs Kafka's own tools (kafka-topics, kafka-reassign-partitions, the perf tests)
and decides its next step from their output, as an operator reading the terminal would. The
parsing lives here, in one place, for notebooks and tests alike; it works on any target
(lab or real), because it only reads text.
"""
from __future__ import annotations

import json
import re
import time
from typing import Callable, TypeVar

T = TypeVar("T")

_PARTITION = re.compile(r"Partition: (\d+)\s+Leader: (\S+)\s+Replicas: ([\d,]+)\s+Isr: ([\d,]*)")
# The final summary line of kafka-producer-perf-test; progress lines carry no percentiles.
_PERF_TOTAL = re.compile(r"^(\d+) records sent, .* 99\.9th\.$", re.M)


def replicas(describe_output: str) -> dict[int, list[int]]:
    """{partition: replica broker ids} from `kafka-topics --describe` (one topic)."""
    return {int(p): [int(b) for b in reps.split(",")]
            for p, _leader, reps, _isr in _PARTITION.findall(describe_output)}


def in_sync(describe_output: str) -> dict[int, list[int]]:
    """{partition: ISR broker ids} from `kafka-topics --describe`."""
    return {int(p): [int(b) for b in isr.split(",") if b]
            for p, _leader, _reps, isr in _PARTITION.findall(describe_output)}


def proposed_assignment(generate_output: str) -> dict:
    """The JSON that `kafka-reassign-partitions --generate` prints after
    'Proposed partition reassignment configuration'."""
    marker = "Proposed partition reassignment configuration"
    if marker not in generate_output:
        raise ValueError("no proposed assignment in the --generate output:\n"
                         + generate_output[-1000:])
    after = generate_output.split(marker, 1)[1].strip().splitlines()
    return json.loads(after[0])


def assignment(plan: dict) -> dict[int, list[int]]:
    """{partition: replicas} of a reassignment JSON (one topic)."""
    return {int(p["partition"]): [int(b) for b in p["replicas"]] for p in plan["partitions"]}


def brokers_giving_up_replicas(before: dict[int, list[int]],
                               after: dict[int, list[int]]) -> list[int]:
    """Brokers that lose at least one replica in the move. Each of them renames that
    partition's directory to '<topic>-<n>.<id>-delete' and deletes it a little later:
    the step where silly rename strikes."""
    return sorted({b for p, reps in before.items() for b in reps
                   if b not in after.get(p, reps)})


def records_sent(perf_output: str) -> list[int]:
    """Acknowledged record counts from each final summary line of kafka-producer-perf-test
    (one per run in the output; the periodic progress lines are not counted)."""
    return [int(n) for n in _PERF_TOTAL.findall(perf_output)]


def reassignment_done(verify_output: str) -> bool:
    """True when `--verify` reports every partition complete (and nothing failed)."""
    if "is still in progress" in verify_output:
        return False
    if re.search(r"Reassignment of partition .* failed", verify_output):
        raise RuntimeError("reassignment failed:\n" + verify_output[-1500:])
    # Kafka 4 says "is completed.", Kafka 3 "is complete."
    return re.search(r"is complete(d)?\.", verify_output) is not None or \
        "There is no active reassignment" in verify_output


def until(check: Callable[[], T], timeout: float, interval: float = 1.0,
          what: str = "the condition", seen: Callable[[], str] | None = None) -> T:
    """Call check() until it returns something truthy; after ``timeout`` seconds a
    TimeoutError that says what was waited for and, with ``seen``, what was seen last."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            last = f"; last seen: {seen()}" if seen else ""
            raise TimeoutError(f"gave up after {timeout:.0f}s waiting for {what}{last}")
        time.sleep(interval)


# --- starting a broker and knowing when it serves (any target; the lab uses the same) -------
#: Where Kafka is installed on a host, and how it is started, unless the inventory says
#: otherwise (kafka_home, kafka_start, kafka_stop). These are Kafka's own scripts.
KAFKA_HOME = "/opt/kafka"
KAFKA_START = "bin/kafka-server-start.sh -daemon config/server.properties"
KAFKA_STOP = "bin/kafka-server-stop.sh"
#: What `pgrep -f` finds a broker by (inventory: kafka_process, e.g. a ZooKeeper host's).
KAFKA_PROCESS = r"kafka\.Kafka"


def start_command(host) -> str:
    """The shell command that starts Kafka on ``host`` (an inventory Host), run in its
    ``kafka_home``. With ``kafka_cluster_id`` (KRaft) the node's storage is formatted first,
    ``--ignore-formatted`` so a restart keeps its data; a ZooKeeper-era broker has no such
    step."""
    home = host.get("kafka_home", KAFKA_HOME)
    start = host.get("kafka_start", KAFKA_START)
    cid = host.get("kafka_cluster_id")
    fmt = (f"bin/kafka-storage.sh format --ignore-formatted --cluster-id {cid} "
           f"--config {host.get('kafka_config', 'config/server.properties')} > /dev/null && "
           if cid else "")
    return f"cd {home} && {fmt}{start}"


def port_open(address: str, port: int, timeout: float = 1.0) -> bool:
    """TCP connect, as the TR's `telnet <broker> 9092` health check."""
    import socket
    try:
        with socket.create_connection((address, port), timeout=timeout):
            return True
    except OSError:
        return False


def registered_brokers(bootstrap: str, timeout: float = 5.0) -> set[int]:
    """Broker ids in the cluster metadata (KRaft leaves fenced brokers out of it)."""
    import logging
    from confluent_kafka.admin import AdminClient
    quiet = logging.getLogger("tr4947.librdkafka")
    quiet.addHandler(logging.NullHandler())
    quiet.propagate = False
    admin = AdminClient({"bootstrap.servers": bootstrap, "logger": quiet,
                         "socket.connection.setup.timeout.ms": 3000})
    try:
        return set(admin.list_topics(timeout=timeout).brokers)
    except Exception:
        return set()


def wait_serving(nodes: list[tuple[str, str, int, int | None]], timeout: float = 240,
                 why_not: Callable[[str], str] | None = None) -> float:
    """Wait until every node listens and every broker is registered with its cluster.
    ``nodes``: (name, address, port, broker id or None for a controller). ``why_not(name)``
    explains a node that will never come (e.g. its process died: the log tail) and stops the
    wait early. Returns the seconds waited; TimeoutError says which nodes are missing."""
    t0 = time.monotonic()
    bootstrap = ",".join(f"{a}:{p}" for _n, a, p, b in nodes if b is not None)
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
