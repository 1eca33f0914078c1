"""Time series from OMB's log (tr4947.measure.omb_log): periodic lines to numbers, phases
from WorkloadGenerator's milestone lines, in the order OMB logs them (also when its backlog
thread logs first); and what the OMB procedure makes of them (tr4947.procedures.omb:
summaries, the page's excerpt, charts)."""
import pytest

from tr4947.measure import omb_log
from tr4947.procedures import omb

from ..support.targets import NoTransport, local_target, write_inventory

P = ("INFO WorkloadGenerator - Pub rate {r} msg/s / {mb} MB/s | Pub err     0.0 err/s | "
     "Cons rate {c} msg/s / {cmb} MB/s | Backlog: {b} K | Pub Latency (ms) avg: 12.5 - 50%: 10.1 - "
     "99%: 40.2 - 99.9%: 55.0 - Max: 60.3 | Pub Delay Latency (us) avg: 5.0 - 50%: 4.0 - 99%: "
     "9.0 - 99.9%: 10.0 - Max: 11.0")


def line(t, msg):
    return f"{t} [main] {msg}"


def backlog_log(pause_first=True):
    ev = [line("23:59:50.000", "INFO Benchmark - --------------- WORKLOAD : null --- DRIVER : Kafka---------------"),
          line("23:59:51.000", "INFO WorkloadGenerator - ----- Starting warm-up traffic (1m) ------"),
          line("23:59:53.000", P.format(r="100.0", mb=" 3.1", c="100.0", cmb=" 3.1", b=" 0.0"))]
    pause = line("23:59:53.100", "INFO WorkloadGenerator - Stopping all consumers to build backlog")
    bench = line("23:59:53.200", "INFO WorkloadGenerator - ----- Starting benchmark traffic (5m)------")
    ev += [pause, bench] if pause_first else [bench, pause]
    ev += [line("23:59:55.000", P.format(r="257759.2", mb="4027.5", c="    0.0", cmb=" 0.0", b="515.5")),
           line("23:59:56.000", "INFO WorkloadGenerator - --- Completed backlog build in 3 s ---"),
           line("23:59:56.000", "INFO WorkloadGenerator - --- Start draining backlog ---"),
           line("23:59:58.000", P.format(r="100.0", mb=" 3.1", c="900.0", cmb="28.1", b="100.0")),
           # the run crosses midnight
           line("00:00:01.000", "INFO WorkloadGenerator - --- Completed backlog draining in 5 s ---"),
           line("00:00:05.000", P.format(r="100.0", mb=" 3.1", c="100.0", cmb=" 3.1", b=" 0.0"))]
    return "\n".join(ev)


@pytest.mark.parametrize("pause_first", [True, False])
def test_phases_and_numbers_of_a_backlog_run(pause_first):
    run = omb_log.parse(backlog_log(pause_first))
    assert [s.phase for s in run.samples] == ["warmup", "producer-only", "drain", "mixed"]
    assert list(run.phase_starts) == ["warmup", "producer-only", "drain", "mixed"]
    assert run.phase_starts["mixed"] == 11.0                 # across midnight
    s = run.samples[1]
    assert (s.publish_rate, s.publish_mbs, s.consume_mbs, s.backlog_k) == (257759.2, 4027.5, 0.0, 515.5)
    assert (s.latency_avg, s.latency_50, s.latency_99, s.latency_999, s.latency_max) == \
        (12.5, 10.1, 40.2, 55.0, 60.3)
    assert run.samples[2].total_mbs == pytest.approx(31.2)
    assert [x.t for x in run.of("drain", "mixed")] == [8.0, 15.0]


def test_a_period_spanning_a_phase_change_goes_to_the_phase_it_mostly_spent():
    # the drain ends 0.5 s before the period's line: that period was (mostly) the drain
    log = backlog_log().replace("00:00:01.000", "00:00:04.500")
    assert [s.phase for s in omb_log.parse(log).samples][-1] == "drain"


def test_a_second_run_in_the_same_log_starts_over():
    log = backlog_log() + "\n" + line("00:01:00.000", "INFO Benchmark - --- WORKLOAD : x --- DRIVER : Kafka")
    assert omb_log.parse(log).samples == []


def test_summary_excludes_warmup_and_totals_both_directions():
    run = omb.Run("r", command=None, result={"aggregatedPublishLatency99pct": 40.0},
                       series=omb_log.parse(backlog_log()))
    s = run.summary()
    assert s["samples"] == 3
    assert s["total_peak"] == pytest.approx(4027.5)
    assert s["total_mean"] == pytest.approx((4027.5 + 31.2 + 6.2) / 3)
    assert s["pub_p99_ms"] == 40.0


def test_scale_env_uses_the_notebooks_names_and_checks_them():
    """One vocabulary: the notebook's scale keys are the runner's option names."""
    env = omb.scale_env({"duration_s": 12, "rate": 0.01, "partitions": 8})
    assert env == {"TR4947_OMB_SCALE": "duration_s=12,rate=0.01,partitions=8"}
    from tr4947.omb import LabScale
    assert LabScale.from_kwargs(**LabScale.parse(env["TR4947_OMB_SCALE"])).partitions == 8
    assert omb.scale_env(None) == {}
    with pytest.raises(ValueError, match="unknown lab scale option 'duration'; known: "
                                         "duration_s, warmup_s, rate"):
        omb.scale_env({"duration": 12})
    with pytest.raises(ValueError, match="rate: -1 is not allowed"):
        omb.scale_env({"rate": -1})


def test_excerpt_keeps_milestones_and_ends_of_each_phase():
    log = "\n".join([line("10:00:00.000", "INFO WorkloadGenerator - ----- Starting benchmark traffic (5m)------")]
                    + [line(f"10:00:{i:02d}.000", P.format(r=f"{i}.0", mb="1.0", c="1.0", cmb="1.0", b="0.0"))
                       for i in range(1, 9)]
                    + [line("10:00:09.000", "INFO Benchmark - Writing test result into x.json")])
    ex = omb.excerpt(log).splitlines()
    assert ex[0].endswith("Starting benchmark traffic (5m)------")
    assert "Pub rate 1.0 " in ex[1] and "Pub rate 2.0 " in ex[2]
    assert ex[3] == "... (4 more periods)"
    assert "Pub rate 8.0 " in ex[5] and ex[6].endswith("Writing test result into x.json")


def test_throughput_chart_draws_the_tr_figure_dashed_on_a_log_axis(tmp_path):
    from tr4947.results import charts
    run = omb.Run("HA pair, sync driver", command=None, series=omb_log.parse(backlog_log()))
    spec = omb.throughput_chart([run], reference=[("TR-4947: ~1236 MBps", 1236.0)])
    assert spec["y_scale"] == "log"
    assert [s["name"] for s in spec["series"]] == [
        "HA pair, sync driver (warmup)", "HA pair, sync driver (producer-only)",
        "HA pair, sync driver (drain)", "HA pair, sync driver (mixed)"]
    assert spec["reference"] == [{"name": "TR-4947: ~1236 MBps", "x": [0.0, 15.0],
                                  "y": [1236.0, 1236.0]}]
    svg = charts.svg(spec, tmp_path / "c.svg").read_text()
    assert "stroke-dasharray" in svg                       # the reference line is dashed
    plain = charts.svg(omb.throughput_chart([run]), tmp_path / "d.svg").read_text()
    assert "stroke-dasharray" not in plain and "y_scale" not in omb.throughput_chart([run])
    ph = omb.phase_chart(run)
    assert [s["name"] for s in ph["series"]][:2] == ["producers (warmup)", "producers (producer-only)"]


# --- the procedure on a target: files placed, the command run, OMB's own output read back ----
def test_run_places_files_runs_the_command_and_reads_the_result_it_names(tmp_path):
    t = local_target(write_inventory(tmp_path), confirm=True)
    home = tmp_path / "benchmark"
    t.inventory.host("client-1").vars["omb_home"] = str(home)
    log = backlog_log()
    command = tmp_path / "bench.sh"
    # Stands in for bin/benchmark: prints OMB's log and writes the result it names, relative
    # to OMB's directory (as OMB does); the scale arrives in the environment.
    command.write_text(f"cd {home}\ncat <<'LOG'\n{log}\nLOG\n"
                       'echo "$TR4947_OMB_SCALE" > scale.txt\n'
                       "echo '{\"aggregatedPublishLatency99pct\": 40.0}' > r.json\n"
                       "echo '00:00:06.000 [main] INFO Benchmark - Writing test result into r.json'\n")
    run = omb.run(t, "client-1", "backlog", str(command),
                  {"workloads/w.yaml": "name: w\n", "driver-kafka/d.yaml": "name: Kafka\n"},
                  scale={"duration_s": 12})
    assert (home / "workloads" / "w.yaml").read_text() == "name: w\n"
    assert (home / "scale.txt").read_text() == "duration_s=12\n"
    assert run.result_path == f"{home}/r.json" and run.result == {"aggregatedPublishLatency99pct": 40.0}
    assert [s.phase for s in run.series.samples] == ["warmup", "producer-only", "drain", "mixed"]
    assert run.summary()["pub_p99_ms"] == 40.0


def test_run_unconfirmed_plans_placement_and_command_and_reads_nothing(tmp_path):
    t = NoTransport(write_inventory(tmp_path), confirm=False, echo=False)
    command = tmp_path / "bench.sh"
    command.write_text("bin/benchmark --drivers driver-kafka/d.yaml workloads/w.yaml\n")
    run = omb.run(t, "client-1", "r", str(command), {"workloads/w.yaml": "x: 1\n"})
    assert run.planned and run.result is None and run.series.samples == []
    assert run.command.stdout.startswith("DRY RUN: would run on client-1 (192.0.2.5):")


def test_driver_bootstrap_and_with_bootstrap():
    driver = ("name: Kafka\ncommonConfig: |\n  bootstrap.servers=10.0.0.1:9092,10.0.0.2:9092\n"
              "  request.timeout.ms=30000\nproducerConfig: |\n  acks=all\n")
    assert omb.driver_bootstrap(driver) == "10.0.0.1:9092,10.0.0.2:9092"
    moved = omb.with_bootstrap(driver, "198.18.1.1:9092")
    assert omb.driver_bootstrap(moved) == "198.18.1.1:9092"
    assert moved.replace("198.18.1.1:9092", "10.0.0.1:9092,10.0.0.2:9092") == driver
