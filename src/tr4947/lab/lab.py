"""`tr4947 lab up|down|status`: build, supervise and tear down the embedded lab.

up() builds what the inventory (playbook/inventory/lab/) describes, the way an operator would:
ONTAP stand-in bootstrapped (cluster, aggregates, SVM, LIFs) and its SSH server started; the
Kafka volumes created with the TR's clustershell commands over SSH (not by editing state);
the volumes mounted on each broker host; KRaft controllers and brokers formatted, started and
waited for. Each step checks first, so a second up() finds everything running and does
nothing.

down() stops every process the lab started (SIGTERM, then SIGKILL), unmounts every lab mount
and removes LAB_STATE. Processes are recorded in LAB_STATE/procs.json with their start time,
so a pid reused by an unrelated process is never signalled; as a safety net, processes whose
command line names this LAB_STATE are found by scanning, which covers a crash between
starting a process and recording it.
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

import psutil

from .. import inventory as inventory_mod
from .. import paths
from . import kafka

SSHD_MODULE = "tr4947.lab.ontap.sshd"
REST_MODULE = "tr4947.lab.ontap.rest"


class LabError(RuntimeError):
    """A lab operation failed; the message says what to do."""


class LabInterrupted(LabError):
    """up() was interrupted (Ctrl-C / SIGTERM); the lab was cleaned up."""


# Popen handles of processes this Python process started: polling them reaps zombies, so a
# broker that died (the silly-rename failure) reads as dead, not as a <defunct> entry.
_children: dict[int, subprocess.Popen] = {}


@dataclass
class Proc:
    name: str
    kind: str                   # ontap-sshd | ontap-rest | controller | broker
    pid: int
    create_time: float
    address: str = ""
    port: int = 0
    cluster: str = ""

    def alive(self) -> bool:
        child = _children.get(self.pid)
        if child is not None and child.poll() is not None:
            return False
        try:
            p = psutil.Process(self.pid)
            # A different start time means the pid was reused by another process.
            return abs(p.create_time() - self.create_time) < 1.0 and \
                p.status() != psutil.STATUS_ZOMBIE
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            return False


def _record(p: subprocess.Popen, name: str, kind: str, **kw) -> Proc:
    _children[p.pid] = p
    try:
        ct = psutil.Process(p.pid).create_time()
    except psutil.NoSuchProcess:
        ct = time.time()
    return Proc(name, kind, p.pid, ct, **kw)


def preflight() -> None:
    """Everything the lab needs from the machine, with the fix in the message."""
    problems = []
    for tool in ("bindfs", "fusermount3"):
        if not shutil.which(tool):
            problems.append(f"{tool} not found")
    if not os.path.exists("/dev/fuse"):
        problems.append("/dev/fuse missing (FUSE not available in this container?)")
    if not shutil.which(kafka.java()) and not os.path.exists(kafka.java()):
        problems.append("java not found (Java 17 needed)")
    try:
        paths.kafka_libs()
    except FileNotFoundError as exc:
        problems.append(str(exc))
    if problems:
        raise LabError("the lab cannot start: " + "; ".join(problems)
                       + ". Install with `make setup`.")


def who_listens(address: str, port: int) -> str:
    """'pid 123 (java ...)' for the process bound to address:port, if psutil can tell."""
    try:
        for c in psutil.net_connections(kind="tcp"):
            if c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == port and \
                    c.laddr.ip in (address, "0.0.0.0", "::"):
                if c.pid:
                    try:
                        cmd = " ".join(psutil.Process(c.pid).cmdline())[:120]
                    except psutil.Error:
                        cmd = "?"
                    return f"pid {c.pid} ({cmd})"
                return "another process"
    except psutil.Error:
        pass
    return "another process"


class Lab:
    def __init__(self, inventory: str | os.PathLike = "lab", root: Path | None = None,
                 echo: Callable[[str], None] | None = print):
        self.inv = inventory_mod.load(inventory)
        self.root = Path(root or paths.LAB_STATE).resolve()
        self._echo = echo
        self._t0 = time.monotonic()

    # --- small helpers ------------------------------------------------------------------
    def say(self, msg: str) -> None:
        if self._echo:
            self._echo(f"[{time.monotonic() - self._t0:6.1f}s] {msg}")

    @property
    def procs_file(self) -> Path:
        return self.root / "procs.json"

    @property
    def bin_dir(self) -> Path:
        return self.root / "bin"

    def procs(self) -> dict[str, Proc]:
        try:
            raw = json.loads(self.procs_file.read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            return {}
        return {k: Proc(**v) for k, v in raw.items()}

    def _save_procs(self, procs: dict[str, Proc]) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = self.procs_file.with_suffix(".tmp")
        tmp.write_text(json.dumps({k: vars(v) for k, v in procs.items()}, indent=1))
        os.replace(tmp, self.procs_file)

    def _add_proc(self, proc: Proc) -> None:
        procs = self.procs()
        procs[proc.name] = proc
        self._save_procs(procs)

    @contextlib.contextmanager
    def _locked(self):
        """One up/down at a time per LAB_STATE (the lock lives beside it, so rm -rf of the
        state dir in down() does not pull the lock from under a waiting process)."""
        lock = Path(str(self.root) + ".lock")
        lock.parent.mkdir(parents=True, exist_ok=True)
        with open(lock, "w") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    def clusters(self, names: Iterable[str] | None) -> list[str]:
        valid = self.inv.kafka_clusters()
        if names is None:                 # [] means: the ONTAP stand-in only
            any_host = next(iter(self.inv.hosts.values()))
            names = any_host.get("lab_default_clusters") or valid
        names = list(dict.fromkeys(names))
        bad = [n for n in names if n not in valid]
        if bad:
            raise LabError(f"unknown cluster {', '.join(bad)} in inventory {self.inv.name}; "
                           f"valid clusters: {', '.join(valid)}")
        return names

    def nodes(self, cluster: str) -> list[kafka.Node]:
        return kafka.nodes(self.inv.cluster(cluster), self.root)

    # --- ONTAP --------------------------------------------------------------------------
    def ontap_host(self):
        return self.inv.ontap()

    def ontap_password(self) -> str:
        from ..runbook import secrets
        f = self.root / "ontap" / "passwords.json"
        data = json.loads(f.read_text())
        user = self.ontap_host().get("ansible_user", "admin")
        pw = data.get(user) if isinstance(data, dict) else None
        if isinstance(pw, dict):
            pw = pw.get("password")
        if not pw:
            raise LabError(f"no password for ONTAP user {user} in {f}")
        secrets.register(pw)
        return pw

    def ontap(self, lines: list[str], timeout: float = 60):
        """Run clustershell lines on the stand-in over SSH (as an operator would)."""
        from ..targets.ssh import ontap_run
        h = self.ontap_host()
        return ontap_run(h.address, int(h.get("ansible_port", 22)), h.get("ansible_user", "admin"),
                         self.ontap_password(), lines, timeout, h.name,
                         cluster_name=h.get("ontap_cluster_name", "cluster1"))

    def _ontap_bootstrap(self) -> None:
        from .ontap import state as ontap_state
        if (self.root / "ontap" / "state.json").exists():
            return
        from .ontap import bootstrap
        h = self.ontap_host()
        self.say(f"ONTAP stand-in: bootstrap cluster {h.get('ontap_cluster_name')} "
                 f"(SVM {h.get('ontap_svm')}, LIFs "
                 f"{', '.join(l['address'] for l in h.get('ontap_data_lifs', []))})")
        bootstrap.bootstrap(
            self.root,
            cluster_name=h.get("ontap_cluster_name", "cluster1"),
            nodes=h.get("ontap_nodes", ["cluster1-01"]),
            aggregates=h.get("ontap_aggregates", []),
            vservers=[h.get("ontap_svm", "svm_kafka")],
            lifs=[{**lif, "vserver": h.get("ontap_svm", "svm_kafka")}
                  for lif in h.get("ontap_data_lifs", [])]
            + [{"name": "cluster_mgmt", "address": h.address, "role": "cluster-mgmt",
                "vserver": h.get("ontap_cluster_name", "cluster1")}])
        del ontap_state

    def rest_endpoint(self) -> tuple[str, int]:
        h = self.ontap_host()
        return h.address, int(h.get("ontap_rest_port", 443))

    def _start_sshd(self) -> None:
        h = self.ontap_host()
        addr, port = h.address, int(h.get("ansible_port", 22))
        self._start_service("ontap-sshd", SSHD_MODULE, addr, port, "ONTAP cluster management",
                            "sshd", f"SSH on {addr}:{port}")

    def _start_rest(self) -> None:
        """The stand-in's REST API (HTTPS, self-signed certificate made here once)."""
        from .ontap import rest, state as ontap_state
        addr, port = self.rest_endpoint()
        if not self._service_running("ontap-rest", addr, port):
            rest.ensure_certificate(self.root, addr, ontap_state.load(self.root).name)
        self._start_service("ontap-rest", REST_MODULE, addr, port, "ONTAP REST API", "rest",
                            f"REST API on https://{addr}:{port}/api")

    def _service_running(self, name: str, addr: str, port: int) -> bool:
        rec = self.procs().get(name)
        return bool(rec and rec.alive() and kafka.port_open(addr, port))

    def _start_service(self, name: str, module: str, addr: str, port: int, role: str,
                       log_name: str, listening: str) -> None:
        """Start one of the ONTAP stand-in's servers (python -m <module>) unless it runs,
        and wait until it listens; its output goes to ontap/<log_name>.log."""
        if self._service_running(name, addr, port):
            return
        if kafka.port_open(addr, port):
            raise LabError(f"{addr}:{port} ({role}) is in use by "
                           f"{who_listens(addr, port)}; stop it or run the lab with another "
                           "TR4947_LAB_STATE/inventory")
        log = self.root / "ontap" / f"{log_name}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "ab") as out:
            p = subprocess.Popen([sys.executable, "-m", module, "--listen", f"{addr}:{port}",
                                  "--state-root", str(self.root)], stdout=out,
                                 stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                 start_new_session=True, cwd=self.root)
        self._add_proc(_record(p, name, name, address=addr, port=port))
        deadline = time.monotonic() + 30
        while not kafka.port_open(addr, port, 0.5):
            if p.poll() is not None:
                raise LabError(f"{role} stand-in ({module}) exited ({p.returncode}):\n"
                               + log.read_text(errors="replace")[-2000:])
            if time.monotonic() > deadline:
                raise LabError(f"{role} stand-in ({module}) did not listen on {addr}:{port} "
                               "in 30s")
            time.sleep(0.2)
        self.say(f"ONTAP stand-in: {listening} (pid {p.pid})")

    def volume_create_command(self, name: str, spec: dict) -> str:
        """The TR's FV-1 command (minus its -policy, which the lab's default policy covers)."""
        h = self.ontap_host()
        cmd = (f"volume create -vserver {h.get('ontap_svm', 'svm_kafka')} -volume {name} "
               f"-aggregate {spec.get('aggregate', 'aggr1')} -size {spec.get('size', '100GB')} "
               f"-state online -security-style unix -unix-permissions 0777 "
               f"-junction-path {spec.get('junction_path', '/' + name)} -type RW")
        if spec.get("preserve_unlink"):
            cmd += " -is-preserve-unlink-enabled true"
        return cmd

    def _create_volumes(self, clusters: list[str]) -> None:
        from .ontap import state as ontap_state
        svm = self.ontap_host().get("ontap_svm", "svm_kafka")
        have = set(ontap_state.load(self.root).volumes)
        wanted: dict[str, dict] = {}
        for c in clusters:
            for n in self.nodes(c):
                wanted.update(n.host.get("kafka_volumes") or {})
        lines = [self.volume_create_command(name, spec) for name, spec in wanted.items()
                 if f"{svm}:{name}" not in have]
        if not lines:
            return
        self.say(f"ONTAP: creating volumes {', '.join(n for n in wanted if f'{svm}:{n}' not in have)}"
                 " over SSH (advanced privilege for -is-preserve-unlink-enabled)")
        r = self.ontap(["set -privilege advanced -confirmations off", *lines], timeout=120)
        if r.exit_code != 0:
            raise LabError(f"ONTAP volume create failed (exit {r.exit_code}):\n{r.output[-2000:]}")

    # --- storage ------------------------------------------------------------------------
    def _mount(self, node: kafka.Node) -> None:
        from . import storage
        if node.is_controller:
            return
        if node.host.get("kafka_storage") != "nfs":
            # DAS: a plain directory, the lab's direct-attached disk.
            for d in node.log_dirs():
                d.mkdir(parents=True, exist_ok=True)
            return
        vol = node.host.get("nfs_volume")
        if not vol:
            return                      # a standby mounts the failed broker's volume later
        mp = node.mountpoint
        if self._mounted(mp):
            return
        spec = (node.host.get("kafka_volumes") or {}).get(vol, {})
        source = f"{node.host.get('nfs_lif')}:{spec.get('junction_path', '/' + vol)}"
        mp.mkdir(parents=True, exist_ok=True)
        storage.mount(source, str(mp), options=node.host.get("nfs_mount_options", "vers=3"),
                      root=self.root)

    def _mounted(self, mp: Path | None) -> bool:
        if mp is None:
            return False
        from . import storage
        for m in storage.list_mounts(root=self.root):
            if str(getattr(m, "mountpoint", m)) == str(mp):
                return True
        return False

    # --- Kafka --------------------------------------------------------------------------
    def _host_dirs(self, node: kafka.Node) -> None:
        kafka.prepare_host(node.dir, self.bin_dir)

    def _start_cluster(self, cluster: str) -> list[tuple[kafka.Node, Proc]]:
        ns = [n for n in self.nodes(cluster) if not n.standby]
        ctl = [n for n in ns if n.is_controller]
        if not ctl:
            raise LabError(f"cluster {cluster} has no host with kafka_role: controller")
        procs = self.procs()
        started = []
        for n in ns:
            rec = procs.get(n.name)
            if rec and rec.alive():
                continue
            if kafka.port_open(n.address, n.port):
                raise LabError(f"{n.address}:{n.port} (needed by {n.name}) is in use by "
                               f"{who_listens(n.address, n.port)}")
            self._host_dirs(n)
            self._mount(n)
            kafka.write_config(n, ctl)
            started.append(n)
        if not started:
            return []
        self.say(f"{cluster}: format storage of {', '.join(n.name for n in started)}")
        self._parallel([lambda n=n: kafka.format_storage(n) for n in started], width=3)
        out = []
        # Controllers first: brokers register with them.
        for group in ([n for n in started if n.is_controller],
                      [n for n in started if not n.is_controller]):
            for n in group:
                p = kafka.spawn(n)
                rec = _record(p, n.name, n.role, address=n.address, port=n.port,
                              cluster=cluster)
                self._add_proc(rec)
                out.append((n, rec))
        self.say(f"{cluster}: started {len(out)} processes; waiting until ready")
        return out

    def _wait_cluster(self, cluster: str, started: list[tuple[kafka.Node, Proc]],
                      timeout: float = 240) -> None:
        brokers = [n for n in self.nodes(cluster) if not n.is_controller and not n.standby]
        bs = kafka.bootstrap_servers(brokers)
        for n, rec in started:
            kafka.wait_ready(n, rec.alive, timeout=timeout,
                             bootstrap=None if n.is_controller else bs)
        self.say(f"{cluster}: ready ({len(brokers)} brokers: {bs})")

    @staticmethod
    def _parallel(fns: list[Callable], width: int = 3) -> None:
        errors: list[BaseException] = []
        sem = threading.Semaphore(width)

        def run(fn):
            with sem:
                try:
                    fn()
                except BaseException as exc:   # noqa: BLE001 - re-raised below
                    errors.append(exc)
        ts = [threading.Thread(target=run, args=(f,), daemon=True) for f in fns]
        for t in ts:
            t.start()
        for t in ts:
            while t.is_alive():
                t.join(0.2)                    # short joins keep Ctrl-C responsive
        if errors:
            raise errors[0]

    # --- public operations --------------------------------------------------------------
    def up(self, clusters: Iterable[str] | None = None, timeout: float = 300) -> dict:
        """Bring up the ONTAP stand-in and the named clusters (default: lab_default_clusters)."""
        names = self.clusters(clusters)
        preflight()
        self._t0 = time.monotonic()
        restore = _install_interrupt_handlers()
        try:
            with self._locked():
                self.root.mkdir(parents=True, exist_ok=True)
                self._ontap_bootstrap()
                self._start_sshd()
                self._start_rest()
                self._create_volumes(names)
                from . import storage
                self.bin_dir.mkdir(parents=True, exist_ok=True)
                storage.install_shims(self.bin_dir)
                kafka.wrapper_scripts(self.bin_dir, self.root)
                started = {c: self._start_cluster(c) for c in names}
                for c in names:
                    if started[c]:
                        self._wait_cluster(c, started[c], timeout)
                    else:
                        self.say(f"{c}: already running")
            self.say("lab up: " + ", ".join(names))
            return {"clusters": names, "started": {c: [n.name for n, _ in s]
                                                   for c, s in started.items()},
                    "seconds": round(time.monotonic() - self._t0, 1)}
        except KeyboardInterrupt:
            self.say("interrupted: tearing the lab down")
            restore()
            self.down()
            raise LabInterrupted("lab up interrupted; everything it started was cleaned up")
        finally:
            restore()

    def stop_node(self, name: str, sig: int = signal.SIGTERM, wait: float = 30) -> bool:
        """Stop one lab process (SIGKILL to simulate a crash). True if it was running."""
        rec = self.procs().get(name)
        if not rec or not rec.alive():
            return False
        _stop([rec], sig, wait)
        return True

    def start_node(self, name: str, node_id: int | None = None, address: str | None = None,
                   log_dirs: str | None = None, timeout: float = 240) -> kafka.Node:
        """Start one node (also a standby taking over a broker's node.id and address: the
        TR's REC-2). Mounts are the caller's step; configuration is regenerated."""
        host = self.inv.host(name)
        if address:
            host.vars["ansible_host"] = address
        if node_id is not None:
            host.vars["kafka_node_id"] = node_id
        if log_dirs:
            host.vars["kafka_log_dirs"] = log_dirs
        n = kafka.Node(host, self.root)
        ctl = [c for c in self.nodes(n.cluster) if c.is_controller]
        self._host_dirs(n)
        kafka.write_config(n, ctl)
        kafka.format_storage(n)
        p = kafka.spawn(n)
        rec = _record(p, n.name, n.role, address=n.address, port=n.port, cluster=n.cluster)
        self._add_proc(rec)
        brokers = [b for b in self.nodes(n.cluster) if not b.is_controller and not b.standby]
        kafka.wait_ready(n, rec.alive, timeout=timeout,
                         bootstrap=n.bootstrap if n.is_controller else
                         kafka.bootstrap_servers([n, *brokers]))
        return n

    def adopt(self, name: str, timeout: float = 30) -> Proc:
        """Record a node process that an operator started on the host (the TR's own
        `kafka-server-start.sh -daemon ...`), so status, health checks and `lab down` treat
        it like one the lab started. It is recognised by its log dir in the command line."""
        n = kafka.Node(self.inv.host(name), self.root)
        marker = f"-Dkafka.logs.dir={n.logs_dir}"
        deadline = time.monotonic() + timeout
        while True:
            for p in psutil.process_iter(["pid", "cmdline", "create_time"]):
                cmd = p.info["cmdline"] or []
                if marker in cmd and "kafka.Kafka" in cmd:
                    rec = Proc(n.name, n.role, p.pid, p.info["create_time"], address=n.address,
                               port=n.port, cluster=n.cluster)
                    self._add_proc(rec)
                    return rec
            if time.monotonic() > deadline:
                raise LabError(f"no Kafka process for {name} (looked for {marker} in running "
                               "command lines): did kafka-server-start.sh fail? See "
                               f"{n.stdout_log}")
            time.sleep(0.5)

    def down(self) -> dict:
        """Stop everything, unmount everything, remove LAB_STATE. Safe to repeat."""
        self._t0 = time.monotonic()
        _check_root_is_lab(self.root)
        old = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)} \
            if threading.current_thread() is threading.main_thread() else {}
        for s in old:
            # A second Ctrl-C must not leave a half-removed lab.
            signal.signal(s, signal.SIG_IGN)
        try:
            with self._locked():
                procs = list(self.procs().values())
                stopped = 0
                for kinds in (("broker",), ("controller",), ("ontap-sshd", "ontap-rest")):
                    batch = [p for p in procs if p.kind in kinds and p.alive()]
                    if batch:
                        self.say(f"stopping {len(batch)} {kinds[0]} process(es)")
                        stopped += _stop(batch, signal.SIGTERM, 15)
                strays = [p for p in _lab_processes(self.root) if not _is_fuse(p)]
                if strays:
                    self.say(f"stopping {len(strays)} stray lab process(es): "
                             + ", ".join(f"{_name(p)} (pid {p.pid})" for p in strays))
                    _stop_psutil(strays, 10)
                if self.root.exists():
                    from . import storage
                    storage.unmount_all(root=self.root)
                    left = [p for p in _lab_processes(self.root)]
                    _stop_psutil(left, 5)
                    try:
                        shutil.rmtree(self.root)
                    except OSError as exc:
                        raise LabError(f"could not remove {self.root}: {exc}; mounts left: "
                                       f"{storage.list_mounts(root=self.root)}") from exc
                self.say(f"lab down: {stopped} process(es) stopped, {self.root} removed")
                return {"stopped": stopped, "seconds": round(time.monotonic() - self._t0, 1)}
        finally:
            for s, h in old.items():
                signal.signal(s, h)
            with contextlib.suppress(FileNotFoundError):
                Path(str(self.root) + ".lock").unlink()

    def status(self) -> list[dict]:
        rows = []
        procs = self.procs()
        ontap = self.ontap_host()
        rec = procs.get("ontap-sshd")
        addr, port = ontap.address, int(ontap.get("ansible_port", 22))
        rows.append(_row("ontap-sshd", "ontap", f"{addr}:{port}", rec,
                         kafka.port_open(addr, port, 0.3)))
        addr, port = self.rest_endpoint()
        rows.append(_row("ontap-rest", "ontap", f"https://{addr}:{port}/api",
                         procs.get("ontap-rest"), kafka.port_open(addr, port, 0.3)))
        for c in self.inv.kafka_clusters():
            for n in self.nodes(c):
                rec = procs.get(n.name)
                row = _row(n.name, f"{c} {n.role}" + (" (standby)" if n.standby else ""),
                           f"{n.address}:{n.port}", rec,
                           kafka.port_open(n.address, n.port, 0.3) if rec else False)
                if rec is None and not self.root.exists():
                    row["state"] = "down"
                rows.append(row)
        try:
            from . import storage
            mounts = storage.list_mounts(root=self.root) if self.root.exists() else []
        except Exception:
            mounts = []
        for m in mounts:
            rows.append({"component": str(getattr(m, "mountpoint", m)).replace(
                str(self.root) + "/", ""), "kind": "mount",
                "endpoint": str(getattr(m, "source", "")), "pid": "",
                "state": str(getattr(m, "semantics", "mounted"))})
        return rows

    def format_status(self) -> str:
        rows = self.status()
        cols = ["component", "kind", "endpoint", "pid", "state"]
        w = {c: max(len(c), *(len(str(r.get(c, ""))) for r in rows)) for c in cols}
        lines = ["  ".join(c.upper().ljust(w[c]) for c in cols)]
        lines += ["  ".join(str(r.get(c, "")).ljust(w[c]) for c in cols) for r in rows]
        return f"lab state: {self.root}\n" + "\n".join(lines)


def _row(name, kind, endpoint, rec: Proc | None, port_ok: bool) -> dict:
    if rec is None:
        state = "not started"
    elif rec.alive():
        state = "running" if port_ok else "starting"
    else:
        state = "dead"
    return {"component": name, "kind": kind, "endpoint": endpoint,
            "pid": rec.pid if rec else "", "state": state}


def _install_interrupt_handlers():
    """SIGINT/SIGTERM during up() -> KeyboardInterrupt, so up() can clean up. Returns a
    function restoring the previous handlers (no-op off the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    old = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}

    def handler(signum, frame):
        raise KeyboardInterrupt(signal.Signals(signum).name)
    for s in old:
        signal.signal(s, handler)

    def restore():
        for s, h in old.items():
            signal.signal(s, h)
    return restore


def _stop(recs: list[Proc], sig: int, wait: float) -> int:
    procs = []
    for r in recs:
        try:
            p = psutil.Process(r.pid)
            if abs(p.create_time() - r.create_time) < 1.0:
                procs.append(p)
        except psutil.Error:
            continue
    for p in procs:
        with contextlib.suppress(psutil.Error):
            p.send_signal(sig)
    _gone, alive = psutil.wait_procs(procs, timeout=wait if sig != signal.SIGKILL else 5)
    for p in alive:
        with contextlib.suppress(psutil.Error):
            p.kill()
    psutil.wait_procs(alive, timeout=5)
    for r in recs:
        child = _children.pop(r.pid, None)
        if child is not None:
            with contextlib.suppress(Exception):
                child.wait(1)
    return len(procs)


def _stop_psutil(procs: list[psutil.Process], wait: float) -> None:
    for p in procs:
        with contextlib.suppress(psutil.Error):
            p.terminate()
    _gone, alive = psutil.wait_procs(procs, timeout=wait)
    for p in alive:
        with contextlib.suppress(psutil.Error):
            p.kill()
    psutil.wait_procs(alive, timeout=5)
    for p in procs:
        child = _children.pop(p.pid, None)
        if child is not None:
            with contextlib.suppress(Exception):
                child.wait(1)


def _name(p: psutil.Process) -> str:
    try:
        return p.name()
    except psutil.Error:
        return "?"


def _is_fuse(p: psutil.Process) -> bool:
    try:
        return p.name() in ("bindfs", "fusermount", "fusermount3")
    except psutil.Error:
        return False


def _lab_processes(root: Path) -> list[psutil.Process]:
    """Processes whose command line names this lab's state dir (ours and only ours: another
    lab has another TR4947_LAB_STATE). Never this process or its ancestors."""
    me = {os.getpid(), *(p.pid for p in psutil.Process().parents())}
    r = str(root)
    found = []
    for p in psutil.process_iter(["pid", "cmdline"]):
        if p.info["pid"] in me:
            continue
        for arg in p.info["cmdline"] or ():
            if arg == r or f"{r}/" in arg or arg.endswith(f"={r}"):
                found.append(p)
                break
    return found


def _check_root_is_lab(root: Path) -> None:
    """Refuse to rm -rf something that is not a lab state dir (a mistyped env var)."""
    if not root.exists():
        return
    if root in (Path("/"), Path.home(), paths.REPO) or len(root.parts) < 3:
        raise LabError(f"refusing to remove {root}: not a lab state directory")
    markers = {"procs.json", "hosts", "ontap", "volumes", "bin", "config"}
    entries = {e.name for e in root.iterdir()}
    if entries and not entries & markers:
        raise LabError(f"refusing to remove {root}: it does not look like a lab state "
                       f"directory (has {sorted(entries)[:5]})")


# --- module-level convenience (the CLI and notebooks) ---------------------------------------
def up(clusters: Iterable[str] | None = None, inventory: str = "lab", **kw) -> dict:
    return Lab(inventory).up(clusters, **kw)


def down(inventory: str = "lab") -> dict:
    return Lab(inventory).down()


def status(inventory: str = "lab") -> str:
    return Lab(inventory, echo=None).format_status()
