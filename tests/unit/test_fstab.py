"""Adding fstab lines (Target.add_fstab_lines, tr4947.targets.fstab): the script really runs
here, in bash on a lab host's own /etc/fstab under a temporary lab root, so what is tested is
what a real host would do with it."""
from __future__ import annotations

import textwrap

import pytest

from tr4947 import inventory
from tr4947.targets import fstab
from tr4947.targets.base import replace_values
from tr4947.targets.lab import LabTarget
from tr4947.targets.ssh import SshTarget

# A broker's fstab before the runbook touches it: root, a local NVMe disk, a comment, and a
# last line without its newline (the script must not glue the first added line to it).
HOST_FSTAB = ("UUID=0f3c6d4e-1111-4a2b-9c3d-5e6f7a8b9c0d /          xfs   defaults,noatime 1 1\n"
              "# local NVMe, not used by Kafka\n"
              "/dev/nvme1n1\t/mnt/data-1\text4\tdefaults,nofail 0 2")
LINES = ("127.0.10.11:/kafka_aggr3_vol1 /kafka_aggr3_vol1 nfs defaults,nconnect=16 0 0\n"
         "127.0.10.12:/kafka_aggr22_vol1 /kafka_aggr22_vol1 nfs defaults,nconnect=16 0 0\n")


def _inv(tmp_path, kind="lab"):
    f = tmp_path / kind / "hosts.yml"
    f.parent.mkdir()
    f.write_text(textwrap.dedent(f"""\
        all:
          vars: {{target_kind: {kind}}}
          children:
            ontap:
              hosts:
                cluster1:
                  ansible_host: 192.0.2.10
                  ontap_svm: svm_target
                  ontap_data_lifs: [{{name: a, address: 192.0.2.11}}, {{name: b, address: 192.0.2.12}}]
            brokers:
              hosts: {{b1: {{ansible_host: 192.0.2.1}}, b2: {{ansible_host: 192.0.2.2}}}}
        """))
    return inventory.load(f)


@pytest.fixture
def lab(tmp_path):
    root = tmp_path / "state"
    root.mkdir()
    t = LabTarget(_inv(tmp_path), root=root, echo=False)
    snippet = tmp_path / "mounts.fstab"
    snippet.write_text("# the guide's lines\n" + LINES)
    return t, snippet, root / "hosts" / "b1" / "etc"


def test_lines_are_appended_once_and_nothing_else_changes(lab):
    t, snippet, etc = lab
    etc.mkdir(parents=True)
    (etc / "fstab").write_text(HOST_FSTAB)
    r = t.add_fstab_lines(snippet, "b1", check=True)
    assert r.stdout.strip() == ("2 line(s) added to /etc/fstab; the file as it was: "
                                "/etc/fstab.tr4947.bak")
    assert fstab.added(r) == 2
    assert (etc / "fstab").read_text() == HOST_FSTAB + "\n" + LINES
    assert (etc / "fstab.tr4947.bak").read_text() == HOST_FSTAB
    # The transcript shows the lines and the script, as they ran.
    assert r.command.startswith("export FSTAB_LINES='127.0.10.11:/kafka_aggr3_vol1 ")
    assert "cp -p \"$fstab\" \"$backup\"" in r.command
    again = t.add_fstab_lines(snippet, "b1", check=True)
    assert again.stdout.strip() == "/etc/fstab already has these lines: nothing added"
    assert fstab.added(again) == 0
    assert (etc / "fstab").read_text() == HOST_FSTAB + "\n" + LINES
    assert (etc / "fstab.tr4947.bak").read_text() == HOST_FSTAB      # not overwritten


def test_a_line_with_other_spacing_counts_as_present(lab):
    t, snippet, etc = lab
    etc.mkdir(parents=True)
    present = LINES.splitlines()[0].replace(" ", "\t")
    (etc / "fstab").write_text(present + "\n")
    r = t.add_fstab_lines(snippet, "b1", check=True)
    assert fstab.added(r) == 1
    assert (etc / "fstab").read_text() == present + "\n" + LINES.splitlines()[1] + "\n"


def test_a_mount_point_taken_by_another_line_is_an_error_and_nothing_changes(lab):
    t, snippet, etc = lab
    etc.mkdir(parents=True)
    before = HOST_FSTAB + "\nold-lif:/old_vol /kafka_aggr22_vol1 nfs defaults 0 0\n"
    (etc / "fstab").write_text(before)
    r = t.add_fstab_lines(snippet, "b1")
    assert r.exit_code == 1
    assert ("/etc/fstab already mounts /kafka_aggr22_vol1 with: old-lif:/old_vol "
            "/kafka_aggr22_vol1 nfs defaults 0 0; nothing changed") in r.stderr
    assert (etc / "fstab").read_text() == before
    assert not (etc / "fstab.tr4947.bak").exists()


def test_a_lab_host_has_an_empty_fstab_of_its_own(lab):
    """The lab maps /etc/fstab to the host's own file: this machine's is never touched."""
    t, snippet, etc = lab
    r = t.add_fstab_lines(snippet, "b1", check=True)
    assert fstab.added(r) == 2
    assert (etc / "fstab").read_text() == LINES
    assert (etc / "fstab.tr4947.bak").read_text() == ""
    assert t.run("cat /etc/fstab", "b2").stdout == ""                 # another host: its own


def test_servers_replace_only_the_server_of_mount_lines():
    text = "# 127.0.10.11 in a comment stays\n" + LINES + "/dev/sdb /127.0.10.11 xfs defaults 0 0\n"
    out = fstab.with_servers(text, {"127.0.10.11": "lif-1.example", "127.0.10.12": "10.0.0.2"})
    assert out.splitlines() == [
        "# 127.0.10.11 in a comment stays",
        "lif-1.example:/kafka_aggr3_vol1 /kafka_aggr3_vol1 nfs defaults,nconnect=16 0 0",
        "10.0.0.2:/kafka_aggr22_vol1 /kafka_aggr22_vol1 nfs defaults,nconnect=16 0 0",
        "/dev/sdb /127.0.10.11 xfs defaults 0 0"]
    assert fstab.with_servers(LINES, "svm-nfs").count("svm-nfs:/") == 2
    assert fstab.lab_servers(LINES) == ["127.0.10.11", "127.0.10.12"]
    assert fstab.lab_servers(out) == []


def test_a_real_target_refuses_lab_addresses_before_planning(tmp_path, capsys):
    t = SshTarget(_inv(tmp_path, "real"), confirm=False)
    snippet = tmp_path / "m.fstab"
    snippet.write_text(LINES)
    with pytest.raises(ValueError, match=r"127\.0\.10\.11, 127\.0\.10\.12 are lab addresses"):
        t.add_fstab_lines(snippet, "b1")
    assert capsys.readouterr().out == ""
    # With the target's values: planned, and the plan names the file, the backup and the lines.
    r = t.add_fstab_lines(snippet, "b1", servers=t.lab_values())
    assert r.planned
    assert "192.0.2.11:/kafka_aggr3_vol1 /kafka_aggr3_vol1" in r.stdout
    assert "the file is copied to /etc/fstab.tr4947.bak first" in r.stdout
    assert "127.0.10.1" not in r.stdout


def test_lab_values_map_the_lab_svm_and_lifs_in_order(tmp_path):
    t = SshTarget(_inv(tmp_path, "real"), confirm=False)
    lab = inventory.load("lab").ontap()
    lifs = [l["address"] for l in lab.get("ontap_data_lifs")]
    assert t.lab_values() == {lab.get("ontap_svm"): "svm_target",
                              lifs[0]: "192.0.2.11", lifs[1]: "192.0.2.12"}


def test_replace_values_whole_values_in_one_pass():
    assert replace_values("-vserver svm_kafka -volume svm_kafka_2", {"svm_kafka": "vs1"}) == \
        "-vserver vs1 -volume svm_kafka_2"
    assert replace_values("127.0.10.1 127.0.10.11 127.0.10.12",
                          {"127.0.10.11": "127.0.10.12", "127.0.10.12": "127.0.10.13"}) == \
        "127.0.10.1 127.0.10.12 127.0.10.13"


def test_reach_changes_where_and_how_a_host_is_reached(tmp_path):
    t = SshTarget(_inv(tmp_path, "real"), confirm=False, echo=False)
    t.reach("cluster1", address="198.51.100.7", password="Reach-Secret-1")
    h = t.inventory.host("cluster1")
    assert h.address == "198.51.100.7" and t._password(h) == "Reach-Secret-1"
    r = t.run("volume show", "cluster1", changes_state=True)
    assert r.stdout.startswith("DRY RUN: would run on cluster1 (198.51.100.7):")
    from tr4947.runbook import secrets
    assert "Reach-Secret-1" not in secrets.redact("login Reach-Secret-1")
