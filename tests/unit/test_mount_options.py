"""The lab's NFS client and server deciding a mount: mount(8) syntax and NFS options (the
host's shims, tr4947.lab.nfsclient), and what the storage stand-in answers
(tr4947.lab.storage): which volume a LIF and path name, the NFS version a Linux client ends
up with, and the TR's version x preserve-unlink -> semantics table."""
from __future__ import annotations

import pytest

from tr4947.lab import nfsclient, storage
from tr4947.lab.nfsclient import MountError, parse_mount_argv, parse_nfs_options
from tr4947.lab.ontap import bootstrap, session, state


def test_tr_mount_command():
    r = parse_mount_argv("mount -t nfs -o vers=4.1,nconnect=16 198.18.10.11:/kafka_vol /mnt/kafka".split())
    assert (r.fstype, r.source, r.mountpoint) == ("nfs", "198.18.10.11:/kafka_vol", "/mnt/kafka")
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
    with pytest.raises(storage.MountError, match="Protocol not supported"):
        storage.negotiate(vs, "4.0")
    v3only = state.Vserver("svm", nfs_v3=True, nfs_v40=False, nfs_v41=False)
    assert storage.negotiate(v3only, None) == "3"
    with pytest.raises(storage.MountError, match="Protocol not supported"):
        storage.negotiate(v3only, "4.1")
    with pytest.raises(storage.MountError, match="Protocol not supported"):
        storage.negotiate(v3only, "4")
    assert storage.negotiate(state.Vserver("svm", nfs_v40=True), "4") == "4.0"
    nov3 = state.Vserver("svm", nfs_v3=False, nfs_v41=True)
    with pytest.raises(storage.MountError, match="requested NFS version"):
        storage.negotiate(nov3, "3")
    with pytest.raises(storage.MountError, match="Protocol not supported"):
        storage.negotiate(vs, "2")
    with pytest.raises(storage.MountError, match="Connection refused"):
        storage.negotiate(state.Vserver("svm", nfs_access=False), None)


# --- the server's side: a temporary ONTAP stand-in state --------------------------------------
LIF1, LIF2 = "198.18.10.11", "198.18.10.12"


@pytest.fixture
def ontap(tmp_path):
    root = tmp_path / "state"
    bootstrap.bootstrap(root, "cluster1", ["cluster1-01"], [{"name": "aggr1", "size": "2TB"}],
                        ["svm_kafka", "svm_other"],
                        [{"name": "lif1", "address": LIF1, "vserver": "svm_kafka"},
                         {"name": "lif2", "address": LIF2, "vserver": "svm_other"}])
    r = session.Session(root).run_sync(
        "set -privilege advanced -confirmations off; "
        "volume create -vserver svm_kafka -volume fixed -aggregate aggr1 -size 10GB "
        "-junction-path /fixed -is-preserve-unlink-enabled true; "
        "volume create -vserver svm_kafka -volume nested -aggregate aggr1 -size 10GB "
        "-junction-path /fixed/nested; "
        "volume create -vserver svm_kafka -volume generic -aggregate aggr1 -size 1TB "
        "-junction-path /generic; "
        "volume create -vserver svm_other -volume fixed -aggregate aggr1 -size 1GB "
        "-junction-path /fixed")
    assert not r.error, r.output
    return root


def test_resolve_picks_the_svm_by_lif_and_the_volume_by_longest_junction(ontap):
    c = state.load(ontap)
    vs, vol, sub = storage.resolve(c, LIF1, "/fixed", "x")
    assert (vs.name, vol.key, sub) == ("svm_kafka", "svm_kafka:fixed", "")
    assert storage.resolve(c, LIF1, "//fixed//broker_1/", "x")[1:] == (c.volumes["svm_kafka:fixed"],
                                                                    "broker_1")
    assert storage.resolve(c, LIF1, "/fixed/nested/a", "x")[1].key == "svm_kafka:nested"
    # the same junction on another LIF is another SVM's volume
    assert storage.resolve(c, LIF2, "/fixed", "x")[1].key == "svm_other:fixed"


@pytest.mark.parametrize("lif,path,message", [
    ("198.18.10.99", "/fixed", "mount.nfs: Connection refused"),       # no data LIF there
    ("198.18.10.1", "/fixed", "mount.nfs: Connection refused"),
    (LIF2, "/generic", "No such file or directory"),                   # not a junction of that SVM
    (LIF1, "/nope", "No such file or directory"),
    (LIF1, "/fixed/../generic", "access denied by server"),
])
def test_resolve_refuses_like_an_nfs_server(ontap, lif, path, message):
    with pytest.raises(storage.MountError, match=message.replace(".", r"\.")):
        storage.resolve(state.load(ontap), lif, path, f"{lif}:{path}")


def test_an_offline_volume_is_refused(ontap):
    r = session.Session(ontap).run_sync("volume offline -vserver svm_kafka -volume generic")
    assert not r.error, r.output
    with pytest.raises(storage.MountError, match="access denied by server while mounting x"):
        storage.resolve(state.load(ontap), LIF1, "/generic", "x")


def test_grant_decides_version_and_semantics_and_release_forgets_it(ontap):
    m = storage.grant(ontap, LIF1, "198.18.1.1", "/fixed", vers=None, fstype="nfs",
                      options="", nconnect=1, mountpoint="/demo")
    assert (m.vers, m.semantics) == ("4.2", "posix-unlink")
    v3 = storage.grant(ontap, LIF1, "198.18.1.2", "/fixed", vers="3", fstype="nfs",
                       options="vers=3", nconnect=4, mountpoint="/demo")
    assert (v3.vers, v3.semantics, v3.nconnect) == ("3", "silly-rename", 4)
    g = storage.grant(ontap, LIF1, "198.18.1.1", "/generic", vers="4.1", fstype="nfs",
                      options="vers=4.1", nconnect=1, mountpoint="/other")
    assert g.semantics == "silly-rename"                       # no preserve-unlink
    assert m.backing == str(state.backing_dir(state.load(ontap).volumes["svm_kafka:fixed"], ontap))
    assert {e.id for e in storage.list_mounts(ontap)} == {m.id, v3.id, g.id}
    # the same client and mount point again replaces its entry
    again = storage.grant(ontap, LIF1, "198.18.1.1", "/fixed", vers="4.1", fstype="nfs",
                          options="vers=4.1", nconnect=1, mountpoint="/demo")
    assert {e.id for e in storage.list_mounts(ontap)} == {again.id, v3.id, g.id}
    assert not storage.release(ontap, "198.18.1.9", again.id)       # only its client releases
    assert storage.release(ontap, "198.18.1.1", again.id)
    assert {e.id for e in storage.list_mounts(ontap)} == {v3.id, g.id}
    with pytest.raises(storage.MountError, match="mounting 198.18.10.11:/fixed/sub failed, "
                                                 "reason given by server: No such file"):
        storage.grant(ontap, LIF1, "198.18.1.1", "/fixed/sub", vers=None, fstype="nfs",
                      options="", nconnect=1, mountpoint="/x")


def test_statfs_reports_size_less_snapshot_reserve_and_bytes_used(ontap):
    m = storage.grant(ontap, LIF1, "198.18.1.1", "/fixed", vers=None, fstype="nfs",
                      options="", nconnect=1, mountpoint="/demo")
    (state.backing_dir(state.load(ontap).volumes["svm_kafka:fixed"], ontap) / "f").write_bytes(
        b"x" * 3 * 1024 * 1024)
    s = storage.statfs(ontap, m.id)
    assert s["size"] == int(10 * 1024 ** 3 * 0.95)             # 5% snapshot reserve
    assert 3 * 1024 * 1024 <= s["used"] < 4 * 1024 * 1024
    assert s["avail"] == s["size"] - s["used"]
    with pytest.raises(storage.MountError, match="Stale file handle"):
        storage.statfs(ontap, "no-such-id")


# --- how long a mount waits for a silent server (nfs(5), tr4947.nfs_timeouts) --------------
def test_the_major_timeout_grows_by_timeo_after_each_retransmission():
    from tr4947.nfs_timeouts import major_timeout_s
    assert major_timeout_s() == 60 + 120 + 180           # timeo=600,retrans=2: TCP's defaults
    assert major_timeout_s(50, 1) == 5 + 10
    assert major_timeout_s(50, 0) == 5
    assert major_timeout_s(3000, 2) == 300 + 600 + 600   # no single wait is over 600 s


@pytest.mark.parametrize("opts, soft, timeo, retrans", [
    ("vers=4.1", False, 600, 2),
    ("soft,timeo=50,retrans=1", True, 50, 1),
    ("soft,hard", False, 600, 2),                        # the last of them wins
    ("hard,softerr,timeo=150", True, 150, 2),
])
def test_the_mount_shim_reads_hard_soft_timeo_and_retrans(opts, soft, timeo, retrans):
    o = parse_nfs_options(opts)
    assert (o.timeouts.soft, o.timeouts.timeo, o.timeouts.retrans) == (soft, timeo, retrans)


def test_the_mount_table_shows_the_mounts_own_timeouts():
    m = nfsclient.ClientMount(source="198.18.10.11:/v", mountpoint="/m", options="soft",
                              fstype="nfs", vers="4.1", nconnect=1, semantics="posix-unlink",
                              server_id="1", client="198.18.4.1", soft=True, timeo=50,
                              retrans=1)
    shown = m.proc_options().split(",")
    assert "soft" in shown and "hard" not in shown
    assert "timeo=50" in shown and "retrans=1" in shown
    hard = nfsclient.ClientMount(source="198.18.10.11:/v", mountpoint="/m", options="",
                                 fstype="nfs", vers="4.1", nconnect=1, semantics="posix-unlink",
                                 server_id="1", client="198.18.4.1")
    assert {"hard", "timeo=600", "retrans=2"} <= set(hard.proc_options().split(","))


def test_a_timeout_that_is_not_a_whole_number_is_refused_with_what_to_give():
    from tr4947.nfs_timeouts import from_options
    with pytest.raises(ValueError, match=r"timeo='5s': give a whole number \(tenths"):
        from_options("soft,timeo=5s")
    with pytest.raises(MountError):
        parse_nfs_options("soft,retrans=two")            # mount.nfs refuses it too
