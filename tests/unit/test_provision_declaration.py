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


@pytest.mark.parametrize("path", chapters.notebooks(), ids=lambda p: p.stem)
def test_every_declared_stage_resolves(path):
    """A stage (a later deployment the chapter asks for by name) is a provision spec of its
    own: every one a notebook declares resolves, so none fails half way through a run."""
    decl = chapters.declaration(path)
    for stage in (decl.get("provision") or {}).get("stages", {}):
        spec = context.provision_spec(decl, {}, stage)
        assert spec and spec["clusters"] and spec["fresh"] is True, (stage, spec)


def test_the_performance_chapters_declare_every_cluster_they_run_on():
    """No chapter builds a cluster of its own: the performance chapters declare theirs
    (CVO-8's DAS and NFS clusters as the stage "compare"), and an undeclared stage is
    refused with the ones there are."""
    for name in ("aff-a900-performance", "aws-cvo-performance", "aws-fsx-performance"):
        decl = chapters.declaration(chapters.notebook(name))
        assert context.provision_spec(decl, {})["clusters"] == ["nfs"], name
    decl = chapters.declaration(chapters.notebook("aws-cvo-performance"))
    assert context.provision_spec(decl, {}, "compare")["clusters"] == ["das", "nfs"]
    with pytest.raises(ValueError) as e:
        context.provision_spec(decl, {}, "nosuch")
    assert "no stage 'nosuch' declared; declared: ['compare']" in str(e.value)


def test_no_procedure_provisions_on_its_own():
    """Provisioning is the runner's (and by hand, attach's) from the notebook's metadata: a
    procedure asks the ChapterRun for a declared stage, never Target.provision directly."""
    import re
    from tr4947 import paths
    procedures = paths.REPO / "src/tr4947/procedures"
    calls = {str(f.relative_to(procedures)) for f in procedures.rglob("*.py")
             if re.search(r"\.t(arget)?\.provision\(", f.read_text())}
    assert calls == set(), calls
