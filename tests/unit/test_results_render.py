"""Recorded runs become AsciiDoc partials with provenance; real targets never overwrite lab."""
import json
import xml.etree.ElementTree as ET

import pytest

from tr4947 import paths
from tr4947.results import render
from tr4947.runbook import open_runbook


@pytest.fixture
def docs(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "DOCS", tmp_path / "docs")
    return tmp_path / "docs"


def run(tmp_path, target, **kw):
    rec = open_runbook("functional-validation", "functional-validation", target=target,
                       parameters={"scale": 0.01}, versions={"Kafka": "4.1.1"},
                       results_dir=tmp_path / "results" / target, **kw)
    rec.console("FV-3", "Topic description", "kafka-topics.sh --describe --topic t",
                "Topic: t\tPartitionCount: 4\n----\nend", host="broker1")
    rec.table("FV-7", "Broker health", ["cluster", "broker 1"], [["c1", "up"], ["c2", "down|x"]])
    rec.chart("FV-4", "Throughput", {"series": [{"name": "lab", "x": [1, 2], "y": [3, 4]}],
                                     "reference": [{"name": "TR", "x": [1, 2], "y": [5, 5]}]})
    return rec.finish()


def test_partials_with_provenance_and_escaping(tmp_path, docs):
    render.render_file(run(tmp_path, "lab"))
    fv3 = (docs / "partials/results/lab/functional-validation/FV-3.adoc").read_text()
    assert "[.result.lab]" in fv3
    assert "broker1 $ kafka-topics.sh --describe --topic t" in fv3
    # The output contains a line '----': the listing fence must be longer than it.
    assert "\n-----\n" in fv3
    assert "[.provenance]" in fv3 and "target `lab` (lab)" in fv3 and "Kafka 4.1.1" in fv3
    assert "scale=0.01" in fv3 and "not from NetApp hardware" in fv3
    fv7 = (docs / "partials/results/lab/functional-validation/FV-7.adoc").read_text()
    assert "down\\|x" in fv7                      # table cell pipes escaped
    svg = docs / "images/results/lab/functional-validation/FV-4-1.svg"
    ET.parse(svg)                                 # a well-formed SVG was drawn
    assert "image::results/lab/functional-validation/FV-4-1.svg" in \
        (docs / "partials/results/lab/functional-validation/FV-4.adoc").read_text()


def test_real_target_renders_beside_lab(tmp_path, docs):
    render.render_file(run(tmp_path, "lab"))
    lab_before = (docs / "partials/results/lab/functional-validation/FV-3.adoc").read_text()
    render.render_file(run(tmp_path, "aff"))
    assert (docs / "partials/results/lab/functional-validation/FV-3.adoc").read_text() == lab_before
    real = (docs / "partials/results/aff/functional-validation/FV-3.adoc").read_text()
    assert "[.result.real]" in real and "real target `aff`" in real
    agg = (docs / "partials/results/functional-validation/FV-3.adoc").read_text().splitlines()
    includes = [l for l in agg if l.startswith("include::")]
    assert includes == ["include::partial$results/lab/functional-validation/FV-3.adoc[]",
                        "include::partial$results/aff/functional-validation/FV-3.adoc[]"]


def test_bad_procedure_id_is_rejected(tmp_path):
    rec = open_runbook("x", "x", target="lab", results_dir=tmp_path)
    with pytest.raises(ValueError, match="not like FV-3"):
        rec.text("fv3", "t", "b")


def test_records_file_is_complete_json(tmp_path):
    doc = json.loads(run(tmp_path, "lab").read_text())
    assert doc["provenance"]["finished"] and len(doc["records"]) == 3
