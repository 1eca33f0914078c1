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

#: What the guide's sources give now, per chapter (the digest of its inputs): written by the
#: runbook (`tr4947 runbook`, `--status`), read by the site build so each result can say
#: whether it is current.
CURRENT = BUILD / "generated" / "current.json"

#: Runtime state of the embedded lab: volumes, mounts, process ids, logs.
#: Kept outside the checkout so a crashed lab never leaves files in the work tree.
LAB_STATE = Path(os.environ.get("TR4947_LAB_STATE", "/tmp/tr4947-lab"))

#: Every command and configuration file the guide shows. Overridable so a test can run a
#: notebook against an altered copy and prove that nbval reports the drift.
SNIPPETS = Path(os.environ.get("TR4947_SNIPPETS", REPO / "snippets"))
INVENTORY = REPO / "playbook" / "inventory"
DOCS = REPO / "docs" / "modules" / "ROOT"


KAFKA_POMS = REPO / "lab" / "kafka"


def _pom_version(pom: Path) -> str:
    return re.search(r"<kafka.version>(.+?)</kafka.version>", pom.read_text()).group(1)


def kafka_version() -> str:
    """The lab's Kafka version, pinned by lab/kafka/pom.xml (single source of the version)."""
    return _pom_version(KAFKA_POMS / "pom.xml")


def kafka_versions() -> list[str]:
    """Every Kafka release the lab can install: the lab's own, then the others the guide runs
    (lab/kafka/pom-<version>.xml, e.g. the TR's 3.2.3)."""
    return [kafka_version()] + sorted(_pom_version(p) for p in KAFKA_POMS.glob("pom-*.xml"))


def kafka_pom(version: str | None = None) -> Path:
    """The pom that pins ``version``'s jars."""
    if version in (None, kafka_version()):
        return KAFKA_POMS / "pom.xml"
    pom = KAFKA_POMS / f"pom-{version}.xml"
    if not pom.exists():
        raise FileNotFoundError(f"Kafka {version}: the lab installs only "
                                f"{', '.join(kafka_versions())} (lab/kafka/pom*.xml)")
    return pom


def kafka_libs(version: str | None = None) -> Path:
    """Directory holding Kafka ``version``'s jars (default: the lab's), resolved by
    scripts/setup.sh."""
    kafka_pom(version)
    libs = CACHE / f"kafka-{version or kafka_version()}" / "libs"
    if not (libs / ".stamp").exists():
        raise FileNotFoundError(
            f"Kafka jars not found in {libs}: run `make setup` (scripts/setup.sh) first")
    return libs


#: The lab's NFS client layer (lab/nfs-client), built by scripts/setup.sh.
NFS_CLIENT_CRATE = REPO / "lab" / "nfs-client"


def nfs_client_binary() -> Path:
    """The tr4947-nfs binary (the lab's NFS client layer), as scripts/setup.sh builds it
    into the cache (TR4947_NFS_CLIENT overrides, e.g. for a build of one's own)."""
    override = os.environ.get("TR4947_NFS_CLIENT")
    binary = Path(override) if override else CACHE / "nfs-client" / "release" / "tr4947-nfs"
    if not os.access(binary, os.X_OK):
        raise FileNotFoundError(
            f"the lab's NFS client layer {binary} is missing: run `make setup` "
            "(scripts/setup.sh builds it from lab/nfs-client with cargo)")
    return binary
