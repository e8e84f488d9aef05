"""kbench_core.replication: hand-worked effect sizes, PAS pooling and CCC (arithmetic in the
tests), a direct numpy CCC, a transcription of the released per-study ECS, scipy for
distributions, planted truths from ``kbench_core.samples``, properties, and the figures."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from kbench_core import replication as R
from kbench_core import samples
from kbench_core.figures import replication as rep_figures

Z95 = stats.norm.ppf(0.975)
REAL = Path(__file__).resolve().parents[1] / "sample_data" / "real"  # MIT-licensed releases
EPS_HALF = R.EPSILON / 2  # (tanh(atanh(1 - eps)) + 1) / 2 = 1 - eps/2


def make_tests(rows: list[tuple]) -> pd.DataFrame:
    """(model, study, finding, test, pi_h, pi_a[, n_eff]) rows."""
    cols = ["model", "study", "finding", "test", "human_pi", "agent_pi", "n_eff"]
    return pd.DataFrame([r + (100.0,) * (7 - len(r)) for r in rows], columns=cols)


def pooled(*pas_values: float, weights: tuple[float, ...] | None = None) -> float:
    """Fisher pooling written out: mean of atanh(2p - 1), back by (tanh + 1) / 2."""
    w = weights or (1.0,) * len(pas_values)
    z = sum(wi * math.atanh(2 * p - 1) for wi, p in zip(w, pas_values, strict=True)) / sum(w)
    return (math.tanh(z) + 1) / 2


# ------------------------------------------------------------------ effect sizes and SEs


def test_effect_to_d_by_test_type() -> None:
    z = math.atanh(0.3)
    values = [0.5, 0.7, 0.2, z, 1.0, 0.3, 0.7, 0.4]
    kinds = ["t", "f", "anova", "correlation", "chi2", "mann_whitney", "binomial", "nonsense"]
    d = R.effect_to_d(values, kinds)
    assert d[:3].tolist() == [0.5, 0.7, 0.2]
    assert d[3] == pytest.approx(2 * 0.3 / math.sqrt(1 - 0.09))       # 0.6290
    assert d[4] == pytest.approx(1.0 * math.sqrt(3) / math.pi)         # 0.5513
    assert d[5] == pytest.approx(2 * 0.3 / math.sqrt(1 - 0.09))
    assert d[6] == pytest.approx(2 * (0.7 - 0.5) / 0.5)                # 0.8
    assert math.isnan(d[7])


def test_effect_to_d_undefined_cases_are_nan() -> None:
    # |r| = 1 (and within 1e-6 of it) has no d; a proportion outside [0, 1] is not one
    d = R.effect_to_d([1.0, -0.9999995, 1.2, -0.1, np.inf, np.nan, 40.0],
                      ["mann_whitney", "mann_whitney", "binomial", "binomial", "t", "t",
                       "correlation"])
    assert np.isnan(d).all()
    assert R.effect_to_d(0.0, "binomial") == pytest.approx(-2.0)       # 2 (0 - 0.5) / 0.5


def test_standard_errors_hand_worked() -> None:
    # independent d: sqrt((20+30)/(20*30) + 0.5^2/(2*50)) = sqrt(0.083333 + 0.0025)
    assert R.se_cohens_d(0.5, 20, 30) == pytest.approx(math.sqrt(50 / 600 + 0.25 / 100))
    assert R.se_cohens_d(0.5, 25) == pytest.approx(math.sqrt(1 / 25 + 0.25 / 50))  # 0.2121
    assert math.isnan(float(R.se_cohens_d(0.5, 0)))
    assert R.se_fisher_z(28) == pytest.approx(0.2)                    # 1/sqrt(25)
    assert math.isnan(float(R.se_fisher_z(3)))
    # rank-biserial r = 0.3 over 10 + 12: sqrt((1 - 0.09) / 21) = 0.2082
    assert R.se_rank_biserial(0.3, 10, 12) == pytest.approx(math.sqrt(0.91 / 21))
    assert R.se_proportion(0.2, 100) == pytest.approx(0.04)           # sqrt(0.16 / 100)
    assert math.isnan(float(R.se_proportion(0.2, 0)))


def test_log_odds_ratio_haldane_anscombe() -> None:
    # no zero cell: log(10*5 / (3*4)) = log(4.1667), SE sqrt(1/10 + 1/3 + 1/4 + 1/5)
    log_or, se = R.log_odds_ratio(10, 3, 4, 5)
    assert float(log_or) == pytest.approx(math.log(50 / 12))
    assert float(se) == pytest.approx(math.sqrt(0.1 + 1 / 3 + 0.25 + 0.2))
    assert float(R.se_log_odds_ratio(10, 3, 4, 5)) == pytest.approx(
        math.sqrt(0.1 + 1 / 3 + 0.25 + 0.2))
    # a zero cell: +0.5 to every cell -> log(10.5*5.5 / (0.5*4.5)) = log(25.667)
    log_or, se = R.log_odds_ratio(10, 0, 4, 5)
    assert float(log_or) == pytest.approx(math.log(10.5 * 5.5 / (0.5 * 4.5)))
    assert float(se) == pytest.approx(math.sqrt(1 / 10.5 + 1 / 0.5 + 1 / 4.5 + 1 / 5.5))
    # vectorised: the correction applies per table only
    both, _ = R.log_odds_ratio([10, 10], [3, 0], [4, 4], [5, 5])
    assert both.tolist() == pytest.approx([math.log(50 / 12), math.log(10.5 * 5.5 / 2.25)])


def test_posteriors_from_bayes_factors_use_the_prior_odds() -> None:
    frame = pd.DataFrame({"model": "m", "study": "s", "finding": "f", "test": list("abcd"),
                          "human_bf10": [2.0, 2.0, 2.0, np.inf],
                          "agent_bf10": [0.5, 4.0, 1.0, 1.0],
                          "human_significant": pd.array([True, False, None, True],
                                                        dtype="boolean")})
    t = R.prepare_tests(frame)
    # odds 10 -> 20/21; odds 0.1 -> 0.2/1.2; no flag -> no prior -> NaN; BF inf -> 1
    assert t["pi_h"].tolist()[:2] == pytest.approx([20 / 21, 0.2 / 1.2])
    assert math.isnan(t["pi_h"].iloc[2]) and t["pi_h"].iloc[3] == 1.0
    assert t["pi_a"].tolist()[:2] == pytest.approx([0.5 / 1.5, 4 / 5])    # agent odds 1
    custom = R.prepare_tests(frame, human_prior_significant=3.0, agent_prior=2.0)
    assert custom["pi_h"].iloc[0] == pytest.approx(6 / 7)                # 2*3 / (1 + 6)
    assert custom["pi_a"].iloc[1] == pytest.approx(8 / 9)                # 4*2 / (1 + 8)
    assert R.posterior_from_bf(3.0, 10.0) == pytest.approx(30 / 31)
    # and pas() passes its prior odds on: 2*3/(1+6) = 6/7 and 0.5*2/(1+1) = 1/2
    first = R.pas(frame.iloc[:1], human_prior_significant=3.0, agent_prior=2.0).test
    assert first["pas"].iloc[0] == pytest.approx(6 / 7 * 0.5 + 1 / 7 * 0.5)


def test_prepare_tests_takes_d_where_given_else_from_the_native_effect() -> None:
    frame = pd.DataFrame({"model": "m", "study": "s", "finding": "f", "test": ["a", "b"],
                          "test_type": ["chi2", "t"], "human_effect": [math.pi, 0.9],
                          "agent_effect": [0.0, 0.4], "human_d": [np.nan, 0.1],
                          "agent_d": [np.nan, 0.2]})
    t = R.prepare_tests(frame)
    assert t["d_h"].tolist() == pytest.approx([math.sqrt(3), 0.1])  # pi * sqrt(3)/pi; given
    assert t["d_a"].tolist() == pytest.approx([0.0, 0.2])


# ------------------------------------------------------------------ PAS


def test_pas_fisher_pooling_hand_worked() -> None:
    frame = make_tests([("m", "s1", "f1", "t1", 0.9, 0.8), ("m", "s1", "f1", "t2", 0.6, 0.5),
                         ("m", "s1", "f2", "t1", 0.2, 0.3), ("m", "s2", "f3", "t1", 0.5, 0.5)])
    result = R.pas(frame)
    # tests: 0.9*0.8+0.1*0.2 = 0.74; 0.6*0.5+0.4*0.5 = 0.5; 0.2*0.3+0.8*0.7 = 0.62; 0.5
    assert result.test["pas"].tolist() == pytest.approx([0.74, 0.5, 0.62, 0.5])
    # f1: r = 0.48 and 0.0 -> z = atanh(0.48) = 0.5230 and 0 -> mean 0.2615 -> 0.6279
    f1 = (math.tanh((math.atanh(0.48) + 0.0) / 2) + 1) / 2
    finding = result.finding.set_index("finding")
    assert finding.loc["f1", "pas"] == pytest.approx(f1)
    assert finding.loc["f2", "pas"] == pytest.approx(0.62) and finding["n"].tolist() == [2, 1, 1]
    # s1: Fisher pooling of f1 (r = 0.2558) and f2 (r = 0.24): (atanh + atanh) / 2
    s1 = (math.tanh((math.atanh(2 * f1 - 1) + math.atanh(0.24)) / 2) + 1) / 2
    study = result.study.set_index("study")
    assert study.loc["s1", "pas"] == pytest.approx(s1) and study.loc["s2", "pas"] == 0.5
    assert study["n"].tolist() == [2, 1] and study["n_tests"].tolist() == [3, 1]
    model = result.model.iloc[0]
    assert model["pas"] == pytest.approx((s1 + 0.5) / 2)
    assert (model["n"], model["n_findings"], model["n_tests"]) == (2, 3, 4)
    # a mean of PAS values in [0, 1] over two studies: the Wilson score interval of the mean
    # with n = 2 (issue 38 item 4; it was the t interval, mean +- t(0.975, 1) * sd / sqrt(2))
    assert (model["pas_low"], model["pas_high"]) == pytest.approx(
        proportion_confint((s1 + 0.5) / 2 * 2, 2, method="wilson"))
    mean = R.pas(frame, study_pooling="mean").study.set_index("study")["pas"]
    assert mean["s1"] == pytest.approx((f1 + 0.62) / 2)


def test_pas_n_eff_weights_and_edge_cases() -> None:
    frame = make_tests([("m", "s", "f", "t1", 0.9, 0.8, 300.0),
                         ("m", "s", "f", "t2", 0.6, 0.5, 100.0)])
    weighted = R.pas(frame, finding_weights="n_eff").finding["pas"].iloc[0]
    # (300*atanh(0.48) + 100*0) / 400 = 0.3923 -> (tanh + 1) / 2 = 0.6866
    assert weighted == pytest.approx(pooled(0.74, 0.5, weights=(300, 100)))
    zero = frame.assign(n_eff=0.0)  # given weights summing to 0 -> unweighted mean of z
    assert R.pas(zero, finding_weights="n_eff").finding["pas"].iloc[0] == pytest.approx(
        pooled(0.74, 0.5))
    # a missing n_eff is not a weight of 0 counted in n: the test is dropped and counted
    one_missing = frame.assign(n_eff=[300.0, np.nan])
    result = R.pas(one_missing, finding_weights="n_eff")
    finding = result.finding.iloc[0]
    assert finding["pas"] == pytest.approx(0.74)  # t1 alone: its own PAS
    assert (finding["n"], finding["n_dropped"]) == (1, 1)
    assert result.model["n_dropped"].iloc[0] == 1 and result.test["dropped"].tolist() == [
        False, True]
    assert any("no n_eff" in note for note in result.notes)
    # equal weights do not need n_eff: nothing dropped
    assert R.pas(one_missing).finding["n_dropped"].iloc[0] == 0
    # a single test keeps its own PAS, unclamped; PAS 1 in a pool is clamped, not infinite
    perfect = make_tests([("m", "s", "f", "t", 1.0, 1.0)])
    assert R.pas(perfect).finding["pas"].iloc[0] == 1.0
    two = make_tests([("m", "s", "f", "t", 1.0, 1.0), ("m", "s", "f", "u", 1.0, 1.0)])
    assert R.pas(two).finding["pas"].iloc[0] == pytest.approx(1 - EPS_HALF)
    with pytest.raises(ValueError, match="study_pooling"):
        R.pas(frame, study_pooling="median")
    with pytest.raises(ValueError, match="n_eff column"):
        R.pas(frame.drop(columns="n_eff"), finding_weights="n_eff")


def test_pas_finding_without_a_usable_test_is_left_out_not_one_half() -> None:
    # The auditor's case: tests 1 and 2 of finding f and test 1 of finding g in study s1, two
    # of them (f/t2, g/t1) with Bayes factors but no human_significant flag; study s2 has only
    # an unflagged test. f/t1: pi_h = 1.9*10/(1 + 19) = 0.95, pi_a = 19/20 = 0.95, so
    # PAS = 0.95*0.95 + 0.05*0.05 = 0.905.
    frame = pd.DataFrame({
        "model": "m", "study": ["s1", "s1", "s1", "s2"], "finding": ["f", "f", "g", "h"],
        "test": ["t1", "t2", "t1", "t1"], "human_bf10": [1.9, 3.0, 3.0, 3.0],
        "agent_bf10": [19.0, 2.0, 2.0, 2.0],
        "human_significant": pd.array([True, None, None, None], dtype="boolean")})
    result = R.pas(frame)
    finding = result.finding.set_index("finding")
    assert finding.loc["f", "pas"] == pytest.approx(0.905)  # t1 alone: its own PAS
    # g has no usable test: no PAS (not the seed's 0.5 for an empty list), n = 0, 1 dropped
    assert math.isnan(finding.loc["g", "pas"])
    assert finding.loc["g", ["n", "n_dropped"]].tolist() == [0, 1]
    study = result.study.set_index("study")
    # s1 is f alone: pooling f with a made-up 0.5 gave (tanh(atanh(0.81)/2) + 1)/2 = 0.7552
    assert study.loc["s1", "pas"] == pytest.approx(0.905)
    assert pooled(0.905, 0.5) == pytest.approx(0.7552, abs=1e-4)
    assert study.loc["s1", ["n", "n_tests", "n_dropped"]].tolist() == [1, 1, 2]
    # s2 has no usable finding: NaN, n = 0, and it is left out of the model mean
    assert math.isnan(study.loc["s2", "pas"])
    assert study.loc["s2", ["n", "n_tests", "n_dropped"]].tolist() == [0, 0, 1]
    model = result.model.iloc[0]
    assert model["pas"] == pytest.approx(0.905)  # not (0.905 + 0.5)/2, not 0.755
    assert (model["n"], model["n_findings"], model["n_tests"], model["n_dropped"]) == (
        1, 1, 1, 3)
    # one study: the Wilson bound of a [0, 1] mean with n = 1 (was NaN: no t interval)
    assert (model["pas_low"], model["pas_high"]) == pytest.approx(
        proportion_confint(0.905, 1, method="wilson"))
    # the same under the simple mean over findings and under the bootstrap
    assert R.pas(frame, study_pooling="mean").model["pas"].iloc[0] == pytest.approx(0.905)
    boot = R.pas(frame, ci="bootstrap", n_boot=50).model.iloc[0]
    assert boot["pas"] == pytest.approx(0.905)
    assert boot["pas_low"] == pytest.approx(0.905) and boot["pas_high"] == pytest.approx(0.905)


def test_pas_runs_without_posteriors_are_empty() -> None:
    effects_only = pd.DataFrame({"model": "m", "study": "s", "finding": "f", "test": ["a"],
                                 "human_d": [0.1], "agent_d": [0.2]})
    empty = R.pas(effects_only)
    assert empty.model.empty and empty.finding.empty
    assert {"pas", "pas_low", "pas_high", "n"} <= set(empty.model.columns)


def test_pas_planted_and_bootstrap() -> None:
    tests = samples.replication_tests()
    result = R.pas(tests, ci="bootstrap", n_boot=300)
    planted = samples.planted_replication_pas().set_index(["model", "study", "finding",
                                                           "test"])["pas"]
    mine = result.test.set_index(["model", "study", "finding", "test"])["pas"]
    np.testing.assert_allclose(mine, planted.reindex(mine.index))
    model = result.model.set_index("model")
    shifted = model.loc["synthetic-agent-shifted"]
    assert shifted["pas"] == 0.5 and shifted["pas_low"] == shifted["pas_high"] == 0.5
    assert (model["pas_low"] <= model["pas"] + 1e-12).all()
    assert (model["pas"] <= model["pas_high"] + 1e-12).all()
    assert model.loc["synthetic-agent-mirror", "pas"] > 0.5 > model.loc[
        "synthetic-agent-flat", "pas"]
    again = R.pas(tests, ci="bootstrap", n_boot=300).model
    pd.testing.assert_frame_equal(again, result.model)  # seeded: same interval twice


def test_bayes_factor_without_significance_flag_is_left_out_not_read_as_null() -> None:
    # Two tests of one finding with Bayes factors; t2 lacks human_significant. Reading the
    # missing flag as "not significant" (prior odds 0.1) would make up pi_h = 0.5 there.
    frame = pd.DataFrame({
        "model": "m", "study": "s", "finding": "f", "test": ["t1", "t2"],
        "human_bf10": [3.0, 9.0], "agent_bf10": [4.0, 1.0],
        "human_significant": pd.array([True, None], dtype="boolean")})
    result = R.pas(frame)
    test = result.test.set_index("test")
    # t1: pi_h = 3*10/(1 + 30) = 30/31, pi_a = 4/5; PAS = 30/31*4/5 + 1/31*1/5 = 121/155
    assert test.loc["t1", "pas"] == pytest.approx(30 / 31 * 0.8 + 1 / 31 * 0.2)
    assert math.isnan(test.loc["t2", "pi_h"]) and math.isnan(test.loc["t2", "pas"])
    assert bool(test.loc["t2", "dropped"])
    finding = result.finding.iloc[0]
    assert finding["pas"] == pytest.approx(121 / 155) and finding["n_dropped"] == 1
    assert result.study["n_dropped"].iloc[0] == 1 and result.model["n_dropped"].iloc[0] == 1
    assert any("human_significant" in note for note in result.notes)
    # the old reading (prior 0.1) would have pooled t2 with pi_h = 0.9/1.9 and moved PAS
    old_pi_h = 0.9 / 1.9
    old_t2 = old_pi_h * 0.5 + (1 - old_pi_h) * 0.5  # = 0.5 exactly: agent BF 1 is neutral
    assert finding["pas"] != pytest.approx(pooled(121 / 155, old_t2))


def test_pas_bootstrap_resamples_studies() -> None:
    # One study with 20 near-perfect findings and four studies of one finding each at 0.3.
    # The model PAS is the mean over the 5 studies: (s1 + 4*0.3)/5. Resampling findings
    # across studies (the old behaviour) lets s1's 20 findings dominate, so the interval sat
    # near PAS of s1; resampling studies gives an interval that contains the estimate.
    rows = [("m", "s1", f"f{i}", "t", 0.95, 0.95) for i in range(20)]
    rows += [("m", f"s{j}", "f", "t", 0.9, 0.2) for j in range(2, 6)]
    frame = make_tests(rows)
    result = R.pas(frame, ci="bootstrap", n_boot=400)
    model = result.model.iloc[0]
    s1 = 0.95 * 0.95 + 0.05 * 0.05
    other = 0.9 * 0.2 + 0.1 * 0.8  # 0.26
    assert model["pas"] == pytest.approx((s1 + 4 * other) / 5)
    assert model["pas_low"] < model["pas"] < model["pas_high"]
    # replicates are means of 5 drawn studies, each s1 or 0.26: the bounds are among
    # (k*s1 + (5 - k)*0.26)/5; 95% of draws of Binomial(5, 1/5) copies of s1 lie in 0..3
    possible = [(k * s1 + (5 - k) * other) / 5 for k in range(6)]
    assert min(abs(model["pas_low"] - v) for v in possible) < 1e-9
    assert min(abs(model["pas_high"] - v) for v in possible) < 1e-9
    assert model["pas_low"] == pytest.approx(possible[0])
    k_high = int(stats.binom.ppf(0.975, 5, 0.2))  # 3
    assert model["pas_high"] == pytest.approx(possible[k_high], abs=1e-9)


def test_pas_is_computed_per_model_independently() -> None:
    tests = samples.replication_tests()
    together = R.pas(tests).study.set_index(["model", "study"])["pas"]
    for _model, part in tests.groupby("model", observed=True):
        alone = R.pas(part).study.set_index(["model", "study"])["pas"]
        np.testing.assert_allclose(together.loc[alone.index], alone, rtol=0, atol=1e-15)


# ------------------------------------------------------------------ CCC


def numpy_ccc(x, y, w=None) -> float:
    """Lin's CCC with normalised weights, straight from the formula."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    w = np.ones_like(x) if w is None else np.asarray(w, float)
    w = w / w.sum()
    mx, my = np.sum(w * x), np.sum(w * y)
    vx, vy = np.sum(w * (x - mx) ** 2), np.sum(w * (y - my) ** 2)
    return 2 * np.sum(w * (x - mx) * (y - my)) / (vx + vy + (mx - my) ** 2)


def test_weighted_ccc_hand_worked() -> None:
    # x = 1, 2, 3; y = 1, 2, 4: means 2 and 7/3; var 2/3 and 14/9; cov 1
    # CCC = 2*1 / (2/3 + 14/9 + 1/9) = 2 / (21/9) = 6/7
    assert R.weighted_ccc([1, 2, 3], [1, 2, 4]) == pytest.approx(6 / 7)
    # weights 1, 1, 2: mx = (1+2+6)/4 = 9/4, my = (1+2+8)/4 = 11/4
    # var x = (25/16 + 1/16 + 2*9/16)/4 = 44/64, var y = (49/16 + 9/16 + 2*25/16)/4 = 108/64
    # cov = (35/16 + 3/16 + 2*15/16)/4 = 68/64; CCC = 136/64 / (152/64 + 16/64) = 136/168
    assert R.weighted_ccc([1, 2, 3], [1, 2, 4], [1, 1, 2]) == pytest.approx(136 / 168)


def test_weighted_ccc_against_numpy_with_nan_pairs_and_zero_weights() -> None:
    rng = np.random.default_rng(1)
    x, y, w = rng.normal(size=40), rng.normal(size=40), rng.random(40)
    assert R.weighted_ccc(x, y, w) == pytest.approx(numpy_ccc(x, y, w))
    # NaN/inf pairs and non-positive or NaN weights are dropped
    xs = np.append(x, [np.nan, 5.0, 1.0, 2.0, 3.0])
    ys = np.append(y, [1.0, np.inf, 2.0, 9.0, 1.0])
    ws = np.append(w, [1.0, 1.0, 0.0, -1.0, np.nan])
    assert R.weighted_ccc(xs, ys, ws) == pytest.approx(numpy_ccc(x, y, w))
    assert math.isnan(R.weighted_ccc([1.0], [2.0]))
    assert math.isnan(R.weighted_ccc([1.0, 2.0], [1.0, 2.0], [0.0, 0.0]))
    with pytest.raises(ValueError, match="differ in length"):
        R.weighted_ccc([1, 2, 3], [1, 2])


def test_weighted_ccc_constant_vectors() -> None:
    assert R.weighted_ccc([0.1, 0.1, 0.1], [0.1, 0.1, 0.1]) == 1.0  # no spread, same mean
    assert R.weighted_ccc([2, 2, 2], [3, 3, 3]) == 0.0              # no spread, means differ
    assert R.weighted_ccc([1, 2, 3], [0.1, 0.1, 0.1]) == 0.0        # one side flat: cov 0
    assert R.weighted_ccc([0.1, 0.1, 0.1], [1, 2, 3], [1, 2, 3]) == 0.0


def test_unnormalised_weights_reproduce_the_released_code() -> None:
    x, y, w = np.array([0.0, 1.0, 2.0]), np.array([0.5, 1.0, 2.5]), np.array([2.0, 2.0, 2.0])
    mx, my = 1.0, 4.0 / 3.0
    cov = np.sum(w * (x - mx) * (y - my))        # sums, not divided by sum(w) = 6
    vx, vy = np.sum(w * (x - mx) ** 2), np.sum(w * (y - my) ** 2)
    expected = 2 * cov / (vx + vy + (mx - my) ** 2)
    assert R.weighted_ccc(x, y, w, normalize_weights=False) == pytest.approx(expected)
    assert R.weighted_ccc(x, y, w, normalize_weights=False) > R.weighted_ccc(x, y, w)
    # with weights summing to 1 both readings agree
    assert R.weighted_ccc(x, y, w / 6, normalize_weights=False) == pytest.approx(
        R.weighted_ccc(x, y, w))


floats = st.floats(-3, 3, allow_nan=False)


@settings(max_examples=150)
@given(data=st.data(), x=st.lists(floats, min_size=3, max_size=25))
def test_ccc_properties(data, x) -> None:
    x = np.asarray(x)
    y = np.asarray(data.draw(st.lists(floats, min_size=len(x), max_size=len(x))))
    w = np.asarray(data.draw(st.lists(st.floats(0.1, 5), min_size=len(x), max_size=len(x))))
    ccc = R.weighted_ccc(x, y, w)
    assert -1 <= ccc <= 1
    assert ccc == pytest.approx(R.weighted_ccc(y, x, w), abs=1e-12)              # symmetric
    assert ccc == pytest.approx(R.weighted_ccc(x, y, 7.5 * w), abs=1e-9)         # weight scale
    order = np.random.default_rng(len(x)).permutation(len(x))
    assert ccc == pytest.approx(R.weighted_ccc(x[order], y[order], w[order]), abs=1e-9)
    if np.ptp(x) > 1e-6:
        assert R.weighted_ccc(x, x, w) == pytest.approx(1.0)                     # identical
    if np.ptp(x) > 1e-3 and np.ptp(y) > 1e-3:
        # |CCC| <= |weighted Pearson r| (numpy's weighted covariance matrix)
        c = np.cov(x, y, aweights=w, ddof=0)
        r = c[0, 1] / math.sqrt(c[0, 0] * c[1, 1])
        assert abs(ccc) <= abs(r) + 1e-9
        assert abs(R.weighted_ccc(x, y)) <= abs(np.corrcoef(x, y)[0, 1]) + 1e-9


def test_bootstrap_moment_sums_give_the_same_ccc() -> None:
    # the bootstrap's one-pass CCC (from cluster sums) against the two-pass weighted_ccc
    rng = np.random.default_rng(11)
    x, y, w = rng.normal(size=50), rng.normal(1, 2, size=50), rng.random(50)
    sums = [np.array([np.sum(v)]) for v in (w, w * x, w * y, w * x * x, w * y * y, w * x * y,
                                             np.ones(50))]
    for normalize in (True, False):
        assert R._ccc_from_sums(*sums, normalize=normalize)[0] == pytest.approx(
            R.weighted_ccc(x, y, w, normalize_weights=normalize), rel=1e-10)
    flat = [np.array([v]) for v in (3.0, 0.3, 0.3, 0.03, 0.03, 0.03, 3.0)]  # x = y = 0.1
    assert R._ccc_from_sums(*flat, normalize=True)[0] == 1.0


# ------------------------------------------------------------------ ECS


def test_structure_weights_hand_worked() -> None:
    # study s: finding a with 1 test, finding b with 2 -> 1/2, 1/4, 1/4; study t: 1 test -> 1
    frame = pd.DataFrame({"model": "m", "study": ["s", "s", "s", "t"],
                          "finding": ["a", "b", "b", "c"], "test": ["1", "1", "2", "1"]})
    assert R.structure_weights(frame).tolist() == [0.5, 0.25, 0.25, 1.0]
    two = pd.concat([frame, frame.iloc[:2].assign(model="n")])  # model n: a (1) and b (1)
    assert R.structure_weights(two).tolist() == [0.5, 0.25, 0.25, 1.0, 0.5, 0.5]


def test_ecs_weights_are_counted_after_invalid_pairs_are_dropped() -> None:
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"model": "m", "study": ["s"] * 3 + ["t"] * 3,
                          "finding": ["a", "b", "b", "c", "c", "d"], "test": list("123456"),
                          "human_d": rng.normal(size=6), "agent_d": rng.normal(size=6)})
    frame.loc[2, "agent_d"] = np.nan  # finding b keeps one valid test
    valid = frame.drop(index=2)
    # s: a 1/2, b 1/2; t: c 1/4, 1/4, d 1/2
    w = np.array([0.5, 0.5, 0.25, 0.25, 0.5])
    row = R.ecs(frame, ci=None).iloc[0]
    assert row["ecs"] == pytest.approx(numpy_ccc(valid["human_d"], valid["agent_d"], w))
    assert (row["n"], row["n_studies"]) == (5, 2)
    # a model without any valid pair keeps its row: undefined, n = 0
    empty = pd.concat([frame, frame.assign(model="z", agent_d=np.nan)], ignore_index=True)
    table = R.ecs(empty, ci="bootstrap", n_boot=20).set_index("model")
    assert table.loc["m", "ecs"] == pytest.approx(row["ecs"])
    assert math.isnan(table.loc["z", "ecs"]) and table.loc["z", ["n", "n_studies"]].tolist() == [
        0, 0]


def test_ecs_equals_the_planted_closed_form_at_every_level() -> None:
    tests = samples.replication_tests()
    planted = samples.planted_replication_ecs()
    for level in ("overall", "domain", "study"):
        for weighting in ("structure", "equal"):
            for normalize in (True, False):
                mine = R.ecs(tests, level=level, weighting=weighting,
                             normalize_weights=normalize, ci=None)
                mine = mine.assign(group="all") if level == "overall" else mine.rename(
                    columns={level: "group"})
                want = planted[(planted["level"] == level) & (planted["weighting"] == weighting)
                               & (planted["normalize_weights"] == normalize)]
                got = mine.set_index(["model", "group"])
                exp = want.set_index(["model", "group"]).reindex(got.index)
                np.testing.assert_allclose(got["ecs"], exp["ecs"], atol=1e-12,
                                           err_msg=f"{level} {weighting} {normalize}")
                assert (got["n"] == exp["n"]).all()


def released_per_study_ecs(frame: pd.DataFrame) -> dict[str, float]:
    """HumanStudy-Bench's per-study ECS transcribed record by record (``compute_ecs_corr``
    with weight 1 per test and ``weighted_ccc`` over weighted sums), for one model."""
    out = {}
    for study, part in frame.groupby("study"):
        x, y = part["human_d"].tolist(), part["agent_d"].tolist()
        if len(x) < 3:
            continue
        mx, my = sum(x) / len(x), sum(y) / len(y)
        cov = sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True))
        vx = sum((a - mx) ** 2 for a in x)
        vy = sum((b - my) ** 2 for b in y)
        out[study] = max(-1.0, min(1.0, 2 * cov / (vx + vy + (mx - my) ** 2)))
    return out


def test_published_per_study_ecs_is_equal_weights_unnormalised() -> None:
    rng = np.random.default_rng(7)
    n = 60
    frame = pd.DataFrame({"model": "m", "study": [f"s{i % 6}" for i in range(n)],
                          "finding": [f"f{i % 12}" for i in range(n)],
                          "test": [f"t{i}" for i in range(n)],
                          "human_d": rng.normal(0.5, 0.4, n)})
    frame["agent_d"] = 0.6 * frame["human_d"] + rng.normal(0.3, 0.2, n)
    mine = R.ecs(frame, level="study", weighting="equal", normalize_weights=False, ci=None)
    released = released_per_study_ecs(frame)
    assert mine.set_index("study")["ecs"].to_dict() == pytest.approx(released)
    textbook = R.ecs(frame, level="study", ci=None).set_index("study")["ecs"]
    assert (mine.set_index("study")["ecs"] >= textbook - 1e-12).all()  # a smaller penalty


def test_ecs_is_computed_per_model_independently() -> None:
    tests = samples.replication_tests(models=["a", "b", "c", "d"], n_studies=8)
    for level in ("overall", "domain", "study"):
        together = R.ecs(tests, level=level).set_index(["model"] + (
            [] if level == "overall" else [level]))
        for _model, part in tests.groupby("model", observed=True):
            alone = R.ecs(part, level=level).set_index(together.index.names)
            pd.testing.assert_frame_equal(together.loc[alone.index], alone, check_dtype=False)


def test_study_with_fewer_than_three_pairs_is_nan() -> None:
    frame = pd.DataFrame({"model": "m", "study": ["s", "s", "t", "t", "t"], "finding": "f",
                          "test": list("12345"), "human_d": [0.1, 0.5, 0.2, 0.4, 0.9],
                          "agent_d": [0.2, 0.4, 0.1, 0.5, 0.8]})
    table = R.ecs(frame, level="study").set_index("study")
    assert math.isnan(table.loc["s", "ecs"]) and table.loc["s", "n"] == 2
    assert table.loc["t", "ecs"] == pytest.approx(numpy_ccc([0.2, 0.4, 0.9], [0.1, 0.5, 0.8]))
    with pytest.raises(ValueError, match="domain column"):
        R.ecs(frame, level="domain")


def lin_interval(x, y, w, n=None) -> tuple[float, float, float]:
    """Lin (1989) with population moments and Kish's n (or the ``n`` given), worked with
    numpy in the test."""
    x, y, w = np.asarray(x), np.asarray(y), np.asarray(w, float)
    n = w.sum() ** 2 / np.sum(w * w) if n is None else n
    c = np.cov(x, y, aweights=w, ddof=0)
    mx, my = np.average(x, weights=w), np.average(y, weights=w)
    sx, sy = math.sqrt(c[0, 0]), math.sqrt(c[1, 1])
    r = c[0, 1] / (sx * sy)
    rc = 2 * c[0, 1] / (sx ** 2 + sy ** 2 + (mx - my) ** 2)
    u = (mx - my) / math.sqrt(sx * sy)
    var = ((1 - r * r) * rc * rc / ((1 - rc * rc) * r * r)
           + 2 * rc ** 3 * (1 - rc) * u * u / (r * (1 - rc * rc) ** 2)
           - rc ** 4 * u ** 4 / (2 * r * r * (1 - rc * rc) ** 2)) / (n - 2)
    half = Z95 * math.sqrt(var)
    return rc, math.tanh(math.atanh(rc) - half), math.tanh(math.atanh(rc) + half)


def test_lin_interval_unweighted_and_weighted() -> None:
    rng = np.random.default_rng(4)
    x = rng.normal(0.5, 0.4, 30)
    y = 0.8 * x + rng.normal(0.1, 0.2, 30)
    frame = pd.DataFrame({"model": "m", "study": [f"s{i // 3}" for i in range(30)],
                          "finding": [f"f{i // 2}" for i in range(30)],
                          "test": [f"t{i}" for i in range(30)], "human_d": x, "agent_d": y})
    # ci="lin": SPEC's interval (the default clusters by study: these studies hold 3 tests)
    row = R.ecs(frame, weighting="equal", ci="lin").iloc[0]
    assert (row["ecs"], row["ecs_low"], row["ecs_high"]) == pytest.approx(
        lin_interval(x, y, np.ones(30)))
    assert row["ci_method"] == "lin"
    weighted = R.ecs(frame, ci="lin").iloc[0]
    w = R.structure_weights(frame)
    assert (weighted["ecs"], weighted["ecs_low"], weighted["ecs_high"]) == pytest.approx(
        lin_interval(x, y, w))
    assert math.isnan(R.ecs(frame, normalize_weights=False).iloc[0]["ecs_low"])
    # one test per study: the tests are the independent units, and the default is Lin's
    single = frame.assign(study=frame["test"])
    row = R.ecs(single, weighting="equal").iloc[0]
    assert row["ci_method"] == "lin"
    assert (row["ecs"], row["ecs_low"], row["ecs_high"]) == pytest.approx(
        lin_interval(x, y, np.ones(30)))


def test_ecs_interval_under_structure_weights_covers_with_kish_n() -> None:
    # The review's design: one study of 40 single-test findings and nine studies of two, so
    # structure weights are 1/40 (x40) and 1/2 (x18). Kish's n = (Σw)²/Σw²
    # = (1 + 9)² / (40/1600 + 18/4) = 100 / 4.525 = 22.1, not the 58 pairs.
    # x ~ N(0.5, 0.5²), y = 0.1 + 0.8x + N(0, 0.3²): var y = 0.16 + 0.09 = 0.25, cov = 0.2,
    # equal means 0.5, so the true CCC is 2(0.2)/(0.25 + 0.25) = 0.8. 400 seeded runs, one
    # per "model", in one call.
    rng = np.random.default_rng(0)
    sims, truth = 400, 0.8
    study = ["big"] * 40 + [f"s{j}" for j in range(9) for _ in range(2)]
    finding = [f"f{i}" for i in range(40)] + [f"f{k}" for _ in range(9) for k in range(2)]
    n = len(study)
    x = rng.normal(0.5, 0.5, (sims, n))
    y = 0.1 + 0.8 * x + rng.normal(0, 0.3, (sims, n))
    frame = pd.DataFrame({
        "model": np.repeat([f"m{i:03d}" for i in range(sims)], n),
        "study": np.tile(study, sims), "finding": np.tile(finding, sims),
        "test": np.tile([f"t{i}" for i in range(n)], sims),
        "human_d": x.ravel(), "agent_d": y.ravel()})
    out = R.ecs(frame, ci="lin").sort_values("model")
    first = out.iloc[0]
    assert (first["n"], first["n_studies"]) == (58, 10)
    assert first["n_kish"] == pytest.approx(100 / 4.525)
    covered = ((out["ecs_low"] <= truth) & (truth <= out["ecs_high"])).mean()
    w = R.structure_weights(frame[frame["model"] == "m000"])
    # the same interval with the number of pairs as n (the old behaviour), by hand
    old = [lin_interval(x[i], y[i], w, n=58) for i in range(sims)]
    covered_old = np.mean([lo <= truth <= hi for _, lo, hi in old])
    assert covered >= 0.90        # 0.94 in this seeded run (nominal 0.95)
    assert covered_old <= 0.85    # 0.80: the pair count overstates the information


def test_ecs_bootstrap_intervals() -> None:
    tests = samples.replication_tests()
    analytic = R.ecs(tests).set_index("model")
    boot = R.ecs(tests, ci="bootstrap", n_boot=300).set_index("model")
    mirror = analytic.loc["synthetic-agent-mirror"]
    assert mirror["ecs"] == 1.0 and mirror["ecs_low"] == mirror["ecs_high"] == 1.0
    shifted = "synthetic-agent-shifted"
    for table in (analytic, boot):
        assert table.loc[shifted, "ecs_low"] < table.loc[shifted, "ecs"] < table.loc[
            shifted, "ecs_high"]
    assert boot.loc["synthetic-agent-mirror", ["ecs_low", "ecs_high"]].tolist() == [1.0, 1.0]
    again = R.ecs(tests, ci="bootstrap", n_boot=300).set_index("model")
    pd.testing.assert_frame_equal(again, boot)
    one_study = tests[tests["study"] == "study_01"]
    single = R.ecs(one_study, ci="bootstrap", n_boot=50)
    assert single["ecs_low"].isna().all()  # one cluster: nothing to resample
    per_study = R.ecs(one_study, level="study", ci="bootstrap", n_boot=200).set_index("model")
    assert per_study.loc[shifted, "ecs_low"] <= per_study.loc[shifted, "ecs"]


# ------------------------------------------------------------------ auxiliaries


def test_pas_normalized_hand_worked() -> None:
    frame = make_tests([("m", "s", "f", "t1", 0.9, 0.8, 300.0),
                         ("m", "s", "f", "t2", 0.2, 0.4, 100.0),
                         ("m", "s", "g", "t1", 0.5, 0.9, 50.0)])
    out = R.pas_normalized(frame).set_index("finding")
    # t1: PAS 0.74, ceiling 0.81 + 0.01 = 0.82 -> r' = 0.48 / 0.64 = 0.75
    # t2: PAS 0.08 + 0.48 = 0.56, ceiling 0.04 + 0.64 = 0.68 -> r' = 0.12 / 0.36 = 1/3
    z = (300 * math.atanh(0.75) + 100 * math.atanh(1 / 3)) / 400
    assert out.loc["f", "pas_norm"] == pytest.approx(math.tanh(z)) and out.loc["f", "n"] == 2
    assert out.loc["g", "pas_norm"] == 0.0 and out.loc["g", "n"] == 0  # neutral ceiling
    equal = R.pas_normalized(frame, finding_weights="equal").set_index("finding")
    assert equal.loc["f", "pas_norm"] == pytest.approx(
        math.tanh((math.atanh(0.75) + math.atanh(1 / 3)) / 2))
    study = R.pas_normalized(frame, level="study").iloc[0]
    assert study["pas_norm"] == pytest.approx((math.tanh(z) + 0.0) / 2) and study["n"] == 2
    mirror = R.pas_normalized(samples.replication_tests())
    assert (mirror.loc[mirror["model"] == "synthetic-agent-mirror", "pas_norm"] > 0.999).all()


def test_pas_normalized_keeps_near_neutral_ceilings_above_1e_8() -> None:
    # t1: pi_h = 0.5003, so the human ceiling r_h = 2(pi_h² + (1 - pi_h)²) - 1 = 4(0.0003)²
    # = 3.6e-7: below the old 1e-6 threshold but above the released code's 1e-8, so it counts.
    #   r = (2 pi_h - 1)(2 pi_a - 1) = 0.0006 * (-0.8) = -0.00048; r / r_h = -1333.3, clamped
    #   to -(1 - 1e-6): z1 = atanh(-0.999999) = -7.2543
    # t2: pi_h = 0.9, pi_a = 0.2: PAS = 0.18 + 0.08 = 0.26, r = -0.48; r_h = 2(0.82) - 1 = 0.64
    #   r' = -0.75, z2 = atanh(-0.75) = -0.9730
    # equal n_eff: z = (-7.2543 - 0.9730) / 2 = -4.1137 -> tanh = -0.999466
    # (the old 1e-6 threshold skipped t1 and gave -0.75)
    frame = make_tests([("m", "s", "f", "t1", 0.5003, 0.1, 100.0),
                         ("m", "s", "f", "t2", 0.9, 0.2, 100.0)])
    z1, z2 = math.atanh(-(1 - 1e-6)), math.atanh(-0.75)
    value = R.pas_normalized(frame)["pas_norm"].iloc[0]
    assert value == pytest.approx(math.tanh((z1 + z2) / 2), rel=1e-9)
    assert value == pytest.approx(-0.999466, abs=5e-7)
    # exactly neutral (pi_h = 0.5, r_h = 0) is skipped: t2 alone
    neutral = frame.assign(human_pi=[0.5, 0.9])
    assert R.pas_normalized(neutral)["pas_norm"].iloc[0] == pytest.approx(-0.75)


def test_ecs_strict_uses_each_sides_own_sample_size() -> None:
    # human d 0.5 on 40 people, agent d 0.2 on 200 simulated participants:
    # SE_h = sqrt(1/40 + 0.25/80) = sqrt(0.028125), SE_a = sqrt(1/200 + 0.04/400)
    # = sqrt(0.0051); Z = -0.3 / sqrt(0.033225) = -1.6458; p = 2(1 - Φ(1.6458))
    frame = pd.DataFrame({"model": "m", "study": "s", "finding": "f", "test": ["t"],
                          "human_d": [0.5], "agent_d": [0.2], "human_n": [40.0],
                          "agent_n": [200.0], "n_eff": [100.0]})
    z = -0.3 / math.sqrt(1 / 40 + 0.25 / 80 + 1 / 200 + 0.04 / 400)
    row = R.ecs_strict(frame).iloc[0]
    assert row["ecs_strict"] == pytest.approx(2 * stats.norm.sf(abs(z)))
    # without the sizes both sides fall back to n_eff = 100
    z_eff = -0.3 / math.sqrt(1 / 100 + 0.25 / 200 + 1 / 100 + 0.04 / 200)
    fallback = R.ecs_strict(frame.drop(columns=["human_n", "agent_n"])).iloc[0]
    assert fallback["ecs_strict"] == pytest.approx(2 * stats.norm.sf(abs(z_eff)))
    assert R.ecs_strict(frame.drop(columns="n_eff")).iloc[0]["ecs_strict"] == pytest.approx(
        row["ecs_strict"])


def test_ecs_strict_hand_worked() -> None:
    frame = pd.DataFrame({"model": "m", "study": ["s", "s", "s", "t"],
                          "finding": ["a", "b", "b", "c"], "test": list("1234"),
                          "human_d": [0.0, 0.0, 0.0, 0.5], "agent_d": [0.3, 0.2, -0.2, 0.5],
                          "n_eff": [50.0, 50.0, 50.0, 80.0]})
    se = [math.sqrt(1 / 50 + d * d / 100) for d in (0.3, 0.2, -0.2)]
    z = [0.3 / math.sqrt(se[0] ** 2 + 0.02), 0.2 / math.sqrt(se[1] ** 2 + 0.02),
         -0.2 / math.sqrt(se[2] ** 2 + 0.02)]
    out = R.ecs_strict(frame).set_index("finding")
    assert out.loc["a", "ecs_strict"] == pytest.approx(2 * stats.norm.sf(abs(z[0])))
    # K = 2: chi-square with 2 degrees of freedom on z1^2 + z2^2
    assert out.loc["b", "ecs_strict"] == pytest.approx(stats.chi2.sf(z[1] ** 2 + z[2] ** 2, 2))
    assert out.loc["b", "z_rms"] == pytest.approx(math.sqrt((z[1] ** 2 + z[2] ** 2) / 2))
    assert out.loc["c", "ecs_strict"] == 1.0 and out.loc["c", "z_rms"] == 0.0
    study = R.ecs_strict(frame, level="study").set_index("study")
    p_a, p_b = out.loc["a", "ecs_strict"], out.loc["b", "ecs_strict"]
    stouffer = (stats.norm.ppf(1 - p_a) + stats.norm.ppf(1 - p_b)) / math.sqrt(2)
    assert study.loc["s", "ecs_strict"] == pytest.approx(1 - stats.norm.cdf(stouffer))
    assert study.loc["t", "ecs_strict"] == 1.0  # one finding keeps its p
    with pytest.raises(ValueError, match="human_n and agent_n, or n_eff"):
        R.ecs_strict(frame.drop(columns="n_eff"))


# ------------------------------------------------------------------ study summaries


def test_summary_leaderboard_equals_the_planted_means() -> None:
    summary = samples.replication_summary()
    board = R.summary_leaderboard(summary).set_index("model")
    planted = samples.planted_replication_summary().set_index("model")
    for metric in ("pas", "ecs"):
        np.testing.assert_allclose(board.loc[planted.index, f"mean_study_{metric}"],
                                   planted[f"mean_{metric}"], atol=1e-12)
        assert (board.loc[planted.index, f"n_{metric}"] == planted[f"n_{metric}"]).all()
    # v1's PAS over studies 0.40, 0.42, ..., 0.50: below 30 studies the Wilson score
    # interval of the mean with n = 6 (issue 38 item 4; it was the t interval)
    values = 0.4 + 0.02 * np.arange(6)
    low, high = proportion_confint(values.mean() * 6, 6, method="wilson")
    v1 = board.loc["synthetic-agent-v1-empty"]
    assert (v1["mean_study_pas_low"], v1["mean_study_pas_high"]) == pytest.approx((low, high))
    assert board.index[0] == "synthetic-agent-v3-reasoning"  # best PAS first
    # v3 lacks one study's PAS: the rank bootstrap's statistic is the mean over the 5 studies
    # all three share (0.54 for v2, not its own 0.55), and so is the rank (issue 23, item 8)
    assert board["rank"].iloc[0] == 1 and board["ranked_by"].iloc[0] == "shared_study_pas"
    assert board.loc["synthetic-agent-v2-persona", "shared_study_pas"] == pytest.approx(0.54)
    # no published configuration values in this file: none is shown under those names
    assert board["config_pas"].isna().all() and board["config_ecs"].isna().all()
    assert board["cost"].to_dict() == pytest.approx(summary.groupby(
        "model", observed=True)["cost"].sum().to_dict())


def test_summary_leaderboard_ranks_by_published_pas_and_puts_unscored_last() -> None:
    frame = pd.DataFrame({
        "model": ["a", "a", "b", "b", "c"], "study": ["s1", "s2", "s1", "s2", "s1"],
        "pas": [0.2, 0.4, 0.5, 0.7, np.nan], "ecs": [0.1, 0.3, 0.2, np.nan, np.nan],
        "config_pas": [0.3, 0.3, 0.6, 0.6, np.nan], "config_ecs": [0.9, 0.9, 0.1, 0.1, np.nan],
        "cost": [1.0, 2.0, 0.5, 0.5, 0.0]})
    board = R.summary_leaderboard(frame, n_boot=200)
    assert board["model"].tolist() == ["b", "a", "c"]   # by config_pas, c has no score
    assert board["rank"].tolist()[:2] == [1.0, 2.0] and np.isnan(board["rank"].iloc[2])
    assert board["no_scores"].tolist() == [False, False, True]
    row_a = board.set_index("model").loc["a"]
    # published values as written; the per-study mean is a different number, kept apart
    assert (row_a["config_ecs"], row_a["mean_study_ecs"]) == (0.9, pytest.approx(0.2))
    assert row_a["cost"] == 3.0 and row_a["n_pas"] == 2 and row_a["few_items"]
    # two studies: b is higher on both (0.5 > 0.2, 0.7 > 0.4), but the paired t on 2 studies
    # (1 degree of freedom) cannot decide the pair, so b may be first or second (the
    # bootstrap printed [1, 1] before issue 38 item 6: every replicate had b first)
    assert (board["rank_low"].iloc[0], board["rank_high"].iloc[0]) == (1.0, 2.0)


def test_real_humanstudy_results_keep_the_published_numbers() -> None:
    import json

    from kbench_core.io import load_run

    path = REAL / "humanstudy-bench" / "simple_results.json"
    published = json.loads(path.read_text())["configs"]
    run = load_run(path)
    board = R.summary_leaderboard(run.frame).set_index("model")
    assert len(board) == len(published) == 63
    for name, config in published.items():
        row = board.loc[name]
        for ours, theirs in (("config_pas", "pas_raw"), ("config_ecs", "ecs")):
            if config[theirs] is None:
                assert np.isnan(row[ours])
            else:
                assert row[ours] == config[theirs]  # bit for bit, as published
        assert row["tokens"] == config["total_tokens"]
        assert row["cost"] == pytest.approx(config["total_cost"], abs=1e-9)
        studies = [s["pas_raw"] for s in config["studies"] if s["pas_raw"] is not None]
        if studies:  # the published pas_raw is the mean of its study values
            assert row["mean_study_pas"] == pytest.approx(np.mean(studies), abs=1e-12)
            assert row["config_pas"] == pytest.approx(row["mean_study_pas"], abs=1e-12)
    gemini = board.loc["google_gemini_3_flash_preview_v4-background"]
    assert round(gemini["config_ecs"], 3) == 0.249 and round(gemini["mean_study_ecs"], 3) == 0.008
    assert board["no_scores"].sum() == 2 and board["no_scores"].iloc[-2:].all()
    findings = R.finding_rows(run.frame)
    assert len(findings) == sum(len(c["findings"]) for c in published.values()) == 4181


# ------------------------------------------------------------------ figures


def weighted_tests(**kwargs) -> pd.DataFrame:
    tests = R.prepare_tests(samples.replication_tests(**kwargs))
    return tests.assign(weight=R.structure_weights(tests))


def test_scatter_panels_titles_legend_and_lines() -> None:
    tests = weighted_tests()
    table = R.ecs(tests)
    fig = rep_figures.effect_scatter(tests, table)
    titles = [a.text for a in fig.layout.annotations if "CCC" in (a.text or "")]
    shifted = table.set_index("model").loc["synthetic-agent-shifted"]
    assert any(f"CCC {shifted['ecs']:.3f} [{shifted['ecs_low']:.2f}, "
               f"{shifted['ecs_high']:.2f}], n = 36" in t for t in titles)
    assert any("(no interval)" in t for t in titles)  # the flat model: r undefined
    assert len([s for s in fig.layout.shapes if s.x0 == s.y0 and s.x1 == s.y1]) == 3  # y = x
    assert fig.layout.legend.itemclick == "toggleothers"
    markers = [t for t in fig.data if t.mode == "markers"]
    assert {t.legendgroup for t in markers} == {f"study_0{i}" for i in range(1, 7)}
    assert sum(len(t.x) for t in markers) == len(tests)
    assert all(t.type == "scatter" for t in markers)
    fits = [t for t in fig.data if t.name == "weighted fit"]
    assert len(fits) == 3
    mirror_fit = fits[sorted(table["model"]).index("synthetic-agent-mirror")]
    slope = (mirror_fit.y[1] - mirror_fit.y[0]) / (mirror_fit.x[1] - mirror_fit.x[0])
    assert slope == pytest.approx(1.0)  # agent d = human d exactly
    hover = markers[0].hovertemplate
    assert "human d" in hover and "agent d" in hover and "%{text}" in hover
    first = tests.loc[(tests["study"].astype(str) == markers[0].legendgroup)
                      & (tests["model"] == sorted(table["model"])[0])].iloc[0]  # panel 1
    assert markers[0].text[0] == (f"<b>{first['test']}</b><br>{first['study']} · "
                                  f"{first['finding']}<br>{first['model']}")


def test_scatter_overlaid_uses_webgl_beyond_5000_points() -> None:
    tests = weighted_tests(n_studies=160)  # 3 models x 960 tests = 2880 rows
    big = pd.concat([tests, tests.assign(model=tests["model"].astype(str) + "-b")],
                    ignore_index=True)
    assert rep_figures.WEBGL_ABOVE < len(big) <= rep_figures.MAX_POINTS
    fig = rep_figures.effect_scatter(big, R.ecs(big), panels=False, color_by="domain")
    markers = [t for t in fig.data if t.mode == "markers"]
    assert markers and all(t.type == "scattergl" for t in markers)
    assert {t.name for t in markers} == {"Cognition", "Social", "Strategic"}
    assert "6 models overlaid" in fig.layout.title.text.replace("<br>", " ")  # title wraps
    assert len([t for t in fig.data if (t.name or "").startswith("fit · ")]) == 6


def test_scatter_aggregates_big_runs_into_a_density_grid() -> None:
    models = [f"agent-{i:02d}" for i in range(30)]
    tests = R.prepare_tests(samples.replication_tests(models=models, n_studies=120))
    assert len(tests) > rep_figures.MAX_POINTS
    fig = rep_figures.effect_scatter(tests, R.ecs(tests), panels=False)
    heat = [t for t in fig.data if t.type == "heatmap"]
    assert len(heat) == 1 and np.nansum(heat[0].z) == len(tests)
    assert len(fig.to_json()) < 2 * 1024**2  # SPEC 5: a figure sent to the browser <= 2 MB
    small = rep_figures.effect_scatter(R.prepare_tests(samples.replication_tests()))
    assert not any(t.type == "heatmap" for t in small.data)


def test_scatter_panels_wrap_four_to_a_row_and_overlay_beyond_twelve() -> None:
    seven = weighted_tests(models=[f"agent-{i}" for i in range(7)])
    fig = rep_figures.effect_scatter(seven, R.ecs(seven))
    assert {t.xaxis for t in fig.data if t.mode == "markers"} == {
        "x", *(f"x{i}" for i in range(2, 8))}  # seven panels
    assert fig.layout.yaxis5.domain[1] < fig.layout.yaxis.domain[0]  # panel 5 on row 2
    many = weighted_tests(models=[f"agent-{i:02d}" for i in range(13)])
    overlaid = rep_figures.effect_scatter(many, R.ecs(many), panels=True)
    assert "13 models overlaid; panels need at most 12" in (
        overlaid.layout.title.text.replace("<br>", " "))  # the title wraps
    assert {t.xaxis for t in overlaid.data} == {"x"}


def test_heat_table_and_leaderboard() -> None:
    result = R.pas(samples.replication_tests())
    fig = rep_figures.study_heatmap(result.study, value="pas")
    heat = fig.data[0]
    grid = result.study.pivot_table(index="study", columns="model", values="pas",
                                    observed=True).sort_index().sort_index(axis=1)
    # ranked (issue 24): best study on top, best model on the left, by mean PAS
    grid = grid.loc[grid.mean(axis=1).sort_values(ascending=False, kind="stable").index]
    grid = grid[grid.mean(axis=0).sort_values(ascending=False, kind="stable").index]
    np.testing.assert_allclose(np.asarray(heat.z, float), grid.to_numpy())
    assert "%{customdata}" in heat.hovertemplate
    assert np.asarray(heat.customdata).shape == grid.shape
    assert str(np.asarray(heat.customdata)[0, 0]).startswith("n = ")
    board = R.summary_leaderboard(samples.replication_summary())
    lead = rep_figures.summary_leaderboard(board)
    names = {t.name for t in lead.data}
    assert {"Mean of per-study PAS", "Mean of per-study ECS", "cost (US$)"} <= names
    cost = next(t for t in lead.data if t.name == "cost (US$)")
    assert cost.xaxis == "x2"  # cost in its own panel beside the score


def test_loader_warns_when_bayes_factors_come_without_the_flag() -> None:
    from kbench_core.io import load_run

    text = (b"model,study,finding,test,human_bf10,agent_bf10,human_significant\n"
            b"m,s,f,t,3,4,\nm,s,f,u,3,4,true\n")
    run = load_run(("bf.csv", text))
    assert any("1 of 2 tests have a human Bayes factor but no human_significant" in w
               for w in run.warnings)
    flagged = load_run(("bf.csv", text.replace(b"3,4,\n", b"3,4,false\n")))
    assert not any("human_significant" in w for w in flagged.warnings)
