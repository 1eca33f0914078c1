"""Real-target example inventories and the dry run: without confirm=True nothing that changes
a system runs, and nothing is contacted at all. Then confirmed runs of the FSx and CVO storage
notebooks against fake real hosts (commands captured and answered, the fstab edit executed on
a stand-in file system). The network is blocked for these tests, so a connection attempt
fails them instead of leaving this machine."""
from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest

from tr4947 import inventory, paths, targets
from tr4947.targets import playbooks

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
    text = inv.path.read_text().lower()
    assert "password:" not in text and "ansible_password" not in text


def test_playbook_dry_run_prints_the_plan_and_contacts_nothing(no_network, capsys):
    t = targets.open("aff", confirm=False)
    run = playbooks.run(t, "AFF-1-flexgroup.yml")
    assert run.planned and run.ok and run.rc is None and no_network == []
    printed = capsys.readouterr().out
    assert printed.strip() == run.plan.strip()
    lines = run.plan.splitlines()
    assert lines[0] == ("DRY RUN: would run ansible-playbook AFF-1-flexgroup.yml "
                        "-i playbook/inventory/aff/hosts.yml")
    assert ("ONTAP REST API: https://CHANGE-ME-cluster-mgmt.example.invalid:443/api as admin "
            "(password from ONTAP_PASSWORD)") in run.plan
    assert "task: Edit volumes -> netapp.ontap.na_ontap_volume" in run.plan
    assert lines[-1] == "Nothing was contacted. Re-run with confirm=True to apply."


def test_clustershell_step_dry_run(no_network, capsys):
    t = targets.open("aff", confirm=False)
    r = t.run_snippet("aff-a900/AFF-2-pnfs.ontap", "aff-cluster", changes_state=True, svm="vs1")
    assert r.planned and r.exit_code is None and no_network == []
    assert r.stdout.splitlines() == [
        "DRY RUN: would run on aff-cluster (CHANGE-ME-cluster-mgmt.example.invalid):",
        "set -privilege advanced",
        "vserver nfs modify -vserver vs1 -v4.1-pnfs enabled -tcp-max-xfer-size 262144",
        "vserver nfs show -vserver vs1 -fields v4.1,v4.1-pnfs,tcp-max-xfer-size"]
    assert "DRY RUN" in capsys.readouterr().out


def test_confirmed_run_without_password_stops_before_contacting(no_network):
    t = targets.open("aff", confirm=True)
    with pytest.raises(playbooks.PlaybookError, match="ONTAP_PASSWORD is not set"):
        playbooks.run(t, "AFF-1-flexgroup.yml")
    assert no_network == []


def test_unknown_playbook_is_named(no_network):
    t = targets.open("aff", confirm=False)
    with pytest.raises(FileNotFoundError, match="AFF-1-flexgroup.yml"):
        playbooks.run(t, "AFF-9-nothing.yml")


def test_aff_storage_notebook_dry_run_end_to_end(no_network, tmp_path, monkeypatch, capsys):
    """The AFF notebook's own cells on the aff example target, confirm=False: every step
    plans, nothing is contacted, and what it records says so."""
    recs = run_notebook("aff-a900-storage", 'target = "aff"\nconfirm = False\n', tmp_path,
                        monkeypatch)
    assert no_network == []
    out = capsys.readouterr().out
    assert out.count("DRY RUN: would run ansible-playbook") == 3     # TR version + two runs
    assert "DRY RUN: would run on aff-cluster (CHANGE-ME-cluster-mgmt.example.invalid):" in out
    assert recs["provenance"]["target"] == "aff" and recs["provenance"]["kind"] == "real"
    kinds = [(r["id"], r["kind"]) for r in recs["records"]]
    assert kinds == [("AFF-1", "text"), ("AFF-1", "text"), ("AFF-2", "console"),
                     ("AFF-2", "console")]
    for r in recs["records"]:
        body = r["data"].get("body") or r["data"].get("output")
        assert body.startswith("DRY RUN: would run"), body


# --- the FSx and CVO storage notebooks, dry run end to end ---------------------------------
FSX_SECRET = "Fsx-dry-run-Secret-4947"


@pytest.fixture
def no_processes(monkeypatch):
    """On a real target the AWS CLI runs on the admin host over SSH; a dry run starts no local
    process either (an `aws` or `ssh` here would reach out from this machine). Only the
    provenance's local `git` (commit and status) may run."""
    import subprocess
    popen = subprocess.Popen

    def refuse(args, *a, **kw):
        argv = args.split() if isinstance(args, str) else list(args)
        if argv[:1] == ["git"]:
            return popen(args, *a, **kw)
        raise Contacted(f"local process started during a dry run: {argv}")
    monkeypatch.setattr(subprocess, "Popen", refuse)
    monkeypatch.setattr(os, "popen", refuse)


@pytest.fixture
def steps(monkeypatch):
    """Every Target call the notebook makes, with what came back; executing anything on the
    target (rather than planning it) fails the test."""
    from tr4947.targets.base import Target
    from tr4947.targets.ssh import SshTarget
    calls = []
    guarded = Target._guarded

    def spy(self, host, label, changes_state, action, needs=None):
        r = guarded(self, host, label, changes_state, action, needs)
        calls.append((host.name, changes_state, r))
        return r

    def executed(self, host, *a, **kw):
        raise Contacted(f"a dry run executed a step on {host.name}")
    monkeypatch.setattr(Target, "_guarded", spy)
    for name in ("_shell", "_ontap", "_put"):
        monkeypatch.setattr(SshTarget, name, executed)
    return calls


def run_notebook(name: str, parameters: str, tmp_path, monkeypatch) -> dict:
    """Execute a notebook's code cells here, with its parameters cell replaced, and return
    what it recorded (results JSON)."""
    import nbformat

    from tr4947 import paths
    monkeypatch.setenv("TR4947_RESULTS_DIR", str(tmp_path))
    nb = nbformat.read(paths.REPO / "notebooks" / f"{name}.ipynb", as_version=4)
    ns: dict = {}
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        src = parameters if "parameters" in cell.metadata.get("tags", []) else cell.source
        exec(compile(src, name, "exec"), ns)
    return json.loads((tmp_path / f"{name}.json").read_text())


def rendered(results: Path, tmp_path, monkeypatch) -> str:
    from tr4947 import paths
    from tr4947.results import render
    monkeypatch.setattr(paths, "DOCS", tmp_path / "docs")
    return "\n".join(p.read_text() for p in render.render_file(results) if p.suffix == ".adoc")


def check_every_step_planned(calls, printed: str, changing: int, reads: int,
                             addresses: dict | None = None):
    """``addresses``: hosts reached at an address an earlier (planned) step would find,
    rather than the inventory's CHANGE-ME placeholder."""
    assert calls, "the notebook made no Target call"
    for host, changes_state, r in calls:
        assert r.planned and r.exit_code is None, (host, r.command)
        assert r.stdout in printed, f"plan for {host} was not printed:\n{r.stdout}"
        verb = "run" if changes_state else "read"
        address = (addresses or {}).get(host, "CHANGE-ME-")
        assert r.stdout.startswith(f"DRY RUN: would {verb} on {host} ({address}"), r.stdout
    assert sum(c for _, c, _ in calls) == changing
    assert sum(not c for _, c, _ in calls) == reads
    assert printed.count("DRY RUN: would run on ") == changing
    assert printed.count("DRY RUN: would read on ") == reads


@pytest.mark.parametrize("password", [FSX_SECRET, None], ids=["password-set", "no-password"])
def test_fsx_notebook_dry_run_end_to_end(password, no_network, no_processes, steps, tmp_path,
                                         monkeypatch, capsys):
    if password:
        monkeypatch.setenv("FSXADMIN_PASSWORD", password)
    else:
        monkeypatch.delenv("FSXADMIN_PASSWORD", raising=False)
    recs = run_notebook("aws-fsx", 'target = "aws-fsx"\nconfirm = False\nssh_user = "fsxadmin"\n',
                        tmp_path, monkeypatch)
    cap = capsys.readouterr()
    out = cap.out
    assert no_network == []
    # FSX-1 twice, FSX-4, FSX-5 (three clustershell snippets, fstab, mount), FSX-7 change state;
    # FSX-2, FSX-3 and FSX-4's wait read what FSX-1 and FSX-4 would create: planned reads.
    # FSX-5's clustershell goes to the management address FSX-2 would report.
    check_every_step_planned(steps, out, changing=9, reads=3,
                             addresses={"fsx": "<management IP from FSX-2>"})
    by_last_line = {r.command.splitlines()[-1]: r.stdout for _, _, r in steps}
    fs2 = by_last_line['aws fsx describe-file-systems --region us-east-1 '
                        '--file-system-ids "$FSX_FILE_SYSTEM_ID"']
    assert "export FSX_FILE_SYSTEM_ID='<FileSystemId from FSX-1>'" in fs2
    fs3 = by_last_line['ssh fsxadmin@"$FSX_MANAGEMENT_IP" version']
    assert "export FSX_MANAGEMENT_IP='<management IP from FSX-2>'" in fs3
    assert "LAB_SSH_PASSWORD" not in fs3
    fs4 = by_last_line['  --file-system-id "$FSX_FILE_SYSTEM_ID"']
    assert "create-storage-virtual-machine" in fs4 and "<FileSystemId from FSX-1>" in fs4
    fs4_wait = by_last_line['  --storage-virtual-machine-ids "$FSX_SVM_ID"']
    assert fs4_wait.startswith("DRY RUN: would read on client-1")
    assert "export FSX_SVM_ID='<StorageVirtualMachineId from FSX-4>'" in fs4_wait
    # FSX-5's fstab plan: added to /etc/fstab with a backup, each line with FSX-4's address.
    fs5 = next(r.stdout for _, _, r in steps if "FSTAB_LINES" in r.command)
    assert "the file is copied to /etc/fstab.tr4947.bak first" in fs5
    assert fs5.count("<NFS address from FSX-4>:/kafkafsxN") == 6 and "127.0." not in fs5
    fs1 = [r.stdout for _, _, r in steps if "create-file-system" in r.command]
    assert len(fs1) == 2 and all("FsxAdminPassword=${FSXADMIN_PASSWORD}" in p for p in fs1)
    if password:
        assert all("export FSXADMIN_PASSWORD=********" in p for p in fs1)
    else:
        assert not any("export FSXADMIN_PASSWORD" in p for p in fs1)
        assert "FSXADMIN_PASSWORD is not set: a run with confirm=True needs it" in out
    # Only FSX-1 gets the password, even as a masked export.
    assert sum("FSXADMIN_PASSWORD=" in r.stdout for _, _, r in steps) == (2 if password else 0)
    assert recs["provenance"]["target"] == "aws-fsx" and recs["provenance"]["kind"] == "real"
    assert [r["id"] for r in recs["records"]] == (
        ["FSX-1"] * 2 + ["FSX-2", "FSX-3"] + ["FSX-4"] * 2 + ["FSX-5"] * 5 + ["FSX-7"])
    for r in recs["records"]:
        assert r["data"]["output"].startswith("DRY RUN: would"), r
    pages = rendered(tmp_path / "aws-fsx.json", tmp_path, monkeypatch)
    assert "DRY RUN: would read on client-1" in pages
    for text in (out, cap.err, (tmp_path / "aws-fsx.json").read_text(), pages):
        assert FSX_SECRET not in text


def test_fsx_confirmed_run_without_password_stops_before_anything(no_network, no_processes,
                                                                   steps, tmp_path, monkeypatch):
    monkeypatch.delenv("FSXADMIN_PASSWORD", raising=False)
    with pytest.raises(SystemExit, match="FSXADMIN_PASSWORD is not set"):
        run_notebook("aws-fsx", 'target = "aws-fsx"\nconfirm = True\nssh_user = "fsxadmin"\n',
                     tmp_path, monkeypatch)
    assert steps == [] and no_network == []


def test_cvo_storage_notebook_dry_run_end_to_end(no_network, no_processes, steps, tmp_path,
                                                 monkeypatch, capsys):
    monkeypatch.setenv("ONTAP_PASSWORD", FSX_SECRET)
    recs = run_notebook("aws-cvo-storage",
                        'target = "aws-cvo"\nconfirm = False\nbroker = "broker-1"\n',
                        tmp_path, monkeypatch)
    cap = capsys.readouterr()
    out = cap.out
    assert no_network == []
    # CVO-1, the fstab, the mount, CVO-2 (statistics start creates a sample) and the
    # server.properties change state; CVO-4's two reads and CVO-5's read-back need them.
    check_every_step_planned(steps, out, changing=5, reads=4)
    reads = [(h, r.command) for h, c, r in steps if not c]
    assert reads == [("cvo", "network connections active show -service nfs* -fields remote-host"),
                     ("broker-1", "mount"),
                     ("broker-1", "cat /opt/kafka/config/server.properties"),
                     ("broker-1", "df -h")]
    assert "umount" not in out                # the broker's log dirs are not unmounted
    cvo1 = next(r.stdout for _, _, r in steps if r.command.startswith("volume create"))
    assert cvo1.count("-vserver CHANGE-ME-svm_kafka_nfs_cvo_ha ") == 7 and "svm_kafka " not in cvo1
    cvo3 = next(r.stdout for _, _, r in steps if r.command.startswith("export FSTAB_LINES="))
    assert cvo3.count("CHANGE-ME-data-lif-1.example.invalid:/kafka_aggr3_vol") == 3
    assert cvo3.count("CHANGE-ME-data-lif-2.example.invalid:/kafka_aggr22_vol") == 3
    assert "127.0." not in cvo3 and "/etc/fstab.tr4947.bak" in cvo3
    assert [(r["id"], r["kind"]) for r in recs["records"]] == [
        ("CVO-1", "console"), ("CVO-3", "console"), ("CVO-3", "console"), ("CVO-4", "console"),
        ("CVO-2", "console"), ("CVO-5", "console")]
    for r in recs["records"]:
        assert r["data"]["output"].startswith("DRY RUN: would"), r
    pages = rendered(tmp_path / "aws-cvo-storage.json", tmp_path, monkeypatch)
    for text in (out, cap.err, (tmp_path / "aws-cvo-storage.json").read_text(), pages):
        assert FSX_SECRET not in text


def test_cvo_storage_unknown_broker_stops_before_any_step(no_network, steps, tmp_path,
                                                          monkeypatch):
    from tr4947.inventory import InventoryError
    with pytest.raises(InventoryError, match="unknown host 'nfs-broker-1'.*broker-1"):
        run_notebook("aws-cvo-storage",
                     'target = "aws-cvo"\nconfirm = False\nbroker = "nfs-broker-1"\n',
                     tmp_path, monkeypatch)
    assert steps == []


def test_read_of_a_planned_step_is_planned_and_real_reads_run(no_network, steps, capsys):
    t = targets.open("aws-cvo", confirm=False)
    made = t.run("mkdir /x", "broker-1", changes_state=True)
    both = t.run("ls /x", "brokers", needs=[made])
    assert all(r.planned for r in both) and len(both) == 3
    assert both[0].stdout == ("DRY RUN: would read on broker-1 (CHANGE-ME-broker-1.example."
                              "invalid), once the planned step it reads from has run:\nls /x")
    # A read whose inputs really ran is executed (here: refused by the fixture).
    done = targets.Result("broker-1", "mkdir /x", 0, "", "", 0.1, "now")
    with pytest.raises(Contacted, match="executed a step on broker-1"):
        t.run("ls /x", "broker-1", needs=done)


def test_plan_is_stored_masked(no_network, monkeypatch, capsys):
    monkeypatch.setenv("FSXADMIN_PASSWORD", FSX_SECRET)
    t = targets.open("aws-fsx", confirm=False)
    r = t.run_snippet("aws-fsx/FSX-1-create-file-system.sh", "client-1", changes_state=True,
                      env={"FSXADMIN_PASSWORD": FSX_SECRET})
    assert r.planned and FSX_SECRET not in r.stdout and FSX_SECRET not in r.output
    assert "export FSXADMIN_PASSWORD=********" in r.stdout
    assert FSX_SECRET not in capsys.readouterr().out


# --- confirmed runs (confirm=True) against fake real hosts --------------------------------
# A confirmed run on a real target: the same notebooks, the same SshTarget, with its three
# ways of reaching a host (_shell, _ontap, _put) answered by FakeHosts instead of SSH. The
# network stays blocked. The fstab script is executed for real (bash, on a per-host directory
# standing for the host's file system); the AWS CLI, ssh, mount, df and the clustershell answer
# as the real ones do for these procedures, from what earlier steps did.
HOST_FSTAB = ("UUID=0f3c6d4e-1111-4a2b-9c3d-5e6f7a8b9c0d /           xfs    defaults,noatime  1   1\n"
              "/dev/nvme1n1 /mnt/data-1 ext4 defaults,nofail 0 2\n"
              "/dev/nvme2n1 /mnt/data-2 ext4 defaults,nofail 0 2\n")
# What a broker of the real cluster already has: its own identity (ZooKeeper-era, as in the
# TR) and Kafka's default log dir.
BROKER_PROPS = ("# broker-1 of the CVO cluster\n"
                "broker.id=0\n"
                "listeners=PLAINTEXT://ip-10-20-2-11.ec2.internal:9092\n"
                "advertised.listeners=PLAINTEXT://ip-10-20-2-11.ec2.internal:9092\n"
                "zookeeper.connect=ip-10-20-2-31.ec2.internal:2181\n"
                "log.dirs=/tmp/kafka-logs\n"
                "num.io.threads=8\n")
FSX_MGMT = "10.20.1.5"          # what the fake AWS reports; never contacted
FSX_NFS = "10.20.1.21"
ONTAP_SECRET = "Cvo-confirmed-Secret-4947"


class FakeHosts:
    def __init__(self, root):
        self.root = root
        self.shell_calls, self.ontap_calls, self.puts = [], [], []
        self.mounts: dict[str, list[tuple[str, str]]] = {}     # host -> (source, mount point)
        self.files: dict[tuple[str, str], str] = {
            (b, "/opt/kafka/config/server.properties"): BROKER_PROPS
            for b in ("broker-1", "broker-2", "broker-3")}
        self.polls: dict[str, int] = {}                        # describe calls since a create
        self.sleeps = []

    def etc(self, host: str) -> Path:
        d = self.root / host / "etc"
        if not d.exists():
            d.mkdir(parents=True)
            (d / "fstab").write_text(HOST_FSTAB)
        return d

    def install(self, monkeypatch):
        import time

        from tr4947.targets.base import Result, now_iso
        from tr4947.targets.ssh import SshTarget
        fake = self

        def result(host, command, code, out="", err=""):
            return Result(host.name, command, code, out, err, 0.01, now_iso())

        def shell(target, host, command, timeout, env, input):
            fake.shell_calls.append((host.name, command, dict(env)))
            return result(host, command, *fake.answer(host, command, env))

        def ontap(target, host, lines, timeout):
            fake.ontap_calls.append((host.name, host.address, target._password(host), lines))
            return result(host, "\n".join(lines), 0, fake.clustershell(lines))

        def put(target, host, dest, content):
            assert not dest.startswith("/etc/fstab"), f"{dest} replaced on {host.name}"
            fake.puts.append((host.name, dest, content))
            fake.files[(host.name, dest)] = content
            return result(host, f"put {dest}", 0, f"wrote {dest} ({len(content)} bytes)")
        monkeypatch.setattr(SshTarget, "_shell", shell)
        monkeypatch.setattr(SshTarget, "_ontap", ontap)
        monkeypatch.setattr(SshTarget, "_put", put)
        monkeypatch.setattr(time, "sleep", lambda s: fake.sleeps.append(s))

    # --- the hosts' answers -------------------------------------------------------------
    def answer(self, host, command, env) -> tuple:
        import subprocess
        if "FSTAB_LINES" in env:                      # the fstab script: run it for real
            etc = self.etc(host.name)
            r = subprocess.run(["bash", "-c", command.replace("/etc/fstab", f"{etc}/fstab")],
                               env={"PATH": os.environ["PATH"], **env},
                               capture_output=True, text=True)
            return r.returncode, r.stdout.replace(str(etc), "/etc"), r.stderr.replace(str(etc), "/etc")
        if "create-file-system" in command:
            if "--region us-east-2" in command:       # the TR's version: AWS refuses it
                return 254, "", ("An error occurred (ValidationException) when calling the "
                                 "CreateFileSystem operation: 1 validation error detected")
            self.polls["fs"] = 0
            return 0, json.dumps({"FileSystem": {"FileSystemId": "fs-0123456789abcdef0",
                                                 "Lifecycle": "CREATING", "FileSystemType": "ONTAP",
                                                 "StorageCapacity": 2048}})
        if "describe-file-systems" in command:
            self.polls["fs"] += 1
            life = "CREATING" if self.polls["fs"] == 1 else "AVAILABLE"
            return 0, json.dumps({"FileSystems": [{
                "FileSystemId": env["FSX_FILE_SYSTEM_ID"], "Lifecycle": life,
                "OntapConfiguration": {"Endpoints": {"Management": {"IpAddresses": [FSX_MGMT]}}}}]})
        if command.rstrip().endswith("version") and "ssh fsxadmin@" in command:
            assert env["FSX_MANAGEMENT_IP"] == FSX_MGMT
            return 0, "NetApp Release 9.13.1P6: Tue Dec 05 16:06:25 UTC 2023\n"
        if "create-storage-virtual-machine" in command:
            self.polls["svm"] = 0
            return 0, json.dumps({"StorageVirtualMachine": {
                "StorageVirtualMachineId": "svm-0123456789abcdef0", "Name": "svmkafkatest",
                "Lifecycle": "CREATING"}})
        if "describe-storage-virtual-machines" in command:
            assert env["FSX_SVM_ID"] == "svm-0123456789abcdef0"
            self.polls["svm"] += 1
            created = self.polls["svm"] > 1
            svm = {"StorageVirtualMachineId": env["FSX_SVM_ID"], "Name": "svmkafkatest",
                   "Lifecycle": "CREATED" if created else "CREATING"}
            if created:
                svm["Endpoints"] = {"Nfs": {"IpAddresses": [FSX_NFS]}}
            return 0, json.dumps({"StorageVirtualMachines": [svm]})
        if "update-file-system" in command:
            return 0, json.dumps({"FileSystem": {"StorageCapacity": 5120, "OntapConfiguration": {
                "ThroughputCapacity": 4096, "DiskIopsConfiguration": {"Iops": 160000}}}})
        if "mount -a" in command:                      # mount what /etc/fstab lists
            fstab = (self.etc(host.name) / "fstab").read_text()
            mine = self.mounts.setdefault(host.name, [])
            for line in fstab.splitlines():
                f = line.split()
                if len(f) >= 3 and f[2] in ("nfs", "nfs4") and (f[0], f[1]) not in mine:
                    mine.append((f[0], f[1]))
            return 0, self.df(host.name)
        if command == "df -h":
            return 0, self.df(host.name)
        if command == "mount":
            return 0, "".join(f"{src} on {mp} type nfs4 (rw,relatime,vers=4.1,rsize=65536,"
                              f"wsize=65536,hard,proto=tcp,nconnect=16,sec=sys)\n"
                              for src, mp in self.mounts.get(host.name, []))
        if command.startswith("cat /"):
            path = command.split()[1]
            if (host.name, path) not in self.files:
                return 1, "", f"cat: {path}: No such file or directory"
            return 0, self.files[(host.name, path)]
        if command.startswith("cp -p /"):
            src, dst = command.split()[2:4]
            self.files[(host.name, dst)] = self.files[(host.name, src)]
            return 0, ""
        raise AssertionError(f"unexpected command on {host.name}: {command[:200]}")

    def df(self, host: str) -> str:
        rows = [f"{src} 1.0T 0 1.0T 0% {mp}" for src, mp in self.mounts.get(host, [])]
        return "\n".join(["Filesystem Size Used Avail Use% Mounted on"] + rows) + "\n"

    def clustershell(self, lines: list[str]) -> str:
        if lines[0].startswith("network connections active show"):
            servers = sorted({src.split(":")[0] for m in self.mounts.values() for src, _ in m})
            rows = [f"node-0{i % 2 + 1} {1000 + i} 10.20.3.{10 + i // 16}"
                    for i in range(16 * len(servers))]
            return ("Node     Cid   Remote Host\n-------- ----- -----------\n" + "\n".join(rows)
                    + f"\n{len(rows)} entries were displayed.\n")
        return ""


def confirmed_run(name, parameters, tmp_path, monkeypatch, capsys, run: int) -> tuple:
    out_dir = tmp_path / f"run{run}"
    out_dir.mkdir()
    recs = run_notebook(name, parameters, out_dir, monkeypatch)
    cap = capsys.readouterr()
    pages = rendered(out_dir / f"{name}.json", out_dir, monkeypatch)
    return recs, cap.out + cap.err, (out_dir / f"{name}.json").read_text(), pages


def test_fsx_confirmed_run_appends_fstab_with_fsx4_address(no_network, tmp_path, monkeypatch,
                                                            capsys):
    monkeypatch.setenv("FSXADMIN_PASSWORD", FSX_SECRET)
    monkeypatch.delenv("ONTAP_PASSWORD", raising=False)
    hosts = FakeHosts(tmp_path / "hosts")
    hosts.install(monkeypatch)
    params = 'target = "aws-fsx"\nconfirm = True\nssh_user = "fsxadmin"\n'
    fstab_file = hosts.etc("client-1") / "fstab"
    texts = []
    for run in (1, 2):
        recs, out, results, pages = confirmed_run("aws-fsx", params, tmp_path, monkeypatch,
                                                  capsys, run)
        texts += [out, results, pages]
        assert fstab_file.read_text().startswith(HOST_FSTAB)       # appended, never truncated
        added = [l for l in fstab_file.read_text().splitlines() if "kafkafsxN" in l]
        assert added == [f"{FSX_NFS}:/kafkafsxN{i} /mnt/kafkafsxN{i} nfs defaults,nconnect=16 0 0"
                         for i in range(1, 7)]
        assert (fstab_file.parent / "fstab.tr4947.bak").read_text() == HOST_FSTAB
        fs5 = [r["data"]["output"] for r in recs["records"]
               if r["title"] == "the fstab lines above added to /etc/fstab"]
        assert len(fs5) == 1
        assert fs5[0].rstrip().endswith(
            "6 line(s) added to /etc/fstab; the file as it was: /etc/fstab.tr4947.bak" if run == 1
            else "/etc/fstab already has these lines: nothing added")
        assert "Record in your inventory: host fsx ansible_host 10.20.1.5, ontap_data_lifs " \
               "address 10.20.1.21" in out
    assert no_network == []
    # FSX-2 and FSX-4 waited for AWS (one CREATING answer each per run), 30 s apart.
    assert hosts.sleeps == [30, 30] * 2
    # FSX-5's clustershell went to the management address FSX-2 found, as fsxadmin with the
    # password FSX-1 set; nothing went to the inventory's placeholder.
    assert {(h, a, pw) for h, a, pw, _ in hosts.ontap_calls} == {("fsx", FSX_MGMT, FSX_SECRET)}
    assert len(hosts.ontap_calls) == 6
    # The password travels only to FSX-1 (in its environment, never in a command line), and
    # no lab address reaches a real host.
    for host, command, env in hosts.shell_calls:
        assert FSX_SECRET not in command and "127.0." not in command
        assert ("FSXADMIN_PASSWORD" in env) == ("create-file-system" in command), command[:80]
    for text in texts + [fstab_file.read_text()]:
        assert FSX_SECRET not in text


def test_cvo_confirmed_run_appends_fstab_with_inventory_lifs(no_network, tmp_path, monkeypatch,
                                                              capsys):
    from tr4947 import inventory
    monkeypatch.setenv("ONTAP_PASSWORD", ONTAP_SECRET)
    hosts = FakeHosts(tmp_path / "hosts")
    hosts.install(monkeypatch)
    cvo = inventory.load("aws-cvo").ontap()
    lif1, lif2 = (l["address"] for l in cvo.get("ontap_data_lifs"))
    params = 'target = "aws-cvo"\nconfirm = True\nbroker = "broker-1"\n'
    fstab_file = hosts.etc("broker-1") / "fstab"
    texts = []
    for run in (1, 2):
        recs, out, results, pages = confirmed_run("aws-cvo-storage", params, tmp_path,
                                                  monkeypatch, capsys, run)
        texts += [out, results, pages]
        text = fstab_file.read_text()
        assert text.startswith(HOST_FSTAB)
        assert text[len(HOST_FSTAB):].splitlines() == (
            [f"{lif1}:/kafka_aggr3_vol{i} /kafka_aggr3_vol{i} nfs defaults,nconnect=16 0 0"
             for i in (1, 2, 3)]
            + [f"{lif2}:/kafka_aggr22_vol{i} /kafka_aggr22_vol{i} nfs defaults,nconnect=16 0 0"
               for i in (1, 2, 3)])
        assert (fstab_file.parent / "fstab.tr4947.bak").read_text() == HOST_FSTAB
        cvo3 = [r["data"]["output"] for r in recs["records"] if r["id"] == "CVO-3"]
        assert cvo3[0].rstrip().endswith(
            "6 line(s) added to /etc/fstab; the file as it was: /etc/fstab.tr4947.bak" if run == 1
            else "/etc/fstab already has these lines: nothing added")
        # CVO-4 counted ONTAP's connections against the broker's real mounts: 2 LIFs x 16.
        assert "32 NFS connections for 6 mounts through 2 server addresses" in out
    assert no_network == []
    # CVO-1 created the volumes in the inventory's SVM, on the inventory's cluster.
    cvo1 = [lines for h, _, _, lines in hosts.ontap_calls if lines[0].startswith("volume create")]
    assert len(cvo1) == 2 and all(h == "cvo" for h, *_ in hosts.ontap_calls)
    assert all(f"-vserver {cvo.get('ontap_svm')} " in l for l in cvo1[0])
    assert not any("svm_kafka " in l for l in cvo1[0])
    assert {pw for _, _, pw, _ in hosts.ontap_calls} == {ONTAP_SECRET}
    for host, command, env in hosts.shell_calls:
        assert "127.0." not in command and ONTAP_SECRET not in command + str(env)
    for text in texts + [fstab_file.read_text()]:
        assert ONTAP_SECRET not in text


def test_cvo_confirmed_run_keeps_the_brokers_identity(no_network, tmp_path, monkeypatch,
                                                      capsys):
    """CVO-5 on a real broker: the TR's settings go into the broker's own server.properties,
    whose id, listeners and ZooKeeper stay; the lab broker's KRaft lines never arrive; the
    file as it was is kept; a second run changes nothing."""
    from tr4947 import broker_config
    monkeypatch.setenv("ONTAP_PASSWORD", ONTAP_SECRET)
    hosts = FakeHosts(tmp_path / "hosts")
    hosts.install(monkeypatch)
    params = 'target = "aws-cvo"\nconfirm = True\nbroker = "broker-1"\n'
    conf = ("broker-1", "/opt/kafka/config/server.properties")
    recs, out, _, _ = confirmed_run("aws-cvo-storage", params, tmp_path, monkeypatch, capsys, 1)
    placed = [(h, dest, content) for h, dest, content in hosts.puts]
    assert [(h, dest) for h, dest, _ in placed] == [conf]
    assert not any("127.0." in content for _, _, content in placed)
    now = broker_config.keys(hosts.files[conf])
    tr = broker_config.keys((paths.SNIPPETS / "aws-cvo/CVO-5-server-ha.properties").read_text())
    mine = broker_config.keys(BROKER_PROPS)
    for k in ("broker.id", "listeners", "advertised.listeners", "zookeeper.connect"):
        assert now[k] == mine[k]
    for k in ("process.roles", "node.id", "controller.quorum.voters"):
        assert k not in now
    assert now["log.dirs"] == tr["log.dirs"] and now["num.io.threads"] == tr["num.io.threads"] == "64"
    assert hosts.files[(conf[0], conf[1] + ".tr4947.bak")] == BROKER_PROPS
    assert hosts.files[conf].startswith("# broker-1 of the CVO cluster\n")     # edited in place
    # CVO-5's check read the merged file back: every log dir is on one of the NFS mounts.
    rows = next(r for r in recs["records"] if r["id"] == "CVO-5")["data"]["rows"]
    assert [d for d, _ in rows] == tr["log.dirs"].split(",")
    assert all(":/" in vol for _, vol in rows)

    recs, out, _, _ = confirmed_run("aws-cvo-storage", params, tmp_path, monkeypatch, capsys, 2)
    assert len(hosts.puts) == 1                       # nothing placed the second time
    assert hosts.files[(conf[0], conf[1] + ".tr4947.bak")] == BROKER_PROPS
