"""Evidence on every verdict (issue 36): each verdict names what exercised its claim (real
software, the lab's models, arithmetic on published figures), and its word follows from it:
"reproduced" only when the decisive step ran as real software, "reproduced-on-lab-model" when
it ran on one of the lab's models, "consistent-arithmetic" for a calculation. A run that did
not hold its load rate yields no verdict (not-measured), whatever else it showed."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tr4947 import paths
from tr4947.procedures import record

PROCEDURES = paths.REPO / "src" / "tr4947" / "procedures"


def recorder(tmp_path: Path, kind: str = "lab") -> record.Recorder:
    return record.start("x.ipynb", "x", "lab" if kind == "lab" else "mine", tmp_path, kind=kind)


def verdict(rec, word, ev, **kw):
    rec.verdict("FV-7", "fv.fix-nfsv41", word, tr="-", lab="-", why="-", evidence=ev, **kw)


def test_every_verdict_call_in_the_procedures_names_its_evidence():
    missing = []
    for f in sorted(PROCEDURES.rglob("*.py")):
        for n in ast.walk(ast.parse(f.read_text())):
            if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                    and n.func.attr == "verdict"
                    and "evidence" not in {k.arg for k in n.keywords}):
                missing.append(f"{f.relative_to(PROCEDURES)}:{n.lineno}")
    assert not missing, f"verdict calls without evidence=: {missing}"


def test_no_procedure_writes_the_word_reproduced_itself():
    """The word for agreement comes from the evidence (record.agrees), so a verdict whose
    decisive step ran on a model cannot be called plainly reproduced by a slip."""
    offenders = [f"{f.relative_to(PROCEDURES)}:{i}" for f in sorted(PROCEDURES.rglob("*.py"))
                 if f.name != "record.py"
                 for i, line in enumerate(f.read_text().splitlines(), 1)
                 if '"reproduced"' in line or "'reproduced'" in line]
    assert not offenders, offenders


def test_a_model_verdict_called_reproduced_is_refused(tmp_path):
    rec = recorder(tmp_path)
    ev = rec.evidence(real=["kafka"], model=["nfs-layer"])
    assert ev["kind"] == "model"
    with pytest.raises(ValueError, match="reproduced-on-lab-model"):
        verdict(rec, "reproduced", ev)
    verdict(rec, record.agrees(ev), ev)
    assert rec.records[-1].data["verdict"] == "reproduced-on-lab-model"
    assert rec.records[-1].data["evidence"]["model"] == ["nfs-layer"]


def test_arithmetic_is_consistent_arithmetic_and_real_is_reproduced(tmp_path):
    rec = recorder(tmp_path)
    arith = rec.evidence(real=["guide-code"], arithmetic="tr")
    with pytest.raises(ValueError):
        verdict(rec, "reproduced", arith)
    verdict(rec, "consistent-arithmetic", arith)
    real = rec.evidence(real=["kafka", "kafka-clients"], also=["nfs-layer"])
    assert real["kind"] == "real" and real["also"] == ["nfs-layer"]
    with pytest.raises(ValueError):
        verdict(rec, "reproduced-on-lab-model", real)
    verdict(rec, "reproduced", real)


def test_differs_and_scale_take_any_evidence_nothing_run_only_not_measured(tmp_path):
    rec = recorder(tmp_path)
    for ev in (rec.evidence(real=["kafka"]), rec.evidence(model=["ontap-stand-in"])):
        verdict(rec, "differs", ev)
        verdict(rec, "not-reproducible-at-lab-scale", ev)
    nothing = rec.evidence()
    assert nothing["kind"] == "none"
    verdict(rec, "not-measured", nothing)
    with pytest.raises(ValueError):
        verdict(rec, "differs", nothing)


@pytest.mark.parametrize("bad", [
    None, {}, {"kind": "lab"}, {"kind": "real", "real": []},
    {"kind": "model", "real": ["kafka"], "model": []},
    {"kind": "real", "real": ["kafka", "a-real-ontap-please"]},
    {"kind": "model", "model": ["a-model-nobody-wrote"]},
    {"kind": "arithmetic", "real": []},
])
def test_malformed_evidence_is_refused(tmp_path, bad):
    with pytest.raises((ValueError, TypeError)):
        verdict(recorder(tmp_path), "differs", bad)


def test_a_verdict_without_evidence_is_refused(tmp_path):
    with pytest.raises(TypeError):
        recorder(tmp_path).verdict("FV-7", "fv.fix-nfsv41", "differs", tr="-", lab="-",
                                   why="-")


def test_on_a_real_target_the_models_are_the_real_things(tmp_path):
    rec = recorder(tmp_path, "real")
    ev = rec.evidence(real=["kafka"], model=["nfs-layer"], also=["ontap-lease", "fsx-moto"])
    assert ev["kind"] == "real" and not ev["model"] and not ev["also"]
    assert ev["real"] == ["kafka", "linux-nfs", "ontap", "fsx"]
    verdict(rec, "reproduced", ev)


def test_a_run_that_did_not_hold_its_rate_yields_no_verdict(tmp_path):
    rec = recorder(tmp_path)
    ev = rec.evidence(real=["kafka", "omb"], also=["nfs-layer"])
    for word in ("reproduced", "differs", "not-reproducible-at-lab-scale"):
        with pytest.raises(ValueError, match="did not hold"):
            verdict(rec, word, ev, load_held=False)
    verdict(rec, "not-measured", ev, load_held=False)


def test_a_calibration_is_marked_apart_from_measured_runs(tmp_path):
    rec = recorder(tmp_path)
    runs = [{"name": "a", "unit": "msg/s", "target": 100, "achieved": 50},
            {"name": "b", "unit": "msg/s", "target": 80, "achieved": 79}]
    rec.load("CPU-2", "Calibration", runs, calibration=True)
    rec.load("CPU-2", "Measured", runs[1:])
    assert rec.records[0].data["calibration"] is True
    assert "calibration" not in rec.records[1].data
