"""The Compare panel every family page shows: is model A really better than model B?

Pick two models and a per-item metric; the panel shows the paired difference with its interval
and p (unadjusted: one pair was asked for; every pair: Holm over all), a plain-language
verdict, a forest plot of the per-group differences (bias, study, prompt type), the items a
claimed difference needs, every pair's comparison (also as a forest plot) and each model's rank
interval. Every number comes from :mod:`kbench_core.compare`
(:func:`~kbench_core.compare.compare_pair` carries the verdict, so this panel and ``kbench
compare`` say the same), cached with :mod:`kbench_app.cache` on the runs and the selection the
frame was cut with.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from kbench_app import cache, kit
from kbench_app.downloads import figure_downloads, table_downloads
from kbench_app.ui import plain, shown, table_config
from kbench_core import compare
from kbench_core.figures import compare as compare_figures
from kbench_core.kahne import rows_of
from kbench_core.ranking import rank_text as _rank_texts
from kbench_core.select import labels_in
from kbench_core.tables import format_value
from kbench_core.words import count_noun, plural, unit_plural

__all__ = ["cached_rank_intervals", "compare_panel", "content_hash", "rank_column",
           "rank_text", "run_compare_panel"]

_RANK_TEXT = "rank_text"
# the every-pair forest plot and verdicts: up to the pairs of MANY_MODELS models
_DRAWN_PAIRS = kit.MANY_MODELS * (kit.MANY_MODELS - 1) // 2
_TEST_NAMES = {"paired t": "Paired t test", "CR2 t": "Cluster-robust t test (CR2 standard "
               "error, Bell–McCaffrey degrees of freedom)", "exact McNemar": "Exact McNemar "
               "test on the items where exactly one model scored 1",
               "exact sign": "Exact sign test: every shared item differs the same way",
               "cluster sign-flip": "Exact sign-flip test over the clusters' summed "
               "differences (0/1 outcomes in clusters: a cluster's repeated items count once)"}
_INTERVAL_HELP = {
    "paired t": "Paired t interval on the per-item differences.",
    "CR2 t": "t interval with errors clustered by {cluster}: CR2 cluster-robust SE with "
             "Bell–McCaffrey degrees of freedom (wide when few clusters carry the items).",
    "exact McNemar": "Newcombe's (1998) interval for a difference of paired proportions "
                     "(0/1 outcomes; stays inside [−1, 1]).",
    "exact sign": "None: every shared item differs the same way, so p is the exact sign test.",
    "cluster sign-flip": "Newcombe's (1998) interval on Kish's effective number of items "
                         "(errors clustered by {cluster}), with the Korn–Graubard degrees-of-"
                         "freedom correction: wide when few clusters carry the items.",
}


def content_hash(frame: pd.DataFrame) -> str:
    """A key for a frame's content: a frame that comes from no run (a test's own frame), and
    the two models' rows one pair's comparison is cached on (:func:`_pair_rows`, beside the
    runs' own hashes). Changes whenever the values do (pandas' row hashes, summed with their
    positions so that a reordering counts as a change). Dtypes are not part of it: a
    comparison reads numbers as numbers and labels as text, so frames alike but for dtypes
    compare alike, except an object column mixing 1 and "1" (two labels, hashed alike), which
    the loader never makes (its labels are text)."""
    rows = pd.util.hash_pandas_object(frame, index=False).to_numpy()
    mixed = rows ^ (np.arange(rows.size, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15))
    return f"{len(frame)}:{','.join(map(str, frame.columns))}:{int(mixed.sum(dtype=np.uint64))}"


def _rank_intervals(frame: pd.DataFrame, value: str, *, lower_is_better: bool | None,
                    cluster: str | None) -> pd.DataFrame | None:
    if frame["model"].nunique() < 2:
        return None
    try:
        return compare.rank_intervals(frame, value, lower_is_better=lower_is_better,
                                      cluster=cluster)
    except ValueError:  # no item answered by every model
        return None


def cached_rank_intervals(frame: pd.DataFrame, value: str, *, runs: Sequence[Any] = (),
                          selection: Any = None, lower_is_better: bool | None = None,
                          cluster: str | None = None) -> pd.DataFrame | None:
    """:func:`kbench_core.compare.rank_intervals` (simultaneous intervals from every pair's
    paired test, clustered by ``cluster`` when given), cached on the runs and selection (else
    the frame's content); None when fewer than two models share an item (nothing to rank)."""
    return cache.cached(_rank_intervals, frame, runs=runs,
                        selection=content_hash(frame) if selection is None else selection,
                        spinner="Testing every pair of models for the rank intervals...",
                        value=value,
                        lower_is_better=lower_is_better, cluster=cluster)


def rank_text(ranks: pd.DataFrame, *, cluster: str | None = None) -> pd.Series:
    """``rank [low, high]`` per model (e.g. ``2 [1, 3]``), from :func:`rank_intervals`
    (:func:`kbench_core.ranking.rank_text`), marked `` · few <clusters>`` when the ranks rest
    on fewer than :data:`kbench_core.compare.FEW_CLUSTERS` clusters (the intervals hold there
    and are wide)."""
    few = ranks.get("few_clusters")
    label = f"few {plural(cluster)}" if cluster else "few clusters"
    return pd.Series(_rank_texts(ranks["rank"], ranks["rank_low"], ranks["rank_high"],
                                 few=few, few_label=label),
                     index=ranks.index, name=_RANK_TEXT, dtype=object)


def rank_column(leaderboard: pd.DataFrame, ranks: pd.DataFrame | None, *,
                model: str = "model", position: int = 0) -> tuple[pd.DataFrame, dict[str, Any]]:
    """``leaderboard`` with a ``rank_text`` column (rank and its simultaneous 95% interval)
    inserted at ``position``, and the ``column_config`` entry that labels and explains it.

    Models without a rank (absent from ``ranks``, or ``ranks`` None) get an empty cell.
    """
    out = leaderboard.copy()
    if ranks is None or ranks.empty:
        texts = pd.Series("", index=out.index, dtype=object)
    else:
        lookup = dict(zip(ranks["model"].astype(str), rank_text(ranks), strict=True))
        texts = out[model].astype(str).map(lookup).fillna("")
    if _RANK_TEXT in out:
        out = out.drop(columns=_RANK_TEXT)
    out.insert(min(position, len(out.columns)), _RANK_TEXT, texts.to_numpy())
    config = {_RANK_TEXT: st.column_config.TextColumn(
        "Rank [95% CI]",
        help="Rank by the point value (1 = best; ties share the mean rank) and its 95% "
             "interval from every pair's paired test (Holm over the pairs; all models' "
             "intervals hold together). Models whose intervals overlap cannot be ordered "
             "by this run.")}
    return out, config


def compare_panel(frame: pd.DataFrame, *, values: Mapping[str, str], group: str,
                  cluster: str | None = None, key: str, runs: Sequence[Any] = (),
                  selection: Any = None, colors: Mapping[str, str] | None = None,
                  noun: str = "items", title: bool = True, default: str | None = None) -> None:
    """Render the panel for ``frame`` (one row per model response, with a ``model`` column).

    ``values`` maps a metric's label to its per-item column (e.g. ``{"bias score": "score"}``),
    ``default`` the label selected first (the family's headline; None: the first);
    ``group`` is the forest plot's row (bias, study, prompt_type); ``cluster`` the column whose
    levels share errors (None: items independent); ``runs`` and ``selection`` say where
    ``frame`` came from, for the cache (none: the frame's content is hashed); ``key``
    prefixes every widget key. A single-model selection shows a message instead of the panel,
    and so does a metric the frame has no grain for (a per-trial metric of a bias run an
    engine reduced to weighted tuples: :func:`kbench_core.compare.trial_grain_refusal`'s
    reason).
    """
    if title:
        st.subheader("Compare models")
    models = sorted(map(str, frame["model"].unique()))
    if len(models) < 2:
        st.info("Comparisons need at least two models in the selection"
                + (f"; this one has only {plain(models[0])}." if models else "."),
                icon=":material/balance:")
        return
    where = dict(runs=runs, selection=content_hash(frame) if selection is None else selection)
    modes = ["Two models", "Every pair"]
    mode = kit.radio("Compare", modes, key=f"{key}_mode", horizontal=True,
                     help="Two models: the verdict, numbers and per-group forest plot of one "
                          "pair. Every pair: all pairs at once, p adjusted over all of them.")
    labels = list(values)
    first = default if default in labels else labels[0]
    if mode == modes[0]:
        c1, c2, c3 = st.columns(3)
        # A model that left the selection is replaced by one the other side does not hold
        # (else dropping model A of the pair showed "choose two different models").
        kept_b = kit.held(f"{key}_b", models)
        a = kit.select("Model A", models, key=f"{key}_a", container=c1,
                       default=next(m for m in models if m != kept_b))
        b = kit.select("Model B", models, key=f"{key}_b", container=c2,
                       default=next(m for m in models if m != a))
        label = kit.select("Metric (per item)", labels, key=f"{key}_metric", container=c3,
                           default=first)
    else:
        label = kit.select("Metric (per item)", labels, key=f"{key}_metric", default=first)
    value = values[label]
    refusal = compare.trial_grain_refusal(frame, value)
    if refusal is not None:
        # A weighted bias run (an engine's tuples) has no trials to pair; the family panel
        # never offers a per-trial metric on it, a caller's own menu might.
        st.warning(refusal, icon=":material/block:")
        return
    lower = compare.is_lower_better(value)
    n_pairs = len(models) * (len(models) - 1) // 2

    def every_pair() -> pd.DataFrame | None:
        """Every pair's table; with many models only once asked for (a toggle)."""
        if len(models) > kit.MANY_MODELS and not kit.toggle(
                f"Compare all {n_pairs:,} pairs of the {len(models):,} models", key=f"{key}_all",
                help="Computed on request: with many models every pair is a long table."):
            return None
        return cache.cached(compare.compare_models, frame, **where,
                            spinner="Comparing every pair of models...", value=value,
                            cluster=cluster)

    if mode == modes[1]:
        pairs = every_pair()
        if pairs is not None:
            _every_pair(pairs, label=label, value=value, lower=lower, key=key, runs=runs,
                        cluster=cluster, noun=noun)
    else:
        if a == b:
            st.warning("Choose two different models, or compare every pair.")
        else:
            asked = dict(value=value, a=a, b=b, group=group, cluster=cluster, label=label,
                         noun=noun)
            # One pair asked for: its comparison reads the two models' rows only, so it is
            # keyed on their content, and another model set that keeps A and B finds it (and
            # its forest plot) instead of recomputing both. The rows and their hash are
            # cached on the selection: a rerun does not hash them again.
            rows, digest = cache.cached(_pair_rows, frame, **where, a=a, b=b)
            pair = dict(runs=runs, selection=("pair", digest))
            result = cache.cached(compare.compare_pair, rows, **pair,
                                  spinner="Comparing the two models...", **asked)
            _two_models(result, key=key, runs=runs,
                        selection=(pair["selection"], cache.freeze(asked)))
        # computed once opened: every pair is a table nobody reads on most reruns, and it
        # was a tenth of a model-set change on a big replication run
        every = st.expander(f"Every pair of models ({n_pairs:,})", icon=":material/table:",
                            key=f"{key}_every", on_change="rerun")
        if every.open:
            with every:
                pairs = every_pair()
                if pairs is not None:
                    _pairs_table(pairs, value=value, key=key, runs=runs, label=label,
                                 lower=lower, cluster=cluster, noun=noun)
    unit = plural(cluster) if cluster else noun
    with st.expander(f"Rank intervals (paired tests over {unit})",
                     icon=":material/leaderboard:"):
        if kit.toggle("Compute rank intervals (every pair's test; cached)", key=f"{key}_ranks"):
            ranks = cached_rank_intervals(frame, value, cluster=cluster, **where)
            if ranks is None:
                st.info(f"No {noun} were answered by every model, so there is nothing to rank.")
            else:
                _ranks(ranks, label=label, lower=lower, cluster=cluster, noun=noun, key=key,
                       colors=colors)


def _pair_rows(frame: pd.DataFrame, *, a: str, b: str) -> tuple[pd.DataFrame, str]:
    """The rows of models ``a`` and ``b`` and a hash of their content
    (:func:`content_hash`)."""
    rows = frame[labels_in(frame["model"], (a, b))]
    return rows, content_hash(rows)


def _ranks(ranks: pd.DataFrame, *, label: str, lower: bool, cluster: str | None, noun: str,
           key: str, colors: Mapping[str, str] | None) -> None:
    st.plotly_chart(compare_figures.rank_chart(
        ranks, colors=dict(colors or {}),
        title=f"{label}: rank with its simultaneous 95% interval "
              f"({'lower' if lower else 'higher'} is better)"), key=f"{key}_rank_chart")
    view = ranks.assign(rank_text=rank_text(ranks, cluster=cluster))
    view = view[["model", "rank_text", *[c for c in view if c not in ("model", "rank_text")]]]
    st.dataframe(shown(view), hide_index=True, width="stretch", key=f"{key}_ranks_table",
                 column_config=table_config(view, {"rank_text": "Rank [95%]",
                                                   "value": "Mean per item"}))
    dropped = ranks[ranks["n_dropped"] > 0]
    note = ""
    if len(dropped):
        note = (" Left out because some model lacks them: " + ", ".join(
            f"{plain(m)} {int(k):,}" for m, k in
            zip(dropped["model"], dropped["n_dropped"], strict=True)) + ".")
    resampled = (f"{int(ranks['n_clusters'].iloc[0]):,} {plural(cluster)}, errors clustered "
                 f"by {cluster}" if cluster else "items independent")
    if cluster and bool(ranks["few_clusters"].iloc[0]):
        resampled += (f"; fewer than {compare.FEW_CLUSTERS} {plural(cluster)}, so the rank "
                      "intervals are wide")
    resampled += ("; each interval from every pair's paired test, Holm-adjusted, so all hold "
                  "together")
    st.caption(f"Ranks over the {int(ranks['n'].iloc[0]):,} {noun} every model answered "
               f"({resampled}; {'lower' if lower else 'higher'} {plain(label)} is better). "
               f"Overlapping rank intervals mean the data cannot order those models.{note}")


def _two_models(result: compare.Comparison, *, key: str, runs: Sequence[Any],
                selection: Any) -> None:
    """Verdict, numbers, sample-size line and forest plot for one pair (``selection``: what
    the comparison was cached under, for its figure)."""
    est, a, b, noun = result.estimate, result.a, result.b, result.noun
    lower, label, cluster = result.lower_is_better, result.label, result.cluster
    (st.success if result.claims else st.info)(plain(result.verdict),
                                               icon=":material/balance:")
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("Difference A − B", f"{est.value:+.3f}" if np.isfinite(est.value) else "–",
              help=f"Mean paired difference {a} − {b} over shared {noun}; "
                   f"{'lower' if lower else 'higher'} is better for {label}.")
    test = result.test
    m2.metric("95% interval", f"[{est.low:+.2f}, {est.high:+.2f}]"
              if np.isfinite(est.low) else "–",
              help=_INTERVAL_HELP.get(test or "", "No test: too few shared items or clusters.")
              .format(cluster=cluster or ""))
    quoted = result.adjusted_p if result.adjusted_p is not None else est.p_value
    m3.metric(result.p_label, "–" if quoted is None else format_value(quoted, "p")
              if quoted < compare.P_FLOOR else f"{quoted:.3g}",
              help=f"{_TEST_NAMES.get(test or '', 'No test')}. "
                   + ("One pair was asked for, so its p is not adjusted for the other pairs; "
                      "'Every pair' adjusts over all of them (Holm)."
                      if result.adjusted_p is None else
                      f"{result.correction_name}-adjusted over all "
                      f"{count_noun(result.n_pairs, 'pair')}."))
    m4.metric(f"Shared {noun}", f"{est.n:,}",
              help=f"{est.n_dropped:,} {noun} answered by only one of the two were dropped")
    need, clustered = result.items_needed()
    if need is not None:
        text = (f"To detect a difference of {abs(est.value):.3f} with 80% power at α = 0.05 "
                f"(sd of the per-item differences {result.sd_diff:.3f}) a run needs about "
                f"{need:,} shared {noun} if they were independent")
        if clustered is not None and cluster:
            text += (f"; {noun} cluster by {plain(cluster.replace('_', ' '))} (design effect "
                     f"{result.design_effect:.2f}), so about {clustered:,}, i.e. about "
                     f"{result.clusters_needed():,} {plain(unit_plural(cluster))} of this run's "
                     "mean size")
        st.caption(f"{text}. This run has {est.n:,}.")
    groups = result.groups
    group = groups.columns[0] if len(groups.columns) else "group"
    if len(groups) and groups["delta"].notna().any():
        shown = groups["delta"].notna()
        apart = int((groups["direction"] != "undecided").sum())
        what = group.replace("_", " ")
        if groups["n"].max() <= 1:  # one value per group (a report's BMS): no intervals
            title = f"{label}, {a} − {b} by {what} (one value each, no intervals)"
        else:
            title = (f"{label}, {a} − {b}: {apart} of {int(shown.sum())} {what} differences "
                     "hold after Holm's adjustment")
        # cached: the forest of 278 studies is rebuilt otherwise on every rerun of the page
        forest = cache.cached(compare_figures.forest_plot, groups, runs=runs,
                              selection=selection, label=group, what=f"{a} − {b}",
                              title=title)
        st.plotly_chart(forest, key=f"{key}_forest_chart")
        figure_downloads(forest, f"forest-{result.value}-{a}-vs-{b}", runs=runs,
                         key=f"{key}_forest_dl")
    else:
        st.info(f"No {group.replace('_', ' ')} has {noun} both models answered.")


def _worded(pairs: pd.DataFrame, *, label: str, lower: bool, cluster: str | None,
            noun: str) -> pd.DataFrame:
    """``pairs`` with its ``verdict`` column (:func:`kbench_core.compare.pair_verdicts`, the
    sentences ``kbench compare`` writes), up to the pairs of :data:`_DRAWN_PAIRS`: beyond,
    the table alone (a sentence each for thousands of pairs nobody reads)."""
    if len(pairs) > _DRAWN_PAIRS or "verdict" in pairs:
        return pairs
    return pairs.assign(verdict=compare.pair_verdicts(
        pairs, label, lower_is_better=lower,
        cluster=cluster.replace("_", " ") if cluster else None, noun=noun))


def _every_pair(pairs: pd.DataFrame, *, label: str, value: str, lower: bool, key: str,
                runs: Sequence[Any], cluster: str | None, noun: str) -> None:
    """Every pair of models: forest plot of the differences with their simultaneous
    intervals, one verdict each, the table."""
    decided = int((pairs["direction"] != "undecided").sum())
    if len(pairs) > _DRAWN_PAIRS:  # a forest of thousands of rows and a verdict each: unreadable
        st.caption(f"{decided:,} of {count_noun(len(pairs), 'pair')} differ after Holm's "
                   "adjustment "
                   f"({'lower' if lower else 'higher'} is better). Too many pairs to draw "
                   f"or to word one by one (more than {_DRAWN_PAIRS:,}): the table and its "
                   "downloads hold every pair; 'Two models' words one.")
        _pairs_table(pairs, value=value, key=key, runs=runs, label=label, lower=lower,
                     cluster=cluster, noun=noun)
        return
    pairs = _worded(pairs, label=label, lower=lower, cluster=cluster, noun=noun)
    if pairs["delta"].notna().any():
        # The forest draws each pair's simultaneous interval (Bonferroni over the pairs),
        # which holds 0 wherever Holm leaves the pair undecided: a grey point never shows
        # an interval clear of 0 (issue 37, item 6). The table keeps both.
        drawn = pairs.assign(pair=pairs["model_a"] + " − " + pairs["model_b"],
                             delta_low=pairs["delta_adj_low"],
                             delta_high=pairs["delta_adj_high"])
        forest = compare_figures.forest_plot(
            drawn, label="pair", what="A − B, simultaneous 95% interval",
            title=f"{label}: {decided} of {count_noun(len(drawn), 'pair')} differ after Holm's "
                  f"adjustment ({'lower' if lower else 'higher'} is better)")
        st.plotly_chart(forest, key=f"{key}_pairs_chart")
        figure_downloads(forest, f"pairs-forest-{value}", runs=runs, key=f"{key}_pairs_fig_dl")
    lines = ["- " + plain(text) for text in pairs["verdict"]]
    if len(lines) <= 6:
        st.markdown("\n".join(lines))
    else:
        with st.expander(f"Verdict for each of the {len(lines)} pairs", icon=":material/balance:"):
            st.markdown("\n".join(lines))
    _pairs_table(pairs, value=value, key=key, runs=runs, label=label, lower=lower,
                 cluster=cluster, noun=noun)


def _pairs_table(pairs: pd.DataFrame, *, value: str, key: str, runs: Sequence[Any],
                 label: str, lower: bool, cluster: str | None, noun: str) -> None:
    """Every pair's table, its verdicts and both intervals named; the p columns written as
    the exports write them ("< 1e-12" below that, never 0), the downloads as numbers."""
    pairs = _worded(pairs, label=label, lower=lower, cluster=cluster, noun=noun)
    n_pairs = count_noun(len(pairs), "pair")
    config = table_config(pairs, {"model_a": "Model A", "model_b": "Model B",
                                  "delta": "A − B", "delta_low": "A − B 95% CI low",
                                  "delta_high": "A − B 95% CI high",
                                  "n": "Shared items", "n_dropped": "Items left out"})
    config["delta_low"] = st.column_config.NumberColumn(
        "A − B 95% CI low (this pair)", format="%.4g",
        help="The pair's own interval, as if it were the only comparison (unadjusted)")
    config["delta_high"] = st.column_config.NumberColumn(
        "A − B 95% CI high (this pair)", format="%.4g",
        help="The pair's own interval, as if it were the only comparison (unadjusted)")
    simultaneous = (f"Simultaneous interval over all {n_pairs} (Bonferroni): all of them hold "
                    "their true differences together with 95% probability. It holds 0 "
                    "wherever Holm leaves the pair undecided; Holm's step-down can decide a "
                    "pair whose simultaneous interval still reaches 0, and its verdict says so.")
    config["delta_adj_low"] = st.column_config.NumberColumn(
        "A − B simultaneous 95% CI low", format="%.4g", help=simultaneous)
    config["delta_adj_high"] = st.column_config.NumberColumn(
        "A − B simultaneous 95% CI high", format="%.4g", help=simultaneous)
    config["adjusted_level"] = st.column_config.NumberColumn(
        "Simultaneous level", format="%.4g",
        help="The confidence level of each pair's simultaneous interval: 1 − 0.05 / pairs")
    config["n_discordant"] = st.column_config.NumberColumn(
        "Units that differ", format="%d",
        help="What an exact 0/1 test counts: items where exactly one model scored 1 "
             "(McNemar), or clusters whose summed difference is not 0 (cluster sign-flip)")
    config["p_value"] = st.column_config.TextColumn(
        "p (unadjusted)", help="The pair's own p-value, as if it were the only comparison")
    config["p_adjusted"] = st.column_config.TextColumn(
        f"p (Holm, {n_pairs})",
        help=f"p adjusted by Holm's step-down method over all {n_pairs} of models")
    config["df"] = st.column_config.NumberColumn(
        "df", format="%.1f", help="Degrees of freedom behind the interval (Bell–McCaffrey with "
        "clusters: about the number of clusters minus 1, fewer when they are unequal)")
    config["test"] = st.column_config.TextColumn(
        "Test", help="The test behind p: paired t, CR2 t (cluster-robust, Bell–McCaffrey df), "
                     "exact McNemar (0/1 outcomes), exact cluster sign-flip (0/1 outcomes in "
                     "clusters) or exact sign (every difference alike)")
    if "verdict" in pairs:
        config["verdict"] = st.column_config.TextColumn(
            "Verdict", help="What kbench compare writes for the pair", width="large")
    # the adjusted decision and its interval first, then the pair's own numbers
    first = ["model_a", "model_b", "delta", "delta_adj_low", "delta_adj_high", "p_adjusted",
             "direction", "delta_low", "delta_high", "p_value"]
    view = shown(pairs[[c for c in first if c in pairs]
                       + [c for c in pairs if c not in first]])
    for column in ("p_value", "p_adjusted"):
        view[column] = [format_value(p, "p") for p in pairs[column]]
    st.dataframe(view, hide_index=True, width="stretch", key=f"{key}_pairs_table",
                 column_config=config)
    table_downloads(pairs, f"pairs-{value}", runs=runs, key=f"{key}_pairs_dl")


def run_compare_panel(frame: pd.DataFrame, kind: str, *, key: str, runs: Sequence[Any] = (),
                      selection: Any = None,
                      colors: Mapping[str, str] | None = None) -> None:
    """The family's Compare panel (:func:`family_compare_panel`); on a big run (more than
    :data:`kbench_app.kit.BIG_RUN_ROWS` rows, a weighted run's counted as the rows behind
    its tuples: :func:`kbench_core.kahne.rows_of`) in a section computed when opened."""
    if rows_of(frame) <= kit.BIG_RUN_ROWS:
        family_compare_panel(frame, kind, key=key, runs=runs, selection=selection,
                             colors=colors)
        return
    box, open_ = kit.lazy_section("Compare models", key=f"{key}_open", lazy=True,
                                  what="Paired differences, every pair and rank intervals")
    if open_:
        with box:
            family_compare_panel(frame, kind, key=key, runs=runs, selection=selection,
                                 colors=colors, title=False)


def family_compare_panel(frame: pd.DataFrame, kind: str, *, key: str,
                         runs: Sequence[Any] = (), selection: Any = None,
                         colors: Mapping[str, str] | None = None, title: bool = True) -> None:
    """:func:`compare_panel` with the family's defaults (:data:`kbench_core.compare.
    COMPARISONS`): derives the per-item columns (:func:`~kbench_core.compare.per_item_values`),
    offers the family's metrics, groups the forest plot and clusters the errors as the family
    says (``docs/statistics.md``). A judged run should be one judge's rows (the caller picks the
    judge)."""
    spec = compare.COMPARISONS[kind]
    data = (compare.per_item_values(frame, kind) if selection is None else
            cache.cached(compare.per_item_values, frame, runs=runs, selection=selection,
                         kind=kind))
    group = spec.group if spec.group in data.columns else (spec.cluster or spec.group)
    cluster = spec.cluster if spec.cluster in data.columns else None
    compare_panel(data, values=spec.options, group=group, cluster=cluster, key=key,
                  runs=runs, selection=selection, colors=colors, noun=spec.noun, title=title,
                  default=spec.label_of(spec.default))
