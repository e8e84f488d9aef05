"""Issue 23 (statistics round 2), model comparison: items 2, 3, 6, 11, 12 and the test /
Holm part of 13. Each test fails on the code before the fix (checked with ``git stash``);
intervals are checked for coverage by small simulations."""

from __future__ import annotations

import math
import time

import numpy as np
import pandas as pd
import pytest
from scipy import linalg, stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from kbench_core import compare


def paired_frame(a, b, clusters=None, models=("A", "B")) -> pd.DataFrame:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    n = len(a)
    frame = pd.DataFrame({"item": np.tile(np.arange(n), 2), "model": np.repeat(models, n),
                          "value": np.concatenate([a, b])})
    if clusters is not None:
        frame["group"] = np.tile(np.asarray(clusters), 2)
    return frame


# ---------------------------------------------------------------- item 2: 0/1 outcomes


def test_four_wins_and_a_tie_are_exact_mcnemar_not_a_t_test() -> None:
    # The review's case: A right and B wrong on 4 items, both right on 1. The paired t said
    # 0.800 [0.245, 1.355], p = 0.016, "A scores higher" (an interval past 1).
    a, b = [1, 1, 1, 1, 1], [0, 0, 0, 0, 1]
    est = compare.paired_difference(paired_frame(a, b), "value", "A", "B", item="item")
    # statsmodels' exact McNemar on the 2 × 2 table [[both, A only], [B only, neither]]
    ref = mcnemar([[1, 4], [0, 0]], exact=True).pvalue
    assert est.p_value == pytest.approx(ref) == pytest.approx(2 * 0.5**4)  # 0.125
    assert est.value == pytest.approx(0.8) and -1 <= est.low <= est.high <= 1
    assert est.test == "exact McNemar" and est.n_discordant == 4
    text = compare.verdict(est, "A", "B", "correct", lower_is_better=False)
    assert "cannot tell A and B apart" in text and "higher" not in text
    assert "only 4 shared items differ" in text and "at least 6" in text
    # dropping the tie changes nothing: the same discordant items, the same p and words
    drop = compare.paired_difference(paired_frame(a[:4], b[:4]), "value", "A", "B",
                                     item="item")
    assert drop.p_value == est.p_value
    assert "at least 6" in compare.verdict(drop, "A", "B", "correct", lower_is_better=False)
    # six discordant items (and any ties) are enough: 2 · 0.5⁶ = 0.031
    six = compare.paired_difference(paired_frame([1] * 9, [0] * 6 + [1] * 3), "value", "A",
                                    "B", item="item")
    assert six.p_value == pytest.approx(mcnemar([[3, 6], [0, 0]], exact=True).pvalue)
    assert "A scores higher" in compare.verdict(six, "A", "B", "correct",
                                                lower_is_better=False)
    assert "exact McNemar p = 0.0312" in compare.verdict(six, "A", "B", "correct",
                                                         lower_is_better=False)


def test_binary_pairs_and_groups_carry_the_test_column() -> None:
    rng = np.random.default_rng(4)
    a = (rng.random(60) < 0.7).astype(float)
    b = (rng.random(60) < 0.5).astype(float)
    frame = paired_frame(a, b).assign(group=np.tile(np.repeat(["g1", "g2", "g3"], 20), 2))
    pairs = compare.compare_models(frame, "value", item="item")
    table = pd.crosstab(a, b).reindex(index=[1.0, 0.0], columns=[1.0, 0.0], fill_value=0)
    assert pairs["test"].tolist() == ["exact McNemar"]
    assert pairs["p_value"].iloc[0] == pytest.approx(mcnemar(table.to_numpy(),
                                                             exact=True).pvalue)
    groups = compare.group_differences(frame, "value", "A", "B", "group", item="item")
    assert groups["test"].tolist() == ["exact McNemar"] * 3
    for row in groups.itertuples():
        inside = slice({"g1": 0, "g2": 20, "g3": 40}[row.group], None)
        ga, gb = a[inside][:20], b[inside][:20]
        t = pd.crosstab(ga, gb).reindex(index=[1.0, 0.0], columns=[1.0, 0.0], fill_value=0)
        assert row.p_value == pytest.approx(mcnemar(t.to_numpy(), exact=True).pvalue)
        low, high = compare.newcombe_paired(
            np.array([t.iloc[0, 0]]), np.array([t.iloc[0, 1]]), np.array([t.iloc[1, 0]]),
            np.array([t.iloc[1, 1]]))
        assert (row.delta_low, row.delta_high) == pytest.approx((low[0], high[0]))
    # non-0/1 values keep the paired t, and the column says so
    cont = compare.compare_models(paired_frame(a + 0.5 * rng.random(60), b), "value",
                                  item="item")
    assert cont["test"].tolist() == ["paired t"]


def test_newcombe_interval_worked_by_hand() -> None:
    # (both, A only, B only, neither) = (36, 12, 2, 0), n = 50: p_A = 48/50, p_B = 38/50
    both, a_only, b_only, neither = 36, 12, 2, 0
    la, ua = proportion_confint(48, 50, method="wilson")
    lb, ub = proportion_confint(38, 50, method="wilson")
    # ad − bc = 0 − 24 < 0: no correction; phi = −24 / √(48·2·38·12)
    phi = -24 / math.sqrt(48 * 2 * 38 * 12)
    delta = 0.96 - 0.76
    low = delta - math.sqrt((0.96 - la) ** 2 - 2 * phi * (0.96 - la) * (ub - 0.76)
                            + (ub - 0.76) ** 2)
    high = delta + math.sqrt((0.76 - lb) ** 2 - 2 * phi * (0.76 - lb) * (ua - 0.96)
                             + (ua - 0.96) ** 2)
    got = compare.newcombe_paired(np.array([both]), np.array([a_only]), np.array([b_only]),
                                  np.array([neither]))
    assert (got[0][0], got[1][0]) == pytest.approx((low, high))
    assert (low, high) == pytest.approx((0.0569, 0.3404), abs=5e-5)
    # positive association: ad − bc = 20·20 − 5·5 = 375 > n/2 = 25, shrunk to 350
    la, ua = proportion_confint(25, 50, method="wilson")
    lb, ub = proportion_confint(25, 50, method="wilson")
    phi = 350 / math.sqrt(25 * 25 * 25 * 25)
    half = math.sqrt((0.5 - la) ** 2 * (2 - 2 * phi))
    got = compare.newcombe_paired(np.array([20]), np.array([5]), np.array([5]),
                                  np.array([20]))
    assert (got[0][0], got[1][0]) == pytest.approx((-half, half))
    # every item alike: an interval with width, never [0, 0]
    same = compare.newcombe_paired(np.array([5]), np.array([0]), np.array([0]), np.array([0]))
    assert same[0][0] < 0 < same[1][0]


@pytest.mark.parametrize(("n", "p_a", "p_b", "rho"), [(20, 0.5, 0.5, 0.3), (30, 0.9, 0.8, 0.4),
                                                      (12, 0.95, 0.95, 0.0)])
def test_newcombe_interval_covers(n, p_a, p_b, rho) -> None:
    # Correlated 0/1 pairs via the four cell probabilities; counts from a multinomial, the
    # interval computed for all replicates at once. Near 1 and with few items too.
    cov = rho * math.sqrt(p_a * (1 - p_a) * p_b * (1 - p_b))
    p11 = p_a * p_b + cov
    cells = np.array([p11, p_a - p11, p_b - p11, 1 - p_a - p_b + p11])
    rng = np.random.default_rng(7)
    counts = rng.multinomial(n, cells, size=4000)
    low, high = compare.newcombe_paired(*counts.T)
    coverage = np.mean((low <= p_a - p_b) & (p_a - p_b <= high))
    assert coverage >= 0.93, coverage
    assert (low >= -1).all() and (high <= 1).all()


# ------------------------------------------------------ item 3: unequal clusters, CR2


def cr2_by_matrices(diff: np.ndarray, groups: np.ndarray) -> tuple[float, float]:
    """CR2 SE and Bell–McCaffrey df of an OLS intercept straight from the matrices
    (Imbens & Kolesár 2016, §3): A_g = (I − H_gg)^(−1/2) by an eigendecomposition, and
    df = (tr G'G)² / tr((G'G)²), column g of G being (I − H)_{·g} A_g X_g (X'X)⁻¹."""
    n = diff.size
    x = np.ones((n, 1))
    xtx_inv = np.linalg.inv(x.T @ x)
    hat = x @ xtx_inv @ x.T
    resid = diff - hat @ diff
    meat = np.zeros((1, 1))
    columns = []
    for g in np.unique(groups):
        idx = np.flatnonzero(groups == g)
        vals, vecs = linalg.eigh(np.eye(idx.size) - hat[np.ix_(idx, idx)])
        a_g = vecs @ np.diag(vals ** -0.5) @ vecs.T
        u = x[idx].T @ a_g @ resid[idx]
        meat += np.outer(u, u)
        columns.append((np.eye(n) - hat)[:, idx] @ a_g @ x[idx] @ xtx_inv[:, 0])
    var = (xtx_inv @ meat @ xtx_inv)[0, 0]
    gmat = np.column_stack(columns)
    m = gmat.T @ gmat
    return math.sqrt(var), float(np.trace(m) ** 2 / np.trace(m @ m))


@pytest.mark.parametrize("sizes", [[40] + [2] * 9, [7, 1, 3, 12, 2], [5] * 6, [1] * 9])
def test_cr2_closed_form_is_the_matrix_formula(sizes) -> None:
    rng = np.random.default_rng(len(sizes))
    groups = np.repeat(np.arange(len(sizes)), sizes)
    diff = rng.normal(0, 1, len(sizes))[groups] + rng.normal(0.2, 1, groups.size)
    se, df = compare.cr2_mean(diff, groups, len(sizes))
    ref_se, ref_df = cr2_by_matrices(diff, groups)
    assert se == pytest.approx(ref_se, rel=1e-9) and df == pytest.approx(ref_df, rel=1e-9)
    est = compare.paired_difference(paired_frame(diff, np.zeros(diff.size), groups), "value",
                                    "A", "B", item="item", cluster="group")
    half = stats.t.ppf(0.975, ref_df) * ref_se
    assert est.test == "CR2 t" and est.df == pytest.approx(ref_df)
    assert (est.low, est.high) == pytest.approx((diff.mean() - half, diff.mean() + half))


def _coverage(sizes: list[int], reps: int, seed: int = 0) -> float:
    """Share of clustered paired_difference intervals that cover a true difference of 0:
    a cluster effect (sd 1) shared by the cluster's items plus item noise (sd 1)."""
    rng = np.random.default_rng(seed)
    groups = np.repeat(np.arange(len(sizes)), sizes)
    hits = 0
    for _ in range(reps):
        diff = rng.normal(0, 1, len(sizes))[groups] + rng.normal(0, 1, groups.size)
        est = compare.paired_difference(paired_frame(diff, np.zeros(diff.size), groups),
                                        "value", "A", "B", item="item", cluster="group")
        hits += est.low <= 0 <= est.high
    return hits / reps


def test_clustered_interval_covers_with_unequal_clusters() -> None:
    # The docs' ECS design, one cluster of 40 and nine of 2: CR1 with t(G − 1) covered 61 %
    # (56 % in this simulation); CR2 with Bell–McCaffrey df covers ~96 %.
    assert _coverage([40] + [2] * 9, 300) >= 0.88
    # 500 + 5 × 10: CR1 covered 20 % (14 % here)
    assert _coverage([500] + [10] * 5, 200, seed=1) >= 0.88


def test_clustered_interval_unchanged_on_balanced_designs() -> None:
    assert _coverage([5] * 10, 300, seed=2) >= 0.92
    rng = np.random.default_rng(9)
    groups = np.repeat(np.arange(8), 6)
    diff = rng.normal(0, 1, 8)[groups] + rng.normal(0.3, 1, 48)
    est = compare.paired_difference(paired_frame(diff, np.zeros(48), groups), "value", "A",
                                    "B", item="item", cluster="group")
    # equal clusters: CR2 is the CR1 SE and t(G − 1), as before
    s = np.bincount(groups, diff - diff.mean())
    se_cr1 = math.sqrt(8 / 7 * np.sum(s**2)) / 48
    assert est.df == pytest.approx(7) and est.high - est.value == pytest.approx(
        stats.t.ppf(0.975, 7) * se_cr1)


def test_verdict_says_when_the_effective_clusters_are_few() -> None:
    rng = np.random.default_rng(3)
    sizes = [40] + [2] * 9
    groups = np.repeat(np.arange(10), sizes)
    diff = rng.normal(0, 0.2, 10)[groups] + rng.normal(0.5, 0.2, groups.size)
    result = compare.compare_pair(paired_frame(diff, np.zeros(diff.size), groups), "value",
                                  "A", "B", item="item", cluster="group")
    est = result.estimate
    assert est.effective_clusters < 3
    assert (f"the 10 groups are unequal and count as about {est.effective_clusters:.1f}"
            in result.verdict)
    many = np.repeat(np.arange(30), 4)
    diff = rng.normal(0, 0.2, 30)[many] + rng.normal(0.5, 0.2, 120)
    wide = compare.compare_pair(paired_frame(diff, np.zeros(120), many), "value", "A", "B",
                                item="item", cluster="group")
    assert "clusters" not in wide.verdict.split(".")[-2] and "Few" not in wide.verdict


def test_every_pair_with_clusters_stays_fast() -> None:
    # 12 models × 3,000 items in 30 unequal clusters: 66 pairs in well under a second
    rng = np.random.default_rng(0)
    n, k = 3000, 12
    sizes = rng.integers(20, 180, 30)
    groups = np.repeat(np.arange(30), sizes)[:n]
    groups = np.concatenate([groups, np.full(n - groups.size, 29)])
    frame = pd.DataFrame({"item": np.tile(np.arange(n), k),
                          "model": np.repeat([f"m{i:02d}" for i in range(k)], n),
                          "group": np.tile(groups, k),
                          "value": rng.normal(0, 1, n * k)})
    start = time.perf_counter()
    pairs = compare.compare_models(frame, "value", item="item", cluster="group")
    assert time.perf_counter() - start < 3.0 and len(pairs) == 66
    assert set(pairs["test"]) == {"CR2 t"} and (pairs["n_clusters"] == 30).all()
    first = compare.paired_difference(frame, "value", "m00", "m01", item="item",
                                      cluster="group")
    assert pairs["df"].iloc[0] == pytest.approx(first.df) and first.df < 29


# -------------------------------------------------------------- item 6: rank intervals


def test_rank_intervals_mark_few_clusters_and_count_no_clusters_without_one() -> None:
    rng = np.random.default_rng(1)
    groups = np.repeat(np.arange(4), 10)
    values = rng.normal(0, 1, 4)[groups] + rng.normal(0, 0.1, 40)
    frame = pd.DataFrame({"item": np.tile(np.arange(40), 2), "model": np.repeat(["A", "B"], 40),
                          "group": np.tile(groups, 2), "value": np.tile(values, 2)})
    by_cluster = compare.rank_intervals(frame, "value", item="item", cluster="group")
    assert (by_cluster["n_clusters"] == 4).all() and by_cluster["few_clusters"].all()
    by_item = compare.rank_intervals(frame, "value", item="item")
    assert by_item["n_clusters"].isna().all() and not by_item["few_clusters"].any()
    from kbench_app.compare import rank_text

    assert all(t.endswith(" · few groups") for t in rank_text(by_cluster, cluster="group"))
    ten = frame.assign(group=np.tile(np.repeat(np.arange(10), 4), 2))
    assert not compare.rank_intervals(ten, "value", item="item",
                                      cluster="group")["few_clusters"].any()


# ----------------------------------------------------------- item 11: the Holm family


def eleven_models() -> tuple[pd.DataFrame, dict]:
    rng = np.random.default_rng(11)
    base = rng.normal(0, 1, 15)
    values = {f"m{i:02d}": base + rng.normal(0, 0.3, 15) for i in range(11)}
    values["m01"] = values["m00"] + 0.25 + rng.normal(0, 0.3, 15)
    frame = pd.DataFrame({"item": np.tile(np.arange(15), 11),
                          "model": np.repeat(list(values), 15),
                          "value": np.concatenate(list(values.values()))})
    return frame, values


def test_one_pair_asked_for_is_not_adjusted_for_the_others() -> None:
    frame, values = eleven_models()
    raw = stats.ttest_rel(values["m01"], values["m00"]).pvalue
    result = compare.compare_pair(frame, "value", "m01", "m00", item="item")
    assert result.adjusted_p is None and result.n_pairs == 1
    assert result.estimate.p_value == pytest.approx(raw)
    assert "one pair compared, unadjusted" in result.verdict
    assert result.p_label == "p (one pair, unadjusted)"
    # picked from every pair: Holm over all 55, and the verdict says so
    pairs = compare.compare_models(frame, "value", item="item")
    every = compare.compare_pair(frame, "value", "m01", "m00", item="item", family="all",
                                 pairs=pairs)
    raws = [stats.ttest_rel(values[a], values[b]).pvalue
            for a, b in zip(pairs["model_a"], pairs["model_b"], strict=True)]
    holm = multipletests(raws, method="holm")[1]
    index = pairs.index[(pairs["model_a"] == "m00") & (pairs["model_b"] == "m01")][0]
    assert every.adjusted_p == pytest.approx(holm[index]) and every.n_pairs == 55
    assert "Holm-adjusted over all 55 pairs compared" in every.verdict
    with pytest.raises(ValueError, match="'some'"):
        compare.compare_pair(frame, "value", "m01", "m00", item="item", family="some")


# -------------------------------------------------- item 12: items needed, with clusters


def test_items_needed_counts_the_design_effect_and_the_clusters() -> None:
    rng = np.random.default_rng(8)
    groups = np.repeat(np.arange(12), 5)
    diff = rng.normal(0, 0.3, 12)[groups] + rng.normal(0.05, 0.3, 60)
    result = compare.compare_pair(paired_frame(diff, np.zeros(60), groups), "value", "A",
                                  "B", item="item", cluster="group")
    assert not result.claims
    sd = diff.std(ddof=1)
    independent = math.ceil(((stats.norm.ppf(0.975) + stats.norm.ppf(0.8)) * sd
                             / diff.mean()) ** 2)
    s = np.bincount(groups, diff - diff.mean())
    se_cr2 = math.sqrt(12 / 11 * np.sum(s**2)) / 60  # equal clusters: CR2 = CR1
    deff = (se_cr2 / (sd / math.sqrt(60))) ** 2
    assert deff > 1.5
    need = math.ceil(independent * deff)
    assert f"would need about {need:,} items ({independent:,} if independent" in result.verdict
    assert f"design effect {deff:.2f}), about {math.ceil(need / 5):,} groups" in result.verdict
    assert result.clusters_needed() == math.ceil(need / 5)


# --------------------------------------------- item 13: the test and the adjustment named


def test_forest_hover_names_holm_and_the_test() -> None:
    from kbench_core.figures.compare import forest_plot

    rng = np.random.default_rng(0)
    frame = paired_frame(rng.normal(0.3, 1, 40), rng.normal(0, 1, 40)).assign(
        group=np.tile(np.repeat(["g1", "g2"], 20), 2))
    groups = compare.group_differences(frame, "value", "A", "B", "group", item="item")
    fig = forest_plot(groups, label="group")
    hover = fig.data[0].hovertemplate
    assert "Holm-adjusted p" in hover and "customdata[4]" in hover
    assert list(fig.data[0].customdata[:, 4]) == ["paired t", "paired t"]


def test_clustered_binary_outcomes_cover_and_stay_in_range() -> None:
    # A judged-like design: 12 contracts × 3 prompt types, 0/1 outcomes, a contract's
    # difficulty shared by both models (probit with a cluster effect). Since issue 38 the
    # exact cluster sign-flip test with Newcombe's interval on Kish's effective n.
    rng = np.random.default_rng(5)
    groups = np.repeat(np.arange(12), 3)
    shift_a, shift_b = 0.6, 0.3
    # marginal P(noise + u < shift) with noise, u ~ N(0, ½) each: Φ(shift)
    truth = stats.norm.cdf(shift_a) - stats.norm.cdf(shift_b)
    hits = 0
    for _ in range(300):
        u = rng.normal(0, math.sqrt(0.5), 12)[groups]
        a = (rng.normal(0, math.sqrt(0.5), 36) + u < shift_a).astype(float)
        b = (rng.normal(0, math.sqrt(0.5), 36) + u < shift_b).astype(float)
        est = compare.paired_difference(paired_frame(a, b, groups), "value", "A", "B",
                                        item="item", cluster="group")
        assert (est.test == "cluster sign-flip" and -1 <= est.low <= est.high <= 1) \
            or math.isnan(est.low)
        hits += bool(est.low <= truth <= est.high)
    assert hits / 300 >= 0.90


def test_holm_equals_statsmodels_and_skips_its_garbage_collection(monkeypatch) -> None:
    """kbench's Holm (written out: statsmodels' runs gc.collect() on every call) gives
    statsmodels' numbers, ties and p = 0 or 1 included, in the input's order."""
    import gc

    from hypothesis import given, settings
    from hypothesis import strategies as st

    from kbench_core.compare.multiplicity import holm

    calls = []
    # statsmodels' own gc.collect() per call (the reference's, ~0.15 s each here) is skipped
    # too: the count below starts after the reference has run
    monkeypatch.setattr(gc, "collect", lambda *a: calls.append(1) or 0)

    @settings(max_examples=300, deadline=None)
    @given(st.lists(st.one_of(st.floats(0, 1), st.sampled_from([0.0, 1.0, 0.02, 0.5])),
                    min_size=1, max_size=40))
    def same(values: list[float]) -> None:
        p = np.array(values)
        np.testing.assert_allclose(holm(p), multipletests(p, method="holm")[1],
                                   rtol=1e-12, atol=0)

    same()
    # worked by hand: p = (0.01, 0.04, 0.03) sorted 0.01, 0.03, 0.04 → 3·0.01, 2·0.03, 1·0.04
    # → 0.03, 0.06, max(0.06, 0.04) = 0.06; back in order: 0.03, 0.06, 0.06
    np.testing.assert_allclose(holm(np.array([0.01, 0.04, 0.03])), [0.03, 0.06, 0.06])
    assert calls, "statsmodels no longer collects garbage: the count below tests nothing new"
    calls.clear()
    frame = paired_frame(np.linspace(0, 1, 40), np.linspace(0.1, 1.2, 40),
                         models=("A", "B"))
    three = pd.concat([frame, frame[frame["model"] == "A"].assign(
        model="C", value=lambda f: f["value"] + 0.3)], ignore_index=True)
    pairs = compare.compare_models(three, "value", item="item", correction="holm")
    assert calls == [] and len(pairs) == 3
    np.testing.assert_allclose(pairs["p_adjusted"],
                               multipletests(pairs["p_value"], method="holm")[1], rtol=1e-12)
