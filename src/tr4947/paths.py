"""Where things live. One place, so the CLI, notebooks and tests agree."""
from __future__ import annotations

import os
import re
from pathlib import Path

#: The repository checkout (src/tr4947/paths.py -> repo root).
REPO = Path(__file__).resolve().parents[2]

#: Downloaded artefacts that survive `git clean` (Kafka jars). Overridable for CI caches.
CACHE = Path(os.environ.get("TR4947_CACHE", Path.home() / ".cache" / "tr4947"))

#: Build outputs (executed notebooks, site) live under build/ in the checkout.
BUILD = REPO / "build"

#: Runtime state of the embedded lab: volumes, mounts, process ids, logs.
#: Kept outside the checkout so a crashed lab never leaves files in the work tree.
LAB_STATE = Path(os.environ.get("TR4947_LAB_STATE", "/tmp/tr4947-lab"))

#: Every command and configuration file the guide shows. Overridable so a test can run a
#: notebook against an altered copy and prove that nbval reports the drift.
SNIPPETS = Path(os.environ.get("TR4947_SNIPPETS", REPO / "snippets"))
INVENTORY = REPO / "playbook" / "inventory"
DOCS = REPO / "docs" / "modules" / "ROOT"


def kafka_version() -> str:
    """The Kafka version pinned by lab/kafka/pom.xml (single source of the version)."""
    pom = (REPO / "lab" / "kafka" / "pom.xml").read_text()
    return re.search(r"<kafka.version>(.+?)</kafka.version>", pom).group(1)


def kafka_libs() -> Path:
    """Directory holding Kafka's jars, resolved by scripts/setup.sh."""
    libs = CACHE / f"kafka-{kafka_version()}" / "libs"
    if not (libs / ".stamp").exists():
        raise FileNotFoundError(
            f"Kafka jars not found in {libs}: run `make setup` (scripts/setup.sh) first")
    return libs
