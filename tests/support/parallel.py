"""How `make test` shares the suite between pytest-xdist's workers (tests/conftest.py).

xdist's own ``loadgroup`` reads a test's group from its node id, which pytest 9 no longer lets
a plugin rename, so the groups are made here, from where a test lives:

- Test labs share one address range (198.19.0.0/16, tests/lab/conftest.py): every test that
  brings one up runs on one worker, one after the other (``lab``).
- nbval and the JupyterLab test run chapters on the default lab (198.18.0.0/16, its own
  namespaces and state dir), never beside each other (``default-lab``); beside a test lab
  they may, as a developer's lab runs beside `make test`.
  tests/unit/test_parallel_runs.py checks that every test marked ``lab`` is in one of the two.
- The site tests share one Antora build (a session fixture) and one browser: one worker
  (``site``).
- Every other module is a unit of its own (its module fixtures stay shared) and goes to
  whichever worker is free.

The two long groups (LONG) are handed out first, so that one worker starts the test labs while
the other starts the site build.
"""
from __future__ import annotations

from xdist.scheduler import LoadScopeScheduling

#: group -> the node id prefixes that belong to it (paths from the repository's root).
#: (in order: the first group a test's path starts with is its own)
ONE_WORKER = {"lab": ("tests/lab/",),
              "default-lab": ("tests/notebooks/", "results/lab/", "tests/site/test_jupyterlab.py"),
              "site": ("tests/site/",)}
#: The groups that take longest: one worker each, from the start.
LONG = ("lab", "site")


def work_unit(nodeid: str) -> str:
    """The unit of work a test belongs to: a ONE_WORKER group, or its module."""
    for group, prefixes in ONE_WORKER.items():
        if nodeid.startswith(prefixes):
            return group
    return nodeid.split("::", 1)[0]


class Scheduler(LoadScopeScheduling):
    """xdist's load-by-scope scheduling over work_unit(), the LONG groups first."""

    def _split_scope(self, nodeid: str) -> str:
        return work_unit(nodeid)

    def _assign_work_unit(self, node) -> None:
        for group in reversed(LONG):
            if group in self.workqueue:
                self.workqueue.move_to_end(group, last=False)
        super()._assign_work_unit(node)
