"""Long figures cut into pages of rows for export: :func:`row_pages`."""

from __future__ import annotations

import math
from collections.abc import Mapping

import plotly.graph_objects as go

from .labels import category_ticks
from .layout import _title, set_panels
from .style import APP_WIDTH, EXPORT_SLACK, PAGE_PX

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
        category_ticks(page, "yaxis", part, share=spec["share"], size=spec["size"],
                       wrap=bool(spec.get("wrap")), row_px=spec.get("row_px"))
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
