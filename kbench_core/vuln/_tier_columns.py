"""The columns of each of BlockBench's seven tiers, one named step each (``_detection`` …
``_location``), written from a group's totals (:class:`kbench_core.vuln.tiers._Totals`);
:func:`kbench_core.vuln.tiers.tiers` calls them in order. Split from :mod:`.tiers`."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kbench_core.vuln._formulas import _Columns
from kbench_core.vuln.definitions import FEW_SAMPLES, REASONING

if TYPE_CHECKING:
    from kbench_core.vuln.tiers import _Totals

def _identity(g: _Totals, by: tuple[str, ...], judge_name: str | None) -> _Columns:
    """The group keys, the judge and what the row rests on (answers, failed judgements,
    distinct samples, and whether they are few)."""
    out = _Columns({c: np.asarray(g.stats.keys[c]) for c in by})
    out["judge"] = np.full(g.size, judge_name, dtype=object)
    out["n"] = g.s["n"].astype(np.int64)
    out["n_missing"] = np.asarray(g.stats.missing).astype(np.int64)
    n_samples = g.stats.n_clusters().astype(np.int64)
    out["n_samples"] = n_samples
    out["few_items"] = n_samples < FEW_SAMPLES
    return out


def _count(g: _Totals, name: str) -> np.ndarray:
    return np.rint(g.total(name)).astype(np.int64)


def _detection(out: dict, g: _Totals) -> None:
    """Tier 1: the confusion counts and the rates built on them."""
    s, core = g.s, g.core
    tp, fp, fn, tn = s["tp"], s["fp"], s["fn"], s["tn"]
    for name, values in (("tp", tp), ("tn", tn), ("fp", fp), ("fn", fn)):
        out[name] = values.astype(np.int64)
    g.rate(out, "accuracy", "correct", "answers", zero_division=np.nan, value=core.accuracy)
    g.rate(out, "precision", "tp", "said")
    g.rate(out, "recall", "tp", "vulnerable")
    # F-beta = (1 + β²)TP / ((1 + β²)TP + β²FN + FP) is a ratio of sums over the answers
    # that are TP, FN or FP: its interval is the rates' (Wilson on the effective n of those
    # answers), the jackknife carrying the unequal weights (round 3 item 5)
    # (only with the composites' intervals, as SPEC has it for F1 and F2)
    if g.composite_intervals:
        g.rate(out, "f1", "f1_num", "f1_den", value=core.f1, units="counted", weighted=True)
        g.rate(out, "f2", "f2_num", "f2_den", value=core.f2, units="counted", weighted=True)
    else:
        out["f1"], out["f2"] = core.f1, core.f2
    g.rate(out, "fpr", "fp", "not_vulnerable")
    g.rate(out, "fnr", "fn", "vulnerable")


def _target(out: dict, g: _Totals) -> None:
    """Tier 2: target detection, lucky guesses, bonus discoveries."""
    out["n_vulnerable"] = _count(g, "vulnerable")
    out["targets_found"] = _count(g, "found")
    # Weighted or partial TDR: Wilson on the equivalent count (TDR x vulnerable answers),
    # whose design effect carries the weights' (Kish) as well as the samples'.
    g.rate(out, "tdr", "credit_weight", "vul_weight", value=g.core.tdr, units="vulnerable")
    out["lucky_guesses"] = _count(g, "lucky")
    g.rate(out, "lucky_guess_rate", "lucky", "tp")
    g.rate(out, "bonus_discovery_rate", "bonus", "answers")


def _findings(out: dict, g: _Totals) -> None:
    """Tier 3, pooled over findings: precision, invalid and hallucination rates,
    over-flagging."""
    findings = g.s["findings"]
    out["total_findings"] = findings.astype(np.int64)
    out["valid_findings"] = g.total("valid").astype(np.int64)
    out["invalid_findings"] = g.s["invalid"].astype(np.int64)
    out["hallucinated_findings"] = g.total("n_hallucinated").astype(np.int64)
    g.rate(out, "finding_precision", "valid_credit", "findings",
           value=g.core.finding_precision)
    g.rate(out, "invalid_rate", "invalid", "findings", value=g.core.invalid_rate)
    g.rate(out, "hallucination_rate", "n_hallucinated", "findings")
    g.mean_t(out, "over_flagging", "invalid", bounds=(0.0, np.inf))


def _reasoning(out: dict, g: _Totals) -> None:
    """Tier 4: mean (t interval) and population SD of each reasoning score over the answers
    that found the target, their mean, and the value the composites used."""
    out["n_reasoning"] = _count(g, "found")
    for name in REASONING:
        g.mean_t(out, f"mean_{name}", name)
    for name in REASONING:
        out[f"std_{name}"] = np.sqrt(g.mean_sd(name)[2])
    out["avg_reasoning"] = g.core.avg_reasoning
    out["composite_reasoning"] = g.core.composite_reasoning


def _type_match(out: dict, g: _Totals) -> None:
    """Tier 5 over the answers that found the target and have a type match: exact, exact or
    semantic, partial."""
    out["n_type_match"] = _count(g, "typed")
    g.rate(out, "exact_match_rate", "exact", "typed")
    g.rate(out, "semantic_match_rate", "semantic", "typed")
    g.rate(out, "partial_match_rate", "partial_match", "typed")


def _calibration(out: dict, g: _Totals) -> None:
    """Tier 6 over the answers with a confidence: ECE, MCE, Brier, over- and
    underconfidence."""
    out["n_confidence"] = _count(g, "stated")
    out["ece"] = g.core.ece  # the plug-in (BlockBench's; biased upward)
    out["ece_l2_debiased"] = g.core.ece_l2_debiased
    out["mce"] = g.core.mce
    g.mean_t(out, "brier", "brier")
    g.rate(out, "overconfidence_rate", "over", "high")
    g.rate(out, "underconfidence_rate", "under", "low")


def _composite(out: dict, g: _Totals) -> None:
    """Tier 7: SUI, TUS (product and geometric mean), LGI, and the renormalisation flags."""
    core = g.core
    out["sui"], out["sui_renormalised"] = core.sui, core.sui_renormalised
    out["tus"], out["tus_geometric"] = core.tus, core.tus_geometric
    out["tus_renormalised"] = core.tus_renormalised
    out["renormalised"] = core.sui_renormalised | core.tus_renormalised
    out["lgi"] = core.lgi


def _location(out: dict, g: _Totals) -> None:
    """Location accuracy: mean line overlap over the found targets with known lines."""
    out["n_location"] = _count(g, "location_n")
    g.mean_t(out, "location_accuracy", "location")
