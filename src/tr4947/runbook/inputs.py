"""What a chapter's results depend on, and a digest of it.

A chapter's inputs are every file whose change can change what its notebook does or prints,
found from the files themselves (nothing is listed by hand):

* the notebook's cells (their sources; outputs are results, not inputs);
* the package modules the notebook imports, followed through every import of theirs
  (``tr4947.runbook.render`` is not imported by a notebook, so editing it re-runs nothing;
  editing ``tr4947.lab`` re-runs every chapter that brings the lab up), with the data files
  of those packages (the lab host's init script...);
* every snippet and playbook the notebook or those modules name;
* the target's inventory (its files, and for a real target never a secret: inventories hold
  none, see tr4947.secrets);
* the pins of the environment: requirements.txt, pyproject.toml, lab/kafka/pom.xml (Kafka's
  version) and scripts/apt-packages.txt (the Debian packages); for a run given another
  ``kafka_version``, that release's lab/kafka/pom-<version>.xml;
* the parameters the run was given.

The digest (sha256 over all of it) decides whether a chapter's committed results are still
the ones its inputs produce; the per-file hashes name what changed when they are not.
"""
from __future__ import annotations

import ast
import functools
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from .. import paths

PACKAGE = "tr4947"
SRC = paths.REPO / "src" / PACKAGE
PINS = ("requirements.txt", "pyproject.toml", "lab/kafka/pom.xml", "scripts/apt-packages.txt")
#: Files of a package directory that are data, not code (read by name at run time).
DATA_SUFFIXES = {".sh", ".yaml", ".yml", ".json", ".properties", ".j2", ""}


@dataclass
class Inputs:
    files: dict[str, str]                   # repo-relative path -> sha256 (first 16 hex)
    parameters: dict
    target: str
    digest: str = field(init=False)

    def __post_init__(self):
        h = hashlib.sha256()
        for name in sorted(self.files):
            h.update(f"{name}\0{self.files[name]}\n".encode())
        h.update(json.dumps(self.parameters, sort_keys=True, default=str).encode())
        h.update(self.target.encode())
        self.digest = h.hexdigest()[:20]

    def changed(self, recorded: dict[str, str]) -> list[str]:
        """Files whose hash differs from ``recorded`` (added, removed or edited)."""
        names = set(self.files) | set(recorded)
        return sorted(n for n in names if self.files.get(n) != recorded.get(n))


def _hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def _rel(p: Path) -> str:
    try:
        return str(p.resolve().relative_to(paths.REPO))
    except ValueError:
        return str(p)


def notebook_code(nb: nbformat.NotebookNode) -> str:
    return "\n".join(c.source for c in nb.cells if c.cell_type == "code")


def notebook_digest(nb: nbformat.NotebookNode) -> str:
    """The cells' types and sources, without the runner's injected parameters cell."""
    h = hashlib.sha256()
    for c in nb.cells:
        if "injected-parameters" in c.get("metadata", {}).get("tags", []):
            continue
        h.update(c.cell_type.encode() + b"\0" + c.source.encode() + b"\0")
    return h.hexdigest()[:16]


# --- the package modules a notebook imports, transitively ----------------------------------------
def _module_file(name: str) -> Path | None:
    parts = name.split(".")
    if parts[0] != PACKAGE:
        return None
    base = SRC.joinpath(*parts[1:]) if len(parts) > 1 else SRC
    for f in (base.with_suffix(".py"), base / "__init__.py"):
        if f.is_file():
            return f
    return None


def _package_of(f: Path) -> str:
    rel = f.relative_to(SRC.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    else:
        parts.pop()
    return ".".join(parts)


@functools.lru_cache(maxsize=None)
def _imports(code: str, package: str = "") -> frozenset[str]:
    """Names of modules (and attributes that may be modules) imported by ``code``. Cached:
    every chapter's closure walks the same package modules (13 chapters parsed them 700
    times, most of `runbook --status`)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        # A notebook cell may hold IPython syntax (%magic): take the import lines only.
        lines = [l for l in code.splitlines() if re.match(r"\s*(import|from)\s", l)]
        tree = ast.parse("\n".join(l.strip() for l in lines))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.add(mod)
            out |= {f"{mod}.{a.name}" for a in node.names}
    return frozenset(m for m in out if m.split(".")[0] == PACKAGE)


def module_closure(code: str) -> set[Path]:
    """Package files reached from ``code``'s imports (with each package's __init__)."""
    seen: set[Path] = set()
    todo = [(m, "") for m in _imports(code)]
    while todo:
        name, _ = todo.pop()
        parts = name.split(".")
        # Importing a.b.c runs a/__init__, a/b/__init__ too.
        for i in range(1, len(parts) + 1):
            f = _module_file(".".join(parts[:i]))
            if f is None or f in seen:
                continue
            seen.add(f)
            todo += [(m, "") for m in _imports(f.read_text(), _package_of(f))]
    return seen


def package_data(modules: set[Path]) -> set[Path]:
    """Data files of the packages those modules belong to (read by name at run time)."""
    out = set()
    for d in {m.parent for m in modules}:
        for f in d.rglob("*"):
            if f.is_file() and f.suffix in DATA_SUFFIXES and "__pycache__" not in f.parts \
                    and not any(p.name.startswith(".") for p in f.parents):
                if (f.parent / "__init__.py").exists() and f.parent != d:
                    continue                # a subpackage's data belongs to that subpackage
                out.add(f)
    return out


def named_files(text: str, root: Path, suffixes: tuple[str, ...] | None = None) -> set[Path]:
    """Files under ``root`` that ``text`` names by relative path or, for names that start
    with a procedure ID (unique across chapters), by file name alone."""
    out = set()
    for p in root.rglob("*"):
        if not p.is_file() or (suffixes and p.suffix not in suffixes):
            continue
        rel = str(p.relative_to(root))
        # The substring test first: the quoted-name search runs only for a name the text has.
        if rel in text or (p.name in text
                           and re.search(rf"[\"'/]{re.escape(p.name)}[\"']", text)):
            out.add(p)
    return out


def inventory_dir(target: str) -> Path:
    """The directory of a target's inventory, named (playbook/inventory/NAME) or given as a
    path to its hosts file or its directory. Its name is the name results are filed under."""
    from ..inventory import inventory_path
    found = inventory_path(target)
    return found.parent if found.is_file() else found


def chapter_inputs(notebook: Path, target: str, parameters: dict | None = None) -> Inputs:
    nb = nbformat.read(notebook, as_version=4)
    code = notebook_code(nb)
    modules = module_closure(code)
    text = code + "\n".join(m.read_text() for m in modules)
    files: dict[str, str] = {_rel(notebook): notebook_digest(nb)}
    for f in sorted(modules | package_data(modules)):
        files[_rel(f)] = _hash(f.read_bytes())
    for f in named_files(text, paths.SNIPPETS):
        files[f"snippets/{f.relative_to(paths.SNIPPETS)}"] = _hash(f.read_bytes())
    project = paths.REPO / "playbook" / "project"
    for f in named_files(text, project, (".yml", ".yaml")):
        files[_rel(f)] = _hash(f.resolve().read_bytes())
    # The target's inventory: a name under playbook/inventory/ or a path to one (filed, as
    # its results are, under the inventory directory's name).
    from ..inventory import InventoryError
    try:
        inv = inventory_dir(target)
    except InventoryError:
        inv = paths.INVENTORY / target
    label = inv.name
    for f in sorted(inv.rglob("*")) if inv.is_dir() else []:
        if f.is_file():
            key = _rel(f) if f.resolve().is_relative_to(paths.REPO) else \
                f"inventory {label}/{f.relative_to(inv)}"
            files[key] = _hash(f.read_bytes())
    for pin in PINS:
        f = paths.REPO / pin
        if f.exists():
            files[pin] = _hash(f.read_bytes())
    # A run on another Kafka release than the lab's (kafka_version): that release's pins too.
    version = (parameters or {}).get("kafka_version")
    if version and version != paths.kafka_version():
        try:
            pom = paths.kafka_pom(version)
            files[_rel(pom)] = _hash(pom.read_bytes())
        except FileNotFoundError:
            pass                       # a real target's own release: nothing of ours pins it
    params = {k: v for k, v in (parameters or {}).items() if k != "results_dir"}
    return Inputs(files, params, label)


def snippets_used(nb: nbformat.NotebookNode) -> list[Path]:
    """Snippet files a notebook runs, directly or through the procedures it calls."""
    code = notebook_code(nb)
    text = code + "\n".join(m.read_text() for m in module_closure(code))
    return sorted(named_files(text, paths.SNIPPETS))
