"""`tr4947 runbook --profile`: where a run's time went, with overlapping measurement windows
counted once."""
from __future__ import annotations

import json

from tr4947.runbook import __main__ as cli
from tr4947.runbook import profile


def test_overlapping_windows_count_once_and_old_entries_add_up():
    entries = [{"seconds": 10, "end": 110}, {"seconds": 10, "end": 105},   # 95..110: 15 s
               {"seconds": 5, "end": 200},                                 # 195..200: 5 s
               {"seconds": 7}]                                             # no end: 7 s
    assert profile.measured_seconds(entries) == 27


def test_windows_reported_together_add_up():
    """A load record reports its runs' windows at once, after them (one end time): they
    ran one after another, so they add up instead of collapsing into the longest."""
    entries = [{"seconds": 30, "end": 500}, {"seconds": 30, "end": 500},
               {"seconds": 30, "end": 500}, {"seconds": 20, "end": 300}]
    assert profile.measured_seconds(entries) == 110


def test_the_report_names_the_share_outside_the_windows(tmp_path, capsys):
    lab = tmp_path / "lab"
    lab.mkdir()
    for name, total, prov, meas in (("a", 100.0, 10.0, 60.0), ("b", 300.0, 20.0, 140.0)):
        (lab / f"{name}.json").write_text(json.dumps({"run": {"timing": {
            "total_s": total, "provision_s": prov, "measured_s": meas}}}))
    assert cli.main(["--profile", "--results", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    # 400 s in all, 200 s measuring: half outside, 30 s of it provisioning.
    assert "outside measurement windows: 200 s of 400 s (50%): provisioning 30 s, " \
           "the rest of the notebooks 170 s" in out
    assert out.index("\nb ") < out.index("\na "), "the longest chapter first"


def test_profile_refuses_chapters(capsys):
    import pytest
    with pytest.raises(SystemExit) as exc:
        cli.main(["--profile", "sizing"])
    assert exc.value.code == 2 and "runs nothing" in capsys.readouterr().err
