"""mount(8) syntax and the NFS version x preserve-unlink -> semantics table."""
from __future__ import annotations

import pytest

from tr4947.lab import storage
from tr4947.lab.ontap import state
from tr4947.lab.storage import MountError, parse_mount_argv, parse_nfs_options


def test_tr_mount_command():
    r = parse_mount_argv("mount -t nfs -o vers=4.1,nconnect=16 127.0.10.11:/kafka_vol /mnt/kafka".split())
    assert (r.fstype, r.source, r.mountpoint) == ("nfs", "127.0.10.11:/kafka_vol", "/mnt/kafka")
    o = parse_nfs_options(r.options)
    assert (o.vers, o.nconnect) == ("4.1", 16)


@pytest.mark.parametrize("argv,fstype,opts", [
    (["-t", "nfs4", "a:/v", "/m"], "nfs4", ""),
    (["-tnfs", "-overs=3", "a:/v", "/m"], "nfs", "vers=3"),
    (["-o", "rw,hard", "-o", "nfsvers=3", "a:/v", "/m"], None, "rw,hard,nfsvers=3"),
    (["--types=nfs", "--options=vers=4,minorversion=1", "a:/v", "/m"], "nfs", "vers=4,minorversion=1"),
    (["-r", "a:/v", "/m"], None, "ro"),
])
def test_variants(argv, fstype, opts):
    r = parse_mount_argv(argv)
    assert r.fstype == fstype and r.options == opts and r.source == "a:/v"


def test_mount_a_with_fstab():
    r = parse_mount_argv(["mount", "-a", "-T", "/etc/fstab.kafka"])
    assert r.all and r.fstab == "/etc/fstab.kafka"


@pytest.mark.parametrize("argv,msg", [
    (["-x", "a:/v", "/m"], "invalid option -- 'x'"),
    (["--bogus", "a:/v", "/m"], "unrecognized option '--bogus'"),
    (["a:/v", "/m", "extra"], "bad usage"),
    (["-t"], "option requires an argument"),
    (["-a", "a:/v", "/m"], "bad usage"),
])
def test_usage_errors(argv, msg):
    with pytest.raises(MountError) as e:
        parse_mount_argv(argv)
    assert msg in str(e.value) and e.value.code == 1
    assert "Try 'mount --help'" in str(e.value)


@pytest.mark.parametrize("opts,fstype,vers", [
    ("vers=3", "nfs", "3"), ("nfsvers=3", "nfs", "3"), ("vers=4.1", "nfs", "4.1"),
    ("vers=4,minorversion=1", "nfs", "4.1"), ("minorversion=1", "nfs4", "4.1"),
    ("", "nfs4", "4"), ("defaults,nconnect=16", "nfs", None), ("vers=4.2", "nfs", "4.2"),
])
def test_versions(opts, fstype, vers):
    assert parse_nfs_options(opts, fstype).vers == vers


@pytest.mark.parametrize("opts", ["vers=5", "nconnect=17", "nconnect=0", "bogus",
                                  "max_session_slots=180", "rsize=big", "minorversion=7"])
def test_bad_options(opts):
    with pytest.raises(MountError) as e:
        parse_nfs_options(opts)
    assert str(e.value) == "mount.nfs: an incorrect mount option was specified"


def test_nfs4_type_rejects_v3():
    with pytest.raises(MountError):
        parse_nfs_options("vers=3", "nfs4")


# The TR's table: only NFSv4.1+ on a volume with -is-preserve-unlink-enabled true avoids
# silly rename.
@pytest.mark.parametrize("vers,preserve,expected", [
    ("3", False, "silly-rename"), ("3", True, "silly-rename"),
    ("4.0", True, "silly-rename"), ("4.1", False, "silly-rename"),
    ("4.1", True, "posix-unlink"), ("4.2", True, "posix-unlink"),
])
def test_semantics_table(vers, preserve, expected):
    assert storage.semantics_for(vers, preserve) == expected


def test_negotiation_like_linux_client():
    vs = state.Vserver("svm", nfs_v3=True, nfs_v40=False, nfs_v41=True)
    assert storage.negotiate(vs, None) == "4.2"
    assert storage.negotiate(vs, "4.1") == "4.1"
    assert storage.negotiate(vs, "3") == "3"
    with pytest.raises(MountError, match="Protocol not supported"):
        storage.negotiate(vs, "4.0")
    v3only = state.Vserver("svm", nfs_v3=True, nfs_v40=False, nfs_v41=False)
    assert storage.negotiate(v3only, None) == "3"
    with pytest.raises(MountError, match="Protocol not supported"):
        storage.negotiate(v3only, "4.1")
    with pytest.raises(MountError, match="Protocol not supported"):
        storage.negotiate(v3only, "4")
    nov3 = state.Vserver("svm", nfs_v3=False, nfs_v41=True)
    with pytest.raises(MountError, match="requested NFS version"):
        storage.negotiate(nov3, "3")
