"""PRE-2's client script (snippets/preflight/PRE-2-remount-nfs41.sh) on a scratch fstab, with
`mount` and `umount` replaced by shims that keep a mount table in a file: the lines it writes,
what it remounts, and that it changes nothing when one mount point is not NFS."""
import os
import subprocess
import textwrap

from tr4947 import paths

SCRIPT = paths.SNIPPETS / "preflight" / "PRE-2-remount-nfs41.sh"

MOUNT = r"""#!/bin/sh
# mount shim: no arguments lists $TABLE; `mount -T fstab point` mounts from that fstab line
if [ $# -eq 0 ]; then cat "$TABLE"; exit 0; fi
echo "mount $*" >> "$CALLS"
[ "$1" = -T ] || exit 2
awk -v mp="$3" '$2 == mp { split($4, o, ","); v = "4.1"
  for (i in o) if (o[i] ~ /^vers=/) v = substr(o[i], 6)
  print $1 " on " $2 " type " (v ~ /^4/ ? "nfs4" : "nfs") " (rw,vers=" v ")" }' "$2" >> "$TABLE"
"""
UMOUNT = r"""#!/bin/sh
echo "umount $*" >> "$CALLS"
awk -v mp="$1" '$3 != mp' "$TABLE" > "$TABLE.new" && mv "$TABLE.new" "$TABLE"
"""


def run(tmp_path, fstab: str, table: str, mounts: str):
    bin_ = tmp_path / "bin"
    bin_.mkdir(exist_ok=True)
    for name, body in (("mount", MOUNT), ("umount", UMOUNT)):
        (bin_ / name).write_text(body)
        (bin_ / name).chmod(0o755)
    (tmp_path / "fstab").write_text(textwrap.dedent(fstab))
    (tmp_path / "table").write_text(textwrap.dedent(table))
    env = {**os.environ, "PATH": f"{bin_}:{os.environ['PATH']}", "MOUNTS": mounts,
           "FSTAB": str(tmp_path / "fstab"), "TABLE": str(tmp_path / "table"),
           "CALLS": str(tmp_path / "calls")}
    r = subprocess.run(["sh", str(SCRIPT)], env=env, capture_output=True, text=True)
    calls = (tmp_path / "calls").read_text() if (tmp_path / "calls").exists() else ""
    return r, (tmp_path / "fstab").read_text(), calls


def test_tr_lines_are_pinned_and_remounted_and_other_lines_stay(tmp_path):
    r, fstab, calls = run(tmp_path, """\
        UUID=abc / ext4 defaults 0 1
        198.18.10.11:/kafka_aggr3_vol1 /kafka_aggr3_vol1 nfs defaults,nconnect=16 0 0
        198.18.10.11:/kafka_aggr3_vol2 /kafka_aggr3_vol2 nfs4 nfsvers=4.0,nconnect=16,hard 0 0
        """, """\
        /dev/sda1 on / type ext4 (rw)
        198.18.10.11:/kafka_aggr3_vol1 on /kafka_aggr3_vol1 type nfs (rw,vers=3)
        198.18.10.11:/kafka_aggr3_vol2 on /kafka_aggr3_vol2 type nfs4 (rw,vers=4.0)
        """, "/kafka_aggr3_vol1 /kafka_aggr3_vol2")
    assert r.returncode == 0, r.stderr
    assert fstab.splitlines() == [
        "UUID=abc / ext4 defaults 0 1",
        "198.18.10.11:/kafka_aggr3_vol1 /kafka_aggr3_vol1 nfs vers=4.1,nconnect=16 0 0",
        "198.18.10.11:/kafka_aggr3_vol2 /kafka_aggr3_vol2 nfs vers=4.1,nconnect=16,hard 0 0"]
    assert calls.splitlines() == [
        "umount /kafka_aggr3_vol1", f"mount -T {tmp_path}/fstab /kafka_aggr3_vol1",
        "umount /kafka_aggr3_vol2", f"mount -T {tmp_path}/fstab /kafka_aggr3_vol2"]
    assert "type nfs4 (rw,vers=4.1)" in r.stdout
    assert (tmp_path / "fstab.tr4947-pre2.bak").read_text().count("defaults,nconnect=16") == 1


def test_a_mount_made_by_hand_gets_a_pinned_line(tmp_path):
    r, fstab, _ = run(tmp_path, "UUID=abc / ext4 defaults 0 1\n",
                      "198.18.10.12:/generic_nfsv3_vol on /demo type nfs (rw,vers=3)\n", "/demo")
    assert r.returncode == 0, r.stderr
    assert fstab.splitlines()[-1] == "198.18.10.12:/generic_nfsv3_vol /demo nfs vers=4.1 0 0"


def test_nothing_changes_when_one_mount_point_is_not_nfs(tmp_path):
    before = "198.18.10.11:/v1 /v1 nfs defaults 0 0\n"
    r, fstab, calls = run(tmp_path, before, "198.18.10.11:/v1 on /v1 type nfs (rw,vers=3)\n",
                          "/v1 /data")
    assert r.returncode == 1 and "/data is not an NFS mount" in r.stderr
    assert fstab == before and calls == ""
    assert not (tmp_path / "fstab.tr4947-pre2.bak").exists()
