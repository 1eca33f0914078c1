"""Broker CPU from the samples a broker host takes of itself (tr4947.measure.cpu: the TSV of
snippets/cpu-utilization/CPU-2-sample-broker-cpu.sh), and the OMB benchmark window it is read
over (tr4947.measure.omb_log)."""
import datetime as dt
import math

import pytest

from tr4947.measure import cpu, omb_log

# time, ticks per second, broker ticks, FUSE ticks - as the sampler writes them, with what a
# file being written while it is read can hold: a torn last line, an empty line.
TSV = """\
1700000000.000000000 100 1000 50
1700000001.000000000 100 1100 55

1700000002.000000000 100 1300 60
1700000003.000000000 100 1450 90
1700000004.000000000 100 1700 90
1700000005.0000 100 17
"""


def test_parse_samples_turns_ticks_into_cpu_seconds_and_skips_partial_lines():
    s = cpu.parse_samples(TSV + "not a sample line at all\n1700000006 0 1 1\n")
    assert [x.t for x in s] == [1700000000.0 + i for i in range(5)]
    assert [x.broker for x in s] == [10.0, 11.0, 13.0, 14.5, 17.0]
    assert [x.fuse for x in s] == [0.5, 0.55, 0.6, 0.9, 0.9]
    assert cpu.parse_samples("") == []


def test_usage_between_uses_the_first_and_last_sample_inside_the_window():
    s = cpu.parse_samples(TSV)
    u = cpu.usage_between(s, 1700000000.5, 1700000003.5)
    # samples at :01 (11.0 s) and :03 (14.5 s): 3.5 CPU seconds over 2 s of wall clock
    assert (u.cpu_seconds, u.wall_seconds) == pytest.approx((3.5, 2.0))
    assert u.percent_of_core == pytest.approx(175.0)             # more than one core
    f = cpu.usage_between(s, 1700000000.5, 1700000003.5, what="fuse")
    assert f.cpu_seconds == pytest.approx(0.35) and f.percent_of_core == pytest.approx(17.5)
    whole = cpu.usage_between(s, 0, 2e9)
    assert whole.cpu_seconds == pytest.approx(7.0) and whole.wall_seconds == pytest.approx(4.0)
    # window edges are inclusive
    assert cpu.usage_between(s, 1700000001.0, 1700000002.0).cpu_seconds == pytest.approx(2.0)


def test_usage_between_refuses_what_it_cannot_measure():
    s = cpu.parse_samples(TSV)
    with pytest.raises(ValueError, match=r"fewer than two CPU samples between 1700000001\.5 "
                                         r"and 1700000001\.9 \(5 samples in all\)"):
        cpu.usage_between(s, 1700000001.5, 1700000001.9)
    with pytest.raises(ValueError, match="fewer than two"):
        cpu.usage_between([], 0, 1)
    restarted = cpu.parse_samples("10 100 900 0\n11 100 50 0\n")
    with pytest.raises(ValueError, match="went backwards .* restarted during the window"):
        cpu.usage_between(restarted, 0, 20)
    with pytest.raises(AttributeError):
        cpu.usage_between(s, 0, 2e9, what="controller")


def test_usage_and_per_gb_arithmetic():
    assert cpu.Usage(1.0, 0.0).percent_of_core == 0.0
    assert cpu.per_gb(30.0, 2048) == pytest.approx(15.0)         # MiB as OMB reports them
    assert math.isnan(cpu.per_gb(30.0, 0))


OMB_LOG = """\
08:45:15.685 [main] INFO WorkloadGenerator - ----- Starting warm-up traffic (1m) ------ [labScale: 5 s]
08:45:20.805 [main] INFO WorkloadGenerator - Pub rate   138.0 msg/s /  0.1 MB/s | Pub err     0.0 err/s | Cons rate   138.4 msg/s /  0.1 MB/s | Backlog:  0.0 K | Pub Latency (ms) avg: 1.0 - 50%: 1.0 - 99%: 1.0 - 99.9%: 1.0 - Max: 1.0
08:45:25.811 [main] INFO WorkloadGenerator - ----- Starting benchmark traffic (5m)------ [labScale: 20 s]
08:45:35.811 [main] INFO WorkloadGenerator - Pub rate  1000.0 msg/s /  1.0 MB/s | Pub err     0.0 err/s | Cons rate   990.0 msg/s /  1.0 MB/s | Backlog:  0.0 K | Pub Latency (ms) avg: 1.0 - 50%: 1.0 - 99%: 1.0 - 99.9%: 1.0 - Max: 1.0
08:45:45.811 [main] INFO WorkloadGenerator - Pub rate  3000.0 msg/s /  2.9 MB/s | Pub err     2.0 err/s | Cons rate  3010.0 msg/s /  2.9 MB/s | Backlog:  0.0 K | Pub Latency (ms) avg: 1.0 - 50%: 1.0 - 99%: 1.0 - 99.9%: 1.0 - Max: 1.0
08:45:45.900 [main] INFO WorkloadGenerator - ----- Aggregated Pub Latency (ms) avg: 1.0 - 50%: 1.0
"""


def test_benchmark_window_from_omb_log():
    w = omb_log.benchmark_window(OMB_LOG, dt.date(2026, 1, 1))
    assert w.seconds == pytest.approx(20.089)
    assert w.start == dt.datetime(2026, 1, 1, 8, 45, 25, 811000).timestamp()
    assert (w.publish_rate, w.consume_rate, w.errors, w.periods) == (2000.0, 2000.0, 1.0, 2)
    assert w.publish_mbs == pytest.approx(1.95)


def test_benchmark_window_missing_is_an_error():
    with pytest.raises(ValueError, match="no complete benchmark phase"):
        omb_log.benchmark_window(OMB_LOG.splitlines()[0])
    # cut short: started, never aggregated
    with pytest.raises(ValueError, match="no complete benchmark phase"):
        omb_log.benchmark_window("\n".join(OMB_LOG.splitlines()[:5]))


def test_cpu_over_the_benchmark_window_leaves_the_warmup_out():
    day = dt.date(2026, 1, 1)
    w = omb_log.benchmark_window(OMB_LOG, day)
    t0 = dt.datetime(2026, 1, 1, 8, 45, 15).timestamp()
    # 1 s samples from the warm-up's start: 2 CPU s/s in warm-up, 0.5 CPU s/s in the benchmark
    lines, ticks = [], 0
    for i in range(32):
        t = t0 + i
        lines.append(f"{t:.3f} 100 {ticks} 0")
        ticks += 200 if t < w.start else 50
    u = cpu.usage_between(cpu.parse_samples("\n".join(lines)), w.start, w.end)
    assert u.percent_of_core == pytest.approx(50.0)
