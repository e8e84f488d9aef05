"""The Compare panel every family page shows: is model A really better than model B?

Pick two models and a per-item metric; the panel shows the paired difference with its interval
and Holm-adjusted p (over every pair of models), a plain-language verdict, a forest plot of the
per-group differences (bias, study, prompt type), the items a claimed difference needs, every
pair's comparison and each model's rank interval. Everything comes from
:mod:`kbench_core.compare`; the bootstrap of ranks is cached per selection.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from kbench_app import urlstate
from kbench_app.downloads import figure_downloads, table_downloads
from kbench_app.ui import plain
from kbench_core import compare
from kbench_core.figures import compare as compare_figures

__all__ = ["compare_panel"]


@st.cache_resource(max_entries=32, show_spinner="Comparing models...")
def _tables(key: tuple, _frame: pd.DataFrame, value: str, a: str, b: str, group: str,
            cluster: str | None) -> dict[str, Any]:
    pairs = compare.compare_models(_frame, value, cluster=cluster)
    est = compare.paired_difference(_frame, value, a, b, cluster=cluster)
    groups = compare.group_differences(_frame, value, a, b, group)
    table = compare.item_values(_frame, value)
    both = table[[a, b]].dropna()
    sd = float((both[a] - both[b]).std(ddof=1)) if len(both) > 1 else float("nan")
    return {"pairs": pairs, "est": est, "groups": groups, "sd": sd}


@st.cache_resource(max_entries=32, show_spinner="Bootstrapping the ranks (1000 resamples)...")
def _ranks(key: tuple, _frame: pd.DataFrame, value: str) -> pd.DataFrame:
    return compare.rank_intervals(_frame, value)


def compare_panel(frame: pd.DataFrame, *, values: Mapping[str, str], group: str,
                  cluster: str | None, key: str, content_key: str,
                  runs: Sequence[Any] = (), colors: Mapping[str, str] | None = None,
                  noun: str = "items") -> None:
    """Render the panel for ``frame`` (one row per model response, with a ``model`` column).

    ``values`` maps a metric's label to its per-item column (e.g. ``{"bias score": "score"}``);
    ``group`` is the forest plot's row (bias, study, prompt_type); ``cluster`` the column whose
    levels share errors (None: items independent); ``content_key`` identifies the data (run
    hashes and selection) for the caches.
    """
    st.subheader("Compare models")
    models = sorted(map(str, frame["model"].unique()))
    if len(models) < 2:
        st.info("Comparisons need at least two models in the selection.")
        return
    c1, c2, c3 = st.columns(3)
    urlstate.prepare(f"{key}_a", "one", models[0], models)
    urlstate.prepare(f"{key}_b", "one", models[1], models)
    labels = list(values)
    urlstate.prepare(f"{key}_metric", "one", labels[0], labels)
    a = c1.selectbox("Model A", models, key=f"{key}_a")
    b = c2.selectbox("Model B", models, key=f"{key}_b")
    label = c3.selectbox("Metric (per item)", labels, key=f"{key}_metric")
    if a == b:
        st.warning("Choose two different models.")
        return
    value = values[label]
    lower = compare.is_lower_better(value)
    cache_key = (content_key, value, a, b, group, cluster)
    tables = _tables(cache_key, frame, value, a, b, group, cluster)
    est = tables["est"]
    pairs = tables["pairs"]
    row = pairs[((pairs["model_a"] == a) & (pairs["model_b"] == b))
                | ((pairs["model_a"] == b) & (pairs["model_b"] == a))]
    adjusted = float(row["p_adjusted"].iloc[0]) if len(row) else None
    context = f"clustered by {cluster}" if cluster else ""
    sentence = compare.verdict(est, a, b, label, lower_is_better=lower, adjusted_p=adjusted,
                               context="")
    decided = np.isfinite(est.low) and not est.low <= 0 <= est.high
    (st.success if decided else st.info)(plain(sentence), icon=":material/balance:")
    m1, m2, m3, m4 = st.columns(4)
    m1.metric(f"{a} − {b}", f"{est.value:+.3f}",
              help=f"Mean paired difference over shared {noun}; "
                   f"{'lower' if lower else 'higher'} is better for {label}.")
    m2.metric("95% interval", f"[{est.low:+.2f}, {est.high:+.2f}]",
              help="t interval" + (f" with cluster-robust errors ({context}, G − 1 df)"
                                   if cluster else " on the per-item differences"))
    m3.metric("Holm-adjusted p", "–" if adjusted is None or not np.isfinite(adjusted)
              else f"{adjusted:.3g}", help=f"Adjusted over all {len(pairs)} pairs of models")
    m4.metric(f"Shared {noun}", f"{est.n:,}",
              help=f"{est.n_dropped:,} {noun} answered by only one of the two were dropped")
    if np.isfinite(tables["sd"]) and est.value != 0 and np.isfinite(est.value):
        need = compare.samples_needed(est.value, tables["sd"])
        st.caption(f"To detect a difference of {abs(est.value):.3f} with 80% power at α = 0.05 "
                   f"(sd of the per-item differences {tables['sd']:.3f}) a run needs about "
                   f"{need:,} shared {noun}; this one has {est.n:,}.")

    forest = compare_figures.forest_plot(
        tables["groups"], label=group, what=f"{a} − {b}",
        title=f"{label}: {a} − {b} per {group}")
    st.plotly_chart(forest, key=f"{key}_forest_chart")
    figure_downloads(forest, f"forest-{value}-{a}-vs-{b}", runs=runs, key=f"{key}_forest_dl")

    with st.expander(f"Every pair of models ({len(pairs)})", icon=":material/table:"):
        st.dataframe(pairs, hide_index=True, width="stretch",
                     column_config={c: st.column_config.NumberColumn(format="%.4f")
                                    for c in ("delta", "delta_low", "delta_high", "p_value",
                                              "p_adjusted")})
        table_downloads(pairs, f"pairs-{value}", runs=runs, key=f"{key}_pairs_dl")
    with st.expander("Rank intervals (bootstrap over items)", icon=":material/leaderboard:"):
        urlstate.prepare(f"{key}_ranks", "bool", False)
        if st.toggle("Compute rank intervals (1000 resamples; cached)", key=f"{key}_ranks"):
            ranks = _ranks((content_key, value), frame, value)
            st.plotly_chart(compare_figures.rank_chart(ranks, colors=dict(colors or {})),
                            key=f"{key}_rank_chart")
            st.dataframe(ranks, hide_index=True, width="stretch")
            st.caption("Overlapping rank intervals mean the data cannot order those models.")
