"""Model-comparison figures: a forest plot of paired differences and rank intervals."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from kbench_core.figures.base import apply_layout, category_ticks, name_rows
from kbench_core.text import plot_text

__all__ = ["forest_plot", "rank_chart"]

_EXCLUDES_ZERO = "#D55E00"
_COVERS_ZERO = "#888888"
# Rows a forest plot or rank chart shows at most: 25 rows of 20 px keep it within a 9 in page
# at one column with its title. Beyond, the largest differences (the best ranks) are shown
# and the subtitle says how many are left out; the tables list every one.
MAX_ROWS = 25


def forest_plot(deltas: pd.DataFrame, *, label: str = "group", title: str | None = None,
                what: str = "A − B", correction: str = "Holm") -> go.Figure:
    """One row per group (bias, study, prompt type, ...): the paired difference with its
    interval, a zero line, rows sorted by difference.

    ``deltas`` has columns ``label``, ``delta``, ``delta_low``, ``delta_high``, ``n`` (and
    optionally ``p_adjusted``, ``test`` and ``direction``); the hover names the test and the
    adjustment (``correction``: ``"Holm"``, ``"Benjamini–Hochberg"``). A point is orange where
    the table's ``direction`` is decided (``"lower"``/``"higher"``, on the adjusted p, as the
    verdicts say) and grey where it is ``"undecided"``, so a difference whose unadjusted
    interval excludes 0 but which does not survive the adjustment is never orange; without a
    ``direction`` column, orange marks an interval that excludes 0. The subtitle names the
    colour only when there is something to tell apart: with no interval drawn (one value per
    group, e.g. fingerprint reports) it says so instead.
    """
    # labels from data show literally
    deltas, title, what = (
        plot_text(deltas), plot_text(title), plot_text(what))
    data = deltas.dropna(subset=["delta"])
    total = len(data)
    if total > MAX_ROWS:  # the largest differences, by size
        data = data.loc[data["delta"].abs().sort_values(ascending=False, kind="stable")
                        .index[:MAX_ROWS]]
    data = data.sort_values("delta").reset_index(drop=True)
    low = pd.to_numeric(data["delta_low"], errors="coerce")
    high = pd.to_numeric(data["delta_high"], errors="coerce")
    drawn = np.isfinite(low) & np.isfinite(high)  # rows with an interval to draw
    if "direction" in data:
        decided = data["direction"].isin(["lower", "higher"]).to_numpy()
        key = "orange: decided after adjustment (the table's direction)"
    else:
        decided = (drawn & ((low > 0) | (high < 0))).to_numpy()
        key = "orange: the interval excludes 0"
    colors = np.where(decided, _EXCLUDES_ZERO, _COVERS_ZERO)
    if not drawn.any():
        key = "one value per group, no intervals" + ("; orange: decided" if decided.any()
                                                      else "")
    p = data["p_adjusted"] if "p_adjusted" in data else pd.Series(np.nan, index=data.index)
    tests = (data["test"].fillna("").astype(str) if "test" in data
             else pd.Series("", index=data.index))
    fig = go.Figure()
    fig.add_vline(x=0, line=dict(color="#444", width=1))
    fig.add_trace(go.Scatter(
        x=data["delta"], y=data[label].astype(str), mode="markers",
        marker=dict(color=colors, size=9, symbol="square"),
        error_x=dict(type="data", symmetric=False, array=data["delta_high"] - data["delta"],
                     arrayminus=data["delta"] - data["delta_low"], color="#555", thickness=1.2),
        # object columns: numbers stay numbers for the hover's formats beside the test text
        customdata=np.column_stack([np.asarray(c, dtype=object) for c in (
            data["delta_low"], data["delta_high"], data["n"], p, tests)]),
        hovertemplate=("<b>%{y}</b><br>" + what + " = %{x:.3f} [%{customdata[0]:.3f}, "
                       "%{customdata[1]:.3f}]<br>n = %{customdata[2]}"
                       "<br>" + plot_text(correction) + "-adjusted p = %{customdata[3]:.3g} "
                       "(%{customdata[4]})<extra></extra>"),
        showlegend=False))
    # Centred on zero: the axis runs from -m to +m, m the largest |bound| (5% margin), so
    # the zero line sits in the middle and the side a difference falls on is plain to see.
    bounds = np.abs(np.concatenate([data[c].to_numpy(dtype=float)
                                    for c in ("delta", "delta_low", "delta_high")]))
    bounds = bounds[np.isfinite(bounds)]
    half = 1.05 * float(bounds.max()) if bounds.size and bounds.max() > 0 else 1.0
    left_out = (f"; the {len(data)} largest of {total:,} differences shown (the table lists "
                "all)" if total > len(data) else "")
    row = 26 if len(data) <= 15 else 20
    apply_layout(fig, title or f"Paired difference ({what}) with 95% intervals",
                 subtitle=f"{what}; {key}{left_out}",
                 xaxis=dict(title="Difference", zeroline=False, range=[-half, half]),
                 yaxis=dict(title="", showgrid=False, automargin=True, type="category"),
                 height=max(260, 110 + row * len(data)))
    category_ticks(fig, "yaxis", [str(v) for v in data[label]], row_px=row)
    return fig


def rank_chart(ranks: pd.DataFrame, *, colors: dict[str, str] | None = None,
               title: str | None = None, best: str = "best") -> go.Figure:
    """Each model's rank (1 = best) with its simultaneous 95% interval, from
    :func:`kbench_core.compare.rank_intervals`; ``best`` says what rank 1 means on the axis
    (``"least biased"`` for bias scores)."""
    # labels from data show literally
    ranks, colors, title = (
        plot_text(ranks), plot_text(colors), plot_text(title))
    total = len(ranks)
    data = ranks.sort_values("rank", kind="stable").head(MAX_ROWS).sort_values(
        "rank", ascending=False, kind="stable")
    marker_colors = [(colors or {}).get(str(m), "#0072B2") for m in data["model"]]
    fig = go.Figure(go.Scatter(
        x=data["rank"], y=data["model"].astype(str), mode="markers",
        marker=dict(color=marker_colors, size=11),
        error_x=dict(type="data", symmetric=False, array=data["rank_high"] - data["rank"],
                     arrayminus=data["rank"] - data["rank_low"], color="#555", thickness=1.2),
        customdata=np.column_stack([data["rank_low"], data["rank_high"], data["value"]]),
        hovertemplate=("<b>%{y}</b><br>rank %{x} [%{customdata[0]}, %{customdata[1]}]"
                       "<br>value %{customdata[2]:.3f}<extra></extra>")))
    row = name_rows(data["model"], 34 if len(data) <= 15 else 20)
    apply_layout(fig, title or "Rank with its simultaneous 95% interval",
                 subtitle=(f"the {len(data)} best ranked of {total} models shown (the table "
                           "lists all)" if total > len(data) else None),
                 xaxis=dict(title=f"Rank (1 = {best})", dtick=1 if len(data) <= 10 else None,
                            autorange="reversed"),
                 yaxis=dict(title="", showgrid=False, type="category"),
                 height=max(240, 90 + row * len(data)))
    category_ticks(fig, "yaxis", [str(m) for m in data["model"]], row_px=row, wrap=True)
    return fig
