"""Is model A really better than model B? Paired differences, clustered errors, adjusted p,
rank intervals and sample-size planning (SPEC 2.6).

Models in one run answer the same items, so every comparison is paired: a per-item value (a
bias score, a correct verdict, an effect-size gap) is averaged within each item for each model,
items present for both models are kept (the others are dropped and counted, never imputed), and
the statistics are computed on the per-item differences.

- :func:`paired_difference` — mean difference with a t interval and p-value; with ``cluster``
  (items grouped by bias, study or contract) the standard error is statsmodels' cluster-robust
  one (OLS on a constant, ``cov_type="cluster"``) with G − 1 degrees of freedom.
- :func:`compare_models` — every pair, with raw and adjusted p (Holm or Benjamini–Hochberg,
  statsmodels' ``multipletests``).
- :func:`rank_intervals` — each model's rank and its 95% bootstrap interval over items.
- :func:`samples_needed` — items needed to detect a paired difference.
- :func:`verdict` — the plain-language sentence a paper can quote, never claiming a direction
  where the interval crosses zero.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import combinations
from typing import Literal

import numpy as np
import pandas as pd
import statsmodels.api as sm
from scipy import stats
from statsmodels.stats.multitest import multipletests

from kbench_core.io import detect_kind
from kbench_core.stats import Estimate

__all__ = ["ITEM_KEYS", "LOWER_IS_BETTER", "compare_models", "group_differences",
           "is_lower_better", "item_values",
           "paired_difference", "rank_intervals", "samples_needed", "verdict"]

# The item a model answers, per run kind (SPEC 2.6); repeated trials are averaged within.
ITEM_KEYS: dict[str, tuple[str, ...]] = {
    "bias": ("bias", "domain", "condition", "intensity", "method", "trial"),
    "judged": ("sample", "prompt_type"),
    "replication": ("study", "finding", "test"),
}
# Metrics where a lower value is better (SPEC 2.6); everything else: higher is better.
LOWER_IS_BETTER: frozenset[str] = frozenset({
    "score", "bms", "bias_score", "ece", "mce", "brier", "hallucination_rate", "invalid_rate",
    "fpr", "false_positive_rate", "abs_diff", "lucky_guess_rate", "susceptibility",
    "overconfidence_rate", "underconfidence_rate", "over_flagging", "fnr", "lgi",
})
Correction = Literal["holm", "fdr_bh"] | None


def is_lower_better(metric: str) -> bool:
    """The metric's direction: True for bias scores, BMS, ECE, Brier, error rates, ..."""
    return metric in LOWER_IS_BETTER


def _item_columns(frame: pd.DataFrame, item: Sequence[str] | str | None) -> list[str]:
    if item is not None:
        columns = [item] if isinstance(item, str) else list(item)
    else:
        kind = detect_kind(list(frame.columns))
        if kind not in ITEM_KEYS:
            raise ValueError("cannot tell the item key of this frame; pass item=[...]")
        columns = [c for c in ITEM_KEYS[kind] if c in frame.columns]
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"item columns missing from the frame: {', '.join(missing)}")
    return columns


def item_values(frame: pd.DataFrame, value: str, *, item: Sequence[str] | str | None = None,
                cluster: str | None = None) -> pd.DataFrame:
    """Items × models table of ``value`` averaged within each item (NaN where a model has no
    known value); the index holds the item columns (and ``cluster`` when given)."""
    if value not in frame.columns:
        raise ValueError(f"no column {value!r} in the frame")
    columns = _item_columns(frame, item)
    keys = columns + ([cluster] if cluster and cluster not in columns else [])
    data = frame[[*keys, "model", value]].copy()
    data[value] = pd.to_numeric(data[value], errors="coerce").astype(float)
    for column in [*keys, "model"]:  # missing labels (a control row's intensity) are a level
        data[column] = data[column].astype(object).where(data[column].notna(), "")
    means = data.groupby([*keys, "model"], sort=True)[value].mean()
    return means.unstack("model")


def _clustered_se(diff: np.ndarray, groups: np.ndarray) -> tuple[float, int]:
    """Cluster-robust SE of a mean: OLS of the differences on a constant with
    ``cov_type="cluster"`` (statsmodels' default small-sample correction)."""
    codes = pd.factorize(groups)[0]
    fit = sm.OLS(diff, np.ones((diff.size, 1))).fit(cov_type="cluster",
                                                    cov_kwds={"groups": codes})
    return float(fit.bse[0]), int(codes.max() + 1)


def _paired(table: pd.DataFrame, a: str, b: str, cluster: str | None,
            level: float) -> Estimate:
    for model in (a, b):
        if model not in table.columns:
            raise ValueError(f"model {model!r} is not in the frame")
    both = table[a].notna() & table[b].notna()
    dropped = int((table[a].notna() | table[b].notna()).sum() - both.sum())
    diff = (table.loc[both, a] - table.loc[both, b]).to_numpy(dtype=float)
    n = int(diff.size)
    if n < 2:
        return Estimate(float(diff.mean()) if n else math.nan, math.nan, math.nan, n,
                        None, dropped)
    mean = float(diff.mean())
    if cluster is None:
        se, df = float(diff.std(ddof=1) / math.sqrt(n)), n - 1
    else:
        groups = np.asarray(table.index.get_level_values(cluster)[both.to_numpy()])
        if pd.unique(groups).size < 2:  # one cluster: no between-cluster spread to estimate
            return Estimate(mean, math.nan, math.nan, n, None, dropped)
        se, g = _clustered_se(diff, groups)
        df = g - 1
    if se == 0:
        p = 1.0 if mean == 0 else 0.0
        return Estimate(mean, mean, mean, n, p, dropped)
    t_crit = float(stats.t.ppf((1 + level) / 2, df))
    p = float(2 * stats.t.sf(abs(mean / se), df))
    return Estimate(mean, mean - t_crit * se, mean + t_crit * se, n, p, dropped)


def paired_difference(frame: pd.DataFrame, value: str, a: str, b: str, *,
                      item: Sequence[str] | str | None = None, cluster: str | None = None,
                      level: float = 0.95) -> Estimate:
    """Mean of (a − b) over the items both models answered, with its interval and p-value.

    Without ``cluster``: the one-sample t test on the per-item differences (the same as
    ``scipy.stats.ttest_rel``). With ``cluster``: statsmodels' cluster-robust standard error
    and t with G − 1 degrees of freedom over the G clusters. ``n_dropped`` counts the items
    only one of the two models answered.
    """
    table = item_values(frame, value, item=item, cluster=cluster)
    return _paired(table, a, b, cluster, level)


def _adjust(p_values: pd.Series, correction: Correction) -> np.ndarray:
    """p adjusted over the defined ones (statsmodels' ``multipletests``); NaN stays NaN."""
    p = p_values.astype(float).to_numpy()
    if correction is None:
        return p.copy()
    adjusted = np.full(p.shape, np.nan)
    ok = np.isfinite(p)
    if ok.any():
        adjusted[ok] = multipletests(p[ok], method=correction)[1]
    return adjusted


def compare_models(frame: pd.DataFrame, value: str, *,
                   item: Sequence[str] | str | None = None, cluster: str | None = None,
                   correction: Correction = "holm", level: float = 0.95) -> pd.DataFrame:
    """Every pair of models: ``model_a model_b delta delta_low delta_high p_value p_adjusted n
    n_dropped`` (delta = a − b), p adjusted over all pairs by ``multipletests``."""
    if correction not in ("holm", "fdr_bh", None):
        raise ValueError(f"correction must be 'holm', 'fdr_bh' or None; got {correction!r}")
    table = item_values(frame, value, item=item, cluster=cluster)
    rows = []
    for a, b in combinations(sorted(map(str, table.columns)), 2):
        est = _paired(table, a, b, cluster, level)
        rows.append({"model_a": a, "model_b": b, "delta": est.value, "delta_low": est.low,
                     "delta_high": est.high, "p_value": est.p_value, "n": est.n,
                     "n_dropped": est.n_dropped})
    out = pd.DataFrame(rows, columns=["model_a", "model_b", "delta", "delta_low", "delta_high",
                                      "p_value", "n", "n_dropped"])
    out.insert(6, "p_adjusted", _adjust(out["p_value"], correction))
    return out


def _ranks(values: np.ndarray, lower: bool) -> np.ndarray:
    """Ranks along the last axis (1 = best), ties sharing their mean rank."""
    return stats.rankdata(values if lower else -values, axis=-1, method="average")


def rank_intervals(frame: pd.DataFrame, value: str, *, item: Sequence[str] | str | None = None,
                   n_boot: int = 1000, random_state: int = 0,
                   lower_is_better: bool | None = None, level: float = 0.95) -> pd.DataFrame:
    """Each model's mean ``value`` over the items every model answered, its rank (1 = best,
    ties share the mean rank) and the percentile interval of its rank over ``n_boot``
    bootstrap resamples of those items. ``lower_is_better`` defaults to the metric's
    direction (:func:`is_lower_better`).

    Replicates are computed in batches: item multiplicities (replicates × items) times the
    item × model matrix gives a batch's means in one product.
    """
    lower = is_lower_better(value) if lower_is_better is None else lower_is_better
    table = item_values(frame, value, item=item).dropna()
    models = [str(c) for c in table.columns]
    matrix = table.to_numpy(dtype=float)
    n_items = matrix.shape[0]
    if n_items == 0:
        raise ValueError("no item was answered by every model")
    point = matrix.mean(axis=0)
    rng = np.random.default_rng(random_state)
    chunk = max(1, 4_000_000 // n_items)  # replicates per batch: bounded memory on big runs
    batches = []
    for start in range(0, n_boot, chunk):
        size = min(chunk, n_boot - start)
        draws = rng.integers(0, n_items, (size, n_items)) + (np.arange(size) * n_items)[:, None]
        counts = np.bincount(draws.ravel(), minlength=size * n_items).reshape(size, n_items)
        batches.append(counts @ matrix / n_items)
    boot = np.vstack(batches)
    boot_ranks = _ranks(boot, lower)
    alpha = (1 - level) / 2
    return pd.DataFrame({
        "model": models, "value": point, "rank": _ranks(point[None, :], lower)[0],
        "rank_low": np.quantile(boot_ranks, alpha, axis=0, method="lower"),
        "rank_high": np.quantile(boot_ranks, 1 - alpha, axis=0, method="higher"),
        "n": n_items,
    }).sort_values(["rank", "model"]).reset_index(drop=True)


def samples_needed(delta: float, sd_diff: float, *, power: float = 0.8,
                   alpha: float = 0.05) -> int:
    """Items needed to detect a paired mean difference ``delta`` whose per-item differences
    have standard deviation ``sd_diff``: ⌈((z₁₋α/₂ + z_power) · sd_diff / |delta|)²⌉ (normal
    approximation)."""
    if delta == 0:
        raise ValueError("delta must be non-zero")
    if sd_diff < 0 or not 0 < power < 1 or not 0 < alpha < 1:
        raise ValueError("need sd_diff >= 0, 0 < power < 1 and 0 < alpha < 1")
    z = stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)
    return max(1, math.ceil((z * sd_diff / abs(delta)) ** 2))


def verdict(est: Estimate, a: str, b: str, metric: str, *, lower_is_better: bool,
            adjusted_p: float | None = None, correction: str = "Holm",
            context: str = "") -> str:
    """One sentence for a paper. A direction ("lower", "higher", "better") is claimed only
    when the interval excludes zero; otherwise it says no difference was detected."""
    about = f" on {context}" if context else ""
    if not (math.isfinite(est.low) and math.isfinite(est.high)):
        return (f"No interval for {a} − {b}{about} in {metric}: too few shared items or "
                f"clusters to estimate its spread (n = {est.n}).")
    numbers = f"{est.value:+.3f} [{est.low:+.3f}, {est.high:+.3f}], n = {est.n}"
    if adjusted_p is not None:
        numbers += f", {correction}-adjusted p = {adjusted_p:.3g}"
    elif est.p_value is not None:
        numbers += f", p = {est.p_value:.3g}"
    if est.low <= 0 <= est.high:
        return (f"No detectable difference between {a} and {b}{about} in {metric}: "
                f"{a} − {b} = {numbers}; the interval includes 0.")
    a_lower = est.high < 0
    better = a_lower == lower_is_better
    return (f"{a} scores {'lower' if a_lower else 'higher'} than {b}{about} in {metric} "
            f"({'better' if better else 'worse'}: {'lower' if lower_is_better else 'higher'}"
            f" is preferable): {a} − {b} = {numbers}.")


def group_differences(frame: pd.DataFrame, value: str, a: str, b: str, group: str, *,
                      item: Sequence[str] | str | None = None,
                      correction: Correction = "holm", level: float = 0.95) -> pd.DataFrame:
    """The paired difference a − b within each level of ``group`` (bias, study, prompt type),
    for a forest plot: ``group delta delta_low delta_high p_value p_adjusted n n_dropped``, p
    adjusted over the groups."""
    columns = _item_columns(frame, item)
    keys = columns if group in columns else [*columns, group]
    table = item_values(frame, value, item=keys)
    rows = []
    for level_name, part in table.groupby(level=group, sort=True):
        est = _paired(part, a, b, None, level)
        rows.append({group: level_name, "delta": est.value, "delta_low": est.low,
                     "delta_high": est.high, "p_value": est.p_value, "n": est.n,
                     "n_dropped": est.n_dropped})
    out = pd.DataFrame(rows, columns=[group, "delta", "delta_low", "delta_high", "p_value",
                                      "n", "n_dropped"])
    out.insert(5, "p_adjusted", _adjust(out["p_value"], correction))
    return out
