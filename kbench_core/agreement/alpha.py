"""Krippendorff's α (nominal, ordinal, interval) over all judges and per pair, with bootstrap
intervals that reweight items instead of re-running the library on each resample."""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations
from typing import Literal

import krippendorff
import numpy as np
import pandas as pd

from kbench_core.agreement._labels import (
    HUMAN,
    MAX_ALPHA_VALUES,
    Level,
    _check_boot,
    _code_grid,
    _Label,
    _label,
    _Layout,
    _layout,
    _need_judges,
    _value_grid,
    judges,
)
from kbench_core.stats import (
    Estimate,
    agreement_wilson,
    bootstrap_groups,
    check_choice,
    widen_small,
)


@dataclass(frozen=True)
class _Units:
    """Pairable units (items with >= 2 judgements) as value counts over a value domain."""

    counts: np.ndarray      # units × values (only values that occur)
    domain: np.ndarray      # the values (codes of categories, or numbers), increasing
    n_dropped: int          # items with exactly one judgement


def _units(grid_codes: np.ndarray, domain: np.ndarray) -> _Units:
    labelled = (grid_codes >= 0).sum(axis=1)
    pairable = labelled >= 2
    sub = grid_codes[pairable]
    n, v = sub.shape[0], len(domain)
    ok = sub >= 0
    unit = np.broadcast_to(np.arange(n)[:, None], sub.shape)[ok]
    counts = np.bincount(unit * v + sub[ok], minlength=n * v).reshape(n, v)
    used = counts.sum(axis=0) > 0
    return _Units(counts[:, used], domain[used], int((labelled == 1).sum()))


def _interval_parts(values: np.ndarray) -> np.ndarray:
    """Per pairable unit: m, Σx, Σx², and Σ_{i≠j}(x_i − x_j)²/(m − 1)."""
    m = (~np.isnan(values)).sum(axis=1).astype(float)
    s1 = np.nansum(values, axis=1)
    s2 = np.nansum(values * values, axis=1)
    within = np.maximum(2 * (m * s2 - s1 * s1), 0.0) / (m - 1)
    return np.column_stack([m, s1, s2, within])


def _interval_alpha(parts: np.ndarray, weights: np.ndarray | None = None) -> float:
    r"""Interval α from unit sums: :math:`1 - (n-1)\sum_u D_u / (2(n T_2 - T_1^2))`.

    The krippendorff package's interval α written with sums instead of its values × values
    coincidence matrix (the same number; a test checks it), so that many distinct values or a
    bootstrap do not need a units × values × values array."""
    m, s1, s2, within = (parts.T if weights is None else (weights @ parts)[:, None])
    n, t1, t2, d_o = m.sum(), s1.sum(), s2.sum(), within.sum()
    expected = 2 * (n * t2 - t1 * t1)
    if n < 2 or expected <= 1e-12 * max(n * t2, 1.0):
        return math.nan
    return float(1 - (n - 1) * d_o / expected)


def _coincidence_alpha(o: np.ndarray, domain: np.ndarray, level: Level) -> float:
    """α from a coincidence matrix, with Krippendorff's (2011) distances."""
    n_v = o.sum(axis=0)
    n = n_v.sum()
    if n < 2 or (n_v > 0).sum() < 2:
        return math.nan
    delta = _distances(n_v, domain, level)
    expected = (np.outer(n_v, n_v) * delta).sum()
    if expected <= 0:
        return math.nan
    return float(1 - (n - 1) * (o * delta).sum() / expected)


def _alpha_wilson(d_o: float, d_e: float, d_max: float, n_units: int,
                  ) -> tuple[float, float]:
    r"""The Wilson-type interval of α = 1 − D_o/D_e (:func:`kbench_core.stats.agreement_wilson`):
    with distances scaled by their largest value, :math:`p_o = 1 - D_o/\delta_{max}` is a
    weighted mean of per-unit agreements in [0, 1] and :math:`p_e = 1 - D_e/\delta_{max}`, so
    that α = (p_o − p_e)/(1 − p_e); the score interval of :math:`p_o` over the pairable
    units, chance fixed. For a nominal label this is κ's bound with Krippendorff's chance."""
    if not (d_max > 0 and d_e > 0 and n_units > 0):
        return math.nan, math.nan
    low, high = agreement_wilson(1 - d_o / d_max, 1 - d_e / d_max, n_units)
    return float(low), float(high)


def _coincidence_wilson(o: np.ndarray, domain: np.ndarray, level: Level,
                        n_units: int) -> tuple[float, float]:
    n_v = o.sum(axis=0)
    n = n_v.sum()
    if n < 2 or (n_v > 0).sum() < 2:
        return math.nan, math.nan
    delta = _distances(n_v, domain, level)
    d_e = (np.outer(n_v, n_v) * delta).sum() / (n * (n - 1))
    return _alpha_wilson((o * delta).sum() / n, d_e, float(delta.max()), n_units)


def _interval_wilson(parts: np.ndarray, d_max: float) -> tuple[float, float]:
    """:func:`_alpha_wilson` from the unit sums of :func:`_interval_parts` (interval α;
    ``d_max`` the squared range of the values)."""
    m, s1, s2, within = parts.T
    n, t1, t2 = m.sum(), s1.sum(), s2.sum()
    if n < 2:
        return math.nan, math.nan
    d_e = 2 * (n * t2 - t1 * t1) / (n * (n - 1))
    return _alpha_wilson(within.sum() / n, d_e, d_max, parts.shape[0])


def _distances(n_v: np.ndarray, domain: np.ndarray, level: Level) -> np.ndarray:
    """Krippendorff's (2011) δ² between the values of ``domain`` (marginals ``n_v``)."""
    if level == "nominal":
        delta = 1.0 - np.eye(len(domain))
    elif level == "interval":
        delta = (domain[:, None] - domain[None, :]).astype(float) ** 2
    else:
        cum = np.concatenate([[0.0], np.cumsum(n_v)])
        lo = np.minimum.outer(np.arange(len(n_v)), np.arange(len(n_v)))
        hi = np.maximum.outer(np.arange(len(n_v)), np.arange(len(n_v)))
        delta = (cum[hi + 1] - cum[lo] - (n_v[lo] + n_v[hi]) / 2) ** 2
    return delta


def _pattern_coincidences(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct value-count rows (few: 3 judges and 2 values give at most 10) with their
    per-unit coincidence matrices, and the pattern of each unit."""
    patterns, inverse = np.unique(counts, axis=0, return_inverse=True)
    p = patterns.astype(float)
    m = p.sum(axis=1)
    within = (p[:, :, None] * p[:, None, :]
              - p[:, :, None] * np.eye(p.shape[1])[None]) / (m - 1)[:, None, None]
    return within, inverse.ravel()


def _alpha_grid(layout: _Layout, spec: _Label, level: Level) -> tuple[np.ndarray, np.ndarray]:
    """Codes grid and value domain of a label at a level (numbers become codes of their
    distinct values)."""
    if spec.numeric:
        values = _value_grid(layout, spec)
        domain = np.unique(values[~np.isnan(values)])
        codes = np.where(np.isnan(values), -1,
                         np.searchsorted(domain, np.nan_to_num(values))).astype(np.int64)
        return codes, domain.astype(float)
    if level == "interval" and not spec.boolean:
        raise ValueError(f"level='interval' needs numbers; {spec.name!r} is categorical: use "
                         "level='ordinal' or 'nominal'")
    if level == "ordinal" and not spec.ordered:
        raise ValueError(f"level='ordinal' needs ordered categories; {spec.name!r} is nominal")
    return _code_grid(layout, spec), np.arange(len(spec.categories), dtype=float)


def krippendorff_alpha(judged: pd.DataFrame, label: str, *, level: Level = "nominal",
                       ci: Literal["bootstrap"] | None = None, n_boot: int = 1000,
                       random_state: int = 0) -> Estimate:
    r"""Krippendorff's α among the LLM judges; missing judgements allowed.

    Parameters
    ----------
    judged : DataFrame
        A validated ``judged`` frame with at least two judges other than ``human`` (who is
        left out).
    label : str
        Any judged column.
    level : {"nominal", "ordinal", "interval"}
        ``ordinal`` needs ordered categories (``type_match``, yes/no) or numbers;
        ``interval`` needs numbers (``rcir``, ``confidence``, counts) or yes/no (0/1).
    ci : {None, "bootstrap"}
        ``"bootstrap"``: percentile interval over ``n_boot`` resamples of the pairable items
        (Hayes & Krippendorff 2007 resample coincidences; resampling items keeps each item's
        judgements together), seeded by ``random_state``.

    Returns
    -------
    Estimate
        ``value`` α; ``n`` the pairable items (labelled by at least two judges);
        ``n_dropped`` the items only one judge labelled.

    Notes
    -----
    :math:`\alpha = 1 - D_o/D_e` with the coincidence matrix :math:`o_{ck} = \sum_u
    n_{uc}n_{uk}/(m_u - 1)` (minus the diagonal self-pairs) over pairable units, marginals
    :math:`n_c`, :math:`n = \sum n_c`, and :math:`D_o = \sum o_{ck}\delta_{ck}`,
    :math:`D_e = \sum n_c n_k \delta_{ck}/(n-1)`; δ is 0/1 (nominal), the squared difference
    (interval) or Krippendorff's rank distance :math:`(\sum_{g=c}^{k} n_g - (n_c+n_k)/2)^2`
    (ordinal). The value comes from the ``krippendorff`` package (``value_counts`` input,
    built by one ``bincount``); beyond :data:`MAX_ALPHA_VALUES` distinct numbers an interval α
    uses the equivalent closed form of :func:`_interval_alpha`. Bootstrap replicates reweight
    the per-item coincidences (identical items share one matrix), not a re-run per resample.
    NaN when fewer than two distinct values occur (D_e = 0) or no item has two judgements.

    References
    ----------
    Krippendorff, K. (2011). Computing Krippendorff's alpha-reliability. Annenberg School for
    Communication, University of Pennsylvania. Hayes, A. F. & Krippendorff, K. (2007).
    Answering the call for a standard reliability measure for coding data. *Communication
    Methods and Measures* 1, 77–89.
    """
    check_choice("level", level, ("nominal", "ordinal", "interval"))
    check_choice("ci", ci, (None, "bootstrap"))
    _check_boot(n_boot, random_state)
    spec = _label(judged, label)
    layout = _layout(judged, human=False)
    _need_judges(layout, "krippendorff_alpha")
    return _alpha_estimate(layout, spec, level, ci, n_boot, random_state)


def _alpha_estimate(layout: _Layout, spec: _Label, level: Level,
                    ci: Literal["bootstrap"] | None, n_boot: int,
                    random_state: int) -> Estimate:
    codes, domain = _alpha_grid(layout, spec, level)
    units = _units(codes, domain)
    n = units.counts.shape[0]
    closed = level == "interval" and len(units.domain) > MAX_ALPHA_VALUES
    if not closed and len(units.domain) > MAX_ALPHA_VALUES:
        raise ValueError(f"{spec.name!r} has {len(units.domain)} distinct values: too many for "
                         f"a {level} alpha; use level='interval' or bin the values")
    parts = None
    if closed or (ci == "bootstrap" and level == "interval"):
        pairable = (codes >= 0).sum(axis=1) >= 2
        parts = _interval_parts(np.where(codes[pairable] >= 0,
                                         domain[np.maximum(codes[pairable], 0)], np.nan))
    if n == 0 or len(units.domain) < 2:
        value = math.nan
    elif closed:
        value = _interval_alpha(parts)
    else:
        value = float(krippendorff.alpha(value_counts=units.counts, value_domain=units.domain,
                                          level_of_measurement=level))
    low = high = math.nan
    if ci == "bootstrap" and n >= 1 and math.isfinite(value):
        if parts is not None:
            def statistic(weights: np.ndarray) -> np.ndarray:
                return np.array([_interval_alpha(parts, weights)])
        else:
            within, pattern = _pattern_coincidences(units.counts)

            def statistic(weights: np.ndarray) -> np.ndarray:
                per_pattern = np.bincount(pattern, weights=weights, minlength=len(within))
                o = np.tensordot(per_pattern, within, axes=1)
                return np.array([_coincidence_alpha(o, units.domain, level)])
        lo, hi = bootstrap_groups(n, statistic, n_boot=n_boot, random_state=random_state)
        low, high = float(lo[0]), float(hi[0])
        # Every resample of units that all agree has α = 1 too: no width. Then the
        # Wilson-type interval of the observed agreement (:func:`_alpha_wilson`).
        if parts is not None:
            span = float(units.domain[-1] - units.domain[0])
            w_low, w_high = _interval_wilson(parts, span * span)
        else:
            within, pattern = _pattern_coincidences(units.counts)
            o = np.tensordot(np.bincount(pattern, minlength=len(within)).astype(float),
                             within, axes=1)
            w_low, w_high = _coincidence_wilson(o, units.domain, level, n)
        low, high = (float(v) for v in widen_small(low, high, w_low, w_high, n, few=0))
    return Estimate(value, low, high, n, n_dropped=units.n_dropped)


def pairwise_alpha(judged: pd.DataFrame, label: str, *, level: Level | None = None,
                   ci: Literal["bootstrap"] | None = None, n_boot: int = 1000,
                   random_state: int = 0) -> pd.DataFrame:
    """Krippendorff's α for every pair of LLM judges (for numeric labels, where κ does not
    apply): ``judge_a, judge_b, alpha, alpha_low, alpha_high, n, n_dropped``. ``level``
    defaults to the label's natural level (:func:`default_level`)."""
    spec = _label(judged, label)
    level = spec.level if level is None else level
    names = [j for j in judges(judged) if j != HUMAN]
    if len(names) < 2:
        raise ValueError("pairwise_alpha needs at least two judges other than 'human'")
    check_choice("level", level, ("nominal", "ordinal", "interval"))
    check_choice("ci", ci, (None, "bootstrap"))
    _check_boot(n_boot, random_state)
    # One layout of the run, each pair its two columns (a layout and a copy of the frame per
    # pair cost 0.25 s of the Judge agreement page's label change on 600k rows).
    layout = _layout(judged, human=False)
    rows = []
    for a, b in combinations(names, 2):
        est = _alpha_estimate(layout.among((a, b)), spec, level, ci, n_boot, random_state)
        rows.append({"judge_a": a, "judge_b": b, "alpha": est.value, "alpha_low": est.low,
                     "alpha_high": est.high, "n": est.n, "n_dropped": est.n_dropped})
    return pd.DataFrame(rows, columns=["judge_a", "judge_b", "alpha", "alpha_low",
                                       "alpha_high", "n", "n_dropped"])
