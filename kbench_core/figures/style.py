"""The look of every kbench figure: palette (Okabe & Ito 2008), symbols, dashes, the plotly
template, model colours and styles."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import plotly.graph_objects as go
import plotly.io as pio

# Okabe & Ito (2008), colourblind-safe; black last.
PALETTE: tuple[str, ...] = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9",
                            "#F0E442", "#000000")
# With more series than colours, each further round of the palette gets its own marker
# symbol, line dash and bar pattern, so no two series of one figure look alike.
SYMBOLS: tuple[str, ...] = ("circle", "square", "diamond", "triangle-up", "x", "cross",
                            "triangle-down", "star", "hexagon", "pentagon")
DASHES: tuple[str, ...] = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot",
                           "5px,2px,1px,2px", "1px,3px", "8px,2px", "3px,1px,3px,5px")
PATTERNS: tuple[str, ...] = ("", "/", "x", ".", "\\", "-", "|", "+", "/", "x")
FONT_SIZE = 13
TITLE_SIZE = 16
# The width figures are laid out for unless told: the app's narrowest chart column (two
# charts side by side at a 1400 px window); they hold up to the full main column (940 px).
APP_WIDTH = 460
CHAR_EM = 0.66  # mean advance of a character in em (DejaVu Sans, Chromium's fallback font)
LEGEND_SIDE_MAX = 0.3  # a side legend may take at most this share of the width

TEMPLATE = go.layout.Template(
    # Markers and data labels at the edge of the axes are drawn whole, not cut in half by the
    # plot area (points beyond the range are still hidden: kbench draws those at the edge,
    # see edge_clamp).
    data=dict(scatter=[go.Scatter(cliponaxis=False)], bar=[go.Bar(cliponaxis=False)]),
    layout=go.Layout(
        font=dict(family="Source Sans Pro, Helvetica, Arial, sans-serif", size=FONT_SIZE,
                  color="#222"),
        title=dict(font=dict(size=TITLE_SIZE)),
        paper_bgcolor="white", plot_bgcolor="white", colorway=list(PALETTE),
        # automargin: long tick labels and axis titles push the margins instead of clipping.
        xaxis=dict(showline=True, linecolor="#444", ticks="outside", gridcolor="#eee",
                   zeroline=False, automargin=True),
        yaxis=dict(showline=True, linecolor="#444", ticks="outside", gridcolor="#eee",
                   zeroline=False, automargin=True),
        legend=dict(bgcolor="rgba(255,255,255,0.8)"),
        margin=dict(l=60, r=20, t=50, b=60),
        hoverlabel=dict(bgcolor="white"),
    )
)
pio.templates["kbench"] = TEMPLATE


def model_colors(models: Sequence[str]) -> dict[str, str]:
    """One colour per model, stable for a given sorted model list."""
    return {m: PALETTE[i % len(PALETTE)] for i, m in enumerate(sorted(map(str, models)))}


@dataclass(frozen=True)
class Style:
    """How one series is told apart: colour, marker symbol, line dash and bar pattern."""

    color: str
    symbol: str = "circle"
    dash: str = "solid"
    pattern: str = ""


def distinct_styles(names: Sequence[str],
                    colors: Mapping[str, str] | None = None) -> dict[str, Style]:
    """A style per name (in the given order) such that no two look alike.

    Colours come from ``colors`` (the app's model colours) or :data:`PALETTE` in turn; the
    *k*-th name sharing a colour gets the *k*-th symbol, dash and pattern, so twelve studies on
    eight colours are twelve different-looking series (colour + shape)."""
    names = [str(n) for n in names]
    used: dict[str, int] = {}
    out: dict[str, Style] = {}
    for i, name in enumerate(names):
        color = (colors or {}).get(name) or PALETTE[i % len(PALETTE)]
        k = used.get(color.lower(), 0)
        used[color.lower()] = k + 1
        out[name] = Style(color, SYMBOLS[k % len(SYMBOLS)], DASHES[k % len(DASHES)],
                          PATTERNS[k % len(PATTERNS)])
    return out


def rgba(hex_color: str, alpha: float) -> str:
    """``#RRGGBB`` as a CSS ``rgba()`` colour with the given opacity (for bands and fills)."""
    r, g, b = (int(hex_color[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


PAGE_PX = 864  # a page's text block, 9 in at 96 px per inch: the tallest figure on paper
EXPORT_SLACK = 140  # px a figure may grow when laid out for one column (title lines, a flat
