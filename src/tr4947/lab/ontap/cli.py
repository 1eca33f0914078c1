"""The clustershell's grammar: a declarative command tree and ONTAP's parsing rules.

A command is a path of words (``volume create``) with parameter specs. Parsing follows the
clustershell:

* command words may be abbreviated to any unique prefix (``vol show``); an exact word wins
  over a longer one it prefixes; an unknown word is ``Error: "xyz" is not a recognized
  command``; commands above the session's privilege level do not exist for it;
* parameters are ``-name value``; names may also be abbreviated to a unique prefix
  (``set -priv diag``, ``-c off``) among the parameters visible at the current privilege,
  so an advanced-only parameter at admin level is ``Error: invalid argument "-name"``
  exactly like a misspelled one;
* values may start with ``-`` (``-unix-permissions ---rwxr-xr-x``, ``-new-size -1g``):
  the token after a parameter that takes a value is always its value;
* positional values fill the command's positional parameters in order (``set advanced``,
  ``volume size svm vol +1g``);
* enum values may be abbreviated too (``set adv``);
* ``?`` or ``-help`` anywhere lists the parameters.

Handlers get a dict of typed values keyed by the parameter's full name.
"""
from __future__ import annotations

import fnmatch
import re
import shlex
from dataclasses import dataclass, field
from typing import Any, Callable

from ... import units
from . import state

PRIVILEGES = ("admin", "advanced", "diagnostic")


def priv_rank(p: str) -> int:
    return PRIVILEGES.index(p)


class CliError(Exception):
    """An ONTAP error; str() is the full message printed (starts with "Error: ")."""


# --- parameter types -----------------------------------------------------------------------
@dataclass
class Param:
    name: str                                   # without the leading "-"
    kind: str = "text"   # text|name|names|int|size|bool|enum|list|flag|query|fields|relsize
    required: bool = False
    privilege: str = "admin"
    choices: tuple[str, ...] = ()
    positional: bool = False
    help: str = ""
    placeholder: str = ""
    # kind "name"/"names": which ONTAP naming rule the value (or each list item) must follow
    # (state.name_problem: volume, vserver, aggregate, export-policy, snapshot-policy, lif)
    name_kind: str = ""

    @property
    def takes_value(self) -> bool:
        return self.kind != "flag"

    def type_hint(self) -> str:
        if self.placeholder:
            return self.placeholder
        if self.kind in ("name", "names"):
            hint = "<" + self.name_kind.replace("-", " ") + " name>"
            return hint + ",..." if self.kind == "names" else hint
        return {"int": "<integer>", "size": "<size>", "relsize": "[+|-]<size>",
                "bool": "{true|false}", "flag": "", "list": "<text>,...",
                "fields": "<fieldname>,...", "query": "<text>"}.get(
            self.kind, "{" + "|".join(self.choices) + "}" if self.kind == "enum" else "<text>")

    def convert(self, raw: str) -> Any:
        bad = CliError(f'Error: "{raw}" is an invalid value for field "-{self.name} '
                       f'{self.type_hint()}"')
        if self.kind in ("text", "query"):
            return raw
        if self.kind in ("name", "names"):
            # A typed ONTAP field: a value breaking the naming rule is refused while parsing,
            # with the rule as the reason (so nothing downstream ever sees it).
            items = raw.split(",") if self.kind == "names" else [raw]
            for item in items:
                rule = state.name_problem(self.name_kind, item)
                if rule:
                    shown = item.encode("unicode_escape").decode("ascii")   # NUL, newline
                    raise CliError(f'Error: "{shown}" is an invalid value for field '
                                   f'"-{self.name} {self.type_hint()}"\n       {rule}')
            return items if self.kind == "names" else raw
        if self.kind == "int":
            if not re.fullmatch(r"\d+", raw):
                raise bad
            return int(raw)
        if self.kind == "size":
            try:
                return units.parse_size(raw)[0]
            except ValueError:
                raise bad from None
        if self.kind == "relsize":
            try:
                return units.parse_size(raw, allow_relative=True)
            except ValueError:
                raise bad from None
        if self.kind == "bool":
            hits = [c for c in ("true", "false") if c.startswith(raw.lower())] if raw else []
            if len(hits) != 1:
                raise bad
            return hits[0] == "true"
        if self.kind == "enum":
            if raw in self.choices:
                return raw
            hits = [c for c in self.choices if c.startswith(raw)]
            if len(hits) != 1:
                raise bad
            return hits[0]
        if self.kind in ("list", "fields"):
            items = [x for x in raw.split(",") if x]
            if not items:
                raise bad
            return items
        raise AssertionError(self.kind)


@dataclass
class Command:
    path: tuple[str, ...]
    handler: Callable[..., str]
    params: list[Param] = field(default_factory=list)
    privilege: str = "admin"
    help: str = ""
    # (args, session) -> warning text requiring {y|n} confirmation, or None
    confirm: Callable[..., str | None] | None = None

    def visible(self, privilege: str) -> list[Param]:
        return [p for p in self.params if priv_rank(p.privilege) <= priv_rank(privilege)]


@dataclass
class Node:
    word: str
    children: dict[str, "Node"] = field(default_factory=dict)
    command: Command | None = None
    help: str = ""

    def min_privilege(self) -> str:
        """Lowest privilege at which something under this node exists."""
        ranks = []
        if self.command:
            ranks.append(priv_rank(self.command.privilege))
        ranks += [priv_rank(c.min_privilege()) for c in self.children.values()]
        return PRIVILEGES[min(ranks)] if ranks else "admin"


class Tree:
    def __init__(self):
        self.root = Node("")

    def add(self, cmd: Command) -> Command:
        node = self.root
        for w in cmd.path:
            node = node.children.setdefault(w, Node(w))
        node.command = cmd
        return cmd

    def describe(self, path: tuple[str, ...], text: str) -> None:
        node = self.root
        for w in path:
            node = node.children.setdefault(w, Node(w))
        node.help = text


# --- tokens ------------------------------------------------------------------------------
def split_commands(line: str) -> list[str]:
    """``a; b`` -> ['a', 'b'] (clustershell runs ;-separated commands in turn), keeping ;
    inside double quotes."""
    out, cur, q = [], [], False
    for ch in line:
        if ch == '"':
            q = not q
        if ch == ";" and not q:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return [c.strip() for c in out if c.strip()]


def tokenize(line: str) -> list[str]:
    try:
        lex = shlex.shlex(line, posix=True)
        lex.whitespace_split = True
        lex.commenters = ""
        lex.escape = ""                      # ONTAP has no backslash escapes
        lex.quotes = '"'
        return list(lex)
    except ValueError:
        raise CliError("Error: Unmatched quote in command line") from None


@dataclass
class Parsed:
    command: Command
    args: dict[str, Any]
    help: bool = False


def _is_param_token(tok: str) -> bool:
    # "-5g" would be a value, but ONTAP parameter names start with a letter
    return tok.startswith("-") and len(tok) > 1 and tok[1].isalpha()


def resolve_command(tree: Tree, tokens: list[str], privilege: str) -> tuple[Command | Node, int]:
    """Walk command words; returns (Command or directory Node, tokens consumed)."""
    node, i = tree.root, 0
    while i < len(tokens) and node.command is None:
        tok = tokens[i]
        if tok in ("?", "-help"):
            break
        kids = {w: n for w, n in node.children.items()
                if priv_rank(n.min_privilege()) <= priv_rank(privilege)}
        if tok in kids:
            node = kids[tok]
        else:
            hits = [w for w in kids if w.startswith(tok)]
            if len(hits) == 1:
                node = kids[hits[0]]
            elif len(hits) > 1:
                raise CliError("Error: Ambiguous command.  Possible matches include:\n"
                               + "\n".join(f"  {' '.join(_path(tree, kids[h]))}"
                                           for h in sorted(hits)))
            else:
                raise CliError(f'Error: "{tok}" is not a recognized command')
        i += 1
    if node.command is not None and priv_rank(node.command.privilege) > priv_rank(privilege):
        raise CliError(f'Error: "{tokens[i - 1]}" is not a recognized command')
    return (node.command or node), i


def _path(tree: Tree, target: Node) -> list[str]:
    def walk(node, trail):
        if node is target:
            return trail
        for w, n in node.children.items():
            r = walk(n, trail + [w])
            if r:
                return r
        return None
    return walk(tree.root, []) or [target.word]


def parse(tree: Tree, line: str, privilege: str) -> Parsed | Node:
    tokens = tokenize(line)
    found, i = resolve_command(tree, tokens, privilege)
    if isinstance(found, Node):
        return found
    cmd = found
    visible = cmd.visible(privilege)
    by_name = {p.name: p for p in visible}
    args: dict[str, Any] = {}
    positional = [p for p in visible if p.positional]
    rest = tokens[i:]
    j = 0
    want_help = False
    while j < len(rest):
        tok = rest[j]
        if tok in ("?", "-help"):
            want_help = True
            j += 1
            continue
        if _is_param_token(tok):
            name = tok[1:]
            p = by_name.get(name)
            if p is None:
                hits = [n for n in by_name if n.startswith(name)]
                if len(hits) == 1:
                    p = by_name[hits[0]]
                elif len(hits) > 1:
                    raise CliError(f'Error: Ambiguous argument "{tok}".  Possible matches '
                                   "include:\n" + "\n".join(f"  -{h}" for h in sorted(hits)))
                else:
                    raise CliError(f'Error: invalid argument "{tok}"')
            if p.name in args:
                raise CliError(f'Error: Parameter "-{p.name}" was specified more than once')
            if p.takes_value:
                if j + 1 >= len(rest) or rest[j + 1] in ("?",):
                    if j + 1 < len(rest):
                        want_help = True
                        j += 2
                        continue
                    raise CliError(f'Error: Missing value for "-{p.name}"')
                args[p.name] = p.convert(rest[j + 1])
                j += 2
            else:
                args[p.name] = True
                j += 1
            continue
        # positional value
        slot = next((p for p in positional if p.name not in args), None)
        if slot is None:
            raise CliError(f'Error: invalid argument "{tok}"')
        args[slot.name] = slot.convert(tok)
        j += 1
    if want_help:
        return Parsed(cmd, args, help=True)
    missing = [p for p in visible if p.required and p.name not in args]
    if missing:
        raise CliError("Error: Missing required parameter"
                       + ("s" if len(missing) > 1 else "") + ": "
                       + ", ".join(f"-{p.name}" for p in missing))
    return Parsed(cmd, args)


def help_text(cmd: Command, privilege: str) -> str:
    lines = []
    for p in cmd.visible(privilege):
        spec = f"-{p.name} {p.type_hint()}".rstrip()
        if not p.required:
            spec = f"[{spec}]"
        line = f"  {spec:<44} {p.help}".rstrip()
        if p.privilege != "admin":
            line += f" (privilege: {p.privilege})"
        lines.append(line)
    return "\n".join(lines)


def directory_help(node: Node, privilege: str) -> str:
    rows = []
    for w, n in sorted(node.children.items()):
        if priv_rank(n.min_privilege()) > priv_rank(privilege):
            continue
        desc = n.command.help if n.command else (n.help or "The " + w + " directory")
        rows.append(f"  {w + ('>' if not n.command else ''):<24} {desc}")
    return "\n".join(rows)


# --- queries (show commands) ---------------------------------------------------------------
def match_query(value: Any, query: str) -> bool:
    """ONTAP query syntax on one field: ``a|b`` (or), ``!x`` (not), ``*``/``?`` wildcards,
    ``>n``/``<n`` for numbers; case-insensitive like the clustershell."""
    alts = query.split("|")
    return any(_match_one(value, q) for q in alts)


def _match_one(value: Any, q: str) -> bool:
    if q.startswith("!"):
        return not _match_one(value, q[1:])
    if isinstance(value, bool):
        value = "true" if value else "false"
    if q[:1] in "<>" and isinstance(value, (int, float)):
        try:
            n = units.parse_size(q[1:])[0]
        except ValueError:
            return False
        return value > n if q[0] == ">" else value < n
    return fnmatch.fnmatchcase(str(value).lower(), q.lower())
