"""kbench_core.calibration against scikit-learn, numpy and hand-worked values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.calibration import calibration_curve
from sklearn.metrics import brier_score_loss

from kbench_core import calibration
from kbench_core.calibration import (
    bin_calibration,
    brier,
    ece,
    ece_l2_debiased,
    mce,
    reliability_table,
)

# Confidences drawn from a coarse grid as well as anywhere in [0, 1], so that ties and values
# sitting exactly on bin edges (0.1, 0.5, ...) are common.
confidences = st.one_of(st.sampled_from([0.0, 0.05, 0.1, 0.2, 0.25, 0.5, 0.7, 0.8, 0.9, 1.0]),
                        st.floats(0, 1, allow_nan=False))
pairs = st.lists(st.tuples(confidences, st.booleans()), min_size=1, max_size=80)


def split(data: list[tuple[float, bool]]) -> tuple[np.ndarray, np.ndarray]:
    conf = np.array([c for c, _ in data], dtype=float)
    correct = np.array([y for _, y in data], dtype=int)
    return conf, correct


# ------------------------------------------------------------------ against scikit-learn


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
@given(data=pairs, n_bins=st.integers(1, 15))
def test_reliability_table_is_sklearn_calibration_curve(strategy, data, n_bins) -> None:
    conf, correct = split(data)
    prob_true, prob_pred = calibration_curve(correct, conf, n_bins=n_bins, strategy=strategy)
    table = reliability_table(conf, correct, n_bins=n_bins, strategy=strategy)
    np.testing.assert_array_equal(table["accuracy"].to_numpy(), prob_true)
    np.testing.assert_array_equal(table["mean_confidence"].to_numpy(), prob_pred)
    assert table["count"].sum() == len(conf)
    assert (table["count"] > 0).all()


@given(data=pairs, n_bins=st.integers(1, 15))
def test_quantile_edges_are_numpy_percentiles(data, n_bins) -> None:
    conf, _ = split(data)
    edges = calibration.quantile_edges(np.zeros(conf.size, dtype=np.int64), conf, 1, n_bins)[0]
    # scikit-learn's calibration_curve(strategy="quantile") uses exactly these edges.
    expected = np.percentile(conf, np.linspace(0, 1, n_bins + 1) * 100)
    np.testing.assert_array_equal(edges, expected)


@given(data=pairs)
def test_brier_is_sklearn_brier_score_loss(data) -> None:
    conf, correct = split(data)
    assert float(brier(conf, correct, ci=None)) == pytest.approx(
        brier_score_loss(correct, conf, pos_label=1) if len(set(correct)) > 1
        else np.mean((conf - correct) ** 2), abs=1e-12)


# ------------------------------------------------------------------ hand-worked


CONF = [0.15, 0.25, 0.35, 0.85, 0.95, 0.95]
CORRECT = [0, 1, 0, 1, 1, 0]


def test_hand_worked_ece_mce_brier() -> None:
    # Ten equal-width bins: (0.1, 0.2] holds 0.15 (wrong): gap |0 − 0.15| = 0.15;
    # (0.2, 0.3] 0.25 right: 0.75; (0.3, 0.4] 0.35 wrong: 0.35; (0.8, 0.9] 0.85 right: 0.15;
    # (0.9, 1] 0.95 right and 0.95 wrong: accuracy 0.5, confidence 0.95, gap 0.45 (n = 2).
    # ECE = (0.15 + 0.75 + 0.35 + 0.15 + 2 × 0.45) / 6 = 2.3 / 6; MCE = 0.75.
    assert float(ece(CONF, CORRECT, ci=None)) == pytest.approx(2.3 / 6)
    assert float(mce(CONF, CORRECT, ci=None)) == pytest.approx(0.75)
    # Brier = (0.15² + 0.75² + 0.35² + 0.15² + 0.05² + 0.95²) / 6 = 1.635 / 6
    assert float(brier(CONF, CORRECT, ci=None)) == pytest.approx(1.635 / 6)
    table = reliability_table(CONF, CORRECT)
    assert table["bin"].tolist() == [1, 2, 3, 8, 9]
    assert table["count"].tolist() == [1, 1, 1, 1, 2]
    np.testing.assert_allclose(table["gap"], [0.15, -0.75, 0.35, -0.15, 0.45])
    np.testing.assert_allclose(table["lo"], [0.1, 0.2, 0.3, 0.8, 0.9])


def test_bins_are_right_closed_with_zero_in_the_first() -> None:
    table = reliability_table([0.0, 0.1, 0.2, 0.1000001], [1, 1, 0, 0], n_bins=10)
    # 0 and 0.1 fall in (0, 0.1]; 0.2 in (0.1, 0.2] with 0.1000001.
    assert table["bin"].tolist() == [0, 1]
    assert table["count"].tolist() == [2, 2]


def test_quantile_hand_worked() -> None:
    # Eight confidences, two equal-mass bins: median (0.7 + 0.8) / 2 = 0.75. Lower bin
    # 0.2, 0.3, 0.6, 0.7 (one wrong): confidence 0.45, accuracy 0.75, gap 0.3; upper bin
    # 0.8, 0.9, 0.95, 1.0 (one wrong): confidence 0.9125, accuracy 0.75, gap 0.1625.
    conf = [0.9, 0.8, 0.7, 0.6, 0.95, 0.3, 0.2, 1.0]
    correct = [1, 1, 1, 0, 0, 1, 1, 1]
    table = reliability_table(conf, correct, n_bins=2, strategy="quantile")
    np.testing.assert_allclose(table[["lo", "hi"]].to_numpy(), [[0.2, 0.75], [0.75, 1.0]])
    assert float(ece(conf, correct, n_bins=2, strategy="quantile", ci=None)) == \
        pytest.approx((0.3 + 0.1625) / 2)
    assert float(mce(conf, correct, n_bins=2, strategy="quantile", ci=None)) == \
        pytest.approx(0.3)


def test_wilson_interval_of_each_bin() -> None:
    from statsmodels.stats.proportion import proportion_confint

    table = reliability_table(CONF, CORRECT)
    low, high = proportion_confint(1, 2, method="wilson")
    last = table.iloc[-1]
    assert (last["accuracy_low"], last["accuracy_high"]) == pytest.approx((low, high))


# ------------------------------------------------------------------ properties


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
@given(data=pairs, n_bins=st.integers(1, 20))
def test_ece_and_mce_lie_in_unit_interval_and_mce_bounds_ece(strategy, data, n_bins) -> None:
    conf, correct = split(data)
    e = float(ece(conf, correct, n_bins=n_bins, strategy=strategy, ci=None))
    m = float(mce(conf, correct, n_bins=n_bins, strategy=strategy, ci=None))
    assert 0.0 <= e <= 1.0 and 0.0 <= m <= 1.0
    assert e <= m + 1e-12


@given(counts=st.lists(st.integers(0, 10), min_size=1, max_size=10))
def test_perfectly_calibrated_data_has_zero_ece(counts) -> None:
    # Ten answers at each confidence k/10 of which exactly k are right: every bin's accuracy
    # equals its confidence.
    conf = np.repeat([k / 10 for k in counts], 10)
    correct = np.concatenate([np.r_[np.ones(k), np.zeros(10 - k)] for k in counts])
    for strategy in ("uniform", "quantile"):
        assert float(ece(conf, correct, strategy=strategy, ci=None)) == pytest.approx(
            0.0, abs=1e-12)
        assert float(mce(conf, correct, strategy=strategy, ci=None)) == pytest.approx(
            0.0, abs=1e-12)


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
@given(data=pairs, seed=st.integers(0, 2**32 - 1))
def test_invariant_to_answer_order(strategy, data, seed) -> None:
    conf, correct = split(data)
    order = np.random.default_rng(seed).permutation(conf.size)
    for statistic in (ece, mce):
        assert float(statistic(conf[order], correct[order], strategy=strategy, ci=None)) == \
            pytest.approx(float(statistic(conf, correct, strategy=strategy, ci=None)),
                          abs=1e-12)
    pd.testing.assert_frame_equal(
        reliability_table(conf[order], correct[order], strategy=strategy),
        reliability_table(conf, correct, strategy=strategy), atol=1e-12, rtol=0)


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
@given(data=pairs, weights=st.lists(st.integers(0, 4), min_size=80, max_size=80),
       n_bins=st.integers(1, 12))
def test_weights_equal_repeated_answers(strategy, data, weights, n_bins) -> None:
    # The bootstrap reweights answers instead of copying them: both must agree.
    conf, correct = split(data)
    w = np.asarray(weights[:conf.size])
    if w.sum() == 0:
        return
    group = np.zeros(conf.size, dtype=np.int64)
    weighted = bin_calibration(group, conf, correct, n_groups=1, n_bins=n_bins,
                               strategy=strategy, weight=w)
    repeated = bin_calibration(np.repeat(group, w), np.repeat(conf, w), np.repeat(correct, w),
                               n_groups=1, n_bins=n_bins, strategy=strategy)
    np.testing.assert_array_equal(weighted.edges, repeated.edges)
    np.testing.assert_allclose(weighted.count, repeated.count)
    np.testing.assert_allclose(weighted.ece(), repeated.ece(), atol=1e-12)


def test_groups_are_binned_independently() -> None:
    rng = np.random.default_rng(3)
    conf = rng.random(300)
    correct = rng.random(300) < conf
    group = rng.integers(0, 3, 300)
    for strategy in ("uniform", "quantile"):
        binned = bin_calibration(group, conf, correct, n_groups=4, n_bins=7,
                                 strategy=strategy)
        for g in range(3):
            mine = group == g
            alone = float(ece(conf[mine], correct[mine], n_bins=7, strategy=strategy,
                              ci=None))
            assert binned.ece()[g] == pytest.approx(alone, abs=1e-12)
        assert np.isnan(binned.ece()[3]) and np.isnan(binned.mce()[3])  # empty group


# ------------------------------------------------------------------ bootstrap


def naive_bootstrap(statistic, conf, correct, items=None, n_boot=200, seed=0):
    """Resample answers (or items with all their answers) with explicit index lists."""
    rng = np.random.default_rng(seed)
    labels = np.arange(conf.size) if items is None else pd.factorize(np.asarray(items))[0]
    n_items = labels.max() + 1
    members = [np.flatnonzero(labels == i) for i in range(n_items)]
    values = []
    for _ in range(n_boot):
        drawn = rng.integers(0, n_items, n_items)
        idx = np.concatenate([members[i] for i in drawn])
        values.append(float(statistic(conf[idx], correct[idx], ci=None)))
    return np.quantile(values, 0.025), np.quantile(values, 0.975)


# ECE's and MCE's intervals are simultaneous ones, not a bootstrap (issue 38 items 3 and 5;
# tests/test_stats_round3.py)
@pytest.mark.parametrize("statistic", [ece_l2_debiased, brier])
def test_bootstrap_equals_a_naive_resampling(statistic) -> None:
    rng = np.random.default_rng(7)
    conf = np.round(rng.random(60), 2)
    correct = (rng.random(60) < conf).astype(int)
    est = statistic(conf, correct, ci="bootstrap", n_boot=200)
    low, high = naive_bootstrap(statistic, conf, correct)
    assert (est.low, est.high) == pytest.approx((low, high), abs=1e-12)
    assert est.n == 60 and est.low <= est.high
    items = np.repeat(np.arange(20), 3)  # three answers per contract, drawn together
    clustered = statistic(conf, correct, items=items, ci="bootstrap", n_boot=200)
    assert (clustered.low, clustered.high) == pytest.approx(
        naive_bootstrap(statistic, conf, correct, items=items), abs=1e-12)


def test_quantile_bootstrap_recomputes_edges() -> None:
    rng = np.random.default_rng(11)
    conf = rng.random(50)
    correct = (rng.random(50) < conf).astype(int)
    est = ece_l2_debiased(conf, correct, strategy="quantile", n_bins=5, ci="bootstrap",
                          n_boot=100)

    def quantile_ece(c, y, ci=None):
        return ece_l2_debiased(c, y, strategy="quantile", n_bins=5, ci=ci)

    assert (est.low, est.high) == pytest.approx(
        naive_bootstrap(quantile_ece, conf, correct, n_boot=100), abs=1e-12)


@pytest.mark.parametrize("statistic", [ece, mce, brier])
def test_no_bootstrap_unless_asked(statistic) -> None:
    # SPEC: a bootstrap only on request; the default returns the value without an interval
    est = statistic([0.9, 0.6, 0.3, 0.8], [1, 1, 0, 0])
    assert np.isfinite(est.value) and np.isnan(est.low) and np.isnan(est.high)


def test_missing_pairs_are_dropped_and_counted() -> None:
    est = ece([0.9, None, 0.6, np.nan], pd.array([True, True, None, False], dtype="boolean"),
              ci=None)
    # Only (0.9, right) remains: |1 − 0.9| = 0.1
    assert (float(est), est.n, est.n_dropped) == (pytest.approx(0.1), 1, 3)
    empty = brier([np.nan], [1])
    assert np.isnan(empty.value) and empty.n == 0


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"strategy": "equal"}, "strategy must be one of 'uniform', 'quantile'"),
    ({"n_bins": 0}, "n_bins must be a whole number >= 1"),
    ({"n_bins": 2.5}, "n_bins must be a whole number >= 1"),
])
def test_bad_options_name_the_allowed_values(kwargs, message) -> None:
    with pytest.raises(ValueError, match=message):
        reliability_table([0.5], [1], **kwargs)


def test_bad_values_are_named() -> None:
    with pytest.raises(ValueError, match=r"confidence must lie in \[0, 1\]; got 1.5"):
        ece([1.5], [1])
    with pytest.raises(ValueError, match="correct must be 0/1"):
        ece([0.5], [2])
    with pytest.raises(ValueError, match="differ in length"):
        brier([0.5, 0.2], [1])
    with pytest.raises(ValueError, match="ci must be None or 'bootstrap'"):
        brier([0.5], [1], ci="wilson")


def test_ece_l2_debiased_by_hand_and_its_interval_covers_calibration() -> None:
    # One bin: four answers at 0.9, three right: Ê² = 0.15² - 0.75·0.25/3 = -0.04 → -0.2.
    # Two bins: (0.2, 0.2 | 0, 1) has accuracy 0.5, gap 0.3: 0.3² - 0.25/1 = -0.16;
    # (0.8, 0.8 | 1, 1) gap 0.2: 0.2² - 0 = 0.04; Ê² = (-0.16 + 0.04)/2 = -0.06.
    assert float(calibration.ece_l2_debiased([0.9] * 4, [1, 1, 1, 0], n_bins=2)) == \
        pytest.approx(-0.2)
    assert float(calibration.ece_l2_debiased([0.2, 0.2, 0.8, 0.8], [0, 1, 1, 1],
                                             n_bins=2)) == pytest.approx(-np.sqrt(0.06))
    rng = np.random.default_rng(8)
    hits = 0
    for _ in range(40):  # calibrated detectors of 300 answers
        conf = rng.uniform(0.5, 1, 300)
        est = calibration.ece_l2_debiased(conf, rng.random(300) < conf, ci="bootstrap",
                                          n_boot=150, random_state=int(rng.integers(1000)))
        hits += est.low <= 0.0 <= est.high
    assert hits >= 35  # 90 %; the plug-in ECE's interval covers 0 never
