"""The words of a result in the reader's language: one gettext catalogue per edition.

The run records are one set, in English: the procedures record English titles, headers,
notes and sentences. When the site is built, the renderer asks a :class:`Translator` for
every word it puts into a result, so each edition (English, French, Japanese) gets its own
partials and charts:

* the renderer's own words (labels, the provenance badge, chart notes) are gettext messages
  in its source, ``tr._("Lab result: {proc}", proc=...)``, extracted with Babel;
* the words a procedure recorded go through :meth:`Translator.text`. A recorded string is
  looked up whole; else matched against the catalogue's *templates*, msgids with
  ``{placeholders}`` for what a procedure fills in from data ("Round {n}: {cmd} on
  {cluster}"); else translated sentence by sentence, then clause by clause (``; ``); else, if
  it holds no words at all (numbers, paths, identifiers), it is data and only its numbers
  follow the locale. Anything else is *missing*: the page shows it in English, and
  ``python -m tr4947.results.i18n missing`` lists it (a unit test runs the same check over
  every committed result).

Placeholders: a value captured for ``{cmd}``, ``{code}``, ``{path}``, ``{id}``, ``{host}``,
``{name}``, ``{value}``, ``{key}``, ``{os}``, ``{version}`` or ``{file}`` (optionally with a
suffix: ``{cmd2}``, ``{path_from}``) is kept as recorded; any other value is itself translated
(a number is formatted for the locale, a known string translated, a string with words and no
translation reported as missing).

Catalogues: ``locale/<lang>/LC_MESSAGES/results.po``, read with Babel when the site is built
(no compile step). ``python -m tr4947.results.i18n update`` brings every catalogue up to date
with the renderer's messages and the committed results (docs/TRANSLATING.md).
"""
from __future__ import annotations

import datetime as _dt
import functools
import json
import re
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any, Iterator

from babel.dates import format_date, format_datetime
from babel.numbers import format_decimal

from .claims import load_claims

#: The guide's editions and their Babel locales ("en" is the source language: no catalogue).
EDITIONS = ("en", "fr", "ja")
LOCALE_DIR = Path(__file__).parent / "locale"
DOMAIN = "results"

HEADER = ("# The words of the guide's results in one language (tr4947.results.i18n).\n"
          "# Add or change translations here; docs/TRANSLATING.md says how.")
_PLACEHOLDER = re.compile(r"\{([a-z][a-z0-9_]*)\}")
_VERBATIM = re.compile(r"^(cmd|code|path|id|host|name|value|key|os|version|file)(_?\w*)$")
#: An English number as the procedures print it: 12, 2,000, 133.8, -0.5.
_NUMBER = re.compile(r"^[-+]?(\d{1,3}(,\d{3})+|\d+)(\.\d+)?$")
#: The same, standing alone inside a string (not part of an address, version or identifier).
_NUMBER_IN = re.compile(r"(?<![\w.,/=:@])(?<![A-Za-z]-)"
                        r"(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+\.\d+)(?!\w|[.,]\d)")
#: French writes byte units with "o" (octet): docs/TRANSLATING.md.
_FR_UNITS = {"GBps": "Go/s", "MBps": "Mo/s", "GB/s": "Go/s", "MB/s": "Mo/s", "MiB/s": "Mio/s",
             "GiB/s": "Gio/s", "KiB": "Kio", "MiB": "Mio", "GiB": "Gio", "TiB": "Tio",
             "KB": "Ko", "MB": "Mo", "GB": "Go", "TB": "To", "B": "o"}
_UNIT_AFTER_NUMBER = re.compile(r"(\d\s?)(" + "|".join(sorted(_FR_UNITS, key=len, reverse=True))
                                + r")(?![\w/])")
#: Words that are units or symbols, not English.
_UNITS = {"B", "KB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB", "MBps", "GBps", "Gbps",
          "ms", "s", "msg", "vCPUs", "x", "n", "p50", "p99"}


def po_path(lang: str) -> Path:
    return LOCALE_DIR / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


def has_words(s: str) -> bool:
    """Whether a string holds at least one word of prose (which then needs a translation),
    as opposed to data: numbers, units, paths, identifiers, acronyms, inline code."""
    s = re.sub(r"`[^`]*`", " ", s)
    for tok in s.split():
        t = tok.strip("()[]{}<>,;:.!?\"'«»*~")
        t = re.sub(r"'s$", "", t)
        if len(t) < 2 or not re.fullmatch(r"[A-Za-z]+(?:'[a-z]+)?", t):
            continue            # numbers, paths, identifiers (fv_c1, log.dirs, vers=4.1)
        if t.isupper() or t in _UNITS or re.search(r"[a-z][A-Z]", t):
            continue            # acronyms (NFS, ONTAP), units, camelCase settings
        return True
    return False


#: A spread as the procedures write it in a sentence, "(46.0-86.2, n=3)" (a French decimal
#: comma or grouping space once translated).
_SPREAD_HYPHEN = re.compile(r"\(([-+]?\d[\d.,\u202f\u00a0]*)-(\d[\d.,\u202f\u00a0]*?), n=(\d+)\)")


# --- the catalogue ------------------------------------------------------------------------------
def _shape(name: str) -> str:
    """What a placeholder may match: a number for {n}, {n2}...; one token for a path, host, name or the like, inline
    code or one token for {code}, anything for the rest (a translated value must itself
    translate, so prose never hides in one)."""
    if re.fullmatch(r"n\d*", name):     # {n}, {n2}: a number (never a word: "stand-in of")
        num = r"[-+]?\d[\d,]*(?:\.\d+)?"           # ... or a spread: 2.0 (1.6-3.1, n=3)
        return rf"{num}(?: \({num}[-\u2013]{num}, n=\d+\))?"
    kind = _VERBATIM.match(name)
    if not kind or kind.group(1) in ("cmd", "value"):
        return ".+?"
    if kind.group(1) == "code":
        return r"`[^`]+`|\S+?"
    return r"\S+?"


class Template:
    """A msgid with placeholders, as a pattern over the English strings it stands for."""

    def __init__(self, msgid: str, msgstr: str):
        self.msgid, self.msgstr = msgid, msgstr
        parts, names, pos = [], [], 0
        for m in _PLACEHOLDER.finditer(msgid):
            parts.append(re.escape(msgid[pos:m.start()]))
            name = m.group(1)
            parts.append(f"(?P={name})" if name in names else f"(?P<{name}>{_shape(name)})")
            names.append(name)
            pos = m.end()
        parts.append(re.escape(msgid[pos:]))
        self.names = names
        self.pattern = re.compile("^" + "".join(parts) + "$", re.S)
        #: More literal text first: the most specific template wins.
        self.weight = len(_PLACEHOLDER.sub("", msgid))


#: The gettext context of the renderer's own messages: they are looked up by msgid only, never
#: matched against what a procedure recorded.
OWN = "renderer"


class Catalogue:
    """One edition's messages: the renderer's own (context OWN), and for recorded strings
    exact msgids and templates (msgids with placeholders)."""

    def __init__(self, lang: str, messages: dict[str, str], own: dict[str, str] | None = None):
        self.lang = lang
        self.own = {k: v for k, v in (own or {}).items() if v}
        self.exact = {k: v for k, v in messages.items() if v}
        self.templates = sorted((Template(k, v) for k, v in self.exact.items()
                                 if _PLACEHOLDER.search(k)), key=lambda t: -t.weight)

    @classmethod
    @functools.lru_cache(maxsize=None)
    def load(cls, lang: str) -> "Catalogue":
        if lang == "en":
            return cls(lang, {})
        from babel.messages.pofile import read_po
        f = po_path(lang)
        if not f.exists():
            raise SystemExit(f"{f}: no message catalogue for edition {lang!r} "
                             f"(run `python -m tr4947.results.i18n update`)")
        with f.open("rb") as fh:
            cat = read_po(fh, locale=lang, domain=DOMAIN)
        usable = [m for m in cat if m.id and isinstance(m.id, str) and not m.fuzzy]
        return cls(lang, {m.id: m.string for m in usable if m.context != OWN},
                   {m.id: m.string for m in usable if m.context == OWN})


# --- locale conventions -------------------------------------------------------------------------
def _fr_typography(s: str) -> str:
    """French spacing around punctuation, for the catalogue's own text (translators type
    ordinary spaces): no-break space before a colon, narrow no-break space before ; ! ?,
    no-break spaces inside « »."""
    s = re.sub(r" :(?=\s|$)", "\u00a0:", s)
    s = re.sub(r" ([;!?])(?=\s|$)", "\u202f\\1", s)
    return s.replace("« ", "«\u00a0").replace(" »", "\u00a0»")


_SENTENCE_END = {"en": ".", "fr": ".", "ja": "。"}
_SENTENCE_JOIN = {"en": " ", "fr": " ", "ja": ""}
_CLAUSE_JOIN = {"en": "; ", "fr": "\u202f; ", "ja": "。"}


def _split_depth0(s: str, boundary: re.Pattern) -> list[str]:
    """Split at the boundaries outside parentheses and inline code; a boundary's
    group 1 stays with the part before it."""
    out, start, depth, code = [], 0, 0, False
    i = 0
    while i < len(s):
        c = s[i]
        if c == "`":
            code = not code
        elif not code and c == "(":
            depth += 1
        elif not code and c == ")":
            depth = max(0, depth - 1)
        elif not code and depth == 0:
            m = boundary.match(s, i)
            if m:
                out.append(s[start:m.end(1)])
                start = i = m.end()
                continue
        i += 1
    out.append(s[start:])
    return [p for p in out if p.strip()]


_SENTENCE = re.compile(r"([.?!])\s+(?=[A-Z`])")
_CLAUSE = re.compile(r"()\s*;\s+")


# --- the translator -------------------------------------------------------------------------------
class Translator:
    """Everything one edition needs to put a result into words: messages, numbers, dates.

    ``missing`` collects (where, string) for every recorded string with words that the
    catalogue does not cover."""

    def __init__(self, lang: str = "en"):
        if lang not in EDITIONS:
            raise SystemExit(f"edition {lang!r}: one of {', '.join(EDITIONS)}")
        self.lang = lang
        self.cat = Catalogue.load(lang)
        self.missing: list[tuple[str, str]] = []

    # numbers and dates
    def number(self, value: Any, decimals: int | None = None, group: bool = True) -> str:
        """A number in the locale's notation. A string keeps the precision and grouping it
        was recorded with ("2,000" -> "2 000" in French, "133.8" -> "133,8")."""
        if isinstance(value, str):
            m = _NUMBER.match(value.strip())
            if not m:
                return value
            group = "," in value
            decimals = len(m.group(3)) - 1 if m.group(3) else 0
            value = Decimal(value.strip().replace(",", ""))
        if decimals is None:
            decimals = 0 if float(value) == int(value) else 2
        fmt = ("#,##0" if group else "0") + ("." + "0" * decimals if decimals else "")
        return format_decimal(Decimal(str(value)), format=fmt, locale=self.lang)

    def numbers_in(self, s: str) -> str:
        """A data string (no words) with its stand-alone numbers, and in French its units,
        in the locale's notation: "420.3 GB" -> "420,3 Go"."""
        if self.lang == "en":
            return s
        s = _NUMBER_IN.sub(lambda m: self.number(m.group(1)), s)
        if self.lang == "fr":
            s = _UNIT_AFTER_NUMBER.sub(lambda m: m.group(1) + _FR_UNITS[m.group(2)], s)
        return s

    def period(self, s: str) -> str:
        """A sentence closed the language's way (。 in Japanese)."""
        return s if s.rstrip()[-1:] in (".", "。", "!", "?") else s + _SENTENCE_END[self.lang]

    def sentences(self, parts: list[str]) -> str:
        """Sentences one after the other, as the language writes them (no space in Japanese)."""
        return _SENTENCE_JOIN[self.lang].join(parts)

    def unit(self, unit: str) -> str:
        """A unit in the edition's notation (French writes Mio/s for MiB/s)."""
        return _FR_UNITS.get(unit, unit) if self.lang == "fr" else unit

    def date(self, iso: str) -> str:
        try:
            return format_date(_dt.datetime.fromisoformat(iso), "medium", locale=self.lang)
        except (TypeError, ValueError):
            return iso

    def datetime(self, iso: str) -> str:
        try:
            d = _dt.datetime.fromisoformat(iso)
        except (TypeError, ValueError):
            return iso
        return format_datetime(d, "long", tzinfo=d.tzinfo or _dt.timezone.utc, locale=self.lang)

    # the renderer's own words
    def _(self, msgid: str, **values: Any) -> str:
        """One of the renderer's messages, with its placeholders filled in: numbers in
        the locale's notation, strings as given (the caller translates them first)."""
        msgstr = self.cat.own.get(msgid, msgid)
        if self.lang == "fr":
            msgstr = _fr_typography(msgstr)
        return _PLACEHOLDER.sub(lambda m: self._fmt(values[m.group(1)])
                                if m.group(1) in values else m.group(0), msgstr)

    def _fmt(self, v: Any) -> str:
        if isinstance(v, bool) or v is None:
            return str(v)
        if isinstance(v, (int, float, Decimal)):
            return self.number(v)
        return str(v)

    # the procedures' words
    def text(self, s: Any, where: str = "") -> str:
        """A recorded string in this edition's language (see the module doc); a string the
        catalogue does not cover stays English and its uncovered parts go to ``missing``.
        A spread in it reads as the tables write one: "(46.0–86.2, n=3)", with an en dash."""
        out = self._text(s, where)
        return _SPREAD_HYPHEN.sub("(\\1\u2013\\2, n=\\3)", out) if isinstance(out, str) else out

    def _text(self, s: Any, where: str) -> str:
        if not isinstance(s, str):
            return self._fmt(s)
        if self.lang == "en" or not s.strip():
            return s
        out, uncovered = self._cover(s)
        if out is None:
            self.missing.extend((where, u) for u in uncovered)
            return s
        if self.lang == "fr" and s[:1].isupper() and out[:1].islower():
            out = out[:1].upper() + out[1:]           # "HA pair: ..." -> "Paire HA : ..."
        return out

    def _hit(self, msgid: str) -> str:
        hit = self.cat.exact[msgid]
        return _fr_typography(hit) if self.lang == "fr" else hit

    def _cover(self, s: str) -> tuple[str | None, list[str]]:
        """(s translated, []) or (None, the smallest parts of s the catalogue lacks)."""
        if s in self.cat.exact:
            return self._hit(s), []
        if not s.strip():
            return s, []
        if _NUMBER.match(s.strip()):
            return self.number(s), []
        sentences = _split_depth0(s, _SENTENCE)
        if len(sentences) > 1:                 # sentence by sentence: no template spans two
            done = [self._cover(x.strip()) for x in sentences]
            if all(d[0] is not None for d in done):
                return _SENTENCE_JOIN[self.lang].join(d[0] for d in done), []
            return None, [u for d in done for u in d[1]]
        lacking: list[str] | None = None
        for t in self.cat.templates:
            m = t.pattern.match(s)
            if m:
                got, unc = self._fill(t, m)
                if got is not None:
                    return got, []
                lacking = lacking if lacking is not None else unc
        body, end = s, ""
        if s.rstrip()[-1:] in (".", "?", "!"):
            body, end = s.rstrip()[:-1], s.rstrip()[-1]
        clauses = _split_depth0(body, _CLAUSE)
        if len(clauses) > 1:
            done = [self._cover(x.strip()) for x in clauses]
            if all(d[0] is not None for d in done):
                texts = [d[0].rstrip("。") if self.lang == "ja" else d[0] for d in done]
                return _CLAUSE_JOIN[self.lang].join(texts) + (
                    _SENTENCE_END[self.lang] if end == "." else end), []
            return None, [u for d in done for u in d[1]]
        if not has_words(s):
            return self.numbers_in(s), []
        return None, lacking if lacking else [s]

    def _fill(self, t: Template, m: re.Match) -> tuple[str | None, list[str]]:
        values, lacking = {}, []
        for name in dict.fromkeys(t.names):
            v = m.group(name)
            if _VERBATIM.match(name):
                if len(_split_depth0(v, _CLAUSE)) > 1:
                    return None, [m.string]        # a value never spans clauses
                values[name] = v
                continue
            tv, unc = self._cover(v)
            if tv is None:
                lacking += unc
            values[name] = tv
        if lacking:
            return None, lacking
        msgstr = _fr_typography(t.msgstr) if self.lang == "fr" else t.msgstr
        return _PLACEHOLDER.sub(lambda x: values.get(x.group(1), x.group(0)), msgstr), []


# --- what a run record asks to translate ------------------------------------------------------------
def record_strings(doc: dict) -> Iterator[tuple[str, str]]:
    """(where, string) for every recorded string a result shows as words: record titles,
    table headers, cells and notes, text bodies, chart titles, axes, series and categories.
    Commands and their output are shown as they ran, in every edition."""
    for rec in doc.get("records", []):
        kind, data = rec.get("kind"), rec.get("data") or {}
        where = f"{rec.get('id', '?')} {kind}"
        if rec.get("title"):
            yield f"{where} title", rec["title"]
        if kind == "table":
            for h in data.get("header", []):
                yield f"{where} header", h
            for row in data.get("rows", []):
                for c in row:
                    yield f"{where} cell", str(c)
            if data.get("note"):
                yield f"{where} note", data["note"]
        elif kind == "text":
            yield f"{where} text", data.get("body", "")
        elif kind == "chart":
            for k in ("x_label", "y_label"):
                if data.get(k):
                    yield f"{where} {k}", data[k]
            for s in data.get("series", []) + data.get("reference", []):
                yield f"{where} series", s.get("name", "")
            if data.get("type") == "bar":
                for s in data.get("series", []):
                    for x in s.get("x", []):
                        yield f"{where} category", str(x)
        elif kind == "load":
            for run in data.get("runs", []):
                yield f"{where} run", run.get("name", "")
        elif kind == "verdict":
            w = f"{doc.get('chapter', '?')} {data.get('claim', '?')}"
            for k in ("why", "action"):
                if data.get(k):
                    yield f"{w} {k}", data[k]
            yield from ((f"{w} lab", x) for x in _figure_words(data.get("lab")))


def _figure_words(lab: Any) -> Iterator[str]:
    """The words inside a verdict's lab figure: a sentence, or a unit with words in it."""
    if isinstance(lab, str):
        yield lab
    elif isinstance(lab, dict):
        for k, v in lab.items():
            if k == "unit" and isinstance(v, str) and has_words(v):
                yield v
            elif k != "unit":
                yield from _figure_words(v)


def claim_strings() -> Iterator[tuple[str, str]]:
    """The TR's figures as docs/data/claims.yaml quotes them (the ledger shows them)."""
    for c in load_claims():
        if c.get("tr"):
            yield f"claims.yaml {c['id']} tr", c["tr"]


def check(results: Path, langs: tuple[str, ...] = ("fr", "ja")) -> dict[str, Translator]:
    """Translate every recorded string of every run record under ``results`` into each of
    ``langs``; the translators' ``missing`` lists what the catalogues lack."""
    out = {}
    for lang in langs:
        tr = Translator(lang)
        for f in sorted(Path(results).glob("*/*.json")):
            doc = json.loads(f.read_text())
            rel = f"{f.parent.name}/{f.name}"
            for where, s in record_strings(doc):
                tr.text(s, f"{rel} {where}")
        for where, s in claim_strings():
            tr.text(s, where)
        out[lang] = tr
    return out


def suggest(s: str) -> str:
    """A template msgid for a string built from data: its numbers become {n}, {n2}..."""
    count = 0

    def num(m):
        nonlocal count
        count += 1
        return "{n}" if count == 1 else f"{{n{count}}}"
    return re.sub(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?![\w])", num, s)


# --- command line -----------------------------------------------------------------------------------
def renderer_messages() -> dict[str, list[tuple[str, int]]]:
    """The renderer's own msgids, extracted from this package's source with Babel."""
    from babel.messages.extract import extract_from_dir
    here = Path(__file__).parent
    found: dict[str, list[tuple[str, int]]] = {}
    for fname, lineno, msg, _comments, _ctx in extract_from_dir(
            here, method_map=[("**.py", "python")], keywords={"_": None}):
        if isinstance(msg, str):
            found.setdefault(msg, []).append((f"src/tr4947/results/{fname}", lineno))
    return found


def _no_percent_format(cat) -> None:
    """Babel flags any msgid with a "%" before a letter as python-format ("% of a core"); our
    messages take {name} placeholders only, and the flag makes ``msgfmt --check-format`` (and
    translators' tools) reject a translation that moves the "%"."""
    for m in cat:
        m.flags.discard("python-format")


def update(results: Path) -> list[str]:
    """Bring every catalogue up to date: the renderer's messages and each recorded string
    not yet covered are added (untranslated) to every language's file, translations are
    kept. Returns what was added."""
    from babel.messages.catalog import Catalog
    from babel.messages.pofile import read_po, write_po
    langs = [x for x in EDITIONS if x != "en"]
    cats = {}
    for lang in langs:
        f = po_path(lang)
        if f.exists():
            with f.open("rb") as fh:
                cats[lang] = read_po(fh, locale=lang, domain=DOMAIN)
        else:                                  # a new language: an empty catalogue
            cats[lang] = Catalog(locale=lang, domain=DOMAIN, header_comment=HEADER,
                                 project="TR-4947 guide: result words", version="1")
            f.parent.mkdir(parents=True, exist_ok=True)
            with f.open("wb") as fh:
                write_po(fh, cats[lang])
    Catalogue.load.cache_clear()
    pot = LOCALE_DIR / f"{DOMAIN}.pot"
    template = Catalog(domain=DOMAIN, project="TR-4947 guide: result words", version="1",
                       fuzzy=False, header_comment=HEADER)
    if pot.exists():                         # no new date when nothing else changed
        with pot.open("rb") as fh:
            template.creation_date = read_po(fh).creation_date
    own = renderer_messages()
    for lang in langs:                       # every msgid any language has (templates too)
        for m in cats[lang]:
            if m.id and not (m.context == OWN and m.id not in own):
                template.add(m.id, context=m.context,
                             flags=[f for f in m.flags if f != "fuzzy"])
    for msgid, locs in own.items():
        template.add(msgid, locations=locs, context=OWN,
                     flags=["python-brace-format"] if _PLACEHOLDER.search(msgid) else [])
    added = []
    for lang, tr in check(results, tuple(langs)).items():
        for where, s in tr.missing:
            if template.get(s) is None:
                template.add(s, locations=[(where.split(" ", 1)[0], None)])
                added.append(s)
    LOCALE_DIR.mkdir(parents=True, exist_ok=True)
    _no_percent_format(template)
    with pot.open("wb") as fh:
        write_po(fh, template, width=0, sort_output=True, omit_header=False)
    for lang, cat in cats.items():
        cat.update(template, no_fuzzy_matching=True, update_header_comment=False,
                   update_creation_date=False)
        cat.fuzzy = False
        _no_percent_format(cat)
        f = po_path(lang)
        f.parent.mkdir(parents=True, exist_ok=True)
        with f.open("wb") as fh:
            write_po(fh, cat, width=0, sort_output=True, ignore_obsolete=True)
    return sorted(set(added))


def main(argv: list[str] | None = None) -> int:
    from .. import paths
    from ..usage import Parser
    p = Parser(prog="python -m tr4947.results.i18n",
               description="The result catalogues (French, Japanese): list what they lack, or "
                           "add the missing msgids to them.",
               epilog="examples:\n"
                      "  python -m tr4947.results.i18n missing          # exit 1 if any\n"
                      "  python -m tr4947.results.i18n missing --edition ja\n"
                      "  python -m tr4947.results.i18n update           # then translate the "
                      "empty msgstr")
    p.add_argument("action", choices=["missing", "update"])
    p.add_argument("--edition", choices=[x for x in EDITIONS if x != "en"], action="append",
                   help="only this edition (default: every translated edition)")
    p.add_argument("--results", type=Path, default=paths.REPO / "results",
                   help="run records (default results/)")
    a = p.parse_args(argv)
    if not a.results.is_dir():
        p.error(f"--results {a.results}: no such directory")
    if a.action == "update":
        added = update(a.results)
        for s in added:
            print(f"added: {s}")
        print(f"{len(added)} msgid(s) added to {LOCALE_DIR}/*/LC_MESSAGES/{DOMAIN}.po",
              file=sys.stderr)
        return 0
    langs = tuple(a.edition or [x for x in EDITIONS if x != "en"])
    Catalogue.load.cache_clear()
    total = 0
    for lang, tr in check(a.results, langs).items():
        seen = set()
        code = {m for m in renderer_messages() if m not in tr.cat.own}
        for m in sorted(code):
            print(f"{lang}\tsrc/tr4947/results\t{m}")
            total += 1
        for where, s in tr.missing:
            if (s in seen):
                continue
            seen.add(s)
            total += 1
            hint = suggest(s)
            print(f"{lang}\t{where}\t{s}" + (f"\n\t(as a template: {hint})" if hint != s else ""))
    print(f"{total} untranslated string(s)", file=sys.stderr)
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
