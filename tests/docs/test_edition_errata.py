"""The tables of edition differences on the errata pages (partial$edition-errata.adoc in each
edition) are written by hand from docs/data/tr-edition-differences.yaml: each row is anchored
[[id]] by the id of the entry it shows. The English table has the rows of both translated
editions; the French and Japanese tables have those of their own TR edition only.
No seeds needed: this checks the tables against the dataset, not the dataset against the TR.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

try:
    from .conftest import REPO
except ImportError:  # collected without --import-mode=importlib (e.g. -o addopts="")
    import importlib.util

    _spec = importlib.util.spec_from_file_location("_docs_conftest", Path(__file__).with_name("conftest.py"))
    _conftest = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_conftest)
    REPO = _conftest.REPO

DIFFERENCES = REPO / "docs" / "data" / "tr-edition-differences.yaml"
PARTIAL = Path("modules") / "ROOT" / "partials" / "edition-errata.adoc"
PARTIALS = {
    "en": REPO / "docs" / PARTIAL,
    "fr": REPO / "docs" / "fr" / PARTIAL,
    "ja": REPO / "docs" / "ja" / PARTIAL,
}
ANCHOR = re.compile(r"\[\[([^\]]+)\]\]")
VALID_ANCHOR = re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]*")


def differences() -> list[dict]:
    return yaml.safe_load(DIFFERENCES.read_text(encoding="utf-8"))["differences"]


def anchor_id(entry_id: str) -> str:
    """The AsciiDoc anchor of a dataset id: the id itself, with any character an inline
    anchor does not allow replaced by '-' (none of the current ids needs it)."""
    return re.sub(r"[^A-Za-z0-9_.:-]", "-", entry_id)


def editions_by_anchor() -> dict[str, str]:
    """{anchor: edition} for every entry of the dataset."""
    return {anchor_id(d["id"]): d["edition"] for d in differences()}


def table_rows(text: str) -> list[str]:
    """The rows of the partial's table (blank-line separated blocks after the header row)."""
    body = re.split(r"^\|===\s*$", text, flags=re.M)[1]
    blocks = [b.strip() for b in re.split(r"\n\s*\n", body) if b.strip()]
    return blocks[1:]  # drop the header row


def anchors(lang: str) -> list[str]:
    return ANCHOR.findall(PARTIALS[lang].read_text(encoding="utf-8"))


def test_dataset_ids_make_distinct_valid_anchors():
    ids = [anchor_id(d["id"]) for d in differences()]
    assert len(ids) == len(set(ids)), "two dataset ids map to the same anchor"
    assert [i for i in ids if not VALID_ANCHOR.fullmatch(i)] == []


@pytest.mark.parametrize("lang", PARTIALS)
def test_every_row_is_anchored_by_one_dataset_entry(lang):
    known = editions_by_anchor()
    text = PARTIALS[lang].read_text(encoding="utf-8")
    rows = table_rows(text)
    assert rows, f"{lang}: the table has no rows"
    unanchored = [r.splitlines()[0] for r in rows if len(ANCHOR.findall(r)) != 1
                  or not r.startswith("|[[")]
    assert unanchored == [], f"{lang}: rows without exactly one leading [[id]] anchor"
    found = anchors(lang)
    assert len(found) == len(rows), f"{lang}: anchors outside the table rows"
    assert len(found) == len(set(found)), f"{lang}: an entry has more than one row"
    assert [a for a in found if a not in known] == [], \
        f"{lang}: anchors that name no entry of {DIFFERENCES.name}"


@pytest.mark.parametrize("lang", ["fr", "ja"])
def test_a_translated_table_cites_only_its_own_edition(lang):
    known = editions_by_anchor()
    assert [a for a in anchors(lang) if known.get(a) != lang] == []


def test_the_english_table_has_the_rows_of_both_translated_tables():
    english, translated = anchors("en"), anchors("fr") + anchors("ja")
    assert sorted(english) == sorted(translated)
