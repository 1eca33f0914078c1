"""PRE-1's space check: a Kafka volume used past its autosize grow threshold, which autosize
will not grow, fails with the command that fixes it; read from the ONTAP stand-in with the
snippet the failure drills chapter shows, and from text in ONTAP's -fields layout."""
from __future__ import annotations

import pytest

from tr4947.lab.ontap import session, state
from tr4947.procedures import space_check as pf
from tr4947.procedures.nfs_audit import FAIL, PASS
from tr4947.targets.base import ontap_lines, render_vars, snippet_path

MiB = 1024 ** 2

ONTAP_TEXT = """\
vserver   volume       size  used    available percent-used autosize-mode max-autosize autosize-grow-threshold-percent
--------- ------------ ----- ------- --------- ------------ ------------- ------------ -------------------------------
svm_kafka kafka_nfs_b1 100GB 93.50GB 1.50GB    98%          off           120GB        92%
svm_kafka kafka_nfs_b2 100GB 10GB    85GB      10%          grow          120GB        92%
2 entries were displayed.
"""


def test_parse_reads_every_row_whatever_the_widths():
    rows = pf.parse_volume_space(ONTAP_TEXT)
    assert [(r.volume, r.percent_used, r.autosize, r.threshold) for r in rows] == [
        ("kafka_nfs_b1", 98, "off", 92), ("kafka_nfs_b2", 10, "grow", 92)]
    assert rows[0].size == 100 * 1024 ** 3 and rows[0].available == int(1.5 * 1024 ** 3)
    assert pf.parse_volume_space("Error: command failed") == []


def row(pct: int, autosize: str = "off", size: int = 100 * MiB, maximum: int = 120 * MiB,
        threshold: int = 85) -> pf.SpaceRow:
    return pf.SpaceRow("v1", size, size * pct // 100, size * (100 - pct) // 100, pct, autosize,
                       maximum, threshold)


@pytest.mark.parametrize("pct, autosize, maximum, verdict, fix", [
    (50, "off", 120 * MiB, PASS, ""),
    (84, "off", 120 * MiB, PASS, ""),
    (85, "off", 120 * MiB, FAIL, "volume autosize -vserver svm_kafka -volume v1 -mode grow "
                                    "-maximum-size 200MB"),
    (97, "grow", 120 * MiB, PASS, ""),
    (97, "grow_shrink", 120 * MiB, PASS, ""),
    # autosize on, but the volume has reached its maximum: only a person can grow it now
    (97, "grow", 100 * MiB, FAIL, "volume size -vserver svm_kafka -volume v1 -new-size +100MB"),
])
def test_verdict(pct, autosize, maximum, verdict, fix):
    r = pf.space_verdict(row(pct, autosize, maximum=maximum), "svm_kafka")
    assert (r.verdict, r.fix) == (verdict, fix)
    if verdict == FAIL:
        assert "the broker stops when the volume is full" in r.note


@pytest.fixture
def root(ontap_one_volume):
    return ontap_one_volume


def shell(root, *lines: str) -> str:
    r = session.Session(root).run_sync("; ".join(["set -privilege admin -confirmations off",
                                                  *lines]))
    assert not r.error, r.output
    return r.output


def check(root) -> pf.SpaceRow:
    """The snippet the drills chapter shows, run by the stand-in, parsed and judged."""
    text = render_vars(snippet_path("preflight/PRE-1-volume-space.ontap").read_text(),
                       {"svm": "svm_kafka", "volume": "v1"}, ".ontap")
    [r] = pf.parse_volume_space(shell(root, *ontap_lines(text)))
    return pf.space_verdict(r, "svm_kafka")


def fill(root, n: int) -> None:
    vol = state.load(root).volumes["svm_kafka:v1"]
    with open(state.backing_dir(vol, root) / "segment", "wb") as f:
        f.write(b"k" * n)


def test_stand_in_volume_checked_before_and_after_it_fills_and_after_the_fix(root):
    fill(root, 10 * MiB)
    before = check(root)
    assert before.verdict == PASS and before.autosize == "off"
    assert "autosize off" in before.note
    # 95 MB usable (5% snapshot reserve); 90 MB used is 94%, past the 85% threshold
    fill(root, 90 * MiB)
    full = check(root)
    assert (full.verdict, full.percent_used, full.threshold) == (FAIL, 94, 85)
    shell(root, full.fix)                               # the fix the check names
    fixed = check(root)
    assert fixed.verdict == PASS and fixed.autosize == "grow"
    assert fixed.max_autosize == 200 * MiB
