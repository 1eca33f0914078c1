"""OMB workload files (``workloads/*.yaml``), read as OpenMessaging Benchmark reads them.

Field names, types and defaults follow OMB's ``io.openmessaging.benchmark.Workload`` class
(upstream benchmark-framework, the version with ``warmupDurationMinutes`` and
``backlogDrainRatio``). YAML files are used unchanged.

Unknown fields: OMB's ObjectMapper is configured with FAIL_ON_UNKNOWN_PROPERTIES=false, so
OMB itself silently ignores a misspelled field (``producerRat: 1000`` runs at the default rate
0). That is how a typo turns into a wrong benchmark, so this runner rejects unknown fields by
default and names them; ``strict=False`` (CLI ``--lenient``) reproduces OMB's behaviour and
only warns.
"""
from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

log = logging.getLogger("tr4947.omb")

#: KeyDistributorType enum constants in OMB.
KEY_DISTRIBUTORS = ("NO_KEY", "KEY_ROUND_ROBIN", "RANDOM_NANO")


class ConfigError(ValueError):
    """A workload or driver file that OMB would not run the way its author meant."""


@dataclass
class Workload:
    name: str | None = None
    #: Number of topics to create in the test.
    topics: int = 0
    #: Number of partitions each topic will contain.
    partitionsPerTopic: int = 0
    keyDistributor: str = "NO_KEY"
    messageSize: int = 0
    useRandomizedPayloads: bool = False
    randomBytesRatio: float = 0.0
    randomizedPayloadPoolSize: int = 0
    payloadFile: str | None = None
    subscriptionsPerTopic: int = 0
    producersPerTopic: int = 0
    consumerPerSubscription: int = 0
    #: Messages per second across all producers. <= 0: OMB searches the maximum sustainable
    #: rate (starts at 10,000 msg/s and adjusts every 3 s).
    producerRate: int = 0
    #: > 0: consumers are paused until this much (GiB) is retained, then drain it.
    consumerBacklogSizeGB: int = 0
    #: Fraction of the backlog that must be drained before the steady phase counts.
    backlogDrainRatio: float = 1.0
    testDurationMinutes: int = 0
    warmupDurationMinutes: int = 1

    # -- derived values ----------------------------------------------------------------
    @property
    def total_producers(self) -> int:
        return self.topics * self.producersPerTopic

    @property
    def total_consumers(self) -> int:
        return self.topics * self.subscriptionsPerTopic * self.consumerPerSubscription

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


_TYPES = {f.name: f.type for f in dataclasses.fields(Workload)}


def _coerce(name: str, value: Any, typ: str) -> Any:
    """Jackson-like scalar coercion: YAML `1000` for a double is fine, `"abc"` for an int is not."""
    if value is None:
        return None
    base = typ.split("|")[0].strip()
    try:
        if base == "int":
            if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                raise TypeError
            return int(value)
        if base == "float":
            if isinstance(value, bool):
                raise TypeError
            return float(value)
        if base == "bool":
            if isinstance(value, bool):
                return value
            if isinstance(value, str) and value.lower() in ("true", "false"):
                return value.lower() == "true"
            raise TypeError
        if base == "str":
            if isinstance(value, (dict, list)):
                raise TypeError
            return str(value)
    except (TypeError, ValueError):
        raise ConfigError(f"workload field '{name}': {value!r} is not a valid {base}") from None
    return value


def load_mapping(data: dict | str | Path, kind: str, known, known_as: str,
                 strict: bool = True, source: str = "") -> tuple[dict, str]:
    """An OMB YAML file (a dict, YAML text or a file path) as a mapping, and the " in <file>"
    that error messages name. Fields OMB does not know are an error (``strict``) or, as OMB
    itself treats them, ignored with a warning."""
    if isinstance(data, Path) or (isinstance(data, str) and "\n" not in data
                                  and data.endswith((".yaml", ".yml"))):
        source = source or str(data)
        data = yaml.safe_load(Path(data).read_text())
    elif isinstance(data, str):
        data = yaml.safe_load(data)
    where = f" in {source}" if source else ""
    if not isinstance(data, dict):
        raise ConfigError(f"{kind}{where} must be a YAML mapping of {known_as}")
    unknown = sorted(k for k in data if k not in known)
    if unknown:
        msg = (f"unknown {kind} field(s){where}: {', '.join(unknown)}. "
               f"Known {known_as}: {', '.join(known)}")
        if strict:
            raise ConfigError(msg + " (OMB itself would silently ignore them; "
                                    "use --lenient / strict=False to do the same)")
        log.warning("%s; ignored, as OMB does", msg)
    return data, where


def parse_workload(data: dict | str | Path, strict: bool = True, source: str = "") -> Workload:
    """A Workload from a dict, YAML text or a file path."""
    data, where = load_mapping(data, "workload", _TYPES, "OMB Workload fields", strict, source)
    values = {k: _coerce(k, v, _TYPES[k]) for k, v in data.items() if k in _TYPES}
    w = Workload(**values)
    validate(w, where)
    return w


def validate(w: Workload, where: str = "") -> None:
    """The checks OMB makes (or fails on later, less clearly)."""
    problems = []
    if w.keyDistributor not in KEY_DISTRIBUTORS:
        # OMB reads unknown enum values as the default (READ_UNKNOWN_ENUM_VALUES_USING_DEFAULT).
        log.warning("keyDistributor %r unknown; OMB falls back to NO_KEY", w.keyDistributor)
        w.keyDistributor = "NO_KEY"
    if w.topics <= 0:
        problems.append("topics must be > 0")
    if w.partitionsPerTopic <= 0:
        problems.append("partitionsPerTopic must be > 0")
    if w.messageSize <= 0:
        problems.append("messageSize must be > 0")
    if w.producersPerTopic < 0 or w.subscriptionsPerTopic < 0 or w.consumerPerSubscription < 0:
        problems.append("producer/subscription/consumer counts must be >= 0")
    if w.useRandomizedPayloads and w.randomizedPayloadPoolSize <= 0:
        problems.append("useRandomizedPayloads needs randomizedPayloadPoolSize > 0")
    if w.useRandomizedPayloads and not 0.0 <= w.randomBytesRatio <= 1.0:
        problems.append("randomBytesRatio must be between 0.0 and 1.0")
    if not 0.0 <= w.backlogDrainRatio <= 1.0:
        problems.append("backlogDrainRatio must be between 0.0 and 1.0")
    if w.consumerBacklogSizeGB > 0 and w.producerRate <= 0:
        # Same rule (and message) as OMB's WorkloadGenerator constructor.
        problems.append("Cannot probe producer sustainable rate when building backlog "
                        "(consumerBacklogSizeGB > 0 needs producerRate > 0)")
    if problems:
        raise ConfigError(f"invalid workload{where}: " + "; ".join(problems))


def workload_file_name(path: str | Path) -> str:
    """The name OMB uses in result file names: the file name without its extension."""
    name = Path(path).name
    return name[: name.rfind(".")] if "." in name else name
