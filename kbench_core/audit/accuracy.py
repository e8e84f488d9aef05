"""How well a judge agrees with the reviewers (``docs/metrics/audit.md``): each judge's
sensitivity, specificity, accuracy and Cohen's kappa against the reviewers' labels weighted back
to the run (:func:`judge_accuracy`), and the reviewers' agreement with each other
(:func:`reviewer_kappa`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats as sps

from kbench_core.audit._items import (
    HUMAN,
    ITEM_KEY,
    MAJORITY,
    item_frame,
    item_keys,
    judge_choices,
    llm_judges,
    population,
)
from kbench_core.audit.design import _check_level, _codes, _design_weights, _t, _z, design
from kbench_core.audit.labels import latest
from kbench_core.stats import wilson

__all__ = ["judge_accuracy", "reviewer_kappa"]


def _kappa(table: np.ndarray, n_eff: float, level: float) -> tuple[float, float, float]:
    """Cohen's κ of a weighted 2×2 table, its asymptotic interval (statsmodels) on Kish's
    effective number of items."""
    from statsmodels.stats.inter_rater import cohens_kappa

    total = table.sum()
    if total <= 0 or n_eff < 2:
        return np.nan, np.nan, np.nan
    scaled = table / total * n_eff
    po = np.trace(scaled) / n_eff
    pe = float(np.sum(scaled.sum(0) * scaled.sum(1))) / n_eff**2
    if pe >= 1:
        return np.nan, np.nan, np.nan
    kappa = (po - pe) / (1 - pe)
    import warnings

    with warnings.catch_warnings():  # its z statistic divides by 0 on a one-sided table
        warnings.simplefilter("ignore", RuntimeWarning)
        result = cohens_kappa(scaled, return_results=True)
    se = float(result["std_kappa"]) if np.isfinite(result["std_kappa"]) else np.nan
    z = _z(level)
    return float(kappa), max(-1.0, kappa - z * se), min(1.0, kappa + z * se)


def judge_accuracy(judged: pd.DataFrame, labels: pd.DataFrame, *,
                   label: str = "target_found", by: Sequence[str] = ("model",),
                   design_judge: str | None = None, level: float = 0.95,
                   judges: Sequence[str] | None = None, min_votes: int | None = None,
                   per_group: bool = False) -> pd.DataFrame:
    r"""Each LLM judge's and the majority's agreement with the reviewers.

    On the labelled items, weighted back to the run (inverse inclusion probabilities in the
    cells of ``design_judge``, by default the majority, or the only judge: the sample's
    strata): ``sensitivity`` = P(judge found | reviewer found), ``specificity`` = P(judge
    not found | reviewer not found), ``accuracy`` and Cohen's ``kappa``, each with a Wilson
    (κ: asymptotic) interval on Kish's effective number of labels divided by the design effect
    of their contracts; ``n_labelled`` (labelled items the judge decided; a failed judgement
    is left out).

    Returns one row per judge (``per_group=True``: per judge and ``by`` group).
    """
    _check_level(level)
    by = list(by)
    choices = judge_choices(judged)
    design_judge = design_judge or (MAJORITY if MAJORITY in choices else choices[0])
    base = design(judged, labels, label=label, judge=design_judge, by=by, judges=judges,
                  min_votes=min_votes)
    base["w"] = _design_weights(base)
    base = base[~np.isnan(base["human"].to_numpy(float))]
    keys = item_keys(base)
    # only the labelled items' rows: each judge's decisions on them (a majority of a few
    # hundred items, not of the run)
    wanted = item_keys(item_frame(judged)).isin(keys)
    small = judged[wanted]
    # the majority's threshold is the whole run's (an LLM judge without a row among the
    # labelled items still counts towards it, as a failed judgement does)
    voting = list(judges) if judges is not None else llm_judges(judged)
    present = [j for j in voting if j in set(llm_judges(small))]
    needed = min_votes if min_votes is not None else len(voting) // 2 + 1
    rows = []
    for who in choices:
        if who == MAJORITY:
            decided = population(small, who, label=label, by=by, judges=present,
                                 min_votes=min(needed, max(len(present), 1)))
        else:
            decided = population(small, who, label=label, by=by)
        d = pd.Series(decided["decision"].to_numpy(float),
                      index=item_keys(decided)).reindex(keys).to_numpy(float)
        frame = base.assign(d=d)
        frame = frame[~np.isnan(frame["d"].to_numpy(float))]
        groups = frame.groupby(by, sort=True, observed=True) if per_group else [((), frame)]
        for key, part in groups:
            key = key if isinstance(key, tuple) else (key,)
            rows.append({"judge": who, **dict(zip(by if per_group else [], key, strict=True)),
                         **_accuracy_row(part, level)})
    columns = ["judge", *(by if per_group else []), "sensitivity", "sensitivity_low",
               "sensitivity_high", "specificity", "specificity_low", "specificity_high",
               "accuracy", "accuracy_low", "accuracy_high", "kappa", "kappa_low", "kappa_high",
               "n_labelled"]
    return pd.DataFrame(rows, columns=columns)


def _effective_n(x: np.ndarray, weights: np.ndarray, cluster: np.ndarray | None) -> float:
    """Kish's effective number of labels :math:`(\\sum w)^2 / \\sum w^2` of a weighted share
    of ``x``, divided by the design effect of the labels' contracts (the clustered variance
    of the share over the independent one, at least 1): a judge fooled by a contract on every
    prompt type makes its labels fewer independent checks."""
    keep = weights > 0
    x, weights = x[keep], weights[keep]
    total = weights.sum()
    n_eff = total**2 / np.sum(weights**2)
    if cluster is None or len(x) < 2:
        return float(n_eff)
    theta = np.sum(weights * x) / total
    u = weights * (x - theta) / total
    c_code, n_clusters = _codes(np.asarray(cluster)[keep])
    v_cl = np.sum(np.bincount(c_code, weights=u, minlength=n_clusters) ** 2)
    v_cl *= max(n_clusters, 2) / max(n_clusters - 1, 1)
    v_iid = np.sum(u**2) * len(x) / (len(x) - 1)
    deff = max(v_cl / v_iid, 1.0) if v_iid > 0 else 1.0
    return float(n_eff / deff)


def _share(numerator: np.ndarray, weights: np.ndarray, level: float,
           cluster: np.ndarray | None = None) -> tuple[float, ...]:
    total = weights.sum()
    if total <= 0:
        return np.nan, np.nan, np.nan
    p = float(np.sum(weights * numerator) / total)
    n_eff = _effective_n(numerator, weights, cluster)
    if cluster is not None:
        # Wilson's interval with t's quantile on the contracts' degrees of freedom for z
        # (a cluster-robust variance from few contracts is itself uncertain)
        n_clusters = len(pd.unique(np.asarray(cluster)[weights > 0]))
        # (on one or two contracts t's quantile is past what a normal level can say: the
        # interval is then the whole [0, 1])
        level = min(2 * float(sps.norm.cdf(_t(level, n_clusters - 1))) - 1, 1 - 1e-9)
    low, high = wilson(p * n_eff, n_eff, level=level)
    return p, float(low), float(high)


def _accuracy_row(part: pd.DataFrame, level: float) -> dict[str, float]:
    y = part["human"].to_numpy(float)
    d = part["d"].to_numpy(float)
    w = part["w"].to_numpy(float)
    cluster = part["sample"].to_numpy() if "sample" in part else None
    out: dict[str, float] = {}
    out["sensitivity"], out["sensitivity_low"], out["sensitivity_high"] = \
        _share(d, w * y, level, cluster)
    out["specificity"], out["specificity_low"], out["specificity_high"] = \
        _share(1 - d, w * (1 - y), level, cluster)
    agree = y * d + (1 - y) * (1 - d)
    out["accuracy"], out["accuracy_low"], out["accuracy_high"] = \
        _share(agree, w, level, cluster)
    table = np.array([[np.sum(w * y * d), np.sum(w * y * (1 - d))],
                      [np.sum(w * (1 - y) * d), np.sum(w * (1 - y) * (1 - d))]])
    # κ's interval on the effective number of labels of the agreement
    n_eff = _effective_n(agree, w, cluster) if len(w) and w.sum() > 0 else 0.0
    out["kappa"], out["kappa_low"], out["kappa_high"] = _kappa(table, n_eff, level)
    out["n_labelled"] = len(part)
    return out


def reviewer_kappa(labels: pd.DataFrame, label: str = "target_found") -> pd.DataFrame:
    """Cohen's κ between reviewers on the items both labelled (their latest labels), via
    :func:`kbench_core.agreement.pairwise_kappa`; empty with fewer than two reviewers."""
    from kbench_core.agreement import pairwise_kappa

    current = latest(labels)
    current = current[current[label].notna()]
    if current["reviewer"].nunique() < 2:
        return pd.DataFrame(columns=["judge_a", "judge_b", "kappa", "kappa_low", "kappa_high",
                                     "n"])
    frame = pd.DataFrame({**{c: current[c].astype(str) for c in ITEM_KEY},
                          "judge": current["reviewer"].astype(str).replace(HUMAN, "human "),
                          label: current[label].astype(bool)})
    return pairwise_kappa(frame, label).rename(columns={"judge_a": "reviewer_a",
                                                        "judge_b": "reviewer_b"})

