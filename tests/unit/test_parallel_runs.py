"""The suite's split between pytest-xdist's workers (tests/support/parallel.py): the tests that
bring up a lab never run beside each other, the site tests share one build."""
import re

import pytest

from tr4947 import paths

from ..support import parallel

TESTS = paths.REPO / "tests"


@pytest.mark.parametrize("nodeid,unit", [
    ("tests/lab/test_storage.py::test_df[x]", "lab"),
    ("tests/notebooks/test_drift.py::test_altered", "default-lab"),
    ("results/lab/cpu-utilization.ipynb::Cell 3", "default-lab"),
    ("tests/site/test_jupyterlab.py::test_chapter_runs", "default-lab"),
    ("tests/site/test_glance.py::test_every_page[en]", "site"),
    ("tests/unit/test_units.py::test_bytes[1-2]", "tests/unit/test_units.py"),
    ("tests/docs/test_tr_data.py::test_row[a::b]", "tests/docs/test_tr_data.py"),
])
def test_each_test_belongs_to_one_unit(nodeid, unit):
    assert parallel.work_unit(nodeid) == unit


def lab_modules() -> list[str]:
    """Test modules that bring up a lab or run a chapter on one (marked ``lab``, or using
    tests/lab/conftest.py's own_lab)."""
    found = []
    for f in sorted(TESTS.rglob("test_*.py")):
        text = f.read_text()
        if re.search(r"pytest\.mark\.lab\b|\bown_lab\(", text):
            found.append(f.relative_to(paths.REPO).as_posix())
    return found


def test_every_lab_test_runs_on_a_lab_worker():
    """A module that brings up a test lab (own_lab) is in ``lab``; one that runs chapters on
    the default lab is in ``default-lab``: neither runs beside another of its kind."""
    mods = lab_modules()
    assert "tests/site/test_jupyterlab.py" in mods and "tests/lab/test_storage.py" in mods
    wrong = []
    for m in mods:
        own = bool(re.search(r"\bown_lab\(", (paths.REPO / m).read_text()))
        want = "lab" if own else "default-lab"
        if parallel.work_unit(f"{m}::t") != want:
            wrong.append((m, want))
    assert wrong == [], (f"{wrong}: these would run beside another lab of the same kind: add "
                         "them to that group in ONE_WORKER (tests/support/parallel.py)")


def test_the_long_groups_are_handed_out_first():
    from collections import OrderedDict

    class Node:
        def __init__(self, name):
            self.name, self.sent = name, []

        def send_runtest_some(self, indices):
            self.sent.extend(indices)

    sched = parallel.Scheduler.__new__(parallel.Scheduler)
    ids = ["tests/docs/a.py::t1", "tests/docs/a.py::t2", "tests/site/s.py::t",
           "tests/lab/l.py::t", "tests/unit/u.py::t"]
    sched.collection = ids
    sched.workqueue = OrderedDict()
    for i in ids:
        sched.workqueue.setdefault(sched._split_scope(i), OrderedDict())[i] = False
    a, b = Node("gw0"), Node("gw1")
    sched.assigned_work = {a: OrderedDict(), b: OrderedDict()}
    sched.registered_collections = {a: ids, b: ids}
    sched._assign_work_unit(a)
    sched._assign_work_unit(b)
    assert [ids[i] for i in a.sent] == ["tests/lab/l.py::t"]
    assert [ids[i] for i in b.sent] == ["tests/site/s.py::t"]
