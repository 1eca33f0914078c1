"""DRL-5, hard host loss: broker 1's host goes off the network and every process on it dies at
once; the standby takes over its address and node id (DAS: an empty disk; NFS: the same volume,
whose NFSv4 lock the dead client holds until its lease runs out), on both clusters at once.
Afterwards broker 1's own host takes broker 1 back."""
from __future__ import annotations

import time
from shlex import quote as q

from ... import kafka_tools as kt
from ...inventory import Host
from ...measure import drills as m
from ...measure.spread import spread
from ...wait import port_open, until
from .. import space_check as sc
from ..record import agrees
from .harness import LEAD_CUT_S, SNIP, TOPIC, Harness
from .report import not_run, report
from .runs import Outcome, Run
from .sides import Side

TAKEOVER_CONFIG = "config/drill-takeover.properties"
LEASE_CLAIM = "guide.drill-lock-lease"
#: The run's columns: when the spare's Kafka started, and how long the dead client's lock
#: held after the failure (None: it was free when the spare asked).
SPARE = "spare started after (s)"
HELD = "lock held after the failure (s)"


def run(harness: Harness, down_s: float) -> None:
    """DRL-5: broker 1's host fails at once; the spare takes over its address and node id.
    As in REC-2's rounds, the host that failed, repaired, is the spare of the next run, so
    the two hosts take turns; after the last run broker 1's own host takes broker 1 back
    (not measured) and the standby is as it was."""
    def one(s: Side) -> Outcome | None:
        if s.standby is None:
            not_run(harness, "DRL-5", f"cluster {s.name} has no standby (kafka_standby: true)",
                             s.rec)
            return None
        home, spare = s.b1, s.standby
        saved = {h.name: dict(h.vars) for h in (home, spare)}
        try:
            return harness.drill("DRL-5", s, lambda s, n, w: _host_loss_run(
                harness, s, n, w, down_s, home), "Host loss",
                after=lambda: _give_back(harness, s, home, spare))
        finally:
            s.brokers[0], s.standby = home, spare
            for h in (home, spare):
                h.vars.clear()
                h.vars.update(saved[h.name])
    outcomes = harness.both(one)
    report(harness, "DRL-5", outcomes, "broker 1's host lost at once; the spare takes over")
    nfs = next((o for o in outcomes if o and o.cluster == "nfs"), None)
    if nfs is not None and nfs.runs:
        _lease_verdict(harness, nfs)


def _lease_verdict(harness: Harness, nfs: Outcome) -> None:
    """The lock-lease claim, from the NFS runs: every run records a verdict. A run whose
    spare had to wait measured how long the dead client's lock held; a run whose spare found
    the lock free measured only that it held less than the spare's start. If no run waited,
    nothing measured the hold, and the verdict says so (not-measured) with when the spares
    started, rather than the ledger losing the row."""
    held = [r.extra.get(HELD) for r in nfs.runs]
    lease = next((r.lease_s for r in nfs.runs if r.lease_s), None)
    got = [h for h in held if h is not None]
    # A run without a wait: the spare asked for the lock only after the lease had run out,
    # and found it free. That agrees with the claim only if it asked that late.
    free = [a for a in (r.extra.get(SPARE) for r in nfs.runs if r.extra.get(HELD) is None)
            if a is not None]
    ev = harness.rec.evidence(real=["kafka", "linux"], model=["ontap-lease"],
                              also=["nfs-layer"])
    action = ("count the lease in an NFS replacement's time, and break the lock only when "
              "the old host is surely down")
    lease_words = f"a {lease} s NFSv4 lease" if lease else "the SVM's NFSv4 lease"
    if not got:
        fs = spread(free) if free else None
        harness.rec.verdict(
            # No lab figure: the spares' start times are not how long the lock held.
            "DRL-5", LEASE_CLAIM, "not-measured", evidence=ev, tr="-", lab="-",
            why=(f"no run measured how long the lock held: in all {len(nfs.runs)} runs the "
                 f"spare started {fs.fmt(1, 's') if fs else '-'} after the failure and found the "
                 f"lock on broker 1's .lock free, against {lease_words}; "
                 "an NFSv4 lease runs from the client's last renewal, not from the failure"
                 + ("; lab: the lab's NFS client renews its lease every two thirds of it (as "
                    "Linux's renewd) and its writes do not renew it (a kernel client's "
                    "NFSv4.1 writes do), so a dead client's lock ran out up to two thirds of "
                    "a lease earlier than on a busy broker" if harness.run.is_lab else "")),
            action=action, load_held=nfs.held)
        return
    sp = spread(got)
    ok = lease is not None and all(lease - 5 <= h <= lease + 5 for h in got) and \
        all(a >= lease - 5 for a in free)
    harness.rec.verdict("DRL-5", LEASE_CLAIM, "not-measured" if not nfs.held else
                        agrees(ev) if ok else "differs", evidence=ev,
                        tr="-", lab=sp.as_dict("s"),
                        why=("the producer did not hold its rate before every fault; "
                             if not nfs.held else "")
                        + f"the lock on broker 1's .lock stayed with the dead client "
                          f"for {sp.fmt(1)} s, against {lease_words} (the "
                          "claim holds within 5 s of it; lab: the ONTAP stand-in's "
                          "model of the lease)"
                        + "".join(f"; in one run the spare started {a:.1f} s after the "
                                  "failure and found the lock free" for a in free),
                        action=action, load_held=nfs.held)


def _host_loss_run(harness: Harness, s: Side, n: int, w, down_s: float, home: Host) -> Run | None:
    """One host loss: broker 1's host now (``s.b1``) fails, the spare (``s.standby``)
    takes over; then the two swap roles for the next run."""
    t, old, new = harness.t, s.b1, s.standby
    address = f"{old.kafka_address}/{old.get('kafka_prefix', 24)}"
    first = n == 0
    kafka_home = old.get("kafka_home", kt.KAFKA_HOME)
    # The spare is identical to broker 1: broker 1's configuration (a standby gets a copy
    # under its own name; broker 1's own host has it already) and, on DAS, an empty disk.
    config = "config/server.properties" if new is home else TAKEOVER_CONFIG
    if new is not home:
        copied = t.put(new.name, f"{kafka_home}/{config}",
                       "(broker 1's config/server.properties)", needs=harness.setup) \
            if harness.dry else t.copy_file(home.name, f"{kafka_home}/config/server.properties",
                                            new.name, f"{kafka_home}/{config}")
        if first:
            s.rec.show("DRL-5", f"{s.name.upper()}: the standby gets broker 1's "
                          "configuration", copied, show=False)
    if not s.nfs:
        t.run(f"rm -rf {q(s.log_dir(new))} && mkdir -p {q(s.log_dir(new))}", new.name,
              check=True, needs=harness.setup)
    at = time.time() + LEAD_CUT_S
    r = t.run_snippet(SNIP + "DRL-5-host-loss.sh", old.name, check=True, needs=harness.setup,
                      DEV=old.get("kafka_interface", "eth0"), ADDRESS=address,
                      AT=f"{at:.3f}", DOWN_SECONDS=down_s)
    if first:
        s.rec.show("DRL-5", f"{s.name.upper()}: {old.name} fails", r)
    run = None if r.planned else Run("DRL-5", s.name, n, at)
    if run is not None:
        w.wait(lambda smp: m.detected_at(smp, at), harness.timeout,
               f"the cluster to notice {old.name}'s loss")
    took = t.run_snippet(SNIP + "DRL-5-take-address.sh", new.name, check=True, needs=r,
                         DEV=new.get("kafka_interface", "eth0"), ADDRESS=address)
    if s.nfs:
        start = t.run_snippet(SNIP + "DRL-5-standby-nfs.sh", new.name, check=True, needs=r,
                              VOLUME=s.export, MOUNTPOINT=s.mountpoint,
                              OPTIONS=harness.options(s), CONFIG=config)
    else:
        start = t.run_snippet(SNIP + "DRL-5-standby-das.sh", new.name, check=True, needs=r,
                              BOOTSTRAP=s.bootstrap(skip_b1=True).split(",")[0],
                              CONFIG=config)
    if first:
        s.rec.show("DRL-5", f"{s.name.upper()}: the standby takes broker 1's address",
                      took)
        s.rec.show("DRL-5", f"{s.name.upper()}: the standby starts as broker 1", start)
    # The spare is broker 1 now, the failed host the spare (this Target's view only).
    new.vars.update(kafka_address=old.kafka_address, kafka_node_id=old.get("kafka_node_id"),
                    kafka_log_dirs=old.get("kafka_log_dirs"))
    s.brokers[0], s.standby = new, old
    if run is None:
        return None
    run.extra[SPARE] = time.time() - at
    if s.nfs:
        _lock_wait(harness, s, run, config)
    s.cluster.wait_serving([new], 240)
    run.heal = time.time()
    harness.recovered(w, run, "the takeover")
    time.sleep(harness.settle_s)
    run.until = time.time()
    if first:
        harness.log_lines("DRL-5", s, run, [new, s.controllers[0]])
    harness.reachable(old.name)
    marks = t.run_snippet(SNIP + "DRL-5-marks.sh", old.name, read_only=True,
                          check=True).stdout.split()
    run.extra["host down for (s)"] = float(marks[1]) - float(marks[0])
    return run


def _lock_wait(harness: Harness, s: Side, run: Run, config: str) -> None:
    """NFS: Kafka on the new broker 1 stops at once while the dead client's lock is held;
    wait for the lock (DRL-5-lock-wait.sh) and start again. How long it was held, from
    the failure, is the run's ``lock held`` figure."""
    t, sb = harness.t, s.b1
    # Either it serves (the lock was free) or it exits: Kafka gives up on a held lock.
    until(lambda: not s.cluster.alive(sb) or port_open(
        sb.kafka_address, int(sb.get("kafka_port", 9092)), 0.5), 120, 0.5,
          f"Kafka on {sb.name} to start or stop")
    # The SVM's lease, read in every run (the verdict needs it whether or not this run
    # waited for the lock).
    lease = t.run_snippet(SNIP + "DRL-5-lease.ontap", harness.ontap, read_only=True,
                          svm=harness.svm)
    got = [x.get("v4-lease-seconds") for x in sc.fields_table(lease.stdout)]
    run.lease_s = int(got[0]) if got and str(got[0]).isdigit() else None
    if s.cluster.alive(sb):
        # The spare started only after the lease had run out: the lock was free.
        run.extra[HELD] = None
        print(f"  DRL-5 nfs run {run.n + 1}: the lock was free when the spare started "
              f"({run.extra[SPARE]:.1f} s after the failure; lease {run.lease_s} s)")
        return
    refused = t.run_snippet(SNIP + "DRL-0-log-lines.sh", sb.name, read_only=True,
                            PATTERN="Failed to acquire lock", LINES=2,
                            SINCE=time.strftime("%Y-%m-%d %H:%M:%S",
                                                time.localtime(run.fault)))
    waited = t.run_snippet(SNIP + "DRL-5-lock-wait.sh", sb.name, check=True, timeout=300,
                           LOCK=f"{s.log_dir()}/.lock", CONFIG=config)
    free = float(waited.stdout.split("lock free at ")[1].split()[0])
    run.extra[HELD] = free - run.fault
    # Shown for the first run that waited (in a run whose spare came up late there was
    # nothing to wait for).
    if harness.once(f"DRL-5 {s.name} lock wait"):
        s.rec.show("DRL-5", "NFS: Kafka on the standby stops at once", refused)
        s.rec.show("DRL-5", "ONTAP: the SVM's NFSv4 lease", lease, prompt="::>")
        s.rec.show("DRL-5", "NFS: the standby waits for the lock, then starts Kafka",
                      waited)


def _give_back(harness: Harness, s: Side, home: Host, spare: Host) -> None:
    """After the last run (not measured): broker 1's own host takes broker 1 back if the
    standby has it (a clean handover), and the standby gives back what it took over, so
    the next drill finds the lab as this one did."""
    t, cur = harness.t, s.b1
    address = home.kafka_address
    other = spare if cur is home else cur
    a = t.run_snippet(SNIP + "DRL-5-restore-standby.sh", other.name, check=True,
                      timeout=300, needs=harness.setup, MOUNTPOINT=s.mountpoint or "",
                      LOG_DIR=s.log_dir(other))
    s.rec.show("DRL-5", f"{s.name.upper()}, afterwards: the standby stops and gives "
                  "back what it took", a, show=False)
    if cur is home or a.planned:
        return
    harness.reachable(home.name)
    s.cluster.move_address(address, cur, home)
    b = t.run_snippet(SNIP + "DRL-5-restore-host.sh", home.name, check=True, timeout=300,
                      VOLUME=s.export or "", MOUNTPOINT=s.mountpoint or "/mnt/data",
                      OPTIONS=harness.options(s))
    s.rec.show("DRL-5", f"{s.name.upper()}, afterwards: broker 1's own host is broker 1 "
                  "again", b, show=False)
    s.brokers[0], s.standby = home, spare
    s.cluster.wait_serving([home], 240)
    w = m.Watch(s.bootstrap(), s.node_id, {TOPIC})
    until(lambda: m.whole(w.poll()), harness.timeout, 0.5,
          f"{s.name}: every ISR full after {home.name} came back")
