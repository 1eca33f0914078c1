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
    return "is completed" in verify_output or "There is no active reassignment" in verify_output


def until(check: Callable[[], T], timeout: float, interval: float = 1.0,
          what: str = "the condition") -> T:
    """Call check() until it returns something truthy; TimeoutError after timeout seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"gave up after {timeout:.0f}s waiting for {what}")
        time.sleep(interval)
