"""Run records become generated partials and charts at build time, with provenance and labels."""
import json
import re
import xml.etree.ElementTree as ET

import pytest

from tr4947.results import render
from tr4947.procedures import record

PARTIALS = render.MODULE / "partials" / "results"


def read(partial) -> str:
    """A generated partial as the English edition shows it: its {label-...} references
    resolved with the English component descriptor's attributes (each edition has its own)."""
    import yaml
    from tr4947 import paths
    attrs = yaml.safe_load((paths.REPO / "antora.yml").read_text())["asciidoc"]["attributes"]
    return re.sub(r"\{(label-[\w-]+)\}", lambda m: attrs[m.group(1)], partial.read_text())
IMAGES = render.MODULE / "images" / "results"


def run_record(results, target, kind="lab", chapter="functional-validation", **extra):
    """A run record as the runner writes it: the notebook's records plus provenance."""
    rec = record.start("functional-validation", chapter, target, results.parent / "stage",
                       kind=kind)
    rec.echo = False
    rec.console("FV-3", "Topic description", "kafka-topics.sh --describe --topic t",
                "Topic: t\tPartitionCount: 4\n----\nend", host="broker1")
    rec.table("FV-7", "Broker health", ["cluster", "broker 1"], [["c1", "up"], ["c2", "down|x"]])
    rec.chart("FV-4", "Throughput", {"series": [{"name": "lab", "x": [1, 2], "y": [3, 4]}],
                                     "reference": [{"name": "TR", "x": [1, 2], "y": [5, 5]}]})
    rec.console("FV-5", "Volumes", "", "cluster1::> volume show\nVserver Volume\n",
                prompt="")
    recs = record.read(rec.finish())
    doc = {"notebook": "functional-validation", "chapter": chapter,
           "run": {"id": f"20261124T000000Z-{target[:6]}", "target": target, "kind": kind,
                   "started": "2026-11-24T00:00:00+00:00", "commit": "a" * 40,
                   "inputs_changed_since_commit": [], "digest": "d" * 16,
                   "parameters": {"scale": 0.01}, "versions": {"Kafka": "4.1.1"}},
           "records": recs["records"], **extra}
    f = results / target / "functional-validation.json"
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(json.dumps(doc))
    return f


def test_partials_with_provenance_labels_and_escaping(tmp_path):
    run_record(tmp_path / "results", "lab")
    out = tmp_path / "gen"
    render.render_all(tmp_path / "results", out)
    fv3 = read(out / PARTIALS / "lab/functional-validation/FV-3.adoc")
    assert "[.result.lab]" in fv3
    assert "broker1 $ kafka-topics.sh --describe --topic t" in fv3
    # The output contains a line '----': the listing fence must be longer than it.
    assert "\n-----\n" in fv3
    assert "[.provenance]" in fv3 and "target `lab` (lab)" in fv3 and "Kafka 4.1.1" in fv3
    assert "scale=0.01" in fv3 and "not from NetApp hardware" in fv3
    assert "{repo-url}/commit/" + "a" * 40 in fv3          # the commit resolves to a link
    fv7 = read(out / PARTIALS / "lab/functional-validation/FV-7.adoc")
    assert "down\\|x" in fv7                                # table cell pipes escaped
    ET.parse(out / IMAGES / "lab/functional-validation/FV-4-1.svg")   # a well-formed SVG
    assert "image::results/lab/functional-validation/FV-4-1.svg" in \
        read(out / PARTIALS / "lab/functional-validation/FV-4.adoc")
    # A clustershell transcript from the lab is labelled as the stand-in's output.
    assert "ONTAP stand-in" in read(out / PARTIALS / "lab/functional-validation/FV-5.adoc")


def test_real_target_is_not_labelled_stand_in_and_follows_lab(tmp_path):
    run_record(tmp_path / "results", "lab")
    run_record(tmp_path / "results", "aff", kind="real")
    out = tmp_path / "gen"
    render.render_all(tmp_path / "results", out)
    real = read(out / PARTIALS / "aff/functional-validation/FV-5.adoc")
    assert "[.result.real]" in real and "real target `aff`" in real
    assert "stand-in" not in real
    agg = read(out / PARTIALS / "functional-validation/FV-3.adoc").splitlines()
    includes = [line for line in agg if line.startswith("include::")]
    assert includes == ["include::partial$results/lab/functional-validation/FV-3.adoc[]",
                        "include::partial$results/aff/functional-validation/FV-3.adoc[]"]


def test_last_failure_is_said_above_kept_results(tmp_path):
    run_record(tmp_path / "results", "lab", last_failure={
        "run_id": "20261124T010000Z-bad", "at": "2026-11-24T01:00:00+00:00",
        "error": "cell 4: RuntimeError: broker 2 did not start"})
    out = tmp_path / "gen"
    render.render_all(tmp_path / "results", out)
    fv3 = read(out / PARTIALS / "lab/functional-validation/FV-3.adoc")
    assert fv3.index("[WARNING]") < fv3.index("[.result.lab]")
    assert "broker 2 did not start" in fv3 and "20261124T000000Z-lab" in fv3


def test_a_failure_is_quoted_as_printed(tmp_path):
    """A log tail in the error keeps its characters: a literal block, whose fence no line
    of the error can close."""
    error = "cell 7: TimeoutError\n==> logs/server.log <==\n....\n-- *not bold* --"
    run_record(tmp_path / "results", "lab", last_failure={
        "run_id": "20261124T010000Z-bad", "at": "2026-11-24T01:00:00+00:00", "error": error})
    out = tmp_path / "gen"
    render.render_all(tmp_path / "results", out)
    fv3 = read(out / PARTIALS / "lab/functional-validation/FV-3.adoc")
    fence = "." * 5
    assert f"\n{fence}\n{error}\n{fence}\n" in fv3
    assert fv3.index("[WARNING]") < fv3.index(fence) < fv3.index("[.result.lab]")


def test_rebuild_writes_only_changes_and_removes_stale(tmp_path):
    f = run_record(tmp_path / "results", "lab")
    out = tmp_path / "gen"
    first = render.render_all(tmp_path / "results", out)
    assert first and render.render_all(tmp_path / "results", out) == []
    doc = json.loads(f.read_text())
    doc["records"] = [r for r in doc["records"] if r["id"] != "FV-7"]
    f.write_text(json.dumps(doc))
    render.render_all(tmp_path / "results", out)
    assert not (out / PARTIALS / "lab/functional-validation/FV-7.adoc").exists()
    assert (out / PARTIALS / "lab/functional-validation/FV-3.adoc").exists()


def test_foreign_file_in_results_is_a_clear_error(tmp_path):
    run_record(tmp_path / "results", "lab")
    (tmp_path / "results" / "lab" / "notes.json").write_text('{"x": 1}')
    with pytest.raises(SystemExit, match="notes.json: not a run record"):
        render.render_all(tmp_path / "results", tmp_path / "gen")


def test_bad_procedure_id_is_rejected(tmp_path):
    rec = record.start("x", "x", "lab", tmp_path)
    with pytest.raises(ValueError, match="not like FV-3"):
        rec.text("fv3", "t", "b")


def test_unknown_kind_is_rejected(tmp_path):
    with pytest.raises(ValueError, match="one of lab, real, computed"):
        record.start("x", "x", "lab", tmp_path, kind="guess")


def test_a_result_no_run_recorded_gets_a_placeholder_not_a_broken_build(tmp_path):
    pages = tmp_path / "pages"
    pages.mkdir()
    (pages / "functional-validation.adoc").write_text(
        "include::partial$results/functional-validation/FV-3.adoc[]\n"
        "include::partial$results/functional-validation/FV-9.adoc[]\n")
    results = tmp_path / "results"
    run_record(results, "lab")
    (results / "lab" / "other.json").write_text(json.dumps({
        "notebook": "other", "chapter": "functional-validation", "run": None, "records": [],
        "last_failure": {"run_id": "r1", "at": "t", "error": "boom"}}))
    out = tmp_path / "gen"
    render.render_all(results, out, pages)
    fv9 = read(out / PARTIALS / "functional-validation/FV-9.adoc")
    assert "No result recorded yet: FV-9" in fv9 and "boom" in fv9
    assert "No result" not in read(out / PARTIALS / "functional-validation/FV-3.adoc")


def test_log_chart_with_an_all_zero_series_draws_no_empty_path(tmp_path):
    # Paused consumers read 0 MiB/s for a whole phase; on a log axis that series cannot be
    # drawn, and an empty <path> breaks the PDF build's SVG reader (prawn-svg).
    from tr4947.results import charts
    spec = {"type": "line", "y_scale": "log", "x_label": "s", "y_label": "MiB/s",
            "series": [{"name": "producers", "x": [1, 2, 3], "y": [20.0, 30.0, 25.0]},
                       {"name": "consumers (paused)", "x": [1, 2, 3], "y": [0.0, 0.0, 0.0]}]}
    svg = charts.draw(spec, "backlog", tmp_path / "c.svg").read_text()
    ns = "{http://www.w3.org/2000/svg}"
    paths = list(ET.fromstring(svg).iter(f"{ns}path"))
    assert paths and all(p.get("d") for p in paths)
    assert "consumers (paused): all 0" in svg


def test_a_variants_results_sit_beside_the_default_runs(tmp_path):
    """functional-validation.kafka-3.2.3 (the notebook run on the TR's Kafka) renders into
    its own partials, titled with the variant, and a page may include both."""
    results = tmp_path / "results"
    run_record(results, "lab")
    f = run_record(results, "lab", chapter="functional-validation.kafka-3.2.3")
    f.rename(f.with_name("functional-validation.kafka-3.2.3.json"))
    run_record(results, "lab")
    out = tmp_path / "gen"
    render.render_all(results, out)
    v = read(out / PARTIALS / "lab/functional-validation.kafka-3.2.3/FV-7.adoc")
    assert ".Lab result: FV-7 (variant kafka-3.2.3)" in v
    assert "from results/lab/functional-validation.kafka-3.2.3.json" in v
    d = read(out / PARTIALS / "lab/functional-validation/FV-7.adoc")
    assert ".Lab result: FV-7\n" in d
    # A page's include of a variant partial is found (a dotted chapter name), so a variant
    # never run gets a placeholder instead of a broken include.
    pages = tmp_path / "pages"
    pages.mkdir()
    (pages / "p.adoc").write_text(
        "include::partial$results/functional-validation.kafka-9.9.9/FV-7.adoc[]\n")
    render.render_all(results, out, pages)
    assert "No result recorded yet: FV-7" in read(out / PARTIALS / "functional-validation.kafka-9.9.9/FV-7.adoc"
                                   )
