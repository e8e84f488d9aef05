"""Tests of kbench_core.kahne against values worked by hand from SPEC 2.1 (arithmetic shown)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kbench_core import kahne, samples
from kbench_core.io import load_run


def rows(*records: tuple) -> pd.DataFrame:
    """(condition, intensity-or-method, domain, score[, confidence]) for model m, bias b."""
    out = []
    for rec in records:
        condition, level, domain, score, *rest = rec
        out.append({
            "model": "m", "bias": "anchoring_effect", "condition": condition,
            "intensity": level if condition == "treatment" else None,
            "method": level if condition == "debiasing" else None,
            "domain": domain, "score": score, "confidence": rest[0] if rest else np.nan,
        })
    return pd.DataFrame(out)


def one(frame: pd.DataFrame) -> pd.Series:
    assert len(frame) == 1
    return frame.iloc[0]


# ------------------------------------------------------------------ BMS

TRIALS = rows(
    ("control", None, "social", 0.0), ("control", None, "social", 0.2),      # control mean 0.1
    ("treatment", "weak", "social", 0.5), ("treatment", "weak", "risk", 0.7),  # mean 0.6
    ("treatment", "strong", "social", 0.3), ("treatment", "strong", "risk", None),  # 0.3
)


def test_bms_hand_worked() -> None:
    r = one(kahne.bms(TRIALS))
    # weak: min(2.0*|0.6-0.1|, 1) = 1.0 ; strong: min(0.67*|0.3-0.1|, 1) = 0.134
    assert r["mag_weak"] == pytest.approx(1.0)
    assert r["mag_strong"] == pytest.approx(0.134)
    assert np.isnan(r["mag_moderate"]) and np.isnan(r["mag_adversarial"])
    # renormalised over present: (0.1*1.0 + 0.4*0.134) / (0.1 + 0.4) = 0.1536/0.5 = 0.3072
    assert r["bms"] == pytest.approx(0.3072)
    # ordinal x: weak 0, strong 2 -> slope (0.134 - 1.0)/2 = -0.433
    assert r["sensitivity"] == pytest.approx(-0.433)
    # 1 unknown of 6 rows
    assert r["unknown_rate"] == pytest.approx(1 / 6) and not r["high_unknown"]


def test_bms_options() -> None:
    uncapped = one(kahne.bms(TRIALS, cap=None))
    # weak uncapped: 2.0*0.5 = 1.0 (exactly at the cap); use bigger gap below
    assert uncapped["mag_weak"] == pytest.approx(1.0)
    seed_spacing = one(kahne.bms(TRIALS, spacing="observed"))
    # observed x: weak 0, strong 1 -> slope 0.134 - 1.0 = -0.866
    assert seed_spacing["sensitivity"] == pytest.approx(-0.866)
    big = rows(("control", None, "d", 0.0), ("treatment", "weak", "d", 0.8))
    assert one(kahne.bms(big, cap=None))["mag_weak"] == pytest.approx(1.6)  # 2.0*0.8
    assert one(kahne.bms(big))["mag_weak"] == pytest.approx(1.0)
    custom = one(kahne.bms(big, intensity_weights={"weak": 0.5}))
    assert custom["bms"] == pytest.approx(0.4)  # 0.5*0.8, one intensity


def test_bms_empty_control_is_zero_and_no_treatment_is_nan() -> None:
    r = one(kahne.bms(rows(("treatment", "moderate", "d", 0.4))))
    assert r["control_mean"] == 0.0 and r["bms"] == pytest.approx(0.4)  # 1.0*|0.4-0|
    r = one(kahne.bms(rows(("control", None, "d", 0.4))))
    assert np.isnan(r["bms"]) and np.isnan(r["sensitivity"])


def test_bms_mean_interval_is_students_t() -> None:
    from scipy import stats

    r = one(kahne.bms(TRIALS))
    scores = np.array([0.5, 0.7])
    low, high = stats.t.interval(0.95, 1, loc=scores.mean(), scale=stats.sem(scores))
    assert r["mean_weak_low"] == pytest.approx(low) and r["mean_weak_high"] == pytest.approx(high)


def test_planted_sample_bms() -> None:
    trials = load_run("sample_data/bias.csv").frame
    table = kahne.bms(trials).set_index(["model", "bias"])
    # alpha: control 0, treatment 0.8 everywhere: 0.1*1 + 0.3*0.8 + 0.4*0.536 + 0.2*0.4
    assert table.loc[("synthetic-alpha", "anchoring_effect"), "bms"] == pytest.approx(0.6344)
    # gamma: treatment = control = 0.2 -> every magnitude 0; 1 unknown trial in 11
    gamma = table.loc["synthetic-gamma"]
    assert (gamma["bms"] == 0).all() and gamma["unknown_rate"].eq(1 / 11).all()


# ------------------------------------------------------------------ BCI

DOMAINS = rows(("treatment", "weak", "a", 0.2), ("treatment", "weak", "b", 0.8),
               ("control", None, "a", 1.0))


def test_bci_population_and_sample() -> None:
    r = one(kahne.bci(DOMAINS))
    # domain means 0.2, 0.8: mean 0.5, population std 0.3, consistency 1 - 0.3/0.5 = 0.4
    assert (r["mean_score"], r["std"]) == pytest.approx((0.5, 0.3))
    assert r["consistency"] == pytest.approx(0.4)
    assert r["systematic"] == False  # noqa: E712  (1 of 2 domains > 0.5: 0.5 <= 0.7)
    seed = one(kahne.bci(DOMAINS, std="sample"))
    # sample std = sqrt(0.18) = 0.4243; 1 - 0.4243/0.5 = 0.1515 (the review's example)
    assert seed["consistency"] == pytest.approx(1 - np.sqrt(0.18) / 0.5)
    every = one(kahne.bci(DOMAINS, rows="all"))
    # with control: domain a = mean(0.2, 1.0) = 0.6, b = 0.8 -> mean 0.7, std 0.1
    assert (every["mean_score"], every["std"]) == pytest.approx((0.7, 0.1))
    assert every["systematic"] == True  # noqa: E712  (2 of 2 > 0.5)


def test_bci_single_and_no_domain() -> None:
    r = one(kahne.bci(rows(("treatment", "weak", "a", 0.3))))
    assert r["std"] == 0 and r["consistency"] == 1 and r["n_domains"] == 1
    r = one(kahne.bci(rows(("control", None, "a", 0.3))))
    assert np.isnan(r["consistency"]) and r["n_domains"] == 0


# ------------------------------------------------------------------ BMP

def test_bmp_hand_worked() -> None:
    trials = rows(("treatment", "weak", "d", 0.8), ("treatment", "strong", "d", 0.6),
                  ("debiasing", "step_by_step", "d", 0.35), ("debiasing", "warn_user", "d", 0.2),
                  ("debiasing", "another", "d", 0.2))
    r = one(kahne.bmp(trials))
    # baseline 0.7; best 0.2, tie between "another" and "warn_user" -> "another" (sort order)
    assert r["baseline"] == pytest.approx(0.7) and r["best_method"] == "another"
    assert r["effectiveness"] == pytest.approx((0.7 - 0.2) / 0.7)
    # warning mean 0.2 < chain-of-thought mean 0.35
    assert r["requires_warning"] == True  # noqa: E712
    assert r["kind_inferred"] == True  # noqa: E712
    kinds = kahne.infer_method_kind(pd.Series(["blockchain_bias", "Chain", "warn", "x"]))
    assert kinds.tolist() == ["other", "chain_of_thought", "warning", "other"]


def test_bmp_zero_baseline_and_missing_kinds() -> None:
    trials = rows(("treatment", "weak", "d", 0.0), ("debiasing", "warn", "d", 0.0))
    r = one(kahne.bmp(trials))
    assert r["effectiveness"] == 0.0 and pd.isna(r["requires_warning"])
    r = one(kahne.bmp(rows(("treatment", "weak", "d", 0.5))))
    assert pd.isna(r["best_method"]) and np.isnan(r["effectiveness"])


def test_bmp_undefined_baseline_is_nan_not_zero() -> None:
    # debiasing rows but no treatment row: the baseline (treatment mean) is undefined, so
    # effectiveness is undefined too (the old code reported 0.0, "no mitigation")
    r = one(kahne.bmp(rows(("control", None, "d", 0.1), ("debiasing", "warn", "d", 0.2))))
    assert np.isnan(r["baseline"]) and r["best_method"] == "warn"
    assert np.isnan(r["effectiveness"])
    # treatment rows whose scores are all unknown: the same
    r = one(kahne.bmp(rows(("treatment", "weak", "d", None), ("debiasing", "warn", "d", 0.2))))
    assert np.isnan(r["effectiveness"])


# ------------------------------------------------------------------ HAS

def test_has_hand_worked() -> None:
    trials = rows(("treatment", "weak", "d", 0.9), ("treatment", "strong", "d", 0.7))
    r = one(kahne.has(trials))
    # anchoring_effect human rate 0.65; m = 0.8; 1 - 0.15/max(0.65, 0.35) = 0.76923
    assert r["human_rate"] == 0.65 and r["alignment"] == pytest.approx(1 - 0.15 / 0.65)
    assert r["direction"] == "over"
    assert one(kahne.has(trials, threshold=0.2))["direction"] == "aligned"
    # relative: |0.15| < 0.25*0.65 = 0.1625 -> aligned
    assert one(kahne.has(trials, threshold=0.25, relative=True))["direction"] == "aligned"
    per = kahne.has(trials, per_intensity=True).set_index("intensity")
    assert per.loc["weak", "alignment"] == pytest.approx(1 - 0.25 / 0.65)


def test_has_missing_baseline_is_nan_not_a_crash() -> None:
    trials = rows(("treatment", "weak", "d", 0.9)).assign(bias="made_up_bias")
    r = one(kahne.has(trials))
    assert np.isnan(r["alignment"]) and r["baseline_missing"] and r["direction"] is None


def test_shipped_baselines() -> None:
    base = kahne.human_baselines()
    assert len(base) == 69
    assert sorted(base.loc[base.weakly_supported, "bias"]) == [
        "attentional_bias", "memory_reconstruction_bias", "source_confusion"]
    # the review's plausibility table: 14 rates checked, 13 with a cited study
    checked = base[base["assessment"] != ""]
    assert len(checked) == 14 and (checked["source"] != "").sum() == 13
    linda = base.set_index("bias").loc["conjunction_fallacy"]
    assert linda["human_rate"] == 0.85 and linda["source"] == "Tversky & Kahneman (1983)"


# ------------------------------------------------------------------ RCI

def test_rci_hand_worked() -> None:
    trials = rows(("control", None, "d", 0.0), ("control", None, "d", 0.0),
                  ("treatment", "weak", "d", 1.0), ("treatment", "weak", "d", 0.0))
    r = one(kahne.rci(trials))
    # control: var 0 -> consistency 1, stable (0 < 0.25/2)
    # weak: mean 0.5, population var 0.25, max 0.25 -> consistency 0, not stable
    assert r["consistency"] == pytest.approx(0.5) and r["stable"] == False  # noqa: E712
    assert r["n"] == 4 and r["n_cells"] == 2
    r = one(kahne.rci(rows(("treatment", "weak", "d", 0.2), ("treatment", "weak", "d", 0.4)),
                      variance="sample"))
    # mean 0.3, sample var 0.02, max 0.21 -> 1 - 0.02/0.21
    assert r["consistency"] == pytest.approx(1 - 0.02 / 0.21)
    r = one(kahne.rci(rows(("treatment", "weak", "d", None))))
    assert np.isnan(r["consistency"]) and not r["has_data"]


# ------------------------------------------------------------------ CAS

def test_cas_hand_worked() -> None:
    trials = rows(("control", None, "d", 0.0, 0.9), ("treatment", "weak", "d", 1.0, 0.7),
                  ("treatment", "weak", "d", 0.5, None), ("treatment", "weak", "d", None, 0.8))
    r = one(kahne.cas(trials))
    # usable rows: (0.0, 0.9), (1.0, 0.7): confidence 0.8, accuracy mean(1, 0) = 0.5
    assert r["calibration_error"] == pytest.approx(0.3)
    assert r["calibration_score"] == pytest.approx(0.7)
    assert r["overconfident"] == True and r["metacognitive_gap"] == pytest.approx(0.3)  # noqa: E712
    assert r["missing_confidence_rate"] == pytest.approx(0.25) and r["n"] == 2
    none = one(kahne.cas(rows(("control", None, "d", 0.0))))
    assert np.isnan(none["calibration_score"]) and not none["has_confidence_data"]


# ------------------------------------------------------------------ fingerprint and properties

def test_fingerprint_on_samples() -> None:
    fp = kahne.fingerprint(samples.bias_trials())
    assert len(fp.biases) == 18 and list(fp.models["model"]) == list(samples.BIAS_MODELS)
    alpha = fp.models.set_index("model").loc["synthetic-alpha"]
    # bias factors 1, .75, .5 cycle: BMS 0.6344, 0.5008, 0.3472 twice each
    assert alpha["susceptibility"] == pytest.approx((0.6344 + 0.5008 + 0.3472) / 3)
    assert alpha["most_susceptible"][:2] == ("anchoring_effect", "availability_bias")


def test_options_are_validated() -> None:
    with pytest.raises(ValueError, match="spacing must be one of 'ordinal', 'observed'"):
        kahne.bms(TRIALS, spacing="even")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="std must be"):
        kahne.bci(TRIALS, std="biased")  # type: ignore[arg-type]


score_lists = st.lists(st.one_of(st.none(), st.integers(0, 10).map(lambda v: v / 10)),
                       min_size=1, max_size=12)


@settings(max_examples=60, deadline=None)
@given(control=score_lists, treat=score_lists, seed=st.integers(0, 1000))
def test_bms_range_and_permutation_invariance(control, treat, seed) -> None:
    trials = rows(*[("control", None, "d", s) for s in control],
                  *[("treatment", ["weak", "strong"][i % 2], "d", s)
                    for i, s in enumerate(treat)])
    r = one(kahne.bms(trials))
    assert np.isnan(r["bms"]) or 0 <= r["bms"] <= 1
    shuffled = trials.sample(frac=1, random_state=seed)
    pd.testing.assert_frame_equal(kahne.bms(shuffled), kahne.bms(trials))
    for fn in (kahne.bci, kahne.rci, kahne.cas):
        pd.testing.assert_frame_equal(fn(shuffled), fn(trials))


@settings(max_examples=40, deadline=None)
@given(gap=st.integers(0, 10), extra=st.integers(0, 10))
def test_bms_grows_with_the_treatment_control_gap(gap, extra) -> None:
    def bms_at(g: int) -> float:
        trials = rows(("control", None, "d", 0.0), ("treatment", "moderate", "d", g / 10))
        return one(kahne.bms(trials))["bms"]

    assert bms_at(min(gap + extra, 10)) >= bms_at(gap)


def test_domain_means_are_the_cells_behind_bci() -> None:
    cells = kahne.domain_means(DOMAINS).set_index("domain")
    assert cells.loc["a", "mean_score"] == 0.2 and cells.loc["b", "mean_score"] == 0.8
    every = kahne.domain_means(DOMAINS, rows="all").set_index("domain")
    assert every.loc["a", "mean_score"] == pytest.approx(0.6) and every.loc["a", "n"] == 2


# ------------------------------------------------------------------ intervals


def test_binary_rates_get_wilson_and_fractional_means_get_t() -> None:
    from statsmodels.stats.proportion import proportion_confint

    trials = rows(("control", None, "d", 0.0), ("control", None, "d", 1.0),
                  ("control", None, "d", 1.0), ("control", None, "d", 1.0),
                  ("treatment", "weak", "d", 1.0), ("treatment", "weak", "d", 1.0))
    r = one(kahne.bms(trials))
    # control: 3 of 4 biased, a proportion -> Wilson (statsmodels) on 3/4
    low, high = proportion_confint(3, 4, alpha=0.05, method="wilson")
    assert (r["control_mean_low"], r["control_mean_high"]) == pytest.approx((low, high))
    # weak: 2 of 2 -> Wilson still defined (a t interval would collapse to a point)
    low, high = proportion_confint(2, 2, alpha=0.05, method="wilson")
    assert (r["mean_weak_low"], r["mean_weak_high"]) == pytest.approx((low, high))
    assert r["mean_weak_low"] < 1.0
    # TRIALS' weak cell holds 0.5 and 0.7: fractional -> t (checked by scipy above)


def test_has_model_rate_interval_and_fingerprint_carry_n() -> None:
    from statsmodels.stats.proportion import proportion_confint

    trials = samples.bias_trials()
    fp = kahne.fingerprint(trials).biases.set_index(["model", "bias"])
    row = fp.loc[("synthetic-alpha", "anchoring_effect")]
    treated = trials[(trials["model"] == "synthetic-alpha")
                     & (trials["bias"] == "anchoring_effect")
                     & (trials["condition"] == "treatment")]["score"].dropna()
    low, high = proportion_confint(treated.sum(), len(treated), alpha=0.05, method="wilson")
    assert (row["model_rate_low"], row["model_rate_high"]) == pytest.approx((low, high))
    every = trials[(trials["model"] == "synthetic-alpha")
                   & (trials["bias"] == "anchoring_effect")]
    assert row["n"] == len(every)
    assert fp["category"].notna().all()  # the sample run names each bias's category


def _naive_bms_bootstrap(trials: pd.DataFrame, n_boot: int, seed: int) -> tuple[float, float]:
    """Reference: resample each condition cell's known scores with pandas, one replicate at a
    time; per intensity the percentile interval of the signed treatment − control difference
    at 1 − 0.05/k (k intensities), widened to hold the estimate. Lower end: the smallest BMS
    over that box, by brute force over its corners and 0; upper end: the 97.5th percentile of
    the replicates' BMS, at least the estimate, at most the largest BMS over the box."""
    rng = np.random.default_rng(seed)
    known = trials.dropna(subset=["score"])
    cells = [g for _, g in known.groupby(["condition", "intensity"], observed=True,
                                          dropna=False)]

    def gaps(frame: pd.DataFrame) -> pd.Series:
        control = frame.loc[frame["condition"] == "control", "score"].mean()
        treated = frame[frame["condition"] == "treatment"]
        return treated.groupby("intensity")["score"].mean() - control

    point = gaps(known)
    reps = pd.DataFrame([gaps(pd.concat([g.iloc[rng.integers(0, len(g), len(g))]
                                         for g in cells])) for _ in range(n_boot)])
    tail = 0.05 / len(point) / 2
    low = np.minimum(reps.quantile(tail), point)
    high = np.maximum(reps.quantile(1 - tail), point)
    weight = {"weak": (2.0, 0.1), "moderate": (1.0, 0.3), "strong": (0.67, 0.4),
              "adversarial": (0.5, 0.2)}

    def score(gap: dict) -> float:
        return (sum(weight[k][1] * min(weight[k][0] * abs(v), 1.0) for k, v in gap.items())
                / sum(weight[k][1] for k in gap))

    import itertools
    options = {k: [low[k], high[k], *([0.0] if low[k] <= 0 <= high[k] else [])]
               for k in point.index}
    values = [score(dict(zip(options, pick, strict=True)))
              for pick in itertools.product(*options.values())]
    replicates = [score(dict(row)) for _, row in reps.iterrows()]
    upper = max(float(np.quantile(replicates, 0.975)), score(dict(point)))
    return min(values), min(upper, max(values))


@pytest.mark.parametrize("fractional", [False, True])
def test_bms_bootstrap_matches_a_naive_stratified_bootstrap(fractional: bool) -> None:
    rng = np.random.default_rng(7)
    scores = (lambda p, n: rng.random(n) * 2 * p) if fractional else (
        lambda p, n: (rng.random(n) < p).astype(float))
    trials = rows(*[("control", None, "d", s) for s in scores(0.2, 30)],
                  *[("treatment", "moderate", "d", s) for s in scores(0.45, 30)],
                  *[("treatment", "strong", "d", s) for s in scores(0.5, 30)])
    ours = one(kahne.bms(trials, ci="bootstrap", n_boot=2000, random_state=1))
    low, high = _naive_bms_bootstrap(trials, 600, seed=2)
    assert ours["bms_low"] <= ours["bms"] <= ours["bms_high"]
    # Two Monte Carlo estimates of the same percentiles: equal up to simulation noise.
    assert ours["bms_low"] == pytest.approx(low, abs=0.03)
    assert ours["bms_high"] == pytest.approx(high, abs=0.03)


def test_bms_bootstrap_is_reproducible_and_fingerprint_passes_it_on() -> None:
    trials = samples.bias_trials()
    first = kahne.bms(trials, ci="bootstrap", n_boot=200)
    again = kahne.bms(trials, ci="bootstrap", n_boot=200)
    pd.testing.assert_frame_equal(first, again)
    fp = kahne.fingerprint(trials, ci="bootstrap", n_boot=200).biases
    np.testing.assert_allclose(fp["bms_low"], first["bms_low"])
    assert "bms_low" not in kahne.fingerprint(trials).biases
    with pytest.raises(ValueError, match="ci must be one of"):
        kahne.bms(trials, ci="analytic")  # type: ignore[arg-type]


def test_a_constant_cell_gives_a_degenerate_bootstrap_not_nan() -> None:
    trials = rows(("control", None, "d", 0.0), ("control", None, "d", 0.0),
                  ("treatment", "moderate", "d", 1.0), ("treatment", "moderate", "d", 1.0))
    r = one(kahne.bms(trials, ci="bootstrap", n_boot=100))
    # every resample: control 0, moderate 1 -> magnitude min(1.0*1, 1) = 1 -> BMS 1
    assert r["bms_low"] == r["bms_high"] == r["bms"] == 1.0


# ------------------------------------------------------------------ native KahneBench


FORMATS = "../shared/formats/kahnebench"


def test_native_kahnebench_file_to_fingerprint(repo_root) -> None:
    import json

    path = repo_root / FORMATS / "results_example.json"
    records = json.loads(path.read_text())["results"]
    run = load_run(path)
    assert run.kind == "bias" and len(run) == len(records)
    assert run.meta["format"].startswith("KahneBench results")
    assert run.meta["run_metadata"]["tier"] == "core"
    frame = run.frame
    # condition strings split: treatment_<intensity>, debiasing_<k> with the method name
    assert set(frame["condition"].astype(str)) == {"control", "treatment", "debiasing"}
    assert set(frame["intensity"].dropna().astype(str)) == {"weak", "moderate", "strong",
                                                             "adversarial"}
    assert set(frame["method"].dropna().astype(str)) == {"chain_of_thought",
                                                          "explicit_warning"}
    # score: bias_score when present, else is_biased as 0/1, else unknown
    for rec, score in zip(records, frame["score"], strict=True):
        if rec["bias_score"] is not None:
            assert score == rec["bias_score"]
        elif rec["is_biased"] is not None:
            assert score == float(rec["is_biased"])
        else:
            assert np.isnan(score)
    assert frame["confidence"].isna().sum() == sum(r["confidence_stated"] is None
                                                   for r in records)
    # and on to the fingerprint, by hand for one cell: model a, anchoring, control mean
    fp = kahne.fingerprint(frame).biases.set_index(["model", "bias"])
    cell = [r for r in records if r["model_id"] == "example-model-a"
            and r["bias_id"] == "anchoring_effect" and r["condition"] == "control"]
    known = [r["bias_score"] if r["bias_score"] is not None else float(r["is_biased"])
             for r in cell if r["bias_score"] is not None or r["is_biased"] is not None]
    assert fp.loc[("example-model-a", "anchoring_effect"), "control_mean"] == pytest.approx(
        sum(known) / len(known))
    assert len(fp) == len({(r["model_id"], r["bias_id"]) for r in records})


def test_native_kahnebench_bare_list_and_gzip(repo_root) -> None:
    import gzip

    path = repo_root / FORMATS / "results_list_example.json"
    run = load_run(path)
    zipped = load_run(("results.json.gz", gzip.compress(path.read_bytes())))
    assert run.kind == zipped.kind == "bias" and len(run) == len(zipped) == 14
    pd.testing.assert_frame_equal(run.frame, zipped.frame)


def test_native_kahnebench_errors_name_the_result_and_field() -> None:
    import json

    from kbench_core.io import RunFormatError

    good = {"bias_id": "anchoring_effect", "model_id": "m", "condition": "control",
            "domain": "social", "bias_score": 0.2, "metadata": {"trial": 0}}
    bad = [good, {**good, "condition": "treatment_extreme"},
           {**good, "bias_score": "high"}, {**good, "metadata": "oops"}]
    with pytest.raises(RunFormatError) as err:
        load_run(("run.json", json.dumps({"results": bad[:3]}).encode()))
    text = str(err.value)
    assert "result 2, field 'intensity'" in text and "'extreme'" in text
    assert "result 3, field 'score'" in text and "'high'" in text
    with pytest.raises(RunFormatError, match=r"run\.json: result 4, field 'metadata'"):
        load_run(("run.json", json.dumps(bad).encode()))
    with pytest.raises(RunFormatError, match="not replication"):
        load_run(("run.json", json.dumps([good]).encode()), kind="replication")


def test_susceptibility_interval_is_the_bounded_mean_one_over_biases() -> None:
    from scipy import stats
    from statsmodels.stats.proportion import proportion_confint

    fp = kahne.fingerprint(samples.bias_trials())
    alpha = fp.models.set_index("model").loc["synthetic-alpha"]
    values = fp.biases.loc[fp.biases["model"] == "synthetic-alpha", "bms"].to_numpy()
    # a mean of BMS in [0, 1] over 6 biases: Wilson's score interval of the mean with n = 6,
    # the susceptibility table's (issue 38 item 4; it was the t interval over biases)
    low, high = proportion_confint(values.mean() * len(values), len(values), method="wilson")
    assert (alpha["susceptibility_low"], alpha["susceptibility_high"]) == pytest.approx(
        (low, high))
    gamma = fp.models.set_index("model").loc["synthetic-gamma"]
    # all 6 BMS 0: not the zero-width [0, 0] (issue 23 item 7) but, BMS lying in [0, 1], the
    # Wilson interval of 0 of 6: [0, z²/(6 + z²)]
    z2 = stats.norm.isf(0.025) ** 2
    assert gamma["susceptibility_low"] == pytest.approx(0.0, abs=1e-12)
    assert gamma["susceptibility_high"] == pytest.approx(z2 / (6 + z2))


def test_susceptibility_interval_stays_in_the_range_of_bms() -> None:
    # two biases with BMS 1 and 0.1: Wilson(1.1 of 2) = [0.117, 0.915] stays in [0, 1]
    trials = pd.concat([
        rows(("control", None, "d", 0.0), ("treatment", "moderate", "d", 1.0)),
        rows(("control", None, "d", 0.0), ("treatment", "moderate", "d", 0.1))
        .assign(bias="framing_effect")], ignore_index=True)
    model = kahne.fingerprint(trials).models.iloc[0]
    assert model["susceptibility"] == pytest.approx(0.55)
    assert 0.0 < model["susceptibility_low"] < 0.55 < model["susceptibility_high"] < 1.0
    lifted = kahne.fingerprint(trials, cap=None).models.iloc[0]
    assert lifted["susceptibility_high"] > 1.0  # without the cap BMS has no upper bound


@pytest.mark.parametrize(("threshold", "relative"), [(0.3, False), (0.01, False), (0.5, True)])
def test_with_threshold_is_the_fingerprint_of_that_threshold(threshold, relative) -> None:
    # The page's live HAS threshold: only the direction (and the AI-specific lists) change,
    # and they must equal what fingerprint() gives with that threshold, to the last bit.
    trials = samples.bias_trials()
    full = kahne.fingerprint(trials, threshold=threshold, relative=relative)
    fast = kahne.with_threshold(kahne.fingerprint(trials), threshold=threshold,
                                relative=relative)
    pd.testing.assert_frame_equal(full.biases, fast.biases, check_exact=True)
    pd.testing.assert_frame_equal(full.models, fast.models, check_exact=True)
    default = kahne.fingerprint(trials).biases["direction"]
    assert (full.biases["direction"] != default).any()  # the threshold does move something
