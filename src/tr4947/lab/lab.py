"""`tr4947 lab up|down|status`: build, supervise and tear down the embedded lab.

The lab is what playbook/inventory/lab/ describes, built as real hosts on a network of their
own (network.py, hosts.py):

* the storage side: the ONTAP stand-in's host (cluster management address, data LIFs; its
  clustershell over SSH, REST API over HTTPS and NFS service, see storage.py) and the AWS
  stand-in's host (moto with the FSx extension, fsx.py);
* one Linux host per inventory host (Kafka controllers, brokers, standby brokers, clients),
  each with OpenSSH, Kafka installed at /opt/kafka, the lab's NFS client, and on clients the
  OMB runner at /opt/benchmark and the aws CLI.

``up(clusters)`` brings up the storage side, the clients and the named clusters' hosts. With
``kafka="started"`` (the default for `tr4947 lab up`) it also creates the clusters' volumes
(clustershell commands run by the stand-in), mounts them on the brokers (with the hosts'
own ``mount``) and starts the controllers and brokers; with ``kafka="installed"`` the hosts
only have Kafka installed and configured, for chapters that mount and start it themselves
through the Target API, as an operator would.

``down()`` ends every host (and with it every process and mount in it), removes the
namespaces and the control port, and deletes the state directory; it also finds what a
crashed lab left behind (namespaces with this lab's prefix, processes inside them).
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Iterable

from .. import inventory as inventory_mod
from .. import kafka_tools, paths
from ..atomic import write_json
from ..transports import kafka_admin
from ..wait import port_open, until
from . import cds, fsx, kafka
from . import hosts as H
from .network import HostLink, Network, NetworkError

SRC = Path(__file__).resolve().parents[2]            # the package's source dir (src/)


class LabError(RuntimeError):
    """A lab operation failed; the message says what to do."""


class LabInterrupted(LabError):
    """up() was interrupted (Ctrl-C / SIGTERM); the lab was cleaned up."""


def preflight() -> None:
    """Everything the lab needs from the machine, with the fix in the message."""
    problems = []
    if os.geteuid() != 0:
        problems.append("the lab creates network and mount namespaces: run it as root")
    for tool in ("fusermount3", "ip", "unshare", "nsenter", "tini", "ssh-keygen"):
        if not shutil.which(tool):
            problems.append(f"{tool} not found")
    try:
        paths.nfs_client_binary()             # the lab's NFS client layer (lab/nfs-client)
    except FileNotFoundError as exc:
        problems.append(str(exc))
    if not Path("/usr/sbin/sshd").exists():
        problems.append("/usr/sbin/sshd not found (Debian package openssh-server)")
    if not os.path.exists("/dev/fuse"):
        problems.append("/dev/fuse missing (FUSE not available in this container?)")
    if not Path(kafka.java()).exists():
        problems.append("java not found (Java 17 needed)")
    try:
        paths.kafka_libs()
    except FileNotFoundError as exc:
        problems.append(str(exc))
    if problems:
        raise LabError("the lab cannot start: " + "; ".join(problems)
                       + ". Install with `make setup`.")


class Lab:
    def __init__(self, inventory: "str | os.PathLike | inventory_mod.Inventory" = "lab",
                 root: Path | None = None,
                 echo: Callable[[str], None] | None = print):
        self.inv = inventory if isinstance(inventory, inventory_mod.Inventory) else \
            inventory_mod.load(inventory)
        self._host_vars: dict[str, dict] = {}
        if self.inv.kind != "lab":
            raise LabError(f"inventory {self.inv.name!r} does not describe a lab "
                           "(target_kind: lab): it is a real target, which the lab never builds")
        self.root = Path(root or paths.LAB_STATE).resolve()
        self._echo = echo
        self._t0 = time.monotonic()
        v = self._vars
        try:
            self.net = Network.for_lab(self.root, v.get("lab_network", "198.18.0.0/16"),
                                       v.get("lab_control_address", "198.18.0.1"))
        except (NetworkError, ValueError) as exc:
            raise LabError(f"inventory {self.inv.name}: {exc}") from None
        self._load_host_vars()

    # --- what the inventory describes ---------------------------------------------------------
    @property
    def _vars(self) -> dict:
        return next(iter(self.inv.hosts.values())).vars

    @property
    def control(self) -> Path:
        return self.root / "control"

    @property
    def ssh_key(self) -> Path:
        return self.control / "ssh" / "id_ed25519"

    @property
    def known_hosts(self) -> Path:
        return self.control / "ssh" / "known_hosts"

    @property
    def records_file(self) -> Path:
        return self.control / "hosts.json"

    def say(self, msg: str) -> None:
        if self._echo:
            self._echo(f"[{time.monotonic() - self._t0:6.1f}s] {msg}")

    def clusters(self, names: Iterable[str] | None) -> list[str]:
        valid = self.inv.kafka_clusters()
        if names is None:                 # [] means: the storage side and clients only
            names = self._vars.get("lab_default_clusters") or valid
        names = list(dict.fromkeys(names))
        bad = [n for n in names if n not in valid]
        if bad:
            raise LabError(f"unknown cluster {', '.join(bad)} in inventory {self.inv.name}; "
                           f"valid clusters: {', '.join(valid)}")
        return names

    def nodes(self, cluster: str) -> list[kafka.Node]:
        return kafka.nodes(self.inv.cluster(cluster))

    def specs(self) -> dict[str, H.HostSpec]:
        """Every host of the lab: the storage side first, then the inventory's Linux hosts."""
        py, src, root = sys.executable, str(SRC), str(self.root)
        env = f"PYTHONPATH={shlex.quote(src)} TR4947_LAB_STATE={shlex.quote(root)}"
        out: dict[str, H.HostSpec] = {}
        o = self.inv.ontap()
        mgmt = o.address
        ontap_cmd = (f"export {env}; "
                     f"{py} -m tr4947.lab.ontap.sshd --listen {mgmt}:{o.get('ansible_port', 22)} "
                     f"--state-root {root} & "
                     f"{py} -m tr4947.lab.ontap.rest --listen {mgmt}:{o.get('ontap_rest_port', 443)} "
                     f"--state-root {root} & "
                     f"{py} -m tr4947.lab.storage --listen 0.0.0.0:2049 --state-root {root} & "
                     "wait")
        out[o.name] = H.HostSpec(o.name, "ontap", [mgmt], ["/bin/sh", "-c", ontap_cmd],
                                 binds=[root], hidden=["/root/.ssh"],
                                 anyip=self._vars.get("lab_storage_block"))
        aws = self._vars.get("lab_aws_address")
        if aws:
            port = self._vars.get("lab_aws_port", 80)
            out["aws"] = H.HostSpec("aws", "aws", [aws], ["/bin/sh", "-c", (
                f"export {env}; exec {py} -m tr4947.lab.fsx --listen {aws}:{port} "
                f"--state-root {root} --management {mgmt}")], binds=[root], hidden=["/root/.ssh"])
        for h in self.inv.hosts.values():
            if h.name in out:
                continue
            out[h.name] = H.HostSpec(h.name, "linux", list(dict.fromkeys([h.address,
                                                                         h.kafka_address])),
                                     binds=[str(self.root / "volumes")],
                                     hidden=["/root/.ssh", root])
        return out

    def _wanted(self, clusters: list[str]) -> list[str]:
        infra = [self.inv.ontap().name] + (["aws"] if self._vars.get("lab_aws_address") else [])
        hosts = infra + [h.name for h in self.inv.select("clients")] if "clients" in \
            self.inv.groups else infra
        for c in clusters:
            hosts += [h.name for h in self.inv.cluster(c)]
        return list(dict.fromkeys(hosts))

    # --- records --------------------------------------------------------------------------------
    def records(self) -> dict[str, H.Record]:
        return H.load_records(self.records_file)

    def running(self) -> dict[str, H.Record]:
        return {k: r for k, r in self.records().items() if r.alive()}

    def host(self, name: str) -> H.LabHost:
        spec = self.specs().get(name)
        if spec is None:
            raise LabError(f"no lab host {name!r}; hosts: {', '.join(self.specs())}")
        return H.LabHost(spec, self.root, self.net.netns(name))

    def nfs_control(self, host: str, mountpoint: str, op: str = "status",
                    seconds: float | None = None) -> dict:
        """A drill hook on a host's NFS mount: ``status``, ``pause`` (for ``seconds``, or
        until ``resume``) or ``resume`` (tr4947.lab.nfsclient.control, run on the host)."""
        import json
        if op not in ("status", "pause", "resume"):
            raise LabError(f"nfs_control: op {op!r}: status, pause or resume")
        cmd = f"tr4947-nfsctl {op} {shlex.quote(mountpoint)}"
        if seconds is not None:
            cmd += f" {float(seconds)}"
        r = self.exec(host, cmd, check=False)
        if r.returncode != 0:
            raise LabError(f"{host}: {cmd}: {(r.stderr or r.stdout).strip()}")
        return json.loads(r.stdout)

    def exec(self, host: str, command: str, **kw) -> subprocess.CompletedProcess:
        """Run a command inside a running lab host (provisioning; procedures use SSH)."""
        rec = self.running().get(host)
        if rec is None:
            raise LabError(f"lab host {host} is not running: `tr4947 lab up` first")
        try:
            return H.exec_in(rec, command, **kw)
        except H.HostError as exc:
            raise LabError(str(exc)) from None

    @contextlib.contextmanager
    def _locked(self):
        """One up/down at a time per state dir (the lock lives beside it, so removing the
        state dir does not pull the lock from under a waiting process)."""
        lock = Path(str(self.root) + ".lock")
        lock.parent.mkdir(parents=True, exist_ok=True)
        with open(lock, "w") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    # --- credentials the control node uses (LabTarget reads them; nothing else) -----------------
    def stand_ins(self) -> dict[str, str]:
        """What the lab puts in place of the real systems, with versions, for a run's
        provenance: the ONTAP stand-in, the FSx stand-in (moto), the NFS client layer."""
        import importlib.metadata as md
        from . import nfsclient
        from .ontap import state
        out = {"ONTAP stand-in": state.Cluster().version}
        try:
            out["FSx stand-in (moto)"] = md.version("moto")
        except md.PackageNotFoundError:
            pass
        out["NFS client layer"] = nfsclient.layer()
        return out

    def credentials(self) -> dict:
        from .ontap import bootstrap, rest
        pw = {u: self.secret(f"ontap:{u}") for u in bootstrap.USERS} \
            if self.key_file.exists() else {}
        if os.environ.get("TR4947_ONTAP_PASSWORD"):
            pw = {u: os.environ["TR4947_ONTAP_PASSWORD"] for u in bootstrap.USERS}
        return {
            "ssh_key": str(self.ssh_key), "known_hosts": str(self.known_hosts),
            "ontap_passwords": pw, "ontap_ca_bundle": str(rest.cert_file(self.root)),
        }

    @property
    def key_file(self) -> Path:
        return self.control / "lab.key"

    def secret(self, purpose: str) -> str:
        """A secret of this lab (an ONTAP login, a password a procedure sends): derived from
        the lab's key (control/lab.key, 0600), so it is never written anywhere in clear and
        is the same for every process that uses the lab; marked, so tests can search for it."""
        from .. import secrets
        try:
            key = self.key_file.read_bytes()
        except FileNotFoundError:
            raise LabError(f"the lab has no key yet ({self.key_file}): bring it up first "
                           "(tr4947 lab up)") from None
        return secrets.lab_secret(key, purpose)

    # --- bring-up -------------------------------------------------------------------------------
    def _control_keys(self) -> None:
        (self.control / "ssh").mkdir(parents=True, exist_ok=True, mode=0o700)
        if not self.key_file.exists():
            fd = os.open(self.key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.write(os.urandom(32))
        if not self.ssh_key.exists():
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C",
                            "tr4947-lab-control", "-f", str(self.ssh_key)], check=True,
                           timeout=30)

    def _ontap_bootstrap(self) -> None:
        from .ontap import bootstrap
        if (self.root / "ontap" / "state.json").exists():
            return
        o = self.inv.ontap()
        svm = o.get("ontap_svm", "svm_kafka")
        self.say(f"ONTAP stand-in: bootstrap cluster {o.get('ontap_cluster_name')} (SVM {svm}, "
                 f"LIFs {', '.join(l['address'] for l in o.get('ontap_data_lifs', []))})")
        bootstrap.ensure_passwords(self.root, self.credentials()["ontap_passwords"])
        bootstrap.bootstrap(
            self.root, cluster_name=o.get("ontap_cluster_name", "cluster1"),
            nodes=o.get("ontap_nodes", ["cluster1-01"]),
            aggregates=o.get("ontap_aggregates", []), vservers=[svm],
            lifs=[{**lif, "vserver": svm} for lif in o.get("ontap_data_lifs", [])]
            + [{"name": "cluster_mgmt", "address": o.address, "role": "cluster-mgmt",
                "vserver": o.get("ontap_cluster_name", "cluster1")}],
            timing=o.get("ontap_lab_timing"))
        from .ontap import rest, state
        rest.ensure_certificate(self.root, o.address, state.load(self.root).name)

    def _provision(self, h: H.LabHost) -> str | None:
        """Write a host's files before it starts; returns its known_hosts line (Linux)."""
        h.prepare()
        if h.spec.role == "ontap":
            # The stand-in's SSH host key, made now so the control node knows it in advance.
            return f"{h.spec.address} {self._ontap_public_key()}\n"
        if h.spec.role != "linux":
            return None
        known = h.prepare_sshd(self.ssh_key.with_suffix(".pub").read_text())
        py = sys.executable
        env = f"PYTHONPATH={shlex.quote(str(SRC))} " \
              f"TR4947_NFS_CLIENT={shlex.quote(str(paths.nfs_client_binary()))}"
        if os.environ.get("TR4947_NFS_LAYER"):            # bench/lab_bench.py's comparison
            env += f" TR4947_NFS_LAYER={shlex.quote(os.environ['TR4947_NFS_LAYER'])}"
        for tool, path in (("mount", "mount"), ("umount", "umount"), ("df", "df"),
                           ("nfsstat", "nfsstat"), ("nfsctl", "tr4947-nfsctl")):
            h.write(f"/usr/local/sbin/{path}",
                    "#!/bin/sh\n"
                    f"# Lab NFS client ({tool}): NFS sources and mounts -> the storage stand-in\n"
                    "# over the lab network, as FUSE mounts of the lab's layer, tr4947-nfs\n"
                    "# (tr4947.lab.nfsclient); the rest -> the system's tool.\n"
                    f"{env} exec {py} -m tr4947.lab.nfsclient {tool} \"$@\"\n", 0o755)
        inv_host = self.inv.host(h.name)
        node = kafka.Node(inv_host)
        heap = inv_host.get("kafka_controller_heap_opts" if node.is_controller
                            else "kafka_heap_opts", "-Xmx320m")
        home = inv_host.get("kafka_home", kafka.KAFKA_HOME)
        for path, (text, mode) in kafka.install_files(
                heap, inv_host.get("kafka_jvm_opts", "-XX:+UseSerialGC"), home,
                node.version, cds.archives(node.version)).items():
            h.write(path, text, mode)
        if inv_host.get("kafka_cluster") and not node.standby:
            ctl = [n for n in self.nodes(node.cluster) if n.is_controller]
            if node.is_controller and node.zookeeper:
                h.write(f"{home}/config/zookeeper.properties", kafka.zookeeper_properties(node))
            else:
                h.write(f"{home}/config/server.properties", kafka.server_properties(node, ctl))
        if "clients" in inv_host.groups:
            omb = inv_host.get("omb_home", "/opt/benchmark")
            for d in ("workloads", "driver-kafka", "payload"):
                h.path(f"{omb}/{d}").mkdir(parents=True, exist_ok=True)
            h.write(f"{omb}/bin/benchmark",
                    "#!/bin/sh\n# OpenMessaging Benchmark's bin/benchmark, run by the lab's "
                    "OMB-compatible runner\n# (tr4947.omb: same command line, workload/driver "
                    "YAML and result JSON).\n"
                    f"PYTHONPATH={shlex.quote(str(SRC))} exec {py} -m tr4947.omb \"$@\"\n", 0o755)
            h.link("/usr/local/bin/aws", str(Path(py).parent / "aws"))
            # Answers ssh's password prompt only (standing in for a person typing it); any
            # other question, such as an unknown host key, is refused so ssh fails at once.
            h.write("/usr/local/libexec/tr4947-askpass",
                    "#!/bin/sh\n# Lab: answers ssh's password prompt from $LAB_SSH_PASSWORD, "
                    "standing in for a person typing it.\n# Anything else (an unknown host key) "
                    "is refused, so ssh stops instead of asking again.\n"
                    "case \"$1\" in *assword*) printf '%s\\n' \"$LAB_SSH_PASSWORD\" ;; "
                    "*) echo \"tr4947-askpass: not answering: $1\" >&2; exit 1 ;; esac\n",
                    0o755)
        # The ONTAP stand-in's host key, for every address of its block (FSx management
        # endpoints are made there at run time), as a site pins a storage system's key.
        ontap_key = self._ontap_known_hosts_line()
        if ontap_key:
            h.write("/etc/ssh/ssh_known_hosts", ontap_key)
        return f"{h.spec.address} {' '.join(known)}\n"

    def _ontap_public_key(self) -> str:
        import asyncssh
        from .ontap import sshd
        key = asyncssh.read_private_key(str(sshd.host_key(self.root)))
        return key.export_public_key().decode().strip()

    def _ontap_known_hosts_line(self) -> str | None:
        import ipaddress
        block = self._vars.get("lab_storage_block")
        if not block:
            return None
        net = ipaddress.ip_network(block)
        if net.prefixlen < 24 or net.version != 4:
            raise LabError(f"lab_storage_block {block}: give a /24 or smaller IPv4 block "
                           "(its hosts' key is pinned as one known_hosts pattern)")
        pattern = ".".join(str(net.network_address).split(".")[:3]) + ".*"
        return f"{pattern} {self._ontap_public_key()}\n"

    def _start_hosts(self, names: list[str]) -> list[str]:
        running = self.running()
        specs = self.specs()
        new = [n for n in names if n not in running]
        if not new:
            return []
        stale = [n for n in new if self.net.netns_path(n).exists()]
        if stale:
            raise LabError(f"network namespaces of {', '.join(stale)} exist but their hosts "
                           "are not running (a crashed lab?): `tr4947 lab down` first")
        self.net.create()
        self.net.add_hosts([HostLink(n, specs[n].addresses, specs[n].anyip) for n in new])
        labhosts = [H.LabHost(specs[n], self.root, self.net.netns(n)) for n in new]
        known = [k for k in (self._provision(h) for h in labhosts) if k]
        with open(self.known_hosts, "a") as f:
            f.writelines(known)
        recs = self.records()
        started = []
        for h in labhosts:
            recs[h.name] = h.start()
            started.append((h, recs[h.name]))
        H.save_records(self.records_file, recs)
        for h, rec in started:
            ports = {"linux": [22], "aws": [int(self._vars.get("lab_aws_port", 80))],
                     "ontap": [int(self.inv.ontap().get("ansible_port", 22)),
                               int(self.inv.ontap().get("ontap_rest_port", 443))]}[h.spec.role]
            for port in ports:
                try:
                    h.wait_port(rec, port)
                except H.HostError as exc:
                    raise LabError(str(exc)) from None
        self._configure_aws(new)
        self.say(f"hosts up: {', '.join(new)}")
        return new

    def _configure_aws(self, hosts: list[str]) -> None:
        """The clients are admin hosts: their AWS CLI is configured for the lab's AWS (its
        endpoint and the key the AWS stand-in made), as an admin host has its own
        ~/.aws/config and credentials; the TR's `aws fsx` commands then run as printed."""
        aws = self._vars.get("lab_aws_address")
        if not aws or "clients" not in self.inv.groups:
            return
        clients = [h.name for h in self.inv.select("clients") if h.name in hosts]
        if not clients:
            return
        _wait_for(lambda: (self.root / fsx.CREDENTIALS).exists(), 30, "the AWS stand-in's key")
        env = fsx.client_env(f"http://{aws}:{self._vars.get('lab_aws_port', 80)}", self.root)
        config = ("[default]\nregion = us-east-1\noutput = json\n"
                  f"endpoint_url = {env['AWS_ENDPOINT_URL']}\n")
        creds = ("[default]\n"
                 f"aws_access_key_id = {env['AWS_ACCESS_KEY_ID']}\n"
                 f"aws_secret_access_key = {env['AWS_SECRET_ACCESS_KEY']}\n")
        for c in clients:
            self.exec(c, "umask 077 && mkdir -p /root/.aws && cat > /root/.aws/credentials",
                      input=creds)
            self.exec(c, "cat > /root/.aws/config", input=config)

    def _create_volumes(self, clusters: list[str]) -> None:
        """The NFS clusters' volumes, made with the TR's clustershell command (FV-1's) by the
        stand-in itself."""
        from .ontap import state
        from .ontap.session import Session
        svm = self.inv.ontap().get("ontap_svm", "svm_kafka")
        have = set(state.load(self.root).volumes)
        wanted: dict[str, dict] = {}
        for c in clusters:
            for n in self.nodes(c):
                wanted.update(n.host.get("kafka_volumes") or {})
        lines = [volume_create_command(svm, name, spec) for name, spec in wanted.items()
                 if f"{svm}:{name}" not in have]
        if not lines:
            return
        self.say(f"ONTAP: creating volumes {', '.join(n for n in wanted if f'{svm}:{n}' not in have)}")
        r = Session(self.root, "admin", channel="lab").run_sync(
            "set -privilege advanced -confirmations off; " + "; ".join(lines))
        if r.error:
            raise LabError(f"ONTAP volume create failed:\n{r.output[-2000:]}")

    def _mount(self, node: kafka.Node) -> None:
        h = node.host
        if node.is_controller or h.get("kafka_storage") != "nfs" or not h.get("nfs_volume"):
            return
        mp = h.get("kafka_mountpoint")
        spec = (h.get("kafka_volumes") or {}).get(h.get("nfs_volume"), {})
        source = f"{h.get('nfs_lif')}:{spec.get('junction_path', '/' + h.get('nfs_volume'))}"
        self.exec(node.name, f"mountpoint -q {shlex.quote(mp)} || {{ mkdir -p {shlex.quote(mp)} "
                  f"&& mount -t nfs -o {shlex.quote(h.get('nfs_mount_options', 'vers=3'))} "
                  f"{shlex.quote(source)} {shlex.quote(mp)}; }}")

    def _start_kafka(self, clusters: list[str], timeout: float) -> list[str]:
        """Start every node of these clusters that does not serve yet; returns the clusters
        that had something to start."""
        todo = {}
        for c in clusters:
            ns = [n for n in self.nodes(c) if not n.standby]
            if not any(n.is_controller for n in ns):
                raise LabError(f"cluster {c} has no host with kafka_role: controller")
            down = [n for n in ns if not port_open(n.address, n.port, 0.3)]
            if down:
                todo[c] = ns
        # Every node at once, as the operators of a cluster would: each mounts its volume,
        # formats its storage (one short JVM each, the slow part) and starts with -daemon;
        # brokers wait for their controller by themselves.
        _parallel([lambda n=n: (self._mount(n),
                                self.exec(n.name, kafka_tools.start_command(n.host)))
                   for ns in todo.values() for n in ns
                   if not port_open(n.address, n.port, 0.3)], width=3)
        for c, ns in todo.items():
            self.say(f"{c}: started {len(ns)} nodes; waiting until they serve")
            try:
                kafka_admin.wait_serving(
                    [(n.name, n.address, n.port, None if n.is_controller else n.node_id)
                     for n in ns], timeout, why_not=self._why_not)
            except (TimeoutError, RuntimeError) as exc:
                raise LabError(f"{c}: {exc}") from None
        return list(todo)

    def _why_not(self, name: str) -> str:
        """Why a node will not come up: its JVM is gone (with the log tail)."""
        process = self.inv.host(name).get("kafka_process", kafka_tools.KAFKA_PROCESS)
        try:
            r = self.exec(name, f"pgrep -f {shlex.quote(process)} >/dev/null || "
                          "{ echo dead; tail -n 20 /opt/kafka/logs/kafkaServer.out "
                          "/opt/kafka/logs/zookeeper.out /opt/kafka/logs/server.log "
                          "2>/dev/null; }", check=False)
        except LabError as exc:
            return str(exc)
        return r.stdout.strip() if r.stdout.startswith("dead") else ""

    def use_kafka_version(self, clusters: Iterable[str], version: str) -> dict[str, dict]:
        """Let ``clusters`` run Kafka ``version`` (one the lab installs, see
        paths.kafka_versions) from their next bring-up: their hosts' inventory variables
        change as an operator's inventory would for that release (a ZooKeeper-era one runs
        ZooKeeper on the controller hosts), and so do the clients' (their tools are that
        release's). Returns {host: the variables set}, for a caller
        that holds its own copy of the inventory."""
        if version not in paths.kafka_versions():
            raise LabError(f"Kafka {version}: the lab installs {', '.join(paths.kafka_versions())} "
                           "(one pom per release in lab/kafka/)")
        hosts = [h for c in self.clusters(clusters) for h in self.inv.cluster(c)]
        # The clients run the TR's commands against those clusters: the same release's tools.
        hosts += self.inv.select("clients") if "clients" in self.inv.groups else []
        changed = {}
        for h in hosts:
            changed[h.name] = kafka.version_vars(h, version)
            h.vars.update(changed[h.name])
        self._host_vars.update(changed)
        return changed

    def forget_host_vars(self) -> None:
        """The next bring-up builds the hosts as the inventory describes them."""
        self._host_vars.clear()

    @property
    def host_vars_file(self) -> Path:
        """What this running lab's hosts were built with beyond the inventory (another Kafka
        release): every process that opens the lab sees the same hosts."""
        return self.control / "host-vars.json"

    def _load_host_vars(self) -> None:
        try:
            saved = json.loads(self.host_vars_file.read_text())
        except (FileNotFoundError, ValueError):
            return
        for name, values in saved.items():
            if name in self.inv.hosts:
                self.inv.hosts[name].vars.update(values)
        self._host_vars.update(saved)

    def up(self, clusters: Iterable[str] | None = None, kafka_state: str = "started",
           timeout: float = 300) -> dict:
        """Bring up the storage side, the clients and the named clusters' hosts (default:
        lab_default_clusters). ``kafka_state``: "started" (volumes, mounts, Kafka running)
        or "installed" (hosts with Kafka installed and configured, nothing mounted)."""
        if kafka_state not in ("started", "installed"):
            raise ValueError(f"kafka_state {kafka_state!r}: 'started' or 'installed'")
        names = self.clusters(clusters)
        preflight()
        self._t0 = time.monotonic()
        restore = _install_interrupt_handlers()
        try:
            with self._locked():
                self.root.mkdir(parents=True, exist_ok=True)
                self._control_keys()
                if self._host_vars:
                    write_json(self.host_vars_file, self._host_vars)
                self._ontap_bootstrap()
                wanted = self._wanted(names)
                for version in sorted({kafka.Node(self.inv.host(n)).version for n in wanted
                                       if n in self.inv.hosts}):
                    cds.ensure(version, self.say)
                new = self._start_hosts(wanted)
                started = []
                if kafka_state == "started":
                    self._create_volumes(names)
                    started = self._start_kafka(names, timeout)
            self.say("lab up: " + (", ".join(names) or "storage and clients"))
            return {"clusters": names, "hosts": new, "kafka_started": started,
                    "seconds": round(time.monotonic() - self._t0, 1)}
        except KeyboardInterrupt:
            self.say("interrupted: tearing the lab down")
            restore()
            self.down()
            raise LabInterrupted("lab up interrupted; everything it started was cleaned up")
        finally:
            restore()

    # --- tear-down --------------------------------------------------------------------------------
    def down(self) -> dict:
        """End every host, remove namespaces and the control port, delete the state dir.
        Safe to repeat, and after a crash."""
        self._t0 = time.monotonic()
        _check_root_is_lab(self.root)
        old = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)} \
            if threading.current_thread() is threading.main_thread() else {}
        for s in old:
            signal.signal(s, signal.SIG_IGN)   # a second Ctrl-C must not leave half a lab
        try:
            with self._locked():
                recs = list(self.records().values())
                stopped = H.stop(recs)
                strays = H.processes_in([Path("/run/netns") / ns for ns in self.net.namespaces()])
                if strays:
                    self.say(f"stopping {len(strays)} stray process(es) in lab namespaces")
                    H.kill_all(strays)
                removed = self.net.remove()
                if self.root.exists():
                    try:
                        shutil.rmtree(self.root)
                    except OSError as exc:
                        raise LabError(f"could not remove {self.root}: {exc}") from exc
                self.say(f"lab down: {stopped} host(s) stopped, {len(removed)} namespace(s)/"
                         f"interface(s) removed, {self.root} removed")
                return {"stopped": stopped, "removed": removed,
                        "seconds": round(time.monotonic() - self._t0, 1)}
        finally:
            for s, h in old.items():
                signal.signal(s, h)
            with contextlib.suppress(FileNotFoundError):
                Path(str(self.root) + ".lock").unlink()

    # --- status ---------------------------------------------------------------------------------
    def leftovers(self) -> list[str]:
        """What a lab that is down must not have: namespaces, the control port, processes in
        them, its state dir."""
        out = self.net.leftovers()
        procs = H.processes_in([Path("/run/netns") / ns for ns in self.net.namespaces()])
        out += [f"process {p.pid} ({_name(p)}) in a lab namespace" for p in procs]
        if self.root.exists() and not self.running():
            out.append(f"state directory {self.root}")
        return out

    def status(self) -> list[dict]:
        recs = self.records()
        rows = []
        specs = self.specs()
        for name, spec in specs.items():
            rec = recs.get(name)
            state = "down" if rec is None else ("running" if rec.alive() else "dead")
            what = spec.role
            h = self.inv.hosts.get(name)
            if h is not None and h.get("kafka_cluster"):
                n = kafka.Node(h)
                what = f"{n.cluster} {n.role}" + (" (standby)" if n.standby else "")
                if state == "running":
                    state = "kafka serving" if port_open(n.address, n.port, 0.2) \
                        else "up (kafka not running)"
            elif h is not None and "clients" in h.groups:
                what = "client"
            rows.append({"host": name, "role": what, "address": spec.address,
                         "pid": rec.pid if rec else "", "state": state})
        return rows

    def status_document(self) -> dict:
        """What `tr4947 lab status --json` prints: the lab's state dir and network, each
        host (pid null when it has none) and what a lab that is down left behind."""
        up = bool(self.running())
        return {"state_dir": str(self.root),
                "network": {"subnet": str(self.net.subnet), "up": self.net.up()},
                "running": up,
                "hosts": [{**r, "pid": r["pid"] or None} for r in self.status()],
                "leftovers": [] if up else self.leftovers()}

    def format_status(self) -> str:
        doc = self.status_document()
        rows = doc["hosts"]
        cols = ["host", "role", "address", "pid", "state"]

        def cell(r, c):
            return "" if r.get(c) is None else str(r[c])
        w = {c: max(len(c), *(len(cell(r, c)) for r in rows)) for c in cols}
        lines = ["  ".join(c.upper().ljust(w[c]) for c in cols)]
        lines += ["  ".join(cell(r, c).ljust(w[c]) for c in cols) for r in rows]
        left = doc["leftovers"]
        tail = ("\nleft over from a lab that is not running (remove with `tr4947 lab down`):\n  "
                + "\n  ".join(left)) if left else ""
        return (f"lab state: {doc['state_dir']}; network {doc['network']['subnet']} "
                f"({'up' if doc['network']['up'] else 'down'})\n" + "\n".join(lines) + tail)


def volume_create_command(svm: str, name: str, spec: dict) -> str:
    """The TR's FV-1 command for a lab volume (with the lab's aggregate, size and junction)."""
    cmd = (f"volume create -vserver {svm} -volume {name} "
           f"-aggregate {spec.get('aggregate', 'aggr1')} -size {spec.get('size', '100GB')} "
           f"-state online -security-style unix -unix-permissions 0777 "
           f"-junction-path {spec.get('junction_path', '/' + name)} -type RW")
    if spec.get("preserve_unlink"):
        cmd += " -is-preserve-unlink-enabled true"
    return cmd


def _parallel(fns: list[Callable], width: int = 8) -> None:
    """Run fns in threads, at most ``width`` at a time (2 cores: more JVMs starting at once
    only slow each other down); the first error is raised once all have finished."""
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


def _wait_for(check: Callable[[], bool], timeout: float, what: str) -> None:
    try:
        until(check, timeout, 0.1, what)
    except TimeoutError as exc:
        raise LabError(str(exc)) from None


def _name(p) -> str:
    try:
        return p.name()
    except Exception:
        return "?"


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


def _check_root_is_lab(root: Path) -> None:
    """Refuse to rm -rf something that is not a lab state dir (a mistyped env var)."""
    if not root.exists():
        return
    if root in (Path("/"), Path.home(), paths.REPO) or len(root.parts) < 3:
        raise LabError(f"refusing to remove {root}: not a lab state directory")
    markers = {"control", "hosts", "ontap", "volumes", "mounts.json"}
    entries = {e.name for e in root.iterdir()}
    if entries and not entries & markers:
        raise LabError(f"refusing to remove {root}: it does not look like a lab state "
                       f"directory (has {sorted(entries)[:5]})")


# --- module-level convenience (the CLI) -------------------------------------------------------------
def up(clusters: Iterable[str] | None = None, inventory: str = "lab", **kw) -> dict:
    return Lab(inventory).up(clusters, **kw)


def down(inventory: str = "lab") -> dict:
    return Lab(inventory).down()


def status(inventory: str = "lab") -> str:
    return Lab(inventory, echo=None).format_status()
