"""Lab storage over the lab network: a host's own `mount`, `df` and `umount` (the lab's NFS
client shims) asking the storage host's NFS service on a data LIF, run on the client host
through the Target as an operator would run them over SSH. The server decides the version
and the semantics: silly rename unless NFSv4.1+ on a volume with preserve-unlink."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from tr4947.lab import storage
from tr4947.lab.ontap import state

from .conftest import own_lab

pytestmark = pytest.mark.lab

HOST, HOST_ADDRESS = "client-1", "198.19.5.1"
LIF1, LIF2, MGMT = "198.19.10.11", "198.19.10.12", "198.19.10.1"


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """The storage side and the client; two volumes: ``fixed`` (preserve-unlink) and
    ``generic`` (without), made with the clustershell over SSH."""
    with own_lab(tmp_path_factory.mktemp("storage")) as tl:
        t = tl.target()
        t.run("set -privilege advanced -confirmations off; "
              "volume create -vserver svm_kafka -volume fixed -aggregate aggr1 -size 10GB "
              "-junction-path /fixed -is-preserve-unlink-enabled true; "
              "volume create -vserver svm_kafka -volume generic -aggregate aggr1 -size 1TB "
              "-junction-path /generic", "cluster1", check=True)
        yield tl, t


def on_host(t, command: str, check: bool = False):
    return t.run(command, HOST, timeout=180, check=check)


def granted(tl, mountpoint: str) -> list[storage.Mount]:
    """The server's registry entries for this client's mount point."""
    return [m for m in storage.list_mounts(tl.root)
            if m.client == HOST_ADDRESS and m.mountpoint == mountpoint]


def mount(t, source: str, mp: str, options: str = "", fstype: str = "nfs"):
    opts = f"-o {options} " if options else ""
    return on_host(t, f"mkdir -p {mp} && mount -t {fstype} {opts}{source} {mp}")


# An open file unlinked in a Kafka-like "-delete" directory, then the directory removed, as
# Kafka does with a moved partition: the NFS client's semantics decide whether that works.
UNLINK_OPEN_THEN_RMDIR = """\
d=$(mktemp -d {mp}/topic-0.XXXX-delete)
exec 3>"$d/00000000000000000000.log"; echo segment >&3
rm "$d/00000000000000000000.log"
if rmdir "$d" 2>/tmp/rmdir.err; then echo "rmdir: done"; else echo "rmdir: $(cat /tmp/rmdir.err)"; fi
echo "left: $(ls -A "$d" 2>/dev/null)"
exec 3>&-
rm -rf "$d"
"""


@pytest.mark.parametrize("volume,options,semantics", [
    ("generic", "vers=3", "silly-rename"),
    ("fixed", "vers=3", "silly-rename"),          # preserve-unlink needs NFSv4.1+
    ("generic", "vers=4.1", "silly-rename"),      # NFSv4.1 needs preserve-unlink
    ("fixed", "vers=4.1,nconnect=16", "posix-unlink"),
])
def test_semantics_decided_by_version_and_preserve_unlink(lab, volume, options, semantics):
    tl, t = lab
    mp = f"/mnt/sem-{volume}"
    r = mount(t, f"{LIF1}:/{volume}", mp, options)
    assert r.exit_code == 0, r.output
    try:
        [m] = granted(tl, mp)
        assert (m.semantics, m.vers, m.volume) == (semantics, options[5:8].rstrip(","),
                                                   f"svm_kafka:{volume}")
        shown = on_host(t, f"mount | grep ' {mp} '", check=True).stdout
        assert shown.startswith(f"{LIF1}:/{volume} on {mp} type ")
        assert f"vers={m.vers}," in shown and f"clientaddr={HOST_ADDRESS}" in shown
        out = on_host(t, UNLINK_OPEN_THEN_RMDIR.format(mp=mp), check=True).stdout
        if semantics == "silly-rename":
            # the open file was renamed, not removed: the directory cannot go
            assert "rmdir: rmdir: failed to remove" in out and "Directory not empty" in out, out
            # named as the Linux client names it: .nfs, the file id, the client's counter
            assert re.search(r"left: \.nfs[0-9a-f]{24}\n", out), out
        else:
            assert "rmdir: done" in out and "left: \n" in out, out
    finally:
        on_host(t, f"umount {mp}", check=True)


def test_version_negotiated_like_the_linux_client(lab):
    tl, t = lab
    try:
        assert mount(t, f"{LIF1}:/fixed", "/mnt/neg").ok
        assert granted(tl, "/mnt/neg")[0].vers == "4.2"             # the highest both speak
        assert "type nfs4 (rw,relatime,vers=4.2," in on_host(t, "mount -t nfs4").stdout
        on_host(t, "umount /mnt/neg", check=True)
        t.run("vserver nfs modify -vserver svm_kafka -v4.1 disabled", "cluster1", check=True)
        r = mount(t, f"{LIF1}:/fixed", "/mnt/neg", "vers=4.1")
        assert (r.exit_code, r.stderr.strip()) == (32, "mount.nfs: Protocol not supported")
        assert granted(tl, "/mnt/neg") == []
        assert mount(t, f"{LIF1}:/fixed", "/mnt/neg", fstype="nfs4").ok
        assert granted(tl, "/mnt/neg")[0].vers == "4.0"             # what is left of v4
    finally:
        on_host(t, "umount /mnt/neg")
        t.run("vserver nfs modify -vserver svm_kafka -v4.1 enabled", "cluster1", check=True)


@pytest.mark.parametrize("source,mp,message", [
    ("198.19.10.99:/fixed", "/mnt/x", "mount.nfs: Connection refused"),   # no LIF there
    (f"{MGMT}:/fixed", "/mnt/x", "mount.nfs: Connection refused"),        # management, not data
    (f"{LIF1}:/nothing", "/mnt/x", f"mount.nfs: mounting {LIF1}:/nothing failed, reason "
                                   "given by server: No such file or directory"),
    (f"{LIF1}:/fixed", "/nope/deeper", "mount.nfs: mount point /nope/deeper does not exist"),
    (f"{LIF1}/fixed", "/mnt/x", "mount.nfs: remote share not in 'host:dir' format"),
])
def test_refused_mounts_fail_as_mount_nfs_does(lab, source, mp, message):
    tl, t = lab
    on_host(t, "mkdir -p /mnt/x", check=True)
    r = on_host(t, f"mount -t nfs -o vers=4.1 {source} {mp}")
    assert (r.exit_code, r.stderr.strip()) == (32, message)
    assert granted(tl, mp) == [] and f" {mp} " not in on_host(t, "mount").stdout


def test_df_reports_the_volume_as_the_server_sees_it(lab):
    tl, t = lab
    assert mount(t, f"{LIF2}:/fixed", "/mnt/df", "vers=4.1").ok
    try:
        on_host(t, "head -c 3145728 /dev/urandom > /mnt/df/data && sync", check=True)
        # the bytes went through the mount into the volume on the storage side
        vol = state.load(tl.root).volumes["svm_kafka:fixed"]
        assert (state.backing_dir(vol, tl.root) / "data").stat().st_size == 3 * 1024 ** 2
        head, row = on_host(t, "df -h /mnt/df", check=True).stdout.splitlines()
        assert head.split() == ["Filesystem", "Size", "Used", "Avail", "Use%", "Mounted", "on"]
        # 10GB less the 5% snapshot reserve; used from the bytes in the volume
        assert row.split() == [f"{LIF2}:/fixed", "9.5G", "3.0M", "9.5G", "1%", "/mnt/df"]
        # ... and the machine's own df is still the system's
        assert on_host(t, "df -h /").stdout.splitlines()[1].split()[-1] == "/"
    finally:
        on_host(t, "rm -f /mnt/df/data; umount /mnt/df", check=True)


def test_umount_releases_the_servers_entry_and_the_mount_is_the_hosts_own(lab):
    tl, t = lab
    assert mount(t, f"{LIF1}:/generic", "/mnt/rel", "vers=3").ok
    [m] = granted(tl, "/mnt/rel")
    assert (m.client, m.address) == (HOST_ADDRESS, LIF1)
    # the FUSE mount lives in the host's mount namespace, not in this machine's
    assert "/mnt/rel" not in Path("/proc/mounts").read_text()
    assert " /mnt/rel fuse" in tl.exec(HOST, "cat /proc/mounts").stdout
    assert on_host(t, "umount /mnt/rel").ok
    assert granted(tl, "/mnt/rel") == []
    assert " /mnt/rel " not in on_host(t, "mount").stdout
    r = on_host(t, "umount /mnt/rel")
    assert (r.exit_code, r.stderr.strip()) == (32, "umount: /mnt/rel: not mounted.")


def test_mount_a_mounts_the_fstab_lines_once(lab):
    tl, t = lab
    snippet = tl.base / "two.fstab"
    snippet.write_text(f"{LIF1}:/fixed /mnt/fa nfs defaults,vers=4.1,nconnect=4 0 0\n"
                       f"{LIF2}:/generic /mnt/fb nfs vers=3 0 0\n")
    try:
        t.add_fstab_lines(snippet, HOST, check=True)
        on_host(t, "mkdir -p /mnt/fa /mnt/fb && mount -a", check=True)
        assert {(m.mountpoint, m.vers, m.nconnect) for m in storage.list_mounts(tl.root)
                if m.client == HOST_ADDRESS} == {("/mnt/fa", "4.1", 4), ("/mnt/fb", "3", 1)}
        again = on_host(t, "mount -a -v", check=True)         # already mounted: skipped
        assert again.stdout == "" and len(storage.list_mounts(tl.root)) == 2
        r = on_host(t, "mount -t nfs -o vers=9 198.19.10.11:/fixed /mnt/fa")
        assert (r.exit_code, r.stderr.strip()) == (
            32, "mount.nfs: an incorrect mount option was specified")
    finally:
        on_host(t, "umount -a -t nfs,nfs4", check=True)
    assert storage.list_mounts(tl.root) == []
