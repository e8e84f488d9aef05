"""Agreement between judges (kbench_core.agreement) against scikit-learn, statsmodels, the
krippendorff package, Gwet's irrCAC and hand-worked consensus cases."""

from __future__ import annotations

import dataclasses
import doctest
import math
import warnings

import krippendorff
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from scipy import stats as sps
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from kbench_core import agreement as ag
from kbench_core import samples, vuln
from kbench_core.figures import agreement as figures
from kbench_core.schema import TYPE_MATCHES

JUDGES = ("judge-a", "judge-b", "judge-c")


# ---------------------------------------------------------------------------- builders


def grid_frame(grid: list | np.ndarray, label: str = "label", *, judges=JUDGES,
               drop_missing: bool = True, dtype: str | None = None) -> pd.DataFrame:
    """A judged-like frame from an items × judges grid (None/NaN = failed judgement).

    ``drop_missing`` leaves a failed judgement out as a missing row (as the BlockBench
    importer does); otherwise the row is there with a missing value."""
    grid = np.asarray(grid, dtype=object)
    n_items, n_judges = grid.shape
    item, judge = (a.ravel() for a in np.indices((n_items, n_judges)))
    values = grid.ravel()
    frame = pd.DataFrame({
        "sample": [f"s{i:04d}" for i in item],
        "model": np.where(item % 2 == 0, "model-x", "model-y"),
        "prompt_type": "direct",
        "judge": np.asarray(judges, dtype=object)[judge],
        label: values,
    })
    missing = pd.isna(frame[label]).to_numpy()
    if drop_missing:
        frame = frame[~missing].reset_index(drop=True)
    if dtype is not None:
        frame[label] = frame[label].astype(dtype)
    return frame


def random_grid(rng: np.random.Generator, n_items: int, n_judges: int, values: list,
                p_missing: float = 0.0, p_copy: float = 0.6) -> np.ndarray:
    """Judges that copy a hidden truth with probability p_copy, else pick at random."""
    truth = rng.integers(0, len(values), n_items)
    codes = np.where(rng.random((n_items, n_judges)) < p_copy, truth[:, None],
                     rng.integers(0, len(values), (n_items, n_judges)))
    grid = np.asarray(values, dtype=object)[codes]
    grid[rng.random((n_items, n_judges)) < p_missing] = None
    return grid


def both_labelled(grid: np.ndarray, a: int, b: int) -> tuple[list, list]:
    keep = ~(pd.isna(grid[:, a]) | pd.isna(grid[:, b]))
    return list(grid[keep, a]), list(grid[keep, b])


def reliability(grid: np.ndarray, domain: list) -> np.ndarray:
    """judges × items floats for krippendorff.alpha (codes of ``domain``, NaN missing)."""
    out = np.full(grid.T.shape, np.nan)
    for code, value in enumerate(domain):
        out[np.equal(grid.T, value).astype(bool)] = code
    return out


# ---------------------------------------------------------------------------- Cohen's kappa


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("p_missing", [0.0, 0.2])
def test_pairwise_kappa_matches_sklearn_and_statsmodels(seed, p_missing) -> None:
    rng = np.random.default_rng(seed)
    grid = random_grid(rng, 150, 3, [True, False], p_missing)
    pairs = ag.pairwise_kappa(grid_frame(grid, dtype="boolean"), "label")
    assert pairs[["judge_a", "judge_b"]].values.tolist() == [
        ["judge-a", "judge-b"], ["judge-a", "judge-c"], ["judge-b", "judge-c"]]
    for row, (a, b) in zip(pairs.itertuples(), [(0, 1), (0, 2), (1, 2)], strict=True):
        ya, yb = both_labelled(grid, a, b)
        assert row.n == len(ya)
        assert row.n_dropped == int((pd.isna(grid[:, a]) ^ pd.isna(grid[:, b])).sum())
        assert row.kappa == pytest.approx(cohen_kappa_score(ya, yb), abs=1e-12)
        table = pd.crosstab(pd.Series(ya), pd.Series(yb)).reindex(
            index=[False, True], columns=[False, True], fill_value=0).to_numpy()
        ref = cohens_kappa(table)
        assert row.kappa_low == pytest.approx(ref["kappa_low"], abs=1e-12)
        assert row.kappa_high == pytest.approx(ref["kappa_upp"], abs=1e-12)
        assert row.percent_agreement == pytest.approx(np.mean(np.array(ya) == np.array(yb)))


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_weighted_kappa_on_type_match_matches_sklearn(weights) -> None:
    rng = np.random.default_rng(5)
    # 'wrong' never used: the declared order still sets the distances.
    grid = random_grid(rng, 200, 3, ["not_mentioned", "partial", "semantic", "exact"], 0.1)
    frame = grid_frame(grid, "type_match")
    frame["type_match"] = pd.Categorical(frame["type_match"], categories=TYPE_MATCHES,
                                         ordered=True)
    pairs = ag.pairwise_kappa(frame, "type_match", weights=weights)
    for row, (a, b) in zip(pairs.itertuples(), [(0, 1), (0, 2), (1, 2)], strict=True):
        ya, yb = both_labelled(grid, a, b)
        expected = cohen_kappa_score(ya, yb, labels=list(TYPE_MATCHES), weights=weights)
        assert row.kappa == pytest.approx(expected, abs=1e-12)
        table = pd.crosstab(pd.Categorical(ya, categories=TYPE_MATCHES),
                            pd.Categorical(yb, categories=TYPE_MATCHES),
                            dropna=False).to_numpy()
        ref = cohens_kappa(table, wt=weights)
        assert row.kappa_low == pytest.approx(ref["kappa_low"], abs=1e-12)
        assert row.kappa_high == pytest.approx(min(ref["kappa_upp"], 1.0), abs=1e-12)


# Random tables include degenerate ones (one category): both implementations divide by 0
# there, and both warn; the values (NaN) are compared all the same.
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_closed_form_kappa_is_statsmodels_cohens_kappa(weights) -> None:
    # κ and its variance are statsmodels' formulas restated in numpy (its call costs ~1 ms):
    # the same numbers, on tables of every size, with empty rows and columns too.
    from kbench_core.agreement.kappa import _cohens_kappa
    rng = np.random.default_rng(11)
    for k in (2, 3, 5):
        for _ in range(20):
            table = rng.integers(0, 30, size=(k, k)).astype(float)
            table[rng.integers(k)] *= rng.integers(0, 2)
            if table.sum() == 0:
                continue
            ref = cohens_kappa(table, wt=weights)
            kappa, var = _cohens_kappa(table, weights)
            # to the last bit (NaN where both judges used one shared category only)
            np.testing.assert_equal(kappa, float(ref["kappa"]))
            np.testing.assert_equal(var, float(ref["var_kappa"]))
            np.testing.assert_equal(_cohens_kappa(table, weights, variance=False)[0], kappa)
            assert math.isnan(_cohens_kappa(table, weights, variance=False)[1])


def test_type_match_as_plain_text_is_put_in_the_declared_order() -> None:
    grid = [["exact", "semantic", "exact"], ["wrong", "wrong", "partial"],
            ["not_mentioned", "partial", "not_mentioned"], ["semantic", "exact", "exact"]]
    pairs = ag.pairwise_kappa(grid_frame(grid, "type_match"), "type_match", weights="linear")
    g = np.asarray(grid, dtype=object)
    assert pairs["kappa"].iloc[0] == pytest.approx(cohen_kappa_score(
        g[:, 0], g[:, 1], labels=list(TYPE_MATCHES), weights="linear"))


def test_planted_agreement_of_the_sample_judges() -> None:
    judged = samples.judged_samples()
    planted = samples.planted_agreement()
    pairs = ag.pairwise_kappa(judged, "target_found")
    swapped = planted.rename(columns={"judge_a": "judge_b", "judge_b": "judge_a"})
    merged = pd.concat([pairs.merge(planted, on=["judge_a", "judge_b"]),
                        pairs.merge(swapped, on=["judge_a", "judge_b"])])
    assert len(merged) == 3
    assert merged["kappa_x"].to_numpy() == pytest.approx(merged["kappa_y"].to_numpy())
    assert (merged["n_x"] == merged["n_y"]).all()
    everyone = planted[planted["judge_a"] == "all"].iloc[0]
    fleiss = ag.fleiss_kappa(judged, "target_found")
    assert fleiss.value == pytest.approx(everyone["kappa"]) and fleiss.n == everyone["n"]
    assert ag.percent_agreement(judged, "target_found").value == pytest.approx(
        everyone["percent_agreement"])
    # said_vulnerable does not follow the flip: every judge agrees, every κ is 1.
    assert (ag.pairwise_kappa(judged, "said_vulnerable")["kappa"] == 1.0).all()


def test_kappa_rejects_numbers_and_weights_on_nominal_labels() -> None:
    frame = grid_frame([[0.1, 0.2, 0.3], [0.5, 0.5, 0.4]], "rcir", dtype=float)
    with pytest.raises(ValueError, match=r"krippendorff_alpha\(judged, 'rcir', "
                                         r"level='interval'\)"):
        ag.pairwise_kappa(frame, "rcir")
    with pytest.raises(ValueError, match="krippendorff_alpha"):
        ag.fleiss_kappa(frame, "rcir")
    nominal = grid_frame([["a", "b", "c"], ["a", "a", "b"]], "vuln_guess")
    with pytest.raises(ValueError, match="ordered"):
        ag.pairwise_kappa(nominal, "vuln_guess", weights="linear")
    with pytest.raises(ValueError, match="weights must be one of"):
        ag.pairwise_kappa(nominal, "vuln_guess", weights="cubic")
    with pytest.raises(ValueError, match="no column 'nope'"):
        ag.pairwise_kappa(nominal, "nope")
    one_judge = grid_frame([[True], [False]], judges=("judge-a",))
    with pytest.raises(ValueError, match="at least two judges"):
        ag.pairwise_kappa(one_judge, "label")


def test_repeated_judgement_of_an_item_is_an_error() -> None:
    frame = grid_frame([[True, False, True]])
    with pytest.raises(ValueError, match="more than once"):
        ag.pairwise_kappa(pd.concat([frame, frame.iloc[:1]]), "label")


# ---------------------------------------------------------------------------- degenerate


def test_all_judges_agree_on_one_value_is_undefined_not_one() -> None:
    frame = grid_frame([[True] * 3] * 20)
    # sklearn: undefined as well (NaN, with an UndefinedMetricWarning).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert math.isnan(cohen_kappa_score([True] * 20, [True] * 20, labels=[False, True]))
    assert ag.pairwise_kappa(frame, "label")["kappa"].isna().all()
    assert math.isnan(ag.fleiss_kappa(frame, "label").value)
    assert math.isnan(ag.krippendorff_alpha(frame, "label").value)
    assert ag.percent_agreement(frame, "label").value == 1.0


def test_one_dissenting_item_among_many_is_not_taken_for_total_chance_agreement() -> None:
    """Chance agreement is then within 1e-5 of 1: κ must still be computed, not NaN."""
    n = 100_000
    a = np.ones(n, dtype=bool)
    b, c = a.copy(), a.copy()
    b[0], c[:2] = False, False
    frame = grid_frame(np.column_stack([a, b, c]))
    pairs = ag.pairwise_kappa(frame, "label")
    assert pairs["kappa"].tolist() == pytest.approx(
        [cohen_kappa_score(a, b), cohen_kappa_score(a, c), cohen_kappa_score(b, c)])
    table, _ = aggregate_raters(np.column_stack([a, b, c]).astype(int))
    assert ag.fleiss_kappa(frame, "label").value == pytest.approx(sm_fleiss_kappa(table))


def test_perfect_agreement_with_two_values_is_one() -> None:
    grid = [[v] * 3 for v in [True, False] * 10]
    frame = grid_frame(grid)
    pairs = ag.pairwise_kappa(frame, "label")
    assert (pairs["kappa"] == 1.0).all()
    # No zero-width [1, 1] (issue 23 item 7): 20 of 20 items agree, Wilson's lower bound of
    # p_o is 20/(20 + 1.96²) = 0.83887, and with p_e = 0.5, κ_low = (0.83887 − 0.5)/0.5.
    z2 = sps.norm.isf(0.025) ** 2
    assert pairs["kappa_low"].tolist() == pytest.approx([(20 / (20 + z2) - 0.5) / 0.5] * 3)
    assert (pairs["kappa_high"] == 1.0).all()
    table, _ = aggregate_raters(np.asarray(grid, dtype=int))
    assert ag.fleiss_kappa(frame, "label").value == pytest.approx(sm_fleiss_kappa(table))
    assert ag.fleiss_kappa(frame, "label").value == pytest.approx(1.0)
    assert ag.krippendorff_alpha(frame, "label").value == pytest.approx(
        krippendorff.alpha(reliability(np.asarray(grid, dtype=object), [False, True]),
                           level_of_measurement="nominal"))


def test_one_constant_judge() -> None:
    rng = np.random.default_rng(3)
    grid = random_grid(rng, 80, 3, [True, False])
    grid[:, 0] = True
    frame = grid_frame(grid)
    pairs = ag.pairwise_kappa(frame, "label")
    assert pairs["kappa"].iloc[0] == pytest.approx(
        cohen_kappa_score(list(grid[:, 0]), list(grid[:, 1])), abs=1e-12)
    assert pairs["kappa"].iloc[0] == pytest.approx(0.0, abs=1e-12)
    table, _ = aggregate_raters(grid.astype(int))
    assert ag.fleiss_kappa(frame, "label").value == pytest.approx(sm_fleiss_kappa(table))
    assert ag.krippendorff_alpha(frame, "label").value == pytest.approx(
        krippendorff.alpha(reliability(grid, [False, True]), level_of_measurement="nominal"))


@pytest.mark.parametrize("drop_missing", [True, False])
def test_failed_judgement_is_missing_whether_row_or_value(drop_missing) -> None:
    rng = np.random.default_rng(11)
    grid = random_grid(rng, 120, 3, [True, False], p_missing=0.25)
    frame = grid_frame(grid, drop_missing=drop_missing, dtype="boolean")
    reference = grid_frame(grid, drop_missing=True, dtype="boolean")
    pd.testing.assert_frame_equal(ag.pairwise_kappa(frame, "label"),
                                  ag.pairwise_kappa(reference, "label"))
    complete = ~pd.isna(grid).any(axis=1)
    est = ag.fleiss_kappa(frame, "label")
    table, _ = aggregate_raters(grid[complete].astype(int))
    assert est.value == pytest.approx(sm_fleiss_kappa(table))
    assert est.n == complete.sum()
    assert est.n_dropped == (~complete & ~pd.isna(grid).all(axis=1)).sum()
    alpha = ag.krippendorff_alpha(frame, "label")
    assert alpha.value == pytest.approx(
        krippendorff.alpha(reliability(grid, [False, True]), level_of_measurement="nominal"))
    labelled = (~pd.isna(grid)).sum(axis=1)
    assert alpha.n == (labelled >= 2).sum() and alpha.n_dropped == (labelled == 1).sum()


# ---------------------------------------------------------------------------- Fleiss


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("n_judges", [3, 5])
def test_fleiss_matches_statsmodels(seed, n_judges) -> None:
    rng = np.random.default_rng(seed)
    values = ["not_mentioned", "wrong", "partial", "semantic", "exact"]
    grid = random_grid(rng, 300, n_judges, values, p_missing=0.05)
    frame = grid_frame(grid, "type_match", judges=[f"j{i}" for i in range(n_judges)])
    est = ag.fleiss_kappa(frame, "type_match")
    complete = grid[~pd.isna(grid).any(axis=1)]
    codes = np.vectorize(values.index)(complete)
    table, _ = aggregate_raters(codes)
    assert est.value == pytest.approx(sm_fleiss_kappa(table, method="fleiss"), abs=1e-12)
    assert est.n == len(complete)
    assert est.low < est.value < est.high


# Gwet's irrCAC (R), README: the distribution of 6 psychiatrists over 5 diagnoses for 15
# patients (dataset distrib.6raters); fleiss.kappa.dist prints coeff 0.4139265, stderr
# 0.08119291, conf.int (0.24, 0.588) with a t interval on n - 1 = 14 degrees of freedom.
DISTRIB_6RATERS = [[0, 0, 0, 6, 0], [0, 3, 0, 0, 3], [0, 1, 4, 0, 1], [0, 0, 0, 0, 6],
                   [0, 3, 0, 3, 0], [2, 0, 4, 0, 0], [0, 0, 4, 0, 2], [2, 0, 3, 1, 0],
                   [2, 0, 0, 4, 0], [0, 0, 0, 0, 6], [1, 0, 0, 5, 0], [1, 1, 0, 4, 0],
                   [0, 3, 3, 0, 0], [1, 0, 0, 5, 0], [0, 2, 0, 3, 1]]


def test_fleiss_standard_error_reproduces_irrcac() -> None:
    categories = ["depression", "personality", "schizophrenia", "neurosis", "other"]
    grid = [np.repeat(categories, row) for row in DISTRIB_6RATERS]
    frame = grid_frame(grid, "diagnosis", judges=[f"psychiatrist-{i}" for i in range(6)])
    est = ag.fleiss_kappa(frame, "diagnosis")
    assert est.value == pytest.approx(0.4139265, abs=5e-8)
    half = sps.t.ppf(0.975, 14) * 0.08119291
    assert est.low == pytest.approx(0.4139265 - half, abs=1e-6)
    assert est.high == pytest.approx(0.4139265 + half, abs=1e-6)
    assert round(est.low, 2) == 0.24 and round(est.high, 3) == 0.588


def test_fleiss_standard_error_is_close_to_the_bootstrap() -> None:
    rng = np.random.default_rng(8)
    frame = grid_frame(random_grid(rng, 600, 4, ["a", "b", "c"], p_copy=0.5),
                       judges=("w", "x", "y", "z"))
    asym = ag.fleiss_kappa(frame, "label")
    boot = ag.fleiss_kappa(frame, "label", ci="bootstrap", n_boot=400)
    assert boot.value == asym.value
    assert (boot.high - boot.low) == pytest.approx(asym.high - asym.low, rel=0.15)


def test_fleiss_bootstrap_matches_a_naive_resampling() -> None:
    rng = np.random.default_rng(2)
    grid = random_grid(rng, 60, 3, [True, False])
    est = ag.fleiss_kappa(grid_frame(grid), "label", ci="bootstrap", n_boot=60,
                          random_state=4)
    # bootstrap_groups' draws, replayed: each replicate resamples the 60 items.
    draws = np.random.default_rng(4)
    codes = grid.astype(int)
    values = []
    for _ in range(60):
        index = draws.integers(0, 60, 60)
        table, _ = aggregate_raters(codes[np.sort(index)], n_cat=2)
        values.append(sm_fleiss_kappa(table))
    assert est.low == pytest.approx(np.quantile(values, 0.025))
    assert est.high == pytest.approx(np.quantile(values, 0.975))


# ---------------------------------------------------------------------------- Krippendorff


@pytest.mark.parametrize("seed", [0, 1])
def test_alpha_nominal_and_ordinal_match_krippendorff(seed) -> None:
    rng = np.random.default_rng(seed)
    grid = random_grid(rng, 120, 4, list(TYPE_MATCHES), p_missing=0.3)
    frame = grid_frame(grid, "type_match", judges=("w", "x", "y", "z"))
    data = reliability(grid, list(TYPE_MATCHES))
    for level in ("nominal", "ordinal"):
        est = ag.krippendorff_alpha(frame, "type_match", level=level)
        assert est.value == pytest.approx(
            krippendorff.alpha(data, level_of_measurement=level,
                               value_domain=np.arange(5)), abs=1e-12)


@pytest.mark.parametrize("distinct", [11, 400])
def test_alpha_interval_matches_krippendorff(distinct) -> None:
    """11 values: the package itself; 400 (> MAX_ALPHA_VALUES): the closed form."""
    rng = np.random.default_rng(distinct)
    truth = rng.integers(0, distinct, 90)
    values = (truth[:, None] + rng.integers(-2, 3, (90, 3))) / distinct
    values[rng.random(values.shape) < 0.2] = np.nan
    frame = grid_frame(values, "rcir", dtype=float)
    est = ag.krippendorff_alpha(frame, "rcir", level="interval")
    assert est.value == pytest.approx(
        krippendorff.alpha(values.T, level_of_measurement="interval"), abs=1e-10)


def test_alpha_bootstrap_matches_a_naive_resampling() -> None:
    rng = np.random.default_rng(6)
    grid = random_grid(rng, 50, 3, list(TYPE_MATCHES), p_missing=0.2)
    frame = grid_frame(grid, "type_match")
    est = ag.krippendorff_alpha(frame, "type_match", level="ordinal", ci="bootstrap",
                                n_boot=40, random_state=9)
    data = reliability(grid, list(TYPE_MATCHES))
    pairable = (~np.isnan(data)).sum(axis=0) >= 2   # the items alpha rests on, in key order
    units = data[:, pairable]
    draws = np.random.default_rng(9)
    values = []
    for _ in range(40):
        index = draws.integers(0, units.shape[1], units.shape[1])
        values.append(krippendorff.alpha(units[:, index], level_of_measurement="ordinal",
                                         value_domain=np.arange(5)))
    assert est.low == pytest.approx(np.nanquantile(values, 0.025), abs=1e-12)
    assert est.high == pytest.approx(np.nanquantile(values, 0.975), abs=1e-12)


def test_alpha_interval_bootstrap_matches_a_naive_resampling() -> None:
    rng = np.random.default_rng(7)
    values = np.round(rng.random((40, 3)), 1)
    values[rng.random(values.shape) < 0.2] = np.nan
    est = ag.krippendorff_alpha(grid_frame(values, "ava", dtype=float), "ava",
                                level="interval", ci="bootstrap", n_boot=30)
    units = values.T[:, (~np.isnan(values)).sum(axis=1) >= 2]
    draws = np.random.default_rng(0)
    reps = [krippendorff.alpha(units[:, draws.integers(0, units.shape[1], units.shape[1])],
                               level_of_measurement="interval") for _ in range(30)]
    assert est.low == pytest.approx(np.quantile(reps, 0.025), abs=1e-10)
    assert est.high == pytest.approx(np.quantile(reps, 0.975), abs=1e-10)


def test_alpha_level_checks() -> None:
    frame = grid_frame([["a", "b", "a"], ["b", "b", "b"]], "guess")
    with pytest.raises(ValueError, match="ordered"):
        ag.krippendorff_alpha(frame, "guess", level="ordinal")
    with pytest.raises(ValueError, match="needs numbers"):
        ag.krippendorff_alpha(frame, "guess", level="interval")
    with pytest.raises(ValueError, match="level must be one of"):
        ag.krippendorff_alpha(frame, "guess", level="ratio")


def test_kappa_bootstrap_matches_sklearn_on_resamples() -> None:
    rng = np.random.default_rng(12)
    grid = random_grid(rng, 70, 3, [True, False])
    pairs = ag.pairwise_kappa(grid_frame(grid), "label", ci="bootstrap", n_boot=50,
                              random_state=1)
    draws = np.random.default_rng(1)
    reps = []
    for _ in range(50):
        index = draws.integers(0, 70, 70)
        reps.append([cohen_kappa_score(list(grid[index, a]), list(grid[index, b]))
                     for a, b in [(0, 1), (0, 2), (1, 2)]])
    reps = np.array(reps)
    assert pairs["kappa_low"].to_numpy() == pytest.approx(np.quantile(reps, 0.025, axis=0))
    assert pairs["kappa_high"].to_numpy() == pytest.approx(np.quantile(reps, 0.975, axis=0))


# ---------------------------------------------------------------------------- percent


def test_percent_agreement_by_hand() -> None:
    # items: all agree (3), two agree + one failed (agree), split, one judgement only
    grid = [[True, True, True], [False, False, None], [True, False, True], [True, None, None]]
    est = ag.percent_agreement(grid_frame(grid), "label")
    assert (est.value, est.n, est.n_dropped) == (2 / 3, 3, 1)
    assert est.low < 2 / 3 < est.high


# ---------------------------------------------------------------------------- human


def test_human_is_the_reference_not_a_voter() -> None:
    rng = np.random.default_rng(21)
    grid = random_grid(rng, 100, 4, [True, False], p_missing=0.1)
    judges = ("judge-a", "judge-b", "judge-c", "human")
    frame = grid_frame(grid, judges=judges, dtype="boolean")
    llm_only = frame[frame["judge"] != "human"]
    pairs = ag.pairwise_kappa(frame, "label")
    assert "human" not in set(pairs["judge_a"]) | set(pairs["judge_b"])
    assert ag.fleiss_kappa(frame, "label") == ag.fleiss_kappa(llm_only, "label")
    assert ag.krippendorff_alpha(frame, "label") == ag.krippendorff_alpha(llm_only, "label")
    assert ag.percent_agreement(frame, "label") == ag.percent_agreement(llm_only, "label")
    human = ag.human_agreement(frame, "label")
    assert human["judge"].tolist() == ["judge-a", "judge-b", "judge-c"]
    for i, row in enumerate(human.itertuples()):
        ya, yb = both_labelled(grid, i, 3)
        assert row.kappa == pytest.approx(cohen_kappa_score(ya, yb), abs=1e-12)
        assert row.n == len(ya)
    assert ag.human_agreement(llm_only, "label").empty
    assert ag.judges(frame) == ["judge-a", "judge-b", "judge-c", "human"]


def test_consensus_leaves_the_human_out() -> None:
    judged = samples.judged_samples(n_samples=10, judges=("judge-one", "judge-two",
                                                          "judge-three"))
    expert = judged[judged["judge"] == "judge-three"].copy()
    expert["judge"] = "human"
    with_human = pd.concat([judged, expert.assign(target_found=~expert["target_found"])],
                           ignore_index=True)
    pd.testing.assert_frame_equal(ag.consensus(with_human), ag.consensus(judged))


# ---------------------------------------------------------------------------- consensus


def consensus_frame(votes: list[list], *, vulnerable: bool = True, **columns) -> pd.DataFrame:
    """One item per row of ``votes`` (target_found per judge); other labels per judge."""
    n_judges = len(votes[0])
    judges = [f"j{i}" for i in range(n_judges)]
    frame = grid_frame(votes, "target_found", judges=judges, drop_missing=False)
    frame["is_vulnerable"] = vulnerable
    frame["said_vulnerable"] = frame.pop("target_found")
    frame["target_found"] = frame["said_vulnerable"]
    for name, grid in columns.items():
        frame[name] = np.asarray(grid, dtype=object).ravel()
    return frame


def test_consensus_yes_no_with_three_judges() -> None:
    votes = [[True, True, False],    # 2 of 3 yes: yes
             [False, True, False],   # 2 of 3 no: no
             [True, False, None],    # yes, no, failed: no majority
             [True, None, None],     # one yes only: no majority
             [True, True, None]]     # 2 yes and a failure: yes
    frame = consensus_frame(votes)
    out = ag.consensus(frame)
    assert out.attrs["min_votes"] == 2
    assert out["target_found"].tolist() == [True, False, False, False, True]
    # Not credited: the undecided verdicts become wrong (the samples are vulnerable).
    assert out["said_vulnerable"].tolist() == [True, False, False, False, True]
    assert out["no_majority"].tolist() == ["", "", "said_vulnerable, target_found",
                                           "said_vulnerable, target_found", ""]
    # the judgements present (issue 37: a failed judgement's row is not one)
    assert out["n_judges"].tolist() == [3, 3, 2, 1, 2]
    assert out.attrs["no_majority"] == {"said_vulnerable": 2, "target_found": 2}
    safe = ag.consensus(consensus_frame(votes, vulnerable=False))
    # On a safe contract the wrong verdict is "vulnerable".
    assert safe["said_vulnerable"].tolist() == [True, False, True, True, True]
    assert (out["judge"] == "majority").all()


def test_consensus_ties_with_four_judges_and_min_votes() -> None:
    votes = [[True, True, False, False],   # 2-2 tie: no majority (needs 3 of 4)
             [True, True, True, False],    # 3 of 4: yes
             [True, True, None, None]]     # 2 of 4 present: no majority
    out = ag.consensus(consensus_frame(votes))
    assert out.attrs["min_votes"] == 3
    assert out["target_found"].tolist() == [False, True, False]
    loose = ag.consensus(consensus_frame(votes), min_votes=2)
    # 2 votes suffice, but a 2-2 split is still a tie.
    assert loose["target_found"].tolist() == [False, True, True]
    assert loose["no_majority"].tolist() == ["said_vulnerable, target_found", "", ""]
    one = ag.consensus(consensus_frame([[True, False, True]]), min_votes=1)
    assert one["target_found"].tolist() == [True]   # 2 beat 1: unique top
    with pytest.raises(ValueError, match="min_votes must be a whole number from 1 to 4"):
        ag.consensus(consensus_frame(votes), min_votes=5)


def test_consensus_categorical_and_numeric_rules() -> None:
    votes = [[True, True, False], [True, True, True], [False, False, False]]
    type_match = [["exact", "exact", "semantic"],
                  ["exact", "semantic", "partial"],
                  ["not_mentioned", "not_mentioned", "not_mentioned"]]
    rcir = [[0.9, 0.5, 0.1], [0.2, 0.4, 0.9], [None, None, None]]
    confidence = [[0.9, 0.5, 0.1], [0.2, 0.4, 0.9], [0.3, None, 0.8]]
    hallucinated = [[1, 2, 2], [0, 0, 3], [1, None, 2]]
    frame = consensus_frame(votes, type_match=type_match, rcir=rcir, confidence=confidence,
                            n_hallucinated=hallucinated)
    frame["type_match"] = pd.Categorical(frame["type_match"], categories=TYPE_MATCHES,
                                         ordered=True)
    for column in ("rcir", "confidence", "n_hallucinated"):
        frame[column] = frame[column].astype(float)
    out = ag.consensus(frame)
    assert out["type_match"].iloc[0] == "exact" and pd.isna(out["type_match"].iloc[1])
    assert out["type_match"].iloc[2] == "not_mentioned"
    # rcir: median over the judges that found the target (0.9 and 0.5 -> 0.7).
    assert out["rcir"].iloc[0] == pytest.approx(0.7)
    assert out["rcir"].iloc[1] == pytest.approx(0.4)
    assert math.isnan(out["rcir"].iloc[2])
    assert out["confidence"].tolist() == pytest.approx([0.5, 0.4, 0.55])
    assert out["n_hallucinated"].tolist() == pytest.approx([2.0, 0.0, 1.5])
    assert out["no_majority"].tolist() == ["", "type_match", ""]


def test_consensus_feeds_vuln_tiers_and_reproduces_the_planted_majority() -> None:
    judged = samples.judged_samples()
    tiers = vuln.tiers(ag.consensus(judged))
    # judge-one and judge-two agree everywhere (judge-three flips): the majority is theirs.
    planted = samples.planted_judged()
    planted = planted[planted["judge"] == "judge-one"].set_index("model")
    tiers = tiers.set_index("model").loc[planted.index]
    for metric in ("tp", "tn", "fp", "fn", "tdr", "lucky_guess_rate", "finding_precision",
                   "sui", "tus", "lgi", "location_accuracy"):
        assert tiers[metric].to_numpy() == pytest.approx(planted[metric].to_numpy()), metric
    assert (tiers["judge"] == "majority").all() and (tiers["n_missing"] == 0).all()


# ---------------------------------------------------------------------------- items


def test_disagreements_list_every_judge_value() -> None:
    grid = [[True, True, True], [True, False, True], [False, None, False],
            [True, None, False], [None, None, True]]
    frame = grid_frame(grid)
    out = ag.disagreements(frame, "label")
    assert out["sample"].tolist() == ["s0001", "s0003"]
    assert out["judge-a"].astype(object).tolist() == [True, True]
    assert out["judge-b"].iloc[0] == False and pd.isna(out["judge-b"].iloc[1])  # noqa: E712
    assert out["judge-c"].astype(object).tolist() == [True, False]
    assert out["n_values"].tolist() == [2, 2] and out["n_judges"].tolist() == [3, 2]
    assert out["consensus"].iloc[0] == True  # noqa: E712  (2 of 3 say yes)
    assert pd.isna(out["consensus"].iloc[1])  # 1 yes, 1 no: no majority
    missing = ag.disagreements(frame, "label", include_missing=True)
    assert missing["sample"].tolist() == ["s0001", "s0002", "s0003", "s0004"]


def test_disagreements_on_numbers_and_free_text() -> None:
    values = [[0.5, 0.5, 0.5], [0.5, 0.7, 0.5], [0.1, None, 0.1]]
    out = ag.disagreements(grid_frame(values, "rcir", dtype=float), "rcir")
    assert out["sample"].tolist() == ["s0001"]
    assert out["consensus"].tolist() == [0.5] and out["n_values"].tolist() == [2]
    lines = [["12;13", "12;13", "40"], ["7", "8", "9"]]
    text = ag.disagreements(grid_frame(lines, "claimed_lines"), "claimed_lines")
    assert text["n_values"].tolist() == [2, 3]
    assert text["consensus"].astype(object).tolist()[0] == "12;13"
    assert pd.isna(text["consensus"].iloc[1])


def test_confusion_counts_match_crosstab() -> None:
    rng = np.random.default_rng(4)
    grid = random_grid(rng, 90, 3, list(TYPE_MATCHES), p_missing=0.1)
    frame = grid_frame(grid, "type_match")
    out = ag.confusion(frame, "type_match", "judge-a", "judge-c")
    a = pd.Series(grid[:, 0]).fillna(ag.MISSING)
    c = pd.Series(grid[:, 2]).fillna(ag.MISSING)
    either = ~(pd.isna(grid[:, 0]) & pd.isna(grid[:, 2]))
    expected = pd.crosstab(a[either], c[either])
    for row in out.itertuples():
        want = expected.loc[row.value_a, row.value_b] if (
            row.value_a in expected.index and row.value_b in expected.columns) else 0
        assert row.count == want
    assert out["count"].sum() == either.sum()
    assert list(out["value_a"].cat.categories) == [*TYPE_MATCHES, ag.MISSING]


# ---------------------------------------------------------------------------- spread


def test_judge_spread_is_tiers_per_judge() -> None:
    judged = samples.judged_samples(n_samples=20)
    spread = ag.judge_spread(judged, by=("model", "prompt_type"))
    assert list(spread["judge"].cat.categories) == ["judge-one", "judge-three", "judge-two",
                                                    "majority"]
    for name in ("judge-one", "judge-three"):
        direct = vuln.tiers(judged, judge=name, by=("model", "prompt_type"))
        mine = spread[spread["judge"] == name].reset_index(drop=True)
        assert mine["tdr"].to_numpy() == pytest.approx(direct["tdr"].to_numpy())
        assert mine["sui"].to_numpy() == pytest.approx(direct["sui"].to_numpy())
    summary = ag.spread_summary(ag.judge_spread(judged))
    planted = samples.planted_judged(n_samples=20)
    for row in summary.itertuples():
        values = planted.loc[planted["model"] == row.model, row.metric]
        assert row.low == pytest.approx(values.min())
        assert row.high == pytest.approx(values.max())
        assert row.range == pytest.approx(values.max() - values.min())
        assert row.sd == pytest.approx(values.std(ddof=0))
        assert row.n_judges == 3
    sharp = summary[(summary["model"] == "synthetic-detector-sharp")
                    & (summary["metric"] == "tdr")].iloc[0]
    assert sharp.judge_low == "judge-three"


def test_label_agreement_collects_the_coefficients() -> None:
    judged = samples.judged_samples(n_samples=12)
    table = ag.label_agreement(judged, ["target_found", "rcir"])
    assert table[["label", "coefficient"]].values.tolist() == [
        ["target_found", "fleiss_kappa"], ["target_found", "krippendorff_alpha"],
        ["target_found", "percent_agreement"], ["rcir", "krippendorff_alpha"],
        ["rcir", "percent_agreement"]]
    assert table["value"].iloc[0] == ag.fleiss_kappa(judged, "target_found").value
    assert table["value"].iloc[3] == ag.krippendorff_alpha(judged, "rcir",
                                                           level="interval").value
    assert table["level"].tolist()[3] == "interval"


def test_interpretation_bands() -> None:
    # Landis & Koch (1977): <0 poor, 0-.20 slight, .21-.40 fair, .41-.60 moderate,
    # .61-.80 substantial, .81-1 almost perfect.
    values = [-0.2, 0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.81, 1.0, np.nan]
    assert ag.interpret(np.array(values)).tolist() == [
        "poor", "slight", "slight", "fair", "fair", "moderate", "moderate", "substantial",
        "substantial", "almost perfect", "almost perfect", "undefined"]


def test_docstring_examples_run() -> None:
    result = doctest.testmod(ag, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 3 and result.failed == 0


# ---------------------------------------------------------------------------- figures


def test_kappa_heatmap_is_symmetric_with_a_blank_diagonal() -> None:
    judged = samples.judged_samples(n_samples=10)
    pairs = ag.pairwise_kappa(judged, "target_found")
    fig = figures.kappa_heatmap(pairs, label="target_found")
    heat = fig.data[0]
    z = np.asarray(heat.z, dtype=float)
    assert list(heat.x) == list(heat.y) == ["judge-one", "judge-three", "judge-two"]
    assert np.isnan(np.diag(z)).all()
    assert np.allclose(np.nan_to_num(z), np.nan_to_num(z.T))
    assert z[0, 1] == pytest.approx(pairs["kappa"].iloc[0])
    assert (heat.zmin, heat.zmid, heat.zmax) == (-1, 0, 1)
    assert f"{pairs['kappa'].iloc[0]:.2f}" in heat.text[0][1]
    assert "judge-one vs judge-three" in fig.layout.title.text
    expert = pd.DataFrame({"judge": ["judge-one"], "kappa": [0.5], "kappa_low": [0.4],
                           "kappa_high": [0.6], "n": [7]})
    with_human = figures.kappa_heatmap(pairs, human=expert).data[0]
    assert list(with_human.x)[-1] == "human"
    assert np.asarray(with_human.z, dtype=float)[3, 0] == 0.5


def test_agreement_bars_carry_the_intervals() -> None:
    table = ag.label_agreement(samples.judged_samples(n_samples=10),
                               ["target_found", "rcir"], ci_alpha="bootstrap", n_boot=50)
    fig = figures.agreement_bars(table)
    names = [trace.name for trace in fig.data]
    assert names == ["Fleiss' κ", "Krippendorff's α", "Percent agreement"]
    fleiss = table[table["coefficient"] == "fleiss_kappa"].iloc[0]
    bar = fig.data[0]
    assert bar.y[0] == pytest.approx(fleiss["value"])
    assert bar.error_y.array[0] == pytest.approx(fleiss["high"] - fleiss["value"])
    assert bar.error_y.arrayminus[0] == pytest.approx(fleiss["value"] - fleiss["low"])


def test_spread_chart_has_one_marker_trace_per_judge_and_panel() -> None:
    spread = ag.judge_spread(samples.judged_samples(n_samples=10))
    fig = figures.judge_spread_chart(spread, ("tdr", "sui"))
    markers = [t for t in fig.data if t.type == "scatter"]
    assert [t.name for t in markers] == ["judge-one", "judge-three", "judge-two",
                                         "majority"] * 2
    sharp = spread[(spread["judge"] == "judge-three")
                   & (spread["model"] == "synthetic-detector-sharp")]["tdr"].iloc[0]
    # models down the side (y), the metric along x
    assert markers[1].x[list(markers[1].y).index("synthetic-detector-sharp")] == sharp
    assert markers[3].marker.symbol == "star"


def test_confusion_heatmap_counts() -> None:
    judged = samples.judged_samples(n_samples=10)
    table = ag.confusion(judged, "target_found", "judge-one", "judge-three")
    fig = figures.confusion_heatmap(table, "judge-one", "judge-three", label="target_found")
    z = np.asarray(fig.data[0].z)
    assert z.sum() == table["count"].sum() == 90 and z.shape == (2, 2)  # no (missing) row
    assert f"agree on {int(np.trace(z))} of 90 items" in fig.layout.title.text


# ---------------------------------------------------------------------------- properties


grids = st.integers(min_value=0, max_value=10_000).flatmap(
    lambda seed: st.tuples(st.just(seed), st.integers(4, 40), st.integers(2, 4),
                           st.floats(0.0, 0.4)))


def _random_frame(params) -> tuple[np.ndarray, pd.DataFrame]:
    seed, n_items, n_judges, p_missing = params
    rng = np.random.default_rng(seed)
    grid = random_grid(rng, n_items, n_judges, ["a", "b", "c"], p_missing)
    return grid, grid_frame(grid, judges=[f"j{i}" for i in range(n_judges)])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(grids)
def test_kappa_is_symmetric_in_judge_order(params) -> None:
    grid, frame = _random_frame(params)
    n_judges = grid.shape[1]
    # a judge whose every judgement failed is absent: kappa needs two judges with labels
    assume(frame["judge"].nunique() == n_judges)
    renamed = frame.assign(judge=frame["judge"].map(
        {f"j{i}": f"j{n_judges - 1 - i}" for i in range(n_judges)}))
    first = ag.pairwise_kappa(frame, "label")
    second = ag.pairwise_kappa(renamed, "label")
    key = {(r.judge_a, r.judge_b): r for r in second.itertuples()}
    for row in first.itertuples():
        a = f"j{n_judges - 1 - int(row.judge_a[1:])}"
        b = f"j{n_judges - 1 - int(row.judge_b[1:])}"
        other = key[(b, a)]
        assert other.n == row.n
        if math.isnan(row.kappa):
            assert math.isnan(other.kappa)
        else:
            assert other.kappa == pytest.approx(row.kappa, abs=1e-12)
            assert -1.0 <= row.kappa_low <= row.kappa <= row.kappa_high <= 1.0


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(grids, st.integers(0, 1000))
def test_item_order_does_not_matter(params, shuffle_seed) -> None:
    grid, frame = _random_frame(params)
    # a judge whose every judgement failed is absent: kappa needs two judges with labels
    assume(frame["judge"].nunique() == grid.shape[1])
    shuffled = frame.sample(frac=1.0, random_state=shuffle_seed).reset_index(drop=True)

    def same(x: float, y: float) -> bool:
        return (math.isnan(x) and math.isnan(y)) or x == pytest.approx(y, abs=1e-12)

    for f in (ag.fleiss_kappa, ag.krippendorff_alpha, ag.percent_agreement):
        try:
            a, b = f(frame, "label"), f(shuffled, "label")
        except ValueError:
            continue
        assert same(a.value, b.value) and same(a.low, b.low) and a.n == b.n
    pk, ps = ag.pairwise_kappa(frame, "label"), ag.pairwise_kappa(shuffled, "label")
    pd.testing.assert_frame_equal(pk, ps, check_exact=False, atol=1e-12)
    c1, c2 = ag.consensus(frame), ag.consensus(shuffled)
    pd.testing.assert_frame_equal(c1.reset_index(drop=True), c2.reset_index(drop=True))
    pct = ag.percent_agreement(frame, "label")
    assert math.isnan(pct.value) or 0.0 <= pct.value <= 1.0


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 5))
def test_unanimous_judges_make_a_consensus_equal_to_any_of_them(seed, n_judges) -> None:
    rng = np.random.default_rng(seed)
    one = rng.random(15) < 0.5
    frame = grid_frame(np.repeat(one[:, None], n_judges, axis=1),
                       judges=[f"j{i}" for i in range(n_judges)])
    frame["is_vulnerable"] = True
    frame["said_vulnerable"] = frame["label"].astype(bool)
    frame["target_found"] = frame["label"].astype(bool)
    out = ag.consensus(frame)
    assert out["target_found"].tolist() == one.tolist()
    assert (out["no_majority"] == "").all()


# --------------------------------------------------------------- summary (the page's numbers)


def _with_expert(n_samples: int = 12) -> pd.DataFrame:
    judged = samples.judged_samples(n_samples=n_samples)
    expert = judged[judged["judge"] == "judge-two"].copy()
    expert["judge"] = "human"
    return pd.concat([judged.astype({"judge": str}), expert.astype({"judge": str})],
                     ignore_index=True)


def test_summary_of_a_yes_no_label_is_the_coefficient_functions() -> None:
    judged = _with_expert()
    s = ag.summarize(judged, "target_found")
    assert (s.label, s.level, s.numeric, s.n_llm, s.weights) == (
        "target_found", "nominal", False, 3, None)
    assert s.pair_value == "kappa" and s.comparable
    pd.testing.assert_frame_equal(s.pairs, ag.pairwise_kappa(judged, "target_found"))
    assert s.fleiss == ag.fleiss_kappa(judged, "target_found")
    assert s.alpha == ag.krippendorff_alpha(judged, "target_found")
    assert s.percent == ag.percent_agreement(judged, "target_found")
    expected = ag.human_agreement(judged, "target_found")
    pd.testing.assert_frame_equal(s.human.drop(columns="band"), expected)
    assert s.human["band"].tolist() == [ag.interpret(v) for v in expected["kappa"]]
    # judge-two is the expert's copy: perfect agreement
    assert s.human.set_index("judge").loc["judge-two", "kappa"] == pytest.approx(1.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.label = "other"  # type: ignore[misc]


def test_summary_weights_only_ordered_labels_and_numbers_get_alpha() -> None:
    judged = samples.judged_samples(n_samples=20)
    ordinal = ag.summarize(judged, "type_match", weights="quadratic")
    assert ordinal.level == "ordinal" and ordinal.weights == "quadratic"
    pd.testing.assert_frame_equal(
        ordinal.pairs, ag.pairwise_kappa(judged, "type_match", weights="quadratic"))
    assert ordinal.alpha == ag.krippendorff_alpha(judged, "type_match", level="ordinal")
    nominal = ag.summarize(judged, "said_vulnerable", weights="linear")
    assert nominal.weights is None  # a nominal label is never weighted
    pd.testing.assert_frame_equal(nominal.pairs, ag.pairwise_kappa(judged, "said_vulnerable"))
    numeric = ag.summarize(judged, "rcir", ci="bootstrap", n_boot=50)
    assert numeric.numeric and numeric.pair_value == "alpha" and numeric.fleiss is None
    assert numeric.human is None
    pd.testing.assert_frame_equal(
        numeric.pairs, ag.pairwise_alpha(judged, "rcir", ci="bootstrap", n_boot=50))
    assert numeric.alpha == ag.krippendorff_alpha(judged, "rcir", level="interval",
                                                  ci="bootstrap", n_boot=50)
    assert not math.isnan(numeric.alpha.low)
    with pytest.raises(ValueError, match="ci must be one of"):
        ag.summarize(judged, "rcir", ci="asymptotic")  # type: ignore[arg-type]


def test_summary_with_one_llm_judge_has_only_the_expert_comparison() -> None:
    one = samples.judged_samples(n_samples=6, judges=("judge-one", "human"))
    s = ag.summarize(one, "target_found")
    assert s.n_llm == 1 and not s.comparable
    assert s.pairs is None and s.fleiss is None and s.alpha is None and s.percent is None
    assert s.human["judge"].tolist() == ["judge-one"]
    assert ag.summarize(samples.judged_samples(n_samples=6), "target_found").human is None


def test_consensus_leaderboard_is_the_ranked_tiers_of_the_consensus() -> None:
    judged = samples.judged_samples(n_samples=20)
    board = ag.consensus_leaderboard(judged, min_votes=3)
    voted = ag.consensus(judged, min_votes=3)
    tiers = vuln.tiers(voted).sort_values("sui", ascending=False, kind="stable")
    table = board.table
    assert table["model"].tolist() == tiers["model"].tolist()
    assert table["sui"].to_numpy() == pytest.approx(tiers["sui"].to_numpy())
    assert table["rank"].tolist() == [1, 2, 3]
    assert {"n", "n_samples", "few_items", "renormalised", "rank_text"} <= set(table)
    # 20 samples < 30 (SPEC 2.6): every row is marked
    assert table["few_items"].all() and (table["n_samples"] == 20).all()
    assert table["rank_text"].tolist() == [f"{r} · few samples" for r in (1, 2, 3)]
    assert (board.min_votes, board.n_llm, board.n_items) == (3, 3, len(voted))
    assert board.n_undecided == int((voted["no_majority"] != "").sum()) > 0
    assert dict(board.no_majority) == voted.attrs["no_majority"]


def test_judge_tiers_equal_judge_spread_and_the_leaderboard() -> None:
    judged = _with_expert(n_samples=15)
    both = ag.judge_tiers(judged, min_votes=2)
    pd.testing.assert_frame_equal(both.spread, ag.judge_spread(judged, min_votes=2))
    pd.testing.assert_frame_equal(both.summary, ag.spread_summary(both.spread))
    alone = ag.consensus_leaderboard(judged, min_votes=2)
    pd.testing.assert_frame_equal(both.consensus.table, alone.table)
    assert both.consensus == dataclasses.replace(alone, table=both.consensus.table)
    assert list(both.spread["judge"].cat.categories) == [
        "judge-one", "judge-three", "judge-two", "human", "majority"]


def test_agreement_options_give_the_core_calls_and_provenance() -> None:
    from kbench_core.families.judged import AgreementOptions

    options = AgreementOptions.from_mapping({"label": "type_match", "weights": "linear",
                                             "bootstrap": True, "other": 1})
    assert options == AgreementOptions("type_match", "linear", True, None)
    assert options.summarize() == {"weights": "linear", "ci": "bootstrap",
                                   "failed_as": "missing"}
    assert options.label_agreement() == {"ci_alpha": "bootstrap", "failed_as": "missing"}
    assert AgreementOptions().summarize() == {"weights": None, "ci": None,
                                              "failed_as": "missing"}
    assert AgreementOptions(min_votes=3).consensus() == {"judges": None, "min_votes": 3,
                                                         "failed_as": "missing"}
    assert options.provenance() == {"label": "type_match", "weights": "linear",
                                    "bootstrap": True, "min_votes": None, "judges": (),
                                    "failed_as": "missing"}
    assert AgreementOptions.from_mapping(options) is options
    judged = samples.judged_samples(n_samples=10)
    s = ag.summarize(judged, options.label, **options.summarize())
    assert s.weights == "linear"
