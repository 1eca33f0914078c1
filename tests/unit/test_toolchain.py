"""Run provenance can name the Debian builds of the lab's tools: tr4947.toolchain.versions()
reads them with dpkg-query, for every package setup installs and each prerequisite."""
from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from tr4947 import paths, toolchain

pytestmark = pytest.mark.skipif(not shutil.which("dpkg-query"), reason="not a Debian system")


def test_every_package_setup_installs_is_listed_with_dpkgs_version():
    listed = re.sub(r"#.*", "", (paths.REPO / "scripts" / "apt-packages.txt").read_text()).split()
    v = toolchain.versions()
    assert listed == list(v)[:len(listed)]
    assert {"bindfs", "fuse3", "openssh-server", "chromium", "ruby-asciidoctor-pdf", "tini",
            "maven", "nodejs"} <= set(v)
    # The versions are dpkg's own (asked one by one here, the other way round).
    for pkg in ("bindfs", "openssh-server", "tini"):
        out = subprocess.run(["dpkg", "-s", pkg], capture_output=True, text=True).stdout
        assert v[pkg] == re.search(r"(?m)^Version: (.+)$", out).group(1)


def test_a_package_dpkg_does_not_have_is_none_and_answers_are_cached():
    assert toolchain._query(("bindfs", "no-such-package-tr4947")) == \
        (("bindfs", toolchain.versions()["bindfs"]), ("no-such-package-tr4947", None))
    calls = toolchain._query.cache_info().hits
    toolchain.versions()
    assert toolchain._query.cache_info().hits == calls + 1
