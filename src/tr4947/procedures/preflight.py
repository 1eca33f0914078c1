"""The preflight chapter: PRE-1's audit (tr4947.procedures.nfs_audit) on a target's Kafka
clusters, and PRE-2's fix where the audit fails (on the lab by default; on a real target only
when asked, and confirmed)."""
from __future__ import annotations

from .nfs_audit import FAIL, Row, audit, cluster_verdict, fix_and_audit, record
from .record import agrees


class Preflight:
    """PRE-1 and PRE-2 as the preflight chapter runs them on ``clusters`` ([]: every Kafka
    cluster of the target's inventory)."""

    def __init__(self, run, clusters: list[str]):
        self.run, self.t, self.rec = run, run.target, run.rec
        self.clusters = list(clusters) or None
        print(f"auditing {', '.join(self.clusters or self.t.inventory.kafka_clusters())}")

    def audit(self) -> list[Row]:
        """PRE-1: read ONTAP and every broker (read-only), and show what was read."""
        rows, seen = audit(self.t, self.clusters)
        self.rec.show("PRE-1", "ONTAP: version and the volumes' preserve-unlink setting",
                      seen["ontap"], prompt="::>")
        if "broker" in seen:
            self.rec.show("PRE-1", "What the audit reads on each broker (the first broker's "
                          "answer)", seen["broker"], show=False)
        return rows

    def cluster_verdicts(self, rows: list[Row]) -> dict[str, str]:
        """The audit's table and a verdict per cluster."""
        record(self.rec, "PRE-1", "Preflight audit: one row per broker log directory", rows)
        verdicts = {c: cluster_verdict([r for r in rows if r.cluster == c])
                    for c in dict.fromkeys(r.cluster for r in rows)}
        self.rec.table("PRE-1", "Verdict per cluster", ["Cluster", "Verdict", "Log dirs that fail"],
                       [[c, v, ", ".join(f"{r.host}:{r.log_dir}" for r in rows
                                         if r.cluster == c and r.verdict == FAIL) or "-"]
                        for c, v in verdicts.items()])
        return verdicts

    def fix(self, rows: list[Row], fix: bool | None) -> list[Row] | None:
        """PRE-2 on what failed, then the audit again: on the lab by default (``fix`` None),
        on a real target only with ``fix=True`` (and then planned unless confirmed)."""
        if not (self.run.is_lab if fix is None else fix):
            print("PRE-2 not run (fix=False): the fix column above lists its commands")
            return None
        # No rows while the fix is only planned: nothing to compare afterwards.
        return fix_and_audit(self.t, self.rec, "PRE-2", rows, clusters=self.clusters)[1] or None

    def compare(self, verdicts: dict[str, str], after: list[Row] | None) -> None:
        """The verdicts before and after PRE-2 (what nbval compares)."""
        print(verdicts)
        if after is not None:
            print({c: cluster_verdict([r for r in after if r.cluster == c]) for c in verdicts})

    def verdicts(self, verdicts: dict[str, str], after: list[Row] | None) -> None:
        """guide.preflight: the audit fails the TR-like NFSv3 cluster and passes the fixed
        one, and PRE-2 makes the failing one safe in place; fv.fix-versions: what the audit
        can and cannot check of the TR's version requirements on this target."""
        if not verdicts:
            return
        fixed = {c: cluster_verdict([r for r in after if r.cluster == c])
                 for c in verdicts} if after else {}
        unsafe = [c for c, v in verdicts.items() if v == "unsafe"]
        ok = bool(unsafe) and all(fixed.get(c) == "safe" for c in unsafe)
        # The guide's audit and PRE-2 ran; what they read and changed is the ONTAP stand-in's
        # setting and the lab's NFS client layer's mounts.
        ev = self.rec.evidence(real=["guide-code", "linux"],
                               model=["ontap-stand-in", "nfs-layer"])
        self.rec.verdict("PRE-2", "guide.preflight", agrees(ev) if ok else
                         ("not-measured" if after is None else "differs"), evidence=ev, tr="-",
                         lab="before PRE-2: " + ", ".join(f"{c} {v}" for c, v in verdicts.items())
                             + ("; after: " + ", ".join(f"{c} {v}" for c, v in fixed.items())
                                if fixed else "; PRE-2 not run"),
                         why="The audit reads ONTAP's preserve-unlink setting and each mount's "
                             "NFS version, and PRE-2 changes both in place, one broker at a "
                             "time." if ok else "PRE-2 did not run or did not make every "
                             "failing cluster safe.",
                         action="Run the preflight chapter against your own inventory before "
                                "putting Kafka on NFS, and again after any storage change.")
        self.rec.verdict("PRE-1", "fv.fix-versions", "not-measured",
                         evidence=self.rec.evidence(real=["guide-code"],
                                                    model=["ontap-stand-in", "nfs-layer"]),
                         tr="ONTAP 9.12.1, NFSv4.1, a RHEL 8.7 or 9.1 client",
                         lab="ONTAP stand-in reports 9.12.1; the lab's NFS client is its own "
                             "FUSE layer, not a RHEL kernel",
                         why="The lab checks the ONTAP setting and the NFS version; the client "
                             "kernel's own fix can only be checked on real brokers (the audit "
                             "reports it there).",
                         action="Run the audit on your brokers: it names the kernel release "
                                "each one runs.")
