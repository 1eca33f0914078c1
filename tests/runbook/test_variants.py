"""A notebook run with other parameters is a chapter of its own (papermill's one notebook,
several parameter sets): the functional-validation chapter on the TR's Kafka 3.2.3 beside the
lab's. The runner lists, selects, digests and files each variant separately. The run cases use
a two-cell notebook in a real kernel that touches no target (its results go to a temporary
directory, so the committed ones are never replaced)."""
from __future__ import annotations

import json

import nbformat
import pytest

from tr4947 import paths
from tr4947.runbook import chapters, execute


def test_the_functional_validation_chapter_has_a_tr_kafka_variant():
    names = {c.name: c for c in execute.chapters(["functional-validation"])}
    assert set(names) == {"functional-validation", "functional-validation.kafka-3.2.3"}
    v = names["functional-validation.kafka-3.2.3"]
    assert v.variant == "kafka-3.2.3" and v.parameters == {"kafka_version": "3.2.3"}
    # Every variant names a parameter its notebook declares, with a value the lab can run.
    for c in execute.chapters():
        execute.check_parameters(c.path, {**c.parameters, "target": "lab"})
        if "kafka_version" in c.parameters:
            assert c.parameters["kafka_version"] in paths.kafka_versions()


def test_a_variants_inputs_hold_its_kafka_pins_and_parameters():
    default, variant = execute.chapters(["functional-validation"])
    a, _ = execute.freshness(default, "lab", {})
    b, _ = execute.freshness(variant, "lab", {})
    assert "lab/kafka/pom-3.2.3.xml" in b.files and "lab/kafka/pom-3.2.3.xml" not in a.files
    assert b.parameters["kafka_version"] == "3.2.3" and a.digest != b.digest


def test_an_unknown_variant_is_refused_with_the_choices():
    with pytest.raises(execute.RunbookError) as e:
        execute.chapters(["functional-validation.kafka-2.8.0"])
    assert "functional-validation.kafka-3.2.3" in str(e.value)


TINY_PARAMS = 'target = "lab"\nconfirm = False\nresults_dir = None\nflavour = "plain"'
TINY_BODY = ('from tr4947.procedures import attach\n'
             'run = attach("tiny", target, confirm, results_dir)\n'
             'run.rec.computed()\n'
             'run.rec.text("TI-1", "Flavour", flavour)\nrun.finish()\nprint(flavour)')


@pytest.fixture
def tiny(tmp_path, monkeypatch):
    nbs = tmp_path / "notebooks"
    nbs.mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(TINY_PARAMS, metadata={"tags": ["parameters"]}),
                nbformat.v4.new_code_cell(TINY_BODY)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.metadata["tr4947"] = {"chapter": "tiny", "variants": {"salty": {"flavour": "salty"}}}
    nbformat.write(nb, nbs / "tiny.ipynb")
    monkeypatch.setattr(chapters, "NOTEBOOKS", nbs)
    return tmp_path / "results"


def test_each_variant_runs_with_its_parameters_and_is_filed_apart(tiny, capsys):
    out = execute.run("lab", results=tiny)
    assert [(o.notebook, o.status) for o in out] == [("tiny", "ran"), ("tiny.salty", "ran")]
    plain = json.loads((tiny / "lab" / "tiny.json").read_text())
    salty = json.loads((tiny / "lab" / "tiny.salty.json").read_text())
    assert plain["chapter"] == "tiny" and salty["chapter"] == "tiny.salty"
    assert plain["notebook"] == salty["notebook"] == "tiny"
    assert [r["data"]["body"] for r in plain["records"]] == ["plain"]
    assert [r["data"]["body"] for r in salty["records"]] == ["salty"]
    assert salty["run"]["parameters"]["flavour"] == "salty"
    assert "flavour" not in plain["run"]["parameters"]
    kept = nbformat.read(tiny / "lab" / "tiny.salty.ipynb", as_version=4)
    assert "salty" in kept.cells[-1].outputs[0]["text"]
    # Both are now up to date; naming the variant runs it alone.
    again = execute.run("lab", results=tiny)
    assert {o.status for o in again} == {"up-to-date"}
    only = execute.run("lab", ["tiny.salty"], results=tiny)
    assert [(o.notebook, o.status) for o in only] == [("tiny.salty", "ran")]
    # On a real target the variant runs only when named.
    real = execute.run("aws-cvo", results=tiny)
    assert [(o.notebook, o.status) for o in real] == [("tiny", "ran")]


def test_on_a_real_target_a_variant_runs_only_when_named():
    """A reader's cluster runs one Kafka release: `runbook functional-validation --target
    my-cluster` must not also run the 3.2.3 variant (it would be refused there)."""
    real = [c.name for c in execute.chapters(["functional-validation"], lab=False)]
    assert real == ["functional-validation"]
    named = [c.name for c in execute.chapters(["functional-validation.kafka-3.2.3"], lab=False)]
    assert named == ["functional-validation.kafka-3.2.3"]
    assert "functional-validation.kafka-3.2.3" not in [c.name for c in
                                                       execute.chapters(lab=False)]
