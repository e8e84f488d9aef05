"""Vulnerability-detection figures: tier leaderboard, lucky-guess view, per-prompt-type
comparison, and the reliability diagram (:mod:`kbench_core.figures.calibration`, re-exported).

Pure functions from the tidy tables of :mod:`kbench_core.vuln` (``tiers``, ``reliability``,
``sui_contributions``) to plotly figures; no metric is computed here.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from kbench_core.figures.base import (
    PALETTE,
    apply_layout,
    category_ticks,
    distinct_styles,
    heatmap_figure,
    model_colors,
    name_rows,
    with_legend_below,
)

# The reliability diagram is every family's (any stated confidence): it lives in
# figures.calibration and is still offered here.
from kbench_core.figures.calibration import (  # noqa: F401  (re-exported)
    MAX_OVERLAID,
    PANEL_COLUMNS,
    reliability_diagram,
)
from kbench_core.figures.calibration import error_bars as _errors
from kbench_core.text import count_noun, plot_text
from kbench_core.vuln import METRIC_LABELS

__all__ = ["fixed_claims_chart", "lucky_guess_chart", "prompt_type_chart", "reliability_diagram",
           "sui_leaderboard", "tier_leaderboard"]

MAX_LABELLED = 12  # lucky-guess scatter up to this many models; beyond, a ranked dumbbell


_COMPONENT_COLORS = {"f2": "#0072B2", "tdr": "#009E73", "finding_precision": "#E69F00",
                     "reasoning": "#CC79A7", "calibration": "#56B4E9"}


def sui_leaderboard(tiers: pd.DataFrame, contributions: pd.DataFrame, *,
                    title: str | None = None) -> go.Figure:
    """SUI per model as stacked bars of its weighted components, best on top.

    ``tiers`` is :func:`kbench_core.vuln.tiers` output (one row per model; ``sui_low`` /
    ``sui_high`` drawn when present), ``contributions`` the matching
    :func:`kbench_core.vuln.sui_contributions`.
    """
    # labels from data show literally
    tiers, contributions, title = (
        plot_text(tiers), plot_text(contributions), plot_text(title))
    order = tiers.sort_values("sui", ascending=True, na_position="first")
    models = order["model"].astype(str).tolist()
    # Traces are gathered as plain dicts and handed to plotly in one call (trace by trace,
    # each validated on its own, the chart cost 0.04 s of a widget change on a big run).
    traces: list[dict] = []
    for component, rows in contributions.groupby("component", sort=False):
        rows = rows.set_index(rows["model"].astype(str)).reindex(models)
        label = str(rows["label"].dropna().iat[0]) if rows["label"].notna().any() else component
        traces.append(dict(
            type="bar", y=models, x=rows["contribution"], orientation="h", name=label,
            marker_color=_COMPONENT_COLORS.get(str(component), PALETTE[0]),
            customdata=np.column_stack([rows["value"], rows["weight"]]),
            hovertemplate=("%{y}<br>" + label + " %{customdata[0]:.3f} × weight "
                           "%{customdata[1]:.3f} = %{x:.3f}<extra></extra>")))
    flagged = order.get("sui_renormalised", pd.Series(False, index=order.index)).fillna(False)
    interval = _errors(order.assign(model=models), "sui", "#222")
    traces.append(dict(
        type="scatter", y=models, x=order["sui"], mode="markers", cliponaxis=False,
        # the legend promises an interval only where one is drawn
        marker=dict(color="#222", size=8, symbol="diamond"),
        name="SUI (95% CI)" if interval is not None else "SUI",
        error_x=interval,
        hovertemplate="%{y}<br>SUI %{x:.3f}<extra></extra>"))
    right = order["sui_high"].fillna(order["sui"]) if "sui_high" in order else order["sui"]
    text = [f"{v:.3f}" + (" *" if f else "") if pd.notna(v) else "n/a"
            for v, f in zip(order["sui"], flagged, strict=True)]
    traces.append(dict(
        type="scatter", y=models, x=right.fillna(0) + 0.015, mode="text", text=text,
        cliponaxis=False, textposition="middle right", showlegend=False, hoverinfo="skip"))
    fig = go.Figure(dict(data=traces))
    caption = "* a component was undefined; SUI renormalised over the others" \
        if flagged.any() else None
    row_px = name_rows(models, 40 if len(models) <= 12 else 22)
    height = 160 + row_px * max(len(models), 2)
    apply_layout(fig, title or "Security Understanding Index (SUI) and what it is made of",
                 subtitle=caption, barmode="stack", margin=dict(r=60), height=height,
                 xaxis=dict(title="SUI = Σ weight × component", range=[0, 1.15]),
                 yaxis=dict(title="", type="category"))
    category_ticks(fig, "yaxis", models, row_px=row_px, wrap=True)
    labels = [t.name for t in fig.data if t.showlegend is not False and t.name]
    with_legend_below(fig, labels, int(fig.layout.height))
    return fig


def lucky_guess_chart(tiers: pd.DataFrame, *, colors: dict[str, str] | None = None,
                      title: str | None = None) -> go.Figure:
    """Accuracy against target detection rate per model: height above y = x is the
    lucky-guess indicator (LGI = accuracy − TDR), i.e. correct verdicts without the target."""
    # labels from data show literally
    tiers, colors, title = (
        plot_text(tiers), plot_text(colors), plot_text(title))
    models = sorted(map(str, tiers["model"].unique()))
    styles = distinct_styles(models, colors or model_colors(models))
    heading = title or "Right verdicts without finding the target (lucky guesses)"
    if len(models) > MAX_LABELLED:
        return _lucky_dumbbell(tiers, heading)
    # Traces as plain dicts, handed to plotly in one call (one add_trace per model, each
    # validated on its own, cost 0.026 s of a widget change on a big run).
    traces: list[dict] = [
        dict(type="scatter", x=[0, 1, 0, 0], y=[0, 1, 1, 0], fill="toself", mode="none",
             fillcolor="rgba(213,94,0,0.06)", hoverinfo="skip",
             name="accuracy above TDR (lucky guessing)"),
        dict(type="scatter", x=[0, 1], y=[0, 1], mode="lines", name="accuracy = TDR",
             line=dict(color="#888", dash="dash", width=1.5), hoverinfo="skip")]
    # a series per row in model order (a model's series holds all of its rows)
    for model in tiers.sort_values("model")["model"].tolist():
        one = tiers[tiers["model"] == model]
        style = styles[str(model)]
        color = style.color
        traces.append(dict(
            type="scatter", x=one["tdr"], y=one["accuracy"], mode="markers", name=str(model),
            marker=dict(color=color, size=12, symbol=style.symbol,
                        line=dict(color="white", width=1)),
            error_x=_errors(one, "tdr", color), error_y=_errors(one, "accuracy", color),
            customdata=np.column_stack([one["lgi"], one["lucky_guess_rate"], one["n"]]),
            hovertemplate=(f"<b>{model}</b><br>TDR %{{x:.3f}}, accuracy %{{y:.3f}}"
                           "<br>LGI %{customdata[0]:+.3f}<br>lucky-guess rate "
                           "%{customdata[1]:.3f}<br>n = %{customdata[2]}<extra></extra>")))
    fig = go.Figure(dict(data=traces))
    apply_layout(fig, heading, height=480,
                 xaxis=dict(title="Target detection rate (95% CI)", range=[-0.02, 1.04]),
                 yaxis=dict(title="Accuracy of the verdict (95% CI)", range=[-0.02, 1.1]))
    labels = [t.name for t in fig.data if t.name]
    with_legend_below(fig, labels, int(fig.layout.height))
    return fig


def _lucky_dumbbell(tiers: pd.DataFrame, heading: str) -> go.Figure:
    """Many models: one row each (largest LGI on top), TDR and accuracy as two markers joined
    by a line whose length is the lucky-guess indicator."""
    data = tiers.assign(model=tiers["model"].astype(str)).sort_values(
        "lgi", ascending=False, na_position="last", kind="stable")
    models = data["model"].tolist()
    traces: list[dict] = [dict(  # plain dicts, handed to plotly in one call
        type="scatter",
        x=np.column_stack([data["tdr"], data["accuracy"], np.full(len(data), np.nan)]).ravel(),
        y=np.repeat(models, 3), mode="lines", line=dict(color="#bbb", width=2),
        hoverinfo="skip", showlegend=False)]
    for column, name, color, symbol in (("tdr", "target detection rate", "#009E73", "circle"),
                                        ("accuracy", "accuracy", "#D55E00", "diamond")):
        traces.append(dict(
            type="scatter", x=data[column], y=models, mode="markers", name=name,
            marker=dict(color=color, size=8, symbol=symbol),
            customdata=data["lgi"],
            hovertemplate=("<b>%{y}</b><br>" + name + " %{x:.3f}<br>LGI %{customdata:+.3f}"
                           "<extra></extra>")))
    fig = go.Figure(dict(data=traces))
    apply_layout(fig, heading,
                 subtitle=f"{count_noun(len(models), 'model')}, largest gap (LGI) on top",
                 height=160 + 18 * len(models),
                 xaxis=dict(title="Rate", range=[-0.02, 1.04]),
                 yaxis=dict(title="", type="category", autorange="reversed"))
    category_ticks(fig, "yaxis", models, row_px=18)
    with_legend_below(fig, ["target detection rate", "accuracy"], int(fig.layout.height))
    return fig


def prompt_type_chart(tiers: pd.DataFrame, *, metric: str = "tdr",
                      colors: dict[str, str] | None = None,
                      title: str | None = None) -> go.Figure:
    """One metric per prompt type (x) and model (colour), with its interval when the table
    has one; ``tiers`` is split by ``("model", "prompt_type")``."""
    # labels from data show literally
    tiers, colors, title = (
        plot_text(tiers), plot_text(colors), plot_text(title))
    if metric not in tiers:
        raise ValueError(f"metric must be a column of the tiers table; got {metric!r}")
    models = sorted(map(str, tiers["model"].unique()))
    label = METRIC_LABELS.get(metric, metric)
    prompts = [str(p) for p in pd.unique(tiers["prompt_type"].astype(str))]
    if len(models) > MAX_LABELLED:  # grouped bars beyond a dozen models: a heatmap instead
        grid = tiers.assign(model=tiers["model"].astype(str),
                            prompt_type=tiers["prompt_type"].astype(str)).pivot_table(
            index="model", columns="prompt_type", values=metric, observed=True)
        grid = grid.reindex(columns=prompts)
        grid = grid.loc[grid.mean(axis=1).sort_values(ascending=False, kind="stable").index]
        values = grid.to_numpy(dtype=float)
        low = float(np.nanmin(values)) if np.isfinite(values).any() else 0.0
        high = float(np.nanmax(values)) if np.isfinite(values).any() else 1.0
        return heatmap_figure(
            grid, title=title or f"{label} by prompt type",
            subtitle=f"{count_noun(len(models), 'model')}, highest mean on top",
            zmin=min(low, 0.0), zmax=max(high, 1.0) if high <= 1 else high,
            colorbar_title=label if len(label) <= 12 else metric.upper(),
            hovertemplate="%{y}<br>%{x}: " + label + " %{z:.3f}", wrap_rows=True)
    styles = distinct_styles(models, colors or model_colors(models))
    traces: list[dict] = []  # plain dicts, handed to plotly in one call
    for model, rows in tiers.groupby("model", observed=True, sort=True):
        style = styles[str(model)]
        traces.append(dict(
            type="bar", x=rows["prompt_type"].astype(str), y=rows[metric], name=str(model),
            marker=dict(color=style.color, pattern=dict(shape=style.pattern)),
            error_y=_errors(rows, metric, "#333"),
            customdata=rows["n"],
            hovertemplate=(f"<b>{model}</b><br>%{{x}}: %{{y:.3f}}<br>n = %{{customdata}}"
                           "<extra></extra>")))
    fig = go.Figure(dict(data=traces))
    apply_layout(fig, title or f"{label} by prompt type", barmode="group",
                 xaxis=dict(title="Prompt type", type="category", categoryorder="array",
                            categoryarray=prompts),
                 yaxis=dict(title=label + (" (95% CI)" if f"{metric}_low" in tiers else "")),
                 height=440)
    with_legend_below(fig, models, int(fig.layout.height))
    return fig


MAX_FIXED_ROWS = 24  # fixed-versions rows of two lines' height up to this many; beyond, thinner


def fixed_claims_chart(table: pd.DataFrame, *, title: str | None = None) -> go.Figure:
    """Per detector (and judge), the share of fixed contracts where it still claims the fixed
    vulnerability beside its TDR on the vulnerable versions, each with its Wilson interval,
    from :func:`kbench_core.vuln.fixed_claims`. A detector that understands the bug finds it
    (TDR high) and lets it go once fixed (claim rate low).

    One row each, named on the axis (a printed figure names every row: no scatter whose
    points only a hover names), the two markers side by side within the row, none cut at the
    axis' end; up to :data:`MAX_FIXED_ROWS` rows tall enough for a name in two lines,
    beyond, thinner rows (a figure taller than a page is exported as pages of rows)."""
    table, title = plot_text(table), plot_text(title)  # labels from data show literally
    data = table.copy()
    label = data["model"].astype(str)
    several = "judge" in data and data["judge"].nunique() > 1
    if several:
        label = label + " · " + data["judge"].astype(str)
    data["label"] = label
    data = data.sort_values("fixed_claim_rate", kind="stable")
    heading = title or "Fixed versions: does the detector let a fixed bug go?"
    fig = go.Figure()
    for metric, name, color, symbol in (
            ("tdr", "TDR on vulnerable versions (higher is better)", PALETTE[2], "circle"),
            ("fixed_claim_rate", "still claims the fixed bug (lower is better)", PALETTE[5],
             "x")):
        fig.add_trace(go.Scatter(
            x=data[metric], y=data["label"], mode="markers", name=name, orientation="h",
            marker=dict(color=color, size=10 if len(data) <= MAX_FIXED_ROWS else 7,
                        symbol=symbol), cliponaxis=False,
            error_x=_errors(data, metric, color),
            customdata=np.column_stack([data["n_fixed"], data["n_vulnerable"]]),
            hovertemplate="%{y}<br>" + name + " %{x:.3f}<br>fixed n = %{customdata[0]}, "
                          "vulnerable n = %{customdata[1]}<extra></extra>"))
    row_px = 34 if len(data) <= MAX_FIXED_ROWS else 20
    # scattermode "group": the two markers of a row sit side by side, never on each other
    apply_layout(fig, heading, scattermode="group", scattergap=0.4,
                 subtitle=(None if len(data) <= MAX_FIXED_ROWS else
                           f"{len(data)} detector rows, lowest claim rate on top"),
                 xaxis=dict(title="share (95% CI)", range=[-0.03, 1.05]),
                 # the lowest claim rate (the best) on top, as in every ranking
                 yaxis=dict(title="", type="category", categoryorder="array",
                            categoryarray=list(data["label"]), autorange="reversed"),
                 height=150 + row_px * max(len(data), 2))
    with_legend_below(fig)
    category_ticks(fig, "yaxis", list(data["label"]), row_px=row_px)
    return fig


tier_leaderboard = sui_leaderboard  # the chart's old name, kept for callers that use it
