"""An "OMB installation directory" backed by this runner, for lab client hosts.

The TR runs ``bin/benchmark --drivers driver-kafka/<driver>.yaml workloads/<workload>.yaml``
from OMB's installation directory (/opt/benchmark). On a lab host that directory is created
here: ``bin/benchmark`` starts this runner with this repository's Python, and the
``workloads/``, ``driver-kafka/`` and ``payload/`` folders OMB ships are created empty for the
procedure's files. A real client host has the real OMB installed there instead.
"""
from __future__ import annotations

import shlex
import sys
from pathlib import Path

from .. import paths

LAYOUT = ("bin", "workloads", "driver-kafka", "payload")


def install(dest: str | Path, python: str | None = None) -> Path:
    """Create (or refresh) the installation at ``dest``; returns bin/benchmark."""
    dest = Path(dest)
    for d in LAYOUT:
        (dest / d).mkdir(parents=True, exist_ok=True)
    exe = dest / "bin" / "benchmark"
    src = paths.REPO / "src"
    exe.write_text(
        "#!/bin/sh\n"
        "# OpenMessaging Benchmark's bin/benchmark, run by the lab's OMB-compatible runner\n"
        "# (tr4947.omb: same command line, workload/driver YAML and result JSON).\n"
        f"export PYTHONPATH={shlex.quote(str(src))}${{PYTHONPATH:+:$PYTHONPATH}}\n"
        f"exec {shlex.quote(python or sys.executable)} -m tr4947.omb \"$@\"\n")
    exe.chmod(0o755)
    return exe
