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


# Layout properties that hold data, not settings: an update replaces them whole.
_DATA_PROPS = frozenset({"meta", "uirevision", "editrevision", "datarevision",
                         "selectionrevision"})


def _plain_keys(update: Mapping) -> bool:
    """Whether ``update`` (outside data properties) names no path with plotly's magic
    underscores (``legend_title_text``) and holds no plotly objects."""
    for key, value in update.items():
        if "_" in str(key) or not isinstance(value, (Mapping, str, int, float, list, tuple,
                                                     type(None))):
            return False
        if key not in _DATA_PROPS and isinstance(value, Mapping) and not _plain_keys(value):
            return False
    return True


def _merged(old: Mapping, update: Mapping) -> dict:
    out = dict(old)
    for key, value in update.items():
        current = out.get(key)
        if (key not in _DATA_PROPS and isinstance(value, Mapping)
                and isinstance(current, Mapping)):
            out[key] = _merged(current, value)
        else:
            out[key] = value
    return out


def merge_layout(layout: Mapping, update: Mapping, *,
                 replace: Mapping | None = None) -> dict:
    """``layout`` (plain dicts) with ``update`` merged as :func:`relayout` merges it (nested
    settings merge; data properties and lists are replaced) and ``replace`` set whole: for a
    figure gathered as one dict and handed to plotly once. Only for updates :func:`relayout`
    would merge itself (no magic-underscore paths, no list merged into a non-empty one)."""
    return {**_merged(layout, update), **(replace or {})}


def relayout(fig: go.Figure, update: Mapping | None = None, *,
             replace: Mapping | None = None, **kwargs: object) -> go.Figure:
    """``fig.update_layout(update, **kwargs)``, made by assigning the merged layout at once.

    Plotly's ``update_layout`` walks every key through its change-dispatch machinery: 35 ms
    for a figure's whole layout, against 1 ms to validate the same layout assigned whole, and
    most of a bias-page figure's build time. The merge follows ``update_layout``: nested
    settings merge, anything else (data properties such as ``meta``, lists) is replaced. An
    update it cannot merge the same way (magic-underscore paths, a list of annotations or
    shapes merged into a non-empty one, plotly objects) goes to ``update_layout``.

    ``replace``: layout properties set whole rather than merged, e.g. a list of annotations
    that replaces the figure's (``update_layout`` would merge it into them elementwise)."""
    update = {**(update or {}), **kwargs}
    replace = dict(replace or {})
    old = fig.layout.to_plotly_json()
    merged = None
    if _plain_keys(update) and not any(
            isinstance(value, (list, tuple)) and isinstance(old.get(key), (list, tuple))
            and old.get(key) for key, value in update.items() if key not in _DATA_PROPS):
        merged = merge_layout(old, update, replace=replace)
    if merged is None or not assign_layout(fig, old, merged):
        fig.update_layout(update, **dict.fromkeys(replace))  # unset, then set whole
        for key, value in replace.items():
            fig.layout[key] = value
    return fig


def _hollow(old: Mapping, merged: Mapping, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Paths of settings objects ``old`` has that ``merged`` unsets or leaves with nothing
    set (plotly's update keeps them, empty)."""
    out: list[tuple[str, ...]] = []
    for key, value in merged.items():
        prior = old.get(key)
        if key in _DATA_PROPS or not isinstance(prior, Mapping):
            continue
        if value is None or (isinstance(value, Mapping)  # unset whole, or all it holds
                             and all(v is None for v in value.values())):
            out.append((*path, key))
        elif isinstance(value, Mapping):
            out += _hollow(prior, value, (*path, key))
    return out


def assign_layout(fig: go.Figure, old: Mapping, merged: Mapping) -> bool:
    """Assign ``merged`` (``old``, the figure's layout as JSON, updated) to ``fig`` as
    ``update_layout`` would have left it: a title whose settings were all unset stays an empty
    title (``title: {}``), which a layout assigned whole would drop. Returns False, assigning
    nothing, where another settings object would be left empty (the caller then updates)."""
    hollow = _hollow(old, merged)
    if any(path[-1] != "title" for path in hollow):
        return False
    fig.layout = merged
    for path in hollow:
        title = fig.layout
        for key in path:
            title = title[key]
        title.text = "-"  # set and unset: plotly keeps the emptied object, as update does
        title.text = None
    return True
