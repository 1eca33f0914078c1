"""The clusters as the drills use them (Side: broker 1, its standby and, on NFS, broker 1's
volume, export, mount and data LIF), and where a cluster records while both clusters run a
drill at once (SideRecords)."""
from __future__ import annotations

from dataclasses import dataclass, field

from ...inventory import Host
from ...targets.kafka import KafkaCluster, bootstrap_of

CLUSTERS = ("das", "nfs")


@dataclass
class Side:
    """One cluster as the drills use it: the KafkaCluster view (where each broker keeps its
    log: tr4947.targets.kafka), and what the drills fix at the start, since a host-loss
    drill moves broker 1 to its standby: broker 1, its standby, and on NFS broker 1's
    volume, export, mount point, mount options and data LIF."""
    cluster: KafkaCluster
    brokers: list[Host]
    standby: Host | None
    volume: str | None = None               # ONTAP volume of broker 1 (None: DAS)
    export: str | None = None               # lif:/junction
    mountpoint: str | None = None
    options: str = "vers=4.1"               # the inventory's NFS mount options
    lif: dict = field(default_factory=dict)  # the data LIF broker 1 mounts from
    rec: object = None                      # where it records: the run's Recorder, or
                                            # its SideRecords while both clusters run

    @classmethod
    def of(cls, kc: KafkaCluster) -> "Side":
        b1 = kc.brokers[0]
        return cls(kc, list(kc.brokers), kc.standby, kc.volume(b1), kc.export(b1),
                   kc.mountpoint(b1), kc.mount_options(b1), kc.lif(b1))

    @property
    def name(self) -> str:
        return self.cluster.name

    @property
    def controllers(self) -> list[Host]:
        return self.cluster.controllers

    @property
    def b1(self) -> Host:
        return self.brokers[0]

    @property
    def nfs(self) -> bool:
        return self.volume is not None

    def bootstrap(self, skip_b1: bool = False) -> str:
        return bootstrap_of(self.brokers[1:] if skip_b1 else self.brokers)

    @property
    def node_id(self) -> int:
        return self.cluster.node_id(self.b1)

    def log_dir(self, h: Host | None = None) -> str:
        return self.cluster.log_dir(h or self.b1)

    def export_of(self, h: Host) -> str | None:
        return self.cluster.export(h)


def sides(t) -> dict[str, Side]:
    """The inventory's ``das`` and ``nfs`` clusters (those it has), as the drills use them."""
    out = {}
    for c in CLUSTERS:
        if c not in t.inventory.groups:
            continue
        kc = t.cluster(c)
        if len(kc.brokers) < 3:
            raise ValueError(f"cluster {c} of {t.name} needs three brokers for the drills "
                             f"(topic with three replicas); it has {len(kc.brokers)}")
        out[c] = Side.of(kc)
    if not out:
        raise ValueError(f"target {t.name} has neither a das nor an nfs Kafka cluster")
    return out


def _kept(name: str):
    def keep(self, *args, **kwargs) -> None:
        self.calls.append((name, args, kwargs))
    keep.__name__ = name
    keep.__doc__ = f"Recorder.{name}, kept until replay()."
    return keep


class SideRecords:
    """One cluster's records while both clusters run a drill at once (DRL-4, DRL-5): kept
    in order and handed to the run's Recorder when both are done, so each cluster's records
    come together. It has the Recorder's recording methods and nothing else: a misspelt one
    fails at once, in the thread that called it."""

    def __init__(self):
        self.calls: list[tuple[str, tuple, dict]] = []

    console, show, table, text, chart, load, verdict, measured = map(
        _kept, ("console", "show", "table", "text", "chart", "load", "verdict", "measured"))

    def replay(self, rec) -> None:
        for name, args, kwargs in self.calls:
            getattr(rec, name)(*args, **kwargs)

