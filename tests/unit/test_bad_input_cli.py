"""Command-line options and notebook parameters: refused with exit status 2 and a message that
says what was wrong, before anything runs (no lab state, no run record, no kernel)."""
from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass

import pytest

from tr4947 import paths


@dataclass
class Case:
    id: str
    argv: list[str]
    expect: tuple[str, ...]


TR = ["-m", "tr4947.cli"]
RB = ["-m", "tr4947.runbook"]
CASES = [
    Case("no-command", TR, ("COMMAND",)),
    Case("unknown-command", TR + ["frobnicate"], ("invalid choice", "frobnicate")),
    Case("run-without-command", TR + ["run", "--host", "client-1"], ("no command given",)),
    Case("run-unknown-target", TR + ["run", "--target", "nosuch", "--host", "x", "--", "ls"],
         ("unknown target", "nosuch", "valid:")),
    Case("run-unknown-host", TR + ["run", "--host", "nosuch", "--", "ls"],
         ("unknown host", "nosuch", "groups:")),
    Case("run-bad-timeout", TR + ["run", "--host", "x", "--timeout", "soon", "--", "ls"],
         ("--timeout", "soon")),
    Case("lab-no-action", TR + ["lab"], ("ACTION",)),
    Case("lab-up-unknown-cluster", TR + ["lab", "up", "--cluster", "nosuch"],
         ("unknown", "nosuch")),
    Case("notebook-unknown-chapter", TR + ["notebook", "nosuch"],
         ("unknown notebook", "choose from")),
    Case("notebook-bad-port", TR + ["notebook", "--port", "eighty"], ("--port", "eighty")),
    Case("runbook-unknown-chapter", RB + ["nosuch", "--status"], ("unknown chapter", "functional-validation.kafka-3.2.3")),
    Case("runbook-param-without-value", RB + ["sizing", "-p", "brokers", "--status"],
         ("not NAME=VALUE",)),
    Case("runbook-unknown-param", RB + ["sizing", "-p", "nosuch=1", "--status"],
         ("no parameter named nosuch", "Its parameters")),
    Case("runbook-reserved-target", RB + ["sizing", "-p", "target=aff"], ("use --target",)),
    Case("runbook-reserved-results", RB + ["sizing", "-p", "results_dir=/tmp/x"],
         ("results_dir is the runner's",)),
    Case("runbook-param-wrong-type", RB + ["broker-recovery", "-p", "repeats=many", "--status"],
         ("repeats takes a whole number",)),
    Case("runbook-param-list-expected", RB + ["broker-recovery", "-p", "sizes_gb=5", "--status"],
         ("sizes_gb takes a list",)),
    Case("runbook-param-bool-for-int", RB + ["broker-recovery", "-p", "repeats=true", "--status"],
         ("repeats takes a whole number",)),
    Case("runbook-json-without-status", RB + ["sizing", "--json"], ("--json goes with --status",)),
    Case("runbook-unknown-target", RB + ["sizing", "--target", "nosuch", "--status"],
         ("unknown target", "nosuch")),
    Case("render-missing-results", ["-m", "tr4947.results.render", "--results", "/nonexistent"],
         ("no such directory",)),
    Case("remote-inventory-both", ["-m", "tr4947.lab.remote_inventory", "--write", "--check"],
         ("not allowed with",)),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_bad_input_refused(case, tmp_path):
    env = {**os.environ, "TR4947_LAB_STATE": str(tmp_path / "lab-state")}
    before = sorted(p.name for p in (paths.REPO / "results").rglob("*"))
    p = subprocess.run([sys.executable, *case.argv], cwd=paths.REPO, env=env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    for part in case.expect:
        assert part in p.stderr, f"{part!r} not in {p.stderr!r}"
    assert "Traceback" not in p.stderr
    assert not (tmp_path / "lab-state").exists(), "a refused command created lab state"
    assert sorted(p.name for p in (paths.REPO / "results").rglob("*")) == before
