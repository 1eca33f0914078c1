"""Lab tests build their own lab: a temporary LAB_STATE and an inventory whose loopback
addresses and ports are moved away from the default lab's, so a developer's running lab
(127.0.1.x, 127.0.2.x, 127.0.10.1:2222) and these tests never collide."""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tr4947 import paths

LAB_INVENTORY = paths.INVENTORY / "lab" / "hosts.yml"


def remapped_inventory(dest: Path, offset: int) -> Path:
    """Copy of the lab inventory with 127.0.N.x -> 127.0.(N+offset).x and SSH port moved."""
    text = LAB_INVENTORY.read_text()
    text = re.sub(r"\b127\.0\.(\d+)\.(\d+)\b",
                  lambda m: f"127.0.{int(m.group(1)) + offset}.{m.group(2)}", text)
    text = text.replace("ansible_port: 2222", f"ansible_port: {2222 + offset}")
    dest.mkdir(parents=True, exist_ok=True)
    f = dest / "hosts.yml"
    f.write_text(text)
    return f


@pytest.fixture
def lab_env(tmp_path_factory, monkeypatch):
    """(inventory path, state root) for one test; TR4947_LAB_STATE points at the root so
    wrappers and child processes agree."""
    base = tmp_path_factory.mktemp("lab")
    root = base / "state"
    monkeypatch.setenv("TR4947_LAB_STATE", str(root))
    return base, root


def require_lab():
    from tr4947.lab.lab import LabError, preflight
    try:
        preflight()
    except LabError as exc:
        pytest.skip(str(exc))
    try:
        from tr4947.lab import storage  # noqa: F401
        import tr4947.lab.ontap.sshd  # noqa: F401
    except ImportError as exc:
        pytest.fail(f"lab component missing: {exc}")
