"""BMP, bias mitigation potential per model × bias, and the inference of debiasing method kinds
(``docs/metrics/bias.md``)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._common import _below, _frame, _prepare, _stats, _Trials

# ----------------------------------------------------------------------------- BMP


def infer_method_kind(method: pd.Series) -> pd.Series:
    """The seed's substring rule: "chain"/"step" → chain_of_thought, "warn"/"bias" → warning,
    both or neither → other."""
    low = method.astype(str).str.lower()
    cot = low.str.contains("chain") | low.str.contains("step")
    warn = low.str.contains("warn") | low.str.contains("bias")
    return pd.Series(np.select([cot & ~warn, warn & ~cot], ["chain_of_thought", "warning"],
                               "other"), index=method.index)


def _infer_kinds(methods: np.ndarray) -> np.ndarray:
    """:func:`infer_method_kind` of a few method names, in Python (the same substring rule
    without building a Series)."""
    kinds = []
    for method in methods:
        low = str(method).lower()
        cot, warn = "chain" in low or "step" in low, "warn" in low or "bias" in low
        kinds.append("chain_of_thought" if cot and not warn
                     else "warning" if warn and not cot else "other")
    return np.array(kinds, dtype=object)


def bmp(trials: pd.DataFrame) -> pd.DataFrame:
    r"""Bias Mitigation Potential per model × bias.

    Notes
    -----
    Baseline = mean treatment score; each debiasing method's mean score; the best method has
    the lowest mean (ties: the first name in sort order);
    :math:`\mathrm{effectiveness} = \max(0, (b - s_{best}) / b)`, 0 when the baseline is 0 and
    NaN when it is undefined (no treatment rows with a known score).
    ``requires_warning`` = (mean of the warning methods' means) < (mean of the
    chain-of-thought methods' means), NaN when either kind is absent. A method's kind is the
    first ``method_kind`` given for it in the run, else :func:`infer_method_kind`, and
    ``kind_inferred`` says so. No debiasing rows → NaN.
    """
    t = _prepare(trials)
    return _frame(t, _bmp(t))


def _bmp(t: _Trials) -> dict[str, object]:
    """The columns of :func:`bmp` after ``model`` and ``bias``, one value per pair
    (one row per pair of ``t``)."""
    size, n_meth = t.n_pairs, max(len(t.methods), 1)
    out: dict[str, object] = {}
    baseline = _stats(t.pair, t.score, size, t.condition == 1, t.weight)
    out["baseline"] = baseline.mean
    debias = (t.condition == 2) & (t.method >= 0)
    per = _stats(np.where(debias, t.pair * n_meth + t.method, -1), t.score, size * n_meth,
                 weight=t.weight)
    # Every (pair, method) cell with a known score, in numpy: a groupby per call cost more
    # than the arithmetic on small runs.
    cells = np.flatnonzero(per.n > 0)
    owner, method = cells // n_meth, cells % n_meth
    score = per.mean[cells]
    inferred_kind = _infer_kinds(t.methods)
    given = t.method_kinds
    kind = np.where(pd.isna(given), inferred_kind, given) if len(given) else given
    # Best method: the lowest mean, ties by method name (first in sort order).
    name_rank = np.argsort(np.argsort(t.methods, kind="stable"), kind="stable")
    order = np.lexsort((name_rank[method], score, owner)) if len(cells) else cells
    ranked = owner[order]
    first = order[np.r_[True, ranked[1:] != ranked[:-1]]] if len(cells) else cells
    # No debiasing rows at all: a float column of NaN, as the groupby over no rows gave.
    best_method = np.full(size, np.nan, dtype=object if len(cells) else float)
    best_method[owner[first]] = t.methods[method[first]]
    best_score = np.full(size, np.nan)
    best_score[owner[first]] = score[first]
    out["best_method"] = best_method
    out["best_score"] = best_score
    n_methods = np.bincount(owner, minlength=size)
    out["n_methods"] = n_methods
    base = baseline.mean
    with np.errstate(invalid="ignore", divide="ignore"):
        gain = np.maximum((base - best_score) / base, 0.0)
        # baseline 0 → 0 (nothing to mitigate); baseline undefined (no treatment rows) → NaN
        out["effectiveness"] = np.where(np.isnan(base) | np.isnan(best_score), np.nan,
                                        np.where(base > 0, gain, 0.0))

    def kind_mean(name: str) -> np.ndarray:
        """Mean of the method means of one kind per pair (NaN where the pair has none)."""
        mine = kind[method] == name if len(cells) else np.zeros(0, dtype=bool)
        total = np.bincount(owner[mine], weights=score[mine], minlength=size)
        count = np.bincount(owner[mine], minlength=size)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(count > 0, total / count, np.nan)

    warning, cot = kind_mean("warning"), kind_mean("chain_of_thought")
    requires = pd.arrays.BooleanArray(_below(warning, cot),  # type: ignore[arg-type]
                                      np.isnan(warning) | np.isnan(cot))
    out["requires_warning"] = requires.to_numpy()
    flagged = pd.isna(given)[method] if len(cells) else np.zeros(0, dtype=bool)
    any_inferred = np.bincount(owner, weights=flagged, minlength=size) > 0
    out["kind_inferred"] = pd.arrays.BooleanArray(any_inferred, n_methods == 0).to_numpy()
    return out
