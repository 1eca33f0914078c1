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

import math
from dataclasses import dataclass
from numbers import Real


def _count(name: str, v, what: str) -> int:
    """A whole number >= 1 (brokers, replication factor); 3.0 is fine, 2.5, True, NaN are not."""
    if isinstance(v, bool) or not isinstance(v, Real) or not math.isfinite(v) \
            or float(v) != int(v):
        raise ValueError(f"{name}: {v!r} is not allowed (must be a whole number >= 1: {what})")
    if v < 1:
        raise ValueError(f"{name}: {v!r} is not allowed (must be >= 1: {what})")
    return int(v)


def _rate(name: str, v) -> float:
    """A throughput: finite and >= 0, in any unit used consistently."""
    if isinstance(v, bool) or not isinstance(v, Real) or not math.isfinite(v):
        raise ValueError(f"{name}: {v!r} is not allowed (must be a finite number >= 0, "
                         f"a throughput in any unit)")
    if v < 0:
        raise ValueError(f"{name}: {v!r} is not allowed (must be >= 0: a throughput cannot be "
                         f"negative)")
    return float(v)


def _check(brokers=None, r=None) -> None:
    if brokers is not None:
        _count("brokers", brokers, "the number of brokers in the cluster")
    if r is not None:
        _count("r", r, "the replication factor; every partition has at least its leader")
    # Kafka refuses to create a topic with more replicas than brokers
    # (INVALID_REPLICATION_FACTOR), so such a layout cannot exist.
    if brokers is not None and r is not None and r > brokers:
        raise ValueError(f"r: replication factor {r} is not allowed with {brokers} brokers "
                         f"(must be <= brokers: each replica is on a different broker)")


def storage_per_broker(t_cluster: float, brokers: int, r: int) -> float:
    """Write throughput each broker's storage receives."""
    t_cluster = _rate("t_cluster", t_cluster)
    _check(brokers, r)
    return t_cluster / brokers * r


def max_cluster_throughput(storage_aggregate: float, r: int) -> float:
    """Producer ceiling of a cluster whose storage absorbs storage_aggregate in total."""
    storage_aggregate = _rate("storage_aggregate", storage_aggregate)
    _check(r=r)
    return storage_aggregate / r


def storage_aggregate_from_measurement(t_cluster_measured: float, r_measured: int) -> float:
    """The aggregate storage write throughput implied by a measured producer rate."""
    t_cluster_measured = _rate("t_cluster_measured", t_cluster_measured)
    _count("r_measured", r_measured, "the replication factor of the measurement")
    return t_cluster_measured * r_measured


def table(t_cluster_measured: float, r_measured: int, factors=(3, 2, 1)) -> list[tuple[int, float]]:
    """Anticipated producer throughput per replication factor, from one measurement."""
    factors = [_count("factors", r, "each a replication factor") for r in factors]
    agg = storage_aggregate_from_measurement(t_cluster_measured, r_measured)
    return [(r, round(max_cluster_throughput(agg, r), 2)) for r in factors]


@dataclass
class Plan:
    """The formula applied to one layout (any throughput unit, used consistently)."""
    t_cluster: float                 # producer throughput into the cluster
    brokers: int
    r: int
    storage_aggregate: float | None = None   # what the storage behind all brokers sustains

    def __post_init__(self):
        # Refused when made, not on first use: a Plan that exists is a layout that can exist.
        _rate("t_cluster", self.t_cluster)
        _check(self.brokers, self.r)
        if self.storage_aggregate is not None:
            _rate("storage_aggregate", self.storage_aggregate)

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
