"""Judge-audit figures (docs/metrics/audit.md): each model's rate as the judge gave it and as
corrected by the reviewers' labels, and each judge's agreement with the reviewers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from kbench_core.figures.base import apply_layout, category_ticks
from kbench_core.text import plot_text

__all__ = ["accuracy_chart", "corrected_forest"]

# Okabe-Ito: the judge's own number grey, the corrected one blue, the reviewers' alone orange.
_SERIES = (("judge_only", "Judge only", "#7F7F7F", "circle"),
           ("human_only", "Reviewers only", "#E69F00", "diamond"),
           ("corrected", "Corrected", "#0072B2", "square"))
MAX_ROWS = 25


def _interval_dots(data: pd.DataFrame, column: str, rows: list[str], *, name: str,
                   color: str, symbol: str, hover: str, counted: str) -> go.Scatter:
    """One series of dots on the rows ``rows``: ``column`` with its ``_low``/``_high``
    interval as error bars, grouped beside the other series of the row, and ``n_labelled``
    ``counted`` in the hover text."""
    value = pd.to_numeric(data[column], errors="coerce").to_numpy(float)
    low = pd.to_numeric(data[f"{column}_low"], errors="coerce").to_numpy(float)
    high = pd.to_numeric(data[f"{column}_high"], errors="coerce").to_numpy(float)
    return go.Scatter(
        x=value, y=rows, mode="markers", name=name, orientation="h",
        offsetgroup=column, marker=dict(color=color, size=9, symbol=symbol),
        error_x=dict(type="data", symmetric=False, array=np.nan_to_num(high - value),
                     arrayminus=np.nan_to_num(value - low), color=color, thickness=1.4),
        customdata=np.column_stack([np.asarray(rows, dtype=object), low, high,
                                    data["n_labelled"].to_numpy()]),
        hovertemplate=(f"<b>%{{customdata[0]}}</b><br>{hover}: %{{x:.3f}} "
                       "[%{customdata[1]:.3f}, %{customdata[2]:.3f}]<br>"
                       f"%{{customdata[3]}} {counted}<extra></extra>"))


def corrected_forest(table: pd.DataFrame, *, label: str = "model",
                     what: str = "Target detection rate",
                     title: str | None = None) -> go.Figure:
    """One row per group: the judge-only, reviewers-only and corrected rates with their 95%
    intervals side by side (``table`` from :func:`kbench_core.audit.corrected`), rows sorted
    by the corrected rate. The subtitle says how many labels the correction rests on."""
    data = plot_text(table).copy()
    data = data.sort_values(["corrected", label], na_position="first", kind="stable")
    if len(data) > MAX_ROWS:
        data = data.tail(MAX_ROWS)
    names = [str(v) for v in data[label]]
    fig = go.Figure()
    for column, name, color, symbol in reversed(_SERIES):
        fig.add_trace(_interval_dots(data, column, names, name=name, color=color,
                                     symbol=symbol, hover=name, counted="labels"))
    n_labels = int(pd.to_numeric(data["n_labelled"], errors="coerce").fillna(0).sum())
    judge = str(table.attrs.get("judge", data["judge"].iloc[0] if "judge" in data and len(data)
                                else ""))
    apply_layout(fig, title or f"{what}: the judge's number and the corrected one",
                 subtitle=f"judge {plot_text(judge)}; corrected with {n_labels:,} reviewer "
                          "labels (95% intervals)",
                 xaxis=dict(title=what, range=[-0.02, 1.02], zeroline=False),
                 yaxis=dict(title="", showgrid=False, zeroline=False, type="category"),
                 height=max(280, 150 + 46 * len(data)))
    fig.update_layout(scattermode="group", scattergap=0.5,
                      legend=dict(traceorder="reversed"))
    category_ticks(fig, "yaxis", names, row_px=46)
    return fig


def accuracy_chart(accuracy: pd.DataFrame, *, title: str | None = None) -> go.Figure:
    """Each judge's sensitivity and specificity against the reviewers, with 95% intervals
    (``accuracy`` from :func:`kbench_core.audit.judge_accuracy`)."""
    data = plot_text(accuracy).copy()
    judges = [str(j) for j in data["judge"]]
    fig = go.Figure()
    for column, name, color, symbol in (
            ("specificity", "Specificity (rejects what the reviewers rejected)", "#D55E00",
             "square"),
            ("sensitivity", "Sensitivity (finds what the reviewers found)", "#0072B2",
             "circle")):
        fig.add_trace(_interval_dots(data, column, judges, name=name, color=color,
                                     symbol=symbol, hover=name.split(" (")[0],
                                     counted="labelled items"))
    apply_layout(fig, title or "How often each judge agrees with the reviewers",
                 subtitle="weighted back to the run; 95% intervals",
                 xaxis=dict(title="Share", range=[-0.02, 1.02], zeroline=False),
                 yaxis=dict(title="", showgrid=False, zeroline=False, type="category"),
                 height=max(260, 150 + 40 * len(data)))
    fig.update_layout(scattermode="group", scattergap=0.5,
                      legend=dict(traceorder="reversed"))
    category_ticks(fig, "yaxis", judges, row_px=40)
    fig.update_yaxes(autorange="reversed")  # the table's order, top down (majority first)
    return fig
