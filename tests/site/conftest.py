"""Builds the site once per test session with the real Antora (failure_level: warn in the
playbook, so any Antora or Asciidoctor warning fails the build)."""
import subprocess
from pathlib import Path

import pytest

from tr4947 import paths

SITE = paths.BUILD / "site"


def build_site() -> subprocess.CompletedProcess:
    return subprocess.run(["npx", "--no-install", "antora", "antora-playbook.yml"],
                          cwd=paths.REPO, capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="session")
def build() -> subprocess.CompletedProcess:
    return build_site()


@pytest.fixture(scope="session")
def site(build) -> Path:
    assert build.returncode == 0, f"Antora build failed:\n{build.stdout}\n{build.stderr}"
    return SITE


@pytest.fixture(scope="session")
def pages(site) -> list[Path]:
    found = sorted((site / "tr4947").glob("*.html"))
    assert found, "the build produced no pages"
    return found
