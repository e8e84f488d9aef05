"""Issue 38 (statistics round 3), item 1: clustered 0/1 outcomes take an exact cluster-level
test. Each test fails on the code before the fix (checked with ``git stash``: the CR2 t gave
p = 0.0161 and "A scores higher" on the worked example, and its interval cut to [−1, 1]
covered 0.81 near a proportion of 0.9); the interval is checked by a coverage simulation and
the test's size by a simulation with few, unequal clusters."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar

from kbench_core import compare


def contracts(a_right: list[int], b_right: list[int], prompts: int = 3) -> pd.DataFrame:
    """A judged-like frame: each contract asked ``prompts`` times (prompt types), the
    contract's verdict repeated at every prompt type."""
    rows = []
    for s, (ra, rb) in enumerate(zip(a_right, b_right, strict=True)):
        for t in range(prompts):
            rows.append(("A", f"c{s}", f"p{t}", float(ra)))
            rows.append(("B", f"c{s}", f"p{t}", float(rb)))
    return pd.DataFrame(rows, columns=["model", "sample", "prompt_type", "correct"])


def brute_force_p(sums: np.ndarray) -> float:
    """The sign-flip p by enumerating all 2^G flips (the definition)."""
    total = abs(sums.sum())
    flips = np.array(list(itertools.product([-1, 1], repeat=sums.size)))
    return float(np.mean(np.abs(flips @ sums) >= total - 1e-9))


def test_the_worked_example_is_the_contracts_asked_once() -> None:
    # 5 contracts × 3 prompt types, A wins 4 contracts and ties 1 (both right). Before:
    # +0.800 [+0.245, +1.000], p = 0.0161 (CR2 t), "A scores higher".
    frame = contracts([1, 1, 1, 1, 1], [0, 0, 0, 0, 1])
    result = compare.compare_pair(frame, "correct", "A", "B", item=["sample", "prompt_type"],
                                  cluster="sample", noun="answers")
    est = result.estimate
    once = compare.paired_difference(contracts([1] * 5, [0, 0, 0, 0, 1], prompts=1), "correct",
                                     "A", "B", item=["sample", "prompt_type"])
    # the contracts asked once: statsmodels' exact McNemar on [[1, 4], [0, 0]] = 2 · 0.5⁴
    ref = mcnemar([[1, 4], [0, 0]], exact=True).pvalue
    assert once.p_value == pytest.approx(ref) == pytest.approx(0.125)
    assert est.test == "cluster sign-flip"
    assert est.p_value == pytest.approx(ref)
    assert est.p_value == pytest.approx(brute_force_p(np.array([3, 3, 3, 3, 0])))
    assert est.value == pytest.approx(0.8) and est.n == 15 and est.n_clusters == 5
    # the interval respects the exact test: it holds 0, as p = 0.125 says
    assert -1 <= est.low <= 0 <= est.high <= 1
    assert not result.claims
    text = result.verdict
    assert "cannot tell A and B apart" in text and "higher" not in text
    # the "too few" rule counts clusters, not the 12 discordant answers
    assert est.n_discordant == 4
    assert "only 4 samples differ" in text and "at least 6" in text
    assert "exact sign-flip test over samples" in text
    # every pair: the same test, numbers and count
    pairs = compare.compare_models(frame, "correct", item=["sample", "prompt_type"],
                                   cluster="sample")
    row = pairs.iloc[0]
    assert row["test"] == "cluster sign-flip" and row["p_value"] == pytest.approx(0.125)
    assert row["n_discordant"] == 4 and row["direction"] == "undecided"
    assert (row["delta_low"], row["delta_high"]) == pytest.approx((est.low, est.high))


def test_six_contracts_that_differ_are_enough() -> None:
    # 6 contracts won by A (and 2 ties): 2 · 0.5⁶ = 0.03125 < 0.05 whatever the prompts
    frame = contracts([1] * 8, [0] * 6 + [1] * 2)
    est = compare.paired_difference(frame, "correct", "A", "B",
                                    item=["sample", "prompt_type"], cluster="sample")
    assert est.p_value == pytest.approx(2 * 0.5**6)


@pytest.mark.parametrize("seed", range(4))
def test_the_sign_flip_p_is_the_enumeration(seed) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(40):
        sums = rng.integers(-7, 8, rng.integers(1, 13))
        got = compare.cluster_sign_flip_p(sums[None, :])[0]
        assert got == pytest.approx(brute_force_p(sums), abs=1e-12)
    # many rows at once, with different spans (batched by frequency count), and the zeros
    rows = rng.integers(-4, 5, (30, 9))
    rows[3] = 0
    got = compare.cluster_sign_flip_p(rows)
    assert got == pytest.approx([brute_force_p(r) for r in rows], abs=1e-12)


def test_many_clusters_approach_the_durkalski_statistic() -> None:
    # With many clusters the exact p approaches Durkalski et al.'s (2003) clustered McNemar
    # χ² = (Σ D_g)² / Σ D_g² on 1 df, its normal approximation.
    rng = np.random.default_rng(3)
    sums = rng.integers(-3, 4, 400) + (rng.random(400) < 0.1)
    exact = compare.cluster_sign_flip_p(sums[None, :])[0]
    chi2 = sums.sum() ** 2 / np.sum(sums.astype(float) ** 2)
    assert exact == pytest.approx(stats.chi2.sf(chi2, 1), rel=0.1)


def _simulate(sizes, shift_a, shift_b, sd_u, reps, seed):
    """(rejection rate of the exact test at 0.05, coverage of the interval) over ``reps``
    runs of two models answering clustered items: probit outcomes with a cluster effect
    shared by both models (a contract's difficulty)."""
    rng = np.random.default_rng(seed)
    groups = np.repeat(np.arange(len(sizes)), sizes)
    n = groups.size
    total = math.sqrt(1 + sd_u**2)
    truth = stats.norm.cdf(shift_a / total) - stats.norm.cdf(shift_b / total)
    rejected = covered = 0
    for _ in range(reps):
        u = rng.normal(0, sd_u, len(sizes))[groups]
        a = (rng.normal(0, 1, n) + u < shift_a).astype(float)
        b = (rng.normal(0, 1, n) + u < shift_b).astype(float)
        est = compare._paired_values(a, b, groups, 0.95)
        assert est.test == "cluster sign-flip" and -1 <= est.low <= est.high <= 1
        rejected += est.p_value < 0.05
        covered += est.low <= truth <= est.high
    return rejected / reps, covered / reps


@pytest.mark.parametrize("sizes", [[1, 2, 3, 6, 12], [40] + [2] * 9,
                                   [1, 1, 2, 2, 3, 5, 8, 14, 2, 3, 4, 1, 6, 9, 2, 3, 1, 5, 7,
                                    2]])
def test_the_exact_test_keeps_its_size_with_few_unequal_clusters(sizes) -> None:
    # Two exchangeable models (same shift): rejections ≤ 5 % (the CR2 t's p rejected more
    # often with few clusters); 400 runs, so 0.05 plus two standard errors at most.
    rate, _ = _simulate(sizes, 0.6, 0.6, 1.0, 400, seed=len(sizes))
    assert rate <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / 400)


@pytest.mark.parametrize("sizes,shifts", [
    ([1, 2, 3, 6, 12], (2.0, 1.6)),  # CR2 cut to [-1, 1] covered 0.81 here
    ([3] * 12, (2.0, 1.6)),  # 0.89
    ([40] + [2] * 9, (1.5, 0.5)),  # Kish's n without the df correction: 0.91
    ([1, 1, 2, 2, 3, 5, 8, 14], (0.6, 0.3)),
])
def test_the_interval_covers_near_the_boundary_and_with_unequal_clusters(sizes, shifts) -> None:
    _, coverage = _simulate(sizes, *shifts, sd_u=0.5 if shifts[0] == 2.0 else 0.7, reps=400,
                            seed=sum(sizes))
    assert coverage >= 0.93


def test_huge_spans_over_many_clusters_take_the_normal_approximation_quickly() -> None:
    # 300 clusters summing to thousands each: the exact distribution would cost seconds per
    # pair; with this many clusters the normal approximation (Durkalski's χ²) is used.
    import time

    rng = np.random.default_rng(0)
    sums = rng.integers(-3000, 3000, (2, 300)) + 500
    start = time.perf_counter()
    got = compare.cluster_sign_flip_p(sums)
    assert time.perf_counter() - start < 2.0
    chi2 = sums.sum(axis=1) ** 2 / (sums.astype(float) ** 2).sum(axis=1)
    assert got == pytest.approx(stats.chi2.sf(chi2, 1))
    # few clusters stay exact however large their sums
    few = np.array([[3000, 2000, -1500, 2500, 1000, -700]])
    assert compare.cluster_sign_flip_p(few)[0] == pytest.approx(brute_force_p(few[0]))
