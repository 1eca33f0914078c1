"""Adding fstab lines (Target.add_fstab_lines, tr4947.targets.fstab). The script really runs,
in bash here, through the Target's own command building (the lines arrive in FSTAB_LINES),
on a file in a temporary directory standing for a host's /etc/fstab: what is tested is what
a host does with it."""
from __future__ import annotations

import pytest

from tr4947.targets import fstab

from ..support.targets import LocalPool, NoTransport, local_target, write_inventory

# A broker's fstab before the runbook touches it: root, a local NVMe disk, a comment, and a
# last line without its newline (the script must not glue the first added line to it).
HOST_FSTAB = ("UUID=0f3c6d4e-1111-4a2b-9c3d-5e6f7a8b9c0d /          xfs   defaults,noatime 1 1\n"
              "# local NVMe, not used by Kafka\n"
              "/dev/nvme1n1\t/mnt/data-1\text4\tdefaults,nofail 0 2")
# The guide's lines, with the lab's data LIFs (the target maps them to its own).
LINES = ("198.18.10.11:/kafka_aggr3_vol1 /kafka_aggr3_vol1 nfs defaults,nconnect=16 0 0\n"
         "198.18.10.12:/kafka_aggr22_vol1 /kafka_aggr22_vol1 nfs defaults,nconnect=16 0 0\n")
# The same lines on the test target (its ontap_data_lifs).
MINE = LINES.replace("198.18.10.11", "192.0.2.11").replace("198.18.10.12", "192.0.2.12")


@pytest.fixture
def host(tmp_path):
    """(target, snippet, the host's fstab file); confirmed, commands run in local bash."""
    t = local_target(write_inventory(tmp_path), confirm=True)
    snippet = tmp_path / "mounts.fstab"
    snippet.write_text("# the guide's lines\n" + LINES)
    etc = tmp_path / "host" / "etc"
    etc.mkdir(parents=True)
    return t, snippet, etc / "fstab"


def add(t, snippet, f, **kw):
    return t.add_fstab_lines(snippet, "b1", servers=t.lab_values(), fstab=str(f), **kw)


def test_lines_are_appended_once_and_nothing_else_changes(host):
    t, snippet, f = host
    f.write_text(HOST_FSTAB)
    r = add(t, snippet, f, check=True)
    assert r.stdout.strip() == f"2 line(s) added to {f}; the file as it was: {f}.tr4947.bak"
    assert fstab.added(r) == 2
    assert f.read_text() == HOST_FSTAB + "\n" + MINE
    assert f.with_name("fstab.tr4947.bak").read_text() == HOST_FSTAB
    # The transcript shows the lines and the script, as they ran; the lines came in the
    # environment, not as code.
    assert r.command.startswith("export FSTAB_LINES='192.0.2.11:/kafka_aggr3_vol1 ")
    assert 'cp -p "$fstab" "$backup"' in r.command
    _ep, sent, _stdin = t._pool.calls[-1]
    assert "export FSTAB_LINES=" in sent and sent.rstrip().endswith(fstab.add_script(str(f)).rstrip())
    again = add(t, snippet, f, check=True)
    assert again.stdout.strip() == f"{f} already has these lines: nothing added"
    assert fstab.added(again) == 0
    assert f.read_text() == HOST_FSTAB + "\n" + MINE
    assert f.with_name("fstab.tr4947.bak").read_text() == HOST_FSTAB      # not overwritten


def test_a_line_with_other_spacing_counts_as_present(host):
    t, snippet, f = host
    present = MINE.splitlines()[0].replace(" ", "\t")
    f.write_text(present + "\n")
    r = add(t, snippet, f, check=True)
    assert fstab.added(r) == 1
    assert f.read_text() == present + "\n" + MINE.splitlines()[1] + "\n"


def test_a_mount_point_taken_by_another_line_is_an_error_and_nothing_changes(host):
    t, snippet, f = host
    before = HOST_FSTAB + "\nold-lif:/old_vol /kafka_aggr22_vol1 nfs defaults 0 0\n"
    f.write_text(before)
    r = add(t, snippet, f)
    assert r.exit_code == 1 and fstab.added(r) == 0
    assert (f"{f} already mounts /kafka_aggr22_vol1 with: old-lif:/old_vol "
            "/kafka_aggr22_vol1 nfs defaults 0 0; nothing changed") in r.stderr
    assert f.read_text() == before
    assert not f.with_name("fstab.tr4947.bak").exists()


def test_an_empty_fstab_gets_the_lines_and_an_empty_backup(host):
    t, snippet, f = host
    f.write_text("")
    r = add(t, snippet, f, check=True, backup=str(f.with_name("fstab.before")))
    assert fstab.added(r) == 2 and f.read_text() == MINE
    assert f.with_name("fstab.before").read_text() == ""


def test_servers_replace_only_the_server_of_mount_lines():
    text = "# 198.18.10.11 in a comment stays\n" + LINES + "/dev/sdb /198.18.10.11 xfs defaults 0 0\n"
    out = fstab.with_servers(text, {"198.18.10.11": "lif-1.example", "198.18.10.12": "10.0.0.2"})
    assert out.splitlines() == [
        "# 198.18.10.11 in a comment stays",
        "lif-1.example:/kafka_aggr3_vol1 /kafka_aggr3_vol1 nfs defaults,nconnect=16 0 0",
        "10.0.0.2:/kafka_aggr22_vol1 /kafka_aggr22_vol1 nfs defaults,nconnect=16 0 0",
        "/dev/sdb /198.18.10.11 xfs defaults 0 0"]
    assert fstab.with_servers(LINES, "svm-nfs").count("svm-nfs:/") == 2
    assert fstab.with_servers(LINES, None) == LINES
    assert fstab.lab_servers(LINES) == ["198.18.10.11", "198.18.10.12"]
    assert fstab.lab_servers(LINES, own={"198.18.10.12"}) == ["198.18.10.11"]
    assert fstab.lab_servers("127.0.0.1:/v /v nfs defaults 0 0\n") == ["127.0.0.1"]
    assert fstab.lab_servers(out) == []


def test_a_real_target_refuses_lab_addresses_before_planning(tmp_path, capsys):
    t = NoTransport(write_inventory(tmp_path), confirm=False, echo=True)
    snippet = tmp_path / "m.fstab"
    snippet.write_text(LINES)
    with pytest.raises(ValueError, match=r"198\.18\.10\.11, 198\.18\.10\.12 are lab addresses"):
        t.add_fstab_lines(snippet, "b1")
    assert capsys.readouterr().out == ""
    # With the target's values: planned (nothing reached), and the plan names the file, the
    # backup and the lines.
    r = t.add_fstab_lines(snippet, "b1", servers=t.lab_values())
    assert r.planned
    assert "192.0.2.11:/kafka_aggr3_vol1 /kafka_aggr3_vol1" in r.stdout
    assert "cp -p \"$fstab\" \"$backup\"" in r.stdout and "fstab=/etc/fstab " \
        "backup=/etc/fstab.tr4947.bak" in r.stdout
    assert "198.18." not in r.stdout


def test_a_target_whose_data_lifs_are_the_lab_addresses_needs_no_mapping(tmp_path):
    t = local_target(write_inventory(tmp_path, kind="lab", lif1="198.18.10.11",
                                     lif2="198.18.10.12", ontap="198.18.10.1",
                                     b1="198.18.1.1", b2="198.18.1.2", client="198.18.5.1"))
    snippet = tmp_path / "m.fstab"
    snippet.write_text(LINES)
    f = tmp_path / "fstab"
    f.write_text("")
    r = t.add_fstab_lines(snippet, "b1", fstab=str(f), check=True)
    assert fstab.added(r) == 2 and f.read_text() == LINES


def test_plain_paths_only(host):
    t, snippet, f = host
    with pytest.raises(ValueError, match="fstab path"):
        add(t, snippet, "/etc/fstab;reboot")
    assert isinstance(t._pool, LocalPool) and t._pool.calls == []


def test_nfs_mounts_reads_df_and_mount_output():
    """measure.mounts: what a broker's df -h or mount says is mounted over NFS (CVO-5 and
    the performance chapters check log dirs against it); local file systems are left out."""
    from tr4947.measure.mounts import nfs_mounts
    df = ("Filesystem                    Size  Used Avail Use% Mounted on\n"
          "/dev/vda                      252G   12G   80G  13% /\n"
          "198.18.10.11:/kafka_nfs_b1   1.0T  1.2G 1023G   1% /mnt/data\n")
    mount = ("198.18.10.12:/vol2 on /data/vol2 type nfs4 (rw,vers=4.1,nconnect=16)\n"
             "proc on /proc type proc (rw)\n")
    assert nfs_mounts(df) == {"/mnt/data": "198.18.10.11:/kafka_nfs_b1"}
    assert nfs_mounts(mount) == {"/data/vol2": "198.18.10.12:/vol2"}
