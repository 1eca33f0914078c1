"""HTTPS front end of the ONTAP stand-in: the REST API the TR's Ansible and Python steps call.

    python -m tr4947.lab.ontap.rest --listen 127.0.10.1:443 --state-root DIR

* TLS with a self-signed certificate generated once per lab into
  ``<root>/ontap/rest-cert.pem`` (key ``rest-key.pem``, 0600) for the listen address; clients
  trust it as their CA bundle (``REQUESTS_CA_BUNDLE`` / ``verify=``) instead of switching
  certificate checks off;
* HTTP basic authentication against the hashed logins of ``<root>/ontap/passwords.json`` (``admin`` and
  ``fsxadmin``), compared in constant time; neither the password nor the Authorization
  header is ever logged;
* strict like ONTAP: an unknown query parameter, body field or ``fields`` entry, or a value
  of the wrong type, is a 400 with ONTAP's error envelope; unknown endpoints are 404;
* one request at a time changes state (state.transaction's lock), reads run concurrently;
* logs one line per request (method, path without query values, status) to stderr;
  SIGTERM/SIGINT stop the server and exit 0. The lab orchestrator owns the process.
"""
from __future__ import annotations

import base64
import datetime as _dt
import ipaddress
import json
import logging
import os
import ssl
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

from . import audit, service
from . import bootstrap as _boot
from . import rest_resources as R
from . import state

log = logging.getLogger("tr4947.ontap.rest")

CERT, KEY = "rest-cert.pem", "rest-key.pem"


def cert_file(root: Path) -> Path:
    return Path(root) / "ontap" / CERT


def ensure_certificate(root: Path, address: str, common_name: str = "cluster1") -> Path:
    """A self-signed certificate for ``address`` (IP SAN), made once per lab state dir."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    d = Path(root) / "ontap"
    cert, key_f = d / CERT, d / KEY
    if cert.exists() and key_f.exists():
        return cert
    d.mkdir(parents=True, exist_ok=True)
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name),
                      x509.NameAttribute(NameOID.ORGANIZATION_NAME, "tr4947 lab ONTAP stand-in")])
    now = _dt.datetime.now(_dt.timezone.utc)
    crt = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
           .public_key(key.public_key()).serial_number(x509.random_serial_number())
           .not_valid_before(now - _dt.timedelta(minutes=5))
           .not_valid_after(now + _dt.timedelta(days=365))
           .add_extension(x509.SubjectAlternativeName(
               [x509.IPAddress(ipaddress.ip_address(address))]), critical=False)
           # Self-signed and used as its own trust anchor: a CA certificate that may sign
           # only itself (path length 0).
           .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
           .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True,
                                        content_commitment=False, key_encipherment=False,
                                        data_encipherment=False, key_agreement=False,
                                        crl_sign=False, encipher_only=False,
                                        decipher_only=False), critical=True)
           .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]),
                          critical=False)
           .sign(key, hashes.SHA256()))
    fd = os.open(key_f, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(key.private_bytes(serialization.Encoding.PEM,
                                    serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption()))
    cert.write_bytes(crt.public_bytes(serialization.Encoding.PEM))
    return cert


class _Handler(BaseHTTPRequestHandler):
    server_version = "libzapid-httpd"            # what ONTAP's web server calls itself
    sys_version = ""
    protocol_version = "HTTP/1.1"
    root: Path = Path(".")
    _user = "?"

    # --- plumbing -------------------------------------------------------------------------
    def log_message(self, fmt, *args):           # the default logs the full request line
        pass

    def _send(self, status: int, body: dict | None, extra: dict | None = None) -> None:
        data = json.dumps(body, indent=1).encode() if body is not None else b""
        self.send_response(status)
        self.send_header("Content-Type", "application/hal+json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)
        log.info("%s %s -> %s", self.command, urlsplit(self.path).path, status)

    def _authorized(self) -> bool:
        h = self.headers.get("Authorization", "")
        if not h.lower().startswith("basic "):
            return False
        try:
            user, _, pw = base64.b64decode(h[6:]).decode("utf-8").partition(":")
        except (ValueError, UnicodeDecodeError):
            return False
        ok = _boot.check_password(self.root, user, pw)
        self._user = user
        if not ok:
            log.info("authentication failed for user %r", user)
        return ok

    def _body(self) -> dict:
        n = int(self.headers.get("Content-Length") or 0)
        if not n:
            return {}
        raw = self.rfile.read(n)
        try:
            body = json.loads(raw)
        except ValueError:
            raise R.RestError(400, "Invalid JSON input in the request body.", "262145") from None
        if body is None:
            return {}
        if not isinstance(body, dict):
            raise R.RestError(400, "Invalid JSON input in the request body.", "262145")
        return body

    def _dispatch(self) -> None:
        if not self._authorized():
            if self.headers.get("Content-Length"):
                self.rfile.read(int(self.headers["Content-Length"]))
            self._send(401, {"error": {"message": "User is not authorized.", "code": "6"}},
                       {"WWW-Authenticate": 'Basic realm="ONTAP"'})
            return
        url = urlsplit(self.path)
        query = dict(parse_qsl(url.query, keep_blank_values=True))
        parts = [p for p in url.path.split("/") if p]
        try:
            # Read any body (DELETE may carry "{}"), or it would corrupt the next request
            # on this keep-alive connection.
            body = self._body()
            if body and self.command in ("GET", "DELETE"):
                raise R.unexpected(next(iter(R.flatten(body))))
            if parts[:1] != ["api"]:
                raise R.RestError(404, "API not found", "3")
            status, out, *more = route(self.root, self.command, parts[1:], query, body)
            headers = more[0] if more else {}
        except R.RestError as exc:
            status, out, headers = exc.status, exc.body(), {}
        except Exception as exc:                  # a stand-in bug: say so, do not hang up
            log.exception("internal error")
            status, out, headers = 500, {"error": {
                "message": f"lab stand-in internal error: {exc}", "code": "1"}}, {}
        audit.record(self.root, "rest", self._user, self.client_address[0],
                     f"{self.command} {url.path}", self.command == "GET", status < 400)
        self._send(status, out, headers)

    do_GET = do_POST = do_PATCH = do_DELETE = _dispatch

    def do_OPTIONS(self):
        self._send(200, None, {"Allow": "GET, POST, PATCH, DELETE"})


# --- routing -----------------------------------------------------------------------------
def _collection_get(root: Path, name: str, query: dict) -> dict:
    c = state.load(root)
    col = R.COLLECTIONS[name]
    known = R.known_fields(name)
    fields = R.parse_fields(query.get("fields"), known)
    filters = {k: v for k, v in query.items() if k not in R.CONTROL}
    for k in filters:
        if k not in known:
            raise R.unexpected(k)
    max_records = _int_param(query, "max_records")
    need_space = fields == ["*"] or any(f.split(".")[0] == "space" for f in fields or []) or \
        any(k.split(".")[0] == "space" for k in filters)
    recs = [r for r in col.records(c, root, need_space) if R.matches(r, filters)]
    if query.get("return_records", "true").lower() == "false":
        return {"num_records": len(recs), "_links": {"self": {"href": f"/api/{name}"}}}
    if max_records is not None:
        recs = recs[:max_records]
    return {"records": [R.select(r, fields, col.default) for r in recs],
            "num_records": len(recs), "_links": {"self": {"href": f"/api/{name}"}}}


def _int_param(query: dict, name: str) -> int | None:
    if name not in query:
        return None
    try:
        return int(query[name])
    except ValueError:
        raise R.invalid(name, query[name], "<integer>") from None


def _instance(root: Path, name: str, key: str, query: dict) -> tuple[state.Cluster, dict]:
    c = state.load(root)
    col = R.COLLECTIONS[name]
    path = col.key.split(".")
    fields = R.parse_fields(query.get("fields"), R.known_fields(name))
    for k in query:
        if k not in R.CONTROL:
            raise R.unexpected(k)
    need_space = fields is None or fields == ["*"] or any(f.split(".")[0] == "space" for f in fields)
    for r in col.records(c, root, need_space):
        v = r
        for p in path:
            v = v.get(p) if isinstance(v, dict) else None
        if v == key:
            # An instance GET without fields returns the record's usual fields.
            return c, (r if fields is None else R.select(r, fields, col.default))
    raise R.not_found(col.key)


def _job_response(job: dict, status_ok: int, query: dict) -> tuple[int, dict]:
    body = {"job": {"uuid": job["uuid"],
                    "_links": {"self": {"href": f"/api/cluster/jobs/{job['uuid']}"}}}}
    # With return_timeout the call waits for the job (ours is done) and says so.
    status = status_ok if _int_param(query, "return_timeout") else 202
    return status, body


def _only(query: dict, allowed: set[str]) -> None:
    for k in query:
        if k not in allowed:
            raise R.unexpected(k)


def route(root: Path, method: str, parts: list[str], query: dict, body: dict) -> tuple:
    """(status, body[, headers]) for one request; RestError for ONTAP-style failures."""
    path = "/".join(parts)
    if path == "cluster":
        if method != "GET":
            raise R.RestError(405, "The method is not allowed.", "3")
        c = state.load(root)
        fields = R.parse_fields(query.get("fields"), R.known_fields("cluster"))
        _only(query, R.CONTROL)
        rec = R.cluster_record(c, root)
        return 200, (rec if fields is None else R.select(rec, fields, []))
    for name in R.COLLECTIONS:
        n = len(name.split("/"))
        if parts[:n] != name.split("/"):
            continue
        rest = parts[n:]
        if len(rest) > 1:
            break
        if not rest:
            if method == "GET":
                return 200, _collection_get(root, name, query)
            if method == "POST" and name == "storage/volumes":
                _only(query, {"return_timeout", "return_records"})
                flat = R.validate_body(body, R.VOLUME_FIELDS, "post", name)
                R.check_volume_body(state.load(root), flat, "post")
                made: list[state.Volume] = []
                job = R.run_job(root, "POST /api/storage/volumes",
                                lambda: made.append(R.create_volume(root, flat)))
                status, out = _job_response(job, 201, query)
                if not made:
                    return status, out
                v = made[0]
                if query.get("return_records", "false").lower() == "true":
                    out = {"num_records": 1, "records": [{
                        "uuid": v.uuid, "name": v.name,
                        "_links": {"self": {"href": f"/api/storage/volumes/{v.uuid}"}}}], **out}
                return status, out, {"Location": f"/api/storage/volumes/{v.uuid}"}
            raise R.RestError(405, "The method is not allowed.", "3")
        key = rest[0]
        if name == "cluster/jobs" and method == "GET":
            c = state.load(root)
            j = R.find_job(c, key)
            fields = R.parse_fields(query.get("fields"), R.known_fields(name))
            _only(query, R.CONTROL)
            rec = R.job_record(j)
            return 200, (rec if fields is None else R.select(rec, fields, ["uuid"]))
        if method == "GET":
            return 200, _instance(root, name, key, query)[1]
        if name == "storage/volumes" and method in ("PATCH", "DELETE"):
            _only(query, {"return_timeout"})
            c = state.load(root)
            vol = next((v for v in c.volumes.values() if v.uuid == key), None)
            if vol is None:
                raise R.not_found("uuid")
            if method == "PATCH":
                flat = R.validate_body(body, R.VOLUME_FIELDS, "patch", name)
                R.check_volume_body(c, flat, "patch")
                job = R.run_job(root, f"PATCH /api/storage/volumes/{key}",
                                lambda: R.modify_volume(root, vol, flat))
            else:
                job = R.run_job(root, f"DELETE /api/storage/volumes/{key}",
                                lambda: R.delete_volume(root, vol))
            return _job_response(job, 200, query)
        if name == "protocols/nfs/services" and method == "PATCH":
            _only(query, {"return_timeout"})
            c = state.load(root)
            vs = next((v for v in c.data_vservers() if v.uuid == key), None)
            if vs is None:
                raise R.not_found("svm.uuid")
            flat = R.validate_body(body, R.NFS_FIELDS, "patch", name)
            try:
                R.modify_nfs(root, vs.name, flat)
            except R.CliError as exc:
                raise R.RestError(400, R.cli_message(exc), "3277000", None) from None
            return 200, {}
        raise R.RestError(405, "The method is not allowed.", "3")
    raise R.RestError(404, "API not found", "3")


# --- server ------------------------------------------------------------------------------
class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def make_server(address: str, port: int, root: Path) -> _Server:
    handler = type("Handler", (_Handler,), {"root": root})
    httpd = _Server((address, port), handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    cert = cert_file(root)
    ctx.load_cert_chain(cert, cert.with_name(KEY))
    httpd.socket = ctx.wrap_socket(httpd.socket, server_side=True)
    return httpd


def serve(address: str, port: int, root: Path) -> None:
    _boot.ensure_passwords(root)
    c = state.load(root)
    ensure_certificate(root, address, c.name)
    httpd = make_server(address, port, root)
    log.info("ONTAP stand-in REST API listening on https://%s:%s/api (state %s)",
             address, port, root)
    service.serve_forever(httpd)
    log.info("stopped")


def main(argv: list[str] | None = None) -> int:
    return service.run("python -m tr4947.lab.ontap.rest", "ONTAP REST API stand-in over HTTPS",
                       "127.0.10.1:443", serve, argv)


if __name__ == "__main__":
    sys.exit(main())
