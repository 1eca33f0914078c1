"""OMB's result JSON (``TestResult``) and the Python-side Result of a run.

The JSON file holds exactly the fields of upstream OMB's ``TestResult`` (openmessaging/
benchmark, benchmark-framework), in its declaration order and types, written the way
Jackson's default pretty printer writes them. Nothing else goes into it: OMB's own
``ResultsToCsv`` reads every ``*.json`` of a directory with a plain ObjectMapper, which fails
on unknown fields, so lab provenance (scale overrides, phases, per-sample throughput, client
library, notes) goes into a sidecar file ``<result>.lab.yaml`` beside it.
"""
from __future__ import annotations

import datetime as _dt
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from .stats import LatencySummary, quantiles

#: Statistic suffixes of TestResult's latency fields, and the LatencySummary attribute of each.
_SUFFIX = ["Avg", "50pct", "75pct", "95pct", "99pct", "999pct", "9999pct", "Max"]
_ATTR = ["avg", "p50", "p75", "p95", "p99", "p999", "p9999", "max"]

#: TestResult's per-period list fields, in declaration order.
PERIOD_FIELDS = (["publishRate", "publishErrorRate", "consumeRate", "backlog"]
                 + [f"publishLatency{s}" for s in _SUFFIX]
                 + [f"publishDelayLatency{s}" for s in _SUFFIX])
E2E_FIELDS = [f"endToEndLatency{s}" for s in _SUFFIX]

#: Every TestResult field, in declaration order (the JSON's key order).
FIELDS = (["workload", "driver", "messageSize", "topics", "partitions", "producersPerTopic",
           "consumersPerTopic"] + PERIOD_FIELDS
          + [f"aggregatedPublishLatency{s}" for s in _SUFFIX]
          + [f"aggregatedPublishDelayLatency{s}" for s in _SUFFIX]
          + ["aggregatedPublishLatencyQuantiles", "aggregatedPublishDelayLatencyQuantiles"]
          + E2E_FIELDS + ["aggregatedEndToEndLatencyQuantiles"]
          + [f"aggregatedEndToEndLatency{s}" for s in _SUFFIX])

#: Fields OMB declares as long (publish delay is whole microseconds; backlog a count).
LONG_FIELDS = {f"publishDelayLatency{s}" for s in _SUFFIX[1:]} | {
    f"aggregatedPublishDelayLatency{s}" for s in _SUFFIX[1:]} | {"backlog"}


def new_test_result(workload, driver_name: str) -> dict:
    """An empty TestResult with the header filled as WorkloadGenerator fills it (from the
    workload that actually runs)."""
    r: dict = {
        "workload": workload.name,
        "driver": driver_name,
        "messageSize": workload.messageSize,
        "topics": workload.topics,
        "partitions": workload.partitionsPerTopic,
        "producersPerTopic": workload.producersPerTopic,
        # OMB writes consumerPerSubscription here, under this name.
        "consumersPerTopic": workload.consumerPerSubscription,
    }
    for f in FIELDS[7:]:
        if f.endswith("Quantiles"):
            r[f] = {}
        elif f.startswith("aggregated"):
            r[f] = 0 if f in LONG_FIELDS else 0.0
        else:
            r[f] = []
    return r


def add_period(r: dict, publish_rate: float, error_rate: float, consume_rate: float,
               backlog: int, pub: LatencySummary, delay: LatencySummary,
               e2e: LatencySummary) -> None:
    """Append one period, with OMB's units: publish and e2e latency in ms, delay in us."""
    r["publishRate"].append(float(publish_rate))
    r["publishErrorRate"].append(float(error_rate))
    r["consumeRate"].append(float(consume_rate))
    r["backlog"].append(int(backlog))
    for s, a in zip(_SUFFIX, _ATTR):
        r[f"publishLatency{s}"].append(getattr(pub, a) / 1000.0)
        v = getattr(delay, a)
        r[f"publishDelayLatency{s}"].append(float(v) if s == "Avg" else int(v))
        r[f"endToEndLatency{s}"].append(getattr(e2e, a) / 1000.0)


def set_aggregated(r: dict, pub_h, delay_h, e2e_h) -> None:
    pub, delay, e2e = (LatencySummary.of(h) for h in (pub_h, delay_h, e2e_h))
    for s, a in zip(_SUFFIX, _ATTR):
        r[f"aggregatedPublishLatency{s}"] = getattr(pub, a) / 1000.0
        v = getattr(delay, a)
        r[f"aggregatedPublishDelayLatency{s}"] = float(v) if s == "Avg" else int(v)
        r[f"aggregatedEndToEndLatency{s}"] = getattr(e2e, a) / 1000.0
    r["aggregatedPublishLatencyQuantiles"] = quantiles(pub_h, 1000.0)
    r["aggregatedPublishDelayLatencyQuantiles"] = {k: int(v) for k, v in quantiles(delay_h).items()}
    r["aggregatedEndToEndLatencyQuantiles"] = quantiles(e2e_h, 1000.0)


def default_file_name(workload_name: str, driver_name: str, when: _dt.datetime | None = None) -> str:
    """OMB: String.format("%s-%s-%s.json", workloadName, driver name, yyyy-MM-dd-HH-mm-ss)."""
    when = when or _dt.datetime.now()
    return f"{workload_name}-{driver_name}-{when.strftime('%Y-%m-%d-%H-%M-%S')}.json"


def sidecar_path(result_path: str | Path) -> Path:
    """Where the lab provenance of a result file goes (not *.json: see the module doc)."""
    p = Path(result_path)
    return p.with_name(p.stem + ".lab.yaml")


# --- Jackson-style output ----------------------------------------------------------------
def java_double(x: float) -> str:
    """Double.toString: plain between 1e-3 and 1e7, else d.dddE[-]n; always a decimal point."""
    x = float(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0.0" if math.copysign(1, x) < 0 else "0.0"
    if 1e-3 <= abs(x) < 1e7:
        s = repr(x)
        if "e" in s:                      # repr switches to exponents at 1e16 / 1e-4 only
            s = f"{x:.17f}".rstrip("0")
        return s if "." in s else s + ".0"
    mant, exp = f"{x:.16e}".split("e")
    # Shortest mantissa that round-trips, as repr would choose it.
    for digits in range(1, 18):
        m = f"{x:.{digits - 1}e}".split("e")[0]
        if float(f"{m}e{exp}") == x:
            mant = m
            break
    if "." not in mant:
        mant += ".0"
    return f"{mant}E{int(exp)}"


def _scalar(v) -> str:
    if isinstance(v, bool) or v is None:
        return json.dumps(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return java_double(v)
    return json.dumps(v, ensure_ascii=False)


def to_json(r: dict) -> str:
    """The TestResult as Jackson's DefaultPrettyPrinter writes it: ``"key" : value``, arrays on
    one line (``[ 1.0, 2.0 ]``), Map<Double,..> keys as Double.toString, sorted (TreeMap)."""
    unknown = [k for k in r if k not in FIELDS]
    if unknown:
        raise ValueError(f"not TestResult fields: {unknown} (lab data goes to the sidecar)")
    lines = []
    for k in FIELDS:
        v = r[k]
        if isinstance(v, dict):
            if not v:
                body = "{ }"
            else:
                items = [f'    "{java_double(q)}" : {_scalar(x)}' for q, x in sorted(v.items())]
                body = "{\n" + ",\n".join(items) + "\n  }"
        elif isinstance(v, list):
            body = "[ " + ", ".join(_scalar(x) for x in v) + " ]" if v else "[ ]"
        else:
            body = _scalar(v)
        lines.append(f'  "{k}" : {body}')
    return "{\n" + ",\n".join(lines) + "\n}"


def write(r: dict, path: str | Path) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(to_json(r))
    return p


def write_sidecar(lab: dict, result_path: str | Path) -> Path:
    p = sidecar_path(result_path)
    p.write_text("# Lab provenance of " + Path(result_path).name + " (tr4947.omb runner; not "
                 "part of OMB's result)\n" + yaml.safe_dump(lab, sort_keys=False, width=100))
    return p


def read_sidecar(result_path: str | Path) -> dict:
    return yaml.safe_load(sidecar_path(result_path).read_text())


@dataclass
class Result:
    """What :func:`tr4947.omb.run` returns."""
    #: The OMB TestResult (same content as the JSON file).
    test_result: dict
    #: One dict per reporting period of the whole run (warm-up included), for charts:
    #: t (s since start), phase, publishRate, publishMBs, consumeRate, consumeMBs, backlog,
    #: publishLatency50/99 (ms), endToEndLatency50/99 (ms), targetRate.
    samples: list[dict] = field(default_factory=list)
    #: OMB-style log lines, in order.
    log: list[str] = field(default_factory=list)
    #: Lab provenance (the sidecar's content): labScale, labRun (phases, totals, client...).
    lab: dict = field(default_factory=dict)
    #: Where the JSON was written (None if not written).
    path: Path | None = None

    @property
    def lab_run(self) -> dict:
        return self.lab.get("labRun", {})

    @property
    def lab_scale(self) -> dict:
        return self.lab.get("labScale", {})

    @property
    def phases(self) -> list[dict]:
        return self.lab_run.get("phases", [])

    @property
    def totals(self) -> dict:
        return self.lab_run.get("totals", {})

    def __getitem__(self, key):
        return self.test_result[key]

    def mean(self, key: str) -> float:
        v = self.test_result[key]
        return sum(v) / len(v) if v else 0.0

    @classmethod
    def load(cls, path: str | Path) -> "Result":
        """A result file (and its sidecar, if there is one) read back."""
        p = Path(path)
        tr = json.loads(p.read_text())
        lab = read_sidecar(p) if sidecar_path(p).exists() else {}
        return cls(tr, lab.get("samples", []), [], lab, p)
