"""The TR's sizing formula (after AWS's MSK sizing guidance).

Producers write t_cluster into the cluster; with replication factor r every byte is written
by its leader and by r-1 followers, spread over the brokers:

    t_storage = t_cluster / brokers * r          (storage write throughput per broker)
    max(t_cluster) <= max(t_storage) * brokers / r

With one shared storage system behind all brokers, max(t_storage) * brokers is simply what
that system can absorb (its aggregate write throughput), so the cluster's producer ceiling
is that aggregate divided by r.
"""
from __future__ import annotations

from dataclasses import dataclass


def _check(brokers: int | None = None, r: int | None = None) -> None:
    if brokers is not None and brokers < 1:
        raise ValueError(f"brokers must be at least 1, got {brokers}")
    if r is not None and r < 1:
        raise ValueError(f"replication factor must be at least 1, got {r}")
    if brokers is not None and r is not None and r > brokers:
        raise ValueError(f"replication factor {r} exceeds the {brokers} brokers that hold replicas")


def storage_per_broker(t_cluster: float, brokers: int, r: int) -> float:
    """Write throughput each broker's storage receives."""
    _check(brokers, r)
    return t_cluster / brokers * r


def max_cluster_throughput(storage_aggregate: float, r: int) -> float:
    """Producer ceiling of a cluster whose storage absorbs storage_aggregate in total."""
    _check(r=r)
    return storage_aggregate / r


def storage_aggregate_from_measurement(t_cluster_measured: float, r_measured: int) -> float:
    """The aggregate storage write throughput implied by a measured producer rate."""
    _check(r=r_measured)
    return t_cluster_measured * r_measured


def table(t_cluster_measured: float, r_measured: int, factors=(3, 2, 1)) -> list[tuple[int, float]]:
    """Anticipated producer throughput per replication factor, from one measurement."""
    agg = storage_aggregate_from_measurement(t_cluster_measured, r_measured)
    return [(r, round(max_cluster_throughput(agg, r), 2)) for r in factors]


@dataclass
class Plan:
    """The formula applied to one layout (any throughput unit, used consistently)."""
    t_cluster: float                 # producer throughput into the cluster
    brokers: int
    r: int
    storage_aggregate: float | None = None   # what the storage behind all brokers sustains

    @property
    def per_broker(self) -> float:
        """t_storage: write throughput each broker's storage must absorb."""
        return storage_per_broker(self.t_cluster, self.brokers, self.r)

    @property
    def total_writes(self) -> float:
        return self.per_broker * self.brokers

    @property
    def ceiling(self) -> float | None:
        """max(t_cluster) the storage allows (None without a storage figure)."""
        if self.storage_aggregate is None:
            return None
        return max_cluster_throughput(self.storage_aggregate, self.r)

    @property
    def fits(self) -> bool | None:
        return None if self.ceiling is None else self.t_cluster <= self.ceiling

    @property
    def utilisation(self) -> float | None:
        """Share of the storage's write throughput the producers would use."""
        if not self.storage_aggregate:
            return None
        return self.total_writes / self.storage_aggregate
