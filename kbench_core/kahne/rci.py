"""RCI, response consistency index per model × bias (``docs/metrics/bias.md``)."""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd

from kbench_core.schema import INTENSITIES
from kbench_core.stats import check_choice

from ._common import TOLERANCE, _frame, _prepare, _stats, _Trials

# ----------------------------------------------------------------------------- RCI


def rci(trials: pd.DataFrame, *,
        variance: Literal["population", "sample"] = "population") -> pd.DataFrame:
    r"""Response Consistency Index per model × bias.

    Notes
    -----
    Per condition cell (control, each intensity, each debiasing method) over its known scores:
    variance v (population by default; ``variance="sample"`` is the seed's ``stdev**2``, 0 for
    one trial), :math:`v_{max} = \mu(1-\mu)` when :math:`0<\mu<1` else 0.25,
    :math:`\mathrm{consistency} = 1 - \min(v / v_{max}, 1)`, ``stable`` = v < 0.25/n. Per bias:
    the mean consistency, whether every cell is stable, and the total trials ``n``. No known
    score → NaN with ``has_data`` false (the seed reported 1.0).
    """
    check_choice("variance", variance, ("population", "sample"))
    t = _prepare(trials)
    return _frame(t, _rci(t, variance))


def _rci(t: _Trials, variance: str) -> dict[str, object]:
    """The columns of :func:`rci` after ``model`` and ``bias``, one value per pair
    (one row per pair of ``t``)."""
    size = t.n_pairs
    k = len(INTENSITIES)
    n_cells = 1 + k + len(t.methods)
    cell = np.select([t.condition == 0, (t.condition == 1) & (t.intensity >= 0),
                      (t.condition == 2) & (t.method >= 0)],
                     [0, 1 + t.intensity, 1 + k + t.method], -1)
    per = _stats(np.where(cell >= 0, t.pair * n_cells + cell, -1), t.score, size * n_cells,
                 weight=t.weight)
    present = np.flatnonzero(per.n > 0)
    n, mu = per.n[present], per.mean[present]
    var = per.var(0 if variance == "population" else 1)[present]
    var = np.where(n == 1, 0.0, var)  # one trial: the seed's variance 0
    vmax = np.where((mu > 0) & (mu < 1), mu * (1 - mu), 0.25)
    consistency = 1 - np.minimum(var / vmax, 1.0)
    stable = var < 0.25 / n - TOLERANCE
    owner = present // n_cells
    count = np.bincount(owner, minlength=size)
    out: dict[str, object] = {}
    with np.errstate(invalid="ignore", divide="ignore"):
        out["consistency"] = np.bincount(owner, weights=consistency, minlength=size) / count
    unstable = np.bincount(owner, weights=~stable, minlength=size)
    out["stable"] = pd.array(np.where(count > 0, unstable == 0, pd.NA), dtype="boolean")
    out["n_cells"] = count
    total = np.bincount(owner, weights=n, minlength=size).astype(int)
    out["n"] = total
    out["has_data"] = total > 0
    return out
