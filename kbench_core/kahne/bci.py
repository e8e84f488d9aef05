"""BCI, the bias consistency index per model × bias, and the per-domain means
(``docs/metrics/bias.md``)."""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd

from kbench_core.stats import check_choice

from ._common import TOLERANCE, _frame, _prepare, _Stats, _stats, _Trials

# ----------------------------------------------------------------------------- BCI


def bci(trials: pd.DataFrame, *, std: Literal["population", "sample"] = "population",
        rows: Literal["treatment", "all"] = "treatment") -> pd.DataFrame:
    r"""Bias Consistency Index across domains, per model × bias.

    Notes
    -----
    Domain means :math:`m_d` of the known scores (treatment rows, or every row with
    ``rows="all"`` as KahneBench's core runs did); ``mean_score`` is their mean,
    ``std`` their standard deviation (population by default; ``std="sample"`` is the seed's
    ``statistics.stdev``), :math:`\mathrm{consistency} = 1 - \min(\mathrm{std}/0.5, 1)` and
    ``systematic`` is true when the share of domains with :math:`m_d > 0.5` exceeds 0.7.
    One domain gives std 0 and consistency 1; no domain gives NaN.
    """
    check_choice("std", std, ("population", "sample"))
    check_choice("rows", rows, ("treatment", "all"))
    t = _prepare(trials)
    return _frame(t, _bci(t, std, rows))


def _bci(t: _Trials, std: str, rows: str) -> dict[str, object]:
    """The columns of :func:`bci` after ``model`` and ``bias``, one value per pair
    (one row per pair of ``t``)."""
    size, n_dom = t.n_pairs, max(len(t.domains), 1)
    used, per_domain = _domain_stats(t, rows)
    present = per_domain.n > 0
    owner = np.flatnonzero(present) // n_dom
    means = per_domain.mean[present]
    across = _stats(owner, means, size)
    out: dict[str, object] = {}
    out["mean_score"] = across.mean
    spread = np.sqrt(across.var(0 if std == "population" else 1))
    spread = np.where((across.n == 1), 0.0, spread)  # one domain: std 0 (seed)
    std_ = np.where(across.n > 0, spread, np.nan)
    out["std"] = std_
    out["n_domains"] = across.n.astype(int)
    out["consistency"] = 1 - np.minimum(std_ / 0.5, 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.bincount(owner, weights=means > 0.5 + TOLERANCE, minlength=size) / across.n
    out["systematic"] = pd.array(np.where(across.n > 0, share > 0.7 + TOLERANCE, pd.NA),
                                 dtype="boolean")
    # Could the flag go either way? Count the domains above 0.5 at their intervals' lower
    # ends (the fewest possible) and upper ends (the most); an unknown end counts as either.
    d_low, d_high = (b[present] for b in per_domain.interval())
    with np.errstate(invalid="ignore", divide="ignore"):
        fewest = np.bincount(owner, weights=d_low > 0.5 + TOLERANCE, minlength=size) / across.n
        most = np.bincount(owner, weights=~(d_high <= 0.5 + TOLERANCE),
                           minlength=size) / across.n
    out["systematic_uncertain"] = pd.array(
        np.where(across.n > 0, (fewest > 0.7 + TOLERANCE) != (most > 0.7 + TOLERANCE), pd.NA),
        dtype="boolean")
    out["n"] = t.rows(used & ~np.isnan(t.score)).astype(np.int64)
    return out


def _domain_stats(t: _Trials, rows: str) -> tuple[np.ndarray, _Stats]:
    """Rows used and the known-score stats per pair × domain (cell = pair·domains + domain):
    the cells behind both :func:`bci` and :func:`domain_means`."""
    n_dom = max(len(t.domains), 1)
    used = np.ones(t.pair.size, bool) if rows == "all" else t.condition == 1
    per = _stats(np.where(t.domain >= 0, t.pair * n_dom + t.domain, -1), t.score,
                 t.n_pairs * n_dom, used, t.weight)
    return used, per


def domain_means(trials: pd.DataFrame, *,
                 rows: Literal["treatment", "all"] = "treatment") -> pd.DataFrame:
    """Mean known score per model × bias × domain (the cells behind BCI), with ``n`` and a
    95% interval (Wilson for 0/1 scores, else t)."""
    check_choice("rows", rows, ("treatment", "all"))
    t = _prepare(trials)
    n_dom = max(len(t.domains), 1)
    _, per = _domain_stats(t, rows)
    cells = np.flatnonzero(per.n > 0)
    low, high = per.interval()
    out = t.pairs.iloc[cells // n_dom].reset_index(drop=True)
    out["domain"] = t.domains[cells % n_dom]
    out["mean_score"] = per.mean[cells]
    out["mean_score_low"], out["mean_score_high"] = low[cells], high[cells]
    out["n"] = per.n[cells].astype(int)
    return out
