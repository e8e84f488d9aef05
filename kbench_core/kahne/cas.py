"""CAS, calibration awareness score per model × bias (``docs/metrics/bias.md``)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._common import _above, _frame, _prepare, _stats, _Trials
from .has import _crosses

# ----------------------------------------------------------------------------- CAS


def cas(trials: pd.DataFrame) -> pd.DataFrame:
    r"""Calibration Awareness Score per model × bias.

    Notes
    -----
    Over rows (any condition) with both a confidence c and a known score s, accuracy a = 1 − s:
    :math:`e = |\bar c - \bar a|`, ``calibration_score`` = 1 − min(e, 1), ``overconfident`` =
    :math:`\bar c > \bar a + 0.1`, ``metacognitive_gap`` = max(0, :math:`\bar c - \bar a`).
    ``missing_confidence_rate`` is the share of the pair's rows without a confidence (the
    seed's CAS ``unknown_rate``). No usable row → NaN with ``has_confidence_data`` false.
    """
    t = _prepare(trials)
    return _frame(t, _cas(t))


def _cas(t: _Trials) -> dict[str, object]:
    """The columns of :func:`cas` after ``model`` and ``bias``, one value per pair
    (one row per pair of ``t``)."""
    size = t.n_pairs
    usable = ~np.isnan(t.confidence) & ~np.isnan(t.score)
    confidence = _stats(t.pair, t.confidence, size, usable, t.weight)
    accuracy = _stats(t.pair, 1 - t.score, size, usable, t.weight)
    out: dict[str, object] = {}
    out["mean_confidence"] = confidence.mean
    out["mean_confidence_low"], out["mean_confidence_high"] = confidence.interval()
    out["mean_accuracy"] = accuracy.mean
    out["mean_accuracy_low"], out["mean_accuracy_high"] = accuracy.interval()
    # numpy, not Series arithmetic: the same IEEE operations (NaN stays NaN through abs,
    # minimum and maximum as through clip) without a Series per step.
    gap = confidence.mean - accuracy.mean
    error = np.abs(gap)
    out["calibration_error"] = error
    out["calibration_score"] = 1 - np.minimum(error, 1.0)
    out["overconfident"] = pd.arrays.BooleanArray(
        _above(confidence.mean, accuracy.mean + 0.1), np.isnan(gap))
    # The gap's range from the two intervals (confidence low − accuracy high, confidence
    # high − accuracy low): conservative, as it ignores that both come from the same rows.
    out["gap_low"] = out["mean_confidence_low"] - out["mean_accuracy_high"]
    out["gap_high"] = out["mean_confidence_high"] - out["mean_accuracy_low"]
    out["overconfident_uncertain"] = _crosses(out["gap_low"], out["gap_high"], 0.1, gap)
    out["metacognitive_gap"] = np.maximum(gap, 0.0)
    out["missing_confidence_rate"] = t.rows(np.isnan(t.confidence)) / t.rows()
    n = confidence.n.astype(int)
    out["n"] = n
    out["has_confidence_data"] = n > 0
    return out
