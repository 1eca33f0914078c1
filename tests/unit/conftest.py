"""Fixtures shared by the unit tests."""
from __future__ import annotations

import pytest

from tr4947.lab.ontap import bootstrap, session


@pytest.fixture
def ontap_one_volume(tmp_path):
    """The ONTAP stand-in's state directory: cluster1 (two nodes, aggr1 of 2 TB), SVM svm_kafka
    with one data LIF, and a 100 MB volume v1 mounted at /v1."""
    r = tmp_path / "state"
    bootstrap.bootstrap(r, "cluster1", ["cluster1-01", "cluster1-02"],
                        [{"name": "aggr1", "size": "2TB"}], ["svm_kafka"],
                        [{"name": "lif1", "address": "198.18.10.11", "vserver": "svm_kafka",
                          "node": "cluster1-01", "port": "e0d"}])
    out = session.Session(r).run_sync("set -privilege admin -confirmations off; volume create "
                                      "-vserver svm_kafka -volume v1 -aggregate aggr1 "
                                      "-size 100MB -junction-path /v1")
    assert not out.error, out.output
    return r
