"""Replication figures: human-vs-agent effect scatter, study × model heat tables, the
study-summary leaderboard."""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from _plotly_utils.utils import to_typed_array_spec
from plotly.colors import qualitative
from plotly.subplots import make_subplots

from kbench_core.figures.base import (
    PALETTE,
    TITLE_LINE_PX,
    apply_layout,
    category_ticks,
    clamp_note,
    distinct_styles,
    edge_clamp,
    heatmap_figure,
    legend_below,
    model_colors,
    name_rows,
    set_panels,
    with_legend_below,
)
from kbench_core.replication.scatter import (  # noqa: F401  (AXIS_LIMIT: its old home)
    AXIS_LIMIT,
    DENSITY_BINS,
    MAX_POINTS,
    DensityGrid,
    axis_range,
    density_grid,
    weighted_fit,
)
from kbench_core.text import plot_text

__all__ = ["effect_scatter", "study_heatmap", "study_titles", "summary_leaderboard"]

WEBGL_ABOVE = 5_000  # points per figure beyond which traces switch to WebGL
MAX_LEGEND_GROUPS = 20  # beyond this, colour encodes the group without a legend entry each
GLYPHS = {"circle": "●", "square": "■", "diamond": "◆", "triangle-up": "▲", "cross": "✚",
          "x": "✖", "star": "★", "hexagon": "⬢"}  # the marker symbols, for the title's key
MAX_PANELS = 12  # one panel per model up to this many models (4 per row); beyond, overlaid
PANEL_COLUMNS = 4
MAX_FIT_LINES = 8  # overlaid models beyond this share one pooled fit line
SYMBOLS = ("circle", "square", "diamond", "triangle-up", "cross", "x", "star", "hexagon")


def effect_scatter(tests: pd.DataFrame, ecs_table: pd.DataFrame | None = None, *,
                   color_by: str = "study", panels: bool = True,
                   title: str | None = None, grid: DensityGrid | None = None) -> go.Figure:
    """Human d (x) against agent d (y), one point per test: the y = x line of perfect
    agreement, a weighted least-squares fit line per model, colour by study or domain (a
    legend click isolates it, a double click shows only it), marker size by the test's weight,
    hover naming study, finding, test and both effects; the CCC with its interval per model in
    the panel titles with n (``ecs_table`` from :func:`kbench_core.replication.ecs`). Beyond
    5,000 points the markers are drawn with WebGL (``Scattergl``). Beyond
    ``MAX_POINTS`` tests the markers become counts on an 80 × 80 grid, so the figure sent to the
    browser stays small whatever the run's size.

    ``tests`` needs ``model, study, finding, test, d_h, d_a`` and optionally ``weight`` and
    ``domain`` (:func:`kbench_core.replication.prepare_tests` adds d); or, past
    ``MAX_POINTS`` tests, their :class:`~kbench_core.replication.scatter.DensityGrid`
    (``grid``, e.g. an engine's; ``tests`` is then not read). Overlaid
    (``panels=False``), each model has its own marker symbol and its own fit line in its
    colour (:func:`kbench_core.figures.base.model_colors`). Panels are laid out four to a row,
    for at most ``MAX_PANELS`` models; more are overlaid (the title says so).
    """
    # labels from data show literally
    tests, ecs_table, title = (
        plot_text(tests), plot_text(ecs_table), plot_text(title))
    if grid is not None:  # the tests' grid, made elsewhere: no test is drawn
        tests = pd.DataFrame({c: pd.Series(dtype=float) for c in ("d_h", "d_a")}).assign(
            model=pd.Series(dtype=object), study=pd.Series(dtype=object))
    data = tests[np.isfinite(tests["d_h"].astype(float)) & np.isfinite(tests["d_a"].astype(float))]
    models = sorted(map(str, data["model"].unique())) if grid is None else list(grid.models)
    if color_by not in data:
        color_by = "study"
    weight = data["weight"].astype(float) if "weight" in data else pd.Series(1.0, data.index)
    size = 6 + 14 * np.sqrt(weight / max(float(weight.max()), 1e-12))
    ccc = {} if ecs_table is None else {
        str(r["model"]): (r["ecs"], r.get("ecs_low", np.nan), r.get("ecs_high", np.nan),
                          r.get("n", np.nan))
        for _, r in ecs_table.iterrows()}

    def label(model: str) -> str:
        if model not in ccc:
            return model
        value, low, high, n = ccc[model]
        interval = " (no interval)" if not np.isfinite(low) else f" [{low:.2f}, {high:.2f}]"
        count = f", n = {int(n)}" if np.isfinite(n) else ""  # wrap keeps "n = 36" whole
        return f"{model}<br>CCC {value:.3f}{interval}{count}"

    too_many = panels and len(models) > MAX_PANELS
    panels = panels and not too_many
    n_panels = len(models) if panels else 1
    n_cols = min(n_panels, PANEL_COLUMNS)
    # One axis pair per panel; set_panels lays them out (and re-grids them for an export
    # width), so every panel keeps its own tick labels whatever its place in the grid.
    # one panel: the axes make_subplots would give, without its grid (7 ms a figure)
    one = n_panels <= 1
    fig = (go.Figure(layout=dict(xaxis=dict(anchor="y", domain=[0.0, 1.0]),
                                 yaxis=dict(anchor="x", domain=[0.0, 1.0])))
           if one else make_subplots(rows=1, cols=n_panels))
    cells = [(1, i + 1) for i in range(n_panels)]  # none: panels of no model (no finite d)
    scatter = go.Scattergl if len(data) > WEBGL_ABOVE else go.Scatter
    finite_all = np.concatenate([data["d_h"].to_numpy(float), data["d_a"].to_numpy(float)])
    lo, hi = ((grid.lo, grid.hi) if grid is not None else axis_range(
        float(finite_all.min()) if finite_all.size else 0.0,
        float(finite_all.max()) if finite_all.size else 1.0))
    # Effects beyond the axis limit are drawn on its edge as open triangles, and counted.
    d_h, out_h = edge_clamp(data["d_h"], lo, hi)
    d_a, out_a = edge_clamp(data["d_a"], lo, hi)
    clamped = out_h | out_a
    n_clamped = int(clamped.sum()) if grid is None else grid.n_clamped
    data = data.assign(d_h=d_h, d_a=d_a, _clamped=clamped)
    groups = sorted(map(str, data[color_by].unique()))
    titled = {k: f"{k} ({v})" for k, v in study_titles(data).items()}  # hover: the paper
    many = len(groups) > MAX_LEGEND_GROUPS or (not panels and len(groups) > len(PALETTE))
    # one colour per group: Okabe & Ito's eight, beyond them plotly's Dark24 (no colour twice
    # up to MAX_LEGEND_GROUPS; the marker shape stays a second cue)
    group_styles = distinct_styles(groups, None if len(groups) <= len(PALETTE) else {
        g: qualitative.Dark24[i % len(qualitative.Dark24)] for i, g in enumerate(groups)})
    dense = grid is not None or len(data) > MAX_POINTS
    if grid is None and dense:  # aggregate: counts on a grid instead of one marker per test
        grid = density_grid(data, weight.to_numpy(float), lo, hi, models, n_clamped)
    line_colors = model_colors(models)
    symbols = {m: SYMBOLS[i % len(SYMBOLS)] for i, m in enumerate(models)}
    for (row, col), model in zip(cells, models if panels else [None], strict=True):
        first = (row, col) == (1, 1)
        place = {} if one else dict(row=row, col=col)
        part = data if model is None else data[data["model"].astype(str) == model]
        # y = x as a shape, not a trace: isolating a study from the legend keeps it.
        fig.add_shape(type="line", x0=lo, y0=lo, x1=hi, y1=hi,
                      **(dict(xref="x", yref="y") if one else place),
                      line=dict(color="#888", dash="dash", width=1.5), layer="below")
        if grid is not None:  # counts on a grid instead of one marker per test
            counts = (grid.counts[model] if model is not None
                      else np.sum([grid.counts[m] for m in models], axis=0))
            xe = ye = np.linspace(lo, hi, DENSITY_BINS + 1)
            fig.add_trace(go.Heatmap(
                z=np.where(counts.T > 0, counts.T, np.nan), x=(xe[:-1] + xe[1:]) / 2,
                y=(ye[:-1] + ye[1:]) / 2, colorscale="Viridis", showscale=first,
                colorbar=dict(title="tests"), name="tests",
                hovertemplate="human d %{x:.2f} · agent d %{y:.2f}<br>%{z} tests"
                              "<extra></extra>"), **place)
        for group in ([] if dense else [None] if many else groups):
            rows = part if group is None else part[part[color_by].astype(str) == group]
            if rows.empty:
                continue
            color = (pd.Categorical(rows[color_by].astype(str), categories=groups).codes
                     if group is None else group_styles[group].color)
            if model is None:
                symbol = rows["model"].astype(str).map(symbols).to_numpy()
            elif group is None:
                symbol = "circle"
            else:
                symbol = group_styles[group].symbol
            # Off-scale tests are a trace of their own (open triangles, no legend entry of
            # their own group): a legend shows a trace's first marker, so one clamped test
            # would mark its whole study as off-scale. One "beyond the axes" entry names them.
            off = rows["_clamped"].to_numpy()
            for clamped_part in (False, True):
                mask = off if clamped_part else ~off
                if not mask.any():
                    continue
                sub = rows[mask]
                fig.add_trace(scatter(
                    x=sub["d_h"], y=sub["d_a"], mode="markers",
                    name=f"{len(groups)} {color_by} values" if group is None else group,
                    legendgroup=group or "all", showlegend=first and not clamped_part,
                    marker=dict(color=color[mask] if group is None else color,
                                colorscale="Viridis" if group is None else None,
                                size=size.loc[sub.index], opacity=0.8,
                                symbol="triangle-up-open" if clamped_part else (
                                    _symbol_codes(np.asarray(symbol, dtype=object)[mask])
                                    if not isinstance(symbol, str) else symbol),
                                line=dict(color="white", width=0.5)),
                    # one hover line per point, written once (four customdata columns of
                    # text were copied element by element by Plotly, on every redraw)
                    text=_hover_lines(sub, titled),
                    hovertemplate=("%{text}<br>human d %{x:.3f} · agent d %{y:.3f}"
                                   + (" (beyond the axes: drawn at the edge)" if clamped_part
                                      else "") + "<extra></extra>")), **place)
        # One weighted fit per model: in its own panel, or in the model's colour when overlaid
        # (one pooled fit when too many models are overlaid for their lines to be told apart).
        per_model = not panels and len(models) <= MAX_FIT_LINES
        for fit_model in (models if per_model else [model]):
            if grid is not None:
                fit = grid.fits[fit_model if per_model else model]
            else:
                rows = part[part["model"].astype(str) == fit_model] if per_model else part
                fit = weighted_fit(rows["d_h"].to_numpy(float), rows["d_a"].to_numpy(float),
                                   weight.loc[rows.index].to_numpy(float))
            if fit is None:
                continue
            slope, intercept = fit
            fig.add_trace(go.Scatter(
                x=[lo, hi], y=[intercept + slope * lo, intercept + slope * hi], mode="lines",
                name=f"fit · {fit_model}" if per_model else "weighted fit",
                legendgroup=f"fit {fit_model}" if per_model else "fit",
                showlegend=first,
                # dotted: a fit line never looks like a study's markers of the same colour
                line=dict(color=line_colors[fit_model] if per_model else "#222", width=1.5,
                          dash="dot" if per_model else "solid"),
                hovertemplate=f"{fit_model + ' ' if per_model else ''}fit: agent = "
                              f"{intercept:.2f} + {slope:.2f} · human<extra></extra>"),
                **place)
        fig.update_xaxes(title_text="Human effect (d)", range=[lo, hi], **place)
        fig.update_yaxes(title_text="Agent effect (d)", range=[lo, hi], **place)
    if one:  # as make_subplots' one cell names them
        fig.update_traces(xaxis="x", yaxis="y")
    if clamped.any() and not dense:  # one legend entry for every off-scale marker
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name="beyond the axes "
                                 "(drawn at the edge)", legendgroup="off-scale",
                                 marker=dict(symbol="triangle-up-open", color="#444", size=10),
                                 xaxis="x", yaxis="y", hoverinfo="skip"))
    # The y = x line is named in the legend (a label on the plot sat on the lines).
    fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name="y = x (agreement)",
                             line=dict(color="#888", dash="dash", width=1.5), xaxis="x",
                             yaxis="y", legendgroup="diagonal", hoverinfo="skip"))
    key = None
    if panels or len(models) != 1:
        heading = title or ("Human against agent effect sizes" if panels else
                            f"Human against agent effect sizes ({len(models)} models overlaid"
                            + (f"; panels need at most {MAX_PANELS}" if too_many else "") + ")")
        if not panels and not dense and len(models) <= len(SYMBOLS):
            key = " · ".join(f"{GLYPHS[symbols[m]]} {m}" for m in models)
    else:
        heading = title or f"Human against agent effect sizes · {label(models[0])}"
        heading = heading.replace("<br>", " · ")
    note = clamp_note(n_clamped, lo, hi, "tests")
    single = label(models[0]).replace("<br>", " · ") if panels and n_panels == 1 and models \
        and not title else None
    subtitle = " · ".join(t for t in (single, key, note) if t) or None
    apply_layout(fig, heading, subtitle=subtitle,
                 legend=dict(title=color_by.capitalize(),
                             itemclick="toggleothers", itemdoubleclick="toggle"))
    meta = dict(fig.layout.meta)
    meta.update(kbench_x_title="Human effect (d)", kbench_y_title="Agent effect (d)",
                kbench_panels=dict(min_width=220, square=True))
    fig.update_layout(meta=meta)
    set_panels(fig, n_panels, n_cols, panel_height=340 if n_panels > 1 else 400,
               header=80 + TITLE_LINE_PX * (fig.layout.title.text.count("<br>")),
               titles=[label(m) for m in models] if panels and n_panels > 1 else None)
    with_legend_below(fig)  # below: a side legend would take the panels' width
    return fig


def _hover_lines(rows: pd.DataFrame, titled: dict[str, str]) -> np.ndarray:
    """Each test's hover heading: the test in bold, its study (with the paper's title) and
    finding, the model (the text already made literal by ``plot_text``). Objects, not
    fixed-width text: a fixed-width array is as wide as its longest line on every row, and
    one long uploaded label would make it gigabytes."""
    def texts(column: str) -> np.ndarray:
        # through the distinct values: a run's 16k tests name a few hundred studies
        codes, uniques = pd.factorize(rows[column], use_na_sentinel=False)
        labels = pd.Index(uniques).astype(str)
        if column == "study":
            labels = pd.Index([titled.get(v, v) for v in labels])
        return np.asarray(labels, dtype=object)[codes]

    parts = [texts(c) for c in ("test", "study", "finding", "model")]
    return "<b>" + parts[0] + "</b><br>" + parts[1] + " · " + parts[2] + "<br>" + parts[3]


@functools.cache
def _symbol_numbers() -> dict[str, int]:
    """Plotly's number of each marker symbol name (``circle`` 0, ``square`` 1, ...), read
    from its own validator."""
    values = go.scattergl.Marker()._get_validator("symbol").values
    names = [v for v in values if isinstance(v, str) and not v.isdigit()]
    return dict(zip(names, [v for v in values if isinstance(v, int)], strict=True))


def _symbol_codes(names: np.ndarray) -> dict:
    """Per-point marker symbols as Plotly's symbol numbers in a typed array (the same
    markers): a list of names is checked by Plotly one element at a time, 0.6 s for the
    16,680 points of ten overlaid models, on every redraw."""
    numbers = _symbol_numbers()
    codes = np.array([numbers[str(n)] for n in names], dtype=np.int16)
    return to_typed_array_spec(codes)


def _study_grid(table: pd.DataFrame, value: str) -> pd.DataFrame:
    """Study × model grid of the mean ``value`` per cell (NaN where a cell has no known
    value; every study and model of ``table`` kept), labels as text in sorted order: what
    ``pivot_table(..., dropna=False)`` gives, from two ``bincount`` calls on integer codes
    (the pivot cost more than the figure on every model-set change)."""
    table = table[table["study"].notna().to_numpy() & table["model"].notna().to_numpy()]
    rows, studies = pd.factorize(table["study"].astype(str), sort=True)
    cols, models = pd.factorize(table["model"].astype(str), sort=True)
    values = pd.to_numeric(table[value], errors="coerce").to_numpy(dtype=float)
    known = np.isfinite(values)
    cell = rows[known] * len(models) + cols[known]
    size = len(studies) * len(models)
    total = np.bincount(cell, weights=values[known], minlength=size)
    count = np.bincount(cell, minlength=size)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(count > 0, total / count, np.nan)
    return pd.DataFrame(means.reshape(len(studies), len(models)),
                        index=pd.Index(studies, dtype=object),
                        columns=pd.Index(models, dtype=object))


def study_titles(table: pd.DataFrame) -> dict[str, str]:
    """Each study's title: the run's own ``title`` column (HumanStudy-Bench's
    ``simple_studies.csv`` and ``simple_results.json`` carry one), else HumanStudy-Bench's
    published study list bundled with kbench (``kbench_core/data/humanstudy_studies.json``,
    its 12 studies) for the ids it names (``study_001``); other studies have none."""
    import json
    from importlib import resources

    titles: dict[str, str] = {}
    if "study" not in table:
        return titles
    ids = set(map(str, table["study"].dropna().unique()))
    bundled = json.loads(resources.files("kbench_core").joinpath(
        "data/humanstudy_studies.json").read_text(encoding="utf-8"))["titles"]
    titles.update({k: plot_text(v) for k, v in bundled.items() if k in ids})
    if "title" in table:
        named = table[["study", "title"]].dropna().drop_duplicates("study")
        titles.update(zip(named["study"].astype(str), named["title"].astype(str), strict=True))
    return titles


def study_heatmap(table: pd.DataFrame, *, value: str = "pas", title: str | None = None,
                  zmin: float = 0.0, zmax: float = 1.0, unit: str = "model") -> go.Figure:
    """Study × model heat table of ``value`` (PAS, ECS): the longer of the two down the side
    (63 configurations × 12 studies puts the configurations in rows), cells sized from the
    grid's shape and annotated while legible; the hover names study, model, value and, when
    ``table`` has an ``n`` column, the count it rests on. Beyond
    :data:`~kbench_core.figures.base.MAX_HEAT_ROWS` rows the catalog splits it into pages.
    Rows and columns are ranked by their mean value, best first (not alphabetical)."""
    table, title = plot_text(table), plot_text(title)  # labels from data show literally
    grid = _study_grid(table, value)
    # ranked, not alphabetical: the best row on top and the best column on the left (each by
    # its mean over the cells it has; ties alphabetical), rows and columns without scores last;
    # means equal to 12 digits are ties (an engine's sums differ from memory's in the last bit)
    grid = grid.loc[grid.mean(axis=1).round(12).sort_values(ascending=False, kind="stable",
                                                            na_position="last").index]
    grid = grid[grid.mean(axis=0).round(12).sort_values(ascending=False, kind="stable",
                                                        na_position="last").index]
    counts = None
    if "n" in table:
        counts = (_study_grid(table, "n").reindex(index=grid.index, columns=grid.columns)
                  .to_numpy(dtype=float))
    hover = "%{y} · %{x}<br>" + value.upper() + " %{z:.3f}"
    rows_are = ("study", unit)  # what the rows and the columns are, for the title
    if grid.shape[1] > grid.shape[0]:
        rows_are = (unit, "study")
        grid = grid.T
        counts = None if counts is None else counts.T
        hover = "%{y} · %{x}<br>" + value.upper() + " %{z:.3f}"
    titles = study_titles(table)  # the hover says which paper a study replicates
    if titles or counts is not None:
        study_of = (np.broadcast_to(np.asarray(grid.index, dtype=object)[:, None], grid.shape)
                    if rows_are[0] == "study" else
                    np.broadcast_to(np.asarray(grid.columns, dtype=object)[None, :], grid.shape))
        n_text = (np.full(grid.shape, "", dtype=object) if counts is None else np.where(
            np.isfinite(counts), np.char.add("n = ", np.nan_to_num(counts).astype(int)
                                             .astype(str)), "").astype(object))
        detail = np.vectorize(lambda study, n: "<br>".join(
            t for t in (titles.get(study, ""), n) if t))(study_of, n_text)
        counts = detail
        hover += "<br>%{customdata}"
    rows_empty, cols_empty = grid.isna().all(axis=1), grid.isna().all(axis=0)
    grid.index = [f"{name} (no scores)" if none else name
                  for name, none in zip(grid.index, rows_empty, strict=True)]
    grid.columns = [f"{name} (no scores)" if none else name
                    for name, none in zip(grid.columns, cols_empty, strict=True)]
    return heatmap_figure(grid, title=title or f"{value.upper()} per {rows_are[0]} (rows) "
                          f"and {rows_are[1]}",
                          subtitle=f"best {rows_are[0]} on top, best {rows_are[1]} on the left "
                          f"(mean {value.upper()})",
                          zmin=zmin, zmax=zmax, colorbar_title=value.upper(),
                          customdata=counts, hovertemplate=hover, missing="–",
                          wrap_rows=rows_are[0] == unit)  # a configuration's name whole


def summary_leaderboard(board: pd.DataFrame, *, title: str | None = None) -> go.Figure:
    """The configurations of :func:`kbench_core.replication.summary_leaderboard`, best on top:
    the published configuration PAS and ECS (bars) where the file has them, else the means of
    the per-study values with their t intervals, each under its own name; cost (US$) on a
    second axis; configurations without any score last, marked "no scores"."""
    from kbench_core.replication import SUMMARY_LABELS

    board, title = plot_text(board), plot_text(title)  # labels from data show literally
    data = board.sort_values(["no_scores", "rank"], na_position="last", kind="stable")
    names = [f"{m} (no scores)" if none else str(m)
             for m, none in zip(data["model"], data["no_scores"], strict=True)]
    has_cost = "cost" in data and data["cost"].notna().any()
    # the two axes far enough apart that the score axis' last tick label and the cost
    # axis' first never read as one number ("1" and "0" as "10", even at one column)
    fig = make_subplots(rows=1, cols=2 if has_cost else 1, shared_yaxes=True,
                        column_widths=[0.66, 0.34] if has_cost else None,
                        horizontal_spacing=0.12)
    drawn = []  # the score columns drawn (and their intervals): the axis' range is theirs
    for metric, color in (("pas", PALETTE[0]), ("ecs", PALETTE[1])):
        published = f"config_{metric}"
        column = (published if published in data and data[published].notna().any()
                  else f"mean_study_{metric}")
        if column not in data or data[column].isna().all():
            continue
        error = None
        drawn.append(column)
        if f"{column}_low" in data:
            error = dict(type="data", symmetric=False,
                         array=data[f"{column}_high"] - data[column],
                         arrayminus=data[column] - data[f"{column}_low"], thickness=1)
        label = SUMMARY_LABELS[column]
        fig.add_trace(go.Bar(y=names, x=data[column], orientation="h", name=label,
                             marker_color=color, error_x=error,
                             hovertemplate="%{y}<br>" + label + " %{x:.3f}<extra></extra>"),
                      row=1, col=1)
    if has_cost:
        fig.add_trace(go.Scatter(y=names, x=data["cost"], mode="markers", name="cost (US$)",
                                 marker=dict(color="#444", size=8, symbol="diamond"),
                                 hovertemplate="%{y}<br>cost $%{x:,.2f}<extra></extra>"),
                      row=1, col=2)
        fig.update_xaxes(title_text="US$", rangemode="tozero", row=1, col=2, nticks=4)
    # fixed ranges: the pages of a long leaderboard (catalog.paged) share their scales
    # (the range of what is drawn: an interval not drawn, e.g. of the mean of the per-study
    # values beside the published scores, would spend half the axis on nothing)
    scores = [data[c].to_numpy(dtype=float) for column in drawn
              for c in (column, f"{column}_low", f"{column}_high")
              if c in data and pd.api.types.is_numeric_dtype(data[c])]
    finite = np.concatenate(scores) if scores else np.array([])
    finite = finite[np.isfinite(finite)]
    top = max(1.0, float(finite.max())) if finite.size else 1.0
    low = min(0.0, float(finite.min())) if finite.size else 0.0
    fig.update_xaxes(title_text="score", range=[low - 0.02, top * 1.05], row=1, col=1)
    if has_cost:
        fig.update_xaxes(range=[0, float(data["cost"].max()) * 1.1], row=1, col=2)
    # a configuration's name in two lines, never cut: rows tall enough for them
    row_px = name_rows(names, 34 if len(data) <= 12 else 20)
    apply_layout(fig, title or "Configurations by replication score, with cost",
                 barmode="group", height=150 + row_px * max(len(data), 2),
                 legend=legend_below())
    fig.update_yaxes(type="category", autorange="reversed", row=1, col=1)
    category_ticks(fig, "yaxis", names, row_px=row_px, wrap=True)
    return fig
