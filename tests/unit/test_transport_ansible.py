"""tr4947.transports.ansible without a lab: a local play (connection: local) that prints the
password it was given, to show what is kept of a job: its artifacts, with the environment
left out and the secret masked wherever the play wrote it, in check mode and not."""
from __future__ import annotations

import json
import os
from pathlib import Path

from tr4947 import secrets
from tr4947.transports import ansible as transport

SECRET = secrets.LAB_MARKER + "transport-test-0123456789"
PLAY = """\
- name: Print what the job was given
  hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - name: The password, as a careless play would print it
      ansible.builtin.debug:
        msg: "password is {{ lookup('env', 'ONTAP_PASSWORD') }}"
    - name: A file that check mode only pretends to write
      ansible.builtin.copy:
        content: "new\\n"
        dest: "{{ lookup('env', 'TARGET_FILE') }}"
        mode: "0644"
"""


def job(tmp_path: Path, check: bool, ident: str, **kw) -> transport.Job:
    pdd = tmp_path / "pdd"
    (pdd / "project").mkdir(parents=True, exist_ok=True)
    (pdd / "project" / "play.yml").write_text(PLAY)
    inv = tmp_path / "hosts.yml"
    inv.write_text("all:\n  hosts:\n    localhost:\n      ansible_python_interpreter: "
                   "'{{ ansible_playbook_python }}'\n")
    return transport.run(pdd, "play.yml", inv, env={"ONTAP_PASSWORD": SECRET,
                                                    "TARGET_FILE": str(tmp_path / "file"),
                                                    "ANSIBLE_NOCOLOR": "1"},
                         ident=ident, keep=tmp_path / "kept", check=check, diff=check, **kw)


def test_check_mode_changes_nothing_and_shows_the_diff(tmp_path):
    (tmp_path / "file").write_text("old\n")
    j = job(tmp_path, check=True, ident="check-1")
    assert j.rc == 0 and j.stats["changed"] == {"localhost": 1}
    assert (tmp_path / "file").read_text() == "old\n"           # --check: not written
    assert "-old\n+new" in j.stdout                               # --diff: what would change
    # The plan a target shows takes the diff from the task's result.
    from tr4947.targets.playbooks import _task_results
    copy = [t for t in _task_results(j.events) if t.task.startswith("A file")]
    assert copy[0].status == "changed" and "-old\n+new" in copy[0].diff
    cmd = json.loads((j.artifacts / "command").read_text())
    assert cmd["command"][:3] == ["ansible-playbook", "--check", "--diff"]


def test_kept_artifacts_have_no_secret_and_no_environment(tmp_path):
    j = job(tmp_path, check=False, ident="run-1")
    assert j.rc == 0 and (tmp_path / "file").read_text() == "new\n"
    assert j.artifacts == tmp_path / "kept" / "run-1"
    files = {f.relative_to(j.artifacts).as_posix(): f.read_text()
             for f in j.artifacts.rglob("*") if f.is_file()}
    assert {"command", "stdout", "rc", "status"} <= set(files)
    assert any(f.startswith("job_events/") for f in files)
    # The play printed the password: everywhere it was written, it is masked.
    assert "password is " + secrets.MASK in files["stdout"]
    assert all(SECRET not in text for text in files.values())
    assert SECRET not in j.stdout
    assert "not kept" in json.loads(files["command"])["env"]
    # The private directory the job wrote into is gone.
    assert not list(transport.private_root().glob(f"{transport.PRIVATE_PREFIX}{os.getpid()}-*"))


def test_only_the_newest_jobs_are_kept_when_asked(tmp_path):
    for i in range(3):
        job(tmp_path, check=True, ident=f"job-{i}", keep_last=2)
    assert sorted(p.name for p in (tmp_path / "kept").iterdir()) == ["job-1", "job-2"]
