"""What the chapters do to Kafka on any target: start, stop or kill a broker, move a broker's
address to a standby, wait until brokers serve, read a broker's log.

All of it runs over SSH on the broker hosts, as an operator does it, with commands the
inventory can change for a site (defaults are Kafka's own scripts, see tr4947.kafka_tools):

    kafka_home           where Kafka is installed (commands run there)        /opt/kafka
    kafka_start          how to start it                                       bin/kafka-server-start.sh -daemon config/server.properties
    kafka_stop           how to stop it                                        bin/kafka-server-stop.sh
    kafka_cluster_id     KRaft: the cluster id storage is formatted with before a start
    kafka_process        what `pgrep -f` finds of it (ZooKeeper: QuorumPeerMain)  kafka.Kafka
    kafka_port           the broker's listener port                            9092
    kafka_interface      the interface a broker's address lives on             eth0
    kafka_prefix         that address's prefix length                         24

Whether the broker serves is checked from the control node (its port, then its id in the
cluster's metadata), like a client would see it.
"""
from __future__ import annotations

import shlex
from typing import Iterable

from .. import kafka_tools
from ..transports import kafka_admin
from ..wait import port_open, until
from ..inventory import Host
from .result import Result, ResultSet


def bootstrap_of(hosts: Iterable[Host]) -> str:
    """host:port list of brokers: what clients bootstrap from."""
    return ",".join(f"{h.kafka_address}:{h.get('kafka_port', 9092)}" for h in hosts)


class KafkaCluster:
    """One Kafka cluster of a target's inventory (a child group of ``kafka``), composed over
    the Target, as kafkatest's KafkaService is over its cluster: its hosts by role (brokers,
    controllers, standbys), where clients bootstrap, where each broker keeps its log (its log
    dir, and on NFS its volume, export, mount point, mount options and data LIF), and what is
    done to its Kafka: start, stop or kill, wait until it serves, move a broker's address,
    read its log, all through the Target (so over SSH, planned without confirm on a real
    target). Chapters take this view (``Target.cluster``); none builds its own, and the Target
    itself knows nothing of Kafka."""

    def __init__(self, target, name: str):
        self.target = target
        self.name = name
        self.hosts = target.hosts(name)

    def _role(self, role: str, standby: bool = False) -> list[Host]:
        return [h for h in self.hosts if (role == "any" or h.get("kafka_role", "broker") == role)
                and bool(h.get("kafka_standby")) == standby]

    @property
    def brokers(self) -> list[Host]:
        """The serving brokers (standbys left out), broker 1 first."""
        return self._role("broker")

    @property
    def controllers(self) -> list[Host]:
        """KRaft controllers (or a ZooKeeper host), which brokers need before they start."""
        return self._role("controller")

    @property
    def standbys(self) -> list[Host]:
        return self._role("broker", standby=True)

    @property
    def standby(self) -> Host | None:
        """The host that takes over a failed broker next (the first standby), if any."""
        return (self.standbys or [None])[0]

    def took_over(self, old: Host, new: Host) -> None:
        """``new`` (a standby) now serves in ``old``'s place, and ``old`` is the standby: this
        view's roles and order follow (``new`` takes ``old``'s position, so broker 1 stays
        first). Only this view's copy of the hosts changes: the inventory's files do not."""
        i, j = self.hosts.index(old), self.hosts.index(new)
        self.hosts[i], self.hosts[j] = new, old
        new.vars["kafka_standby"], old.vars["kafka_standby"] = False, True

    def _host(self, host: Host | str | None) -> Host:
        if host is None:
            return self.brokers[0]
        return self.target.host(host) if isinstance(host, str) else host

    def node_id(self, host: Host | str | None = None) -> int:
        """A broker's node.id (default: broker 1's)."""
        return int(self._host(host).get("kafka_node_id"))

    # --- where a broker keeps its log ---------------------------------------------------------
    @property
    def on_nfs(self) -> bool:
        """Whether the brokers keep their logs on NFS volumes (broker 1's does)."""
        return self.volume() is not None

    def volume(self, host: Host | str | None = None) -> str | None:
        """The ONTAP volume a broker's log dir is on (None: its own disk)."""
        return self._host(host).get("nfs_volume") or None

    def export(self, host: Host | str | None = None) -> str | None:
        """``lif:/junction`` a broker mounts its volume from (None: its own disk)."""
        h = self._host(host)
        vol = self.volume(h)
        if not vol:
            return None
        junction = (h.get("kafka_volumes") or {}).get(vol, {}).get("junction_path", "/" + vol)
        return f"{h.get('nfs_lif')}:{junction}"

    def mountpoint(self, host: Host | str | None = None) -> str | None:
        h = self._host(host)
        return h.get("kafka_mountpoint", "/mnt/data") if self.volume(h) else None

    def mount_options(self, host: Host | str | None = None) -> str:
        """The inventory's NFS mount options for a broker (default vers=4.1)."""
        return self._host(host).get("nfs_mount_options", "vers=4.1")

    def lif(self, host: Host | str | None = None) -> dict:
        """The ONTAP data LIF (its inventory entry) a broker mounts from ({} if none)."""
        h = self._host(host)
        inv = self.target.inventory
        if not self.volume(h) or "ontap" not in inv.groups:
            return {}
        lifs = {x["address"]: x for x in inv.ontap().get("ontap_data_lifs") or []}
        return lifs.get(h.get("nfs_lif"), {})

    def bootstrap(self, skip: Iterable[str] = ()) -> str:
        return bootstrap_of(h for h in self.brokers if h.name not in set(skip))

    def log_dir(self, host: Host | str | None = None) -> str:
        """A broker's first log dir (default: broker 1's), from the inventory."""
        return str(self._host(host).get("kafka_log_dirs", "/var/lib/kafka")).split(",")[0]

    # --- operations: every one runs on the hosts over SSH, through the Target ------------------
    def _names(self, hosts) -> list[str]:
        """Host names from a Host, a name, a group name or a list of either."""
        if isinstance(hosts, Host):
            return [hosts.name]
        if isinstance(hosts, str):
            return [h.name for h in self.target.hosts(hosts)]
        return [h.name if isinstance(h, Host) else self.target.host(h).name for h in hosts]

    def _process(self, host: str) -> str:
        return self.target.host(host).get("kafka_process", kafka_tools.KAFKA_PROCESS)

    def pids(self, host: Host | str) -> list[int]:
        """The host's Kafka JVM(s) (or ZooKeeper's, on a ZooKeeper host), as `pgrep` on the
        host sees them (read-only)."""
        [name] = self._names(host)
        r = self.target.run(f"pgrep -f {shlex.quote(self._process(name))} || true", name,
                            read_only=True, check=True)
        return [int(p) for p in r.stdout.split() if p.isdigit()]

    def alive(self, host: Host | str) -> bool:
        """Whether the host's Kafka JVM runs (as `pgrep` on the host sees it)."""
        return bool(self.pids(host))

    def start(self, hosts=None, *, heap: str | None = None, wait: bool = True,
              timeout: float = 240, env: dict[str, str] | None = None) -> ResultSet:
        """Start Kafka on ``hosts`` (default: the controllers, then the brokers; standbys stay
        down), controllers first whatever the order, then wait until all of them serve.
        ``heap``: KAFKA_HEAP_OPTS; ``env``: anything else for Kafka's start script."""
        t = self.target
        names = self._names(self.controllers + self.brokers if hosts is None else hosts)
        names.sort(key=lambda n: t.host(n).get("kafka_role", "broker") != "controller")
        env = {**(env or {}), **({"KAFKA_HEAP_OPTS": heap} if heap else {})} or None
        # Every host at once, as a cluster's operators would: each start formats its storage
        # first (a short JVM), and brokers wait for their controllers by themselves. At most
        # three at a time: more JVMs starting together only slow each other down.
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(3) as pool:
            out = ResultSet(pool.map(lambda n: t.run(kafka_tools.start_command(t.host(n)), n,
                                                     env=env), names))
        out.check()
        if wait and not out.planned:
            self.wait_serving(names, timeout)
        return out

    def stop(self, hosts=None, *, kill: bool = False, timeout: float = 120) -> ResultSet:
        """Stop Kafka on ``hosts`` (default: the brokers, then the controllers): the
        inventory's stop command (SIGTERM: a clean shutdown), or ``kill``: SIGKILL, a broker
        that crashes. Waits until each JVM is gone."""
        t = self.target
        out = ResultSet()
        names = self._names(self.brokers + self.controllers if hosts is None else hosts)
        for n in names:
            h = t.host(n)
            cmd = (f"pkill -KILL -f {shlex.quote(self._process(n))}" if kill else
                   f"cd {shlex.quote(h.get('kafka_home', kafka_tools.KAFKA_HOME))} && "
                   f"{h.get('kafka_stop', kafka_tools.KAFKA_STOP)}")
            out.append(t.run(cmd, n))
        if not out.planned:
            for n in names:
                until(lambda n=n: not self.pids(n), timeout, 0.5, f"Kafka on {n} to stop")
        return out

    def wait_serving(self, hosts=None, timeout: float = 240) -> float:
        """Until every host's Kafka listens and every broker is in its cluster's metadata
        (default: the controllers and brokers). A node whose JVM died stops the wait with the
        end of its log."""
        nodes = []
        for n in self._names(self.controllers + self.brokers if hosts is None else hosts):
            h = self.target.host(n)
            ctl = h.get("kafka_role") == "controller"
            port = int(h.get("kafka_controller_port", 9093) if ctl else h.get("kafka_port", 9092))
            nid = None if ctl else int(h.get("kafka_node_id", 0))
            nodes.append((n, h.kafka_address, port, nid))
        return kafka_admin.wait_serving(nodes, timeout, why_not=self.why_not)

    def why_not(self, name: str) -> str:
        """Why ``name``'s Kafka is not serving: "" while its process runs, else the end of its
        log."""
        if self.pids(name):
            return ""
        log = self.target.run("tail -n 25 logs/kafkaServer.out logs/server.log 2>/dev/null",
                              name, read_only=True).stdout
        return f"its Kafka process is not running; end of its log:\n{log}"

    # --- the broker's address (REC-2: the standby takes over broker 1's IP) ----------------------
    def move_address(self, address: str, from_host: Host | str, to_host: Host | str,
                     timeout: float = 60) -> ResultSet:
        """Take ``address`` off ``from_host`` (which may be the address we reach it by, so
        the removal runs detached a moment after the SSH session returns) and put it on
        ``to_host``, announcing it with gratuitous ARP so peers update their caches."""
        t = self.target
        [fname], [tname] = self._names(from_host), self._names(to_host)
        fh, th = t.host(fname), t.host(tname)
        out = ResultSet()
        cidr = f"{address}/{fh.get('kafka_prefix', 24)}"
        dev = fh.get("kafka_interface", "eth0")
        out.append(t.run(
            f"nohup sh -c 'sleep 1; ip addr del {cidr} dev {dev}' > /dev/null 2>&1 &", fname))
        if not out.planned:
            t.forget(fname)
            until(lambda: not port_open(address, 22, 0.5) and
                  not port_open(address, int(fh.get("kafka_port", 9092)), 0.5), timeout, 0.5,
                  f"{address} to leave {fname}")
        dev = th.get("kafka_interface", "eth0")
        out.append(t.run(
            f"ip addr add {address}/{th.get('kafka_prefix', 24)} dev {dev} && "
            f"arping -q -U -c 2 -I {dev} {address}; ip -brief addr show dev {dev}", tname,
            check=True))
        return out

    # --- reading a broker -------------------------------------------------------------------------
    def logs(self, host: Host | str, pattern: str, lines: int = 20,
             needs: Result | None = None) -> Result:
        """Lines of the broker's server.log matching an extended regex (read-only)."""
        [name] = self._names(host)
        return self.target.run(f"grep -E {shlex.quote(pattern)} logs/server.log | "
                               f"tail -n {int(lines)}", name, read_only=True, needs=needs)
