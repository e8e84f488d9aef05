"""kbench_core.vuln.tiers: hand-worked values, the options, planted truths, intervals."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps
from sklearn.metrics import f1_score, fbeta_score
from statsmodels.stats.proportion import proportion_confint

from kbench_core import calibration, samples, vuln
from kbench_core.schema import FINDING_COUNTS

nan = np.nan


def small() -> pd.DataFrame:
    """Eight answers of detector "m" (judge "j"), worked by hand below, plus detector "quiet"
    that says "safe" to everything with confidence 0.5 and reports nothing.

    ====  ====  ====  =====  ====  ========  =============  ===============================
    s     vul   said  found  conf  type      rcir/ava/fsv   findings
    ====  ====  ====  =====  ====  ========  =============  ===============================
    s1    yes   yes   yes    0.9   exact     .8 / .6 / .4   target, bonus      (critical)
    s2    yes   yes   yes    0.8   partial   .6 / .4 / .2   partial            (high)
    s3    yes   yes   no     0.7   —         —              mischaracterized,
                                                            hallucinated       (medium)
    s4    yes   no    no     0.6   —         —              —                  (low)
    s5    no    yes   —      0.95  —         —              hallucinated, theater
    s6    no    no    —      0.3   —         —              —
    s7    no    no    —      0.2   —         —              informational
    s8    yes   yes   yes    1.0   semantic  .9 / .8 / —    target, WRONG_ROOT_CAUSE (—)
    ====  ====  ====  =====  ====  ========  =============  ===============================
    """
    zero = dict.fromkeys(FINDING_COUNTS, 0)
    rows = [
        dict(sample="s1", is_vulnerable=True, said_vulnerable=True, target_found=True,
             confidence=0.9, type_match="exact", rcir=0.8, ava=0.6, fsv=0.4,
             severity="critical", claimed_lines="10;11", true_lines="10;11;12;13",
             **{**zero, "n_target_match": 1, "n_bonus_valid": 1}),
        dict(sample="s2", is_vulnerable=True, said_vulnerable=True, target_found=True,
             confidence=0.8, type_match="partial", rcir=0.6, ava=0.4, fsv=0.2,
             severity="high", claimed_lines="20", true_lines="20",
             **{**zero, "n_partial_match": 1}),
        dict(sample="s3", is_vulnerable=True, said_vulnerable=True, target_found=False,
             confidence=0.7, type_match="not_mentioned", severity="medium",
             true_lines="30", **{**zero, "n_mischaracterized": 1, "n_hallucinated": 1}),
        dict(sample="s4", is_vulnerable=True, said_vulnerable=False, target_found=False,
             confidence=0.6, type_match=None, severity="low", true_lines="40", **zero),
        dict(sample="s5", is_vulnerable=False, said_vulnerable=True, target_found=False,
             confidence=0.95, **{**zero, "n_hallucinated": 1, "n_security_theater": 1}),
        dict(sample="s6", is_vulnerable=False, said_vulnerable=False, target_found=False,
             confidence=0.3, **zero),
        dict(sample="s7", is_vulnerable=False, said_vulnerable=False, target_found=False,
             confidence=0.2, **{**zero, "n_informational": 1}),
        dict(sample="s8", is_vulnerable=True, said_vulnerable=True, target_found=True,
             confidence=1.0, type_match="semantic", rcir=0.9, ava=0.8, fsv=None,
             severity=None, claimed_lines=None, true_lines="5",
             **{**zero, "n_target_match": 1, "n_other_invalid": 1}),
    ]
    frame = pd.DataFrame(rows)
    frame["model"] = "m"
    quiet = frame[["sample", "is_vulnerable", "severity", "true_lines"]].copy()
    quiet = quiet.assign(model="quiet", said_vulnerable=False, target_found=False,
                         confidence=0.5, **zero)
    frame = pd.concat([frame, quiet], ignore_index=True)
    frame["judge"] = "j"
    frame["prompt_type"] = "direct"
    for column in ("rcir", "ava", "fsv", "confidence"):
        frame[column] = frame[column].astype(float)
    return frame


def row(table: pd.DataFrame, model: str = "m") -> pd.Series:
    return table.set_index("model").loc[model]


# ------------------------------------------------------------------ hand-worked, defaults


def test_tier1_detection() -> None:
    m = row(vuln.tiers(small()))
    # TP = s1 s2 s3 s8 = 4, FN = s4, FP = s5, TN = s6 s7
    assert (m["tp"], m["fn"], m["fp"], m["tn"], m["n"]) == (4, 1, 1, 2, 8)
    assert m["accuracy"] == pytest.approx(6 / 8)
    assert m["precision"] == pytest.approx(4 / 5)
    assert m["recall"] == pytest.approx(4 / 5)
    assert m["f1"] == pytest.approx(2 * 0.8 * 0.8 / 1.6)            # 0.8
    assert m["f2"] == pytest.approx(5 * 0.8 * 0.8 / (4 * 0.8 + 0.8))  # 0.8
    assert m["fpr"] == pytest.approx(1 / 3) and m["fnr"] == pytest.approx(1 / 5)
    frame = small()[lambda f: f.model == "m"]
    assert m["f1"] == pytest.approx(f1_score(frame.is_vulnerable, frame.said_vulnerable))
    assert m["f2"] == pytest.approx(fbeta_score(frame.is_vulnerable, frame.said_vulnerable,
                                                beta=2))


def test_tier2_target() -> None:
    m = row(vuln.tiers(small()))
    assert m["tdr"] == pytest.approx(3 / 5)               # s1 s2 s8 of 5 vulnerable
    assert (m["lucky_guesses"], m["lucky_guess_rate"]) == (1, pytest.approx(1 / 4))  # s3 / TP
    # Valid findings outnumber [found] only on s1 (target + bonus = 2 > 1): 1 / 8
    assert m["bonus_discovery_rate"] == pytest.approx(1 / 8)


def test_tier3_findings() -> None:
    m = row(vuln.tiers(small()))
    # findings: s1 2, s2 1, s3 2, s5 2, s7 1, s8 2 = 10; valid: s1 2, s2 1, s8 1 = 4
    assert (m["total_findings"], m["valid_findings"], m["invalid_findings"]) == (10, 4, 6)
    assert m["finding_precision"] == pytest.approx(0.4)
    assert m["invalid_rate"] == pytest.approx(0.6)       # WRONG_ROOT_CAUSE counts as invalid
    assert m["hallucination_rate"] == pytest.approx(2 / 10)
    assert m["over_flagging"] == pytest.approx(6 / 8)


def test_tier4_reasoning() -> None:
    m = row(vuln.tiers(small()))
    # over s1 s2 s8 (found): rcir .8 .6 .9, ava .6 .4 .8, fsv .4 .2 (s8 not assessed)
    assert m["mean_rcir"] == pytest.approx(2.3 / 3)
    assert m["mean_ava"] == pytest.approx(0.6)
    assert m["mean_fsv"] == pytest.approx(0.3)
    assert m["avg_reasoning"] == pytest.approx((2.3 / 3 + 0.6 + 0.3) / 3)
    assert m["std_rcir"] == pytest.approx(np.std([0.8, 0.6, 0.9]))  # population (ddof 0)
    assert m["std_ava"] == pytest.approx(np.sqrt(0.08 / 3))
    assert m["std_fsv"] == pytest.approx(0.1)


def test_tier5_type_match() -> None:
    m = row(vuln.tiers(small()))
    # found targets: s1 exact, s2 partial, s8 semantic
    assert m["exact_match_rate"] == pytest.approx(1 / 3)
    assert m["semantic_match_rate"] == pytest.approx(2 / 3)   # exact or semantic
    assert m["partial_match_rate"] == pytest.approx(1 / 3)


def test_tier6_calibration() -> None:
    m = row(vuln.tiers(small()))
    # correct: all but s4 (0.6) and s5 (0.95). Ten bins, each confidence on its bin's upper
    # edge; gaps |acc − conf|: 0.2 → .8, 0.3 → .7, 0.6 → .6, 0.7 → .3, 0.8 → .2, 0.9 → .1,
    # (0.9, 1]: 0.95 wrong and 1.0 right → |0.5 − 0.975| = .475 (n = 2).
    assert m["ece"] == pytest.approx((0.8 + 0.7 + 0.6 + 0.3 + 0.2 + 0.1 + 2 * 0.475) / 8)
    assert m["mce"] == pytest.approx(0.8)
    # Brier = (.1² + .2² + .3² + .6² + .95² + .7² + .8² + 0²) / 8
    assert m["brier"] == pytest.approx(2.5325 / 8)
    assert m["overconfidence_rate"] == pytest.approx(1 / 3)   # > .8: s1 s5 s8, s5 wrong
    assert m["underconfidence_rate"] == pytest.approx(1.0)    # < .5: s6 s7, both right


ECE = (0.8 + 0.7 + 0.6 + 0.3 + 0.2 + 0.1 + 2 * 0.475) / 8   # 0.45625
AVG_REASONING = (2.3 / 3 + 0.6 + 0.3) / 3                     # 0.5556


def test_tier7_composites_and_location() -> None:
    m = row(vuln.tiers(small()))
    sui = 0.25 * 0.8 + 0.25 * 0.6 + 0.15 * 0.4 + 0.25 * AVG_REASONING + 0.10 * (1 - ECE)
    assert m["sui"] == pytest.approx(sui)                                   # 0.6033
    assert m["tus"] == pytest.approx(0.6 * AVG_REASONING * (1 - 0.6))       # 0.1333
    assert m["tus_geometric"] == pytest.approx((0.6 * AVG_REASONING * 0.4) ** (1 / 3))
    assert m["lgi"] == pytest.approx(0.75 - 0.6)
    assert not m["sui_renormalised"] and not m["tus_renormalised"]
    # s1: {10, 11} ∩ {10..13} = 2 of 4; s2: {20} of {20}; s8 claims no line (unknown)
    assert (m["location_accuracy"], m["n_location"]) == (pytest.approx(0.75), 2)


def test_undefined_values_and_renormalised_composites() -> None:
    q = row(vuln.tiers(small()), "quiet")
    # says safe everywhere: TP = FP = 0, FN = 5, TN = 3; no findings; no target found
    assert (q["tp"], q["fp"], q["fn"], q["tn"]) == (0, 0, 5, 3)
    assert q["precision"] == 0.0 and q["lucky_guess_rate"] == 0.0           # seed: 0
    assert q["f2"] == 0.0                                                   # 0 / (4·5)
    assert q["finding_precision"] == 1.0 and q["invalid_rate"] == 0.0       # seed
    assert np.isnan(q["avg_reasoning"]) and np.isnan(q["location_accuracy"])
    # every confidence 0.5 in (0.4, 0.5], accuracy 3/8: ECE 0.125
    assert q["ece"] == pytest.approx(0.125)
    # No target found among 5 vulnerable answers: reasoning counts as 0 in the composites
    # (the displayed mean stays NaN): SUI = .25·0 + .25·0 + .15·1 + .25·0 + .10·.875 = 0.2375
    assert q["composite_reasoning"] == 0.0
    assert q["sui"] == pytest.approx(0.2375) and not q["sui_renormalised"]
    assert q["tus"] == 0.0 and not q["tus_renormalised"]
    assert q["lgi"] == pytest.approx(3 / 8)
    # the old rule: reasoning left out, weights renormalised over the other four
    # (.25·0 + .25·0 + .15·1 + .10·.875) / (.25 + .25 + .15 + .10)
    old = row(vuln.tiers(small(), no_target_reasoning="renormalise"), "quiet")
    assert old["sui"] == pytest.approx(0.2375 / 0.75) and old["sui_renormalised"]
    assert old["tus"] == 0.0 and old["tus_renormalised"]

    strict = row(vuln.tiers(small(), zero_division=np.nan), "quiet")
    assert np.isnan(strict["precision"]) and np.isnan(strict["lucky_guess_rate"])
    assert np.isnan(strict["finding_precision"]) and np.isnan(strict["invalid_rate"])
    assert np.isnan(strict["precision_low"])                 # no interval on nothing
    # SUI now rests on F2, TDR, reasoning (0) and calibration: .10·.875 / (.25+.25+.25+.10)
    assert strict["sui"] == pytest.approx(0.0875 / 0.85) and strict["sui_renormalised"]
    assert strict["f2"] == 0.0                               # defined: TP + FP + FN > 0


def two_detectors(found_by_one: int) -> pd.DataFrame:
    """10 vulnerable contracts, both detectors say vulnerable with confidence 1 and list no
    findings; 'none' finds no target, 'one' finds ``found_by_one`` with reasoning 0.2."""
    frames = []
    for model, found in (("none", 0), ("one", found_by_one)):
        hit = np.arange(10) < found
        frames.append(pd.DataFrame({
            "sample": [f"c{i}" for i in range(10)], "model": model, "judge": "j",
            "is_vulnerable": True, "said_vulnerable": True, "confidence": 1.0,
            "target_found": hit, "rcir": np.where(hit, 0.2, np.nan),
            "ava": np.where(hit, 0.2, np.nan), "fsv": np.where(hit, 0.2, np.nan)}))
    return pd.concat(frames, ignore_index=True)


def test_finding_nothing_never_scores_above_finding_something() -> None:
    # Both: TP = 10 -> F2 = 1; no findings -> finding precision 1.0 (seed); confidence 1 and
    # always right -> ECE 0, calibration 1.
    # 'one' (1 of 10, reasoning 0.2): .25·1 + .25·0.1 + .15·1 + .25·0.2 + .10·1 = 0.575
    # 'none', reasoning counted 0:     .25·1 + .25·0   + .15·1 + .25·0   + .10·1 = 0.500
    # 'none', old renormalised rule:   (.25 + .15 + .10) / .75 = 0.667 > 0.575
    table = vuln.tiers(two_detectors(1))
    assert row(table, "one")["sui"] == pytest.approx(0.575)
    assert row(table, "none")["sui"] == pytest.approx(0.5)
    old = vuln.tiers(two_detectors(1), no_target_reasoning="renormalise")
    assert row(old, "none")["sui"] == pytest.approx(0.5 / 0.75)
    assert row(old, "none")["sui"] > row(old, "one")["sui"]
    # live re-weighting agrees with recomputing
    reweighted = vuln.reweight_sui(table, {"reasoning": 0.5})
    again = vuln.tiers(two_detectors(1), sui_weights={"reasoning": 0.5})
    np.testing.assert_allclose(reweighted["sui"], again["sui"])
    contributions = vuln.sui_contributions(table)
    total = contributions.groupby("model")["contribution"].sum()
    np.testing.assert_allclose(total.loc[table["model"]], table["sui"])


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 12), said=st.lists(st.booleans(), min_size=12, max_size=12),
       conf=st.lists(st.floats(0, 1), min_size=12, max_size=12),
       hall=st.lists(st.integers(0, 3), min_size=12, max_size=12),
       score=st.floats(0, 1), which=st.integers(0, 11), ci=st.booleans())
def test_property_no_target_never_beats_one_target(n, said, conf, hall, score, which,
                                                   ci) -> None:
    base = pd.DataFrame({"sample": [f"c{i}" for i in range(n)], "model": "none", "judge": "j",
                         "is_vulnerable": True, "said_vulnerable": said[:n],
                         "confidence": conf[:n], "target_found": False,
                         "n_hallucinated": hall[:n], "rcir": np.nan, "ava": np.nan,
                         "fsv": np.nan})
    other = base.assign(model="one")
    k = which % n
    other.loc[k, ["target_found", "rcir", "ava", "fsv"]] = [True, score, score, score]
    table = vuln.tiers(pd.concat([base, other], ignore_index=True),
                       ci="bootstrap" if ci else None, n_boot=20)
    assert row(table, "none")["sui"] <= row(table, "one")["sui"] + 1e-12
    assert row(table, "none")["tus"] <= row(table, "one")["tus"] + 1e-12


# ------------------------------------------------------------------ the critique's options


def test_partial_credit() -> None:
    m = row(vuln.tiers(small(), partial_credit=0.5))
    assert m["tdr"] == pytest.approx((1 + 0.5 + 1) / 5)               # s2 found partially
    assert m["finding_precision"] == pytest.approx((2 + 0.5 * 1 + 1) / 10)
    assert m["invalid_rate"] == pytest.approx(0.6)                    # unchanged
    frame = small()
    frame.loc[frame["sample"] == "s2", "type_match"] = "exact"
    frame["partial_found"] = frame["sample"] == "s2"                   # newer judges' flag
    assert row(vuln.tiers(frame, partial_credit=0.5))["tdr"] == pytest.approx(2.5 / 5)


def test_severity_weighted_tdr() -> None:
    # vulnerable: s1 critical 3 (found), s2 high 2 (found), s3 medium 1, s4 low 1,
    # s8 no severity 1 (found): (3 + 2 + 1) / (3 + 2 + 1 + 1 + 1)
    m = row(vuln.tiers(small(), severity_weights=vuln.SEVERITY_WEIGHTS))
    assert m["tdr"] == pytest.approx(6 / 8)
    both = row(vuln.tiers(small(), severity_weights=vuln.SEVERITY_WEIGHTS,
                          partial_credit=0.5))
    assert both["tdr"] == pytest.approx((3 + 0.5 * 2 + 1) / 8)
    custom = row(vuln.tiers(small(), severity_weights={"critical": 10}))
    assert custom["tdr"] == pytest.approx((10 + 1 + 1) / (10 + 1 + 1 + 1 + 1))


def test_binning_options() -> None:
    # two equal-mass bins: median (.7 + .8)/2; lower .2 .3 .6 .7 (one wrong): |.75 − .45|;
    # upper .8 .9 .95 1.0 (one wrong): |.75 − .9125|
    m = row(vuln.tiers(small(), binning="quantile", n_bins=2))
    assert m["ece"] == pytest.approx((0.3 + 0.1625) / 2)
    assert m["mce"] == pytest.approx(0.3)
    # two equal-width bins: (0, .5] .2 .3 both right: .75; (.5, 1] six, four right,
    # confidence 4.95/6: |4/6 − .825|
    u = row(vuln.tiers(small(), n_bins=2))
    assert u["ece"] == pytest.approx((2 * 0.75 + 6 * abs(4 / 6 - 0.825)) / 8)


def test_sui_weights() -> None:
    m = row(vuln.tiers(small(), sui_weights={"calibration": 0.5}))
    parts = 0.25 * 0.8 + 0.25 * 0.6 + 0.15 * 0.4 + 0.25 * AVG_REASONING + 0.5 * (1 - ECE)
    assert m["sui"] == pytest.approx(parts / 1.4)       # divided by the weights' sum
    only_tdr = row(vuln.tiers(small(), sui_weights=dict.fromkeys(vuln.SUI_WEIGHTS, 0.0)
                              | {"tdr": 2.0}))
    assert only_tdr["sui"] == pytest.approx(0.6)
    table = vuln.tiers(small(), sui_weights={"calibration": 0.5})
    parts = vuln.sui_contributions(table, sui_weights={"calibration": 0.5})
    summed = parts.groupby("model")["contribution"].sum()
    np.testing.assert_allclose(summed.loc[table["model"]].to_numpy(), table["sui"])


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"binning": "adaptive"}, "binning must be one of 'uniform', 'quantile'"),
    ({"ci": "wilson"}, "ci must be one of None, 'bootstrap'"),
    ({"partial_credit": 1.5}, r"partial_credit must lie in \[0, 1\]"),
    ({"sui_weights": {"speed": 1}}, "sui_weights has unknown keys"),
    ({"sui_weights": {"tdr": -1}}, "must be finite and >= 0"),
    ({"sui_weights": dict.fromkeys(vuln.SUI_WEIGHTS, 0)}, "must not all be 0"),
    ({"severity_weights": {"huge": 5}}, "severity_weights has unknown keys"),
    ({"n_bins": 0}, "n_bins must be a whole number"),
    ({"by": ("model", "vendor")}, "tiers needs the column"),
])
def test_bad_options(kwargs, message) -> None:
    with pytest.raises(ValueError, match=message):
        vuln.tiers(small(), **kwargs)


# ------------------------------------------------------------------ intervals


def test_wilson_and_t_intervals() -> None:
    m = row(vuln.tiers(small()))
    # One answer per sample: every answer-level rate is the plain Wilson interval. Findings
    # are clustered by sample: finding precision (valid 2, 1, 0, 0, 0, 1 of 2, 1, 2, 2, 1, 2
    # findings in s1, s2, s3, s5, s7, s8; p = 4/10) has the leave-one-sample-out values
    # 2/8, 3/9, 4/8, 4/8, 4/9, 3/8, jackknife variance (5/6)·Σ(p_(-c) - mean)² = .041286
    # against p(1 - p)/10 = .024: deff = 1.7203, Wilson on 4/deff of 10/deff.
    left = np.array([2 / 8, 3 / 9, 4 / 8, 4 / 8, 4 / 9, 3 / 8])
    deff = 5 / 6 * ((left - left.mean()) ** 2).sum() / 0.024
    assert deff == pytest.approx(1.7203, abs=1e-4)
    for metric, (count, n) in {"accuracy": (6, 8), "precision": (4, 5), "tdr": (3, 5),
                               "lucky_guess_rate": (1, 4),
                               "finding_precision": (4 / deff, 10 / deff),
                               "hallucination_rate": (2, 10), "fpr": (1, 3),
                               "overconfidence_rate": (1, 3), "exact_match_rate": (1, 3),
                               "underconfidence_rate": (2, 2)}.items():
        low, high = proportion_confint(count, n, method="wilson")
        assert (m[f"{metric}_low"], m[f"{metric}_high"]) == pytest.approx((low, high)), metric
    rcir = [0.8, 0.6, 0.9]
    low, high = sps.t.interval(0.95, 2, loc=np.mean(rcir), scale=sps.sem(rcir))
    # the t interval [0.387, 1.146] clipped to the scores' range [0, 1]
    assert (m["mean_rcir_low"], m["mean_rcir_high"]) == pytest.approx((low, min(high, 1.0)))
    squared = [0.01, 0.04, 0.09, 0.36, 0.9025, 0.49, 0.64, 0.0]
    low, high = sps.t.interval(0.95, 7, loc=np.mean(squared), scale=sps.sem(squared))
    assert (m["brier_low"], m["brier_high"]) == pytest.approx((low, high))
    assert "sui_low" not in m  # the bootstrap only on request


def naive_tiers_bootstrap(frame: pd.DataFrame, metric: str, n_boot: int, **options):
    """Resample samples (sorted ids) with index lists, recompute tiers from scratch."""
    rng = np.random.default_rng(0)
    ids = sorted(frame["sample"].unique())
    parts = {s: frame[frame["sample"] == s] for s in ids}
    values = []
    for _ in range(n_boot):
        drawn = rng.integers(0, len(ids), len(ids))
        resampled = pd.concat([parts[ids[i]] for i in drawn], ignore_index=True)
        values.append(vuln.tiers(resampled, **options).set_index("model")[metric])
    table = pd.DataFrame(values)
    return table.quantile(0.025), table.quantile(0.975)


@pytest.mark.parametrize("binning", ["uniform", "quantile"])
def test_bootstrap_of_composites_equals_naive_resampling(binning) -> None:
    frame = samples.judged_samples(n_samples=12, seed=3)
    frame = frame[frame["judge"] == "judge-three"]
    options = dict(binning=binning, n_bins=4, partial_credit=0.5)
    table = vuln.tiers(frame, ci="bootstrap", n_boot=60, **options).set_index("model")
    # Only the debiased ECE (and the SUI rank) are still bootstrapped: ECE and MCE have
    # simultaneous bin intervals, SUI/TUS/LGI MOVER ones (tests/test_stats_round3.py)
    for metric in ("ece_l2_debiased",):
        low, high = naive_tiers_bootstrap(frame, metric, 60, **options)
        low, high = low.loc[table.index], high.loc[table.index]
        # where every replicate gives one value the naive percentile interval has no width;
        # kbench shows none for the debiased ECE, which has no range (issue 23 item 7)
        flat = ~(high - low > 1e-12)
        assert (~flat).sum() >= 2
        np.testing.assert_allclose(table.loc[~flat, f"{metric}_low"], low[~flat],
                                   atol=1e-12, err_msg=metric)
        np.testing.assert_allclose(table.loc[~flat, f"{metric}_high"], high[~flat],
                                   atol=1e-12, err_msg=metric)
        assert table.loc[flat, f"{metric}_low"].isna().all()


# ------------------------------------------------------------------ planted truths


PLANTED = ["n", "tp", "tn", "fp", "fn", "accuracy", "precision", "recall", "f1", "f2", "fpr",
           "fnr", "tdr", "lucky_guess_rate", "bonus_discovery_rate", "finding_precision",
           "invalid_rate", "hallucination_rate", "over_flagging", "mean_rcir", "mean_ava",
           "mean_fsv", "avg_reasoning", "ece", "brier", "location_accuracy", "lgi", "tus",
           "sui"]


@pytest.mark.parametrize(("n_samples", "seed"), [(40, 0), (23, 4)])
def test_planted_judged_values(n_samples, seed) -> None:
    judged = samples.judged_samples(n_samples=n_samples, seed=seed)
    planted = samples.planted_judged(n_samples=n_samples).set_index(["model", "judge"])
    for judge in samples.JUDGES:
        table = vuln.tiers(judged, judge=judge).set_index("model")
        expected = planted.xs(judge, level="judge").loc[table.index]
        for column in PLANTED:
            np.testing.assert_allclose(table[column].astype(float),
                                       expected[column].astype(float), atol=1e-12,
                                       equal_nan=True, err_msg=f"{judge} {column}")
        # ECE = MCE: one confidence per detector fills a single bin
        np.testing.assert_allclose(table["mce"], expected["ece"], atol=1e-12)
        assert (table["judge"] == judge).all()


def test_planted_values_per_prompt_type() -> None:
    judged = samples.judged_samples()
    planted = samples.planted_judged().set_index(["model", "judge"]).xs("judge-one",
                                                                       level="judge")
    table = vuln.tiers(judged, judge="judge-one", by=("model", "prompt_type"))
    assert len(table) == 9 and (table["n"] == 40).all()
    for column in ("accuracy", "tdr", "finding_precision", "sui", "location_accuracy"):
        expected = planted.loc[table["model"].astype(str), column].to_numpy()
        np.testing.assert_allclose(table[column], expected, atol=1e-12, err_msg=column)
    assert table["prompt_type"].astype(str).tolist() == sorted(samples.PROMPT_TYPES) * 3


def test_bundled_sample_run_through_io(sample_dir) -> None:
    from kbench_core.io import load_run

    run = load_run(sample_dir / "judged.csv")
    table = vuln.tiers(run.frame, judge="judge-two").set_index("model")
    planted = samples.planted_judged().set_index(["model", "judge"]).xs("judge-two",
                                                                       level="judge")
    np.testing.assert_allclose(table["sui"], planted.loc[table.index, "sui"], atol=1e-12)
    np.testing.assert_allclose(table["location_accuracy"],
                               planted.loc[table.index, "location_accuracy"], atol=1e-12)


# ------------------------------------------------------------------ judges, missing, shapes


def test_one_judge_at_a_time() -> None:
    judged = samples.judged_samples(n_samples=6)
    with pytest.raises(ValueError, match=r"holds 3 judges \(judge-one, judge-three, "
                                         r"judge-two\).*judge=.*consensus"):
        vuln.tiers(judged)
    with pytest.raises(ValueError, match="judge 'judge-nine' is not in the frame"):
        vuln.tiers(judged, judge="judge-nine")
    single = judged[judged["judge"] == "judge-two"]
    assert (vuln.tiers(single)["judge"] == "judge-two").all()
    assert vuln.judges_of(pd.DataFrame({"judge": ["human", "b", "a"]})) == ["a", "b", "human"]


def test_failed_judgements_are_missing_not_no() -> None:
    frame = small()
    frame["said_vulnerable"] = frame["said_vulnerable"].astype("boolean")
    frame.loc[(frame["model"] == "m") & (frame["sample"] == "s3"), "said_vulnerable"] = pd.NA
    m = row(vuln.tiers(frame))
    # s3 (a lucky guess) is gone: TP 3, N 7, accuracy 5/7, lucky guesses 0
    assert (m["n"], m["n_missing"], m["tp"], m["lucky_guesses"]) == (7, 1, 3, 0)
    assert m["accuracy"] == pytest.approx(5 / 7)
    assert m["tdr"] == pytest.approx(3 / 4)


def test_accepts_a_minimal_single_judge_frame() -> None:
    # What a consensus of judges may hand over: required columns only.
    frame = small()[["sample", "model", "judge", "is_vulnerable", "said_vulnerable",
                     "target_found"]]
    m = row(vuln.tiers(frame))
    assert m["accuracy"] == pytest.approx(0.75) and m["tdr"] == pytest.approx(0.6)
    assert np.isnan(m["ece"]) and np.isnan(m["avg_reasoning"]) and m["total_findings"] == 0
    # F2 .8, TDR .6, finding precision 1.0 (no findings): (.25·.8 + .25·.6 + .15) / .65
    assert m["sui"] == pytest.approx((0.2 + 0.15 + 0.15) / 0.65)


def test_group_without_prompt_type_values() -> None:
    frame = small()
    frame["prompt_type"] = np.where(frame["sample"] == "s1", None, "direct")
    table = vuln.tiers(frame, by=("model", "prompt_type"))
    assert table["n"].sum() == 16 and len(table) == 4
    assert table["prompt_type"].isna().sum() == 2   # kept as its own group, listed last


def test_reliability_matches_calibration_per_model() -> None:
    frame = samples.judged_samples(n_samples=20, seed=2)
    frame = frame[frame["judge"] == "judge-one"].copy()
    frame["confidence"] = np.random.default_rng(0).random(len(frame))
    table = vuln.reliability(frame, n_bins=6, binning="quantile")
    for model, rows in table.groupby("model", observed=True):
        mine = frame[frame["model"] == model]
        correct = mine["said_vulnerable"] == mine["is_vulnerable"]
        expected = calibration.reliability_table(mine["confidence"], correct, n_bins=6,
                                                 strategy="quantile")
        np.testing.assert_allclose(rows[expected.columns].to_numpy(dtype=float),
                                   expected.to_numpy(dtype=float))
        assert rows["ece"].iat[0] == pytest.approx(float(calibration.ece(
            mine["confidence"], correct, n_bins=6, strategy="quantile", ci=None)))


def test_sample_findings_as_text() -> None:
    rows = pd.DataFrame({"sample": ["a", "b"], "model": ["m", "m"], "judge": ["j", "j"],
                         "findings": ['[{"classification": "TARGET_MATCH", '
                                      '"location_claimed": "line 3", "description": "<b>x"}]',
                                      "not json"]})
    out = vuln.sample_findings(rows)
    assert out["classification"].iat[0] == "TARGET_MATCH" and pd.isna(out["classification"].iat[1])
    assert out["description"].tolist() == ["<b>x", "not json"]


# ------------------------------------------------------------------ properties


@settings(max_examples=30)
@given(seed=st.integers(0, 10_000), binning=st.sampled_from(["uniform", "quantile"]))
def test_invariant_to_row_order(seed, binning) -> None:
    frame = samples.judged_samples(n_samples=9, seed=seed % 7)
    frame = frame[frame["judge"] == "judge-three"].copy()
    frame["confidence"] = np.round(np.random.default_rng(seed).random(len(frame)), 2)
    shuffled = frame.sample(frac=1.0, random_state=seed)
    a = vuln.tiers(frame, binning=binning, by=("model", "prompt_type"))
    b = vuln.tiers(shuffled, binning=binning, by=("model", "prompt_type"))
    pd.testing.assert_frame_equal(a, b, check_exact=False, atol=1e-12, rtol=0)


@settings(max_examples=40)
@given(data=st.lists(st.tuples(st.booleans(), st.booleans(), st.booleans(),
                               st.floats(0, 1), st.integers(0, 3), st.integers(0, 3)),
                     min_size=1, max_size=30),
       zero=st.sampled_from([0.0, nan]))
def test_rates_lie_in_unit_interval(data, zero) -> None:
    frame = pd.DataFrame(data, columns=["is_vulnerable", "said_vulnerable", "target_found",
                                        "confidence", "n_target_match", "n_hallucinated"])
    frame["target_found"] &= frame["is_vulnerable"]
    frame["sample"] = [f"s{i}" for i in range(len(frame))]
    frame["model"], frame["judge"] = "m", "j"
    m = row(vuln.tiers(frame, zero_division=zero))
    rates = [c for c in m.index if c.endswith("_rate") or c in (
        "accuracy", "precision", "recall", "f1", "f2", "fpr", "fnr", "tdr",
        "finding_precision", "ece", "mce", "brier", "sui", "tus", "tus_geometric")]
    values = m[rates].astype(float)
    assert ((values >= -1e-12) & (values <= 1 + 1e-12) | values.isna()).all(), values
    assert -1 <= m["lgi"] <= 1 or np.isnan(m["lgi"])
    assert m["tp"] + m["tn"] + m["fp"] + m["fn"] == m["n"] == len(frame)


@pytest.mark.parametrize("flag", [[True, False], ["true", "false"], ["1", None], [1.0, np.nan],
                                  pd.array([True, pd.NA], dtype="boolean")])
def test_partial_found_flag_in_any_spelling(flag) -> None:
    frame = small()
    frame = frame[frame["sample"].isin(["s1", "s8"]) & (frame["model"] == "m")].copy()
    frame["type_match"] = "exact"
    frame["partial_found"] = flag       # s1 found only partially, s8 fully
    assert row(vuln.tiers(frame, partial_credit=0.5))["tdr"] == pytest.approx(1.5 / 2)


# ------------------------------------------------------------------ figures


def test_figures_draw_the_tables() -> None:
    from kbench_core.figures import vuln as figures

    judged = samples.judged_samples(n_samples=20, judges=("judge-one",))
    judged["confidence"] = np.round(np.random.default_rng(4).random(len(judged)), 2)
    table = vuln.tiers(judged, ci="bootstrap", n_boot=30)
    reliability = vuln.reliability(judged, n_bins=5, binning="quantile")
    fig = figures.reliability_diagram(reliability, binning="quantile")
    curves = [t for t in fig.data if t.type == "scatter" and t.mode == "lines+markers"]
    assert len(curves) == 3
    for curve in curves:
        model = curve.name.split(" · ")[0]
        rows = reliability[reliability["model"] == model]
        # the plug-in ECE with the debiased l2 error beside it (the subtitle says which)
        assert (f"ECE {rows['ece'].iat[0]:.3f} (deb. {rows['ece_l2_debiased'].iat[0]:.3f})"
                ) in curve.name
        # MCE and the number of answers in the hover (the legend fits one column)
        assert (f"ECE {rows['ece'].iat[0]:.3f} · MCE {rows['mce'].iat[0]:.3f} · "
                f"{int(rows['n'].iat[0]):,} answers") in curve.hovertemplate
        assert "biased" in fig.layout.meta["kbench_subtitle"]
        np.testing.assert_allclose(curve.x, rows.sort_values("mean_confidence")[
            "mean_confidence"])
        assert curve.fill == "tonexty"            # gap shading to the diagonal
    histograms = [t for t in fig.data if t.type == "bar"]
    assert [round(sum(h.y), 12) for h in histograms] == [1.0, 1.0, 1.0]
    assert all(h.yaxis == "y2" for h in histograms)  # beneath the curves
    assert "equal-mass" in fig.layout.title.text

    parts = vuln.sui_contributions(table)
    board = figures.tier_leaderboard(table, parts)
    stacked = [t for t in board.data if t.type == "bar"]
    assert len(stacked) == 5
    totals = np.sum([np.asarray(t.x, dtype=float) for t in stacked], axis=0)
    expected = table.set_index("model").loc[list(stacked[0].y), "sui"]
    np.testing.assert_allclose(totals, expected, atol=1e-12)

    lucky = figures.lucky_guess_chart(table)
    points = {t.name: (t.x[0], t.y[0]) for t in lucky.data if t.mode == "markers"}
    for _, r in table.iterrows():
        assert points[r["model"]] == pytest.approx((r["tdr"], r["accuracy"]))

    by_prompt = vuln.tiers(judged, by=("model", "prompt_type"))
    prompts = figures.prompt_type_chart(by_prompt, metric="finding_precision")
    assert len(prompts.data) == 3 and list(prompts.data[0].x) == sorted(samples.PROMPT_TYPES)
    with pytest.raises(ValueError, match="metric must be a column"):
        figures.prompt_type_chart(by_prompt, metric="speed")


def test_reweight_sui_equals_recomputing() -> None:
    judged = samples.judged_samples(n_samples=15, judges=("judge-three",))
    weights = {"f2": 0.0, "tdr": 0.7, "calibration": 0.4}
    base = vuln.tiers(small(), ci="bootstrap", n_boot=20)
    for frame, table in ((judged, vuln.tiers(judged)), (small(), base)):
        again = vuln.reweight_sui(table, weights)
        direct = vuln.tiers(frame, sui_weights=weights)
        np.testing.assert_allclose(again["sui"], direct["sui"], atol=1e-12)
        assert again["sui_renormalised"].tolist() == direct["sui_renormalised"].tolist()
        if "ece_low" in table:  # built from the components' intervals: rebuilt (issue 38)
            intervals = vuln.tiers(frame, sui_weights=weights, ci="bootstrap", n_boot=20)
            np.testing.assert_allclose(again["sui_low"], intervals["sui_low"], atol=1e-12)
            np.testing.assert_allclose(again["sui_high"], intervals["sui_high"], atol=1e-12)
        else:
            assert "sui_low" not in again


def test_reliability_leaves_out_failed_judgements() -> None:
    frame = small()
    frame["said_vulnerable"] = frame["said_vulnerable"].astype("boolean")
    frame.loc[(frame["model"] == "m") & (frame["sample"] == "s4"), "said_vulnerable"] = pd.NA
    table = vuln.reliability(frame).set_index("model")
    # s4 (confidence 0.6, wrong) is gone: 7 answers, and ECE agrees with tiers
    assert table.loc["m", "n"].iat[0] == 7
    assert table.loc["m", "ece"].iat[0] == pytest.approx(row(vuln.tiers(frame))["ece"])


def test_bootstrap_gives_each_models_sui_rank_interval() -> None:
    from kbench_core.io import load_run

    frame = load_run("sample_data/judged.csv").frame
    table = vuln.tiers(frame, judge="judge-one", ci="bootstrap", n_boot=300).set_index("model")
    # sharp is planted right on every answer: first in every resample
    assert (table.loc["synthetic-detector-sharp", "sui_rank_low"],
            table.loc["synthetic-detector-sharp", "sui_rank_high"]) == (1.0, 1.0)
    assert (table["sui_rank_low"] <= table["sui_rank_high"]).all()
    assert "sui_rank_low" not in vuln.tiers(frame, judge="judge-one")


def test_fixed_claim_rate_beside_tdr() -> None:
    # detector d: 4 fixed contracts, still claims the fixed bug on 3, 1 with no readable claim;
    # 5 vulnerable answers, target found on 2.
    frame = pd.DataFrame({
        "sample": [f"f{i}" for i in range(5)] + [f"v{i}" for i in range(5)],
        "model": "d", "judge": "j",
        "is_vulnerable": [False] * 5 + [True] * 5,
        "said_vulnerable": [True] * 10,
        "target_found": [False] * 5 + [True, True, False, False, False],
        "claims_fixed_target": pd.array([True, True, True, False, None] + [None] * 5,
                                        dtype="boolean")})
    row = vuln.fixed_claims(frame).iloc[0]
    assert (row["n_fixed"], row["fixed_claims"], row["n_fixed_unknown"]) == (4, 3, 1)
    assert row["fixed_claim_rate"] == pytest.approx(3 / 4)
    low, high = proportion_confint(3, 4, method="wilson")
    assert (row["fixed_claim_rate_low"], row["fixed_claim_rate_high"]) == pytest.approx(
        (low, high))
    assert (row["n_vulnerable"], row["targets_found"], row["tdr"]) == (5, 2, pytest.approx(0.4))
    assert vuln.fixed_claims(frame.drop(columns="claims_fixed_target")).empty


def test_fixed_claims_by_consensus() -> None:
    from kbench_core import agreement

    base = pd.DataFrame({"sample": ["f1", "f2"], "model": "d", "is_vulnerable": False,
                         "said_vulnerable": True, "target_found": False})
    votes = {"j1": [True, True], "j2": [True, False], "j3": [False, None]}
    frame = pd.concat([base.assign(judge=j, claims_fixed_target=pd.array(v, dtype="boolean"))
                       for j, v in votes.items()], ignore_index=True)
    both = agreement.consensus(frame)
    # f1: 2 of 3 say yes -> claims; f2: yes, no, failed -> no majority: missing, not a "no"
    row = vuln.fixed_claims(both).iloc[0]
    assert (row["n_fixed"], row["fixed_claims"], row["n_fixed_unknown"]) == (1, 1, 1)


def test_bounded_means_keep_their_intervals_in_range() -> None:
    # Three correct answers with confidence 0.1, 0.9, 0.9: Brier terms 0.81, 0.01, 0.01, mean
    # 0.2767; the t interval reaches below 0 (a gen-1 BlockBench report showed brier_low
    # −0.1953), so it is clipped to what a Brier score can be, [0, 1].
    from scipy import stats as st

    rows = samples.judged_samples(n_samples=6, judges=("judge-one",))
    rows = rows[rows["model"] == rows["model"].iloc[0]]
    # one answer of each of three samples (three answers of one sample would be one cluster,
    # whose interval is undefined)
    rows = rows.drop_duplicates("sample").head(3).copy()
    rows["said_vulnerable"] = rows["is_vulnerable"]
    rows["confidence"] = [0.1, 0.9, 0.9]
    terms = np.array([0.81, 0.01, 0.01])
    low, high = st.t.interval(0.95, 2, loc=terms.mean(), scale=terms.std(ddof=1) / np.sqrt(3))
    assert low < 0 and high > 1  # what an unclipped interval would say
    table = vuln.tiers(rows)
    assert table["brier"].iloc[0] == pytest.approx(terms.mean())
    assert table["brier_low"].iloc[0] == 0.0 and table["brier_high"].iloc[0] == 1.0


@pytest.mark.parametrize("by", [("model",), ("model", "prompt_type")])
def test_rebin_gives_the_tiers_of_other_bins(by) -> None:
    # The page recomputes only ECE and MCE when the bins change: the result must be exactly
    # what tiers() gives with those bins, SUI (through 1 − ECE) included.
    frame = samples.judged_samples(n_samples=30, judges=("judge-one",), seed=2)
    frame["confidence"] = np.round(np.random.default_rng(1).random(len(frame)), 3)
    base = vuln.tiers(frame, by=by)
    for n_bins, binning in ((2, "uniform"), (7, "quantile"), (30, "uniform")):
        full = vuln.tiers(frame, by=by, n_bins=n_bins, binning=binning)
        fast = vuln.reweight_sui(vuln.rebin(base, frame, by=by, n_bins=n_bins,
                                            binning=binning))
        for column in ("ece", "mce", "sui"):
            assert fast[column].to_numpy() == pytest.approx(full[column].to_numpy(), abs=0,
                                                            nan_ok=True), column
