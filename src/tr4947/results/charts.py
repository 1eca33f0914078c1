"""Charts of recorded numbers, drawn with matplotlib as SVG, once per edition.

A chart spec is data, recorded by the notebook:
  {"type": "line"|"bar", "x_label": str, "y_label": str,
   "series": [{"name": str, "x": [...], "y": [...],
               "low": [...], "high": [...],        # optional: min-max of repeated runs
                                                   # (y is then their median)
               "x_low": [...], "x_high": [...]}],  # optional: min-max of a measured x, such
                                                   # as the rate a load run achieved
   "reference": [{"name": str, "x": [...], "y": [...],
                  "unit": "MBps"}],                # the TR's published figures, dashed; unit
                                                   # optional (else read from the name)
   "y_scale": "log", "x_scale": "log"              # optional: lab and TR figures orders of
  }                                                # magnitude apart

What every chart does for its reader (issue: charts a reader can read):
- one unit per axis: a TR figure printed in MBps or GBps (10^6 or 10^9 bytes/s) on a MiB/s
  axis is converted, and a note under the chart says so;
- a log axis only when the spec asks for it and the values span a decade or more; otherwise
  linear, from 0. Ticks are plain numbers in the edition's notation (1-2-5 on a log axis);
- legend and notes below the plot, never over it;
- two sizes of one chart: wide (760 px) and narrow (340 px, for phones); the page shows one
  by the width of its column, so text is 12.7 px at natural size and never under 11 px;
- text drawn as paths: Japanese needs no font on the reader's machine or in the PDF;
- the chart's words come from the edition's catalogue (:func:`plan` is given a Translator),
  and :func:`alt_text` puts its figures into words for the image's alt text.

SVG output is deterministic (fixed hash salt, no date): an unchanged chart is an unchanged file.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

#: Natural widths (CSS px) and the smallest text size, in points (1 pt = 4/3 px).
SIZES = {"wide": 760, "narrow": 340}
FONT_PT = 9.5
PX_PER_IN = 96

#: Byte-rate units a TR figure may be printed in, in bytes per second.
_RATE_UNITS = {"MBps": 1e6, "MB/s": 1e6, "GBps": 1e9, "GB/s": 1e9,
               "MiB/s": 2 ** 20, "GiB/s": 2 ** 30}
_NAME_UNIT = re.compile(r"\b(MBps|GBps|MB/s|GB/s)")


def _axis_unit(label: str) -> str | None:
    m = re.search(r"\b(MiB/s|GiB/s|MBps|MB/s)", label or "")
    return m.group(1) if m else None


def reference_unit(ref: dict, axis: str | None) -> tuple[float, str]:
    """(factor to the axis unit, why) for a TR reference line.

    The notebooks give a TR figure's value as the TR prints it in MB (3.4 GBps is 3400.0)
    and name its unit in the label; a reference may also say its unit outright. OMB's own
    log prints "MB/s" for 2^20 bytes per second (its code divides by 1024 twice): a figure
    quoted from an OMB log is already MiB/s."""
    if not axis or axis not in _RATE_UNITS:
        return 1.0, ""
    name = ref.get("name", "")
    unit = ref.get("unit")
    if unit is None:
        if "OMB" in name and "MB/s" in name:
            return 1.0, "omb"
        m = _NAME_UNIT.search(name)
        unit = "MB/s" if m else axis          # values of a named decimal unit are in MB
    if unit not in _RATE_UNITS or unit == axis:
        return 1.0, ""
    return _RATE_UNITS[unit] / _RATE_UNITS[axis], "decimal" if _RATE_UNITS[unit] % 10 == 0 else ""


def _positive(values) -> list[float]:
    return [float(v) for v in values if isinstance(v, (int, float)) and v > 0]


def plan(spec: dict[str, Any], tr, lab: bool = True) -> dict[str, Any]:
    """Everything a chart shows, in the edition's words and units, as plain data: what the
    drawing needs, what the alt text says, and the chart's cache key."""
    kind = spec.get("type", "line")
    axis = _axis_unit(spec.get("y_label", ""))
    series = []
    for s in spec.get("series", []):
        item = {k: s[k] for k in ("x", "y", "low", "high", "x_low", "x_high", "n") if k in s}
        item["name"] = tr.text(s.get("name", ""))
        series.append(item)
    refs, notes, reasons = [], [], set()
    for r in spec.get("reference", []):
        factor, why = reference_unit(r, axis)
        reasons.add(why)
        y = [v * factor for v in r.get("y", [])]
        name = tr.text(r.get("name", ""))
        if y and len(set(y)) == 1 and axis:
            label = tr._("{name} = {value} {unit}", name=name, value=tr.number(round(y[0])),
                         unit=tr.unit(axis)) if factor != 1.0 else name
        else:
            label = name
        refs.append({"label": label, "x": list(r.get("x", [])), "y": y})
    if "decimal" in reasons:
        notes.append(tr._("TR-4947's figures converted to {unit}: 1 MBps (10⁶ bytes/s) = "
                          "{factor} {unit} (2²⁰ bytes/s).", unit=tr.unit(axis),
                          factor=tr.number(1e6 / 2 ** 20, 3)))
    if "omb" in reasons:
        notes.append(tr._("OMB's logs print MB/s for 2²⁰ bytes/s: their figures are "
                          "{unit} as printed.", unit=tr.unit(axis)))
    ys = [v for s in series for k in ("y", "low", "high") for v in _positive(s.get(k, []))]
    ys += [v for r in refs for v in _positive(r["y"])]
    y_log = (spec.get("y_scale") == "log" and bool(ys) and max(ys) / min(ys) >= 10)
    xs = [v for s in series for k in ("x", "x_low", "x_high") for v in _positive(s.get(k, []))]
    x_log = (kind != "bar" and spec.get("x_scale") == "log" and bool(xs)
             and max(xs) / min(xs) >= 10)
    if y_log:
        notes.append(_log_note(series, refs, ys, tr))
    if any("x_low" in s for s in series):
        notes.append(tr._("Horizontal bars: the lowest and highest rate the runs achieved."))
    if any("low" in s for s in series):
        notes.append(tr._("Bars: the median of the runs; whiskers: their lowest and highest.")
                     if kind == "bar" else
                     tr._("Markers: the median of the runs; bars: their lowest and highest."))
    p = {"type": kind, "lang": tr.lang, "lab": lab,
         "x_label": tr.text(spec.get("x_label", "")), "y_label": tr.text(spec.get("y_label", "")),
         "series": series, "refs": refs, "y_log": y_log, "x_log": x_log, "notes": notes,
         "all_zero": tr._("{name}: all 0", name="{name}")}
    if kind == "bar":
        cats = list(dict.fromkeys(str(x) for s in spec.get("series", []) for x in s.get("x", [])))
        p["categories"] = cats
        p["category_labels"] = [tr.text(c) for c in cats]
    return p


def _num(tr, v: float) -> str:
    """A figure for the alt text: three significant digits at most, no trailing noise."""
    import math
    if v == 0 or float(v).is_integer() or abs(v) >= 100:
        return tr.number(round(v))
    decimals = min(3, max(0, 2 - math.floor(math.log10(abs(v)))))
    shown = f"{round(v, decimals):.{decimals}f}".rstrip("0").rstrip(".")
    return tr.number(float(shown), len(shown.split(".")[1]) if "." in shown else 0)


def alt_text(p: dict[str, Any], tr) -> str:
    """The chart's figures in words, for readers who do not see it."""
    num = lambda v: _num(tr, v)  # noqa: E731
    kind = tr._("Bar chart") if p["type"] == "bar" else tr._("Line chart")
    parts = [tr._("{kind} of {y} against {x}.", kind=kind, y=p["y_label"], x=p["x_label"])]
    for s in p["series"]:
        ys = [v for v in s.get("y", []) if isinstance(v, (int, float))]
        if not ys:
            continue
        if p["type"] == "bar":
            labels = dict(zip(p["categories"], p["category_labels"]))
            vals = []
            for i, (x, y) in enumerate(zip(s["x"], s["y"])):
                v = num(y)
                if "low" in s:
                    v = tr._("{median} ({low} to {high})", median=v, low=num(s["low"][i]),
                             high=num(s["high"][i]))
                vals.append(tr._("{x}: {y}", x=labels.get(str(x), str(x)), y=v))
            parts.append(tr._("{name}: {values}.", name=s["name"],
                              values=tr._(", ").join(vals)))
        elif len(ys) <= 4:
            pts = [tr._("{x}: {y}", x=num(x), y=num(y)) for x, y in zip(s["x"], s["y"])]
            parts.append(tr._("{name}: {values}.", name=s["name"], values=tr._(", ").join(pts)))
        else:
            parts.append(tr._("{name}: {first} to {last} (lowest {low}, highest {high}).",
                              name=s["name"], first=num(ys[0]), last=num(ys[-1]),
                              low=num(min(ys)), high=num(max(ys))))
    for r in p["refs"]:
        parts.append(tr._("{name}.", name=r["label"]))
    return tr.sentences(parts + p["notes"])


# --- drawing ---------------------------------------------------------------------------------------
def _matplotlib():
    import matplotlib
    matplotlib.use("Agg")
    matplotlib.rcParams.update({
        "svg.hashsalt": "tr4947",
        "svg.fonttype": "path",          # glyphs as paths: no font needed to show them
        # DejaVu Sans for Latin text; IPAex Gothic (Debian's fonts-ipaexfont-gothic) for the
        # Japanese glyphs DejaVu lacks (matplotlib falls back per glyph).
        "font.family": ["DejaVu Sans", "IPAexGothic"],
        "font.size": FONT_PT,
        "axes.titlesize": FONT_PT, "axes.labelsize": FONT_PT,
        "xtick.labelsize": FONT_PT, "ytick.labelsize": FONT_PT, "legend.fontsize": FONT_PT,
    })
    import matplotlib.pyplot as plt
    return matplotlib, plt


_CJK = re.compile(r"[\u3000-\u30ff\u3400-\u9fff\uff00-\uffef]")
#: Japanese punctuation a line never starts with (it stays with the character before it).
_NO_START = set("、。，．・：；？！）」』】〕ー々ぁぃぅぇぉっゃゅょァィゥェォッャュョ")
#: Japanese opening brackets a line never ends with (they stay with what they open).
_NO_END = set("（「『【〔［〈《")


def _log_note(series: list[dict], refs: list[dict], ys: list[float], tr) -> str:
    """Why the y axis is logarithmic, with the gap it bridges as measured: how many times
    TR-4947's figures are the lab's (each series' median against each published figure)."""
    lab = [sorted(v)[len(v) // 2] for v in (_positive(s.get("y", [])) for s in series) if v]
    published = sorted({v for r in refs for v in _positive(r["y"])})
    ratios = sorted(max(a, b) / min(a, b) for a in lab for b in published)
    if not ratios:
        return tr._("Logarithmic scale: the values span a factor of {factor}.",
                    factor=round(max(ys) / min(ys)))
    low, high = max(1, round(ratios[0])), max(1, round(ratios[-1]))
    if low == high:
        return tr._("Logarithmic scale: TR-4947's figures and the lab's are {n} times apart.", n=low)
    return tr._("Logarithmic scale: TR-4947's figures and the lab's are {low} to {high} times "
                "apart.", low=low, high=high)


def _wrap(text: str, width_px: float, lang: str = "en") -> list[str]:
    """Lines of a label or note that fit ``width_px``: a break goes at a space, or between
    two Japanese characters (not before closing punctuation); Latin words, numbers and units
    are never cut. Widths are estimates for DejaVu Sans (0.56 em) and IPAex Gothic (1 em)."""
    em = FONT_PT * 4 / 3
    # A break only at an ordinary space: a no-break space (a French number's thousands, a
    # number and its unit) holds its neighbours together; a katakana word is one token.
    tokens = re.findall(r"[ \t\n]+|[\u30a0-\u30ff]+|[\u3000-\u309f\u3400-\u9fff\uff00-\uffef]"
                        r"|[^ \t\n\u3000-\u30ff\u3400-\u9fff\uff00-\uffef]+", text)
    latin = 0.6 if lang == "ja" else 0.56          # IPAex Gothic's Latin is a little wider
    width = lambda t: sum(em if _CJK.match(c) else em * latin for c in t)  # noqa: E731
    lines, line = [], ""
    for tok in tokens:
        if tok.isspace():
            if line:
                line += " "
            continue
        if line and width(line + tok) > width_px and tok[0] not in _NO_START \
                and line[-1] not in _NO_END:
            lines.append(line.rstrip())
            line = ""
        line += tok
    if line.strip():
        lines.append(line.rstrip())
    return lines or [""]


def _formatter(tr):
    """Tick labels as plain numbers in the edition's notation (no 10^n)."""
    from matplotlib.ticker import FuncFormatter

    def fmt(v, _pos):
        if v == 0:
            return tr.number(0)
        decimals = 0 if abs(v) >= 10 or float(v).is_integer() else (1 if abs(v) >= 1 else 2)
        return tr.number(round(v, decimals), decimals)
    return FuncFormatter(fmt)


def draw(p: dict[str, Any], out: Path, size: str, tr) -> Path:
    """One size of a planned chart, as SVG: the plot on top, then the legend, then the notes,
    laid out in pixels so nothing overlaps whatever the labels' lengths."""
    _, plt = _matplotlib()
    from matplotlib.lines import Line2D
    from matplotlib.ticker import LogLocator, MaxNLocator, NullFormatter
    wide = size == "wide"
    width = SIZES[size]
    em = FONT_PT * 4 / 3                       # text size in px
    line_h = em * 1.35
    entries = len(p["series"]) + len(p["refs"])
    ncols = 2 if wide and entries > 3 else 1
    col_px = (width - 16) / ncols - 44         # a legend label's room beside its handle
    axes_h = 290 if wide else 220

    def wrapped(label: str) -> str:
        return "\n".join(_wrap(label, int(col_px), p["lang"]))

    fig = plt.figure(figsize=(width / PX_PER_IN, 5), dpi=PX_PER_IN)
    ax = fig.add_axes((0.1, 0.3, 0.85, 0.6))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    handles, labels = [], []
    if p["type"] == "bar":
        cats = p["categories"]
        n = max(1, len(p["series"]))
        w = 0.8 / n
        for i, s in enumerate(p["series"]):
            pos = [cats.index(str(x)) + (i - (n - 1) / 2) * w for x in s["x"]]
            err = _err(s)
            bars = ax.bar(pos, s["y"], w, yerr=err, capsize=4 if err else 0,
                          color=colours[i % len(colours)], error_kw={"elinewidth": 1.2})
            handles.append(bars)
            labels.append(wrapped(s["name"]))
        ax.set_xticks(range(len(cats)), p["category_labels"])
    else:
        for i, s in enumerate(p["series"]):
            colour = colours[i % len(colours)]
            if p["y_log"] and not any(isinstance(y, (int, float)) and y > 0 for y in s["y"]):
                # Nothing of it can be drawn on a log axis (paused consumers): named only.
                handles.append(Line2D([], [], color=colour))
                labels.append(wrapped(p["all_zero"].replace("{name}", s["name"])))
                continue
            if "low" in s or "x_low" in s:
                h = ax.errorbar(s["x"], s["y"], yerr=_err(s), xerr=_err(s, "x_"), marker="o",
                                markersize=5, capsize=4, color=colour, linewidth=1.6)
            else:
                (h,) = ax.plot(s["x"], s["y"], marker="o" if len(s["x"]) < 30 else None,
                               markersize=4.5, color=colour, linewidth=1.6)
            handles.append(h)
            labels.append(wrapped(s["name"]))
    for j, r in enumerate(p["refs"]):
        (h,) = ax.plot(r["x"], r["y"], linestyle="--", linewidth=1.6, marker="s", markersize=4,
                       color=colours[(len(p["series"]) + j) % len(colours)], alpha=0.85)
        handles.append(h)
        labels.append(wrapped(r["label"]))
    if p["y_log"]:
        ax.set_yscale("log")
        lo, hi = ax.get_ylim()
        subs = (1.0, 2.0, 5.0) if hi / lo < 10 ** (4 if wide else 3) else (1.0,)
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=subs))
        ax.yaxis.set_minor_formatter(NullFormatter())
    else:
        ax.set_ylim(bottom=0)
        ax.yaxis.set_major_locator(MaxNLocator(nbins=6 if wide else 5))
    ax.yaxis.set_major_formatter(_formatter(tr))
    if p["type"] != "bar":
        if p["x_log"]:
            ax.set_xscale("log")
            ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
            ax.xaxis.set_minor_formatter(NullFormatter())
        else:
            ax.xaxis.set_major_locator(MaxNLocator(nbins=7 if wide else 4))
        ax.xaxis.set_major_formatter(_formatter(tr))
    ax.set_xlabel("\n".join(_wrap(p["x_label"], width - 90, p["lang"])))
    ax.set_ylabel("\n".join(_wrap(p["y_label"], axes_h - 10, p["lang"])))
    ax.grid(True, which="major", alpha=0.3)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)

    # Layout, in px from the top: plot, x axis, legend, notes.
    notes = [line for n in p["notes"] for line in _wrap(n, width - 16, p["lang"])]
    rows = [label.count("\n") + 1 for label in labels]
    if ncols > 1:
        half = -(-len(rows) // ncols)
        legend_rows = max(sum(rows[:half]), sum(rows[half:]))
    else:
        legend_rows = sum(rows)
    top = 10
    xaxis_h = (1.6 + 1.35 * ax.xaxis.label.get_text().count("\n") + 1.3) * em + 10
    legend_h = legend_rows * line_h + (10 if labels else 0)
    notes_h = len(notes) * line_h + (6 if notes else 0)
    height = top + axes_h + xaxis_h + legend_h + notes_h + 8
    fig.set_size_inches(width / PX_PER_IN, height / PX_PER_IN)
    renderer = fig.canvas.get_renderer()
    left = ax.yaxis.label.get_window_extent(renderer).width + max(
        (t.get_window_extent(renderer).width for t in ax.get_yticklabels() if t.get_text()),
        default=20) + 22
    right = 12
    ax.set_position((left / width, (height - top - axes_h) / height,
                     (width - left - right) / width, axes_h / height))
    if labels:
        fig.legend(handles, labels, loc="upper left", ncols=ncols, frameon=False,
                   bbox_to_anchor=(8 / width, (height - top - axes_h - xaxis_h) / height),
                   handlelength=2.2, columnspacing=1.0, borderaxespad=0, borderpad=0,
                   labelspacing=0.35)
    for k, line in enumerate(notes):
        fig.text(8 / width, (notes_h + 4 - (k + 1) * line_h) / height, line, fontsize=FONT_PT,
                 color="#4b5563", ha="left", va="baseline")
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, format="svg", metadata={"Date": None})
    plt.close(fig)
    _tidy(out, out.stem)
    return out


def svg(spec: dict[str, Any], out: Path, edition: str = "en", size: str = "wide",
        lab: bool = True) -> Path:
    """A chart spec straight to one SVG (plan, then draw) in an edition's words."""
    from .i18n import Translator
    tr = Translator(edition)
    return draw(plan(spec, tr, lab), out, size, tr)


def _err(s: dict, prefix: str = ""):
    """Asymmetric error bars from a series' min-max (None without them)."""
    lo, hi, v = s.get(prefix + "low"), s.get(prefix + "high"), s.get("x" if prefix else "y")
    if lo is None or hi is None:
        return None
    return [[max(0.0, a - b) for a, b in zip(v, lo)], [max(0.0, b - a) for a, b in zip(v, hi)]]


def _tidy(svg: Path, prefix: str) -> None:
    """Make the SVG fit any width and safe to sit beside others on a page:

    - width 100% of its natural width at most (the page's CSS scales it down, never up);
    - ids prefixed with the chart's name, so two charts on one page never share a clip path;
    - matplotlib's trailing <defs> moved ahead of the drawing: the PDF's SVG renderer
      (prawn-svg) resolves references in document order and warns for each it cannot."""
    text = svg.read_text()
    # A space's glyph is a path with no outline: nothing to draw, and prawn-svg warns on it.
    empty = set(re.findall(r'\n *<path id="([^"]+)"(?![^>]*\bd=)[^>]*/>', text))
    text = re.sub(r'\n *<path id="[^"]+"(?![^>]*\bd=)[^>]*/>', "", text)
    if empty:
        text = re.sub(r'\n *<use xlink:href="#(' + "|".join(map(re.escape, empty))
                      + r')"[^>]*/>', "", text)
    pid = re.sub(r"[^\w-]", "-", prefix)
    text = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{pid}-{m.group(1)}"', text)
    text = re.sub(r'(xlink:href|href)="#([^"]+)"', lambda m: f'{m.group(1)}="#{pid}-{m.group(2)}"',
                  text)
    text = re.sub(r"url\(#([^)]+)\)", lambda m: f"url(#{pid}-{m.group(1)})", text)
    m = re.search(r"\n <defs>\n  <clipPath.*?\n </defs>\n", text, re.S)
    if m:
        rest = text[:m.start()] + "\n" + text[m.end():]
        body = re.search(r"<svg\b[^>]*>\n", rest)
        text = rest[:body.end()] + m.group(0).lstrip("\n") + rest[body.end():]
    svg.write_text(text)
