"""Every command the TR prints is run as printed, or its departure is an errata entry
(issue 16, item 5).

docs/data/tr-printed-commands.yaml has one entry per command, configuration or output block
that TR-4947 prints: every ``` fenced block of seed 001 (the May 2025 English edition) and
every prompt line of seed 003 (the FSx web page). Each entry says what the guide does with it:
runs it (a snippet carries it), runs it as printed (a *.tr-as-written.* snippet), departs from
it (an errata row explains how), shows its own output instead, or does not run it (and why).

The checks:

* coverage: each fenced block of seed 001 and each command line of seed 003 belongs to exactly
  one entry; a command line inside a block is one the entry checks or says it leaves out;
* content: for `runs` and `as_printed`, every significant token of the block's command lines
  is in the snippet(s), after the substitutions the errata page documents (see "normalising
  commands" below); in configuration files and playbooks each printed line's tokens also
  follow each other in the snippet, so a key that kept its name but not its value is caught;
  for `departs`, the tokens the snippet lacks are exactly the ones the entry lists as changed;
* execution: every snippet an entry cites exists, and a notebook runs it
  (tr4947.runbook.inputs.snippets_used over notebooks/*.ipynb);
* errata: every anchor named exists on errata.adoc and its quote is in that anchor's section.

The seeds are not published with the repository, so without them the module skips.
"""
from __future__ import annotations

import os
import re
from collections import Counter
from functools import lru_cache
from pathlib import Path

import pytest
import yaml

from .conftest import PAGES, REPO, SNIPPETS, expected

DATA = REPO / "docs" / "data" / "tr-printed-commands.yaml"
ERRATA = PAGES / "errata.adoc"
NOTEBOOKS = REPO / "notebooks"

SEEDS = Path(os.environ.get("TR4947_SEEDS") or Path(__file__).resolve().parents[3] / "shared" / "seeds")
SEED_FILES = {"001": "001_e2b5251a99221f11.txt", "003": "003_4925a7b39b2e9379.txt"}

if not all((SEEDS / name).is_file() for name in SEED_FILES.values()):
    pytest.skip(f"TR seeds not found in {SEEDS} (they are not published with the repository; "
                "set TR4947_SEEDS to check the TR's commands)", allow_module_level=True)

GUIDE_KINDS = ("runs", "as_printed", "departs", "output", "not_run")
BLOCK_KINDS = {"command", "config", "output", "playbook"}


# ---------------------------------------------------------------- reading the files

@lru_cache(maxsize=None)
def entries() -> tuple[dict, ...]:
    return tuple(yaml.safe_load(DATA.read_text(encoding="utf-8"))["entries"])


@lru_cache(maxsize=None)
def seed_lines(seed: str) -> tuple[str, ...]:
    return tuple((SEEDS / SEED_FILES[seed]).read_text(encoding="utf-8").splitlines())


def fenced_blocks(seed: str) -> list[tuple[int, int]]:
    """(opening fence, closing fence) line numbers of every ``` block."""
    fences = [n for n, line in enumerate(seed_lines(seed), 1) if line.strip().startswith("```")]
    assert len(fences) % 2 == 0, f"seed {seed}: unbalanced ``` fences"
    return list(zip(fences[::2], fences[1::2]))


def guide_kind(entry: dict) -> str:
    found = [k for k in GUIDE_KINDS if k in (entry.get("guide") or {})]
    return found[0] if len(found) == 1 else f"invalid {sorted(entry.get('guide') or {})}"


def cited(entry: dict) -> list[str]:
    """Snippets (relative to snippets/) the entry cites."""
    g = entry["guide"]
    value = g.get("runs") or g.get("as_printed") or g.get("snippet")
    return [] if value is None else [value] if isinstance(value, str) else list(value)


def ranges_lines(ranges) -> set[int]:
    return {n for a, b in ranges for n in range(a, b + 1)}


def checked_lines(entry: dict) -> list[int]:
    """Line numbers of the block's command or configuration text: check_lines, or every line
    inside the fences (or of `lines`, outside a fence) that is not left out."""
    if entry.get("check_lines"):
        return sorted(ranges_lines(entry["check_lines"]))
    first, last = entry["lines"]
    if seed_lines(entry["seed"])[first - 1].strip().startswith("```"):
        first, last = first + 1, last - 1
    return [n for n in range(first, last + 1) if n not in left_out_lines(entry)]


def left_out_lines(entry: dict) -> set[int]:
    return ranges_lines(lo["lines"] for lo in entry.get("left_out", []))


# ---------------------------------------------------------------- normalising commands
# Substitutions the errata page documents, applied before comparing the TR's text with a
# snippet's:
#   addresses and lab names (SVM and aggregate names, FSx ids, <placeholders>)  [#adaptations]
#   prompts, comments and `sudo` (OMB runs without sudo)                        [#adaptations]
#   Apache's bin/kafka-*.sh for Confluent's kafka-*, node.id for broker.id, no
#   zookeeper.connect                                                           [#kafka-4]
#   line breaks inside an address or a word, as the PDF extraction left them    [#line-breaks]

#: The errata rows that document each substitution (checked by test_substitutions_are_documented).
SUBSTITUTIONS_DOCUMENTED = [
    ("adaptations", "Names and addresses follow the lab: SVM `svm_kafka`, aggregate `aggr1`"),
    ("adaptations", "FSx identifiers, subnets, the management address"),
    ("adaptations", "OMB runs without `sudo`."),
    ("kafka-4", "`zookeeper.connect=...`"),
    ("kafka-4", "`node.id=...`"),
    ("kafka-4", "Apache Kafka's `bin/kafka-topics.sh`, `bin/kafka-reassign-partitions.sh`"),
    ("line-breaks", "several fall inside a command"),
]

ADDRESS = re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b")
PROMPTS = (re.compile(r"^\[[^\]\n]*\][#$]\s*"),   # [root@ip-172-30-0-121 ~]#
           re.compile(r"^[\w.-]+::?\*?>\s*"),     # cluster::*>, cluster:*>, cluster::>, node:>
           re.compile(r"^\S+@\S+ ~ %\s*"))        # shantanu@shantanc-mac-0 ~ %
PLACEHOLDER = re.compile(r"(?:subnet-)?<[^<>\n]*>")
FSX_ID = re.compile(r"\bfs-[0-9a-f]{8,}\b")
NAME_OPTION = re.compile(r"(-vserver|-aggregate)\s+\S+")
COMMENT = re.compile(r"(?:^|\s)#.*$")
SPLIT = re.compile(r"[\s=,\"'{}()\[\]:;|]+")
CONFLUENT_TOOL = re.compile(r"^kafka(?:-[a-z]+)+$")


def strip_prompt(line: str) -> tuple[bool, str]:
    """(whether the line starts with a prompt, the line without it)."""
    s = line.strip()
    for p in PROMPTS:
        m = p.match(s)
        if m:
            return True, s[m.end():]
    return False, s


def is_command_line(line: str) -> bool:
    """A prompt followed by a command, or an OMB call (printed without a prompt)."""
    prompt, rest = strip_prompt(line)
    return bool(rest) and (prompt or re.match(r"(?i)sudo\s", rest) is not None)


def token(t: str) -> str | None:
    for prefix in ("./", "bin/"):
        if t.startswith(prefix):
            t = t[len(prefix):]
    if CONFLUENT_TOOL.match(t):
        t += ".sh"
    if t == "sudo" or not re.search(r"\w", t):
        return None
    return t


def tokens(text: str) -> list[str]:
    return [t for t in (token(x) for x in SPLIT.split(text)) if t]


def common(text: str) -> str:
    text = COMMENT.sub("", text)
    text = ADDRESS.sub(" ", text)
    return NAME_OPTION.sub(r"\1", text)


def tr_text(entry: dict) -> list[tuple[int, str]]:
    """(line number, normalised text) of the block's checked lines, wrapped lines re-joined
    where the break fell inside an address."""
    lines = seed_lines(entry["seed"])
    out: list[tuple[int, str]] = []
    for n in checked_lines(entry):
        text = strip_prompt(lines[n - 1])[1]
        if re.match(r"zookeeper\.connect=", text):
            continue
        text = text.replace("broker.id=", "node.id=")
        text = FSX_ID.sub(" ", PLACEHOLDER.sub(" ", text))
        if out and (re.search(r"\d[.,]$", out[-1][1]) and re.match(r"\d", text)):
            out[-1] = (out[-1][0], out[-1][1] + text)      # 172.30. / 0.123:9092
        else:
            out.append((n, text))
    return [(n, common(t)) for n, t in out]


def snippet_tokens(paths: list[str]) -> set[str]:
    found: set[str] = set()
    for p in paths:
        for line in (SNIPPETS / p).read_text(encoding="utf-8").splitlines():
            found |= set(tokens(common(line)))
    return found


def missing_tokens(entry: dict) -> list[tuple[int, str]]:
    """(line, token) of the TR's tokens that the cited snippets do not carry. A word the PDF
    broke across two lines counts as present when its two halves joined are."""
    have = snippet_tokens(cited(entry))
    per_line = [(n, tokens(t)) for n, t in tr_text(entry)]
    ok: set[tuple[int, int]] = set()
    for i in range(len(per_line) - 1):
        (n1, t1), (n2, t2) = per_line[i], per_line[i + 1]
        if t1 and t2 and t1[-1] + t2[0] in have:
            ok |= {(n1, len(t1) - 1), (n2, 0)}
    return [(n, t) for n, ts in per_line for j, t in enumerate(ts)
            if t not in have and (n, j) not in ok]


def snippet_streams(paths: list[str]) -> list[list[str]]:
    """Each cited snippet as one stream of tokens, in file order."""
    return [[t for line in (SNIPPETS / p).read_text(encoding="utf-8").splitlines()
             for t in tokens(common(line))] for p in paths]


def contains_run(stream: list[str], run: list[str]) -> bool:
    k = len(run)
    return any(stream[i:i + k] == run for i in range(len(stream) - k + 1))


def separated_settings(entry: dict) -> list[tuple[int, list[str]]]:
    """(line, tokens) of configuration lines whose tokens do not follow each other in any
    cited snippet: a key that kept its name but not its value, or a list that lost an item."""
    streams = snippet_streams(cited(entry))
    return [(n, run) for n, text in tr_text(entry) if (run := tokens(text))
            and not any(contains_run(s, run) for s in streams)]


# ---------------------------------------------------------------- notebooks and errata

@lru_cache(maxsize=None)
def snippets_run() -> frozenset[str]:
    """Snippets (relative to snippets/) that at least one notebook runs."""
    import nbformat
    from tr4947.runbook.inputs import snippets_used
    used: set[str] = set()
    for nb in sorted(NOTEBOOKS.glob("*.ipynb")):
        for p in snippets_used(nbformat.read(nb, as_version=4)):
            used.add(str(Path(p).resolve().relative_to(SNIPPETS.resolve())))
    return frozenset(used)


def errata_section(anchor: str) -> str | None:
    """Text of errata.adoc from [#anchor] to the next anchor line."""
    text = ERRATA.read_text(encoding="utf-8")
    m = re.search(rf"^\[#{re.escape(anchor)}\]\s*$", text, re.M)
    if not m:
        return None
    nxt = re.search(r"^\[#[\w-]+\]\s*$", text[m.end():], re.M)
    return text[m.end(): m.end() + nxt.start() if nxt else len(text)]


def errata_refs(entry: dict) -> list[tuple[str, str]]:
    g = entry["guide"]
    refs = [(g["departs"], g.get("errata_quote"))] if "departs" in g else []
    return refs + [(s.get("anchor"), s.get("quote")) for s in entry.get("see_also", [])]


# ---------------------------------------------------------------- tests

def test_entries_are_well_formed():
    procs = set(expected()[1])
    ids = [e.get("id") for e in entries()]
    assert len(ids) == len(set(ids)), "duplicate ids"
    problems = []
    for e in entries():
        eid = e.get("id")
        seed, lines = e.get("seed"), e.get("lines")
        if seed not in SEED_FILES:
            problems.append(f"{eid}: seed must be one of {sorted(SEED_FILES)}")
            continue
        if not (isinstance(lines, list) and len(lines) == 2 and 1 <= lines[0] <= lines[1]
                <= len(seed_lines(seed))):
            problems.append(f"{eid}: lines must be [first, last] within seed {seed}")
            continue
        if eid != f"{seed}:L{lines[0]}":
            problems.append(f"{eid}: id should be {seed}:L{lines[0]}")
        if e.get("procedure") is not None and e["procedure"] not in procs:
            problems.append(f"{eid}: unknown procedure {e['procedure']!r}")
        if e.get("kind") not in BLOCK_KINDS:
            problems.append(f"{eid}: kind must be one of {sorted(BLOCK_KINDS)}")
        kind = guide_kind(e)
        if kind not in GUIDE_KINDS:
            problems.append(f"{eid}: guide needs exactly one of {GUIDE_KINDS}, has {kind}")
            continue
        if (kind == "output") != (e["kind"] == "output"):
            problems.append(f"{eid}: kind output and guide output go together")
        if kind == "departs" and not (e["guide"].get("errata_quote")
                                      and isinstance(e["guide"].get("changed"), list)):
            problems.append(f"{eid}: departs needs errata_quote and a changed list")
        if kind == "not_run" and not str(e["guide"]["not_run"]).strip():
            problems.append(f"{eid}: not_run needs a reason")
        if kind == "as_printed" and not any(".tr-as-written." in p for p in cited(e)):
            problems.append(f"{eid}: as_printed must cite a *.tr-as-written.* snippet")
        if kind in ("runs", "as_printed") and not cited(e):
            problems.append(f"{eid}: {kind} names no snippet")
        inside = set(range(lines[0], lines[1] + 1))
        if not set(checked_lines(e)) <= inside or not left_out_lines(e) <= inside:
            problems.append(f"{eid}: check_lines and left_out must lie within lines")
        if set(checked_lines(e)) & left_out_lines(e):
            problems.append(f"{eid}: a line is both checked and left out")
        if any(not lo.get("why") for lo in e.get("left_out", [])):
            problems.append(f"{eid}: every left_out needs a why")
        for field in ("what", "note"):
            if len(str(e.get(field, ""))) > 160:
                problems.append(f"{eid}: {field} is longer than 160 characters; keep it short")
        if not e.get("what"):
            problems.append(f"{eid}: needs a short what")
    assert problems == []


def test_every_fenced_block_of_seed_001_has_exactly_one_entry():
    blocks = fenced_blocks("001")
    assert len(blocks) >= 40
    problems = []
    for a, b in blocks:
        covering = [e["id"] for e in entries() if e["seed"] == "001"
                    and e["lines"][0] <= a and b <= e["lines"][1]]
        if len(covering) != 1:
            problems.append(f"seed 001 lines {a}-{b}: covered by {covering or 'no entry'}")
    for e in entries():
        if e["seed"] != "001":
            continue
        first, last = e["lines"]
        overlaps = [(a, b) for a, b in blocks if a <= last and first <= b]
        if overlaps and overlaps != [(first, last)]:
            problems.append(f"{e['id']}: lines {first}-{last} must be one block's fences "
                            f"exactly, or lie outside every block (overlaps {overlaps})")
    assert problems == []


def test_entries_do_not_overlap():
    problems = []
    for seed in SEED_FILES:
        spans = sorted((e["lines"], e["id"]) for e in entries() if e["seed"] == seed)
        for (l1, id1), (l2, id2) in zip(spans, spans[1:]):
            if l2[0] <= l1[1]:
                problems.append(f"{id1} and {id2} overlap")
    assert problems == []


def test_every_command_line_of_seed_003_has_exactly_one_entry():
    command_lines = [n for n, line in enumerate(seed_lines("003"), 1) if is_command_line(line)]
    assert len(command_lines) >= 20
    problems = []
    for n in command_lines:
        covering = [e["id"] for e in entries() if e["seed"] == "003"
                    and e["lines"][0] <= n <= e["lines"][1]]
        if len(covering) != 1:
            problems.append(f"seed 003 line {n}: covered by {covering or 'no entry'}")
    for e in entries():
        if e["seed"] == "003" and not any(e["lines"][0] <= n <= e["lines"][1] for n in command_lines):
            problems.append(f"{e['id']}: holds no command line of seed 003")
    assert problems == []


def test_command_lines_in_a_block_are_checked_or_left_out():
    """A prompt with a command after it is never passed off as output."""
    problems = []
    for e in entries():
        accounted = left_out_lines(e) | set(checked_lines(e) if e["kind"] != "output" else [])
        for n in range(e["lines"][0], e["lines"][1] + 1):
            if is_command_line(seed_lines(e["seed"])[n - 1]) and n not in accounted:
                problems.append(f"{e['id']}: line {n} is a command, neither checked nor left out: "
                                f"{seed_lines(e['seed'])[n - 1].strip()[:80]!r}")
    assert problems == []


def test_cited_snippets_exist():
    missing = [f"{e['id']}: snippets/{p}" for e in entries() for p in cited(e)
               if not (SNIPPETS / p).is_file()]
    assert missing == []


def test_run_blocks_are_carried_by_their_snippets():
    """Every significant token of the TR's command lines is in the snippet(s)."""
    problems = []
    for e in entries():
        if guide_kind(e) in ("runs", "as_printed"):
            missing = missing_tokens(e)
            if missing:
                problems.append(f"{e['id']} ({', '.join(cited(e))}): missing "
                                + ", ".join(f"{t!r} (line {n})" for n, t in missing))
    assert problems == []


def test_run_settings_keep_their_values():
    """In configuration files and playbooks, each printed line's tokens stay together (a key
    with its value): `replicationFactor: 1` does not pass for `replicationFactor: 3`."""
    problems = []
    for e in entries():
        if guide_kind(e) in ("runs", "as_printed") and e["kind"] in ("config", "playbook"):
            problems += [f"{e['id']} line {n}: {' '.join(run)!r} not found together in "
                         f"{', '.join(cited(e))}" for n, run in separated_settings(e)]
    assert problems == []


def test_departures_change_exactly_what_they_say():
    """The tokens a departing snippet lacks are the ones listed as changed, no more, no less."""
    problems = []
    for e in entries():
        g = e["guide"]
        if guide_kind(e) == "departs" and g.get("snippet"):
            missing = sorted({t for _, t in missing_tokens(e)})
            if missing != sorted(set(map(str, g["changed"]))):
                problems.append(f"{e['id']}: the snippet lacks {missing}, the entry lists "
                                f"{sorted(map(str, g['changed']))}")
    assert problems == []


def test_snippets_that_carry_the_tr_are_run_by_a_notebook():
    run = snippets_run()
    assert run, "no notebook runs any snippet: snippets_used found nothing"
    problems = [f"{e['id']}: snippets/{p} is run by no notebook"
                for e in entries() if guide_kind(e) in ("runs", "as_printed", "departs")
                for p in cited(e) if p not in run]
    assert problems == []


def test_errata_rows_named_are_on_the_page():
    problems = []
    for e in entries():
        for anchor, quote in errata_refs(e):
            section = errata_section(anchor or "")
            if section is None:
                problems.append(f"{e['id']}: errata.adoc has no [#{anchor}]")
            elif not quote or quote not in section:
                problems.append(f"{e['id']}: {quote!r} is not in errata.adoc's [#{anchor}] section")
    assert problems == []


def test_substitutions_are_documented():
    """The substitutions the comparison allows are the ones the errata page describes."""
    problems = [f"[#{a}]: {q!r} not found" for a, q in SUBSTITUTIONS_DOCUMENTED
                if q not in (errata_section(a) or "")]
    assert problems == []


def test_summary(capsys):
    """One line for the CI log: how the TR's printed blocks are covered."""
    counts = Counter(guide_kind(e) for e in entries())
    per_seed = Counter(e["seed"] for e in entries())
    line = (f"TR-printed blocks: {len(entries())} (seed 001: {per_seed['001']}, "
            f"seed 003: {per_seed['003']}); "
            + ", ".join(f"{k} {counts.get(k, 0)}" for k in GUIDE_KINDS))
    with capsys.disabled():
        print("\n" + line)
    assert sum(counts.values()) == len(entries()) and set(counts) <= set(GUIDE_KINDS)
