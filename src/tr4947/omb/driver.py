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

from .properties import parse_properties
from .workload import ConfigError, load_mapping


KAFKA_DRIVER_CLASS = "io.openmessaging.benchmark.driver.kafka.KafkaBenchmarkDriver"

# Fields of DriverConfiguration + the Kafka driver's Config. (OMB ignores unknown ones.)
_FIELDS = {"name": str, "driverClass": str, "replicationFactor": int, "reset": bool,
           "topicConfig": str, "commonConfig": str, "producerConfig": str, "consumerConfig": str}


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


def parse_driver(data: dict | str | Path, strict: bool = True, source: str = "") -> DriverConfig:
    data, where = load_mapping(data, "driver", _FIELDS, "Kafka driver fields", strict, source)
    values: dict[str, Any] = {}
    for k, typ in _FIELDS.items():
        if k not in data or data[k] is None:
            continue
        v = data[k]
        if typ is int and (isinstance(v, bool) or not isinstance(v, int)):
            raise ConfigError(f"driver field '{k}'{where}: {v!r} is not an integer")
        if typ is bool and not isinstance(v, bool):
            raise ConfigError(f"driver field '{k}'{where}: {v!r} is not true/false")
        if typ is str and isinstance(v, (dict, list)):
            raise ConfigError(f"driver field '{k}'{where} must be a (multi-line) string of "
                              f"Java properties, e.g. '{k}: |' followed by indented key=value lines")
        values[k] = str(v) if typ is str else v
    d = DriverConfig(**values)
    if d.driverClass != KAFKA_DRIVER_CLASS:
        raise ConfigError(f"driverClass{where} is {d.driverClass!r}: this runner implements only "
                          f"OMB's Kafka driver ({KAFKA_DRIVER_CLASS})")
    if d.replicationFactor <= 0:
        raise ConfigError(f"replicationFactor{where} must be > 0")
    return d


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
               defaults: dict) -> ClientConfig:
    out = dict(defaults)
    notes: list[str] = []
    max_poll = None
    for k, v in props.items():
        if k == "max.poll.records" and kind == "consumer":
            max_poll = int(v)
        fn = table.get(k)
        if fn is not None:
            out.update(fn(v))
            continue
        if k in _DROPPED:
            notes.append(f"{kind}: {k}={v} not applied ({_DROPPED[k]})")
            continue
        if k in other:
            # A producer property in commonConfig reaches the consumer too; the Java client
            # only logs "supplied but isn't a known config" for it.
            notes.append(f"{kind}: {k}={v} ignored (not a {kind} setting)")
            continue
        raise ConfigError(
            f"{kind} property '{k}' (= {v}) has no librdkafka mapping in this runner; "
            f"supported: {', '.join(sorted(set(table) | set(_DROPPED)))}")
    return ClientConfig(out, notes, max_poll)


def producer_config(d: DriverConfig, bootstrap: str | None = None) -> ClientConfig:
    props = d.producer_properties
    if bootstrap:
        props["bootstrap.servers"] = bootstrap
    cc = _translate(props, _PRODUCER, _CONSUMER, "producer", JAVA_PRODUCER_DEFAULTS)
    _require_bootstrap(cc)
    return cc


def consumer_config(d: DriverConfig, bootstrap: str | None = None) -> ClientConfig:
    props = d.consumer_properties
    if bootstrap:
        props["bootstrap.servers"] = bootstrap
    cc = _translate(props, _CONSUMER, _PRODUCER, "consumer", JAVA_CONSUMER_DEFAULTS)
    _require_bootstrap(cc)
    return cc


def admin_config(d: DriverConfig, bootstrap: str | None = None) -> tuple[dict, float]:
    """(librdkafka admin config, API timeout in seconds) from commonConfig."""
    props = d.common_properties
    if bootstrap:
        props["bootstrap.servers"] = bootstrap
    timeout = float(props.get("default.api.timeout.ms", 60000)) / 1000
    conf = {}
    for k, v in props.items():
        fn = _COMMON.get(k)
        if fn is not None:
            conf.update(fn(v))
    if "bootstrap.servers" not in conf:
        raise ConfigError("no bootstrap.servers in the driver's commonConfig and none given")
    return conf, min(timeout, 300.0)


def _require_bootstrap(cc: ClientConfig) -> None:
    if not cc.config.get("bootstrap.servers"):
        raise ConfigError("no bootstrap.servers in the driver's commonConfig and none given "
                          "(--bootstrap / bootstrap=)")
