"""Session-wide reporting: the bad-input suite's count, printed at the end of every run."""
from __future__ import annotations

from collections import Counter

import pytest

_BAD_INPUT: Counter = Counter()


def pytest_runtest_logreport(report):
    # One case = one parametrized test of a tests/**/test_bad_input_*.py file.
    if report.when != "call" or "test_bad_input_" not in report.nodeid or "[" not in report.nodeid:
        return
    area = report.nodeid.split("test_bad_input_", 1)[1].split(".py", 1)[0]
    _BAD_INPUT[(area, "cases")] += 1
    _BAD_INPUT[(area, "passed")] += report.passed


def pytest_terminal_summary(terminalreporter):
    areas = sorted({a for a, _ in _BAD_INPUT})
    if not areas:
        return
    cases = sum(_BAD_INPUT[(a, "cases")] for a in areas)
    passed = sum(_BAD_INPUT[(a, "passed")] for a in areas)
    per = ", ".join(f"{a} {_BAD_INPUT[(a, 'passed')]}/{_BAD_INPUT[(a, 'cases')]}" for a in areas)
    terminalreporter.write_sep("-", f"bad-input suite: {cases} cases, {passed} refused as "
                                    f"expected ({per})")


# --- Parallel runs: pytest-xdist with our own work units (tests/support/parallel.py) ---------
@pytest.hookimpl(optionalhook=True)    # an xdist hook: absent with -n 0 / -p no:xdist
def pytest_xdist_make_scheduler(config, log):
    from .support import parallel
    return parallel.Scheduler(config, log)
