"""The audit's design: every auditable item with the judge's decision and the reviewers'
label (:func:`design`), and the labels' weights, :math:`N_h / n_h` in the strata of the judge
the sample was drawn with (``docs/metrics/audit.md``; the estimators are in
:mod:`kbench_core.audit.estimate` and :mod:`kbench_core.audit.accuracy`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats as sps

from kbench_core.audit._items import (
    MAJORITY,
    item_keys,
    joined,
    judge_choices,
    population,
)
from kbench_core.audit.labels import human_labels, latest

__all__ = ["design", "weighted_design"]


def _z(level: float) -> float:
    return float(sps.norm.isf((1 - level) / 2))


def _t(level: float, df: float) -> float:
    return float(sps.t.isf((1 - level) / 2, max(df, 1.0)))


def _check_level(level: float) -> None:
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1; got {level!r}")


def design(judged: pd.DataFrame, labels: pd.DataFrame, *, label: str = "target_found",
           judge: str = MAJORITY, by: Sequence[str] = ("model",),
           judges: Sequence[str] | None = None, min_votes: int | None = None) -> pd.DataFrame:
    """Every auditable item with the judge's decision and the reviewers' label.

    One row per item: the key, the ``by`` columns, ``yhat`` (the judge's decision, a failed
    judgement as 0), ``failed``, ``human`` (the reviewers' mean label, NaN when unlabelled),
    ``n_reviewers``, ``p_include`` (from the labels when they carry it, else NaN), ``cell``
    (the ``by`` values and the decision, a failure as "not found") and ``stratum`` (the ``by``
    values and the decision, a failure as "failed": :func:`kbench_core.audit.sample`'s).
    """
    pop = population(judged, judge, label=label, by=by, judges=judges, min_votes=min_votes)
    pop["failed"] = np.isnan(pop["decision"].to_numpy(float))
    pop["yhat"] = np.nan_to_num(pop["decision"].to_numpy(float), nan=0.0)
    pop["cell"] = joined([*(pop[c] for c in by),
                          np.where(pop["yhat"] > 0.5, "found", "not found")])
    pop = pop.drop(columns=["decision", "decision_text"])
    keys = item_keys(pop)
    if labels is not None and len(labels):
        human = human_labels(labels, label)
        human = human.set_axis(item_keys(human))
        pop["human"] = human["human"].reindex(keys).to_numpy(float)
        pop["n_reviewers"] = human["n_reviewers"].reindex(keys).fillna(0).to_numpy(int)
        if "p_include" in labels:
            cur = latest(labels)
            p = pd.to_numeric(cur["p_include"], errors="coerce")
            p = pd.Series(p.to_numpy(float), index=item_keys(cur))
            p = p[~p.index.duplicated(keep="last")]
            pop["p_include"] = p.reindex(keys).to_numpy(float)
        else:
            pop["p_include"] = np.nan
    else:
        pop["human"] = np.nan
        pop["n_reviewers"] = 0
        pop["p_include"] = np.nan
    return pop


def _codes(values: pd.Series | np.ndarray) -> tuple[np.ndarray, int]:
    codes, uniques = pd.factorize(np.asarray(values), sort=True)
    return codes, len(uniques)


def weighted_design(judged: pd.DataFrame, labels: pd.DataFrame, *, label: str, judge: str,
                    by: Sequence[str], judges: Sequence[str] | None, min_votes: int | None,
                    design_judge: str | None) -> pd.DataFrame:
    """:func:`design` of ``judge`` with its labelled items' weights ``w``
    (:func:`_weights_from`): what the corrected rates and the labels needed are computed
    from."""
    pop = design(judged, labels, label=label, judge=judge, by=by, judges=judges,
                 min_votes=min_votes)
    pop["w"] = _weights_from(judged, labels, pop, label=label, by=by, judges=judges,
                             min_votes=min_votes, design_judge=design_judge, judge=judge)
    return pop


def _weights_from(judged: pd.DataFrame, labels: pd.DataFrame, pop: pd.DataFrame, *,
                  label: str, by: Sequence[str], judges: Sequence[str] | None,
                  min_votes: int | None, design_judge: str | None, judge: str) -> np.ndarray:
    """:func:`_design_weights` of ``design_judge``'s strata (by default the majority or the only
    judge, :func:`kbench_core.audit.sample`'s default), aligned with ``pop``'s items."""
    choices = judge_choices(judged)
    design_judge = design_judge or (MAJORITY if MAJORITY in choices else choices[0])
    if design_judge == judge:
        return _design_weights(pop)
    base = design(judged, labels, label=label, judge=design_judge, by=by, judges=judges,
                  min_votes=min_votes)
    weights = pd.Series(_design_weights(base), index=item_keys(base))
    return weights.reindex(item_keys(pop)).fillna(0.0).to_numpy(float)


def _design_weights(pop: pd.DataFrame) -> np.ndarray:
    """Weights of the labelled items: :math:`N_h / n_h` in the strata (the ``by`` groups and
    the decision: found, not found or failed) of the judge the sample was drawn with: the
    inverse inclusion probability of :func:`kbench_core.audit.sample`'s strata, summed over
    successive draws (the union of draws from what is left of a stratum is one simple random
    sample of it); for labels drawn outside kbench as a simple random sample,
    post-stratification (Särndal et al. §7.6)."""
    lab = ~np.isnan(pop["human"].to_numpy(float))
    code, n_cells = _codes(pop["stratum"])
    size = np.bincount(code, minlength=n_cells).astype(float)
    n_lab = np.bincount(code[lab], minlength=n_cells).astype(float)
    return np.where(lab, size[code] / np.maximum(n_lab[code], 1), 0.0)

