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
from statsmodels.stats.power import NormalIndPower

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


@settings(max_examples=200, deadline=None)
@given(delta=st.floats(0.01, 1), sd=st.floats(0.05, 2), power=st.floats(0.5, 0.95))
def test_samples_needed_is_the_smallest_n_with_the_power_by_statsmodels(delta, sd,
                                                                         power) -> None:
    # statsmodels' NormalIndPower with ratio=0 is the one-sample (paired) z test on the
    # standardised effect delta / sd. The closed form ignores the far tail of the two-sided
    # test, i.e. it is the one-sided power at alpha / 2: our n reaches it, one item fewer not.
    z_test = NormalIndPower()

    def achieved(n: int) -> float:
        return z_test.power(delta / sd, n, 0.025, ratio=0, alternative="larger")

    ours = compare.samples_needed(delta, sd, power=power)
    assert achieved(ours) >= power - 1e-12
    if ours > 1:
        assert achieved(ours - 1) < power


def test_samples_needed_closed_form() -> None:
    z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
    # (2.8016 * 0.3 / 0.05)^2 = 282.6 -> 283
    assert compare.samples_needed(0.05, 0.3) == math.ceil((z * 0.3 / 0.05) ** 2) == 283
    assert compare.samples_needed(-0.05, 0.3) == 283
    with pytest.raises(ValueError):
        compare.samples_needed(0, 0.3)


@settings(max_examples=200, deadline=None)
@given(value=st.floats(-1, 1), half=st.floats(0, 1), lower=st.booleans(),
       adjusted=st.none() | st.floats(0, 1))
def test_verdict_never_claims_a_direction_when_the_interval_covers_zero(value, half, lower,
                                                                        adjusted) -> None:
    est = Estimate(value, value - half, value + half, 50, 0.04)
    text = compare.verdict(est, "A", "B", "bias score", lower_is_better=lower,
                           adjusted_p=adjusted)
    if est.low <= 0 <= est.high:
        assert text.startswith("No detectable difference")
        for word in ("better", "worse", "less", "more", "lower", "higher"):
            assert word not in text
    else:
        assert ("better" in text) != ("worse" in text)
        # the claimed direction is the sign of the interval, and "better" follows the metric
        assert ("A scores lower" in text) == (est.high < 0)
        assert ("better" in text) == ((est.high < 0) == lower)


@settings(max_examples=50, deadline=None)
@given(value=st.floats(-1, 1), lower=st.booleans())
def test_verdict_without_an_interval_claims_nothing(value, lower) -> None:
    est = Estimate(value, math.nan, math.nan, 1, None)
    text = compare.verdict(est, "A", "B", "bias score", lower_is_better=lower)
    assert text.startswith("No interval")
    for word in ("better", "worse", "less", "more", "lower", "higher"):
        assert word not in text


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


def test_item_values_is_a_groupby_mean_with_missing_labels_as_a_level() -> None:
    trials = samples.bias_trials()
    table = compare.item_values(trials, "score")
    keys = list(compare.ITEM_KEYS["bias"])
    labelled = trials.assign(**trials[keys].astype(object).fillna(""))
    expected = labelled.groupby([*keys, "model"])["score"].mean().unstack("model")
    assert table.index.equals(expected.index)  # same items, same (sorted) order
    np.testing.assert_allclose(table.to_numpy(), expected[table.columns].to_numpy(),
                               rtol=1e-12, equal_nan=True)


def test_constant_differences_have_a_zero_width_interval() -> None:
    # every item differs by exactly 0.3 (as floats: up to rounding)
    frame = paired_frame(A + 0.3, A)
    est = compare.paired_difference(frame, "value", "A", "B", item="item")
    assert est.value == pytest.approx(0.3)
    assert est.low == est.high == est.value and est.p_value == 0.0


def test_ties_share_the_mean_rank() -> None:
    frame = pd.concat([paired_frame(A, A, models=("A", "B")),
                       paired_frame(A + 1, A + 1, models=("C", "C"))
                       .drop_duplicates(["item", "model"])])
    ranks = compare.rank_intervals(frame, "value", item="item", lower_is_better=True)
    assert dict(zip(ranks["model"], ranks["rank"], strict=True)) == {"A": 1.5, "B": 1.5,
                                                                     "C": 3.0}
    # identical in every resample: the tie never breaks
    assert ranks.set_index("model").loc["A", ["rank_low", "rank_high"]].tolist() == [1.5, 1.5]


def test_directions() -> None:
    for metric in ("score", "bms", "ece", "brier", "hallucination_rate", "invalid_rate", "fpr",
                   "abs_diff"):
        assert compare.direction(metric) == "lower"
    for metric in ("correct", "target_found_vulnerable", "tdr", "accuracy", "pas", "ecs"):
        assert compare.direction(metric) == "higher"


def test_per_item_values_of_a_judged_run() -> None:
    frame = pd.DataFrame({
        "sample": ["s1", "s2", "s3", "s4"], "model": "m", "judge": "j",
        "is_vulnerable": [True, True, False, False],
        "said_vulnerable": pd.array([True, False, True, None], dtype="boolean"),
        "target_found": [True, False, False, False]})
    out = compare.per_item_values(frame, "judged")
    # s1 right, s2 missed, s3 false alarm, s4 failed judgement (unknown, not a "no")
    np.testing.assert_array_equal(out["correct"], [1.0, 0.0, 0.0, np.nan])
    # a target can only be found on a vulnerable sample: safe ones are left out
    np.testing.assert_array_equal(out["target_found_vulnerable"], [1.0, 0.0, np.nan, np.nan])


def test_per_item_values_of_a_replication_run_converts_native_effects() -> None:
    frame = pd.DataFrame({
        "model": "m", "study": "s", "finding": "f", "test": ["t1", "t2", "t3"],
        "test_type": ["t", "correlation", "binomial"],
        "human_effect": [0.5, math.atanh(0.6), 0.75], "agent_effect": [0.2, 0.0, 0.5]})
    out = compare.per_item_values(frame)  # kind detected from the columns
    # t: d as given -> |0.2 - 0.5| = 0.3
    # correlation: z = atanh(0.6) -> r = 0.6 -> d = 2(0.6)/sqrt(1 - 0.36) = 1.2/0.8 = 1.5;
    #   agent z = 0 -> d = 0 -> |0 - 1.5| = 1.5
    # binomial: p = 0.75 -> d = 2(0.25)/0.5 = 1.0; agent p = 0.5 -> 0 -> 1.0
    np.testing.assert_allclose(out["abs_diff"], [0.3, 1.5, 1.0])
    given = frame.assign(human_d=[0.1, np.nan, 0.0], agent_d=[0.4, np.nan, 0.0])
    # human_d/agent_d win where given: |0.4 - 0.1| = 0.3; row 2 falls back to the effects
    np.testing.assert_allclose(compare.per_item_values(given)["abs_diff"], [0.3, 1.5, 0.0])


def test_per_item_values_of_the_sample_runs_feed_compare_models() -> None:
    from kbench_core.io import load_run

    for kind in ("bias", "judged", "replication"):
        run = load_run(f"sample_data/{kind}.csv")
        spec = compare.COMPARISONS[kind]
        frame = compare.per_item_values(run.frame)
        if kind == "judged":
            frame = frame[frame["judge"] == frame["judge"].iloc[0]]
        for column in spec.options.values():
            pairs = compare.compare_models(frame, column, cluster=spec.cluster)
            k = frame["model"].nunique()
            assert len(pairs) == k * (k - 1) // 2 and pairs["p_value"].notna().all()
    with pytest.raises(ValueError, match="no per-item comparison"):
        compare.per_item_values(pd.DataFrame({"model": ["m"], "study": ["s"], "pas": [0.5],
                                              "ecs": [0.1]}), "replication_summary")
