"""Command line with OMB's shape: ``bin/benchmark --drivers driver.yaml workload.yaml``."""
from __future__ import annotations

import argparse
import logging
import os
import sys
import textwrap
from pathlib import Path

from ..usage import Parser, refuse
from .runner import SCALE_ENV
from .workload import ConfigError

DESCRIPTION = textwrap.dedent("""\
    Run OpenMessaging Benchmark (OMB) workloads against Kafka, as OMB's bin/benchmark does,
    with the lab's runner: OMB workload and Kafka driver YAML files are read unchanged, the real
    Kafka client (librdkafka) produces and consumes, OMB's periodic lines are logged and OMB's
    result JSON (<workload>-<driver>-<date>.json) is written.

    Every workload is run with every driver, in turn (as OMB).""")

EPILOG = textwrap.dedent("""\
    examples:
      bin/benchmark --drivers driver-kafka/kafka-throughput.yaml workloads/1-topic-100-partitions-1kb.yaml
      bin/benchmark -d driver-kafka/kafka-sync.yaml,driver-kafka/kafka-throughput.yaml \\
          --bootstrap 127.0.1.1:9092 --duration-s 60 --warmup-s 20 \\
          --rate 0.05 workloads/1-topic-100-partitions-1kb.yaml

    lab scale: the --*-override/--rate options (or TR4947_OMB_SCALE=name=value,...,
    e.g. TR4947_OMB_SCALE=duration_s=60,rate=0.05, so that a TR command
    runs unchanged) shrink a TR workload to this machine without editing its YAML. The result
    JSON holds exactly OMB's TestResult fields, describing what ran; the workload file's own
    values, the overrides and per-sample figures go to <result>.lab.yaml beside it.

    differences from OMB: unknown YAML fields are an error (OMB silently ignores them; use
    --lenient for OMB's behaviour); there are no remote workers (-w/--workers is accepted and
    ignored); Java client properties are translated to librdkafka explicitly and unmappable ones
    are rejected by name; values OMB would crash, hang or measure nothing with (e.g.
    testDurationMinutes 0, which OMB runs forever) are refused.

    exit status: 0 all runs done, 1 a run failed, 2 a usage or input error (one line on stderr
    naming the file, line and field; every workload and driver is checked before any run).""")


def _list(values: list[str] | None) -> list[str]:
    """JCommander List<String>: repeated options and comma-separated values both work."""
    out = []
    for v in values or []:
        out += [x for x in v.split(",") if x]
    return out


def parser() -> argparse.ArgumentParser:
    p = Parser(prog="benchmark", description=DESCRIPTION, epilog=EPILOG, allow_abbrev=False)
    omb = p.add_argument_group("OMB options")
    omb.add_argument("workloads", nargs="*", metavar="WORKLOAD.yaml",
                     help="OMB workload files (workloads/*.yaml)")
    omb.add_argument("-d", "--drivers", action="append", metavar="DRIVER.yaml",
                     help="driver files, comma-separated or repeated (driver-kafka/*.yaml)")
    omb.add_argument("-o", "--output", help="result file (default: "
                     "<workload file name>-<driver name>-<yyyy-MM-dd-HH-mm-ss>.json)")
    omb.add_argument("-w", "--workers", action="append",
                     help="OMB remote workers: accepted and ignored (the lab runs locally)")
    omb.add_argument("-wf", "--workers-file", help="accepted and ignored, as --workers")
    omb.add_argument("-x", "--extra", action="store_true", help="accepted and ignored")
    omb.add_argument("-c", "--csv", metavar="DIR",
                     help="OMB's results-to-CSV mode: not implemented by this runner")
    lab = p.add_argument_group("lab options (recorded in <result>.lab.yaml; defaults from "
                               "$TR4947_OMB_SCALE)")
    lab.add_argument("--bootstrap", metavar="HOST:PORT[,..]",
                     help="broker list replacing the driver's bootstrap.servers")
    lab.add_argument("--duration-s", type=float, metavar="S",
                     help="benchmark phase length instead of testDurationMinutes")
    lab.add_argument("--warmup-s", type=float, metavar="S",
                     help="warm-up length instead of warmupDurationMinutes (0 = none)")
    lab.add_argument("--rate", type=float, metavar="F",
                     help="multiply producerRate by F (e.g. 0.05 for 1,000,000 -> 50,000)")
    lab.add_argument("--backlog-gb", type=float, metavar="GB",
                     help="backlog size (GiB, fractions allowed) instead of consumerBacklogSizeGB")
    lab.add_argument("--partitions", type=int, metavar="N",
                     help="partitions per topic instead of partitionsPerTopic")
    lab.add_argument("--producers-per-topic", type=int, metavar="N",
                     help="producers per topic instead of producersPerTopic")
    lab.add_argument("--consumers-per-subscription", type=int, metavar="N",
                     help="consumers per subscription instead of consumerPerSubscription")
    lab.add_argument("--message-size", type=int, metavar="BYTES",
                     help="message size instead of messageSize (randomized payloads only)")
    lab.add_argument("--stats-period-s", type=float, metavar="S",
                     help="reporting period (OMB: 10)")
    lab.add_argument("--producer-processes", type=int, metavar="N",
                     help="worker processes for producers (default: number of CPUs)")
    lab.add_argument("--consumer-processes", type=int, metavar="N",
                     help="worker processes for consumers (default: number of CPUs)")
    lab.add_argument("--drain-at-end", action="store_true",
                     help="after the run, wait until consumers have every produced message")
    lab.add_argument("--output-dir", default=".", help="where default-named results go")
    lab.add_argument("--lenient", action="store_true",
                     help="ignore unknown YAML fields with a warning, as OMB does")
    return p


_TR_TYPOS = {"-drivers", "\u2013drivers", "\u2014drivers", "\u2013d", "\u2013o", "-output"}


_SCALE_OPTIONS = ("duration_s", "warmup_s", "rate",
                  "backlog_gb", "partitions",
                  "producers_per_topic", "consumers_per_subscription",
                  "message_size", "stats_period_s", "producer_processes",
                  "consumer_processes")


def _refuse(msg: str) -> int:
    """A refused input: one line, exit 2, nothing run (tr4947.usage)."""
    return refuse("benchmark", msg)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    p = parser()
    for a in argv:
        if a in _TR_TYPOS:
            bare = a.lstrip("-\u2013\u2014")
            p.error(f"unknown option {a!r}: did you mean --{bare}? "
                    f"(OMB's options take two ASCII hyphens: --drivers, or -d)")
    args = p.parse_args(argv)
    if args.csv:
        p.error("-c/--csv (OMB's ResultsToCsv) is not implemented by this runner")
    drivers = _list(args.drivers)
    if not drivers:
        p.error("no driver given: --drivers driver-kafka/<name>.yaml")
    if not args.workloads:
        p.error("no workload given: add one or more workloads/<name>.yaml")
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(message)s")
    if args.workers or args.workers_file or args.extra:
        print("note: -w/--workers, -wf/--workers-file and -x/--extra are ignored: the lab runner "
              "drives the clients itself on this machine", file=sys.stderr)

    from .runner import LabScale, check, run
    try:
        scale = LabScale.parse(os.environ.get(SCALE_ENV, ""))
    except ConfigError as e:
        return _refuse(f"${SCALE_ENV}: {e}")
    from_cli = set()
    for k in _SCALE_OPTIONS:
        if getattr(args, k) is not None:     # the command line wins over the environment
            scale[k] = getattr(args, k)
            from_cli.add(k)
    if args.drain_at_end:
        scale["drain_at_end"] = True
    try:
        LabScale.from_kwargs(**scale)
    except ConfigError as e:
        opt, msg = e.field or "", str(e)
        if opt in from_cli:     # name the option as typed: --rate: -1.0 is not allowed...
            return _refuse(f"--{opt.replace('_', '-')}: {msg.removeprefix(opt + ': ')}")
        return _refuse(f"${SCALE_ENV}: {msg}")
    # Every workload and driver is checked before the first run starts: a broken file refuses
    # the whole command, it does not stop it halfway.
    try:
        for wl in args.workloads:
            for drv in drivers:
                check(Path(wl), Path(drv), args.bootstrap, strict=not args.lenient, **scale)
    except ConfigError as e:
        return _refuse(str(e))
    failed = 0
    # OMB keys workloads by file name in a TreeMap: sorted order.
    for wl in sorted(args.workloads, key=lambda f: Path(f).name):
        for drv in drivers:
            try:
                run(Path(wl), Path(drv), args.bootstrap, output=args.output,
                    output_dir=args.output_dir, strict=not args.lenient, echo=True, **scale)
            except ConfigError as e:
                print(f"error: {e}", file=sys.stderr)
                failed += 1
            except KeyboardInterrupt:
                print("interrupted", file=sys.stderr)
                return 130
            except Exception as e:  # OMB logs the failure and goes on with the next pair
                print(f"Failed to run the workload '{wl}' for driver '{drv}': {e}", file=sys.stderr)
                failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
