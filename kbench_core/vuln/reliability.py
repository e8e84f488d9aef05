"""Reliability tables of every group at once (bins, accuracy with Wilson intervals, ECE, MCE),
for reliability diagrams."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from kbench_core.calibration import bin_calibration
from kbench_core.stats import check_choice, wilson
from kbench_core.vuln._prepare import _bools, _groups, _one_judge
from kbench_core.vuln.definitions import Binning


def reliability(judged: pd.DataFrame, *, by: Sequence[str] = ("model",), n_bins: int = 10,
                binning: Binning = "uniform", judge: str | None = None) -> pd.DataFrame:
    """Reliability tables of every group at once, for reliability diagrams.

    One row per group × non-empty bin: the ``by`` columns, ``bin lo hi count
    mean_confidence accuracy accuracy_low accuracy_high gap`` (as
    :func:`kbench_core.calibration.reliability_table`) and the group's ``ece``, ``mce`` and
    ``n`` (answers with a confidence). Correct = said_vulnerable equals is_vulnerable;
    failed judgements and answers without a confidence are left out.
    """
    by = (by,) if isinstance(by, str) else tuple(by)
    check_choice("binning", binning, ("uniform", "quantile"))
    frame, _ = _one_judge(judged, judge)
    gid, keys = _groups(frame, by)
    vulnerable, miss_v = _bools(frame["is_vulnerable"])
    said, miss_s = _bools(frame["said_vulnerable"])
    _, miss_f = _bools(frame["target_found"])
    confidence = (frame["confidence"].to_numpy(dtype=float, na_value=np.nan)
                  if "confidence" in frame else np.full(len(frame), np.nan))
    used = ~(miss_v | miss_s | miss_f) & ~np.isnan(confidence)  # as tiers: failed left out
    size = len(keys)
    binned = bin_calibration(gid[used], confidence[used], (said == vulnerable)[used],
                             n_groups=size, n_bins=n_bins, strategy=binning)
    group, bins = np.nonzero(binned.count > 0)
    n = binned.count[group, bins]
    accuracy = binned.correct_sum[group, bins] / n
    mean_conf = binned.confidence_sum[group, bins] / n
    low, high = wilson(binned.correct_sum[group, bins], n)
    table = keys.iloc[group].reset_index(drop=True)
    extra = pd.DataFrame({
        "bin": bins.astype(np.int64), "lo": binned.edges[group, bins],
        "hi": binned.edges[group, bins + 1], "count": n.astype(np.int64),
        "mean_confidence": mean_conf, "accuracy": accuracy, "accuracy_low": low,
        "accuracy_high": high, "gap": mean_conf - accuracy,
        "ece": binned.ece()[group], "mce": binned.mce()[group],
        "n": binned.n[group].astype(np.int64)})
    return pd.concat([table, extra], axis=1)
