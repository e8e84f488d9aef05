r"""Intervals of the composites (SUI, TUS, its geometric mean, LGI) built from their
components' own intervals (MOVER, Zou & Donner 2008), for ``tiers(..., ci="bootstrap")``.

A percentile bootstrap of a composite is not monotone in its components near the boundary:
where every replicate gave the same value (a perfect detector) the interval was widened to a
Wilson-type bound, and one missed target later the percentile interval was narrower, its lower
bound higher (the sample's perfect detector SUI 0.940 [0.821, 0.982]; after missing one of 28
targets 0.931 [0.910, 0.940]). Built from the components' score intervals the composite's
interval moves with every component:

* **SUI** = Σ_k a_k c_k (a_k = w_k / Σ w over the present components): MOVER with the
  components' correlations taken as 1, L = Σ a_k ℓ_k and U = Σ a_k u_k. The components
  (F2, TDR, finding precision, reasoning, 1 − ECE) are computed from the same contracts and
  rise together; for positively correlated components correlation 1 is the conservative
  MOVER (Zou & Donner 2008, eq. 5 with r = 1), and it is monotone in every bound.
* **TUS** = Π c_k^{3/k} and its geometric mean Π c_k^{1/k}, increasing in every component:
  the same projection, the product of the bounds.
* **LGI** = accuracy − TDR, a difference of positively correlated rates: MOVER with
  correlation 0 (conservative for r ≥ 0), L = LGI − √((acc − ℓ_acc)² + (u_TDR − TDR)²),
  U = LGI + √((u_acc − acc)² + (TDR − ℓ_TDR)²).

Component intervals: F2, TDR, finding precision, accuracy, invalid rate are the tiers'
clustered Wilson intervals; the reasoning score (the mean of the present reasoning means) the
mean of their clustered t intervals' bounds (MOVER, r = 1), exactly 0 where a group found no
target (its value by rule); calibration 1 − ECE with the ECE's simultaneous interval
(:func:`kbench_core.calibration.ece_interval`). A component whose value is set by convention
(finding precision 1 with no findings) has no sampling interval and enters at its value.
Written by hand (sums over columns); ``docs/statistics.md``, round 3 item 5.

References
----------
Zou, G. Y. & Donner, A. (2008). Construction of confidence limits about effect measures: a
general approach. *Statistics in Medicine* 27, 1693–1702. Newcombe, R. G. (2013).
*Confidence Intervals for Proportions and Related Measures of Effect Size*, ch. 7.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from kbench_core.vuln.definitions import REASONING, SUI_WEIGHTS


def _bounds(table: pd.DataFrame, name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(value, low, high) of a column; a missing bound (no sampling interval: a value set
    by convention) is the value itself."""
    value = table[name].to_numpy(dtype=float)
    low = table[f"{name}_low"].to_numpy(dtype=float) if f"{name}_low" in table else value
    high = table[f"{name}_high"].to_numpy(dtype=float) if f"{name}_high" in table else value
    return value, np.where(np.isnan(low), value, low), np.where(np.isnan(high), value, high)


def _reasoning(table: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The composites' reasoning score with its interval: the mean of the present reasoning
    means' bounds (their mean's MOVER with correlation 1), or exactly the value where it was
    set by rule (0 for a group that found no target)."""
    parts = [_bounds(table, f"mean_{name}") for name in REASONING]
    value = np.column_stack([p[0] for p in parts])
    present = ~np.isnan(value)
    count = present.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        low = np.where(present, np.column_stack([p[1] for p in parts]), 0.0).sum(axis=1) / count
        high = np.where(present, np.column_stack([p[2] for p in parts]), 0.0).sum(axis=1) / count
    used = table["composite_reasoning"].to_numpy(dtype=float)
    ruled = ~np.isclose(used, table["avg_reasoning"].to_numpy(dtype=float), equal_nan=True)
    return (used, np.where(ruled, used, np.where(count > 0, low, np.nan)),
            np.where(ruled, used, np.where(count > 0, high, np.nan)))


def composite_intervals(table: pd.DataFrame, weights: Mapping[str, float]) -> None:
    """Insert ``<name>_low``/``_high`` after ``sui``, ``tus``, ``tus_geometric`` and ``lgi``
    of a tier table that has its components' intervals (``ece_low``/``_high`` included)."""
    ece, ece_low, ece_high = _bounds(table, "ece")
    components = {
        "f2": _bounds(table, "f2"), "tdr": _bounds(table, "tdr"),
        "finding_precision": _bounds(table, "finding_precision"),
        "reasoning": _reasoning(table), "calibration": (1 - ece, 1 - ece_high, 1 - ece_low)}
    value = np.column_stack([components[k][0] for k in SUI_WEIGHTS])
    low = np.column_stack([components[k][1] for k in SUI_WEIGHTS])
    high = np.column_stack([components[k][2] for k in SUI_WEIGHTS])
    w = np.array([weights[k] for k in SUI_WEIGHTS])
    present = ~np.isnan(value)
    used = present * w
    total = used.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        sui_low = np.where(present, low, 0.0) @ w / total
        sui_high = np.where(present, high, 0.0) @ w / total
        sui_low = np.where(np.isnan(low).any(axis=1, where=present), np.nan, sui_low)
    sui_high = np.where(np.isnan(sui_low), np.nan, sui_high)
    intervals = {"sui": (sui_low, sui_high)}

    # TUS: the product of the bounds with TUS's exponents (3/k over the k present parts)
    parts = [components["tdr"], components["reasoning"]]
    invalid, invalid_low, invalid_high = _bounds(table, "invalid_rate")
    parts.append((1 - invalid, 1 - invalid_high, 1 - invalid_low))
    values = np.column_stack([p[0] for p in parts])
    present = ~np.isnan(values)
    k = np.maximum(present.sum(axis=1), 1)
    ends = []
    for side in (1, 2):
        bound = np.clip(np.column_stack([p[side] for p in parts]), 0.0, 1.0)
        product = np.where(present, bound, 1.0).prod(axis=1)
        ends.append(product)
    bad = (present & np.isnan(np.column_stack([p[1] for p in parts]))).any(axis=1)
    bad |= ~present.any(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        intervals["tus"] = tuple(np.where(bad, np.nan, e ** (3.0 / k)) for e in ends)
        intervals["tus_geometric"] = tuple(np.where(bad, np.nan, e ** (1.0 / k)) for e in ends)

    # LGI = accuracy − TDR: MOVER for a difference, correlation 0
    acc, acc_low, acc_high = _bounds(table, "accuracy")
    tdr, tdr_low, tdr_high = components["tdr"]
    lgi = table["lgi"].to_numpy(dtype=float)
    intervals["lgi"] = (np.clip(lgi - np.hypot(acc - acc_low, tdr_high - tdr), -1.0, 1.0),
                        np.clip(lgi + np.hypot(acc_high - acc, tdr - tdr_low), -1.0, 1.0))

    for name, (lo, hi) in intervals.items():
        for column in (f"{name}_low", f"{name}_high"):
            if column in table:
                del table[column]
        position = table.columns.get_loc(name) + 1
        value = table[name].to_numpy(dtype=float)
        table.insert(position, f"{name}_low", np.where(np.isnan(lo), np.nan,
                                                       np.minimum(lo, value)))
        table.insert(position + 1, f"{name}_high", np.where(np.isnan(hi), np.nan,
                                                            np.maximum(hi, value)))
