"""Reading Kafka 4.1.1's tool output (texts captured from the lab's tools)."""
from __future__ import annotations

import pytest

from tr4947 import kafka_tools as kt

DESCRIBE = """\
Topic: __a_demo_topic\tTopicId: 5AlXNAsbRpedc8tDHJFOrQ\tPartitionCount: 4\tReplicationFactor: 2\tConfigs: min.insync.replicas=1
\tTopic: __a_demo_topic\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1,2\tElr: \tLastKnownElr: 
\tTopic: __a_demo_topic\tPartition: 1\tLeader: 2\tReplicas: 2,3\tIsr: 2\tElr: \tLastKnownElr: 
\tTopic: __a_demo_topic\tPartition: 2\tLeader: 3\tReplicas: 3,4\tIsr: 3,4\tElr: \tLastKnownElr: 
\tTopic: __a_demo_topic\tPartition: 3\tLeader: none\tReplicas: 4,1\tIsr: \tElr: \tLastKnownElr: 
"""

GENERATE = """\
Current partition replica assignment
{"version":1,"partitions":[{"topic":"__a_demo_topic","partition":0,"replicas":[1,2],"log_dirs":["any","any"]}]}

Proposed partition reassignment configuration
{"version":1,"partitions":[{"topic":"__a_demo_topic","partition":0,"replicas":[3,4],"log_dirs":["any","any"]}]}
"""

PERF = """\
33660 records sent, 6730.7 records/sec (6.57 MB/sec), 5371.6 ms avg latency, 9517.0 ms max latency.
100000 records sent, 5413.6 records/sec (5.29 MB/sec), 4996.54 ms avg latency, 9517.00 ms max latency, 4944 ms 50th, 8486 ms 95th, 9114 ms 99th, 9481 ms 99.9th.
20000 records sent, 4000.0 records/sec (3.91 MB/sec), 4.00 ms avg latency, 9.00 ms max latency.
60000 records sent, 4100.0 records/sec (4.00 MB/sec), 5.00 ms avg latency, 9.00 ms max latency, 4 ms 50th, 8 ms 95th, 9 ms 99th, 9 ms 99.9th.
"""


def test_replicas_and_isr_from_describe():
    assert kt.replicas(DESCRIBE) == {0: [1, 2], 1: [2, 3], 2: [3, 4], 3: [4, 1]}
    # A shrunken or empty ISR is read as it is, not padded from the replica list.
    assert kt.in_sync(DESCRIBE) == {0: [1, 2], 1: [2], 2: [3, 4], 3: []}


def test_proposed_assignment_is_the_second_json():
    plan = kt.proposed_assignment(GENERATE)
    assert kt.assignment(plan) == {0: [3, 4]}
    with pytest.raises(ValueError, match="no proposed assignment"):
        kt.proposed_assignment("Current partition replica assignment\n{}\n")


def test_brokers_giving_up_replicas():
    before = {0: [1, 2], 1: [2, 3]}
    assert kt.brokers_giving_up_replicas(before, {0: [2, 1], 1: [2, 3]}) == []   # order only
    assert kt.brokers_giving_up_replicas(before, {0: [3, 4], 1: [2, 1]}) == [1, 2, 3]


def test_records_sent_counts_final_summaries_only():
    assert kt.records_sent(PERF) == [100000, 60000]


def test_reassignment_done():
    assert not kt.reassignment_done(
        "Status of partition reassignment:\n"
        "Reassignment of partition __a_demo_topic-0 is completed.\n"
        "Reassignment of partition __a_demo_topic-1 is still in progress.\n")
    assert kt.reassignment_done(
        "Status of partition reassignment:\n"
        "Reassignment of partition __a_demo_topic-0 is completed.\n"
        "Clearing broker-level throttles on brokers 1,2,3,4\n")
    with pytest.raises(RuntimeError, match="failed"):
        kt.reassignment_done("Reassignment of partition __a_demo_topic-0 failed.\n")


def test_reassignment_done_reads_kafka_3_wording():
    """Kafka 3.2.3 (the TR's) says "is complete.", Kafka 4 "is completed."."""
    assert kt.reassignment_done(
        "Status of partition reassignment:\n"
        "Reassignment of partition __a_demo_topic-0 is complete.\n\n"
        "Clearing broker-level throttles on broker 1\n")
    assert not kt.reassignment_done("Status of partition reassignment:\n"
                                    "Reassignment of partition t-0 is incomplete\n")


def test_until_returns_the_value_or_times_out():
    from tr4947.wait import until
    calls = iter([0, None, [3]])
    assert until(lambda: next(calls), timeout=5, interval=0) == [3]
    with pytest.raises(TimeoutError, match="waiting for nothing; last seen: x"):
        until(lambda: False, timeout=0.05, interval=0.01, what="nothing", seen=lambda: "x")
