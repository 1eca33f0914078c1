"""The benchmark cluster of the performance chapters (CVO-7, FSX-6, AFF-5/6) on a target.

Three brokers and one OMB client, set up the way the TR describes: NFS mounts on every broker
(from /etc/fstab with ``mount -a``, or the TR's ``mount`` command), the TR's
``server.properties`` at /opt/kafka/config/ with each broker's own ``node.id``, listeners and
``log.dirs``, and OMB's installation directory on the client.

On the lab the hosts are the inventory's ``nfs`` cluster (brokers 127.0.4.1-3, controller
127.0.4.100, the addresses the TR-derived driver files name), brokers are started from the
placed file by tr4947.lab.brokers, and each layout gets a fresh cluster (the TR's layouts
were separate deployments). On a real target every state-changing step is only planned
unless the Target was opened with confirm=True; starting the brokers is the operator's.
"""
from __future__ import annotations

import json
import shutil

from .. import broker_config
from . import benchrun

SERVER = "/opt/kafka/config/server.properties"


class Testbed:
    def __init__(self, t, client: str = "client-1", heap: str | None = None,
                 lab_cluster: str = "nfs"):
        self.t = t
        self.client = client
        self.heap = heap
        self.lab = t.kind == "lab"
        self._fstab_added: dict[str, bool] = {}
        if self.lab:
            from ..lab.lab import Lab
            self.L = Lab(echo=lambda m: None)
            self.lab_was_up = bool(self.L.procs())
            self.L.up([])                        # the ONTAP stand-in; Kafka starts below
            hosts = t.inventory.cluster(lab_cluster)
            self.brokers = [h.name for h in hosts
                            if h.get("kafka_role") == "broker" and not h.get("kafka_standby")]
            self.controller = next(h.name for h in hosts if h.get("kafka_role") == "controller")
            benchrun.install_on_lab(t, client)   # /opt/benchmark/bin/benchmark -> the runner
        else:
            self.brokers = [h.name for h in t.hosts("brokers")]
            self.controller = None

    def broker_values(self) -> dict[str, str]:
        """The lab brokers' addresses that the driver files show -> this target's brokers'
        (identity on the lab), for Target.run_snippet(replace=)."""
        from .. import inventory
        lab = [h for h in inventory.load("lab").cluster("nfs")
               if h.get("kafka_role") == "broker" and not h.get("kafka_standby")]
        return {a.address: self.t.inventory.host(b).address for a, b in zip(lab, self.brokers)}

    # --- storage ------------------------------------------------------------------------
    def mount(self, *snippets: str, fstab: str | None = None, servers=None,
              replace: dict | None = None, **variables) -> list[tuple[str, dict]]:
        """On every broker: add the lines of the ``fstab`` snippet to /etc/fstab (with
        ``servers``: this target's NFS addresses, see Target.add_fstab_lines), then run the
        mount snippets (``replace``: the lab values they show -> this target's). A second layout first takes the previous one's lines out again (the
        copy add_fstab_lines kept), so ``mount -a`` mounts only the new volumes. Returns
        (host, {mount point: NFS source}) from the last snippet's ``df``/``mount`` output."""
        from ..targets import fstab as fs
        out = []
        for host in self.brokers:
            added = None
            if fstab:
                if self._fstab_added.get(host):
                    self.t.run(f"mv {fs.FSTAB}.tr4947.bak {fs.FSTAB}", host, changes_state=True,
                               check=True)
                added = self.t.add_fstab_lines(fstab, host, servers=servers, check=True)
                self._fstab_added[host] = bool(fs.added(added)) or self._fstab_added.get(host, False)
            r = None
            for s in snippets:
                r = self.t.run_snippet(s, host, changes_state=True, check=True, needs=added,
                                       replace=replace, **variables)
            out.append((host, nfs_mounts(r.stdout if r is not None and not r.planned else "")))
        return out

    # --- configuration -------------------------------------------------------------------
    def configure(self, base: str, log_dirs=None, extra: str | None = None,
                  why: str = "") -> list[list]:
        """Broker 1's file ``base``, turned into each broker's own (``log_dirs(n)`` gives the
        ``log.dirs`` value of broker n, None keeps base's), with ``extra`` properties set on
        top (e.g. a tuning snippet), placed at SERVER on each broker host."""
        rows = []
        for n, host in enumerate(self.brokers, 1):
            dirs = log_dirs(n) if log_dirs else None
            text = broker_config.for_broker(base, n, self.t.inventory.host(host).address,
                                            log_dirs=dirs)
            if extra:
                text = broker_config.merge_file(text, extra, why)
            self.t.run(["sh", "-c", f"mkdir -p {SERVER.rsplit('/', 1)[0]} && cat > {SERVER}"],
                       host, input=text, changes_state=True, check=True)
            rows.append([host, text])
        return rows

    # --- processes (lab) ---------------------------------------------------------------
    def stop(self) -> None:
        if self.lab:
            for host in self.brokers + [self.controller]:
                self.L.stop_node(host)

    def restart(self) -> None:
        """A fresh cluster from the placed files: controller metadata wiped, controller and
        brokers started (lab). Call stop() before changing mounts."""
        if not self.lab:
            return
        from ..lab import brokers as lab_brokers
        self.stop()
        shutil.rmtree(self.t.host_path(self.controller, "/var/lib/kafka/metadata"),
                      ignore_errors=True)
        self.L.start_node(self.controller)
        for host in self.brokers:
            lab_brokers.start(self.L, host, SERVER, heap=self.heap)

    def thread_counts(self) -> dict[str, int]:
        """JVM threads of each running lab broker (what a larger thread pool costs)."""
        import psutil
        out = {}
        if self.lab:
            procs = self.L.procs()
            for host in self.brokers:
                rec = procs.get(host)
                if rec and rec.alive():
                    out[host] = psutil.Process(rec.pid).num_threads()
        return out

    def effective(self, host: str, keys: list[str]) -> dict[str, str]:
        """Values a running broker logged in its KafkaConfig dump (what it really uses)."""
        r = self.t.run(["sh", "-c", "grep -h -E '^\\s+(" + "|".join(k.replace(".", "\\.") for k in keys)
                        + ") = ' logs/server.log | tail -n " + str(len(keys))], host)
        vals = {}
        for line in r.stdout.splitlines():
            k, _, v = line.strip().partition(" = ")
            vals[k] = v
        return vals

    # --- observations --------------------------------------------------------------------
    def log_dirs(self, bootstrap: str) -> list[dict]:
        """kafka-log-dirs --describe: per broker and log dir, the benchmark topics' replicas."""
        r = self.t.run(f"bin/kafka-log-dirs.sh --bootstrap-server {bootstrap} --describe",
                       self.client, check=True)
        data = json.loads(next(line for line in r.stdout.splitlines() if line.startswith("{")))
        rows = []
        for b in sorted(data["brokers"], key=lambda b: b["broker"]):
            for d in sorted(b["logDirs"], key=lambda d: d["logDir"]):
                path = d["logDir"]
                if self.lab and 0 < b["broker"] <= len(self.brokers):
                    root = str(self.t.host_path(self.brokers[b["broker"] - 1], "/")).rstrip("/")
                    path = path[len(root):] if path.startswith(root + "/") else path
                parts = [p for p in d["partitions"] if p["partition"].startswith("test-topic")]
                rows.append({"broker": b["broker"], "logDir": path, "partitions": parts})
        return rows

    def close(self) -> None:
        """Stop the cluster, unmount, and leave the lab as it was found."""
        if not self.lab:
            return
        from ..targets import fstab as fs
        self.stop()
        for host in self.brokers:
            self.t.run("umount -a -t nfs,nfs4 || true", host)
            if self._fstab_added.get(host):          # the host's fstab as it was found
                self.t.run(f"mv {fs.FSTAB}.tr4947.bak {fs.FSTAB}", host, check=True)
        if not self.lab_was_up:
            self.L.down()


def nfs_mounts(output: str) -> dict[str, str]:
    """{mount point: server:/path} from ``df -h`` or ``mount`` output."""
    out = {}
    for line in output.splitlines():
        f = line.split()
        if not f or ":/" not in f[0]:
            continue
        if " on " in line and " type " in line:           # mount: src on dir type nfs4 (...)
            out[line.split(" on ", 1)[1].split(" type ")[0]] = f[0]
        else:                                               # df -h: src size used avail use% dir
            out[f[-1]] = f[0]
    return out


def copies(log_dirs: list[dict]) -> float:
    """Average number of copies of each partition's data on the volumes (replicas x size
    relative to the largest replica): about the replication factor once followers caught up."""
    by_part: dict[str, list[int]] = {}
    for d in log_dirs:
        for p in d["partitions"]:
            by_part.setdefault(p["partition"], []).append(p["size"])
    ratios = [sum(s) / max(s) for s in by_part.values() if max(s) > 0]
    return sum(ratios) / len(ratios) if ratios else 0.0
