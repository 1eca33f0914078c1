"""A dry run of aff-a900-storage on a real target (the lab described as a remote site,
lab-remote) is Ansible's check mode: the chapter's plan for AFF-1 says what
`ansible-playbook --check --diff` found each task would change (the FlexGroup would be
created), the ONTAP stand-in received only reads, and nothing was created. This is how an
Ansible user expects a playbook to be tried on a cluster before it is applied."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tr4947 import paths
from tr4947.lab.ontap import audit, state

from .conftest import own_lab

pytestmark = pytest.mark.lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    with own_lab(tmp_path_factory.mktemp("remote-check")) as tl:   # storage side and clients
        yield tl


def test_aff_a900_storage_dry_run_plans_with_ansibles_check_mode(lab, tmp_path):
    before = len(audit.read(lab.root))
    env = {**os.environ, "ONTAP_PASSWORD": lab.lab.credentials()["ontap_passwords"]["admin"]}
    r = subprocess.run([sys.executable, "-m", "tr4947.runbook", "aff-a900-storage", "--target",
                        str(lab.remote), "--results", str(tmp_path)], cwd=paths.REPO, env=env,
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads((tmp_path / "lab-remote" / "aff-a900-storage.json").read_text())
    assert doc["run"]["kind"] == "real" and not doc["run"]["parameters"].get("confirm")
    plans = {rec["title"]: rec["data"]["body"] for rec in doc["records"]
             if rec["kind"] == "text" and rec["id"] == "AFF-1"}
    corrected = plans["Corrected playbook (dry run)"].splitlines()
    assert corrected[0].startswith("DRY RUN: would run ansible-playbook AFF-1-flexgroup.yml")
    assert any(x.startswith("Check mode (ansible-playbook --check --diff) read the cluster")
               for x in corrected), corrected
    assert "  Edit volumes [kafka_fg_vol01]: would change: actions: ['create']" in corrected
    assert any(x.startswith("  PLAY RECAP localhost") and "changed=1" in x and "failed=0" in x
               for x in corrected)
    # The TR's playbook as printed fails in check mode too, before it reaches anything.
    as_printed = plans["The TR's playbook as printed (dry run)"]
    assert "Edit volumes: FAILED" in as_printed and "'item' is undefined" in as_printed
    assert "as it stands, the run would fail." in as_printed
    # Check mode reached the cluster and only read it: every REST request a GET, every
    # clustershell command a read; the FlexGroup does not exist.
    received = audit.read(lab.root)[before:]
    rest = [e for e in received if e["channel"] == "rest"]
    assert rest and all(e["command"].startswith("GET ") for e in rest), rest
    assert all(e["reads_only"] for e in received), [e for e in received if not e["reads_only"]]
    assert "svm_kafka:kafka_fg_vol01" not in state.load(lab.root).volumes
