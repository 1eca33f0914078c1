"""The chapters a runbook can run, and the parameters each one takes.

A chapter is one notebook of notebooks/ run with one set of parameters: its default run, and
each variant its metadata declares (``metadata.tr4947.variants``: the same notebook with other
parameters, filed under ``<notebook>.<variant>``, as the functional-validation chapter on the
TR's Kafka 3.2.3): papermill's one notebook, several parameter sets.

Parameters are papermill's: the assignments of the notebook's ``parameters`` cell, with a
comment after each that says what it is. Their values are declared once, in the notebook's
metadata (``metadata.tr4947.parameters``: a JSON Schema per parameter, checked with the
``jsonschema`` library), and checked here before anything runs: a bad name or value is refused
with what the chapter takes.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from .. import paths

NOTEBOOKS = paths.REPO / "notebooks"
#: Parameters the runner sets itself (every chapter notebook has them).
RUNNER_PARAMETERS = ("target", "confirm", "results_dir")


class RunbookError(RuntimeError):
    """A usage error (unknown chapter, parameter or value): nothing ran."""


@dataclass(frozen=True)
class Chapter:
    name: str
    path: Path
    parameters: dict = field(default_factory=dict, hash=False, compare=False)

    @property
    def variant(self) -> str | None:
        return self.name[len(self.path.stem) + 1:] or None

    @property
    def declaration(self) -> dict:
        return declaration(self.path)


def as_chapter(chapter: "Chapter | Path") -> Chapter:
    return chapter if isinstance(chapter, Chapter) else Chapter(Path(chapter).stem, Path(chapter))


def declaration(path: Path) -> dict:
    """The notebook's ``metadata.tr4947``: chapter (page), provision, variants, parameters.
    A ``provision.when`` that is not ``"{name}"`` of a boolean parameter is refused: a bare
    name is a non-empty string, so it would always provision (sizing did, with
    measure_storage=false, and left the storage cluster running on the default lab)."""
    decl = nbformat.read(path, as_version=4).metadata.get("tr4947") or {}
    when = (decl.get("provision") or {}).get("when")
    if when is not None:
        name = when[1:-1] if isinstance(when, str) and when[:1] + when[-1:] == "{}" else None
        schema = (decl.get("parameters") or {}).get(name or "") or {}
        if schema.get("type") != "boolean":
            raise RunbookError(
                f"{path.name}: metadata.tr4947.provision.when is {when!r}; it must be "
                f"\"{{name}}\" of a boolean parameter the notebook declares, e.g. "
                f"\"{{measure_storage}}\" (nothing is provisioned when that parameter is false)")
    return decl


def variants(path: Path) -> list[Chapter]:
    """The notebook's default run and the variants its metadata declares."""
    declared = declaration(path).get("variants") or {}
    return [Chapter(path.stem, path)] + [Chapter(f"{path.stem}.{v}", path, dict(p))
                                         for v, p in declared.items()]


def notebooks() -> list[Path]:
    return sorted(NOTEBOOKS.glob("*.ipynb"))


def notebook(name: str) -> Path:
    """The chapter notebook ``name`` (a file: a variant is the same notebook)."""
    by_name = {p.stem: p for p in notebooks()}
    if name not in by_name:
        raise RunbookError(f"unknown notebook {name}; choose from: {', '.join(by_name)}")
    return by_name[name]


def chapters(selected: list[str] | None = None, lab: bool = True) -> list[Chapter]:
    """Every chapter, or the ``selected`` ones: a notebook's name selects it with its
    variants, ``<notebook>.<variant>`` that variant alone. On a target that is not the lab
    (``lab=False``) a variant runs only when named: it asks for something the lab builds
    (e.g. another Kafka release), which a reader's cluster has only if it runs it."""
    every = [c for p in notebooks() for c in variants(p)]
    names = {c.name for c in every}
    unknown = [s for s in selected or () if s not in names]
    if unknown:
        raise RunbookError(f"unknown chapter(s): {', '.join(unknown)}; "
                           f"choose from: {', '.join(c.name for c in every)}")
    return [c for c in every
            if (not selected or c.name in selected or c.path.stem in selected)
            and (lab or not c.variant or c.name in (selected or ()))]


# --- parameters -------------------------------------------------------------------------------------
def declared_parameters(path: Path) -> dict[str, dict]:
    """The notebook's parameters cell, as papermill reads it: name -> default, help."""
    import papermill as pm
    return pm.inspect_notebook(str(path))


def defaults(path: Path) -> dict:
    """The parameters cell's default values (a default that is an expression: its text)."""
    out = {}
    for name, p in declared_parameters(path).items():
        try:
            out[name] = ast.literal_eval(p.get("default") or "None")
        except (ValueError, SyntaxError):
            out[name] = p.get("default")
    return out


def schemas(path: Path) -> dict[str, dict]:
    return declaration(path).get("parameters") or {}


def describe(path: Path) -> str:
    """What `tr4947 runbook CHAPTER --help` prints: each parameter, its default, what values
    it takes and what it is for."""
    lines = []
    sch = schemas(path)
    for name, p in declared_parameters(path).items():
        allowed = f"  [{allowed_values(sch[name])}]" if name in sch else ""
        lines.append(f"  {name} = {p.get('default')}{allowed}"
                     + (f"\n      {p['help']}" if p.get("help") else ""))
    return "\n".join(lines)


def allowed_values(schema: dict) -> str:
    """A JSON Schema in a few words: 'a whole number from 1 to 10', 'one of das, nfs'..."""
    kinds = {"integer": "a whole number", "number": "a number", "boolean": "true or false",
             "string": "text", "array": "a list", "object": "a mapping", "null": "null"}
    if "enum" in schema:
        return "one of " + ", ".join(str(v) for v in schema["enum"])
    if "anyOf" in schema:
        return " or ".join(allowed_values(s) for s in schema["anyOf"])
    t = schema.get("type", "any value")
    text = " or ".join(kinds.get(x, x) for x in t) if isinstance(t, list) else kinds.get(t, t)
    lo = schema.get("minimum", schema.get("exclusiveMinimum"))
    hi = schema.get("maximum", schema.get("exclusiveMaximum"))
    if lo is not None and hi is not None:
        text += (f" from {lo}" + (" (excluded)" if "exclusiveMinimum" in schema else "")
                 + f" to {hi}" + (" (excluded)" if "exclusiveMaximum" in schema else ""))
    elif lo is not None:
        text += (" above " if "exclusiveMinimum" in schema else " of at least ") + str(lo)
    elif hi is not None:
        text += (" below " if "exclusiveMaximum" in schema else " of at most ") + str(hi)
    if schema.get("type") == "array" and "items" in schema:
        item = allowed_values(schema["items"])
        for one, many in (("a whole number", "whole numbers"), ("a number", "numbers"),
                          ("text", "texts")):
            item = item.replace(one, many, 1) if item.startswith(one) else item
        text += " of " + item
    if schema.get("type") == "object" and "properties" in schema:
        text += " with keys " + ", ".join(schema["properties"])
    return text


def _at(schema: dict, path) -> dict:
    """The part of ``schema`` that describes the value at ``path`` (list index, mapping key)."""
    for step in path:
        if isinstance(step, int) and "items" in schema:
            schema = schema["items"]
        elif isinstance(step, str) and step in schema.get("properties", {}):
            schema = schema["properties"][step]
        else:
            break
    return schema


def check_parameters(chapter: "Chapter | Path", parameters: dict) -> None:
    """Refuse (RunbookError) an unknown parameter or a value its schema does not allow, before
    anything runs; the message lists what the chapter takes."""
    import jsonschema
    chapter = as_chapter(chapter)
    path = chapter.path
    declared = declared_parameters(path)
    unknown = [k for k in parameters if k not in declared]
    if unknown:
        raise RunbookError(f"{path.stem}: no parameter named {', '.join(unknown)}. "
                           f"Its parameters:\n{describe(path)}")
    missing = [k for k in RUNNER_PARAMETERS if k not in declared]
    if missing:
        raise RunbookError(f"{path.stem}: its parameters cell lacks {', '.join(missing)} "
                           "(every chapter notebook takes target, confirm and results_dir)")
    sch = schemas(path)
    wrong = []
    for name, value in parameters.items():
        if name in RUNNER_PARAMETERS or name not in sch:
            continue
        errors = sorted(jsonschema.Draft202012Validator(sch[name]).iter_errors(value),
                        key=lambda e: list(e.path))
        if errors:
            where = "".join(f"[{p!r}]" for p in errors[0].path)
            wrong.append(f"-p {name}={value!r}: {name}{where} takes "
                         f"{allowed_values(_at(sch[name], errors[0].path))} "
                         f"({errors[0].message}; default {declared[name].get('default')})")
    if wrong:
        raise RunbookError(f"{path.stem}: " + "; ".join(wrong))
