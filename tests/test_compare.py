"""kbench_core.compare against scipy and statsmodels computed in the test, and planted truths."""

from __future__ import annotations

import io
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


DIRECTION_WORDS = ("better", "worse", "scores lower", "scores higher")


@settings(max_examples=300, deadline=None)
@given(value=st.floats(-1, 1), half=st.floats(0, 1), lower=st.booleans(),
       raw=st.floats(0, 1), adjusted=st.none() | st.floats(0, 1))
def test_verdict_claims_a_direction_only_when_the_quoted_evidence_supports_it(
        value, half, lower, raw, adjusted) -> None:
    est = Estimate(value, value - half, value + half, 50, raw)
    text = compare.verdict(est, "A", "B", "bias score", lower_is_better=lower,
                           adjusted_p=adjusted)
    quoted = raw if adjusted is None else adjusted
    claims = any(word in text for word in DIRECTION_WORDS)
    # SPEC 2.6: never a direction when the interval it reports contains 0 or the p it
    # reports is >= alpha
    if est.low <= 0 <= est.high or quoted >= 0.05:
        assert not claims and text.startswith("The data cannot tell A and B apart")
    else:
        assert claims and ("better" in text) != ("worse" in text)
        assert ("A scores lower" in text) == (est.high < 0)
        assert ("better" in text) == ((est.high < 0) == lower)
    # the p it quotes is the one it decided on ("< 1e-12" below that: never "p = 0")
    assert (f"= {quoted:.3g}" if quoted >= 1e-12 else "p < 1e-12") in text


def test_verdict_under_holm_does_not_claim_what_the_adjusted_p_denies() -> None:
    # The review's case: 4 models, 40 items. A − B's unadjusted interval excludes 0, but over
    # the 6 pairs Holm's adjusted p is above 0.05, so no direction may be claimed.
    rng = np.random.default_rng(2)
    base = rng.normal(0.5, 0.3, 40)
    values = {"A": base + 0.35 + rng.normal(0, 1.1, 40), "B": base,
              "C": base + rng.normal(0, 0.3, 40), "D": base + rng.normal(0, 0.3, 40)}
    frame = pd.DataFrame({"item": np.tile(np.arange(40), 4),
                          "model": np.repeat(list(values), 40),
                          "value": np.concatenate(list(values.values()))})
    pairs = compare.compare_models(frame, "value", item="item")
    row = pairs[(pairs.model_a == "A") & (pairs.model_b == "B")].iloc[0]
    # the independent check: scipy's paired t and statsmodels' Holm over the six raw p
    raw = {(a, b): stats.ttest_rel(values[a], values[b]).pvalue
           for a, b in [("A", "B"), ("A", "C"), ("A", "D"), ("B", "C"), ("B", "D"),
                        ("C", "D")]}
    holm = dict(zip(raw, multipletests(list(raw.values()), method="holm")[1], strict=True))
    assert row.p_value == pytest.approx(raw["A", "B"]) and row.p_value < 0.05  # 0.024
    assert row.p_adjusted == pytest.approx(holm["A", "B"]) and row.p_adjusted >= 0.05  # 0.145
    est = compare.paired_difference(frame, "value", "A", "B", item="item")
    assert est.low > 0  # the unadjusted interval alone would have claimed "higher"
    text = compare.verdict(est, "A", "B", "score", lower_is_better=False,
                           adjusted_p=row.p_adjusted)
    assert "cannot tell" in text and "Holm" in text
    assert not any(word in text for word in DIRECTION_WORDS)
    # without the adjustment the same numbers do support a direction
    assert "A scores higher" in compare.verdict(est, "A", "B", "score", lower_is_better=False)


@settings(max_examples=50, deadline=None)
@given(value=st.floats(-1, 1), lower=st.booleans())
def test_verdict_without_a_test_claims_nothing(value, lower) -> None:
    est = Estimate(value, math.nan, math.nan, 1, None)
    text = compare.verdict(est, "A", "B", "bias score", lower_is_better=lower)
    assert text.startswith("No test")
    assert not any(word in text for word in DIRECTION_WORDS)


def test_verdict_keeps_its_cluster_context_and_items_needed() -> None:
    est = Estimate(0.05, -0.01, 0.11, 40, 0.11)
    text = compare.verdict(est, "A", "B", "score", lower_is_better=True, cluster="bias",
                           sd_diff=0.3, noun="items")
    assert "errors clustered by bias" in text
    # (1.959964 + 0.841621)² · (0.3/0.05)² = 7.84887 · 36 = 282.56 -> 283 items
    assert "about 283 items" in text


def test_degenerate_differences_use_the_exact_sign_test() -> None:
    # The review's case: three contracts, A always right, B always wrong.
    # On 0/1 outcomes this is the exact McNemar test (tests/test_stats_round2_compare.py);
    # per-item means that differ by the same amount everywhere are the sign test's case.
    frame = paired_frame(np.full(3, 0.8), np.full(3, 0.3))
    est = compare.paired_difference(frame, "value", "A", "B", item="item")
    assert est.value == pytest.approx(0.5) and math.isnan(est.low) and math.isnan(est.high)
    assert est.test == "exact sign"
    # scipy's exact binomial test: 3 of 3 positive, p = 2 · 0.5³ = 0.25
    assert est.p_value == pytest.approx(stats.binomtest(3, 3, 0.5).pvalue) == 0.25
    text = compare.verdict(est, "A", "B", "correct", lower_is_better=False)
    assert "cannot tell" in text and "at least 6" in text and "higher" not in text
    # six such items: p = 2 · 0.5⁶ = 0.03125 < 0.05, and the verdict may name the direction
    six = compare.paired_difference(paired_frame(np.full(6, 0.8), np.full(6, 0.3)), "value",
                                    "A", "B", item="item")
    assert six.p_value == pytest.approx(0.03125)
    assert "A scores higher" in compare.verdict(six, "A", "B", "correct",
                                                lower_is_better=False)
    # all differences 0: p = 1
    same = compare.paired_difference(paired_frame(A, A), "value", "A", "B", item="item")
    assert same.value == 0 and same.p_value == 1.0 and math.isnan(same.low)


def test_degenerate_with_clusters_and_in_compare_models() -> None:
    # differences constant inside and across clusters: a cluster-robust SE of 0; the sign
    # test's units are the 12 clusters, not the 60 items: 2 · 0.5¹² = 0.000488
    frame = paired_frame(A + 0.3, A, GROUPS)
    est = compare.paired_difference(frame, "value", "A", "B", item="item", cluster="group")
    assert math.isnan(est.low) and est.p_value == pytest.approx(
        stats.binomtest(12, 12, 0.5).pvalue) == pytest.approx(2 * 0.5 ** 12)
    pairs = compare.compare_models(frame, "value", item="item")
    assert math.isnan(pairs["delta_low"].iloc[0]) and pairs["p_value"].iloc[0] < 1e-15


def test_three_contracts_clustered_are_too_few_for_any_direction() -> None:
    # The case: 3 contracts × 3 prompt types, A always right and B always wrong,
    # errors clustered by contract. Nine answers, but three independent units: the exact
    # sign test over the contracts gives 2 · 0.5³ = 0.25, and 3 < 6 contracts are too few.
    frame = pd.DataFrame({
        "model": np.repeat(["A", "B"], 9),
        "sample": np.tile(np.repeat(["c1", "c2", "c3"], 3), 2),
        "prompt_type": np.tile(["direct", "naturalistic", "adversarial"], 6),
        "correct": np.repeat([1.0, 0.0], 9)})
    result = compare.compare_pair(frame, "correct", "A", "B", item=["sample", "prompt_type"],
                                  cluster="sample", noun="answers")
    est = result.estimate
    # 0/1 outcomes in clusters: the exact sign-flip test over the 3 contracts (issue 38,
    # item 1), whose interval (Newcombe on Kish's effective n) holds 0
    assert est.value == 1.0 and est.n == 9 and est.test == "cluster sign-flip"
    assert est.low <= 0 <= est.high <= 1
    assert est.p_value == pytest.approx(stats.binomtest(3, 3, 0.5).pvalue) == 0.25
    assert not result.claims and result.n_clusters == 3
    assert "cannot tell" in result.verdict and "3 samples" in result.verdict
    assert "needs at least 6" in result.verdict and "higher" not in result.verdict


def test_min_items_for_the_sign_test() -> None:
    # smallest n with 2 · 0.5ⁿ < α: 2·0.5⁵ = 0.0625 ≥ 0.05, 2·0.5⁶ = 0.03125 < 0.05
    assert compare.min_items_sign_test(0.05) == 6
    # 2·0.5⁷ = 0.0156 ≥ 0.01, 2·0.5⁸ = 0.0078 < 0.01
    assert compare.min_items_sign_test(0.01) == 8


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
    assert text.startswith("No test") and "better" not in text


def test_item_values_is_a_groupby_mean_with_missing_labels_as_a_level() -> None:
    trials = samples.bias_trials()
    table = compare.item_values(trials, "score")
    keys = list(compare.ITEM_KEYS["bias"])
    labelled = trials.assign(**trials[keys].astype(object).fillna(""))
    expected = labelled.groupby([*keys, "model"])["score"].mean().unstack("model")
    assert table.index.equals(expected.index)  # same items, same (sorted) order
    np.testing.assert_allclose(table.to_numpy(), expected[table.columns].to_numpy(),
                               rtol=1e-12, equal_nan=True)


def test_constant_differences_up_to_rounding_are_degenerate() -> None:
    # every item differs by exactly 0.3 (as floats: up to rounding), so no t
    frame = paired_frame(A + 0.3, A)
    est = compare.paired_difference(frame, "value", "A", "B", item="item")
    assert est.value == pytest.approx(0.3)
    assert math.isnan(est.low) and math.isnan(est.high)
    assert est.p_value == pytest.approx(2 * 0.5 ** 60)  # exact sign test, 60 of 60 positive


def test_ties_share_the_mean_rank() -> None:
    frame = pd.concat([paired_frame(A, A, models=("A", "B")),
                       paired_frame(A + 1, A + 1, models=("C", "C"))
                       .drop_duplicates(["item", "model"])])
    ranks = compare.rank_intervals(frame, "value", item="item", lower_is_better=True)
    assert dict(zip(ranks["model"], ranks["rank"], strict=True)) == {"A": 1.5, "B": 1.5,
                                                                     "C": 3.0}
    # identical models cannot be ordered: each may be first or second (whole ranks; the
    # bootstrap gave [1.5, 1.5] before issue 38 item 6), and C, 1 worse on all 60 items, is
    # third for sure
    table = ranks.set_index("model")
    assert table.loc["A", ["rank_low", "rank_high"]].tolist() == [1.0, 2.0]
    assert table.loc["C", ["rank_low", "rank_high"]].tolist() == [3.0, 3.0]


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


def test_rank_intervals_resample_clusters() -> None:
    # 3 models on 10 clusters of 8 items; within a cluster the items share one draw, so there
    # are 10 independent units, not 80.
    rng = np.random.default_rng(5)
    cluster_effect = rng.normal(0, 1, (10, 3))
    values = np.repeat(cluster_effect, 8, axis=0) + rng.normal(0, 0.05, (80, 3))
    values += np.array([0.0, 0.3, 0.6])
    frame = pd.DataFrame({"item": np.tile(np.arange(80), 3), "model": np.repeat(list("ABC"), 80),
                          "group": np.tile(np.repeat(np.arange(10), 8), 3),
                          "value": values.T.ravel()})
    by_item = compare.rank_intervals(frame, "value", item="item", lower_is_better=True)
    by_cluster = compare.rank_intervals(frame, "value", item="item", cluster="group",
                                        lower_is_better=True)
    width = lambda r: (r["rank_high"] - r["rank_low"]).sum()  # noqa: E731
    assert width(by_cluster) > width(by_item)
    # without a cluster there are no clusters to count: missing, never the item count
    assert (by_cluster["n_clusters"] == 10).all() and by_item["n_clusters"].isna().all()
    assert not by_cluster["few_clusters"].any() and not by_item["few_clusters"].any()
    # the point ranks do not depend on the resampling unit
    assert by_item["rank"].tolist() == by_cluster["rank"].tolist()
    # one item per cluster: the cluster bootstrap is the item bootstrap, draw for draw
    single = frame.assign(group=frame["item"])
    pd.testing.assert_frame_equal(
        compare.rank_intervals(single, "value", item="item", cluster="group",
                               lower_is_better=True).drop(columns="n_clusters"),
        by_item.drop(columns="n_clusters"))


def test_rank_intervals_replicate_means_by_hand() -> None:
    # two clusters {0, 1} and {2}; model A = [1, 2, 6], B = [3, 3, 3]; drawing cluster 0 twice
    # gives A = (1+2+1+2)/4 = 1.5 < 3 (A ranks 1, lower is better); drawing cluster 1 twice
    # gives A = 6 > 3 (A ranks 2). With many replicates both occur: A's interval is [1, 2].
    frame = pd.DataFrame({"item": [0, 1, 2] * 2, "model": ["A"] * 3 + ["B"] * 3,
                          "group": [0, 0, 1] * 2, "value": [1, 2, 6, 3, 3, 3]})
    ranks = compare.rank_intervals(frame, "value", item="item", cluster="group",
                                   lower_is_better=True).set_index("model")
    assert ranks.loc["A", "value"] == 3.0 and ranks.loc["A", "rank"] == 1.5  # (1+2+6)/3 = 3
    assert (ranks.loc["A", "rank_low"], ranks.loc["A", "rank_high"]) == (1.0, 2.0)


def test_rank_intervals_report_items_dropped_per_model() -> None:
    frame = pd.DataFrame({"item": [0, 1, 2, 3, 0, 1, 2, 0, 1],
                          "model": ["A"] * 4 + ["B"] * 3 + ["C"] * 2,
                          "value": [1, 2, 3, 4, 2, 3, 4, 1, 1]})
    ranks = compare.rank_intervals(frame, "value", item="item").set_index("model")
    # items 0 and 1 are shared by all three; B lacks item 3, C lacks items 2 and 3, A none
    assert ranks["n"].tolist() == [2, 2, 2]
    assert ranks["n_dropped"].to_dict() == {"A": 0, "B": 1, "C": 2}
    assert ranks["few_items"].all()  # 2 < 30 items


def test_kbench_compare_verdict_and_pair_table_follow_the_adjusted_p(tmp_path, capsys) -> None:
    from kbench_core.cli import main

    # 4 models, 10 biases × 4 trials of 0/1 scores; A − B clustered by bias: raw p 0.010,
    # Holm over the 6 pairs 0.060 (seeded search). Independent check with statsmodels below.
    rng = np.random.default_rng(0)
    rows = []
    for b in range(10):
        shift = rng.normal(0, 0.1)
        for i in range(4):
            for model, base in {"A": 0.55, "B": 0.35, "C": 0.45, "D": 0.45}.items():
                rows.append((model, f"bias{b}", "social", "treatment", "weak", i,
                             float(rng.random() < np.clip(base + shift, 0, 1))))
    frame = pd.DataFrame(rows, columns=["model", "bias", "domain", "condition", "intensity",
                                        "trial", "score"])
    # scores inside (0, 1), not 0/1, so the CR2 t applies (0/1 outcomes in clusters take the
    # exact cluster sign-flip test since issue 38); an affine map leaves every t unchanged
    frame["score"] = frame["score"] * 0.9 + 0.05
    path = tmp_path / "four.csv"
    frame.to_csv(path, index=False)
    raw = {}
    for a, b in [("A", "B"), ("A", "C"), ("A", "D"), ("B", "C"), ("B", "D"), ("C", "D")]:
        wide = frame.pivot_table(index=["bias", "trial"], columns="model", values="score")
        diff = (wide[a] - wide[b]).to_numpy()
        groups = pd.factorize(wide.index.get_level_values("bias"))[0]
        fit = sm.OLS(diff, np.ones(diff.size)).fit(cov_type="cluster",
                                                   cov_kwds={"groups": groups})
        raw[a, b] = 2 * stats.t.sf(abs(fit.params[0] / fit.bse[0]), 9)
    holm = dict(zip(raw, multipletests(list(raw.values()), method="holm")[1], strict=True))
    assert raw["A", "B"] < 0.05 <= holm["A", "B"]
    # the trial-level score (the bias family's default compares per-bias effects, and this
    # run has no control rows)
    assert main(["compare", str(path), "--models", "A", "B", "--format", "csv",
                 "--metric", "score"]) == 0
    verdict = capsys.readouterr().out.split("\n", 1)[0]
    # One pair asked for: its own p, unadjusted (issue 23, item 11), and the verdict says so.
    # Equal clusters: CR2 is statsmodels' CR1 with G − 1 df, so the raw p is the same.
    assert "A scores higher than B" in verdict and f"p = {raw['A', 'B']:.3g}" in verdict
    assert "one pair compared, unadjusted" in verdict and "Holm" not in verdict
    assert "errors clustered by bias" in verdict
    # Every pair: Holm over the 6 pairs, and A − B is no longer decided.
    assert main(["compare", str(path), "--format", "csv", "--metric", "score"]) == 0
    table = pd.read_csv(io.StringIO(capsys.readouterr().out), comment="#")
    row = table[(table["model_a"] == "A") & (table["model_b"] == "B")].iloc[0]
    assert row["direction"] == "undecided" and row["delta_low"] > 0
    # ... and its adjusted interval (simultaneous over the 6 pairs) holds 0 (issue 37, item 6)
    assert row["delta_adj_low"] <= 0 <= row["delta_adj_high"]
