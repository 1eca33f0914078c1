"""PRE-1: the audit's reading of broker and ONTAP facts, and its verdicts."""
from tr4947.procedures import nfs_audit as pf

ONTAP = """cluster1::> version
NetApp Release 9.12.1 (lab stand-in)
cluster1::> set -privilege advanced
cluster1::*> set -showseparator "|"
cluster1::*> volume show -vserver svm_kafka -fields junction-path,is-preserve-unlink-enabled
vserver|volume|junction-path|is-preserve-unlink-enabled|
Vserver Name|Volume Name|Junction Path|Is Preserve Unlink Enabled|
svm_kafka|svm_kafka_root|/|false|
svm_kafka|kafka_fg_vol01|/kafka_fg_vol01|true|
svm_kafka|generic_nfsv3_vol|/generic_nfsv3_vol|false|
3 entries were displayed.
"""


def facts(os_line="rhel 9.2 (Red Hat Enterprise Linux 9.2)", mount_line=None, dirs="/demo/b1"):
    mount_line = mount_line or ("198.18.10.11:/kafka_fg_vol01 on /demo type nfs4 "
                                "(rw,relatime,vers=4.1,nconnect=16,addr=198.18.10.11)")
    return pf.parse_broker_facts("broker-1", f"""kernel: 5.14.0-284.el9.x86_64
os: {os_line}
kafka: 3.2.3
log.dirs: {dirs}
session_slots: 180
mount: /dev/sda1 on / type ext4 (rw,relatime)
mount: {mount_line}
""")


def rows(f, ontap=ONTAP, lab=False):
    return pf.audit_rows("c1", f, pf.parse_ontap_facts(ontap), "svm_kafka", lab)


def test_safe_cluster_passes():
    (r,) = rows(facts())
    assert r.verdict == pf.PASS and r.volume == "kafka_fg_vol01" and r.preserve_unlink == "true"
    assert r.fixes == [] and pf.cluster_verdict([r]) == "safe"


def test_nfsv3_on_a_volume_without_preserve_unlink_fails_with_both_fixes():
    f = facts(mount_line="198.18.10.12:/generic_nfsv3_vol/b1 on /demo type nfs "
                         "(rw,vers=3,addr=198.18.10.12)")
    (r,) = rows(f)
    assert r.verdict == pf.FAIL and pf.cluster_verdict([r]) == "unsafe"
    assert any("vers=4.1" in x for x in r.fixes)
    assert any("volume modify -vserver svm_kafka -volume generic_nfsv3_vol "
               "-is-preserve-unlink-enabled true" in x for x in r.fixes)


def test_old_rhel_fails_and_other_distributions_ask_for_a_check():
    assert rows(facts("rhel 8.6 (RHEL 8.6)"))[0].verdict == pf.FAIL
    assert rows(facts("rocky 8.7"))[0].verdict == pf.PASS
    (r,) = rows(facts("debian 12 (Debian GNU/Linux 12)"))
    assert r.verdict == pf.CHECK and pf.cluster_verdict([r]) == "check"
    assert rows(facts("debian 12"), lab=True)[0].verdict == pf.PASS     # the lab's FUSE client


def test_old_ontap_fails():
    (r,) = rows(facts(), ONTAP.replace("9.12.1", "9.11.1"))
    assert r.verdict == pf.FAIL and any("9.12.1 or later" in x for x in r.fixes)


def test_export_outside_any_ontap_volume_fails():
    f = facts(mount_line="10.0.0.5:/srv/kafka on /demo type nfs4 (rw,vers=4.1)")
    (r,) = rows(f)
    assert r.verdict == pf.FAIL and r.volume == "(not ONTAP)"


def test_local_disk_is_not_judged():
    f = facts(dirs="/mnt/data-2")
    (r,) = rows(f)
    assert r.verdict == pf.INFO and "not on NFS" in r.notes[0]
    assert pf.cluster_verdict([r]) == "not on NFS"


def test_the_longest_mount_point_wins():
    f = facts(dirs="/demo/b1/kafka")
    f.mounts.append(pf.Mount("x:/y", "/demo/b1", "nfs", {"vers": "3"}))
    assert f.mount_of("/demo/b1/kafka").point == "/demo/b1"


def with_fstab(f, options):
    return pf.parse_broker_facts("broker-1", "\n".join([
        f"log.dirs: {','.join(f.log_dirs)}", "os: rhel 9.2",
        *(f"mount: {m.source} on {m.point} type {m.fstype} "
          f"({','.join(k + ('=' + v if v else '') for k, v in m.options.items())})"
          for m in f.mounts),
        f"fstab: 198.18.10.11:/kafka_fg_vol01 /demo nfs {options} 0 0"]))


def test_fstab_line_that_leaves_the_version_to_negotiation_fails():
    # The TR's CVO-3 lines: mounted over 4.x today only because the SVM offers it.
    (r,) = rows(with_fstab(facts(), "defaults,nconnect=16"))
    assert r.verdict == pf.FAIL and r.remount and r.point == "/demo"
    assert any("vers=4.1 in the line for /demo (now defaults,nconnect=16)" in x for x in r.fixes)
    for pinned in ("vers=4.1,nconnect=16", "nfsvers=4.2", "vers=4,minorversion=1"):
        (r,) = rows(with_fstab(facts(), pinned))
        assert r.verdict == pf.PASS and not r.remount, pinned
    (r,) = rows(with_fstab(facts(), "vers=4"))          # 4.0 may be what it gets
    assert r.verdict == pf.FAIL


def test_mount_without_fstab_line_is_noted_and_nconnect_shown():
    (r,) = rows(facts())
    assert r.verdict == pf.PASS and r.nfs == "nfs4 vers=4.1, nconnect=16"
    assert any("no /etc/fstab line" in n for n in r.notes)


def test_only_what_a_remount_fixes_is_remounted():
    assert rows(facts(mount_line="198.18.10.12:/generic_nfsv3_vol/b1 on /demo type nfs "
                                 "(rw,vers=3)"))[0].remount
    (r,) = rows(facts(), ONTAP.replace("9.12.1", "9.11.1"))
    assert r.verdict == pf.FAIL and not r.remount        # an ONTAP upgrade, not a remount


def test_the_mount_table_and_fstab_read_the_version_alike():
    """One reader of NFS versions for the kernel's mount table and for fstab lines:
    vers=4,minorversion=1 is NFSv4.1 in both; a bare nfs4 mount is 4 (4.0, unsafe)."""
    m41 = ("198.18.10.11:/kafka_fg_vol01 on /demo type nfs4 "
           "(rw,vers=4,minorversion=1,addr=198.18.10.11)")
    (r,) = rows(facts(mount_line=m41))
    assert r.verdict == pf.PASS and r.nfs.startswith("nfs4 vers=4.1")
    (r,) = rows(facts(mount_line="198.18.10.11:/kafka_fg_vol01 on /demo type nfs4 (rw)"))
    assert r.verdict == pf.FAIL and r.nfs == "nfs4 vers=4"
    assert pf.nfs_version({"nfsvers": "4", "minorversion": "2"}) == "4.2"
    assert pf.nfs_version({"defaults": ""}) == ""
