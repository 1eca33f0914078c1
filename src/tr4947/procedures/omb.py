"""OpenMessaging Benchmark on a target's client host: the TR's files and commands, as the TR
runs them.

OMB is installed on the client (``omb_home``, the TR's /opt/benchmark); its workload and
driver files are placed under the names the TR's commands use, the command snippet runs as
printed, and what OMB wrote is read back: the log it printed (time series, milestones, the
benchmark window) and the result JSON it names.

Lab scale travels in the environment (``TR4947_OMB_SCALE``), so the command stays the TR's;
the real OMB on a real target ignores it. A notebook's ``scale`` mapping uses the names of
tr4947.omb.LabScale.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from .. import broker_config
from ..measure import omb_log
from ..omb.runner import LabScale

OMB_HOME = "/opt/benchmark"
_WROTE = re.compile(r"Writing test result into (\S+\.json)")

def scale_env(scale: dict | None) -> dict[str, str]:
    """A notebook's ``scale`` -> the environment the runner reads (tr4947.omb.LabScale: the
    same names); an unknown name or a value out of range is refused before anything runs."""
    return LabScale.env(scale)


def home(t, client: str) -> str:
    return t.host(client).get("omb_home", OMB_HOME)


def with_bootstrap(driver_text: str, bootstrap: str) -> str:
    """A driver file's commonConfig pointed at ``bootstrap`` (the TR's files name the TR's
    brokers; the lab's copies name the lab's)."""
    return re.sub(r"(bootstrap\.servers=)\S+", lambda m: m.group(1) + bootstrap, driver_text)


@dataclass
class Run:
    name: str                       # e.g. "HA pair, sync driver"
    command: object                 # the Target Result of the command snippet
    result: dict | None = None      # OMB's TestResult JSON (None when only planned)
    series: omb_log.Run = field(default_factory=omb_log.Run)
    result_path: str | None = None
    target_rate: float = 0.0        # the publish rate asked for (workload x lab scale), msg/s

    @property
    def planned(self) -> bool:
        return bool(getattr(self.command, "planned", False))

    def window(self) -> omb_log.BenchmarkWindow:
        return omb_log.benchmark_window(self.command.stdout)

    def summary(self) -> dict:
        """The benchmark phase(s): mean and peak total MB/s (producer plus consumer, the TR's
        measure), mean publish/consume MB/s, latency."""
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

    def rates(self) -> dict[str, float]:
        """Mean publish and consume rates (msg/s) and publish latency (ms) over the benchmark
        phase(s): what the run achieved, as OMB's periodic lines report it."""
        bench = [s for s in self.series.samples if s.phase != "warmup"]
        if not bench:
            return {}
        n = len(bench)
        return {"publish": sum(s.publish_rate for s in bench) / n,
                "consume": sum(s.consume_rate for s in bench) / n,
                "latency_avg_ms": sum(s.latency_avg for s in bench) / n}

    def load(self, target_rate: float | None = None) -> dict:
        """This run as a load record's run (Recorder.load): the publish rate it was asked
        for (default: the workload's producerRate times the lab scale) and the one it
        achieved, the consume rate and latency beside them."""
        r = self.rates()
        target_rate = self.target_rate if target_rate is None else target_rate
        try:
            window = round(self.window().seconds, 1)
        except (ValueError, AttributeError):
            window = None
        return {"name": self.name, "unit": "msg/s", "target": round(target_rate, 1),
                "window_s": window,
                "achieved": round(r.get("publish", 0.0), 1),
                "consume_achieved": round(r.get("consume", 0.0), 1),
                "publish_latency_avg_ms": round(r.get("latency_avg_ms", 0.0), 1)}


def asked_rate(files: dict[str, str], scale: dict | None) -> float:
    """The publish rate a run is asked for: its workload file's producerRate, times the lab
    scale's ``rate``."""
    import yaml
    text = next((v for k, v in files.items() if k.startswith("workloads/")), None)
    try:
        rate = float((yaml.safe_load(text) or {}).get("producerRate") or 0) if text else 0.0
    except (yaml.YAMLError, AttributeError, TypeError, ValueError):
        rate = 0.0              # OMB itself says what is wrong with the file, on the client
    return rate * ((scale or {}).get("rate") or 1.0)


def place(t, client: str, files: dict[str, str]):
    """Files (OMB-home-relative name -> text) placed in OMB's directory on the client."""
    base = home(t, client)
    return [t.put(client, f"{base}/{name}", text) for name, text in files.items()]


def run(t, client: str, name: str, command: str, files: dict[str, str],
        scale: dict | None = None, timeout: float = 3600, needs=None) -> Run:
    """Place the files, run the command snippet, read back OMB's log and result."""
    placed = place(t, client, files)
    r = t.run_snippet(command, client, env=scale_env(scale), timeout=timeout,
                      needs=[*placed, *([needs] if needs else [])])
    out = Run(name, r, target_rate=asked_rate(files, scale))
    if r.planned:
        return out
    if not r.ok:
        raise RuntimeError(f"{name}: bin/benchmark failed (exit {r.exit_code}):\n"
                           + r.output[-3000:])
    out.series = omb_log.parse(r.stdout)
    wrote = _WROTE.findall(r.stdout)
    if wrote:
        path = wrote[-1]
        if not path.startswith("/"):
            path = str(PurePosixPath(home(t, client)) / path)
        out.result_path = path
        out.result = json.loads(t.read_file(client, path).stdout)
    return out


def delete_test_topics(t, client: str, bootstrap: str, prefix: str = "test-topic") -> None:
    """Remove the runs' topics (OMB's ``reset: true`` does this before a run; the TR's drivers
    do not set it), so the next run starts on empty volumes."""
    t.run(f"bin/kafka-topics.sh --bootstrap-server {bootstrap} --delete --topic '{prefix}.*' "
          "--if-exists", client, check=True)


def driver_bootstrap(driver_text: str) -> str:
    common = re.search(r"commonConfig:\s*\|\s*\n((?:[ \t]+.*\n?)*)", driver_text)
    return broker_config.keys(common.group(1) if common else driver_text)["bootstrap.servers"]


# --- charts (specs for rb.chart; the site draws them from these numbers) -----------------------
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
    for the page (the full log stays in the executed notebook)."""
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

    for line in stdout.splitlines():
        if "Pub rate" in line:
            phase_lines.append(line)
        elif any(k in line for k in _KEY_LINES):
            flush()
            keep.append(line)
    flush()
    return "\n".join(keep)


THROUGHPUT_BOUND = ("The workload's producerRate is a ceiling far above what the cluster "
                    "carries, as in the TR: the runs go as fast as the cluster accepts, so "
                    "they do not hold their rate and their latency is queueing.")


def throughput_verdict(rec, proc_id: str, claim: str, tr: str, lab, held: bool,
                       what: str) -> None:
    """A TR throughput figure measured on AWS or an A900: never reproducible on one 2-core
    machine; the lab's own figure stands beside it, with why."""
    # A run that did not hold its rate yields no verdict (not measured), whatever the scale.
    rec.verdict(proc_id, claim, "not-reproducible-at-lab-scale" if held else "not-measured",
                tr=tr, lab=lab, load_held=held,
                evidence=rec.evidence(real=["kafka", "omb"], also=["nfs-layer"]),
                why=f"{what} The lab runs the same workload and drivers on one 2-core machine "
                    "with local disks behind its NFS layer: it shows that they run and how far "
                    "its own runs spread, not what the TR's hardware carries."
                    + ("" if held else " " + THROUGHPUT_BOUND),
                action="Run this chapter's benchmark on your own cluster (the target "
                       "parameter) and compare with the TR's figure there.")


def held(loads: list[dict], threshold: float = 0.95) -> bool:
    return bool(loads) and all(r["achieved"] >= threshold * r["target"] for r in loads)


@dataclass
class Calibration:
    """What a calibration tried and found: the highest rate tried that every run held."""
    held_rate: float | None
    rows: list[list[str]]            # asked, run, achieved, latency, held
    loads: list[dict]

    def table(self, rec, proc_id: str, title: str, note: str, unit: str = "msg/s") -> None:
        """The calibration's table and load record; ``unit``: what its rates count (OMB's
        messages, the drills' records)."""
        rec.load(proc_id, f"{title}: publish rate asked and achieved",
                 [{**ld, "unit": unit} for ld in self.loads], calibration=True)
        rec.table(proc_id, title, [f"Asked ({unit})", "Run", f"Achieved ({unit})",
                                   "Publish latency, average (ms)", "Held"], self.rows,
                  note=note, key=[f"Asked ({unit})", "Run", "Held"])


def calibrate(run_at, start: float, floor: float, step: float, latency_ms: float,
              threshold: float = 0.95) -> Calibration | None:
    """The rate a target holds for a workload: ``run_at(rate)`` runs it (one Run per cluster
    or client, at once) at ``rate`` msg/s, from ``start`` down by ``step`` until every run
    achieves ``threshold`` of the rate with an average publish latency <= ``latency_ms``, or
    the rate falls below ``floor``. None when the runs were only planned."""
    rate, rows, loads = start, [], []
    while rate >= floor:
        runs = run_at(rate)
        if any(r.planned for r in runs):
            return None
        ok = True
        for r in runs:
            ld = {**r.load(rate), "name": f"{r.name}"}
            good = (ld["achieved"] >= threshold * rate
                    and ld["publish_latency_avg_ms"] <= latency_ms)
            ok = ok and good
            loads.append(ld)
            rows.append([f"{rate:,.0f}", r.name, f"{ld['achieved']:,.0f}",
                         f"{ld['publish_latency_avg_ms']:,.0f}", "yes" if good else "no"])
            print(f"calibration {rate:,.0f} msg/s, {r.name}: achieved {ld['achieved']:,.0f}, "
                  f"latency {ld['publish_latency_avg_ms']:,.0f} ms: "
                  f"{'held' if good else 'not held'}")
        if ok:
            return Calibration(rate, rows, loads)
        rate *= step
    return Calibration(None, rows, loads)
