"""What the failure drills compute from Kafka's verifiable producer and consumer and from the
cluster's metadata: lost and duplicated records, stalls and when producers resumed, the rate
held, when a fault was detected and when every ISR was full again."""
from __future__ import annotations

import json
from collections import Counter

import pytest

from tr4947.measure import drills as m
from tr4947.measure.recovery import IsrSample

T0 = 1_800_000_000.0


def success(t: float, partition: int, value: str, key: str = "0") -> str:
    """A line as VerifiableProducer prints it for an acknowledged record."""
    return json.dumps({"timestamp": int(t * 1000), "name": "producer_send_success", "key": key,
                       "value": value, "offset": 7, "topic": "drills", "partition": partition})


def test_producer_output_is_read_line_by_line():
    text = "\n".join([
        "[2026-11-26 12:00:00,000] WARN something the tool logs (org.apache.kafka...)",
        json.dumps({"timestamp": int(T0 * 1000), "name": "startup_complete"}),
        success(T0 + 2, 1, "12.1"),
        success(T0 + 1, 0, "12.0"),
        json.dumps({"timestamp": int((T0 + 3) * 1000), "name": "producer_send_error",
                    "exception": "TimeoutException", "message": "expired", "topic": "drills",
                    "key": "2", "value": "12.2"}),
        '{"truncated": ',
        json.dumps({"timestamp": int((T0 + 4) * 1000), "name": "tool_data", "sent": 3,
                    "acked": 2, "target_throughput": 300, "avg_throughput": 1.5})])
    p = m.parse_producer(text)
    assert [(a.t, a.partition, a.value) for a in p.acks] == [(T0 + 1, 0, "12.0"),
                                                             (T0 + 2, 1, "12.1")]
    assert p.started == T0 and len(p.errors) == 1 and p.summary["acked"] == 2
    assert p.values == {"12.0", "12.1"}


def test_consumed_values_from_json_or_one_per_line():
    js = "\n".join(json.dumps({"name": "record_data", "value": v, "partition": 0, "offset": i})
                   for i, v in enumerate(["1.0", "1.1", "1.1"]))
    assert m.parse_consumed(js) == Counter({"1.0": 1, "1.1": 2})
    assert m.parse_consumed("1.0\n1.1\n\n1.1\n") == Counter({"1.0": 1, "1.1": 2})


def test_check_counts_lost_duplicates_and_unacknowledged_reads():
    # Load 5's first producer writes 51.n; 61.0 is load 6's, 5.0 and 512.0 belong to no
    # producer of load 5.
    p = m.parse_producer("\n".join(success(T0 + i, 0, f"51.{i}") for i in range(10)))
    read = Counter({f"51.{i}": 1 for i in range(10) if i not in (3, 7)})
    read["51.4"] += 2                          # read three times: two duplicates
    read["51.10"] = 1                          # written, never acknowledged: not owed
    for other in ("61.0", "5.0", "512.0"):
        read[other] = 1                        # another load's value: not counted
    c = m.check(p, read, prefix="5")
    assert (c.acked, c.read, c.lost, c.duplicates, c.unacked_read) == (
        10, 9, ["51.3", "51.7"], 2, 1)
    assert m.check(p, Counter({f"51.{i}": 1 for i in range(10)}), "5").lost == []


def test_several_producers_are_one_load_each_paced_from_its_own_start():
    one = "\n".join([json.dumps({"timestamp": int(T0 * 1000), "name": "startup_complete"}),
                     success(T0 + 1, 0, "1201.0"), success(T0 + 3, 1, "1201.1"),
                     json.dumps({"timestamp": int((T0 + 4) * 1000), "name": "tool_data",
                                 "sent": 2, "acked": 2})])
    two = "\n".join([json.dumps({"timestamp": int((T0 + 2) * 1000), "name": "startup_complete"}),
                     success(T0 + 2.5, 2, "1202.0"),
                     json.dumps({"timestamp": int((T0 + 4) * 1000), "name": "tool_data",
                                 "sent": 3, "acked": 1})])
    p = m.parse_producers({"1201": one, "1202": two})
    assert [a.value for a in p.acks] == ["1201.0", "1202.0", "1201.1"]
    assert p.started == T0 and p.starts == {"1201": T0, "1202": T0 + 2}
    assert (p.summary["sent"], p.summary["acked"]) == (5, 3)
    # value n of each producer is due n / rate after its own start
    assert p.due("1201.1", 10) == pytest.approx(T0 + 0.1)
    assert p.due("1202.5", 10) == pytest.approx(T0 + 2.5)
    assert p.due("1209.0", 10) is None                  # no such producer: unknown
    assert m.load_of("1202.77") == "120" and m.load_of("12.0") == "1"
def acks(times: dict[int, list[float]]) -> list[m.Ack]:
    return sorted((m.Ack(T0 + t, p, f"1.{i}") for p, ts in times.items()
                   for i, t in enumerate(ts)), key=lambda a: a.t)


def every(start: float, stop: float, step: float = 0.1) -> list[float]:
    return [round(start + i * step, 3) for i in range(int(round((stop - start) / step)) + 1)]


def test_no_stall_when_every_partition_keeps_acknowledging():
    s = m.stall(acks({0: every(0, 20), 1: every(0.05, 20)}), T0 + 10, T0 + 20)
    assert (s.resumed_s, s.stalled, s.of) == (0.0, 0, 2)
    assert s.longest_s == pytest.approx(0.1, abs=1e-3)


def test_a_stall_counts_from_the_last_acknowledgement_before_the_fault():
    # partition 1 is silent from 9.9 to 16.0 (the fault at 10.0); partition 0 never stops
    s = m.stall(acks({0: every(0, 20), 1: every(0, 9.9) + every(16, 20)}), T0 + 10, T0 + 20)
    assert s.stalled == 1 and s.of == 2
    assert s.longest_s == pytest.approx(6.1, abs=1e-3)
    assert s.resumed_s == pytest.approx(6.0, abs=1e-3)


def test_the_last_stall_decides_when_producers_resumed():
    # two silences after the fault: 10.0-14.0 (the longest), then 15.0-17.5
    p1 = every(0, 10) + every(14, 15) + every(17.5, 25)
    s = m.stall(acks({1: p1}), T0 + 10, T0 + 25)
    assert s.longest_s == pytest.approx(4.0, abs=1e-3)
    assert s.resumed_s == pytest.approx(7.5, abs=1e-3)


def test_a_partition_still_silent_at_the_end_never_resumed():
    s = m.stall(acks({0: every(0, 30), 1: every(0, 10)}), T0 + 10, T0 + 30)
    assert s.resumed_s is None and s.longest_s == pytest.approx(20.0, abs=1e-3)
    # a silence shorter than the threshold is not a stall
    s = m.stall(acks({1: every(0, 10) + every(10.8, 12)}), T0 + 10, T0 + 12)
    assert s.stalled == 0 and s.resumed_s == 0.0


def test_partitions_still_waiting_when_the_fault_ended():
    # 0 never stopped; 1 resumed before the end; 2 acknowledged once just after the fault,
    # then stayed silent (still waiting); 3 silent from the fault on (still waiting)
    s = m.stall(acks({0: every(0, 30), 1: every(0, 10) + every(20, 30),
                      2: every(0, 10.2), 3: every(0, 10)}), T0 + 10, T0 + 30)
    assert (s.silent, s.of) == (2, 4)
    # nothing is waiting once every partition acknowledged within the threshold of the end
    s = m.stall(acks({0: every(0, 30), 1: every(0, 10) + every(20, 30)}), T0 + 10, T0 + 30)
    assert s.silent == 0


def test_rate_in_a_window():
    a = acks({0: every(0, 10, 0.01)})             # 100 a second
    assert m.rate(a, T0 + 2, T0 + 6) == pytest.approx(100, rel=0.01)
    assert m.rate(a, T0 + 20, T0 + 24) == 0.0
    assert m.rate(a, T0 + 6, T0 + 2) == 0.0
    assert len(m.in_window(a, T0 + 1, T0 + 2)) == 101


def sample(t: float, under: int = 0, without: int = 0, registered: bool = True) -> IsrSample:
    return IsrSample(T0 + t, 6, under, without, registered)


def test_detected_and_isr_full_again():
    samples = [sample(0), sample(5), sample(9.2, 6, 6, False), sample(12, 6, 6, False),
               sample(16, 6, 6, True), sample(18.5), sample(20)]
    assert m.detected_at(samples, T0 + 1) == T0 + 9.2
    assert m.isr_shrank(samples, T0 + 1)
    assert m.isr_full_at(samples, T0 + 1) == T0 + 18.5
    # a fault the cluster never noticed: nothing detected, nothing to recover
    quiet = [sample(t) for t in range(0, 20, 2)]
    assert m.detected_at(quiet, T0 + 5) is None and m.isr_full_at(quiet, T0 + 5) is None
    assert not m.isr_shrank(quiet, T0 + 5)
    # still under-replicated at the last sample: not full again
    assert m.isr_full_at(samples[:5], T0 + 1) is None
    # a broker no longer registered counts as detected, even before an ISR changes
    assert m.detected_at([sample(3, registered=False)], T0) == T0 + 3


def test_fenced_is_when_the_broker_was_no_longer_registered():
    # the ISR shrank first (a follower stalled), the controller fenced the broker later
    samples = [sample(0), sample(31, 4, 4), sample(40, 6, 6, False), sample(60)]
    assert m.detected_at(samples, T0 + 1) == T0 + 31
    assert m.fenced_at(samples, T0 + 1) == T0 + 40
    # not within the run's window: not fenced in that run
    assert m.fenced_at(samples, T0 + 1, until=T0 + 35) is None
    assert m.fenced_at([sample(t, 6, 6) for t in range(5)], T0) is None


def test_whole_again_whichever_replica_left_the_isr():
    # a paused leader drops its followers once it runs again: under-replicated, yet the
    # watched broker never left an ISR (nothing "detected"); whole again all the same
    samples = [sample(0), sample(13, 6, 0), sample(14, 6, 0), sample(16), sample(18)]
    assert m.detected_at(samples, T0 + 1) is None and m.isr_full_at(samples, T0 + 1) is None
    assert m.whole_again_at(samples, T0 + 1) == T0 + 16
    assert m.whole_again_at(samples[:3], T0 + 1) is None            # not yet
    assert m.whole_again_at([sample(t) for t in range(5)], T0) is None   # never shrank
    # the broker itself still fenced: not whole
    assert m.whole_again_at([sample(1, 6, 6, False), sample(2, 0, 0, False), sample(3)],
                            T0) == T0 + 3


# --- the consumer group through a fault -------------------------------------------------------

def read_line(t: float, partition: int, value: str) -> str:
    """A line as VerifiableConsumer --verbose prints a record it received (its timestamp is
    when the member made the event, not the record's)."""
    return json.dumps({"timestamp": int(t * 1000), "name": "record_data", "key": "0",
                       "value": value, "topic": "drills", "partition": partition, "offset": 3})


def revoked(t: float) -> str:
    return json.dumps({"timestamp": int(t * 1000), "name": "partitions_revoked",
                       "partitions": [{"topic": "drills", "partition": 0}]})


def test_the_groups_reads_keep_the_first_copy_of_this_loads_values_and_the_rebalances():
    one = "\n".join([read_line(T0 + 2, 0, "121.0"), read_line(T0 + 1, 5, "111.9"), revoked(T0 + 5),
                     json.dumps({"timestamp": int((T0 + 6) * 1000),
                                 "name": "partitions_revoked", "partitions": []}),
                     "not json"])
    two = "\n".join([read_line(T0 + 7, 0, "121.0"), read_line(T0 + 3, 1, "122.1"),
                     revoked(T0 + 5.2)])
    g = m.parse_group([one, two], "12")
    assert g.members == 2
    # 121.0 read twice (a rebalance re-read): its first read counts; 111.9 is another load's;
    # 122.1 is load 12's second producer's.
    assert [(r.t, r.value) for r in g.reads] == [(T0 + 2, "121.0"), (T0 + 3, "122.1")]
    # an empty revocation (a member that held nothing) is no rebalance of its partitions
    assert g.revoked == [T0 + 5, T0 + 5.2]


def steady_load(seconds: int, rate: int, stall=(None, None)):
    """A producer started at T0 sending at ``rate``; record n is due at T0 + n / rate and
    acknowledged 10 ms later, except in the ``stall`` window (start, end), whose records are
    acknowledged at its end. The group reads each 20 ms after its acknowledgement."""
    s0, s1 = stall
    prod = m.ProducerLog(started=T0)
    reads = []
    for n in range(seconds * rate):
        due = T0 + n / rate
        acked = s1 if s0 is not None and s0 <= due < s1 else due + 0.01
        prod.acks.append(m.Ack(acked, n % 6, f"12.{n}"))
        reads.append(m.Read(acked + 0.02, n % 6, f"12.{n}"))
    prod.acks.sort(key=lambda a: a.t)
    return prod, reads


def test_a_group_that_keeps_up_is_never_late_and_its_latency_is_the_pipelines():
    prod, reads = steady_load(20, 50)
    got = m.group_through(prod, m.GroupLog(reads=reads, members=2), 50, T0 + 5, T0 + 15)
    assert got.caught_up_s is None and got.unread == 0 and got.rebalances == 0
    assert got.behind_most <= 1
    assert got.e2e_p50_s == pytest.approx(0.03) and got.e2e_max_s == pytest.approx(0.03)


def test_a_stall_shows_as_lag_a_catch_up_time_and_latency_counted_from_the_due_send():
    # Records due between T0+5 and T0+8 are acknowledged only at T0+8.
    prod, reads = steady_load(20, 50, stall=(T0 + 5, T0 + 8))
    # ... and the group is slower still: it receives them only at T0+9.
    reads = [m.Read(T0 + 9 if T0 + 5 <= T0 + int(r.value.split(".")[1]) / 50 < T0 + 8 else r.t,
                    r.partition, r.value) for r in reads]
    # one record acknowledged, never read
    reads = [r for r in reads if r.value != "12.700"]
    g = m.GroupLog(reads=sorted(reads, key=lambda r: r.t), revoked=[T0 + 8.5, T0 + 8.6], members=2)
    got = m.group_through(prod, g, 50, T0 + 5, T0 + 15)
    # At T0+8.99: the 150 stalled records (and those since) acknowledged, none of them read.
    assert 150 <= got.behind_most <= 150 + 50
    assert got.caught_up_s == pytest.approx(4.0)            # the last late read at T0+9
    # the first stalled record was due at T0+5 and read at T0+9
    assert got.e2e_max_s == pytest.approx(4.0)
    assert got.e2e_p50_s == pytest.approx(0.03)
    assert got.rebalances == 1 and got.unread == 1


def test_whole_is_registered_with_every_isr_full():
    def smp(t, reg, under, parts=6):
        return IsrSample(t=t, partitions=parts, without_broker=0, under_replicated=under,
                         broker_registered=reg)
    assert m.whole_at([smp(1, True, 1), smp(2, True, 0)]) == 2
    assert m.whole_at([smp(1, True, 0), smp(2, False, 0)]) is None
    assert m.whole_at([smp(2, True, 0, parts=0)]) is None and m.whole_at([]) is None
