"""The AWS FSx stand-in on its own lab host, driven by the real aws CLI on the client host
through the Target (the client's own AWS configuration, as on an admin host), as the FSx
chapter drives it: signed requests only, AWS's validation, a lifecycle to wait for, no
password echo, and the FsxAdminPassword becoming fsxadmin's login on the ONTAP stand-in."""
from __future__ import annotations

import ipaddress
import json

import pytest

from tr4947 import secrets
from tr4947.procedures import record
from tr4947.lab import fsx as fsx_standin
from tr4947.procedures import fsx

from .conftest import own_lab

pytestmark = pytest.mark.lab

CLIENT, ONTAP = "client-1", "cluster1"
S1, S2 = "subnet-0a1b2c3d4e5f60001", "subnet-0a1b2c3d4e5f60002"


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    with own_lab(tmp_path_factory.mktemp("fsx")) as tl:
        yield tl


def aws(t, args: str, env: dict | None = None, **kw):
    return t.run(f"aws fsx --region us-east-1 {args}", CLIENT, timeout=120, env=env, **kw)


def create(t, deployment="MULTI_AZ_1", iops=40000, password="Lab-Fsx-Secret-913"):
    return aws(t, "create-file-system --storage-capacity 2048 "
                  f"--subnet-ids {S1} {S2} --file-system-type ONTAP --ontap-configuration "
                  f"'DeploymentType={deployment},ThroughputCapacity=2048,PreferredSubnetId={S1},"
                  f"FsxAdminPassword={password},"
                  f"DiskIopsConfiguration={{Mode=USER_PROVISIONED,Iops={iops}}}'")


def test_the_fsx_chapter_runs_against_the_stand_in(lab, tmp_path):
    t = lab.target()
    password = t.secret("FSXADMIN_PASSWORD")               # the lab makes one
    rb = record.start("aws-fsx", "aws-fsx", t.name, tmp_path, t.kind)
    fs = fsx.create(t, rb, CLIENT, password)
    recs = {(r["id"], r["title"]): r["data"] for r in record.read(rb.path)["records"]}
    # The TR's command as printed is refused by the stand-in as by AWS.
    tr = recs[("FSX-1", "The TR's command as written")]
    assert tr["exit_code"] != 0 and "MULTI_AZ_HA_1" in tr["output"] \
        and "ValidationException" in tr["output"]
    created = recs[("FSX-1", "Corrected command")]
    assert created["exit_code"] == 0
    assert json.loads(created["output"])["FileSystem"]["Lifecycle"] == "CREATING"
    # AWS never echoes the password (a masked one would show the stand-in had).
    for key in (("FSX-1", "Corrected command"),
                ("FSX-2", "describe-file-systems once the file system is AVAILABLE")):
        assert "FsxAdminPassword" not in recs[key]["output"]
        assert secrets.MASK not in recs[key]["output"]
    # FSX-2 waited for AVAILABLE; the endpoint is the lab's ONTAP host.
    assert fs.management == "198.19.10.1"
    # FSX-3: ssh from the client host to that endpoint as fsxadmin, with FSX-1's password.
    login = recs[("FSX-3", "ssh to the management endpoint as fsxadmin")]
    assert login["exit_code"] == 0 and "NetApp Release" in login["output"], login
    # FSX-4: the SVM's NFS address is in the storage block (the storage host answers it).
    assert ipaddress.ip_address(fs.nfs_address) in ipaddress.ip_network("198.19.10.0/24")
    # The password went on stdin: neither the client's command log nor anything recorded
    # holds it.
    assert password not in "\n".join(lab.commands(CLIENT))
    assert password not in rb.path.read_text()

    # The password FSX-1 set is fsxadmin's clustershell login now, and only that one.
    t.reach(ONTAP, user="fsxadmin", password=password)
    r = t.run("version", ONTAP, read_only=True, check=True)
    assert "NetApp Release" in r.stdout
    wrong = lab.target()
    wrong.reach(ONTAP, user="fsxadmin", password=password + "-not")
    r = wrong.run("version", ONTAP, read_only=True)
    assert r.exit_code == 255 and "PermissionDenied" in r.stderr


def test_only_signed_requests_with_the_labs_key_are_served(lab):
    t = lab.target()
    key = json.loads((lab.root / fsx_standin.CREDENTIALS).read_text())
    # The client's AWS CLI is configured for the lab's AWS (endpoint, the stand-in's key).
    conf = t.run("aws configure list; aws configure get endpoint_url", CLIENT, check=True).stdout
    assert "http://198.19.20.1:80" in conf and key["AWS_ACCESS_KEY_ID"][-4:] in conf
    ok = aws(t, "describe-file-systems", check=True)
    before = len(json.loads(ok.stdout)["FileSystems"])
    for call in ("describe-file-systems",
                 f"create-file-system --storage-capacity 1024 --subnet-ids {S1} "
                 "--file-system-type ONTAP --ontap-configuration "
                 "DeploymentType=SINGLE_AZ_1,ThroughputCapacity=128"):
        unsigned = t.run(f"aws fsx --region us-east-1 --no-sign-request {call}", CLIENT,
                         timeout=120)
        # Refused (the stand-in answers an unsigned request with an error, not a result).
        assert unsigned.exit_code != 0 and "An error occurred" in unsigned.stderr
        assert unsigned.stdout == ""
    after = json.loads(aws(t, "describe-file-systems", check=True).stdout)["FileSystems"]
    assert len(after) == before                         # nothing was created unsigned
    forged = aws(t, "describe-file-systems",
                 env={"AWS_ACCESS_KEY_ID": key["AWS_ACCESS_KEY_ID"],
                      "AWS_SECRET_ACCESS_KEY": "A" * 40})
    assert forged.exit_code != 0 and "SignatureDoesNotMatch" in forged.stderr, forged.stderr
    stranger = aws(t, "describe-file-systems",
                   env={"AWS_ACCESS_KEY_ID": "AKIAIOSFODNN7EXAMPLE",
                        "AWS_SECRET_ACCESS_KEY": key["AWS_SECRET_ACCESS_KEY"]})
    assert stranger.exit_code != 0 and "InvalidClientTokenId" in stranger.stderr, stranger.stderr


def test_values_aws_refuses_are_refused(lab):
    t = lab.target()
    res = create(t, deployment="MULTI_AZ_HA_1")
    assert res.exit_code != 0 and "ValidationException" in res.stderr
    assert "Member must satisfy enum value set" in res.stderr and "MULTI_AZ_1" in res.stderr
    res = create(t, iops=5_000_000)                    # more than 200,000 per HA pair
    assert res.exit_code != 0 and "outside the range 6144-200000" in res.stderr
