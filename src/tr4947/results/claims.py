"""The claims catalogue, docs/data/claims.yaml: what the TR (or the guide) claims and where
the guide shows it. The ledger sets the run records' verdicts beside it; the catalogues of
result words translate its TR figures."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from .. import paths

CLAIMS = paths.REPO / "docs" / "data" / "claims.yaml"


def load_claims(path: Path = CLAIMS) -> list[dict[str, Any]]:
    return yaml.safe_load(path.read_text())["claims"]
