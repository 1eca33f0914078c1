"""What a chapter's results depend on, and a digest of it.

A chapter's inputs are every file whose change can change what its notebook does or prints,
found from the files themselves (nothing is listed by hand):

* the notebook's cells (their sources; outputs are results, not inputs) and what its
  metadata declares (chapter, provisioning, variants, parameter schemas);
* the package modules the notebook imports, followed through every import of theirs, and
  every module a module or snippet starts as a program (``python -m tr4947...``: the OMB
  runner, the lab's NFS client shims), with the data files of those packages;
* on the lab, the lab as a whole: every file of the tr4947.lab package (its hosts' scripts,
  the bin/ wrappers it writes, the stand-ins) and the lab's NFS client layer (lab/nfs-client:
  its Rust sources, Cargo.toml and Cargo.lock), since any of them shapes what a lab run
  measures;
* every snippet and playbook the notebook or those modules name;
* the target's inventory (its files, and for a real target never a secret: inventories hold
  none, see tr4947.secrets);
* the pins of the environment: requirements.txt, pyproject.toml, lab/kafka/pom.xml (Kafka's
  version) and scripts/apt-packages.txt (the Debian packages); for a run given another
  ``kafka_version``, that release's lab/kafka/pom-<version>.xml;
* the parameters the run was given.

Each file is hashed by what it means, not by its bytes (as jupyter-cache keys a cache by
what changes a result): a Python module by its syntax tree without comments and docstrings,
``pyproject.toml`` by its dependency pins only (not its pytest or linter settings), every
other file by its bytes. An edited comment or a linter setting stales nothing; a changed
statement stales every chapter that runs it.

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

import tomllib

import nbformat

from .. import paths

PACKAGE = "tr4947"
SRC = paths.REPO / "src" / PACKAGE
PINS = ("requirements.txt", "pyproject.toml", "lab/kafka/pom.xml", "scripts/apt-packages.txt")
#: Files of a package directory that are data, not code (read by name at run time).
DATA_SUFFIXES = {".sh", ".yaml", ".yml", ".json", ".properties", ".j2", ""}
#: A module started as a program: ``python -m tr4947.omb``, ``-m tr4947.lab.nfsclient``.
STARTED = re.compile(r"-m\s+(tr4947(?:\.\w+)+)")
#: On the lab, everything the lab is made of (see the module doc).
LAB_PACKAGE = SRC / "lab"
#: The NFS client layer as cargo builds it: its sources, manifest and lock file.
NFS_LAYER = paths.REPO / "lab" / "nfs-client"
NFS_LAYER_FILES = ("Cargo.toml", "Cargo.lock", "src/**/*.rs")
LAB_SKIP = {"__pycache__"}
#: The parts of pyproject.toml that change what is installed (its pins); the rest (pytest,
#: import-linter, setuptools' package finding) changes no run.
PYPROJECT_PINS = (("build-system", "requires"), ("project", "requires-python"),
                  ("project", "dependencies"), ("project", "optional-dependencies"))


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


def _without_docstrings(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) \
                and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]
    return tree


def python_meaning(source: bytes) -> str:
    """A module's syntax tree without docstrings (comments never reach the tree) and without
    positions: what the interpreter runs. A file that does not parse is taken by its bytes."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return _hash(source)
    return _hash(ast.dump(_without_docstrings(tree), include_attributes=False).encode())


def pyproject_meaning(source: bytes) -> str:
    """pyproject.toml by its dependency pins only (PYPROJECT_PINS)."""
    try:
        doc = tomllib.loads(source.decode())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return _hash(source)
    pins = {f"{table}.{key}": doc.get(table, {}).get(key) for table, key in PYPROJECT_PINS}
    return _hash(json.dumps(pins, sort_keys=True).encode())


@functools.lru_cache(maxsize=None)
def _meaning_of(path: Path, mtime_ns: int, size: int) -> str:
    data = path.read_bytes()
    if path.suffix == ".py":
        return python_meaning(data)
    if path.name == "pyproject.toml":
        return pyproject_meaning(data)
    return _hash(data)


def file_hash(path: Path) -> str:
    """The hash a file enters the digest with: its meaning (see the module doc). Cached by
    path and stat, so the 14 chapters' digests parse each module once."""
    st = path.stat()
    return _meaning_of(path.resolve(), st.st_mtime_ns, st.st_size)


def _rel(p: Path) -> str:
    try:
        return str(p.resolve().relative_to(paths.REPO))
    except ValueError:
        return str(p)


def notebook_code(nb: nbformat.NotebookNode) -> str:
    return "\n".join(c.source for c in nb.cells if c.cell_type == "code")


def notebook_digest(nb: nbformat.NotebookNode) -> str:
    """The cells' types and sources (without the runner's injected parameters cell) and
    what the notebook declares in ``metadata.tr4947``."""
    h = hashlib.sha256()
    for c in nb.cells:
        if "injected-parameters" in c.get("metadata", {}).get("tags", []):
            continue
        h.update(c.cell_type.encode() + b"\0" + c.source.encode() + b"\0")
    h.update(json.dumps(nb.metadata.get("tr4947") or {}, sort_keys=True).encode())
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


def module_closure(code: str, texts: tuple[str, ...] = ()) -> set[Path]:
    """Package files reached from ``code``'s imports (with each package's __init__), and
    from the modules that any of them, or ``texts`` (snippets), start with ``python -m``."""
    seen: set[Path] = set()
    todo = list(_imports(code)) + [m for t in (code, *texts) for m in STARTED.findall(t)]
    started = {m for t in (code, *texts) for m in STARTED.findall(t)}
    while todo:
        name = todo.pop()
        parts = name.split(".")
        main = _module_file(name)
        if name in started and main is not None and main.name == "__init__.py":
            # `python -m package` runs the package's __main__.py.
            todo.append(f"{name}.__main__")
        # Importing a.b.c runs a/__init__, a/b/__init__ too.
        for i in range(1, len(parts) + 1):
            f = _module_file(".".join(parts[:i]))
            if f is None or f in seen:
                continue
            seen.add(f)
            text = f.read_text()
            more = STARTED.findall(text)
            started.update(more)
            todo += list(_imports(text, _package_of(f))) + more
    return seen


def lab_files() -> set[Path]:
    """Everything the lab is made of: the tr4947.lab package and the NFS client layer's
    sources, manifest and lock file (not its build output or its .gitignore)."""
    out = {f for f in LAB_PACKAGE.rglob("*")
           if f.is_file() and not LAB_SKIP & set(f.relative_to(LAB_PACKAGE).parts)
           and f.suffix != ".pyc"}
    for pattern in NFS_LAYER_FILES:
        out |= {f for f in NFS_LAYER.glob(pattern) if f.is_file()}
    return out


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


def chapter_inputs(notebook: Path, target, parameters: dict | None = None) -> Inputs:
    """The inputs of ``notebook`` run on ``target`` (a loaded Inventory, or its name or
    path) with ``parameters``."""
    from ..inventory import Inventory, InventoryError, load
    nb = nbformat.read(notebook, as_version=4)
    code = notebook_code(nb)
    snippet_texts = tuple(f.read_text(errors="replace") for f in paths.SNIPPETS.rglob("*")
                          if f.is_file() and "-m tr4947" in f.read_text(errors="replace"))
    modules = module_closure(code, snippet_texts)
    text = code + "\n".join(m.read_text() for m in modules)
    files: dict[str, str] = {_rel(notebook): notebook_digest(nb)}
    try:
        inv = target if isinstance(target, Inventory) else load(target)
    except InventoryError:
        inv = None
    code_files = modules | package_data(modules) | (lab_files() if inv and inv.kind == "lab"
                                                     else set())
    for f in sorted(code_files):
        files[_rel(f)] = file_hash(f)
    for f in named_files(text, paths.SNIPPETS):
        files[f"snippets/{f.relative_to(paths.SNIPPETS)}"] = file_hash(f)
    project = paths.REPO / "playbook" / "project"
    for f in named_files(text, project, (".yml", ".yaml")):
        files[_rel(f)] = file_hash(f)
    # The target's inventory, filed (as its results are) under the inventory directory's name.
    inv_dir = (inv.path.parent if inv.path.is_file() else inv.path) if inv else \
        paths.INVENTORY / str(target)
    label = inv_dir.name
    for f in sorted(inv_dir.rglob("*")) if inv_dir.is_dir() else []:
        if f.is_file():
            key = _rel(f) if f.resolve().is_relative_to(paths.REPO) else \
                f"inventory {label}/{f.relative_to(inv_dir)}"
            files[key] = file_hash(f)
    for pin in PINS:
        f = paths.REPO / pin
        if f.exists():
            files[pin] = file_hash(f)
    # A run on another Kafka release than the lab's (kafka_version): that release's pins too.
    version = (parameters or {}).get("kafka_version")
    if version and version != paths.kafka_version():
        try:
            pom = paths.kafka_pom(version)
            files[_rel(pom)] = file_hash(pom)
        except FileNotFoundError:
            pass                       # a real target's own release: nothing of ours pins it
    params = {k: v for k, v in (parameters or {}).items() if k not in ("results_dir", "target")}
    return Inputs(files, params, label)


def snippets_used(nb: nbformat.NotebookNode) -> list[Path]:
    """Snippet files a notebook runs, directly or through the procedures it calls."""
    code = notebook_code(nb)
    text = code + "\n".join(m.read_text() for m in module_closure(code))
    return sorted(named_files(text, paths.SNIPPETS))
