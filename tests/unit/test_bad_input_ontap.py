"""Broken and hostile input to the ONTAP stand-in is refused clearly, and leaves nothing
behind.

One table of cases over the clustershell (parser and commands) and the REST API. Each case
names the input and the refusal expected (a piece of ONTAP's error text; for REST also the
HTTP status). After each case:

* the state JSON is byte-for-byte what it was (for a REST request refused by its job, what
  it was plus that one failed job: ONTAP records failed jobs too);
* nothing next to the state root changed: a sentinel directory ``victim`` (mode 0750, one
  file) and everything else beside the root keep their paths, modes and mtimes;
* inside the root, no volume directory appeared, vanished or changed mode.

The last test prints ``bad-input (ontap): N cases, N refused as expected``."""
from __future__ import annotations

import json
import os
import socket
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests

from tr4947.lab.ontap import bootstrap, rest, session, state

ADDR = "127.0.0.1"
RESULTS: dict[str, bool] = {}


@dataclass
class Case:
    id: str
    request: object          # clustershell line, or (method, path, json body | raw bytes)
    expect: str              # part of the error text
    status: int | None = None    # REST: HTTP status; None for the clustershell
    job: bool = False            # REST: accepted, then refused by its job


def cli(id, line, expect):
    return Case(id, line, expect)


def api(id, method, path, body, status, expect, job=False):
    return Case(id, (method, path, body), expect, status, job)


ADV = "set -privilege advanced -confirmations off; "
FG = {"svm": {"name": "svm_kafka"}, "aggregates": [{"name": "aggr1"}]}
CASES = [
    # --- names -----------------------------------------------------------------------------
    # <root>/volumes/svm_kafka/../../../victim is the sentinel beside the root
    cli("traversal-volume", "volume create -vserver svm_kafka -volume ../../../victim "
        "-aggregate aggr1 -unix-permissions 0777", 'invalid value for field "-volume'),
    cli("absolute-volume", "volume create -vserver svm_kafka -volume /abs -aggregate aggr1",
        'invalid value for field "-volume'),
    cli("slash-volume", "volume create -vserver svm_kafka -volume a/b -aggregate aggr1",
        'invalid value for field "-volume'),
    cli("space-volume", 'volume create -vserver svm_kafka -volume "a b" -aggregate aggr1',
        '"a b" is an invalid value'),
    cli("semicolon-volume", 'volume create -vserver svm_kafka -volume "a;b" -aggregate aggr1',
        '"a;b" is an invalid value'),
    cli("quote-volume", 'volume create -vserver svm_kafka -volume a"b -aggregate aggr1',
        "Unmatched quote"),
    cli("newline-volume", 'volume create -vserver svm_kafka -volume "a\nb" -aggregate aggr1',
        '"a\\nb" is an invalid value'),
    cli("nul-volume", 'volume create -vserver svm_kafka -volume "a\x00b" -aggregate aggr1',
        '"a\\x00b" is an invalid value'),
    cli("too-long-volume", f"volume create -vserver svm_kafka -volume {'v' * 204} "
        "-aggregate aggr1", "at most 203 characters"),
    cli("too-long-flexgroup", f"volume create -vserver svm_kafka -volume {'g' * 198} "
        "-aggr-list aggr1", "197 for a FlexGroup"),
    cli("digit-first-volume", "volume create -vserver svm_kafka -volume 1vol -aggregate aggr1",
        "must start with a letter or an underscore"),
    cli("punctuation-volume", "volume create -vserver svm_kafka -volume 1bad-name! "
        "-aggregate aggr1", '"1bad-name!" is an invalid value'),
    cli("traversal-vserver", "volume create -vserver ../x -volume v -aggregate aggr1",
        'invalid value for field "-vserver <vserver name>"'),
    cli("traversal-aggregate", "volume create -vserver svm_kafka -volume v -aggregate ../../etc",
        'invalid value for field "-aggregate <aggregate name>"'),
    cli("traversal-aggr-list", "volume create -vserver svm_kafka -volume v -aggr-list aggr1,../x",
        'invalid value for field "-aggr-list'),
    cli("traversal-export-policy", "vserver export-policy create -vserver svm_kafka "
        "-policyname ../p", 'invalid value for field "-policyname'),
    cli("traversal-junction", "volume create -vserver svm_kafka -volume v -aggregate aggr1 "
        "-junction-path /a/../../b", 'Invalid junction path "/a/../../b"'),
    cli("relative-junction", "volume create -vserver svm_kafka -volume v -aggregate aggr1 "
        "-junction-path v", 'Junction paths must begin with "/"'),
    cli("taken-junction", "volume create -vserver svm_kafka -volume v -aggregate aggr1 "
        "-junction-path /existing", 'already in use by volume "existing"'),
    cli("unknown-snapshot-policy", "volume create -vserver svm_kafka -volume v -aggregate aggr1 "
        "-snapshot-policy hourly_forever", 'Snapshot policy "hourly_forever" does not exist'),
    # --- sizes -----------------------------------------------------------------------------
    cli("size-beyond-max", "volume create -vserver svm_kafka -volume v -aggregate aggr1 "
        "-size 999PB -space-guarantee none", "Requested size is too large (maximum 100TB)"),
    cli("size-beyond-aggregate", "volume create -vserver svm_kafka -volume v -aggregate aggr1 "
        "-size 9TB", 'not enough space in aggregate "aggr1"'),
    cli("flexgroup-beyond-aggregate", "volume create -vserver svm_kafka -volume v "
        "-aggr-list aggr1,aggr1 -size 20TB", 'not enough space in aggregate "aggr1"'),
    cli("size-negative", "volume create -vserver svm_kafka -volume v -aggregate aggr1 -size -5g",
        '"-5g" is an invalid value for field "-size'),
    cli("size-zero", "volume create -vserver svm_kafka -volume v -aggregate aggr1 -size 0",
        "Requested size is too small (minimum 20MB)"),
    cli("size-garbage-unit", "volume create -vserver svm_kafka -volume v -aggregate aggr1 "
        "-size 10XB", '"10XB" is an invalid value for field "-size'),
    cli("shrink-below-minimum", "volume size -vserver svm_kafka -volume existing -new-size 1k",
        "Requested size is too small"),
    cli("grow-beyond-aggregate", "volume size -vserver svm_kafka -volume existing -new-size +8TB",
        'not enough space in aggregate "aggr1"'),
    cli("thick-on-thin-overcommit", "volume modify -vserver svm_kafka -volume thin_big "
        "-space-guarantee volume", 'not enough space in aggregate "aggr1"'),
    cli("thick-on-object-store", "volume create -vserver svm_kafka -volume v -aggregate aggr_fp "
        "-space-guarantee volume", 'Aggregates with attached object stores cannot contain'),
    cli("multiplier-zero", "volume create -vserver svm_kafka -volume v -aggr-list aggr1 "
        "-aggr-list-multiplier 0", '"-aggr-list-multiplier" is out of range'),
    # --- parameters ------------------------------------------------------------------------
    cli("unknown-parameter", "volume create -vserver svm_kafka -volume v -aggregate aggr1 "
        "-colour blue", 'invalid argument "-colour"'),
    cli("misspelled-parameter", "volume create -vserver svm_kafka -volume v -aggregate aggr1 "
        "-sise 1g", 'invalid argument "-sise"'),
    cli("advanced-parameter-at-admin", "volume create -vserver svm_kafka -volume v "
        "-aggregate aggr1 -is-preserve-unlink-enabled true",
        'invalid argument "-is-preserve-unlink-enabled"'),
    cli("parameter-twice", "volume create -vserver svm_kafka -volume v -aggregate aggr1 "
        "-size 1g -size 2g", 'Parameter "-size" was specified more than once'),
    cli("missing-required", "volume create -vserver svm_kafka -aggregate aggr1",
        "Missing required parameter: -volume"),
    cli("bad-permissions", "volume create -vserver svm_kafka -volume v -aggregate aggr1 "
        "-unix-permissions 0999", 'is an invalid value for field "-unix-permissions'),
    cli("encryption-without-key-manager", "volume create -vserver svm_kafka -volume v "
        "-aggregate aggr1 -encrypt true", "key manager"),
    # --- wildcards, the root volume, what does not exist -----------------------------------
    cli("wildcard-offlines-root", "volume modify -vserver svm_kafka -volume * -state offline",
        "-volume !svm_kafka_root"),
    cli("wildcard-restricts-root", "volume modify -volume *root -state restricted",
        "is the root volume of Vserver"),
    cli("query-matches-nothing", "volume modify -vserver svm_kafka -volume nothing* "
        "-state offline", "There are no entries matching your query."),
    cli("offline-root", "volume offline -vserver svm_kafka -volume svm_kafka_root",
        "is the root volume of Vserver"),
    cli("unmount-root", "volume unmount -vserver svm_kafka -volume svm_kafka_root",
        "cannot be unmounted"),
    cli("delete-root", ADV + "volume delete -vserver svm_kafka -volume svm_kafka_root",
        'Cannot delete Vserver root volume "svm_kafka_root"'),
    cli("delete-online", ADV + "volume delete -vserver svm_kafka -volume existing",
        "must be offline to be deleted"),
    cli("delete-nonexistent", ADV + "volume delete -vserver svm_kafka -volume nosuch",
        "doesn't exist"),
    cli("duplicate-create", "volume create -vserver svm_kafka -volume existing -aggregate aggr1",
        'Duplicate volume name "existing"'),
    cli("unknown-vserver", "volume create -vserver svm_nope -volume v -aggregate aggr1",
        'Vserver "svm_nope" does not exist'),
    # --- storage failover ------------------------------------------------------------------
    cli("failover-traversal-node", "storage failover takeover -ofnode ../../victim",
        'is an invalid value for field "-ofnode {<nodename>|local}"'),
    cli("failover-unknown-node", "storage failover giveback -ofnode cluster1-09",
        'is an invalid value for field "-ofnode'),
    cli("failover-no-node", "storage failover takeover -option immediate",
        'Specify exactly one of "-ofnode" or "-bynode"'),
    cli("failover-both-nodes", "storage failover takeover -ofnode cluster1-01 "
        "-bynode cluster1-02", 'Specify exactly one of "-ofnode" or "-bynode"'),
    cli("failover-bad-option", "storage failover takeover -ofnode cluster1-01 -option soft",
        '"soft" is an invalid value for field "-option'),
    cli("failover-giveback-not-taken-over", "storage failover giveback -ofnode cluster1-01",
        "is not in takeover state"),
    cli("failover-show-bad-field", "storage failover show -fields colour",
        'invalid argument "colour" for "-fields"'),
    # --- REST ------------------------------------------------------------------------------
    api("rest-traversal-name", "POST", "storage/volumes", {**FG, "name": "../../../victim"}, 400,
        'invalid for field "name"'),
    api("rest-absolute-name", "POST", "storage/volumes", {**FG, "name": "/abs"}, 400,
        "must start with a letter"),
    api("rest-nul-name", "POST", "storage/volumes", {**FG, "name": "a\x00b"}, 400,
        'The value "a\\x00b" is invalid'),
    api("rest-too-long-name", "POST", "storage/volumes", {**FG, "name": "v" * 204}, 400,
        "at most 203 characters"),
    api("rest-traversal-svm", "POST", "storage/volumes",
        {**FG, "name": "v", "svm": {"name": "../x"}}, 400, 'invalid for field "svm.name"'),
    api("rest-traversal-aggregate", "POST", "storage/volumes",
        {**FG, "name": "v", "aggregates": [{"name": "../../etc"}]}, 400,
        'invalid for field "aggregates.name"'),
    api("rest-traversal-junction", "POST", "storage/volumes",
        {**FG, "name": "v", "nas": {"path": "/../../victim"}}, 400, "Invalid junction path"),
    api("rest-size-wrong-type", "POST", "storage/volumes", {**FG, "name": "v", "size": "10TB"},
        400, 'is invalid for field "size"'),
    api("rest-unknown-field", "POST", "storage/volumes", {**FG, "name": "v", "colour": "blue"},
        400, 'Unexpected argument "colour"'),
    api("rest-missing-name", "POST", "storage/volumes", FG, 400,
        'Missing value for required field "name"'),
    api("rest-missing-aggregates", "POST", "storage/volumes",
        {"name": "v", "svm": {"name": "svm_kafka"}}, 400, "aggregates"),
    api("rest-body-not-object", "POST", "storage/volumes", b'["v"]', 400,
        "Invalid JSON input"),
    api("rest-body-not-json", "POST", "storage/volumes", b"{name: v", 400, "Invalid JSON input"),
    api("rest-encryption", "POST", "storage/volumes",
        {**FG, "name": "v", "encryption": {"enabled": True}}, 400, "key manager"),
    api("rest-rename", "PATCH", "storage/volumes/{existing}", {"name": "other"}, 400,
        'cannot be set in this operation'),
    api("rest-permissions-wrong-type", "PATCH", "storage/volumes/{existing}",
        {"nas": {"unix_permissions": "777"}}, 400, 'invalid for field "nas.unix_permissions"'),
    api("rest-delete-unknown-uuid", "DELETE",
        "storage/volumes/00000000-0000-0000-0000-000000000000", None, 404, "entry doesn't exist"),
    api("rest-patch-unknown-uuid", "PATCH",
        "storage/volumes/00000000-0000-0000-0000-000000000000", {"size": 1 << 30}, 404,
        "entry doesn't exist"),
    api("rest-size-beyond-aggregate", "POST", "storage/volumes",
        {**FG, "name": "v", "size": 9 << 40}, 202, 'not enough space in aggregate "aggr1"',
        job=True),
    api("rest-grow-beyond-aggregate", "PATCH", "storage/volumes/{existing}",
        {"size": 9 << 40}, 202, 'not enough space in aggregate "aggr1"', job=True),
    api("rest-duplicate", "POST", "storage/volumes", {**FG, "name": "existing"}, 202,
        'Duplicate volume name "existing"', job=True),
    api("rest-offline-root", "PATCH", "storage/volumes/{root}", {"state": "offline"}, 202,
        "is the root volume of Vserver", job=True),
    api("rest-delete-root", "DELETE", "storage/volumes/{root}", None, 202,
        'Cannot delete Vserver root volume', job=True),
]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    top = tmp_path_factory.mktemp("bad-input")
    root = top / "state"
    bootstrap.ensure_passwords(root, {"admin": "test-admin-pw"})
    bootstrap.bootstrap(root, "cluster1", ["cluster1-01", "cluster1-02"],
                        [{"name": "aggr1", "node": "cluster1-01", "size": "8TB"},
                         {"name": "aggr_fp", "node": "cluster1-02", "size": "2TB",
                          "object_store": "lab_object_store"}],
                        ["svm_kafka"],
                        [{"name": "lif_kafka_1", "address": "127.0.0.11", "node": "cluster1-01",
                          "vserver": "svm_kafka"}])
    s = session.Session(root)
    for line in ["volume create -vserver svm_kafka -volume existing -aggregate aggr1 -size 100g "
                 "-junction-path /existing",
                 "volume create -vserver svm_kafka -volume thin_big -aggregate aggr1 -size 20TB "
                 "-space-guarantee none"]:
        r = s.run_sync(line)
        assert not r.error, r.output
    victim = top / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("must survive")
    os.chmod(victim, 0o750)
    rest.ensure_certificate(root, ADDR, "cluster1")
    with socket.socket() as sock:
        sock.bind((ADDR, 0))
        port = sock.getsockname()[1]
    httpd = rest.make_server(ADDR, port, root)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    http = requests.Session()
    http.trust_env = False
    http.verify = str(rest.cert_file(root))
    http.auth = ("admin", "test-admin-pw")
    c = state.load(root)
    uuids = {"existing": c.volumes["svm_kafka:existing"].uuid,
             "root": c.volumes["svm_kafka:svm_kafka_root"].uuid}
    yield {"top": top, "root": root, "http": http, "uuids": uuids,
           "base": f"https://{ADDR}:{port}/api/"}
    httpd.shutdown()
    httpd.server_close()


def _tree(path: Path, skip: Path | None = None, times: bool = True) -> dict:
    out = {}
    for d, dirs, files in os.walk(path):
        if skip is not None and Path(d) == skip.parent:
            dirs[:] = [x for x in dirs if Path(d) / x != skip]
        for name in dirs + files:
            p = Path(d) / name
            st = os.lstat(p)
            out[str(p.relative_to(path))] = (st.st_mode, st.st_mtime_ns if times else 0,
                                             st.st_size if name in files else 0)
    return out


def _snapshot(lab) -> dict:
    root = lab["root"]
    return {"outside": _tree(lab["top"], skip=root),
            "volumes": _tree(state.volumes_dir(root)),
            "state": json.loads((root / "ontap" / "state.json").read_text())}


def _without_jobs(st: dict) -> dict:
    return {k: v for k, v in st.items() if k not in ("jobs", "next_job_id")}


def _send(lab, case: Case):
    method, path, body = case.request
    path = path.format(**lab["uuids"])
    kw = {"data": body, "headers": {"Content-Type": "application/json"}} \
        if isinstance(body, bytes) else ({"json": body} if body is not None else {})
    return lab["http"].request(method, lab["base"] + path, **kw)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_refused_and_nothing_changed(lab, case):
    RESULTS[case.id] = False
    before = _snapshot(lab)
    if case.status is None:
        r = session.Session(lab["root"]).run_sync(case.request)
        assert r.error, f"accepted: {case.request!r}\n{r.output}"
        assert case.expect in r.output, r.output
        assert "Error: " in r.output
        after = _snapshot(lab)
        assert after["state"] == before["state"]
    else:
        resp = _send(lab, case)
        assert resp.status_code == case.status, resp.text
        after = _snapshot(lab)
        if case.job:
            job = lab["http"].get(lab["base"] + resp.json()["job"]["_links"]["self"]["href"]
                                  .removeprefix("/api/")).json()
            assert job["state"] == "failure" and case.expect in job["message"], job
            assert _without_jobs(after["state"]) == _without_jobs(before["state"])
            assert len(after["state"]["jobs"]) == min(50, len(before["state"]["jobs"]) + 1)
        else:
            err = resp.json()["error"]
            assert case.expect in err["message"] and err["code"], err
            assert after["state"] == before["state"]
    assert after["outside"] == before["outside"], "something beside the state root changed"
    assert after["volumes"] == before["volumes"], "a volume directory changed"
    victim = lab["top"] / "victim"
    assert (victim / "keep.txt").read_text() == "must survive"
    assert oct(victim.stat().st_mode & 0o777) == oct(0o750)
    RESULTS[case.id] = True


def test_bad_input_summary():
    """Counts the cases above (run them in the same session to see their results)."""
    done = {k: v for k, v in RESULTS.items() if k in {c.id for c in CASES}}
    refused = sum(done.values())
    print(f"\nbad-input (ontap): {len(done)} cases, {refused} refused as expected")
    assert len(CASES) >= 30
    assert refused == len(done)
