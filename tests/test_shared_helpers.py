"""The helpers every family shares (issue 27 item 4): calibration per group, Wilson per group,
model ranks with their intervals. Each checked against the one-group functions, statsmodels
or scikit-learn, and by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import brier_score_loss
from statsmodels.stats.proportion import proportion_confint

from kbench_core import calibration, compare
from kbench_core.ranking import RANK_COLUMNS, model_ranks
from kbench_core.stats import wilson_by


def _answers(seed: int = 0, n: int = 600) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    model = rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2])
    prompt = rng.choice(["x", "y"], n)
    confidence = np.round(rng.uniform(0, 1, n), 3)
    # b is overconfident: right less often than it says
    p_right = np.where(model == "b", confidence * 0.6, confidence)
    correct = (rng.uniform(size=n) < p_right).astype(float)
    frame = pd.DataFrame({"model": model, "prompt": prompt, "confidence": confidence,
                          "correct": correct})
    frame.loc[::37, "confidence"] = np.nan  # answers without a confidence are left out
    return frame


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_calibration_by_equals_each_group_alone(strategy: str) -> None:
    frame = _answers()
    table = calibration.calibration_by(frame, ["model", "prompt"], n_bins=8, strategy=strategy)
    assert len(table) == 6 and list(table.columns[:2]) == ["model", "prompt"]
    for row in table.itertuples(index=False):
        part = frame[(frame["model"] == row.model) & (frame["prompt"] == row.prompt)]
        part = part.dropna(subset=["confidence"])
        conf, corr = part["confidence"], part["correct"]
        assert row.n == len(part)
        assert row.ece == pytest.approx(float(calibration.ece(conf, corr, n_bins=8,
                                                              strategy=strategy)))
        assert row.mce == pytest.approx(float(calibration.mce(conf, corr, n_bins=8,
                                                              strategy=strategy)))
        assert row.ece_l2_debiased == pytest.approx(float(calibration.ece_l2_debiased(
            conf, corr, n_bins=8, strategy=strategy)))
        assert row.brier == pytest.approx(brier_score_loss(corr, conf))
        low, high = proportion_confint(int(corr.sum()), len(part), method="wilson")
        assert (row.accuracy_low, row.accuracy_high) == pytest.approx((low, high))
        assert row.accuracy == pytest.approx(corr.mean())


def test_calibration_by_worked_by_hand() -> None:
    # one group, two bins of [0, 0.5] and (0.5, 1]: (0.2, wrong) and (0.9, right), (0.9,
    # wrong): ECE = 1/3·|0 − 0.2| + 2/3·|0.5 − 0.9| = 0.0667 + 0.2667 = 1/3; MCE = 0.4;
    # Brier = (0.04 + 0.01 + 0.81)/3 = 0.2867
    frame = pd.DataFrame({"m": ["a"] * 3, "confidence": [0.2, 0.9, 0.9],
                          "correct": [False, True, False]})
    row = calibration.calibration_by(frame, "m", n_bins=2).iloc[0]
    assert row["ece"] == pytest.approx(1 / 3) and row["mce"] == pytest.approx(0.4)
    assert row["brier"] == pytest.approx(0.86 / 3) and row["n"] == 3


def test_reliability_by_equals_the_one_group_table_and_vuln_uses_it() -> None:
    frame = _answers(1)
    table = calibration.reliability_by(frame, "model", n_bins=5)
    for model, rows in table.groupby("model"):
        part = frame[frame["model"] == model]
        alone = calibration.reliability_table(part["confidence"], part["correct"], n_bins=5)
        pd.testing.assert_frame_equal(rows[alone.columns].reset_index(drop=True), alone)
        assert rows["ece"].iloc[0] == pytest.approx(float(calibration.ece(
            part["confidence"], part["correct"], n_bins=5)))
    with pytest.raises(ValueError, match="no column 'nope'"):
        calibration.reliability_by(frame, "nope")


def test_vuln_reliability_is_the_shared_per_group_table() -> None:
    from kbench_core import vuln
    from kbench_core.io import load_run

    judged = load_run("sample_data/judged.csv").frame
    judge = judged["judge"].iloc[0]
    mine = vuln.reliability(judged, n_bins=6, judge=judge)
    rows = judged[judged["judge"] == judge].dropna(subset=["confidence"])
    rows = rows[rows["target_found"].notna() & rows["said_vulnerable"].notna()]
    tidy = rows.assign(correct=(rows["said_vulnerable"] == rows["is_vulnerable"]).astype(float),
                       model=rows["model"].astype(str))
    shared = calibration.reliability_by(tidy, "model", n_bins=6)
    pd.testing.assert_frame_equal(mine.assign(model=mine["model"].astype(str)), shared,
                                  check_dtype=False)


def test_wilson_by_is_statsmodels_per_group() -> None:
    frame = pd.DataFrame({"model": [*"aaabbbbc", "d"],
                          "ok": [1, 0, 1, 1, 1, 1, 1, None, None]})
    table = wilson_by(frame, "model", "ok").set_index("model")
    # by hand: a 2 of 3, b 4 of 4 (1 at the boundary), c nothing, d nothing
    assert table["successes"].tolist() == [2, 4, 0, 0] and table["n"].tolist() == [3, 4, 0, 0]
    for model, (count, nobs) in {"a": (2, 3), "b": (4, 4)}.items():
        low, high = proportion_confint(count, nobs, method="wilson")
        assert (table.loc[model, "proportion_low"],
                table.loc[model, "proportion_high"]) == pytest.approx((low, high))
        assert table.loc[model, "proportion"] == pytest.approx(count / nobs)
    assert table.loc[["c", "d"], ["proportion", "proportion_low",
                                  "proportion_high"]].isna().all().all()
    with pytest.raises(ValueError, match="ok must hold 0/1"):
        wilson_by(frame.assign(ok=[2, 0, 1, 1, 1, 1, 1, 0, 0]), "model", "ok")


def test_the_helpers_name_an_interval_as_the_caller_names_the_quantity() -> None:
    """One convention (issue 41): ``x``, ``x_low``, ``x_high`` with ``x`` the caller's name,
    the same numbers as under the default name."""
    frame = pd.DataFrame({"model": list("aabbcc") * 4, "item": [f"i{k}" for k in range(24)],
                          "correct": [1, 0, 1, 1, 0, 0] * 4,
                          "confidence": [0.9, 0.2, 0.8, 0.7, 0.4, 0.3] * 4})
    wil = wilson_by(frame, "model", "correct", name="accuracy")
    assert list(wil.columns) == ["model", "successes", "n", "accuracy", "accuracy_low",
                                 "accuracy_high"]
    np.testing.assert_array_equal(wil.iloc[:, 3:].to_numpy(),
                                  wilson_by(frame, "model", "correct").iloc[:, 3:].to_numpy())
    cal = calibration.calibration_by(frame, "model", name="hit_rate")
    assert {"hit_rate", "hit_rate_low", "hit_rate_high"} <= set(cal.columns)
    np.testing.assert_array_equal(
        cal[["hit_rate", "hit_rate_low", "hit_rate_high"]].to_numpy(),
        calibration.calibration_by(frame, "model")[
            ["accuracy", "accuracy_low", "accuracy_high"]].to_numpy())
    items = frame.assign(item=[f"q{k % 4}" for k in range(24)])
    ranks = model_ranks(items, "correct", item="item", name="accuracy_rank")
    plain = model_ranks(items, "correct", item="item")
    np.testing.assert_array_equal(
        ranks[["accuracy_rank", "accuracy_rank_low", "accuracy_rank_high"]].to_numpy(),
        plain[["rank", "rank_low", "rank_high"]].to_numpy())


@pytest.mark.parametrize("p", [0.0, 0.03, 0.5, 0.97])
def test_wilson_by_covers_near_the_boundaries(p: float) -> None:
    """400 simulated groups of 12 answers each at once: the 95% interval covers p in at
    least 90% of them (Wilson's exact coverage at n = 12 dips to ~0.92 near the boundary)."""
    rng = np.random.default_rng(7)
    groups = np.repeat(np.arange(400), 12)
    frame = pd.DataFrame({"g": groups, "ok": (rng.uniform(size=groups.size) < p).astype(int)})
    table = wilson_by(frame, "g", "ok")
    covered = ((table["proportion_low"] <= p) & (p <= table["proportion_high"])).mean()
    assert covered >= 0.90, covered


def test_model_ranks_is_rank_intervals_for_every_model() -> None:
    rng = np.random.default_rng(3)
    items = [f"i{k}" for k in range(40)]
    frame = pd.DataFrame([(m, i, v) for m, shift in (("a", 0.0), ("b", 0.3), ("c", 0.6))
                          for i, v in zip(items, rng.normal(shift, 1, 40), strict=True)],
                         columns=["model", "item", "score"])
    frame = frame[~((frame["model"] == "c") & (frame["item"] == "i0"))]  # c lacks one item
    mine = model_ranks(frame, "score", item="item", models=["c", "a", "b", "z"],
                       lower_is_better=True, n_boot=300)
    assert tuple(mine.columns) == RANK_COLUMNS
    assert mine["model"].tolist() == ["c", "a", "b", "z"]
    theirs = compare.rank_intervals(frame, "score", item="item", lower_is_better=True,
                                    n_boot=300).set_index("model")
    for row in mine.iloc[:3].itertuples(index=False):
        assert row.rank == theirs.loc[row.model, "rank"]
        assert (row.rank_low, row.rank_high) == (theirs.loc[row.model, "rank_low"],
                                                 theirs.loc[row.model, "rank_high"])
        # by hand: the mean over the 39 items every model has
        shared = frame[(frame["model"] == row.model) & (frame["item"] != "i0")]["score"]
        assert row.ranked_value == pytest.approx(shared.mean()) and row.n_ranked == 39
    assert mine.set_index("model").loc["c", "n_dropped"] == 1  # the item it lacks
    assert mine.set_index("model").loc[["a", "b"], "n_dropped"].tolist() == [0, 0]
    assert mine.iloc[3]["n_ranked"] == 0 and np.isnan(mine.iloc[3]["rank"])  # z: no rows


def test_model_ranks_ranks_nothing_with_one_model_or_no_shared_item() -> None:
    one = pd.DataFrame({"model": ["a", "a"], "item": ["x", "y"], "score": [1.0, 2.0]})
    apart = pd.DataFrame({"model": ["a", "b"], "item": ["x", "y"], "score": [1.0, 2.0]})
    for frame in (one, apart):
        out = model_ranks(frame, "score", item="item", lower_is_better=False)
        assert out[["rank", "rank_low", "rank_high"]].isna().all().all()
        assert (out["n_ranked"] == 0).all()


def test_the_reliability_diagram_is_shared_and_draws_any_family() -> None:
    from kbench_core.figures import calibration as calibration_figures
    from kbench_core.figures import vuln as vuln_figures

    assert vuln_figures.reliability_diagram is calibration_figures.reliability_diagram
    table = calibration.reliability_by(_answers(2), "model", n_bins=5)
    fig = calibration_figures.reliability_diagram(table)
    curves = [t for t in fig.data if t.type == "scatter" and t.mode == "lines+markers"]
    assert sorted(t.name.split(" · ")[0] for t in curves) == ["a", "b", "c"]
    one = table[table["model"] == "a"].sort_values("mean_confidence")
    drawn = next(t for t in curves if t.name.startswith("a "))
    np.testing.assert_allclose(drawn.y, one["accuracy"])
