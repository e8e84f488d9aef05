"""Layout helpers of every figure: wrapped titles, legends, small-multiple grids and
:func:`fit_to_width` for export widths."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import partial

import plotly.graph_objects as go

from .labels import MIN_LABEL_CHARS, display_labels, shorten
from .style import (
    APP_WIDTH,
    CHAR_EM,
    EXPORT_SLACK,
    FONT_SIZE,
    LEGEND_SIDE_MAX,
    PAGE_PX,
    TITLE_SIZE,
    relayout,
)


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
    # One plotly call per figure part: each assignment or update_layout call re-validates
    # (on a 100-trace figure the renames alone took 20 ms when done for unchanged names).
    display_names(fig.data)
    relayout(fig, titled(dict(meta=fig.layout.meta, height=fig.layout.height), title,
                         subtitle=subtitle, **kwargs))
    return fig


def display_names(traces: Sequence) -> None:
    """Rename ``traces`` (plotly traces or plain trace dicts) to their legend names, as
    :func:`apply_layout` does: each model by its display name (:func:`display_labels`);
    a trace whose name stays is not touched (a plotly trace re-validates on every set)."""
    def name_of(trace: object) -> object:
        return trace.get("name") if isinstance(trace, Mapping) else trace.name

    named = [(t, name_of(t)) for t in traces if isinstance(name_of(t), str) and name_of(t)]
    if not named:
        return
    shown = dict(zip((name for _, name in named),
                     display_labels([name for _, name in named]), strict=True))
    for trace, name in named:
        if shown[name] != name:
            if isinstance(trace, Mapping):
                trace["name"] = shown[name]  # type: ignore[index]
            else:
                trace.name = shown[name]


def titled(layout: Mapping, title: str, *, subtitle: str | None = None,
           **kwargs: object) -> dict:
    """The layout update :func:`apply_layout` makes to ``layout`` (a layout as JSON, or its
    ``meta`` and ``height`` alone), as a plain dict: for a figure gathered as one dict and
    handed to plotly once (:func:`kbench_core.figures.style.merge_layout`)."""
    meta = dict(layout.get("meta")) if isinstance(layout.get("meta"), Mapping) else {}
    meta.update(kbench_title=title, kbench_subtitle=subtitle)
    heading = _title(title, APP_WIDTH, subtitle)
    height = kwargs.get("height", layout.get("height"))
    if height:  # heights are set for a one-line title: room for the others
        text = heading["text"]
        kwargs["height"] = height + TITLE_LINE_PX * ((text.count("<br>") + 1 if text else 0)
                                                     - 1)
    return {**kwargs, "template": "kbench", "title": heading, "meta": meta}


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
    update = legend_below_update(
        dict(meta=fig.layout.meta, height=fig.layout.height),
        list(labels) if labels is not None else legend_labels(fig), height)
    relayout(fig, update)
    return int(update["height"])


def legend_below_update(layout: Mapping, labels: Sequence[str],
                        height: int | None = None) -> dict:
    """The layout update :func:`with_legend_below` makes to ``layout`` (as JSON, or its
    ``meta`` and ``height`` alone) for a legend of ``labels``, as a plain dict (its
    ``height`` the new height)."""
    height = int(height or layout.get("height") or 520)
    rows = legend_rows(labels, APP_WIDTH)
    meta = dict(layout.get("meta")) if isinstance(layout.get("meta"), Mapping) else {}
    meta["kbench_legend_rows"] = rows
    return dict(legend=legend_below(), meta=meta, height=height + 22 * rows)


def legend_labels(fig: go.Figure | Sequence) -> list[str]:
    """The legend's entries of ``fig`` (or of its traces as plotly traces or plain dicts): one
    per legend group, in trace order."""
    seen, labels = set(), []
    for trace in fig.data if isinstance(fig, go.Figure) else fig:
        get = trace.get if isinstance(trace, Mapping) else partial(getattr, trace)
        if get("showlegend") is False or not get("name"):
            continue
        group = get("legendgroup") or id(trace)
        if group in seen:
            continue
        seen.add(group)
        labels.append(str(get("name")))
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
    height += _recut_ticks(fig, width, height)
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
    labels = legend_labels(fig)
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


MIN_TITLE_SIZE = 9  # px: a panel title's font is never shrunk below this

def title_line_px(size: float) -> int:
    """The height of one line of a panel title set in ``size`` px (16 px at the usual 12)."""
    return math.ceil(1.3 * size)


def panel_titles(titles: Sequence[str], columns: int, width: int = APP_WIDTH,
                 ) -> tuple[list[str], float]:
    """Panel titles for ``columns`` panels across ``width`` px, and their font size. The first
    line of a title (a model) shows its display name (:func:`display_labels`, as its legend
    entry and tick labels do), wrapped at its separators to the panel
    (:func:`kbench_core.text.wrap_name`), never cut; a word wider than the panel shrinks the
    font of every title (to :data:`MIN_TITLE_SIZE` at least) instead. The other lines are
    wrapped as text."""
    from kbench_core.text import wrap_name

    size = float(FONT_SIZE - 1)
    room = max((width - 80) / max(columns, 1) - 16, 20.0)
    heads = display_labels([t.split("<br>")[0] for t in titles])
    # a name a little too long shrinks the font a little (one line reads best); a longer one
    # is wrapped; a word wider than the panel shrinks the font further
    whole = max((len(head) for head in heads), default=0)
    if whole and whole * CHAR_EM * size > room:
        size = max(size - 2, min(size, room / (CHAR_EM * whole)))
    word = max((len(piece) for head in heads for piece in wrap_name(head, 1)), default=0)
    if word and word * CHAR_EM * size > room:
        size = max(float(MIN_TITLE_SIZE), room / (CHAR_EM * word))
    chars = max(1, int(room / (CHAR_EM * size)))
    texts = ["<br>".join([*wrap_name(head, chars),
                          *(wrap(rest, room, size) for rest in t.split("<br>")[1:])])
             for head, t in zip(heads, titles, strict=True)]
    return texts, size


def set_panels(fig: go.Figure, n: int, columns: int, *, panel_height: int, header: int,
               titles: Sequence[str] | None = None, width: int | None = None) -> int:
    """Lay out ``n`` panels (axes ``x``/``y`` … ``x{n}``/``y{n}``) ``columns`` to a row; the
    panel titles become annotations over their panels, a model by its display name (wrapped
    to the panel by :func:`panel_titles` when a ``width`` in px is given, as
    :func:`fit_to_width` does); returns (and sets) the height. Inner panels show their tick
    labels only where no neighbour shares the axis."""
    update, annotations = panels_update(fig.layout.to_plotly_json(), n, columns,
                                        panel_height=panel_height, header=header,
                                        titles=titles, width=width)
    # the annotations replaced (update_layout would merge them elementwise)
    relayout(fig, update, replace=dict(annotations=annotations))
    return int(update["height"])


def panels_update(layout: Mapping, n: int, columns: int, *, panel_height: int, header: int,
                  titles: Sequence[str] | None = None, width: int | None = None,
                  ) -> tuple[dict, list[dict]]:
    """What :func:`set_panels` sets on ``layout`` (a layout as JSON), as plain dicts: the
    layout update (its ``height`` the grid's height) and the annotations that replace the
    layout's (its other annotations kept, the panel titles new)."""
    columns = max(1, min(columns, n))
    rows = math.ceil(n / columns)
    height = header + rows * panel_height
    original = list(titles) if titles else None
    title_size = float(FONT_SIZE - 1)
    if titles and width is not None:  # a model's panel: its display name, as its legend's
        titles, title_size = panel_titles(titles, columns, width)
    elif titles:  # laid out by fit_to_width for the width it is shown at
        heads = display_labels([t.split("<br>")[0] for t in titles])
        titles = ["<br>".join([head, *t.split("<br>")[1:]])
                  for head, t in zip(heads, titles, strict=True)]
    # between rows: the lower panels' titles and the upper panels' tick labels
    lines = max((t.count("<br>") + 1 for t in titles), default=0) if titles else 0
    line_px = title_line_px(title_size)
    # (the plot area is the height less the header and about 60 px of x-axis title below)
    gap_y = (min(0.4, (52 + line_px * lines) / max(rows * panel_height - 60, 1)) if rows > 1
             else 0.0)
    grid = panel_grid(n, columns, gap_x=0.08 if columns > 1 else 0.0, gap_y=gap_y)
    annotations = [a for a in layout.get("annotations") or []
                   if not (a.get("name") or "").startswith("panel-")]
    # The axes are gathered into one layout update (one plotly validation pass instead of
    # six per panel: 40 ms of a ten-panel figure).
    meta = dict(layout.get("meta")) if isinstance(layout.get("meta"), Mapping) else {}
    shared_y = bool(meta.get("kbench_shared_y"))
    axes: dict[str, dict] = {}
    for i, ((x0, x1), (y0, y1)) in enumerate(grid, start=1):
        c = (i - 1) % columns
        last_row = i + columns > n
        x_axis: dict = dict(domain=[x0, x1], showticklabels=True)
        y_axis: dict = dict(domain=[y0, y1])
        if meta and "kbench_x_title" in meta:
            x_axis["title"] = dict(text=meta["kbench_x_title"] if last_row else None)
        if meta and shared_y:
            y_axis["showticklabels"] = c == 0
        if meta and "kbench_y_title" in meta:
            y_axis["title"] = dict(text=meta["kbench_y_title"] if c == 0 else None)
        axes[_axis_name("x", i)] = x_axis
        axes[_axis_name("y", i)] = y_axis
        if titles:
            annotations.append(dict(
                text=titles[i - 1], name=f"panel-{i}", x=(x0 + x1) / 2, y=y1, xref="paper",
                yref="paper", xanchor="center", yanchor="bottom", showarrow=False,
                font=dict(size=title_size)))
    update: dict = dict(axes)
    if titles:  # the figure's title clears the first row's panel titles
        lines = max(t.count("<br>") + 1 for t in titles)
        update["title"] = dict(pad=dict(b=14 + line_px * lines))
    before = meta.get("kbench_panels") if isinstance(meta.get("kbench_panels"), Mapping) else {}
    meta["kbench_panels"] = dict(n=n, columns=columns, panel_height=panel_height, header=header,
                                 titles=original,
                                 square=bool(before.get("square")),
                                 **{k: before[k] for k in ("fit_page", "min_panel_px")
                                    if k in before},
                                 min_width=meta.get("kbench_panels", {}).get("min_width", 240)
                                 if isinstance(meta.get("kbench_panels"), Mapping) else 240)
    # the narrowest width this grid holds at (the app shows it in a column at least as wide)
    meta["kbench_min_width"] = columns * int(meta["kbench_panels"]["min_width"]) + 80
    update.update(meta=meta, height=height)
    return update, annotations


def _regrid(fig: go.Figure, width: int, panels: Mapping) -> int:
    """Re-lay small multiples for ``width``: as many columns as panels of ``min_width`` fit;
    panel titles are wrapped to their panel (:func:`panel_titles`: a name at its separators,
    never cut) rather than dropping to fewer columns, while a panel holds 12 characters. A
    grid taller than a page (:data:`PAGE_PX` less :data:`EXPORT_SLACK`) takes more, narrower
    columns while a panel keeps 100 px, and a square panel (``square``) is never much taller
    than wide."""
    n = int(panels["n"])
    header = int(panels["header"])
    columns = max(1, min(int(panels["columns"]),
                         int((width - 80) // int(panels.get("min_width", 240)))))
    original = panels.get("titles")
    size = FONT_SIZE - 1

    def budget(cols: int) -> int:
        return int(((width - 80) / cols - 16) / (CHAR_EM * size))

    def titles_for(cols: int) -> list[str] | None:
        return panel_titles(original, cols, width)[0] if original else None

    def panel_px(cols: int) -> int:
        if not panels.get("square"):  # rows of categories: their height is their content
            px = int(panels["panel_height"])
            if panels.get("fit_page"):  # curves, not categories: shorter panels fit a page
                rows = math.ceil(n / cols)
                px = max(int(panels.get("min_panel_px", 100)),
                         min(px, (PAGE_PX - EXPORT_SLACK - header) // rows))
            return px
        titles, size = panel_titles(original, cols, width) if original else ([], FONT_SIZE)
        lines = max((t.count("<br>") + 1 for t in titles), default=0)
        line_px = title_line_px(size)
        # the plot about as tall as wide, plus its title lines and the tick labels above them
        return min(int(panels["panel_height"]) + line_px * lines,
                   int((width - 80) / cols + 30 + line_px * lines))

    def tall(cols: int) -> int:
        return header + math.ceil(n / cols) * panel_px(cols)

    if original:
        while budget(columns) < 12 and columns > 1:
            columns -= 1
    while (tall(columns) > PAGE_PX - EXPORT_SLACK and columns < n
           and (width - 80) / (columns + 1) >= 100
           and (not original or budget(columns + 1) >= 8)):
        columns += 1
    height = set_panels(fig, n, columns, panel_height=panel_px(columns), header=header,
                        titles=original, width=width)
    if panels.get("fit_page"):
        # a panel squeezed to fit a page, under a title of two lines, has room for two value
        # labels on its y axis, not three (they would overlap)
        titles, size = panel_titles(original, columns, width) if original else ([], FONT_SIZE)
        lines = max((t.count("<br>") + 1 for t in titles), default=0)
        plot_px = panel_px(columns) - title_line_px(size) * lines - 52
        if plot_px < 48:
            fig.update_layout({_axis_name("y", i): dict(nticks=2) for i in range(1, n + 1)})
    return height


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


NARROW = 500  # px: below this width, tick labels get a smaller font and colour bars lie flat


TURNED_MAX = 40  # characters a turned column label keeps (its length costs height only)


def turned_labels(labels: Sequence[str]) -> list[str]:
    """Column labels that may be turned: one line each (a turned label's second line would
    stand under the next column), whole up to :data:`TURNED_MAX` characters."""
    return shorten(labels, TURNED_MAX)


def turned_margin(labels: Sequence[str], size: float) -> int:
    """The bottom margin in px for turned column ``labels`` (:func:`turned_labels`)."""
    longest = max((len(label) for label in turned_labels(labels)), default=0)
    return 40 + int(longest * CHAR_EM * size * 0.8)


def _recut_ticks(fig: go.Figure, width: int, height: int) -> int:
    """Tick labels recut for ``width``; returns the px the figure grows by: rows of labels
    that would be cut grow to two lines (:func:`~kbench_core.figures.labels.fit_labels`)
    while the figure stays within a page, and turned column labels get the margin their
    length needs."""
    from .labels import fit_labels, two_lines_px

    meta = fig.layout.meta if isinstance(fig.layout.meta, Mapping) else {}
    grown = 0
    for axis, spec in (meta.get("kbench_ticks") or {}).items():
        size = spec["size"] - (1 if width < NARROW else 0)
        labels = spec["labels"]
        if spec.get("turn"):  # heatmap columns: one line, whole (turned when they must)
            shown = turned_labels(labels)
            margin = turned_margin(labels, size)
            heat = meta.get("kbench_heatmap")
            if isinstance(heat, Mapping):  # columns wide enough for their labels: unturned
                colorbar = 0 if width < NARROW else heat.get("colorbar_px", 90)
                plot = width - min(0.4 * width, heat["label_px"]) - colorbar - 40
                cell = plot / max(int(heat["columns"]), 1)
                if max((text_width(label, size) for label in shown), default=0) + 8 <= cell:
                    margin = 40 + math.ceil(1.3 * size)
            before = fig.layout.margin.b or 0
            fig.layout[axis].update(ticktext=shown, tickfont=dict(size=size))
            fig.layout.margin.b = margin
            grown += margin - before
            continue
        share = min(spec["share"], 0.4) if width < NARROW else spec["share"]
        if spec.get("cells"):  # heatmap rows: what the cells (28 px and up) leave over
            other = 60 if width < NARROW else 150  # margins (and a standing colour bar)
            share = min(0.6, max(share, 1 - (28 * spec["cells"] + other) / width))
        budget = max(MIN_LABEL_CHARS, int(share * width / (CHAR_EM * size)))
        wrap = bool(spec.get("wrap"))
        row_px = spec.get("row_px")
        two = row_px is not None and row_px >= two_lines_px(size)
        text = fit_labels(labels, budget, wrap=wrap, two_lines=two)
        if axis == "yaxis" and row_px is not None and not two and not wrap and \
                text != display_labels(labels):
            # a label would be cut: its rows grow to two lines while a page holds them
            extra = math.ceil(len(labels) * (two_lines_px(size) - row_px))
            if height + grown + extra <= PAGE_PX - EXPORT_SLACK // 2:
                grown += extra
                text = fit_labels(labels, budget, two_lines=True)
        fig.layout[axis].update(ticktext=text, tickfont=dict(size=size))
    return grown


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
