"""Heat tables as figures: :func:`heatmap_figure` and its cells."""

from __future__ import annotations

import plotly.graph_objects as go

from .labels import MIN_LABEL_CHARS, display_labels, tick_labels, two_lines_px
from .layout import apply_layout, text_width, turned_labels, turned_margin
from .style import APP_WIDTH, CHAR_EM

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
                   subtitle: str | None = None, wrap_rows: bool = False,
                   wrap_cols: bool = False) -> go.Figure:
    """A heatmap of ``grid`` (a DataFrame: rows × columns, first row on top) sized from its
    shape: every row and column labelled (long labels cut, see :func:`category_ticks`), the
    row height and font from the number of rows, numbers in the cells while they fit, the
    colour bar titled on its side (clear of its ticks). ``wrap_rows`` (rows that are models):
    row labels in two lines at most, never cut (:func:`wrap_label`), rows tall enough; other
    row labels too long for their share break into two lines too (rows grow for them).
    Column labels are one line each and whole (up to
    :data:`~kbench_core.figures.layout.TURNED_MAX` characters), turned when they do not fit:
    a turned label in two lines would stand its second line under the next column
    (``wrap_cols`` is kept for callers; it changes nothing)."""
    import numpy as np

    rows = [str(r) for r in grid.index]
    cols = [str(c) for c in grid.columns]
    z = grid.to_numpy(dtype=float)
    cell, font = heat_cell(len(rows))
    if wrap_rows and any(len(r) > MIN_LABEL_CHARS for r in display_labels(rows)):
        cell = max(cell, 2 * font + 6)  # two lines of a name
    # rows: a label too long for the labels' share breaks into two lines (rows grow for
    # them) rather than being cut
    budget = max(MIN_LABEL_CHARS, int(0.4 * APP_WIDTH / (CHAR_EM * font)))
    if any(len(r) > budget for r in display_labels(rows)):
        cell = max(cell, two_lines_px(font))
    text = np.vectorize(lambda v: missing if np.isnan(v) else f"{v:.{digits}f}")(z) \
        if z.size else None
    annotate = len(rows) <= 32 and len(cols) <= 16
    # The figure is gathered as plain dicts and handed to plotly in two calls (the trace,
    # then the layout): each further update re-validates (0.04 s -> 0.02 s a heatmap).
    trace = dict(
        type="heatmap", z=z, x=cols, y=rows, zmin=zmin, zmax=zmax, zmid=zmid,
        colorscale=colorscale,
        colorbar=dict(title=dict(text=colorbar_title, side="right"), thickness=12,
                      lenmode="pixels", len=min(220, max(80, cell * len(rows))),
                      yanchor="top", y=1),
        customdata=customdata, text=text if annotate else None,
        texttemplate="%{text}" if annotate else None, textfont=dict(size=font - 1),
        hovertemplate=hovertemplate + "<extra></extra>", xgap=1, ygap=1)
    # columns: one line each, whole (turned when they do not fit: a turned label in two
    # lines would put its second line under the next column); the margin below holds them
    bottom = turned_margin(cols, font)
    height = 70 + bottom + cell * len(rows)
    y_ticks, y_spec = tick_labels(rows, share=0.4, size=font,  # cells: the rest
                                  wrap=wrap_rows, row_px=cell)
    x_ticks, x_spec = tick_labels(cols, share=0.45, size=font)
    x_ticks["ticktext"] = turned_labels(cols)
    x_spec["turn"] = True
    label_px = max((text_width(line, font) for r in y_ticks["ticktext"]
                    for line in r.split("<br>")), default=0)
    spec = dict(columns=len(cols), label_px=label_px,
                text_px=(digits + 3) * CHAR_EM * (font - 1) + 4)
    if annotate and text is not None:  # numbers in cells that fit them (as _heatmap_text)
        plot = APP_WIDTH - min(0.4 * APP_WIDTH, label_px) - 90
        if plot / max(len(cols), 1) < spec["text_px"]:
            trace["texttemplate"] = ""
    meta = dict(kbench_ticks=dict(yaxis=dict(y_spec, cells=len(cols)), xaxis=x_spec),
                kbench_row_px=cell, kbench_heatmap=spec)
    fig = go.Figure(dict(data=[trace], layout=dict(meta=meta)))
    apply_layout(fig, title, subtitle=subtitle, height=height,
                 xaxis=dict(title="", showgrid=False, type="category",
                            autotickangles=[0, 90], ticks="", **x_ticks),
                 yaxis=dict(title="", showgrid=False, type="category", autorange="reversed",
                            ticks="", **y_ticks),
                 margin=dict(t=50, b=bottom, r=20))
    return fig
