"""Lab hosts: each one a small Linux machine of its own on this machine.

A host has its own network namespace (address on the lab switch, see network.py), mount
namespace (an overlay of this machine's root with a private upper directory, so ``/demo``,
``/etc/fstab`` or ``/opt/kafka/config`` are the host's own), pid namespace (``ps`` and
``kill`` see only the host's processes; pid 1 is tini) and UTS namespace (its hostname).
Linux hosts run Debian's OpenSSH server: the control node logs in as root with the key the
lab generated, and every command a client sends is logged on the host
(/var/log/tr4947/commands.log, see host/logged-command). The storage side (ONTAP and AWS
stand-ins) are hosts too, running the stand-ins' servers instead of sshd.

The lab itself reaches inside a host only to provision it (``exec`` enters its namespaces,
as a cloud provider's agent would); everything a procedure does goes over SSH.

Files are written into a host's upper directory only before it starts (overlayfs does not
allow changing a mounted layer); afterwards ``exec`` writes through the host.
"""
from __future__ import annotations

import json
import os
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import psutil

from ..atomic import write_json
from ..wait import port_open
from .network import netns_inode

HERE = Path(__file__).resolve().parent / "host"
#: The PATH of a login on a Debian host (root).
HOST_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
COMMAND_LOG = "/var/log/tr4947/commands.log"
SSHD_CONFIG = "/etc/ssh/tr4947/sshd_config"
HOST_KEY = "/etc/ssh/tr4947/ssh_host_ed25519_key"


class HostError(RuntimeError):
    pass


@dataclass
class HostSpec:
    name: str
    role: str                                   # linux | ontap | aws
    addresses: list[str]
    command: list[str] = field(default_factory=list)   # pid 1's child (default: sshd)
    binds: list[str] = field(default_factory=list)     # lab dirs shared at the same path
    hidden: list[str] = field(default_factory=list)    # this machine's dirs the host must not see
    anyip: str | None = None

    @property
    def address(self) -> str:
        return self.addresses[0]


@dataclass
class Record:
    """What the lab keeps about a running host (control/hosts.json)."""
    name: str
    pid: int                                    # `ip netns exec ... unshare` (root namespace)
    create_time: float
    netns: str
    role: str
    address: str

    def unshare(self) -> psutil.Process | None:
        try:
            p = psutil.Process(self.pid)
            return p if abs(p.create_time() - self.create_time) < 1.0 else None
        except psutil.Error:
            return None

    def init(self) -> psutil.Process | None:
        """The host's pid 1 (tini), seen from this machine."""
        u = self.unshare()
        if u is None:
            return None
        try:
            kids = u.children()
        except psutil.Error:
            return None
        return kids[0] if kids else None

    def alive(self) -> bool:
        init = self.init()
        try:
            return init is not None and init.status() != psutil.STATUS_ZOMBIE
        except psutil.Error:
            return False


class LabHost:
    def __init__(self, spec: HostSpec, state_root: Path, netns: str):
        self.spec = spec
        self.state_root = Path(state_root)
        self.netns = netns
        self.dir = self.state_root / "hosts" / spec.name

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def upper(self) -> Path:
        return self.dir / "upper"

    def path(self, host_path: str) -> Path:
        """Where a file the host wrote lives on this machine (read-only use: logs, checks)."""
        return self.upper / host_path.lstrip("/")

    # --- provisioning (before start) ---------------------------------------------------------
    def prepare(self) -> None:
        for d in ("upper", "work", "root"):
            (self.dir / d).mkdir(parents=True, exist_ok=True)
        for d in self.spec.hidden:
            _opaque_dir(self.path(d))
        self.write("/etc/hostname", self.name.replace("_", "-") + "\n")
        self.write("/etc/fstab", f"# /etc/fstab of lab host {self.name}\n")
        (self.path(COMMAND_LOG)).parent.mkdir(parents=True, exist_ok=True)

    def write(self, host_path: str, text: str, mode: int = 0o644) -> Path:
        f = self.path(host_path)
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)
        f.chmod(mode)
        return f

    def link(self, host_path: str, target: str) -> None:
        f = self.path(host_path)
        f.parent.mkdir(parents=True, exist_ok=True)
        if f.is_symlink() or f.exists():
            f.unlink()
        f.symlink_to(target)

    def prepare_sshd(self, authorized_key: str) -> str:
        """OpenSSH server of a Linux host: own host key, root login by key only, every command
        logged. Returns the host's public key line for the control node's known_hosts."""
        key = self.path(HOST_KEY)
        key.parent.mkdir(parents=True, exist_ok=True)
        if not key.exists():
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C",
                            f"root@{self.name}", "-f", str(key)], check=True, timeout=30)
        # This machine's own host keys must not be the lab host's: hide them.
        for k in Path("/etc/ssh").glob("ssh_host_*"):
            _whiteout(self.path(str(k)))
        self.write("/usr/local/libexec/tr4947-logged-command",
                   (HERE / "logged-command").read_text(), 0o755)
        self.write(SSHD_CONFIG, "\n".join([
            f"# sshd of lab host {self.name} (tr4947.lab.hosts)",
            "Port 22", "ListenAddress 0.0.0.0", f"HostKey {HOST_KEY}",
            "PermitRootLogin prohibit-password", "PubkeyAuthentication yes",
            "PasswordAuthentication no", "KbdInteractiveAuthentication no", "UsePAM no",
            "PidFile /run/sshd.pid", "PrintMotd no", "LogLevel VERBOSE",
            "MaxStartups 100:30:200", "MaxSessions 50", "UseDNS no",
            f"SetEnv PATH={HOST_PATH}",
            "ForceCommand /usr/local/libexec/tr4947-logged-command", ""]))
        self.write("/root/.ssh/authorized_keys", authorized_key.strip() + "\n", 0o600)
        self.path("/root/.ssh").chmod(0o700)
        return self.path(HOST_KEY + ".pub").read_text().split(" ", 2)[:2]

    # --- running --------------------------------------------------------------------------
    def start(self) -> Record:
        cmd = self.spec.command or ["/usr/sbin/sshd", "-D", "-e", "-f", SSHD_CONFIG]
        env = {"PATH": HOST_PATH, "HOST_NAME": self.name, "HOST_DIR": str(self.dir),
               "HOST_BINDS": ":".join(self.spec.binds), "LANG": "C.UTF-8"}
        argv = ["ip", "netns", "exec", self.netns, "unshare", "--mount", "--pid", "--uts",
                "--fork", "--kill-child", "--propagation", "private",
                "bash", str(HERE / "init.sh"), *cmd]
        with open(self.dir / "console.log", "ab") as out:
            p = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL, env=env, start_new_session=True)
        _children[p.pid] = p
        try:
            ct = psutil.Process(p.pid).create_time()
        except psutil.Error:
            ct = time.time()
        return Record(self.name, p.pid, ct, self.netns, self.spec.role, self.spec.address)

    def console(self, lines: int = 30) -> str:
        f = self.dir / "console.log"
        return "\n".join(f.read_text(errors="replace").splitlines()[-lines:]) if f.exists() else ""

    def wait_port(self, record: Record, port: int, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while not port_open(self.spec.address, port, 0.3):
            if not record.alive() and time.monotonic() > deadline - timeout + 2:
                raise HostError(f"lab host {self.name} stopped while starting:\n"
                                + self.console())
            if time.monotonic() > deadline:
                raise HostError(f"lab host {self.name}: nothing listens on "
                                f"{self.spec.address}:{port} after {timeout:.0f}s:\n"
                                + self.console())
            time.sleep(0.1)


def exec_in(record: Record, command: str, input: str | None = None, timeout: float = 120,
            env: dict[str, str] | None = None, check: bool = True) -> subprocess.CompletedProcess:
    """Run ``command`` (bash) inside a running host: its namespaces, its root, as root.
    For provisioning only (the lab's back door); procedures use SSH."""
    init = record.init()
    if init is None:
        raise HostError(f"lab host {record.name} is not running")
    e = {"PATH": HOST_PATH, "HOME": "/root", "LANG": "C.UTF-8", **(env or {})}
    argv = ["nsenter", "-t", str(init.pid), "-m", "-n", "-p", "-u", "-r", "-w", "--",
            "/usr/bin/env", "-i", *[f"{k}={v}" for k, v in e.items()], "/bin/bash", "-c", command]
    cp = subprocess.run(argv, input=input, capture_output=True, text=True, timeout=timeout)
    if check and cp.returncode != 0:
        raise HostError(f"{record.name}: {command!r} failed (exit {cp.returncode}):\n"
                        + (cp.stdout + cp.stderr)[-2000:])
    return cp


def stop(records: list[Record], timeout: float = 10) -> int:
    """End hosts: SIGKILL to each host's pid 1 takes every process of the host with it (the
    kernel kills a pid namespace when its init dies); the FUSE mounts of the host go with its
    mount namespace. Returns how many were running."""
    inits, parents = [], []
    for r in records:
        u = r.unshare()
        if u is None:
            continue
        parents.append(u)
        init = r.init()
        if init is not None:
            inits.append(init)
    for p in inits:
        try:
            p.kill()
        except psutil.Error:
            pass
    for u in parents:
        try:
            u.terminate()               # --kill-child: unshare SIGKILLs its child as it exits
        except psutil.Error:
            pass
    gone, alive = psutil.wait_procs(inits + parents, timeout=timeout)
    for p in alive:
        try:
            p.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(alive, timeout=5)
    for u in parents:
        child = _children.pop(u.pid, None)
        if child is not None:
            try:
                child.wait(2)
            except subprocess.TimeoutExpired:
                pass
    return len(parents)


def processes_in(netns_paths: list[Path]) -> list[psutil.Process]:
    """Processes whose network namespace is one of these (a crashed lab's leftovers)."""
    inodes = {i for i in (netns_inode(p) for p in netns_paths) if i}
    found = []
    if not inodes:
        return found
    for pid in psutil.pids():
        try:
            if os.stat(f"/proc/{pid}/ns/net").st_ino in inodes:
                found.append(psutil.Process(pid))
        except (OSError, psutil.Error):
            continue
    return found


def kill_all(procs: list[psutil.Process]) -> None:
    for p in procs:
        try:
            p.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(procs, timeout=10)


# --- records -------------------------------------------------------------------------------------
def load_records(file: Path) -> dict[str, Record]:
    try:
        return {k: Record(**v) for k, v in json.loads(file.read_text()).items()}
    except (FileNotFoundError, json.JSONDecodeError, TypeError):
        return {}


def save_records(file: Path, records: dict[str, Record]) -> None:
    write_json(file, {k: asdict(v) for k, v in records.items()})


# --- helpers ---------------------------------------------------------------------------------------
# Popen handles of hosts this process started: waiting on them reaps the `unshare` parents.
_children: dict[int, subprocess.Popen] = {}


def _whiteout(f: Path) -> None:
    """An overlayfs whiteout (a 0/0 character device in the upper dir): hides the file
    of the lower layer from the host."""
    if f.exists() or f.is_symlink():
        return
    f.parent.mkdir(parents=True, exist_ok=True)
    os.mknod(f, 0o600 | 0o020000, os.makedev(0, 0))


def _opaque_dir(d: Path) -> None:
    """An opaque upper dir: the host sees none of what this machine has there."""
    d.mkdir(parents=True, exist_ok=True)
    os.setxattr(d, "trusted.overlay.opaque", b"y")


__all__ = ["HostSpec", "LabHost", "Record", "exec_in", "stop", "processes_in", "kill_all",
           "load_records", "save_records", "HostError"]
