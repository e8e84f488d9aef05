"""Issue 23, items 5 and 7: ECS intervals that respect tests sharing a study, and no
zero-width interval from few items (κ, Fleiss' κ, Krippendorff's α, t intervals).

Every coverage claim is checked by a seeded simulation; each test fails on the code before the
change (the old values are stated beside the assertions)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from kbench_core import replication as R

# ------------------------------------------------------------------ item 5: ECS clustering


def clustered_tests(sizes: list[int], sims: int, seed: int, *, su: float = 0.4,
                    se: float = 0.3, sv: float = 0.25, sf: float = 0.2, beta: float = 0.8,
                    alpha: float = 0.1) -> tuple[pd.DataFrame, float]:
    """``sims`` replications ("models") of studies of the given sizes (one finding each, so
    structure weights are equal within a study) whose tests share a study effect: human
    d = 0.5 + u_s + e, agent d = alpha + beta·human d + v_s + f, with u_s ~ N(0, su²),
    v_s ~ N(0, sv²) per study and e ~ N(0, se²), f ~ N(0, sf²) per test.

    Every test has the same distribution whatever its study's size, so the weighted
    population moments are the plain ones: var x = su² + se², cov = beta·var x,
    var y = beta²·var x + sv² + sf², means 0.5 and alpha + 0.5·beta, and the true CCC is
    2 cov / (var x + var y + (μx − μy)²)."""
    rng = np.random.default_rng(seed)
    study = np.repeat(np.arange(len(sizes)), sizes)
    n, g = study.size, len(sizes)
    x = 0.5 + rng.normal(0, su, (sims, g))[:, study] + rng.normal(0, se, (sims, n))
    y = (alpha + beta * x + rng.normal(0, sv, (sims, g))[:, study]
         + rng.normal(0, sf, (sims, n)))
    vx = su ** 2 + se ** 2
    vy = beta ** 2 * vx + sv ** 2 + sf ** 2
    truth = 2 * beta * vx / (vx + vy + (0.5 - alpha - 0.5 * beta) ** 2)
    frame = pd.DataFrame({
        "model": np.repeat([f"m{i:04d}" for i in range(sims)], n),
        "study": np.tile([f"s{j}" for j in study], sims),
        "finding": np.tile([f"f{j}" for j in study], sims),
        "test": np.tile([f"t{i}" for i in range(n)], sims),
        "human_d": x.ravel(), "agent_d": y.ravel()})
    return frame, truth


def coverage(table: pd.DataFrame, truth: float) -> float:
    return float(((table["ecs_low"] <= truth) & (truth <= table["ecs_high"])).mean())


def test_true_ccc_of_the_simulation_is_its_closed_form() -> None:
    # With 2,000 studies of 6 the estimate sits on the closed form (0.7805 for the defaults:
    # var x = 0.25, cov = 0.2, var y = 0.16 + 0.0625 + 0.04 = 0.2625, means 0.5 and 0.5).
    frame, truth = clustered_tests([6] * 2000, 1, 9)
    assert truth == pytest.approx(0.4 / (0.25 + 0.2625))
    assert R.ecs(frame, ci=None)["ecs"].iloc[0] == pytest.approx(truth, abs=0.01)


@pytest.mark.parametrize("sizes", [[6] * 10, [40] + [2] * 9, [20, 10, 5, 5, 3, 3, 2, 2, 2, 2]],
                         ids=["10x6", "40+9x2", "unequal"])
def test_default_ecs_interval_covers_when_tests_share_a_study(sizes: list[int]) -> None:
    frame, truth = clustered_tests(sizes, 1000, 1)
    default = R.ecs(frame)
    assert set(default["ci_method"]) == {"jackknife_studies"}
    # Seeded runs: 0.931 (10 x 6), 0.932 (40 + 9 x 2), 0.948 (unequal); before the change
    # the default was Lin's interval on Kish's n, which treats the tests as independent:
    # 0.724, 0.867, 0.838 on the same draws (asserted just below).
    assert coverage(default, truth) >= 0.91
    lin = R.ecs(frame, ci="lin")
    assert set(lin["ci_method"]) == {"lin"}
    assert coverage(lin, truth) <= 0.88
    # No interval collapses and each contains its estimate.
    assert (default["ecs_low"] < default["ecs"]).all()
    assert (default["ecs"] < default["ecs_high"]).all()


def test_default_ecs_interval_keeps_its_coverage_without_study_effects() -> None:
    # Independent tests in the 40 + 9 x 2 design (the review's structure-weights case): the
    # jackknife over studies still covers (0.950 in this seeded run; Lin's 0.956), so
    # clustering by default costs nothing when there is nothing to cluster.
    frame, truth = clustered_tests([40] + [2] * 9, 1000, 2, su=1e-4, sv=1e-4, se=0.5,
                                   sf=0.3)
    assert coverage(R.ecs(frame), truth) >= 0.92


def weighted_ccc_numpy(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
    c = np.cov(x, y, aweights=w, ddof=0)
    mx, my = np.average(x, weights=w), np.average(y, weights=w)
    return 2 * c[0, 1] / (c[0, 0] + c[1, 1] + (mx - my) ** 2)


def test_jackknife_interval_worked_with_numpy() -> None:
    # Five studies of unequal size with two findings in the first: the leave-one-study-out
    # CCCs by np.cov (weights: structure weights of the remaining tests, which are the
    # same numbers), the jackknife variance (G-1)/G Σ(z_(-s) - z̄)² and t_4.
    rng = np.random.default_rng(5)
    study = ["a"] * 6 + ["b"] * 2 + ["c"] * 3 + ["d"] * 4 + ["e"] * 2
    finding = ["a1"] * 2 + ["a2"] * 4 + ["b"] * 2 + ["c"] * 3 + ["d"] * 4 + ["e"] * 2
    x = rng.normal(0.4, 0.5, len(study))
    y = 0.9 * x + rng.normal(0.1, 0.3, len(study))
    frame = pd.DataFrame({"model": "m", "study": study, "finding": finding,
                          "test": [f"t{i}" for i in range(len(study))],
                          "human_d": x, "agent_d": y})
    w = R.structure_weights(frame)
    # by hand: study a = 1/(2 findings x 2 tests) twice and 1/(2 x 4) four times, ...
    assert w.tolist() == pytest.approx([0.25] * 2 + [0.125] * 4 + [0.5] * 2 + [1 / 3] * 3
                                       + [0.25] * 4 + [0.5] * 2)
    value = weighted_ccc_numpy(x, y, w)
    labels = np.array(study)
    z = np.array([math.atanh(weighted_ccc_numpy(x[labels != s], y[labels != s],
                                                w[labels != s])) for s in "abcde"])
    var = 4 / 5 * ((z - z.mean()) ** 2).sum()
    half = stats.t.ppf(0.975, 4) * math.sqrt(var)
    row = R.ecs(frame).iloc[0]
    assert row["ci_method"] == "jackknife_studies"
    assert (row["ecs"], row["ecs_low"], row["ecs_high"]) == pytest.approx(
        (value, math.tanh(math.atanh(value) - half), math.tanh(math.atanh(value) + half)))
    assert R.ecs(frame, ci="jackknife").iloc[0]["ecs_low"] == row["ecs_low"]


def test_ecs_interval_method_rules() -> None:
    rng = np.random.default_rng(3)
    n = 12
    base = pd.DataFrame({"model": "m", "study": [f"s{i // 4}" for i in range(n)],
                         "finding": [f"f{i // 4}" for i in range(n)],
                         "test": [f"t{i}" for i in range(n)],
                         "human_d": rng.normal(0, 1, n), "agent_d": rng.normal(0, 1, n)})
    # one test per study: Lin's interval (SPEC's), whose tests are independent
    single = R.ecs(base.assign(study=base["test"])).iloc[0]
    assert single["ci_method"] == "lin" and np.isfinite(single["ecs_low"])
    # three studies of four: the jackknife (3 clusters is the least it accepts)
    assert R.ecs(base).iloc[0]["ci_method"] == "jackknife_studies"
    assert np.isfinite(R.ecs(base).iloc[0]["ecs_low"])
    two = R.ecs(base[base["study"] != "s2"]).iloc[0]
    assert two["ci_method"] == "jackknife_studies" and math.isnan(two["ecs_low"])
    # per study: the tests of the study are the units
    per_study = R.ecs(base, level="study")
    assert set(per_study["ci_method"]) == {"lin"}
    assert set(R.ecs(base, level="study", ci="jackknife")["ci_method"]) == {"jackknife_tests"}
    assert set(R.ecs(base, ci="bootstrap", n_boot=20)["ci_method"]) == {"bootstrap_studies"}
    assert set(R.ecs(base, ci=None)["ci_method"]) == {""}
    # the released (unnormalised) statistic: no analytic interval, so no method either
    raw = R.ecs(base, normalize_weights=False).iloc[0]
    assert math.isnan(raw["ecs_low"]) and raw["ci_method"] == ""
    # an agent with one effect everywhere: CCC 0 in every leave-one-out sample, no spread to
    # estimate precision from, so NaN rather than [0, 0]
    flat = R.ecs(base.assign(agent_d=0.3)).iloc[0]
    assert flat["ecs"] == 0 and math.isnan(flat["ecs_low"]) and math.isnan(flat["ecs_high"])
    with pytest.raises(ValueError, match="'wild'"):
        R.ecs(base, ci="wild")


# ------------------------------------------------------------------ item 7: no zero width

Z2 = stats.norm.isf(0.025) ** 2


def judged_grid(grid: np.ndarray, judges: tuple[str, ...]) -> pd.DataFrame:
    """A judged-like frame of a boolean label from an items × judges grid."""
    n_items, n_judges = grid.shape
    item, judge = (a.ravel() for a in np.indices((n_items, n_judges)))
    return pd.DataFrame({"sample": [f"s{i:03d}" for i in item], "model": "m",
                         "prompt_type": "direct",
                         "judge": np.asarray(judges, dtype=object)[judge],
                         "label": grid.ravel().astype(bool)})


def test_t_interval_of_zero_spread_is_not_zero_width() -> None:
    from kbench_core.stats import t_interval

    # before: 0.5 [0.5, 0.5] from five equal values
    low, high = t_interval([0.5, 0.5], [0.0, 0.2], [5, 5])
    assert math.isnan(low[0]) and math.isnan(high[0])
    half = stats.t.ppf(0.975, 4) * 0.2 / math.sqrt(5)  # a spread keeps the t interval
    assert (low[1], high[1]) == pytest.approx((0.5 - half, 0.5 + half))
    # Values known to lie in [0, 1]: Wilson's interval of 5 of 5, 5/(5 + z²) = 0.5655, and
    # of the rescaled mean 0.5 of [0, 1] -> 2.5 of 5 (statsmodels' Wilson, by hand: centre
    # 0.5, half z·sqrt(0.25/5 + z²/100)/(1 + z²/5)).
    low, high = t_interval([1.0, 0.5, 3.0], 0.0, 5, bounds=(0.0, 1.0))
    centre_half = math.sqrt(Z2) * math.sqrt(0.05 + Z2 / 100) / (1 + Z2 / 5)
    assert low.tolist() == pytest.approx([5 / (5 + Z2), 0.5 - centre_half, 5 / (5 + Z2)])
    assert high.tolist() == pytest.approx([1.0, 0.5 + centre_half, 1.0])
    low, high = t_interval(4.0, 0.0, 5, bounds=(2.0, 4.0))  # rescaled: [2 + 2·0.5655, 4]
    assert (float(low), float(high)) == pytest.approx((2 + 2 * 5 / (5 + Z2), 4.0))
    with pytest.raises(ValueError, match="bounds"):
        t_interval(1.0, 0.0, 5, bounds=(1.0, 0.0))


@pytest.mark.parametrize(("p", "n"), [(0.9, 5), (0.97, 10), (0.99, 20)])
def test_t_interval_of_a_bounded_score_covers_near_one(p: float, n: int) -> None:
    from kbench_core.stats import t_interval

    rng = np.random.default_rng(7)
    scores = (rng.random((4000, n)) < p).astype(float)  # per-item 0/1 scores
    mean, sd = scores.mean(1), scores.std(1, ddof=1)
    low, high = t_interval(mean, sd, n, bounds=(0.0, 1.0))
    assert np.isfinite(low).all()  # every sample has an interval of some width
    assert (high - low > 0.01).all()
    covered = float(((low <= p) & (p <= high)).mean())
    # before: n values of 1 gave [1, 1] -> coverage 1 - p^n (0.41, 0.26, 0.18)
    assert covered >= 0.95, covered


def cohen_truth_cells(prevalence: float, kappa: float) -> np.ndarray:
    """Cell probabilities of two judges with the same marginals and the given κ."""
    p_e = prevalence ** 2 + (1 - prevalence) ** 2
    off = (1 - (p_e + kappa * (1 - p_e))) / 2
    return np.array([prevalence - off, off, off, 1 - prevalence - off])


def test_cohen_kappa_of_perfect_agreement_hand_worked() -> None:
    from kbench_core import agreement as ag

    grid = np.array([[v, v] for v in [True, False, True, False, True]])
    row = ag.pairwise_kappa(judged_grid(grid, ("a", "b")), "label").iloc[0]
    # p_o = 1 over 5 items: Wilson lower 5/(5 + z²) = 0.5655; p_e = 0.6² + 0.4² = 0.52.
    # before: [1, 1]
    assert row["kappa"] == 1.0
    assert row["kappa_low"] == pytest.approx((5 / (5 + Z2) - 0.52) / 0.48)
    assert row["kappa_high"] == 1.0
    boot = ag.pairwise_kappa(judged_grid(grid, ("a", "b")), "label", ci="bootstrap",
                             n_boot=50).iloc[0]
    assert boot["kappa_low"] == pytest.approx(row["kappa_low"])


@pytest.mark.parametrize(("prevalence", "kappa", "n"),
                         [(0.5, 0.9, 10), (0.3, 0.9, 20), (0.5, 0.97, 20), (0.5, 0.5, 10)])
def test_cohen_kappa_interval_covers_near_one_with_few_items(prevalence: float, kappa: float,
                                                             n: int) -> None:
    # Two judges, 0/1 label, 1,000 seeded tables through pairwise_kappa (each distinct table
    # computed once). Before: 0.40, 0.59, 0.24 and 0.89 (the large-sample SE is 0 whenever
    # every item agrees, and tiny near it); now 0.997, 0.997, 1.0 and 0.982.
    from kbench_core import agreement as ag

    rng = np.random.default_rng(11)
    tables = rng.multinomial(n, cohen_truth_cells(prevalence, kappa), 1000)
    seen: dict[tuple[int, ...], bool] = {}
    hits = []
    for cells in map(tuple, tables):
        if cells not in seen:
            pattern = np.repeat([[1, 1], [1, 0], [0, 1], [0, 0]], cells, axis=0)
            row = ag.pairwise_kappa(judged_grid(pattern, ("a", "b")), "label").iloc[0]
            seen[cells] = (bool(row["kappa_low"] <= kappa <= row["kappa_high"])
                           if math.isfinite(row["kappa"]) else None)
        hits.append(seen[cells])
    defined = [h for h in hits if h is not None]
    assert np.mean(defined) >= 0.93, np.mean(defined)


def fleiss_tables(rng: np.random.Generator, n: int, judges: int, prevalence: float,
                  kappa: float, sims: int) -> np.ndarray:
    """Items that are clear with probability κ (every judge gives its class) or unclear
    (each judge picks independently), so the population Fleiss κ is κ: agreement
    κ + (1 − κ)p_e. Returns the count of 'yes' judgements per item, sims × n."""
    clear = rng.random((sims, n)) < kappa
    yes = rng.random((sims, n)) < prevalence
    return np.where(clear, np.where(yes, judges, 0), rng.binomial(judges, prevalence,
                                                                  (sims, n)))


@pytest.mark.parametrize(("judges", "kappa", "n"), [(3, 0.9, 10), (3, 0.97, 20), (6, 0.9, 5)])
def test_fleiss_kappa_interval_covers_near_one_with_few_items(judges: int, kappa: float,
                                                              n: int) -> None:
    # Before: Gwet's SE alone, 0.54, 0.37, 0.33 (zero width whenever every judge agrees on
    # every item); now 0.998, 1.0, 0.945. Through the count table fleiss_kappa builds (its
    # _fleiss_interval); the frame path is checked by hand below.
    from kbench_core.agreement.kappa import _fleiss_interval

    rng = np.random.default_rng(12)
    yes = fleiss_tables(rng, n, judges, 0.5, kappa, 1000)
    seen: dict[tuple[int, ...], bool | None] = {}
    hits = []
    for row in yes:
        key = tuple(np.sort(row))
        if key not in seen:
            value, low, high = _fleiss_interval(
                np.column_stack([row, judges - row]).astype(float), "asymptotic", 10, 0)
            seen[key] = bool(low <= kappa <= high) if math.isfinite(value) else None
        hits.append(seen[key])
    defined = [h for h in hits if h is not None]
    assert np.mean(defined) >= 0.93, np.mean(defined)


def test_fleiss_and_alpha_of_perfect_agreement_hand_worked() -> None:
    from kbench_core import agreement as ag

    grid = np.array([[v] * 3 for v in [True, False, True, False, True]])
    frame = judged_grid(grid, ("a", "b", "c"))
    # Fleiss: P̄ = 1 over 5 items, p_e = 0.6² + 0.4² = 0.52 -> ((5/(5 + z²)) − 0.52)/0.48.
    # before: [1, 1] both ways
    want = (5 / (5 + Z2) - 0.52) / 0.48
    for ci in ("asymptotic", "bootstrap"):
        est = ag.fleiss_kappa(frame, "label", ci=ci, n_boot=50)
        assert (est.value, est.low, est.high) == pytest.approx((1.0, want, 1.0))
    # α: 15 values, 9 yes and 6 no: D_e = 2·9·6/(15·14) = 0.5143, so p_e = 1 − D_e and
    # α_low = (5/(5 + z²) − p_e)/D_e. before: [1, 1]
    d_e = 2 * 9 * 6 / (15 * 14)
    for level in ("nominal", "interval"):
        est = ag.krippendorff_alpha(frame, "label", level=level, ci="bootstrap", n_boot=50)
        assert (est.value, est.low, est.high) == pytest.approx(
            (1.0, (5 / (5 + Z2) - (1 - d_e)) / d_e, 1.0))
    # numbers in [0, 10] that agree: distances scaled by the squared range (100); the five
    # values 0, 10, 0, 10, 5 three times: D_e = 2(n T2 − T1²)/(n(n−1)) with n = 15,
    # T1 = 3·25 = 75, T2 = 3·(100 + 100 + 25) = 675 -> 2(10125 − 5625)/210 = 42.86
    numbers = np.array([[v] * 3 for v in [0.0, 10.0, 0.0, 10.0, 5.0]])
    frame = judged_grid(numbers, ("a", "b", "c")).assign(label=numbers.ravel())
    est = ag.krippendorff_alpha(frame, "label", level="interval", ci="bootstrap", n_boot=50)
    d_e = 2 * (15 * 675 - 75 ** 2) / 210 / 100
    assert (est.low, est.high) == pytest.approx(((5 / (5 + Z2) - (1 - d_e)) / d_e, 1.0))


@pytest.mark.parametrize(("kappa", "n"), [(0.9, 10), (0.97, 20)])
def test_alpha_bootstrap_interval_covers_near_one_with_few_items(kappa: float,
                                                                  n: int) -> None:
    # Two judges, 0/1 label, same marginals (the population α is then κ). 400 seeded tables
    # through krippendorff_alpha(ci="bootstrap") (each distinct table once). Before: the
    # bootstrap of a table whose items all agree is [1, 1] (61% and 78% of the tables), so
    # at most 0.39 and 0.22; now 0.99 and 1.0.
    from kbench_core import agreement as ag

    rng = np.random.default_rng(13)
    tables = rng.multinomial(n, cohen_truth_cells(0.5, kappa), 400)
    seen: dict[tuple[int, ...], bool | None] = {}
    hits = []
    for cells in map(tuple, tables):
        if cells not in seen:
            pattern = np.repeat([[1, 1], [1, 0], [0, 1], [0, 0]], cells, axis=0)
            est = ag.krippendorff_alpha(judged_grid(pattern, ("a", "b")), "label",
                                        ci="bootstrap", n_boot=200)
            seen[cells] = (bool(est.low <= kappa <= est.high) if math.isfinite(est.value)
                           else None)
        hits.append(seen[cells])
    defined = [h for h in hits if h is not None]
    assert np.mean(defined) >= 0.9, np.mean(defined)


def test_model_pas_of_equal_study_values_has_an_interval_with_width() -> None:
    # Five studies whose every test has PAS 0.5 (π_h = π_a = 0.5): the model PAS is 0.5 with
    # zero spread over studies. before: 0.5 [0.5, 0.5]; now PAS's range [0, 1] gives the
    # Wilson interval of 2.5 of 5: 0.5 ± z·sqrt(0.25/5 + z²/100)/(1 + z²/5).
    rows = [("m", f"s{i}", "f", "t", 0.5, 0.5, 100.0) for i in range(5)]
    frame = pd.DataFrame(rows, columns=["model", "study", "finding", "test", "human_pi",
                                        "agent_pi", "n_eff"])
    model = R.pas(frame).model.iloc[0]
    half = math.sqrt(Z2) * math.sqrt(0.05 + Z2 / 100) / (1 + Z2 / 5)
    assert model["pas"] == pytest.approx(0.5)
    assert (model["pas_low"], model["pas_high"]) == pytest.approx((0.5 - half, 0.5 + half))


def test_t_interval_with_a_half_open_range_stays_undefined() -> None:
    from kbench_core.stats import t_interval

    low, high = t_interval(0.2, 0.0, 5, bounds=(0.0, math.inf))
    assert math.isnan(float(low)) and math.isnan(float(high))
