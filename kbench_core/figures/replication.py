"""Replication figures: human-vs-agent effect scatter, study × model heat tables, the
study-summary leaderboard."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from kbench_core.figures.base import PALETTE, apply_layout, model_colors
from kbench_core.text import plot_text

__all__ = ["effect_scatter", "study_heatmap", "summary_leaderboard"]

WEBGL_ABOVE = 5_000  # points per figure beyond which traces switch to WebGL
MAX_LEGEND_GROUPS = 20  # beyond this, colour encodes the group without a legend entry each
MAX_POINTS = 20_000  # beyond this the scatter becomes a density grid (the browser gets counts)
DENSITY_BINS = 80
GLYPHS = {"circle": "●", "square": "■", "diamond": "◆", "triangle-up": "▲", "cross": "✚",
          "x": "✖", "star": "★", "hexagon": "⬢"}  # the marker symbols, for the title's key
MAX_PANELS = 12  # one panel per model up to this many models (4 per row); beyond, overlaid
PANEL_COLUMNS = 4
MAX_FIT_LINES = 8  # overlaid models beyond this share one pooled fit line
SYMBOLS = ("circle", "square", "diamond", "triangle-up", "cross", "x", "star", "hexagon")


def effect_scatter(tests: pd.DataFrame, ecs_table: pd.DataFrame | None = None, *,
                   color_by: str = "study", panels: bool = True,
                   title: str | None = None) -> go.Figure:
    """Human d (x) against agent d (y), one point per test: the y = x line of perfect
    agreement, a weighted least-squares fit line per model, colour by study or domain (a
    legend click isolates it, a double click shows only it), marker size by the test's weight,
    hover naming study, finding, test and both effects; the CCC with its interval per model in
    the panel titles with n (``ecs_table`` from :func:`kbench_core.replication.ecs`). Beyond
    5,000 points the markers are drawn with WebGL (``Scattergl``). Beyond
    ``MAX_POINTS`` tests the markers become counts on an 80 × 80 grid, so the figure sent to the
    browser stays small whatever the run's size.

    ``tests`` needs ``model, study, finding, test, d_h, d_a`` and optionally ``weight`` and
    ``domain`` (:func:`kbench_core.replication.prepare_tests` adds d). Overlaid
    (``panels=False``), each model has its own marker symbol and its own fit line in its
    colour (:func:`kbench_core.figures.base.model_colors`). Panels are laid out four to a row,
    for at most ``MAX_PANELS`` models; more are overlaid (the title says so).
    """
    # labels from data show literally
    tests, ecs_table, title = (
        plot_text(tests), plot_text(ecs_table), plot_text(title))
    data = tests[np.isfinite(tests["d_h"].astype(float)) & np.isfinite(tests["d_a"].astype(float))]
    models = sorted(map(str, data["model"].unique()))
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
        count = f", n = {int(n)}" if np.isfinite(n) else ""
        return f"{model}<br>CCC {value:.3f}{interval}{count}"

    too_many = panels and len(models) > MAX_PANELS
    panels = panels and not too_many
    n_cols = min(len(models), PANEL_COLUMNS) if panels else 1
    n_rows = -(-len(models) // PANEL_COLUMNS) if panels else 1
    fig = make_subplots(rows=n_rows, cols=max(n_cols, 1), shared_yaxes=True,
                        subplot_titles=[label(m) for m in models] if panels else None,
                        horizontal_spacing=0.04, vertical_spacing=0.3 / n_rows)
    cells = [(i // PANEL_COLUMNS + 1, i % PANEL_COLUMNS + 1)
             for i in range(len(models) if panels else 1)]
    scatter = go.Scattergl if len(data) > WEBGL_ABOVE else go.Scatter
    lo = float(np.nanmin([data["d_h"].min(), data["d_a"].min(), 0.0])) - 0.1
    hi = float(np.nanmax([data["d_h"].max(), data["d_a"].max(), 1.0])) + 0.1
    groups = sorted(map(str, data[color_by].unique()))
    colors = {g: PALETTE[i % len(PALETTE)] for i, g in enumerate(groups)}
    many = len(groups) > MAX_LEGEND_GROUPS  # one trace, colour by group index, no legend
    dense = len(data) > MAX_POINTS
    line_colors = model_colors(models)
    symbols = {m: SYMBOLS[i % len(SYMBOLS)] for i, m in enumerate(models)}
    for (row, col), model in zip(cells, models if panels else [None], strict=True):
        first = (row, col) == (1, 1)
        part = data if model is None else data[data["model"].astype(str) == model]
        # y = x as a shape, not a trace: isolating a study from the legend keeps it.
        fig.add_shape(type="line", x0=lo, y0=lo, x1=hi, y1=hi, row=row, col=col,
                      line=dict(color="#888", dash="dash", width=1.5), layer="below")
        if dense:  # aggregate: counts on a grid instead of one marker per test
            counts, xe, ye = np.histogram2d(part["d_h"], part["d_a"], bins=DENSITY_BINS,
                                            range=[[lo, hi], [lo, hi]])
            fig.add_trace(go.Heatmap(
                z=np.where(counts.T > 0, counts.T, np.nan), x=(xe[:-1] + xe[1:]) / 2,
                y=(ye[:-1] + ye[1:]) / 2, colorscale="Viridis", showscale=first,
                colorbar=dict(title="tests"), name="tests",
                hovertemplate="human d %{x:.2f} · agent d %{y:.2f}<br>%{z} tests"
                              "<extra></extra>"), row=row, col=col)
        for group in ([] if dense else [None] if many else groups):
            rows = part if group is None else part[part[color_by].astype(str) == group]
            if rows.empty:
                continue
            color = (pd.Categorical(rows[color_by].astype(str), categories=groups).codes
                     if group is None else colors[group])
            fig.add_trace(scatter(
                x=rows["d_h"], y=rows["d_a"], mode="markers",
                name=f"{len(groups)} {color_by} values" if group is None else group,
                legendgroup=group or "all", showlegend=first,
                marker=dict(color=color, colorscale="Viridis" if group is None else None,
                            size=size.loc[rows.index], opacity=0.8,
                            symbol=(rows["model"].astype(str).map(symbols).to_numpy()
                                    if model is None else "circle"),
                            line=dict(color="white", width=0.5)),
                customdata=np.column_stack([rows["model"].astype(str), rows["study"].astype(str),
                                            rows["finding"].astype(str),
                                            rows["test"].astype(str)]),
                hovertemplate=("<b>%{customdata[3]}</b><br>%{customdata[1]} · %{customdata[2]}"
                               "<br>%{customdata[0]}<br>human d %{x:.3f} · agent d %{y:.3f}"
                               "<extra></extra>")), row=row, col=col)
        # One weighted fit per model: in its own panel, or in the model's colour when overlaid
        # (one pooled fit when too many models are overlaid for their lines to be told apart).
        per_model = not panels and len(models) <= MAX_FIT_LINES
        for fit_model in (models if per_model else [model]):
            rows = part[part["model"].astype(str) == fit_model] if per_model else part
            fit = _weighted_fit(rows, weight.loc[rows.index])
            if fit is None:
                continue
            slope, intercept = fit
            fig.add_trace(go.Scatter(
                x=[lo, hi], y=[intercept + slope * lo, intercept + slope * hi], mode="lines",
                name=f"fit · {fit_model}" if per_model else "weighted fit",
                legendgroup=f"fit {fit_model}" if per_model else "fit",
                showlegend=first,
                line=dict(color=line_colors[fit_model] if per_model else "#222", width=1.5),
                hovertemplate=f"{fit_model + ' ' if per_model else ''}fit: agent = "
                              f"{intercept:.2f} + {slope:.2f} · human<extra></extra>"),
                row=row, col=col)
        fig.update_xaxes(title_text="Human effect (d)" if row == n_rows else None,
                         range=[lo, hi], row=row, col=col)
        fig.update_yaxes(title_text="Agent effect (d)" if col == 1 else None, range=[lo, hi],
                         row=row, col=col)
    fig.update_annotations(font_size=12)  # panel titles (model, CCC) fit three abreast
    spot = hi - 0.1 * (hi - lo)
    for row, col in cells:  # the y = x line's name, just below its upper end
        fig.add_annotation(x=spot, y=spot, text="y = x", showarrow=False, xanchor="left",
                           yanchor="top", xshift=6, font=dict(color="#666", size=11),
                           row=row, col=col)
    if panels or len(models) != 1:
        heading = title or ("Human against agent effect sizes" if panels else
                            f"Human against agent effect sizes ({len(models)} models overlaid"
                            + (f"; panels need at most {MAX_PANELS}" if too_many else "") + ")")
        if not panels and not dense and len(models) <= len(SYMBOLS):
            key = " · ".join(f"{GLYPHS[symbols[m]]} {m}" for m in models)
            heading += f"<br><span style='font-size:12px'>{key}</span>"
    else:
        heading = title or f"Human against agent effect sizes · {label(models[0])}"
    apply_layout(fig, heading, height=480 if n_rows == 1 else 140 + 340 * n_rows,
                 legend=dict(title=color_by.capitalize(),
                             itemclick="toggleothers", itemdoubleclick="toggle"),
                 margin=dict(t=110))
    return fig


def _weighted_fit(part: pd.DataFrame, weight: pd.Series) -> tuple[float, float] | None:
    x, y, w = (part["d_h"].to_numpy(float), part["d_a"].to_numpy(float),
               weight.to_numpy(float))
    if len(x) < 2 or np.ptp(x) == 0:
        return None
    slope, intercept = np.polyfit(x, y, 1, w=np.sqrt(w))
    return float(slope), float(intercept)


def study_heatmap(table: pd.DataFrame, *, value: str = "pas", title: str | None = None,
                  zmin: float = 0.0, zmax: float = 1.0) -> go.Figure:
    """Study (rows) × model (columns) heat table of ``value`` (PAS, ECS), annotated while the
    cells stay legible; the hover names study, model, value and, when ``table`` has an ``n``
    column, the count it rests on."""
    table, title = plot_text(table), plot_text(title)  # labels from data show literally
    grid = table.pivot_table(index="study", columns="model", values=value, observed=True,
                             dropna=False).sort_index(ascending=False)
    z = grid.to_numpy(dtype=float)
    hover = "%{y} · %{x}<br>" + value.upper() + " %{z:.3f}"
    counts = None
    if "n" in table:
        counts = (table.pivot_table(index="study", columns="model", values="n", observed=True,
                                    dropna=False).reindex(index=grid.index, columns=grid.columns)
                  .to_numpy(dtype=float))
        hover += "<br>n = %{customdata}"
    annotate = z.size <= 400  # numbers in cells only while they stay legible
    fig = go.Figure(go.Heatmap(
        z=z, x=[str(c) for c in grid.columns], y=[str(i) for i in grid.index], zmin=zmin,
        zmax=zmax, colorscale="Cividis", colorbar=dict(title=value.upper()),
        customdata=counts,
        text=np.vectorize(lambda v: "–" if np.isnan(v) else f"{v:.2f}")(z) if annotate else None,
        texttemplate="%{text}" if annotate else None,
        hovertemplate=hover + "<extra></extra>"))
    # Long model names are turned on the top axis: leave them room below the title.
    longest = max((len(str(c)) for c in grid.columns), default=0)
    top = 110 + min(120, 5 * max(0, longest - 16)) if len(grid.columns) > 1 else 110
    apply_layout(fig, title or f"{value.upper()} per study and model",
                 xaxis=dict(title="", side="top", showgrid=False),
                 yaxis=dict(title="", showgrid=False, showticklabels=len(grid) <= 60),
                 margin=dict(t=top), height=min(900, max(300, top + 20 + 28 * len(grid))))
    return fig


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
    fig = make_subplots(rows=1, cols=2 if has_cost else 1, shared_yaxes=True,
                        column_widths=[0.7, 0.3] if has_cost else None,
                        horizontal_spacing=0.03)
    for metric, color in (("pas", PALETTE[0]), ("ecs", PALETTE[1])):
        published = f"config_{metric}"
        column = (published if published in data and data[published].notna().any()
                  else f"mean_study_{metric}")
        if column not in data or data[column].isna().all():
            continue
        error = None
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
        fig.update_xaxes(title_text="US$", rangemode="tozero", row=1, col=2)
    fig.update_xaxes(title_text="score", row=1, col=1)
    apply_layout(fig, title or "Configurations by replication score, with cost",
                 barmode="group", height=max(300, 120 + (50 if len(data) <= 12 else 22)
                                             * len(data)))
    fig.update_yaxes(type="category", autorange="reversed", row=1, col=1)
    return fig
