"""What a drill reports: its table (median and range over the runs, per cluster), the
producer's rate before each fault, what the producer gave up on, the transcripts and its
claim's verdict; why a drill did not run; the chapter's summary."""
from __future__ import annotations

import re
from collections import Counter

from ...measure.spread import spread
from ..record import agrees
from . import configs as cf
from .configs import KAFKA_DEFAULT_LAG_MS, LAG
from .harness import GROUP_MEMBERS, WAITING, Harness
from .runs import Outcome
from .sides import CLUSTERS

#: The guide's claims each drill checks (docs/data/claims.yaml).
CLAIMS = {"DRL-1": "guide.drill-nfs-pause", "DRL-2": "guide.drill-lif-migration",
          "DRL-3": "guide.drill-volume-full", "DRL-4": "guide.drill-partition",
          "DRL-5": "guide.drill-host-loss", "DRL-6": "guide.drill-storage-failover",
          "DRL-7": "guide.drill-soft-mount"}
#: What exercised each drill (record.Recorder.evidence): Kafka, its verifiable producer and
#: consumer and Linux (link down, nftables dropping the LIF's packets, SIGKILL) are real
#: everywhere; the NFS client's stall when its server goes silent (and a soft mount's EIO) is
#: the lab's NFS client layer's, a LIF move and its one-second pause the ONTAP stand-in's, a full
#: volume the stand-in's space accounting, the NFSv4 lock lease the stand-in's lease, a
#: takeover and giveback the stand-in's (their times are its model; the NFS layer's
#: reconnection after them is its own code, measured).
EVIDENCE = {
    "DRL-1": dict(real=["kafka", "kafka-clients", "linux"], model=["nfs-layer"]),
    "DRL-2": dict(real=["kafka", "kafka-clients", "linux"],
                  model=["ontap-stand-in", "modelled-timing"], also=["nfs-layer"]),
    "DRL-3": dict(real=["kafka", "kafka-clients", "linux"], model=["ontap-space"],
                  also=["nfs-layer"]),
    "DRL-4": dict(real=["kafka", "kafka-clients", "linux"], also=["nfs-layer"]),
    "DRL-5": dict(real=["kafka", "kafka-clients", "linux"], also=["nfs-layer", "ontap-lease"]),
    "DRL-6": dict(real=["kafka", "kafka-clients", "linux"],
                  model=["ontap-stand-in", "modelled-timing"], also=["nfs-layer"]),
    "DRL-7": dict(real=["kafka", "kafka-clients", "linux"], model=["nfs-layer"]),
}



def not_run(harness: Harness, proc: str, why: str, rec=None) -> None:
    (rec or harness.rec).text(proc, "", f"Not run on target {harness.t.name}: {why}.")


def report(harness: Harness, proc: str, outcomes: list[Outcome | None], what: str) -> None:
    """The drill's table (per cluster: median, min-max, n), its load record and its
    claim's verdict."""
    done = sorted((o for o in outcomes if o is not None), key=_order)
    if not done:
        return
    rows, loads = [], []
    several = any(o.length is not None for o in done)
    extras = sorted({k for o in done for r in o.runs for k in r.extra
                     if not k.startswith("_")})
    for o in done:
        rs = o.runs
        rows.append(([f"{o.length:g}", cf.LABELS[o.config], o.settings.get(LAG, "-")]
                     if several else [])
                    + [o.cluster.upper(), len(rs), o.check.acked, len(o.check.lost),
                     o.check.duplicates, len(o.producer.errors),
                     _spread([r.detect_s for r in rs], "never"),
                     _spread([r.resume_s for r in rs], "-"),
                     _spread([r.stall_s for r in rs], "-"),
                     _spread([r.isr_s for r in rs], "never shrank")]
                    + [_spread([r.extra.get(k) for r in rs], "-") for k in extras])
        loads += [{"name": (f"{o.cluster}, {o.length:g} s, {cf.LABELS[o.config]}, run "
                            f"{r.n + 1}" if several else f"{o.cluster} run {r.n + 1}"),
                   "unit": "records/s", "target": o.target_rate, "achieved": round(r.rate, 1)}
                  for r in rs]
    lead = ["Fault length (s)", "Configuration", LAG] if several else []
    header = lead + ["Cluster", "Runs", "Acknowledged", "Lost", "Duplicates", "Refused",
              "Detected after (s)", "Producers resumed after (s)",
              "Longest stall of a partition (s)", "ISR full again after (s)"] + \
        [k[0].upper() + k[1:] for k in extras]
    harness.rec.table(proc, f"{what}: median (min-max, n) over the runs", header, rows,
                      note="Times count from the fault. Detected: the cluster took broker 1 "
                           "out of an in-sync replica set or fenced it. Producers resumed: the "
                           "last partition whose acknowledgements had stopped for more than a "
                           "second acknowledged again. Lost: acknowledged records the "
                           "verifiable consumer did not read back. Refused: sends the "
                           "producer gave up on (not acknowledged, so not owed).",
                      key=lead[:2] + ["Cluster", "Lost", "Producers resumed after (s)"]
                      + ([WAITING[0].upper() + WAITING[1:]] if WAITING in extras else []))
    group_report(harness, proc, done, what)
    if several:
        length_chart(harness, proc, done)
    if not any(_tr_lag(o) for o in done):
        tr_value_note(harness, proc, done)
    harness.rec.load(proc, f"{what}: the producers' rate before each fault, "
                           f"{harness.producers} together (from when they were back at their "
                           "pace after the previous run, at most 10 s)", loads)
    for o in done:
        at = f" ({o.length:g} s, {cf.LABELS[o.config]})" if several else ""
        if o.producer.errors:
            harness.rec.text(proc, "", f"{o.cluster.upper()}{at}: the producer gave up on "
                             f"{len(o.producer.errors)} send(s), which the cluster never "
                             "acknowledged: " + "; ".join(
                                 f"{n} x {k}" for k, n in refusals(o.producer.errors)) + ".")
        tr = o.transcripts
        harness.rec.show(proc, f"{o.cluster.upper()}{at}: the verifiable producer's summary",
                         tr["stop"], show=False)
        harness.rec.show(proc, f"{o.cluster.upper()}{at}: everything read back", tr["check"],
                         show=False)
    _verdict(harness, proc, done)


def refusals(errors: list[dict]) -> list[tuple[str, int]]:
    """The producer's refused sends by kind, most first: its exception and its message with
    every number in it as <n> (a message names how many records expired and after how long,
    so that each count would otherwise be a kind of its own)."""
    kinds = Counter(f"{e.get('exception', '?')}: "
                    f"{re.sub(r'[0-9]+(?:[.][0-9]+)?', '<n>', str(e.get('message', '')))[:160]}"
                    for e in errors)
    return kinds.most_common()


def group_report(harness: Harness, proc: str, done: list[Outcome], what: str) -> None:
    """The consumer group through each fault: per load, median (min-max, n) over its runs."""
    several = any(o.length is not None for o in done)
    rows = []
    for o in done:
        gs = [r.group for r in o.runs if r.group is not None]
        if not gs:
            continue
        rows.append(([f"{o.length:g}", cf.LABELS[o.config]] if several else [])
                    + [o.cluster.upper(), len(gs), sum(g.unread for g in gs),
                       _spread([g.behind_most for g in gs], "-"),
                       _spread([g.caught_up_s for g in gs], "never late"),
                       _spread([g.e2e_p50_s for g in gs], "-"),
                       _spread([g.e2e_p99_s for g in gs], "-"),
                       _spread([g.e2e_max_s for g in gs], "-"),
                       _spread([g.rebalances for g in gs], "-")])
    if not rows:
        return
    lead = ["Fault length (s)", "Configuration"] if several else []
    harness.rec.table(
        proc, f"{what}: the consumer group ({GROUP_MEMBERS} members) through each fault, "
              "median (min-max, n) over the runs",
        lead + ["Cluster", "Runs", "Unread", "Most records behind", "Caught up after (s)",
                "End-to-end p50 (s)", "End-to-end p99 (s)", "End-to-end max (s)",
                "Rebalances"], rows,
        note="The group reads the drills topic from its end while the drill runs, as an "
             "application would. Unread: acknowledged records of the run the group never "
             "received. Behind: acknowledged records it had not received yet (its lag), at the "
             "most. Caught up: from the fault to the last record it received more than a "
             "second after it was due to be sent. End-to-end: from when the producer was due to "
             "send a record (it keeps a steady pace) to the group receiving it, for the "
             "records due from the fault to the run's end. Rebalances: times the group's "
             "partitions were taken away and handed out again.",
        key=lead + ["Cluster", "Unread", "Caught up after (s)", "End-to-end p99 (s)"])


def length_chart(harness: Harness, proc: str, done: list[Outcome]) -> None:
    """For a drill at several fault lengths: how late the records reached the consumer
    group (end-to-end p99) and when the producers resumed, against the fault's length, one
    series per cluster and configuration (median, min-max over the runs): what an outage of
    a given length costs, at a glance."""
    for title, y_label, value in (
            ("End-to-end latency p99 by fault length: how late the consumer group received "
             "the records due during the fault (median, min-max)",
             "end-to-end p99 (s, lab)", lambda r: r.group.e2e_p99_s if r.group else None),
            ("Producers resumed after, by fault length (median, min-max)",
             "producers resumed after (s, lab)", lambda r: r.resume_s)):
        series = []
        for c in CLUSTERS:
            for config in dict.fromkeys(o.config for o in done):
                xs, ys, lo, hi = [], [], [], []
                for o in sorted((o for o in done if o.cluster == c and o.config == config),
                                key=lambda o: o.length or 0):
                    got = [v for v in map(value, o.runs) if v is not None]
                    if not got:
                        continue
                    sp = spread(got)
                    xs.append(o.length)
                    ys.append(round(sp.median, 2))
                    lo.append(round(sp.low, 2))
                    hi.append(round(sp.high, 2))
                if xs:
                    series.append({"name": f"{c.upper()}, {cf.LABELS[config]}", "x": xs,
                                   "y": ys, "low": lo, "high": hi})
        if series:
            harness.rec.chart(proc, title, {"type": "line", "x_label": "fault length (s)",
                                            "y_label": y_label, "series": series})


def group_clause(done: list[Outcome]) -> str | None:
    """What the verdict says of the consumer group: whether it received every acknowledged
    record, and its worst end-to-end latency (p99, median over the runs) and how long it took
    to catch up at the worst."""
    gs = [r.group for o in done for r in o.runs if r.group is not None]
    if not gs:
        return None
    unread = sum(g.unread for g in gs)
    p99 = [g.e2e_p99_s for g in gs if g.e2e_p99_s is not None]
    caught = [g.caught_up_s for g in gs if g.caught_up_s is not None]
    return (f"the consumer group ({GROUP_MEMBERS} members) "
            + ("received every acknowledged record while the drill ran" if unread == 0 else
               f"did not receive {unread} acknowledged records while the drill ran")
            + (f"; its end-to-end latency (p99, from each record's due send time at the "
               f"producers' pace: arithmetic on real timestamps) was "
               f"{spread(p99).median:.1f} s (median of {len(p99)} runs), {max(p99):.1f} s at "
               "the worst" if p99 else "")
            + (f"; it caught up at most {max(caught):.1f} s after a fault" if caught else
               "; no record reached it more than a second late"))


def _verdict(harness: Harness, proc: str, done: list[Outcome]) -> None:
    lost = sum(len(o.check.lost) for o in done)
    held = all(o.held for o in done)
    whole = all(o.unchanged for o in done)
    recovered = all(r.resume_s is not None for o in done for r in o.runs)
    n = sum(len(o.runs) for o in done)
    refused = sum(len(o.producer.errors) for o in done)
    ev = harness.rec.evidence(**EVIDENCE[proc])
    if not held:
        verdict = "not-measured"
    else:
        verdict = agrees(ev) if lost == 0 and recovered else "differs"
    harness.rec.verdict(
        proc, CLAIMS[proc], verdict, tr="-", evidence=ev,
        lab=f"{lost} acknowledged records lost in {n} runs "
            f"({', '.join(dict.fromkeys(o.cluster.upper() for o in done))}); producers "
            + ("resumed after every fault" if recovered else "did not resume after every "
               "fault")
            + (f"; the producer gave up on {refused} sends, never acknowledged" if refused
               else ""),
        why=("the producer did not hold its rate before every fault" if not held else
             f"the verifiable consumer read back every acknowledged record of {n} runs"
             if lost == 0 else f"{lost} acknowledged records were not read back")
        + ("" if whole else "; the lab was not as the drill found it afterwards")
        + "".join(f"; {c}" for c in lag_clauses(done))
        + "".join(f"; {c}" for c in [group_clause(done)] if c),
        action="keep acks=all with min.insync.replicas=2 and three replicas"
        + (f"; keep {LAG} at Kafka's default ({KAFKA_DEFAULT_LAG_MS // 1000} s), not the TR's "
           "test value" if any(_tr_lag(o) for o in done) else ""),
        load_held=held)


def _order(o: Outcome) -> tuple:
    """Table order: by fault length, the checklist's configuration before the TR's, DAS
    before NFS."""
    rank = {cf.CHECKLIST: 0, cf.TR: 1}
    return (o.length or 0, rank.get(o.config, 2), CLUSTERS.index(o.cluster))


def _tr_lag(o: Outcome) -> bool:
    """Did broker 1 run with a follower lag allowance above Kafka's default (the TR's)?"""
    lag = cf.lag_ms(o.settings) if o.settings else None
    return lag is not None and lag > KAFKA_DEFAULT_LAG_MS


def lag_clauses(done: list[Outcome]) -> list[str]:
    """What the verdict says of the configurations the drill ran on (as DRL-0 read them from
    broker 1 at the time): the follower lag allowance; where the drill ran on both Kafka's
    default and the TR's value, what the TR's changed at each length both ran; where it ran
    on the TR's only, whether its longest fault outlasted Kafka's default (only then could
    the setting decide a run)."""
    values = sorted({o.settings.get(LAG) for o in done if o.settings.get(LAG)},
                    key=lambda v: (len(v), v))
    if not values:
        return []
    out = [f"broker 1 ran with {LAG}={'/'.join(values)}"]
    tr = [o for o in done if _tr_lag(o)]
    if not tr:
        return out
    if len(tr) < len(done):
        return out + side_by_side(done)
    out.append("that is the TR's test setting, under which a follower that stops fetching "
               f"stays in the ISR (Kafka's default: {KAFKA_DEFAULT_LAG_MS} ms)")
    longest = max((r.heal - r.fault for o in done for r in o.runs if r.heal), default=None)
    if longest is not None:
        out.append(f"the longest fault lasted {longest:.1f} s, " + (
            "shorter than that default, so the setting did not decide these runs"
            if longest < KAFKA_DEFAULT_LAG_MS / 1000 else
            "longer than that default: under it, a follower that stopped fetching for that "
            "long without being fenced would have left the ISR"))
    return out


def side_by_side(done: list[Outcome]) -> list[str]:
    """For each fault length run on both a lag allowance at most Kafka's default and the
    TR's: in how many runs broker 1 left the ISR, and how many partitions were still waiting
    when the fault ended (median), under each."""
    out = []
    for x in sorted({o.length for o in done if o.length is not None and _tr_lag(o)}):
        low = [o for o in done if o.length == x and not _tr_lag(o)]
        high = [o for o in done if o.length == x and _tr_lag(o)]
        if not low:
            continue
        (a, n, wa, parts), (b, m, wb, _) = _isr_and_waiting(low), _isr_and_waiting(high)
        out.append(f"at {x:g} s, broker 1 left the ISR in {a} of {n} runs with Kafka's "
                   f"default and in {b} of {m} with the TR's value; partitions still waiting "
                   f"when the fault ended: {wa} and {wb} of {parts} (median)")
    return out


def _isr_and_waiting(outcomes: list[Outcome]) -> tuple[int, int, str, int]:
    runs = [r for o in outcomes for r in o.runs]
    waiting = [r.extra[WAITING] for r in runs if WAITING in r.extra]
    parts = max((r.partitions for r in runs), default=0)
    return (sum(1 for r in runs if r.shrank), len(runs),
            f"{spread(waiting).median:g}" if waiting else "-", parts)


def tr_value_note(harness: Harness, proc: str, outcomes: list[Outcome | None]) -> None:
    """Why a drill did not also run with the TR's follower lag allowance, from its runs. That
    setting decides a run only where broker 1 held a partition back for longer than the
    checklist's allowance without being fenced first (a fenced broker leaves every in-sync
    replica set whatever the setting says; a partition that waited less never reached it).
    The note says which held in every run, or names the runs where neither did."""
    runs = [r for o in outcomes if o is not None for r in o.runs]
    if not runs:
        return
    lag_s = (cf.lag_ms(harness.configs[cf.CHECKLIST]) or KAFKA_DEFAULT_LAG_MS) / 1000
    fenced = [r for r in runs if r.fenced_s is not None and r.fenced_s < lag_s]
    ids = {id(r) for r in fenced}           # by identity: two runs may measure alike
    short = [r for r in runs if id(r) not in ids and r.stall_s < lag_s]
    if len(fenced) == len(runs):
        harness.rec.text(proc, "", f"Not run beside it with the TR's {LAG}: in every run "
                         f"({len(runs)}) the controller fenced broker 1 "
                         f"{spread([r.fenced_s for r in fenced]).fmt(1)} s after the fault "
                         f"began, before the checklist's allowance ({lag_s:g} s) ran out, and a "
                         "fenced broker leaves every in-sync replica set whatever that setting "
                         "says.")
    elif len(fenced) + len(short) == len(runs):
        longest = max(r.stall_s for r in short)
        harness.rec.text(proc, "", f"Not run beside it with the TR's {LAG}: in {len(short)} "
                         f"of {len(runs)} runs no partition waited as long as the checklist's "
                         f"allowance ({lag_s:g} s; the longest wait was {longest:.1f} s)"
                         + (f", and in the other {len(fenced)} the controller fenced broker 1 "
                            "before it ran out" if fenced else "")
                         + ", so that setting could not change the outcome.")
    else:
        harness.rec.text(proc, "", f"Not run beside it with the TR's {LAG}; in "
                         f"{len(runs) - len(fenced) - len(short)} of {len(runs)} runs a "
                         f"partition waited longer than the checklist's allowance ({lag_s:g} s) "
                         "and the controller had not fenced broker 1 within it, so in those "
                         "runs that setting could have changed the outcome.")


def lengths_text(xs: list[float]) -> str:
    """``10, 60 and 180 s``"""
    words = [f"{x:g}" for x in xs]
    return (", ".join(words[:-1]) + " and " + words[-1] if len(words) > 1 else words[0]) + " s"


def summary(harness: Harness) -> None:
    """What holds on every run (what nbval compares): per drill and cluster, whether any
    acknowledged record was lost and whether the lab was left as found."""
    for o in sorted(harness.outcomes, key=lambda o: (o.drill, CLUSTERS.index(o.cluster))):
        print(f"{o.drill} {o.cluster}: {len(o.runs)} runs, acknowledged records lost: "
              f"{'none' if not o.check.lost else len(o.check.lost)}, lab as found: "
              f"{'yes' if o.unchanged else 'no'}")
    if not harness.outcomes:
        print("planned only" if harness.dry else "no drill ran")


def _spread(values, none: str) -> str:
    got = [v for v in values if v is not None]
    if not got:
        return none
    sp = spread(got)
    # Counts (records behind, rebalances, partitions) as whole numbers, times to a tenth.
    whole = all(isinstance(v, int) for v in got) and float(sp.median).is_integer()
    s = sp.fmt(0 if whole else 1)
    return s if len(got) == len(values) else f"{s}; {len(values) - len(got)} x {none}"
