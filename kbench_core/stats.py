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

__all__ = ["SMALL_SAMPLE", "Clusters", "Estimate", "WithinGroups", "agreement_wilson",
           "bootstrap_groups", "bootstrap_groups_batched", "bounded_mean_interval",
           "check_choice", "design_effect", "jackknife_of_sums", "jeffreys_effective",
           "kish_n", "t_interval", "widen_small",
           "wilson", "wilson_by", "wilson_effective"]

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
           *, level: float | np.ndarray = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval of a proportion, elementwise; NaN where ``n`` is 0 or NaN.

    ``successes`` may be fractional (a mean of 0/1 scores times n, or weighted counts):
    statsmodels' ``proportion_confint(method="wilson")`` accepts any count in [0, n].
    ``level`` may be an array broadcast with them (per-bin Bonferroni levels).
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
        if np.ndim(level) == 0:
            crit = _normal_isf((1 - float(level)) / 2.0)
        else:
            crit = _st.norm.isf((1 - np.broadcast_to(level, count.shape)[ok]) / 2.0)
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
              name: str = "proportion", level: float = 0.95) -> pd.DataFrame:
    """A proportion per group with its Wilson score interval, every group at once.

    ``frame`` is tidy (one row per answer); ``outcome`` holds 0/1 or true/false, missing
    values left out. One row per group (the ``by`` columns, in sorted order): ``successes``,
    ``n`` (answers with an outcome), the proportion ``<name>`` and its interval
    ``<name>_low``/``<name>_high`` (the shared helpers' one convention: the caller names
    the quantity, e.g. ``name="accuracy"``), statsmodels'
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
        out[name] = np.where(n > 0, successes / np.where(n > 0, n, 1), np.nan)
    out[f"{name}_low"], out[f"{name}_high"] = wilson(successes, n, level=level)
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
    biases, a mean study PAS or ECS, a model's PAS over its studies), elementwise: below
    :data:`SMALL_SAMPLE` values the **Wilson score interval of the rescaled mean**
    (m − a)/(b − a) with n trials, mapped back; from :data:`SMALL_SAMPLE` values on the
    Student-t interval (:func:`t_interval`, clipped to [a, b]; equal values get the Wilson
    bound there too). The one interval of every such mean kbench shows.

    Why: a variable in [a, b] with mean μ has variance at most (μ − a)(b − μ), the Bernoulli
    one, so the score interval for a proportion covers such a mean at any skew (Wilson 1927;
    the worst case is the two-point variable). The t interval relies on the mean being near
    normal, which a skewed bounded score over few values is not: 4 values of Beta(20, 0.5)
    gave 83 % coverage, 12 values 86 %, 30 values 91 %. Alternatives compared on 4–12 values
    (``docs/statistics.md``, round 3 item 4): the union of the t and Wilson intervals (the
    rule of round 2) is never narrower and up to 1.3× wider where the values spread; the
    betting interval of Waudby-Smith & Ramdas (2024, hedged capital, capital averaged over
    orders) is valid too but 1.2–1.6× wider at 4–12 values, since 4 values can multiply the
    bettor's capital at most by 1/m each. Below 30 values no interval that holds for every
    [a, b] variable can be much narrower: four values at b are as likely under a two-point
    variable of mean a + 0.6(b − a) as not."""
    a, b = map(float, bounds)
    if not b > a:
        raise ValueError(f"bounds must be (low, high) with low < high; got {bounds!r}")
    m = np.asarray(mean, dtype=float)
    k = np.asarray(n, dtype=float)
    m, k = np.broadcast_arrays(m, k)
    low, high = t_interval(m, sd, k, level=level, bounds=(a, b))
    share = np.clip((m - a) / (b - a), 0.0, 1.0)
    w_low, w_high = wilson(share * k, k, level=level)
    few = k < SMALL_SAMPLE
    low = np.where(few, a + (b - a) * w_low, low)
    high = np.where(few, a + (b - a) * w_high, high)
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


def _share(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


@dataclass(frozen=True)
class Clusters:
    r"""Answers clustered by sample within each group: a contract's prompt types share the
    contract's difficulty, so they are not independent answers (``docs/statistics.md``,
    "Round 2 (issue 23): vulnerability tiers").

    Every rate of the tiers is a ratio :math:`\hat p = Y/N = \sum_c y_c / \sum_c n_c` over
    the cells c (group × sample) of a group. Its variance is the delete-one-sample jackknife
    (Quenouille 1956; for ratio estimators Cochran 1977, *Sampling Techniques*, §6.17; the
    CR3 cluster-robust variance of Cameron & Miller 2015, §VI.B):

    .. math:: \hat V_J = \frac{G-1}{G}\sum_c (\hat p_{(-c)} - \bar p_{(\cdot)})^2,\qquad
              \hat p_{(-c)} = \frac{Y - y_c}{N - n_c}

    over the G samples with a unit in the denominator. Unlike the plain sandwich it does not
    shrink the residual of a sample holding most answers, so a design with one large and
    many small samples keeps its coverage. The design effect (Kish 1965, *Survey Sampling*,
    §8.2) is :math:`\mathrm{deff} = \max(1, \hat V_J / (\hat p(1-\hat p)/U))`, U the units
    the rate counts (answers, or findings for the pooled finding rates), and the rate's
    interval is Wilson's on the effective number U/deff with p̂·U/deff successes: a
    Wilson-type interval on the effective n. One answer per sample leaves every interval
    exactly as before (deff = 1); k identical answers per sample give Wilson on the samples.
    At p̂ = 0 or 1, or with one sample, the data cannot show the correlation, so the bound of
    full correlation is used: deff = Σ u_c² / U (U / deff is Kish's effective number of
    clusters). Written by hand: statsmodels' cluster-robust covariances fit one regression
    per group and rate; this does every group and rate with a few sums over cells.
    """

    cell: np.ndarray        # per answer, its (group, sample) cell
    cell_group: np.ndarray  # per cell, its group (cells are sorted by group)
    size: int               # groups
    singletons: bool        # one answer per cell
    starts: np.ndarray      # first cell of each group that has cells
    filled: np.ndarray      # those groups

    @classmethod
    def of(cls, gid: np.ndarray, sample: np.ndarray, n_samples: int, size: int) -> Clusters:
        key = gid.astype(np.int64) * max(n_samples, 1) + sample
        cells, cell = np.unique(key, return_inverse=True)
        cell_group = cells // max(n_samples, 1)
        filled, starts = np.unique(cell_group, return_index=True)
        return cls(cell=cell.ravel(), cell_group=cell_group, size=size,
                   singletons=cells.size == key.size, starts=starts, filled=filled)

    def per_group(self, cell_values: np.ndarray) -> np.ndarray:
        # Cells are sorted by group: contiguous segment sums (reduceat) cost a twentieth of
        # a weighted bincount.
        values = np.asarray(cell_values, dtype=float)
        out = np.zeros((self.size, *values.shape[1:]))
        if self.starts.size:
            out[self.filled] = np.add.reduceat(values, self.starts, axis=0)
        return out

    def per_cell(self, values: np.ndarray) -> np.ndarray:
        return np.bincount(self.cell, weights=values, minlength=self.cell_group.size)

    def n_clusters(self, used: np.ndarray | None = None) -> np.ndarray:
        """Samples with at least one (used) answer, per group."""
        ones = np.ones(self.cell.size) if used is None else used.astype(float)
        return self.per_group(self.per_cell(ones) > 0)

    def jackknife(self, y_c: np.ndarray, n_c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(G, V_J) per group of the ratio Σ y_c / Σ n_c: the samples with n_c > 0 and the
        delete-one-sample jackknife variance (NaN with fewer than two such samples)."""
        g = self.cell_group
        y, n = self.per_group(y_c), self.per_group(n_c)
        present = n_c > 0
        k = self.per_group(present)
        p = _share(y, n)
        # the centred leave-one-out values (jackknife_of_sums: the form an engine sums too)
        with np.errstate(invalid="ignore", divide="ignore"):
            d = (p[g] * n_c - y_c) / (n[g] - n_c)
        d = np.where(present & np.isfinite(d), d, 0.0)
        return k, jackknife_of_sums(k, self.per_group(d), self.per_group(d * d))

    def deff(self, y_c: np.ndarray, n_c: np.ndarray, u_c: np.ndarray | None = None, *,
             weighted: bool | np.ndarray = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(Σ num, Σ units, design effect ≥ 1) per group of the ratio Σ num / Σ den, from
        their sums per cell (:meth:`per_cell`); ``u_c`` the units the Wilson n counts
        (default the denominator's). The design effect is 1 where the group has no unit.
        Several rates at once: arrays (cells, rates) give (groups, rates). ``weighted``
        (per rate) marks a ratio whose units weigh unequally (F1, F2: a true positive counts
        5 times in F2's denominator), so the jackknife runs even with one unit per sample."""
        u_c = n_c if u_c is None else u_c
        y, n = self.per_group(y_c), self.per_group(n_c)
        u = n if u_c is n_c else self.per_group(u_c)
        # One unit per sample (per rate): nothing is clustered, the plain interval stays.
        plain = self.singletons & ~(u_c > 1).any(axis=0) & ~np.asarray(weighted, dtype=bool)
        if np.all(plain):
            return y, u, np.ones(y.shape)
        k, v_cluster = self.jackknife(y_c, n_c)
        squares = self.per_group(u_c * u_c)
        return y, u, design_effect(y, n, u, k, v_cluster, squares, plain)

    def boundary_n(self, u_c: np.ndarray) -> np.ndarray:
        """Kish's effective number of clusters U² / Σ u_c² per group (units ``u_c`` per cell;
        arrays (cells, rates) give (groups, rates)): the effective n of a rate at 0 or 1,
        where :meth:`deff` assumes full correlation. U where every sample holds one unit."""
        return kish_n(self.per_group(u_c), self.per_group(np.asarray(u_c, float) ** 2))

    def mean_se(self, values: np.ndarray, used: np.ndarray, n: np.ndarray,
                var: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(G, standard error) of the mean of ``values[used]`` per group: the larger of the
        jackknife over samples (:meth:`jackknife` of Σx / Σ1) and the usual s/√n (s² =
        var·n/(n − 1)); one answer per sample gives s/√n and n − 1 degrees of freedom
        exactly, k identical answers per sample the t interval of the sample means."""
        with np.errstate(invalid="ignore", divide="ignore"):
            v_simple = var / np.maximum(n - 1, 1)
        if self.singletons:
            return n, np.where(n > 1, np.sqrt(v_simple), np.nan)
        k, v_cluster = self.jackknife(self.per_cell(np.where(used, values, 0.0)),
                                      self.per_cell(used.astype(float)))
        se = np.sqrt(np.fmax(v_cluster, v_simple))
        return k, np.where((n > 1) & (k >= 2), se, np.nan)


def design_effect(y: np.ndarray, n: np.ndarray, u: np.ndarray, k: np.ndarray,
                  v_cluster: np.ndarray, squares: np.ndarray,
                  plain: bool | np.ndarray = False) -> np.ndarray:
    """The design effect of :meth:`Clusters.deff` from per-group sums, wherever they were
    summed (cells in memory, or an engine: ``kbench_core.engines.judged_stats``): the ratio
    Σ y / Σ n with units Σ u, the k clusters with a unit in the denominator, the jackknife
    variance ``v_cluster`` (NaN below two clusters; :func:`jackknife_of_sums`), Σ u_c² and
    ``plain`` (per rate: one unit per sample and equal weights, so 1). Arrays (groups, rates)
    or (groups,)."""
    p = _share(y, n)
    with np.errstate(invalid="ignore", divide="ignore"):
        v_simple = p * (1 - p) / u
        ratio = v_cluster / v_simple
        full = squares / u  # full correlation
    inner = (p > 0) & (p < 1) & (v_simple > 0) & (k >= 2)
    deff = np.where(inner, ratio, full)
    # One answer per sample gives 1 up to rounding: keep the plain interval then.
    deff = np.where(np.isfinite(deff) & (deff > 1 + 1e-9), deff, 1.0)
    return np.where(plain, 1.0, deff)


def kish_n(u: np.ndarray, squares: np.ndarray) -> np.ndarray:
    """Kish's effective number of clusters U² / Σ u_c² from per-group sums (0 without
    units): :meth:`Clusters.boundary_n`'s finish."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(squares > 0, u * u / np.where(squares > 0, squares, 1.0), 0.0)


def jackknife_of_sums(k: np.ndarray, sum_d: np.ndarray, sum_dd: np.ndarray) -> np.ndarray:
    r""":meth:`Clusters.jackknife`'s variance from per-group sums of the centred leave-one-out
    values :math:`d_c = \hat p_{(-c)} - \hat p = (\hat p\, n_c - y_c)/(N - n_c)` over the k
    clusters with :math:`n_c > 0`: :math:`\hat V_J = \frac{k-1}{k}(\sum d_c^2 - (\sum d_c)^2/k)`,
    the same variance (the mean of the :math:`\hat p_{(-c)}` moves by Σd/k), summed where
    the cells lie (an engine's group-by) without the cancellation of raw squares. NaN with
    fewer than two clusters."""
    with np.errstate(invalid="ignore", divide="ignore"):
        v = (k - 1) / k * np.fmax(sum_dd - sum_d * sum_d / k, 0.0)
    return np.where(k >= 2, v, np.nan)


def wilson_effective(successes: np.ndarray, units: np.ndarray, deff: np.ndarray,
                     boundary_n: np.ndarray, *,
                     level: float | np.ndarray = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """A clustered rate's interval, monotone in its count: Wilson's on the effective numbers
    ``successes / deff`` of ``units / deff`` (:meth:`Clusters.deff`), its lower bound at most
    the one a perfect score of the same units gets and its upper bound at least a zero
    score's, both Wilson's on ``boundary_n`` (:meth:`Clusters.boundary_n`).

    Why: at 0 or 1 the data cannot show how correlated a sample's answers are, so
    :meth:`Clusters.deff` assumes full correlation (Kish's effective number of clusters),
    while one answer off the boundary the jackknife sees almost no correlation (one wrong
    answer cannot disagree with its sample's others) and gives deff ≈ 1. With 40 contracts ×
    3 prompt types, 120 of 120 gave [0.912, 1] and 119 of 120 [0.954, 0.9985]: the lower
    bound dropped when the score became perfect. One failure says no more about the
    correlation than none, so a rate below 1 never gets a higher lower bound than the
    perfect score (119 of 120: [0.912, 0.9985]); the change only widens, so coverage cannot
    fall (``docs/statistics.md``, round 3 item 8). One answer per sample: boundary_n = units,
    the plain Wilson interval, unchanged. Written by hand (two Wilson calls)."""
    deff = np.asarray(deff, dtype=float)
    low, high = wilson(np.asarray(successes, float) / deff, np.asarray(units, float) / deff,
                       level=level)
    boundary = np.asarray(boundary_n, dtype=float)
    top_low, _ = wilson(boundary, boundary, level=level)
    _, bottom_high = wilson(np.zeros_like(boundary), boundary, level=level)
    return (np.where(np.isfinite(top_low), np.fmin(low, top_low), low),
            np.where(np.isfinite(bottom_high), np.fmax(high, bottom_high), high))


def jeffreys_effective(successes: np.ndarray, units: np.ndarray, boundary_n: np.ndarray, *,
                       level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Jeffreys interval of a proportion on effective numbers (``successes`` of ``units``,
    both already divided by the design effect; fractional counts are fine): the equal-tailed
    interval of Beta(x + ½, n − x + ½), with the lower bound 0 at x = 0 and the upper 1 at
    x = n (Brown, Cai & DasGupta 2001, *Statistical Science* 16, 101–133, §4.1.2), kept
    monotone in the count at the boundary as :func:`wilson_effective` is (``boundary_n``).
    Used inside MOVER sums (Zou & Donner 2008; the tiers' difficulty means), where it kept
    the nominal coverage near 0 and 1 better than Wilson's (``docs/statistics.md``, round 3
    item 7). NaN where ``units`` is 0. scipy's beta quantiles."""
    x, n, edge = np.broadcast_arrays(*(np.asarray(a, dtype=float)
                                       for a in (successes, units, boundary_n)))
    alpha = (1 - level) / 2
    ok = np.isfinite(x) & np.isfinite(n) & (n > 0)
    low, high = np.full(x.shape, np.nan), np.full(x.shape, np.nan)
    xs, ns = np.clip(x[ok], 0, n[ok]), n[ok]
    low[ok] = np.where(xs <= 0, 0.0, _st.beta.ppf(alpha, xs + 0.5, ns - xs + 0.5))
    high[ok] = np.where(xs >= ns, 1.0, _st.beta.ppf(1 - alpha, xs + 0.5, ns - xs + 0.5))
    good = ok & np.isfinite(edge) & (edge > 0)
    if good.any():
        top_low = _st.beta.ppf(alpha, edge[good] + 0.5, 0.5)
        bottom_high = _st.beta.ppf(1 - alpha, 0.5, edge[good] + 0.5)
        low[good] = np.fmin(low[good], top_low)
        high[good] = np.fmax(high[good], bottom_high)
    return low, high
