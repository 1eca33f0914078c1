"""The broker configurations the drills run on (DRL-0).

Every drill runs on the deploy checklist's broker settings: Kafka's default follower lag
allowance (``replica.lag.time.max.ms``, 30 s), which the checklist keeps. Where the TR's test
value (100000000 ms, 27.8 h) can change the outcome, that is for outages longer than the
default, the drill runs again with it, side by side (DRL-1). The setting is read-only in a
running broker (no dynamic update), so a switch writes it into every broker's and the
standby's ``server.properties`` and restarts the brokers one at a time, each back in every
in-sync replica set before the next stops, as an operator rolls a configuration change. The
file as DRL-0 found it is kept beside it and put back after the drills.
"""
from __future__ import annotations

from ...inventory import Host
from ...javaprops import parse_properties

#: The broker setting whose TR value and Kafka default differ in what a drill's stalled
#: follower does: it leaves the ISR after this long without fetching.
LAG = "replica.lag.time.max.ms"
#: Kafka's defaults of the broker settings DRL-0 reads, for a file that leaves them out.
KAFKA_DEFAULTS = {LAG: "30000", "min.insync.replicas": "1",
                  "unclean.leader.election.enable": "false"}
KAFKA_DEFAULT_LAG_MS = int(KAFKA_DEFAULTS[LAG])
#: The TR's test value (its CPU-1 broker file; the do-not-copy page).
TR_LAG_MS = 100000000

CHECKLIST, TR = "checklist", "tr"
#: What each configuration sets on every broker.
CONFIGS: dict[str, dict[str, str]] = {CHECKLIST: {LAG: str(KAFKA_DEFAULT_LAG_MS)},
                                      TR: {LAG: str(TR_LAG_MS)}}
#: How the tables and verdicts name them.
LABELS = {CHECKLIST: "deploy checklist", TR: "TR test value", None: "as found"}
#: Where the file as DRL-0 found it is kept while the drills run.
FOUND_SUFFIX = ".drills-found"
#: Where a switch keeps the file it changed (apply_properties' backup; removed at the restore).
SWITCH_SUFFIX = ".drills-switch.bak"


def properties(settings: dict[str, str]) -> str:
    """The ``.properties`` text a switch applies."""
    return "".join(f"{k}={v}\n" for k, v in settings.items())


def started_with(lines: str) -> dict[str, str]:
    """A broker's settings as DRL-0-broker-config.sh prints them (``key=value`` lines of its
    properties file), with Kafka's defaults for the keys the file leaves out."""
    return {**KAFKA_DEFAULTS, **parse_properties(lines)}


def needs_switch(current: dict[str, str], wanted: dict[str, str]) -> bool:
    """Does a broker started with ``current`` (started_with) need ``wanted`` applied?"""
    return any(current.get(k, KAFKA_DEFAULTS.get(k)) != v for k, v in wanted.items())


def config_path(h: Host) -> str:
    """A broker's server.properties (Kafka's own layout under kafka_home)."""
    return f"{h.get('kafka_home', '/opt/kafka')}/config/server.properties"


def lag_ms(settings: dict[str, str]) -> int | None:
    """The follower lag allowance of ``settings`` in ms (None: not a whole number)."""
    v = str(settings.get(LAG, KAFKA_DEFAULTS[LAG]))
    return int(v) if v.isdigit() else None


def outlasting(lengths_s, settings: dict[str, str]) -> list[float]:
    """The fault lengths that outlast the lag allowance of ``settings``: only for those can a
    larger allowance (the TR's) change what happens, since a follower stalled for less stays
    in the ISR under either value."""
    lag = lag_ms(settings)
    return [x for x in lengths_s if lag is not None and x * 1000 > lag]
