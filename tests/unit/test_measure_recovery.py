"""Recovery time from broker log lines and from the cluster's ISR view (tr4947.measure.recovery).
The log tests use the TR's own excerpts, so the method is checked against the TR's figures."""
from types import SimpleNamespace

import pytest

from tr4947.measure import recovery

# TR-4947, DAS cluster: the backup node's start and the end of the rebuild (line numbers as printed).
TR_DAS = """\
2 [2022-10-31 08:55:53,661] INFO Setting -D jdk.tls.rejectClientInitiatedRenegotia
3 [2022-10-31 08:55:53,727] INFO Registered signal handlers for TERM, INT, HUP (org
4 [2022-10-31 08:55:53,730] INFO starting (kafka.server.KafkaServer)
5 [2022-10-31 08:55:53,730] INFO Connecting to zookeeper on 172.30.0.17:2181,172.31
[2022-10-31 08:55:55,170] INFO [LogLoader partition=test-topic-qbVsEZg-0000-8, dir=/mnt/data-1] Loading producer state till offset 0 with message format version 2 (kafka.log.UnifiedLog$)
[2022-10-31 09:05:24,860] INFO [ReplicaFetcherManager on broker 1] Removed fetcher for partitions HashSet(test-topic-qbVsEZg-0000-95, test-topic-qbVsEZg-0000-5) (kafka.server.ReplicaFetcherManager)
"""
TR_NFS = """\
4 [2022-10-31 09:39:17,213] INFO starting (kafka.server.KafkaServer)
[2022-10-31 09:39:17,747] INFO [LogLoader partition=test-topic-51R3EWs-0000-55, dir=/mnt/kafka-data/broker2] Reloading from producer snapshot and rebuilding producer state from offset 583999 (kafka.log.UnifiedLog$)
[2022-10-31 09:42:29,115] INFO [GroupMetadataManager brokerId=1] Finished loading offsets and group metadata from __consumer_offsets-20 in 28478 milliseconds for epoch 3, of which 28478 milliseconds was spent in the scheduler. (kafka.coordinator.group.GroupMetadataManager)
"""

# A KRaft (Kafka 4.1) replacement broker: an earlier run in the same file must be ignored.
KRAFT = """\
[2026-01-01 10:00:00,000] INFO [BrokerServer id=1] Transition from SHUTDOWN to STARTING (kafka.server.BrokerServer)
[2026-01-01 10:00:05,000] INFO [ReplicaFetcherManager on broker 1] Removed fetcher for partitions Set(t-0) (kafka.server.ReplicaFetcherManager)
[2026-01-01 11:00:00,500] INFO [BrokerServer id=1] Transition from SHUTDOWN to STARTING (kafka.server.BrokerServer)
[2026-01-01 11:00:01,000] INFO [LogLoader partition=rec-test-0, dir=/mnt/data/kafka] Reloading from producer snapshot and rebuilding producer state from offset 0 (x)
[2026-01-01 11:00:01,100] INFO [LogLoader partition=rec-test-0, dir=/mnt/data/kafka] Reloading from producer snapshot and rebuilding producer state from offset 14196 (x)
[2026-01-01 11:00:01,200] INFO [LogLoader partition=rec-test-1, dir=/mnt/data/kafka] Loading producer state till offset 0 (x)
[2026-01-01 11:00:01,300] INFO [LogLoader partition=__consumer_offsets-3, dir=/mnt/data/kafka] Loading producer state till offset 7 (x)
[2026-01-01 11:00:02,000] INFO [GroupCoordinator id=1] Finished loading of metadata from __consumer_offsets-6 with epoch 0 in 2ms (x)
[2026-01-01 11:00:03,250] INFO [ReplicaFetcherManager on broker 1] Removed fetcher for partitions Set(rec-test-1) (kafka.server.ReplicaFetcherManager)
[2026-01-01 11:00:04,000] INFO [KafkaRaftServer nodeId=1] Kafka Server started (kafka.server.KafkaRaftServer)
"""


def test_tr_das_excerpt_gives_the_trs_9_min_31_s():
    r = recovery.recovery_from_log(TR_DAS)
    assert r.start.message.startswith("starting")
    assert r.seconds == pytest.approx(571.13)           # 08:55:53.730 -> 09:05:24.860


def test_tr_nfs_excerpt_gives_the_trs_3_min_12_s():
    assert recovery.recovery_from_log(TR_NFS).seconds == pytest.approx(191.902)


def test_kraft_log_uses_the_latest_start_and_last_end_line():
    r = recovery.recovery_from_log(KRAFT)
    assert r.start.time.hour == 11
    assert "Removed fetcher" in r.end.message
    assert r.seconds == pytest.approx(2.75)
    assert r.serving_seconds == pytest.approx(3.5)


def test_missing_lines_are_reported():
    with pytest.raises(ValueError, match="no start line"):
        recovery.recovery_from_log("[2026-01-01 11:00:02,000] INFO Finished loading x\n")
    with pytest.raises(ValueError, match="no end line"):
        recovery.recovery_from_log(KRAFT.splitlines()[2] + "\n")


def test_producer_state_offsets_per_partition():
    assert recovery.producer_state_offsets(KRAFT, "rec-test") == {"rec-test-0": 14196, "rec-test-1": 0}
    assert recovery.producer_state_offsets(TR_DAS) == {"test-topic-qbVsEZg-0000-8": 0}
    assert recovery.producer_state_offsets(TR_NFS) == {"test-topic-51R3EWs-0000-55": 583999}


def _md(parts: dict[str, list[tuple[list[int], list[int]]]], brokers: set[int]):
    topics = {t: SimpleNamespace(partitions={i: SimpleNamespace(replicas=r, isrs=isr)
                                             for i, (r, isr) in enumerate(ps)})
              for t, ps in parts.items()}
    return SimpleNamespace(topics=topics, brokers={b: None for b in brokers})


def test_isr_view_from_metadata():
    full = _md({"t": [([1, 2, 3], [2, 3, 1]), ([2, 3, 1], [2, 3, 1])],
                "__cluster_metadata": [([1], [])]}, {1, 2, 3})
    s = recovery.summarize(10.0, full, 1)
    assert (s.partitions, s.under_replicated, s.without_broker, s.broker_registered) == (2, 0, 0, True)
    gone = _md({"t": [([1, 2, 3], [2, 3]), ([2, 3, 1], [2, 3])]}, {2, 3})
    g = recovery.summarize(11.0, gone, 1)
    assert (g.under_replicated, g.without_broker, g.broker_registered) == (2, 2, False)
    half = recovery.summarize(12.0, _md({"t": [([1, 2, 3], [2, 3, 1]), ([2, 3, 1], [2, 3])]},
                                        {1, 2, 3}), 1)
    samples = [s, g, half, recovery.summarize(13.0, full, 1)]
    assert recovery.out_of_isr_at(samples, 0) == 11.0
    # complete again only when every partition is back, not at the half-way sample
    assert recovery.isr_complete_at(samples, 11.5) == 13.0
    assert recovery.isr_complete_at(samples[:3], 11.5) is None


STATE_CHANGE = """\
[2026-01-01 10:00:00,000] INFO [BrokerServer id=1] Transition from SHUTDOWN to STARTING (kafka.server.BrokerServer)
[2026-01-01 10:00:01,000] INFO [Broker id=1] Follower rec-test-19 starts at leader epoch 0 from offset 12161 with partition epoch 1 and high watermark 12161. Current leader is 3. (state.change.logger)
[2026-01-01 10:00:01,100] INFO [Broker id=1] Follower rec-test-10 starts at leader epoch 1 from offset 0 with partition epoch 1 and high watermark 0. Current leader is 3. (state.change.logger)
[2026-01-01 10:00:01,200] INFO [Broker id=1] Leader rec-test-3 with topic id Some(abc) starts at leader epoch 2 from offset 900 with partition epoch 2, high watermark 900. (state.change.logger)
[2026-01-01 10:00:01,300] INFO [Broker id=1] Follower __consumer_offsets-1 starts at leader epoch 0 from offset 5 with partition epoch 1 (state.change.logger)
"""


def test_replica_start_offsets():
    assert recovery.replica_start_offsets(STATE_CHANGE, "rec-test") == {
        "rec-test-19": 12161, "rec-test-10": 0, "rec-test-3": 900}
    assert len(recovery.replica_start_offsets(STATE_CHANGE)) == 4
