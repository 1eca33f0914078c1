"""What users of a CLI and of make expect: `tr4947 --version`, JSON from the status commands
(the same facts as their tables), and `make help` listing every target of the Makefile."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib

from tr4947 import paths


def run(*argv: str, env: dict | None = None, cmd=(sys.executable,)) -> subprocess.CompletedProcess:
    return subprocess.run([*cmd, *argv], cwd=paths.REPO, capture_output=True, text=True,
                          timeout=120, env={**os.environ, **(env or {})})


def test_version_is_the_packages():
    want = tomllib.loads((paths.REPO / "pyproject.toml").read_text())["project"]["version"]
    r = run("-m", "tr4947.cli", "--version")
    assert r.returncode == 0 and r.stdout == f"tr4947 {want}\n", (r.stdout, r.stderr)


def test_lab_status_json_has_the_tables_facts(tmp_path):
    env = {"TR4947_LAB_STATE": str(tmp_path / "state")}        # no lab: every host down
    r = run("-m", "tr4947.cli", "lab", "status", "--json", env=env)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["state_dir"] == str(tmp_path / "state") and doc["running"] is False
    assert doc["network"]["subnet"] == "198.18.0.0/16"
    hosts = {h["host"]: h for h in doc["hosts"]}
    assert {"cluster1", "aws", "client-1", "fv_c1-broker-1", "das-standby"} <= set(hosts)
    assert hosts["das-broker-1"]["address"] == "198.18.3.11"
    assert hosts["nfs-standby"]["role"] == "nfs broker (standby)"
    assert all(h["state"] == "down" and h["pid"] is None for h in doc["hosts"])
    # The table says the same, host by host.
    table = run("-m", "tr4947.cli", "lab", "status", env=env).stdout.splitlines()[2:]
    assert [line.split()[0] for line in table] == list(hosts)
    assert all(line.split()[-1] == "down" for line in table)


def test_runbook_status_json_matches_the_text(tmp_path):
    r = run("-m", "tr4947.runbook", "sizing", "preflight", "--status", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["target"] == "lab" and doc["results"] == str(paths.REPO / "results")
    rows = {c["chapter"]: c for c in doc["chapters"]}
    assert set(rows) == {"sizing", "preflight"}
    text = run("-m", "tr4947.runbook", "sizing", "preflight", "--status").stdout
    for line in text.splitlines():
        name, rest = line.split(maxsplit=1)
        c = rows[name]
        assert set(c) == {"chapter", "up_to_date", "why", "run", "digest"}
        if c["up_to_date"]:
            assert c["why"] is None and rest == f"up to date (run {c['run']})"
        else:
            assert rest == f"would run: {c['why']}"


def makefile_targets() -> list[str]:
    text = (paths.REPO / "Makefile").read_text()
    return [m.group(1) for m in re.finditer(r"(?m)^([A-Za-z][A-Za-z0-9_-]*):(?!=)", text)]


def test_make_help_lists_every_target():
    targets = makefile_targets()
    phony = re.search(r"(?m)^\.PHONY:(.*)$", (paths.REPO / "Makefile").read_text()).group(1)
    assert sorted(targets) == sorted(phony.split()), "every target is .PHONY, and only those"
    r = run("-s", "help", cmd=("make",))
    assert r.returncode == 0, r.stderr
    listed = {}
    for line in r.stdout.splitlines():
        m = re.match(r"make (\S+)\s+(\S.*)$", line)
        assert m, f"not a 'make TARGET  what it does' line: {line!r}"
        listed[m.group(1)] = m.group(2)
    assert list(listed) == targets, "make help must list every target, in the Makefile's order"
    assert "site" in listed and "test" in listed
