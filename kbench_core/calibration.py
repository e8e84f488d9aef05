"""Calibration of stated confidence: reliability tables, ECE, MCE and the Brier score
(``docs/metrics/vuln.md``).

A detector states a confidence c ∈ [0, 1] and is right or wrong (``correct`` ∈ {0, 1}). The
confidences are cut into bins; per bin the mean confidence and the accuracy are compared:

.. math::
    \\mathrm{ECE} = \\sum_b \\frac{n_b}{N}\\,|\\mathrm{acc}_b - \\mathrm{conf}_b|,\\qquad
    \\mathrm{MCE} = \\max_{b:\\,n_b>0} |\\mathrm{acc}_b - \\mathrm{conf}_b|,\\qquad
    \\mathrm{Brier} = \\frac1N \\sum_i (c_i - y_i)^2

Bins are right-closed, ``(lo, hi]``, with 0 in the first bin. ``strategy="uniform"`` cuts [0, 1]
into ``n_bins`` equal widths (the seed's 10 fixed bins); ``strategy="quantile"`` puts the edges at
the percentiles of the confidences (linear interpolation), so every bin holds about the same
number of answers: the critique's remedy for confidences that crowd into 0.9–1.0. Both give
exactly scikit-learn's ``calibration_curve`` bins (tested).

Everything is computed for many groups at once (:func:`bin_calibration` takes a group code per
answer and optional integer weights), which is how :mod:`kbench_core.vuln` gets every model's ECE
in one pass and how the bootstrap reweights answers without copying them. Written by hand:
scikit-learn's ``calibration_curve`` handles one group, no weights, and no ECE.

References
----------
Naeini, Cooper & Hauskrecht (2015), "Obtaining well calibrated probabilities using Bayesian
binning", AAAI (ECE, MCE). Guo, Pleiss, Sun & Weinberger (2017), "On calibration of modern
neural networks", ICML (reliability diagrams). Brier (1950), Monthly Weather Review 78(1).
BlockBench metrics, tier 6 (``docs/metrics/vuln.md``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from kbench_core.stats import Clusters, Estimate, bootstrap_groups, wilson, wilson_effective

__all__ = ["Binned", "SortedAnswers", "Strategy", "bin_calibration", "bin_ids", "brier",
           "calibration_by", "ece", "ece_interval", "ece_l2_debiased", "group_codes", "mce",
           "mce_interval",
           "mce_interval_of", "quantile_edges", "reliability_by", "reliability_groups",
           "reliability_table", "sort_answers"]

Strategy = Literal["uniform", "quantile"]
STRATEGIES: tuple[str, ...] = ("uniform", "quantile")


def _check_options(n_bins: int, strategy: str) -> None:
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {', '.join(map(repr, STRATEGIES))}; "
                         f"got {strategy!r}")
    if isinstance(n_bins, bool) or not isinstance(n_bins, int | np.integer) or n_bins < 1:
        raise ValueError(f"n_bins must be a whole number >= 1; got {n_bins!r}")


@dataclass(frozen=True)
class SortedAnswers:
    """Answers sorted by (group, confidence), prepared once so that repeated binning (every
    bootstrap replicate) only reweights them: ``order`` is the permutation, ``group`` and
    ``confidence`` the sorted values, ``keys`` = group + i·confidence (exact lexicographic
    search keys), ``starts`` each group's first position."""

    order: np.ndarray
    group: np.ndarray
    confidence: np.ndarray
    keys: np.ndarray
    starts: np.ndarray
    sizes: np.ndarray


def sort_answers(group: np.ndarray, confidence: np.ndarray, n_groups: int,
                 order: np.ndarray | None = None) -> SortedAnswers:
    """:class:`SortedAnswers` of ``group`` codes (0..n_groups−1) and confidences."""
    group = np.asarray(group, dtype=np.int64)
    confidence = np.asarray(confidence, dtype=float)
    if order is None:
        order = np.lexsort((confidence, group))
    g, x = group[order], confidence[order]
    sizes = np.bincount(g, minlength=n_groups)
    return SortedAnswers(order=order, group=g, confidence=x, keys=g + 1j * x,
                         starts=np.concatenate(([0], np.cumsum(sizes)[:-1])), sizes=sizes)


def _as_sorted(group: np.ndarray, confidence: np.ndarray, n_groups: int,
               order: np.ndarray | SortedAnswers | None) -> SortedAnswers:
    return order if isinstance(order, SortedAnswers) else sort_answers(group, confidence,
                                                                       n_groups, order)


def quantile_edges(group: np.ndarray, confidence: np.ndarray, n_groups: int, n_bins: int, *,
                   weight: np.ndarray | None = None,
                   order: np.ndarray | SortedAnswers | None = None) -> np.ndarray:
    """Equal-mass bin edges per group: the ``n_bins + 1`` percentiles 0, 100/n_bins, ..., 100
    of each group's confidences, as ``numpy.percentile`` (method "linear") computes them.

    ``weight`` (non-negative whole numbers) repeats an answer that many times, as a bootstrap
    replicate does; ``order`` may pass ``numpy.lexsort((confidence, group))`` or
    :func:`sort_answers` when it is already known. Returns an array
    ``(n_groups, n_bins + 1)``, NaN for a group without answers.

    Notes
    -----
    With the group's confidences sorted, :math:`x_{(0)} \\le \\dots \\le x_{(N-1)}`, the edge at
    quantile q sits at virtual index h = (N − 1)q and is
    :math:`x_{(\\lfloor h\\rfloor)} + \\gamma\\,(x_{(\\lfloor h\\rfloor+1)} - x_{(\\lfloor h
    \\rfloor)})` with γ = h − ⌊h⌋ (computed from the upper end when γ ≥ 0.5, as numpy does, so
    the edges are bit-for-bit those of ``numpy.percentile``).
    """
    answers = _as_sorted(group, confidence, n_groups, order)
    g, x = answers.group, answers.confidence
    w = np.ones(x.size) if weight is None else np.asarray(weight, dtype=float)[answers.order]
    cum = np.cumsum(w)  # inclusive: expanded positions [cum - w, cum) belong to a row
    total = np.bincount(g, weights=w, minlength=n_groups)
    base = np.concatenate(([0.0], np.cumsum(total)[:-1]))
    q = np.linspace(0.0, 1.0, n_bins + 1) * 100 / 100  # numpy.percentile's q / 100
    h = (total[:, None] - 1) * q[None, :]
    prev = np.floor(h)
    gamma = h - prev
    last = total[:, None] - 1
    upper = np.minimum(prev + 1, last)
    hi_index = np.minimum(np.searchsorted(cum, base[:, None] + upper, side="right"), x.size - 1)
    lo_index = np.minimum(np.searchsorted(cum, base[:, None] + np.minimum(prev, last),
                                          side="right"), x.size - 1)
    if x.size == 0:
        return np.full((n_groups, n_bins + 1), np.nan)
    return _interpolated_edges(x, lo_index, hi_index, h, gamma, last, total)


def _interpolated_edges(x: np.ndarray, lo_index: np.ndarray, hi_index: np.ndarray,
                        h: np.ndarray, gamma: np.ndarray, last: np.ndarray,
                        total: np.ndarray) -> np.ndarray:
    """numpy.percentile's linear interpolation between the sorted answers at ``lo_index``
    and ``hi_index`` (:func:`quantile_edges`, Notes); NaN where ``total`` is 0. Shared with
    the bootstrap of :mod:`kbench_core.vuln`, which finds the indices of many replicates at
    once and must get the same edges."""
    a, b = x[lo_index], x[hi_index]
    diff = b - a
    edges = np.where(gamma >= 0.5, b - diff * (1 - gamma), a + diff * gamma)
    edges = np.where(h >= last, b, edges)  # numpy takes the last value at and beyond N - 1
    edges[total == 0] = np.nan
    return edges


def _quantile_bins(answers: SortedAnswers, edges: np.ndarray) -> np.ndarray:
    """Bin of each answer, #{inner edges of its group < c}, for every group at once.

    With the answers sorted by (group, confidence), each inner edge e of group g cuts the
    group at the position after its last answer ≤ e: a search for the complex key g + e·i in
    the sorted keys g + c·i (numpy orders complex numbers by real, then imaginary part, so
    the key is exact and cannot overflow). An answer's bin is the number of its group's cuts
    at or before its position, counted with one cumulative sum.
    """
    n, n_groups, n_inner = answers.group.size, edges.shape[0], edges.shape[1] - 2
    if n == 0 or n_inner <= 0:
        return np.zeros(n, dtype=np.int64)
    g_sorted, keys, starts = answers.group, answers.keys, answers.starts
    # A group whose answers all weigh 0 (a bootstrap replicate that drew none of its
    # samples) has NaN edges: its key g + NaN·i sorts after every key, and the cut would land
    # at the end of the array, one bin too far for the last group's last answer. Its answers
    # weigh nothing, so it is left uncut (bin 0).
    present = np.flatnonzero((answers.sizes > 0) & ~np.isnan(edges[:, 1:-1]).any(axis=1))
    inner = edges[present, 1:-1]
    cuts = np.searchsorted(keys, (present[:, None] + 1j * inner).ravel(), side="right")
    # Shift group g's positions by g so a cut at the end of one group (= start of the next)
    # is never counted for the next group's first answer.
    shift = np.repeat(present, n_inner)
    marks = np.bincount(cuts + shift, minlength=n + n_groups + 1)
    before = np.concatenate(([0], np.cumsum(marks)))  # before[i] = marks at positions < i
    position = np.arange(n) + g_sorted
    group_start = starts[g_sorted] + g_sorted
    ids_sorted = before[position + 1] - before[group_start]
    ids = np.empty(n, dtype=np.int64)
    ids[answers.order] = ids_sorted
    return ids


@dataclass(frozen=True)
class Binned:
    """Confidences and outcomes binned per group: arrays of shape ``(n_groups, n_bins)``.

    ``count`` holds the (weighted) number of answers per bin, ``confidence_sum`` and
    ``correct_sum`` their sums; ``edges`` has shape ``(n_groups, n_bins + 1)``.
    """

    edges: np.ndarray
    count: np.ndarray
    confidence_sum: np.ndarray
    correct_sum: np.ndarray

    @property
    def n(self) -> np.ndarray:
        return self.count.sum(axis=1)

    def ece(self) -> np.ndarray:
        """Σ_b (n_b/N)|acc_b − conf_b| = Σ_b |Σ correct − Σ conf| / N per group; NaN when the
        group has no answer."""
        n = self.n
        with np.errstate(invalid="ignore", divide="ignore"):
            value = np.abs(self.correct_sum - self.confidence_sum).sum(axis=1) / n
        return np.where(n > 0, value, np.nan)

    def ece_l2_debiased(self) -> np.ndarray:
        r"""Kumar, Liang & Ma's (2019) debiased estimate of the root-mean-square (ℓ2)
        calibration error, per group, as a signed root (see :func:`ece_l2_debiased`)."""
        n = self.n
        with np.errstate(invalid="ignore", divide="ignore"):
            accuracy = self.correct_sum / self.count
            gap = accuracy - self.confidence_sum / self.count
            term = gap * gap - accuracy * (1 - accuracy) / (self.count - 1)
            squared = np.where(self.count >= 2, self.count * term, 0.0).sum(axis=1) / n
        squared = np.where(n > 0, squared, np.nan)
        return np.sign(squared) * np.sqrt(np.abs(squared))

    def gaps(self) -> np.ndarray:
        """|acc_b − conf_b| per bin, NaN for an empty bin."""
        with np.errstate(invalid="ignore", divide="ignore"):
            gap = np.abs(self.correct_sum - self.confidence_sum) / self.count
        return np.where(self.count > 0, gap, np.nan)

    def mce(self) -> np.ndarray:
        """The largest |acc_b − conf_b| over non-empty bins; NaN when the group is empty."""
        gap = self.gaps()
        filled = (self.count > 0).any(axis=1)
        out = np.full(gap.shape[0], np.nan)
        out[filled] = np.nanmax(gap[filled], axis=1)
        return out


def bin_ids(group: np.ndarray, confidence: np.ndarray, *, n_groups: int, n_bins: int = 10,
            strategy: Strategy = "uniform", weight: np.ndarray | None = None,
            order: np.ndarray | SortedAnswers | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(edges ``(n_groups, n_bins + 1)``, each answer's bin) as :func:`bin_calibration`
    cuts them: the bins the answers of a cluster fall in, for per-bin design effects."""
    group = np.asarray(group, dtype=np.int64)
    confidence = np.asarray(confidence, dtype=float)
    if strategy == "uniform":
        uniform = np.linspace(0.0, 1.0, n_bins + 1)
        return (np.broadcast_to(uniform, (n_groups, n_bins + 1)),
                np.searchsorted(uniform[1:-1], confidence, side="left"))
    answers = _as_sorted(group, confidence, n_groups, order)
    edges = quantile_edges(group, confidence, n_groups, n_bins, weight=weight, order=answers)
    return edges, _quantile_bins(answers, edges)


def mce_interval(binned: Binned, *, deff: np.ndarray | None = None,
                 boundary_n: np.ndarray | None = None,
                 level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    r"""Simultaneous interval of the maximum calibration error, per group.

    Each non-empty bin's accuracy gets a Wilson interval at level 1 − α/B (Bonferroni over
    the group's B non-empty bins, α = 1 − ``level``), so all B hold at once with probability
    at least ``level``. Where they do, each bin's true gap |p_b − conf_b| (conf_b the bin's
    mean stated confidence, which is known) lies in

    .. math:: igl[\operatorname{dist}(\mathrm{conf}_b, [L_b, U_b]),\;
              \max(|L_b - \mathrm{conf}_b|, |U_b - \mathrm{conf}_b|)igr]

    and the MCE, the largest gap, in [max_b lower_b, max_b upper_b], which holds the plug-in
    MCE (Wilson's interval holds acc_b). The percentile bootstrap of the plug-in max never
    covered: every replicate adds noise to the largest gap, so at a true MCE of 0 all lie
    above 0 (0 of 100 simulated detectors of 500 answers covered; a true 0.10, 30 of 100).
    Bonferroni rather than Šidák: the bins of answers clustered by contract are not
    independent, and Šidák's level would narrow each bin by under 1 %. ``deff`` and
    ``boundary_n`` ``(groups, bins)`` make each bin's Wilson interval clustered (on its
    effective n, :func:`kbench_core.stats.wilson_effective`). NaN for a group without
    answers. Written by hand (no library gives simultaneous bin intervals).

    References
    ----------
    Wilson (1927), JASA 22, 209–212; Bonferroni's inequality (Dunn 1961, JASA 56, 52–64);
    Naeini, Cooper & Hauskrecht (2015), AAAI (MCE). ``docs/statistics.md``, round 3 item 3.
    """
    filled, lower, upper = _gap_bounds(binned, deff, boundary_n, level)
    lower, upper = np.where(filled, lower, -np.inf), np.where(filled, upper, -np.inf)
    some = filled.any(axis=1)
    return (np.where(some, lower.max(axis=1, initial=-np.inf), np.nan),
            np.where(some, upper.max(axis=1, initial=-np.inf), np.nan))


def _gap_bounds(binned: Binned, deff: np.ndarray | None, boundary_n: np.ndarray | None,
                level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(filled, lower, upper) per group × bin: the bounds of each bin's true gap over its
    Wilson interval at the Bonferroni level 1 − α/B (:func:`mce_interval`)."""
    count = binned.count
    filled = count > 0
    per_level = 1 - (1 - level) / np.maximum(filled.sum(axis=1), 1)
    levels = np.broadcast_to(per_level[:, None], count.shape)
    low_b, high_b = wilson_effective(binned.correct_sum, count,
                                     np.ones(count.shape) if deff is None else deff,
                                     count if boundary_n is None else boundary_n,
                                     level=levels)
    with np.errstate(invalid="ignore", divide="ignore"):
        conf = binned.confidence_sum / count
    lower = np.maximum(np.maximum(low_b - conf, conf - high_b), 0.0)
    upper = np.maximum(high_b - conf, conf - low_b)
    return filled, lower, upper


def ece_interval(binned: Binned, *, deff: np.ndarray | None = None,
                 boundary_n: np.ndarray | None = None,
                 level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Simultaneous interval of the (ℓ1) expected calibration error Σ_b (n_b/N)|p_b −
    conf_b|, per group: the bins' gap bounds of :func:`mce_interval` (Wilson per bin,
    Bonferroni over the bins) weighted by the bins' shares, [Σ (n_b/N) lower_b, Σ (n_b/N)
    upper_b]. Where every bin's interval holds (probability ≥ ``level``) the ECE of these
    bins lies inside, at 0 as elsewhere; it holds the plug-in ECE. The percentile bootstrap
    of the plug-in never covered a calibrated detector (``docs/statistics.md``, round 2 item
    10, round 3 item 5); this one is conservative (it bounds every bin at once) and wide:
    about [0, 0.19] for a calibrated detector with 500 answers in 10 bins. NaN for a group
    without answers. Written by hand (as :func:`mce_interval`)."""
    filled, lower, upper = _gap_bounds(binned, deff, boundary_n, level)
    n = binned.count.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = binned.count / n[:, None]
        low = np.where(filled, share * lower, 0.0).sum(axis=1)
        high = np.where(filled, share * upper, 0.0).sum(axis=1)
    some = filled.any(axis=1)
    return np.where(some, low, np.nan), np.where(some, np.minimum(high, 1.0), np.nan)


def mce_interval_of(group: np.ndarray, confidence: np.ndarray, correct: np.ndarray,
                    cluster: np.ndarray | None, *, n_groups: int, n_bins: int = 10,
                    strategy: Strategy = "uniform",
                    order: np.ndarray | SortedAnswers | None = None,
                    level: float = 0.95, which: str = "mce") -> tuple[np.ndarray, np.ndarray]:
    """:func:`mce_interval` (``which="mce"``) or :func:`ece_interval` (``"ece"``) of every
    group's answers, each bin's interval clustered by ``cluster`` (an integer code per
    answer: the contract a prompt type's answer belongs to; None: independent answers)
    through the jackknife design effect of :class:`kbench_core.stats.Clusters` over the
    (group, bin) cells."""
    interval = {"mce": mce_interval, "ece": ece_interval}[which]
    group = np.asarray(group, dtype=np.int64)
    binned = bin_calibration(group, confidence, correct, n_groups=n_groups, n_bins=n_bins,
                             strategy=strategy, order=order)
    if cluster is None:
        return interval(binned, level=level)
    _, ids = bin_ids(group, confidence, n_groups=n_groups, n_bins=n_bins,
                     strategy=strategy, order=order)
    cluster = np.asarray(cluster, dtype=np.int64)
    cells = Clusters.of(group * n_bins + ids, cluster, int(cluster.max(initial=-1)) + 1,
                        n_groups * n_bins)
    y_c = cells.per_cell(np.asarray(correct, dtype=float))
    n_c = cells.per_cell(np.ones(group.size))
    _, _, deff = cells.deff(y_c, n_c)
    shape = (n_groups, n_bins)
    return interval(binned, deff=deff.reshape(shape),
                    boundary_n=cells.boundary_n(n_c).reshape(shape), level=level)


def bin_calibration(group: np.ndarray, confidence: np.ndarray, correct: np.ndarray, *,
                    n_groups: int, n_bins: int = 10, strategy: Strategy = "uniform",
                    weight: np.ndarray | None = None,
                    order: np.ndarray | SortedAnswers | None = None) -> Binned:
    """Bin every group's answers at once (the engine behind every function here).

    ``group`` holds integer codes 0..n_groups−1; ``confidence`` in [0, 1] and ``correct``
    (0/1) have no NaN (the callers drop incomplete pairs). ``weight`` gives each answer a
    multiplicity (bootstrap). An answer goes to bin k when edge_k < c ≤ edge_{k+1}, the first
    bin also taking c = edge_0 (``numpy.searchsorted(inner_edges, c, side="left")``, as
    scikit-learn does).
    """
    _check_options(n_bins, strategy)
    group = np.asarray(group, dtype=np.int64)
    confidence = np.asarray(confidence, dtype=float)
    correct = np.asarray(correct, dtype=float)
    edges, ids = bin_ids(group, confidence, n_groups=n_groups, n_bins=n_bins,
                         strategy=strategy, weight=weight, order=order)
    cell = group * n_bins + ids
    size = n_groups * n_bins
    w = None if weight is None else np.asarray(weight, dtype=float)
    count = np.bincount(cell, weights=w, minlength=size)
    conf_sum = np.bincount(cell, weights=confidence if w is None else confidence * w,
                           minlength=size)
    correct_sum = np.bincount(cell, weights=correct if w is None else correct * w,
                              minlength=size)
    shape = (n_groups, n_bins)
    return Binned(np.asarray(edges), count.reshape(shape).astype(float),
                  conf_sum.reshape(shape), correct_sum.reshape(shape))


# ------------------------------------------------------------------------- public, one group


def _as_float(values: object, name: str) -> np.ndarray:
    """A flat float array, missing values (None, NaN, pandas NA) as NaN."""
    if isinstance(values, pd.Series | pd.Index | pd.api.extensions.ExtensionArray):
        series = pd.Series(values)
    else:
        series = pd.Series(np.asarray(values).ravel())
    try:
        return series.astype("Float64").to_numpy(dtype=float, na_value=np.nan)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must hold numbers (or true/false); got "
                         f"{series.dropna().iloc[0]!r}") from None


def _pairs(confidence: object, correct: object,
           items: object | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, int]:
    """Complete (confidence, correct[, item]) pairs as arrays, and how many were dropped."""
    conf = _as_float(confidence, "confidence")
    corr = _as_float(correct, "correct")
    if conf.shape != corr.shape:
        raise ValueError(f"confidence and correct differ in length ({conf.size} and "
                         f"{corr.size})")
    keep = ~np.isnan(conf) & ~np.isnan(corr)
    bad_conf = keep & ((conf < 0) | (conf > 1))
    if bad_conf.any():
        raise ValueError(f"confidence must lie in [0, 1]; got {float(conf[bad_conf][0])!r}")
    bad_corr = keep & ~np.isin(corr, (0.0, 1.0))
    if bad_corr.any():
        raise ValueError(f"correct must be 0/1 or true/false; got {float(corr[bad_corr][0])!r}")
    codes = None
    if items is not None:
        labels = np.asarray(items, dtype=object).ravel()
        if labels.size != conf.size:
            raise ValueError(f"items has {labels.size} entries for {conf.size} answers")
        codes = pd.factorize(labels[keep])[0].astype(np.int64)
    return conf[keep], corr[keep], codes, int((~keep).sum())


def reliability_table(confidence: object, correct: object, *, n_bins: int = 10,
                      strategy: Strategy = "uniform") -> pd.DataFrame:
    """One row per non-empty bin: ``bin lo hi count mean_confidence accuracy accuracy_low
    accuracy_high gap``.

    Parameters
    ----------
    confidence : array-like of float in [0, 1]
        Stated confidence per answer; NaN pairs are left out.
    correct : array-like of bool or 0/1
        Whether the answer was right.
    n_bins : int
        Number of bins (default 10, the seed's).
    strategy : {"uniform", "quantile"}
        Equal-width bins on [0, 1], or equal-mass bins with edges at the percentiles of the
        confidences; the same bins as ``sklearn.calibration.calibration_curve``.

    Returns
    -------
    pandas.DataFrame
        ``bin`` (0-based), ``lo``/``hi`` the bin's edges (right-closed, 0 in the first),
        ``count``, ``mean_confidence``, ``accuracy`` with its Wilson 95% interval, and
        ``gap`` = mean_confidence − accuracy (positive: overconfident).

    Examples
    --------
    >>> reliability_table([0.2, 0.9, 0.9, 0.95], [0, 1, 0, 1], n_bins=2)[
    ...     ["lo", "hi", "count", "accuracy"]].to_dict("list")
    {'lo': [0.0, 0.5], 'hi': [0.5, 1.0], 'count': [1, 3], 'accuracy': [0.0, 0.6666666666666666]}
    """
    _check_options(n_bins, strategy)
    conf, corr, _, _ = _pairs(confidence, correct)
    binned = bin_calibration(np.zeros(conf.size, dtype=np.int64), conf, corr, n_groups=1,
                             n_bins=n_bins, strategy=strategy)
    return _table(binned, 0)


def _table(binned: Binned, g: int) -> pd.DataFrame:
    count = binned.count[g]
    filled = np.flatnonzero(count > 0)
    n = count[filled]
    accuracy = binned.correct_sum[g, filled] / n
    mean_conf = binned.confidence_sum[g, filled] / n
    low, high = wilson(binned.correct_sum[g, filled], n)
    return pd.DataFrame({
        "bin": filled.astype(np.int64), "lo": binned.edges[g, filled],
        "hi": binned.edges[g, filled + 1], "count": n.astype(np.int64),
        "mean_confidence": mean_conf, "accuracy": accuracy, "accuracy_low": low,
        "accuracy_high": high, "gap": mean_conf - accuracy,
    })


def _estimate(statistic: Callable[[np.ndarray | None], float], n: int, n_items: int,
              n_dropped: int, codes: np.ndarray | None, ci: str | None, n_boot: int,
              random_state: int, level: float) -> Estimate:
    value = float(statistic(None))
    low = high = np.nan
    if ci == "bootstrap" and n > 0:
        def replicate(counts: np.ndarray) -> np.ndarray:
            weight = counts if codes is None else counts[codes]
            return np.array([statistic(weight)])
        lo, hi = bootstrap_groups(n_items, replicate, n_boot=n_boot, random_state=random_state,
                                  level=level)
        low, high = float(lo[0]), float(hi[0])
    return Estimate(value, low, high, n, n_dropped=n_dropped)


def _check_ci(ci: object) -> None:
    if ci not in (None, "bootstrap"):
        raise ValueError(f"ci must be None or 'bootstrap'; got {ci!r}")


def _binned_statistic(which: str, confidence: object, correct: object, *, n_bins: int,
                      strategy: Strategy, items: object | None, ci: str | None, n_boot: int,
                      random_state: int, level: float) -> Estimate:
    _check_options(n_bins, strategy)
    _check_ci(ci)
    conf, corr, codes, dropped = _pairs(confidence, correct, items)
    group = np.zeros(conf.size, dtype=np.int64)
    order = sort_answers(group, conf, 1) if strategy == "quantile" else None

    def statistic(weight: np.ndarray | None) -> float:
        if conf.size == 0:
            return np.nan
        binned = bin_calibration(group, conf, corr, n_groups=1, n_bins=n_bins,
                                 strategy=strategy, weight=weight, order=order)
        return float(getattr(binned, which)()[0])

    n_items = conf.size if codes is None else int(codes.max(initial=-1)) + 1
    return _estimate(statistic, conf.size, n_items, dropped, codes, ci, n_boot, random_state,
                     level)


def ece(confidence: object, correct: object, *, n_bins: int = 10,
        strategy: Strategy = "uniform", items: object | None = None,
        ci: Literal["bootstrap"] | None = None, n_boot: int = 1000,
        random_state: int = 0, level: float = 0.95) -> Estimate:
    """Expected calibration error, Σ_b (n_b/N)|acc_b − conf_b| (the plug-in estimate, as
    BlockBench computes it). It is biased upward: noise alone makes it positive, about 0.03
    for a calibrated detector with 500 answers in 10 bins, and its bootstrap interval does
    not cover a calibrated detector's 0; :func:`ece_l2_debiased` is the debiased measure.

    By default there is no interval (low = high = NaN); ``ci="bootstrap"`` (the option the
    calibration statistics share) adds the **simultaneous** interval of
    :func:`ece_interval` (Wilson per bin with Bonferroni over the bins, the bins' gap bounds
    weighted by their shares), not a bootstrap: the percentile bootstrap of the plug-in
    never covered a calibrated detector (``n_boot`` and ``random_state`` are unused; the
    bootstrap stays for :func:`ece_l2_debiased` and :func:`brier`). With ``items`` (one label
    per answer: answers sharing a label, e.g. the prompt types of one contract) each bin's
    interval is clustered by item. ``n`` counts the complete pairs, ``n_dropped`` the pairs
    with a missing value. No pair gives NaN.

    Examples
    --------
    >>> round(float(ece([0.9, 0.9, 0.6, 0.6], [1, 0, 1, 1])), 3)
    0.4
    """
    return _simultaneous("ece", confidence, correct, n_bins=n_bins, strategy=strategy,
                         items=items, ci=ci, level=level)


def ece_l2_debiased(confidence: object, correct: object, *, n_bins: int = 10,
                    strategy: Strategy = "uniform", items: object | None = None,
                    ci: Literal["bootstrap"] | None = None, n_boot: int = 1000,
                    random_state: int = 0, level: float = 0.95) -> Estimate:
    r"""The debiased ℓ2 (root-mean-square) calibration error of Kumar, Liang & Ma (2019),
    beside :func:`ece`, which is biased upward.

    The plug-in ECE adds every bin's sampling noise to its gap: a perfectly calibrated
    detector shows ECE ≈ Σ_b (n_b/N)·√(2·acc_b(1 − acc_b)/(π n_b)) > 0 (about 0.03 with 500
    answers in 10 bins), and its bootstrap interval, which resamples the noise again, lies
    above 0 (it covered a calibrated detector in 0 of 200 simulated runs). The squared ℓ2
    error has an unbiased estimate: per bin with n_b ≥ 2 answers

    .. math:: \widehat{E^2} = \sum_b rac{n_b}{N}\Bigl[(\mathrm{acc}_b - \mathrm{conf}_b)^2
              - rac{\mathrm{acc}_b(1 - \mathrm{acc}_b)}{n_b - 1}\Bigr]

    (``unbiased_square_ce`` of their ``calibration`` library; bins with one answer add 0),
    whose expectation is Σ_b (n_b/N)(p_b − conf_b)², 0 for a calibrated detector. It can be
    negative (the gaps are smaller than noise alone would make them), so the value reported
    is its signed square root, sign(Ê²)·√|Ê²|, on the scale of the ECE: equal to the ECE
    when every bin's gap has the same size, and at least the ECE's population value
    otherwise (ℓ2 ≥ ℓ1). ``ci="bootstrap"`` gives the percentile interval of the replicates'
    own debiased values (``n_boot``, ``random_state``, answers or ``items`` resampled), the
    signed root of an interval for E²: it covered a calibrated detector in 96% of simulated
    runs (500 answers) and a miscalibrated one (gap 0.03 or 0.1) in 95–97%
    (``tests/test_calibration.py``). Written by hand (the authors' library handles one
    group and no weights); options as :func:`ece`.

    References
    ----------
    Kumar, Liang & Ma (2019), "Verified uncertainty calibration", NeurIPS, §5 (the debiased
    estimator). ``docs/statistics.md``, "Round 2 (issue 23): vulnerability tiers".

    Examples
    --------
    One bin of four answers at 0.9, three right: gap 0.75 − 0.9, so Ê² = 0.15² −
    0.75·0.25/3 = −0.04 (within noise of calibrated), reported as −√0.04:

    >>> round(float(ece_l2_debiased([0.9, 0.9, 0.9, 0.9], [1, 1, 1, 0], n_bins=2)), 4)
    -0.2
    """
    return _binned_statistic("ece_l2_debiased", confidence, correct, n_bins=n_bins,
                             strategy=strategy, items=items, ci=ci, n_boot=n_boot,
                             random_state=random_state, level=level)


def mce(confidence: object, correct: object, *, n_bins: int = 10,
        strategy: Strategy = "uniform", items: object | None = None,
        ci: Literal["bootstrap"] | None = None, n_boot: int = 1000,
        random_state: int = 0, level: float = 0.95) -> Estimate:
    """Maximum calibration error, the largest |acc_b − conf_b| over non-empty bins (the
    plug-in, as BlockBench computes it); its interval only on request (``ci="bootstrap"``,
    the option :func:`ece` and :func:`brier` share), and then the **simultaneous** interval
    of :func:`mce_interval` (Wilson per bin with Bonferroni over the bins, then the max), not
    a bootstrap: a percentile bootstrap of the plug-in max never covers a small true MCE
    (``n_boot`` and ``random_state`` are unused). With ``items`` each bin's interval is
    clustered by item (answers sharing a label, e.g. a contract's prompt types;
    :func:`mce_interval_of`). It covered a calibrated detector (MCE 0) in 95–96 % and an MCE
    of 0.10 in 97 % of 300 simulated runs of 500 answers in 10 bins (the bootstrap: 0 % and
    30 %; ``docs/statistics.md``, round 3 item 3; ``tests/test_stats_round3.py``).

    Examples
    --------
    >>> est = mce([0.9] * 10, [1] * 9 + [0], n_bins=2, ci="bootstrap")
    >>> round(float(est), 3), round(est.low, 3), round(est.high, 3)
    (0.0, 0.0, 0.304)
    """
    return _simultaneous("mce", confidence, correct, n_bins=n_bins, strategy=strategy,
                         items=items, ci=ci, level=level)


def _simultaneous(which: str, confidence: object, correct: object, *, n_bins: int,
                  strategy: Strategy, items: object | None, ci: str | None,
                  level: float) -> Estimate:
    """ECE or MCE of one group with, on request, its simultaneous interval
    (:func:`mce_interval_of`)."""
    _check_options(n_bins, strategy)
    _check_ci(ci)
    conf, corr, codes, dropped = _pairs(confidence, correct, items)
    group = np.zeros(conf.size, dtype=np.int64)
    if conf.size == 0:
        return Estimate(np.nan, np.nan, np.nan, 0, n_dropped=dropped)
    binned = bin_calibration(group, conf, corr, n_groups=1, n_bins=n_bins, strategy=strategy)
    value = float(getattr(binned, which)()[0])
    low = high = np.nan
    if ci == "bootstrap":
        lo, hi = mce_interval_of(group, conf, corr, codes, n_groups=1, n_bins=n_bins,
                                 strategy=strategy, level=level, which=which)
        low, high = float(lo[0]), float(hi[0])
    return Estimate(value, low, high, conf.size, n_dropped=dropped)


def brier(confidence: object, correct: object, *, items: object | None = None,
          ci: Literal["bootstrap"] | None = None, n_boot: int = 1000,
          random_state: int = 0, level: float = 0.95) -> Estimate:
    """Brier score, mean((c − y)²); its bootstrap interval only with ``ci="bootstrap"``
    (options as :func:`ece`).

    Examples
    --------
    >>> float(brier([1.0, 0.5], [1, 0]))
    0.125
    """
    _check_ci(ci)
    conf, corr, codes, dropped = _pairs(confidence, correct, items)
    squared = (conf - corr) ** 2

    def statistic(weight: np.ndarray | None) -> float:
        if conf.size == 0:
            return np.nan
        if weight is None:
            return float(squared.mean())
        total = weight.sum()
        return float((squared * weight).sum() / total) if total else np.nan

    n_items = conf.size if codes is None else int(codes.max(initial=-1)) + 1
    return _estimate(statistic, conf.size, n_items, dropped, codes, ci, n_boot, random_state,
                     level)


# ------------------------------------------------------------------------ public, per group


def group_codes(frame: pd.DataFrame, by: str | tuple[str, ...] | list[str], *,
                also: tuple[str, ...] = ()) -> tuple[np.ndarray, pd.DataFrame]:
    """A dense group code per row of ``frame`` and the table of group keys (one row per code,
    in the sorted order of the keys; missing keys form their own group). A ``ValueError``
    names any ``by`` (or ``also``) column ``frame`` lacks."""
    by = [by] if isinstance(by, str) else list(by)
    missing = [name for name in (*by, *also) if name not in frame]
    if missing:
        raise ValueError(f"no column {', '.join(map(repr, missing))} to group by; columns: "
                         f"{', '.join(map(str, frame.columns))}")
    if not by:
        return np.zeros(len(frame), dtype=np.int64), pd.DataFrame(index=range(1))
    grouped = frame.groupby(by, sort=True, observed=True, dropna=False)
    codes = grouped.ngroup().to_numpy(dtype=np.int64)
    keys = grouped[by[0]].size().index.to_frame(index=False)
    return codes, keys


def reliability_groups(group: np.ndarray, keys: pd.DataFrame, confidence: np.ndarray,
                       correct: np.ndarray, *, n_bins: int = 10,
                       strategy: Strategy = "uniform") -> pd.DataFrame:
    """:func:`reliability_by` on answers already coded by group (``group[i]`` indexes a row
    of ``keys``; complete answers only): the shared step of every family's reliability
    diagrams (``kbench_core.vuln.reliability`` gives its own group codes)."""
    _check_options(n_bins, strategy)
    binned = bin_calibration(np.asarray(group, dtype=np.int64),
                             np.asarray(confidence, dtype=float),
                             np.asarray(correct, dtype=float), n_groups=len(keys),
                             n_bins=n_bins, strategy=strategy)
    g, bins = np.nonzero(binned.count > 0)
    n = binned.count[g, bins]
    accuracy = binned.correct_sum[g, bins] / n
    mean_conf = binned.confidence_sum[g, bins] / n
    low, high = wilson(binned.correct_sum[g, bins], n)
    table = keys.iloc[g].reset_index(drop=True)
    extra = pd.DataFrame({
        "bin": bins.astype(np.int64), "lo": binned.edges[g, bins],
        "hi": binned.edges[g, bins + 1], "count": n.astype(np.int64),
        "mean_confidence": mean_conf, "accuracy": accuracy, "accuracy_low": low,
        "accuracy_high": high, "gap": mean_conf - accuracy,
        "ece": binned.ece()[g], "ece_l2_debiased": binned.ece_l2_debiased()[g],
        "mce": binned.mce()[g], "n": binned.n[g].astype(np.int64)})
    return pd.concat([table, extra], axis=1)


def _complete(frame: pd.DataFrame, by: str | tuple[str, ...] | list[str], confidence: str,
              correct: str) -> tuple[np.ndarray, pd.DataFrame, np.ndarray, np.ndarray]:
    codes, keys = group_codes(frame, by, also=(confidence, correct))
    conf, corr, _, _ = _pairs(frame[confidence], frame[correct])  # checked, complete pairs
    keep = ~np.isnan(_as_float(frame[confidence], "")) & ~np.isnan(_as_float(frame[correct], ""))
    return codes[keep], keys, conf, corr


def reliability_by(frame: pd.DataFrame, by: str | tuple[str, ...] | list[str], *,
                   confidence: str = "confidence", correct: str = "correct",
                   n_bins: int = 10, strategy: Strategy = "uniform") -> pd.DataFrame:
    """Reliability tables of every group at once, for reliability diagrams: one row per
    group × non-empty bin with the ``by`` columns, the columns of :func:`reliability_table`
    (accuracy with its Wilson 95% interval) and the group's ``ece``, ``ece_l2_debiased``,
    ``mce`` and ``n`` (answers with both a confidence and an outcome; the others are left
    out). ``frame`` is tidy: one row per answer, ``confidence`` in [0, 1], ``correct`` 0/1
    or true/false. Any family with stated confidences uses this (bins and estimators as
    :func:`ece`, :func:`ece_l2_debiased`, :func:`mce`)."""
    codes, keys, conf, corr = _complete(frame, by, confidence, correct)
    return reliability_groups(codes, keys, conf, corr, n_bins=n_bins, strategy=strategy)


def calibration_by(frame: pd.DataFrame, by: str | tuple[str, ...] | list[str], *,
                   confidence: str = "confidence", correct: str = "correct",
                   n_bins: int = 10, strategy: Strategy = "uniform",
                   level: float = 0.95, name: str = "accuracy") -> pd.DataFrame:
    """One row per group: the ``by`` columns, ``n`` (complete answers), ``mean_confidence``,
    the share right ``<name>`` (default ``accuracy``) with its Wilson interval
    (``<name>_low``/``<name>_high``, ``level``: the shared helpers' one convention),
    ``ece``, ``ece_l2_debiased``, ``mce`` and ``brier`` — each the value :func:`ece`,
    :func:`ece_l2_debiased`, :func:`mce` and :func:`brier` give for that group's answers
    alone, computed for every group in one pass. ECE, MCE and Brier have no standard analytic
    interval (their bootstrap is :func:`ece`'s ``ci="bootstrap"``, per group)."""
    codes, keys, conf, corr = _complete(frame, by, confidence, correct)
    _check_options(n_bins, strategy)
    binned = bin_calibration(codes, conf, corr, n_groups=len(keys), n_bins=n_bins,
                             strategy=strategy)
    n = np.bincount(codes, minlength=len(keys)).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        right = np.bincount(codes, weights=corr, minlength=len(keys))
        mean_conf = np.bincount(codes, weights=conf, minlength=len(keys)) / n
        brier_score = np.bincount(codes, weights=(conf - corr) ** 2, minlength=len(keys)) / n
        accuracy = right / n
    low, high = wilson(right, n, level=level)
    empty = n == 0
    out = keys.copy()
    out["n"] = n.astype(np.int64)
    out["mean_confidence"] = mean_conf
    out[name] = accuracy
    out[f"{name}_low"], out[f"{name}_high"] = low, high
    out["ece"] = np.where(empty, np.nan, binned.ece())
    out["ece_l2_debiased"] = np.where(empty, np.nan, binned.ece_l2_debiased())
    out["mce"] = np.where(empty, np.nan, binned.mce())
    out["brier"] = brier_score
    return out
