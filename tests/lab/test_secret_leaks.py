"""No lab secret is left anywhere a run writes, after a complete run and after one killed
half way (SIGKILL: no handler runs, nothing gets to clean up).

Every secret the lab makes (its ONTAP logins, the fsxadmin password FSX-1 sends) starts with
secrets.LAB_MARKER. Two chapters that hand secrets to tools run through the runner on a test
lab: aws-fsx (the AWS CLI with the fsxadmin password) and aff-a900-storage (Ansible's
netapp.ontap modules with the ONTAP login, whose jobs' artifacts are kept under build/). Then
build/ (staging runs, kept notebooks, Ansible's kept artifacts), the results, the committed
notebooks, playbook/ and the lab's own state are searched for the marker.
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tr4947 import paths

from ..support.secret_search import files_with_marker
from .conftest import own_lab

pytestmark = pytest.mark.lab


def marker_files(roots: list[Path]) -> list[str]:
    return [str(f) for f in files_with_marker(roots)]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    with own_lab(tmp_path_factory.mktemp("leaks"), up=False) as tl:
        yield tl


def runner(tl, chapter: str, results: Path, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "tr4947.runbook", chapter, "--target",
                             str(tl.inventory), "--results", str(results)],
                            cwd=paths.REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True, **kw)


def searched(tl, results: Path) -> list[Path]:
    return [paths.BUILD, results, paths.REPO / "notebooks", paths.REPO / "playbook", tl.root]


def ansible_jobs_since(t0: float) -> list[Path]:
    """Ansible artifacts (one directory per job, with job_events/) kept under build/ by runs
    that started after ``t0``."""
    return [d.parent for d in paths.BUILD.rglob("job_events")
            if d.is_dir() and d.parent.stat().st_mtime >= t0]


@pytest.mark.parametrize("chapter", ["aws-fsx", "aff-a900-storage"])
def test_a_complete_run_leaves_no_secret(lab, tmp_path, chapter):
    t0 = time.time()
    p = runner(lab, chapter, tmp_path)
    out = p.communicate(timeout=900)[0]
    assert p.returncode == 0, out
    # The run did use a lab secret (else there is nothing to leak and the test proves nothing).
    assert (tmp_path / "lab" / f"{chapter}.json").exists()
    if chapter == "aff-a900-storage":
        # Its Ansible jobs' artifacts are kept (for reading after a run) and searched below.
        jobs = ansible_jobs_since(t0)
        assert jobs, "the chapter's playbook runs kept no artifacts under build/"
        assert all((j / "command").exists() and (j / "stdout").exists() for j in jobs)
    assert marker_files(searched(lab, tmp_path)) == []


def test_a_run_killed_half_way_leaves_no_secret(lab, tmp_path):
    p = runner(lab, "aws-fsx", tmp_path)
    seen = []
    for line in p.stdout:
        seen.append(line)
        # Progress lines come after each cell: "4/N" is the FSX-1 heading, so the next cell,
        # which creates the file system with the fsxadmin password, is running.
        if re.search(r"\] +4/\d+ ", line):
            time.sleep(1.0)
            os.killpg(p.pid, signal.SIGKILL)
            break
    p.wait(timeout=60)
    assert p.returncode == -signal.SIGKILL, "".join(seen)
    hits = marker_files(searched(lab, tmp_path))
    # Whatever the killed run left (staging dir, lab state, Ansible artifacts) holds none.
    assert hits == [], hits
