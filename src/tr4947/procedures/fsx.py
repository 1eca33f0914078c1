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
        r = t.run_snippet(SNIP + "FSX-1-create-file-system.tr-as-written.sh", client,
                          env=secret_env)
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
