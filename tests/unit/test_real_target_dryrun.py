"""Real-target example inventories and the dry run: without confirm=True nothing that changes
a system runs, and a step that reads what a planned step would make is planned too, so a dry
run of a chapter's procedure reaches no host at all. Then a confirmed FSx procedure against a
stand-in for the SSH pool that answers as the AWS CLI does: where each value goes (the
password on stdin to FSX-1 only, fsxadmin on the management address FSX-2 found).
The network is blocked for every test here: a connection attempt fails it instead of leaving
this machine."""
from __future__ import annotations

import json
import socket
import subprocess

import pytest

from tr4947 import inventory, secrets, targets
from tr4947.procedures import record
from tr4947.procedures import fsx
from tr4947.targets import fstab, playbooks
from tr4947.targets.base import Target, TargetError
from tr4947.transports import ssh

from ..support.targets import TransportUsed

REAL = ("aff", "aws-cvo", "aws-fsx")


class Contacted(AssertionError):
    pass


@pytest.fixture
def no_network(monkeypatch):
    # Ansible's first import probes socket.getaddrinfo('127.0.0.1', 22) (a local lookup that
    # sends nothing); import it before the block so a test run alone does not count that probe.
    import ansible.inventory.manager  # noqa: F401
    attempts = []

    def refuse(*a, **kw):
        attempts.append(a[1:2] or a)
        raise Contacted(f"network use during a dry run: {a[1:2] or a}")
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    import ansible_runner
    monkeypatch.setattr(ansible_runner, "run", refuse)
    monkeypatch.delenv("ONTAP_PASSWORD", raising=False)
    return attempts


@pytest.fixture
def no_transport(monkeypatch):
    """Every way a Target reaches a host fails the test (a dry run must only plan)."""
    def used(self, h, *a, **kw):
        raise TransportUsed(f"a dry run reached {h.name}")
    for name in ("_shell", "_ontap", "_put"):
        monkeypatch.setattr(Target, name, used)
    popen = subprocess.Popen

    def no_process(args, *a, **kw):
        argv = args.split() if isinstance(args, str) else list(args)
        if argv[:1] == ["git"]:                  # the recorder's provenance may ask git
            return popen(args, *a, **kw)
        raise Contacted(f"local process started during a dry run: {argv}")
    monkeypatch.setattr(subprocess, "Popen", no_process)


@pytest.mark.parametrize("name", REAL)
def test_example_inventories_are_real_targets_with_placeholders(name):
    inv = inventory.load(name)
    assert inv.kind == "real"
    ontap = inv.ontap()
    assert ontap.get("ontap_svm") and int(ontap.get("ontap_rest_port")) == 443
    # every address is a placeholder that cannot resolve
    addrs = [h.address for h in inv.hosts.values()]
    assert addrs and all(a.startswith("CHANGE-ME") and a.endswith(".example.invalid")
                         for a in addrs)
    for group in ("ontap", "kafka", "brokers", "clients"):
        assert inv.groups.get(group), f"{name}: group {group} is empty"
    # No password in any file of it (hosts.yml, group_vars/, host_vars/).
    files = [f for f in inv.path.parent.rglob("*") if f.is_file()]
    assert len(files) > 1
    for f in files:
        text = f.read_text().lower()
        assert "password:" not in text and "ansible_password" not in text, f
    assert type(targets.open(name)) is Target and not targets.open(name).confirm


def test_playbook_dry_run_prints_the_plan_and_contacts_nothing(no_network, capsys):
    t = targets.open("aff", confirm=False)
    run = playbooks.run(t, "AFF-1-flexgroup.yml")
    assert run.planned and run.ok and run.rc is None and no_network == []
    assert run.recap() == "not run (dry run)"
    printed = capsys.readouterr().out
    assert printed.strip() == run.plan.strip()
    lines = run.plan.splitlines()
    assert lines[0] == ("DRY RUN: would run ansible-playbook AFF-1-flexgroup.yml "
                        "-i playbook/inventory/aff/hosts.yml")
    assert ("ONTAP REST API: https://CHANGE-ME-cluster-mgmt.example.invalid:443/api as admin "
            "(password from ONTAP_PASSWORD)") in run.plan
    assert "task: Edit volumes -> netapp.ontap.na_ontap_volume" in run.plan
    # Ansible's check mode logs in to read the cluster: without a password it cannot, and the
    # plan says so (check mode itself runs on the lab-remote target: tests/lab).
    assert lines[-2].startswith("Ansible's check mode did not run: ONTAP_PASSWORD is not set")
    assert not run.check_mode and run.artifacts is None
    assert lines[-1] == "Nothing was contacted. Re-run with confirm=True to apply."


def test_clustershell_step_dry_run(no_network, no_transport, capsys):
    t = targets.open("aff", confirm=False)
    r = t.run_snippet("aff-a900/AFF-2-pnfs.ontap", "aff-cluster", svm="vs1")
    assert r.planned and r.exit_code is None and no_network == []
    assert r.stdout.splitlines() == [
        "DRY RUN: would run on aff-cluster (CHANGE-ME-cluster-mgmt.example.invalid):",
        "set -privilege advanced",
        "vserver nfs modify -vserver vs1 -v4.1-pnfs enabled -tcp-max-xfer-size 262144",
        "vserver nfs show -vserver vs1 -fields v4.1,v4.1-pnfs,tcp-max-xfer-size"]
    assert "DRY RUN" in capsys.readouterr().out


def test_confirmed_run_without_password_stops_before_contacting(no_network):
    t = targets.open("aff", confirm=True)
    with pytest.raises(TargetError, match="ONTAP_PASSWORD is not set: export the password of "
                                          "admin@CHANGE-ME-cluster-mgmt"):
        playbooks.run(t, "AFF-1-flexgroup.yml")
    assert no_network == []


def test_unknown_playbook_is_named(no_network):
    t = targets.open("aff", confirm=False)
    with pytest.raises(FileNotFoundError, match="AFF-9-nothing.yml not found .* have: .*"
                                                "AFF-1-flexgroup.yml"):
        playbooks.run(t, "AFF-9-nothing.yml")


# --- FSx (FSX-1..FSX-5) as a dry run: the procedure the notebook calls ------------------------
FSX_SECRET = "Fsx-dry-run-Secret-4947"


def recorder(t, tmp_path):
    return record.start("aws-fsx", "aws-fsx", t.name, tmp_path, t.kind)


@pytest.mark.parametrize("password", [FSX_SECRET, None], ids=["password-set", "no-password"])
def test_fsx_dry_run_plans_every_step_and_reaches_nothing(password, no_network, no_transport,
                                                          tmp_path, capsys):
    t = targets.open("aws-fsx", confirm=False)
    rb = recorder(t, tmp_path)
    fs = fsx.create(t, rb, "client-1", password)
    vols = fsx.volumes(t, rb, fs, password)
    added = t.add_fstab_lines("aws-fsx/FSX-5-nfs-mounts.fstab", "client-1",
                              servers=fs.nfs_address or "<NFS address from FSX-4>", needs=vols[0])
    out = capsys.readouterr().out
    assert no_network == [] and fs.planned
    assert (fs.management, fs.nfs_address) == (None, None)
    # What later steps read stands for what FSX-1, FSX-2 and FSX-4 would report.
    assert fs.env["FSX_FILE_SYSTEM_ID"] == "<FileSystemId from FSX-1>"
    assert fs.env["FSX_SVM_ID"] == "<StorageVirtualMachineId from FSX-4>"
    steps = [(r["title"], r["data"]["output"]) for r in record.read(rb.path)["records"]]
    assert [t_ for t_, _ in steps] == [
        "The TR's command as written", "Corrected command",
        "describe-file-systems once the file system is AVAILABLE",
        "ssh to the management endpoint as fsxadmin", "create-storage-virtual-machine",
        "describe-storage-virtual-machines once the SVM is CREATED",
        "volume create x6", "volume size +2TB x6 and volume show", "volume mount x6"]
    plans = dict(steps)
    for title, body in steps:
        assert body.startswith("DRY RUN: would "), (title, body)
        assert body in out                                      # every plan was printed
    # Reads of what a planned step would make are planned reads, not runs.
    for title in ("describe-file-systems once the file system is AVAILABLE",
                  "ssh to the management endpoint as fsxadmin",
                  "describe-storage-virtual-machines once the SVM is CREATED"):
        assert plans[title].startswith("DRY RUN: would read on client-1 (CHANGE-ME-admin-host"
                                       ".example.invalid), once the planned step"), title
    assert "export FSX_FILE_SYSTEM_ID='<FileSystemId from FSX-1>'" in \
        plans["describe-file-systems once the file system is AVAILABLE"]
    assert "export FSX_MANAGEMENT_IP='<management IP from FSX-2>'" in \
        plans["ssh to the management endpoint as fsxadmin"]
    # The ONTAP steps go to the inventory's placeholder (no management address was found).
    assert plans["volume create x6"].startswith(
        "DRY RUN: would run on fsx (CHANGE-ME-management-endpoint.example.invalid):")
    # The fstab plan: every line with the address FSX-4 would report, a backup first.
    assert added.planned and added.stdout.count("<NFS address from FSX-4>:/kafkafsxN") == 6
    assert "198.18." not in added.stdout and "backup=/etc/fstab.tr4947.bak" in added.stdout
    # The password: only FSX-1 shows it, masked; absent, the plan shows where it would go.
    creates = [plans["The TR's command as written"], plans["Corrected command"]]
    assert all("FsxAdminPassword=${FSXADMIN_PASSWORD}" in p for p in creates)
    if password:
        assert all("export FSXADMIN_PASSWORD=********" in p for p in creates)
    assert sum("FSXADMIN_PASSWORD=" in body for _, body in steps) == (2 if password else 0)
    assert FSX_SECRET not in out + rb.path.read_text()


# --- CVO: the lab's snippet values mapped to the target's ---------------------------------------
def test_cvo_steps_plan_with_the_targets_svm_and_lifs(no_network, no_transport, capsys):
    t = targets.open("aws-cvo", confirm=False)
    values = t.lab_values()
    lab = inventory.load("lab").ontap()
    assert values[lab.get("ontap_svm")] == "CHANGE-ME-svm_kafka_nfs_cvo_ha"
    cvo1 = t.run_snippet("aws-cvo/CVO-1-volumes-ha.ontap", "cvo", check=True, replace=values)
    assert cvo1.planned and cvo1.stdout.count("-vserver CHANGE-ME-svm_kafka_nfs_cvo_ha ") == 7
    assert f"-vserver {lab.get('ontap_svm')} " not in cvo1.stdout
    added = t.add_fstab_lines("aws-cvo/CVO-3-nfs-mounts.fstab", "broker-1", servers=values,
                              check=True, needs=cvo1)
    assert added.stdout.count("CHANGE-ME-data-lif-1.example.invalid:/kafka_aggr3_vol") == 3
    assert added.stdout.count("CHANGE-ME-data-lif-2.example.invalid:/kafka_aggr22_vol") == 3
    assert not fstab.lab_servers(added.stdout)
    mounted = t.run_snippet("aws-cvo/CVO-3-mount.sh", "broker-1", check=True, needs=added)
    conns = t.run_snippet("aws-cvo/CVO-4-nfs-connections.ontap", "cvo", read_only=True,
                          check=True, needs=mounted)
    assert conns.stdout.startswith("DRY RUN: would read on cvo ")
    placed = t.apply_properties("aws-cvo/CVO-5-server-ha.properties", "broker-1",
                                "/opt/kafka/config/server.properties", check=True, needs=mounted)
    back = t.read_file("broker-1", "/opt/kafka/config/server.properties", needs=placed)
    assert all(r.planned for r in (mounted, placed, back))
    assert "broker.id" not in placed.stdout and "log.dirs=" in placed.stdout
    assert no_network == []


def test_the_lab_snippets_refuse_to_reach_a_real_host_unmapped(no_network, no_transport):
    t = targets.open("aws-cvo", confirm=False)
    with pytest.raises(ValueError, match="are lab addresses and target 'aws-cvo' has no address"):
        t.add_fstab_lines("aws-cvo/CVO-3-nfs-mounts.fstab", "broker-1")


def test_plan_is_stored_masked(no_network, no_transport, monkeypatch, capsys):
    monkeypatch.setenv("FSXADMIN_PASSWORD", FSX_SECRET)
    t = targets.open("aws-fsx", confirm=False)
    r = t.run_snippet("aws-fsx/FSX-1-create-file-system.sh", "client-1",
                      env={"FSXADMIN_PASSWORD": FSX_SECRET})
    assert r.planned and FSX_SECRET not in r.stdout and FSX_SECRET not in r.output
    assert "export FSXADMIN_PASSWORD=********" in r.stdout
    assert FSX_SECRET not in capsys.readouterr().out


# --- FSx confirmed: a stand-in for the SSH pool that answers as the AWS CLI does ----------------
FSX_MGMT, FSX_NFS = "10.20.1.5", "10.20.1.21"


class AwsHost:
    """``Pool.run`` of the admin host: AWS's answers, from the command text."""

    def __init__(self):
        self.calls: list[tuple[ssh.Endpoint, str, str | None]] = []
        self.polls = {"fs": 0, "svm": 0}

    def run(self, ep, command, input=None, timeout=600):
        self.calls.append((ep, command, input))
        last = command.rstrip()
        if "create-file-system" in last:
            if "--region us-east-2" in last:                 # the TR's version: refused
                return ssh.Completed(254, "", "An error occurred (ValidationException)", 0.1)
            return ssh.Completed(0, json.dumps({"FileSystem": {
                "FileSystemId": "fs-0123456789abcdef0", "Lifecycle": "CREATING"}}), "", 0.1)
        if "describe-file-systems" in last:
            self.polls["fs"] += 1
            return ssh.Completed(0, json.dumps({"FileSystems": [{
                "FileSystemId": "fs-0123456789abcdef0",
                "Lifecycle": "AVAILABLE" if self.polls["fs"] > 2 else "CREATING",
                "OntapConfiguration": {"Endpoints": {"Management": {
                    "IpAddresses": [FSX_MGMT]}}}}]}), "", 0.1)
        if last.endswith("version"):
            return ssh.Completed(0, "NetApp Release 9.13.1P6\n", "", 0.1)
        if "create-storage-virtual-machine" in last:
            return ssh.Completed(0, json.dumps({"StorageVirtualMachine": {
                "StorageVirtualMachineId": "svm-0123456789abcdef0", "Name": "svmkafkatest",
                "Lifecycle": "CREATING"}}), "", 0.1)
        if "describe-storage-virtual-machines" in last:
            self.polls["svm"] += 1
            done = self.polls["svm"] > 1
            svm = {"StorageVirtualMachineId": "svm-0123456789abcdef0", "Name": "svmkafkatest",
                   "Lifecycle": "CREATED" if done else "CREATING"}
            if done:
                svm["Endpoints"] = {"Nfs": {"IpAddresses": [FSX_NFS]}}
            return ssh.Completed(0, json.dumps({"StorageVirtualMachines": [svm]}), "", 0.1)
        raise AssertionError(f"unexpected command: {command[-200:]}")

    def forget(self, ep):
        pass

    def close(self):
        pass


def test_fsx_confirmed_sends_each_value_where_it_belongs(no_network, monkeypatch, tmp_path,
                                                         capsys):
    t = targets.open("aws-fsx", confirm=True, echo=False)
    t._pool = aws = AwsHost()
    sessions = []

    def clustershell(ep, lines, timeout, cluster_name="cluster1"):
        sessions.append((ep, lines))
        return ssh.Completed(0, "", "", 0.1)
    monkeypatch.setattr(ssh, "clustershell", clustershell)
    waits = []
    monkeypatch.setattr(fsx.time, "sleep", waits.append)
    rb = recorder(t, tmp_path)
    fs = fsx.create(t, rb, "client-1", FSX_SECRET)
    fsx.volumes(t, rb, fs, FSX_SECRET)
    assert (fs.management, fs.nfs_address) == (FSX_MGMT, FSX_NFS)
    assert fs.env["FSX_SVM_ID"] == "svm-0123456789abcdef0"
    # Waited as AWS is waited for: 1 s, then twice as long each time.
    assert waits == [1.0, 2.0, 1.0]
    # Every shell command went to the admin host; the password only to FSX-1 (both versions),
    # on stdin, never in the command text.
    assert {ep.address for ep, _c, _i in aws.calls} == {"CHANGE-ME-admin-host.example.invalid"}
    with_password = [c for _ep, c, i in aws.calls if i and FSX_SECRET in i]
    assert len(with_password) == 2 and all("create-file-system" in c for c in with_password)
    assert all("IFS= read -r FSXADMIN_PASSWORD" in c for c in with_password)
    assert not any(FSX_SECRET in c for _ep, c, _i in aws.calls)
    # FSX-5's clustershell went to the management address FSX-2 found, as fsxadmin with the
    # password FSX-1 set; nothing to the inventory's placeholder.
    assert len(sessions) == 3
    assert {(ep.address, ep.user, ep.password) for ep, _ in sessions} == \
        {(FSX_MGMT, "fsxadmin", FSX_SECRET)}
    assert FSX_SECRET not in capsys.readouterr().out + rb.path.read_text()
    assert secrets.redact(FSX_SECRET) == secrets.MASK
