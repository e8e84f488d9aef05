"""kbench_core.compare against scipy and statsmodels computed in the test, and planted truths."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.multitest import multipletests

from kbench_core import compare, samples
from kbench_core.stats import Estimate


def paired_frame(a: np.ndarray, b: np.ndarray, clusters: np.ndarray | None = None,
                 models=("A", "B")) -> pd.DataFrame:
    n = len(a)
    frame = pd.DataFrame({
        "item": np.tile(np.arange(n), 2), "model": np.repeat(models, n),
        "value": np.concatenate([a, b])})
    if clusters is not None:
        frame["group"] = np.tile(clusters, 2)
    return frame


RNG = np.random.default_rng(3)
A = RNG.normal(0.5, 0.2, 60)
B = A - 0.05 + RNG.normal(0, 0.1, 60)
GROUPS = np.repeat(np.arange(12), 5)


def test_paired_difference_is_scipys_paired_t() -> None:
    est = compare.paired_difference(paired_frame(A, B), "value", "A", "B", item="item")
    ref = stats.ttest_rel(A, B)
    ci = ref.confidence_interval(0.95)
    assert est.value == pytest.approx(np.mean(A - B))
    assert est.p_value == pytest.approx(ref.pvalue)
    assert (est.low, est.high) == pytest.approx((ci.low, ci.high))
    assert est.n == 60 and est.n_dropped == 0


def test_clustered_difference_is_statsmodels_cluster_ols_with_g_minus_1_df() -> None:
    est = compare.paired_difference(paired_frame(A, B, GROUPS), "value", "A", "B",
                                    item="item", cluster="group")
    fit = sm.OLS(A - B, np.ones(60)).fit(cov_type="cluster", cov_kwds={"groups": GROUPS})
    se = fit.bse[0]
    t_crit = stats.t.ppf(0.975, 12 - 1)
    assert est.value == pytest.approx(fit.params[0])
    assert (est.low, est.high) == pytest.approx((fit.params[0] - t_crit * se,
                                                 fit.params[0] + t_crit * se))
    assert est.p_value == pytest.approx(2 * stats.t.sf(abs(fit.params[0] / se), 11))


def test_items_missing_on_one_side_are_dropped_and_counted() -> None:
    frame = paired_frame(A, B)
    frame = frame[~((frame["model"] == "B") & (frame["item"] < 7))]
    est = compare.paired_difference(frame, "value", "A", "B", item="item")
    assert est.n == 53 and est.n_dropped == 7
    assert est.value == pytest.approx(np.mean(A[7:] - B[7:]))


def test_compare_models_adjusts_with_multipletests() -> None:
    c = A + 0.2 + RNG.normal(0, 0.1, 60)
    frame = pd.concat([paired_frame(A, B), paired_frame(c, c, models=("C", "C"))
                       .drop_duplicates(["item", "model"])])
    for method in ("holm", "fdr_bh"):
        table = compare.compare_models(frame, "value", item="item", correction=method)
        assert list(zip(table["model_a"], table["model_b"], strict=True)) == [
            ("A", "B"), ("A", "C"), ("B", "C")]
        expected = multipletests(table["p_value"], method=method)[1]
        np.testing.assert_allclose(table["p_adjusted"], expected)
        raw = stats.ttest_rel(A, c).pvalue
        assert table.loc[1, "p_value"] == pytest.approx(raw)
    with pytest.raises(ValueError, match="correction must be"):
        compare.compare_models(frame, "value", item="item", correction="bonferroni")


def test_rank_intervals_planted_winner_and_ties() -> None:
    rng = np.random.default_rng(0)
    n = 300
    base = rng.normal(0, 1, n)
    frame = pd.DataFrame({
        "item": np.tile(np.arange(n), 4),
        "model": np.repeat(["winner", "tie1", "tie2", "loser"], n),
        "value": np.concatenate([base + 3, base + rng.normal(0, 1, n),
                                 base + rng.normal(0, 1, n), base - 3])})
    ranks = compare.rank_intervals(frame, "value", item="item",
                                   lower_is_better=False).set_index("model")
    assert (ranks.loc["winner", "rank_low"], ranks.loc["winner", "rank_high"]) == (1, 1)
    assert (ranks.loc["loser", "rank_low"], ranks.loc["loser", "rank_high"]) == (4, 4)
    # the two planted ties: intervals overlap, each spans ranks 2 and 3
    for tie in ("tie1", "tie2"):
        assert ranks.loc[tie, "rank_low"] == 2 and ranks.loc[tie, "rank_high"] == 3


def test_rank_direction_follows_the_metric() -> None:
    trials = samples.bias_trials()
    ranks = compare.rank_intervals(trials, "score")  # bias score: lower is better
    assert ranks.iloc[0]["model"] == "synthetic-gamma"  # planted least biased
    assert compare.is_lower_better("ece") and not compare.is_lower_better("tdr")


def test_samples_needed_closed_form() -> None:
    z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
    # (2.8016 * 0.3 / 0.05)^2 = 282.6 -> 283
    assert compare.samples_needed(0.05, 0.3) == math.ceil((z * 0.3 / 0.05) ** 2) == 283
    assert compare.samples_needed(-0.05, 0.3) == 283
    with pytest.raises(ValueError):
        compare.samples_needed(0, 0.3)


@settings(max_examples=200, deadline=None)
@given(value=st.floats(-1, 1), half=st.floats(0, 1), lower=st.booleans())
def test_verdict_never_claims_a_direction_when_the_interval_covers_zero(value, half,
                                                                        lower) -> None:
    est = Estimate(value, value - half, value + half, 50, 0.04)
    text = compare.verdict(est, "A", "B", "bias score", lower_is_better=lower)
    if est.low <= 0 <= est.high:
        assert text.startswith("No detectable difference")
        for word in ("better", "worse", "scores lower", "scores higher"):
            assert word not in text
    else:
        assert ("better" in text) != ("worse" in text)


def test_bias_run_item_key_averages_trials() -> None:
    trials = samples.bias_trials()
    table = compare.item_values(trials, "score")
    assert table.index.names == list(compare.ITEM_KEYS["bias"])
    # NaN exactly where every trial of the item is unknown (failed extraction), never imputed
    known = trials.dropna(subset=["score"])
    assert int(table.notna().sum().sum()) == len(
        known.drop_duplicates([*compare.ITEM_KEYS["bias"], "model"]))


def test_a_single_cluster_gives_no_interval_instead_of_crashing() -> None:
    est = compare.paired_difference(paired_frame(A, B, np.zeros(60, dtype=int)), "value", "A",
                                    "B", item="item", cluster="group")
    assert est.value == pytest.approx(np.mean(A - B))
    assert math.isnan(est.low) and math.isnan(est.high) and est.p_value is None
    text = compare.verdict(est, "A", "B", "score", lower_is_better=True)
    assert text.startswith("No interval") and "better" not in text
