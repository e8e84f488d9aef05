"""Issue 23 (statistics round 2), the cognitive-bias items: the BMS interval at its boundary
(1), leaderboards that agree with their own numbers (8), the Compare panel's quantity (9) and
the fingerprint flags' uncertainty (13). Coverage claims are checked by small simulations."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kbench_core import kahne
from kbench_core.io import load_run
from kbench_core.schema import INTENSITIES

WEIGHTS = {"weak": (2.0, 0.1), "moderate": (1.0, 0.3), "strong": (0.67, 0.4),
           "adversarial": (0.5, 0.2)}  # (intensity weight w, aggregation weight a)


def _true_bms(control: float, treated: dict[str, float]) -> float:
    """BMS of the true rates, worked from its definition (docs/metrics/bias.md)."""
    mags = {k: min(WEIGHTS[k][0] * abs(p - control), 1.0) for k, p in treated.items()}
    return sum(WEIGHTS[k][1] * m for k, m in mags.items()) / sum(WEIGHTS[k][1] for k in mags)


def _simulated(control: float, treated: dict[str, float], *, trials: int = 50,
               repeats: int = 60, seed: int = 0, fractional: bool = False) -> pd.DataFrame:
    """``repeats`` independent model × bias pairs (one per bias name) drawn from the same
    true rates: ``trials`` trials per condition cell, 0/1 scores (or uniform on [0, 2p])."""
    rng = np.random.default_rng(seed)
    parts = []
    for condition, level, p in [("control", None, control),
                                *(("treatment", k, v) for k, v in treated.items())]:
        size = repeats * trials
        score = rng.random(size) * 2 * p if fractional else (rng.random(size) < p) * 1.0
        parts.append(pd.DataFrame({
            "model": "m", "bias": np.repeat([f"b{i:03d}" for i in range(repeats)], trials),
            "condition": condition, "intensity": level, "domain": "d", "score": score}))
    return pd.concat(parts, ignore_index=True)


# ------------------------------------------------------------------ 1. BMS interval


def test_bms_interval_holds_its_estimate_on_the_sample_run() -> None:
    # Before: synthetic-gamma (planted BMS 0) showed bms 0.000 [0.015, 0.130].
    trials = load_run("sample_data/bias.csv").frame
    table = kahne.bms(trials, ci="bootstrap", n_boot=300)
    assert ((table["bms_low"] <= table["bms"]) & (table["bms"] <= table["bms_high"])).all()
    gamma = table[table["model"] == "synthetic-gamma"]
    assert (gamma["bms"] == 0).all() and (gamma["bms_low"] == 0).all()


ALL4 = dict.fromkeys(INTENSITIES, 0.2)


@pytest.mark.parametrize(("control", "treated", "fractional"), [
    (0.2, ALL4, False),                                     # true BMS 0, four intensities
    (0.5, {"moderate": 0.5, "strong": 0.5}, False),         # true BMS 0, two intensities
    (0.2, ALL4, True),                                      # true BMS 0, fractional scores
    (0.2, dict.fromkeys(INTENSITIES, 0.25), False),         # true BMS 0.043, near 0
    (0.1, {"weak": 0.3, "moderate": 0.5, "strong": 0.7, "adversarial": 0.9}, False),  # 0.40
    (0.0, dict.fromkeys(INTENSITIES, 0.8), False),          # true BMS 0.634
])
def test_bms_interval_covers_the_truth_near_zero_and_inside(control, treated,
                                                            fractional) -> None:
    truth = _true_bms(control, treated)
    table = kahne.bms(_simulated(control, treated, fractional=fractional), ci="bootstrap",
                      n_boot=300)
    assert len(table) == 60
    # The interval always holds the estimate ...
    assert ((table["bms_low"] <= table["bms"] + 1e-12)
            & (table["bms"] <= table["bms_high"] + 1e-12)).all()
    # ... and covers the truth in at least 90 % of 60 independent runs (the percentile
    # bootstrap of BMS covered a true 0 in none: every resample of |Δ̂| lies above 0).
    covered = (table["bms_low"] <= truth + 1e-12) & (truth <= table["bms_high"] + 1e-12)
    assert covered.mean() >= 0.9, (truth, covered.mean())
