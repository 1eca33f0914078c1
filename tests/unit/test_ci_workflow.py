"""The GitHub workflow is what GitHub users expect and is linted: actionlint (the pinned
build setup.sh makes from the Go module proxy, with shellcheck over its run steps) finds
nothing in .github/workflows; the test job runs .ci/run in a debian:12 container privileged
enough for the lab and caches the venv, npm and Maven downloads keyed by their pin files. The
shell scripts pass shellcheck."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tr4947 import paths

WORKFLOWS = sorted((paths.REPO / ".github" / "workflows").glob("*.y*ml"))


def pinned(tool: str) -> str:
    """package@version of ``tool`` in scripts/go-tools.txt."""
    text = re.sub(r"#.*", "", (paths.REPO / "scripts" / "go-tools.txt").read_text())
    return next(p for p in text.split() if p.split("@")[0].endswith("/" + tool))


@pytest.fixture(scope="module")
def actionlint() -> str:
    exe = paths.CACHE / "bin" / "actionlint"
    want = pinned("actionlint").split("@")[1]
    assert exe.exists(), f"{exe} is missing: scripts/setup.sh builds the pinned actionlint"
    got = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout.split()[0]
    assert got == want, f"{exe} is {got}, scripts/go-tools.txt pins {want}: run scripts/setup.sh"
    assert shutil.which("shellcheck"), "shellcheck is missing (scripts/apt-packages.txt has it)"
    return str(exe)


def lint(actionlint: str, *files: Path) -> subprocess.CompletedProcess:
    return subprocess.run([actionlint, "-no-color", *map(str, files)], cwd=paths.REPO,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "NO_COLOR": "1"})


def test_actionlint_finds_nothing(actionlint):
    assert WORKFLOWS
    r = lint(actionlint, *WORKFLOWS)
    assert r.returncode == 0, r.stdout + r.stderr


def test_actionlint_does_find_a_broken_workflow(actionlint, tmp_path):
    """The check above can fail: an unknown expression context and a shell error are found."""
    d = tmp_path / ".github" / "workflows"
    d.mkdir(parents=True)
    bad = d / "bad.yml"
    bad.write_text("on: push\njobs:\n  t:\n    runs-on: ubuntu-24.04\n    steps:\n"
                   "    - run: echo ${{ nosuch.context }}\n"
                   "    - run: if [ $x = 1 ] then echo; fi\n")
    r = lint(actionlint, bad)
    assert r.returncode == 1
    assert "nosuch" in r.stdout and "shellcheck" in r.stdout, r.stdout


def test_the_test_job_runs_ci_run_in_debian_12_with_caches():
    wf = yaml.safe_load((paths.REPO / ".github" / "workflows" / "ci.yml").read_text())
    job = wf["jobs"]["test"]
    assert job["container"]["image"] == "debian:12"
    assert "--privileged" in job["container"]["options"]
    steps = job["steps"]
    assert any(s.get("run", "").strip() == "bash .ci/run" for s in steps)
    uses = {s["uses"].split("@")[0]: s for s in steps if "uses" in s}
    node = uses["actions/setup-node"]["with"]
    assert node["cache"] == "npm" and node["cache-dependency-path"] == "package-lock.json"
    keys = " ".join(s["with"]["key"] + " " + s["with"]["path"] for s in steps
                    if s.get("uses", "").startswith("actions/cache@"))
    for pin in ("requirements.txt", "pyproject.toml", "lab/kafka/pom*.xml",
                "scripts/go-tools.txt"):
        assert pin in keys, f"no cache keyed by {pin}"
    for cached in (".venv", "~/.m2/repository", "env.TR4947_CACHE"):
        assert cached in keys, f"{cached} is not cached"


def test_shell_scripts_pass_shellcheck():
    assert shutil.which("shellcheck"), "shellcheck is missing (scripts/apt-packages.txt has it)"
    scripts = sorted(paths.REPO.glob("scripts/*.sh")) + [paths.REPO / ".ci" / "run"]
    r = subprocess.run(["shellcheck", *map(str, scripts)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
