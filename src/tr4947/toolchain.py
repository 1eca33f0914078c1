"""Versions of the Debian packages a run stands on, for its provenance.

bindfs decides the lab's NFS semantics, fuse3 and OpenSSH and tini run its hosts, Chromium
and asciidoctor-pdf render the guide: a run records which builds of them it ran on, beside
Java and the Python packages. The packages are those scripts/apt-packages.txt lists (what
setup installs, one list for both) and the prerequisites setup checks that Debian packages
provide (Java, Maven, Node, Python). They are read with one dpkg-query call and cached: they
do not change while a process runs.

    python -m tr4947.toolchain        # the versions, as JSON
"""
from __future__ import annotations

import functools
import json
import re
import shutil
import subprocess
import sys

from . import paths

#: Prerequisites setup checks but does not install, by their Debian package names (a version
#: of None says dpkg did not install it: it came from elsewhere, or is missing).
PREREQUISITES = ("python3", "openjdk-17-jre-headless", "maven", "nodejs")


def packages() -> list[str]:
    """scripts/apt-packages.txt's packages (comments dropped), then the prerequisites."""
    text = (paths.REPO / "scripts" / "apt-packages.txt").read_text()
    listed = re.sub(r"#.*", "", text).split()
    return listed + [p for p in PREREQUISITES if p not in listed]


def versions() -> dict[str, str | None]:
    """{package: installed Debian version, or None when dpkg has it not installed}."""
    return dict(_query(tuple(packages())))


@functools.cache
def _query(names: tuple[str, ...]) -> tuple[tuple[str, str | None], ...]:
    found: dict[str, str] = {}
    if shutil.which("dpkg-query"):
        # Unknown packages only make dpkg-query complain on stderr and exit 1; the known
        # ones are still listed.
        r = subprocess.run(["dpkg-query", "-W", "-f", "${Package}\t${Version}\t"
                            "${db:Status-Status}\n", *names],
                           capture_output=True, text=True, timeout=30)
        for line in r.stdout.splitlines():
            name, version, status = (line.split("\t") + ["", ""])[:3]
            if status == "installed":
                found[name] = version
    return tuple((n, found.get(n)) for n in names)


def main() -> int:
    json.dump(versions(), sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
