"""What a verdict would claim for every row of a differences table at once (shared by
:func:`~kbench_core.compare.compare_models`, :func:`~kbench_core.compare.group_differences`
and the rank intervals, which read its decisions)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .items import Correction


def _directions(table: pd.DataFrame, correction: Correction,
                alpha: float = 0.05) -> pd.Series:
    """Per row of a differences table, what :func:`verdict` would claim on the adjusted p:
    ``"lower"``/``"higher"`` (first model than second), else ``"undecided"``.

    :func:`claims_direction` on every row at once: the quoted p (the adjusted one where an
    adjustment is in force and defined, else the raw one) below ``alpha``, a finite non-zero
    difference, and an interval, where one is shown, that excludes 0."""
    delta = table["delta"].to_numpy(dtype=float, na_value=np.nan)
    low = table["delta_low"].to_numpy(dtype=float, na_value=np.nan)
    high = table["delta_high"].to_numpy(dtype=float, na_value=np.nan)
    raw = table["p_value"].to_numpy(dtype=float, na_value=np.nan)
    adjusted = table["p_adjusted"].to_numpy(dtype=float, na_value=np.nan)
    quoted = np.where(~np.isnan(adjusted), adjusted, raw) if correction else raw
    shown = np.isfinite(low) & np.isfinite(high)
    with np.errstate(invalid="ignore"):
        claimed = (np.isfinite(quoted) & (quoted < alpha) & np.isfinite(delta) & (delta != 0)
                   & (~shown | (low > 0) | (high < 0)))
    directions = np.where(claimed, np.where(delta < 0, "lower", "higher"), "undecided")
    return pd.Series(directions.astype(object), index=table.index, dtype=object)
