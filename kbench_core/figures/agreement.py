"""Judge-agreement figures: pairwise κ heatmap, per-label agreement bars, spread of a metric
across judges, confusion matrix of two judges.

Pure functions from the tidy tables of :mod:`kbench_core.agreement` (``pairwise_kappa``,
``human_agreement``, ``pairwise_alpha``, ``label_agreement``, ``judge_spread``, ``confusion``)
to plotly figures; no coefficient is computed here.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from kbench_core.agreement import CONSENSUS, HUMAN, LANDIS_KOCH, MISSING, interpret
from kbench_core.figures.base import (
    APP_WIDTH,
    PALETTE,
    _heatmap_text,
    apply_layout,
    category_ticks,
    set_panels,
    text_width,
    with_legend_below,
)
from kbench_core.text import count_noun, plot_text

__all__ = ["agreement_bars", "confusion_heatmap", "judge_spread_chart", "kappa_heatmap"]

# Judges are not models: their own colours (model colours stay with models), black for the
# consensus and dark grey for the expert.
JUDGE_COLORS: tuple[str, ...] = ("#56B4E9", "#D55E00", "#009E73", "#CC79A7", "#E69F00",
                                 "#0072B2", "#F0E442")
JUDGE_SYMBOLS: tuple[str, ...] = ("circle", "square", "triangle-up", "diamond", "cross",
                                  "triangle-down", "pentagon")
COEFFICIENT_LABELS: dict[str, str] = {"fleiss_kappa": "Fleiss' κ",
                                      "krippendorff_alpha": "Krippendorff's α",
                                      "percent_agreement": "Percent agreement"}
COEFFICIENT_COLORS: dict[str, str] = {"fleiss_kappa": "#0072B2",
                                      "krippendorff_alpha": "#E69F00",
                                      "percent_agreement": "#999999"}
_METRIC_NAMES = {"tdr": "TDR", "sui": "SUI", "accuracy": "Accuracy", "f2": "F2",
                 "tus": "TUS", "finding_precision": "Finding precision", "lgi": "LGI"}


def _interval(low: float, high: float) -> str:
    return "" if not (np.isfinite(low) and np.isfinite(high)) else f"[{low:.2f}, {high:.2f}]"


def kappa_heatmap(pairs: pd.DataFrame, *, human: pd.DataFrame | None = None,
                  value: str = "kappa", label: str | None = None,
                  title: str | None = None) -> go.Figure:
    """Judges × judges heatmap of a pairwise coefficient, annotated with value and interval.

    ``pairs`` is :func:`~kbench_core.agreement.pairwise_kappa` (``value="kappa"``) or
    :func:`~kbench_core.agreement.pairwise_alpha` (``value="alpha"``); ``human`` optionally
    :func:`~kbench_core.agreement.human_agreement`, drawn as a last row and column. The matrix
    is symmetric with a blank diagonal; the diverging scale runs from -1 (red) through 0
    (white, chance) to 1 (blue). Hover names both judges, the value, its 95% interval, the
    Landis & Koch band and n.
    """
    # labels from data show literally
    pairs, human, label, title = (
        plot_text(pairs), plot_text(human), plot_text(label), plot_text(title))
    needed = ["judge_a", "judge_b", value, "n"]
    missing = [c for c in needed if c not in pairs]
    if missing:
        raise ValueError(f"pairs needs the column(s) {', '.join(missing)}")
    table = pairs.copy()
    if human is not None and len(human):
        table = pd.concat([table, human.rename(columns={"judge": "judge_a"})
                           .assign(judge_b=HUMAN)], ignore_index=True)
    names = list(dict.fromkeys([*map(str, table["judge_a"]), *map(str, table["judge_b"])]))
    names = [n for n in names if n != HUMAN] + [n for n in names if n == HUMAN]
    index = {n: i for i, n in enumerate(names)}
    size = len(names)
    z = np.full((size, size), np.nan)
    low = np.full((size, size), np.nan)
    high = np.full((size, size), np.nan)
    n = np.zeros((size, size), dtype=np.int64)
    a = table["judge_a"].astype(str).map(index).to_numpy()
    b = table["judge_b"].astype(str).map(index).to_numpy()
    for rows, cols in ((a, b), (b, a)):
        z[rows, cols] = table[value].to_numpy(dtype=float)
        for target, column in ((low, f"{value}_low"), (high, f"{value}_high")):
            if column in table:
                target[rows, cols] = table[column].to_numpy(dtype=float)
        n[rows, cols] = table["n"].to_numpy()
    text = np.full((size, size), "", dtype=object)
    short = np.full((size, size), "", dtype=object)  # the value alone, for narrow cells
    hover = np.full((size, size), "same judge", dtype=object)
    symbol = "κ" if value == "kappa" else "α" if value == "alpha" else value
    bands = interpret(z)
    for i in range(size):
        for j in range(size):
            if i == j:
                continue
            shown = "n/a" if np.isnan(z[i, j]) else f"{z[i, j]:.2f}"
            span = _interval(low[i, j], high[i, j])
            text[i, j] = f"<b>{shown}</b>" + (f"<br>{span}" if span else "")
            short[i, j] = f"<b>{shown}</b>"
            hover[i, j] = (f"{names[i]} vs {names[j]}<br>{symbol} = {shown} {span}"
                           f"<br>{bands[i, j]}<br>n = {n[i, j]} items")
    fig = go.Figure(go.Heatmap(
        z=z, x=names, y=names, zmin=-1, zmax=1, zmid=0, colorscale="RdBu",
        colorbar=dict(title=symbol, tickvals=[-1, -0.5, 0, 0.2, 0.4, 0.6, 0.8, 1]),
        text=text, texttemplate="%{text}", textfont=dict(size=13), customdata=hover,
        # no colour bar over an all-empty matrix (plotly cannot scale one: "dtick: Infinity")
        showscale=bool(np.isfinite(z).any()),
        xgap=2, ygap=2,
        hovertemplate="%{customdata}<extra></extra>"))
    if title is None:
        word = "Cohen's κ" if value == "kappa" else "Krippendorff's α" if value == "alpha" \
            else value
        title = f"{word} between judges" + (f" on {label}" if label else "")
        finite = table[np.isfinite(table[value].to_numpy(dtype=float))]
        if len(finite) > 1 and np.ptp(finite[value].to_numpy(dtype=float)) < 5e-3:
            shared = float(finite[value].iloc[0])
            title += f": {shared:.2f} for every pair ({interpret(shared)})"
        elif len(finite) > 1:
            worst = finite.loc[finite[value].idxmin()]
            title += (f": lowest {worst['judge_a']} vs {worst['judge_b']} "
                      f"({worst[value]:.2f}, {interpret(float(worst[value]))})")
    side = max(320, 140 + 110 * size)
    apply_layout(fig, title, height=side,
                 xaxis=dict(title="", side="bottom", showgrid=False, showline=False,
                            ticks="", constrain="domain"),
                 # square cells; not over an all-empty matrix, where plotly.js cannot
                 # scale the axes ("dtick error: Infinity")
                 yaxis=dict(title="", autorange="reversed", showgrid=False, showline=False,
                            ticks="", scaleanchor="x" if np.isfinite(z).any() else None,
                            constrain="domain"))
    # Narrow cells (an export at one column) show the value without its interval (it stays
    # in the hover), and nothing when even that does not fit (see fit_to_width).
    meta = dict(fig.layout.meta)
    spans = [len(line) for cell in text.ravel() for line in str(cell).split("<br>")[1:]]
    digit_em = 0.56  # digits and brackets are narrower than the mean character
    meta["kbench_heatmap"] = dict(
        columns=size, label_px=max((text_width(n_) for n_ in names), default=0),
        text_px=max(spans, default=0) * digit_em * 13 + 8, short=short.tolist(),
        short_px=5 * digit_em * 13 + 8)
    fig.update_layout(meta=meta)
    _heatmap_text(fig, APP_WIDTH, meta["kbench_heatmap"])  # laid out for the app's column
    return fig


def agreement_bars(table: pd.DataFrame, *, title: str | None = None) -> go.Figure:
    """Grouped bars of agreement per label with 95% intervals, from
    :func:`~kbench_core.agreement.label_agreement`: one colour per coefficient (Fleiss' κ,
    Krippendorff's α, percent agreement), dotted guides at the Landis & Koch band limits."""
    table, title = plot_text(table), plot_text(title)  # labels from data show literally
    missing = [c for c in ("label", "coefficient", "value", "low", "high", "n")
               if c not in table]
    if missing:
        raise ValueError(f"table needs the column(s) {', '.join(missing)}")
    labels = list(dict.fromkeys(map(str, table["label"])))
    fig = go.Figure()
    for coefficient in dict.fromkeys(table["coefficient"]):
        part = table[table["coefficient"] == coefficient]
        color = COEFFICIENT_COLORS.get(coefficient, PALETTE[0])
        value = part["value"].to_numpy(dtype=float)
        low, high = part["low"].to_numpy(dtype=float), part["high"].to_numpy(dtype=float)
        shown = np.isfinite(low) & np.isfinite(high)
        fig.add_trace(go.Bar(
            x=part["label"].astype(str), y=value, name=COEFFICIENT_LABELS.get(
                coefficient, coefficient), marker_color=color,
            error_y=dict(type="data", symmetric=False, color="#333", thickness=1.2, width=4,
                         array=np.where(shown, high - value, 0),
                         arrayminus=np.where(shown, value - low, 0)),
            customdata=np.column_stack([
                [_interval(lo, hi) or "no interval" for lo, hi in zip(low, high, strict=True)],
                part["n"].to_numpy(), part.get("level", pd.Series("", index=part.index)),
                interpret(value)]),
            hovertemplate=("<b>%{x}</b><br>" + COEFFICIENT_LABELS.get(coefficient, coefficient)
                           + " = %{y:.3f} %{customdata[0]}<br>%{customdata[3]}"
                           "<br>level %{customdata[2]}, n = %{customdata[1]}<extra></extra>")))
    lows = table["low"].to_numpy(dtype=float)
    values = table["value"].to_numpy(dtype=float)
    floor = np.nanmin(np.concatenate([lows[np.isfinite(lows)], values[np.isfinite(values)],
                                      [0.0]]))
    for bound, word in LANDIS_KOCH[1:]:
        previous = LANDIS_KOCH[[b for b, _ in LANDIS_KOCH].index(bound) - 1][0]
        fig.add_hline(y=bound, line=dict(color="#bbb", width=1, dash="dot"))
        fig.add_annotation(x=1, xref="paper", xanchor="left", y=(bound + previous) / 2,
                           text=word, showarrow=False, font=dict(size=10, color="#777"))
    apply_layout(fig, title or "Agreement between judges, per label",
                 barmode="group", bargap=0.25, height=440,
                 xaxis=dict(title="Label", type="category", categoryorder="array",
                            categoryarray=labels),
                 subtitle="1 = perfect agreement, 0 = chance",
                 yaxis=dict(title="Agreement", range=[min(floor - 0.05, 0), 1.05]),
                 margin=dict(r=110))
    with_legend_below(fig)
    return fig


def judge_color(judge: str, order: Sequence[str]) -> tuple[str, str]:
    """Colour and marker symbol of a judge: the consensus black star, the human a dark
    diamond, LLM judges in :data:`JUDGE_COLORS` by their position in ``order``."""
    if judge == CONSENSUS:
        return "#000000", "star"
    if judge == HUMAN:
        return "#555555", "diamond-wide"
    llm = [j for j in order if j not in (CONSENSUS, HUMAN)]
    i = llm.index(judge) if judge in llm else 0
    return JUDGE_COLORS[i % len(JUDGE_COLORS)], JUDGE_SYMBOLS[i % len(JUDGE_SYMBOLS)]


def judge_spread_chart(spread: pd.DataFrame, metrics: Sequence[str] = ("tdr", "sui"), *,
                       title: str | None = None) -> go.Figure:
    """One panel per metric: for each model (x) the metric under each judge (markers side by
    side, with the 95% interval when the table has one) over a grey bar spanning the LLM
    judges' range, from :func:`~kbench_core.agreement.judge_spread`."""
    spread, title = plot_text(spread), plot_text(title)  # labels from data show literally
    missing = [c for c in ("model", "judge", *metrics) if c not in spread]
    if missing:
        raise ValueError(f"spread needs the column(s) {', '.join(missing)}")
    judges = (list(spread["judge"].cat.categories)
              if isinstance(spread["judge"].dtype, pd.CategoricalDtype)
              else list(dict.fromkeys(map(str, spread["judge"]))))
    judges = [j for j in judges if (spread["judge"].astype(str) == j).any()]
    models = sorted(map(str, spread["model"].unique()))
    fig = make_subplots(rows=1, cols=len(metrics), shared_yaxes=True)
    judge_text = spread["judge"].astype(str)
    model_text = spread["model"].astype(str)
    for col, metric in enumerate(metrics, start=1):
        llm = spread[~judge_text.isin((HUMAN, CONSENSUS))]
        span = llm.groupby(llm["model"].astype(str))[metric].agg(["min", "max"]).reindex(models)
        fig.add_trace(go.Bar(
            y=models, x=(span["max"] - span["min"]).to_numpy(), base=span["min"].to_numpy(),
            orientation="h", marker_color="rgba(0,0,0,0.08)", width=0.7, showlegend=False,
            hoverinfo="skip"), row=1, col=col)
        for judge in judges:
            part = spread[judge_text == judge].assign(model=model_text)
            part = part.set_index("model").reindex(models)
            color, symbol = judge_color(judge, judges)
            low, high = f"{metric}_low", f"{metric}_high"
            error = None
            if low in part and high in part and part[low].notna().any():
                error = dict(type="data", symmetric=False, color=color, thickness=1.2, width=3,
                             array=(part[high] - part[metric]).clip(lower=0).fillna(0),
                             arrayminus=(part[metric] - part[low]).clip(lower=0).fillna(0))
            fig.add_trace(go.Scatter(
                y=models, x=part[metric], mode="markers", name=judge, legendgroup=judge,
                showlegend=col == 1, error_x=error,
                marker=dict(color=color, symbol=symbol, size=11 if judge == CONSENSUS else 9,
                            line=dict(color="white", width=1)),
                customdata=part.get("n"),
                hovertemplate=(f"<b>%{{y}}</b><br>{judge}: {_METRIC_NAMES.get(metric, metric)}"
                               " = %{x:.3f}<br>n = %{customdata}<extra></extra>")),
                row=1, col=col)
        fig.update_xaxes(rangemode="tozero", nticks=5, row=1, col=col)
        fig.update_yaxes(type="category", autorange="reversed", row=1, col=col)
    if title is None:
        ranges = []
        for metric in metrics:
            llm = spread[~judge_text.isin((HUMAN, CONSENSUS))]
            by_model = llm.groupby(llm["model"].astype(str))[metric]
            ranges.append(float((by_model.max() - by_model.min()).max()))
        widest = max(range(len(metrics)), key=lambda i: np.nan_to_num(ranges[i]))
        title = (f"How much the judge moves the score: {_METRIC_NAMES.get(metrics[widest], '')}"
                 f" differs by up to {ranges[widest]:.2f} between judges")
    apply_layout(fig, title, scattermode="group", legend_title_text="Judge")
    row = 30 if len(models) <= 12 else 16
    category_ticks(fig, "yaxis", models, row_px=row)
    meta = dict(fig.layout.meta)
    meta.update(kbench_shared_y=True, kbench_panels=dict(min_width=200))
    fig.update_layout(meta=meta)
    set_panels(fig, len(metrics), len(metrics), panel_height=40 + row * len(models),
               header=130 + 20 * fig.layout.title.text.count("<br>"),
               titles=[_METRIC_NAMES.get(m, m) for m in metrics])
    with_legend_below(fig)
    return fig


def confusion_heatmap(table: pd.DataFrame, judge_a: str, judge_b: str, *,
                      label: str | None = None, title: str | None = None) -> go.Figure:
    """Counts of two judges' values (rows ``judge_a``, columns ``judge_b``) from
    :func:`~kbench_core.agreement.confusion`, annotated; agreement lies on the diagonal."""
    # labels from data show literally
    table, label, title = plot_text(table), plot_text(label), plot_text(title)
    judge_a, judge_b = plot_text(judge_a), plot_text(judge_b)
    missing = [c for c in ("value_a", "value_b", "count") if c not in table]
    if missing:
        raise ValueError(f"table needs the column(s) {', '.join(missing)}")
    grid = table.pivot_table(index="value_a", columns="value_b", values="count",
                             aggfunc="sum", observed=False, fill_value=0)
    # A "(missing)" row or column nobody used is noise: drop it.
    if MISSING in grid.index and MISSING in grid.columns \
            and grid.loc[MISSING].sum() == 0 and grid[MISSING].sum() == 0:
        grid = grid.drop(index=MISSING, columns=MISSING)
    z = grid.to_numpy(dtype=float)
    rows, cols = [str(v) for v in grid.index], [str(v) for v in grid.columns]
    fig = go.Figure(go.Heatmap(
        z=z, x=cols, y=rows, colorscale="Blues", zmin=0,
        colorbar=dict(title=dict(text="Items", side="right"), thickness=12),
        text=z.astype(int).astype(str), texttemplate="%{text}", xgap=2, ygap=2,
        hovertemplate=(f"{judge_a}: %{{y}}<br>{judge_b}: %{{x}}<br>%{{z}} items"
                       "<extra></extra>")))
    if title is None:
        both = [v for v in rows if v in cols and v != MISSING]
        agree = int(sum(grid.loc[v, v] for v in both))
        total = int(z.sum())
        title = (f"{label + ': ' if label else ''}{judge_a} vs {judge_b} agree on "
                 f"{agree} of {count_noun(total, 'item')}")
    apply_layout(fig, title, height=max(320, 160 + 60 * len(rows)),
                 xaxis=dict(title=dict(text=judge_b, standoff=12), side="bottom",
                            showgrid=False, type="category"),
                 yaxis=dict(title=dict(text=judge_a, standoff=12), autorange="reversed",
                            showgrid=False, type="category"))
    return fig
