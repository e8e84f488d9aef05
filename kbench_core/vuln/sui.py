"""SUI taken apart and put together again: each component's contribution to a tiers table's
SUI, and SUI recomputed under other weights without touching the answers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from kbench_core.vuln._formulas import _weighted_mean
from kbench_core.vuln._prepare import _weights
from kbench_core.vuln.composite import composite_intervals
from kbench_core.vuln.definitions import SUI_WEIGHTS

SUI_COMPONENTS: dict[str, str] = {"f2": "F2", "tdr": "Target detection", "finding_precision":
                                  "Finding precision", "reasoning": "Reasoning",
                                  "calibration": "Calibration (1 − ECE)"}


def sui_contributions(table: pd.DataFrame, *, by: Sequence[str] = ("model",),
                      sui_weights: Mapping[str, float] | None = None) -> pd.DataFrame:
    """What each component adds to SUI, per group of a :func:`tiers` table (long format).

    Returns the ``by`` columns, ``component`` (``f2, tdr, finding_precision, reasoning,
    calibration``), ``label``, ``value`` (the component, 1 − ECE for calibration),
    ``weight`` (renormalised over the components present, as SUI does) and ``contribution``
    = weight × value; the contributions of a group add up to its SUI.
    """
    by = (by,) if isinstance(by, str) else tuple(by)
    weights = _weights("sui_weights", sui_weights, SUI_WEIGHTS, tuple(SUI_WEIGHTS))
    values = pd.DataFrame({"f2": table["f2"], "tdr": table["tdr"],
                           "finding_precision": table["finding_precision"],
                           "reasoning": _reasoning_column(table),
                           "calibration": 1 - table["ece"]})
    raw = np.array([weights[k] for k in SUI_WEIGHTS])
    present = values.notna().to_numpy()
    total = (present * raw).sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        effective = np.where(present & (total > 0), raw / total, np.nan)
    # component by component, each over every group: built column by column at once (a
    # frame per component, concatenated, was a third of the SUI chart's time)
    n, components = len(table), list(SUI_WEIGHTS)
    long = table[list(by)].iloc[np.tile(np.arange(n), len(components))].reset_index(drop=True)
    value = values.to_numpy(dtype=float).T.ravel()
    weight = effective.T.ravel()
    long["component"] = np.repeat(np.array(components, dtype=object), n)
    long["label"] = np.repeat(np.array([SUI_COMPONENTS[c] for c in components], dtype=object),
                              n)
    long["value"] = value
    long["weight"] = weight
    long["contribution"] = weight * value
    return long


def _reasoning_column(table: pd.DataFrame) -> pd.Series:
    """The reasoning component the table's composites used (``composite_reasoning``; tables
    from before it existed: ``avg_reasoning``)."""
    return table["composite_reasoning" if "composite_reasoning" in table else "avg_reasoning"]


def reweight_sui(table: pd.DataFrame,
                 sui_weights: Mapping[str, float] | None = None) -> pd.DataFrame:
    """A :func:`tiers` table with SUI recomputed under other weights, from its component
    columns (``f2, tdr, finding_precision, avg_reasoning, ece``): the same value as calling
    :func:`tiers` again with ``sui_weights``, without touching the answers (for live sliders).

    SUI's interval is built from its components' intervals (MOVER,
    :mod:`kbench_core.vuln.composite`), so where the table has them (``tiers(...,
    ci="bootstrap")``) ``sui_low`` and ``sui_high`` are rebuilt under the new weights, as
    :func:`tiers` would give them; otherwise they are dropped.
    """
    weights = _weights("sui_weights", sui_weights, SUI_WEIGHTS, tuple(SUI_WEIGHTS))
    if sum(weights.values()) <= 0:
        raise ValueError("sui_weights must not all be 0")
    out = table.drop(columns=["sui_low", "sui_high"], errors="ignore").copy()
    out["sui"], out["sui_renormalised"] = _weighted_mean(
        {"f2": out["f2"].to_numpy(dtype=float), "tdr": out["tdr"].to_numpy(dtype=float),
         "finding_precision": out["finding_precision"].to_numpy(dtype=float),
         "reasoning": _reasoning_column(out).to_numpy(dtype=float),
         "calibration": 1 - out["ece"].to_numpy(dtype=float)}, weights)
    if "tus_renormalised" in out:
        out["renormalised"] = out["sui_renormalised"] | out["tus_renormalised"]
    if all(f"{name}_low" in out for name in ("f2", "tdr", "finding_precision", "ece",
                                             "accuracy", "invalid_rate")):
        composite_intervals(out, weights)
    return out
