"""Calibration of every group at once, the shared helpers of a family with stated confidences:
:func:`calibration_by` (one row per group) and :func:`reliability_by` (the reliability
diagrams' bins), on :func:`group_codes`. The formulas and their sources:
:mod:`kbench_core.calibration`."""

from __future__ import annotations

import numpy as np
import pandas as pd

from kbench_core.calibration.bins import Binned, Strategy, _check_options, bin_calibration
from kbench_core.calibration.scores import _as_float, _pairs
from kbench_core.stats import wilson

__all__ = ["calibration_by", "group_codes", "reliability_binned", "reliability_by",
           "reliability_groups"]


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
    return reliability_binned(binned, keys)


def reliability_binned(binned: Binned, keys: pd.DataFrame) -> pd.DataFrame:
    """The reliability table of answers already binned per group (:class:`Binned`, one row of
    ``keys`` per group): one row per group × non-empty bin. What :func:`reliability_groups`
    finishes, and what an engine's per-bin sums finish without an answer
    (``kbench_core.vuln.reliability`` of the cells an engine sums)."""
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
