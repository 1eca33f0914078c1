"""Lab storage with real bindfs mounts: silly rename vs POSIX unlink, df, cleanup."""
from __future__ import annotations

import errno
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tr4947.lab import storage
from tr4947.lab.ontap import bootstrap, session

pytestmark = pytest.mark.lab


def _proc_lines(root: Path) -> list[str]:
    return [l for l in Path("/proc/mounts").read_text().splitlines() if str(root) in l]


@pytest.fixture
def lab(tmp_path, monkeypatch):
    if not shutil.which("bindfs") or not shutil.which("fusermount3") or not os.path.exists("/dev/fuse"):
        pytest.skip("bindfs/fuse3 not available")
    root = tmp_path / "state"
    monkeypatch.setenv("TR4947_LAB_STATE", str(root))
    bootstrap.bootstrap(root, "cluster1", ["cluster1-01"], [{"name": "aggr1", "size": "2TB"}],
                        ["svm_kafka"], [{"name": "lif1", "address": "127.0.10.11",
                                         "vserver": "svm_kafka"}])
    s = session.Session(root)
    r = s.run_sync("set -privilege advanced -confirmations off; "
                   "volume create -vserver svm_kafka -volume fixed -aggregate aggr1 -size 10GB "
                   "-junction-path /fixed -is-preserve-unlink-enabled true; "
                   "volume create -vserver svm_kafka -volume generic -aggregate aggr1 -size 1TB "
                   "-junction-path /generic")
    assert not r.error, r.output
    try:
        yield root
    finally:
        storage.unmount_all(root=root)
        assert _proc_lines(root) == []


def _mp(root, name):
    p = root / "hosts" / name
    p.mkdir(parents=True, exist_ok=True)
    return p


def _unlink_open_then_rmdir(mp: Path):
    d = mp / "topic-0.delete"
    d.mkdir()
    f = open(d / "00000000000000000000.log", "wb")
    f.write(b"x" * 4096)
    f.flush()
    os.unlink(d / "00000000000000000000.log")
    try:
        os.rmdir(d)
        return None, f
    except OSError as exc:
        return exc, f


def test_silly_rename_semantics_nfsv3(lab):
    mp = _mp(lab, "c2b1")
    m = storage.mount("127.0.10.11:/generic", mp, "vers=3", root=lab)
    assert m.semantics == "silly-rename"
    exc, f = _unlink_open_then_rmdir(mp)
    try:
        assert exc is not None and exc.errno == errno.ENOTEMPTY
        assert [p.name for p in (mp / "topic-0.delete").iterdir()][0].startswith(".fuse_hidden")
    finally:
        f.close()


def test_silly_rename_on_v3_even_with_preserve_unlink(lab):
    mp = _mp(lab, "x")
    assert storage.mount("127.0.10.11:/fixed", mp, "vers=3", root=lab).semantics == "silly-rename"


def test_posix_unlink_nfsv41_with_fix(lab):
    mp = _mp(lab, "c1b1")
    m = storage.mount("127.0.10.11:/fixed", mp, "vers=4.1,nconnect=16", root=lab)
    assert m.semantics == "posix-unlink" and m.nconnect == 16
    exc, f = _unlink_open_then_rmdir(mp)
    f.close()
    assert exc is None and not (mp / "topic-0.delete").exists()
    lines = _proc_lines(lab)
    assert any(str(mp) in l and "fuse.nfs4" in l for l in lines)


def test_same_volume_several_mountpoints_and_errors(lab):
    a, b = _mp(lab, "b1"), _mp(lab, "standby")
    storage.mount("127.0.10.11:/fixed", a, "vers=4.1", root=lab)
    storage.mount("127.0.10.11:/fixed", b, "vers=4.1", root=lab)
    (a / "f").write_text("hello")
    assert (b / "f").read_text() == "hello"
    with pytest.raises(storage.MountError, match="already mounted"):
        storage.mount("127.0.10.11:/fixed", a, "vers=4.1", root=lab)
    with pytest.raises(storage.MountError, match="mount.nfs: Connection refused"):
        storage.mount("127.0.10.99:/fixed", _mp(lab, "c"), "vers=4.1", root=lab)
    with pytest.raises(storage.MountError, match="does not exist"):
        storage.mount("127.0.10.11:/fixed", lab / "nope", "vers=4.1", root=lab)
    s = session.Session(lab)
    s.run_sync("vserver nfs modify -vserver svm_kafka -v4.1 disabled")
    with pytest.raises(storage.MountError, match="Protocol not supported"):
        storage.mount("127.0.10.11:/fixed", _mp(lab, "d"), "vers=4.1", root=lab)
    assert len(storage.list_mounts(lab)) == 2
    out = s.run_sync("network connections active show -service nfs*").output
    # Both mounts are one client's, same server address and version: like Linux, they
    # share one connection (nconnect defaults to 1).
    assert out.count("TCP/nfs") == 1 and "lif1:2049" in out
    storage.umount(b, root=lab)
    with pytest.raises(storage.MountError, match="not mounted"):
        storage.umount(b, root=lab)


def test_df_h_numbers(lab):
    mp = _mp(lab, "df")
    storage.mount("127.0.10.11:/fixed", mp, "vers=4.1", root=lab)
    (mp / "data").write_bytes(os.urandom(3 * 1024 * 1024))
    out = storage.df_h(root=lab)
    head, row = out.splitlines()[:2]
    assert head.split() == ["Filesystem", "Size", "Used", "Avail", "Use%", "Mounted", "on"]
    fs, size, used, avail, pct, mounted = row.split()
    # 10GB volume less the 5% snapshot reserve, as an NFS client sees it
    assert fs == "127.0.10.11:/fixed" and size == "9.5G" and used in ("3.0M", "3.1M")
    assert pct == "1%" and mounted == str(mp)
    shown = session.Session(lab).run_sync("volume show -volume fixed -fields used").output
    assert "3MB" in shown or "3.0" in shown


def test_mount_all_fstab_and_cli(lab, tmp_path, monkeypatch):
    hr = lab / "hosts" / "broker1"
    for d in ("kafka_aggr3_vol1", "kafka_aggr3_vol2", "etc"):
        (hr / d).mkdir(parents=True, exist_ok=True)
    (hr / "etc" / "fstab").write_text(
        "# TR CVO-3\n"
        "127.0.10.11:/fixed /kafka_aggr3_vol1 nfs defaults,nconnect=16 0 0\n"
        "127.0.10.11:/generic /kafka_aggr3_vol2 nfs defaults,nconnect=16 0 0\n")
    bin_dir = tmp_path / "bin"
    storage.install_shims(bin_dir)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", TR4947_HOST_ROOT=str(hr),
               TR4947_LAB_STATE=str(lab), LAB_HOST_ADDRESS="127.0.1.1")
    run = lambda cmd: subprocess.run(cmd, shell=True, env=env, capture_output=True, text=True)  # noqa
    r = run("mount -a")
    assert r.returncode == 0, r.stderr
    assert len(storage.list_mounts(lab)) == 2
    assert run("mount -a").returncode == 0                   # already mounted: skipped
    r = run("df -h")
    assert r.returncode == 0 and "127.0.10.11:/generic" in r.stdout and "1013G" not in r.stdout
    conns = session.Session(lab).run_sync(
        "network connections active show -service nfs* -fields remote-host").output
    # Two nconnect=16 mounts of the same LIF and NFS version share the first one's 16
    # connections (Linux keeps one transport set per server address and version).
    assert "16 entries were displayed." in conns and "127.0.1.1" in conns
    r = run("mount -t nfs -o vers=4.1 127.0.10.11:/fixed /kafka_aggr3_vol1")
    assert r.returncode == 32 and "already mounted" in r.stderr
    r = run("mount -t nfs -o vers=9 127.0.10.11:/fixed /kafka_aggr3_vol1")
    assert r.returncode == 32 and "incorrect mount option" in r.stderr
    r = run("mount -q")
    assert r.returncode == 1 and "invalid option" in r.stderr
    assert "type nfs4 (rw,relatime,vers=4.2" in run("mount").stdout
    assert run("umount /kafka_aggr3_vol1").returncode == 0
    assert len(storage.list_mounts(lab)) == 1
    # umount -a -t: this host's lab mounts of those types, never the machine's own
    assert run("umount -a -t ext4").returncode == 0 and len(storage.list_mounts(lab)) == 1
    assert run("umount -a -t nfs,nfs4").returncode == 0
    assert storage.list_mounts(lab) == []


def test_crashed_bindfs_is_cleaned_up(lab):
    mp = _mp(lab, "crash")
    m = storage.mount("127.0.10.11:/generic", mp, "vers=3", root=lab)
    assert m.pid
    os.kill(m.pid, signal.SIGKILL)
    time.sleep(0.3)
    assert any(str(mp) in l for l in _proc_lines(lab))       # stale mount left behind
    # and a mount whose registry entry is gone (the process that made it crashed)
    mp2 = _mp(lab, "orphan")
    storage.mount("127.0.10.11:/fixed", mp2, "vers=4.1", root=lab)
    (lab / "mounts.json").write_text("[]")
    done = storage.unmount_all(root=lab)
    assert str(mp) in done and str(mp2) in done
    assert _proc_lines(lab) == []
    assert storage.unmount_all(root=lab) == []               # idempotent


def test_nconnect_connections_per_client_server_and_version(lab):
    """network connections active show counts connections as a Linux client opens them:
    one set per (client, server address, NFS version), sized by the first mount's nconnect."""
    from tr4947.lab.ontap import bootstrap as boot, state as st
    with st.transaction(lab) as c:
        boot.add_lif(c, {"name": "lif2", "address": "127.0.10.12", "vserver": "svm_kafka"})
    plan = [("127.0.10.11:/fixed", "a1", "vers=4.1,nconnect=16", "127.0.1.1"),
            ("127.0.10.11:/generic", "a2", "vers=4.1,nconnect=4", "127.0.1.1"),   # joins a1's
            ("127.0.10.12:/fixed", "a3", "vers=4.1,nconnect=8", "127.0.1.1"),     # other LIF
            ("127.0.10.11:/generic", "a4", "vers=3,nconnect=2", "127.0.1.1"),     # other version
            ("127.0.10.11:/fixed", "b1", "vers=4.1,nconnect=16", "127.0.1.2")]    # other client
    for source, mp, opts, client in plan:
        storage.mount(source, _mp(lab, mp), opts, root=lab, client=client)
    out = session.Session(lab).run_sync(
        "network connections active show -service nfs* -fields lif-name,remote-ip").output
    rows = [l.split() for l in out.splitlines()[2:] if l.startswith("cluster1")]
    per = {}
    for _node, _cid, lif, ip in rows:
        per[(lif, ip)] = per.get((lif, ip), 0) + 1
    assert per == {("lif1", "127.0.1.1"): 16 + 2, ("lif2", "127.0.1.1"): 8,
                   ("lif1", "127.0.1.2"): 16}
    assert f"{16 + 2 + 8 + 16} entries were displayed." in out
