"""nbval re-executes these notebooks against the embedded lab: mark them as lab tests, so
`make test-fast` (-m "not lab ...") leaves them out and `make test` runs them."""
import pytest


def pytest_collection_modifyitems(items):
    for item in items:
        if item.path.suffix == ".ipynb":
            item.add_marker(pytest.mark.lab)
            item.add_marker(pytest.mark.slow)
