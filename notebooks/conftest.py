"""nbval re-executes these notebooks against the embedded lab.

* They are marked as lab tests, so `make test-fast` (-m "not lab ...") leaves them out and
  `make test` runs them.
* Each notebook starts on a lab that is down and leaves it down. A notebook that fails half
  way skips its own clean-up cell; without this, the lab it left running would make every
  later notebook fail too (reporting drift that is not there) or change what they print.
"""
import pytest

_FIRST_CELLS: set[str] = set()


def pytest_collection_modifyitems(items):
    seen = set()
    for item in items:
        if item.path.suffix == ".ipynb":
            item.add_marker(pytest.mark.lab)
            item.add_marker(pytest.mark.slow)
            if item.path not in seen:
                seen.add(item.path)
                _FIRST_CELLS.add(item.nodeid)


def _lab_down(why: str) -> None:
    from tr4947.lab.lab import Lab
    lab = Lab(echo=lambda m: None)
    if lab.procs():
        lab.down()
        print(f"the lab was left running {why}: taken down")


def pytest_runtest_setup(item):
    if item.nodeid in _FIRST_CELLS:
        _lab_down(f"before {item.path.name}")


def pytest_runtest_teardown(item, nextitem):
    if item.path.suffix == ".ipynb" and (nextitem is None or nextitem.path != item.path):
        _lab_down(f"by {item.path.name}")
