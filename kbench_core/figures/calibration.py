"""The reliability diagram: accuracy against stated confidence, per model, for every family
whose answers carry a confidence (the vulnerability detectors', a multiple-choice family's).

A pure function from :func:`kbench_core.calibration.reliability_by` (or
:func:`kbench_core.vuln.reliability`) tables to a plotly figure; no metric is computed here.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

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

# The two rows' axes as make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.64,
# 0.36], vertical_spacing=0.05) lays them out (the figure is built as one dict, without it).
_GAP = 0.05
_LOWER = (1 - _GAP) * 0.36


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
    # The figure is gathered as one plain dict and handed to plotly once: trace by trace
    # through make_subplots and update_xaxes it cost 0.05 s of a widget change on a big run.
    top, bottom = dict(xaxis="x", yaxis="y"), dict(xaxis="x2", yaxis="y2")
    traces: list[dict] = [dict(type="scatter", x=[0, 1], y=[0, 1], mode="lines",
                               name="perfect calibration",
                               line=dict(color="#888", dash="dash", width=1.5),
                               hoverinfo="skip", **top)]
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
        traces.append(dict(
            type="scatter", x=np.repeat(x, 3),
            y=np.column_stack([x, y, np.full(x.size, np.nan)]).ravel(),
            mode="lines", line=dict(color=rgba(color, 0.35), width=9), hoverinfo="skip",
            showlegend=False, legendgroup=group, connectgaps=False, **top))
        # Gap shading: an invisible trace on the diagonal, then the curve filled to it.
        traces.append(dict(type="scatter", x=x, y=x, mode="lines", line=dict(width=0),
                           hoverinfo="skip", showlegend=False, legendgroup=group, **top))
        ece, mce, n = rows["ece"].iat[0], rows["mce"].iat[0], int(rows["n"].iat[0])
        # MCE and n in the hover: with the debiased ECE beside the plug-in, the entry must
        # still fit a one-column legend
        name = f"{model} · ECE {ece:.3f}{_debiased(rows)}"
        labels.append(name)
        traces.append(dict(
            type="scatter", x=x, y=rows["accuracy"], mode="lines+markers", fill="tonexty",
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
                           "<extra></extra>"), **top))
        share = rows["count"] / rows["n"]
        traces.append(dict(
            type="bar", x=(rows["lo"] + rows["hi"]) / 2, y=share,
            width=(rows["hi"] - rows["lo"]) * 0.96,
            marker=dict(color=rgba(color, 0.35), line=dict(color=color, width=1),
                        pattern=dict(shape=style.pattern)),
            name=f"{model} answers", legendgroup=group, showlegend=False,
            customdata=np.column_stack([rows["lo"], rows["hi"], rows["count"]]),
            hovertemplate=(f"<b>{model}</b><br>bin (%{{customdata[0]:.3f}}, "
                           "%{customdata[1]:.3f}]<br>%{y:.1%} of answers "
                           "(n = %{customdata[2]})<extra></extra>"), **bottom))
    # A little room beyond [0, 1], so points at 0 and 1 are not cut in half.
    axes = dict(
        xaxis=dict(anchor="y", domain=[0.0, 1.0], matches="x2", showticklabels=False,
                   range=[-0.02, 1.03]),
        yaxis=dict(anchor="x", domain=[_LOWER + _GAP, 1.0], range=[0, 1.04],
                   title=dict(text="Accuracy (95% CI)")),
        xaxis2=dict(anchor="y2", domain=[0.0, 1.0], range=[-0.02, 1.03],
                    title=dict(text="Stated confidence")),
        yaxis2=dict(anchor="x2", domain=[0.0, _LOWER], title=dict(text="Share of answers"),
                    tickformat=".0%", rangemode="tozero", nticks=3))
    fig = go.Figure(dict(data=traces, layout=axes))
    apply_layout(fig, heading, barmode="overlay", height=560, margin=dict(r=30),
                 subtitle="ECE is the plug-in (biased upward); deb. the debiased ℓ2 error")
    with_legend_below(fig, labels, int(fig.layout.height))
    return fig


def _reliability_panels(table: pd.DataFrame, models: list[str], styles: dict,
                        heading: str) -> go.Figure:
    """Small multiples: one panel per model on shared [0, 1] axes; the curve with its Wilson
    bars over the diagonal, and beneath it the share of answers per bin as light bars."""
    # One plain dict handed to plotly once (make_subplots, three add_trace and two axis updates
    # per panel cost most of the figure's time); the axes anchored as make_subplots anchors
    # them, set_panels lays out their domains.
    traces: list[dict] = []
    axes: dict[str, dict] = {}
    titles = []
    for i, model in enumerate(models, start=1):
        k = str(i) if i > 1 else ""
        on = dict(xaxis=f"x{k}", yaxis=f"y{k}")
        rows = table[table["model"].astype(str) == model].sort_values("mean_confidence")
        color = styles[model].color
        share = rows["count"] / rows["n"]
        traces.append(dict(
            type="bar", x=(rows["lo"] + rows["hi"]) / 2, y=share,
            width=(rows["hi"] - rows["lo"]) * 0.96,
            marker=dict(color="rgba(0,0,0,0.12)"), name="share of answers (bars)",
            legendgroup="share", showlegend=i == 1,
            hovertemplate=f"<b>{model}</b><br>%{{y:.1%}} of answers<extra></extra>", **on))
        traces.append(dict(type="scatter", x=[0, 1], y=[0, 1], mode="lines",
                           name="perfect calibration", legendgroup="diagonal",
                           showlegend=i == 1, line=dict(color="#888", dash="dash", width=1.2),
                           hoverinfo="skip", **on))
        traces.append(dict(
            type="scatter", x=rows["mean_confidence"], y=rows["accuracy"], mode="lines+markers",
            line=dict(color=color, width=2), marker=dict(size=6, color=color),
            error_y=error_bars(rows, "accuracy", color), showlegend=False,
            hovertemplate=(f"<b>{model}</b> (n = {int(rows['n'].iat[0]):,})<br>"
                           "mean confidence %{x:.3f}"
                           "<br>accuracy %{y:.3f}<extra></extra>"), **on))
        axes[f"xaxis{k}"] = dict(anchor=f"y{k}", range=[-0.02, 1.03], nticks=3)
        axes[f"yaxis{k}"] = dict(anchor=f"x{k}", range=[0, 1.04], nticks=3)
        ece, n = rows["ece"].iat[0], int(rows["n"].iat[0])
        deb = rows["ece_l2_debiased"].iat[0] if "ece_l2_debiased" in rows else np.nan
        # n moves to the hover when the debiased error joins the title (a page's height)
        titles.append(f"{model}<br>ECE {ece:.3f}, deb. {deb:.3f}" if np.isfinite(deb)
                      else f"{model}<br>ECE {ece:.3f}, n = {n:,}")
    meta = dict(kbench_x_title="Confidence", kbench_y_title="Accuracy",
                kbench_panels=dict(min_width=120, square=True))
    fig = go.Figure(dict(data=traces, layout=dict(axes, meta=meta)))
    apply_layout(fig, heading, barmode="overlay",
                 subtitle=f"{count_noun(len(models), 'model')}, one panel each; ECE plug-in "
                          "(biased up), deb. debiased ℓ2")
    header = 90 + 20 * fig.layout.title.text.count("<br>")
    set_panels(fig, len(models), PANEL_COLUMNS, panel_height=230, header=header,
               titles=titles)
    with_legend_below(fig, ["share of answers (bars)", "perfect calibration"],
                       int(fig.layout.height))
    return fig
