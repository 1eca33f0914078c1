"""AFF A900 storage (AFF-1, AFF-2): the TR's FlexGroup playbook and pNFS, on any target.

AFF-1 runs the TR's Ansible playbook as printed (it fails: the module options are indented
one level too deep), then the corrected one twice (the second run must change nothing), sets
preserve-unlink on the FlexGroup and reads it back through the REST API (NetApp's
netapp-ontap library) and the clustershell. AFF-2 runs the TR's pNFS line (which ONTAP
rejects: the option belongs to `vserver nfs modify`) and the command that does it.
"""
from __future__ import annotations

import importlib.metadata as md

from ..targets import playbooks
from .context import ChapterRun
from .record import agrees

VOLUME = "kafka_fg_vol01"


def _task_rows(run) -> list[list]:
    return [[x.task, x.item, x.status, x.detail] for x in run.tasks]


class AffStorage:
    def __init__(self, run: ChapterRun):
        self.run, self.t, self.rec = run, run.target, run.rec
        self.ontap = self.t.inventory.ontap()
        self.svm = self.ontap.get("ontap_svm", "vs1")
        self.first = None
        print(f"ONTAP {self.ontap.name} at {self.ontap.address}; SVM {self.svm}; "
              + ", ".join(f"{p} {md.version(p)}" for p in ("ansible", "ansible-runner",
                                                           "netapp-ontap")))

    def playbook_as_printed(self) -> None:
        """AFF-1: the TR's playbook as printed (expected to fail)."""
        tr = self.printed = playbooks.run(self.t, "AFF-1-flexgroup.tr-as-written.yml")
        if tr.planned:
            self.rec.text("AFF-1", "The TR's playbook as printed (dry run)", tr.plan)
            return
        if tr.rc == 0:
            raise RuntimeError("the TR's playbook was expected to fail as printed")
        self.rec.table("AFF-1", "The TR's playbook as printed: ansible-runner task results",
                       ["task", "item", "status", "result"], _task_rows(tr),
                       note=f"PLAY RECAP: `{tr.recap()}`")

    def playbook(self) -> None:
        """AFF-1: the corrected playbook twice (idempotent), then preserve-unlink."""
        self.first = playbooks.run(self.t, "AFF-1-flexgroup.yml").check()
        second = self.second = playbooks.run(self.t, "AFF-1-flexgroup.yml").check()
        if self.first.planned:
            self.rec.text("AFF-1", "Corrected playbook (dry run)", self.first.plan)
        else:
            if not (self.first.total("changed") == 1 and second.total("changed") == 0):
                raise RuntimeError("the corrected playbook is not idempotent: "
                                   f"{self.first.recap()} then {second.recap()}")
            for name, r in (("first", self.first), ("second", second)):
                self.rec.table("AFF-1", f"Corrected playbook, {name} run: ansible-runner task "
                               "results", ["task", "item", "status", "result"], _task_rows(r),
                               note=f"PLAY RECAP: `{r.recap()}`")
        pu = self.t.run_snippet("preflight/PRE-2-preserve-unlink.ontap", self.ontap.name,
                                check=True, svm=self.svm, volume=VOLUME)
        self.rec.show("AFF-1", "preserve-unlink on the FlexGroup (PRE-2's ONTAP command)", pu,
                      prompt="::>")

    def read_back(self) -> None:
        """AFF-1: the FlexGroup through the REST API and in the clustershell (read-only)."""
        if self.first is None or self.first.planned:
            return
        from netapp_ontap.resources import Volume
        with self.t.ontap_rest():
            v = Volume.find(name=VOLUME, **{"svm.name": self.svm},
                            fields="style,state,aggregates.name,constituents_per_aggregate,"
                                   "space.size,nas.path,nas.export_policy.name,"
                                   "snapshot_policy.name")
        self.rec.table("AFF-1", f"{VOLUME} read back with netapp-ontap (GET /api/storage/volumes)",
                       ["field", "value"], [
                           ["style", v.style], ["state", v.state],
                           ["aggregates", ", ".join(a.name for a in v.aggregates)],
                           ["constituents_per_aggregate", v.constituents_per_aggregate],
                           ["constituents", len(v.aggregates) * v.constituents_per_aggregate],
                           ["space.size", f"{v.space.size} bytes ({v.space.size / 1024 ** 4:g} TiB)"],
                           ["nas.path", v.nas.path],
                           ["nas.export_policy.name", v.nas.export_policy.name],
                           ["snapshot_policy.name", v.snapshot_policy.name]])
        r = self.t.run_snippet("aff-a900/AFF-1-volume-show.ontap", self.ontap.name,
                               read_only=True, check=True, svm=self.svm)
        self.rec.show("AFF-1", "The same volume in the clustershell", r, prompt="::>")

    def pnfs(self) -> None:
        """AFF-2: the TR's line (rejected), the command that enables pNFS, and the NFS
        service read back through the REST API."""
        r = self.pnfs_printed = self.t.run_snippet("aff-a900/AFF-2-pnfs.tr-as-written.ontap",
                                                   self.ontap.name, svm=self.svm)
        if not r.planned and r.exit_code == 0:
            raise RuntimeError("ONTAP was expected to reject vserver modify -v4.1-pnfs")
        self.rec.show("AFF-2", "The TR's command as printed", r, prompt="::>")
        r = self.t.run_snippet("aff-a900/AFF-2-pnfs.ontap", self.ontap.name, check=True,
                               svm=self.svm)
        self.rec.show("AFF-2", "vserver nfs modify at advanced privilege", r, prompt="::>")
        if r.planned:
            return
        from netapp_ontap.resources import NfsService
        with self.t.ontap_rest():
            nfs = list(NfsService.get_collection(
                **{"svm.name": self.svm}, fields="protocol.v41_enabled,"
                "protocol.v41_features.pnfs_enabled,transport.tcp_max_transfer_size"))[0]
        if not (nfs.protocol.v41_features.pnfs_enabled
                and nfs.transport.tcp_max_transfer_size == 262144):
            raise RuntimeError(f"pNFS or the TCP transfer size did not take: {nfs}")
        self.rec.table("AFF-2", f"NFS service of {self.svm} read back with netapp-ontap "
                       "(GET /api/protocols/nfs/services)", ["field", "value"], [
                           ["protocol.v41_enabled", nfs.protocol.v41_enabled],
                           ["protocol.v41_features.pnfs_enabled",
                            nfs.protocol.v41_features.pnfs_enabled],
                           ["transport.tcp_max_transfer_size",
                            nfs.transport.tcp_max_transfer_size]])

    def verdicts(self) -> None:
        if self.first is None or self.first.planned:
            return
        ok = (self.printed.rc != 0 and self.first.total("changed") == 1
              and self.second.total("changed") == 0)
        # ansible-playbook and netapp.ontap ran; the answers came from the ONTAP stand-in.
        ev = self.rec.evidence(real=["ansible"], model=["ontap-stand-in"])
        self.rec.verdict("AFF-1", "guide.aff1-idempotent", agrees(ev) if ok else "differs",
                         evidence=ev,
                         tr="the na_ontap_volume playbook as printed",
                         lab=f"as printed: rc {self.printed.rc}; corrected: "
                             f"{self.first.recap()}, then {self.second.recap()}",
                         why="The printed playbook nests connection and with_items under the "
                             "module; corrected, it creates the FlexGroup once and then "
                             "reports no change.",
                         action="Use the guide's playbook (module_defaults for the connection, "
                                "with_items at task level) and run it with --check first.")
        rejected = not self.pnfs_printed.planned and self.pnfs_printed.exit_code != 0
        # The stand-in refuses the printed line by design (its command table).
        ev = self.rec.evidence(model=["ontap-stand-in"])
        self.rec.verdict("AFF-2", "guide.aff2-vserver-nfs", agrees(ev) if rejected
                         else "differs", evidence=ev, tr="vserver modify -v4.1-pnfs enabled ...",
                         lab="the stand-in rejected the printed line; vserver nfs modify took it"
                             if rejected else "the printed line was accepted",
                         why="pNFS and the TCP transfer size are options of the SVM's NFS "
                             "server, set with vserver nfs modify at advanced privilege.",
                         action="Enable pNFS with vserver nfs modify -v4.1-pnfs enabled.")
