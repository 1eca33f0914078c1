"""Targets: where the runbook's procedures run. ``open(name)`` reads
playbook/inventory/<name>/ and returns a Target for it: the embedded lab (``target_kind: lab``,
built and torn down by the lab target) or a real system. Both are reached the same way (SSH,
REST, the AWS CLI); state-changing steps need ``confirm=True``, except on the lab, which
exists to be changed.
"""
from __future__ import annotations

import os

from ..inventory import Inventory
from .base import Target
from .result import Result, ResultSet, TargetError

__all__ = ["open", "Result", "ResultSet", "Target", "TargetError"]


def open(target: "str | os.PathLike | Inventory" = "lab", confirm: bool = False,  # noqa: A001
         echo: bool = True) -> Target:
    """The Target for an inventory: a loaded Inventory, or its name or path (see
    tr4947.inventory.resolve)."""
    from .. import inventory
    inv = target if isinstance(target, inventory.Inventory) else inventory.load(target)
    if inv.kind == "lab":
        from .lab import LabTarget
        return LabTarget(inv, echo=echo)
    return Target(inv, confirm=confirm, echo=echo)
