"""Run records become generated partials and charts at build time, per edition, with
provenance, tables that fit, transcripts that tell command from output, and readable charts."""
import json
import re
import xml.etree.ElementTree as ET

import pytest

from tr4947.results import charts, render
from tr4947.results.i18n import Translator
from tr4947.procedures import record

PARTIALS = render.MODULE / "partials" / "results"
IMAGES = render.MODULE / "images" / "results"


def site(partial) -> str:
    """A generated partial as the site sees it: the PDF-only lines dropped."""
    return _branch(partial.read_text(), pdf=False)


def pdf(partial) -> str:
    return _branch(partial.read_text(), pdf=True)


def _branch(text: str, pdf: bool) -> str:
    """Asciidoctor's preprocessor for the one attribute the partials test (tr4947-pdf)."""
    out, keep = [], [True]
    for line in text.splitlines():
        m = re.match(r"^(ifdef|ifndef)::tr4947-pdf\[(.*)\]$", line)
        if m and m.group(2):                              # single-line form
            if (m.group(1) == "ifdef") == pdf and all(keep):
                out.append(m.group(2))
            continue
        if m:
            keep.append((m.group(1) == "ifdef") == pdf)
        elif line == "endif::[]":
            keep.pop()
        elif all(keep):
            out.append(line)
    return "\n".join(out) + "\n"


def run_record(results, target, kind="lab", chapter="functional-validation", **extra):
    """A run record as the runner writes it: the notebook's records plus provenance."""
    rec = record.start("functional-validation", chapter, target, results.parent / "stage",
                       kind=kind)
    rec.echo = False
    rec.console("FV-3", "Topic description", "kafka-topics.sh --describe --topic t",
                "Topic: t\tPartitionCount: 4\n----\nend", host="broker1")
    rec.table("FV-7", "Broker health", ["cluster", "broker 1"], [["c1", "up"], ["c2", "down|x"]])
    rec.chart("FV-4", "Throughput", {"x_label": "seconds", "y_label": "MiB/s",
                                     "series": [{"name": "lab", "x": [1, 2], "y": [3, 4]}],
                                     "reference": [{"name": "TR", "x": [1, 2], "y": [5, 5]}]})
    rec.console("FV-5", "Volumes", "", "cluster1::> volume show\nVserver Volume\n",
                prompt="")
    recs = record.read(rec.finish())
    run = {"id": f"20261124T000000Z-{target[:6]}", "target": target, "kind": kind,
           "started": "2026-11-24T00:00:00+00:00", "finished": "2026-11-24T00:05:00+00:00",
           "commit": "a" * 40, "digest": "d" * 16,
           "parameters": {"scale": 0.01}, "versions": {"Kafka": "4.1.1"}}
    run.update(extra.pop("run", {}))
    doc = {"notebook": "functional-validation", "chapter": chapter, "run": run,
           "records": recs["records"], **extra}
    f = results / target / "functional-validation.json"
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(json.dumps(doc))
    return f


def test_partials_with_provenance_badge_labels_and_escaping(tmp_path):
    run_record(tmp_path / "results", "lab")
    out = tmp_path / "gen"
    render.render_all(tmp_path / "results", out)
    fv3 = site(out / PARTIALS / "lab/functional-validation/FV-3.adoc")
    assert "[.result.lab]" in fv3 and ".Lab result: FV-3" in fv3
    assert ".broker1\n[source,console,role=\"transcript-cmd\"" in fv3     # the host, labelled
    assert "\nkafka-topics.sh --describe --topic t\n" in fv3              # no prompt on the site
    # The output contains a line '----': its literal block's fence is different from it.
    assert "\n----\nend\n" in fv3
    # A short badge (who, target, date, commit), the rest behind a toggle.
    badge = re.search(r"\[\.provenance\]\n(.*)\n", fv3).group(1)
    assert badge == ("Embedded lab · `lab` · Nov 24, 2026 · commit "
                     "{repo-url}/commit/" + "a" * 40 + "[`aaaaaaa`]")
    details = fv3[fv3.index("[%collapsible.provenance-details]"):]
    for fact in ("Run:: `20261124T000000Z-lab`", "Inputs digest:: `dddddddddddddddd`",
                 "Versions:: Kafka 4.1.1", "Parameters:: `scale=0.01`"):
        assert fact in details
    assert "WARNING" not in fv3
    fv7 = site(out / PARTIALS / "lab/functional-validation/FV-7.adoc")
    assert "down\\|x" in fv7                                # table cell pipes escaped
    assert "image::results/lab/functional-validation/FV-4-1.wide.svg" in \
        site(out / PARTIALS / "lab/functional-validation/FV-4.adoc")
    for size in ("wide", "narrow"):
        ET.parse(out / IMAGES / f"lab/functional-validation/FV-4-1.{size}.svg")
    # A clustershell transcript from the lab is labelled as the stand-in's output.
    assert "ONTAP stand-in" in site(out / PARTIALS / "lab/functional-validation/FV-5.adoc")


def test_the_pdf_prints_the_prompt_and_no_toggles(tmp_path):
    run_record(tmp_path / "results", "lab")
    out = tmp_path / "gen"
    render.render_all(tmp_path / "results", out)
    fv3 = pdf(out / PARTIALS / "lab/functional-validation/FV-3.adoc")
    assert "\n$ kafka-topics.sh --describe --topic t\n" in fv3
    assert "collapsible" not in fv3 and "Run `20261124T000000Z-lab`" in fv3
    assert "image::results/lab/functional-validation/FV-4-1.wide.svg[" in \
        pdf(out / PARTIALS / "lab/functional-validation/FV-4.adoc")


def test_a_result_says_whether_it_is_current(tmp_path, monkeypatch):
    """Told what the guide's sources give now (`tr4947 runbook --status --json`), a result
    says it is current when its digest is that one, and warns when it is not; told nothing,
    it states only its digest (never how the developer's tree was committed)."""
    run_record(tmp_path / "results", "lab")
    status = tmp_path / "current.json"
    for now, expect in (("d" * 16, "current"), ("e" * 16, "stale"), (None, None)):
        rows = [{"chapter": "functional-validation", "digest": now}] if now else []
        status.write_text(json.dumps({"target": "lab", "chapters": rows}))
        monkeypatch.setattr(render, "CURRENT", render.load_current(status))
        out = tmp_path / f"gen-{expect}"
        render.render_all(tmp_path / "results", out)
        fv3 = site(out / PARTIALS / "lab/functional-validation/FV-3.adoc")
        digest = re.search(r"Inputs digest:: (.*)\n", fv3).group(1)
        if expect == "current":
            assert digest == "`dddddddddddddddd` (current: the guide's sources give the same " \
                             "digest)" and "WARNING" not in fv3
        elif expect == "stale":
            warning = re.search(r"\[WARNING\.inputs-changed\]\n(.*)\n", fv3).group(1)
            assert "now give `eeeeeeeeeeeeeeee`" in warning
            assert fv3.index("[WARNING.inputs-changed]") < fv3.index("[.provenance]")
        else:
            assert digest == "`dddddddddddddddd`" and "WARNING" not in fv3


def test_every_edition_gets_its_own_words_and_charts(tmp_path):
    run_record(tmp_path / "results", "lab")
    for lang in ("en", "fr", "ja"):
        render.render_all(tmp_path / "results", tmp_path / lang, edition=lang)
    fr = site(tmp_path / "fr" / PARTIALS / "lab/functional-validation/FV-7.adoc")
    ja = site(tmp_path / "ja" / PARTIALS / "lab/functional-validation/FV-7.adoc")
    assert ".Résultat du lab\u00a0: FV-7" in fr and "Lab intégré · `lab` · 24 nov. 2026" in fr
    assert ".ラボの結果：FV-7" in ja and "組み込みラボ · `lab` · 2026/11/24" in ja
    svgs = {lang: (tmp_path / lang / IMAGES / "lab/functional-validation/FV-4-1.wide.svg")
            .read_bytes() for lang in ("en", "fr", "ja")}
    assert len(set(svgs.values())) == 3, "a chart is drawn once per edition"


def test_a_record_kind_the_renderer_does_not_know_is_skipped(tmp_path, capsys):
    f = run_record(tmp_path / "results", "lab")
    doc = json.loads(f.read_text())
    doc["records"].append({"id": "FV-9", "kind": "hologram", "title": "Claim FV-9",
                           "data": {"claim": "x"}})
    f.write_text(json.dumps(doc))
    render.render_all(tmp_path / "results", tmp_path / "gen")
    fv9 = site(tmp_path / "gen" / PARTIALS / "lab/functional-validation/FV-9.adoc")
    assert "// record kind 'hologram' not shown" in fv9 and "[.provenance]" in fv9
    assert "'hologram'" in capsys.readouterr().err


def test_real_target_is_not_labelled_stand_in_and_follows_lab(tmp_path):
    run_record(tmp_path / "results", "lab")
    run_record(tmp_path / "results", "aff", kind="real")
    out = tmp_path / "gen"
    render.render_all(tmp_path / "results", out)
    real = site(out / PARTIALS / "aff/functional-validation/FV-5.adoc")
    assert "[.result.real]" in real and ".Result from aff: FV-5" in real
    assert "stand-in" not in real and "Real target · `aff`" in real
    agg = site(out / PARTIALS / "functional-validation/FV-3.adoc").splitlines()
    includes = [line for line in agg if line.startswith("include::")]
    assert includes == ["include::partial$results/lab/functional-validation/FV-3.adoc[]",
                        "include::partial$results/aff/functional-validation/FV-3.adoc[]"]


def test_last_failure_is_said_above_kept_results(tmp_path):
    run_record(tmp_path / "results", "lab", last_failure={
        "run_id": "20261124T010000Z-bad", "at": "2026-11-24T01:00:00+00:00",
        "error": "cell 4: RuntimeError: broker 2 did not start"})
    out = tmp_path / "gen"
    render.render_all(tmp_path / "results", out)
    fv3 = site(out / PARTIALS / "lab/functional-validation/FV-3.adoc")
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
    fv3 = site(out / PARTIALS / "lab/functional-validation/FV-3.adoc")
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
    render.render_all(results, out, pages, edition="fr")
    fv9 = site(out / PARTIALS / "functional-validation/FV-9.adoc")
    assert "Aucun résultat enregistré pour l'instant\u00a0: FV-9" in fv9 and "boom" in fv9
    assert "Aucun résultat" not in site(out / PARTIALS / "functional-validation/FV-3.adoc")


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
    v = site(out / PARTIALS / "lab/functional-validation.kafka-3.2.3/FV-7.adoc")
    assert ".Lab result: FV-7 (variant kafka-3.2.3)" in v
    assert "from results/lab/functional-validation.kafka-3.2.3.json" in v
    d = site(out / PARTIALS / "lab/functional-validation/FV-7.adoc")
    assert ".Lab result: FV-7\n" in d
    pages = tmp_path / "pages"
    pages.mkdir()
    (pages / "p.adoc").write_text(
        "include::partial$results/functional-validation.kafka-9.9.9/FV-7.adoc[]\n")
    render.render_all(results, out, pages)
    assert "No result recorded yet: FV-7" in site(
        out / PARTIALS / "functional-validation.kafka-9.9.9/FV-7.adoc")


def test_nested_blocks_never_close_a_pages_own_block(tmp_path):
    """Pages wrap result includes in open blocks (--) and example blocks of 5 or 6 '=': no
    line of a partial may equal those delimiters, or the page's block ends inside it."""
    run_record(tmp_path / "results", "lab")
    render.render_all(tmp_path / "results", tmp_path / "gen")
    for f in (tmp_path / "gen" / PARTIALS).rglob("*.adoc"):
        lines = f.read_text().splitlines()
        assert not {"--", "=====", "======"} & set(lines), f.name


# --- transcripts ---------------------------------------------------------------------------
def test_lab_plumbing_is_split_from_the_command():
    command = ("export BOOTSTRAP=198.18.1.1:9092\nexport LINES='a b\nc d'\n"
               "# Check the cluster.\n"
               ': "${BOOTSTRAP:=198.18.1.1:9092}"\n'
               ': "${MOUNTS:?set MOUNTS to the mount points}"\n'
               'bin/kafka-topics.sh --bootstrap-server "$BOOTSTRAP" --list')
    env, cmd = render.split_plumbing(command)
    assert env == ["export BOOTSTRAP=198.18.1.1:9092", "export LINES='a b", "c d'",
                   ': "${BOOTSTRAP:=198.18.1.1:9092}"']
    assert cmd == ["# Check the cluster.", ': "${MOUNTS:?set MOUNTS to the mount points}"',
                   'bin/kafka-topics.sh --bootstrap-server "$BOOTSTRAP" --list']


def test_a_long_output_keeps_its_key_lines_in_view():
    lines = [f"line {i}" for i in range(60)]
    lines[30] = "ERROR: the broker died"
    runs = render.fold(lines)
    shown = [line for vis, run in runs if vis for line in run]
    hidden = [line for vis, run in runs if not vis for line in run]
    assert shown[:10] == lines[:10] and shown[-4:] == lines[-4:]
    assert "ERROR: the broker died" in shown and len(hidden) == 60 - 15
    assert render.fold(lines[:20]) == [(True, lines[:20])]


def test_a_transcript_tells_its_parts_apart(tmp_path):
    rec = {"id": "FV-2", "kind": "console", "title": "Mount it", "data": {
        "command": 'export NFS_EXPORT=x:/v\n: "${NFS_EXPORT:=x:/v}"\nmount "$NFS_EXPORT" /demo',
        "output": "\n".join(f"out {i}" for i in range(40)), "prompt": "$", "exit_code": 2,
        "host": "fv_c1-broker-1"}}
    text = render.render_record(rec, None, lab=True, tr=Translator("en"))
    s, p = _branch(text, pdf=False), _branch(text, pdf=True)
    assert "[.transcript-env]\n....\nexport NFS_EXPORT=x:/v\n: \"${NFS_EXPORT:=x:/v}\"\n....\n" in s
    assert '----\nmount "$NFS_EXPORT" /demo\n----' in s
    assert "[%collapsible.transcript-fold]\n.26 more lines\n========\n" in s
    assert "exit code 2" in s and "The lab's NFS client" in s
    assert '----\n$ mount "$NFS_EXPORT" /demo\n----' in p
    assert "(26 lines of output not printed; the site shows them.)" in p


# --- tables --------------------------------------------------------------------------------
AUDIT = ["Cluster", "Broker", "Log dir", "Mount", "NFS", "Volume", "preserve-unlink", "Client",
         "Verdict", "Fix"]


def test_key_columns_come_first():
    assert [AUDIT[i] for i in render.key_order(AUDIT, None)][:4] == \
        ["Cluster", "Broker", "Verdict", "Fix"]
    assert [AUDIT[i] for i in render.key_order(AUDIT, ["Fix", "Log dir"])][:3] == \
        ["Fix", "Log dir", "Cluster"]
    assert render.key_order(["a", "b"], None) == [0, 1]


def test_a_table_wraps_identifiers_and_sets_pdf_widths():
    rec = {"id": "PRE-1", "kind": "table", "title": "Audit", "data": {
        "header": AUDIT, "rows": [["fv_c1", "fv_c1-broker-1", "/demo/broker_demo_1",
                                   "198.18.10.11:/kafka_fg_vol01 on /demo", "nfs4 vers=4.1",
                                   "kafka_fg_vol01", "true", "debian 12", "pass", "-"]]}}
    text = render.render_record(rec, None, lab=True, tr=Translator("en"))
    s, p = _branch(text, pdf=False), _branch(text, pdf=True)
    assert '[%header%autowidth,cols="<,<,<,<,<,<,<,<,<,<",role="result-table pin"]' in s
    widths = re.search(r'\[%header,cols="([^"]+)"', p).group(1).split(",")
    assert len(widths) == 10 and all(re.fullmatch(r"[<>]\d+", w) for w in widths)
    # the Log dir column is as wide as its longest unbreakable part, not one letter
    assert int(widths[4][1:]) >= len("broker_demo_1") // 2
    row = s.split("|===")[1].splitlines()[2]
    assert "|fv_c1 |fv_{wbr}c1-{wbr}broker-{wbr}1 |pass |- |/{wbr}demo/{wbr}broker_{wbr}demo_{wbr}1" \
        in row


def test_numeric_columns_are_right_aligned():
    rec = {"id": "CPU-2", "kind": "table", "title": "", "data": {
        "header": ["Cluster", "Rate", "CPU (%)"],
        "rows": [["DAS", "10,000", "15.4 (14.9-17.5, n=3)"], ["NFS", "100,000", "-"]]}}
    text = _branch(render.render_record(rec, None, lab=True), pdf=False)
    assert 'cols="<,>,>"' in text


# --- charts --------------------------------------------------------------------------------
THROUGHPUT = {"type": "line", "x_label": "seconds since the run started",
              "y_label": "producer + consumer MiB/s", "y_scale": "log",
              "series": [{"name": "HA pair, sync driver (steady)", "x": [1, 2, 3],
                          "y": [29.2, 33.3, 31.0]}],
              "reference": [{"name": "TR-4947, sync driver: ~1236 MBps (sustained)",
                             "x": [0, 3], "y": [1236, 1236]}]}


def test_tr_figures_are_converted_to_the_axis_unit_and_the_chart_says_so():
    p = charts.plan(THROUGHPUT, Translator("en"))
    assert p["refs"][0]["y"] == pytest.approx([1178.7, 1178.7], abs=0.1)
    assert p["refs"][0]["label"].endswith("= 1,179 MiB/s")
    assert any("converted to MiB/s: 1 MBps (10⁶ bytes/s) = 0.954 MiB/s" in n for n in p["notes"])
    omb = dict(THROUGHPUT, reference=[{"name": "TR-4947: producer peak 4027.5 MB/s (OMB log)",
                                       "x": [0, 3], "y": [4027.5, 4027.5]}])
    p = charts.plan(omb, Translator("en"))
    assert p["refs"][0]["y"] == [4027.5, 4027.5] and "OMB's logs print MB/s" in p["notes"][0]


def test_a_log_axis_only_when_the_values_span_a_decade():
    assert charts.plan(THROUGHPUT, Translator("en"))["y_log"]
    lab_only = dict(THROUGHPUT, reference=[])
    assert not charts.plan(lab_only, Translator("en"))["y_log"]


def test_chart_words_come_from_the_editions_catalogue():
    fr = charts.plan(THROUGHPUT, Translator("fr"))
    assert fr["x_label"] == "secondes depuis le début de l'exécution"
    assert fr["series"][0]["name"] == "Paire HA, pilote sync (régime établi)"
    assert fr["refs"][0]["label"].endswith("= 1\u202f179 Mio/s")


def test_alt_text_carries_the_figures():
    alt = charts.alt_text(charts.plan(THROUGHPUT, Translator("en")), Translator("en"))
    assert "Line chart of producer + consumer MiB/s against seconds since the run started." in alt
    assert "HA pair, sync driver (steady): 1: 29.2, 2: 33.3, 3: 31." in alt
    assert "= 1,179 MiB/s." in alt


def glyph_sizes_px(svg: str) -> list[float]:
    """The size, in CSS px at the drawing's natural width, of every text the chart draws
    (text is drawn as glyph paths, scaled from 100 units per em)."""
    return [float(s) * 100 * 4 / 3 for s in re.findall(r'<g transform="translate\([^)]*\) '
                                                       r'scale\(([\d.]+) -[\d.]+\)"', svg)]


@pytest.mark.parametrize("size", ["wide", "narrow"])
def test_chart_text_size_and_responsive_drawing(tmp_path, size):
    tr = Translator("ja")
    svg = charts.draw(charts.plan(THROUGHPUT, tr), tmp_path / f"c.{size}.svg", size, tr)
    text = svg.read_text()
    sizes = glyph_sizes_px(text)
    assert sizes and min(sizes) >= 12.5
    root = ET.fromstring(text)
    view = [float(v) for v in root.get("viewBox").split()]
    assert view[2] * 4 / 3 == pytest.approx(charts.SIZES[size], abs=1)
    ids = re.findall(r'\bid="([^"]+)"', text)
    assert ids and all(i.startswith(f"c-{size}-") for i in ids)     # page-unique ids
    assert not re.search(r"<path id=\"[^\"]+\"(?![^>]*\bd=)[^>]*/>", text)


def test_an_achieved_rate_on_the_x_axis_is_drawn_with_its_spread(tmp_path):
    spec = {"type": "line", "x_label": "producer rate achieved, msg/s", "y_label": "seconds",
            "series": [{"name": "DAS broker", "x": [190, 1890], "x_low": [180, 1700],
                        "x_high": [200, 1990], "y": [15.4, 11.6], "low": [14.9, 10.9],
                        "high": [17.5, 14.2]}]}
    tr = Translator("en")
    p = charts.plan(spec, tr)
    assert "Horizontal bars: the lowest and highest rate the runs achieved." in p["notes"]
    svg = charts.draw(p, tmp_path / "x.wide.svg", "wide", tr).read_text()
    # two horizontal error bars: segments from x_low to x_high at each point's height
    assert len(re.findall(r"<g id=\"x-wide-LineCollection_\d+\">", svg)) >= 2


@pytest.mark.parametrize("lang, expect", [
    ("en", "64.4 MB/s (46.0–86.2, n=3)"),
    ("fr", "64,4 Mo/s (46,0–86,2, n=3)"),
    ("ja", "64.4 MB/s (46.0–86.2, n=3)"),
])
def test_a_spread_reads_one_way_in_tables_and_sentences(lang, expect):
    from tr4947.results import ledger
    tr = Translator(lang)
    # recorded as floats, 46.0 comes back as 46: the range keeps the median's precision
    fig = ledger.figure({"median": 64.4, "low": 46.0, "high": 86.2, "n": 3, "unit": "MB/s"}, tr)
    assert fig == expect
    # a procedure's sentence writes its spread with a hyphen; every edition shows the dash
    said = tr.text("Producers reached 64.4 (46.0-86.2, n=3) MB/s.", "test")
    assert "(46.0–86.2, n=3)" in said or "(46,0–86,2, n=3)" in said, said
    assert "-86" not in said


def test_a_wide_table_of_few_rows_is_turned_on_its_side():
    header = ["Cluster"] + [f"Measure {i} (s)" for i in range(1, 12)]
    rec = {"id": "DRL-6", "kind": "table", "title": "", "data": {
        "header": header, "rows": [["NFS"] + [f"{i}.5 (1.0-2.0, n=3)" for i in range(1, 12)]]}}
    s = _branch(render.render_record(rec, None, lab=True, tr=Translator("en")), pdf=False)
    body = s.split("|===")[1].strip().splitlines()
    assert body[0] == "|Cluster |NFS" and len(body) == 12          # one row per measure
    assert body[1] == "|Measure 1 (s) |1.5 (1.0\u20132.0, n=3)"
    # ten columns or more rows stay as they are
    rec["data"]["rows"] *= 4
    s = _branch(render.render_record(rec, None, lab=True, tr=Translator("en")), pdf=False)
    assert s.split("|===")[1].strip().splitlines()[0].startswith("|Cluster |Measure 1 (s)")
