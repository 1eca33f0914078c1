"""nbval re-executes the executed notebooks of the lab's runs (results/lab/<chapter>.ipynb)
against the embedded lab and compares their outputs with the ones the run kept (doc drift).

Which notebooks: the committed results are frozen by their inputs (tr4947.runbook.inputs), so
`make test` re-executes only the chapters whose inputs differ from those their committed
results were made from (an edited notebook, snippet, package module, inventory or pinned
version); `make test-full` (TR4947_NBVAL=all) re-executes every one. A change to a page's
prose runs none. An executed notebook keeps its run's parameters (papermill's injected cell),
so a variant re-executes as itself.

Each notebook starts on a lab that is down and leaves it down: a notebook that fails half way
skips its last step, and the lab it left running would otherwise make every later notebook
fail too (reporting drift that is not there).
"""
import os

import pytest

_FIRST_CELLS: set[str] = set()


def pytest_collection_modifyitems(config, items):
    mode = os.environ.get("TR4947_NBVAL", "changed")
    if mode not in ("changed", "all"):
        raise pytest.UsageError(f"TR4947_NBVAL={mode!r}: 'changed' (default) or 'all'")
    from tr4947.runbook import execute
    notebooks = [i for i in items if i.path.suffix == ".ipynb"]
    if not notebooks:
        return
    runner = execute.Runner("lab")
    by_name = {c.name: c for c in runner.chapters()}
    why: dict = {}
    keep, drop = [], []
    for item in items:
        if item.path.suffix != ".ipynb":
            keep.append(item)
            continue
        if item.path not in why:
            chapter = by_name.get(item.path.stem)
            why[item.path] = ("no such chapter: remove this executed notebook"
                              if chapter is None else "all notebooks (TR4947_NBVAL=all)"
                              if mode == "all" else runner.freshness(chapter, {})[1])
        (keep if why[item.path] else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
    ran = {p.stem: w for p, w in why.items() if w}
    config._tr4947_nbval = (f"nbval: {len(ran)} of {len(why)} notebooks re-executed"
                            + "".join(f"\n  {n}: {w}" for n, w in ran.items())
                            + (f"\n  {len(why) - len(ran)} up to date (results frozen by their "
                               "inputs)" if len(why) > len(ran) else ""))
    seen = set()
    for item in items:
        if item.path.suffix == ".ipynb":
            item.add_marker(pytest.mark.lab)
            item.add_marker(pytest.mark.slow)
            if item.path not in seen:
                seen.add(item.path)
                _FIRST_CELLS.add(item.nodeid)


# Under xdist the workers collect and the controller reports: a worker hands its line over
# (workeroutput, xdist's channel for this) and the controller prints the first it gets.
def pytest_sessionfinish(session):
    said = getattr(session.config, "_tr4947_nbval", None)
    if said and hasattr(session.config, "workeroutput"):
        session.config.workeroutput["tr4947_nbval"] = said


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    said = getattr(node, "workeroutput", {}).get("tr4947_nbval")
    if said and not getattr(node.config, "_tr4947_nbval", None):
        node.config._tr4947_nbval = said


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    said = getattr(config, "_tr4947_nbval", None)
    if said:
        terminalreporter.write_line(said)


def _lab_down(why: str) -> None:
    from tr4947 import targets
    said = targets.open("lab", echo=False).reset()
    if said:
        print(f"{said} ({why})")


def pytest_runtest_setup(item):
    if item.nodeid in _FIRST_CELLS:
        _lab_down(f"before {item.path.name}")


def pytest_runtest_teardown(item, nextitem):
    if item.path.suffix == ".ipynb" and (nextitem is None or nextitem.path != item.path):
        _lab_down(f"after {item.path.name}")
