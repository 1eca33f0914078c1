"""AFF-3..AFF-6: the FlexGroup mounted with NFSv4.1 and nconnect, the session slots, the
brokers' thread pools, then a steady-state run and a backlog run with the throughput driver."""
from __future__ import annotations

from .. import broker_config
from ..targets import playbooks
from ..measure.spread import single
from . import omb
from . import nfs_audit as pf
from .context import ChapterRun
from .performance import COMMAND, Testbed, snippet

WORKLOAD = "aws-cvo/CVO-6-workload.yaml"
DRIVER = "aws-cvo/CVO-6-driver-throughput.yaml"
BACKLOG_WORKLOAD = "aff-a900/AFF-6-workload-backlog.yaml"
#: Kafka's own defaults for the pools AFF-4 changes.
DEFAULTS = {"num.io.threads": "8", "num.network.threads": "3", "background.threads": "10",
            "num.replica.alter.log.dirs.threads": "(log dirs)", "num.replica.fetchers": "1",
            "queued.max.requests": "500"}


class AffPerformance:
    def __init__(self, run: ChapterRun, create_flexgroup: bool):
        self.run, self.t, self.rec = run, run.target, run.rec
        self.tb = tb = Testbed(self.t)
        print(tb.deploy(run))
        self.started = None
        if create_flexgroup:
            # AFF-1's FlexGroup (its corrected playbook, as the aff-a900-storage notebook runs
            # it) with the silly-rename fix on: a broker on NFSv4.1 that deletes a topic needs it.
            playbooks.run(self.t, "AFF-1-flexgroup.yml").check()
            ontap = self.t.inventory.ontap()
            self.t.run_snippet("preflight/PRE-2-preserve-unlink.ontap", ontap.name, check=True,
                               svm=ontap.get("ontap_svm", "vs1"), volume="kafka_fg_vol01")
        print(f"brokers {', '.join(tb.brokers)}; OMB client {tb.client}")

    def mount(self) -> None:
        """AFF-3: the FlexGroup on every broker, as the client reports it."""
        tb = self.tb
        tb.mount("aff-a900/AFF-3-mount.sh", replace=self.t.lab_values())
        rows, r = [], None
        for host in tb.brokers:
            r = self.t.run("mount -t nfs4", host, read_only=True, check=True, needs=tb.mounted)
            line = next((ln for ln in r.stdout.splitlines() if "/data/kafka_fg_vol01 " in ln), "")
            opts = line.rsplit("(", 1)[-1].rstrip(")").split(",") if line else []
            rows.append([host, line.split(" on ")[0] if line else "not mounted",
                         next((o for o in opts if o.startswith("vers=")), "-"),
                         next((o for o in opts if o.startswith("nconnect=")), "-")])
        if not r.planned and any(row[1] != "not mounted" for row in rows):
            self.rec.console("AFF-3", "The mount on one broker, as the client reports it",
                             "mount -t nfs4", next(ln for ln in r.stdout.splitlines()
                                                   if "/data/kafka_fg_vol01 " in ln),
                             host=tb.brokers[-1])
        self.rec.table("AFF-3", "The FlexGroup mount on every broker",
                       ["Broker host", "Source", "Version", "Connections"], rows)

    def session_slots(self) -> None:
        """AFF-3: the TR's max_session_slots placed on every broker, and checked."""
        tb = self.tb
        placed = [self.t.run_snippet("aff-a900/AFF-3-nfs-session-slots.conf", host,
                                     dest="/etc/modprobe.d/nfsclient.conf", check=True)
                  for host in tb.brokers]
        r = self.t.run_snippet("aff-a900/AFF-3-check-session-slots.sh", tb.brokers[0],
                               read_only=True, needs=placed[0])
        self.rec.show("AFF-3", "The session slots in effect on a broker", r)
        if r.ok and not r.planned and "No such file" in r.output:
            self.rec.text("AFF-3", "", (
                "This host placed the TR's `max_session_slots=180` in "
                "`/etc/modprobe.d/nfsclient.conf`, but it has no kernel NFS client to load it: "
                "the check finds no `nfs` module (the lab's NFS mounts are FUSE mounts, with no "
                "NFSv4.1 session and no `nconnect` connections to tune). On a real broker the "
                "check prints 180 once the module has been reloaded."))

    def thread_pools(self, heap: str) -> None:
        """AFF-4: CVO-5's broker configuration with the A900 pools on top; what the brokers
        use, and the audit of the brokers as built."""
        tb = self.tb
        line = broker_config.keys(snippet("aff-a900/AFF-4-broker1-log-dirs.properties"))["log.dirs"]
        tuning = snippet("aff-a900/AFF-4-broker-tuning.properties")
        tb.configure(snippet("aws-cvo/CVO-5-server-ha.properties"),
                     lambda n: line.replace("/broker1", f"/broker{n}"), extra=tuning,
                     why="AFF-4: thread pools for the A900")
        self.started = tb.start(heap)
        want = broker_config.keys(tuning)
        if not self.started.planned:
            used = tb.effective(tb.brokers[0], list(want))
            rows = [[k, DEFAULTS.get(k, "-"), v, used.get(k, "?")] for k, v in want.items()]
            if not all(r[2] == r[3] for r in rows):
                raise RuntimeError(f"a broker does not use the AFF-4 value: {rows}")
            threads = tb.thread_counts()
            self.rec.table("AFF-4", "The AFF-4 thread pools as broker 1 reports them",
                           ["Setting", "Kafka default", "AFF-4", "Broker 1 uses"], rows,
                           note="Brokers' JVM threads with these pools: "
                                + ", ".join(f"{h} {n}" for h, n in threads.items())
                                + ". More I/O and network threads only help when there is "
                                "storage concurrency and cores to serve them; the lab's 2 cores "
                                "have neither, so it shows the setting taking effect, not its "
                                "gain.")
        audit, _ = pf.audit(self.t, hosts=tb.brokers, needs=self.started)
        if not self.started.planned:
            pf.record(self.rec, "AFF-4", "Preflight audit (PRE-1) of the brokers as built", audit)

    def steady(self, scale: dict | None) -> None:
        """AFF-5: steady state with the throughput driver."""
        tb = self.tb
        run = tb.benchmark("Steady state, throughput driver", "throughput", WORKLOAD, DRIVER,
                           scale, needs=self.started)
        self.steady_run = run
        if run.planned:
            return
        self.rec.load("AFF-5", "OMB publish rate asked and achieved", [run.load()])
        s = run.summary()
        print(f"producers {s['publish_mean']:.1f} MB/s, consumers {s['consume_mean']:.1f} MB/s "
              "on average")
        self.rec.console("AFF-5", "The TR's command and OMB's log (excerpt)", run.command.command,
                         omb.excerpt(run.command.stdout), host=tb.client, show=False)
        self.rec.chart("AFF-5", "Steady state: MiB/s, TR-4947's 3.4 GBps dashed (log scale)",
                       omb.phase_chart(run, reference=[
                           ("TR-4947: over 3.4 GBps 'for both producer and consumers'",
                            3400.0)]))
        self.rec.table("AFF-5", "TR-4947's steady state on the A900 and the lab's (one run)",
                       ["Measure", "TR-4947 (AFF A900, 8 brokers)", "Lab"],
                       [["Producer throughput, average",
                         "over 3.4 GBps 'for both producer and consumers' (each side or the "
                         "total: see AFF-5)", f"{s['publish_mean']:.1f} MiB/s"],
                        ["Consumer throughput, average", "(the same sentence)",
                         f"{s['consume_mean']:.1f} MiB/s"],
                        ["Publish latency p99 (whole run)", "-", f"{s['pub_p99_ms']:.0f} ms"]],
                       note="Lab figures: 3 brokers and the OMB client on one machine with 2 "
                            "cores, the FlexGroup a FUSE mount of a local directory.")

    def backlog(self, scale: dict | None) -> None:
        """AFF-6: the backlog workload: producer-only, drain, mixed."""
        tb = self.tb
        files = {**tb.files(WORKLOAD, "throughput", DRIVER),
                 "workloads/1-topic-100-partitions-1kb.yaml": snippet(BACKLOG_WORKLOAD)}
        run = omb.run(self.t, tb.client, "Backlog, throughput driver", COMMAND["throughput"],
                      files, scale, needs=self.started)
        self.backlog_run = run
        if run.planned:
            return
        self.rec.load("AFF-6", "OMB publish rate asked and achieved (all phases)", [run.load()])
        omb.delete_test_topics(self.t, tb.client, tb.bootstrap)
        starts = run.series.phase_starts
        order = list(starts)
        if order not in (["warmup", "producer-only", "drain", "mixed"],
                         ["producer-only", "drain", "mixed"]):
            raise RuntimeError(f"the backlog run's phases came in another order: {order}")
        ends = {"producer-only": starts["drain"], "drain": starts["mixed"],
                "mixed": run.series.samples[-1].t}
        rows = []
        for ph in ("producer-only", "drain", "mixed"):
            ss = run.series.of(ph)
            rows.append([ph, f"{ends[ph] - starts[ph]:.0f}",
                         f"{max((x.publish_mbs for x in ss), default=0):.1f}",
                         f"{max((x.consume_mbs for x in ss), default=0):.1f}"])
        print("phases in order:", " -> ".join(order))
        self.rec.console("AFF-6", "The TR's command with the backlog workload and OMB's log "
                         "(excerpt)", run.command.command, omb.excerpt(run.command.stdout),
                         host=tb.client, show=False)
        self.rec.chart("AFF-6", "Backlog run per phase, TR-4947's peaks dashed (log scale)",
                       omb.phase_chart(run, reference=[
                           ("TR-4947: producer peak 4027.5 MB/s (OMB log)", 4027.5),
                           ("TR-4947: consumer peak over 20 GBps", 20000.0)]))
        self.rec.table("AFF-6", "The backlog run's phases on the lab (in the order OMB ran "
                       "them; one run)",
                       ["Phase", "Lab: seconds", "Lab: producer peak MiB/s",
                        "Lab: consumer peak MiB/s"], rows,
                       note="TR-4947 on the A900: producer peak 4.03 GBps in the producer-only "
                            "phase (OMB logged 257,759.2 msg/s, 4027.5 MB/s), consumer peak over "
                            "20 GBps while draining, close to 30 GBps to the NFS volume in total. "
                            "The lab's backlog fits in the machine's page cache, so its consumers "
                            "do not read evicted data from storage as the TR's did; what the lab "
                            "does show is the phase order, the paused consumers and the drain "
                            "running faster than the producers.")

    def verdicts(self) -> None:
        steady = getattr(self, "steady_run", None)
        if steady is not None and not steady.planned:
            s = steady.summary()
            omb.throughput_verdict(
                self.rec, "AFF-5", "aff.steady-state", "over 3.4 GBps 'for both producer and "
                "consumers' (8 brokers, RF 3)",
                single(s["publish_mean"], "MiB/s (producers)"), omb.held([steady.load()]),
                "One steady-state run on three lab brokers.")
        backlog = getattr(self, "backlog_run", None)
        if backlog is not None and not backlog.planned:
            pub = max((x.publish_mbs for x in backlog.series.of("producer-only")), default=0)
            con = max((x.consume_mbs for x in backlog.series.of("drain")), default=0)
            loads = [backlog.load()]
            omb.throughput_verdict(
                self.rec, "AFF-6", "aff.producer-peak", "4.03 GBps producer peak",
                single(pub, "MiB/s (producer-only phase peak)"), omb.held(loads),
                "One backlog run.")
            omb.throughput_verdict(
                self.rec, "AFF-6", "aff.consumer-peak", "over 20 GBps consumer peak",
                single(con, "MiB/s (drain phase peak)"), omb.held(loads),
                "One backlog run; its backlog fits in this machine's page cache, so its "
                "consumers read no evicted data from storage.")
