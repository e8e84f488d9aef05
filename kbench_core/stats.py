"""Shared statistical building blocks: the ``Estimate`` shape and vectorised 95% intervals.

Intervals are analytic where a standard one exists (Wilson for proportions, t for means) and a
bootstrap over items otherwise. These helpers take whole columns at once, so a metric
module computes the intervals of every model x item group in one call.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import numpy as np
import pandas as pd
from scipy import stats as _st

__all__ = ["SMALL_SAMPLE", "Estimate", "WithinGroups", "agreement_wilson", "bootstrap_groups",
           "bootstrap_groups_batched", "bounded_mean_interval", "check_choice", "t_interval",
           "widen_small", "wilson", "wilson_by"]

SMALL_SAMPLE = 30
"""Below this many items a large-sample (asymptotic or percentile-bootstrap) interval of an
agreement coefficient is not trusted alone: it is widened to the Wilson-type bound
(:func:`widen_small`, ``docs/statistics.md``, issue 23 item 7)."""


@dataclass(frozen=True)
class Estimate:
    """A scalar statistic with its 95% interval and the number of items it rests on.

    ``n_dropped`` counts the items left out (e.g. present for one model only); ``p_value`` is
    set by tests of a difference. ``float(est)`` is the value.
    """

    value: float
    low: float
    high: float
    n: int
    p_value: float | None = None
    n_dropped: int = 0

    def __float__(self) -> float:
        return float(self.value)

    def __str__(self) -> str:
        return f"{self.value:.3f} [{self.low:.3f}, {self.high:.3f}] (n = {self.n})"


def wilson(successes: np.ndarray | pd.Series | float, n: np.ndarray | pd.Series | float,
           *, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval of a proportion, elementwise; NaN where ``n`` is 0 or NaN.

    ``successes`` may be fractional (a mean of 0/1 scores times n, or weighted counts):
    statsmodels' ``proportion_confint(method="wilson")`` accepts any count in [0, n].
    """
    count = np.asarray(successes, dtype=float)
    nobs = np.asarray(n, dtype=float)
    count, nobs = np.broadcast_arrays(count, nobs)
    ok = np.isfinite(count) & np.isfinite(nobs) & (nobs > 0)
    low = np.full(count.shape, np.nan)
    high = np.full(count.shape, np.nan)
    if ok.any():
        # statsmodels' proportion_confint(method="wilson") term for term (same operations in
        # the same order, so the same bits), without its per-call checks and normal quantile:
        # 16 calls of it were a tenth of a small run's tiers.
        count_a, nobs_a = np.clip(count[ok], 0, nobs[ok]), nobs[ok]
        q_ = count_a / nobs_a
        crit = _normal_isf((1 - level) / 2.0)
        crit2 = crit**2
        denom = 1 + crit2 / nobs_a
        center = (q_ + crit2 / (2 * nobs_a)) / denom
        dist = crit * np.sqrt(q_ * (1.0 - q_) / nobs_a + crit2 / (4.0 * nobs_a**2))
        dist /= denom
        low[ok], high[ok] = np.clip(center - dist, 0, 1), np.clip(center + dist, 0, 1)
        # At 0 of n (n of n) the bound is exactly 0 (1): center and dist are then the same
        # number, which rounding can leave a few ulps apart, so that an interval of a group
        # that never succeeded excluded 0 (coverage 0 at p = 0; tests/test_shared_helpers.py).
        low[ok] = np.where(count_a <= 0, 0.0, low[ok])
        high[ok] = np.where(count_a >= nobs_a, 1.0, high[ok])
    return low, high


def wilson_by(frame: pd.DataFrame, by: str | list[str] | tuple[str, ...], outcome: str, *,
              level: float = 0.95) -> pd.DataFrame:
    """A proportion per group with its Wilson score interval, every group at once.

    ``frame`` is tidy (one row per answer); ``outcome`` holds 0/1 or true/false, missing
    values left out. One row per group (the ``by`` columns, in sorted order): ``successes``,
    ``n`` (answers with an outcome), ``proportion`` and ``low``/``high``, statsmodels'
    ``proportion_confint(count, nobs, method="wilson")`` for each group (:func:`wilson`); a
    group with no outcome has NaN. A ``ValueError`` names the column when it holds anything
    but 0/1.
    """
    by = [by] if isinstance(by, str) else list(by)
    missing = [name for name in (*by, outcome) if name not in frame]
    if missing:
        raise ValueError(f"no column {', '.join(map(repr, missing))}; columns: "
                         f"{', '.join(map(str, frame.columns))}")
    try:
        values = frame[outcome].astype("Float64")
    except (TypeError, ValueError):
        raise ValueError(f"{outcome} must hold 0/1 or true/false") from None
    bad = values.notna() & ~values.isin([0.0, 1.0])
    if bad.any():
        raise ValueError(f"{outcome} must hold 0/1 or true/false; got "
                         f"{frame.loc[bad.to_numpy(bool), outcome].iloc[0]!r}")
    grouped = values.groupby([frame[name] for name in by], sort=True, observed=True,
                             dropna=False)
    out = pd.DataFrame({"successes": grouped.sum(), "n": grouped.count()})
    successes = out["successes"].to_numpy(dtype=float)
    n = out["n"].to_numpy(dtype=float)
    out["successes"] = successes.astype(np.int64)
    out["n"] = n.astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        out["proportion"] = np.where(n > 0, successes / np.where(n > 0, n, 1), np.nan)
    out["low"], out["high"] = wilson(successes, n, level=level)
    return out.reset_index()


def _t_quantile(q: float, df: np.ndarray) -> np.ndarray:
    """scipy's ``t.ppf(q, df)`` elementwise, each distinct df computed once and remembered:
    the quantile is a pure function of (q, df), and small runs repeat a handful of dfs, so
    this saves scipy's per-call overhead (several calls per fingerprint)."""
    distinct, where = np.unique(df, return_inverse=True)
    if distinct.size > 64:  # many dfs (big grouped runs): one vectorised call
        return _st.t.ppf(q, distinct)[where]
    return np.array([_t_ppf(q, float(d)) for d in distinct])[where.ravel()].reshape(df.shape)


@cache
def _t_ppf(q: float, df: float) -> float:
    return float(_st.t.ppf(q, df))


@cache
def _normal_isf(alpha: float) -> float:
    """Upper ``alpha`` quantile of the standard normal (scipy's ``norm.isf``), per level."""
    return _st.norm.isf(alpha)


def t_interval(mean: np.ndarray | pd.Series | float, sd: np.ndarray | pd.Series | float,
               n: np.ndarray | pd.Series | float, *, level: float = 0.95,
               bounds: tuple[float, float] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Student-t interval of a mean from its sample standard deviation (ddof 1), elementwise.

    mean ± t_{n-1, (1+level)/2} · sd / √n; NaN where n < 2 (no spread can be estimated).

    **Zero spread** (sd = 0: every value the same) gives no interval (NaN), never the
    zero-width ``[m, m]``: n equal values from a discrete or bounded score (5 items all 0.5, 5
    of 5 correct) say nothing about how far the mean could be (a 0/1 score with mean 0.9 gives
    5 of 5 in 59% of samples). With ``bounds=(a, b)``, values known to lie in [a, b], the
    interval is instead the Wilson score interval of the rescaled mean (m − a)/(b − a) with n
    trials, mapped back: a variable in [a, b] with mean μ has variance at most (μ − a)(b − μ),
    the Bernoulli variance, so the score interval for a proportion is a conservative interval
    for the mean (Wilson 1927; the worst case is the 0/1 variable). 5 values all at b give
    [a + 0.566(b − a), b]. A bound that is infinite on one side bounds no variance: NaN.
    """
    m = np.asarray(mean, dtype=float)
    s = np.asarray(sd, dtype=float)
    k = np.asarray(n, dtype=float)
    m, s, k = np.broadcast_arrays(m, s, k)
    ok = np.isfinite(m) & np.isfinite(s) & (k >= 2)
    half = np.full(m.shape, np.nan)
    if ok.any():
        half[ok] = _t_quantile((1 + level) / 2, k[ok] - 1) * s[ok] / np.sqrt(k[ok])
    low, high = m - half, m + half
    # sd of n equal values: exactly 0, or rounding residue of the mean's size (1e-17)
    flat = ok & (s <= 1e-12 * np.maximum(np.abs(m), 1.0))
    if flat.any():
        low, high = np.where(flat, np.nan, low), np.where(flat, np.nan, high)
        if bounds is not None:
            a, b = map(float, bounds)
            if not b > a:
                raise ValueError(f"bounds must be (low, high) with low < high; got {bounds!r}")
            if not (math.isfinite(a) and math.isfinite(b)):
                return low, high  # a half-bounded score bounds no variance: NaN stays
            share = np.clip((m[flat] - a) / (b - a), 0.0, 1.0)
            w_low, w_high = wilson(share * k[flat], k[flat], level=level)
            low[flat], high[flat] = a + (b - a) * w_low, a + (b - a) * w_high
    return low, high


def bounded_mean_interval(mean: np.ndarray | pd.Series, sd: np.ndarray | pd.Series,
                          n: np.ndarray | pd.Series, *, bounds: tuple[float, float],
                          level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Interval of the mean of n values known to lie in ``bounds`` = [a, b] (a mean BMS over
    biases), elementwise: the Student-t interval (:func:`t_interval`, clipped to [a, b]),
    widened below :data:`SMALL_SAMPLE` values to contain the Wilson score interval of the
    rescaled mean (m − a)/(b − a) with n trials, mapped back (:func:`widen_small`).

    The t interval alone relies on the mean being near normal, which a skewed bounded score
    over few values is not: 4 values of Beta(0.5, 20) gave 83 % coverage. The Wilson bound is
    conservative for any [a, b] variable (its variance is at most the Bernoulli one), so the
    widened interval covers at least its level, generously at very few values
    (``tests/test_profile.py``, ``tests/test_stats_round2_bias.py``)."""
    a, b = map(float, bounds)
    m = np.asarray(mean, dtype=float)
    k = np.asarray(n, dtype=float)
    low, high = t_interval(m, sd, k, level=level, bounds=(a, b))
    share = np.clip((m - a) / (b - a), 0.0, 1.0)
    w_low, w_high = wilson(share * k, k, level=level)
    low, high = widen_small(low, high, a + (b - a) * w_low, a + (b - a) * w_high, k)
    return np.clip(low, a, b), np.clip(high, a, b)


def agreement_wilson(p_o: np.ndarray | float, p_e: np.ndarray | float,
                     n: np.ndarray | float, *,
                     level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    r"""Wilson-type interval of a chance-corrected agreement coefficient
    :math:`\kappa = (p_o - p_e)/(1 - p_e)` (Cohen's and Fleiss' κ, weighted κ with agreement
    weights, nominal α's agreement): the Wilson score interval [L, U] of the observed
    agreement :math:`p_o` over n items, carried to κ's scale with chance agreement held at its
    observed value, :math:`((L - p_e)/(1 - p_e),\ (U - p_e)/(1 - p_e))`, clipped to [−1, 1].

    κ increases with :math:`p_o` for a fixed :math:`p_e`, so the map keeps the order. Unlike
    the large-sample κ ± z·SE, whose SE is 0 when every item agrees (κ = 1 on 5 items gave
    [1, 1]), the score interval keeps its width at the boundary (Wilson 1927; Agresti & Coull
    1998), and 5 of 5 items in agreement give :math:`p_o \in [0.566, 1]`. It leaves out the
    sampling error of :math:`p_e`, small next to that of :math:`p_o` near κ = 1; simulated
    two-judge tables (5-40 items, κ 0.5-0.97, ``tests/test_stats_round2_ecs.py``) cover
    0.87-0.97. ``p_o`` may be a mean of per-item agreements in [0, 1] (Fleiss' :math:`\bar P`,
    weighted agreement): a [0, 1] variable's variance is at most the Bernoulli one. Written
    by hand (two lines over :func:`wilson`); NaN where :math:`p_e \ge 1` or n is 0.
    """
    po = np.asarray(p_o, dtype=float)
    pe = np.asarray(p_e, dtype=float)
    k = np.asarray(n, dtype=float)
    po, pe, k = np.broadcast_arrays(po, pe, k)
    low, high = wilson(np.clip(po, 0.0, 1.0) * k, k, level=level)
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = np.where(pe < 1, 1 - pe, np.nan)
        return (np.clip((low - pe) / scale, -1.0, 1.0),
                np.clip((high - pe) / scale, -1.0, 1.0))


def widen_small(low: np.ndarray | float, high: np.ndarray | float, w_low: np.ndarray | float,
                w_high: np.ndarray | float, n: np.ndarray | float, *,
                few: float = SMALL_SAMPLE) -> tuple[np.ndarray, np.ndarray]:
    """A large-sample interval [low, high] widened to contain the Wilson-type one
    [w_low, w_high] where it rests on fewer than ``few`` items (:data:`SMALL_SAMPLE`; 0:
    never for that reason) or has no width (κ = 1: every item agrees), elementwise;
    elsewhere unchanged. Where the large-sample interval is undefined but the Wilson-type
    one is not, the Wilson-type one is used."""
    lo, hi, wl, wh, k = np.broadcast_arrays(*(np.asarray(v, dtype=float)
                                              for v in (low, high, w_low, w_high, n)))
    widen = (k < few) | ~(hi - lo > 1e-12)
    widen &= np.isfinite(wl) & np.isfinite(wh)
    return (np.where(widen, np.fmin(lo, wl), lo), np.where(widen, np.fmax(hi, wh), hi))


def bootstrap_groups(n_items: int, statistic: Callable[[np.ndarray], np.ndarray], *,
                     n_boot: int = 1000, random_state: int = 0, level: float = 0.95,
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap over items for a statistic computed on all groups at once.

    ``statistic(weights)`` receives an int array of length ``n_items`` (how often each item is
    drawn in this replicate; all ones is the original sample) and returns one value per group.
    Drawing multiplicities instead of index lists lets the caller recompute every group with
    ``np.bincount(..., weights=...)`` in one pass. Written by hand because scipy's
    ``bootstrap`` resamples one statistic at a time and would loop over the groups.
    """
    return bootstrap_groups_batched(
        n_items, lambda counts: np.asarray(statistic(counts[0]), dtype=float).reshape(1, -1),
        n_boot=n_boot, random_state=random_state, level=level, chunk=1)


def bootstrap_groups_batched(n_items: int, statistic: Callable[[np.ndarray], np.ndarray], *,
                             n_boot: int = 1000, random_state: int = 0, level: float = 0.95,
                             chunk: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """:func:`bootstrap_groups` with the statistic computed for many replicates at once.

    ``statistic(counts)`` receives an int array ``(b, n_items)``, one row per replicate (how
    often each item is drawn in it, ``b <= chunk``), and returns an array ``(b, n_values)``.
    The replicates are drawn from the same generator, in the same order and with the same
    calls as :func:`bootstrap_groups` (one ``integers(0, n_items, n_items)`` per replicate:
    a single call for all replicates would give other integers, since numpy draws two 32-bit
    numbers per 64-bit word and drops the spare one at the end of a call), so a statistic
    that gives row by row what :func:`bootstrap_groups`' statistic gives gets the same
    intervals. Handing over ``chunk`` replicates at a time bounds the caller's memory while
    its numpy work runs over every replicate of the chunk in one pass instead of one Python
    call per replicate. Written by hand for the same reason as :func:`bootstrap_groups`.
    """
    if isinstance(chunk, bool) or not isinstance(chunk, int | np.integer) or chunk < 1:
        raise ValueError(f"chunk must be a whole number >= 1; got {chunk!r}")
    rng = np.random.default_rng(random_state)
    draws = []
    for start in range(0, n_boot, chunk):
        b = min(chunk, n_boot - start)
        drawn = np.empty((b, n_items), dtype=np.int64)
        for row in range(b):
            drawn[row] = rng.integers(0, n_items, n_items)
        # One bincount for the chunk: row r's items are shifted to r * n_items.
        drawn += np.arange(b, dtype=np.int64)[:, None] * n_items
        counts = np.bincount(drawn.ravel(), minlength=b * n_items).reshape(b, n_items)
        draws.append(np.asarray(statistic(counts), dtype=float).reshape(b, -1))
    values = np.vstack(draws) if draws else np.empty((0, 0))
    alpha = (1 - level) / 2
    with warnings.catch_warnings():  # a group undefined in every replicate stays NaN
        warnings.simplefilter("ignore", RuntimeWarning)
        low = np.nanquantile(values, alpha, axis=0)
        high = np.nanquantile(values, 1 - alpha, axis=0)
    return low, high


def check_choice(name: str, value: object, allowed: tuple[object, ...]) -> None:
    """Raise a ValueError naming the option and its allowed values unless ``value`` is one."""
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}; "
                         f"got {value!r}")


class WithinGroups:
    """Bootstrap draws that resample units within their group (each group keeps its size):
    studies within a model, findings within a model, trials within a condition cell.

    ``draw(rng)`` returns, for every unit, how often it is drawn in one replicate. Written by
    hand because the resampling is stratified and every group is drawn at once."""

    def __init__(self, owner: np.ndarray) -> None:
        owner = np.asarray(owner, dtype=np.int64)
        self.size = owner.size
        self.order = np.argsort(owner, kind="stable")
        sizes = np.bincount(owner) if owner.size else np.zeros(0, dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        group = owner[self.order]
        self.start, self.count = starts[group], sizes[group]

    def draw(self, rng: np.random.Generator) -> np.ndarray:
        pick = self.start + (rng.random(self.size) * self.count).astype(np.int64)
        return np.bincount(self.order[pick], minlength=self.size)
