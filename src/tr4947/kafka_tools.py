"""Reading what Kafka's command-line tools print, and how a broker is started.

The runbook runs Kafka's own tools (kafka-topics, kafka-reassign-partitions, the perf tests)
and decides its next step from their output, as an operator reading the terminal would. The
parsing lives here, in one place, for notebooks and tests alike; it works on any target
(lab or real), because it only reads text.
"""
from __future__ import annotations

import json
import re

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
