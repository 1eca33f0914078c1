"""Cloud Volumes ONTAP chapter (CVO-1..CVO-7): checks of what the storage steps made.

* CVO-4: the NFS connections ONTAP lists, against what the broker's own mounts predict (one set
  of ``nconnect`` connections per server address and NFS version, shared by every mount of
  that address, as the Linux client shares a transport);
* CVO-5: every ``log.dirs`` entry of the broker's configuration on one of its NFS mounts.
"""
from __future__ import annotations

import re

from ..measure.mounts import nfs_mounts
from .record import agrees


def connections(ontap_output: str, mount_output: str) -> dict:
    """CVO-4: ONTAP's listing (rows and its own count) and the mounts' prediction."""
    rows = [line.split() for line in ontap_output.splitlines()
            if re.fullmatch(r"\S+ +\d+ +\S+ *", line)]
    shown = re.search(r"(\d+) entries were displayed", ontap_output)
    mounts = [line for line in mount_output.splitlines() if " type nfs" in line]
    sets: dict[tuple[str, str], int] = {}
    for line in mounts:
        server = line.split(":", 1)[0]
        opts = dict(o.partition("=")[::2] for o in line.split("(", 1)[1].rstrip(")").split(","))
        sets.setdefault((server, opts["vers"]), int(opts.get("nconnect", 1)))
    return {"rows": len(rows), "shown": int(shown.group(1)) if shown else None,
            "mounts": len(mounts), "sets": sets, "expected": sum(sets.values())}


def log_dirs_on_nfs(properties: str, df_output: str) -> list[list[str]]:
    """[log dir, the NFS volume it is on (or NOT ON NFS)] for every log.dirs entry."""
    props = dict(line.split("=", 1) for line in properties.splitlines()
                 if "=" in line and not line.lstrip().startswith("#"))
    nfs = nfs_mounts(df_output)
    rows = []
    for d in props["log.dirs"].split(","):
        mp = max((m for m in nfs if d == m or d.startswith(m + "/")), key=len, default=None)
        rows.append([d, nfs[mp] if mp else "NOT ON NFS"])
    return rows


# --- the storage chapter (CVO-1..CVO-5) -------------------------------------------------------------
class CvoStorage:
    """CVO-1..CVO-5 on one broker host, as the aws-cvo storage notebook runs them: ONTAP's
    volumes, the broker's NFS mounts (the TR's lines as printed first, then the guide's),
    ONTAP's connection listing, the NVRAM statistics, the broker's log dirs, an audit."""

    def __init__(self, run, broker: str):
        self.run, self.t, self.rec = run, run.target, run.rec
        self.t.hosts(broker)                # an unknown broker stops here, before any step
        self.broker = broker
        ontap = self.t.inventory.ontap()
        self.ontap, self.svm = ontap.name, ontap.get("ontap_svm", "svm_kafka")
        self.server_properties = (f"{self.t.host(broker).get('kafka_home', '/opt/kafka')}"
                                  "/config/server.properties")
        # The snippets show the lab's SVM name and data LIF addresses; this target's come
        # from its inventory.
        self.values = self.t.lab_values()
        self.volumes = self.mounted = self.placed = None
        print(f"ONTAP host {self.ontap}; broker host {broker}")

    def create_volumes(self) -> None:
        """CVO-1: six volumes on two aggregates (HA pair)."""
        self.volumes = self.t.run_snippet("aws-cvo/CVO-1-volumes-ha.ontap", self.ontap,
                                          check=True, replace=self.values)
        self.rec.show("CVO-1", "Six volumes on two aggregates, one per node", self.volumes,
                      prompt="::>")

    def mount_tr_as_printed(self, tr_as_printed: bool | None) -> None:
        """CVO-3 the TR's way first (on the lab by default): its fstab lines as printed,
        mounted, audited, and made safe in place by PRE-2."""
        from ..targets import fstab
        from . import nfs_audit as pf
        if not (self.run.is_lab if tr_as_printed is None else tr_as_printed):
            return
        added = self.t.add_fstab_lines("aws-cvo/CVO-3-nfs-mounts.tr-as-written.fstab",
                                       self.broker, servers=self.values, check=True,
                                       needs=self.volumes)
        self.rec.show("CVO-3", "The TR's fstab lines as printed, added to /etc/fstab", added)
        mounted = self.t.run_snippet("aws-cvo/CVO-3-mount.sh", self.broker, check=True,
                                     needs=added)
        self.rec.show("CVO-3", "The TR's lines: mount -a, then df -h", mounted)
        # The audit reads log dirs from server.properties, which CVO-5 sets later: the six
        # mount points stand in for them here.
        points = fstab.mount_points("aws-cvo/CVO-3-nfs-mounts.fstab")
        before, after = pf.check(self.t, self.rec, "CVO-3",
                                 "Preflight audit (PRE-1) of the TR's lines as mounted",
                                 hosts=[self.broker], svm=self.svm, log_dirs=points)
        print(f"the TR's lines as mounted: {before}; after PRE-2: {after}")
        if not mounted.planned and after != "safe":
            raise RuntimeError(f"PRE-2 left the TR's mounts {after}")

    def mount(self) -> None:
        """CVO-3: the guide's lines (NFSv4.1 pinned) added to the broker's /etc/fstab, with
        this target's LIFs, and mounted."""
        added = self.t.add_fstab_lines("aws-cvo/CVO-3-nfs-mounts.fstab", self.broker,
                                       servers=self.values, check=True, needs=self.volumes)
        self.rec.show("CVO-3", "The guide's fstab lines (NFSv4.1 pinned) added to /etc/fstab",
                      added)
        self.mounted = self.t.run_snippet("aws-cvo/CVO-3-mount.sh", self.broker, check=True,
                                          needs=added)
        self.rec.show("CVO-3", "mount -a from /etc/fstab, then df -h", self.mounted)

    def connections(self) -> None:
        """CVO-4: the NFS connections ONTAP lists, against what the mounts predict. Both reads
        count what CVO-3's mounts opened: in a dry run they are planned as well."""
        r = self.t.run_snippet("aws-cvo/CVO-4-nfs-connections.ontap", self.ontap,
                               read_only=True, check=True, needs=self.mounted)
        mount_list = self.t.run("mount", self.broker, read_only=True, check=True,
                                needs=self.mounted)
        self.rec.show("CVO-4", "network connections active show -service nfs*", r,
                      prompt="::>", show=False)
        if r.planned:
            return
        c = connections(r.output, mount_list.stdout)
        if c["shown"] != c["rows"]:
            raise RuntimeError(f"counted {c['rows']} rows, ONTAP says {c['shown']}")
        if c["rows"] != c["expected"]:
            raise RuntimeError(f"ONTAP lists {c['rows']} connections, the mounts predict "
                               f"{c['expected']}")
        who = ("The lab's ONTAP stand-in models" if self.run.is_lab else "The cluster listed")
        self.rec.text("CVO-4", "", (
            f"{who} {c['rows']} NFS connections for one broker ({self.broker}): its "
            f"{c['mounts']} `nconnect=16` mounts go through {len(c['sets'])} LIFs, and a Linux "
            f"client keeps one set of 16 connections per LIF, so {len(c['sets'])} x 16 = "
            f"{c['expected']}, not {c['mounts']} x 16. The TR's 48 entries on the single node "
            "fit the same rule for its three brokers on one LIF (3 x 16)."
            + (" On the lab no TCP connection exists: the stand-in lists the connections the "
               "rule predicts from the mounts its NFS service granted, so this shows the rule, "
               "not a client's behaviour." if self.run.is_lab else "")))

    def nvram_statistics(self) -> None:
        """CVO-2: `statistics start` creates a sample on the cluster (a second start of
        sample_555 fails), so the step counts as a change: planned in a dry run."""
        r = self.t.run_snippet("aws-cvo/CVO-2-vnvram-stats.ontap", self.ontap, check=True)
        self.rec.show("CVO-2", "statistics start/show for vnvram backing_store_iops", r,
                      prompt="::>")
        if self.run.is_lab:
            self.rec.text("CVO-2", "", (
                "On the lab, `backing_store_iops` is the stand-in's measurement of this "
                "machine's disk operations per second (reads and writes, all disks) between "
                "`statistics start` and `statistics show`, reported for the first node only. "
                "Run back to back with nothing in between, as here, it is close to zero and "
                "says nothing about an NVRAM backing store; the TR's 1479 and 1210 are per HA "
                "node of a CVO under its benchmark load."))

    def log_dirs(self) -> None:
        """CVO-5: the TR's settings applied to the broker's own server.properties, every
        log dir checked to be on one of its NFS mounts."""
        self.placed = self.t.apply_properties("aws-cvo/CVO-5-server-ha.properties", self.broker,
                                              self.server_properties, check=True,
                                              needs=self.mounted)
        conf = self.t.read_file(self.broker, self.server_properties, needs=self.placed)
        df = self.t.run("df -h", self.broker, read_only=True, check=True, needs=self.mounted)
        self.rec.show("CVO-5", "server.properties of the HA-pair broker", self.placed,
                      show=conf.planned or df.planned)
        if conf.planned or df.planned:
            return
        rows = log_dirs_on_nfs(conf.stdout, df.stdout)
        if not all(":/" in v for _, v in rows):
            raise RuntimeError(f"a log dir is not on an NFS mount: {rows}")
        self.rec.table("CVO-5", "log.dirs of the HA-pair broker configuration, checked against "
                       "the mounts", ["log dir", "NFS volume it is on"], rows)

    def audit(self) -> None:
        """PRE-1 over the broker as this chapter built it."""
        from . import nfs_audit as pf
        rows, _ = pf.audit(self.t, hosts=[self.broker], needs=self.placed)
        if not self.placed.planned:
            verdict = pf.record(self.rec, "CVO-5", f"Preflight audit (PRE-1) of {self.broker} "
                                "as this chapter built it", rows)
            print(f"{self.broker}: {verdict}")

    def verdicts(self, tr_as_printed: bool | None) -> None:
        """CVO-1..CVO-4's claims: what the lab can check and what it cannot."""
        rec = self.rec
        rec.verdict("CVO-1", "cvo.write-speed", "not-measured", evidence=rec.evidence(),
                    tr="'High speed networking' (BlueXP Write Speed) on both CVO systems",
                    lab=None, why="Write Speed is a Cloud Volumes ONTAP setting of the cloud "
                                  "deployment; the lab has no CVO to set it on.",
                    action="Leave Write Speed at Normal for Kafka: High acknowledges writes "
                           "from memory and can lose them when a node fails.")
        rec.verdict("CVO-2", "cvo.nvram-backing-store", "not-measured", evidence=rec.evidence(),
                    tr="backing_store_iops 1479 and 1210; root disk raised to 2350 IOPS",
                    lab=None, why="The stand-in reports this machine's disk operations, not a "
                                  "CVO node's NVRAM backing store under load.",
                    action="Watch backing_store_iops on your CVO nodes under Kafka load, and "
                           "raise the root disk's IOPS if it is the limit.")
        if self.run.is_lab if tr_as_printed is None else tr_as_printed:
            # The guide's audit ran; the version each mount got is the lab's NFS layer's.
            ev = rec.evidence(real=["guide-code"], model=["nfs-layer"], also=["ontap-stand-in"])
            rec.verdict("CVO-3", "guide.cvo-unpinned-mounts", agrees(ev), evidence=ev,
                        tr="defaults,nconnect=16 and no NFS version",
                        lab="the audit failed the TR's lines as mounted; PRE-2 made them safe",
                        why="Without vers=4.1 the client may negotiate a version without the "
                            "preserve-unlink fix; the audit reads the version each mount got.",
                        action="Pin vers=4.1 in every Kafka fstab line.")
        rec.verdict("CVO-4", "cvo.nconnect-48", "not-measured",
                    evidence=rec.evidence(model=["ontap-stand-in"]),
                    tr="48 connections for 3 brokers with nconnect=16",
                    lab="the stand-in lists 16 per broker and LIF, by the Linux client's rule",
                    why="The lab's NFS layer opens no TCP connections: the listing shows the "
                        "rule (one set of nconnect connections per server address), not a "
                        "client's behaviour.",
                    action="Count connections with `network connections active show` on your "
                           "cluster: 16 per broker and LIF with nconnect=16.")
