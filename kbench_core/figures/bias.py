"""Cognitive-bias figures: BMS curves, domain heatmap, human alignment, calibration bars."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from kbench_core.figures.base import PALETTE, apply_layout, model_colors, rgba
from kbench_core.schema import INTENSITIES
from kbench_core.text import plot_text

__all__ = ["bci_heatmap", "bms_curves", "cas_bars", "fingerprint_heatmap", "has_chart",
           "mitigation_chart"]

def bms_curves(table: pd.DataFrame, *, y: str = "magnitude",
               colors: dict[str, str] | None = None, title: str | None = None) -> go.Figure:
    """Per-intensity curves, one line per model, from :func:`kbench_core.kahne.bms` rows.

    ``table`` holds one row per model (one bias, or an average made by the caller);
    ``y="magnitude"`` plots ``mag_<intensity>``, ``y="mean"`` the treatment mean with its t
    interval as a band and the control mean as a dotted reference line.
    """
    # labels from data show literally
    table, colors, title = (
        plot_text(table), plot_text(colors), plot_text(title))
    if y not in ("magnitude", "mean"):
        raise ValueError(f"y must be 'magnitude' or 'mean'; got {y!r}")
    colors = colors or model_colors(table["model"].unique())
    x = list(INTENSITIES)
    fig = go.Figure()
    for _, row in table.sort_values("model").iterrows():
        color = colors.get(str(row["model"]), PALETTE[0])
        prefix = "mag_" if y == "magnitude" else "mean_"
        values = [row.get(f"{prefix}{i}", np.nan) for i in x]
        if y == "mean" and f"mean_{x[0]}_low" in row:
            low = [row.get(f"mean_{i}_low", np.nan) for i in x]
            high = [row.get(f"mean_{i}_high", np.nan) for i in x]
            fig.add_trace(go.Scatter(
                x=x + x[::-1], y=high + low[::-1], fill="toself", line=dict(width=0),
                fillcolor=rgba(color, 0.15), hoverinfo="skip", showlegend=False,
                legendgroup=str(row["model"])))
        counts = [f"{int(v):,}" if pd.notna(v := row.get(f"n_{i}", np.nan)) else "–"
                  for i in x]  # reports carry no trials: no count
        fig.add_trace(go.Scatter(
            x=x, y=values, mode="lines+markers", name=str(row["model"]),
            line=dict(color=color, width=2.5), marker=dict(size=8),
            legendgroup=str(row["model"]), customdata=counts,
            hovertemplate=(f"<b>{row['model']}</b><br>%{{x}}: %{{y:.3f}}"
                           "<br>n = %{customdata}<extra></extra>")))
        if y == "mean":
            fig.add_trace(go.Scatter(
                x=[x[0], x[-1]], y=[row["control_mean"]] * 2, mode="lines",
                line=dict(color=color, dash="dot", width=1.5), legendgroup=str(row["model"]),
                name=f"{row['model']} control", showlegend=False,
                hovertemplate=f"{row['model']} control: %{{y:.3f}}<extra></extra>"))
    ylabel = ("Magnitude, w·|treatment − control|" if y == "magnitude"
              else "Mean bias score (1 = biased)")
    apply_layout(fig, title or "Bias by trigger intensity",
            xaxis=dict(title="Trigger intensity", type="category", categoryorder="array",
                       categoryarray=x),
            yaxis=dict(title=ylabel, range=[0, 1.05] if y == "mean" else None),
            legend_title_text="Model")
    return fig


def bci_heatmap(domain_means: pd.DataFrame, *, rows: str = "bias",
                title: str | None = None) -> go.Figure:
    """Domains × biases (or models) heatmap of the mean treatment score.

    ``domain_means`` is :func:`kbench_core.kahne.domain_means` output, already filtered to one
    model (``rows="bias"``) or one bias (``rows="model"``). Row labels carry the consistency.
    """
    # labels from data show literally
    domain_means, title = (
        plot_text(domain_means), plot_text(title))
    grid = domain_means.pivot_table(index=rows, columns="domain", values="mean_score",
                                    observed=True)
    counts = domain_means.pivot_table(index=rows, columns="domain", values="n",
                                      observed=True).reindex_like(grid)
    spread = grid.std(axis=1, ddof=0).fillna(0.0)
    labels = [f"{name}  (consistency {1 - min(s / 0.5, 1):.2f})"
              for name, s in spread.items()]
    fig = go.Figure(go.Heatmap(
        z=grid.to_numpy(), x=list(grid.columns), y=labels, zmin=0, zmax=1,
        colorscale="Cividis", colorbar=dict(title="Mean<br>score"),
        customdata=counts.to_numpy(),
        text=np.vectorize(lambda v: "" if np.isnan(v) else f"{v:.2f}")(grid.to_numpy()),
        texttemplate="%{text}",
        hovertemplate="%{y}<br>domain %{x}<br>mean score %{z:.3f}<br>n = %{customdata}"
                      "<extra></extra>"))
    apply_layout(fig, title or "Mean treatment score by domain",
            xaxis=dict(title="Domain", showgrid=False), yaxis=dict(title="", showgrid=False),
            height=max(300, 60 + 34 * len(grid)))
    return fig


_DIRECTION_COLORS = {"over": "#D55E00", "under": "#0072B2", "aligned": "#009E73"}


def has_chart(table: pd.DataFrame, *, title: str | None = None) -> go.Figure:
    """Model rate against the human baseline per bias, with y = x (perfect alignment)."""
    table, title = plot_text(table), plot_text(title)  # labels from data show literally
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="y = x (human-like)",
                             line=dict(color="#888", dash="dash"), hoverinfo="skip"))
    data = table[table["human_rate"].notna()]
    for direction, color in _DIRECTION_COLORS.items():
        part = data[data["direction"] == direction]
        if part.empty:
            continue
        fig.add_trace(go.Scatter(
            x=part["human_rate"], y=part["model_rate"], mode="markers",
            name={"over": "more biased than humans", "under": "less biased than humans",
                  "aligned": "aligned"}[direction],
            marker=dict(color=color, size=10, line=dict(color="white", width=1)),
            error_y=dict(type="data", symmetric=False, color=color, thickness=1,
                         array=part["model_rate_high"] - part["model_rate"],
                         arrayminus=part["model_rate"] - part["model_rate_low"]),
            customdata=np.column_stack([part["model"].astype(str), part["bias"].astype(str),
                                        part["alignment"], part["n"]]),
            hovertemplate=("<b>%{customdata[1]}</b> · %{customdata[0]}<br>human %{x:.2f}, "
                           "model %{y:.3f}<br>alignment %{customdata[2]:.3f}"
                           "<br>n = %{customdata[3]}<extra></extra>")))
    apply_layout(fig, title or "Model bias rate against the human baseline",
            xaxis=dict(title="Human susceptibility rate", range=[0, 1]),
            yaxis=dict(title="Model treatment rate (95% CI)", range=[0, 1.02]),
            legend=dict(orientation="h", yanchor="top", y=-0.2, x=0),
            margin=dict(b=120), height=520)
    return fig


def cas_bars(table: pd.DataFrame, *, colors: dict[str, str] | None = None,
             title: str | None = None) -> go.Figure:
    """Mean stated confidence beside mean accuracy per model (CAS), averaged over biases."""
    # labels from data show literally
    table, colors, title = (
        plot_text(table), plot_text(colors), plot_text(title))
    summary = (table[table["has_confidence_data"]].groupby("model", observed=True)
               [["mean_confidence", "mean_accuracy"]].mean().reset_index())
    fig = go.Figure()
    fig.add_trace(go.Bar(x=summary["model"], y=summary["mean_confidence"],
                         name="stated confidence", marker_color="#E69F00",
                         hovertemplate="%{x}<br>confidence %{y:.3f}<extra></extra>"))
    fig.add_trace(go.Bar(x=summary["model"], y=summary["mean_accuracy"],
                         name="accuracy (1 − score)", marker_color="#0072B2",
                         hovertemplate="%{x}<br>accuracy %{y:.3f}<extra></extra>"))
    apply_layout(fig, title or "Stated confidence against accuracy", barmode="group",
            xaxis=dict(title="Model"), yaxis=dict(title="Mean over biases", range=[0, 1]),
            legend=dict(orientation="h", yanchor="top", y=-0.2, x=0),
            margin=dict(b=120), height=520)
    return fig


def fingerprint_heatmap(biases: pd.DataFrame, *, value: str = "bms",
                        title: str | None = None) -> go.Figure:
    """The fingerprint as a picture: biases (rows, grouped by family when the run names
    families) × models (columns), colour = ``value`` (BMS by default), from
    :attr:`kbench_core.kahne.Fingerprint.biases`. Hover names bias, model, value and n."""
    biases, title = plot_text(biases), plot_text(title)  # labels from data show literally
    if value not in biases:
        raise ValueError(f"value must be a fingerprint column; got {value!r}")
    data = biases.copy()
    data["label"] = (data["category"].astype(str) + " · " + data["bias"].astype(str)
                     if "category" in data else data["bias"].astype(str))
    grid = data.pivot_table(index="label", columns="model", values=value, observed=True,
                            dropna=False).sort_index(ascending=False)  # first family on top
    counts = data.pivot_table(index="label", columns="model", values="n", observed=True,
                              dropna=False).reindex_like(grid)
    z = grid.to_numpy(dtype=float)
    fig = go.Figure(go.Heatmap(
        z=z, x=[str(c) for c in grid.columns], y=list(grid.index), zmin=0,
        zmax=max(1.0, float(np.nanmax(z))) if np.isfinite(z).any() else 1.0,
        colorscale="Cividis", colorbar=dict(title=value.upper() if value == "bms" else value),
        customdata=counts.to_numpy(),
        text=np.vectorize(lambda v: "" if np.isnan(v) else f"{v:.2f}")(z),
        texttemplate="%{text}" if z.size <= 400 else None,
        hovertemplate="%{y}<br>%{x}<br>" + value + " %{z:.3f}<br>n = %{customdata}"
                      "<extra></extra>"))
    apply_layout(fig, title or "Cognitive fingerprint (BMS per model × bias)",
                 xaxis=dict(title="", side="top", showgrid=False),
                 yaxis=dict(title="", showgrid=False), margin=dict(t=110),
                 height=max(320, 130 + 24 * len(grid)))
    return fig


def mitigation_chart(table: pd.DataFrame, *, title: str | None = None) -> go.Figure:
    """Score before and after each debiasing method, one row per bias (one model), from
    :func:`kbench_core.kahne_summary.mitigation_table`: the baseline (treatment mean, black
    ring) and each method's mean score (one colour and shape per method, the best method
    filled larger). A dot left of the ring means the method lowered the bias."""
    table, title = plot_text(table), plot_text(title)  # labels from data show literally
    fig = go.Figure()
    biases = sorted(map(str, table["bias"].unique()))
    base = table.drop_duplicates("bias").set_index(table.drop_duplicates("bias")["bias"]
                                                   .astype(str))["baseline"]
    fig.add_trace(go.Scatter(
        x=base.reindex(biases), y=biases, mode="markers", name="before (treatment mean)",
        marker=dict(symbol="circle-open", size=13, color="#222", line=dict(width=2)),
        hovertemplate="%{y}<br>before debiasing %{x:.3f}<extra></extra>"))
    symbols = ("diamond", "square", "triangle-up", "cross", "x", "star", "hexagon")
    for i, (method, rows) in enumerate(table.groupby("method", sort=True)):
        rows = rows.set_index(rows["bias"].astype(str)).reindex(biases)
        best = rows["best"].fillna(False).astype(bool).to_numpy()
        fig.add_trace(go.Scatter(
            x=rows["score"], y=biases, mode="markers", name=str(method),
            marker=dict(symbol=symbols[i % len(symbols)], color=PALETTE[i % len(PALETTE)],
                        size=np.where(best, 12, 8), line=dict(width=0)),
            hovertemplate=("%{y}<br>" + str(method) + " %{x:.3f}<extra></extra>")))
    apply_layout(fig, title or "Score before and after debiasing",
                 xaxis=dict(title="Mean bias score (1 = biased)", range=[-0.02, 1.02]),
                 yaxis=dict(title="", type="category", categoryorder="array",
                            categoryarray=biases[::-1]),
                 legend=dict(orientation="h", yanchor="top", y=-0.12, x=0),
                 height=max(320, 160 + 26 * len(biases)))
    return fig
