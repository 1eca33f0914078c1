"""The guide's FSX-1 gives the fsxadmin password to the AWS CLI in a private file, never as an
argument (a command's arguments are readable by every user of the host through `ps`). Run
here with a stand-in `aws` on PATH that records its arguments and the file they point to."""
import os
import stat
import subprocess

from tr4947 import paths

SNIPPET = paths.SNIPPETS / "aws-fsx" / "FSX-1-create-file-system.sh"
AWS = r"""#!/bin/sh
printf '%s\n' "$@" > "$OUT/argv"
for a in "$@"; do
  case $a in file://*) f=${a#file://}; cat "$f" > "$OUT/config"
                       stat -c %a "$f" > "$OUT/mode" ;; esac
done
"""
PASSWORD = "Pw-only-in-a-file-7431"


def test_password_reaches_aws_in_a_private_file_not_in_argv(tmp_path):
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "aws").write_text(AWS)
    (bin_ / "aws").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_}:{os.environ['PATH']}", "OUT": str(tmp_path),
           "FSXADMIN_PASSWORD": PASSWORD, "SUBNET_ID_1": "subnet-a", "SUBNET_ID_2": "subnet-b",
           "TMPDIR": str(tmp_path)}
    r = subprocess.run(["sh", str(SNIPPET)], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    argv = (tmp_path / "argv").read_text()
    assert PASSWORD not in argv and "create-file-system" in argv
    config = (tmp_path / "config").read_text()
    assert f"FsxAdminPassword={PASSWORD}," in config and "DeploymentType=MULTI_AZ_1" in config
    assert (tmp_path / "mode").read_text().strip() == "600"
    # and the file is gone once the command has run
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("tmp.")]
