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
from .paired import _is_binary, newcombe_paired

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
    with np.errstate(invalid="ignore"):
        degenerate = ~no_test & ~mcnemar & ((se <= 1e-12 * scale) | (scale == 0))
    t_test = ~no_test & ~mcnemar & ~degenerate
    t_df = np.where(t_test, df, 1.0)
    t_crit = stats.t.ppf((1 + level) / 2, t_df)
    with np.errstate(invalid="ignore", divide="ignore"):
        p_t = 2 * stats.t.sf(np.abs(mean / se), t_df)
    t_low, t_high = mean - t_crit * se, mean + t_crit * se
    t_low = np.where(binary, np.maximum(t_low, -1.0), t_low)
    t_high = np.where(binary, np.minimum(t_high, 1.0), t_high)
    nc_low, nc_high = newcombe_paired(ones, positive, negative,
                                      n - ones - positive - negative, level=level)
    p_items = _sign_p(positive, negative)
    p_units = _sign_p(unit_positive, unit_negative)
    p_value = np.select([mcnemar, degenerate, t_test], [p_items, p_units, p_t], np.nan)
    test = np.select([mcnemar, degenerate, t_test],
                     ["exact McNemar", "exact sign", "paired t" if cluster is None else "CR2 t"],
                     "")
    clusters = (pd.array([pd.NA] * size, dtype="Int64") if n_groups is None
                else pd.array(n_groups, dtype="Int64"))
    return pd.DataFrame({
        "delta": np.where(n >= 1, mean, np.nan),
        "delta_low": np.select([mcnemar, t_test], [nc_low, t_low], np.nan),
        "delta_high": np.select([mcnemar, t_test], [nc_high, t_high], np.nan),
        "p_value": p_value.astype(float), "test": test.astype(object),
        "df": np.where(t_test, df, np.nan), "n": n.astype(np.int64), "n_clusters": clusters,
        "n_dropped": dropped.astype(np.int64)})


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
    test df n n_clusters n_dropped direction`` (delta = a − b, as :func:`paired_difference`;
    ``test`` the test behind the row's p: ``paired t``, ``CR2 t``, ``exact McNemar``,
    ``exact sign``, or empty without one; ``df`` its t degrees of freedom, Bell–McCaffrey's
    with clusters, NaN for the exact tests; ``n_clusters`` missing without clusters), pairs in
    sorted model order.

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
    return out


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
