"""Lab stand-in for Amazon FSx for NetApp ONTAP: moto's server plus a small extension.

moto implements create-file-system and describe-file-systems for FSx, but not the calls the
TR's FSx chapter also uses (create-storage-virtual-machine, update-file-system), and it is
lenient where AWS is strict. This module is the named extension ("tr4947 FSx ONTAP
extension for moto"):

* every FSx request is validated against botocore's own service model (enums, min/max,
  required members) and rejected with AWS's ``ValidationException`` wording, so a value the
  real service refuses is refused here too;
* file systems report ``Lifecycle`` (CREATING for a few seconds, then AVAILABLE, as the TR's
  "wait until AVAILABLE" step expects), ONTAP endpoints pointing at the lab's ONTAP stand-in,
  and never echo ``FsxAdminPassword`` (moto does; AWS does not);
* CreateStorageVirtualMachine / DescribeStorageVirtualMachines / UpdateFileSystem are added;
* requests must be signed (SigV4) with the access key the stand-in makes at start-up (moto's
  IAM access control, on from the first request): an unsigned or wrongly signed request is
  refused as AWS refuses it, so only a holder of the lab's key can create a file system (and
  with it set the ONTAP stand-in's fsxadmin password).

The real ``aws`` CLI reaches it through ``AWS_ENDPOINT_URL``, so the TR's commands run
unchanged. In the lab it runs on its own host (`python -m tr4947.lab.fsx --listen ...`); the
key lands in ``<state root>/control/aws-credentials.json`` (0600) for the control node.
"""
from __future__ import annotations

import argparse
import gzip
import json
import re
import signal
import sys
import threading
import time
import uuid
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..atomic import write_json
from ..netguard import LAB_RANGE

CREATE_SECONDS = 3.0          # how long a new file system stays CREATING
#: The storage stand-in's management address: the file systems' management endpoint. The
#: n-th SVM created through the FSx API gets data LIF <first three octets>.2<n> (the storage
#: host answers for its whole /24).
LAB_MGMT_ADDRESS = "198.18.10.1"
CREDENTIALS = Path("control") / "aws-credentials.json"

#: The lab ONTAP stand-in behind the file systems (its state root), when linked by serve():
#: the FsxAdminPassword becomes fsxadmin's login there and SVMs become real SVMs.
_ontap_root: Path | None = None


class ValidationError(Exception):
    pass


# --- strictness: botocore's model ------------------------------------------------------
@lru_cache(maxsize=1)
def _model() -> dict[str, Any]:
    import botocore
    base = Path(botocore.__file__).parent / "data" / "fsx"
    service = sorted(base.glob("*/service-2.json*"))[-1]
    raw = gzip.open(service).read() if service.suffix == ".gz" else service.read_bytes()
    return json.loads(raw)


def _camel_path(path: list[str]) -> str:
    return ".".join(p[:1].lower() + p[1:] for p in path)


def validate(operation: str, params: dict[str, Any]) -> None:
    """Raise ValidationError like AWS for enum/range/required violations of ``operation``."""
    model = _model()
    op = model["operations"].get(operation)
    if op is None:
        raise ValidationError(f"unknown operation {operation}")
    errors: list[str] = []
    _check(model["shapes"], op["input"]["shape"], params, [], errors)
    if errors:
        n = len(errors)
        raise ValidationError(f"{n} validation error{'s' if n > 1 else ''} detected: "
                              + "; ".join(errors))


def _check(shapes, shape_name, value, path, errors) -> None:
    shape = shapes[shape_name]
    kind = shape["type"]
    where = _camel_path(path) or shape_name
    if kind == "structure":
        if not isinstance(value, dict):
            return
        for req in shape.get("required", []):
            if req not in value:
                errors.append(f"Value null at '{_camel_path(path + [req])}' failed to satisfy "
                              f"constraint: Member must not be null")
        for k, v in value.items():
            if k in shape["members"]:
                _check(shapes, shape["members"][k]["shape"], v, path + [k], errors)
    elif kind == "list" and isinstance(value, list):
        for i, item in enumerate(value):
            _check(shapes, shape["member"]["shape"], item, path + [f"{i + 1}"], errors)
    elif kind == "string" and isinstance(value, str):
        if "enum" in shape and value not in shape["enum"]:
            errors.append(f"Value '{value}' at '{where}' failed to satisfy constraint: "
                          f"Member must satisfy enum value set: [{', '.join(shape['enum'])}]")
    elif kind in ("integer", "long") and isinstance(value, int):
        if "min" in shape and value < shape["min"]:
            errors.append(f"Value '{value}' at '{where}' failed to satisfy constraint: "
                          f"Member must have value greater than or equal to {shape['min']}")
        if "max" in shape and value > shape["max"]:
            errors.append(f"Value '{value}' at '{where}' failed to satisfy constraint: "
                          f"Member must have value less than or equal to {shape['max']}")


# --- the moto extension ----------------------------------------------------------------
_svms: dict[str, dict[str, Any]] = {}
_fs_meta: dict[str, dict[str, Any]] = {}       # per file system: created, admin actions


def _ontap_view(fs) -> dict[str, Any]:
    """OntapConfiguration as AWS describes it: no password, with endpoints."""
    conf = dict(fs.ontap_configuration or {})
    conf.pop("FsxAdminPassword", None)
    conf.setdefault("Endpoints", {
        "Management": {"DNSName": f"management.{fs.file_system_id}.fsx.lab.internal",
                       "IpAddresses": [LAB_MGMT_ADDRESS]},
        "Intercluster": {"DNSName": f"intercluster.{fs.file_system_id}.fsx.lab.internal",
                         "IpAddresses": [LAB_MGMT_ADDRESS]}})
    return conf


def _fs_dict(fs) -> dict[str, Any]:
    d = fs.to_dict()
    meta = _fs_meta.setdefault(fs.file_system_id, {"created": time.time(), "actions": []})
    d["Lifecycle"] = "CREATING" if time.time() - meta["created"] < CREATE_SECONDS else "AVAILABLE"
    d["CreationTime"] = meta["created"]
    if fs.ontap_configuration is not None:
        d["OntapConfiguration"] = _ontap_view(fs)
    if meta["actions"]:
        d["AdministrativeActions"] = meta["actions"]
    return d


def check_iops(capacity_gib: int, conf: dict[str, Any]) -> None:
    """AWS's documented bounds for user-provisioned SSD IOPS (botocore's model has none):
    at least 3 IOPS per GiB of capacity per HA pair, at most 200,000 per HA pair."""
    disk = conf.get("DiskIopsConfiguration") or {}
    if disk.get("Mode") != "USER_PROVISIONED" or "Iops" not in disk:
        return
    pairs = conf.get("HAPairs", 1)
    low, high = capacity_gib * 3 * pairs, 200_000 * pairs
    if not low <= disk["Iops"] <= high:
        raise ValueError(f"The requested SSD IOPS {disk['Iops']} is outside the range "
                         f"{low}-{high} allowed for {capacity_gib} GiB and {pairs} HA pair(s).")


def install() -> None:
    """Patch moto's FSx response class. Idempotent."""
    from moto.core.exceptions import JsonRESTError
    from moto.fsx.responses import FSxResponse

    if getattr(FSxResponse, "_tr4947", False):
        return

    class AwsValidation(JsonRESTError):
        def __init__(self, message):
            super().__init__("ValidationException", message)

    class BadRequest(JsonRESTError):
        def __init__(self, message):
            super().__init__("BadRequest", message)

    class NotFound(JsonRESTError):
        def __init__(self, what, message):
            super().__init__(what, message)

    original_call = FSxResponse.call_action

    def call_action(self):
        target = self.headers.get("X-Amz-Target", "")
        operation = target.rsplit(".", 1)[-1]
        try:
            params = json.loads(self.body or "{}")
            validate(operation, params)
        except ValidationError as exc:
            raise AwsValidation(str(exc))
        return original_call(self)

    def create_file_system(self):
        params = json.loads(self.body)
        if params.get("OntapConfiguration"):
            try:
                check_iops(params.get("StorageCapacity", 0), params["OntapConfiguration"])
            except ValueError as exc:
                raise BadRequest(str(exc))
        fs = self.fsx_backend.create_file_system(
            client_request_token=params.get("ClientRequestToken"),
            file_system_type=params.get("FileSystemType"),
            storage_capacity=params.get("StorageCapacity"),
            storage_type=params.get("StorageType", "SSD"),
            subnet_ids=params.get("SubnetIds"),
            security_group_ids=params.get("SecurityGroupIds"),
            tags=params.get("Tags"), kms_key_id=params.get("KmsKeyId"),
            windows_configuration=params.get("WindowsConfiguration"),
            lustre_configuration=params.get("LustreConfiguration"),
            ontap_configuration=params.get("OntapConfiguration"),
            file_system_type_version=params.get("FileSystemTypeVersion"),
            open_zfs_configuration=params.get("OpenZFSConfiguration"))
        _fs_meta[fs.file_system_id] = {"created": time.time(), "actions": []}
        password = (params.get("OntapConfiguration") or {}).get("FsxAdminPassword")
        if _ontap_root is not None and password:
            from .ontap import bootstrap
            bootstrap.set_password(_ontap_root, "fsxadmin", password)
        return json.dumps({"FileSystem": _fs_dict(fs)})

    def describe_file_systems(self):
        params = json.loads(self.body or "{}")
        ids = params.get("FileSystemIds")
        found = [fs for fid, fs in self.fsx_backend.file_systems.items() if not ids or fid in ids]
        missing = [i for i in ids or [] if i not in self.fsx_backend.file_systems]
        if missing:
            raise NotFound("FileSystemNotFound", f"File system '{missing[0]}' does not exist.")
        return json.dumps({"FileSystems": [_fs_dict(fs) for fs in found]})

    def _file_system(self, fid):
        fs = self.fsx_backend.file_systems.get(fid)
        if fs is None:
            raise NotFound("FileSystemNotFound", f"File system '{fid}' does not exist.")
        return fs

    def create_storage_virtual_machine(self):
        params = json.loads(self.body)
        fs = _file_system(self, params["FileSystemId"])
        if fs.file_system_type != "ONTAP":
            raise BadRequest("Storage virtual machines exist only on ONTAP file systems.")
        if _fs_dict(fs)["Lifecycle"] != "AVAILABLE":
            raise BadRequest(f"File system '{fs.file_system_id}' is not AVAILABLE yet.")
        name = params["Name"]
        if not re.fullmatch(r"[a-zA-Z0-9_]{1,47}", name):
            raise AwsValidation(f"Value '{name}' at 'name' failed to satisfy constraint: "
                                "Member must satisfy regular expression pattern: ^[^\\u0000\\u0085\\u2028\\u2029\\r\\n]{1,47}$")
        if any(s["Name"] == name and s["FileSystemId"] == fs.file_system_id for s in _svms.values()):
            raise BadRequest(f"A storage virtual machine named '{name}' already exists.")
        svm_id = f"svm-{uuid.uuid4().hex[:17]}"
        lif_address = f"{LAB_MGMT_ADDRESS.rsplit('.', 1)[0]}.2{len(_svms) + 1}"
        if _ontap_root is not None:
            from .ontap import bootstrap, state
            with state.transaction(_ontap_root) as cluster:
                bootstrap.add_data_vserver(cluster, _ontap_root, name, lifs=[
                    {"name": f"{name}_nfs_1", "address": lif_address}])
        svm = {"StorageVirtualMachineId": svm_id, "Name": name, "FileSystemId": fs.file_system_id,
               "Lifecycle": "CREATED", "Subtype": "DEFAULT", "UUID": str(uuid.uuid4()),
               "CreationTime": time.time(),
               "RootVolumeSecurityStyle": params.get("RootVolumeSecurityStyle", "UNIX"),
               "ResourceARN": fs.resource_arn.replace(":file-system/", ":storage-virtual-machine/")
               + f"/{svm_id}",
               "Endpoints": {"Management": {"IpAddresses": [LAB_MGMT_ADDRESS]},
                             "Nfs": {"IpAddresses": [lif_address]}}}
        _svms[svm_id] = svm
        return json.dumps({"StorageVirtualMachine": svm})

    def describe_storage_virtual_machines(self):
        params = json.loads(self.body or "{}")
        ids = params.get("StorageVirtualMachineIds")
        return json.dumps({"StorageVirtualMachines":
                           [s for i, s in _svms.items() if not ids or i in ids]})

    def update_file_system(self):
        params = json.loads(self.body)
        fs = _file_system(self, params["FileSystemId"])
        new_cap = params.get("StorageCapacity")
        if new_cap is not None:
            # AWS: capacity can only grow, by at least 10 percent.
            if new_cap < fs.storage_capacity * 1.1:
                raise BadRequest(f"The new storage capacity {new_cap} GiB must be at least 10 "
                                 f"percent larger than the current {fs.storage_capacity} GiB.")
            fs.storage_capacity = new_cap
        upd = params.get("OntapConfiguration") or {}
        if upd:
            conf = dict(fs.ontap_configuration or {})
            for key in ("ThroughputCapacity", "DiskIopsConfiguration", "FsxAdminPassword",
                        "WeeklyMaintenanceStartTime", "AutomaticBackupRetentionDays"):
                if key in upd:
                    conf[key] = upd[key]
            try:
                check_iops(fs.storage_capacity, conf)
            except ValueError as exc:
                raise BadRequest(str(exc))
            fs.ontap_configuration = conf
        meta = _fs_meta.setdefault(fs.file_system_id, {"created": time.time(), "actions": []})
        meta["actions"].append({"AdministrativeActionType": "FILE_SYSTEM_UPDATE",
                                "Status": "IN_PROGRESS", "RequestTime": time.time(),
                                "TargetFileSystemValues": {
                                    "StorageCapacity": fs.storage_capacity,
                                    "OntapConfiguration": _ontap_view(fs)}})
        return json.dumps({"FileSystem": _fs_dict(fs)})

    FSxResponse.call_action = call_action
    FSxResponse.create_file_system = create_file_system
    FSxResponse.describe_file_systems = describe_file_systems
    FSxResponse.create_storage_virtual_machine = create_storage_virtual_machine
    FSxResponse.describe_storage_virtual_machines = describe_storage_virtual_machines
    FSxResponse.update_file_system = update_file_system
    FSxResponse._tr4947 = True


# --- server ----------------------------------------------------------------------------
def _lab_user() -> dict[str, str]:
    """An IAM user with an access key, allowed every FSx action, in moto's IAM backend: the
    only identity whose signed requests the stand-in accepts."""
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.iam.models import iam_backends
    iam = iam_backends[DEFAULT_ACCOUNT_ID]["aws"]
    iam.create_user("us-east-1", "tr4947-lab")
    iam.put_user_policy("tr4947-lab", "fsx", json.dumps({
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": "fsx:*", "Resource": "*"}]}))
    key = iam.create_access_key("tr4947-lab")
    return {"AWS_ACCESS_KEY_ID": key.access_key_id,
            "AWS_SECRET_ACCESS_KEY": key.secret_access_key}


def write_credentials(root: Path, creds: dict[str, str]) -> Path:
    return write_json(Path(root) / CREDENTIALS, creds, mode=0o600, indent=None)


def client_env(endpoint: str, root: Path) -> dict[str, str]:
    """Environment for the real aws CLI / boto3 to talk to the lab stand-in, nothing else."""
    creds = json.loads((Path(root) / CREDENTIALS).read_text())
    return {"AWS_ENDPOINT_URL": endpoint, **creds, "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_EC2_METADATA_DISABLED": "true", "AWS_PAGER": ""}


def serve(host: str, port: int, ontap_root: Path | None = None, auth: bool = True):
    """Start moto's threaded server with the extension; returns (server, credentials); call
    server.stop(). With ``ontap_root`` (the lab state root) the file systems are backed by the
    lab's ONTAP stand-in: fsxadmin's password and the SVMs land there. With ``auth`` every
    request must be signed with the returned credentials."""
    global _ontap_root
    import logging
    from moto import settings
    from moto.server import ThreadedMotoServer
    install()
    # One access-log line per request would land in notebook output (volatile timestamps).
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    _ontap_root = Path(ontap_root) if ontap_root else None
    creds = _lab_user()
    if auth:
        settings.INITIAL_NO_AUTH_ACTION_COUNT = 0
    server = ThreadedMotoServer(ip_address=host, port=port, verbose=False)
    server.start()
    return server, creds


def main(argv=None) -> int:
    global LAB_MGMT_ADDRESS
    import ipaddress
    ap = argparse.ArgumentParser(prog="python -m tr4947.lab.fsx",
                                 description="FSx for ONTAP lab stand-in (moto + extension)")
    ap.add_argument("--listen", default="198.18.20.1:80", metavar="ADDR:PORT")
    ap.add_argument("--state-root", type=Path, required=True,
                    help="the lab state dir: the ONTAP stand-in behind the file systems, and "
                         "where the access key is written (control/aws-credentials.json)")
    ap.add_argument("--management", default=LAB_MGMT_ADDRESS,
                    help="the ONTAP stand-in's management address (the file systems' endpoint)")
    args = ap.parse_args(argv)
    host, _, port = args.listen.rpartition(":")
    addr = ipaddress.ip_address(host)
    if not (addr.is_loopback or addr in LAB_RANGE):
        ap.error(f"--listen {args.listen}: the lab listens on its own network "
                 f"({LAB_RANGE}) or loopback only")
    LAB_MGMT_ADDRESS = args.management
    server, creds = serve(host, int(port), ontap_root=args.state_root)
    write_credentials(args.state_root, creds)
    print(f"FSx stand-in (moto + tr4947 extension) on http://{args.listen}, signed requests "
          "only", file=sys.stderr, flush=True)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    stop.wait()
    server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
