"""Every pair of models, with raw and Holm / Benjamini–Hochberg adjusted p, and per-group
differences (``docs/statistics.md``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.multitest import multipletests

from .directions import _directions
from .items import Correction, _item_columns, _item_means, item_values
from .paired import (
    _is_binary,
    cluster_sign_flip_p,
    clustered_newcombe,
    kish_design_effect,
    newcombe_paired,
)

_PAIR_CELLS = 1_000_000  # pairs × items per chunk of compare_models (8 MB per float array)


def _sign_p(positive: np.ndarray, negative: np.ndarray) -> np.ndarray:
    """Exact two-sided sign test (:func:`sign_test`) from the counts of positive and negative
    differences, elementwise: for p = ½ the binomial is symmetric, so binomtest's p is
    min(1, 2·P(X ≤ min(k, m − k))), and 1 when m = 0."""
    m = positive + negative
    return np.where(m > 0, np.minimum(1.0, 2 * stats.binom.cdf(
        np.minimum(positive, negative), np.maximum(m, 1), 0.5)), 1.0)


def _pairs_paired(values: np.ndarray, first: np.ndarray, second: np.ndarray,
                  cluster: np.ndarray | None, level: float) -> pd.DataFrame:
    """:func:`_paired_values` for many pairs of models at once (``values``: models × items,
    NaN = not answered; pair k is ``first[k]`` − ``second[k]``): the same rules, tests and
    numbers, each computed with numpy over a pairs × items array (and, with ``cluster``, the
    per-pair cluster sums from one ``np.bincount`` over pair-and-cluster codes), and each scipy
    distribution called once on arrays. The columns of :func:`compare_models` from ``delta``
    on."""
    a, b = values[first], values[second]
    size = first.size
    known_a, known_b = ~np.isnan(a), ~np.isnan(b)
    both = known_a & known_b
    n = both.sum(axis=1)
    dropped = (known_a | known_b).sum(axis=1) - n
    diff = np.where(both, a - b, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = diff.sum(axis=1) / n
        resid = np.where(both, diff - mean[:, None], 0.0)
        se_items = np.sqrt((resid**2).sum(axis=1) / (n - 1)) / np.sqrt(n)
    scale = np.abs(diff).max(axis=1, initial=0.0)
    binary = ~(both & ~(_is_binary(a) & _is_binary(b))).any(axis=1)
    positive, negative = (both & (diff > 0)).sum(axis=1), (both & (diff < 0)).sum(axis=1)
    ones = (both & (a == 1) & (b == 1)).sum(axis=1)
    two = n >= 2
    if cluster is None:
        n_groups = None
        independent = np.ones(size, dtype=bool)
        one_cluster = np.zeros(size, dtype=bool)
        se, df = se_items, (n - 1).astype(float)
        unit_positive, unit_negative = positive, negative
    else:
        groups = int(cluster.max()) + 1 if cluster.size else 1
        cells = (np.arange(size)[:, None] * groups + cluster[None, :])[both]
        sizes = np.bincount(cells, minlength=size * groups).reshape(size, groups)
        sums = np.bincount(cells, weights=resid[both], minlength=size * groups).reshape(
            size, groups)
        n_groups = (sizes > 0).sum(axis=1)
        independent = n_groups == n
        one_cluster = n_groups < 2
        # cr2_mean on every pair: empty clusters add 0 to each sum (share 0, weight 1)
        with np.errstate(invalid="ignore", divide="ignore"):
            share = sizes / n[:, None]
            weight = 1.0 / (1.0 - share)
            variance = (weight * sums**2).sum(axis=1) / n.astype(float) ** 2
            df = 1.0 / ((weight**2 * share**2 * (1 - 2 * share)).sum(axis=1)
                        + (weight * share**2).sum(axis=1) ** 2)
            se = np.sqrt(np.maximum(variance, 0.0))
        # the sign test's units with clusters: each cluster's mean difference
        totals = np.bincount(cells, weights=diff[both], minlength=size * groups).reshape(
            size, groups)
        present = sizes > 0
        unit_positive = (present & (totals > 0)).sum(axis=1)
        unit_negative = (present & (totals < 0)).sum(axis=1)
    mcnemar = two & binary & independent
    no_test = ~two | (~mcnemar & one_cluster)
    # 0/1 outcomes in clusters of several items: the exact sign-flip test over the clusters'
    # sums with Newcombe's interval on Kish's effective n (paired.cluster_sign_flip_p)
    flip = ~no_test & binary & ~independent
    with np.errstate(invalid="ignore"):
        degenerate = ~no_test & ~mcnemar & ~flip & ((se <= 1e-12 * scale) | (scale == 0))
    t_test = ~no_test & ~mcnemar & ~flip & ~degenerate
    # each p computed on the rows whose test it is (with 179,700 pairs every array counts)
    p_value = np.full(size, np.nan)
    if t_test.any():
        with np.errstate(invalid="ignore", divide="ignore"):
            p_value[t_test] = 2 * stats.t.sf(np.abs(mean[t_test] / se[t_test]), df[t_test])
    if mcnemar.any():
        p_value[mcnemar] = _sign_p(positive[mcnemar], negative[mcnemar])
    if degenerate.any():
        p_value[degenerate] = _sign_p(unit_positive[degenerate], unit_negative[degenerate])
    deff = np.full(size, np.nan)
    discordant = np.where(mcnemar, positive + negative, -1)
    if flip.any():
        p_value[flip] = cluster_sign_flip_p(totals[flip])
        with np.errstate(invalid="ignore", divide="ignore"):
            deff[flip] = kish_design_effect(se[flip], se_items[flip] ** 2,
                                            (sizes[flip].astype(float) ** 2).sum(axis=1),
                                            n[flip])
        discordant[flip] = (np.rint(totals[flip]) != 0).sum(axis=1)
    test = np.select([mcnemar, flip, degenerate, t_test],
                     ["exact McNemar", "cluster sign-flip", "exact sign",
                      "paired t" if cluster is None else "CR2 t"], "")
    clusters = (pd.array([pd.NA] * size, dtype="Int64") if n_groups is None
                else pd.array(n_groups, dtype="Int64"))
    out = pd.DataFrame({
        "delta": np.where(n >= 1, mean, np.nan), "delta_low": np.nan, "delta_high": np.nan,
        "p_value": p_value.astype(float), "test": test.astype(object),
        "df": np.where(t_test | flip, df, np.nan), "n": n.astype(np.int64),
        "n_clusters": clusters, "n_dropped": dropped.astype(np.int64),
        "n_discordant": pd.arrays.IntegerArray(np.maximum(discordant, 0), discordant < 0),
        # what _bounds needs to give the interval at another level (dropped by compare_models)
        "_se": se, "_binary": binary, "_ones": ones, "_positive": positive,
        "_negative": negative, "_deff": deff})
    out["delta_low"], out["delta_high"] = _bounds(out, level)
    return out


_INTERNAL = ["_se", "_binary", "_ones", "_positive", "_negative", "_deff"]


def _bounds(table: pd.DataFrame, level: float | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each pair's interval at ``level`` (one level, or one per row), by the row's test: the
    t interval (cut to [−1, 1] on 0/1 outcomes), Newcombe's for McNemar, Newcombe's on Kish's
    effective n for the cluster sign-flip test; NaN for the exact sign test and no test."""
    test = table["test"].to_numpy(dtype=object)
    mean = table["delta"].to_numpy(dtype=float)
    df = table["df"].to_numpy(dtype=float)
    se = table["_se"].to_numpy(dtype=float)
    ones, positive, negative = (table[c].to_numpy(dtype=float)
                                for c in ("_ones", "_positive", "_negative"))
    rest = table["n"].to_numpy(dtype=float) - ones - positive - negative
    level = np.broadcast_to(np.asarray(level, dtype=float), mean.shape)
    low, high = np.full(mean.shape, np.nan), np.full(mean.shape, np.nan)
    t_test = (test == "paired t") | (test == "CR2 t")
    if t_test.any():
        crit = stats.t.ppf((1 + level[t_test]) / 2, df[t_test])
        t_low, t_high = mean[t_test] - crit * se[t_test], mean[t_test] + crit * se[t_test]
        binary = table["_binary"].to_numpy(dtype=bool)[t_test]
        low[t_test] = np.where(binary, np.maximum(t_low, -1.0), t_low)
        high[t_test] = np.where(binary, np.minimum(t_high, 1.0), t_high)
    for name, rows in (("exact McNemar", test == "exact McNemar"),
                       ("cluster sign-flip", test == "cluster sign-flip")):
        if not rows.any():
            continue
        index = np.flatnonzero(rows)
        counts = (ones[index], positive[index], negative[index], rest[index])
        levels = level[index]
        deff = table["_deff"].to_numpy(float)[index]
        # one level for the whole table but for the rows without a p: one call each
        for value in ((levels[0],) if (levels == levels[0]).all() else np.unique(levels)):
            at = slice(None) if levels.size and (levels == value).all() else levels == value
            sub = tuple(c[at] for c in counts)
            if name == "exact McNemar":
                lo, hi = newcombe_paired(*sub, level=float(value))
            else:
                lo, hi = clustered_newcombe(*sub, deff[at], df[index][at], level=float(value))
            low[index[at]], high[index[at]] = lo, hi
    return low, high


def _adjust(p_values: pd.Series, correction: Correction) -> np.ndarray:
    """p adjusted over the defined ones (statsmodels' ``multipletests``; Holm by
    :func:`holm`); NaN stays NaN."""
    p = p_values.astype(float).to_numpy()
    if correction is None:
        return p.copy()
    adjusted = np.full(p.shape, np.nan)
    ok = np.isfinite(p)
    if ok.any():
        adjusted[ok] = (holm(p[ok]) if correction == "holm"
                        else multipletests(p[ok], method=correction)[1])
    return adjusted


def holm(p: np.ndarray) -> np.ndarray:
    r"""Holm's step-down adjusted p-values (Holm 1979, *Scand. J. Statist.* 6, 65–70):
    with the m p-values sorted, :math:`\tilde p_{(i)} = \min(1, \max_{j \le i} (m - j + 1)
    p_{(j)})`, returned in the input's order.

    Written by hand although statsmodels' ``multipletests(method="holm")`` gives the same
    numbers (``tests/test_stats_round2_compare.py`` checks it): that function runs a full
    garbage collection on every call, 30–90 ms in an app process holding big runs, paid on
    every rerun of a Compare panel (every pair, the per-study forest)."""
    p = np.asarray(p, dtype=float)
    order = np.argsort(p, kind="mergesort")
    steps = p[order] * np.arange(p.size, 0, -1)
    adjusted = np.empty_like(p)
    adjusted[order] = np.minimum(np.maximum.accumulate(steps), 1.0)
    return adjusted


def compare_models(frame: pd.DataFrame, value: str, *,
                   item: Sequence[str] | str | None = None, cluster: str | None = None,
                   correction: Correction = "holm", level: float = 0.95,
                   alpha: float = 0.05) -> pd.DataFrame:
    """Every pair of models: ``model_a model_b delta delta_low delta_high p_value p_adjusted
    test df n n_clusters n_dropped n_discordant direction adjusted_level delta_adj_low
    delta_adj_high`` (delta = a − b, as :func:`paired_difference`, with the pair's own
    ``level`` interval; ``test`` the test behind the row's p: ``paired t``, ``CR2 t``,
    ``exact McNemar``, ``cluster sign-flip``, ``exact sign``, or empty without one; ``df``
    the Bell–McCaffrey (or n − 1) degrees of freedom behind its interval, NaN for McNemar
    and the sign test; ``n_clusters`` missing without clusters; ``n_discordant`` the items,
    or clusters, that differ, which the exact 0/1 tests count, missing for the others),
    pairs in sorted model order.

    ``delta_adj_low``/``delta_adj_high`` is the pair's interval at ``adjusted_level``
    (:func:`adjusted_level`: simultaneous over every pair for Holm, false-coverage-rate
    adjusted for Benjamini–Hochberg), widened to hold 0 where the pair is undecided, so an
    undecided pair never shows an interval that excludes 0.

    ``p_adjusted`` is statsmodels' ``multipletests`` over all k(k − 1)/2 pairs with a defined
    p: ``"holm"`` (Holm 1979, step-down; controls the family-wise error rate), ``"fdr_bh"``
    (Benjamini & Hochberg 1995; controls the false-discovery rate) or ``None`` (raw p).
    ``direction`` is what :func:`verdict` would claim for the pair on that adjusted p
    (:func:`claims_direction`): ``"lower"`` or ``"higher"`` (a than b), else ``"undecided"``.
    """
    if correction not in ("holm", "fdr_bh", None):
        raise ValueError(f"correction must be 'holm', 'fdr_bh' or None; got {correction!r}")
    means, models, keys, arrays = _item_means(frame, value, item, cluster)
    codes = pd.factorize(arrays[keys.index(cluster)])[0] if cluster is not None else None
    order = np.argsort(models, kind="stable")
    first, second = np.triu_indices(order.size, 1)  # every pair, in combinations' order
    first, second = order[first], order[second]
    # All pairs at once, in chunks of pairs × items cells that bound the memory
    chunk = max(1, _PAIR_CELLS // max(means.shape[0], 1))
    values = means.T.copy()  # models × items: one model's items are contiguous
    parts = [_pairs_paired(values, first[s:s + chunk], second[s:s + chunk], codes, level)
             for s in range(0, first.size, chunk)]
    out = pd.concat(parts, ignore_index=True) if parts else _pairs_paired(
        values, first, second, codes, level)
    out.insert(0, "model_a", models[first].tolist())
    out.insert(1, "model_b", models[second].tolist())
    out.insert(6, "p_adjusted", _adjust(out["p_value"], correction))
    out["direction"] = _directions(out, correction, alpha)
    out["adjusted_level"] = adjusted_level(out["p_adjusted"], correction, level=level,
                                           alpha=alpha)
    low, high = _bounds(out, out["adjusted_level"].to_numpy(dtype=float))
    # An undecided pair's adjusted interval always holds 0 (widening keeps its coverage):
    # the t intervals do by construction; Newcombe's, not the inversion of an exact test,
    # might not.
    undecided = (out["direction"] == "undecided").to_numpy()
    out["delta_adj_low"] = np.where(undecided, np.minimum(low, 0.0), low)
    out["delta_adj_high"] = np.where(undecided, np.maximum(high, 0.0), high)
    return out.drop(columns=_INTERNAL)


def adjusted_level(p_adjusted: pd.Series, correction: Correction, *, level: float = 0.95,
                   alpha: float = 0.05) -> pd.Series:
    """The confidence level of each pair's adjusted interval (``delta_adj_low/high`` of
    :func:`compare_models`), chosen so that the intervals agree with the adjusted
    decisions (issue 37, item 6):

    - ``"holm"``: Bonferroni's simultaneous level 1 − (1 − level)/m over the m pairs with a
      p-value: all m intervals hold their true differences together with probability ≥
      ``level``. A pair Holm leaves undecided has p ≥ α/m, so its t interval at that level
      includes 0; Holm's step-down may still decide a pair whose Bonferroni interval
      reaches 0 (it is more powerful), which the verdict says;
    - ``"fdr_bh"``: Benjamini & Yekutieli's (2005) false-coverage-rate level
      1 − R(1 − level)/m, R the pairs Benjamini–Hochberg decides (at least 1): the selected
      pairs' intervals exclude 0 exactly when BH decides them;
    - ``None``: ``level`` (no adjustment).

    Pairs without a p keep ``level``. References: Dunn, O. J. (1961), Multiple comparisons
    among means, *JASA* 56, 52–64; Benjamini, Y. & Yekutieli, D. (2005), False discovery
    rate-adjusted multiple confidence intervals for selected parameters, *JASA* 100,
    71–81."""
    p = p_adjusted.to_numpy(dtype=float, na_value=np.nan)
    m = int(np.isfinite(p).sum())
    if correction is None or m == 0:
        value = level
    elif correction == "holm":
        value = 1 - (1 - level) / m
    else:
        decided = int((p < alpha).sum())
        value = 1 - max(decided, 1) * (1 - level) / m
    return pd.Series(np.where(np.isfinite(p), value, level), index=p_adjusted.index,
                     dtype=float)


def _grouped_paired(a: np.ndarray, b: np.ndarray, codes: np.ndarray, size: int,
                    level: float) -> pd.DataFrame:
    """:func:`paired_difference` (no clusters) within each of ``size`` groups at once: the
    paired t test per group, the exact sign test where a group's differences are all equal,
    NaN bounds and no p below two shared items, and the exact McNemar test with Newcombe's
    interval where a group's outcomes are all 0/1 (the same rules as
    :func:`_paired_values`)."""
    known_a, known_b = ~np.isnan(a), ~np.isnan(b)
    both = known_a & known_b
    n = np.bincount(codes[both], minlength=size)
    dropped = np.bincount(codes[known_a | known_b], minlength=size) - n
    g, diff = codes[both], a[both] - b[both]
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.bincount(g, weights=diff, minlength=size) / n
        squares = np.bincount(g, weights=(diff - mean[g]) ** 2, minlength=size)
        se = np.sqrt(squares / (n - 1)) / np.sqrt(n)
    scale = np.zeros(size)
    np.maximum.at(scale, g, np.abs(diff))
    two = n >= 2
    degenerate = two & ((se <= 1e-12 * scale) | (scale == 0))
    tested = two & ~degenerate
    df = np.maximum(n - 1, 1)
    t_crit = stats.t.ppf((1 + level) / 2, df)
    with np.errstate(invalid="ignore", divide="ignore"):
        p_t = 2 * stats.t.sf(np.abs(mean / se), df)
    # Exact two-sided sign test of the non-zero differences (_sign_p)
    positive = np.bincount(g[diff > 0], minlength=size)
    negative = np.bincount(g[diff < 0], minlength=size)
    p_sign = _sign_p(positive, negative)
    # 0/1 outcomes within a group: exact McNemar (the sign test of the discordant items, as
    # p_sign) and Newcombe's interval, never a t interval that leaves [-1, 1].
    a_both, b_both = a[both], b[both]
    non_binary = np.bincount(g[~(_is_binary(a_both) & _is_binary(b_both))], minlength=size)
    binary = two & (non_binary == 0)
    ones = np.bincount(g[(a_both == 1) & (b_both == 1)], minlength=size)
    nc_low, nc_high = newcombe_paired(ones, positive, negative, n - ones - positive - negative,
                                      level=level)
    tested &= ~binary
    degenerate &= ~binary
    low = np.where(tested, mean - t_crit * se, np.where(binary, nc_low, np.nan))
    high = np.where(tested, mean + t_crit * se, np.where(binary, nc_high, np.nan))
    test = np.select([binary, tested, degenerate], ["exact McNemar", "paired t", "exact sign"],
                     "")
    return pd.DataFrame({
        "delta": np.where(n >= 1, mean, np.nan),
        "delta_low": low, "delta_high": high,
        "p_value": np.where(tested, p_t, np.where(degenerate | binary, p_sign, np.nan)),
        "test": test, "n": n.astype(int), "n_dropped": dropped.astype(int)})


def group_differences(frame: pd.DataFrame, value: str, a: str, b: str, group: str, *,
                      item: Sequence[str] | str | None = None,
                      correction: Correction = "holm", level: float = 0.95) -> pd.DataFrame:
    """The paired difference a − b within each level of ``group`` (bias, study, prompt type),
    for a forest plot: ``group delta delta_low delta_high p_value p_adjusted test n n_dropped
    direction``, p adjusted over the groups (the family the forest plot shows; ``test`` and
    ``direction`` as in :func:`compare_models`)."""
    columns = _item_columns(frame, item)
    keys = columns if group in columns else [*columns, group]
    table = item_values(frame, value, item=keys)
    for model in (a, b):
        if model not in table.columns:
            raise ValueError(f"model {model!r} is not in the frame")
    codes, levels = pd.factorize(table.index.get_level_values(group), sort=True)
    out = _grouped_paired(table[a].to_numpy(dtype=float), table[b].to_numpy(dtype=float),
                          codes, len(levels), level)
    out.insert(0, group, np.asarray(levels, dtype=object))
    out.insert(5, "p_adjusted", _adjust(out["p_value"], correction))
    out["direction"] = _directions(out, correction)
    return out
