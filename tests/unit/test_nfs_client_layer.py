"""The lab's NFS client layer (tr4947-nfs, lab/nfs-client) on a scratch directory: both unlink
semantics, the `.nfs` names the Linux client gives, FUSE passthrough against the served
fallback, and the drill hooks (pause, ENOSPC from the storage stand-in's accounting, reconnect
after a LIF move, locks held by the server until the lease runs out).

No lab: the layer mounts a temporary backing directory as root; the hooks that need the
storage stand-in run its NFS service on 127.0.0.1 with a temporary ONTAP state whose data LIF
is 127.0.0.1, and mount through the lab's own mount code (tr4947.lab.nfsclient)."""
from __future__ import annotations

import errno
import fcntl
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tr4947 import paths
from tr4947.lab import nfsclient, storage
from tr4947.lab.ontap import bootstrap, session, state

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not os.path.exists("/dev/fuse"),
                                reason="mounting FUSE needs root and /dev/fuse")

SRC = Path(__file__).resolve().parents[2] / "src"


def wait_for(check, timeout: float, what: str, interval: float = 0.05):
    deadline = time.monotonic() + timeout
    while True:
        v = check()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up after {timeout}s waiting for {what}")
        time.sleep(interval)


class Layer:
    """One tr4947-nfs mount of a scratch backing directory, without a server."""

    def __init__(self, tmp: Path, semantics: str, *extra: str, backing: Path | None = None):
        self.backing, self.mp = backing or tmp / "backing", tmp / "mnt"
        if backing is None:
            self.backing.mkdir()
        self.mp.mkdir()
        self.sock = tmp / "control.sock"
        self.proc = subprocess.Popen(
            [str(paths.nfs_client_binary()), str(self.backing), str(self.mp), "--semantics",
             semantics, "--control", str(self.sock), "--silly-counter", str(tmp / "counter"),
             *extra], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.ready = json.loads(self.proc.stdout.readline() or b"{}")
        assert self.ready.get("ready"), self.proc.stderr.read().decode()

    def ctl(self, **req) -> dict:
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(str(self.sock))
            s.sendall((json.dumps(req) + "\n").encode())
            return json.loads(s.makefile().readline())

    def close(self):
        subprocess.run(["fusermount3", "-u", str(self.mp)], capture_output=True)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            subprocess.run(["fusermount3", "-uz", str(self.mp)], capture_output=True)
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def layer(tmp_path):
    made = []

    def make(semantics: str, *extra: str) -> Layer:
        d = tmp_path / f"m{len(made)}"
        d.mkdir()
        made.append(Layer(d, semantics, *extra))
        return made[-1]
    yield make
    for m in made:
        m.close()


# --- unlink semantics ----------------------------------------------------------------------------
def test_silly_rename_names_the_file_as_the_linux_client_and_removes_it_on_last_close(layer):
    m = layer("silly-rename")
    d = m.mp / "topic-0.abc-delete"
    d.mkdir()
    f = d / "00000000000000000000.log"
    fd = os.open(f, os.O_RDWR | os.O_CREAT, 0o644)
    os.write(fd, b"segment")
    fileid = os.fstat(fd).st_ino
    os.unlink(f)
    # renamed, not removed: .nfs + the file id (16 hex digits) + the host's counter (8)
    assert os.listdir(d) == [f".nfs{fileid:016x}{1:08x}"]
    assert (m.backing / d.name / f".nfs{fileid:016x}00000001").exists()
    # the handle still reads and writes the data
    assert os.pread(fd, 7, 0) == b"segment"
    os.pwrite(fd, b"-more", 7)
    assert os.pread(fd, 12, 0) == b"segment-more"
    # the directory is not empty: Kafka's DirectoryNotEmptyException on the -delete dir
    with pytest.raises(OSError) as e:
        os.rmdir(d)
    assert e.value.errno == errno.ENOTEMPTY
    os.close(fd)
    # the last close removed it; FUSE sends RELEASE after close() returns, as the Linux NFS
    # client's silly delete is an asynchronous RPC, so the name goes shortly after
    wait_for(lambda: os.listdir(d) == [], 5, "the .nfs file to go after the last close")
    os.rmdir(d)
    st = m.ctl(op="status")
    assert (st["silly_renames"], st["silly_deletes"], st["semantics"]) == (1, 1, "silly-rename")


def test_the_counter_goes_on_across_files_and_a_closed_file_is_simply_removed(layer):
    m = layer("silly-rename")
    fds = []
    for i in range(3):
        p = m.mp / f"f{i}"
        p.write_bytes(b"x")
        fds.append(os.open(p, os.O_RDONLY))
        os.unlink(p)
    names = os.listdir(m.mp)
    # .nfs<fileid><counter>: the fileid leads, so only the counters are ordered
    assert sorted(n[-8:] for n in names) == ["00000001", "00000002", "00000003"]
    assert all(len(n) == 28 and n.startswith(".nfs") for n in names)
    (m.mp / "closed").write_bytes(b"y")
    os.unlink(m.mp / "closed")              # not open: removed, no .nfs file
    assert len(os.listdir(m.mp)) == 3
    for fd in fds:
        os.close(fd)
    wait_for(lambda: os.listdir(m.mp) == [], 5, "the .nfs files to go after the last closes")


def test_rename_over_an_open_file_silly_renames_the_target(layer):
    m = layer("silly-rename")
    (m.mp / "old").write_bytes(b"old")
    (m.mp / "new").write_bytes(b"new")
    fd = os.open(m.mp / "old", os.O_RDONLY)
    os.rename(m.mp / "new", m.mp / "old")
    assert (m.mp / "old").read_bytes() == b"new"
    assert os.pread(fd, 3, 0) == b"old"
    assert [n for n in os.listdir(m.mp) if n.startswith(".nfs")]
    os.close(fd)
    wait_for(lambda: os.listdir(m.mp) == ["old"], 5, "the renamed-over file's .nfs name to go")


def test_posix_unlink_removes_the_name_at_once_and_open_handles_keep_the_data(layer):
    m = layer("posix-unlink")
    d = m.mp / "topic-0.abc-delete"
    d.mkdir()
    fd = os.open(d / "seg", os.O_RDWR | os.O_CREAT, 0o644)
    os.write(fd, b"data")
    os.unlink(d / "seg")
    assert os.listdir(d) == [] and os.listdir(m.backing / d.name) == []
    os.rmdir(d)                             # empty: the move's -delete dir goes
    # read and written through the handle still open
    assert os.pread(fd, 4, 0) == b"data"
    os.pwrite(fd, b"+tail", 4)
    assert os.pread(fd, 9, 0) == b"data+tail"
    assert os.fstat(fd).st_nlink == 0
    os.close(fd)
    assert m.ctl(op="status")["silly_renames"] == 0


# --- passthrough and the fallback ---------------------------------------------------------------
def test_passthrough_data_never_reaches_the_server_and_the_fallback_serves_it(layer):
    pt = layer("posix-unlink")
    served = layer("posix-unlink", "--no-passthrough")
    for m in (pt, served):
        with open(m.mp / "f", "wb") as f:
            f.write(b"z" * 1_000_000)
        assert (m.mp / "f").read_bytes() == b"z" * 1_000_000
        assert (m.backing / "f").stat().st_size == 1_000_000
    s_pt, s_served = pt.ctl(op="status"), served.ctl(op="status")
    # this kernel has CONFIG_FUSE_PASSTHROUGH and the backing is ext4: passthrough on
    assert s_pt["passthrough"] is True and s_pt["layer"].endswith("(FUSE passthrough)")
    assert s_pt["bytes_written"] == 0 and s_pt["ops"]["write"] == 0
    assert s_pt["opens_passthrough"] >= 2 and s_pt["opens_served"] == 0
    assert s_served["passthrough"] is False
    assert s_served["layer"].startswith("tr4947-nfs 0.1.0 (no passthrough: turned off")
    assert s_served["bytes_written"] == 1_000_000 and s_served["bytes_read"] >= 1_000_000
    assert s_served["opens_served"] >= 2


def test_where_the_kernel_refuses_passthrough_the_layer_serves_the_data_and_says_why(tmp_path):
    """A backing directory on a mount of the layer itself (file systems stacked two deep) is
    one the kernel refuses as a passthrough backing file: the probe sees it, and the mount
    serves reads and writes itself and says why."""
    (tmp_path / "lower").mkdir()
    lower = Layer(tmp_path / "lower", "posix-unlink")
    try:
        (tmp_path / "upper").mkdir()
        upper = Layer(tmp_path / "upper", "silly-rename", backing=lower.mp)
        try:
            assert upper.ready["passthrough"] is False, upper.ready
            assert upper.ready["layer"].startswith(
                "tr4947-nfs 0.1.0 (no passthrough: the kernel refused a backing file:"), upper.ready
            (upper.mp / "f").write_bytes(b"served")
            assert (upper.mp / "f").read_bytes() == b"served"
            assert (lower.backing / "f").read_bytes() == b"served"
            st = upper.ctl(op="status")
            assert st["bytes_written"] == 6 and st["opens_served"] >= 2
            assert st["opens_passthrough"] == 0
            assert os.listdir(lower.backing) == ["f"]          # no probe file left behind
        finally:
            upper.close()
    finally:
        lower.close()


def test_layer_names_the_mode_for_provenance():
    text = nfsclient.layer()
    assert text == "tr4947-nfs 0.1.0 (FUSE passthrough)", text


# --- pause -----------------------------------------------------------------------------------------
def test_pause_blocks_every_request_until_resumed(layer):
    m = layer("silly-rename", "--no-passthrough")
    fd = os.open(m.mp / "f", os.O_RDWR | os.O_CREAT, 0o644)
    assert m.ctl(op="pause")["ok"]
    done = threading.Event()

    def writer():
        os.pwrite(fd, b"during the pause", 0)
        done.set()
    t = threading.Thread(target=writer, daemon=True)
    t.start()
    assert not done.wait(0.7), "a write went through a paused mount"
    assert m.ctl(op="status")["paused"] is True
    assert m.ctl(op="resume")["ok"]
    assert done.wait(5)
    os.close(fd)
    assert (m.backing / "f").read_bytes() == b"during the pause"
    assert m.ctl(op="status")["waited"] >= 1


def test_a_timed_pause_ends_by_itself(layer):
    m = layer("posix-unlink", "--no-passthrough")
    m.ctl(op="pause", seconds=1.0)
    t0 = time.monotonic()
    os.listdir(m.mp)
    assert 0.8 <= time.monotonic() - t0 < 5
    assert m.ctl(op="status")["paused"] is False
    assert m.ctl(op="pause", seconds=-1)["ok"] is False


# --- with the storage stand-in's NFS service ------------------------------------------------------
@pytest.fixture
def stand_in(tmp_path, monkeypatch):
    """An ONTAP stand-in state with one data LIF on 127.0.0.1 and its NFS service on a free
    port; mounts go through tr4947.lab.nfsclient with a registry of their own."""
    root = tmp_path / "state"
    bootstrap.bootstrap(root, "cluster1", ["cluster1-01", "cluster1-02"],
                        [{"name": "aggr1", "size": "2TB"}], ["svm_kafka"],
                        [{"name": "lif1", "address": "127.0.0.1", "vserver": "svm_kafka",
                          "node": "cluster1-01"}])
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    svc = subprocess.Popen([sys.executable, "-m", "tr4947.lab.storage", "--listen",
                            f"127.0.0.1:{port}", "--state-root", str(root)],
                           env={**os.environ, "PYTHONPATH": str(SRC)},
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(lambda: _port_open(port), 15, "the NFS service")
    monkeypatch.setattr(nfsclient, "NFS_PORT", port)
    monkeypatch.setattr(nfsclient, "REGISTRY", tmp_path / "run" / "nfs-mounts.json")
    mounted = []

    def run(cmd: str):
        r = session.Session(root).run_sync("set -privilege advanced -confirmations off; " + cmd)
        assert not r.error, r.output
        return r.output

    def mount(volume: str, options: str = "vers=3", name: str | None = None) -> Path:
        mp = tmp_path / (name or f"mnt-{volume}-{len(mounted)}")
        mp.mkdir()
        nfsclient.mount(f"127.0.0.1:/{volume}", mp, options)
        mounted.append(mp)
        return mp

    class S:
        pass
    s = S()
    s.root, s.run, s.mount, s.tmp = root, run, mount, tmp_path
    yield s
    for mp in reversed(mounted):
        try:
            nfsclient.umount(mp)
        except nfsclient.MountError:
            subprocess.run(["fusermount3", "-uz", str(mp)], capture_output=True)
    svc.terminate()
    svc.wait(10)


def _port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), 0.2):
            return True
    except OSError:
        return False


def test_mount_records_the_layer_and_the_granted_semantics(stand_in):
    stand_in.run("volume create -vserver svm_kafka -volume v1 -aggregate aggr1 -size 1GB "
                 "-junction-path /v1 -is-preserve-unlink-enabled true")
    mp = stand_in.mount("v1", "vers=4.1")
    [m] = nfsclient.list_mounts()
    assert (m.semantics, m.vers, m.layer) == ("posix-unlink", "4.1",
                                              "tr4947-nfs 0.1.0 (FUSE passthrough)")
    st = nfsclient.status(mp)
    assert st["connected"] and st["server"]["lease_seconds"] == 30
    assert st["server"]["grace_seconds"] == 45 and st["server"]["reconnects"] == 0
    out = nfsclient.nfsstat(["-m"])
    assert out.startswith(f"{mp} from 127.0.0.1:/v1\n Flags:\trw,relatime,vers=4.1,")
    (mp / "x").write_bytes(b"1")
    assert "Client nfs v4:" in nfsclient.nfsstat(["-c"])
    mp3 = stand_in.mount("v1", "vers=3")
    assert nfsclient.status(mp3)["semantics"] == "silly-rename"
    assert "Client nfs v3:" in nfsclient.nfsstat(["-c"])


def test_enospc_at_the_volume_size_and_gone_once_the_volume_grows(stand_in):
    # 20MB (ONTAP's smallest FlexVol), 5% snapshot reserve: 19 MiB for data
    stand_in.run("volume create -vserver svm_kafka -volume small -aggregate aggr1 -size 20MB "
                 "-junction-path /small")
    mp = stand_in.mount("small", "vers=3,x-lab-nopassthrough")
    assert nfsclient.status(mp)["passthrough"] is False
    chunk = b"k" * (1024 * 1024)
    written = 0
    with open(mp / "log", "wb", buffering=0) as f:
        with pytest.raises(OSError) as e:
            for _ in range(40):
                written += f.write(chunk)
        assert e.value.errno == errno.ENOSPC
        assert 18 * 2 ** 20 <= written <= 19 * 2 ** 20 + 2 ** 20
        # the storage side grows the volume: the same mount takes writes again
        stand_in.run("volume size -vserver svm_kafka -volume small 40MB")
        for _ in range(5):
            written += f.write(chunk)
    assert nfsclient.status(mp)["enospc"] >= 1
    assert (state.backing_dir(state.load(stand_in.root).volumes["svm_kafka:small"],
                              stand_in.root) / "log").stat().st_size == written


def test_autosize_grows_the_volume_instead_of_failing_the_write(stand_in):
    stand_in.run("volume create -vserver svm_kafka -volume auto -aggregate aggr1 -size 20MB "
                 "-junction-path /auto; "
                 "volume autosize -vserver svm_kafka -volume auto -mode grow -maximum-size 60MB")
    mp = stand_in.mount("auto", "vers=3,x-lab-nopassthrough")
    with open(mp / "log", "wb", buffering=0) as f:
        for _ in range(30):
            f.write(b"a" * (1024 * 1024))
    size = state.load(stand_in.root).volumes["svm_kafka:auto"].size
    assert 30 * 2 ** 20 < size <= 60 * 2 ** 20


def test_the_connection_drops_when_the_lif_moves_io_waits_and_the_mount_reconnects(stand_in):
    stand_in.run("volume create -vserver svm_kafka -volume mv -aggregate aggr1 -size 1GB "
                 "-junction-path /mv")
    mp = stand_in.mount("mv", "vers=4.1,x-lab-nopassthrough")
    (mp / "before").write_bytes(b"1")
    stand_in.run("network interface migrate -vserver svm_kafka -lif lif1 "
                 "-destination-node cluster1-02")
    wait_for(lambda: not nfsclient.status(mp)["connected"], 5, "the connection to drop")
    t0 = time.monotonic()
    os.listdir(mp)                          # blocks until the client is back
    blocked = time.monotonic() - t0
    st = nfsclient.status(mp)
    assert st["connected"] and st["server"]["reconnects"] == 1 and blocked > 0.1, (blocked, st)
    # measured by the client, from the loss to the session back: at least the state's
    # migrate window (less the watcher's poll), at most that plus a reconnection backoff
    out = st["server"]["last_outage_ms"]
    assert 700 <= out <= 4500 and st["server"]["outages_ms"] == [out], st["server"]
    (mp / "after").write_bytes(b"2")
    assert sorted(os.listdir(mp)) == ["after", "before"]
    # back home: one more drop and reconnection
    stand_in.run("network interface revert -vserver svm_kafka -lif lif1")
    wait_for(lambda: nfsclient.status(mp)["server"]["reconnects"] == 2, 10, "the second reconnect")


def test_a_takeover_and_giveback_cut_the_client_off_for_their_modelled_windows(stand_in):
    """The client measures its outages; each lasts about the ONTAP state's window (the LIF
    moves to the partner with the takeover, and home with the giveback: -auto-revert true)."""
    with state.transaction(stand_in.root) as c:
        c.takeover_seconds, c.giveback_seconds = 1.5, 0.8
        c.lifs["lif1"].auto_revert = True
    stand_in.run("volume create -vserver svm_kafka -volume ha -aggregate aggr1 -size 1GB "
                 "-junction-path /ha")
    mp = stand_in.mount("ha", "vers=4.1,x-lab-nopassthrough")
    (mp / "before").write_bytes(b"1")
    srv = lambda: nfsclient.status(mp)["server"]                   # noqa: E731
    assert (srv()["last_outage_ms"], srv()["outage_ms_total"]) == (None, 0)
    stand_in.run("storage failover takeover -ofnode cluster1-01")
    wait_for(lambda: srv()["reconnects"] == 1, 15, "the reconnection after the takeover")
    first = srv()["last_outage_ms"]
    assert 1500 - 300 <= first <= 1500 + 3500, srv()
    (mp / "during").write_bytes(b"2")
    stand_in.run("storage failover giveback -ofnode cluster1-01")
    wait_for(lambda: srv()["reconnects"] == 2, 15, "the reconnection after the giveback")
    s = srv()
    assert 800 - 300 <= s["last_outage_ms"] <= 800 + 3500, s
    assert s["outages_ms"] == [first, s["last_outage_ms"]]
    assert s["outage_ms_total"] == first + s["last_outage_ms"]
    assert sorted(os.listdir(mp)) == ["before", "during"]


def test_a_soft_mount_fails_a_request_with_eio_at_its_major_timeout_a_hard_one_waits(stand_in):
    """soft,timeo=10,retrans=1: the request waits 1 s, then 2 s more (nfs(5)'s linear
    backoff), then fails with EIO; the mount table says soft with its timeo and retrans. The
    hard mount beside it waits through the same stall and goes on."""
    stand_in.run("volume create -vserver svm_kafka -volume sm -aggregate aggr1 -size 1GB "
                 "-junction-path /sm")
    soft = stand_in.mount("sm", "vers=4.1,soft,timeo=10,retrans=1,x-lab-nopassthrough",
                          name="soft")
    hard = stand_in.mount("sm", "vers=4.1,x-lab-nopassthrough", name="hard")
    shown = {m.mountpoint: m.proc_options() for m in nfsclient.list_mounts()}
    assert {"soft", "timeo=10", "retrans=1"} <= set(shown[str(soft)].split(","))
    assert {"hard", "timeo=600", "retrans=2"} <= set(shown[str(hard)].split(","))
    assert nfsclient.status(soft)["soft"] == 3.0 and nfsclient.status(hard)["soft"] is None
    f = open(soft / "f", "wb", buffering=0)
    g = open(hard / "g", "wb", buffering=0)
    try:
        nfsclient.pause(soft)
        nfsclient.pause(hard)
        t0 = time.monotonic()
        with pytest.raises(OSError) as e:
            f.write(b"x")
        waited = time.monotonic() - t0
        assert e.value.errno == errno.EIO and 2.9 <= waited <= 6, (e.value, waited)
        assert nfsclient.status(soft)["soft_timeouts"] >= 1
        done = threading.Event()
        writer = threading.Thread(target=lambda: (g.write(b"y"), done.set()), daemon=True)
        writer.start()
        assert not done.wait(4), "a hard mount's write waits as long as the stall"
        nfsclient.resume(hard)
        assert done.wait(5)
        assert nfsclient.status(hard)["soft_timeouts"] == 0
    finally:
        nfsclient.resume(soft)
        nfsclient.resume(hard)
        f.close()
        g.close()


def _try_lock(path: Path) -> bool:
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError as e:
        assert e.errno in (errno.EAGAIN, errno.EACCES), e
        return False
    finally:
        os.close(fd)


def test_a_lock_is_held_across_mounts_and_outlives_a_dead_client_until_its_lease_ends(stand_in):
    stand_in.run("vserver nfs modify -vserver svm_kafka -v4-lease-seconds 10; "
                 "volume create -vserver svm_kafka -volume logs -aggregate aggr1 -size 1GB "
                 "-junction-path /logs -is-preserve-unlink-enabled true")
    a = stand_in.mount("logs", "vers=4.1", name="broker")
    b = stand_in.mount("logs", "vers=4.1", name="standby")
    (a / ".lock").write_bytes(b"")
    # a live holder: the other mount cannot take it; released on close, it can
    holder = os.open(a / ".lock", os.O_RDWR)
    fcntl.lockf(holder, fcntl.LOCK_EX | fcntl.LOCK_NB)
    assert not _try_lock(b / ".lock")
    os.close(holder)
    assert _try_lock(b / ".lock")
    # the holder's client dies with the lock held: the lock stays until the lease runs out
    holder = os.open(a / ".lock", os.O_RDWR)
    fcntl.lockf(holder, fcntl.LOCK_EX | fcntl.LOCK_NB)
    [ma] = [m for m in nfsclient.list_mounts() if m.mountpoint == str(a)]
    os.kill(ma.pid, signal.SIGKILL)
    died = time.monotonic()
    nfsclient._wait_gone(ma.pid, 5)           # reaped (the test process started it)
    assert not _try_lock(b / ".lock")
    free_at = wait_for(lambda: _try_lock(b / ".lock") and time.monotonic(), 20,
                       "the dead client's lease to run out", interval=0.5)
    assert 9 <= free_at - died <= 14, free_at - died
    try:
        os.close(holder)
    except OSError:
        pass                                  # its mount is gone
    subprocess.run(["fusermount3", "-uz", str(a)], capture_output=True)
