"""The ONTAP REST stand-in: strict like ONTAP, and one state with the clustershell.

Each test module gets one in-process HTTPS server on a free loopback port over a fresh
bootstrapped state; requests go through `requests` with the lab certificate as CA."""
from __future__ import annotations

import base64
import json
import socket
import threading
from pathlib import Path

import pytest
import requests

from tr4947.lab.ontap import bootstrap, rest, state
from tr4947.lab.ontap.session import Session

ADDR = "127.0.0.1"


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    root = tmp_path_factory.mktemp("ontap-rest") / "state"
    bootstrap.ensure_passwords(root, {"admin": "test-admin-pw"})
    bootstrap.bootstrap(
        root, "cluster1", ["cluster1-01", "cluster1-02"],
        # 8TB each: FG's thick 10TB FlexGroup puts 5TB on each aggregate.
        [{"name": "aggr1", "node": "cluster1-01", "size": "8TB"},
         {"name": "aggr2", "node": "cluster1-02", "size": "8TB"}],
        ["svm_kafka"], [{"name": "lif_kafka_1", "address": "127.0.0.11", "node": "cluster1-01",
                         "vserver": "svm_kafka"}])
    rest.ensure_certificate(root, ADDR, "cluster1")
    with socket.socket() as s:
        s.bind((ADDR, 0))
        port = s.getsockname()[1]
    httpd = rest.make_server(ADDR, port, root)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    pw = "test-admin-pw"
    session = requests.Session()
    session.trust_env = False                  # the lab certificate, not the system bundle
    session.verify = str(rest.cert_file(root))
    session.auth = ("admin", pw)

    class Api:
        base = f"https://{ADDR}:{port}/api/"

        def __init__(self):
            self.root, self.session = root, session

        def __call__(self, method, path, **kw):
            return session.request(method, self.base + path, **kw)

        def cli(self, line):
            return Session(root).run_sync(line)
    yield Api()
    httpd.shutdown()
    httpd.server_close()


def _err(r):
    return r.json()["error"]


def _job(api, r):
    assert r.status_code in (201, 202), r.text
    job = api("GET", r.json()["job"]["_links"]["self"]["href"].removeprefix("/api/")).json()
    return job


FG = {"name": "kafka_fg_vol01", "svm": {"name": "svm_kafka"},
      "aggregates": [{"name": "aggr1"}, {"name": "aggr2"}], "constituents_per_aggregate": 8,
      "size": 10 * 1024 ** 4, "nas": {"path": "/kafka_fg_vol01",
                                       "export_policy": {"name": "default"}},
      "snapshot_policy": {"name": "none"}, "style": "flexgroup", "state": "online"}


def test_authentication_is_required(api):
    anon = requests.get(api.base + "cluster", verify=api.session.verify)
    assert anon.status_code == 401
    assert _err(anon)["code"] == "6"
    wrong = requests.get(api.base + "cluster", verify=api.session.verify, auth=("admin", "nope"))
    assert wrong.status_code == 401
    assert api("GET", "cluster").status_code == 200


def test_certificate_names_the_address(api):
    from cryptography import x509
    cert = x509.load_pem_x509_certificate(rest.cert_file(api.root).read_bytes())
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert [str(ip) for ip in san.get_values_for_type(x509.IPAddress)] == [ADDR]
    # and requests verifies the server against it (a wrong CA fails)
    with pytest.raises(requests.exceptions.SSLError):
        requests.get(api.base + "cluster", auth=api.session.auth, verify=True)


def test_cluster_version(api):
    v = api("GET", "cluster", params={"fields": "version"}).json()["version"]
    assert (v["generation"], v["major"], v["minor"]) == (9, 12, 1)


@pytest.mark.parametrize("params,target,code", [
    ({"fields": "nas.path,bogus"}, "fields", "262197"),
    ({"bogus": "1"}, "bogus", "262179"),
    ({"max_records": "many"}, "max_records", "262196"),
])
def test_bad_queries_are_rejected(api, params, target, code):
    r = api("GET", "storage/volumes", params=params)
    assert r.status_code == 400
    assert _err(r)["target"] == target and _err(r)["code"] == code


def test_schema_fields_not_set_are_accepted_and_omitted(api):
    # tiering.object_tags is an ONTAP volume field the lab never sets: asked for, not returned
    r = api("GET", "storage/volumes", params={"fields": "tiering.object_tags,nas.path"})
    assert r.status_code == 200
    rec = r.json()["records"][0]
    assert "nas" in rec and "object_tags" not in rec.get("tiering", {})


@pytest.mark.parametrize("body,target", [
    ({**FG, "name": "v_bad1", "colour": "blue"}, "colour"),
    ({**FG, "name": "v_bad2", "size": "10TB"}, "size"),
    ({**FG, "name": "v_bad3", "state": "onlin"}, "state"),
    ({**FG, "name": "v_bad4", "autosize": {"mode": "grow"}}, "autosize.mode"),
])
def test_bad_bodies_are_rejected_before_any_change(api, body, target):
    r = api("POST", "storage/volumes", json=body)
    assert r.status_code == 400, r.text
    assert _err(r)["target"] == target
    assert f"svm_kafka:{body['name']}" not in state.load(api.root).volumes


def test_flexgroup_created_by_rest_is_the_clustershell_volume(api):
    r = api("POST", "storage/volumes", json=FG, params={"return_timeout": 30})
    assert r.status_code == 201
    assert _job(api, r)["state"] == "success"
    out = api.cli("volume show -vserver svm_kafka -volume kafka_fg_vol01 -fields "
                  "aggr-list,constituent-count,volume-style-extended,junction-path,size")
    assert not out.error, out.output
    row = out.output.splitlines()[2].split()
    assert row == ["svm_kafka", "kafka_fg_vol01", "aggr1,aggr2", "16", "flexgroup",
                   "/kafka_fg_vol01", "10TB"]
    vol = state.load(api.root).volumes["svm_kafka:kafka_fg_vol01"]
    assert state.backing_dir(vol, api.root).is_dir()
    # read back with the fields na_ontap_volume asks for
    got = api("GET", "storage/volumes", params={
        "name": "kafka_fg_vol01", "svm.name": "svm_kafka",
        "fields": "style,aggregates.name,constituents_per_aggregate,space.size,nas.path,"
                  "snapshot_policy,qos.policy.name,"}).json()
    rec = got["records"][0]
    assert rec["style"] == "flexgroup" and rec["constituents_per_aggregate"] == 8
    assert [a["name"] for a in rec["aggregates"]] == ["aggr1", "aggr2"]
    assert rec["space"]["size"] == 10 * 1024 ** 4 and rec["snapshot_policy"]["name"] == "none"
    assert "qos" not in rec                     # no policy: the field is absent, as on ONTAP


def test_a_failed_operation_fails_its_job_with_ontaps_message(api):
    r = api("POST", "storage/volumes", json={**FG, "name": "v2", "nas": {"path": "/v2"},
                                              "aggregates": [{"name": "aggr9"}]})
    job = _job(api, r)
    assert job["state"] == "failure"
    assert job["message"] == 'Aggregate "aggr9" does not exist.'
    dup = _job(api, api("POST", "storage/volumes", json=FG))
    assert dup["state"] == "failure" and "Duplicate volume name" in dup["message"]


def test_volume_created_in_the_clustershell_is_seen_by_rest(api):
    out = api.cli("volume create -vserver svm_kafka -volume cli_vol -aggregate aggr1 -size 1GB "
                  "-junction-path /cli_vol")
    assert not out.error, out.output
    recs = api("GET", "storage/volumes", params={"name": "cli_vol", "fields": "style,nas.path"}
               ).json()["records"]
    assert recs[0]["style"] == "flexvol" and recs[0]["nas"]["path"] == "/cli_vol"


def test_patch_size_and_junction(api):
    uuid = api("GET", "storage/volumes", params={"name": "cli_vol"}).json()["records"][0]["uuid"]
    assert _job(api, api("PATCH", f"storage/volumes/{uuid}",
                         json={"size": 2 * 1024 ** 3}))["state"] == "success"
    assert _job(api, api("PATCH", f"storage/volumes/{uuid}",
                         json={"nas": {"path": ""}}))["state"] == "success"
    rec = api("GET", f"storage/volumes/{uuid}", params={"fields": "space.size,nas.path"}).json()
    assert rec["space"]["size"] == 2 * 1024 ** 3 and rec["nas"]["path"] == ""
    r = api("PATCH", f"storage/volumes/{uuid}", json={"name": "renamed"})
    assert r.status_code == 400 and _err(r)["target"] == "name"
    assert api("GET", "storage/volumes/00000000-0000-0000-0000-000000000000").status_code == 404


def test_delete(api):
    uuid = api("GET", "storage/volumes", params={"name": "cli_vol"}).json()["records"][0]["uuid"]
    assert _job(api, api("DELETE", f"storage/volumes/{uuid}"))["state"] == "success"
    assert "svm_kafka:cli_vol" not in state.load(api.root).volumes


def test_pnfs_and_transfer_size_through_nfs_services(api):
    svm = api("GET", "svm/svms", params={"name": "svm_kafka"}).json()["records"][0]["uuid"]
    r = api("PATCH", f"protocols/nfs/services/{svm}", json={
        "protocol": {"v41_features": {"pnfs_enabled": True}},
        "transport": {"tcp_max_transfer_size": 262144}})
    assert r.status_code == 200, r.text
    out = api.cli("set -privilege advanced; vserver nfs show -vserver svm_kafka "
                  "-fields v4.1-pnfs,tcp-max-xfer-size")
    assert "enabled" in out.output and "262144" in out.output
    bad = api("PATCH", f"protocols/nfs/services/{svm}",
              json={"transport": {"tcp_max_transfer_size": 1000}})
    assert bad.status_code == 400 and "multiple of 4096" in _err(bad)["message"]


def test_unknown_endpoint_and_method(api):
    assert api("GET", "storage/luns").status_code == 404
    assert api("DELETE", "cluster").status_code == 405


def test_password_never_logged(api, caplog):
    caplog.set_level("DEBUG", logger="tr4947.ontap.rest")
    pw = api.session.auth[1]
    api("GET", "cluster")
    requests.get(api.base + "cluster", verify=api.session.verify, auth=("admin", pw + "x"))
    text = caplog.text + json.dumps([r.getMessage() for r in caplog.records])
    assert caplog.records and pw not in text
    assert base64.b64encode(f"admin:{pw}".encode()).decode() not in text
