"""The FSx stand-in answers the real aws CLI as AWS would: strict validation, no password echo,
the calls moto lacks, and a lifecycle to wait for."""
import json
import os
import shutil
import socket
import subprocess
import time

import pytest

from tr4947.lab import fsx

AWS = shutil.which("aws", path=os.path.dirname(os.path.realpath(__file__)) + "/../../.venv/bin") or "aws"
S1, S2 = "subnet-0a1b2c3d4e5f60001", "subnet-0a1b2c3d4e5f60002"
PASSWORD = "Lab-Fsx-Secret-913"


def free_port(host):
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def endpoint():
    host = "127.0.10.51"
    port = free_port(host)
    server = fsx.serve(host, port)
    fsx.CREATE_SECONDS = 1.0
    yield f"http://{host}:{port}"
    server.stop()


def aws(endpoint, *args, region="us-east-2"):
    env = dict(os.environ, **fsx.client_env(endpoint))
    res = subprocess.run([AWS, "fsx", "--region", region, *args], env=env,
                         capture_output=True, text=True, timeout=60)
    return res


def create(endpoint, deployment="MULTI_AZ_1", iops=40000):
    return aws(endpoint, "create-file-system", "--storage-capacity", "2048",
               "--subnet-ids", S1, S2, "--file-system-type", "ONTAP",
               "--ontap-configuration",
               f"DeploymentType={deployment},ThroughputCapacity=2048,PreferredSubnetId={S1},"
               f"FsxAdminPassword={PASSWORD},DiskIopsConfiguration={{Mode=USER_PROVISIONED,Iops={iops}}}")


def test_invalid_deployment_type_is_rejected_like_aws(endpoint):
    res = create(endpoint, deployment="MULTI_AZ_HA_1")
    assert res.returncode != 0
    assert "ValidationException" in res.stderr
    assert "Member must satisfy enum value set" in res.stderr and "MULTI_AZ_1" in res.stderr


def test_iops_outside_awss_bounds_is_rejected(endpoint):
    res = create(endpoint, iops=5_000_000)           # more than 200,000 per HA pair
    assert res.returncode != 0 and "outside the range 6144-200000" in res.stderr


def test_lifecycle_svm_update_and_no_password_echo(endpoint):
    res = create(endpoint)
    assert res.returncode == 0, res.stderr
    assert PASSWORD not in res.stdout
    fs = json.loads(res.stdout)["FileSystem"]
    assert fs["Lifecycle"] == "CREATING"
    fid = fs["FileSystemId"]
    early = aws(endpoint, "create-storage-virtual-machine", "--name", "svmkafkatest",
                "--file-system-id", fid)
    assert early.returncode != 0 and "not AVAILABLE" in early.stderr
    deadline = time.time() + 10
    while True:
        desc = json.loads(aws(endpoint, "describe-file-systems", "--file-system-ids", fid).stdout)
        if desc["FileSystems"][0]["Lifecycle"] == "AVAILABLE" or time.time() > deadline:
            break
        time.sleep(0.3)
    assert desc["FileSystems"][0]["Lifecycle"] == "AVAILABLE"
    assert PASSWORD not in json.dumps(desc)
    assert desc["FileSystems"][0]["OntapConfiguration"]["Endpoints"]["Management"]["IpAddresses"]
    svm = aws(endpoint, "create-storage-virtual-machine", "--name", "svmkafkatest", "--file-system-id", fid)
    assert svm.returncode == 0, svm.stderr
    assert json.loads(svm.stdout)["StorageVirtualMachine"]["Lifecycle"] == "CREATED"
    dup = aws(endpoint, "create-storage-virtual-machine", "--name", "svmkafkatest", "--file-system-id", fid)
    assert dup.returncode != 0 and "already exists" in dup.stderr
    upd = aws(endpoint, "update-file-system", "--storage-capacity", "5120", "--ontap-configuration",
              "ThroughputCapacity=4096,DiskIopsConfiguration={Mode=USER_PROVISIONED,Iops=160000}",
              "--file-system-id", fid)
    assert upd.returncode == 0, upd.stderr
    fs = json.loads(upd.stdout)["FileSystem"]
    assert fs["StorageCapacity"] == 5120 and fs["OntapConfiguration"]["ThroughputCapacity"] == 4096
    shrink = aws(endpoint, "update-file-system", "--storage-capacity", "4096", "--file-system-id", fid)
    assert shrink.returncode != 0 and "at least 10" in shrink.stderr
    # A file system lives in the region it was created in (the TR describes it in another).
    other = aws(endpoint, "describe-file-systems", "--file-system-ids", fid, region="us-east-1")
    assert other.returncode != 0 and "FileSystemNotFound" in other.stderr
