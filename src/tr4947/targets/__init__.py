"""Targets: where the runbook's procedures run. ``open(name)`` reads
playbook/inventory/<name>/ and returns a Target for it: the embedded lab (``target_kind: lab``,
built and torn down by the lab target) or a real system. Both are reached the same way (SSH,
REST, the AWS CLI); state-changing steps need ``confirm=True``, except on the lab, which
exists to be changed.
"""
from __future__ import annotations

from .base import Target
from .result import Result, ResultSet, TargetError

__all__ = ["open", "Result", "ResultSet", "Target", "TargetError"]


def open(name: str = "lab", confirm: bool = False, echo: bool = True) -> Target:  # noqa: A001
    from .. import inventory
    inv = inventory.load(name)
    if inv.kind == "lab":
        from .lab import LabTarget
        return LabTarget(inv, echo=echo)
    return Target(inv, confirm=confirm, echo=echo)
