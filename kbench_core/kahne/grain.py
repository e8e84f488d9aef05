"""Why a bias frame an engine reduced to weighted tuples cannot be compared trial by trial
(:func:`trial_grain_refusal`): read by :mod:`kbench_core.compare` (which families build on)
and by :mod:`kbench_core.families.bias`, so it lives here, below both."""

from __future__ import annotations

import pandas as pd

from kbench_core.kahne._common import WEIGHT

__all__ = ["PER_BIAS_ONLY", "TRIAL_GRAIN_REFUSED", "TrialGrainRefused", "trial_grain_refusal"]

TRIAL_GRAIN_REFUSED = (
    "this run was reduced by an engine to its distinct (model, bias, condition, intensity, "
    "domain, method, score, confidence) tuples with their counts, so it has no trials to pair: "
    "a per-trial comparison (the score paired by trial) cannot be made on it. Compare the bias "
    "effect (treatment − control), paired by bias, instead; or compare the trials from the "
    "file: `kbench compare FILE --metric score` reads them on every engine (`--engine memory` "
    "loads them in memory; in Python, `kbench_core.engines.load(FILE)` without "
    "`weighted=True`)")

# The ``attrs`` key of the per-item table of a weighted frame (``families.bias.per_item``):
# the columns it can compare (per bias); any other, such as ``score``, is per trial: refused.
PER_BIAS_ONLY = "kbench_per_bias_only"


class TrialGrainRefused(ValueError):
    """A per-trial comparison asked of a weighted bias frame (:func:`trial_grain_refusal`);
    its message is :data:`TRIAL_GRAIN_REFUSED`."""


def trial_grain_refusal(frame: pd.DataFrame, value: str | None = None) -> str | None:
    """Why ``value`` cannot be compared on ``frame`` (:mod:`kbench_core.compare` pairs rows
    as trials): :data:`TRIAL_GRAIN_REFUSED` when ``frame`` is weighted (its rows are tuples
    standing for many trials, :func:`kbench_core.kahne.row_weights`: no value of it can be
    paired), or when it is the per-item table of a weighted frame
    (:func:`kbench_core.families.bias.per_item`, :data:`PER_BIAS_ONLY`) and ``value`` is
    not one of its per-bias columns (``score``: the
    trials are not there, so nothing would be paired and the comparison would only say "no
    shared items"). None otherwise (``value`` None: whether any per-trial value is
    refused)."""
    if WEIGHT in frame:
        return TRIAL_GRAIN_REFUSED
    per_bias = frame.attrs.get(PER_BIAS_ONLY)
    if per_bias is not None and (value is None or value not in per_bias):
        return TRIAL_GRAIN_REFUSED
    return None
