"""FSx for NetApp ONTAP (FSX-1..FSX-5, FSX-7): the file system, its SVM and six volumes, made
with the TR's ``aws fsx`` commands on the admin host and its ONTAP commands over SSH.

The AWS CLI runs on the target's client (admin) host with that host's own AWS configuration
(the lab's clients are configured for the lab's AWS stand-in). The subnets come from the inventory (``aws_subnet_ids``); the fsxadmin password
from the Target (``FSXADMIN_PASSWORD`` on a real target; the lab makes one): it reaches the
host on stdin, never on a command line.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

from .record import agrees

SNIP = "aws-fsx/"
#: The SVM FSX-4 creates (its snippet's --name) and FSX-5's volumes live in.
SVM_NAME = "svmkafkatest"


@dataclass
class FileSystem:
    env: dict[str, str]                       # what the later snippets read
    created: object = None                    # FSX-1's Result
    described: object = None                 # FSX-2's
    svm: object = None                        # FSX-4's describe
    nfs_address: str | None = None
    management: str | None = None
    tr_as_printed: object = None              # FSX-1 as the TR prints it
    steps: list = field(default_factory=list)

    @property
    def planned(self) -> bool:
        return bool(getattr(self.created, "planned", False))


def environment(t) -> dict[str, str]:
    subnets = t.inventory.ontap().get("aws_subnet_ids") or ["SUBNET-1-FROM-INVENTORY",
                                                            "SUBNET-2-FROM-INVENTORY"]
    return {"SUBNET_ID_1": subnets[0], "SUBNET_ID_2": subnets[-1]}


def _poll(t, snippet: str, client: str, env: dict, needs, done, timeout: float):
    """Run a describe snippet until ``done(json)`` is true, checking after 1, 2, 4... up to
    30 seconds (the lab's stand-in is ready in seconds, AWS in tens of minutes); returns
    (Result, json)."""
    deadline, wait = time.monotonic() + timeout, 1.0
    while True:
        r = t.run_snippet(SNIP + snippet, client, env=env, read_only=True, check=True,
                          needs=needs)
        if r.planned:
            return r, None
        doc = json.loads(r.stdout)
        if done(doc):
            return r, doc
        if time.monotonic() + wait > deadline:
            raise RuntimeError(f"{snippet}: not ready after {timeout / 60:.0f} minutes; see its "
                               "state in the AWS console, then re-run from this step")
        time.sleep(wait)
        wait = min(wait * 2, 30.0)


def create(t, rb, client: str, password: str | None, timeout: float = 3600,
           record: bool = True, tr_as_printed: bool = True) -> FileSystem:
    """FSX-1 to FSX-4: the file system (the TR's command as printed first, kept to show why
    the guide changed it), AVAILABLE, the fsxadmin login, the SVM, CREATED."""
    env = environment(t)
    fs = FileSystem(env)
    secret_env = {**env, "FSXADMIN_PASSWORD": password} if password else env
    show = rb.show if record else (lambda *a, **k: None)
    if tr_as_printed:
        r = fs.tr_as_printed = t.run_snippet(SNIP + "FSX-1-create-file-system.tr-as-written.sh",
                                             client, env=secret_env)
        show("FSX-1", "The TR's command as written", r)
    fs.created = t.run_snippet(SNIP + "FSX-1-create-file-system.sh", client, env=secret_env,
                               check=True)
    show("FSX-1", "Corrected command", fs.created)
    env["FSX_FILE_SYSTEM_ID"] = ("<FileSystemId from FSX-1>" if fs.planned else
                                 json.loads(fs.created.stdout)["FileSystem"]["FileSystemId"])
    fs.described, doc = _poll(t, "FSX-2-describe-file-systems.sh", client, env, fs.created,
                              lambda d: d["FileSystems"][0].get("Lifecycle") == "AVAILABLE",
                              timeout)
    show("FSX-2", "describe-file-systems once the file system is AVAILABLE", fs.described)
    if doc is not None:
        desc = doc["FileSystems"][0]
        assert not password or password not in fs.described.stdout, \
            "the describe output must not carry the admin password"
        fs.management = desc["OntapConfiguration"]["Endpoints"]["Management"]["IpAddresses"][0]
    env["FSX_MANAGEMENT_IP"] = fs.management or "<management IP from FSX-2>"
    # ssh reads the password through the host's SSH_ASKPASS helper where the inventory names
    # one (the lab's clients have one); on a real admin host, use a key or type it.
    askpass = t.host(client).get("ssh_askpass")
    ssh_env = {**env, **({"LAB_SSH_PASSWORD": password, "SSH_ASKPASS": askpass,
                          "SSH_ASKPASS_REQUIRE": "force"} if password and askpass else {})}
    r = t.run_snippet(SNIP + "FSX-3-ssh-fsxadmin.sh", client, env=ssh_env, read_only=True,
                      check=True, needs=fs.described)
    show("FSX-3", "ssh to the management endpoint as fsxadmin", r)
    svm = t.run_snippet(SNIP + "FSX-4-create-svm.sh", client, env=env, check=True,
                        needs=fs.described)
    show("FSX-4", "create-storage-virtual-machine", svm)
    env["FSX_SVM_ID"] = ("<StorageVirtualMachineId from FSX-4>" if svm.planned else
                         json.loads(svm.stdout)["StorageVirtualMachine"]["StorageVirtualMachineId"])
    fs.svm, doc = _poll(t, "FSX-4-describe-storage-virtual-machines.sh", client, env, svm,
                        lambda d: d["StorageVirtualMachines"][0]["Lifecycle"]
                        not in ("CREATING", "PENDING"), timeout)
    show("FSX-4", "describe-storage-virtual-machines once the SVM is CREATED", fs.svm)
    if doc is not None:
        s = doc["StorageVirtualMachines"][0]
        if s["Lifecycle"] != "CREATED":
            raise RuntimeError(f"SVM {s['Name']} is {s['Lifecycle']}: see its status in the "
                               "AWS console before re-running")
        fs.nfs_address = s["Endpoints"]["Nfs"]["IpAddresses"][0]
    return fs


def volumes(t, rb, fs: FileSystem, password: str | None, record: bool = True) -> list:
    """FSX-5's ONTAP part: six volumes created and grown, over SSH as fsxadmin on the
    management address FSX-2 found (not one written in the inventory beforehand)."""
    ontap = t.inventory.ontap().name
    if fs.management:
        t.reach(ontap, address=fs.management, password=password, user="fsxadmin")
    out = []
    for snippet, title in [("FSX-5-volume-create.ontap", "volume create x6"),
                           ("FSX-5-volume-size.ontap", "volume size +2TB x6 and volume show"),
                           ("FSX-5-volume-mount.ontap", "volume mount x6")]:
        r = t.run_snippet(SNIP + snippet, ontap, needs=fs.svm)
        if record:
            rb.show("FSX-5", title, r, prompt="::>")
        out.append(r)
    return out


# --- the provisioning chapter (FSX-1..FSX-5, FSX-7) --------------------------------------------------
class FsxProvisioning:
    """The aws-fsx notebook's steps on the target's admin host (its first client)."""

    def __init__(self, run):
        self.run, self.t, self.rec = run, run.target, run.rec
        self.client = self.t.hosts("clients")[0].name
        self.password = self.t.secret("FSXADMIN_PASSWORD")
        self.fs: FileSystem | None = None
        self.vols: list = []
        aws = self.t.run("aws --version; aws configure get endpoint_url || true", self.client,
                         read_only=True, check=True)
        print(f"{aws.output.split()[0] if aws.output else 'aws CLI'} on {self.client}; AWS API: "
              f"{aws.stdout.split()[-1] if 'http' in aws.stdout else 'AWS'}")
        if self.password is None and not self.t.confirm:
            print("FSXADMIN_PASSWORD is not set: a run with confirm=True needs it; the plan "
                  "shows ${FSXADMIN_PASSWORD} where the value would go")

    def create(self) -> None:
        """FSX-1 to FSX-4."""
        self.fs = create(self.t, self.rec, self.client, self.password)
        if self.fs.nfs_address and not self.run.is_lab:
            # Later chapters (the performance notebook) read these from the inventory.
            print(f"Record in your inventory: ontap host ansible_host {self.fs.management}, "
                  f"ontap_data_lifs address {self.fs.nfs_address}")

    def volumes(self, tr_as_printed: bool | None) -> None:
        """FSX-5's ONTAP part: the TR's volume create as printed first (on the lab by
        default), then the guide's six volumes."""
        if self.run.is_lab if tr_as_printed is None else tr_as_printed:
            ontap = self.t.inventory.ontap().name
            if self.fs.management:
                self.t.reach(ontap, address=self.fs.management, password=self.password,
                             user="fsxadmin")
            tr = self.t.run_snippet(SNIP + "FSX-5-volume-create.tr-as-written.ontap", ontap,
                                    needs=self.fs.svm)
            self.rec.show("FSX-5", "The TR's volume create as printed", tr, prompt="::>")
            if self.run.is_lab and "Missing required parameter: -vserver" in tr.output:
                self.rec.text("FSX-5", "", (
                    "The lab's ONTAP stand-in refuses the TR's lines because it holds two data "
                    "SVMs: the other chapters' `svm_kafka` and FSX-4's `svmkafkatest`. The "
                    "clustershell fills in `-vserver` only when there is exactly one, as on the "
                    "TR's file system; the guide names the SVM. Run on a stand-in with one data "
                    "SVM (the project's snippet tests), the same lines create the six volumes, "
                    "without preserve-unlink."))
        self.vols = volumes(self.t, self.rec, self.fs, self.password)

    def mount(self) -> None:
        """FSX-5's client part: the fstab lines with the NFS address FSX-4 reported, mounted,
        and the six mounts audited (no broker uses them yet: the mount points stand in for
        log dirs)."""
        from ..targets import fstab
        from . import nfs_audit as pf
        added = self.t.add_fstab_lines("aws-fsx/FSX-5-nfs-mounts.fstab", self.client,
                                       servers=self.fs.nfs_address or "<NFS address from FSX-4>",
                                       check=True, needs=self.vols[0])
        self.rec.show("FSX-5", "the fstab lines above added to /etc/fstab", added)
        r = self.t.run_snippet("aws-fsx/FSX-5-mount.sh", self.client, check=True, needs=added)
        self.rec.show("FSX-5", "mount -a from the fstab above, then df -h", r)
        if r.planned:
            return
        before, after = pf.check(self.t, self.rec, "FSX-5",
                                 "Preflight audit (PRE-1) of the six mounts",
                                 hosts=[self.client], svm=SVM_NAME,
                                 log_dirs=fstab.mount_points("aws-fsx/FSX-5-nfs-mounts.fstab"))
        print(f"the six mounts on {self.client}: {after or before}")

    def scale(self) -> None:
        """FSX-7: update-file-system."""
        r = self.t.run_snippet(SNIP + "FSX-7-update-file-system.sh", self.client, env=self.fs.env,
                               check=True, needs=self.fs.created)
        self.rec.show("FSX-7", "update-file-system to 5120 GiB, 4096 MBps, 160,000 IOPS", r)

    def verdicts(self) -> None:
        printed = self.fs.tr_as_printed if self.fs else None
        if printed is not None and not printed.planned:
            rejected = printed.exit_code != 0 and "MULTI_AZ_HA_1" in printed.output
            # The AWS CLI ran; the refusal came from moto's model of the FSx API.
            ev = self.rec.evidence(real=["aws-cli"], model=["fsx-moto"])
            self.rec.verdict("FSX-1", "guide.fsx1-deployment-type",
                             agrees(ev) if rejected else "differs", evidence=ev,
                             tr="DeploymentType=MULTI_AZ_HA_1",
                             lab="the FSx API refused the printed value" if rejected else
                                 f"the printed command exited {printed.exit_code}",
                             why="FSx for ONTAP's deployment types are MULTI_AZ_1, MULTI_AZ_2, "
                                 "SINGLE_AZ_1 and SINGLE_AZ_2; the lab's FSx stand-in (moto) "
                                 "validates the value as the API does.",
                             action="Use DeploymentType=MULTI_AZ_1 (or MULTI_AZ_2 where the "
                                    "region offers it) for a two-AZ file system.")
        self.rec.verdict("FSX-7", "fsx.scaling", "not-measured",
                         evidence=self.rec.evidence(real=["aws-cli"], model=["fsx-moto"]),
                         tr="881 MBps at 2048 MBps capacity, 1328 MBps at 4096 MBps",
                         lab=None, why="The FSx stand-in records the new capacity but models "
                                       "no throughput limit, so scaling cannot be measured.",
                         action="Run the FSX-6 benchmark before and after update-file-system "
                                "on your file system.")
