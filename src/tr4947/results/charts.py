"""Charts of recorded numbers, drawn with matplotlib as SVG.

A chart spec is data, recorded by the notebook:
  {"type": "line"|"bar", "x_label": str, "y_label": str,
   "series": [{"name": str, "x": [...], "y": [...],
               "low": [...], "high": [...]}],            # optional: min-max of repeated runs
                                                         # (y is then their median)
   "reference": [{"name": str, "x": [...], "y": [...]}],  # the TR's published figures, dashed
   "y_scale": "log"                                       # optional: lab and TR figures
  }                                                       # orders of magnitude apart
SVG output is made deterministic (fixed hash salt, no date) so an unchanged run does not
produce a changed file.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

matplotlib.rcParams["svg.hashsalt"] = "tr4947"
matplotlib.rcParams["svg.fonttype"] = "none"      # text stays text: searchable, small


def draw(spec: dict[str, Any], title: str, out: Path, lab: bool = True) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(7.5, 3.8), dpi=100)
    kind = spec.get("type", "line")
    series = spec.get("series", [])
    if kind == "bar":
        names = [s["name"] for s in series]
        cats = list(dict.fromkeys(x for s in series for x in s["x"]))
        width = 0.8 / max(1, len(series))
        for i, s in enumerate(series):
            pos = [cats.index(x) + i * width for x in s["x"]]
            ax.bar(pos, s["y"], width, label=s["name"], yerr=_err(s),
                   capsize=4 if "low" in s else 0)
        ax.set_xticks([j + width * (len(names) - 1) / 2 for j in range(len(cats))], cats)
    else:
        log = spec.get("y_scale") == "log"
        for s in series:
            if log and not any(y > 0 for y in s["y"]):
                # Nothing of it can be drawn on a log axis (an all-zero series, e.g. paused
                # consumers): name it in the legend instead of emitting an empty SVG path.
                ax.plot([], [], label=f"{s['name']}: all 0")
                continue
            if "low" in s:
                ax.errorbar(s["x"], s["y"], yerr=_err(s), marker="o", markersize=4,
                            capsize=4, label=s["name"])
            else:
                ax.plot(s["x"], s["y"], marker="o" if len(s["x"]) < 30 else None,
                        markersize=4, label=s["name"])
    for ref in spec.get("reference", []):
        ax.plot(ref["x"], ref["y"], linestyle="--", marker="s", markersize=4, alpha=0.7,
                label=ref["name"])
    if spec.get("y_scale") == "log":
        ax.set_yscale("log")
    ax.set_xlabel(spec.get("x_label", ""))
    ax.set_ylabel(spec.get("y_label", ""))
    ax.set_title(("Lab: " if lab else "") + title, fontsize=11)
    ax.grid(True, alpha=0.3)
    if series or spec.get("reference"):
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, format="svg", metadata={"Date": None})
    plt.close(fig)
    _defs_first(out)
    return out


def _err(s: dict):
    """Asymmetric error bars from a series' min-max (None without them)."""
    if "low" not in s:
        return None
    return [[y - lo for y, lo in zip(s["y"], s["low"])],
            [hi - y for y, hi in zip(s["y"], s["high"])]]


def _defs_first(svg: Path) -> None:
    """Move matplotlib's trailing <defs> (the clip paths) ahead of the drawing.

    Browsers resolve url(#id) anywhere in the document, but the PDF's SVG renderer
    (prawn-svg) resolves references in document order and warns for each one it cannot."""
    text = svg.read_text()
    m = re.search(r"\n <defs>\n  <clipPath.*?\n </defs>\n", text, re.S)
    if not m:
        return
    rest = text[:m.start()] + "\n" + text[m.end():]
    body = re.search(r"<svg\b[^>]*>\n", rest)
    svg.write_text(rest[:body.end()] + m.group(0).lstrip("\n") + rest[body.end():])
