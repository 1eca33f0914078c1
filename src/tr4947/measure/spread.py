"""Lab figures that a chapter compares are measured several times and shown with their
spread: the median, the lowest and highest value, and how many runs there were."""
from __future__ import annotations

import statistics
from dataclasses import dataclass


@dataclass(frozen=True)
class Spread:
    values: tuple[float, ...]

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def median(self) -> float:
        return statistics.median(self.values)

    @property
    def low(self) -> float:
        return min(self.values)

    @property
    def high(self) -> float:
        return max(self.values)

    def fmt(self, digits: int = 1, unit: str = "") -> str:
        """``12.3 (11.9-13.0, n=3)``: the median, then min-max over n runs."""
        u = f" {unit}" if unit else ""
        f = f"{{:.{digits}f}}"
        if self.n == 1:
            return f"{f.format(self.median)}{u} (n=1)"
        return (f"{f.format(self.median)}{u} ({f.format(self.low)}-{f.format(self.high)}, "
                f"n={self.n})")

    def overlaps(self, other: "Spread", digits: int | None = None) -> bool:
        """Do the two ranges overlap? Then the runs cannot tell the two cases apart.
        ``digits``: compare at the precision the figures are shown with, so ranges that a
        reader sees touching (15.9-17.7 and 14.9-15.9) are not called apart."""
        r = (lambda v: round(v, digits)) if digits is not None else (lambda v: v)
        return r(self.low) <= r(other.high) and r(other.low) <= r(self.high)

    def as_dict(self, unit: str = "", digits: int = 3) -> dict:
        """The figure as a verdict or a load record carries it."""
        return {"median": round(self.median, digits), "low": round(self.low, digits),
                "high": round(self.high, digits), "n": self.n, "unit": unit}


def ratio(numerator: Spread, denominator: Spread, unit: str, digits: int = 2) -> dict:
    """The ratio of two figures' medians, as a verdict carries it (no range: the runs of the
    two cases are not paired)."""
    return {"median": round(numerator.median / denominator.median, digits)
            if denominator.median else None, "low": None, "high": None,
            "n": min(numerator.n, denominator.n), "unit": unit}


def single(value: float, unit: str, digits: int = 1) -> dict:
    """One run's figure, as a verdict carries it."""
    return {"median": round(value, digits), "low": None, "high": None, "n": 1, "unit": unit}


def spread(values) -> Spread:
    vals = tuple(float(v) for v in values)
    if not vals:
        raise ValueError("no values to summarise")
    return Spread(vals)


def series(name: str, x: list, spreads: list[Spread], digits: int = 2) -> dict:
    """A chart series of medians with their min-max (drawn as error bars)."""
    return {"name": name, "x": list(x), "y": [round(s.median, digits) for s in spreads],
            "low": [round(s.low, digits) for s in spreads],
            "high": [round(s.high, digits) for s in spreads],
            "n": [s.n for s in spreads]}
