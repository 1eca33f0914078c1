"""The claims ledger and the chapters' verdict blocks come from verdict records only: a
verdict changes the row, a claim nobody judged says so, a verdict for an unknown claim is an
error, and another target's verdicts get a column of their own."""
from __future__ import annotations

import pytest

from tr4947.results import ledger
from tr4947.results.i18n import Translator

CLAIMS = [
    {"id": "rec.speedup", "page": "broker-recovery", "section": "rec-3", "tr": "9x",
     "statement": {"en": "NFS replaces a broker faster.", "fr": "NFS remplace plus vite.",
                   "ja": "NFS は速い。"}},
    {"id": "fv.crash-nfsv3", "page": "functional-validation", "section": "fv-7",
     "tr": "broker dead", "statement": {"en": "NFSv3 brokers die.", "fr": "Ils meurent.",
                                        "ja": "停止する。"}},
]


def doc(target, verdicts, kind="lab"):
    return {"chapter": "broker-recovery", "run": {"id": f"run-{target}", "target": target,
                                                  "kind": kind},
            "records": [{"id": "REC-3", "kind": "verdict", "title": c,
                         "data": {"claim": c, "verdict": v, "tr": "9x",
                                  "lab": {"median": 1.4, "low": 1.2, "high": 1.6, "n": 3,
                                          "unit": "x"},
                                  "why": "because", "action": "do this", "load_held": held}}
                        for c, v, held in verdicts]}


def test_a_row_per_claim_and_the_verdict_from_its_record():
    rs = ledger.rows(CLAIMS, [doc("lab", [("rec.speedup", "differs", None)])])
    text = ledger.ledger(rs)
    assert text.count("\na|[[claim-") == 2 and "a|[[claim-rec-speedup]]xref:" in text
    assert "[.verdict-differs]#differs#" in text and "1.4 x (1.2–1.6, n=3)" in text
    assert "no run yet" in text                     # fv.crash-nfsv3: nobody judged it
    assert "2 claims: 1 differ, 1 with no run yet." in text
    rs = ledger.rows(CLAIMS, [doc("lab", [("rec.speedup", "reproduced", True)])])
    assert "[.verdict-reproduced]#reproduced#" in ledger.ledger(rs)


def test_a_verdict_for_an_unknown_claim_is_an_error():
    with pytest.raises(ValueError, match="'rec.nope', which claims.yaml does not list"):
        ledger.rows(CLAIMS, [doc("lab", [("rec.nope", "differs", None)])])


def test_another_targets_verdicts_get_their_own_column():
    rs = ledger.rows(CLAIMS, [doc("lab", [("rec.speedup", "not-measured", False)]),
                              doc("my-aff", [("rec.speedup", "reproduced", True)], "real")])
    text = ledger.ledger(rs)
    assert "Verdict on `my-aff`" in text
    assert "not measured# (rate not held)" in text and "#reproduced#" in text


class Marking(Translator):
    """French, with every recorded string marked, to see which words went through it."""

    def __init__(self):
        super().__init__("fr")

    def text(self, s, where=""):
        return f"«{s}»"


def test_the_verdict_block_shows_its_pages_claims_in_the_editions_language():
    rs = ledger.rows(CLAIMS, [doc("lab", [("rec.speedup", "differs", None)])])
    block = ledger.verdict_block(rs, "broker-recovery", Marking())
    assert "<<rec-3,NFS remplace plus vite.>>" in block
    assert "«because»" in block and "«do this»" in block and "«9x»" in block
    assert "1,4 x (1,2–1,6, n=3)" in block            # French decimals
    assert "NFSv3" not in block and "#differs#" not in block   # French verdict word
    assert ledger.verdict_block(rs, "sizing") == ""


def test_a_load_record_warns_when_a_run_did_not_hold():
    from tr4947.results import load
    rec = {"id": "CPU-2", "kind": "load", "title": "asked and achieved",
           "data": {"threshold": 0.95, "runs": [
               {"name": "DAS", "unit": "msg/s", "target": 1000, "achieved": 990, "ratio": 0.99,
                "held": True},
               {"name": "NFS", "unit": "msg/s", "target": 1000, "achieved": 400, "ratio": 0.4,
                "held": False}]}}
    text = load.render(rec)
    assert text.startswith("[WARNING.load-not-held]") and "1 of 2 runs did not hold" in text
    assert "|NFS |1,000 |400 |40 % |[.not-held]#no#" in text
    fr = load.render(rec, Translator("fr"))
    assert fr.startswith("[WARNING.load-not-held]") and "|1\u202f000 |" in fr
    rec["data"]["runs"][1].update(achieved=960, ratio=0.96, held=True)
    assert "WARNING" not in load.render(rec)
    assert "|Asked (msg/s) |Achieved (msg/s) |" in load.render(rec)


def test_a_load_record_names_the_unit_its_runs_counted_in():
    """The drills' producers count records, OMB counts messages: the table says which."""
    from tr4947.results import load
    rec = {"id": "DRL-1", "kind": "load", "title": "the producers' rate",
           "data": {"threshold": 0.95, "runs": [
               {"name": "nfs run 1", "unit": "records/s", "target": 1800, "achieved": 1790,
                "ratio": 0.99, "held": True}]}}
    assert "|Asked (records/s) |Achieved (records/s) |" in load.render(rec)
    assert "msg/s" not in load.render(rec)
    assert "enregistrements/s" in load.render(rec, Translator("fr"))
    assert "レコード/秒" in load.render(rec, Translator("ja"))


# --- issue 36: evidence, the new words, whole claims, the home page's short ledger ---------------
def evidenced(verdict, ev, versions=None):
    d = doc("lab", [("rec.speedup", verdict, None)])
    d["records"][0]["data"]["evidence"] = ev
    d["run"]["versions"] = versions or {"Kafka": "4.1.1"}
    return d


def test_the_evidence_column_names_real_software_and_the_labs_models():
    ev = {"kind": "model", "real": ["kafka", "kafka-tools"], "model": ["nfs-layer"],
          "also": ["ontap-stand-in"]}
    rs = ledger.rows(CLAIMS, [evidenced("reproduced-on-lab-model", ev)])
    text = ledger.ledger(rs)
    assert "|Claim and verdict |Evidence |" in text       # claim and verdict share the pinned cell
    assert "xref:broker-recovery.adoc#rec-3[NFS replaces a broker faster.] +\n[.verdict-reproduced.verdict-model]#" in text
    assert "#reproduced on the lab's model#" in text
    assert "The decisive step ran on the lab's model: the lab's NFS client layer" in text
    assert "Real: Kafka 4.1.1 brokers, Kafka's command-line tools." in text
    assert "1 reproduced on the lab's model" in text
    block = ledger.verdict_block(rs, "broker-recovery")
    assert "_Evidence_: The decisive step ran on the lab's model" in block


def test_arithmetic_and_records_without_evidence():
    rs = ledger.rows(CLAIMS, [evidenced("consistent-arithmetic",
                                        {"kind": "arithmetic", "real": ["guide-code"],
                                         "model": [], "also": [], "figures": "tr"})])
    text = ledger.ledger(rs)
    assert "#consistent arithmetic#" in text and "Arithmetic on the TR's published figures." in text
    old = ledger.rows(CLAIMS, [doc("lab", [("rec.speedup", "reproduced", None)])])
    assert "not recorded (a run before evidence was kept)" in ledger.ledger(old)


@pytest.mark.parametrize("lang", ["en", "fr", "ja"])
def test_a_claim_with_an_equals_sign_stays_whole(lang):
    """'With nconnect=16, ONTAP lists ...' was read as the xref macro's attributes: cut at
    the comma in English, the raw target shown in Japanese."""
    claims = [{"id": "cvo.nconnect-48", "page": "aws-cvo", "section": "cvo-4", "tr": "48",
               "statement": {"en": "With nconnect=16, ONTAP lists 16 connections.",
                             "fr": "Avec nconnect=16, ONTAP liste 16 connexions.",
                             "ja": "nconnect=16 では、ONTAP は 16 本を表示する。"}}]
    text = ledger.ledger(ledger.rows(claims, []), Translator(lang))
    whole = claims[0]["statement"][lang]
    assert f'xref:aws-cvo.adoc#cvo-4["{whole}"]' in text


def test_the_home_page_gets_the_counts_and_only_the_rows_to_act_on():
    rs = ledger.rows(CLAIMS, [doc("lab", [("rec.speedup", "differs", None),
                                          ("fv.crash-nfsv3", "not-measured", None)])])
    home = ledger.home(rs)
    assert "2 claims: 1 differ, 1 not measured." in home
    assert "xref:ledger.adoc[]" in home
    assert "NFS replaces a broker faster." in home and "NFSv3 brokers die." not in home
    assert "do this" in home
    assert ledger.ledger(rs, full=False) == home
