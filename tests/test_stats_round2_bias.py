"""Issue 23 (statistics round 2), the cognitive-bias items: the BMS interval at its boundary
(1), leaderboards that agree with their own numbers (8), the Compare panel's quantity (9) and
the fingerprint flags' uncertainty (13). Coverage claims are checked by small simulations."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kbench_core import kahne
from kbench_core.io import load_run
from kbench_core.schema import INTENSITIES
from kbench_core.stats import t_interval

WEIGHTS = {"weak": (2.0, 0.1), "moderate": (1.0, 0.3), "strong": (0.67, 0.4),
           "adversarial": (0.5, 0.2)}  # (intensity weight w, aggregation weight a)


def _true_bms(control: float, treated: dict[str, float]) -> float:
    """BMS of the true rates, worked from its definition (docs/metrics/bias.md)."""
    mags = {k: min(WEIGHTS[k][0] * abs(p - control), 1.0) for k, p in treated.items()}
    return sum(WEIGHTS[k][1] * m for k, m in mags.items()) / sum(WEIGHTS[k][1] for k in mags)


def _simulated(control: float, treated: dict[str, float], *, trials: int = 50,
               repeats: int = 60, seed: int = 0, fractional: bool = False) -> pd.DataFrame:
    """``repeats`` independent model × bias pairs (one per bias name) drawn from the same
    true rates: ``trials`` trials per condition cell, 0/1 scores (or uniform on [0, 2p])."""
    rng = np.random.default_rng(seed)
    parts = []
    for condition, level, p in [("control", None, control),
                                *(("treatment", k, v) for k, v in treated.items())]:
        size = repeats * trials
        score = rng.random(size) * 2 * p if fractional else (rng.random(size) < p) * 1.0
        parts.append(pd.DataFrame({
            "model": "m", "bias": np.repeat([f"b{i:03d}" for i in range(repeats)], trials),
            "condition": condition, "intensity": level, "domain": "d", "score": score}))
    return pd.concat(parts, ignore_index=True)


# ------------------------------------------------------------------ 1. BMS interval


def test_bms_interval_holds_its_estimate_on_the_sample_run() -> None:
    # Before: synthetic-gamma (planted BMS 0) showed bms 0.000 [0.015, 0.130].
    trials = load_run("sample_data/bias.csv").frame
    table = kahne.bms(trials, ci="bootstrap", n_boot=300)
    assert ((table["bms_low"] <= table["bms"]) & (table["bms"] <= table["bms_high"])).all()
    gamma = table[table["model"] == "synthetic-gamma"]
    assert (gamma["bms"] == 0).all() and (gamma["bms_low"] == 0).all()


ALL4 = dict.fromkeys(INTENSITIES, 0.2)


@pytest.mark.parametrize(("control", "treated", "fractional", "trials"), [
    (0.2, ALL4, False, 50),                                 # true BMS 0, four intensities
    (0.5, {"moderate": 0.5, "strong": 0.5}, False, 50),     # true BMS 0, two intensities
    (0.2, ALL4, True, 50),                                  # true BMS 0, fractional scores
    (0.2, ALL4, False, 10),                                 # true BMS 0, 10 trials per cell
    (0.2, dict.fromkeys(INTENSITIES, 0.25), False, 50),     # true BMS 0.043, near 0
    (0.3, {"weak": 0.35, "moderate": 0.3, "strong": 0.25, "adversarial": 0.3}, False, 50),
    (0.1, {"weak": 0.3, "moderate": 0.5, "strong": 0.7, "adversarial": 0.9}, False, 50),
    (0.0, dict.fromkeys(INTENSITIES, 0.9), False, 50),      # true BMS 0.701, weak capped
])
def test_bms_interval_covers_the_truth_near_zero_and_inside(control, treated, fractional,
                                                            trials) -> None:
    truth = _true_bms(control, treated)
    table = kahne.bms(_simulated(control, treated, fractional=fractional, trials=trials),
                      ci="bootstrap", n_boot=300)
    assert len(table) == 60
    # The interval always holds the estimate ...
    assert ((table["bms_low"] <= table["bms"] + 1e-12)
            & (table["bms"] <= table["bms_high"] + 1e-12)).all()
    # ... and covers the truth in at least 90 % of 60 independent runs (the percentile
    # bootstrap of BMS covered a true 0 in none: every resample of |Δ̂| lies above 0).
    covered = (table["bms_low"] <= truth + 1e-12) & (truth <= table["bms_high"] + 1e-12)
    assert covered.mean() >= 0.9, (truth, covered.mean())


# ------------------------------------------------------------------ 9. Compare quantity


def _equal_bms_run() -> pd.DataFrame:
    """Two models whose per-bias BMS are the same set of numbers, but whose control rates
    differ (A answers biased half the time even without a trigger, B rarely): 6 biases, 40
    control and 40 moderate-intensity trials each, planted exactly (no sampling noise)."""
    gaps = {"A": [0.200, 0.250, 0.150, 0.200, 0.225, 0.175],
            "B": [0.250, 0.200, 0.200, 0.175, 0.150, 0.225]}  # the same gaps, reordered
    base = {"A": 0.5, "B": 0.1}
    parts = []
    for model, model_gaps in gaps.items():
        for i, gap in enumerate(model_gaps):
            for condition, rate in (("control", base[model]),
                                    ("treatment", base[model] + gap)):
                ones = round(rate * 40)
                parts.append(pd.DataFrame({
                    "model": model, "bias": f"bias_{i}", "condition": condition,
                    "intensity": "moderate" if condition == "treatment" else None,
                    "domain": "d", "trial": range(40),
                    "score": [1.0] * ones + [0.0] * (40 - ones)}))
    return pd.concat(parts, ignore_index=True)


def test_equal_bms_models_are_not_told_apart_by_the_family_comparison() -> None:
    from scipy import stats

    from kbench_core import compare

    trials = _equal_bms_run()
    bms = kahne.bms(trials)
    assert sorted(bms.loc[bms["model"] == "A", "bms"].round(9)) == \
        sorted(bms.loc[bms["model"] == "B", "bms"].round(9))
    spec = compare.COMPARISONS["bias"]
    frame = compare.per_item_values(trials, "bias")
    result = compare.compare_pair(frame, spec.values[0][1], "A", "B", group=spec.group,
                                  cluster=spec.cluster, correction=None, noun=spec.noun)
    # Before: control, treatment and debiasing rows pooled, "A scores higher ... p = 2e-05"
    # (A's control rate alone is 0.4 above B's).
    assert "cannot tell" in result.verdict, result.verdict
    # Independently: per bias (treatment mean − control mean), A − B, one-sample t test.
    means = trials.groupby(["model", "bias", "condition"])["score"].mean().unstack()
    effect = (means["treatment"] - means["control"]).unstack("model")
    diff = (effect["A"] - effect["B"]).to_numpy()
    # worked: gaps A − B = −0.05, +0.05, −0.05, +0.025, +0.075, −0.05 → mean 0
    np.testing.assert_allclose(diff, [-0.05, 0.05, -0.05, 0.025, 0.075, -0.05], atol=1e-12)
    test = stats.ttest_1samp(diff, 0.0)
    ci = test.confidence_interval()
    est = result.estimate
    assert est.n == 6 and est.value == pytest.approx(0.0, abs=1e-12)
    assert (est.low, est.high) == pytest.approx((ci.low, ci.high))
    assert est.p_value == pytest.approx(test.pvalue)


def test_kbench_compare_on_a_bias_run_compares_the_effect(tmp_path, capsys) -> None:
    from kbench_core.cli import main

    path = tmp_path / "equal_bms.csv"
    _equal_bms_run().to_csv(path, index=False)
    assert main(["compare", str(path), "--models", "A", "B", "--format", "csv"]) == 0
    verdict = capsys.readouterr().out.splitlines()[0]
    assert "cannot tell A and B apart" in verdict and "6 shared items" in verdict, verdict


def test_per_item_keeps_the_trials_and_adds_one_effect_row_per_model_and_bias() -> None:
    from kbench_core import compare
    from kbench_core.families.bias import EFFECT_CONDITION

    trials = load_run("sample_data/bias.csv").frame
    frame = compare.per_item_values(trials, "bias")
    added = frame[frame["condition"] == EFFECT_CONDITION]
    assert len(frame) == len(trials) + len(added) and len(added) == 18
    assert added["score"].isna().all() and added["category"].notna().all()
    # alpha, anchoring: planted control 0.0, treatment 0.8 at every intensity
    row = added[(added["model"] == "synthetic-alpha") & (added["bias"] == "anchoring_effect")]
    assert float(row["treatment_minus_control"].iloc[0]) == pytest.approx(0.8)
    # the trial-level score comparison is untouched by the added rows
    pd.testing.assert_frame_equal(compare.compare_models(frame, "score", cluster="bias"),
                                  compare.compare_models(trials, "score", cluster="bias"))


# ------------------------------------------------------------------ 8. Leaderboards


def _planted(rates: dict[str, dict[str, dict[str | None, float]]], trials: int = 40,
             ) -> pd.DataFrame:
    """Trials planted exactly: ``rates[model][bias][intensity or None for control]`` is the
    share of 1s (NaN: every score unknown)."""
    parts = []
    for model, per_bias in rates.items():
        for bias, cells in per_bias.items():
            for level, rate in cells.items():
                if np.isnan(rate):
                    score = [np.nan] * trials
                else:
                    ones = round(rate * trials)
                    score = [1.0] * ones + [0.0] * (trials - ones)
                parts.append(pd.DataFrame({
                    "model": model, "bias": bias,
                    "condition": "control" if level is None else "treatment",
                    "intensity": level, "domain": "d", "trial": range(trials),
                    "score": score}))
    return pd.concat(parts, ignore_index=True)


def test_susceptibility_rank_and_value_rest_on_the_same_biases() -> None:
    from kbench_core.families.bias import susceptibility_table

    biases = [f"bias_{i}" for i in range(6)]
    # moderate only (w = 1): BMS = treatment rate − control rate (0 here)
    p = {b: {None: 0.0, "moderate": 0.3} for b in biases[:5]}
    p[biases[5]] = {None: np.nan, "moderate": np.nan}          # P: one bias unscored
    q = {b: {None: 0.0, "moderate": 0.35} for b in biases[:5]}
    q[biases[5]] = {None: 0.0, "moderate": 0.0}
    board = susceptibility_table(kahne.fingerprint(_planted({"P": p, "Q": q}))).set_index(
        "model")
    # Before: P shown 0.300 (its 5 biases), Q 0.292 (= 0.35·5/6, its 6), yet P ranked first
    # on the 5 shared biases: the ranks contradicted the values beside them.
    assert board.loc["P", "susceptibility"] == pytest.approx(0.30)
    assert board.loc["Q", "susceptibility"] == pytest.approx(0.35)  # the 5 shared biases
    assert board.loc["P", "rank"] == 1 and board.loc["Q", "rank"] == 2
    assert (board["n_biases"] == 5).all()
    assert board.loc["Q", "n_left_out"] == 1 and board.loc["P", "n_unscored"] == 1
    # the interval is over those same 5 biases: all 0.35, no spread, so not the zero-width
    # t interval but the Wilson-type bound of 5 values in [0, 1] (issue 23 item 7)
    low, high = board.loc["Q", ["susceptibility_low", "susceptibility_high"]]
    from statsmodels.stats.proportion import proportion_confint

    assert low < 0.35 < high
    assert (low, high) == pytest.approx(proportion_confint(0.35 * 5, 5, method="wilson"))


def test_a_renormalised_bms_is_marked_in_the_fingerprint_and_the_leaderboard() -> None:
    from kbench_core.families.bias import susceptibility_table

    levels = dict.fromkeys(INTENSITIES, 0.5)
    full = {f"bias_{i}": {None: 0.0, **levels} for i in range(3)}
    # W's weak answers are all unknown: its BMS drops the weight-2.0 intensity
    weak_unknown = {b: {**cells, "weak": np.nan} for b, cells in full.items()}
    trials = _planted({"full": full, "weak_unknown": weak_unknown})
    bms = kahne.bms(trials).set_index("model")
    # worked: full: weak min(2·0.5, 1) = 1, moderate 0.5, strong 0.335, adversarial 0.25 →
    # (0.1·1 + 0.3·0.5 + 0.4·0.335 + 0.2·0.25) / 1 = 0.434; without weak:
    # (0.15 + 0.134 + 0.05) / 0.9 = 0.3711 — "less biased" only because weak went missing
    assert bms.loc["full", "bms"].iloc[0] == pytest.approx(0.434)
    assert bms.loc["weak_unknown", "bms"].iloc[0] == pytest.approx(0.334 / 0.9)
    assert not bms.loc["full", "renormalised"].any()
    assert bms.loc["weak_unknown", "renormalised"].all()
    fp = kahne.fingerprint(trials)
    assert fp.biases.groupby("model")["renormalised"].sum().to_dict() == {
        "full": 0, "weak_unknown": 3}
    board = susceptibility_table(fp).set_index("model")
    assert board.loc["weak_unknown", "n_renormalised"] == 3
    assert board.loc["weak_unknown", "rank_text"].endswith("· renormalised")
    assert "renormalised" not in board.loc["full", "rank_text"]


def test_summary_leaderboard_rank_lies_inside_its_interval() -> None:
    from kbench_core.replication.summary import summary_leaderboard

    # A's published PAS is the higher, but on its studies A is clearly the weaker: before,
    # the rank came from the published PAS and the interval from the studies, "1 [2, 2]".
    rows = [{"model": m, "study": f"s{i}", "pas": v, "config_pas": cp}
            for m, cp, values in (("A", 0.9, [0.5, 0.5, 0.6]), ("B", 0.8, [0.7, 0.7, 0.8]))
            for i, v in enumerate(values)]
    board = summary_leaderboard(pd.DataFrame(rows), n_boot=200).set_index("model")
    assert ((board["rank_low"] <= board["rank"]) & (board["rank"] <= board["rank_high"])).all()
    assert board.loc["B", "rank"] == 1 and (board["ranked_by"] == "shared_study_pas").all()
    # worked: shared-study means A (0.5 + 0.5 + 0.6)/3 = 0.5333, B 0.7333
    assert board["shared_study_pas"].to_dict() == pytest.approx({"A": 1.6 / 3, "B": 2.2 / 3})
    # where the published PAS is its studies' mean, the rank stays by the published value
    same = pd.DataFrame([{**r, "config_pas": 1.6 / 3 if r["model"] == "A" else 2.2 / 3}
                         for r in rows])
    assert (summary_leaderboard(same, n_boot=50)["ranked_by"] == "config_pas").all()


def test_report_leaderboard_counts_the_ranked_biases() -> None:
    from kbench_core import bias_reports

    frame = pd.DataFrame({"model": ["a"] * 3 + ["b"] * 2, "bias": ["x", "y", "z", "x", "y"],
                          "bms": [0.1, 0.2, 0.3, 0.2, 0.3]})
    board = bias_reports.leaderboard(frame, n_boot=50).set_index("model")
    assert board["n_ranked"].to_dict() == {"a": 2, "b": 2}
    assert board.loc["a", "mean_bms"] == pytest.approx(0.15)  # (0.1 + 0.2)/2, x and y only


# ------------------------------------------------------------------ 13. Fingerprint flags


def _one_bias(model: str, treated: list[float], *, control: int = 10,
              domains: list[str] | None = None, confidence: float | None = None,
              ) -> pd.DataFrame:
    n = len(treated)
    return pd.DataFrame({
        "model": model, "bias": "anchoring_effect",
        "condition": ["control"] * control + ["treatment"] * n,
        "intensity": [None] * control + ["moderate"] * n,
        "domain": ["d"] * control + (domains or ["d"] * n),
        "score": [0.0] * control + treated,
        "confidence": np.nan if confidence is None else confidence})


def test_human_like_and_direction_flags_say_when_their_interval_crosses_the_threshold():
    from statsmodels.stats.proportion import proportion_confint

    # human rate 0.5: alignment = 1 − |m − 0.5| / 0.5, human-like iff |m − 0.5| < 0.1;
    # both models answer biased 55% of the time, on 20 and on 2,000 trials
    few = _one_bias("few", [1.0] * 11 + [0.0] * 9)
    many = _one_bias("many", [1.0] * 1100 + [0.0] * 900)
    fp = kahne.fingerprint(pd.concat([few, many]), baselines={"anchoring_effect": 0.5})
    table = fp.biases.set_index("model")
    assert table["human_like"].all() and (table["direction"] == "aligned").all()
    for model, k, n in (("few", 11, 20), ("many", 1100, 2000)):
        low, high = proportion_confint(k, n, method="wilson")
        # worked: alignment over [low, high] runs from 1 − max(|low − .5|, |high − .5|)/.5
        # up to 1 − (distance of the interval from 0.5)/.5 (1 when it holds 0.5)
        far = max(abs(low - 0.5), abs(high - 0.5))
        near = 0.0 if low <= 0.5 <= high else min(abs(low - 0.5), abs(high - 0.5))
        assert table.loc[model, "alignment_low"] == pytest.approx(1 - far / 0.5)
        assert table.loc[model, "alignment_high"] == pytest.approx(1 - near / 0.5)
        crosses = 1 - far / 0.5 <= 0.8  # some rate in the interval is not human-like
        assert bool(table.loc[model, "human_like_uncertain"]) == crosses
        assert bool(table.loc[model, "direction_uncertain"]) == (far >= 0.1)
    # 20 trials: [0.34, 0.74] reaches |m − 0.5| = 0.24; 2,000 trials: [0.528, 0.572]
    assert table.loc["few", "human_like_uncertain"]
    assert not table.loc["many", "human_like_uncertain"]
    # the per-model lists say so too
    from kbench_core.families.bias import susceptibility_table

    board = susceptibility_table(fp).set_index("model")
    assert board.loc["few", "human_like"] == "anchoring_effect (uncertain)"
    assert board.loc["many", "human_like"] == "anchoring_effect"
    # and a new HAS threshold re-derives the direction's mark
    wide = kahne.with_threshold(fp, threshold=0.3).biases.set_index("model")
    assert not wide["direction_uncertain"].any()  # both ends within 0.3 of 0.5


def test_systematic_flag_is_uncertain_when_a_domain_mean_could_fall_either_side() -> None:
    from statsmodels.stats.proportion import proportion_confint

    # 4 domains, each 6 of 8 biased (0.75 > 0.5): systematic (share 1 > 0.7) on the point
    # estimates; Wilson for 6/8 is [0.41, 0.93], so each domain could be below 0.5
    domains = [f"d{i}" for i in range(4) for _ in range(8)]
    scores = ([1.0] * 6 + [0.0] * 2) * 4
    few = kahne.bci(_one_bias("few", scores, domains=domains)).iloc[0]
    assert proportion_confint(6, 8, method="wilson")[0] < 0.5
    assert few["systematic"] and few["systematic_uncertain"]
    # 60 of 80 per domain: Wilson [0.64, 0.84], every domain surely above 0.5
    many_scores = ([1.0] * 60 + [0.0] * 20) * 4
    many_domains = [f"d{i}" for i in range(4) for _ in range(80)]
    assert proportion_confint(60, 80, method="wilson")[0] > 0.5
    many = kahne.bci(_one_bias("many", many_scores, domains=many_domains)).iloc[0]
    assert many["systematic"] and not many["systematic_uncertain"]


def test_overconfident_flag_is_uncertain_when_the_gap_interval_holds_0_1() -> None:
    from statsmodels.stats.proportion import proportion_confint

    # confidence 0.9 everywhere; accuracy = 1 − score. 70% accurate: gap 0.2 > 0.1
    def run(n_correct: int, n: int) -> pd.Series:
        frame = _one_bias("m", [0.0] * n_correct + [1.0] * (n - n_correct), control=0,
                          confidence=0.9)
        return kahne.cas(frame).iloc[0]

    few, many = run(7, 10), run(700, 1000)
    assert few["overconfident"] and many["overconfident"]
    for row, (k, n) in ((few, (7, 10)), (many, (700, 1000))):
        acc_low, acc_high = proportion_confint(k, n, method="wilson")
        # confidence has no spread: not [0.9, 0.9] but the Wilson-type bound of n values in
        # [0, 1] with mean 0.9 (issue 23 item 7)
        conf_low, conf_high = proportion_confint(0.9 * n, n, method="wilson")
        assert (row["gap_low"], row["gap_high"]) == pytest.approx((conf_low - acc_high,
                                                                   conf_high - acc_low))
    assert few["overconfident_uncertain"]       # gap in [-0.30, 0.59]
    assert not many["overconfident_uncertain"]  # gap in [0.153, 0.245]
    fp = kahne.fingerprint(_one_bias("m", [0.0] * 7 + [1.0] * 3, control=0, confidence=0.9))
    assert bool(fp.biases["overconfident_uncertain"].iloc[0])


@pytest.mark.parametrize("n, cap, a, b", [(4, 1.0, 0.5, 20.0), (6, 0.5, 0.5, 20.0),
                                          (15, 1.0, 0.5, 20.0), (40, 1.0, 2.0, 5.0)])
def test_susceptibility_interval_covers_with_few_skewed_biases(n, cap, a, b) -> None:
    """The mean BMS over biases (the susceptibility column): BMS of each bias drawn from a
    skewed Beta(a, b) scaled to [0, cap]; the true mean is cap·a/(a + b). The t interval alone
    covered 0.83 at 4 biases of Beta(0.5, 20); widened below 30 biases to the Wilson bound it
    must cover at least 0.93, and at 40 biases (t alone) stay near 0.95."""
    from kbench_core.stats import bounded_mean_interval

    rng = np.random.default_rng(7)
    reps = 2000
    values = cap * rng.beta(a, b, size=(reps, n))
    mean, sd = values.mean(axis=1), values.std(axis=1, ddof=1)
    low, high = bounded_mean_interval(mean, sd, np.full(reps, n), bounds=(0.0, cap))
    truth = cap * a / (a + b)
    coverage = np.mean((low <= truth) & (truth <= high))
    assert coverage >= 0.93, coverage
    assert np.all((low >= 0) & (high <= cap) & (low <= mean) & (mean <= high))
    t_low, t_high = t_interval(mean, sd, np.full(reps, n), bounds=(0.0, cap))
    if n < 30:  # the widening is what makes it cover: the t interval alone does not
        assert np.mean((t_low <= truth) & (truth <= t_high)) < coverage
    else:
        assert np.allclose(low, np.clip(t_low, 0, cap))


def test_susceptibility_interval_at_zero_keeps_its_width() -> None:
    """Every bias at BMS 0 (a model that shows none of the biases, 5 biases): not [0, 0] but
    the Wilson bound [0, cap·0.434] (3.84/(5 + 3.84) = 0.434 by hand)."""
    from kbench_core.stats import bounded_mean_interval

    low, high = bounded_mean_interval(np.array([0.0]), np.array([0.0]), np.array([5]),
                                      bounds=(0.0, 0.5))
    z2 = 1.959964 ** 2
    assert low[0] == 0.0 and high[0] == pytest.approx(0.5 * z2 / (5 + z2), rel=1e-5)


def test_the_susceptibility_column_uses_the_widened_interval() -> None:
    """On the bundled trial run (fewer than 30 biases): each model's susceptibility interval is
    the bounded-mean interval of its per-bias BMS, recomputed here from the fingerprint's
    per-bias table with numpy's mean and standard deviation."""
    from pathlib import Path

    from kbench_core.families.bias import susceptibility_table
    from kbench_core.stats import bounded_mean_interval

    run = load_run(Path(__file__).parents[1] / "sample_data" / "bias.csv")
    fp = kahne.fingerprint(run.frame)
    board = susceptibility_table(fp).set_index("model")
    bms = fp.biases[["model", "bias", "bms"]].dropna()
    wide = bms.pivot_table(index="bias", columns="model", values="bms", aggfunc="first").dropna()
    assert 2 <= len(wide) < 30
    for model in wide.columns:
        values = wide[model].to_numpy()
        low, high = bounded_mean_interval(np.array([values.mean()]),
                                          np.array([values.std(ddof=1)]),
                                          np.array([values.size]), bounds=(0.0, fp.cap))
        assert board.loc[model, "susceptibility_low"] == pytest.approx(low[0], abs=1e-12)
        assert board.loc[model, "susceptibility_high"] == pytest.approx(high[0], abs=1e-12)
