"""Calibration of stated confidence: reliability tables, ECE, MCE and the Brier score
(``docs/metrics/vuln.md``).

A detector states a confidence c ∈ [0, 1] and is right or wrong (``correct`` ∈ {0, 1}). The
confidences are cut into bins; per bin the mean confidence and the accuracy are compared:

.. math::
    \\mathrm{ECE} = \\sum_b \\frac{n_b}{N}\\,|\\mathrm{acc}_b - \\mathrm{conf}_b|,\\qquad
    \\mathrm{MCE} = \\max_{b:\\,n_b>0} |\\mathrm{acc}_b - \\mathrm{conf}_b|,\\qquad
    \\mathrm{Brier} = \\frac1N \\sum_i (c_i - y_i)^2

Bins are right-closed, ``(lo, hi]``, with 0 in the first bin. ``strategy="uniform"`` cuts [0, 1]
into ``n_bins`` equal widths (the seed's 10 fixed bins); ``strategy="quantile"`` puts the edges at
the percentiles of the confidences (linear interpolation), so every bin holds about the same
number of answers: the critique's remedy for confidences that crowd into 0.9–1.0. Both give
exactly scikit-learn's ``calibration_curve`` bins (tested).

Everything is computed for many groups at once (:func:`bin_calibration` takes a group code per
answer and optional integer weights), which is how :mod:`kbench_core.vuln` gets every model's ECE
in one pass and how the bootstrap reweights answers without copying them. Written by hand:
scikit-learn's ``calibration_curve`` handles one group, no weights, and no ECE.

References
----------
Naeini, Cooper & Hauskrecht (2015), "Obtaining well calibrated probabilities using Bayesian
binning", AAAI (ECE, MCE). Guo, Pleiss, Sun & Weinberger (2017), "On calibration of modern
neural networks", ICML (reliability diagrams). Brier (1950), Monthly Weather Review 78(1).
BlockBench metrics, tier 6 (``docs/metrics/vuln.md``).

The package's modules, re-exported here: :mod:`~kbench_core.calibration.bins` (the bins of
many groups at once and the simultaneous intervals), :mod:`~kbench_core.calibration.scores`
(one detector's reliability table, ECE, MCE and Brier score) and
:mod:`~kbench_core.calibration.groups` (every group at once: :func:`calibration_by`,
:func:`reliability_by`).
"""

from __future__ import annotations

from kbench_core.calibration.bins import (
    STRATEGIES,
    Binned,
    SortedAnswers,
    Strategy,
    bin_calibration,
    bin_ids,
    ece_interval,
    mce_interval,
    mce_interval_of,
    quantile_edges,
    sort_answers,
)
from kbench_core.calibration.groups import (
    calibration_by,
    group_codes,
    reliability_binned,
    reliability_by,
    reliability_groups,
)
from kbench_core.calibration.scores import brier, ece, ece_l2_debiased, mce, reliability_table

__all__ = ["STRATEGIES", "Binned", "SortedAnswers", "Strategy", "bin_calibration", "bin_ids",
           "brier", "calibration_by", "ece", "ece_interval", "ece_l2_debiased", "group_codes",
           "mce", "mce_interval", "mce_interval_of", "quantile_edges", "reliability_binned",
           "reliability_by", "reliability_groups", "reliability_table", "sort_answers"]
