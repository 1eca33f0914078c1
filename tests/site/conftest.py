"""Builds the site once per test session with the real Antora (failure_level: warn in the
playbook, so any Antora or Asciidoctor warning fails the build), through scripts/antora.sh as
`make site` does: a PDF is converted unless the same content was converted before.

TR4947_PLAYBOOK names another playbook (default antora-playbook.yml: a git worktree checkout,
whose .git is a file, needs one that names the repository and the worktree).
TR4947_SITE_BUILT=1 tests the site already in build/site instead of building it again (the
build's own checks are then skipped)."""
import os
import subprocess
from pathlib import Path

import pytest

from tr4947 import paths

SITE = paths.BUILD / "site"
PLAYBOOK = os.environ.get("TR4947_PLAYBOOK", "antora-playbook.yml")


def build_site() -> subprocess.CompletedProcess:
    # As `make site` builds it (scripts/antora.sh): an edition's PDF whose content is the
    # same as one converted before on this machine comes from the PDF cache.
    return subprocess.run(["bash", "scripts/antora.sh", PLAYBOOK],
                          cwd=paths.REPO, capture_output=True, text=True, timeout=1200)


@pytest.fixture(scope="session")
def build() -> subprocess.CompletedProcess:
    if os.environ.get("TR4947_SITE_BUILT") == "1":
        pytest.skip("TR4947_SITE_BUILT=1: testing the site already built")
    return build_site()


@pytest.fixture(scope="session")
def site(request) -> Path:
    if os.environ.get("TR4947_SITE_BUILT") != "1":
        result = request.getfixturevalue("build")
        assert result.returncode == 0, f"Antora build failed:\n{result.stdout}\n{result.stderr}"
    assert (SITE / "tr4947" / "index.html").exists(), "no site in build/site"
    return SITE


@pytest.fixture(scope="session")
def pages(site) -> list[Path]:
    found = sorted((site / "tr4947").glob("*.html"))
    assert found, "the build produced no pages"
    return found


@pytest.fixture(scope="session")
def browser():
    """One headless Chromium for every page test (tests/support/chromium.py); each test opens
    contexts of its own in it."""
    sync_api = pytest.importorskip("playwright.sync_api")
    from ..support import chromium
    with sync_api.sync_playwright() as p:
        b = chromium.launch(p)
        yield b
        b.close()


@pytest.fixture(scope="session")
def walked(browser, site) -> dict:
    """Every page of every edition as it opened at 1,400 x 900 (tests/site/walk.py): one walk
    for every test that only looks."""
    from .walk import walk
    return walk(browser, site, 1400)

