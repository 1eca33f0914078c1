"""OMB Kafka driver files (``driver-kafka/*.yaml``) and their client properties.

Fields follow OMB's ``DriverConfiguration`` (name, driverClass) plus the Kafka driver's
``Config`` (replicationFactor, reset, topicConfig, commonConfig, producerConfig,
consumerConfig). The four *Config fields are java.util.Properties text.

OMB hands those properties to the Java client. This runner drives librdkafka (through
confluent-kafka) because it measured faster here (bench/omb_vs_perftest.py), so each Java
property is translated explicitly:

- same name and meaning in librdkafka: passed through;
- different name or unit (buffer.memory, fetch.max.wait.ms, delivery.timeout.ms...): renamed
  or converted;
- Java-client details that do not change what the benchmark measures (serializers, API
  timeouts): dropped with a note (kept in the result's provenance);
- anything else: rejected by name, so a driver file never silently means something else.

Where the two clients' *defaults* differ in ways that change throughput (batch.size 16 KB
in Java vs 1 MB in librdkafka, buffer.memory 32 MB vs 1 GB, null-key partitioning, murmur2
key hashing), the Java default is set explicitly, so a driver file that omits them behaves
as it does under OMB.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..javaprops import PropertiesError, parse_properties, parse_properties_lines
from .workload import ConfigError, Doc, Field, Problems, check_range, coerce, load_mapping, log, show


KAFKA_DRIVER_CLASS = "io.openmessaging.benchmark.driver.kafka.KafkaBenchmarkDriver"

# Fields of DriverConfiguration (name, driverClass) + the Kafka driver's Config (OMB ignores
# unknown ones). All but ``reset`` are required: OMB instantiates driverClass by name, names the
# result file after ``name``, creates topics with replicationFactor (a Java short, default 0,
# which Kafka refuses) and calls Properties.load(new StringReader(...)) on all four *Config
# strings (a missing one is a NullPointerException in KafkaBenchmarkDriver.initialize).
_FIELDS = {
    "name": Field("str"),
    "driverClass": Field("str"),
    # Config.replicationFactor is a Java short, as is CreateTopics' replication_factor (INT16).
    "replicationFactor": Field("int", 1, 32767, "between 1 and 32767",
                               "replicas per partition, at least the leader; a 16-bit number in "
                               "OMB's driver Config and Kafka's CreateTopics"),
    "reset": Field("bool"),
    "topicConfig": Field("str"),
    "commonConfig": Field("str"),
    "producerConfig": Field("str"),
    "consumerConfig": Field("str"),
}
_REQUIRED = ("name", "driverClass", "replicationFactor", "topicConfig", "commonConfig",
             "producerConfig", "consumerConfig")
PROPERTY_BLOCKS = ("topicConfig", "commonConfig", "producerConfig", "consumerConfig")
# Properties this runner converts as numbers, with the minimum Kafka's ConfigDef gives them
# (atLeast(...)); the Java client refuses other values too.
_NUMERIC = {"request.timeout.ms": 0, "buffer.memory": 0, "max.poll.records": 1,
            "default.api.timeout.ms": 0}


@dataclass
class DriverConfig:
    name: str = "Kafka"
    driverClass: str = KAFKA_DRIVER_CLASS
    replicationFactor: int = 1
    reset: bool = False
    topicConfig: str = ""
    commonConfig: str = ""
    producerConfig: str = ""
    consumerConfig: str = ""

    @property
    def topic_properties(self) -> dict[str, str]:
        return parse_properties(self.topicConfig)

    @property
    def common_properties(self) -> dict[str, str]:
        return parse_properties(self.commonConfig)

    @property
    def producer_properties(self) -> dict[str, str]:
        """As OMB builds them: commonConfig, then producerConfig on top."""
        return {**self.common_properties, **parse_properties(self.producerConfig)}

    @property
    def consumer_properties(self) -> dict[str, str]:
        return {**self.common_properties, **parse_properties(self.consumerConfig)}

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def where(self, key: str, blocks: tuple[str, ...]) -> str:
        """Where property ``key`` is set (the last of ``blocks`` that sets it, as OMB layers
        them): "file, line N: block" when the driver came from a file."""
        origin = getattr(self, "_origin", None)
        for b in reversed(blocks):
            if key in parse_properties(getattr(self, b)):
                if origin is None:
                    return b
                return f"{origin.where(origin.prop_lines.get((b, key)))}: {b}"
        return origin.where() if origin is not None else "driver"


def _block_first_line(node) -> int | None:
    """1-based file line of the first line of a property block's text, where PyYAML's marks
    give it: a literal block (``key: |``) starts on the line after the indicator; a one-line
    scalar is on its own line; folded or multi-line flow scalars move lines, so None."""
    if not isinstance(node, yaml.ScalarNode):
        return None
    if node.style == "|":
        return node.start_mark.line + 2
    if node.style in (None, "'", '"') and node.start_mark.line == node.end_mark.line:
        return node.start_mark.line + 1
    return None


def parse_driver(data: dict | str | Path, strict: bool = True, source: str = "") -> DriverConfig:
    """A DriverConfig from a dict, YAML text or a file path; a ConfigError naming the file, the
    line (of the property, inside a *Config block, where the YAML marks allow) and the field if
    OMB's Kafka driver would not run it as meant."""
    doc = load_mapping(data, "driver", _FIELDS, "Kafka driver fields", strict, source)
    p = Problems(doc)
    values: dict[str, Any] = {}
    for k, f in _FIELDS.items():
        if k not in doc.data:
            if k in _REQUIRED:
                p.add(k, f"{k}: missing ({_HINTS[k]})", line=None)
            continue
        v = doc.data[k]
        if k in PROPERTY_BLOCKS and (v is None or not isinstance(v, str)):
            p.add(k, f"{k}: {show(v)} is not allowed (must be Java properties text, e.g. "
                     f"'{k}: |' followed by indented key=value lines; \"{k}: ''\" for none)")
            continue
        c = coerce(p, k, v, f)
        if c is not None:
            values[k] = c
    d = DriverConfig(**values)
    if "replicationFactor" in values:
        check_range(p, "replicationFactor", d.replicationFactor, _FIELDS["replicationFactor"],
                    True, None)
    if "name" in values and not d.name.strip():
        p.add("name", "name: '' is not allowed (must be a non-empty name: OMB puts it in the "
                      "result file name)")
    if "driverClass" in values and d.driverClass != KAFKA_DRIVER_CLASS:
        p.add("driverClass", f"driverClass: {show(d.driverClass)} is not allowed (this runner "
                             f"implements only OMB's Kafka driver, {KAFKA_DRIVER_CLASS})")

    # The four property blocks, each property with its file line where known.
    origin = _Origin(doc)
    props: dict[str, dict[str, str]] = {}
    for b in PROPERTY_BLOCKS:
        if b not in values:
            continue
        first = _block_first_line(doc.nodes.get(b))

        def at(i: int, first=first, b=b) -> int | None:
            """File line of the block's i-th text line (the block's own line if unknown)."""
            return first + i if first else doc.lines.get(b)
        try:
            entries = parse_properties_lines(values[b])
        except PropertiesError as e:
            p.add(b, f"{b}: {e}", line=at(e.line))
            continue
        seen: dict[str, int | None] = {}
        for key, val, i in entries:
            line = at(i)
            if not key:
                p.add(b, f"{b}: a property with no name (= {show(val)}); write name=value",
                      line=line)
            elif key in seen:
                msg = (f"{b}: property {key} is set twice (lines {seen[key]} and {line}); "
                       f"Java keeps only the last")
                if strict:
                    p.add(b, msg + " (remove one; --lenient / strict=False keeps the last, as "
                                   "OMB does)", line=line)
                else:
                    log.warning("%s: %s", doc.where(line), msg)
            elif key in _NUMERIC and not (_is_int(val) and int(val) >= _NUMERIC[key]):
                p.add(b, f"{b}: {key}={val} is not allowed (must be a whole number "
                         f">= {_NUMERIC[key]})", line=line)
            seen[key] = line
            origin.prop_lines[(b, key)] = line
        props[b] = {k: v for k, v, _ in entries}

    # min.insync.replicas above the replication factor: with acks=all (OMB's drivers, and the
    # Java default since Kafka 3.0) every write fails with NOT_ENOUGH_REPLICAS.
    mir = props.get("topicConfig", {}).get("min.insync.replicas")
    acks = {**props.get("commonConfig", {}), **props.get("producerConfig", {})}.get("acks", "all")
    if (mir is not None and _is_int(mir) and "replicationFactor" in values and not p
            and int(mir) > d.replicationFactor and acks.strip() in ("all", "-1")):
        p.add("topicConfig", f"topicConfig: min.insync.replicas={mir} is not allowed with "
                             f"replicationFactor {d.replicationFactor} (must be <= "
                             f"{d.replicationFactor}: with acks=all every write would fail with "
                             f"NOT_ENOUGH_REPLICAS)",
              line=origin.prop_lines.get(("topicConfig", "min.insync.replicas")))
    p.raise_any()
    d._origin = origin
    return d


_HINTS = {
    "name": "OMB names the result file after it, e.g. name: Kafka",
    "driverClass": f"e.g. driverClass: {KAFKA_DRIVER_CLASS}",
    "replicationFactor": "an integer >= 1; OMB's default 0 is refused by Kafka",
    **{b: f"OMB's Kafka driver loads all four *Config blocks; write \"{b}: ''\" for none"
       for b in PROPERTY_BLOCKS},
}


class _Origin:
    """Where a parsed driver's properties are (kept off the dataclass, so to_dict is as OMB's)."""

    def __init__(self, doc: Doc):
        self.doc = doc
        self.prop_lines: dict[tuple[str, str], int | None] = {}

    def where(self, line: int | None = None) -> str:
        return self.doc.where(line)


def _is_int(v: str) -> bool:
    try:
        int(v.strip())
        return True
    except ValueError:
        return False


# --- Java client properties -> librdkafka -----------------------------------------------
def _same(k):
    return lambda v: {k: v}


def _clamped(k, hi):
    """librdkafka caps some timeouts lower than Java (request.timeout.ms <= 900000); a TR
    driver asks for 1200000 to mean "never time out", which the cap still means here."""
    return lambda v: {k: str(min(int(v), hi))}


def _kbytes(k):
    return lambda v: {k: str(max(1, int(v) // 1024))}


def _assignor(v: str) -> dict:
    names = {"RangeAssignor": "range", "RoundRobinAssignor": "roundrobin",
             "CooperativeStickyAssignor": "cooperative-sticky"}
    out = []
    for cls in v.split(","):
        short = cls.strip().rsplit(".", 1)[-1]
        if short not in names:
            raise ConfigError(f"partition.assignment.strategy {cls.strip()!r} has no librdkafka "
                              f"equivalent (supported: {', '.join(names)})")
        out.append(names[short])
    return {"partition.assignment.strategy": ",".join(out)}


# Properties meaningful to every client (commonConfig).
_COMMON = {
    "bootstrap.servers": _same("bootstrap.servers"),
    "client.id": _same("client.id"),
    "security.protocol": _same("security.protocol"),
    "sasl.mechanism": _same("sasl.mechanism"),
    "sasl.username": _same("sasl.username"),
    "sasl.password": _same("sasl.password"),
    "metadata.max.age.ms": _same("metadata.max.age.ms"),
    "reconnect.backoff.ms": _same("reconnect.backoff.ms"),
    "reconnect.backoff.max.ms": _same("reconnect.backoff.max.ms"),
    "connections.max.idle.ms": _same("connections.max.idle.ms"),
    "send.buffer.bytes": _same("socket.send.buffer.bytes"),
    "receive.buffer.bytes": _same("socket.receive.buffer.bytes"),
    "client.dns.lookup": None,  # librdkafka resolves all addresses itself
}

_PRODUCER = {
    **_COMMON,
    "acks": _same("acks"),
    # Both are the per-partition batch size limit in bytes.
    "batch.size": _same("batch.size"),
    "linger.ms": _same("linger.ms"),
    "compression.type": _same("compression.type"),
    # Java: max size of a request (and so of a record batch); librdkafka's message.max.bytes
    # is the same limit for produce requests.
    "max.request.size": _same("message.max.bytes"),
    "max.in.flight.requests.per.connection": _same("max.in.flight.requests.per.connection"),
    "enable.idempotence": _same("enable.idempotence"),
    "retries": _same("retries"),
    "retry.backoff.ms": _same("retry.backoff.ms"),
    "request.timeout.ms": _clamped("request.timeout.ms", 900_000),
    "delivery.timeout.ms": _same("message.timeout.ms"),
    "transactional.id": _same("transactional.id"),
    "transaction.timeout.ms": _same("transaction.timeout.ms"),
    "buffer.memory": _kbytes("queue.buffering.max.kbytes"),
    "compression.gzip.level": _same("compression.level"),
    "compression.lz4.level": _same("compression.level"),
    "compression.zstd.level": _same("compression.level"),
}

_CONSUMER = {
    **_COMMON,
    "auto.offset.reset": _same("auto.offset.reset"),
    "enable.auto.commit": _same("enable.auto.commit"),
    "auto.commit.interval.ms": _same("auto.commit.interval.ms"),
    "max.partition.fetch.bytes": _same("max.partition.fetch.bytes"),
    "fetch.min.bytes": _same("fetch.min.bytes"),
    "fetch.max.bytes": _same("fetch.max.bytes"),
    "fetch.max.wait.ms": _same("fetch.wait.max.ms"),
    "session.timeout.ms": _same("session.timeout.ms"),
    "heartbeat.interval.ms": _same("heartbeat.interval.ms"),
    "max.poll.interval.ms": _same("max.poll.interval.ms"),
    "isolation.level": _same("isolation.level"),
    "group.instance.id": _same("group.instance.id"),
    "client.rack": _same("client.rack"),
    "check.crcs": _same("check.crcs"),
    "partition.assignment.strategy": _assignor,
    "group.protocol": _same("group.protocol"),
}

# Java-client settings with no librdkafka counterpart that do not change what is measured.
_DROPPED = {
    "key.serializer": "OMB sets it itself (String/ByteArray); librdkafka sends bytes",
    "value.serializer": "OMB sets it itself; librdkafka sends bytes",
    "key.deserializer": "OMB sets it itself; librdkafka returns bytes",
    "value.deserializer": "OMB sets it itself; librdkafka returns bytes",
    "default.api.timeout.ms": "Java API-call timeout; the runner's admin calls use it, "
                              "librdkafka clients have no such setting",
    "max.block.ms": "Java send() blocking limit; the runner retries on a full queue instead",
    "client.dns.lookup": "librdkafka always tries all resolved addresses",
    "max.poll.records": "Java poll() batch limit; used as the runner's consume() batch size",
    # OMB's stock kafka-group-all.yaml sets it; KafkaBenchmarkDriver.createConsumer then
    # overrides it with the subscription name, so it never reaches a consumer.
    "group.id": "OMB replaces it with each subscription's name (KafkaBenchmarkDriver)",
    "request.timeout.ms": "Java consumer/admin request timeout; librdkafka's consumer has "
                          "socket.timeout.ms (max 300 s) instead",
}

#: Java defaults that differ from librdkafka's and change throughput (see module doc).
JAVA_PRODUCER_DEFAULTS = {
    "batch.size": "16384",
    "linger.ms": "5",
    "acks": "all",
    "queue.buffering.max.kbytes": "32768",        # buffer.memory=33554432
    "queue.buffering.max.messages": "2147483647",  # Java limits by bytes only
    "batch.num.messages": "1000000",              # Java limits a batch by bytes only
    "partitioner": "murmur2_random",              # Java's key hashing; null keys: sticky
}
JAVA_CONSUMER_DEFAULTS = {
    "auto.offset.reset": "latest",
    "enable.auto.commit": "true",
}


@dataclass
class ClientConfig:
    config: dict[str, str]
    notes: list[str] = field(default_factory=list)
    #: max.poll.records, if the driver gives it (consume() batch size).
    max_poll_records: int | None = None


def _translate(props: dict[str, str], table: dict, other: dict, kind: str,
               defaults: dict, where=lambda k: "driver") -> ClientConfig:
    """``where(key)``: "file, line N: block" of a property, for error messages."""
    out = dict(defaults)
    notes: list[str] = []
    max_poll = None
    for k, v in props.items():
        fn = table.get(k)
        try:
            if k == "max.poll.records" and kind == "consumer":
                max_poll = int(v)
            if fn is not None:
                out.update(fn(v))
                continue
        except ValueError:
            raise ConfigError(f"{where(k)}: {k}={v} is not allowed (must be a whole number)",
                              field=k) from None
        if k in _DROPPED:
            notes.append(f"{kind}: {k}={v} not applied ({_DROPPED[k]})")
            continue
        if k in other:
            # A producer property in commonConfig reaches the consumer too; the Java client
            # only logs "supplied but isn't a known config" for it.
            notes.append(f"{kind}: {k}={v} ignored (not a {kind} setting)")
            continue
        raise ConfigError(
            f"{where(k)}: {kind} property '{k}' (= {v}) has no librdkafka mapping in this "
            f"runner; supported: {', '.join(sorted(set(table) | set(_DROPPED)))}", field=k)
    return ClientConfig(out, notes, max_poll)


def producer_config(d: DriverConfig, bootstrap: str | None = None) -> ClientConfig:
    props = d.producer_properties
    if bootstrap:
        props["bootstrap.servers"] = bootstrap
    cc = _translate(props, _PRODUCER, _CONSUMER, "producer", JAVA_PRODUCER_DEFAULTS,
                    lambda k: d.where(k, ("commonConfig", "producerConfig")))
    _require_bootstrap(d, cc)
    return cc


def consumer_config(d: DriverConfig, bootstrap: str | None = None) -> ClientConfig:
    props = d.consumer_properties
    if bootstrap:
        props["bootstrap.servers"] = bootstrap
    cc = _translate(props, _CONSUMER, _PRODUCER, "consumer", JAVA_CONSUMER_DEFAULTS,
                    lambda k: d.where(k, ("commonConfig", "consumerConfig")))
    _require_bootstrap(d, cc)
    return cc


def admin_config(d: DriverConfig, bootstrap: str | None = None) -> tuple[dict, float]:
    """(librdkafka admin config, API timeout in seconds) from commonConfig."""
    props = d.common_properties
    if bootstrap:
        props["bootstrap.servers"] = bootstrap
    try:
        timeout = float(props.get("default.api.timeout.ms", 60000)) / 1000
    except ValueError:
        raise ConfigError(f"{d.where('default.api.timeout.ms', ('commonConfig',))}: "
                          f"default.api.timeout.ms={props['default.api.timeout.ms']} is not "
                          f"allowed (must be a whole number)") from None
    conf = {}
    for k, v in props.items():
        fn = _COMMON.get(k)
        if fn is not None:
            conf.update(fn(v))
    if "bootstrap.servers" not in conf:
        _require_bootstrap(d, ClientConfig(conf))
    return conf, min(timeout, 300.0)


def _require_bootstrap(d: DriverConfig, cc: ClientConfig) -> None:
    if not cc.config.get("bootstrap.servers"):
        raise ConfigError(f"{d.where('bootstrap.servers', ('commonConfig',))}: no "
                          f"bootstrap.servers in the driver's commonConfig and none given "
                          f"(--bootstrap / bootstrap=)", field="bootstrap.servers")
