"""What a notebook declares it needs provisioned (metadata.tr4947.provision), and when."""
import nbformat
import pytest

from tr4947.procedures import context
from tr4947.runbook import chapters


def test_sizing_without_its_storage_measurement_provisions_nothing():
    """With measure_storage=false the chapter only computes: no cluster is brought up (it
    used to bring the storage cluster up on the default lab, and leave it running)."""
    decl = chapters.declaration(chapters.notebook("sizing"))
    assert context.provision_spec(decl, {"measure_storage": False, "storage_cluster": "nfs"}) \
        is None
    spec = context.provision_spec(decl, {"measure_storage": True, "storage_cluster": "nfs"})
    assert spec["clusters"] == ["nfs"]


@pytest.mark.parametrize("path", chapters.notebooks(), ids=lambda p: p.stem)
def test_every_chapter_declaration_is_valid(path):
    chapters.declaration(path)


@pytest.mark.parametrize("when", ["measure_storage", "{nosuch}", "{target}", True])
def test_a_when_that_is_not_a_boolean_parameter_is_refused_with_the_fix(tmp_path, when):
    nb = nbformat.v4.new_notebook()
    nb.metadata["tr4947"] = {"parameters": {"measure_storage": {"type": "boolean"},
                                            "target": {"type": "string"}},
                             "provision": {"clusters": ["nfs"], "when": when}}
    path = tmp_path / "x.ipynb"
    nbformat.write(nb, path)
    with pytest.raises(chapters.RunbookError) as e:
        chapters.declaration(path)
    assert "x.ipynb" in str(e.value) and '"{measure_storage}"' in str(e.value)
