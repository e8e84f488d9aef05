"""Vulnerability-detection figures: reliability diagram, tier leaderboard, lucky-guess view,
per-prompt-type comparison.

Pure functions from the tidy tables of :mod:`kbench_core.vuln` (``tiers``, ``reliability``,
``sui_contributions``) to plotly figures; no metric is computed here.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from kbench_core.figures.base import PALETTE, apply_layout, model_colors, rgba
from kbench_core.text import plot_text
from kbench_core.vuln import METRIC_LABELS

__all__ = ["fixed_claims_chart", "lucky_guess_chart", "prompt_type_chart", "reliability_diagram",
           "tier_leaderboard"]

_TOP, _BOTTOM = 60, 150  # margins (px) of figures with the legend below the x-axis title


def _legend_below(height: int) -> dict:
    """A horizontal legend 75 px under the plot area, clear of the x-axis title."""
    return dict(orientation="h", yanchor="top", x=0, traceorder="normal",
                y=-75 / max(height - _TOP - _BOTTOM, 60))
_COMPONENT_COLORS = {"f2": "#0072B2", "tdr": "#009E73", "finding_precision": "#E69F00",
                     "reasoning": "#CC79A7", "calibration": "#56B4E9"}


def _errors(frame: pd.DataFrame, metric: str, color: str) -> dict | None:
    low, high = f"{metric}_low", f"{metric}_high"
    if low not in frame or high not in frame or frame[low].isna().all():
        return None
    return dict(type="data", symmetric=False, color=color, thickness=1.2, width=4,
                array=(frame[high] - frame[metric]).clip(lower=0).fillna(0).to_numpy(),
                arrayminus=(frame[metric] - frame[low]).clip(lower=0).fillna(0).to_numpy())


def reliability_diagram(table: pd.DataFrame, *, colors: dict[str, str] | None = None,
                        title: str | None = None, binning: str = "uniform") -> go.Figure:
    """Accuracy per confidence bin against the diagonal, one colour per model.

    ``table`` is :func:`kbench_core.vuln.reliability` output for one split (one row per
    model × non-empty bin, with the model's ``ece``/``mce``/``n``). Top: each model's
    accuracy at its bins' mean confidence (Wilson 95% bars), the area between that curve
    and the diagonal shaded (the calibration gap), ECE and MCE in the legend. Bottom: the
    share of the model's answers in each bin (the confidence histogram), drawn over the
    bin's extent (equal-mass bins have unequal widths).
    """
    # labels from data show literally
    table, colors, title = (
        plot_text(table), plot_text(colors), plot_text(title))
    colors = colors or model_colors(table["model"].unique() if len(table) else [])
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.72, 0.28],
                        vertical_spacing=0.05)
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="perfect calibration",
                             line=dict(color="#888", dash="dash", width=1.5),
                             hoverinfo="skip"), row=1, col=1)
    for model, rows in table.groupby("model", observed=True, sort=True):
        rows = rows.sort_values("mean_confidence")
        color = colors.get(str(model), PALETTE[0])
        x = rows["mean_confidence"].to_numpy()
        y = rows["accuracy"].to_numpy()
        group = f"model-{model}"
        # The gap of each bin as a translucent bar from the diagonal to the accuracy: visible
        # even for a model whose answers fill a single bin.
        fig.add_trace(go.Scatter(
            x=np.repeat(x, 3), y=np.column_stack([x, y, np.full(x.size, np.nan)]).ravel(),
            mode="lines", line=dict(color=rgba(color, 0.35), width=9), hoverinfo="skip",
            showlegend=False, legendgroup=group, connectgaps=False), row=1, col=1)
        # Gap shading: an invisible trace on the diagonal, then the curve filled to it.
        fig.add_trace(go.Scatter(x=x, y=x, mode="lines", line=dict(width=0),
                                 hoverinfo="skip", showlegend=False, legendgroup=group),
                      row=1, col=1)
        ece, mce, n = rows["ece"].iat[0], rows["mce"].iat[0], int(rows["n"].iat[0])
        fig.add_trace(go.Scatter(
            x=x, y=rows["accuracy"], mode="lines+markers", fill="tonexty",
            fillcolor=rgba(color, 0.18), line=dict(color=color, width=2.5),
            marker=dict(size=8, line=dict(color="white", width=1)),
            name=f"{model} · ECE {ece:.3f} · MCE {mce:.3f} (n = {n:,})", legendgroup=group,
            error_y=_errors(rows, "accuracy", color),
            customdata=np.column_stack([rows["lo"], rows["hi"], rows["count"], rows["gap"]]),
            hovertemplate=(f"<b>{model}</b><br>bin (%{{customdata[0]:.3f}}, "
                           "%{customdata[1]:.3f}]<br>mean confidence %{x:.3f}"
                           "<br>accuracy %{y:.3f}<br>confidence − accuracy "
                           "%{customdata[3]:+.3f}<br>n = %{customdata[2]}<extra></extra>")),
            row=1, col=1)
        share = rows["count"] / rows["n"]
        fig.add_trace(go.Bar(
            x=(rows["lo"] + rows["hi"]) / 2, y=share, width=(rows["hi"] - rows["lo"]) * 0.96,
            marker=dict(color=rgba(color, 0.35), line=dict(color=color, width=1)),
            name=f"{model} answers", legendgroup=group, showlegend=False,
            customdata=np.column_stack([rows["lo"], rows["hi"], rows["count"]]),
            hovertemplate=(f"<b>{model}</b><br>bin (%{{customdata[0]:.3f}}, "
                           "%{customdata[1]:.3f}]<br>%{y:.1%} of answers "
                           "(n = %{customdata[2]})<extra></extra>")),
            row=2, col=1)
    bins = "equal-mass" if binning == "quantile" else "equal-width"
    apply_layout(fig, title or f"Reliability: accuracy against stated confidence ({bins} bins)",
                 barmode="overlay", height=660, legend=_legend_below(660),
                 margin=dict(t=_TOP, b=_BOTTOM, r=30))
    # A little room beyond [0, 1], so points at 0 and 1 are not cut in half.
    fig.update_xaxes(range=[-0.02, 1.03], row=1, col=1)
    fig.update_xaxes(range=[-0.02, 1.03], title_text="Stated confidence", row=2, col=1)
    fig.update_yaxes(range=[0, 1.04], title_text="Accuracy (95% CI)", row=1, col=1)
    fig.update_yaxes(title_text="Share of answers", tickformat=".0%", rangemode="tozero",
                     row=2, col=1)
    return fig


def tier_leaderboard(tiers: pd.DataFrame, contributions: pd.DataFrame, *,
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
    fig = go.Figure()
    for component, rows in contributions.groupby("component", sort=False):
        rows = rows.set_index(rows["model"].astype(str)).reindex(models)
        label = str(rows["label"].dropna().iat[0]) if rows["label"].notna().any() else component
        fig.add_trace(go.Bar(
            y=models, x=rows["contribution"], orientation="h", name=label,
            marker_color=_COMPONENT_COLORS.get(str(component), PALETTE[0]),
            customdata=np.column_stack([rows["value"], rows["weight"]]),
            hovertemplate=("%{y}<br>" + label + " %{customdata[0]:.3f} × weight "
                           "%{customdata[1]:.3f} = %{x:.3f}<extra></extra>")))
    flagged = order.get("sui_renormalised", pd.Series(False, index=order.index)).fillna(False)
    fig.add_trace(go.Scatter(
        y=models, x=order["sui"], mode="markers", cliponaxis=False,
        marker=dict(color="#222", size=8, symbol="diamond"), name="SUI (95% CI)",
        error_x=_errors(order.assign(model=models), "sui", "#222"),
        hovertemplate="%{y}<br>SUI %{x:.3f}<extra></extra>"))
    right = order["sui_high"].fillna(order["sui"]) if "sui_high" in order else order["sui"]
    text = [f"{v:.3f}" + (" *" if f else "") if pd.notna(v) else "n/a"
            for v, f in zip(order["sui"], flagged, strict=True)]
    fig.add_trace(go.Scatter(
        y=models, x=right.fillna(0) + 0.015, mode="text", text=text, cliponaxis=False,
        textposition="middle right", showlegend=False, hoverinfo="skip"))
    caption = "* a component was undefined; SUI renormalised over the others" \
        if flagged.any() else None
    height = max(380, 230 + 48 * len(models))
    apply_layout(fig, title or "Security Understanding Index (SUI) and what it is made of",
                 barmode="stack", legend=_legend_below(height),
                 margin=dict(t=_TOP, b=_BOTTOM, r=70), height=height,
                 xaxis=dict(title="SUI = Σ weight × component", range=[0, 1.12]),
                 yaxis=dict(title=""))
    if caption:
        fig.add_annotation(text=caption, xref="paper", yref="paper", x=1, y=1.02,
                           showarrow=False, xanchor="right", yanchor="bottom",
                           font=dict(size=11, color="#555"))
    return fig


def lucky_guess_chart(tiers: pd.DataFrame, *, colors: dict[str, str] | None = None,
                      title: str | None = None) -> go.Figure:
    """Accuracy against target detection rate per model: height above y = x is the
    lucky-guess indicator (LGI = accuracy − TDR), i.e. correct verdicts without the target."""
    # labels from data show literally
    tiers, colors, title = (
        plot_text(tiers), plot_text(colors), plot_text(title))
    colors = colors or model_colors(tiers["model"].unique())
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0, 1, 0, 0], y=[0, 1, 1, 0], fill="toself", mode="none",
                             fillcolor="rgba(213,94,0,0.06)", hoverinfo="skip",
                             name="accuracy above TDR (lucky guessing)"))
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="accuracy = TDR",
                             line=dict(color="#888", dash="dash", width=1.5),
                             hoverinfo="skip"))
    for _, row in tiers.sort_values("model").iterrows():
        one = tiers[tiers["model"] == row["model"]]
        color = colors.get(str(row["model"]), PALETTE[0])
        fig.add_trace(go.Scatter(
            x=one["tdr"], y=one["accuracy"], mode="markers+text", name=str(row["model"]),
            text=[str(row["model"])], cliponaxis=False,
            textposition="top left" if row["tdr"] > 0.75 else "top right",
            marker=dict(color=color, size=13, line=dict(color="white", width=1)),
            error_x=_errors(one, "tdr", color), error_y=_errors(one, "accuracy", color),
            customdata=np.column_stack([one["lgi"], one["lucky_guess_rate"], one["n"]]),
            hovertemplate=(f"<b>{row['model']}</b><br>TDR %{{x:.3f}}, accuracy %{{y:.3f}}"
                           "<br>LGI %{customdata[0]:+.3f}<br>lucky-guess rate "
                           "%{customdata[1]:.3f}<br>n = %{customdata[2]}<extra></extra>")))
    apply_layout(fig, title or "Right verdicts without finding the target (lucky guesses)",
                 xaxis=dict(title="Target detection rate (95% CI)", range=[-0.02, 1.04]),
                 yaxis=dict(title="Accuracy of the verdict (95% CI)", range=[-0.02, 1.1]),
                 legend=_legend_below(560), margin=dict(t=_TOP, b=_BOTTOM), height=560)
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
    colors = colors or model_colors(tiers["model"].unique())
    fig = go.Figure()
    prompts = [str(p) for p in pd.unique(tiers["prompt_type"].astype(str))]
    for model, rows in tiers.groupby("model", observed=True, sort=True):
        color = colors.get(str(model), PALETTE[0])
        fig.add_trace(go.Bar(
            x=rows["prompt_type"].astype(str), y=rows[metric], name=str(model),
            marker_color=color, error_y=_errors(rows, metric, "#333"),
            customdata=rows["n"],
            hovertemplate=(f"<b>{model}</b><br>%{{x}}: %{{y:.3f}}<br>n = %{{customdata}}"
                           "<extra></extra>")))
    label = METRIC_LABELS.get(metric, metric)
    apply_layout(fig, title or f"{label} by prompt type", barmode="group",
                 xaxis=dict(title="Prompt type", type="category", categoryorder="array",
                            categoryarray=prompts),
                 yaxis=dict(title=label + (" (95% CI)" if f"{metric}_low" in tiers else "")),
                 legend=_legend_below(500), margin=dict(t=_TOP, b=_BOTTOM), height=500)
    return fig


def fixed_claims_chart(table: pd.DataFrame, *, title: str | None = None) -> go.Figure:
    """Per detector (and judge), the share of fixed contracts where it still claims the fixed
    vulnerability beside its TDR on the vulnerable versions, each with its Wilson interval,
    from :func:`kbench_core.vuln.fixed_claims`. A detector that understands the bug finds it
    (TDR high) and lets it go once fixed (claim rate low)."""
    table, title = plot_text(table), plot_text(title)  # labels from data show literally
    data = table.copy()
    label = data["model"].astype(str)
    if "judge" in data and data["judge"].nunique() > 1:
        label = label + " · " + data["judge"].astype(str)
    data["label"] = label
    data = data.sort_values("fixed_claim_rate", kind="stable")
    fig = go.Figure()
    for metric, name, color, symbol in (
            ("tdr", "TDR on vulnerable versions (higher is better)", PALETTE[2], "circle"),
            ("fixed_claim_rate", "still claims the fixed bug (lower is better)", PALETTE[5],
             "x")):
        fig.add_trace(go.Scatter(
            x=data[metric], y=data["label"], mode="markers", name=name,
            marker=dict(color=color, size=10, symbol=symbol),
            error_x=_errors(data, metric, color),
            customdata=np.column_stack([data["n_fixed"], data["n_vulnerable"]]),
            hovertemplate="%{y}<br>" + name + " %{x:.3f}<br>fixed n = %{customdata[0]}, "
                          "vulnerable n = %{customdata[1]}<extra></extra>"))
    height = max(320, 200 + 36 * len(data))
    apply_layout(fig, title or "Fixed versions: does the detector let a fixed bug go?",
                 xaxis=dict(title="share (95% Wilson interval)", range=[-0.02, 1.02]),
                 yaxis=dict(title="", type="category"), legend=_legend_below(height),
                 height=height)
    return fig
