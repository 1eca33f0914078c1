"""Where a run's results came from: the run's provenance, as its record carries it.

Run id, target and kind, start and end, the parent commit (one that exists in the history),
the digest of the run's inputs with each input's hash (what a later build compares to say
whether the result is still current: tr4947.runbook.execute.Runner.status), the parameters,
and the versions of what ran: Kafka, Java, Python and the Python packages that do the work,
the Debian packages of the lab's tools, and what stood in for real systems on the target.
"""
from __future__ import annotations

import functools
import importlib.metadata as md
import re
import subprocess
import sys

from .. import paths
from .inputs import Inputs

PACKAGES = ("papermill", "confluent-kafka", "netapp-ontap", "ansible-core", "awscli")


def git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=paths.REPO, capture_output=True, text=True,
                              check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return ""


@functools.lru_cache(maxsize=None)
def _java() -> str:
    try:
        out = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr
    except OSError:
        return "?"
    m = re.search(r'version "([^"]+)"', out)
    return m.group(1) if m else "?"


def versions(parameters: dict, stand_ins: dict[str, str]) -> dict[str, str]:
    out = {"Kafka": parameters.get("kafka_version") or paths.kafka_version(),
           "Python": sys.version.split()[0], "Java": _java()}
    for pkg in PACKAGES:
        try:
            out[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            pass
    try:
        from .. import toolchain            # Debian packages of the lab's tools
        out.update(toolchain.versions())
    except ImportError:
        pass
    out.update(stand_ins)
    return out


def provenance(run_id: str, inputs: Inputs, kind: str, started: str, finished: str,
               stand_ins: dict[str, str]) -> dict:
    return {"id": run_id, "target": inputs.target, "kind": kind,
            "started": started, "finished": finished,
            "commit": git("rev-parse", "HEAD").strip(),
            "digest": inputs.digest, "inputs": inputs.files,
            "parameters": inputs.parameters,
            "versions": versions(inputs.parameters, stand_ins)}
