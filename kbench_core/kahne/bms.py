"""BMS, the bias magnitude score per model × bias (``docs/metrics/bias.md``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from kbench_core.schema import INTENSITIES
from kbench_core.stats import WithinGroups, check_choice

from ._common import (
    AGGREGATION_WEIGHTS,
    HIGH_UNKNOWN,
    INTENSITY_WEIGHTS,
    _above,
    _frame,
    _prepare,
    _Stats,
    _stats,
    _Trials,
)

# ----------------------------------------------------------------------------- BMS


def bms(trials: pd.DataFrame, *, cap: float | None = 1.0,
        intensity_weights: Mapping[str, float] | None = None,
        aggregation_weights: Mapping[str, float] | None = None,
        spacing: Literal["ordinal", "observed"] = "ordinal",
        ci: Literal["bootstrap"] | None = None, n_boot: int = 1000,
        random_state: int = 0) -> pd.DataFrame:
    r"""Bias Magnitude Score per model × bias.

    Notes
    -----
    .. math::
        \mathrm{mag}_i = \min\bigl(w_i\,|\bar s_{T,i} - \bar s_C|,\ \mathrm{cap}\bigr),\qquad
        \mathrm{BMS} = \frac{\sum_{i\in P} a_i\,\mathrm{mag}_i}{\sum_{i\in P} a_i}

    over the intensities P with at least one known score; w = weak 2.0, moderate 1.0, strong
    0.67, adversarial 0.5 and a = 0.1, 0.3, 0.4, 0.2, both keyed by name. ``sensitivity`` is
    the least-squares slope of magnitude on intensity position (0–3, or 0..k−1 with
    ``spacing="observed"`` as the seed did); it needs two intensities. Unknown scores are left
    out of every mean; ``unknown_rate`` is their share of all the pair's rows. An empty control
    gives control mean 0 (KahneBench's convention). ``control_mean`` and each
    ``mean_<intensity>`` carry a 95% interval (Wilson when the scores are 0/1, else t).

    BMS itself has no analytic interval (a capped, weighted sum of absolute differences):
    ``ci="bootstrap"`` adds ``bms_low``/``bms_high``. ``n_boot`` resamples of the trials within
    each condition cell (control, each intensity) give a joint 95% box for the *signed*
    differences treatment − control (percentiles at 1 − 0.05/k for k intensities); the lower
    end is the smallest BMS over that box, the upper end the resampled BMS's 97.5th
    percentile capped by the largest BMS over the box (see :func:`_bms_bootstrap`): it
    always holds the estimate and reaches 0 when no intensity's difference is distinguishable
    from 0 (a percentile bootstrap of BMS itself never covers a true 0; Andrews 2000). A cell
    of 0/1 scores is resampled exactly as a binomial draw of its mean, so the cost grows with
    cells, not rows, for binary runs.

    References
    ----------
    KahneBench ``metrics/core.py`` and its metrics review (``docs/metrics/bias.md``).
    Andrews, D. W. K. (2000). Inconsistency of the bootstrap when a parameter is on the
    boundary of the parameter space. *Econometrica* 68(2), 399–405.
    """
    check_choice("spacing", spacing, ("ordinal", "observed"))
    check_choice("ci", ci, (None, "bootstrap"))
    weights = {**INTENSITY_WEIGHTS, **(intensity_weights or {})}
    agg = {**AGGREGATION_WEIGHTS, **(aggregation_weights or {})}
    w = np.array([weights[name] for name in INTENSITIES])
    a = np.array([agg[name] for name in INTENSITIES])
    t = _prepare(trials)
    return _frame(t, _bms(t, w, a, cap, spacing, ci, n_boot, random_state))


def _bms(t: _Trials, w: np.ndarray, a: np.ndarray, cap: float | None, spacing: str,
         ci: str | None, n_boot: int, random_state: int) -> dict[str, object]:
    """The columns of :func:`bms` after ``model`` and ``bias``, one value per pair
    (one row per pair of ``t``)."""
    size = t.n_pairs
    out: dict[str, object] = {}
    rows = t.rows().astype(np.int64)
    out["n"] = rows
    out["unknown_rate"] = t.rows(np.isnan(t.score)) / rows
    out["high_unknown"] = _above(out["unknown_rate"], HIGH_UNKNOWN)  # type: ignore[arg-type]
    cells = _bms_cells(t)
    k = len(INTENSITIES)
    control = cells.stats.n.reshape(size, k + 1)[:, 0] > 0
    means = cells.stats.mean.reshape(size, k + 1)
    out["control_mean"] = np.where(control, means[:, 0], 0.0)
    out["n_control"] = cells.stats.n.reshape(size, k + 1)[:, 0].astype(int)
    low, high = (b.reshape(size, k + 1) for b in cells.stats.interval())
    out["control_mean_low"], out["control_mean_high"] = low[:, 0], high[:, 0]
    mags, score = _bms_formula(means, w, a, cap)
    for i, name in enumerate(INTENSITIES):
        out[f"mean_{name}"] = means[:, 1 + i]
        out[f"n_{name}"] = cells.stats.n.reshape(size, k + 1)[:, 1 + i].astype(int)
        out[f"mean_{name}_low"], out[f"mean_{name}_high"] = low[:, 1 + i], high[:, 1 + i]
        out[f"mag_{name}"] = mags[:, i]
    out["bms"] = score
    if ci == "bootstrap":
        out["bms_low"], out["bms_high"] = _bms_bootstrap(t, cells.repeated(), w, a, cap,
                                                         n_boot, random_state)
    present = ~np.isnan(mags)
    out["n_intensities"] = present.sum(axis=1)
    out["renormalised"] = _renormalised(t, present)
    out["sensitivity"] = _slopes(mags, present, spacing)
    return out


def _renormalised(t: _Trials, present: np.ndarray) -> np.ndarray:
    """Per pair, whether its BMS was renormalised over fewer intensities than it should
    have: an intensity it has treatment rows for but no known score, or one that another
    model has scores for on the same bias. Such a BMS weighs the intensities differently
    from its neighbours' (a model whose weak answers are all unknown loses the weight-2.0
    intensity), so leaderboards mark it."""
    k = len(INTENSITIES)
    treated = (t.condition == 1) & (t.intensity >= 0)
    # one bincount over the treated rows' cells (a fancy-indexed assignment cost twice that)
    cell = (t.pair * k + t.intensity)[treated]
    rows_at = (np.bincount(cell, minlength=t.n_pairs * k) > 0).reshape(t.n_pairs, k)
    bias_codes, _ = pd.factorize(t.pairs["bias"])
    scored = np.zeros((int(bias_codes.max(initial=-1)) + 1, k), dtype=bool)
    np.logical_or.at(scored, bias_codes, present)
    expected = rows_at | scored[bias_codes]
    # only a BMS that exists can be renormalised (an unscored pair has none)
    return (expected & ~present).any(axis=1) & present.any(axis=1)


@dataclass(frozen=True)
class _Cells:
    """Known scores grouped by pair × (control, weak, ..., adversarial): cell = pair·5 + slot."""

    cell: np.ndarray    # cell of each known control/treatment score
    score: np.ndarray
    stats: _Stats
    weight: np.ndarray | None = None  # rows behind each score (a reduced run)

    def repeated(self) -> _Cells:
        """The cells with each score repeated by its weight: the rows a bootstrap draws."""
        if self.weight is None:
            return self
        times = self.weight.astype(np.int64)
        return _Cells(np.repeat(self.cell, times), np.repeat(self.score, times), self.stats)


def _bms_cells(t: _Trials) -> _Cells:
    k = len(INTENSITIES)
    slot = np.select([t.condition == 0, (t.condition == 1) & (t.intensity >= 0)],
                     [0, 1 + t.intensity], -1)
    used = (slot >= 0) & ~np.isnan(t.score)
    cell = t.pair[used] * (k + 1) + slot[used]
    score = t.score[used]
    weight = None if t.weight is None else t.weight[used]
    return _Cells(cell, score, _stats(cell, score, t.n_pairs * (k + 1), weight=weight), weight)


def _bms_formula(means: np.ndarray, w: np.ndarray, a: np.ndarray,
                 cap: float | None) -> tuple[np.ndarray, np.ndarray]:
    """Magnitudes and BMS from cell means ``[..., pair, slot]`` (slot 0 = control, NaN =
    empty); leading axes (bootstrap replicates) broadcast."""
    control = np.nan_to_num(means[..., 0], nan=0.0)  # empty control → 0 (KahneBench)
    gaps = np.abs(means[..., 1:] - control[..., None])
    mags = w * gaps
    if cap is not None:
        mags = np.minimum(mags, cap)
    return mags, _magnitudes(gaps, w, a, cap)


def _magnitudes(gaps: np.ndarray, w: np.ndarray, a: np.ndarray,
                cap: float | None) -> np.ndarray:
    """BMS from the absolute treatment − control gaps ``[..., pair, intensity]`` (NaN = the
    intensity is absent): the weighted, capped, renormalised sum of :func:`bms`."""
    mags = w * gaps
    if cap is not None:
        mags = np.minimum(mags, cap)
    present = ~np.isnan(mags)
    weight_sum = (present * a).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(weight_sum > 0, np.nansum(mags * a, axis=-1) / weight_sum, np.nan)


def _bms_bootstrap(t: _Trials, cells: _Cells, w: np.ndarray, a: np.ndarray,
                   cap: float | None, n_boot: int,
                   random_state: int) -> tuple[np.ndarray, np.ndarray]:
    r"""95% interval of BMS by projecting a bootstrap box of the *signed* differences.

    The percentile bootstrap of BMS itself fails at BMS = 0: |Δ̂| is biased away from 0, so
    every resample lies above the truth and the interval excludes it (Andrews 2000; coverage
    0 % in simulation with 50 trials per cell). The signed differences
    :math:`\Delta_i = \bar s_{T,i} - \bar s_C` are smooth means whose bootstrap is regular at
    0. So: resample the trials within each condition cell (``n_boot`` replicates), take for
    each of the k intensities present the percentile interval of :math:`\Delta_i` at level
    1 − 0.05/k (Bonferroni, so the k intervals hold jointly with ≥ 95 %; each widened to
    contain :math:`\hat\Delta_i`); the lower end is the smallest BMS over that box: |Δ|
    ranges over [0, max(|lo|, |hi|)] when the interval straddles 0, else
    [min(|lo|, |hi|), max(|lo|, |hi|)], and BMS increases with every |Δ_i|. The upper end is
    the 97.5th percentile of the resampled BMS (raised to the estimate if below it, capped by
    the largest BMS over the box): the bootstrap of |Δ̂| errs upwards at the boundary, which
    is harmless for an upper bound. The interval always contains the estimate, reaches 0
    whenever every intensity is compatible with no effect, and covers a true 0 whenever the
    box does.

    Written by hand: scipy's ``bootstrap`` resamples one statistic at a time and cannot keep
    the strata, and here every pair is resampled at once."""
    rng = np.random.default_rng(random_state)
    n_cells = cells.stats.n.size
    n = cells.stats.n
    binary = (cells.stats.n_fractional == 0) & (n > 0)
    p = np.where(binary, np.nan_to_num(cells.stats.mean), 0.0)
    # Rows of the cells with fractional scores, drawn within their cell.
    rows = np.flatnonzero(~binary[cells.cell])
    row_cell = cells.cell[rows]
    values = cells.score[rows]
    trials = WithinGroups(row_cell)
    k = len(INTENSITIES)
    shape = (t.n_pairs, k + 1)
    draws = np.empty((n_boot, t.n_pairs, k))
    for b in range(n_boot):
        with np.errstate(invalid="ignore", divide="ignore"):
            means = rng.binomial(n.astype(np.int64), p) / n
            if rows.size:
                sums = np.bincount(row_cell, weights=values * trials.draw(rng),
                                   minlength=n_cells)
                means = np.where(binary, means, sums / n)
        means = means.reshape(shape)
        draws[b] = means[:, 1:] - np.nan_to_num(means[:, :1], nan=0.0)
    point_means = cells.stats.mean.reshape(shape)
    point = point_means[:, 1:] - np.nan_to_num(point_means[:, :1], nan=0.0)
    present = ~np.isnan(point)
    n_present = present.sum(axis=1)
    low = np.full(point.shape, np.nan)
    high = np.full(point.shape, np.nan)
    # An intensity is absent from a pair in every replicate or in none (a cell with trials
    # always has a mean), so plain quantiles serve: absent ones stay NaN, and nanquantile's
    # per-column NaN handling cost more than the resampling.
    for count in np.unique(n_present[n_present > 0]):
        rows_k = n_present == count
        tail = 0.05 / count / 2
        low[rows_k], high[rows_k] = np.quantile(draws[:, rows_k], [tail, 1 - tail], axis=0)
    low, high = np.fmin(low, point), np.fmax(high, point)  # the box holds the estimate
    outer = np.maximum(np.abs(low), np.abs(high))
    inner = np.where((low <= 0) & (high >= 0), 0.0, np.minimum(np.abs(low), np.abs(high)))
    # The upper end needs no projection: |Δ̂*| errs upwards near 0, so the resampled BMS's
    # 97.5th percentile is a safe upper bound there and a regular one away from 0; the box's
    # upper end caps it (and both hold the estimate).
    estimate = _magnitudes(np.abs(point), w, a, cap)
    upper = np.maximum(np.quantile(_magnitudes(np.abs(draws), w, a, cap), 0.975, axis=0),
                       estimate)
    return _magnitudes(inner, w, a, cap), np.fmin(upper, _magnitudes(outer, w, a, cap))


def _slopes(y: np.ndarray, present: np.ndarray, spacing: str) -> np.ndarray:
    """Least-squares slope per row over its present columns (NaN with fewer than two)."""
    if spacing == "ordinal":
        x = np.broadcast_to(np.arange(y.shape[1], dtype=float), y.shape)
    else:  # the seed's 0..k-1 over the intensities present
        x = np.cumsum(present, axis=1) - 1.0
    count = present.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        x_mean = np.where(present, x, 0).sum(axis=1) / count
        y_mean = np.where(present, y, 0).sum(axis=1) / count
        dx = np.where(present, x - x_mean[:, None], 0)
        dy = np.where(present, y - y_mean[:, None], 0)
        slope = (dx * dy).sum(axis=1) / (dx * dx).sum(axis=1)
    return np.where(count >= 2, slope, np.nan)
