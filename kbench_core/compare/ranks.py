"""Each model's rank and its bootstrap interval over items or clusters (``docs/statistics.md``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from .items import FEW_ITEMS, Correction, is_lower_better, item_values
from .paired import FEW_CLUSTERS


def _directions(table: pd.DataFrame, correction: Correction,
                alpha: float = 0.05) -> pd.Series:
    """Per row of a differences table, what :func:`verdict` would claim on the adjusted p:
    ``"lower"``/``"higher"`` (first model than second), else ``"undecided"``.

    :func:`claims_direction` on every row at once: the quoted p (the adjusted one where an
    adjustment is in force and defined, else the raw one) below ``alpha``, a finite non-zero
    difference, and an interval, where one is shown, that excludes 0."""
    delta = table["delta"].to_numpy(dtype=float, na_value=np.nan)
    low = table["delta_low"].to_numpy(dtype=float, na_value=np.nan)
    high = table["delta_high"].to_numpy(dtype=float, na_value=np.nan)
    raw = table["p_value"].to_numpy(dtype=float, na_value=np.nan)
    adjusted = table["p_adjusted"].to_numpy(dtype=float, na_value=np.nan)
    quoted = np.where(~np.isnan(adjusted), adjusted, raw) if correction else raw
    shown = np.isfinite(low) & np.isfinite(high)
    with np.errstate(invalid="ignore"):
        claimed = (np.isfinite(quoted) & (quoted < alpha) & np.isfinite(delta) & (delta != 0)
                   & (~shown | (low > 0) | (high < 0)))
    directions = np.where(claimed, np.where(delta < 0, "lower", "higher"), "undecided")
    return pd.Series(directions.astype(object), index=table.index, dtype=object)


def _ranks(values: np.ndarray, lower: bool) -> np.ndarray:
    """Ranks along the last axis (1 = best), ties sharing their mean rank."""
    return stats.rankdata(values if lower else -values, axis=-1, method="average")


def rank_intervals(frame: pd.DataFrame, value: str, *, item: Sequence[str] | str | None = None,
                   n_boot: int = 1000, lower_is_better: bool | None = None,
                   cluster: str | None = None, random_state: int = 0,
                   level: float = 0.95) -> pd.DataFrame:
    """Each model's mean ``value`` over the items every model answered, its rank (1 = best,
    ties share the mean rank) and the percentile interval of its rank over ``n_boot``
    bootstrap replicates. ``lower_is_better`` defaults to the metric's direction
    (:func:`is_lower_better`).

    Without ``cluster`` the replicates resample items. With ``cluster`` (bias, study, sample:
    the unit whose items share errors) they resample whole clusters, each bringing all of its
    items, so the interval reflects the real number of independent units (resampling the items
    of a few clusters gives intervals that are too narrow).

    Items some model did not answer are left out for every model, so the ranks compare like
    with like; ``n_dropped`` counts, per model, the items it lacks (0 everywhere when every
    model answered every item), and ``n``/``n_clusters`` what the ranks rest on
    (``n_clusters`` is missing without ``cluster``: the items are the units then).
    ``few_items`` marks fewer than :data:`FEW_ITEMS` items and ``few_clusters`` fewer than
    :data:`FEW_CLUSTERS` clusters: a bootstrap over so few clusters is too narrow (two
    identical models came out apart in 20 % of runs with 4 clusters), so leaderboards mark
    it (:func:`kbench_core.ranking.rank_text`).

    Replicates are computed in batches: multiplicities (replicates × units) times the unit ×
    model sums gives a batch's means in one product. The bounds are the empirical quantiles of
    the replicate ranks, taken outward (``"lower"`` / ``"higher"``) so they are ranks that
    occurred. Bootstrap rank intervals follow Hall & Miller (2009), "Using the bootstrap to
    quantify the authority of an empirical ranking", *Annals of Statistics* 37(6B); the
    cluster bootstrap is Davison & Hinkley (1997, §3.8). Written by hand because no library
    ranks all models per replicate at once.
    """
    lower = is_lower_better(value) if lower_is_better is None else lower_is_better
    full = item_values(frame, value, item=item, cluster=cluster)
    present = full.notna()
    answered = present.any(axis=1)
    n_dropped = (answered.to_numpy()[:, None] & ~present.to_numpy()).sum(axis=0)
    table = full[present.all(axis=1)]
    models = [str(c) for c in table.columns]
    matrix = table.to_numpy(dtype=float)
    n_items = matrix.shape[0]
    if n_items == 0:
        raise ValueError("no item was answered by every model")
    if cluster is not None:
        units = pd.factorize(np.asarray(table.index.get_level_values(cluster)))[0]
    else:
        units = np.arange(n_items)
    n_units = int(units.max()) + 1
    sums = np.zeros((n_units, matrix.shape[1]))
    np.add.at(sums, units, matrix)
    sizes = np.bincount(units, minlength=n_units).astype(float)
    point = matrix.mean(axis=0)
    rng = np.random.default_rng(random_state)
    chunk = max(1, 4_000_000 // n_units)  # replicates per batch: bounded memory on big runs
    batches = []
    for start in range(0, n_boot, chunk):
        size = min(chunk, n_boot - start)
        draws = rng.integers(0, n_units, (size, n_units)) + (np.arange(size) * n_units)[:, None]
        counts = np.bincount(draws.ravel(), minlength=size * n_units).reshape(size, n_units)
        batches.append((counts @ sums) / (counts @ sizes)[:, None])
    boot = np.vstack(batches)
    boot_ranks = _ranks(boot, lower)
    alpha = (1 - level) / 2
    return pd.DataFrame({
        "model": models, "value": point, "rank": _ranks(point[None, :], lower)[0],
        "rank_low": np.quantile(boot_ranks, alpha, axis=0, method="lower"),
        "rank_high": np.quantile(boot_ranks, 1 - alpha, axis=0, method="higher"),
        "n": n_items,
        "n_clusters": pd.array([n_units if cluster is not None else pd.NA] * len(models),
                               dtype="Int64"),
        "n_dropped": n_dropped.astype(int), "few_items": n_items < FEW_ITEMS,
        "few_clusters": cluster is not None and n_units < FEW_CLUSTERS,
    }).sort_values(["rank", "model"]).reset_index(drop=True)
