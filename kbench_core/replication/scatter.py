"""What the human-against-agent effect scatter draws past :data:`MAX_POINTS` tests: the tests'
counts on a grid and each model's weighted fit line (:class:`DensityGrid`), made from the
tests (:func:`density_grid`) or from the sums an engine returns
(``kbench_core.engines.replication.scatter_grid``), so the figure
(:func:`kbench_core.figures.replication.effect_scatter`) draws both alike.

Effects beyond ±:data:`AXIS_LIMIT` are drawn at the edge (clamped) and counted; the fit lines
are the weighted least-squares lines of the drawn (clamped) effects, each test weighted by its
ECS weight. Written by hand: a two-dimensional histogram and a weighted line are numpy's, but
the same numbers from per-finding sums are not in any library.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = ["AXIS_LIMIT", "DENSITY_BINS", "MAX_POINTS", "DensityGrid", "axis_range",
           "density_grid", "fit_from_moments", "weighted_fit"]

AXIS_LIMIT = 4.0  # |d| beyond this is drawn at the edge of the axes (and counted)
MAX_POINTS = 20_000  # beyond this the scatter becomes a density grid (the browser gets counts)
DENSITY_BINS = 80

Fit = tuple[float, float] | None


@dataclass(frozen=True)
class DensityGrid:
    """The scatter of many tests: the axes' range ``[lo, hi]`` (both axes), the ``models`` in
    order, each model's counts on a :data:`DENSITY_BINS` × :data:`DENSITY_BINS` grid
    (``counts[model][i, j]``: human d in bin i, agent d in bin j, numpy's ``histogram2d``
    bins), each model's weighted fit and the pooled one (``fits[None]``; slope, intercept, or
    None where the line is undefined), and how many tests lie beyond the axes."""

    lo: float
    hi: float
    models: tuple[str, ...]
    counts: Mapping[str, np.ndarray]
    fits: Mapping[str | None, Fit]
    n_clamped: int
    n_points: int


def axis_range(low: float, high: float) -> tuple[float, float]:
    """Both axes' range from the smallest and largest finite effect of either side: 0 and 1
    always shown, 0.1 of margin, at most ±:data:`AXIS_LIMIT`."""
    lo = min(low, 0.0) - 0.1
    hi = max(high, 1.0) + 0.1
    return max(lo, -AXIS_LIMIT), min(hi, AXIS_LIMIT)


def fit_from_moments(sw: float, mx: float, my: float, sxx: float, sxy: float,
                     n: float) -> Fit:
    """The weighted least-squares line y = a + b·x from the weighted moments (Σw, the means,
    the centred sums Σw(x − x̄)² and Σw(x − x̄)(y − ȳ)): b = Sxy/Sxx, a = ȳ − b·x̄; None
    for fewer than two tests or no spread in x (its rounding noise recognised as none, as
    ECS does)."""
    if n < 2 or not sw > 0 or not sxx > 1e-24 * max(mx * mx, 1.0) * sw:
        return None
    slope = sxy / sxx
    return float(slope), float(my - slope * mx)


def weighted_fit(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> Fit:
    """:func:`fit_from_moments` of the tests themselves (two-pass moments)."""
    if len(x) < 2:
        return None
    sw = float(w.sum())
    if not sw > 0:
        return None
    mx, my = float((w * x).sum() / sw), float((w * y).sum() / sw)
    dx = x - mx
    return fit_from_moments(sw, mx, my, float((w * dx * dx).sum()),
                            float((w * dx * (y - my)).sum()), len(x))


def density_grid(points: pd.DataFrame, weight: np.ndarray, lo: float, hi: float,
                 models: list[str], n_clamped: int) -> DensityGrid:
    """The grid of tests already clamped to ``[lo, hi]`` (``points``: ``model, d_h, d_a``;
    ``weight`` each test's ECS weight): numpy's ``histogram2d`` per model, the weighted fit
    per model and pooled."""
    model = points["model"].astype(str).to_numpy()
    x, y = points["d_h"].to_numpy(float), points["d_a"].to_numpy(float)
    counts, fits = {}, {}
    for name in models:
        mine = model == name
        counts[name] = np.histogram2d(x[mine], y[mine], bins=DENSITY_BINS,
                                      range=[[lo, hi], [lo, hi]])[0]
        fits[name] = weighted_fit(x[mine], y[mine], weight[mine])
    fits[None] = weighted_fit(x, y, weight)
    return DensityGrid(lo, hi, tuple(models), counts, fits, int(n_clamped), len(points))
