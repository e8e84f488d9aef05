"""The reliability diagram: accuracy against stated confidence, per model, for every family
whose answers carry a confidence (the vulnerability detectors', a multiple-choice family's).

A pure function from :func:`kbench_core.calibration.reliability_by` (or
:func:`kbench_core.vuln.reliability`) tables to a plotly figure; no metric is computed here.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from kbench_core.figures.base import (
    apply_layout,
    distinct_styles,
    model_colors,
    rgba,
    set_panels,
    with_legend_below,
)
from kbench_core.text import count_noun, plot_text

__all__ = ["MAX_OVERLAID", "PANEL_COLUMNS", "error_bars", "reliability_diagram"]

MAX_OVERLAID = 3  # reliability curves drawn on one pair of axes; beyond, one panel each
PANEL_COLUMNS = 3


def _debiased(rows: pd.DataFrame) -> str:
    """The debiased ℓ2 calibration error beside the plug-in ECE (biased upward; the
    figure's subtitle says so), when the reliability table carries it."""
    if "ece_l2_debiased" not in rows or not np.isfinite(rows["ece_l2_debiased"].iat[0]):
        return ""
    return f" (deb. {rows['ece_l2_debiased'].iat[0]:.3f})"

def error_bars(frame: pd.DataFrame, metric: str, color: str) -> dict | None:
    """Asymmetric error bars from ``<metric>_low``/``<metric>_high`` (None without them)."""
    low, high = f"{metric}_low", f"{metric}_high"
    if low not in frame or high not in frame or frame[low].isna().all():
        return None
    return dict(type="data", symmetric=False, color=color, thickness=1.2, width=4,
                array=(frame[high] - frame[metric]).clip(lower=0).fillna(0).to_numpy(),
                arrayminus=(frame[metric] - frame[low]).clip(lower=0).fillna(0).to_numpy())


def reliability_diagram(table: pd.DataFrame, *, colors: dict[str, str] | None = None,
                        title: str | None = None, binning: str = "uniform") -> go.Figure:
    """Accuracy per confidence bin against the diagonal, one colour per model.

    ``table`` is :func:`kbench_core.calibration.reliability_by` (any family's confidences,
    grouped by ``model``) or :func:`kbench_core.vuln.reliability` output for one split (one
    row per model × non-empty bin, with the model's ``ece``/``mce``/``n``). Top: each model's
    accuracy at its bins' mean confidence (Wilson 95% bars), the area between that curve
    and the diagonal shaded (the calibration gap), ECE and MCE in the legend. Bottom: the
    share of the model's answers in each bin (the confidence histogram), drawn over the
    bin's extent (equal-mass bins have unequal widths).
    """
    # labels from data show literally
    table, colors, title = (
        plot_text(table), plot_text(colors), plot_text(title))
    models = sorted(map(str, table["model"].unique())) if len(table) else []
    styles = distinct_styles(models, colors or model_colors(models))
    bins = "equal-mass" if binning == "quantile" else "equal-width"
    heading = title or f"Reliability: accuracy against stated confidence ({bins} bins)"
    if len(models) > MAX_OVERLAID:
        return _reliability_panels(table, models, styles, heading)
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.64, 0.36],
                        vertical_spacing=0.05)
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="perfect calibration",
                             line=dict(color="#888", dash="dash", width=1.5),
                             hoverinfo="skip"), row=1, col=1)
    labels = ["perfect calibration"]
    for model, rows in table.groupby("model", observed=True, sort=True):
        rows = rows.sort_values("mean_confidence")
        style = styles[str(model)]
        color = style.color
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
        # MCE and n in the hover: with the debiased ECE beside the plug-in, the entry must
        # still fit a one-column legend
        name = f"{model} · ECE {ece:.3f}{_debiased(rows)}"
        labels.append(name)
        fig.add_trace(go.Scatter(
            x=x, y=rows["accuracy"], mode="lines+markers", fill="tonexty",
            fillcolor=rgba(color, 0.18), line=dict(color=color, width=2.5, dash=style.dash),
            marker=dict(size=8, symbol=style.symbol, line=dict(color="white", width=1)),
            name=name, legendgroup=group,
            error_y=error_bars(rows, "accuracy", color),
            customdata=np.column_stack([rows["lo"], rows["hi"], rows["count"], rows["gap"]]),
            hovertemplate=(f"<b>{model}</b><br>bin (%{{customdata[0]:.3f}}, "
                           "%{customdata[1]:.3f}]<br>mean confidence %{x:.3f}"
                           "<br>accuracy %{y:.3f}<br>confidence − accuracy "
                           "%{customdata[3]:+.3f}<br>n = %{customdata[2]}"
                           f"<br>ECE {ece:.3f} · MCE {mce:.3f} · {n:,} answers"
                           "<extra></extra>")),
            row=1, col=1)
        share = rows["count"] / rows["n"]
        fig.add_trace(go.Bar(
            x=(rows["lo"] + rows["hi"]) / 2, y=share, width=(rows["hi"] - rows["lo"]) * 0.96,
            marker=dict(color=rgba(color, 0.35), line=dict(color=color, width=1),
                        pattern=dict(shape=style.pattern)),
            name=f"{model} answers", legendgroup=group, showlegend=False,
            customdata=np.column_stack([rows["lo"], rows["hi"], rows["count"]]),
            hovertemplate=(f"<b>{model}</b><br>bin (%{{customdata[0]:.3f}}, "
                           "%{customdata[1]:.3f}]<br>%{y:.1%} of answers "
                           "(n = %{customdata[2]})<extra></extra>")),
            row=2, col=1)
    apply_layout(fig, heading, barmode="overlay", height=560, margin=dict(r=30),
                 subtitle="ECE is the plug-in (biased upward); deb. the debiased ℓ2 error")
    with_legend_below(fig, labels, int(fig.layout.height))
    # A little room beyond [0, 1], so points at 0 and 1 are not cut in half.
    fig.update_xaxes(range=[-0.02, 1.03], row=1, col=1)
    fig.update_xaxes(range=[-0.02, 1.03], title_text="Stated confidence", row=2, col=1)
    fig.update_yaxes(range=[0, 1.04], title_text="Accuracy (95% CI)", row=1, col=1)
    fig.update_yaxes(title_text="Share of answers", tickformat=".0%", rangemode="tozero", nticks=3,
                     row=2, col=1)
    return fig


def _reliability_panels(table: pd.DataFrame, models: list[str], styles: dict,
                        heading: str) -> go.Figure:
    """Small multiples: one panel per model on shared [0, 1] axes; the curve with its Wilson
    bars over the diagonal, and beneath it the share of answers per bin as light bars."""
    fig = make_subplots(rows=1, cols=len(models))
    titles = []
    for i, model in enumerate(models, start=1):
        rows = table[table["model"].astype(str) == model].sort_values("mean_confidence")
        color = styles[model].color
        share = rows["count"] / rows["n"]
        fig.add_trace(go.Bar(
            x=(rows["lo"] + rows["hi"]) / 2, y=share, width=(rows["hi"] - rows["lo"]) * 0.96,
            marker=dict(color="rgba(0,0,0,0.12)"), name="share of answers (bars)",
            legendgroup="share", showlegend=i == 1,
            hovertemplate=f"<b>{model}</b><br>%{{y:.1%}} of answers<extra></extra>"),
            row=1, col=i)
        fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="perfect calibration",
                                 legendgroup="diagonal", showlegend=i == 1,
                                 line=dict(color="#888", dash="dash", width=1.2),
                                 hoverinfo="skip"), row=1, col=i)
        fig.add_trace(go.Scatter(
            x=rows["mean_confidence"], y=rows["accuracy"], mode="lines+markers",
            line=dict(color=color, width=2), marker=dict(size=6, color=color),
            error_y=error_bars(rows, "accuracy", color), showlegend=False,
            hovertemplate=(f"<b>{model}</b> (n = {int(rows['n'].iat[0]):,})<br>"
                           "mean confidence %{x:.3f}"
                           "<br>accuracy %{y:.3f}<extra></extra>")), row=1, col=i)
        fig.update_xaxes(range=[-0.02, 1.03], nticks=3, row=1, col=i)
        fig.update_yaxes(range=[0, 1.04], nticks=3, row=1, col=i)
        ece, n = rows["ece"].iat[0], int(rows["n"].iat[0])
        deb = rows["ece_l2_debiased"].iat[0] if "ece_l2_debiased" in rows else np.nan
        # n moves to the hover when the debiased error joins the title (a page's height)
        titles.append(f"{model}<br>ECE {ece:.3f}, deb. {deb:.3f}" if np.isfinite(deb)
                      else f"{model}<br>ECE {ece:.3f}, n = {n:,}")
    apply_layout(fig, heading, barmode="overlay",
                 subtitle=f"{count_noun(len(models), 'model')}, one panel each; ECE plug-in "
                          "(biased up), deb. debiased ℓ2")
    meta = dict(fig.layout.meta)
    meta.update(kbench_x_title="Confidence", kbench_y_title="Accuracy",
                kbench_panels=dict(min_width=120, square=True))
    fig.update_layout(meta=meta)
    header = 90 + 20 * fig.layout.title.text.count("<br>")
    set_panels(fig, len(models), PANEL_COLUMNS, panel_height=230, header=header,
               titles=titles)
    with_legend_below(fig, ["share of answers (bars)", "perfect calibration"],
                       int(fig.layout.height))
    return fig
