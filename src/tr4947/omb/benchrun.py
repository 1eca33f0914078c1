"""The performance chapters' OMB runs on a target: the TR's files and command, on a client.

The TR keeps its workload as ``workloads/1-topic-100-partitions-1kb.yaml`` and its drivers as
``driver-kafka/kafka-sync.yaml`` and ``kafka-throughput.yaml`` in OMB's installation
directory and runs ``bin/benchmark --drivers ... workloads/...`` there. :func:`run` places the
snippet files under those names on the client host, runs the command snippet as written and
reads back what OMB wrote: the result JSON (named by OMB) and the log it printed.

Lab scale travels in the environment (``TR4947_OMB_SCALE``), so the command stays the TR's; the
real OMB on a real target ignores it (real targets run the TR's values).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from . import logparse
from .runner import SCALE_ENV

OMB_HOME = "/opt/benchmark"
WORKLOAD_FILE = "workloads/1-topic-100-partitions-1kb.yaml"
DRIVER_FILES = {"sync": "driver-kafka/kafka-sync.yaml",
                "throughput": "driver-kafka/kafka-throughput.yaml"}
_WROTE = re.compile(r"Writing test result into (\S+\.json)")

#: Lab-scale keys a notebook's ``scale`` parameter may use -> runner option.
SCALE_KEYS = {
    "duration_s": "duration_override_seconds",
    "warmup_s": "warmup_override_seconds",
    "rate": "rate_scale",
    "backlog_gb": "backlog_gb_override",
    "partitions": "partitions_per_topic_override",
    "producers_per_topic": "producers_per_topic_override",
    "consumers_per_subscription": "consumer_per_subscription_override",
    "message_size": "message_size_override",
    "stats_period_s": "stats_period_seconds",
    "producer_processes": "producer_processes",
    "consumer_processes": "consumer_processes",
}


def scale_env(scale: dict | None) -> dict[str, str]:
    """A notebook's ``scale`` -> the environment the runner reads. Unknown keys are an error."""
    if not scale:
        return {}
    bad = [k for k in scale if k not in SCALE_KEYS]
    if bad:
        raise ValueError(f"unknown scale key(s) {bad}; known: {', '.join(SCALE_KEYS)}")
    return {SCALE_ENV: ",".join(f"{SCALE_KEYS[k]}={v}" for k, v in scale.items()
                                if v is not None)}


@dataclass
class Run:
    name: str                       # e.g. "HA pair, sync driver"
    command: object                 # the Target Result of the command snippet
    result: dict | None = None      # OMB's TestResult JSON (None when only planned)
    series: logparse.Run = field(default_factory=logparse.Run)
    result_path: str | None = None

    @property
    def planned(self) -> bool:
        return bool(getattr(self.command, "planned", False))

    def summary(self) -> dict:
        """Lab figures of the benchmark phase(s): mean and peak total MB/s (producer plus
        consumer, the TR's measure), mean publish/consume MB/s, latency."""
        bench = [s for s in self.series.samples if s.phase != "warmup"]
        if not bench:
            return {}
        tot = [s.total_mbs for s in bench]
        r = self.result or {}
        return {
            "total_mean": sum(tot) / len(tot), "total_peak": max(tot),
            "publish_mean": sum(s.publish_mbs for s in bench) / len(bench),
            "consume_mean": sum(s.consume_mbs for s in bench) / len(bench),
            "publish_peak": max(s.publish_mbs for s in bench),
            "consume_peak": max(s.consume_mbs for s in bench),
            "pub_p99_ms": r.get("aggregatedPublishLatency99pct"),
            "e2e_p99_ms": r.get("aggregatedEndToEndLatency99pct"),
            "samples": len(bench),
        }


def install_on_lab(t, client: str) -> None:
    """An OMB installation directory on a lab client host, backed by this runner."""
    from .install import install
    install(t.host_path(client, OMB_HOME))


def place(t, client: str, workload: str, driver: str, kind: str,
          replace: dict | None = None) -> None:
    """The workload and driver snippets, saved under the TR's file names on the client
    (``replace``: the lab's broker addresses the driver shows -> this target's)."""
    t.run_snippet(workload, client, dest=f"{OMB_HOME}/{WORKLOAD_FILE}", changes_state=True,
                  check=True)
    t.run_snippet(driver, client, dest=f"{OMB_HOME}/{DRIVER_FILES[kind]}", changes_state=True,
                  check=True, replace=replace)


def run(t, client: str, name: str, command: str, workload: str, driver: str, kind: str,
        scale: dict | None = None, timeout: float = 1800, replace: dict | None = None) -> Run:
    """Place the files, run the command snippet, read back the result and the log."""
    place(t, client, workload, driver, kind, replace)
    r = t.run_snippet(command, client, env=scale_env(scale), changes_state=True,
                      timeout=timeout)
    out = Run(name, r)
    if r.planned:
        return out
    if not r.ok:
        raise RuntimeError(f"{name}: bin/benchmark failed (exit {r.exit_code}):\n"
                           + r.output[-3000:])
    out.series = logparse.parse(r.stdout)
    wrote = _WROTE.findall(r.stdout)
    if wrote:
        path = wrote[-1]
        if not path.startswith("/"):
            path = str(PurePosixPath(OMB_HOME) / path)
        out.result_path = path
        text = t.run(["cat", path], client, check=True).stdout
        out.result = json.loads(text)
    return out


def delete_test_topics(bootstrap: str, timeout: float = 120) -> list[str]:
    """Remove the runs' ``test-topic-*`` topics (OMB's ``reset: true`` does this before a
    run; the TR's drivers do not set it), so the next run starts on empty volumes."""
    from confluent_kafka.admin import AdminClient
    a = AdminClient({"bootstrap.servers": bootstrap, "log_level": 3})
    old = [x for x in a.list_topics(timeout=timeout).topics if x.startswith("test-topic")]
    if old:
        for f in a.delete_topics(old, operation_timeout=timeout).values():
            f.result(timeout)
    return old


# --- charts (specs for rb.chart; the renderer draws them from these numbers) ----------------
def _reference(reference, runs) -> list[dict]:
    """The TR's figures as dashed horizontal lines across the runs' time span."""
    tmax = max((s.t for r in runs for s in r.series.samples), default=1.0)
    return [{"name": name, "x": [0.0, tmax], "y": [value, value]} for name, value in reference]


def throughput_chart(runs: list[Run], what: str = "total",
                     reference: list[tuple[str, float]] | None = None) -> dict:
    """MiB/s over time, one series per run and phase (the phase is in the series' name).
    ``reference``: (label, MiB/s) of the TR's published figures, drawn dashed; the y axis is
    then logarithmic, as lab and TR figures are orders of magnitude apart."""
    series = []
    for run in runs:
        by_phase: dict[str, list] = {}
        for s in run.series.samples:
            by_phase.setdefault(s.phase, []).append(s)
        for ph, ss in by_phase.items():
            y = [s.total_mbs if what == "total" else getattr(s, f"{what}_mbs") for s in ss]
            series.append({"name": f"{run.name} ({ph})", "x": [s.t for s in ss], "y": y})
    label = {"total": "producer + consumer MiB/s", "publish": "producer MiB/s",
             "consume": "consumer MiB/s"}[what]
    spec = {"type": "line", "x_label": "seconds since the run started", "y_label": label,
            "series": series}
    if reference:
        spec["reference"] = _reference(reference, runs)
        spec["y_scale"] = "log"
    return spec


def phase_chart(run: Run, reference: list[tuple[str, float]] | None = None) -> dict:
    """One run's producer and consumer MiB/s over time, per phase (a backlog run's
    producer-only, drain and mixed phases side by side)."""
    series = []
    for what in ("publish", "consume"):
        by_phase: dict[str, list] = {}
        for s in run.series.samples:
            by_phase.setdefault(s.phase, []).append(s)
        for ph, ss in by_phase.items():
            who = "producers" if what == "publish" else "consumers"
            series.append({"name": f"{who} ({ph})", "x": [s.t for s in ss],
                           "y": [getattr(s, f"{what}_mbs") for s in ss]})
    spec = {"type": "line", "x_label": "seconds since the run started", "y_label": "MiB/s",
            "series": series}
    if reference:
        spec["reference"] = _reference(reference, [run])
        spec["y_scale"] = "log"
    return spec


def latency_chart(runs: list[Run]) -> dict:
    """Publish latency (p50, p99) over time, one pair of series per run."""
    series = []
    for run in runs:
        ss = run.series.samples
        series.append({"name": f"{run.name} p50", "x": [s.t for s in ss],
                       "y": [s.latency_50 for s in ss]})
        series.append({"name": f"{run.name} p99", "x": [s.t for s in ss],
                       "y": [s.latency_99 for s in ss]})
    return {"type": "line", "x_label": "seconds since the run started",
            "y_label": "publish latency, ms", "series": series}


#: Log messages worth showing from a run (the rest are the periodic lines in between).
_KEY_LINES = ("WORKLOAD :", "Lab scale:", "Created ", "All consumers are ready",
              "Starting warm-up", "Starting benchmark", "Stopping all consumers",
              "Completed backlog", "Start draining", "Aggregated Pub Latency",
              "Writing test result")


def excerpt(stdout: str, periods: int = 2) -> str:
    """The run's milestones plus the first and last ``periods`` periodic lines of each phase,
    for the page (the full log stays in the executed notebook's result files)."""
    lines = stdout.splitlines()
    keep: list[str] = []
    phase_lines: list[str] = []

    def flush():
        if len(phase_lines) <= 2 * periods:
            keep.extend(phase_lines)
        else:
            keep.extend(phase_lines[:periods])
            keep.append(f"... ({len(phase_lines) - 2 * periods} more periods)")
            keep.extend(phase_lines[-periods:])
        phase_lines.clear()

    for line in lines:
        if "Pub rate" in line:
            phase_lines.append(line)
        elif any(k in line for k in _KEY_LINES):
            flush()
            keep.append(line)
    flush()
    return "\n".join(keep)
