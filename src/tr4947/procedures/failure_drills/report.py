"""What a drill reports: its table (median and range over the runs, per cluster), the
producer's rate before each fault, what the producer gave up on, the transcripts and its
claim's verdict; why a drill did not run; the chapter's summary."""
from __future__ import annotations

from ...measure.spread import spread
from ..record import agrees
from . import configs as cf
from .configs import KAFKA_DEFAULT_LAG_MS, LAG
from .harness import WAITING, Harness
from .runs import Outcome
from .sides import CLUSTERS

#: The guide's claims each drill checks (docs/data/claims.yaml).
CLAIMS = {"DRL-1": "guide.drill-nfs-pause", "DRL-2": "guide.drill-lif-migration",
          "DRL-3": "guide.drill-volume-full", "DRL-4": "guide.drill-partition",
          "DRL-5": "guide.drill-host-loss", "DRL-6": "guide.drill-storage-failover"}
#: What exercised each drill (record.Recorder.evidence): Kafka, its verifiable producer and
#: consumer and Linux (link down, SIGKILL) are real everywhere; an NFS pause is the lab's NFS
#: client layer's hook, a LIF move and its one-second pause the ONTAP stand-in's, a full
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
    harness.rec.load(proc, f"{what}: the producer's rate before each fault (from the end of "
                           "the settling after the previous run, at most 10 s)", loads)
    for o in done:
        at = f" ({o.length:g} s, {cf.LABELS[o.config]})" if several else ""
        if o.producer.errors:
            kinds: dict[str, int] = {}
            for e in o.producer.errors:
                k = f"{e.get('exception', '?')}: {str(e.get('message', ''))[:160]}"
                kinds[k] = kinds.get(k, 0) + 1
            harness.rec.text(proc, "", f"{o.cluster.upper()}{at}: the producer gave up on "
                             f"{len(o.producer.errors)} send(s), which the cluster never "
                             "acknowledged: " + "; ".join(f"{n} x {k}" for k, n in
                                                         kinds.items()) + ".")
        tr = o.transcripts
        harness.rec.show(proc, f"{o.cluster.upper()}{at}: the verifiable producer's summary",
                         tr["stop"], show=False)
        harness.rec.show(proc, f"{o.cluster.upper()}{at}: everything read back", tr["check"],
                         show=False)
    _verdict(harness, proc, done)


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
        + "".join(f"; {c}" for c in lag_clauses(done)),
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
    parts = max((r.extra.get("_partitions", 0) for r in runs), default=0)
    return (sum(1 for r in runs if r.shrank), len(runs),
            f"{spread(waiting).median:g}" if waiting else "-", parts)


def fenced_note(harness: Harness, proc: str, outcomes: list[Outcome | None]) -> None:
    """Why a drill that cuts broker 1 off did not also run with the TR's follower lag
    allowance, from its runs: the controller fenced broker 1 (which takes it out of every
    ISR, whatever that allowance) before the checklist's allowance ran out; or, where it did
    not in some run, that the allowance could have decided that run."""
    runs = [r for o in outcomes if o is not None for r in o.runs]
    if not runs:
        return
    lag_s = (cf.lag_ms(harness.configs[cf.CHECKLIST]) or KAFKA_DEFAULT_LAG_MS) / 1000
    fenced = [r.extra.get("_fenced") for r in runs]
    early = [f for f in fenced if f is not None and f < lag_s]
    if len(early) == len(runs):
        harness.rec.text(proc, "", f"Not run beside it with the TR's {LAG}: in every run "
                         f"({len(runs)}) the controller fenced broker 1 {spread(early).fmt(1)} "
                         f"s after the cut, before the checklist's allowance ({lag_s:g} s) ran "
                         "out, and a fenced broker leaves every in-sync replica set whatever "
                         "that setting says.")
    else:
        harness.rec.text(proc, "", f"Not run beside it with the TR's {LAG}; in "
                         f"{len(runs) - len(early)} of {len(runs)} runs the controller had "
                         f"not fenced broker 1 within the checklist's allowance ({lag_s:g} s), "
                         "so in those runs that setting could have changed the outcome.")


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
    s = spread(got).fmt(1)
    return s if len(got) == len(values) else f"{s}; {len(values) - len(got)} x {none}"
