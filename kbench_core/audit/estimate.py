r"""What a reviewer's labels say about the judge and the metrics (``docs/metrics/audit.md``):
each judge's accuracy against the reviewer (:func:`judge_accuracy`), every group's rate
corrected for the judge's errors (:func:`corrected`) and the labels a target interval needs
(:func:`labels_needed`).

The corrected rate
------------------
For a group (a detector model) of :math:`N` items, the judge decides :math:`\hat Y_i \in
\{0, 1\}` on every item and the reviewer labels a sample, :math:`Y_i` (the mean of the
reviewers' labels when several labelled it). Split the items into cells :math:`h` by the
judge's decision (a failed judgement counts as "not found": the judge credits nothing it
failed on; its labels keep their own stratum's weight; the judge-only rate leaves it out), with
:math:`N_h` items of which :math:`n_h` are labelled; :math:`W_h = N_h / N`. The estimate is

.. math:: \hat\theta = \sum_h W_h \bar Y_h,

the share of each decision the reviewer confirms, weighted by how often the judge made it
(:math:`\bar Y_h` the cell's labels averaged with their design weights :math:`N_s / n_s` of
the sample's strata :math:`s`: failed judgements are a stratum of their own, and labels drawn
with one judge's decisions may correct another's rate):
prediction-powered inference (Angelopoulos et al. 2023, *Science* 382; PPI++, Angelopoulos,
Duchi & Zrnic 2023, arXiv:2311.01453) with the stratified sample's inverse-probability weights
:math:`w_i = N_h / n_h`. Because :math:`\hat Y` is constant within a cell, the PPI++ estimate
:math:`\lambda \bar{\hat Y}_N + \frac1N\sum_{i\,\mathrm{labelled}} w_i (Y_i - \lambda\hat Y_i)`
is the same number for every power-tuning :math:`\lambda`: it is the post-stratified estimator
(Särndal, Swensson & Wretman 1992, *Model Assisted Survey Sampling*, §7.6), and no tuning is
needed.

Its variance, for the rate the run's contracts stand for (every interval kbench prints is about
that rate, clustered by contract), is that of its linearisation (ibid. §9.7, two-phase
sampling)

.. math:: u_i = (\bar Y_{h(i)} - \hat\theta) + R_i w_i (Y_i - \bar Y_{h(i)}),

summed per contract :math:`c` and taken cluster-robustly, :math:`\hat V = \frac{G}{G-1}
\sum_c U_c^2 / N^2` over the :math:`G` contracts. Two guards keep it honest with few labels:
the within-cell part of each cell is at least Agresti & Coull's (1998)
:math:`\tilde p(1-\tilde p)/(n_h + z^2)`, :math:`\tilde p = (n_h \bar Y_h + z^2/2)/(n_h + z^2)`
(0 disagreements in 15 checks does not make a judge perfect: Wilson's interval for 0 of 15
reaches 0.20), and the interval is :math:`\hat\theta \pm t_{d}\sqrt{\hat V}`, clipped to
[0, 1], with :math:`d = \min(G - 1, n - H)` degrees of freedom (:math:`n` labels in
:math:`H` cells).

``method="difference"`` is the classic difference (PPI, λ = 1) estimator
:math:`\bar{\hat Y}_N + \sum w_i(Y_i - \hat Y_i)/\sum w_i` with the labels' own design weights
(the sample's cells): PPI's own interval, which treats the judge's decisions and the
residuals as independent parts.
``method="rogan_gladen"`` corrects the judge-only rate with the judge's sensitivity and
specificity (Rogan & Gladen 1978, *Am J Epidemiol* 107), :math:`(p + \mathrm{sp} - 1) /
(\mathrm{se} + \mathrm{sp} - 1)`, with a delta-method interval.

Written by hand: ppi-python's intervals treat labelled and unlabelled items as independent
samples of independent items, with no strata and no clusters; the tests check this module
against it where its assumptions hold.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Literal

import numpy as np
import pandas as pd

from kbench_core.audit._items import MAJORITY, effective_judge
from kbench_core.audit.accuracy import judge_accuracy, reviewer_kappa
from kbench_core.audit.design import _check_level, _codes, _t, _z, design, weighted_design
from kbench_core.stats import wilson

# design, judge_accuracy and reviewer_kappa live in kbench_core.audit.design and .accuracy
__all__ = ["METHODS", "Method", "corrected", "design", "judge_accuracy", "labels_needed",
           "reviewer_kappa"]

Method = Literal["ppi++", "difference", "rogan_gladen"]
METHODS: tuple[str, ...] = ("ppi++", "difference", "rogan_gladen")


@dataclass(frozen=True)
class _Rate:
    value: float
    low: float
    high: float
    n: int


_NAN_RATE = _Rate(np.nan, np.nan, np.nan, 0)


def _poststratified(yhat: np.ndarray, y: np.ndarray, cluster: np.ndarray, cell: np.ndarray,
                    level: float, weights: np.ndarray | None = None,
                    parts: dict[str, float] | None = None) -> tuple[_Rate, str]:
    """:math:`\\sum_h W_h \\bar Y_h` and its interval (module docstring); a reason when a
    cell has no label. ``weights``: the labels' design weights (the sample's strata need not
    be the cells: labels drawn with another judge's decisions, or failed judgements drawn as
    a stratum of their own), each cell's :math:`\\bar Y_h` then their weighted (Hájek) mean;
    without them every label of a cell counts alike. ``parts``: filled with the variance's
    parts (``fixed``: what more labels cannot shrink, the judge's decisions over the
    contracts and their covariance with the labels' part; ``within``: the labels' part) and
    ``df``."""
    n_items = len(yhat)
    lab = ~np.isnan(y)
    w = np.ones(n_items) if weights is None else np.asarray(weights, dtype=float)
    w = np.where(lab, w, 0.0)
    cell_code, n_cells = _codes(cell)
    size = np.bincount(cell_code, minlength=n_cells).astype(float)
    n_lab = np.bincount(cell_code[lab], minlength=n_cells).astype(float)
    if not lab.any():
        return _NAN_RATE, "no label"
    empty = (size > 0) & (n_lab == 0)
    if empty.any():
        names = pd.unique(np.asarray(cell)[np.isin(cell_code, np.flatnonzero(empty))])
        return _Rate(np.nan, np.nan, np.nan, int(lab.sum())), \
            "no label where the judge said " + "; ".join(map(str, names))
    w_sum = np.bincount(cell_code, weights=w, minlength=n_cells)
    w_sum2 = np.bincount(cell_code, weights=w**2, minlength=n_cells)
    w_sum = np.where(w_sum > 0, w_sum, 1.0)
    ybar = np.bincount(cell_code[lab], weights=w[lab] * y[lab], minlength=n_cells) / w_sum
    weight = size / n_items
    theta = float(np.sum(weight * ybar))
    # each label's share of its cell: N_h w_i / sum of the cell's w (N_h / n_h when alike)
    share = np.where(lab, w / w_sum[cell_code], 0.0)
    a = size[cell_code] * share
    resid = np.where(lab, y - ybar[cell_code], 0.0)
    c_code, n_clusters = _codes(cluster)
    g = max(n_clusters, 2)
    # The judge's decisions over the contracts (what labels cannot shrink) ...
    composition = np.bincount(c_code, weights=ybar[cell_code] - theta, minlength=n_clusters)
    v_composition = g / (g - 1) * np.sum(composition**2) / n_items**2
    # ... and the labels' part, clustered and as if independent (its design effect), each
    # cell's variance at least Agresti-Coull's on the cell's effective number of labels.
    within = np.bincount(c_code, weights=a * resid, minlength=n_clusters)
    v_within_cl = g / (g - 1) * np.sum(within**2) / n_items**2
    ss = np.bincount(cell_code[lab], weights=(share[lab] * resid[lab]) ** 2,
                     minlength=n_cells)
    var_cell = np.where(n_lab > 1, ss * n_lab / np.maximum(n_lab - 1, 1), 0.0)
    n_eff = np.where(w_sum2 > 0, w_sum**2 / np.where(w_sum2 > 0, w_sum2, 1.0), 0.0)
    z2 = _z(level) ** 2
    p_tilde = (n_eff * np.clip(ybar, 0, 1) + z2 / 2) / (n_eff + z2)
    floor = p_tilde * (1 - p_tilde) / (n_eff + z2)
    v_within_iid = float(np.sum(weight**2 * var_cell))
    deff = v_within_cl / v_within_iid if v_within_iid > 0 else 1.0
    v_within = max(deff, 1.0) * float(np.sum(weight**2 * np.maximum(var_cell, floor)))
    # the two parts move together when a contract's answers are alike (both grow with it)
    covariance = g / (g - 1) * np.sum(composition * within) / n_items**2
    variance = max(v_composition + v_within + 2 * covariance, v_within)
    df = min(n_clusters - 1, int(lab.sum()) - int((n_lab > 0).sum()))
    if parts is not None:
        parts.update(fixed=max(v_composition + 2 * covariance, 0.0), within=v_within,
                     df=float(df), clusters=float(n_clusters), cells=float(n_cells))
    half = _t(level, df) * np.sqrt(variance)
    return _Rate(theta, max(0.0, theta - half), min(1.0, theta + half), int(lab.sum())), ""


def _hajek(y: np.ndarray, w: np.ndarray, cluster: np.ndarray, level: float) -> _Rate:
    """A weighted share of labels (Hájek) with a clustered Wilson interval on Kish's
    effective number of labels."""
    if len(y) == 0:
        return _NAN_RATE
    theta = float(np.sum(w * y) / np.sum(w))
    c_code, n_clusters = _codes(cluster)
    u = w * (y - theta) / np.sum(w)
    v_cl = np.sum(np.bincount(c_code, weights=u, minlength=n_clusters) ** 2)
    v_cl *= max(n_clusters, 2) / max(n_clusters - 1, 1)
    v_iid = np.sum(u**2) * len(y) / max(len(y) - 1, 1)
    deff = max(v_cl / v_iid, 1.0) if v_iid > 0 else 1.0
    n_eff = np.sum(w) ** 2 / np.sum(w**2) / deff
    low, high = wilson(theta * n_eff, n_eff, level=level)
    return _Rate(theta, float(low), float(high), len(y))


def _difference(yhat: np.ndarray, y: np.ndarray, w_lab: np.ndarray, cluster: np.ndarray,
                level: float) -> _Rate:
    lab = ~np.isnan(y)
    if not lab.any():
        return _NAN_RATE
    n_items = len(yhat)
    resid = y[lab] - yhat[lab]
    shift = float(np.sum(w_lab * resid) / np.sum(w_lab))
    theta = float(yhat.mean() + shift)
    wn = np.zeros(n_items)
    wn[lab] = w_lab * n_items / np.sum(w_lab)
    e = np.zeros(n_items)
    e[lab] = resid - shift
    u = (yhat - yhat.mean()) + wn * e
    c_code, n_clusters = _codes(cluster)
    g = max(n_clusters, 2)
    variance = g / (g - 1) * np.sum(np.bincount(c_code, weights=u, minlength=n_clusters) ** 2)
    variance /= n_items**2
    half = _t(level, min(n_clusters - 1, int(lab.sum()) - 1)) * np.sqrt(variance)
    return _Rate(theta, max(0.0, theta - half), min(1.0, theta + half), int(lab.sum()))


def _judge_only(yhat: np.ndarray, failed: np.ndarray, cluster: np.ndarray,
                level: float) -> _Rate:
    """The judge's own rate over the items it decided, with kbench's clustered Wilson interval
    (the design effect of the answers of one contract, as every judged rate has)."""
    keep = ~failed
    return _hajek(yhat[keep], np.ones(int(keep.sum())), cluster[keep], level)


def corrected(judged: pd.DataFrame, labels: pd.DataFrame, *, label: str = "target_found",
              judge: str = MAJORITY, by: Sequence[str] = ("model",), method: Method = "ppi++",
              level: float = 0.95, judges: Sequence[str] | None = None,
              min_votes: int | None = None, design_judge: str | None = None) -> pd.DataFrame:
    r"""Per group, the judge's rate, the reviewers' rate and the rate corrected for the judge's
    errors, each with its interval (module docstring; ``docs/metrics/audit.md``).

    ``design_judge`` is the judge whose decisions made the sample's strata (by default the
    majority or the only judge, as :func:`kbench_core.audit.sample` draws): every label
    carries its stratum's weight :math:`N_h / n_h`, and each of ``judge``'s cells averages its
    labels with these weights, so labels drawn with one judge correct another's rate.
    ``human_only`` is the reviewers' labels weighted back to the run, with a clustered Wilson
    interval on Kish's effective number of labels; it uses no judge decision beyond the
    weights, so its interval is what the labels alone support.

    Returns
    -------
    DataFrame
        One row per group (the ``by`` columns): ``judge_only``, ``human_only``, ``corrected``,
        each with ``_low``/``_high``; ``n_items`` (items of the group: vulnerable answers for
        ``target_found``), ``n_labelled``, ``n_contracts``, ``method``, ``judge`` and ``note``
        (why a corrected rate is missing, e.g. no label where the judge said "found").
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}; got {method!r}")
    _check_level(level)
    by = list(by)
    pop = weighted_design(judged, labels, label=label, judge=judge, by=by, judges=judges,
                          min_votes=min_votes, design_judge=design_judge)
    rows = []
    accuracy = None
    if method == "rogan_gladen":
        accuracy = judge_accuracy(judged, labels, label=label, by=by, level=level,
                                  judges=judges, min_votes=min_votes, per_group=True,
                                  design_judge=design_judge)
    for key, group in pop.groupby(by, sort=True, observed=True):
        key = key if isinstance(key, tuple) else (key,)
        yhat = group["yhat"].to_numpy(float)
        y = group["human"].to_numpy(float)
        failed = group["failed"].to_numpy(bool)
        cluster = group["sample"].to_numpy()
        lab = ~np.isnan(y)
        j = _judge_only(yhat, failed, cluster, level)
        w = group["w"].to_numpy(float)
        h = _hajek(y[lab], w[lab], cluster[lab], level)
        note = ""
        if method == "ppi++":
            c, note = _poststratified(yhat, y, cluster, group["cell"].to_numpy(), level,
                                      weights=w)
        elif method == "difference":
            c = _difference(yhat, y, w[lab], cluster, level)
        else:
            c, note = _rogan_gladen(j, accuracy, dict(zip(by, key, strict=True)),
                                    effective_judge(judged, judge))
        rows.append({**dict(zip(by, key, strict=True)),
                     "judge_only": j.value, "judge_only_low": j.low, "judge_only_high": j.high,
                     "human_only": h.value, "human_only_low": h.low, "human_only_high": h.high,
                     "corrected": c.value, "corrected_low": c.low, "corrected_high": c.high,
                     "n_items": len(group), "n_labelled": int(lab.sum()),
                     "n_contracts": int(pd.unique(cluster).size), "method": method,
                     "judge": judge, "note": note or ("" if lab.any() else "no label")})
    out = pd.DataFrame(rows)
    out.attrs.update(label=label, judge=judge, method=method, level=level)
    return out


def _rogan_gladen(j: _Rate, accuracy: pd.DataFrame | None, key: dict, judge: str
                  ) -> tuple[_Rate, str]:
    if accuracy is None or accuracy.empty:
        return _NAN_RATE, "no label"
    mask = accuracy["judge"] == judge
    for c, v in key.items():
        mask &= accuracy[c].astype(str) == str(v)
    if not mask.any():
        return _NAN_RATE, "no label"
    row = accuracy[mask].iloc[0]
    se, sp = row["sensitivity"], row["specificity"]
    if not (np.isfinite(se) and np.isfinite(sp)):
        return _NAN_RATE, ("the labels need items the reviewers called found and items they "
                           "called not found (sensitivity and specificity)")
    denom = se + sp - 1
    if not np.isfinite(denom) or denom <= 0:
        return _NAN_RATE, "the judge is no better than chance on the labels (sens + spec ≤ 1)"
    theta = (j.value + sp - 1) / denom
    # delta method, each part's variance from its own interval's half-width
    def var(low: float, high: float) -> float:
        return ((high - low) / (2 * 1.959963984540054)) ** 2

    v = (var(j.low, j.high) + ((1 - theta) ** 2) * var(row["specificity_low"],
                                                        row["specificity_high"])
         + theta**2 * var(row["sensitivity_low"], row["sensitivity_high"])) / denom**2
    half = 1.959963984540054 * np.sqrt(v)
    value = float(np.clip(theta, 0, 1))
    return _Rate(value, max(0.0, theta - half), min(1.0, theta + half),
                 int(row["n_labelled"])), ""


def _projected_half_width(parts: dict[str, float], n_lab: int, level: float,
                          more: int) -> float:
    """The corrected interval's half-width after ``more`` labels: the labels' part shrinks as
    1/n with the sample allocated as now; the judge's decisions over the contracts (and their
    covariance with the labels' part) stay; t's degrees of freedom grow with the labels."""
    n = n_lab + more
    df = min(parts["clusters"] - 1, n - parts["cells"])
    return _t(level, df) * float(np.sqrt(parts["fixed"] + parts["within"] * n_lab / n))


def labels_needed(judged: pd.DataFrame, labels: pd.DataFrame, *, half_width: float = 0.05,
                  level: float = 0.95, judge: str = MAJORITY, by: Sequence[str] = ("model",),
                  label: str = "target_found", judges: Sequence[str] | None = None,
                  min_votes: int | None = None, design_judge: str | None = None
                  ) -> pd.DataFrame:
    r"""Per group, how many more labels bring the corrected rate's interval to ``half_width``.

    The variance is split into the part labels cannot shrink (the judge's decisions over the
    contracts and their covariance with the labels' part: :math:`V_0`) and the labels' part
    :math:`V_1`, which shrinks as :math:`1/n` with the sample allocated as now; the answer is
    the least :math:`k` with :math:`t_{d(n+k)} \sqrt{V_0 + V_1 n / (n + k)} \le h`, the
    degrees of freedom :math:`d` those of :math:`n + k` labels. Returns the ``by``
    columns, ``half_width_now``, ``n_labelled``, ``labels_needed`` (more labels; 0 when the
    target is met, NaN when labels alone cannot reach it or no cell has two labels yet) and
    ``note``.
    """
    if not 0 < half_width < 1:
        raise ValueError(f"half_width must be between 0 and 1; got {half_width!r}")
    _check_level(level)
    by = list(by)
    pop = weighted_design(judged, labels, label=label, judge=judge, by=by, judges=judges,
                          min_votes=min_votes, design_judge=design_judge)
    rows = []
    for key, group in pop.groupby(by, sort=True, observed=True):
        key = key if isinstance(key, tuple) else (key,)
        yhat = group["yhat"].to_numpy(float)
        y = group["human"].to_numpy(float)
        cluster = group["sample"].to_numpy()
        cell = group["cell"].to_numpy()
        lab = ~np.isnan(y)
        n_lab = int(lab.sum())
        w = group["w"].to_numpy(float)
        parts: dict[str, float] = {}
        rate, note = _poststratified(yhat, y, cluster, cell, level, weights=w, parts=parts)
        row = {**dict(zip(by, key, strict=True)), "half_width_now": np.nan,
               "n_labelled": n_lab, "labels_needed": np.nan, "note": note}
        if np.isfinite(rate.value):
            now = (rate.high - rate.low) / 2
            row["half_width_now"] = now
            left = len(group) - n_lab
            half = partial(_projected_half_width, parts, n_lab, level)

            if now <= half_width:
                row["labels_needed"] = 0
            elif _t(level, parts["clusters"] - 1) * np.sqrt(parts["fixed"]) >= half_width:
                row["note"] = ("labels alone cannot reach it: the spread of the judge's "
                               "decisions over the contracts is wider")
            elif half(left) > half_width:
                row["note"] = f"more than the {left} items left: label them all"
                row["labels_needed"] = left
            else:
                low, high = 0, left  # half(high) <= half_width < half(low)
                while high - low > 1:
                    middle = (low + high) // 2
                    low, high = (middle, high) if half(middle) > half_width else (low, middle)
                row["labels_needed"] = high
        rows.append(row)
    return pd.DataFrame(rows)

