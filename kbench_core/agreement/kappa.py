"""Cohen's κ per pair of judges and of each judge against the human (statsmodels' formulas,
asymptotic SE), and Fleiss' κ over all judges (Gwet's SE, or a bootstrap over items)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import combinations

import numpy as np
import pandas as pd
from scipy import stats as _st
from statsmodels.stats.inter_rater import fleiss_kappa as _sm_fleiss_kappa

from kbench_core.agreement._labels import (
    HUMAN,
    Ci,
    Weights,
    _categorical,
    _check_boot,
    _code_grid,
    _Label,
    _label,
    _Layout,
    _layout,
    _need_judges,
)
from kbench_core.stats import (
    Estimate,
    agreement_wilson,
    bootstrap_groups,
    check_choice,
    widen_small,
)

_Z = float(_st.norm.isf(0.025))
_PAIR_COLUMNS = ["judge_a", "judge_b", "kappa", "kappa_low", "kappa_high", "n", "n_dropped",
                 "percent_agreement"]


def _chance_is_total(table: np.ndarray) -> bool:
    """Both judges used one and the same category only: chance agreement is 1, κ is 0/0.

    Decided on the categories used, not on p_e ≈ 1: with 200k items one dissenting item
    leaves p_e within 1e-5 of 1, and κ is then well defined."""
    rows, cols = np.flatnonzero(table.sum(1) > 0), np.flatnonzero(table.sum(0) > 0)
    return bool(rows.size == 1 and cols.size == 1 and rows[0] == cols[0])


def _cohens_kappa(table: np.ndarray, weights: Weights, *,
                  variance: bool = True) -> tuple[float, float]:
    r"""Cohen's κ of a K × K table and its large-sample variance (Fleiss, Cohen & Everitt
    1969): statsmodels' ``cohens_kappa`` (0.14) operation for operation, so the numbers are
    the same to the last bit (a test compares them), without the ~1 ms its result object and
    checks cost per call, which dominated κ on small runs.

    Unweighted, :math:`\kappa = (p_o - p_e)/(1 - p_e)` and
    :math:`\mathrm{var} = [\sum_j p_{jj}(1 - (p_{j\cdot} + p_{\cdot j})(1-\kappa))^2
    + (1-\kappa)^2\sum_{j\ne k} p_{jk}(p_{\cdot j} + p_{k\cdot})^2
    - (\kappa - p_e(1-\kappa))^2] / ((1-p_e)^2 n)`. Weighted (disagreement weights
    :math:`w_{jk}` = :math:`|j-k|/(K-1)` or :math:`(j-k)^2/(K-1)^2`),
    :math:`\kappa = 1 - \sum w_{jk}p_{jk}/\sum w_{jk}p_{j\cdot}p_{\cdot k}` and, with
    agreement weights :math:`\bar w = 1 - w`, :math:`\bar w_{j\cdot} = \sum_k p_{\cdot k}
    \bar w_{jk}`, :math:`\bar w_{\cdot k} = \sum_j p_{j\cdot}\bar w_{jk}`,
    :math:`p_{e,w} = \sum \bar w_{jk}p_{j\cdot}p_{\cdot k}`:
    :math:`\mathrm{var} = [\sum p_{jk}(\bar w_{jk} - (\bar w_{\cdot k} + \bar w_{j\cdot})
    (1-\kappa))^2 - (\kappa - p_{e,w}(1-\kappa))^2] / ((1-p_{e,w})^2 n)`.
    Returns (κ, variance); the variance is NaN when not asked for.
    """
    table = np.asarray(table, float)
    agree = np.diag(table).sum()
    nobs = table.sum()
    probs = table / nobs
    freq_row = table.sum(1) / nobs
    freq_col = table.sum(0) / nobs
    prob_exp = freq_col * freq_row[:, None]
    agree_exp = np.diag(prob_exp).sum()
    var_kappa = math.nan
    if weights is None:
        kappa = (agree / nobs - agree_exp) / (1 - agree_exp)
        if variance:
            term_a = probs.diagonal() * (1 - (freq_row + freq_col) * (1 - kappa)) ** 2
            term_a = term_a.sum()
            term_b = probs * (freq_col[:, None] + freq_row) ** 2
            d_idx = np.arange(table.shape[0])
            term_b[d_idx, d_idx] = 0
            term_b = (1 - kappa) ** 2 * term_b.sum()
            term_c = (kappa - agree_exp * (1 - kappa)) ** 2
            var_kappa = (term_a + term_b - term_c) / (1 - agree_exp) ** 2 / nobs
    else:
        levels = np.arange(table.shape[0]).astype(float)
        if weights == "linear":
            w_dis = np.abs(levels[:, None] - levels) / (levels[-1] - levels[0])
        else:
            w_dis = (levels[:, None] - levels) ** 2 / (levels[-1] - levels[0]) ** 2
        kappa = 1 - (w_dis * table).sum() / nobs / (w_dis * prob_exp).sum()
        if variance:
            w = 1. - w_dis
            w_row = (freq_col * w).sum(1)
            w_col = (freq_row[:, None] * w).sum(0)
            agree_wexp = (w * freq_col * freq_row[:, None]).sum()
            term_a = probs * (w - (w_col + w_row[:, None]) * (1 - kappa)) ** 2
            fac = 1. / ((1 - agree_wexp) ** 2 * nobs)
            var_kappa = term_a.sum() - (kappa - agree_wexp * (1 - kappa)) ** 2
            var_kappa *= fac
    return float(kappa), float(var_kappa)


def _kappa_value(table: np.ndarray, weights: Weights) -> float:
    if table.sum() <= 0 or _chance_is_total(table):
        return math.nan
    with np.errstate(invalid="ignore", divide="ignore"):
        return _cohens_kappa(table, weights, variance=False)[0]


def _agreements(table: np.ndarray, weights: Weights) -> tuple[float, float]:
    """Observed and chance agreement (p_o, p_e) of a K × K table, with agreement weights
    1 − w_jk for weighted κ, so that κ = (p_o − p_e)/(1 − p_e) in every case."""
    k = table.shape[0]
    if weights is None:
        agree = np.eye(k)
    else:
        levels = np.arange(k, dtype=float)
        dist = np.abs(levels[:, None] - levels) / max(k - 1, 1)
        agree = 1 - (dist if weights == "linear" else dist ** 2)
    nobs = table.sum()
    expected = np.outer(table.sum(1), table.sum(0)) / nobs
    return float((agree * table).sum() / nobs), float((agree * expected).sum() / nobs)


def _wilson_kappa(table: np.ndarray, weights: Weights) -> tuple[float, float]:
    """The Wilson-type interval of κ (:func:`kbench_core.stats.agreement_wilson`)."""
    if table.sum() <= 0 or _chance_is_total(table):
        return math.nan, math.nan
    p_o, p_e = _agreements(table, weights)
    low, high = agreement_wilson(p_o, p_e, table.sum())
    return float(low), float(high)


def _kappa_with_se(table: np.ndarray, weights: Weights) -> tuple[float, float, float]:
    """κ and its asymptotic 95% interval from the large-sample variance, clipped to
    [-1, 1]; below :data:`~kbench_core.stats.SMALL_SAMPLE` items or at zero width (every
    item agrees) widened to the Wilson-type interval (:func:`_wilson_kappa`)."""
    if table.sum() <= 0 or _chance_is_total(table):
        return math.nan, math.nan, math.nan
    with np.errstate(invalid="ignore", divide="ignore"):
        kappa, var_kappa = _cohens_kappa(table, weights)
    # Rounding can leave a variance of -1e-17 at perfect agreement: that is 0, not NaN.
    half = _Z * math.sqrt(max(var_kappa, 0.0))
    low, high = widen_small(max(kappa - half, -1.0), min(kappa + half, 1.0),
                            *_wilson_kappa(table, weights), table.sum())
    return kappa, float(low), float(high)


def _pair_tables(grid: np.ndarray, pairs: Sequence[tuple[int, int]], k: int,
                 ) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per pair: the grid rows both judges labelled, their cell in the k × k table, and the
    rows only one of them labelled (a row is one item, or with :func:`_kappa_frame`'s
    ``count`` that many)."""
    out = []
    for a, b in pairs:
        has_a, has_b = grid[:, a] >= 0, grid[:, b] >= 0
        both = np.flatnonzero(has_a & has_b)
        cell = grid[both, a] * k + grid[both, b]
        out.append((both, cell, np.flatnonzero(has_a ^ has_b)))
    return out


def _kappa_frame(grid: np.ndarray, names: Sequence[str], pairs: Sequence[tuple[int, int]],
                 label: _Label, weights: Weights, ci: Ci, n_boot: int,
                 random_state: int, count: np.ndarray | None = None) -> pd.DataFrame:
    """One row per pair of the items × judges code ``grid`` (-1: no judgement). ``count``
    (optional, per grid row): the number of items with that row's codes, so that the
    distinct rows and their counts give the numbers of the items' grid (the bootstrap
    draws items, so it needs the items' grid)."""
    if count is not None and ci == "bootstrap":
        raise ValueError("a bootstrap interval resamples items: it needs the items' grid, "
                         "not counted rows")
    k = len(label.categories)
    parts = _pair_tables(grid, pairs, k)
    rows = []
    wilson_bounds = []
    for (a, b), (both, cell, one) in zip(pairs, parts, strict=True):
        if count is None:
            table = np.bincount(cell, minlength=k * k).reshape(k, k).astype(float)
            n, dropped = int(both.size), int(one.size)
        else:
            table = np.bincount(cell, weights=count[both].astype(float),
                                minlength=k * k).reshape(k, k)
            n, dropped = int(count[both].sum()), int(count[one].sum())
        wilson_bounds.append(_wilson_kappa(table, weights) if ci == "bootstrap"
                             else (math.nan, math.nan))
        if ci == "asymptotic":
            kappa, low, high = _kappa_with_se(table, weights)
        else:
            kappa, low, high = _kappa_value(table, weights), math.nan, math.nan
        rows.append({"judge_a": names[a], "judge_b": names[b], "kappa": kappa,
                     "kappa_low": low, "kappa_high": high, "n": n, "n_dropped": dropped,
                     "percent_agreement": np.trace(table) / n if n else math.nan})
    out = pd.DataFrame(rows, columns=_PAIR_COLUMNS)
    if ci == "bootstrap" and pairs:
        # Items with the same judgements are interchangeable: one bincount per replicate
        # weights the distinct rows, and each pair's table comes from those few rows.
        patterns, inverse = np.unique(grid, axis=0, return_inverse=True)
        inverse = inverse.ravel()
        cells = []
        for a, b in pairs:
            keep = np.flatnonzero((patterns[:, a] >= 0) & (patterns[:, b] >= 0))
            cells.append((keep, patterns[keep, a] * k + patterns[keep, b]))

        def statistic(counts: np.ndarray) -> np.ndarray:
            per_pattern = np.bincount(inverse, weights=counts, minlength=len(patterns))
            return np.array([
                _kappa_value(np.bincount(cell, weights=per_pattern[keep], minlength=k * k)
                             .reshape(k, k), weights) for keep, cell in cells])

        low, high = bootstrap_groups(grid.shape[0], statistic, n_boot=n_boot,
                                     random_state=random_state)
        # Every resample of items that all agree has κ = 1 too: [1, 1]. Few items or no
        # width: widened to the Wilson-type interval, as the asymptotic one is.
        w_low, w_high = np.array(wilson_bounds, dtype=float).reshape(-1, 2).T
        low, high = widen_small(low, high, w_low, w_high, out["n"].to_numpy(float))
        out["kappa_low"], out["kappa_high"] = low, high
    return out


def _check_weights(label: _Label, weights: Weights) -> None:
    check_choice("weights", weights, (None, "linear", "quadratic"))
    if weights is not None and not label.ordered:
        raise ValueError(f"weights={weights!r} needs ordered categories; {label.name!r} is "
                         "nominal (use weights=None)")


def pairwise_kappa(judged: pd.DataFrame, label: str, *, weights: Weights = None,
                   ci: Ci = "asymptotic", n_boot: int = 1000,
                   random_state: int = 0) -> pd.DataFrame:
    r"""Cohen's κ for every pair of LLM judges, on the items both labelled.

    Parameters
    ----------
    judged : DataFrame
        A validated ``judged`` frame with at least two judges other than ``human``.
    label : str
        A categorical judged column (``target_found``, ``said_vulnerable``, ``type_match``,
        ...). A numeric label raises an error pointing to
        ``krippendorff_alpha(level="interval")``.
    weights : {None, "linear", "quadratic"}
        Weighted κ for ordered labels (``type_match``: not_mentioned < wrong < partial <
        semantic < exact; yes/no labels count as ordered, where weights change nothing).
    ci : {"asymptotic", "bootstrap", None}
        ``"asymptotic"``: κ ± 1.96·SE with statsmodels' large-sample variance (Fleiss, Cohen &
        Everitt 1969; its weighted form for weighted κ); ``"bootstrap"``: percentile interval
        over ``n_boot`` resamples of the items (seeded by ``random_state``); ``None``: none.
        Either is widened to the Wilson-type interval (the Wilson score interval of the
        observed agreement carried to κ's scale with chance agreement fixed,
        :func:`kbench_core.stats.agreement_wilson`) where it rests on fewer than 30 items or
        has no width: the large-sample SE is 0 when every item agrees, and κ = 1 on 5 items
        gave [1, 1] (now [0.13, 1] with balanced categories). Near κ = 1 with 5-40 items the
        large-sample interval covered 0.05-0.9 of simulated tables, the widened one
        0.87-1.0.

    Returns
    -------
    DataFrame
        One row per pair (in judge order): ``judge_a, judge_b, kappa, kappa_low, kappa_high,
        n`` (items both labelled), ``n_dropped`` (items only one of them labelled) and
        ``percent_agreement`` (share of the ``n`` items with the same value).

    Notes
    -----
    With :math:`p_{jk}` the share of items judge a put in category j and judge b in k, and
    disagreement weights :math:`w_{jk}` (0 on the diagonal; 1 elsewhere, :math:`|j-k|/(K-1)`
    or :math:`(j-k)^2/(K-1)^2`),

    .. math:: \kappa = 1 - \frac{\sum w_{jk} p_{jk}}{\sum w_{jk} p_{j\cdot} p_{\cdot k}}

    which is :math:`(p_o - p_e)/(1 - p_e)` unweighted. κ and its variance are statsmodels'
    ``cohens_kappa``, restated in numpy (:func:`_cohens_kappa`), on the K × K table over
    every category of the label (so weighted κ keeps the declared distances even when a
    category is unused). When both judges use a single, shared category, chance agreement
    is 1 and κ is NaN (0/0), not 1. Interval bounds are clipped to [-1, 1].

    Examples
    --------
    >>> from kbench_core.samples import judged_samples
    >>> pairs = pairwise_kappa(judged_samples(), "target_found")
    >>> pairs[["judge_a", "judge_b", "n"]].values.tolist()[0]
    ['judge-one', 'judge-three', 360]

    References
    ----------
    Cohen, J. (1960). A coefficient of agreement for nominal scales. *Educational and
    Psychological Measurement* 20, 37–46. Cohen, J. (1968). Weighted kappa. *Psychological
    Bulletin* 70, 213–220. Fleiss, J. L., Cohen, J. & Everitt, B. S. (1969). Large sample
    standard errors of kappa and weighted kappa. *Psychological Bulletin* 72, 323–327.
    """
    check_choice("ci", ci, ("asymptotic", "bootstrap", None))
    _check_boot(n_boot, random_state)
    spec = _label(judged, label)
    _categorical(spec, "pairwise_kappa")
    _check_weights(spec, weights)
    layout = _layout(judged, human=False)
    _need_judges(layout, "pairwise_kappa")
    grid = _code_grid(layout, spec)
    pairs = list(combinations(range(len(layout.judges)), 2))
    return _kappa_frame(grid, layout.judges, pairs, spec, weights, ci, n_boot, random_state)


def human_agreement(judged: pd.DataFrame, label: str, *, weights: Weights = None,
                    ci: Ci = "asymptotic", n_boot: int = 1000,
                    random_state: int = 0) -> pd.DataFrame:
    """Cohen's κ of each LLM judge against the expert labels of the judge named ``human``.

    Same options and formula as :func:`pairwise_kappa`; only the items the human labelled
    count. Returns one row per LLM judge: ``judge, kappa, kappa_low, kappa_high, n,
    n_dropped, percent_agreement``; an empty frame with these columns when the frame has no
    ``human`` judge.
    """
    check_choice("ci", ci, ("asymptotic", "bootstrap", None))
    _check_boot(n_boot, random_state)
    spec = _label(judged, label)
    _categorical(spec, "human_agreement")
    _check_weights(spec, weights)
    columns = ["judge", *_PAIR_COLUMNS[2:]]
    layout = _layout(judged, human=True)
    if HUMAN not in layout.judges or len(layout.judges) < 2:
        return pd.DataFrame(columns=columns)
    grid = _code_grid(layout, spec)
    h = len(layout.judges) - 1
    pairs = [(j, h) for j in range(h)]
    out = _kappa_frame(grid, layout.judges, pairs, spec, weights, ci, n_boot, random_state)
    return out.rename(columns={"judge_a": "judge"}).drop(columns="judge_b")[columns]


def _fleiss_counts(grid: np.ndarray, k: int) -> tuple[np.ndarray, int]:
    """Items × categories counts over the items every judge labelled (statsmodels'
    ``aggregate_raters``, vectorised: it loops over items in Python) and the items left out."""
    labelled = grid >= 0
    complete = labelled.all(axis=1)
    n_dropped = int((labelled.any(axis=1) & ~complete).sum())
    sub = grid[complete]
    n = sub.shape[0]
    index = np.repeat(np.arange(n), sub.shape[1]) * k + sub.ravel()
    return np.bincount(index, minlength=n * k).reshape(n, k).astype(float), n_dropped


def _fleiss_value(table: np.ndarray, weights: np.ndarray | None = None) -> float:
    """Fleiss' κ of a (possibly item-weighted) count table; NaN when chance agreement is 1."""
    if table.shape[0] == 0:
        return math.nan
    w = np.ones(table.shape[0]) if weights is None else weights
    total = w.sum()
    if total <= 0:
        return math.nan
    r = table[0].sum()
    p_cat = (w @ table) / (total * r)
    if (p_cat > 0).sum() < 2:  # one category only: chance agreement 1, κ = 0/0
        return math.nan
    p_e = float(p_cat @ p_cat)
    if weights is None:
        return float(_sm_fleiss_kappa(table))
    p_item = ((table * table).sum(1) - r) / (r * (r - 1))
    return float((w @ p_item / total - p_e) / (1 - p_e))


def _fleiss_se(table: np.ndarray, kappa: float) -> float:
    r"""Gwet's (2008) linearised standard error of Fleiss' κ (every item rated by r judges).

    .. math::
        \kappa_i^* = \frac{p_{a|i} - p_e}{1 - p_e}
                     - 2(1 - \kappa)\frac{p_{e|i} - p_e}{1 - p_e},\qquad
        \widehat{V}(\kappa) = \frac{1}{n(n-1)}\sum_i (\kappa_i^* - \kappa)^2

    with :math:`p_{a|i} = \sum_k r_{ik}(r_{ik}-1)/(r(r-1))`, :math:`\pi_k = \sum_i r_{ik}/(nr)`,
    :math:`p_e = \sum_k \pi_k^2` and :math:`p_{e|i} = \sum_k \pi_k r_{ik}/r`. Hand-written
    because statsmodels gives no variance for Fleiss' κ; it is the formula of Gwet's R package
    irrCAC (``fleiss.kappa.raw``), which the tests reproduce on its published example.
    """
    n = table.shape[0]
    if n < 2 or not math.isfinite(kappa):
        return math.nan
    r = table[0].sum()
    p_cat = table.sum(0) / (n * r)
    p_e = float(p_cat @ p_cat)
    p_item = ((table * table).sum(1) - r) / (r * (r - 1))
    pe_item = table @ p_cat / r
    star = (p_item - p_e) / (1 - p_e) - 2 * (1 - kappa) * (pe_item - p_e) / (1 - p_e)
    return math.sqrt(((star - kappa) ** 2).sum() / (n * (n - 1)))


def fleiss_kappa(judged: pd.DataFrame, label: str, *, ci: Ci = "asymptotic",
                 n_boot: int = 1000, random_state: int = 0) -> Estimate:
    r"""Fleiss' κ over the items every LLM judge labelled.

    Parameters
    ----------
    judged : DataFrame
        A validated ``judged`` frame with at least two judges other than ``human`` (who is
        left out).
    label : str
        A categorical judged column; numbers raise (use :func:`krippendorff_alpha`).
    ci : {"asymptotic", "bootstrap", None}
        ``"asymptotic"`` (default): κ ± t₀.₉₇₅,ₙ₋₁ · SE with Gwet's (2008) linearised standard
        error (see :func:`_fleiss_se`), which, unlike the null-hypothesis variance of Fleiss,
        Nee & Landis (1979), holds when κ ≠ 0; the upper bound is capped at 1 as in irrCAC.
        ``"bootstrap"``: percentile interval over ``n_boot`` resamples of the items. Where
        either has no width (every judge agrees on every item: Gwet's SE is 0 and every
        resample gives κ = 1; 5 such items gave [1, 1]) it is the Wilson-type interval of
        :math:`\bar P` carried to κ's scale with chance agreement fixed
        (:func:`kbench_core.stats.agreement_wilson`). Unlike Cohen's κ it is not widened
        merely for few items: with r ≥ 3 judges :math:`\bar P` varies far less than a 0/1
        share, so the Wilson-type bound would be much too wide (15 items, 6 judges: 0.107
        against Gwet's 0.240); simulated near κ = 1 (0.9-0.97, 5-40 items, 3 or 6 judges)
        the result covers 0.88-1.0 (Gwet's alone 0.08-0.96).

    Returns
    -------
    Estimate
        ``value`` κ, ``low``/``high``, ``n`` the items used, ``n_dropped`` the items some but
        not every judge labelled (failed judgements).

    Notes
    -----
    With :math:`r_{ik}` the number of the r judges putting item i in category k,
    :math:`P_i = \sum_k r_{ik}(r_{ik}-1)/(r(r-1))`, :math:`p_k = \sum_i r_{ik}/(nr)`,
    :math:`\kappa = (\bar P - \sum_k p_k^2)/(1 - \sum_k p_k^2)` (statsmodels'
    ``fleiss_kappa``). NaN when every judgement falls in one category (chance agreement 1).

    References
    ----------
    Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters. *Psychological
    Bulletin* 76, 378–382. Gwet, K. L. (2008). Variance estimation of nominal-scale
    inter-rater reliability with random selection of raters. *Psychometrika* 73, 407–430.
    Gwet, K. L. (2014). *Handbook of Inter-Rater Reliability*, 4th ed., chapter 5.
    """
    check_choice("ci", ci, ("asymptotic", "bootstrap", None))
    _check_boot(n_boot, random_state)
    spec = _label(judged, label)
    _categorical(spec, "fleiss_kappa")
    layout = _layout(judged, human=False)
    _need_judges(layout, "fleiss_kappa")
    return _fleiss_estimate(layout, spec, ci, n_boot, random_state)


def _fleiss_estimate(layout: _Layout, spec: _Label, ci: Ci, n_boot: int,
                     random_state: int) -> Estimate:
    table, n_dropped = _fleiss_counts(_code_grid(layout, spec), len(spec.categories))
    kappa, low, high = _fleiss_interval(table, ci, n_boot, random_state)
    return Estimate(kappa, low, high, table.shape[0], n_dropped=n_dropped)


def _fleiss_interval(table: np.ndarray, ci: Ci, n_boot: int,
                     random_state: int) -> tuple[float, float, float]:
    """Fleiss' κ of an items × categories count table and its interval under ``ci``."""
    n = table.shape[0]
    kappa = _fleiss_value(table)
    low = high = math.nan
    if ci == "asymptotic" and n >= 2 and math.isfinite(kappa):
        se = _fleiss_se(table, kappa)
        half = float(_st.t.ppf(0.975, n - 1)) * se
        low, high = max(kappa - half, -1.0), min(kappa + half, 1.0)
    elif ci == "bootstrap" and n >= 1:
        # Items with the same counts are interchangeable: weight the distinct rows.
        patterns, inverse = np.unique(table, axis=0, return_inverse=True)
        inverse = inverse.ravel()

        def statistic(weights: np.ndarray) -> np.ndarray:
            per_pattern = np.bincount(inverse, weights=weights, minlength=len(patterns))
            return np.array([_fleiss_value(patterns, per_pattern)])

        lo, hi = bootstrap_groups(n, statistic, n_boot=n_boot, random_state=random_state)
        low, high = float(lo[0]), float(hi[0])
    if ci is not None and n >= 1 and math.isfinite(kappa):
        # No width (every judge agrees on every item: Gwet's SE is 0 and every resample
        # gives 1): the Wilson-type interval of P̄.
        r = table[0].sum()
        p_cat = table.sum(0) / (n * r)
        p_bar = float((((table * table).sum(1) - r) / (r * (r - 1))).mean())
        w_low, w_high = agreement_wilson(p_bar, float(p_cat @ p_cat), n)
        low, high = (float(v) for v in widen_small(low, high, w_low, w_high, n, few=0))
    return kappa, low, high
