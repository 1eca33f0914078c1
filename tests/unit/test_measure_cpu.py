"""CPU attribution by process (tr4947.measure.cpu) and the OMB benchmark window it is read over."""
import datetime as dt
import os
import subprocess
import time

import pytest

from tr4947.measure import cpu, omb_log


def test_usage_between_uses_the_samples_inside_the_window():
    s = [cpu.Sample(100.0, {"b": 1.0}, 10.0), cpu.Sample(101.0, {"b": 1.5}, 11.0),
         cpu.Sample(103.0, {"b": 3.5}, 13.0), cpu.Sample(104.0, {"b": 9.0}, 14.0)]
    u = cpu.usage_between(s, "b", 100.5, 103.5, processes=2)
    assert u.cpu_seconds == pytest.approx(2.0) and u.wall_seconds == pytest.approx(2.0)
    assert u.percent_of_core == pytest.approx(100.0)
    assert u.percent_per_process() == pytest.approx(50.0)
    with pytest.raises(ValueError, match="fewer than two"):
        cpu.usage_between(s, "b", 101.5, 102.5, processes=1)


def test_sampler_attributes_cpu_to_the_process_that_used_it():
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        s = cpu.CpuSampler({"me": [os.getpid()], "sleeper": lambda: [sleeper.pid]},
                           interval=0.1)
        with s:
            time.sleep(0.3)
            t0, c0 = time.time(), cpu.process_cpu_seconds(cpu.psutil.Process())
            # Burn 0.3 s of CPU (however long the busy machine takes to give it).
            deadline = time.monotonic() + 30
            while cpu.process_cpu_seconds(cpu.psutil.Process()) - c0 < 0.3 and \
                    time.monotonic() < deadline:
                sum(i * i for i in range(10000))
            time.sleep(0.3)
        u = s.usage(t0 - 0.25, time.time())
        assert u["me"].cpu_seconds >= 0.25
        assert u["sleeper"].cpu_seconds < 0.05
        assert s.processes("sleeper") == 1
    finally:
        sleeper.kill()
        sleeper.wait()


def test_sampler_keeps_the_cpu_of_an_exited_process():
    p = subprocess.Popen(["python3", "-c", "import time\nt=time.process_time()\n"
                          "while time.process_time()-t<0.2: pass\ntime.sleep(0.5)"])
    s = cpu.CpuSampler({"p": [p.pid]}, interval=0.05)
    with s:
        p.wait()
        time.sleep(0.2)
    totals = [x.cpu["p"] for x in s.samples]
    assert totals == sorted(totals)          # never goes backwards after the exit
    assert totals[-1] >= 0.15


def test_bad_arguments():
    with pytest.raises(ValueError):
        cpu.CpuSampler({}, 1.0)
    with pytest.raises(ValueError):
        cpu.CpuSampler({"x": [1]}, 0)


OMB_LOG = """\
08:45:15.685 [main] INFO WorkloadGenerator - ----- Starting warm-up traffic (1m) ------ [labScale: 5 s]
08:45:20.805 [main] INFO WorkloadGenerator - Pub rate   138.0 msg/s /  0.1 MB/s | Pub err     0.0 err/s | Cons rate   138.4 msg/s /  0.1 MB/s | Backlog:  0.0 K | Pub Latency (ms) avg: 1.0
08:45:25.811 [main] INFO WorkloadGenerator - ----- Starting benchmark traffic (5m)------ [labScale: 20 s]
08:45:35.811 [main] INFO WorkloadGenerator - Pub rate  1000.0 msg/s /  1.0 MB/s | Pub err     0.0 err/s | Cons rate   990.0 msg/s /  1.0 MB/s | Backlog:  0.0 K | Pub Latency (ms) avg: 1.0
08:45:45.811 [main] INFO WorkloadGenerator - Pub rate  3000.0 msg/s /  2.9 MB/s | Pub err     2.0 err/s | Cons rate  3010.0 msg/s /  2.9 MB/s | Backlog:  0.0 K | Pub Latency (ms) avg: 1.0
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
