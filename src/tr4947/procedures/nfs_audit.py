"""PRE-1 and PRE-2: is a Kafka cluster's NFS storage safe to run on, and making it so.

The guide's finding (silly-rename, FV) is that Kafka on NFS is safe only when all three hold
for every log directory: the volume has ONTAP's preserve-unlink on (ONTAP 9.12.1 or later),
the broker mounts it over NFSv4.1, and the broker's kernel has the client change (RHEL 8.7,
RHEL 9.1 or later). The audit reads those facts from any target, read-only, and gives one row
per broker log directory with a verdict and, where it fails, the fix as a command from the
guide; PRE-2 applies those fixes in place. The audit changes nothing: every step is declared
read-only, so it runs without ``confirm`` on a real target too.

Facts come from two read-only snippets: PRE-1-broker-facts.sh on each broker (kernel, OS
release, Kafka version, log.dirs, the NFS session slots, ``mount``) and
PRE-1-ontap-volumes.ontap on the cluster (ONTAP version, each volume's junction path and
preserve-unlink setting).

Chapters that build a cluster (CVO, FSx, AFF, the performance chapters) audit it with this
module; the preflight chapter (tr4947.procedures.preflight) runs it on its own.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..measure.efficiency import parse_fields_table

SNIP = "preflight/"
PASS, FAIL, CHECK, INFO = "pass", "FAIL", "check", "info"
MIN_ONTAP = (9, 12, 1)
RHEL_LIKE = {"rhel", "centos", "rocky", "almalinux", "ol"}
#: NFS versions whose client honours preserve-unlink (NFSv4.1 and later; the guide pins 4.1).
SAFE_VERSIONS = ("4.1", "4.2")

#: The session slot count AFF-3 recommends (ONTAP's default limit; Linux asks for 64).
SESSION_SLOTS = 180


@dataclass
class Mount:
    source: str                     # server:/path
    point: str
    fstype: str
    options: dict[str, str]

    @property
    def server(self) -> str:
        return self.source.rsplit(":", 1)[0] if ":" in self.source else ""

    @property
    def export(self) -> str:
        return self.source.rsplit(":", 1)[1] if ":" in self.source else self.source

    @property
    def nfs_version(self) -> str:
        """The version in use: as the kernel's mount table names it, else the file system
        type's own (nfs4: 4, nfs: 3)."""
        return nfs_version(self.options) or \
            ("4" if self.fstype == "nfs4" else "3" if self.fstype == "nfs" else "")


@dataclass
class BrokerFacts:
    host: str
    kernel: str = ""
    os_id: str = ""
    os_version: str = ""
    os_name: str = ""
    kafka: str = ""
    log_dirs: list[str] = field(default_factory=list)
    session_slots: str = ""
    mounts: list[Mount] = field(default_factory=list)
    fstab: dict[str, dict[str, str]] = field(default_factory=dict)   # mount point -> options

    def mount_of(self, path: str) -> Mount | None:
        """The mount a path is on: the longest mount point that contains it."""
        best = None
        for m in self.mounts:
            root = m.point.rstrip("/") or "/"
            if path == root or path.startswith(root.rstrip("/") + "/") or root == "/":
                if best is None or len(m.point) > len(best.point):
                    best = m
        return best


_MOUNT = re.compile(r"^(?P<src>\S+) on (?P<mp>\S+) type (?P<t>\S+) \((?P<opts>[^)]*)\)")


def parse_broker_facts(host: str, text: str) -> BrokerFacts:
    f = BrokerFacts(host)
    for line in text.splitlines():
        key, _, value = line.partition(": ")
        value = value.strip()
        if key == "kernel":
            f.kernel = value
        elif key == "os":
            parts = value.split(" ", 2)
            f.os_id, f.os_version = parts[0], parts[1] if len(parts) > 1 else ""
            f.os_name = parts[2].strip("()") if len(parts) > 2 else ""
        elif key == "kafka":
            f.kafka = value
        elif key == "log.dirs":
            f.log_dirs = [d for d in value.split(",") if d]
        elif key == "session_slots":
            f.session_slots = value
        elif key == "mount" and (m := _MOUNT.match(value)):
            f.mounts.append(Mount(m["src"], m["mp"], m["t"], _options(m["opts"])))
        elif key == "fstab" and len(words := value.split()) >= 4 and words[2].startswith("nfs"):
            f.fstab[words[1]] = _options(words[3])
    return f


def _options(text: str) -> dict[str, str]:
    opts = {}
    for o in text.split(","):
        k, _, v = o.partition("=")
        opts[k] = v
    return opts


def nfs_version(opts: dict[str, str]) -> str:
    """The NFS version mount options ask for: vers= or nfsvers=, with minorversion= for
    vers=4 ("" when they leave it to negotiation)."""
    v = opts.get("vers") or opts.get("nfsvers") or ""
    if v == "4" and opts.get("minorversion"):
        v = f"4.{opts['minorversion']}"
    return v


@dataclass
class OntapFacts:
    version: tuple[int, ...] | None
    version_text: str
    volumes: dict[str, tuple[str, bool]]     # junction path -> (volume, preserve-unlink)

    def volume_of(self, export: str) -> tuple[str, bool] | None:
        """The volume an export path is in (the longest junction path above it)."""
        best = None
        for jp, vol in self.volumes.items():
            if jp in ("", "-", "/"):
                continue
            if export == jp or export.startswith(jp.rstrip("/") + "/"):
                if best is None or len(jp) > len(best[0]):
                    best = (jp, vol)
        return best[1] if best else None


def parse_ontap_facts(text: str) -> OntapFacts:
    """PRE-1-ontap-volumes.ontap's output: the release line of ``version`` and the volumes'
    ``-fields`` table (printed with a field separator, so a value is read whole)."""
    m = re.search(r"NetApp Release (\d+)\.(\d+)\.(\d+)", text)
    version = tuple(int(x) for x in m.groups()) if m else None
    vm = re.search(r"NetApp Release [^\n]*", text)
    rows = [] if "There are no entries matching your query." in text else \
        parse_fields_table(text)
    volumes = {r["junction-path"]: (r["volume"], r["is-preserve-unlink-enabled"] == "true")
               for r in rows}
    return OntapFacts(version, vm.group(0) if vm else "", volumes)


@dataclass
class Row:
    cluster: str
    host: str
    log_dir: str
    mount: str
    nfs: str
    volume: str
    preserve_unlink: str
    client: str
    verdict: str
    fixes: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    point: str = ""                 # the mount point the log dir is on ("" when not on NFS)
    remount: bool = False           # PRE-2 fixes it by pinning NFSv4.1 and mounting again


def kernel_verdict(f: BrokerFacts, lab: bool) -> tuple[str, str]:
    """Whether the broker's NFS client has the preserve-unlinked change."""
    if lab:
        return INFO, ("the lab's NFS client is its FUSE stand-in, which behaves as the fixed "
                      "client does")
    if f.os_id in RHEL_LIKE:
        try:
            major, minor = (int(x) for x in (f.os_version.split(".") + ["0"])[:2])
        except ValueError:
            return CHECK, f"{f.os_id} {f.os_version}: release not understood"
        ok = (major == 8 and minor >= 7) or (major == 9 and minor >= 1) or major >= 10
        return (PASS, f"{f.os_id} {f.os_version}") if ok else \
            (FAIL, f"{f.os_id} {f.os_version} predates the client change (8.7 / 9.1)")
    return CHECK, (f"{f.os_id or 'unknown OS'} {f.os_version}, kernel {f.kernel}: confirm the "
                   "kernel's NFS client has the preserve-unlinked change (upstream since 2022)")


def audit_rows(cluster: str, f: BrokerFacts, ontap: OntapFacts, svm: str, lab: bool) -> list[Row]:
    rows = []
    kv, knote = kernel_verdict(f, lab)
    for d in f.log_dirs or ["(no log.dirs in server.properties)"]:
        m = f.mount_of(d)
        nfs = m is not None and m.fstype.startswith("nfs")
        if not nfs:
            rows.append(Row(cluster, f.host, d, m.point if m else "?", "-", "-", "-", "-", INFO,
                            notes=["not on NFS: silly rename does not apply"]))
            continue
        fixes, notes, verdicts = [], [], []
        vers = m.nfs_version
        line = f.fstab.get(m.point)
        unpinned = line is not None and nfs_version(line) not in SAFE_VERSIONS
        remount = vers not in SAFE_VERSIONS or unpinned
        if vers not in SAFE_VERSIONS:
            verdicts.append(FAIL)
            fixes.append(f"mount over NFSv4.1: mount -t nfs -o vers=4.1,nconnect=16 "
                         f"{m.source} {m.point} (and vers=4.1 in its /etc/fstab line; "
                         f"PRE-2 does both)")
        elif unpinned:
            # Mounted over 4.x today, but only because the SVM offers it: the same line
            # mounts NFSv3 after a remount against an SVM that offers only v3.
            verdicts.append(FAIL)
            fixes.append(f"pin the version in /etc/fstab: vers=4.1 in the line for {m.point} "
                         f"(now {','.join(k + ('=' + v if v else '') for k, v in line.items())}), "
                         "then remount (PRE-2 does both)")
        if line is None:
            notes.append("a log dir mount with no /etc/fstab line is not mounted again at boot")
        vol = ontap.volume_of(m.export)
        if vol is None:
            verdicts.append(FAIL)
            fixes.append(f"{m.export} is not an ONTAP volume of {svm}: move the log dir to "
                         "one created with -is-preserve-unlink-enabled true (FV-1)")
            vol_name, pu = "(not ONTAP)", "-"
        else:
            vol_name, enabled = vol
            pu = "true" if enabled else "false"
            if not enabled:
                remount = True      # the client takes the volume's new setting on a new mount
                verdicts.append(FAIL)
                fixes.append(f"set -privilege advanced; volume modify -vserver {svm} -volume "
                             f"{vol_name} -is-preserve-unlink-enabled true")
        if ontap.version is not None and ontap.version < MIN_ONTAP:
            verdicts.append(FAIL)
            fixes.append(f"upgrade ONTAP ({ontap.version_text}) to 9.12.1 or later")
        if kv == FAIL:
            verdicts.append(FAIL)
            fixes.append("upgrade the broker to RHEL 8.7, RHEL 9.1 or later")
        elif kv == CHECK:
            verdicts.append(CHECK)
        notes.append(knote)
        if vers in SAFE_VERSIONS and f.session_slots not in (str(SESSION_SLOTS),):
            notes.append(f"NFS session slots {f.session_slots or '-'} (AFF-3 raises them to "
                         f"{SESSION_SLOTS} for throughput; not a safety setting)")
        verdict = FAIL if FAIL in verdicts else CHECK if CHECK in verdicts else PASS
        nconnect = f", nconnect={m.options['nconnect']}" if m.options.get("nconnect") else ""
        rows.append(Row(cluster, f.host, d, f"{m.source} on {m.point}",
                        f"{m.fstype} vers={vers}{nconnect}",
                        vol_name, pu, f"{f.os_id} {f.os_version}, kernel {f.kernel}", verdict,
                        fixes, notes, m.point, remount))
    return rows


def cluster_verdict(rows: list[Row]) -> str:
    vs = {r.verdict for r in rows}
    return "unsafe" if FAIL in vs else "check" if CHECK in vs else \
        "safe" if PASS in vs else "not on NFS"


# --- reading the target (read-only) ------------------------------------------------------------
def default_svm(t, svm: str | None = None) -> str:
    """The SVM the Kafka volumes are in: the one given, else the inventory's ontap_svm."""
    return svm or t.inventory.ontap().get("ontap_svm", "svm_kafka")


def ontap_facts(t, svm: str, needs=None):
    ontap = t.inventory.ontap().name
    r = t.run_snippet(SNIP + "PRE-1-ontap-volumes.ontap", ontap, read_only=True, check=True,
                      svm=svm, needs=needs)
    if r.planned:                  # a dry run's plan: nothing was read
        return OntapFacts(None, "", {}), r
    return parse_ontap_facts(r.stdout), r


def broker_facts(t, host, needs=None) -> tuple[BrokerFacts, object]:
    r = t.run_snippet(SNIP + "PRE-1-broker-facts.sh", host.name, read_only=True, check=True,
                      env={"KAFKA_HOME": host.get("kafka_home", "/opt/kafka")}, needs=needs)
    return parse_broker_facts(host.name, r.stdout), r


def audit(t, clusters: list[str] | None = None, *, hosts: list[str] | None = None,
          svm: str | None = None, log_dirs: list[str] | None = None,
          needs=None) -> tuple[list[Row], dict]:
    """Every broker log dir of ``clusters`` (default: every Kafka cluster of the inventory):
    the rows, and the transcripts read (ONTAP's and one broker's) for the record.

    A chapter audits what it just built: ``hosts`` limits the audit to those hosts (their
    cluster, or "-" for a host in none, such as FSx's admin client), ``svm`` is the SVM its
    volumes are in (default: the inventory's ``ontap_svm``), and ``log_dirs`` stands in for
    ``log.dirs`` on a host whose mounts are meant to become log dirs but no broker uses yet.
    ``needs``: the steps that built what is audited; while they are only planned (a dry run),
    so are the audit's reads, and there are no rows."""
    svm = default_svm(t, svm)
    if hosts:
        named = set(hosts)
        within = {c: [h for h in t.cluster(c).brokers if h.name in named]
                  for c in t.inventory.kafka_clusters()}
        found = {h.name for hs in within.values() for h in hs}
        targets = [(c, h) for c, hs in within.items() if (not clusters or c in clusters)
                   for h in hs]
        targets += [("-", t.host(n)) for n in hosts if n not in found]
    else:
        targets = [(c, h) for c in clusters or t.inventory.kafka_clusters()
                   for h in t.cluster(c).brokers]
    ontap, ontap_r = ontap_facts(t, svm, needs)
    rows, transcripts = [], {"ontap": ontap_r}
    if ontap_r.planned:
        return rows, transcripts
    for c, h in targets:
        facts, r = broker_facts(t, h, needs)
        if log_dirs is not None:
            facts.log_dirs = list(log_dirs)
        transcripts.setdefault("broker", r)
        rows.extend(audit_rows(c, facts, ontap, svm, t.kind == "lab"))
    return rows, transcripts


# --- PRE-2: making a layout the audit failed safe, in place -------------------------------------
def fix(t, rb, proc: str, rows: list[Row], *, svm: str | None = None) -> list:
    """PRE-2: run what the audit's failing rows name. First preserve-unlink on each ONTAP
    volume without it; then, one host at a time (a rolling change), Kafka stopped if it runs,
    each failing log dir's mount pinned to NFSv4.1 in /etc/fstab and mounted again, Kafka
    started and serving before the next host. A mount is remounted also when only its volume
    changed, so the client picks up the volume as it is now. What no command can change here
    (the ONTAP release, the client kernel, a log dir on no ONTAP volume) is left for the next
    audit to report. Every step changes the target: planned unless ``confirm``. Each is
    recorded under ``proc``; returns the results."""
    svm = default_svm(t, svm)
    ontap = t.inventory.ontap().name
    failing = [r for r in rows if r.verdict == FAIL and r.point]
    out = []
    for vol in dict.fromkeys(r.volume for r in failing if r.preserve_unlink == "false"):
        r = t.run_snippet(SNIP + "PRE-2-preserve-unlink.ontap", ontap, check=True, svm=svm,
                          volume=vol)
        rb.show(proc, f"PRE-2: preserve-unlink on {vol}", r, prompt="::>")
        out.append(r)
    points: dict[str, list[str]] = {}
    for r in failing:
        if r.remount and r.point not in points.setdefault(r.host, []):
            points[r.host].append(r.point)
    kafka = t.cluster()
    for host, mps in points.items():
        running = kafka.alive(host)
        if running:
            out.extend(kafka.stop([host]))
        r = t.run_snippet(SNIP + "PRE-2-remount-nfs41.sh", host, check=True,
                          env={"MOUNTS": " ".join(mps)}, needs=out)
        rb.show(proc, f"PRE-2 on {host}" + (" (Kafka stopped, then started again)" if running
                                            else ""), r)
        out.append(r)
        if running:
            out.extend(kafka.start([host]))
    return out


HEADER = ["Cluster", "Broker", "Log dir", "Mount", "NFS", "Volume", "preserve-unlink", "Client",
          "Verdict", "Fix"]
VERDICTS = ("Verdicts: pass (all three conditions hold), FAIL (one does not: the fix column says "
            "what to run), check (the audit cannot tell, e.g. a non-RHEL kernel), info (not on NFS).")


def record(rb, proc: str, title: str, rows: list[Row]) -> str:
    """Record one audit as the table the preflight chapter shows (one row per log dir, the
    fixes in their column, the notes under the table) and return its verdict ("safe",
    "unsafe", "check" or "not on NFS"). Chapters that build a layout end with one."""
    verdict = cluster_verdict(rows)
    notes = sorted({n for r in rows for n in r.notes})
    rb.table(proc, title, HEADER,
             [[r.cluster, r.host, r.log_dir, r.mount, r.nfs, r.volume, r.preserve_unlink,
               r.client, r.verdict, "; ".join(r.fixes) or "-"] for r in rows],
             note=f"Verdict: {verdict}. {VERDICTS}" + (f" Notes: {'; '.join(notes)}" if notes else ""),
             key=["Broker", "Log dir", "Verdict", "Fix"])
    return verdict


def fix_and_audit(t, rb, proc: str, rows: list[Row], **scope) -> tuple[str | None, list[Row]]:
    """PRE-2 on the failing ``rows``, then PRE-1 again over the same ``scope`` (audit()'s
    keyword arguments), recorded under ``proc``: (the new verdict, its rows); (None, [])
    while the fix is only planned (a real target without confirm)."""
    done = fix(t, rb, proc, rows, svm=scope.get("svm"))
    if any(r.planned for r in done):
        return None, []
    after, _ = audit(t, **scope)
    return record(rb, proc, "The audit again, after PRE-2", after), after


def check(t, rb, proc: str, title: str, *, repair: bool = True,
          **scope) -> tuple[str, str | None]:
    """How a chapter that built a layout ends: PRE-1 over ``scope`` (audit()'s keyword
    arguments) recorded as ``title``; if that fails and ``repair``, PRE-2 and the audit again.
    Returns (the verdict, the verdict after PRE-2 or None when it did not run)."""
    rows, _ = audit(t, **scope)
    verdict = record(rb, proc, title, rows)
    if verdict != "unsafe" or not repair:
        return verdict, None
    return verdict, fix_and_audit(t, rb, proc, rows, **scope)[0]
