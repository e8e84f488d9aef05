"""Reliability tables of every group at once (bins, accuracy with Wilson intervals, ECE, MCE),
for reliability diagrams."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from kbench_core.calibration import bin_calibration, reliability_binned, reliability_groups
from kbench_core.stats import check_choice
from kbench_core.vuln._prepare import _bools, _groups, _one_judge
from kbench_core.vuln.cells import CellSource
from kbench_core.vuln.definitions import Binning


def _answers(judged: pd.DataFrame, by: tuple[str, ...], binning: Binning, judge: str | None
             ) -> tuple[np.ndarray, pd.DataFrame, np.ndarray, np.ndarray]:
    """The groups' keys and their answers' group codes, confidences and outcomes (correct =
    said_vulnerable equals is_vulnerable; failed judgements and answers without a confidence
    left out, as tiers does)."""
    check_choice("binning", binning, ("uniform", "quantile"))
    frame, _ = _one_judge(judged, judge)
    gid, keys = _groups(frame, by)
    vulnerable, miss_v = _bools(frame["is_vulnerable"])
    said, miss_s = _bools(frame["said_vulnerable"])
    _, miss_f = _bools(frame["target_found"])
    confidence = (frame["confidence"].to_numpy(dtype=float, na_value=np.nan)
                  if "confidence" in frame else np.full(len(frame), np.nan))
    used = ~(miss_v | miss_s | miss_f) & ~np.isnan(confidence)
    return gid[used], keys, confidence[used], (said == vulnerable)[used]


def _binned(judged: pd.DataFrame, by: tuple[str, ...], n_bins: int, binning: Binning,
            judge: str | None) -> tuple[pd.DataFrame, Any]:
    """The groups' keys and their answers' calibration bins."""
    gid, keys, confidence, correct = _answers(judged, by, binning, judge)
    binned = bin_calibration(gid, confidence, correct, n_groups=len(keys), n_bins=n_bins,
                             strategy=binning)
    return keys, binned


def reliability(judged: pd.DataFrame | CellSource, *, by: Sequence[str] = ("model",),
                n_bins: int = 10, binning: Binning = "uniform",
                judge: str | None = None) -> pd.DataFrame:
    """Reliability tables of every group at once, for reliability diagrams.

    One row per group × non-empty bin: the ``by`` columns, ``bin lo hi count
    mean_confidence accuracy accuracy_low accuracy_high gap`` (as
    :func:`kbench_core.calibration.reliability_table`) and the group's ``ece``, ``mce`` and
    ``n`` (answers with a confidence). Correct = said_vulnerable equals is_vulnerable;
    failed judgements and answers without a confidence are left out. The tables are
    :func:`kbench_core.calibration.reliability_groups`'s, the shared per-group step.
    ``judged`` may also be one judge's :class:`~kbench_core.vuln.cells.CellSource` (an
    engine's sums): the same table from its calibration cells (per group × bin × sample
    sums), no answer read (:func:`kbench_core.calibration.reliability_binned`).
    """
    by = (by,) if isinstance(by, str) else tuple(by)
    if isinstance(judged, CellSource):
        check_choice("binning", binning, ("uniform", "quantile"))
        if judge not in (None, judged.judge):
            raise ValueError(f"these cells are judge {judged.judge!r}'s; reliability was "
                             f"asked for judge={judge!r}")
        cells = judged.stats(by)  # the groups' keys and number
        keys = pd.DataFrame({c: cells.keys[c] for c in by}) if by else \
            pd.DataFrame(index=range(1))
        binned = judged.bins(by, n_bins, binning, samples=False).binned(cells.size)
        return reliability_binned(binned, keys)
    gid, keys, confidence, correct = _answers(judged, by, binning, judge)
    return reliability_groups(gid, keys, confidence, correct, n_bins=n_bins, strategy=binning)


def rebin(table: pd.DataFrame, judged: pd.DataFrame, *, by: Sequence[str] = ("model",),
          n_bins: int = 10, binning: Binning = "uniform",
          judge: str | None = None) -> pd.DataFrame:
    """A :func:`~kbench_core.vuln.tiers` table of ``judged`` with ECE and MCE in other bins:
    the values ``tiers(judged, by=by, n_bins=n_bins, binning=binning)`` gives, without
    recomputing the other tiers (for live bin sliders). The bins enter SUI through 1 − ECE, so
    recompute SUI afterwards with :func:`~kbench_core.vuln.reweight_sui`; bootstrap intervals
    of ECE, MCE and SUI belong to the bins they were drawn with and are dropped."""
    by = (by,) if isinstance(by, str) else tuple(by)
    keys, binned = _binned(judged, by, n_bins, binning, judge)
    lookup = {tuple(map(str, key)): k for k, key in enumerate(keys.itertuples(index=False))}
    rows = np.array([lookup[tuple(map(str, key))]
                     for key in table[list(by)].itertuples(index=False)], dtype=np.int64)
    out = table.drop(columns=[c for c in ("ece_low", "ece_high", "ece_l2_debiased_low",
                                          "ece_l2_debiased_high", "mce_low", "mce_high",
                                          "sui_low", "sui_high", "sui_rank_low",
                                          "sui_rank_high") if c in table])
    out["ece"] = binned.ece()[rows]
    out["ece_l2_debiased"] = binned.ece_l2_debiased()[rows]
    out["mce"] = binned.mce()[rows]
    return out
