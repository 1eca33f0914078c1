"""DRL-0..DRL-7: failure drills. What Kafka on NFS (and on DAS, where the fault exists there)
does when its storage, its network or a whole host fails, with every acknowledged record
checked afterwards.

The practice is that of Kafka's own system tests (kafkatest's replication tests: bounces and
hard kills checked with the verifiable producer and consumer) and of Jepsen: inject the fault
under load, read everything back, report what was lost, not what was sent.

DRL-0  The load and its check. On each cluster a topic with three replicas and
       ``min.insync.replicas=2``. Through every run of a drill, several of Kafka's verifiable
       producers write at a fixed rate with ``acks=all`` (idempotent, retrying) and print
       every acknowledgement; afterwards the verifiable consumer reads the load back. The
       rate is calibrated first: the highest the lab holds with both clusters loaded. Lab only:
       the NFS brokers' volumes are mounted with ``x-lab-nopassthrough`` for the drills (and
       as before afterwards), so that the lab's NFS layer sees every write. Whether broker 1's
       host has ``nft`` is read first: DRL-1 and DRL-7 need it.
       Every drill runs on the deploy checklist's broker settings (Kafka's default follower
       lag allowance, configs.py), switched to in a rolling restart and switched back after.
DRL-1  NFS server unreachable: nftables on broker 1's host drops its traffic to the data LIF
       for a set time, at several lengths; those past the checklist's lag allowance also on
       the TR's value.
DRL-2  LIF migration: the data LIF broker 1 mounts from moves to the partner node, and back.
DRL-3  Volume full: broker 1's volume is set just above what it holds and Kafka's writes fill
       it; the broker stops; the fix (``volume size``) and a restart; the preflight's space
       check before, on the full volume and after the fix.
DRL-4  Network partition: broker 1's host loses its link for a set time (DAS and NFS), at
       several lengths.
DRL-5  Hard host loss: broker 1's host goes off the network and every process on it dies at
       once; the standby takes over its address and node id (DAS: empty disk; NFS: the same
       volume, whose NFSv4 lock the dead client still holds until its lease runs out).
DRL-6  Storage failover: the HA partner takes over the node that owns broker 1's data LIF and
       aggregate (``storage failover takeover``), then gives it back (``giveback``) and the
       LIF goes home, as in every nondisruptive upgrade.
DRL-7  Soft mount (lab only): DRL-1's fault on broker 1's volume mounted ``soft``; its writes
       fail with EIO after the major timeout, the log directory goes offline, the broker stops.

Per run (one fault): time to detect (the cluster takes broker 1 out of an in-sync replica set
or fences it), time until the producer's partitions all acknowledge again, time until every
ISR is full again; what a consumer group reading the topic meanwhile saw (how far behind it
fell, when it caught up, end-to-end latency, rebalances); per drill and cluster: acknowledged
records lost and duplicated, the rate held before each fault, median and range over the runs.
A drill not run on the TR's follower lag allowance says from its runs why that setting could
not have changed it. Everything goes through the Target
(SSH to the hosts, the clustershell to ONTAP); on a real target without ``confirm`` every
step that changes something is planned, and nothing is read that a planned step would make.

The package, in the chapter's order:

    configs             the broker configurations the drills run on (checklist, TR)
    harness             what every drill shares (DRL-0): the clusters, their configuration,
                        the load around a drill, measuring each fault, waiting for recovery,
                        the lab's state
    load                the load's verifiable producers: started, stopped, read back, their
                        pace, a calibration step
    sides, runs         a cluster as the drills use it; a fault and a drill's outcome
    drl1_lif_unreachable .. drl7_soft_mount
                        one module per drill, each a ``run(harness, ...)``
    report              each drill's table, load record and verdict; the summary
"""
from __future__ import annotations

from ... import nfs_timeouts

from . import (drl1_lif_unreachable, drl2_lif_migration, drl3_volume_full, drl4_partition,
               drl5_host_loss, drl6_storage_failover, drl7_soft_mount, report)
from .drl3_volume_full import SPACE_CLAIM, nearly_full_mb
from .drl5_host_loss import LEASE_CLAIM, TAKEOVER_CONFIG
from .drl7_soft_mount import SOFT_CLAIM
from .configs import CONFIGS, LAG
from .harness import (LEAD_CUT_S, LOG_PATTERN, NO_PASSTHROUGH, PRODUCER_CONFIG, SNIP, TOPIC,
                      Harness)
from .report import CLAIMS, EVIDENCE
from .runs import Outcome, Run
from .sides import CLUSTERS, Side, SideRecords, sides

__all__ = ["FailureDrills", "Harness", "Side", "SideRecords", "sides", "Run", "Outcome",
           "nearly_full_mb", "SNIP", "TOPIC", "CLUSTERS", "PRODUCER_CONFIG", "TAKEOVER_CONFIG",
           "NO_PASSTHROUGH", "LEAD_CUT_S", "CLAIMS", "EVIDENCE", "LEASE_CLAIM", "SPACE_CLAIM",
           "SOFT_CLAIM",
           "LOG_PATTERN", "CONFIGS", "LAG"]


class FailureDrills:
    """DRL-0..DRL-7 on the target's ``das`` and ``nfs`` clusters (see the module doc): the
    steps the notebook calls, in its order; what they share is the Harness."""

    def __init__(self, run, repeats: int = 3, rate: float = 300, lead_s: float = 4,
                 settle_s: float = 3, recover_timeout_s: float = 240,
                 configs: dict[str, dict[str, str]] | None = None, producers: int = 1,
                 calibration: tuple[float, float] | None = None,
                 soft: tuple[str, float] | None = None):
        if isinstance(producers, bool) or not isinstance(producers, int) \
                or not 1 <= producers <= 9:
            raise ValueError(f"producers: give the verifiable producers per load, 1 to 9 (each "
                             f"writes values with its own digit); got {producers!r}")
        _rate("rate", rate)
        if calibration is not None:
            _rates(*calibration)
        self.calibration = calibration      # (rate_max, rate_min) for calibrate()
        if soft is not None:
            _soft(*soft)
        self.soft = soft                    # (mount options, soft_drop_s) for soft_mount()
        self.harness = Harness(run, repeats, rate, lead_s, settle_s, recover_timeout_s,
                               configs, producers)

    def prepare(self) -> None:
        """DRL-0: the drills topic, the brokers on the deploy checklist's settings, the
        producer's settings, on the lab the NFS mounts."""
        self.harness.prepare()

    def calibrate(self, rate_max: float | None = None, rate_min: float | None = None,
                  step: float = 0.85) -> None:
        """DRL-0: the drills' rate, the highest the lab holds with both clusters loaded, from
        ``rate_max`` records/s down by ``step`` to ``rate_min`` at most (Harness.calibrate;
        without them: the ``calibration`` given when made)."""
        if rate_max is None or rate_min is None:
            if self.calibration is None:
                raise ValueError("calibrate: give rate_max and rate_min (records/s), here or "
                                 "as FailureDrills(..., calibration=(rate_max, rate_min))")
            rate_max, rate_min = self.calibration
        _rates(rate_max, rate_min)
        if isinstance(step, bool) or not isinstance(step, (int, float)) or not 0 < step < 1:
            raise ValueError(f"step: give the factor each calibration step multiplies the "
                             f"rate by, between 0 and 1 (such as 0.85); got {step!r}")
        self.harness.calibrate(float(rate_max), float(rate_min), float(step))

    def lif_unreachable(self, lengths: list[float]) -> None:
        """DRL-1: broker 1's host cannot reach its NFS server, for each of ``lengths``
        seconds; the lengths past the checklist's follower lag allowance again on the TR's
        value."""
        drl1_lif_unreachable.run(self.harness, _lengths("unreachable_s", lengths))

    def lif_migration(self, away_s: float) -> None:
        """DRL-2: broker 1's data LIF moves to the partner node and, ``away_s`` later, back."""
        drl2_lif_migration.run(self.harness, away_s)

    def volume_full(self, fill_rate: int, full_percent: int, floor_mb: int = 18) -> None:
        """DRL-3: Kafka's writes fill broker 1's volume; the fix and a restart."""
        drl3_volume_full.run(self.harness, fill_rate, full_percent, floor_mb)

    def partition(self, lengths: list[float]) -> None:
        """DRL-4: broker 1's host loses its link, for each of ``lengths`` seconds (on each
        cluster)."""
        drl4_partition.run(self.harness, _lengths("partition_s", lengths))

    def host_loss(self, down_s: float) -> None:
        """DRL-5: broker 1's host fails at once; the spare takes over (on each cluster)."""
        drl5_host_loss.run(self.harness, down_s)

    def storage_failover(self, held_s: float) -> None:
        """DRL-6: the partner takes over broker 1's storage node, gives it back after
        ``held_s``; the LIF goes home."""
        drl6_storage_failover.run(self.harness, held_s)

    def soft_mount(self, options: str | None = None, drop_s: float | None = None) -> None:
        """DRL-7: DRL-1's fault, ``drop_s`` seconds long, on broker 1's volume mounted with
        the soft ``options`` (without them: the ``soft`` given when made)."""
        if options is None or drop_s is None:
            if self.soft is None:
                raise ValueError("soft_mount: give options and drop_s, here or as "
                                 "FailureDrills(..., soft=(options, drop_s)), such as "
                                 "('soft,timeo=50,retrans=1', 60)")
            options, drop_s = self.soft
        _soft(options, drop_s)
        drl7_soft_mount.run(self.harness, options, float(drop_s))

    def restore(self) -> None:
        """After the drills: the brokers' configuration files and the NFS brokers' volumes as
        DRL-0 found them."""
        self.harness.restore()

    def summary(self) -> None:
        """Per drill and cluster: acknowledged records lost, and the lab left as found."""
        report.summary(self.harness)

    def state(self, sides: list[Side] | None = None) -> dict:
        """The lab as a drill must leave it, read-only (Harness.state)."""
        return self.harness.state(sides)

    # What a reader and the tests look at.
    @property
    def rec(self):
        """The run's Recorder."""
        return self.harness.rec

    @property
    def outcomes(self) -> list[Outcome]:
        """Each drill's outcome per cluster, in the order they ran."""
        return self.harness.outcomes

    @property
    def dry(self) -> bool:
        """A dry run: DRL-0's first change was only planned, so is every later step."""
        return self.harness.dry

    @property
    def lab_layer(self) -> bool:
        """The lab's NFS client layer is on the NFS brokers (their status, DRL-7)."""
        return self.harness.lab_layer

    @property
    def found(self) -> dict | None:
        """The lab as DRL-0 left it (None on a dry run)."""
        return self.harness.found


def _rate(name: str, value) -> None:
    """A load's rate: records a second, above 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ValueError(f"{name}: give a rate in records a second, above 0 (such as 1800); "
                         f"got {value!r}")


def _rates(rate_max, rate_min) -> None:
    """A calibration's first rate and its floor."""
    _rate("rate_max", rate_max)
    _rate("rate_min", rate_min)
    if rate_min > rate_max:
        raise ValueError(f"rate_min ({rate_min}) is above rate_max ({rate_max}): the "
                         "calibration steps down from rate_max to rate_min")


def _soft(options, drop_s) -> None:
    """DRL-7's mount options (a soft mount's, with whole-number timeo and retrans) and its
    outage, which must outlast the mount's major timeout."""
    if not isinstance(options, str):
        raise ValueError(f"DRL-7: give its mount options as text, such as "
                         f"'soft,timeo=50,retrans=1'; got {options!r}")
    to = nfs_timeouts.from_options(options)         # a bad timeo or retrans says so
    if not to.soft:
        raise ValueError(f"DRL-7 mount options {options!r}: give a soft mount's options, such as "
                         "'soft,timeo=50,retrans=1' (DRL-1 is the hard mount's drill)")
    if isinstance(drop_s, bool) or not isinstance(drop_s, (int, float)) \
            or drop_s <= to.major_s:
        raise ValueError(f"soft_drop_s: give an outage in seconds longer than the soft "
                         f"mount's major timeout ({to.major_s:g} s for {options!r}: timeo "
                         f"{to.timeo_s:g} s, {to.retrans} retransmissions, each wait "
                         f"timeo longer), or the mount never gives up; got {drop_s!r}")


def _lengths(name: str, lengths) -> list[float]:
    """A drill's fault lengths: one number or a list of them, each above 0 s."""
    xs = [lengths] if isinstance(lengths, (int, float)) else list(lengths)
    bad = [x for x in xs if isinstance(x, bool) or not isinstance(x, (int, float)) or x <= 0]
    if not xs or bad:
        raise ValueError(f"{name}: give fault lengths in seconds, each above 0 (such as "
                         f"[10, 60, 180]); got {lengths!r}")
    return [float(x) for x in xs]
