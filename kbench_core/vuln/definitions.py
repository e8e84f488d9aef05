"""What BlockBench's metrics are: the seven tiers and their metrics, which way each is better,
their display labels, the default SUI weights, the critique's severity weights, and the
thresholds (confidence bands, few samples) the metrics use."""

from __future__ import annotations

from kbench_core.calibration import Strategy
from kbench_core.schema import TYPE_MATCHES

SUI_WEIGHTS: dict[str, float] = {"f2": 0.25, "tdr": 0.25, "finding_precision": 0.15,
                                 "reasoning": 0.25, "calibration": 0.10}
# The critique's suggestion (critical = 3x, high = 2x, medium = 1x; low not named, so 1x).
SEVERITY_WEIGHTS: dict[str, float] = {"critical": 3.0, "high": 2.0, "medium": 1.0, "low": 1.0}
VALID_COUNTS: tuple[str, ...] = ("n_target_match", "n_partial_match", "n_bonus_valid")
OVERCONFIDENT_ABOVE = 0.8
FEW_SAMPLES = 30  # a leaderboard marks a detector judged on fewer samples than this
UNDERCONFIDENT_BELOW = 0.5
REASONING: tuple[str, ...] = ("rcir", "ava", "fsv")
# Rates whose mean over difficulty tiers (``<rate>_difficulty_mean``) tiers() adds when the
# run has a ``difficulty`` column: BlockBench reports its DS results per tier and their mean.
DIFFICULTY_MEAN_RATES: tuple[str, ...] = ("accuracy", "precision", "recall", "f1", "f2", "tdr",
                                          "lucky_guess_rate", "finding_precision")

TIERS: dict[str, tuple[str, ...]] = {
    "1 detection": ("tp", "tn", "fp", "fn", "accuracy", "precision", "recall", "f1", "f2",
                    "fpr", "fnr"),
    "2 target": ("tdr", "lucky_guess_rate", "bonus_discovery_rate"),
    "3 findings": ("finding_precision", "invalid_rate", "hallucination_rate", "over_flagging"),
    "4 reasoning": ("mean_rcir", "mean_ava", "mean_fsv", "std_rcir", "std_ava", "std_fsv",
                    "avg_reasoning"),
    "5 type match": ("exact_match_rate", "semantic_match_rate", "partial_match_rate"),
    "6 calibration": ("ece", "ece_l2_debiased", "mce", "brier", "overconfidence_rate",
                      "underconfidence_rate"),
    "7 composite": ("sui", "tus", "tus_geometric", "lgi"),
    "location": ("location_accuracy",),
}
LOWER_IS_BETTER: frozenset[str] = frozenset({
    "fp", "fn", "fpr", "fnr", "lucky_guess_rate", "invalid_rate", "hallucination_rate",
    "over_flagging", "std_rcir", "std_ava", "std_fsv", "ece", "ece_l2_debiased", "mce", "brier",
    "overconfidence_rate", "underconfidence_rate", "lgi"})
HIGHER_IS_BETTER: frozenset[str] = frozenset(
    m for metrics in TIERS.values() for m in metrics) - LOWER_IS_BETTER
METRIC_LABELS: dict[str, str] = {
    "tp": "TP", "tn": "TN", "fp": "FP", "fn": "FN", "accuracy": "Accuracy",
    "precision": "Precision", "recall": "Recall", "f1": "F1", "f2": "F2", "fpr": "FPR",
    "fnr": "FNR", "tdr": "Target detection rate (TDR)", "lucky_guess_rate": "Lucky-guess rate",
    "bonus_discovery_rate": "Bonus discovery rate", "finding_precision": "Finding precision",
    "invalid_rate": "Invalid-finding rate", "hallucination_rate": "Hallucination rate",
    "over_flagging": "Over-flagging (invalid findings per answer)", "mean_rcir": "Mean RCIR",
    "mean_ava": "Mean AVA", "mean_fsv": "Mean FSV", "std_rcir": "SD RCIR", "std_ava": "SD AVA",
    "std_fsv": "SD FSV", "avg_reasoning": "Mean reasoning", "exact_match_rate": "Exact type",
    "semantic_match_rate": "Exact or semantic type", "partial_match_rate": "Partial type",
    "ece": "ECE (plug-in, biased upward)",
    "ece_l2_debiased": "Calibration error, debiased (ℓ2)", "mce": "MCE", "brier": "Brier",
    "overconfidence_rate": "Overconfidence",
    "underconfidence_rate": "Underconfidence", "sui": "SUI", "tus": "TUS",
    "tus_geometric": "TUS (geometric)", "lgi": "Lucky-guess indicator (LGI)",
    "location_accuracy": "Location accuracy",
}

Binning = Strategy
_EXACT, _SEMANTIC, _PARTIAL = (TYPE_MATCHES.index(k) for k in ("exact", "semantic", "partial"))
_CLASSIFICATIONS = {"TARGET_MATCH", "PARTIAL_MATCH", "BONUS_VALID", "HALLUCINATED",
                    "MISCHARACTERIZED", "DESIGN_CHOICE", "OUT_OF_SCOPE", "SECURITY_THEATER",
                    "INFORMATIONAL"}


# Columns of the per-answer quantity matrix that the composites need (summed per group;
# kbench_core.vuln._prepare fills it, _formulas and the bootstrap read it).
_Q = ("n", "tp", "fp", "fn", "tn", "vul_weight", "credit_weight", "valid_credit", "findings",
      "invalid", "rcir_sum", "ava_sum", "fsv_sum", "rcir_n", "ava_n", "fsv_n", "vulnerable",
      "found")
_QI = {name: i for i, name in enumerate(_Q)}
