"""Targets: where the runbook's procedures run. ``open(name)`` reads
playbook/inventory/<name>/ and returns a LabTarget (inventory var target_kind: lab) or an
SshTarget (real systems; state-changing steps need confirm=True, otherwise they are planned).
"""
from __future__ import annotations

from .base import Result, ResultSet, Target, TargetError

__all__ = ["open", "Result", "ResultSet", "Target", "TargetError"]


def open(name: str = "lab", confirm: bool = False, echo: bool = True, **kw) -> Target:  # noqa: A001
    from .. import inventory
    inv = inventory.load(name)
    if inv.kind == "lab":
        from .lab import LabTarget
        return LabTarget(inv, confirm=True, echo=echo, **kw)
    from .ssh import SshTarget
    return SshTarget(inv, confirm=confirm, echo=echo)
