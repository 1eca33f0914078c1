"""Every committed inventory is laid out as Ansible users keep one (hosts.yml naming hosts and
groups, every variable in group_vars/ or host_vars/) and reads the same through Ansible's own
`ansible-inventory` as through the project's reader (tr4947.inventory)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tr4947 import inventory, paths

NAMES = sorted(d.name for d in paths.INVENTORY.iterdir() if d.is_dir())


def test_the_inventories():
    assert {"lab", "lab-remote", "aff", "aws-cvo", "aws-fsx"} <= set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_hosts_yml_has_no_inline_variables(name):
    doc = yaml.safe_load((paths.INVENTORY / name / "hosts.yml").read_text())

    def inline(node, where):
        node = node or {}
        found = [f"{where}: vars"] if node.get("vars") else []
        found += [f"{where}: host {h}" for h, v in (node.get("hosts") or {}).items() if v]
        for g, child in (node.get("children") or {}).items():
            found += inline(child, g)
        return found
    assert inline(doc["all"], "all") == [], "variables belong in group_vars/ or host_vars/"
    assert (paths.INVENTORY / name / "group_vars" / "all.yml").exists()
    assert any((paths.INVENTORY / name / "host_vars").glob("*.yml"))


@pytest.mark.parametrize("name", NAMES)
def test_ansible_and_the_project_read_the_same_variables(name):
    f = paths.INVENTORY / name / "hosts.yml"
    r = subprocess.run([str(Path(sys.executable).parent / "ansible-inventory"), "-i", str(f),
                        "--list"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and not r.stderr.strip(), r.stderr
    theirs = json.loads(r.stdout)["_meta"]["hostvars"]
    ours = inventory.load(name)
    assert list(theirs) and sorted(theirs) == sorted(ours.hosts)
    for host, v in theirs.items():
        mine = {k: x for k, x in ours.hosts[host].vars.items()
                if k not in ("group_names", "inventory_hostname")}
        assert mine == v, host
