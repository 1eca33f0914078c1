"""Results in the reader's language: the message catalogues cover every committed result,
strings built from data go through templates, and what a catalogue lacks is reported."""
import json
import re
import shutil

import pytest

from tr4947 import paths
from tr4947.results import i18n
from tr4947.results.i18n import Translator, has_words

RESULTS = paths.REPO / "results"


@pytest.mark.parametrize("lang", ["fr", "ja"])
def test_every_committed_result_string_has_a_translation(lang):
    """The check `python -m tr4947.results.i18n missing` runs: a French or Japanese page would
    otherwise show an English result string."""
    tr = i18n.check(RESULTS, (lang,))[lang]
    missing = sorted({s for _, s in tr.missing})
    assert missing == [], f"{len(missing)} string(s) with no {lang} translation, e.g. {missing[:5]}"


@pytest.mark.parametrize("lang", ["fr", "ja"])
def test_every_word_of_the_renderer_has_a_translation(lang):
    own = i18n.Catalogue.load(lang).own
    lacking = [m for m in i18n.renderer_messages() if m not in own]
    assert lacking == []


def test_babel_sees_every_message_the_renderer_writes():
    """A message Babel cannot extract (a call inside an f-string, a variable) never reaches
    the catalogues: every tr._(...) in the source must be one extraction finds."""
    import ast
    extracted = set(i18n.renderer_messages())
    src = i18n.Path(i18n.__file__).parent
    found = set()
    for f in src.glob("*.py"):
        for node in ast.walk(ast.parse(f.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "_"):
                arg = node.args[0] if node.args else None
                assert isinstance(arg, ast.Constant) and isinstance(arg.value, str), \
                    f"{f.name}:{node.lineno}: tr._() needs a literal message"
                found.add(arg.value)
    assert found and found <= extracted, found - extracted


def test_a_string_built_from_new_data_is_translated_by_its_template():
    """A re-run with other hosts, rounds and figures needs no new catalogue entry."""
    fr, ja = Translator("fr"), Translator("ja")
    assert fr.text("Round 7: --verify on cluster_z") == "Tour 7\u00a0: --verify sur cluster_z"
    assert ja.text("Round 7: --verify on cluster_z") == "ラウンド 7：cluster_z で --verify"
    assert fr.text("PRE-2 on host-9 (Kafka stopped, then started again)") == \
        "PRE-2 sur host-9 (Kafka arrêté, puis redémarré)"
    # numbers in placeholders follow the locale; a spread keeps its shape
    assert fr.text("12,345.5 (9.1-13.25, n=4)") == "12\u202f345,5 (9,1\u201313,25, n=4)"
    assert ja.text("12,345.5 (9.1-13.25, n=4)") == "12,345.5 (9.1\u201313.25, n=4)"
    assert fr.missing == [] and ja.missing == []
    # a French title starts with a capital; Japanese keeps a leading Latin word as it is
    assert fr.text("HA pair: publish latency per driver").startswith("Paire HA")
    assert ja.text("Create the volume at advanced privilege").startswith("advanced")


def test_a_sentence_the_catalogue_lacks_stays_english_and_is_reported_alone():
    fr = Translator("fr")
    note = "Both times count from the replacement broker's start. A sentence nobody wrote yet."
    assert fr.text(note, "somewhere") == note
    assert fr.missing == [("somewhere", "A sentence nobody wrote yet.")]


def test_verbatim_placeholders_do_not_swallow_prose():
    """'{path} on {path2}' (a mount) must not match 'info (not on NFS)' and leave English."""
    fr = Translator("fr")
    out = fr.text("info (not on NFS) somewhere on the list")
    assert out == "info (not on NFS) somewhere on the list"
    assert fr.missing


def test_clauses_and_sentences_are_translated_one_by_one_and_joined_per_language():
    s = "The log time is the TR's method; the ISR time is when the cluster has every replica " \
        "in sync again."
    assert Translator("fr").text(s) == ("La durée d'après le journal suit la méthode du TR\u202f; "
                                        "la durée ISR est le moment où le cluster a de nouveau "
                                        "toutes ses répliques synchronisées.")
    ja = Translator("ja").text(s)
    assert ja.endswith("です。") and "。ISR" in ja and ";" not in ja


def test_data_is_not_prose():
    for data in ("fv_c1-broker-1", "/demo/broker_demo_1", "nfs4 vers=4.1, nconnect=16", "-",
                 "198.18.10.11:/kafka_fg_vol01", "10,000", "15.4 (14.9-17.5, n=3)",
                 "420.3 GB / 281.7 GB", "ONTAP", "producerRate", "`svm_kafka`"):
        assert not has_words(data), data
    for prose in ("HA pair", "sync", "Verdict", "alive", "debian 12, kernel 6.1"):
        assert has_words(prose), prose


def test_numbers_units_and_dates_follow_the_locale():
    fr, ja, en = Translator("fr"), Translator("ja"), Translator("en")
    assert fr.text("420.3 GB / 281.7 GB") == "420,3 Go / 281,7 Go"
    assert fr.text("24.4 MiB/s") == "24,4 Mio/s"
    assert fr.number("2,000") == "2\u202f000" and ja.number("2,000") == "2,000"
    assert fr.number("10000") == "10000"          # a value recorded ungrouped stays so
    # an address, a version and an option are not numbers
    assert fr.text("198.18.10.12:/v Kafka 3.2.3 vers=4.1") == "198.18.10.12:/v Kafka 3.2.3 vers=4.1"
    assert en.text("Round 1: --execute on fv_c1") == "Round 1: --execute on fv_c1"
    iso = "2026-11-25T16:18:14+00:00"
    assert (en.date(iso), fr.date(iso), ja.date(iso)) == ("Nov 25, 2026", "25 nov. 2026",
                                                          "2026/11/25")


def test_the_missing_command_lists_what_to_translate_and_fails(tmp_path, capsys):
    shutil.copytree(RESULTS / "lab", tmp_path / "lab", ignore=lambda d, f: [
        x for x in f if x != "sizing.json"])
    doc = json.loads((tmp_path / "lab" / "sizing.json").read_text())
    doc["records"][0]["title"] = "A table title no catalogue has"
    (tmp_path / "lab" / "sizing.json").write_text(json.dumps(doc))
    assert i18n.main(["missing", "--results", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "fr\tlab/sizing.json SIZ-1" in out and "A table title no catalogue has" in out
    assert out.count("A table title no catalogue has") == 2          # fr and ja
    assert i18n.main(["missing", "--results", str(RESULTS)]) == 0


def test_update_adds_new_msgids_to_every_catalogue_and_keeps_translations(tmp_path, monkeypatch):
    locale = tmp_path / "locale"
    shutil.copytree(i18n.LOCALE_DIR, locale)
    monkeypatch.setattr(i18n, "LOCALE_DIR", locale)
    i18n.Catalogue.load.cache_clear()
    results = tmp_path / "results"
    shutil.copytree(RESULTS / "lab", results / "lab", ignore=lambda d, f: [
        x for x in f if x != "preflight.json"])
    doc = json.loads((results / "lab" / "preflight.json").read_text())
    doc["records"][0]["title"] = "Something measured for the first time"
    (results / "lab" / "preflight.json").write_text(json.dumps(doc))
    try:
        assert i18n.update(results) == ["Something measured for the first time"]
        for lang in ("fr", "ja"):
            po = (locale / lang / "LC_MESSAGES" / "results.po").read_text()
            assert 'msgid "Something measured for the first time"\nmsgstr ""' in po
            # what was translated stays translated, templates included
            assert 'msgid "Round {n}: {cmd} on {cluster}"' in po
        assert 'msgstr "Tour {n} : {cmd} sur {cluster}"' in \
            (locale / "fr" / "LC_MESSAGES" / "results.po").read_text()
        i18n.Catalogue.load.cache_clear()
        assert Translator("fr").text("Round 2: x on y") == "Tour 2\u00a0: x sur y"
    finally:
        i18n.Catalogue.load.cache_clear()


@pytest.mark.parametrize("lang", ["fr", "ja"])
def test_catalogues_pass_the_format_checks_translators_tools_run(lang):
    """What ``msgfmt --check-format`` checks: no entry is marked a %-format string ("% of a
    core" is prose, and Babel marks any "%" before a letter), so translators' tools accept a
    translation that moves the "%"; every {name} of a msgid is in its msgstr; Babel's own
    checkers find nothing."""
    from babel.messages.pofile import read_po
    text = i18n.po_path(lang).read_text()
    marked = re.findall(r'(?m)^#,.*\bpython-format\b.*\nmsgid "(.*)"', text)
    assert marked == [], f"marked python-format (a %-string): {marked[:3]}"
    with i18n.po_path(lang).open("rb") as fh:
        cat = read_po(fh, locale=lang)
    for m in cat:                  # read_po marks them again on reading
        m.flags.discard("python-format")
    errors = [(m.id, [str(e) for e in errs]) for m, errs in cat.check()]
    assert errors == [], errors[:3]
    for m in cat:
        if m.id and m.string:
            assert set(i18n._PLACEHOLDER.findall(m.string)) == \
                set(i18n._PLACEHOLDER.findall(m.id)), (m.id, m.string)
