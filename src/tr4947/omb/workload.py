"""OMB workload files (``workloads/*.yaml``), read as OpenMessaging Benchmark reads them.

Field names, types and defaults follow OMB's ``io.openmessaging.benchmark.Workload`` class
(upstream benchmark-framework, the version with ``warmupDurationMinutes`` and
``backlogDrainRatio``). YAML files are used unchanged.

Bad input is refused before anything runs, with one :class:`ConfigError` that names the file,
the line, the field and what is allowed (``workloads/x.yaml, line 7: testDurationMinutes: -5 is
not allowed (must be >= 1; ...)``). Lines come from PyYAML's node marks (the file is composed,
then constructed, by one SafeLoader). The ranges and where they come from are in :data:`FIELDS`.

Unknown fields: OMB's ObjectMapper is configured with FAIL_ON_UNKNOWN_PROPERTIES=false, so
OMB itself silently ignores a misspelled field (``producerRat: 1000`` runs at the default rate
0). That is how a typo turns into a wrong benchmark, so this runner rejects unknown fields by
default and names them; ``strict=False`` (CLI ``--lenient``) reproduces OMB's behaviour and
only warns. The same goes for a key given twice (YAML keeps the last one silently) and for an
unknown ``keyDistributor`` (OMB reads it as NO_KEY: READ_UNKNOWN_ENUM_VALUES_USING_DEFAULT_VALUE).
"""
from __future__ import annotations

import dataclasses
import logging
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

log = logging.getLogger("tr4947.omb")

#: KeyDistributorType enum constants in OMB.
KEY_DISTRIBUTORS = ("NO_KEY", "KEY_ROUND_ROBIN", "RANDOM_NANO")

# Java's int and long: OMB's Workload fields are ints (consumerBacklogSizeGB a long); Jackson
# refuses a YAML number outside them ("Numeric value ... out of range of int").
INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
GiB = 1024**3
#: Largest messageSize: librdkafka, this runner's Kafka client, refuses message.max.bytes above
#: 1000000000 ("outside allowed range 1000..1000000000"), so no larger message can be sent.
#: (Kafka's size fields are int32 and its default limit is ~1 MiB: broker message.max.bytes
#: 1048588, producer max.request.size 1048576.)
MAX_MESSAGE_SIZE = 1_000_000_000
#: OMB workload and driver files are a few hundred bytes; anything this large is not one.
MAX_FILE_BYTES = 1 << 20


class ConfigError(ValueError):
    """A workload, driver or lab-scale input that OMB would not run the way its author meant.

    ``source``/``line``/``field`` locate the (first) problem when known."""

    def __init__(self, message: str, *, source: str | None = None, line: int | None = None,
                 field: str | None = None):
        super().__init__(message)
        self.source, self.line, self.field = source, line, field


def show(v: Any) -> str:
    """A value as a YAML author would recognise it, short enough for a one-line message."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, dict):
        return "a mapping"
    if isinstance(v, (list, tuple)):
        return "a list"
    s = repr(v)
    return s if len(s) <= 100 else s[:97] + "..."


# --- loading: YAML with line numbers ----------------------------------------------------
@dataclass
class Doc:
    """A loaded OMB YAML mapping and where each of its keys is."""
    kind: str                                   # "workload" / "driver"
    data: dict
    source: str = ""                            # the file ("" for a dict or YAML text)
    text: bool = False                          # came from YAML text (lines known, no file)
    lines: dict = field(default_factory=dict)   # key -> 1-based line of the key
    nodes: dict = field(default_factory=dict)   # key -> PyYAML value node

    def where(self, line: int | None = None) -> str:
        place = self.source or (f"{self.kind} YAML" if self.text else self.kind)
        return f"{place}, line {line}" if line else place

    def error(self, msg: str, key: str | None = None, line: int | None = None) -> ConfigError:
        line = line or self.lines.get(key)
        return ConfigError(f"{self.where(line)}: {msg}", source=self.source or None, line=line,
                           field=key)


class Problems:
    """Every problem of one file, raised as ONE ConfigError (first by line, the rest after)."""

    def __init__(self, doc: Doc):
        self.doc = doc
        self.items: list[tuple[int | None, str | None, str]] = []

    def add(self, key: str | None, msg: str, line: int | None = None) -> None:
        self.items.append((line or self.doc.lines.get(key), key, msg))

    def __bool__(self) -> bool:
        return bool(self.items)

    def raise_any(self) -> None:
        if not self.items:
            return
        items = sorted(self.items, key=lambda p: (p[0] is None, p[0] or 0))
        line, key, msg = items[0]
        text = f"{self.doc.where(line)}: {msg}"
        if len(items) > 1:
            text += "; also " + "; ".join(f"line {ln}: {m}" if ln else m for ln, _, m in items[1:])
        raise ConfigError(text, source=self.doc.source or None, line=line, field=key)


def _is_path(data: Any) -> bool:
    """A Path, or a one-line string that names a file (or looks like a YAML file name)."""
    if isinstance(data, Path):
        return True
    if not isinstance(data, str) or "\n" in data:
        return False
    try:
        return data.endswith((".yaml", ".yml")) or Path(data).is_file()
    except (OSError, ValueError):      # e.g. a name too long to be a path: YAML text
        return False


def _read(path: Path, kind: str) -> str:
    """The file's text; a missing, unreadable, huge or binary file is a ConfigError."""
    try:
        if path.is_dir():
            raise ConfigError(f"{kind} file {path} is a directory, not a YAML file",
                              source=str(path))
        with open(path, "rb") as f:
            raw = f.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise ConfigError(f"{kind} file {path} not found", source=str(path)) from None
    except OSError as e:
        raise ConfigError(f"{kind} file {path} cannot be read: {e.strerror or e}",
                          source=str(path)) from None
    if len(raw) > MAX_FILE_BYTES:
        raise ConfigError(f"{path}: more than {MAX_FILE_BYTES} bytes, so not an OMB {kind} file "
                          f"(those are a few hundred bytes of YAML)", source=str(path))
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw[:e.start].count(b"\n") + 1
        raise ConfigError(f"{path}, line {line}: not UTF-8 text (byte 0x{raw[e.start]:02x}); "
                          f"an OMB {kind} file is YAML text", source=str(path), line=line) from None


def _yaml_error(e: yaml.YAMLError, place: str, text: str, source: str | None) -> ConfigError:
    """PyYAML's error as one line naming the file (not "<unicode string>") and the line."""
    if isinstance(e, yaml.reader.ReaderError):
        line = text[:e.position].count("\n") + 1
        return ConfigError(f"{place}, line {line}: character #x{e.character:04x} is not allowed "
                           f"in YAML (control characters are refused)", source=source, line=line)
    if isinstance(e, yaml.constructor.ConstructorError) and e.problem_mark is not None:
        line = e.problem_mark.line + 1
        hint = ("OMB files hold plain values: numbers, text, true/false; YAML tags are refused"
                if "tag" in (e.problem or "") else "a key must be a plain field name")
        return ConfigError(f"{place}, line {line}: {e.problem} ({hint})", source=source,
                           line=line)
    if isinstance(e, yaml.MarkedYAMLError) and e.problem_mark is not None:
        line = e.problem_mark.line + 1
        ctx = ""
        if e.context:
            ctx = f" ({e.context}"
            if e.context_mark is not None and e.context_mark.line + 1 != line:
                ctx += f" on line {e.context_mark.line + 1}"
            ctx += ")"
        return ConfigError(f"{place}, line {line}, column {e.problem_mark.column + 1}: "
                           f"YAML syntax error: {e.problem}{ctx}", source=source, line=line)
    return ConfigError(f"{place}: YAML error: {' '.join(str(e).split())}", source=source)


_MERGE_TAG = "tag:yaml.org,2002:merge"
_STR_TAG = "tag:yaml.org,2002:str"


def load_mapping(data: dict | str | Path, kind: str, known, known_as: str,
                 strict: bool = True, source: str = "") -> Doc:
    """An OMB YAML file (a dict, YAML text or a file path) as a :class:`Doc`.

    Refused here: unreadable, empty, binary or malformed files, YAML that is not a mapping,
    keys given twice and fields OMB does not know (``strict``; otherwise warned about and
    ignored, as OMB does). All of them name the file and, where known, the line."""
    if isinstance(data, dict):
        doc = Doc(kind, dict(data), source=source)
    else:
        text = False
        if _is_path(data):
            source = source or str(data)
            body = _read(Path(data), kind)
        elif isinstance(data, str):
            body, text = data, True
        else:
            raise ConfigError(f"{kind}: expected a file path, YAML text or a mapping, "
                              f"got {type(data).__name__}")
        place = source or f"{kind} YAML"
        loader = None
        try:
            loader = yaml.SafeLoader(body)      # checks for unprintable characters already
            node = loader.get_single_node()
            if node is None:
                raise ConfigError(f"{kind} file {source} is empty" if source else
                                  f"{kind} YAML is empty", source=source or None)
            if not isinstance(node, yaml.MappingNode):
                value = loader.construct_document(node)
                line = node.start_mark.line + 1
                raise ConfigError(f"{place}, line {line}: a {kind} file must be a YAML mapping "
                                  f"of {known_as} (name: value lines), not {show(value)}",
                                  source=source or None, line=line)
            dups = _duplicates(node)
            data = loader.construct_document(node)
            lines, nodes = {}, {}
            for k, v in node.value:     # construct_document has resolved merge keys (<<) here
                if isinstance(k, yaml.ScalarNode):
                    key = k.value if k.tag == _STR_TAG else loader.construct_object(k)
                    lines.setdefault(key, k.start_mark.line + 1)
                    nodes.setdefault(key, v)
        except yaml.YAMLError as e:
            raise _yaml_error(e, place, body, source or None) from None
        except RecursionError:
            raise ConfigError(f"{place}: YAML nested too deeply to be an OMB {kind} file",
                              source=source or None) from None
        finally:
            if loader is not None:
                loader.dispose()
        doc = Doc(kind, data, source=source, text=text, lines=lines, nodes=nodes)
        for key, lines in dups.items():
            doc.lines[key] = lines[-1]     # the value that counts is the last one
            msg = (f"{key} is given {len(lines)} times (lines "
                   f"{', '.join(map(str, lines))}); YAML keeps only the last one")
            if strict:
                raise doc.error(msg + " (remove the others; --lenient / strict=False keeps "
                                      "the last, as OMB does)", key, lines[1])
            log.warning("%s: %s", doc.where(lines[1]), msg)

    unknown = [k for k in doc.data if not isinstance(k, str) or k not in known]
    if unknown:
        named = ", ".join((k if isinstance(k, str) else show(k))
                          + (f" (line {doc.lines[k]})" if k in doc.lines else "")
                          for k in unknown)
        msg = f"unknown {kind} field(s) {named}. Known {known_as}: {', '.join(known)}"
        first = next((doc.lines[k] for k in unknown if k in doc.lines), None)
        if strict:
            raise doc.error(msg + " (OMB itself would silently ignore them; use --lenient / "
                                  "strict=False to do the same)", line=first)
        log.warning("%s: %s; ignored, as OMB does", doc.where(first), msg)
    return doc


def _duplicates(node: yaml.MappingNode) -> dict[str, list[int]]:
    seen: dict[str, list[int]] = {}
    for k, _ in node.value:
        if isinstance(k, yaml.ScalarNode) and k.tag != _MERGE_TAG:
            seen.setdefault(k.value, []).append(k.start_mark.line + 1)
    return {k: v for k, v in seen.items() if len(v) > 1}


# --- field types and ranges ---------------------------------------------------------------
@dataclass(frozen=True)
class Field:
    """A field's Java type and, for numbers, its allowed range (``allowed`` in words)."""
    type: str                    # int (Java int), long, float (double), bool, str
    lo: float | None = None
    hi: float | None = None
    allowed: str = ""
    why: str = ""


def coerce(p: Problems, name: str, value: Any, f: Field) -> Any:
    """Jackson-like scalar coercion (``"5"`` and ``5.0`` are fine for an int, ``"abc"``, 1.5,
    true or a list are not); a problem is recorded and None returned when it fails."""
    if isinstance(value, (dict, list)):
        p.add(name, f"{name}: {show(value)} is not allowed here (must be a single value)")
        return None
    if value is None:
        p.add(name, f"{name}: has no value (null); give one"
                    + (f" (must be {f.allowed})" if f.allowed else "")
                    + " or remove the line for OMB's default")
        return None
    try:
        if f.type in ("int", "long"):
            if isinstance(value, bool):
                raise TypeError
            if isinstance(value, float):
                if not value.is_integer():
                    raise TypeError
                value = int(value)
            v = int(str(value).strip()) if isinstance(value, str) else int(value)
            return v
        if f.type == "float":
            if isinstance(value, bool):
                raise TypeError
            v = float(value)
            if not math.isfinite(v):
                p.add(name, f"{name}: {show(value)} is not allowed (must be a finite number: "
                            f"{f.allowed})")
                return None
            return v
        if f.type == "bool":
            if isinstance(value, bool):
                return value
            if isinstance(value, str) and value.strip().lower() in ("true", "false"):
                return value.strip().lower() == "true"
            raise TypeError
        return str(value)
    except (TypeError, ValueError):
        kind = {"int": "a whole number", "long": "a whole number", "float": "a number",
                "bool": "true or false"}.get(f.type, f.type)
        p.add(name, f"{name}: {show(value)} is not a valid {f.type} (must be {kind}"
                    + (f", {f.allowed}" if f.allowed and f.type != "bool" else "") + ")")
        return None


def check_range(p: Problems, name: str, v: Any, f: Field, given: bool, default: Any) -> None:
    if f.lo is None and f.hi is None or v is None:
        return
    if f.hi is not None and v > f.hi:
        java = {INT32_MAX: "the largest Java int, OMB's type for this field",
                INT64_MAX // GiB: "more would overflow OMB's Java long byte count"}.get(f.hi)
        p.add(name, f"{name}: {show(v)} is not allowed (must be <= {f.hi}; {java})" if java else
              f"{name}: {show(v)} is not allowed (must be {f.allowed}; {f.why})")
        return
    if f.lo is None or v >= f.lo:
        return
    why = f"; {f.why}" if f.why else ""
    if given:
        p.add(name, f"{name}: {show(v)} is not allowed (must be {f.allowed}{why})")
    else:
        p.add(name, f"{name}: missing, and OMB's default {show(default)} is not allowed "
                    f"(must be {f.allowed}{why})")


# --- the workload -------------------------------------------------------------------------
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
    #: Messages per second across all producers. 0: OMB searches the maximum sustainable
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


#: Types after OMB's Workload.java; ranges from what OMB (WorkloadGenerator) and Kafka do with
#: the value. OMB itself checks none of them except backlog-without-rate; these are the values
#: with which it would crash, hang or measure nothing.
FIELDS: dict[str, Field] = {
    "name": Field("str"),
    "topics": Field("int", 1, INT32_MAX, ">= 1", "OMB creates this many topics; 0 runs nothing"),
    "partitionsPerTopic": Field("int", 1, INT32_MAX, ">= 1",
                                "a Kafka topic has at least one partition"),
    "keyDistributor": Field("str", allowed=" or ".join(KEY_DISTRIBUTORS)),
    "messageSize": Field("int", 1, MAX_MESSAGE_SIZE, f"between 1 and {MAX_MESSAGE_SIZE} bytes",
                         "librdkafka, the runner's Kafka client, sends at most "
                         "message.max.bytes=1000000000; Kafka's default limit is ~1 MiB"),
    "useRandomizedPayloads": Field("bool"),
    # OMB: (int)(messageSize * randomBytesRatio) random bytes, the rest zeros; outside [0, 1]
    # one of the two arrays gets a negative size (NegativeArraySizeException).
    "randomBytesRatio": Field("float", 0.0, 1.0, "between 0.0 and 1.0",
                              "the random share of each message"),
    "randomizedPayloadPoolSize": Field("int", 0, INT32_MAX, ">= 0"),
    "payloadFile": Field("str"),
    "subscriptionsPerTopic": Field("int", 0, INT32_MAX, ">= 0"),
    # No producer: OMB's readiness probe (one message per subscription) times out, or, with
    # no subscription, every rate is 0; this runner divides the rate among the producers.
    "producersPerTopic": Field("int", 1, INT32_MAX, ">= 1",
                               "with no producer nothing is sent and nothing measured"),
    "consumerPerSubscription": Field("int", 0, INT32_MAX, ">= 0"),
    # OMB: producerRate > 0 is the target; otherwise it searches the maximum sustainable rate.
    "producerRate": Field("int", 0, INT32_MAX, ">= 0",
                          "messages/s; 0 = OMB searches the maximum sustainable rate"),
    # OMB: consumerBacklogSizeGB * 1024 * 1024 * 1024 in a Java long.
    "consumerBacklogSizeGB": Field("long", 0, INT64_MAX // GiB, f"between 0 and {INT64_MAX // GiB}",
                                   "GiB; 0 = no backlog; OMB computes the bytes in a Java long"),
    # Workload.java: "between 0.0 and 1.0, where 1.0 indicates that the backlog should be fully
    # drained, and 0.0 indicates a best effort".
    "backlogDrainRatio": Field("float", 0.0, 1.0, "between 0.0 and 1.0",
                               "1.0 = drain the whole backlog, 0.0 = best effort"),
    # WorkloadGenerator.printAndCollectStats: testDurations > 0 ? start + duration :
    # Long.MAX_VALUE, so 0 (OMB's default when the field is missing) runs until killed.
    "testDurationMinutes": Field("int", 1, INT32_MAX, ">= 1",
                                 "OMB runs a test of 0 minutes until it is killed; for a "
                                 "shorter lab run use --duration-s"),
    # WorkloadGenerator: warm-up only if warmupDurationMinutes > 0.
    "warmupDurationMinutes": Field("int", 0, INT32_MAX, ">= 0", "0 = no warm-up"),
}
_DEFAULTS = {f.name: f.default for f in dataclasses.fields(Workload)}
assert set(FIELDS) == set(_DEFAULTS)


def parse_workload(data: dict | str | Path, strict: bool = True, source: str = "") -> Workload:
    """A Workload from a dict, YAML text or a file path; a ConfigError if OMB would not run it
    as meant (see the module doc)."""
    doc = load_mapping(data, "workload", FIELDS, "OMB Workload fields", strict, source)
    p = Problems(doc)
    values, given = {}, [k for k in doc.data if k in FIELDS]
    for k in given:
        c = coerce(p, k, doc.data[k], FIELDS[k])
        if c is not None:
            values[k] = c
    w = Workload(**values)
    _check(w, doc, p, strict, set(given))
    p.raise_any()
    return w


def validate(w: Workload, strict: bool = True, source: str = "") -> None:
    """The checks of :func:`parse_workload` for a Workload built in code."""
    doc = Doc("workload", w.to_dict(), source=source)
    p = Problems(doc)
    for k, f in FIELDS.items():
        v = getattr(w, k)
        if v is not None and f.type in ("int", "long", "float"):
            c = coerce(p, k, v, f)
            setattr(w, k, _DEFAULTS[k] if c is None else c)
    _check(w, doc, p, strict, given=set(FIELDS))
    p.raise_any()


def _check(w: Workload, doc: Doc, p: Problems, strict: bool, given: set) -> None:
    bad = {k for _, k, _ in p.items}           # type errors: no range check on those
    for k, f in FIELDS.items():
        if k not in bad:
            check_range(p, k, getattr(w, k), f, k in given, _DEFAULTS[k])
    if w.keyDistributor not in KEY_DISTRIBUTORS:
        msg = (f"keyDistributor: {show(w.keyDistributor)} is not one of OMB's "
               f"{', '.join(KEY_DISTRIBUTORS)}")
        if strict:
            p.add("keyDistributor", msg + " (OMB would silently use NO_KEY; --lenient / "
                                          "strict=False does the same)")
        else:
            log.warning("%s: %s; OMB falls back to NO_KEY", doc.where(doc.lines.get("keyDistributor")), msg)
            w.keyDistributor = "NO_KEY"
    if p:
        return      # the combinations below only make sense for values in range
    if w.useRandomizedPayloads and w.randomizedPayloadPoolSize < 1:
        p.add("randomizedPayloadPoolSize",
              f"randomizedPayloadPoolSize: {w.randomizedPayloadPoolSize} is not allowed with "
              f"useRandomizedPayloads: true (must be >= 1: the number of distinct payloads)")
    if w.consumerBacklogSizeGB > 0 and w.producerRate == 0:
        # Same rule (and words) as OMB's WorkloadGenerator constructor.
        p.add("producerRate", "Cannot probe producer sustainable rate when building backlog "
                              "(consumerBacklogSizeGB > 0 needs producerRate > 0)")
    if w.consumerBacklogSizeGB > 0 and w.subscriptionsPerTopic == 0:
        p.add("consumerBacklogSizeGB",
              f"consumerBacklogSizeGB: {w.consumerBacklogSizeGB} needs subscriptionsPerTopic >= 1 "
              f"(without subscriptions no backlog builds and the run never ends)")
    if w.subscriptionsPerTopic > 0 and w.consumerPerSubscription == 0:
        # OMB's ensureTopicsAreReady waits for topics x subscriptions messages, then fails with
        # "Timed out waiting for consumers to be ready".
        p.add("consumerPerSubscription",
              f"consumerPerSubscription: 0 is not allowed with subscriptionsPerTopic: "
              f"{w.subscriptionsPerTopic} (must be >= 1: a subscription without consumers "
              f"receives nothing and OMB times out waiting for consumers to be ready)")


def workload_file_name(path: str | Path) -> str:
    """The name OMB uses in result file names: the file name without its extension."""
    name = Path(path).name
    return name[: name.rfind(".")] if "." in name else name
