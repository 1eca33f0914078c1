"""The project's playbooks are ansible-lint clean (production profile, warnings count), with
the settings in playbook/.ansible-lint; the TR's playbook as printed is the one exclusion."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

from tr4947 import paths

CONFIG = paths.REPO / "playbook" / ".ansible-lint"
LINT = Path(sys.executable).parent / "ansible-lint"


def playbooks() -> list[Path]:
    excluded = {(CONFIG.parent / p).resolve()
                for p in yaml.safe_load(CONFIG.read_text())["exclude_paths"]}
    return [p for p in sorted((paths.REPO / "playbook" / "project").glob("*.yml"))
            if p.resolve() not in excluded]


def lint(*files: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(LINT), "-c", str(CONFIG), "--nocolor", *map(str, files)],
                          cwd=paths.REPO, capture_output=True, text=True, timeout=300)


def test_every_playbook_is_lint_clean():
    files = playbooks()
    names = [f.name for f in files]
    assert "AFF-1-flexgroup.yml" in names and "flexgroup-info.yml" in names
    assert "AFF-1-flexgroup.tr-as-written.yml" not in names
    r = lint(*files)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"{len(files)} files processed of {len(files)} encountered" in r.stderr + r.stdout
    assert "0 failure(s), 0 warning(s)" in r.stderr + r.stdout


def test_the_lint_does_find_what_it_should(tmp_path):
    """The check above can fail: the corrected playbook with a task lacking a name and a
    shell command that always reports a change is refused."""
    text = (paths.REPO / "playbook" / "project" / "AFF-1-flexgroup.yml").read_text()
    bad = tmp_path / "bad.yml"
    bad.write_text(text + "    - ansible.builtin.shell: echo touched\n")
    r = lint(bad)
    out = r.stdout + r.stderr
    assert r.returncode != 0
    assert "name[missing]" in out and "no-changed-when" in out, out
