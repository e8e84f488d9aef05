"""The one look of every kbench figure: template, palette, model colours, small helpers.

White background, a colourblind-safe palette (Okabe & Ito 2008), axis titles with units, hover
text naming the item. Every family module builds on :func:`apply_layout` so that the app and the
``kbench`` command line draw identical figures.

Figures hold at every width: titles wrap and push the top margin (plotly's title
``automargin``), and :func:`fit_to_width` re-wraps titles, moves a side legend below the plot
and re-grids small multiples for a given export width (``kbench figures --size one-column``).
Sizes are estimated from the text (:func:`text_width`); the browser layout check in
``tests/browser/`` measures the result.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import plotly.graph_objects as go
import plotly.io as pio

__all__ = ["APP_WIDTH", "DASHES", "PALETTE", "PATTERNS", "SYMBOLS", "TEMPLATE", "Style",
           "apply_layout", "distinct_styles", "edge_clamp", "fit_to_width", "legend_below",
           "model_colors", "rgba", "text_width", "wrap"]

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


def text_width(text: str, size: float = FONT_SIZE) -> float:
    """Estimated width in px of one line of ``text`` at ``size`` px (HTML tags ignored).

    An estimate (mean advance :data:`CHAR_EM` em), used to size margins and decide layouts;
    the browser check measures the real glyphs."""
    import re

    plain = re.sub(r"<[^>]+>", "", text)
    return CHAR_EM * size * max((len(line) for line in plain.split("\n")), default=0)


def wrap(text: str, width_px: float, size: float = TITLE_SIZE) -> str:
    """``text`` with ``<br>`` line breaks so each line fits ``width_px`` (existing breaks
    kept; a word longer than a line stays whole; ``n = 36`` is never broken around its
    ``=``)."""
    chars = max(8, int(width_px / (CHAR_EM * size)))
    lines = []
    for part in text.split("<br>"):
        line = ""
        for word in part.replace(" = ", "\u2060=\u2060").split(" "):
            word = word.replace("\u2060", " ")
            if line and len(line) + 1 + len(word) > chars:
                lines.append(line)
                line = word
            else:
                line = f"{line} {word}" if line else word
        lines.append(line)
    return "<br>".join(lines)


def _title(text: str, width: int, subtitle: str | None = None) -> dict:
    shown = wrap(text, width - 24)
    if subtitle:  # a second, smaller line (plotly's own subtitle does not push the margin)
        lines = wrap(subtitle, width - 24, FONT_SIZE - 1).split("<br>")
        shown += "".join(f"<br><span style='font-size:{FONT_SIZE - 1}px;color:#555'>{line}"
                         "</span>" for line in lines)
    return dict(text=shown, x=0, xanchor="left", xref="container", y=1, yanchor="bottom",
                yref="paper", pad=dict(l=10, b=14), automargin=True)


def _title_lines(fig: go.Figure) -> int:
    text = fig.layout.title.text or ""
    return text.count("<br>") + 1 if text else 0


TITLE_LINE_PX = 20


def apply_layout(fig: go.Figure, title: str, *, subtitle: str | None = None,
                 **kwargs: object) -> go.Figure:
    """The kbench template and a left-aligned title, wrapped to :data:`APP_WIDTH`, that pushes
    the top margin rather than overlap the plot; ``kwargs`` go to ``update_layout``. The raw
    title is kept in ``layout.meta`` for :func:`fit_to_width`. Legend entries show each model
    by its display name (:func:`display_labels`, as tick labels and panel titles do); the hover
    keeps the full id."""
    named = [t for t in fig.data if isinstance(t.name, str) and t.name]
    if named:
        shown = dict(zip((t.name for t in named), display_labels([t.name for t in named]),
                         strict=True))
        for trace in named:
            trace.name = shown[trace.name]
    meta = dict(fig.layout.meta) if isinstance(fig.layout.meta, Mapping) else {}
    meta.update(kbench_title=title, kbench_subtitle=subtitle)
    fig.update_layout(template="kbench", title=_title(title, APP_WIDTH, subtitle), meta=meta,
                      **kwargs)
    if fig.layout.height:  # heights are set for a one-line title: room for the others
        fig.update_layout(height=fig.layout.height + TITLE_LINE_PX * (_title_lines(fig) - 1))
    return fig


def legend_below(**extra: object) -> dict:
    """A horizontal legend under the figure (anchored to the container's bottom, so it pushes
    the bottom margin instead of covering the x-axis title)."""
    return dict(orientation="h", x=0, xanchor="left", xref="container", y=0, yanchor="bottom",
                yref="container", traceorder="normal", **extra)


def legend_rows(labels: Sequence[str], width: int, size: float = FONT_SIZE) -> int:
    """Rows a horizontal legend of ``labels`` needs at ``width`` px."""
    rows, used = 1, 0.0
    for label in labels:
        lines = label.count("<br>") + 1
        w = max(text_width(part, size) for part in label.split("<br>")) + 50
        if used and used + w > width - 20:
            rows, used = rows + 1, 0.0
        used += w
        rows += lines - 1
    return rows


def with_legend_below(fig: go.Figure, labels: Sequence[str] | None = None,
                      height: int | None = None) -> int:
    """Put the legend under the figure and grow the figure by its rows (at the app's width;
    :func:`fit_to_width` regrows it for an export width); returns the new height."""
    labels = list(labels) if labels is not None else _legend_labels(fig)
    height = int(height or fig.layout.height or 520)
    rows = legend_rows(labels, APP_WIDTH)
    meta = dict(fig.layout.meta) if isinstance(fig.layout.meta, Mapping) else {}
    meta["kbench_legend_rows"] = rows
    fig.update_layout(legend=legend_below(), meta=meta, height=height + 22 * rows)
    return height + 22 * rows


def _legend_labels(fig: go.Figure) -> list[str]:
    seen, labels = set(), []
    for trace in fig.data:
        if trace.showlegend is False or not trace.name:
            continue
        group = trace.legendgroup or id(trace)
        if group in seen:
            continue
        seen.add(group)
        labels.append(str(trace.name))
    return labels


def fit_to_width(fig: go.Figure, width: int) -> go.Figure:
    """A copy of ``fig`` laid out for ``width`` px: the title re-wrapped; a side legend wider
    than :data:`LEGEND_SIDE_MAX` of the width moved below (the figure grows by its rows);
    small multiples re-gridded to the columns that fit (``meta["kbench_panels"]``)."""
    fig = go.Figure(fig)
    meta = fig.layout.meta if isinstance(fig.layout.meta, Mapping) else {}
    height = int(fig.layout.height or 520)
    grown = 0  # px the title grew by (re-wrapped for a narrower width)
    if meta.get("kbench_title") is not None:
        before = _title_lines(fig)
        fig.update_layout(title=_title(str(meta["kbench_title"]), width,
                                       meta.get("kbench_subtitle")))
        grown = TITLE_LINE_PX * (_title_lines(fig) - before)
        height += grown
    _recut_ticks(fig, width)
    if meta.get("kbench_heatmap"):
        if width < NARROW:
            height += _flat_colorbars(fig, width)
            meta = dict(meta)
            meta["kbench_heatmap"] = {**meta["kbench_heatmap"], "colorbar_px": 0}
        _heatmap_text(fig, width, meta["kbench_heatmap"])
    regridded = bool(meta.get("kbench_panels"))
    if regridded:
        panels = dict(meta["kbench_panels"])
        panels["header"] = int(panels["header"]) + max(grown, 0)
        height = _regrid(fig, width, panels)  # the grid's height: the legend comes on top
    for trace in fig.data:  # a legend entry wider than the figure wraps
        if trace.name and text_width(str(trace.name)) > width - 80:
            trace.name = wrap(str(trace.name), width - 80, FONT_SIZE)
    labels = _legend_labels(fig)
    legend = fig.layout.legend
    side = legend.orientation in (None, "v") and (legend.x is None or legend.x >= 1)
    if labels and fig.layout.showlegend is not False and side:
        needed = max(text_width(label) for label in labels) + 60
        if needed > LEGEND_SIDE_MAX * width:
            rows = legend_rows(labels, width)
            fig.update_layout(legend=legend_below(title_side="top left"))
            height += 22 * rows
    elif labels and legend.orientation == "h" and meta.get("kbench_legend_rows") is not None:
        rows = legend_rows(labels, width)
        height += (22 * rows if regridded
                   else 20 * max(0, rows - int(meta["kbench_legend_rows"])))
    fig.update_layout(height=height)
    return fig


def _heatmap_text(fig: go.Figure, width: int, spec: Mapping) -> None:
    """Numbers in heatmap cells only while a cell is wide enough for them."""
    plot = width - min(0.4 * width, spec["label_px"]) - spec.get("colorbar_px", 90)
    cell = plot / max(int(spec["columns"]), 1)
    for trace in fig.data:
        if trace.type == "heatmap" and trace.text is not None:
            if cell < spec["text_px"] and spec.get("short") is not None:
                # a shorter text (the value without its interval) while that fits
                trace.text = spec["short"]
                trace.texttemplate = "%{text}" if cell >= spec["short_px"] else ""
            else:
                trace.texttemplate = "%{text}" if cell >= spec["text_px"] else ""


def panel_grid(n: int, columns: int, *, gap_x: float = 0.06, gap_y: float = 0.12,
               ) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    """(x domain, y domain) of panel ``i`` of ``n`` laid out ``columns`` to a row, top first."""
    columns = max(1, min(columns, n))
    rows = math.ceil(n / columns)
    width = (1 - gap_x * (columns - 1)) / columns
    height = (1 - gap_y * (rows - 1)) / rows if rows > 1 else 1.0
    out = []
    for i in range(n):
        r, c = divmod(i, columns)
        x0 = c * (width + gap_x)
        y1 = 1 - r * (height + gap_y)
        out.append(((x0, min(1.0, x0 + width)), (max(0.0, y1 - height), y1)))
    return out


def _axis_name(kind: str, i: int) -> str:
    return f"{kind}axis" if i == 1 else f"{kind}axis{i}"


def set_panels(fig: go.Figure, n: int, columns: int, *, panel_height: int, header: int,
               titles: Sequence[str] | None = None) -> int:
    """Lay out ``n`` panels (axes ``x``/``y`` … ``x{n}``/``y{n}``) ``columns`` to a row; the
    panel titles become annotations over their panels; returns (and sets) the height. Inner
    panels show their tick labels only where no neighbour shares the axis."""
    columns = max(1, min(columns, n))
    rows = math.ceil(n / columns)
    height = header + rows * panel_height
    if titles:  # a model's panel is titled with its display name, as its legend entry is
        heads = display_labels([t.split("<br>")[0] for t in titles])
        titles = ["<br>".join([head, *t.split("<br>")[1:]])
                  for head, t in zip(heads, titles, strict=True)]
    # between rows: the lower panels' titles and the upper panels' tick labels
    lines = max((t.count("<br>") + 1 for t in titles), default=0) if titles else 0
    # (the plot area is the height less the header and about 60 px of x-axis title below)
    gap_y = (min(0.4, (52 + 16 * lines) / max(rows * panel_height - 60, 1)) if rows > 1
             else 0.0)
    grid = panel_grid(n, columns, gap_x=0.08 if columns > 1 else 0.0, gap_y=gap_y)
    keep = [a for a in fig.layout.annotations if not (a.name or "").startswith("panel-")]
    annotations = list(keep)
    for i, ((x0, x1), (y0, y1)) in enumerate(grid, start=1):
        c = (i - 1) % columns
        fig.layout[_axis_name("x", i)].update(domain=[x0, x1])
        fig.layout[_axis_name("y", i)].update(domain=[y0, y1])
        last_row = i + columns > n
        fig.layout[_axis_name("x", i)].update(showticklabels=True)
        title_x = fig.layout[_axis_name("x", i)].title
        if title_x is not None and fig.layout.meta and "kbench_x_title" in fig.layout.meta:
            fig.layout[_axis_name("x", i)].title.text = (
                fig.layout.meta["kbench_x_title"] if last_row else None)
        if fig.layout.meta and fig.layout.meta.get("kbench_shared_y"):
            fig.layout[_axis_name("y", i)].update(showticklabels=c == 0)
        if fig.layout.meta and "kbench_y_title" in fig.layout.meta:
            fig.layout[_axis_name("y", i)].title.text = (
                fig.layout.meta["kbench_y_title"] if c == 0 else None)
        if titles:
            annotations.append(go.layout.Annotation(
                text=titles[i - 1], name=f"panel-{i}", x=(x0 + x1) / 2, y=y1, xref="paper",
                yref="paper", xanchor="center", yanchor="bottom", showarrow=False,
                font=dict(size=FONT_SIZE - 1)))
    fig.layout.annotations = annotations
    if titles:  # the figure's title clears the first row's panel titles
        lines = max(t.count("<br>") + 1 for t in titles)
        fig.layout.title.pad.b = 14 + 16 * lines
    meta = dict(fig.layout.meta) if isinstance(fig.layout.meta, Mapping) else {}
    before = meta.get("kbench_panels") if isinstance(meta.get("kbench_panels"), Mapping) else {}
    meta["kbench_panels"] = dict(n=n, columns=columns, panel_height=panel_height, header=header,
                                 titles=list(titles) if titles else None,
                                 square=bool(before.get("square")),
                                 **{k: before[k] for k in ("fit_page", "min_panel_px")
                                    if k in before},
                                 min_width=meta.get("kbench_panels", {}).get("min_width", 240)
                                 if isinstance(meta.get("kbench_panels"), Mapping) else 240)
    # the narrowest width this grid holds at (the app shows it in a column at least as wide)
    meta["kbench_min_width"] = columns * int(meta["kbench_panels"]["min_width"]) + 80
    fig.update_layout(meta=meta, height=height)
    return height


def _regrid(fig: go.Figure, width: int, panels: Mapping) -> int:
    """Re-lay small multiples for ``width``: as many columns as panels of ``min_width`` fit;
    panel titles are cut (names: :func:`shorten`) and wrapped (the rest) to their panel rather
    than dropping to fewer columns, while a name keeps at least 12 characters. A grid taller
    than a page (:data:`PAGE_PX` less :data:`EXPORT_SLACK`) takes more, narrower columns while
    a panel keeps 100 px, and a square panel (``square``) is never much taller than wide."""
    n = int(panels["n"])
    header = int(panels["header"])
    columns = max(1, min(int(panels["columns"]),
                         int((width - 80) // int(panels.get("min_width", 240)))))
    original = panels.get("titles")
    size = FONT_SIZE - 1

    def budget(cols: int) -> int:
        return int(((width - 80) / cols - 16) / (CHAR_EM * size))

    def titles_for(cols: int) -> list[str] | None:
        if not original:
            return None
        room = (width - 80) / cols - 16
        names = shorten([t.split("<br>")[0] for t in original], budget(cols))
        return ["<br>".join([name, *(wrap(rest, room, size) for rest in t.split("<br>")[1:])])
                for name, t in zip(names, original, strict=True)]

    def panel_px(cols: int) -> int:
        if not panels.get("square"):  # rows of categories: their height is their content
            px = int(panels["panel_height"])
            if panels.get("fit_page"):  # curves, not categories: shorter panels fit a page
                rows = math.ceil(n / cols)
                px = max(int(panels.get("min_panel_px", 100)),
                         min(px, (PAGE_PX - EXPORT_SLACK - header) // rows))
            return px
        titles = titles_for(cols) or []
        lines = max((t.count("<br>") + 1 for t in titles), default=0)
        # the plot about as tall as wide, plus its title lines and the tick labels above them
        return min(int(panels["panel_height"]) + 16 * lines,
                   int((width - 80) / cols + 30 + 16 * lines))

    def tall(cols: int) -> int:
        return header + math.ceil(n / cols) * panel_px(cols)

    if original:
        while budget(columns) < 12 and columns > 1:
            columns -= 1
    while (tall(columns) > PAGE_PX - EXPORT_SLACK and columns < n
           and (width - 80) / (columns + 1) >= 100
           and (not original or budget(columns + 1) >= 8)):
        columns += 1
    return set_panels(fig, n, columns, panel_height=panel_px(columns), header=header,
                      titles=titles_for(columns))


def edge_clamp(values, low: float, high: float):
    """``values`` clipped to ``[low, high]`` and the mask of those that were outside: drawn at
    the edge with a distinct marker, and counted in a note (see :func:`clamp_note`)."""
    import numpy as np

    array = np.asarray(values, dtype=float)
    outside = np.isfinite(array) & ((array < low) | (array > high))
    return np.clip(array, low, high), outside


def clamp_note(count: int, low: float, high: float, what: str = "values") -> str:
    """The note under a figure with points drawn at its edge."""
    if not count:
        return ""
    return (f"{count} {what if count != 1 else what.rstrip('s')} outside [{low:g}, {high:g}] "
            "drawn at the edge (open triangles)")


# Word separators of model and configuration names; a dot before a digit is part of a
# number (``temp0.1``, ``4.5``), not a separator.
SEPARATORS = r"((?:[_\-/ :]|\.(?!\d))+)"
COMPOSITE = " · "  # joins the parts of a composite label (model · judge, category · bias)


def _word_counts(labels: Sequence[str]) -> dict[str, int]:
    """In how many labels each word occurs: a word most labels share tells them apart least."""
    import re

    counts: dict[str, int] = {}
    for label in labels:
        for word in set(re.split(SEPARATORS, label)[::2]):
            counts[word.lower()] = counts.get(word.lower(), 0) + 1
    return counts


def _middle_cut(text: str, budget: int) -> str:
    """``head…tail`` in ``budget`` characters: a readable head (at least 45% of the budget,
    never fewer than 4 characters) and the tail, where numbered names differ."""
    if len(text) <= budget:
        return text
    if budget < 8:  # too short for both ends: the head
        return text[:budget - 1] + "…"
    head = max(4, int(0.45 * (budget - 1)))
    return text[:head] + "…" + text[len(text) - (budget - 1 - head):]


def _abbreviate(label: str, budget: int, counts: Mapping[str, int]) -> str:
    """``label`` in at most ``budget`` characters: first the words most labels share are cut
    to three letters, then to one (``synthetic-detector-07`` → ``syn-det-07`` → ``s-d-07``),
    most shared first, so the words that tell the labels apart stay whole; what is still too
    long is cut in the middle (:func:`_middle_cut`)."""
    import re

    if len(label) <= budget:
        return label
    parts = re.split(SEPARATORS, label)
    # the label's rarest word (its own name among the others) is never abbreviated
    rarest = min(counts.get(w.lower(), 0) for w in parts[::2])
    shared = sorted((i for i in range(0, len(parts), 2)
                     if len(parts[i]) > 3 and counts.get(parts[i].lower(), 0) >= 2
                     and counts.get(parts[i].lower(), 0) > rarest),
                    key=lambda i: (-counts[parts[i].lower()], -len(parts[i]), i))
    for keep in (3, 1):
        for i in shared:
            if len("".join(parts)) <= budget:
                return "".join(parts)
            # the first word (provider or family: "claude", "mistral") keeps three letters,
            # so a cut name still says whose model it is ("cla-hai-4-5", never "c-hai-4-5")
            parts[i] = parts[i][:max(keep, 3 if i == 0 else keep)]
    # then the label's own words but its last word, from the left (the vendor before the
    # model), so its tail (a number, a version) stays whole
    own = [i for i in range(0, len(parts) - 1, 2) if len(parts[i]) > 3
           and counts.get(parts[i].lower(), 0) == rarest]
    for keep in (3, 1):
        for i in own:
            if len("".join(parts)) <= budget:
                return "".join(parts)
            parts[i] = parts[i][:max(keep, 3 if i == 0 else keep)]
    return _middle_cut("".join(parts), budget)


def _shorten_composite(labels: list[str], max_chars: int) -> list[str]:
    """Composite labels (``model · judge``): the part with fewer distinct values (the less
    informative one) is cut first, down to a few characters, then the other part."""
    split = [label.split(COMPOSITE) for label in labels]
    width = max(len(parts) for parts in split)
    split = [parts + [""] * (width - len(parts)) for parts in split]
    distinct = [len({parts[k] for parts in split}) for k in range(width)]
    # cut order: least informative position first
    order = sorted(range(width), key=lambda k: (distinct[k], k))
    counts = [_word_counts([parts[k] for parts in split]) for k in range(width)]
    out = []
    for parts in split:
        parts = list(parts)
        for k in order:
            over = len(COMPOSITE.join(p for p in parts if p)) - max_chars
            if over <= 0:
                break
            keep = max(4, len(parts[k]) - over) if k != order[-1] else \
                len(parts[k]) - over
            parts[k] = _abbreviate(parts[k], max(4, keep), counts[k])
        out.append(COMPOSITE.join(p for p in parts if p))
    return out


def shorten(labels: Sequence[str], max_chars: int) -> list[str]:
    """Labels shortened to ``max_chars`` so that what tells them apart stays readable: words
    most labels share are abbreviated first (:func:`_abbreviate`), a composite label
    (``model · judge``) gives up its less informative part first, and what is still too long
    keeps a readable head and its tail (``head…tail``). Where two would read the same, the
    budget grows until they differ (else the full names); the full names stay in the hover.
    Hand-written: plotly has no label abbreviation."""
    full = [str(label) for label in labels]
    labels = display_labels(full)
    max_chars = max(6, max_chars)
    composite = any(COMPOSITE in label for label in labels)

    def attempt(budget: int) -> list[str]:
        if composite:
            return _shorten_composite(labels, budget)
        counts = _word_counts(labels)
        return [_abbreviate(label, budget, counts) for label in labels]

    out = attempt(max_chars)
    clashes: dict[str, list[int]] = {}
    for i, text in enumerate(out):
        clashes.setdefault(text, []).append(i)
    for group in (g for g in clashes.values() if len(g) > 1):
        names = [labels[i] for i in group]
        if len(set(names)) < len(names):
            continue  # equal names stay equal
        budget = max_chars
        while True:
            budget += 2
            trial = attempt(budget)
            texts = [trial[i] for i in group]
            if len(set(texts)) == len(texts) or budget > max(map(len, names)):
                if len(set(texts)) < len(texts):
                    texts = names
                for i, text in zip(group, texts, strict=True):
                    out[i] = text
                break
    if len(set(out)) < len(set(labels)):  # a grown label met another one: names in full
        out = labels
    return out


MIN_LABEL_CHARS = 16  # a tick label is never cut below this: "claude-haiku-4-5" stays whole


def display_labels(labels: Sequence[str]) -> list[str]:
    """``labels`` with every model id in its display name
    (:func:`kbench_core.text.display_names`: release dates dropped, a repeated provider said
    once), each part of a composite label (``model · judge``) on its own; the labels
    unchanged when two would then read the same."""
    from kbench_core.text import display_names

    labels = [str(label) for label in labels]
    split = [label.split(COMPOSITE) for label in labels]
    width = max((len(parts) for parts in split), default=0)
    names = [display_names(parts[k] for parts in split if len(parts) > k)
             for k in range(width)]
    out = [COMPOSITE.join(names[k][part] for k, part in enumerate(parts)) for parts in split]
    return out if len(set(out)) == len(set(labels)) else labels


def category_ticks(fig: go.Figure, axis: str, labels: Sequence[str], *, share: float = 0.5,
                   width: int = APP_WIDTH, size: float = FONT_SIZE - 1,
                   row_px: float | None = None) -> None:
    """Label every category of ``axis`` (``"yaxis"``, ``"xaxis2"``), cut to ``share`` (half) of the
    figure ``width``; :func:`fit_to_width` recuts them for an export width. ``row_px``: the
    height of one row (y categories), for :func:`row_pages`."""
    labels = [str(label) for label in labels]
    budget = max(MIN_LABEL_CHARS, int(share * width / (CHAR_EM * size)))
    fig.layout[axis].update(tickmode="array", tickvals=labels, ticktext=shorten(labels, budget),
                            tickfont=dict(size=size))
    meta = dict(fig.layout.meta) if isinstance(fig.layout.meta, Mapping) else {}
    ticks = dict(meta.get("kbench_ticks") or {})
    ticks[axis] = dict(labels=labels, share=share, size=size)
    meta["kbench_ticks"] = ticks
    if row_px is not None and axis == "yaxis":
        meta["kbench_row_px"] = row_px
    fig.update_layout(meta=meta)


NARROW = 500  # px: below this width, tick labels get a smaller font and colour bars lie flat


def _recut_ticks(fig: go.Figure, width: int) -> None:
    meta = fig.layout.meta if isinstance(fig.layout.meta, Mapping) else {}
    for axis, spec in (meta.get("kbench_ticks") or {}).items():
        size = spec["size"] - (1 if width < NARROW else 0)
        share = min(spec["share"], 0.4) if width < NARROW else spec["share"]
        if spec.get("cells"):  # heatmap rows: what the cells (28 px and up) leave over
            other = 60 if width < NARROW else 150  # margins (and a standing colour bar)
            share = min(0.6, max(share, 1 - (28 * spec["cells"] + other) / width))
        budget = max(MIN_LABEL_CHARS, int(share * width / (CHAR_EM * size)))
        fig.layout[axis].update(ticktext=shorten(spec["labels"], budget),
                                tickfont=dict(size=size))


def _flat_colorbars(fig: go.Figure, width: int) -> int:
    """Colour bars laid flat under the figure (a narrow figure cannot spare their width);
    returns the height they need."""
    added = 0
    for trace in fig.data:
        if trace.type == "heatmap" and trace.showscale is not False:
            title = trace.colorbar.title.text if trace.colorbar.title else None
            trace.colorbar = dict(orientation="h", x=0, xanchor="left", xref="container",
                                  y=0, yanchor="bottom", yref="container", thickness=10,
                                  ypad=8, lenmode="pixels", len=min(240, 0.7 * width),
                                  title=dict(text=title, side="right",
                                             font=dict(size=FONT_SIZE - 1)))
            if trace.zmin is not None and trace.zmax is not None:  # both ends labelled
                ends = [trace.zmin, (trace.zmin + trace.zmax) / 2, trace.zmax]
                trace.colorbar.update(tickmode="array", tickvals=ends,
                                      ticktext=[f"{v:g}" for v in ends],
                                      ticklabeloverflow="allow")  # the end labels too
            added = 70
    return added


MAX_HEAT_ROWS = 64  # a heatmap with more rows is split into pages (see catalog)


def heat_cell(rows: int) -> tuple[int, int]:
    """Row height and tick-font size of a heatmap with ``rows`` rows."""
    if rows <= 12:
        return 30, 12
    if rows <= 24:
        return 22, 11
    return 16, 10


def heatmap_figure(grid, *, title: str, zmin: float, zmax: float, colorbar_title: str,
                   colorscale: str = "Cividis", customdata=None, hovertemplate: str = "",
                   digits: int = 2, missing: str = "", zmid: float | None = None,
                   subtitle: str | None = None) -> go.Figure:
    """A heatmap of ``grid`` (a DataFrame: rows × columns, first row on top) sized from its
    shape: every row and column labelled (long labels cut, see :func:`category_ticks`), the
    row height and font from the number of rows, numbers in the cells while they fit, the
    colour bar titled on its side (clear of its ticks)."""
    import numpy as np

    rows = [str(r) for r in grid.index]
    cols = [str(c) for c in grid.columns]
    z = grid.to_numpy(dtype=float)
    cell, font = heat_cell(len(rows))
    text = np.vectorize(lambda v: missing if np.isnan(v) else f"{v:.{digits}f}")(z) \
        if z.size else None
    annotate = len(rows) <= 32 and len(cols) <= 16
    fig = go.Figure(go.Heatmap(
        z=z, x=cols, y=rows, zmin=zmin, zmax=zmax, zmid=zmid, colorscale=colorscale,
        colorbar=dict(title=dict(text=colorbar_title, side="right"), thickness=12,
                      lenmode="pixels", len=min(220, max(80, cell * len(rows))),
                      yanchor="top", y=1),
        customdata=customdata, text=text if annotate else None,
        texttemplate="%{text}" if annotate else None, textfont=dict(size=font - 1),
        hovertemplate=hovertemplate + "<extra></extra>", xgap=1, ygap=1))
    longest_col = max((len(c) for c in cols), default=0)
    bottom = 40 + int(min(longest_col, 24) * CHAR_EM * font * 0.8)
    height = 70 + bottom + cell * len(rows)
    apply_layout(fig, title, subtitle=subtitle, height=height,
                 xaxis=dict(title="", showgrid=False, type="category",
                            autotickangles=[0, 90], ticks=""),
                 yaxis=dict(title="", showgrid=False, type="category", autorange="reversed",
                            ticks=""),
                 margin=dict(t=50, b=bottom, r=20))
    category_ticks(fig, "yaxis", rows, share=0.4, size=font, row_px=cell)  # cells: the rest
    category_ticks(fig, "xaxis", cols, share=0.45, size=font)  # turned: costs height only
    fig.layout.meta["kbench_ticks"]["yaxis"]["cells"] = len(cols)
    meta = dict(fig.layout.meta)
    label_px = max((text_width(r, font) for r in shorten(rows, int(0.4 * APP_WIDTH / (
        CHAR_EM * font)))), default=0)
    meta["kbench_heatmap"] = dict(columns=len(cols), label_px=label_px,
                                  text_px=(digits + 3) * CHAR_EM * (font - 1) + 4)
    fig.update_layout(meta=meta)
    if annotate:
        _heatmap_text(fig, APP_WIDTH, meta["kbench_heatmap"])
    return fig


PAGE_PX = 864  # a page's text block, 9 in at 96 px per inch: the tallest figure on paper
EXPORT_SLACK = 140  # px a figure may grow when laid out for one column (title lines, a flat
# colour bar, more legend rows): what paging keeps free below PAGE_PX
_ROW_ARRAYS = ("x", "y", "text", "customdata", "hovertext", "width", "base")
_MARKER_ARRAYS = ("color", "size", "symbol", "opacity")


def _subset_trace(trace, keep: set[str]) -> None:
    """``trace`` restricted to the rows whose y category is in ``keep`` (in place)."""
    import numpy as np

    if trace.type == "heatmap":
        ys = [str(v) for v in trace.y]
        rows = [i for i, v in enumerate(ys) if v in keep]
        trace.y = [trace.y[i] for i in rows]
        for name in ("z", "text", "customdata"):
            value = getattr(trace, name)
            if value is not None and len(value) == len(ys):
                setattr(trace, name, [value[i] for i in rows])
        return
    y = trace.y
    if y is None or isinstance(y, str):
        return
    ys = [str(v) for v in y]
    index = np.array([v in keep for v in ys])
    if index.all():
        return
    n = len(ys)

    def cut(value):
        if value is None or isinstance(value, str | int | float):
            return value
        array = np.asarray(value, dtype=object)
        return array[index].tolist() if array.shape[:1] == (n,) else value

    for name in _ROW_ARRAYS:
        if name in trace:
            setattr(trace, name, cut(getattr(trace, name)))
    if "marker" in trace and trace.marker is not None:
        for name in _MARKER_ARRAYS:
            if name in trace.marker:
                trace.marker[name] = cut(trace.marker[name])
    for bars in ("error_x", "error_y"):
        if bars in trace and trace[bars] is not None:
            for name in ("array", "arrayminus"):
                if trace[bars][name] is not None:
                    trace[bars][name] = cut(trace[bars][name])


def row_pages(fig: go.Figure, *, page_px: int = PAGE_PX) -> list[go.Figure]:
    """``fig`` split into pages of rows when it is too tall for a page laid out for one
    column: a figure with labelled category rows (heatmaps, ranked bar and dot charts, the
    rows :func:`category_ticks` labels on ``yaxis``) taller than ``page_px`` less
    :data:`EXPORT_SLACK` becomes pages of equal size, in the figure's row order, each titled
    "page k of n" with its own labels and the same colour scale and axes; one figure
    otherwise."""
    meta = fig.layout.meta if isinstance(fig.layout.meta, Mapping) else {}
    spec = (meta.get("kbench_ticks") or {}).get("yaxis")
    height = int(fig.layout.height or 520)
    if not spec or height + EXPORT_SLACK <= page_px or len(spec["labels"]) < 8:
        return [fig]
    labels = [str(label) for label in spec["labels"]]
    n = len(labels)
    row_px = float(meta.get("kbench_row_px") or max(12.0, (height - 160) / n))
    overhead = height - row_px * n
    per_page = max(4, int((page_px - EXPORT_SLACK - overhead) // row_px))
    pages = math.ceil(n / per_page)
    if pages <= 1:
        return [fig]
    per_page = math.ceil(n / pages)
    # page 1 holds the rows drawn on top: the first labels on a reversed axis (heatmaps,
    # ranked lists best first), else the last (a category axis runs upwards)
    top_first = fig.layout.yaxis.autorange == "reversed"
    shown = labels if top_first else labels[::-1]
    out = []
    for k in range(pages):
        part = shown[k * per_page:(k + 1) * per_page]
        part = part if top_first else part[::-1]  # in the axis' own order
        page = go.Figure(fig)
        keep = set(part)
        for trace in page.data:
            _subset_trace(trace, keep)
        title = f"{meta.get('kbench_title') or ''} (page {k + 1} of {pages})".strip()
        page_meta = dict(page.layout.meta)
        page_meta.update(kbench_title=title, kbench_page=[k + 1, pages])
        ticks = dict(page_meta.get("kbench_ticks") or {})
        page.update_layout(meta=page_meta)
        category_ticks(page, "yaxis", part, share=spec["share"], size=spec["size"])
        if "cells" in spec:
            page.layout.meta["kbench_ticks"]["yaxis"]["cells"] = spec["cells"]
        for axis, other in ticks.items():
            if axis != "yaxis":
                page.layout.meta["kbench_ticks"][axis] = other
        page.update_layout(title=_title(title, APP_WIDTH, meta.get("kbench_subtitle")),
                           height=round(overhead + row_px * len(part)))
        panels = page_meta.get("kbench_panels")
        if isinstance(panels, Mapping) and panels.get("n"):  # panels side by side: shorter
            set_panels(page, int(panels["n"]), int(panels["columns"]),
                       panel_height=round(panels["panel_height"] - row_px * (n - len(part))),
                       header=int(panels["header"]), titles=panels.get("titles"))
            legend = int(page.layout.meta.get("kbench_legend_rows") or 0)
            page.update_layout(height=page.layout.height + 22 * legend)
        out.append(page)
    return out
