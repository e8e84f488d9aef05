"""Cognitive-bias figures: BMS curves, domain heatmap, human alignment, calibration bars."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from kbench_core.figures.base import (
    PALETTE,
    TITLE_LINE_PX,
    apply_layout,
    category_ticks,
    distinct_styles,
    heatmap_figure,
    legend_below,
    name_rows,
    rgba,
    with_legend_below,
)
from kbench_core.figures.labels import category_ticks_update
from kbench_core.figures.layout import (
    display_names,
    legend_below_update,
    legend_labels,
    panels_update,
    titled,
)
from kbench_core.figures.style import merge_layout
from kbench_core.schema import INTENSITIES
from kbench_core.text import count_noun, method_label, plot_text

SIDE_LEGEND_MAX = 8  # models a side legend shows in full at the figure's height

__all__ = ["bci_heatmap", "bms_curves", "cas_bars", "fingerprint_heatmap", "has_chart",
           "mitigation_chart"]

MAX_CURVES = 12  # models drawn as lines; beyond, the curves become a heatmap
MAX_OVERLAID = 6  # models drawn on one plot; beyond, one panel per model (the others grey)
PANEL_COLUMNS = 4
HIGHLIGHT = PALETTE[0]  # the panel's own model: one strong colour in every panel
CONTEXT = "#c8c8c8"  # the other models, behind it
_SHORT_LEVELS = {"moderate": "mod.", "adversarial": "adv."}


def bms_curves(table: pd.DataFrame, *, y: str = "magnitude",
               colors: dict[str, str] | None = None, title: str | None = None) -> go.Figure:
    """Per-intensity curves, one line per model, from :func:`kbench_core.kahne.bms` rows.

    ``table`` holds one row per model (one bias, or an average made by the caller);
    ``y="magnitude"`` plots ``mag_<intensity>``, ``y="mean"`` the treatment mean with its t
    interval as a band and the control mean as a dotted reference line. Models sharing a colour
    differ in marker and dash. Beyond :data:`MAX_CURVES` models the lines could not be told
    apart: the figure becomes a model × intensity heatmap, models ranked by their mean.
    """
    # labels from data show literally
    table, colors, title = (
        plot_text(table), plot_text(colors), plot_text(title))
    if y not in ("magnitude", "mean"):
        raise ValueError(f"y must be 'magnitude' or 'mean'; got {y!r}")
    prefix = "mag_" if y == "magnitude" else "mean_"
    # intensities the run has (a KahneBench report has no adversarial trigger)
    x = [i for i in INTENSITIES if f"{prefix}{i}" in table and table[f"{prefix}{i}"].notna().any()]
    x = x or list(INTENSITIES)
    ylabel = ("Magnitude, w·|treatment − control|" if y == "magnitude"
              else "Mean bias score (1 = biased)")
    if table["model"].nunique() > MAX_CURVES:
        grid = table.assign(model=table["model"].astype(str)).set_index("model")[
            [f"{prefix}{i}" for i in x]]
        grid.columns = x
        grid = grid.loc[grid.mean(axis=1).sort_values(ascending=False, kind="stable").index]
        return heatmap_figure(
            grid, title=title or "Bias by trigger intensity", subtitle=(
                f"{count_noun(len(grid), 'model')}, most biased on top; {ylabel.lower()}"),
            zmin=0, zmax=1, colorbar_title="magnitude" if y == "magnitude" else "mean score",
            hovertemplate="%{y}<br>%{x}: %{z:.3f}", wrap_rows=True)
    if table["model"].nunique() > MAX_OVERLAID:
        return _curve_panels(table, x, y=y, prefix=prefix, ylabel=ylabel,
                             title=title or "Bias by trigger intensity")
    styles = distinct_styles(sorted(map(str, table["model"].unique())), colors)
    fig = go.Figure()
    for _, row in table.sort_values("model").iterrows():
        style = styles[str(row["model"])]
        color = style.color
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
            line=dict(color=color, width=2.5, dash=style.dash),
            marker=dict(size=8, symbol=style.symbol),
            legendgroup=str(row["model"]), customdata=counts,
            hovertemplate=(f"<b>{row['model']}</b><br>%{{x}}: %{{y:.3f}}"
                           "<br>n = %{customdata}<extra></extra>")))
        if y == "mean":
            fig.add_trace(go.Scatter(
                x=[x[0], x[-1]], y=[row["control_mean"]] * 2, mode="lines",
                line=dict(color=color, dash="dot", width=1.5), legendgroup=str(row["model"]),
                name=f"{row['model']} control", showlegend=False,
                hovertemplate=f"{row['model']} control: %{{y:.3f}}<extra></extra>"))
    apply_layout(fig, title or "Bias by trigger intensity",
                 xaxis=dict(title="Trigger intensity", type="category", categoryorder="array",
                            categoryarray=x),
                 yaxis=dict(title=ylabel, range=[0, 1.05] if y == "mean" else None),
                 legend=dict(title=dict(text="Model")), height=440)
    if len(styles) > SIDE_LEGEND_MAX:  # a side legend this long would be cut: put it below
        with_legend_below(fig)
    return fig


def _curve_panels(table: pd.DataFrame, x: list[str], *, y: str, prefix: str, ylabel: str,
                  title: str) -> go.Figure:
    """Small multiples of :func:`bms_curves` for more than :data:`MAX_OVERLAID` models: one
    panel per model on shared axes, its curve (and band, and control line) in one strong
    colour over the other models' curves in light grey, so each model reads on its own and
    against the field; seven or more overlaid lines could only be told apart by a legend."""
    rows = table.assign(model=table["model"].astype(str)).sort_values("model")
    models = rows["model"].tolist()
    values = {m: [r.get(f"{prefix}{i}", np.nan) for i in x] for m, (_, r) in
              zip(models, rows.iterrows(), strict=True)}
    # The figure is gathered as one plain dict and handed to plotly once: added one at a
    # time by row and column, the 100 traces of ten panels cost 0.18 s against 0.03 s, most
    # of a widget change on the bias page. The axes are anchored as make_subplots anchors
    # them (set_panels lays out their domains).
    traces: list[dict] = []
    axes: dict[str, dict] = {}
    for k, (model, (_, row)) in enumerate(zip(models, rows.iterrows(), strict=True), start=1):
        first = k == 1
        on = dict(xaxis=f"x{k if k > 1 else ''}", yaxis=f"y{k if k > 1 else ''}")
        for other in models:  # the field, behind
            if other == model:
                continue
            traces.append(dict(
                type="scatter", x=x, y=values[other], mode="lines",
                line=dict(color=CONTEXT, width=1), name="other models", legendgroup="others",
                showlegend=first and other == next(m for m in models if m != model),
                hovertemplate=f"{other}<br>%{{x}}: %{{y:.3f}}<extra></extra>", **on))
        if y == "mean" and f"mean_{x[0]}_low" in row:
            low = [row.get(f"mean_{i}_low", np.nan) for i in x]
            high = [row.get(f"mean_{i}_high", np.nan) for i in x]
            if np.isfinite(np.asarray(low + high, dtype=float)).any():
                traces.append(dict(
                    type="scatter", x=x + x[::-1], y=high + low[::-1], fill="toself",
                    line=dict(width=0), fillcolor=rgba(HIGHLIGHT, 0.18), hoverinfo="skip",
                    name="95% interval", legendgroup="band", showlegend=first, **on))
        if y == "mean" and pd.notna(row.get("control_mean", np.nan)):
            traces.append(dict(
                type="scatter", x=[x[0], x[-1]], y=[row["control_mean"]] * 2, mode="lines",
                line=dict(color="#222", dash="dot", width=1.5), name="control mean",
                legendgroup="control", showlegend=first,
                hovertemplate=f"{model} control: %{{y:.3f}}<extra></extra>", **on))
        counts = [f"{int(v):,}" if pd.notna(v := row.get(f"n_{i}", np.nan)) else "–"
                  for i in x]
        traces.append(dict(
            type="scatter", x=x, y=values[model], mode="lines+markers",
            name="the panel's model", legendgroup="model", showlegend=first,
            customdata=counts, line=dict(color=HIGHLIGHT, width=2.5),
            marker=dict(size=7, color=HIGHLIGHT),
            hovertemplate=(f"<b>{model}</b><br>%{{x}}: %{{y:.3f}}"
                           "<br>n = %{customdata}<extra></extra>"), **on))
        # level ticks (abbreviated: three fit a narrow panel unturned), the first and last
        # half a level in from the panel's edges, so that they stay over their own panel
        # ("strong" of one panel and "weak" of the next read as one label otherwise)
        axes[f"xaxis{k if k > 1 else ''}"] = dict(
            anchor=f"y{k if k > 1 else ''}", type="category", categoryorder="array",
            categoryarray=x, tickmode="array", tickvals=x, tickangle=0,
            range=[-0.5, len(x) - 0.5],
            ticktext=[_SHORT_LEVELS.get(i, i) for i in x])
        axes[f"yaxis{k if k > 1 else ''}"] = dict(
            anchor=f"x{k if k > 1 else ''}", range=[0, 1.05] if y == "mean" else [0, None],
            nticks=4)
    meta = dict(kbench_x_title="Trigger intensity",
                kbench_y_title="Mean score" if y == "mean" else "Magnitude",
                kbench_shared_y=True,
                kbench_panels=dict(min_width=150, fit_page=True, min_panel_px=100))
    # The layout too is merged as plain dicts (what apply_layout, set_panels and
    # with_legend_below would assign one after the other) and validated once with the traces:
    # three layout assignments of 20 axes each cost 20 ms more.
    display_names(traces)
    layout = dict(axes, meta=meta)
    layout = merge_layout(layout, titled(
        layout, title, subtitle=f"{len(models)} models, one panel each, the others in grey"))
    header = 90 + TITLE_LINE_PX * layout["title"]["text"].count("<br>")
    update, annotations = panels_update(layout, len(models), PANEL_COLUMNS, panel_height=200,
                                        header=header, titles=models)
    layout = merge_layout(layout, update, replace=dict(annotations=annotations))
    layout = merge_layout(layout, legend_below_update(
        layout, ["the panel's model", "other models", "control mean", "95% interval"]))
    return go.Figure(dict(data=traces, layout=layout))


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
    grid.index = [f"{name} ({1 - min(s / 0.5, 1):.2f})" for name, s in spread.items()]
    grid.columns = [str(c) for c in grid.columns]
    return heatmap_figure(
        grid, title=title or "Mean treatment score by domain", zmin=0, zmax=1,
        subtitle="in brackets: consistency across domains (1 = the same everywhere)",
        colorbar_title="mean score", customdata=counts.to_numpy(),
        hovertemplate="%{y}<br>domain %{x}<br>mean score %{z:.3f}<br>n = %{customdata}")


_DIRECTION_COLORS = {"over": "#D55E00", "under": "#0072B2", "aligned": "#009E73"}


MAX_HAS_MODELS = 12  # models told apart by colour and shape in the HAS chart


def has_chart(table: pd.DataFrame, *, title: str | None = None) -> go.Figure:
    """Model rate against the human baseline per bias, with y = x (perfect alignment).

    Up to :data:`MAX_HAS_MODELS` models, each model is one series (colour and marker shape;
    a legend click isolates it), so every dot says whose it is; beyond, dots are coloured by
    direction (more or less biased than humans). Error bars are the model rate's 95%
    interval where the table has one, and the axis promises intervals only then (reports
    publish no trials: the subtitle says the dots have none). The hover names bias, model,
    direction, both rates, alignment and n."""
    table, title = plot_text(table), plot_text(title)  # labels from data show literally
    # Traces are gathered as plain dicts and the hover columns made once for every dot (then
    # cut per series): one plotly call and no per-series pandas work (0.06 s -> 0.02 s).
    traces: list[dict] = [dict(type="scatter", x=[0, 1], y=[0, 1], mode="lines",
                               name="y = x (human-like)", line=dict(color="#888", dash="dash"),
                               hoverinfo="skip")]
    data = table[table["human_rate"].notna()]
    has_ci = all(c in data for c in ("model_rate_low", "model_rate_high")) and bool(
        np.isfinite(data[["model_rate_low", "model_rate_high"]].to_numpy(float)).any())
    words = {"over": "more biased than humans", "under": "less biased than humans",
             "aligned": "aligned"}
    model_names = data["model"].astype(str)
    models = sorted(model_names.unique())
    by_model = 1 < len(models) <= MAX_HAS_MODELS
    styles = distinct_styles(models) if by_model else {}
    hover = np.column_stack([
        model_names, data["bias"].astype(str), data["alignment"],
        data["n"] if "n" in data else np.full(len(data), np.nan),
        data["direction"].map(words).fillna("–").astype(str)])
    keys = (model_names if by_model else data["direction"]).to_numpy()
    # float64 columns as their arrays, cut per series: plotly reads a Series through
    # narwhals (0.3 ms each) and a boolean cut of the frame per series cost as much again
    rates = {c: data[c].to_numpy() if data[c].dtype == np.float64 else data[c]
             for c in ("human_rate", "model_rate", "model_rate_low", "model_rate_high")
             if c in data}
    for key in (models if by_model else list(_DIRECTION_COLORS)):
        mask = keys == key
        if not mask.any():
            continue
        part = {c: values[mask] for c, values in rates.items()}
        color = styles[key].color if by_model else _DIRECTION_COLORS[key]
        error = None
        if has_ci:
            error = dict(type="data", symmetric=False, color=color, thickness=1,
                         array=part["model_rate_high"] - part["model_rate"],
                         arrayminus=part["model_rate"] - part["model_rate_low"])
        traces.append(dict(
            type="scatter", x=part["human_rate"], y=part["model_rate"], mode="markers",
            name=key if by_model else words[key],
            marker=dict(color=color, size=9 if by_model else 10,
                        symbol=styles[key].symbol if by_model else "circle",
                        line=dict(color="white", width=1)),
            error_y=error, customdata=hover[mask],
            hovertemplate=("<b>%{customdata[1]}</b> · %{customdata[0]}<br>"
                           "%{customdata[4]}<br>human %{x:.2f}, model %{y:.3f}"
                           "<br>alignment %{customdata[2]:.3f}"
                           "<br>n = %{customdata[3]}<extra></extra>")))
    subtitle = None if has_ci else "no intervals: the reports publish no per-trial data"
    if by_model:
        subtitle = " · ".join(t for t in ("one colour and shape per model; above the line: "
                                          "more biased than humans", subtitle) if t)
    # The layout merged as plain dicts (apply_layout, then with_legend_below) and validated
    # once with the traces.
    display_names(traces)
    layout = titled(
        {}, title or "Model bias rate against the human baseline", subtitle=subtitle,
        xaxis=dict(title="Human susceptibility rate", range=[0, 1]),
        yaxis=dict(title="Model treatment rate" + (" (95% CI)" if has_ci else ""),
                   range=[0, 1.02]),
        legend=legend_below(itemclick="toggleothers", itemdoubleclick="toggle"), height=520)
    if by_model:
        layout = merge_layout(layout, legend_below_update(layout, legend_labels(traces)))
    else:
        layout["meta"]["kbench_legend_rows"] = 1
    return go.Figure(dict(data=traces, layout=layout))


ACCURACY_FROM_SCORE = "accuracy (1 − score)"
ACCURACY_REPORTED = "accuracy (as reported)"


def cas_bars(table: pd.DataFrame, *, colors: dict[str, str] | None = None,
             title: str | None = None,
             accuracy_label: str = ACCURACY_FROM_SCORE) -> go.Figure:
    """Mean stated confidence beside mean accuracy per model (CAS), averaged over biases.

    ``accuracy_label`` names the accuracy bars in the legend: the default says how kbench
    computes it from trials (1 − bias score); fingerprint reports publish their own accuracy
    (``actual_accuracy``), shown as :data:`ACCURACY_REPORTED`.
    """
    # labels from data show literally
    table, colors, title = (
        plot_text(table), plot_text(colors), plot_text(title))
    summary = (table[table["has_confidence_data"]].groupby("model", observed=True)
               [["mean_confidence", "mean_accuracy"]].mean().reset_index())
    models = summary["model"].astype(str)
    # traces and layout as plain dicts (apply_layout, then category_ticks, merged), handed
    # to plotly once
    traces = [dict(type="bar", y=models, x=summary["mean_confidence"], orientation="h",
                   name="stated confidence", marker=dict(color="#E69F00"),
                   hovertemplate="%{y}<br>confidence %{x:.3f}<extra></extra>"),
              dict(type="bar", y=models, x=summary["mean_accuracy"], orientation="h",
                   name=plot_text(accuracy_label), marker=dict(color="#0072B2"),
                   hovertemplate="%{y}<br>accuracy %{x:.3f}<extra></extra>")]
    row = name_rows(models, 34 if len(summary) <= 12 else 22)
    display_names(traces)
    layout = titled({}, title or "Stated confidence against accuracy", barmode="group",
                    yaxis=dict(title="", type="category", autorange="reversed"),
                    xaxis=dict(title="Mean over biases", range=[0, 1]),
                    legend=legend_below(), height=170 + row * max(len(summary), 2))
    layout = merge_layout(layout, category_ticks_update(layout, "yaxis", list(models),
                                                        row_px=row, wrap=True))
    return go.Figure(dict(data=traces, layout=layout))


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
    # value and n in one pivot (dropna=False: the same cells as two pivots, at half the cost)
    both = data.pivot_table(index="label", columns="model",
                            values=[value, "n"] if "n" in data and value != "n" else [value],
                            observed=True, dropna=False)
    grid = both[value].sort_index()  # first family on top
    counts = both["n"].reindex_like(grid) if "n" in data else None
    z = grid.to_numpy(dtype=float)
    zmax = max(1.0, float(np.nanmax(z))) if np.isfinite(z).any() else 1.0
    name = value.upper() if value == "bms" else value
    hover = "%{y}<br>%{x}<br>" + value + " %{z:.3f}"
    if counts is not None:
        hover += "<br>n = %{customdata}"
    if grid.shape[1] > grid.shape[0]:  # more models than biases: models down the side
        grid, counts = grid.T, None if counts is None else counts.T
        hover = "%{y}<br>%{x}<br>" + value + " %{z:.3f}" + (
            "<br>n = %{customdata}" if counts is not None else "")
    return heatmap_figure(
        grid, title=title or "Cognitive fingerprint: BMS per model and bias",
        zmin=0, zmax=zmax, colorbar_title=name,
        customdata=None if counts is None else counts.to_numpy(), hovertemplate=hover,
        wrap_cols=True)  # the models: display names whole


def mitigation_chart(table: pd.DataFrame, *, title: str | None = None) -> go.Figure:
    """Score before and after each debiasing method, one row per bias (one model), from
    :func:`kbench_core.bias_reports.mitigation_table`: the baseline (treatment mean, black
    ring) and each method's mean score (one colour and shape per method, the best method
    larger). A mark left of the ring means the method lowered the bias."""
    table, title = plot_text(table), plot_text(title)  # labels from data show literally
    fig = go.Figure()
    biases = sorted(map(str, table["bias"].unique()))
    first = table.drop_duplicates("bias")
    base = first.set_index(first["bias"].astype(str))["baseline"]
    fig.add_trace(go.Scatter(
        x=base.reindex(biases), y=biases, mode="markers", name="before (treatment mean)",
        marker=dict(symbol="circle-open", size=13, color="#222", line=dict(width=2)),
        hovertemplate="%{y}<br>before debiasing %{x:.3f}<extra></extra>"))
    methods = sorted(map(str, table["method"].unique()))
    styles = distinct_styles(methods)
    for method in methods:
        rows = table[table["method"].astype(str) == method]
        rows = rows.set_index(rows["bias"].astype(str)).reindex(biases)
        best = rows["best"].fillna(False).astype(bool).to_numpy()
        style = styles[method]
        # a method KahneBench has no name for ("debiasing_0") reads "debiasing method 1";
        # the hover keeps the name as written
        shown = method_label(method)  # (method is escaped already)
        written = "" if shown == method else f" ({method})"
        fig.add_trace(go.Scatter(
            x=rows["score"], y=biases, mode="markers", name=shown,
            marker=dict(symbol=style.symbol, color=style.color,
                        size=np.where(best, 12, 8), line=dict(width=0)),
            hovertemplate=("%{y}<br>" + shown + written + " %{x:.3f}<extra></extra>")))
    apply_layout(fig, title or "Score before and after debiasing",
                 xaxis=dict(title="score (1 = biased)", range=[-0.02, 1.02]),
                 yaxis=dict(title="", type="category", categoryorder="array",
                            categoryarray=biases[::-1]),
                 height=max(320, 160 + 26 * len(biases)))
    with_legend_below(fig)
    category_ticks(fig, "yaxis", biases, row_px=26)  # (rows of 26 px, as the height says)
    return fig
