"""The benchmark run: OMB's WorkloadGenerator, phase by phase.

Order (as OMB): create topics (driver's replicationFactor and topicConfig; ``reset: true``
first deletes earlier ``test-topic-*`` topics) -> create consumers (subscribe) -> create
producers -> probe until every subscription received a message -> warm-up
(warmupDurationMinutes) -> reset latencies -> benchmark traffic (testDurationMinutes).
With consumerBacklogSizeGB > 0 the benchmark phase goes through producer-only, drain and
mixed (see phases.py); the run ends only after the mixed phase, as in OMB.

Lab scale (:class:`LabScale`): durations, rate, backlog size, partitions, client counts,
message size and the reporting period can be overridden without editing the YAML. The
result's header fields describe what actually ran; the sidecar (``<result>.lab.yaml``)
records the workload file's own values and the overrides.
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
import math
import multiprocessing as mp
import os
import random
import string
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

from . import result as R
from .driver import (DriverConfig, admin_config, consumer_config, parse_driver,
                     producer_config)
from .pacer import RateController
from .phases import DRAIN, MIXED, PRODUCER_ONLY, BacklogPhases
from .stats import LatencySummary, PeriodStats, aggregated_line, new_histogram, merge, \
    period_line, E2E_MAX_US
from .workload import (INT32_MAX, MAX_MESSAGE_SIZE, ConfigError, Workload, parse_workload,
                       show, validate, workload_file_name)

#: Lab scale for runs of unchanged TR commands: name=value,name=value (see LabScale.parse).
SCALE_ENV = "TR4947_OMB_SCALE"
TOPIC_PREFIX = "test-topic"  # KafkaBenchmarkDriver.getTopicNamePrefix()
GiB = 1024 ** 3
# A backlog build or drain that moves no message for this long never completes (OMB would
# wait forever): the run stops with the counters instead.
BACKLOG_STALL_S = 120.0


@dataclass
class LabScale:
    """Overrides that shrink a TR workload to the lab, recorded as provenance. One set of
    names everywhere: a notebook's ``scale`` mapping, TR4947_OMB_SCALE, the benchmark's lab
    options (``--duration-s``...) and the recorded labScale all use these field names."""
    duration_s: float | None = None
    warmup_s: float | None = None
    rate: float = 1.0
    backlog_gb: float | None = None
    partitions: int | None = None
    producers_per_topic: int | None = None
    consumers_per_subscription: int | None = None
    message_size: int | None = None
    stats_period_s: float = 10.0
    producer_processes: int | None = None
    consumer_processes: int | None = None
    bootstrap: str | None = None
    #: After the benchmark: stop producers and wait (bounded) until consumers have everything,
    #: so produced and consumed counts can be reconciled. OMB does not do this.
    drain_at_end: bool = False
    drain_at_end_timeout_s: float = 60.0

    # Allowed values, by option: (type, minimum, minimum allowed?, maximum, why). What the
    # runner does with them: a duration of 0 means "until stopped" in collect() (as OMB's
    # testDurationMinutes 0), a rate is divided among producers, sizes follow the workload's.
    _RULES = {
        "duration_s": (float, 0, False, None,
                                    "a benchmark phase of 0 s would run until stopped"),
        "warmup_s": (float, 0, True, None, "0 = no warm-up"),
        "rate": (float, 0, False, None, "a factor on producerRate"),
        "backlog_gb": (float, 0, True, None, "GiB; 0 = no backlog"),
        "partitions": (int, 1, True, INT32_MAX,
                                       "a Kafka topic has at least one partition"),
        "producers_per_topic": (int, 1, True, INT32_MAX,
                                      "with no producer nothing is measured"),
        "consumers_per_subscription": (int, 1, True, INT32_MAX,
                                            "a subscription without consumers receives nothing"),
        "message_size": (int, 1, True, MAX_MESSAGE_SIZE,
                                "librdkafka sends at most message.max.bytes=1000000000"),
        "stats_period_s": (float, 0, False, None, "the reporting period"),
        "producer_processes": (int, 1, True, None, "worker processes"),
        "consumer_processes": (int, 1, True, None, "worker processes"),
        "drain_at_end_timeout_s": (float, 0, False, None, "how long to wait for consumers"),
    }

    @classmethod
    def from_kwargs(cls, **kw) -> "LabScale":
        known = cls.names()
        vals = {}
        for k, v in kw.items():
            if k not in known:
                raise ConfigError(f"unknown lab scale option {k!r}; known: "
                                  f"{', '.join(known)}", field=k)
            if v is not None:
                vals[k] = v
        for name, v in vals.items():
            opt = name
            rule = cls._RULES.get(name)
            if rule is None:
                if name == "drain_at_end" and not isinstance(v, bool):
                    raise ConfigError(f"{opt}: {show(v)} is not allowed (must be true or false)",
                                      field=opt)
                if name == "bootstrap" and not isinstance(v, str):
                    raise ConfigError(f"{opt}: {show(v)} is not allowed (must be host:port[,...])",
                                      field=opt)
                continue
            typ, lo, lo_ok, hi, why = rule
            ok_type = (not isinstance(v, bool) and isinstance(v, (int, float))
                       and (typ is float or float(v).is_integer()))
            if not ok_type or not math.isfinite(v):
                kind = "a whole number" if typ is int else "a finite number"
                raise ConfigError(f"{opt}: {show(v)} is not allowed (must be {kind})", field=opt)
            allowed = f"{'>=' if lo_ok else '>'} {lo}" + (f" and <= {hi}" if hi is not None else "")
            if (v < lo or (v == lo and not lo_ok)) or (hi is not None and v > hi):
                raise ConfigError(f"{opt}: {show(v)} is not allowed (must be {allowed}; {why})",
                                  field=opt)
            vals[name] = int(v) if typ is int else v
        return cls(**vals)

    _TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")

    @classmethod
    def parse(cls, text: str) -> dict:
        """``name=value,name=value`` (the CLI's TR4947_OMB_SCALE) -> keyword arguments.
        Values are checked as :meth:`from_kwargs` checks them."""
        out: dict = {}
        seen: dict[str, str] = {}
        fields = {f: t for f, t in cls.__annotations__.items() if not f.startswith("_")}
        for item in (x.strip() for x in (text or "").split(",")):
            if not item:
                continue
            if "=" not in item:
                raise ConfigError(f"lab scale item {item!r} is not name=value")
            k, v = (x.strip() for x in item.split("=", 1))
            name = k
            if name not in fields:
                raise ConfigError(f"unknown lab scale option {k!r}; known: "
                                  f"{', '.join(cls.names())}", field=k)
            if name in seen:
                raise ConfigError(f"lab scale option {name} is given twice "
                                  f"({seen[name]} and {item}); give it once", field=k)
            seen[name] = item
            typ = str(fields[name])
            if "bool" in typ:
                if v.lower() not in cls._TRUE + cls._FALSE:
                    raise ConfigError(f"{k}: {v!r} is not allowed (must be true or false)",
                                      field=k)
                out[k] = v.lower() in cls._TRUE
                continue
            try:
                if "int" in typ:
                    out[k] = int(v)
                elif "float" in typ:
                    out[k] = float(v)
                else:
                    out[k] = v
            except ValueError:
                raise ConfigError(f"lab scale option {k}: {v!r} is not a number"
                                  + (" (a whole number)" if "int" in typ else ""),
                                  field=k) from None
        cls.from_kwargs(**out)      # ranges: refused here, before anything runs
        return out

    @classmethod
    def names(cls) -> list[str]:
        return [f for f in cls.__dataclass_fields__ if not f.startswith("_")]

    @classmethod
    def env(cls, scale: dict | None) -> dict[str, str]:
        """A notebook's ``scale`` mapping as the environment a TR command's bin/benchmark
        reads (so the command stays the TR's): checked here, before anything runs."""
        if not scale:
            return {}
        cls.from_kwargs(**scale)
        return {SCALE_ENV: ",".join(f"{k}={v}" for k, v in scale.items() if v is not None)}

    def to_dict(self) -> dict:
        return {k: v for k, v in asdict(self).items()}

    def apply(self, w: Workload) -> Workload:
        """The workload that runs: the file's, with the size overrides applied."""
        changes = {k: v for k, v in (
            ("partitionsPerTopic", self.partitions),
            ("producersPerTopic", self.producers_per_topic),
            ("consumerPerSubscription", self.consumers_per_subscription),
            ("messageSize", self.message_size)) if v is not None}
        if "messageSize" in changes and w.payloadFile and not w.useRandomizedPayloads:
            raise ConfigError("message_size cannot resize a payloadFile; it applies "
                              "to useRandomizedPayloads workloads")
        return dataclasses.replace(w, **changes)


def _rand(n: int = 7) -> str:
    # OMB's RandomGenerator.getRandomString(): 7 url-safe characters.
    return "".join(random.choices(string.ascii_letters + string.digits + "-_", k=n))


class _Log:
    """OMB-like log lines: time [thread] LEVEL Class - message."""

    def __init__(self, echo: bool, progress: Callable | None):
        self.lines: list[str] = []
        self.echo = echo
        self.progress = progress

    def __call__(self, msg: str, source: str = "WorkloadGenerator", level: str = "INFO") -> None:
        now = _dt.datetime.now()
        line = f"{now:%H:%M:%S}.{now.microsecond // 1000:03d} [main] {level} {source} - {msg}"
        self.lines.append(line)
        if self.echo:
            print(line, flush=True)
        if self.progress:
            self.progress({"event": "log", "line": line, "message": msg})


class _Workers:
    """The worker processes and their pipes."""

    def __init__(self):
        # forkserver: one clean process imports the worker code once and forks each worker
        # from it (a spawned worker re-imports Python and librdkafka's binding, about a second
        # each on a busy machine); nothing that started librdkafka threads is ever forked.
        self.ctx = mp.get_context("forkserver")
        self.ctx.set_forkserver_preload(["tr4947.omb.worker", "confluent_kafka"])
        self.procs: list = []
        self.conns: list = []
        self.kind: list[str] = []
        self.sizes: list[int] = []
        self.ready: set[int] = set()

    def spawn(self, target, spec: dict, kind: str, size: int) -> None:
        parent, child = self.ctx.Pipe()
        p = self.ctx.Process(target=target, args=(child, spec), daemon=True,
                             name=f"omb-{kind}-{spec['index']}")
        p.start()
        child.close()
        self.procs.append(p)
        self.conns.append(parent)
        self.kind.append(kind)
        self.sizes.append(size)

    def wait_ready(self, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        for i, (c, p) in enumerate(zip(self.conns, self.procs)):
            if i in self.ready:
                continue
            while not c.poll(0.2):
                if not p.is_alive() and not c.poll(0):
                    raise RuntimeError(f"worker {p.name} exited during start-up")
                if time.monotonic() > deadline:
                    raise TimeoutError(f"worker {p.name} not ready after {timeout}s")
            msg = c.recv()
            if msg[0] != "ready":
                raise RuntimeError(f"worker {p.name} failed:\n{msg[1]}")
            self.ready.add(i)

    def call(self, cmd: tuple, kind: str | None = None, args: list | None = None,
             timeout: float = 120) -> list:
        """Send to all workers (of a kind) first, then collect the replies."""
        sel = [i for i, k in enumerate(self.kind) if kind is None or k == kind]
        for n, i in enumerate(sel):
            self.conns[i].send(cmd if args is None else (cmd[0], args[n]))
        out = []
        for i in sel:
            if not self.conns[i].poll(timeout):
                raise TimeoutError(f"worker {self.procs[i].name} did not answer {cmd[0]!r}")
            msg = self.conns[i].recv()
            if msg[0] == "error":
                raise RuntimeError(f"worker {self.procs[i].name} failed:\n{msg[1]}")
            out.append(msg[1])
        return out

    def indices(self, kind: str) -> list[int]:
        return [i for i, k in enumerate(self.kind) if k == kind]

    def close(self) -> None:
        for c, p in zip(self.conns, self.procs):
            try:
                if p.is_alive():
                    c.send(("close",))
            except Exception:
                pass
        deadline = time.monotonic() + 30
        for c, p in zip(self.conns, self.procs):
            p.join(max(0.1, deadline - time.monotonic()))
            if p.is_alive():  # our own child only
                p.terminate()
                p.join(5)
            c.close()


def _payloads(w: Workload, base_dirs: list[Path], notes: list[str], log) -> list[bytes]:
    if w.useRandomizedPayloads:
        # OMB: randomBytesRatio of each message random, the rest zeros (compressible).
        rnd = random.Random()
        n_rand = int(w.messageSize * w.randomBytesRatio)
        return [rnd.randbytes(n_rand) + bytes(w.messageSize - n_rand)
                for _ in range(w.randomizedPayloadPoolSize)]
    if w.payloadFile:
        for d in base_dirs:
            p = (d / w.payloadFile) if not Path(w.payloadFile).is_absolute() else Path(w.payloadFile)
            if p.is_file():
                data = p.read_bytes()
                if len(data) != w.messageSize:
                    # OMB's FilePayloadReader rejects a size mismatch the same way.
                    raise ConfigError(f"Payload length mismatch. Actual is: {len(data)}, but "
                                      f"expected: {w.messageSize} ({p})")
                return [data]
        note = (f"payloadFile {w.payloadFile!r} not found (looked in "
                f"{', '.join(str(d) for d in base_dirs)}); using {w.messageSize} random bytes")
    else:
        note = f"no payloadFile; using {w.messageSize} random bytes"
    notes.append(note)
    log(note, "Benchmark", "WARN")
    return [random.randbytes(w.messageSize)]


def _split(items: list, parts: int) -> list[list]:
    parts = max(1, min(parts, len(items)))
    return [items[i::parts] for i in range(parts)]


@dataclass
class _Plan:
    sc: LabScale
    base_dirs: list
    workload_name: str
    w_file: Workload
    d: DriverConfig
    w: Workload
    pconf: object
    cconf: object
    aconf: tuple
    test_s: float
    warmup_s: float
    backlog_gb: float
    rate: float


def check(workload: Workload | dict | str | Path, driver: DriverConfig | dict | str | Path,
          bootstrap: str | None = None, *, strict: bool = True, **scale) -> None:
    """Every check :func:`run` makes before it touches Kafka (files, fields, ranges, lab scale,
    client properties), without running anything: a ConfigError if :func:`run` would refuse."""
    _prepare(workload, driver, bootstrap, strict, None, scale)


def _prepare(workload, driver, bootstrap, strict, workload_name, scale) -> _Plan:
    """Load and check everything a run needs; nothing is started here."""
    sc = LabScale.from_kwargs(**scale)
    sc.bootstrap = bootstrap
    base_dirs = [Path.cwd()]
    where = "workload"
    if isinstance(workload, Path) or (isinstance(workload, str) and "\n" not in workload):
        wpath = Path(workload)
        where = str(wpath)
        base_dirs.append(wpath.resolve().parent)
        base_dirs.append(wpath.resolve().parent.parent)  # OMB layout: workloads/ + payload/
        workload_name = workload_name or workload_file_name(wpath)
        w_file = parse_workload(wpath, strict=strict)
    elif isinstance(workload, Workload):
        w_file = workload
        validate(dataclasses.replace(workload), strict=strict)
    else:
        w_file = parse_workload(workload, strict=strict)
    workload_name = workload_name or (w_file.name or "workload").replace(" ", "-").replace("/", "-")
    if isinstance(driver, DriverConfig):
        d = driver
        if getattr(d, "_origin", None) is None:   # built in code: the file checks still apply
            parse_driver(d.to_dict(), strict=strict)
    else:
        d = parse_driver(Path(driver) if isinstance(driver, str) and "\n" not in driver
                         else driver, strict=strict)
    w = sc.apply(w_file)

    pconf = producer_config(d, bootstrap)
    cconf = consumer_config(d, bootstrap)
    aconf = admin_config(d, bootstrap)

    test_s = (sc.duration_s if sc.duration_s is not None
              else w.testDurationMinutes * 60)
    warmup_s = (sc.warmup_s if sc.warmup_s is not None
                else w.warmupDurationMinutes * 60)
    backlog_gb = sc.backlog_gb if sc.backlog_gb is not None else w.consumerBacklogSizeGB
    rate = w.producerRate * sc.rate if w.producerRate > 0 else 0.0
    if backlog_gb > 0 and rate <= 0:
        raise ConfigError(f"{where}: Cannot probe producer sustainable rate when building "
                          f"backlog (a backlog needs producerRate > 0)")
    if backlog_gb > 0 and w.subscriptionsPerTopic == 0:
        raise ConfigError(f"{where}: consumerBacklogSizeGB > 0 needs subscriptionsPerTopic > 0: "
                          f"without consumers the backlog is never drained and the run never ends")
    _check_payload_memory(w, sc, where)
    return _Plan(sc, base_dirs, workload_name, w_file, d, w, pconf, cconf, aconf,
                 test_s, warmup_s, backlog_gb, rate)


def _check_payload_memory(w: Workload, sc: LabScale, where: str) -> None:
    """Refuse payloads that cannot fit in memory before building them: the runner holds the
    pool and hands each producer process a copy (a 10^9-byte message x a pool of 100 would
    otherwise exhaust the machine, which the lab shares)."""
    try:
        mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return
    pool = w.messageSize * (w.randomizedPayloadPoolSize if w.useRandomizedPayloads else 1)
    procs = min(sc.producer_processes or os.cpu_count() or 2,
                max(1, w.topics * w.producersPerTopic))
    need = pool * (1 + procs)
    if need > mem // 2:
        raise ConfigError(
            f"{where}: payloads of {pool} bytes (messageSize {w.messageSize}"
            + (f" x randomizedPayloadPoolSize {w.randomizedPayloadPoolSize}"
               if w.useRandomizedPayloads else "")
            + f"), held {1 + procs} times (runner and {procs} producer processes), need "
              f"{need} bytes: more than half this machine's memory ({mem} bytes); use a "
              f"smaller messageSize or pool (--message-size)", field="messageSize")


def run(workload: Workload | dict | str | Path, driver: DriverConfig | dict | str | Path,
        bootstrap: str | None = None, *, output: str | Path | bool | None = None,
        output_dir: str | Path = ".", progress: Callable[[dict], None] | None = None,
        strict: bool = True, echo: bool = False, workload_name: str | None = None,
        **scale) -> R.Result:
    """Run one OMB workload with one Kafka driver.

    ``workload``/``driver``: a parsed object, a dict (the YAML's content) or a file path.
    ``bootstrap``: overrides commonConfig's bootstrap.servers (the lab's brokers).
    ``output``: result file path; None = OMB's default name in ``output_dir``; False = don't
    write. The lab sidecar ``<result>.lab.yaml`` is written beside it.
    ``progress(event)`` gets {"event": "log"|"sample"|"phase", ...} as the run goes.
    ``**scale``: see :class:`LabScale` (duration_s, warmup_s,
    rate, backlog_gb, partitions,
    producers_per_topic, consumers_per_subscription, message_size,
    stats_period_s, producer_processes, consumer_processes, drain_at_end).
    """
    pl = _prepare(workload, driver, bootstrap, strict, workload_name, scale)
    sc, base_dirs, workload_name, w_file, d, w = (pl.sc, pl.base_dirs, pl.workload_name,
                                                  pl.w_file, pl.d, pl.w)
    pconf, cconf, (aconf, api_timeout) = pl.pconf, pl.cconf, pl.aconf
    test_s, warmup_s, backlog_gb, rate = pl.test_s, pl.warmup_s, pl.backlog_gb, pl.rate

    log = _Log(echo, progress)
    notes = pconf.notes + cconf.notes
    for n in notes:
        log(n, "KafkaBenchmarkDriver", "WARN")

    log(f"--------------- WORKLOAD : {_java_str(w.name)} --- DRIVER : {d.name}---------------",
        "Benchmark")
    scaled = {k: v for k, v in sc.to_dict().items()
              if v not in (None, False) and k not in ("stats_period_s", "bootstrap",
                                                      "drain_at_end_timeout_s")
              and not (k == "rate" and v == 1.0)}
    if scaled:
        log("Lab scale: " + ", ".join(f"{k}={v}" for k, v in scaled.items()), "Benchmark")
    payloads = _payloads(w, base_dirs, notes, log)

    t_run = time.monotonic()
    phases: list[dict] = []
    samples: list[dict] = []

    def phase(name: str) -> None:
        now = time.monotonic() - t_run
        if phases and phases[-1]["end"] is None:
            phases[-1]["end"] = round(now, 3)
        if name:
            phases.append({"phase": name, "start": round(now, 3), "end": None})
            if progress:
                progress({"event": "phase", "phase": name, "t": now})

    from confluent_kafka.admin import AdminClient, NewTopic
    admin = AdminClient({**aconf, "log_level": 3})
    workers = _Workers()
    result = R.new_test_result(w, d.name)
    totals: dict = {}
    topics: list[str] = []
    purged = 0
    try:
        # --- topics -------------------------------------------------------------------
        phase("setup")
        if d.reset:
            old = [t for t in admin.list_topics(timeout=api_timeout).topics
                   if t.startswith(TOPIC_PREFIX)]
            if old:
                for f in admin.delete_topics(old, operation_timeout=api_timeout).values():
                    f.result(api_timeout)
                log(f"Deleted {len(old)} existing {TOPIC_PREFIX}-* topics (reset: true)",
                    "KafkaBenchmarkDriver")
        t0 = time.monotonic()
        topics = [f"{TOPIC_PREFIX}-{i:07d}-{_rand()}" for i in range(w.topics)]
        new = [NewTopic(t, w.partitionsPerTopic, d.replicationFactor, config=d.topic_properties)
               for t in topics]
        for f in admin.create_topics(new, operation_timeout=api_timeout).values():
            f.result(api_timeout)
        log(f"Created {len(topics)} topics in {(time.monotonic() - t0) * 1000:.0f} ms")

        # --- consumers, then producers (as OMB) -----------------------------------------
        nproc = os.cpu_count() or 2
        subs = []
        for t in topics:
            for i in range(w.subscriptionsPerTopic):
                name = f"sub-{i:03d}-{_rand()}"
                subs += [(t, name)] * w.consumerPerSubscription
        random.shuffle(subs)
        t0 = time.monotonic()
        from .worker import consumer_worker, producer_worker
        for i, chunk in enumerate(_split(subs, sc.consumer_processes or nproc) if subs else []):
            workers.spawn(consumer_worker, {"index": i, "config": cconf.config,
                                            "subscriptions": chunk,
                                            "max_poll_records": cconf.max_poll_records},
                          "consumer", len(chunk))
        workers.wait_ready()
        log(f"Created {len(subs)} consumers in {(time.monotonic() - t0) * 1000:.0f} ms")
        prods = topics * w.producersPerTopic
        random.shuffle(prods)
        t0 = time.monotonic()
        for i, chunk in enumerate(_split(prods, sc.producer_processes or nproc) if prods else []):
            workers.spawn(producer_worker, {"index": i, "config": pconf.config, "topics": chunk,
                                            "partitions": w.partitionsPerTopic,
                                            "payloads": payloads,
                                            "keyDistributor": w.keyDistributor},
                          "producer", len(chunk))
        workers.wait_ready()
        log(f"Created {len(prods)} producers in {(time.monotonic() - t0) * 1000:.0f} ms")

        # --- ensureTopicsAreReady -------------------------------------------------------
        log("Waiting for consumers to be ready")
        expected = w.topics * w.subscriptionsPerTopic
        deadline = time.monotonic() + 60
        last_probe = last_said = 0.0
        while True:
            if time.monotonic() - last_probe > 3:
                # OMB probes once; re-probing covers auto.offset.reset=latest consumers that
                # joined after the first probe.
                workers.call(("probe",), "producer")
                last_probe = time.monotonic()
            # OMB checks every 2 s; a quarter of a second is as cheap here and the run does
            # not idle after the consumers have their messages.
            time.sleep(0.25 if expected else 0)
            c = _sum(workers.call(("counters",)))
            if time.monotonic() - last_said >= 2:
                log(f"Waiting for topics to be ready -- Sent: {c['totalMessagesSent']}, "
                    f"Received: {c['totalMessagesReceived']}")
                last_said = time.monotonic()
            if c["totalMessagesReceived"] >= expected:
                break
            if time.monotonic() > deadline:
                raise TimeoutError("Timed out waiting for consumers to be ready")
        log("All consumers are ready")

        # --- load -----------------------------------------------------------------------
        adaptive = rate <= 0
        target = 10000.0 if adaptive else rate
        n_prod = len(prods)
        pidx = workers.indices("producer")

        def shares(r: float) -> list[float]:
            return [r * workers.sizes[i] / n_prod for i in pidx]

        # Periods are measured from the previous stats call, also across the warm-up ->
        # benchmark switch: counts since that call must be divided by all of that time.
        state = {"rate": target, "rc_last": time.monotonic(), "next_check": 0.0,
                 "last_stats": time.monotonic()}
        if prods:
            workers.call(("start",), "producer", args=shares(target))
        rc = RateController() if adaptive else None
        backlog = BacklogPhases(int(backlog_gb * GiB), w.messageSize, w.subscriptionsPerTopic,
                                w.backlogDrainRatio, test_s, log) if backlog_gb > 0 else None
        backlog_started = False

        def act(actions: list[str]) -> None:
            for a in actions:
                workers.call((a,), "consumer")
                if a == "resume":
                    phase(DRAIN)
            if backlog is not None and backlog.state == MIXED and phases[-1]["phase"] != MIXED:
                phase(MIXED)

        def tick() -> None:
            now = time.monotonic()
            if rc is not None and now - state["rc_last"] >= 3.0 and prods:
                c = _sum(workers.call(("counters",)))
                state["rate"] = max(1.0, rc.next_rate(
                    state["rate"], now - state["rc_last"], c["totalMessagesSent"],
                    c["totalMessagesReceived"] if subs else None))
                state["rc_last"] = now
                workers.call(("rate",), "producer", args=shares(state["rate"]))
            if backlog_started and backlog.need_wait and now >= state["next_check"]:
                state["next_check"] = now + backlog.poll_interval
                if backlog.state in (PRODUCER_ONLY, DRAIN):
                    c = _sum(workers.call(("counters",)))
                    moved = (c["totalMessagesSent"], c["totalMessagesReceived"])
                    if moved != state.get("moved"):
                        state["moved"], state["moved_at"] = moved, now
                    elif now - state["moved_at"] > BACKLOG_STALL_S:
                        raise RuntimeError(
                            f"backlog {backlog.state} phase stalled: no message sent or received "
                            f"for {BACKLOG_STALL_S:.0f} s (sent {moved[0]}, received "
                            f"{moved[1]}); check that the brokers are up and the consumers "
                            f"subscribed")
                    act(backlog.update(now, *moved))
                else:
                    act(backlog.update(now))

        cumulative = [new_histogram(), new_histogram(), new_histogram(E2E_MAX_US)]

        def collect(duration_s: float, phase_label: Callable[[], str], record: bool) -> None:
            start = time.monotonic()
            old = state["last_stats"]
            end = start + duration_s if duration_s > 0 else float("inf")
            next_sample = start + sc.stats_period_s
            while True:
                # tick() also when the last period's bookkeeping overran the period (a busy
                # machine): the backlog phases advance only in tick().
                tick()
                while time.monotonic() < next_sample:
                    time.sleep(min(0.1, max(0.0, next_sample - time.monotonic())))
                    tick()
                ps = PeriodStats()
                behind = 0.0
                for o in workers.call(("stats",)):
                    ps.add(o)
                    behind = max(behind, o.get("behind_s", 0.0))
                now = time.monotonic()
                el = now - old
                old = state["last_stats"] = now
                pub_rate = ps.messagesSent / el
                pub_mbs = ps.bytesSent / el / 1024 / 1024
                err_rate = ps.messageSendErrors / el
                cons_rate = ps.messagesReceived / el
                cons_mbs = ps.bytesReceived / el / 1024 / 1024
                backlog_n = max(0, w.subscriptionsPerTopic * ps.totalMessagesSent
                                - ps.totalMessagesReceived)
                pub, dly, e2e = (LatencySummary.of(h) for h in
                                 (ps.publishLatency, ps.publishDelayLatency, ps.endToEndLatency))
                log(period_line(pub_rate, pub_mbs, err_rate, cons_rate, cons_mbs, backlog_n, pub, dly))
                label = phase_label()
                sample = {"t": round(now - t_run, 3), "phase": label, "recorded": record,
                          "publishRate": pub_rate, "publishMBs": pub_mbs,
                          "publishErrorRate": err_rate, "consumeRate": cons_rate,
                          "consumeMBs": cons_mbs, "backlog": backlog_n,
                          "publishLatency50": pub.p50 / 1000, "publishLatency99": pub.p99 / 1000,
                          "endToEndLatency50": e2e.p50 / 1000, "endToEndLatency99": e2e.p99 / 1000,
                          "targetRate": state["rate"],
                          # How far the producers' schedule is behind (s): > 0 means the
                          # lab could not sustain the target rate at that point.
                          "behindSeconds": round(behind, 3)}
                samples.append(sample)
                if progress:
                    progress({"event": "sample", **sample})
                if record:
                    R.add_period(result, pub_rate, err_rate, cons_rate, backlog_n, pub, dly, e2e)
                    for cum, h in zip(cumulative, (ps.publishLatency, ps.publishDelayLatency,
                                                   ps.endToEndLatency)):
                        merge(cum, h)
                if now >= end and not (backlog is not None and backlog_started
                                       and backlog.need_wait):
                    return
                # Behind schedule: the next period is a whole one, not a catch-up burst.
                next_sample = max(next_sample + sc.stats_period_s,
                                  time.monotonic() + sc.stats_period_s / 2)

        if warmup_s > 0:
            phase("warmup")
            log(f"----- Starting warm-up traffic ({w.warmupDurationMinutes}m) ------"
                + (f" [labScale: {warmup_s:g} s]" if sc.warmup_s is not None else ""))
            collect(warmup_s, lambda: "warmup", record=False)

        if backlog is not None:
            phase(PRODUCER_ONLY)
            act(backlog.start(time.monotonic()))
            backlog_started = True
        else:
            phase("steady")
        # OMB's resetStats(): latencies only; counters (and so the backlog) carry on.
        workers.call(("reset_latencies",))
        log(f"----- Starting benchmark traffic ({w.testDurationMinutes}m)------"
            + (f" [labScale: {test_s:g} s]" if sc.duration_s is not None else ""))
        collect(test_s, (lambda: backlog.label) if backlog else (lambda: "steady"), record=True)

        R.set_aggregated(result, *cumulative)
        log(aggregated_line(LatencySummary.of(cumulative[0]), LatencySummary.of(cumulative[1])))
        phase("")

        # --- stop -------------------------------------------------------------------------
        if prods:
            # In-flight requests are waited for only when the counts will be reconciled.
            purged = sum((r or {}).get("purged", 0) for r in workers.call(
                ("stop_load",), "producer", args=[not sc.drain_at_end] * len(workers.indices("producer"))))
        if sc.drain_at_end and subs:
            deadline = time.monotonic() + sc.drain_at_end_timeout_s
            while time.monotonic() < deadline:
                c = _sum(workers.call(("counters",)))
                if c["totalMessagesReceived"] >= w.subscriptionsPerTopic * c["totalMessagesSent"]:
                    break
                time.sleep(0.5)
        totals = _sum(workers.call(("counters",)))
    finally:
        workers.close()
        phase("")

    from confluent_kafka import libversion, version
    lab = {
        "labScale": sc.to_dict(),
        "labRun": {
            "runner": "tr4947.omb",
            "client": f"confluent-kafka {version()[0]} / librdkafka {libversion()[0]}",
            "workloadFile": workload_name,
            # The file's values where the scale changed them (the JSON has what ran).
            "workloadAsWritten": w_file.to_dict(),
            "driver": {k: _mask(v) if k.endswith("Config") else v
                       for k, v in d.to_dict().items()},
            "replicationFactor": d.replicationFactor,
            "targetRate": rate if rate > 0 else "adaptive (producerRate 0: OMB RateController)",
            "consumerBacklogBytes": int(backlog_gb * GiB),
            "phases": phases,
            "totals": totals,
            # Queued but unsent when the benchmark ended: dropped, not sent (worker.py).
            "purgedAtStop": purged,
            "producer_processes": len(workers.indices("producer")),
            "consumer_processes": len(workers.indices("consumer")),
            "notes": notes,
            "topics": topics,
        },
        "samples": samples,
    }
    out = R.Result(result, samples, log.lines, lab)
    if output is not False:
        path = Path(output) if output not in (None, True) else \
            Path(output_dir) / R.default_file_name(workload_name, d.name)
        log(f"Writing test result into {path}", "Benchmark")
        out.path = R.write(result, path)
        R.write_sidecar(lab, path)
    return out


def _java_str(v) -> str:
    """String.valueOf: a workload without a name (the TR's) logs as "null"."""
    return "null" if v is None else str(v)


def _mask(props: str) -> str:
    """Driver properties text without secrets (sasl.jaas.config, *.password) for the sidecar."""
    lines = []
    for line in (props or "").splitlines():
        key = line.split("=", 1)[0].strip().lower()
        lines.append(f"{line.split('=', 1)[0]}=********" if "=" in line and (
            "password" in key or "jaas" in key or "secret" in key) else line)
    return "\n".join(lines) + ("\n" if props and props.endswith("\n") else "")


def _sum(replies: list[dict]) -> dict:
    out = {"totalMessagesSent": 0, "totalMessageSendErrors": 0, "totalMessagesReceived": 0}
    for r in replies:
        for k in out:
            out[k] += (r or {}).get(k, 0)
    return out
