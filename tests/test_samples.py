"""Tests of kbench_core.samples: bundled files are current, planted truths hold exactly, every
frame satisfies the schema, seeds reproduce, and big runs come out at the requested size.

Reference values are recomputed here from the generated rows with plain pandas/numpy (group
means, a weighted CCC, Cohen's and Fleiss' kappa written out), never taken from the module, and
compared with the module's ``planted_*`` tables, which it derives from its plan alone.
"""

from __future__ import annotations

import importlib
import itertools
import math
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from kbench_core import families, samples
from kbench_core.schema import CONDITIONS, INTENSITIES, KindSpec

SAMPLE_DIR = Path(__file__).resolve().parent.parent / "sample_data"
# Every bundled sample file and its kind, from the registry (a family names its files).
KINDS = {name: family.kind for family in families.all_families()
         for name in family.sample_files}
SPECS = {family.kind: family.spec for family in families.all_families()}
REGENERATE = "regenerate with `python -m kbench_core.samples sample_data` and commit the result"
BIAS_CELL = ["model", "bias", "domain", "condition", "intensity", "method"]


def generated() -> dict[str, pd.DataFrame]:
    """Every family's sample frame by kind (``Family.sample_frame``, seed 0: the frames of the
    bundled files; the planted-truth tests below are per family)."""
    return {family.kind: family.sample_frame(0) for family in families.all_families()
            if family.sample_frame is not None}


# ----------------------------------------------------------------------- (1) bundled files


def test_every_family_with_a_sample_has_its_generator_here() -> None:
    assert sorted(generated()) == sorted(set(KINDS.values()))
    # the frames are the built-in generators' own
    pd.testing.assert_frame_equal(generated()["bias"], samples.bias_trials())
    pd.testing.assert_frame_equal(generated()["judged"], samples.judged_samples())


def test_the_sample_files_come_from_the_registry() -> None:
    assert list(samples.SAMPLE_FILES) == families.sample_files()
    assert sorted(KINDS) == sorted(samples.SAMPLE_FILES)
    assert all(f.sample is not None or f.sample_frame is not None
               for f in families.all_families() if f.sample_files)


# One unit in the 10th significant digit (samples.SIGNIFICANT_DIGITS): the most a computed
# value may differ between CPUs once rounded (a last-bit difference flips a rounded digit only at
# a rounding boundary). Every real change to a generator's plan moves values far more than this.
WRITTEN_RTOL = 10.0 ** (1 - samples.SIGNIFICANT_DIGITS)


def _cells(text: str) -> list[list[str]]:
    return [line.split(",") for line in text.splitlines()]


def _same_cell(mine: str, theirs: str) -> bool:
    """Equal text, or both numbers equal to :data:`WRITTEN_RTOL`."""
    if mine == theirs:
        return True
    try:
        a, b = float(mine), float(theirs)
    except ValueError:
        return False
    return math.isclose(a, b, rel_tol=WRITTEN_RTOL, abs_tol=0.0)


def test_bundled_sample_data_is_what_the_generator_writes(tmp_path: Path) -> None:
    """Cell by cell, numbers to the written rounding: the bundled files were written on another
    CPU, whose transcendentals may differ in their last bit (issue 30)."""
    written = samples.write_samples(tmp_path)
    assert [p.name for p in written] == list(samples.SAMPLE_FILES)
    assert sorted(samples.SAMPLE_FILES) == sorted(KINDS)
    for name in samples.SAMPLE_FILES:
        bundled = SAMPLE_DIR / name
        assert bundled.exists(), f"sample_data/{name} is missing: {REGENERATE}"
        mine = _cells((tmp_path / name).read_text(encoding="utf-8"))
        theirs = _cells(bundled.read_text(encoding="utf-8"))
        stale = f"sample_data/{name} is stale (it differs from what kbench_core.samples writes)"
        assert len(mine) == len(theirs), (
            f"{stale}: {len(theirs)} lines, not {len(mine)}: {REGENERATE}")
        for line, (row, bundled_row) in enumerate(zip(mine, theirs, strict=True), start=1):
            assert len(row) == len(bundled_row) and all(
                _same_cell(a, b) for a, b in zip(row, bundled_row, strict=True)), (
                f"{stale} at line {line}: {bundled_row} vs {row}: {REGENERATE}")
    assert sorted(p.name for p in SAMPLE_DIR.iterdir() if p.is_file()) == sorted(
        samples.SAMPLE_FILES)
    assert sorted(p.name for p in SAMPLE_DIR.iterdir() if p.is_dir()) == ["real"]


# NumPy's transcendental ufuncs that a generator could call; each dispatches to CPU-specific
# SIMD kernels (or libm variants), so another machine may give a result one ulp away.
TRANSCENDENTALS = ("arctanh", "tanh", "arctan", "exp", "expm1", "log", "log1p", "log10", "log2",
                   "sin", "cos", "power", "arcsin", "sinh", "cosh")


@pytest.mark.parametrize("direction", [np.inf, -np.inf])
def test_written_bytes_do_not_depend_on_the_last_bit_of_a_transcendental(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, direction: float) -> None:
    """Another CPU is simulated by moving every transcendental result one ulp up (or down):
    the written files must not change by a byte (issue 30: a replication effect printed
    ``0.06146129777305654`` on one CPU and ``0.061461297773056534`` on another)."""
    reference = [p.read_bytes() for p in samples.write_samples(tmp_path / "here")]
    for name in TRANSCENDENTALS:
        ufunc = getattr(np, name)

        def nudged(*args: Any, _ufunc: np.ufunc = ufunc, **kwargs: Any) -> Any:
            result = _ufunc(*args, **kwargs)
            # exact results (arctanh(0) = 0, exp(0) = 1) are exact on every CPU
            exact = (result == 0) | (result == 1) | ~np.isfinite(result)
            return np.where(exact, result, np.nextafter(result, direction))

        monkeypatch.setattr(np, name, nudged)
    elsewhere = [p.read_bytes() for p in samples.write_samples(tmp_path / "elsewhere")]
    for name, mine, theirs in zip(samples.SAMPLE_FILES, reference, elsewhere, strict=True):
        assert mine == theirs, f"{name} depends on the last bit of a transcendental"


def test_writing_twice_gives_the_same_bytes(tmp_path: Path) -> None:
    first = [p.read_bytes() for p in samples.write_samples(tmp_path / "a")]
    second = [p.read_bytes() for p in samples.write_samples(tmp_path / "b")]
    assert first == second


@pytest.mark.parametrize("name", samples.SAMPLE_FILES)
def test_bundled_files_are_small_and_use_kbench_conventions(name: str) -> None:
    raw = (SAMPLE_DIR / name).read_bytes()
    assert len(raw) < 1.5 * 1024**2
    assert b"\r" not in raw and raw.endswith(b"\n")
    text = raw.decode("utf-8")
    for word in ("True", "False", "nan", "NaN", "None"):
        assert not re.search(rf"(^|,){word}(,|$)", text, flags=re.M), word
    if name == "judged.csv":
        assert ",true," in text and ",false," in text
        assert re.search(r",\d+;\d+,\d+;\d+\n", text)  # claimed_lines,true_lines as 12;13


def test_command_line_writes_the_files(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "kbench_core.samples", str(tmp_path)],
                            capture_output=True, text=True, check=True)
    assert "bias.csv" in result.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(samples.SAMPLE_FILES)
    assert samples.main(["--help"]) == 0 and samples.main(["a", "b"]) == 2


# ----------------------------------------------------------------------- (2) planted truths


def test_every_bias_cell_mean_equals_the_planted_rate() -> None:
    trials = samples.bias_trials()
    planted = samples.planted_bias_rates()
    observed = trials.groupby(BIAS_CELL, observed=True, dropna=False).agg(
        mean=("score", "mean"), n=("score", "count"),
        n_unknown=("score", lambda s: int(s.isna().sum()))).reset_index()
    merged = planted.merge(observed, on=BIAS_CELL, how="outer", validate="one_to_one",
                           suffixes=("_planted", ""))
    assert len(merged) == len(planted) == 3 * 6 * 5 * 7
    np.testing.assert_array_equal(merged["mean"].to_numpy(), merged["rate"].to_numpy())
    np.testing.assert_array_equal(merged["n"], merged["n_planted"])
    np.testing.assert_array_equal(merged["n_unknown"], merged["n_unknown_planted"])


def test_planted_rates_are_the_documented_profiles() -> None:
    rates = samples.planted_bias_rates().set_index(BIAS_CELL)["rate"]
    alpha = rates.loc["synthetic-alpha", "anchoring_effect"]
    assert set(alpha.xs("treatment", level="condition")) == {0.8}
    assert set(alpha.xs("control", level="condition")) == {0.0}
    risk = alpha.loc["risk", "debiasing"].droplevel("intensity")
    # chain of thought leaves 0.5, a warning 0.75, of the treatment rate 0.8
    assert risk.to_dict() == {"chain_of_thought_prompt": 0.4, "bias_warning": 0.6}
    beta = rates.loc["synthetic-beta", "anchoring_effect"]
    individual = beta.loc["individual", "treatment"].droplevel("method")
    social = beta.loc["social", "treatment"].droplevel("method")
    assert individual.to_dict() == {"weak": 0.4, "moderate": 0.6, "strong": 0.8,
                                    "adversarial": 1.0}  # 0.3..0.9, +0.1 individual
    assert social.to_dict() == {"weak": 0.2, "moderate": 0.4, "strong": 0.6,
                                "adversarial": 0.8}      # -0.1 social
    # second bias: gap to control (0.1) scaled by 0.75: 0.1 + 0.75 * (0.9 - 0.1) = 0.7
    assert beta.index.size == 35
    assert rates.loc["synthetic-beta", "gain_loss_framing", "risk", "treatment",
                     "adversarial"].item() == 0.7
    gamma = rates.loc["synthetic-gamma"]
    assert set(gamma.xs("control", level="condition")) == {0.2}
    assert set(gamma.xs("treatment", level="condition")) == {0.2}


def recompute_bias_metrics(trials: pd.DataFrame) -> pd.DataFrame:
    """BMS, unknown rate, BCI, BMP effectiveness and CAS straight from rows (SPEC 2.1)."""
    key = ["model", "bias"]
    weights = {"weak": 2.0, "moderate": 1.0, "strong": 0.67, "adversarial": 0.5}
    aggregation = {"weak": 0.1, "moderate": 0.3, "strong": 0.4, "adversarial": 0.2}
    groups = trials.groupby(key, observed=True)
    out = groups["score"].apply(lambda s: s.isna().mean()).rename("unknown_rate").to_frame()
    control = trials[trials.condition == "control"].groupby(key, observed=True)["score"].mean()
    treatment = trials[trials.condition == "treatment"]
    means = treatment.groupby([*key, "intensity"], observed=True)["score"].mean().unstack()
    mags = pd.DataFrame({i: np.minimum(weights[i] * (means[i] - control).abs(), 1.0)
                         for i in INTENSITIES})
    out["bms"] = sum(aggregation[i] * mags[i] for i in INTENSITIES) / sum(aggregation.values())
    domain = treatment.groupby([*key, "domain"], observed=True)["score"].mean()
    std = domain.groupby(level=key, observed=True).std(ddof=0)
    out["bci_consistency"] = 1 - np.minimum(std / 0.5, 1.0)
    baseline = treatment.groupby(key, observed=True)["score"].mean()
    methods = trials[trials.condition == "debiasing"].groupby(
        [*key, "method"], observed=True)["score"].mean().unstack()
    out["effectiveness"] = (baseline - methods.min(axis=1)) / baseline
    rated = trials.dropna(subset=["score", "confidence"])
    accuracy = 1 - rated.groupby(key, observed=True)["score"].mean()
    confidence = rated.groupby(key, observed=True)["confidence"].mean()
    out["calibration_score"] = 1 - np.minimum((confidence - accuracy).abs(), 1.0)
    return out


def test_bias_metrics_match_their_closed_forms() -> None:
    planted = samples.planted_bias_metrics().set_index(["model", "bias"])
    # The docstring's arithmetic, written out:
    alpha = planted.loc[("synthetic-alpha", "anchoring_effect")]
    assert alpha["bms"] == pytest.approx(0.1 * min(2 * 0.8, 1) + 0.3 * 0.8
                                         + 0.4 * min(0.67 * 0.8, 1) + 0.2 * 0.5 * 0.8)
    assert alpha["bms"] == pytest.approx(0.6344)
    assert planted.loc[("synthetic-alpha", "gain_loss_framing"), "bms"] == pytest.approx(0.5008)
    assert planted.loc[("synthetic-alpha", "base_rate_neglect"), "bms"] == pytest.approx(0.3472)
    assert alpha["effectiveness"] == pytest.approx(0.5) and not alpha["requires_warning"]
    assert alpha["calibration_score"] == pytest.approx(1 - abs(0.9 - (1 - 4.2 / 7)))
    assert alpha["bci_consistency"] == 1.0 and alpha["bci_systematic"]
    assert alpha["has_alignment"] == pytest.approx(1 - 0.15 / 0.65)
    beta = planted.loc[("synthetic-beta", "anchoring_effect")]
    assert beta["bms"] == pytest.approx(0.1 * 0.4 + 0.3 * 0.4 + 0.4 * 0.67 * 0.6 + 0.2 * 0.4)
    assert beta["bci_consistency"] == pytest.approx(1 - math.sqrt(0.004) / 0.5)
    assert beta["rci_consistency"] == 0.0 and alpha["rci_consistency"] == pytest.approx(1 / 7)
    gamma = planted.loc["synthetic-gamma"]
    assert (gamma["bms"] == 0).all() and (gamma["unknown_rate"] == 1 / 11).all()
    assert gamma["calibration_score"].isna().all()
    # ... and the same numbers straight from the rows.
    observed = recompute_bias_metrics(samples.bias_trials())
    for column in observed.columns:
        np.testing.assert_allclose(planted.loc[observed.index, column].astype(float),
                                   observed[column], rtol=0, atol=1e-12, err_msg=column)


def test_kahne_module_reproduces_the_planted_metrics() -> None:
    kahne = pytest.importorskip("kbench_core.kahne")
    trials = samples.bias_trials()
    planted = samples.planted_bias_metrics().set_index(["model", "bias"])
    checks = {
        kahne.bms: {"bms": "bms", "unknown_rate": "unknown_rate",
                    "control_mean": "control_mean", **{f"mag_{i}": f"mag_{i}"
                                                       for i in INTENSITIES}},
        kahne.bci: {"consistency": "bci_consistency", "mean_score": "bci_mean_score"},
        kahne.bmp: {"effectiveness": "effectiveness", "baseline": "bmp_baseline"},
        kahne.has: {"alignment": "has_alignment"},
        kahne.rci: {"consistency": "rci_consistency"},
        kahne.cas: {"calibration_score": "calibration_score",
                    "metacognitive_gap": "metacognitive_gap"},
    }
    for metric, columns in checks.items():
        table = metric(trials).set_index(["model", "bias"]).loc[planted.index]
        for theirs, ours in columns.items():
            np.testing.assert_allclose(table[theirs].astype(float),
                                       planted[ours].astype(float), atol=1e-9,
                                       err_msg=f"{metric.__name__}.{theirs}")
    bmp = kahne.bmp(trials).set_index(["model", "bias"]).loc[planted.index]
    assert (bmp["best_method"] == planted["best_method"]).all()
    assert (bmp["requires_warning"].astype(bool) == planted["requires_warning"]).all()


def weighted_ccc(x: np.ndarray, y: np.ndarray, w: np.ndarray, *, normalize: bool) -> float:
    """Lin's CCC with weights; unnormalised = weighted sums, unscaled mean difference."""
    mx, my = np.sum(w * x) / np.sum(w), np.sum(w * y) / np.sum(w)
    scale = np.sum(w) if normalize else 1.0
    cov = np.sum(w * (x - mx) * (y - my)) / scale
    vx, vy = np.sum(w * (x - mx) ** 2) / scale, np.sum(w * (y - my) ** 2) / scale
    return 2 * cov / (vx + vy + (mx - my) ** 2)


def test_replication_planted_effects() -> None:
    tests = samples.replication_tests()
    by = {m: f.reset_index(drop=True) for m, f in tests.groupby("model", observed=True)}
    mirror, shifted, flat = (by[m] for m in samples.REPLICATION_MODELS)
    np.testing.assert_array_equal(mirror["agent_d"], mirror["human_d"])
    np.testing.assert_array_equal(mirror["agent_pi"], mirror["human_pi"])
    np.testing.assert_allclose(shifted["agent_d"] - shifted["human_d"], 0.3, atol=1e-12)
    assert (shifted["agent_pi"] == 0.5).all() and (flat["agent_d"] == 0).all()
    np.testing.assert_allclose(flat["agent_pi"], 1 - flat["human_pi"], atol=1e-12)
    # 6 studies with 2,3,2,3,2,3 findings; findings alternate 2,3 tests: 36 tests per model
    assert tests.groupby("model", observed=True).size().tolist() == [36, 36, 36]
    assert tests.groupby("study", observed=True)["finding"].nunique().tolist() == [2, 3] * 3
    assert set(tests["test_type"]) == set(SPECS["replication"].column("test_type").allowed)


def effect_to_d(effect: pd.Series, test_type: pd.Series) -> np.ndarray:
    """SPEC 2.2's conversion, written out."""
    e, kind = effect.to_numpy(dtype=float), test_type.astype(str).to_numpy()
    r = np.tanh(e)
    with np.errstate(invalid="ignore"):  # every branch is evaluated on every row
        return np.select(
            [kind == "correlation", kind == "chi2", kind == "mann_whitney", kind == "binomial"],
            [2 * r / np.sqrt(1 - r**2), e * math.sqrt(3) / math.pi, 2 * e / np.sqrt(1 - e**2),
             2 * (e - 0.5) / math.sqrt(0.25)], e)


def test_native_effects_convert_to_the_planted_d() -> None:
    tests = samples.replication_tests()
    # the native effects are written to 10 significant digits (a relative error <= 5e-11),
    # which the conversion's slope (at most ~3 for |d| <= 1.5) keeps well below 1e-9 in d
    for side in ("human", "agent"):
        np.testing.assert_allclose(effect_to_d(tests[f"{side}_effect"], tests["test_type"]),
                                   tests[f"{side}_d"], rtol=0, atol=1e-9)


def structure_weights(tests: pd.DataFrame) -> np.ndarray:
    findings = tests.groupby(["model", "study"], observed=True)["finding"].transform("nunique")
    per_finding = tests.groupby(["model", "finding"], observed=True)["test"].transform("size")
    return 1.0 / (findings * per_finding).to_numpy()


@pytest.mark.parametrize("seed", [0, 7])
def test_replication_ecs_matches_its_closed_form(seed: int) -> None:
    tests = samples.replication_tests(seed=seed)
    tests["w_structure"] = structure_weights(tests)
    tests["w_equal"] = 1.0
    planted = samples.planted_replication_ecs(seed=seed)
    assert set(planted["level"]) == {"overall", "domain", "study"}
    for row in planted.itertuples():
        rows = tests[tests["model"] == row.model]
        if row.level != "overall":
            rows = rows[rows[row.level].astype(str) == row.group]
        assert len(rows) == row.n
        value = weighted_ccc(rows["human_d"].to_numpy(), rows["agent_d"].to_numpy(),
                             rows[f"w_{row.weighting}"].to_numpy(),
                             normalize=row.normalize_weights)
        assert value == pytest.approx(row.ecs, rel=1e-12, abs=1e-12), row
    overall = planted[(planted.level == "overall") & (planted.weighting == "structure")
                      & planted.normalize_weights].set_index("model")["ecs"]
    assert overall["synthetic-agent-mirror"] == 1.0 and overall["synthetic-agent-flat"] == 0.0
    assert 0 < overall["synthetic-agent-shifted"] < 1


def test_replication_pas_per_test() -> None:
    tests = samples.replication_tests()
    planted = samples.planted_replication_pas()
    key = ["model", "study", "finding", "test"]
    merged = tests.merge(planted, on=key, validate="one_to_one")
    h, a = merged["human_pi"], merged["agent_pi"]
    np.testing.assert_allclose(merged["pas"], h * a + (1 - h) * (1 - a), atol=1e-12)
    by_model = merged.groupby("model", observed=True)["pas"]
    assert (by_model.get_group("synthetic-agent-shifted") == 0.5).all()
    assert (by_model.get_group("synthetic-agent-mirror") >= 0.5).all()
    assert (by_model.get_group("synthetic-agent-flat") <= 0.5).all()


def test_replication_summary_means_equal_the_planted_ones() -> None:
    summary = samples.replication_summary()
    observed = summary.groupby("model", observed=True, sort=False).agg(
        n_pas=("pas", "count"), mean_pas=("pas", "mean"), n_ecs=("ecs", "count"),
        mean_ecs=("ecs", "mean")).reset_index()
    planted = samples.planted_replication_summary()
    pd.testing.assert_frame_equal(observed, planted[observed.columns], check_dtype=False,
                                  check_categorical=False, atol=1e-12)
    assert planted["mean_pas"].tolist() == pytest.approx([0.45, 0.55, 0.64])
    assert planted["mean_ecs"].tolist() == pytest.approx([0.02, 0.125, 0.225])
    ratio = summary["cost"] / summary["tokens"] * 1e6
    per_config = summary.assign(ratio=ratio).groupby("model", observed=True, sort=False)["ratio"]
    np.testing.assert_allclose(per_config.min(), planted["dollars_per_million_tokens"])
    np.testing.assert_allclose(per_config.max(), planted["dollars_per_million_tokens"])


def observed_tiers(judged: pd.DataFrame) -> pd.DataFrame:
    """Counts and rates per detector × judge straight from the rows (SPEC 2.3 rules)."""
    frame = judged.copy()
    valid_cols = ["n_target_match", "n_partial_match", "n_bonus_valid"]
    all_cols = [c for c in frame.columns if c.startswith("n_")]
    frame["valid"] = frame[valid_cols].sum(axis=1)
    frame["invalid"] = frame[all_cols].sum(axis=1) - frame["valid"]
    vul, said, found = frame["is_vulnerable"], frame["said_vulnerable"], frame["target_found"]
    frame["tp"], frame["tn"] = vul & said, ~vul & ~said
    frame["fp"], frame["fn"] = ~vul & said, vul & ~said
    frame["lucky"] = vul & said & ~found
    frame["bonus"] = frame["valid"] > found.astype(int)
    frame["correct"] = (said == vul).astype(float)
    claimed = frame["claimed_lines"].astype(object)
    true = frame["true_lines"].astype(object)
    frame["location"] = [
        len(set(c.split(";")) & set(t.split(";"))) / len(t.split(";"))
        if isinstance(c, str) and isinstance(t, str) else np.nan
        for c, t in zip(claimed, true, strict=True)]
    g = frame.groupby(["model", "judge"], observed=True, sort=False)
    out = g.agg(n=("sample", "size"), tp=("tp", "sum"), tn=("tn", "sum"), fp=("fp", "sum"),
                fn=("fn", "sum"), targets_found=("target_found", "sum"),
                lucky_guesses=("lucky", "sum"), valid_findings=("valid", "sum"),
                invalid_findings=("invalid", "sum"),
                hallucinated_findings=("n_hallucinated", "sum"),
                bonus_discovery_rate=("bonus", "mean"), accuracy=("correct", "mean"),
                mean_rcir=("rcir", "mean"), mean_ava=("ava", "mean"), mean_fsv=("fsv", "mean"),
                confidence=("confidence", "mean"), location_accuracy=("location", "mean"))
    out["tdr"] = out["targets_found"] / g["is_vulnerable"].sum()
    findings = out["valid_findings"] + out["invalid_findings"]
    out["finding_precision"] = out["valid_findings"] / findings
    out["hallucination_rate"] = out["hallucinated_findings"] / findings
    out["ece"] = (out["confidence"] - out["accuracy"]).abs()
    out["brier"] = g.apply(lambda f: ((f["confidence"] - f["correct"]) ** 2).mean(),
                           include_groups=False)
    return out.reset_index()


@pytest.mark.parametrize(("n_samples", "seed"), [(40, 0), (40, 5), (7, 1), (101, 2)])
def test_judged_tiers_equal_the_planted_counts(n_samples: int, seed: int) -> None:
    judged = samples.judged_samples(n_samples=n_samples, seed=seed)
    observed = observed_tiers(judged)
    planted = samples.planted_judged(n_samples=n_samples)
    merged = planted.merge(observed, on=["model", "judge"], validate="one_to_one",
                           suffixes=("", "_observed"))
    assert len(merged) == 9
    for column in observed.columns.drop(["model", "judge"]):
        np.testing.assert_allclose(merged[f"{column}_observed"].astype(float),
                                   merged[column].astype(float), rtol=0, atol=1e-12,
                                   equal_nan=True, err_msg=column)


def test_judged_planted_values_for_the_bundled_sample() -> None:
    planted = samples.planted_judged().set_index(["model", "judge"])
    sharp = planted.loc["synthetic-detector-sharp"]
    assert sharp.loc["judge-one", ["accuracy", "tdr", "finding_precision"]].tolist() == [1, 1, 1]
    assert sharp.loc["judge-three", "tdr"] == pytest.approx(22 / 28)
    eager = planted.loc[("synthetic-detector-eager", "judge-one")]
    assert (eager["accuracy"], eager["tdr"], eager["lucky_guess_rate"]) == (0.7, 0.5, 0.5)
    assert eager["ece"] == pytest.approx(0.1) and eager["location_accuracy"] == 0.5
    timid = planted.loc[("synthetic-detector-timid", "judge-one")]
    assert (timid["tp"], timid["fp"], timid["tn"], timid["fn"]) == (30, 12, 24, 54)
    assert timid["accuracy"] == pytest.approx(0.45) and timid["tdr"] == pytest.approx(10 / 28)


def cohen_kappa(a: pd.Series, b: pd.Series) -> float:
    p_o = (a == b).mean()
    p_e = a.mean() * b.mean() + (1 - a.mean()) * (1 - b.mean())
    return (p_o - p_e) / (1 - p_e)


def fleiss_kappa(table: pd.DataFrame) -> float:
    """Fleiss' kappa of a yes/no label, items as rows and judges as columns."""
    raters = table.shape[1]
    yes = table.sum(axis=1).to_numpy(dtype=float)
    counts = np.column_stack([yes, raters - yes])
    p_i = ((counts * (counts - 1)).sum(axis=1)) / (raters * (raters - 1))
    p_j = counts.sum(axis=0) / counts.sum()
    p_e = float((p_j**2).sum())
    return (p_i.mean() - p_e) / (1 - p_e)


@pytest.mark.parametrize(("n_samples", "seed"), [(40, 0), (23, 4)])
def test_judge_agreement_equals_the_planted_values(n_samples: int, seed: int) -> None:
    judged = samples.judged_samples(n_samples=n_samples, seed=seed)
    wide = judged.pivot_table(index=["sample", "model", "prompt_type"], columns="judge",
                              values="target_found", observed=True, aggfunc="first")
    wide = wide.astype(bool)
    planted = samples.planted_agreement(n_samples=n_samples)
    for row in planted.itertuples():
        if row.judge_a == "all":
            agree = wide.nunique(axis=1).eq(1)
            assert row.kappa == pytest.approx(fleiss_kappa(wide.astype(int)), abs=1e-12)
        else:
            agree = wide[row.judge_a] == wide[row.judge_b]
            assert row.kappa == pytest.approx(
                cohen_kappa(wide[row.judge_a].astype(int), wide[row.judge_b].astype(int)),
                abs=1e-12)
        assert (row.n, row.n_disagree) == (len(wide), int((~agree).sum()))
        assert row.percent_agreement == pytest.approx(agree.mean())
    # judge-one and judge-two give identical rows; every label but the flipped ones agrees
    one = judged[judged.judge == "judge-one"].drop(columns="judge").reset_index(drop=True)
    two = judged[judged.judge == "judge-two"].drop(columns="judge").reset_index(drop=True)
    pd.testing.assert_frame_equal(one, two)
    three = judged[judged.judge == "judge-three"].drop(columns="judge").reset_index(drop=True)
    assert (one["said_vulnerable"] == three["said_vulnerable"]).all()
    assert (one["target_found"] != three["target_found"]).any()


# ------------------------------------------------------------------------------- (3) schema


def check_against_schema(frame: pd.DataFrame, spec: KindSpec) -> None:
    assert set(spec.required) <= set(frame.columns), spec.kind
    columns = {c.name: c for c in spec.columns_of(list(frame.columns))}
    for name in frame.columns:
        col = columns[name]  # no column outside the schema (or its prefixed families)
        values = frame[name].dropna()
        if col.required is True:
            assert len(values) == len(frame), f"{spec.kind}.{name} has empty cells"
        if col.allowed is not None:
            assert set(values.astype(str)) <= set(col.allowed), f"{spec.kind}.{name}"
        if col.type == "bool":
            assert frame[name].dtype == bool or isinstance(frame[name].dtype,
                                                           pd.BooleanDtype), f"{spec.kind}.{name}"
        if col.type == "int":
            assert pd.api.types.is_integer_dtype(frame[name]), f"{spec.kind}.{name}"
        if col.type in ("float", "int"):
            numbers = values.to_numpy(dtype=float)
            assert np.isfinite(numbers).all(), f"{spec.kind}.{name}"
            if col.low is not None:
                assert ((numbers > col.low) if col.low_open else (numbers >= col.low)).all()
            if col.high is not None:
                assert (numbers <= col.high).all(), f"{spec.kind}.{name}"
        if col.type == "lines":
            assert values.astype(str).str.fullmatch(r"\d+(;\d+)*").all(), f"{spec.kind}.{name}"
    key = [k for k in spec.key if k in frame.columns]
    assert not frame.duplicated(key).any(), f"{spec.kind} key repeats"


@pytest.mark.parametrize("kind", list(KINDS.values()))
def test_generated_frames_satisfy_the_schema(kind: str) -> None:
    check_against_schema(generated()[kind], SPECS[kind])


def test_bias_sample_covers_every_condition_intensity_and_domain() -> None:
    trials = samples.bias_trials()
    assert set(trials["condition"]) == set(CONDITIONS)
    assert set(trials["intensity"].dropna()) == set(INTENSITIES)
    assert set(trials["domain"]) == set(samples.DOMAINS)
    assert set(trials["method_kind"].dropna()) == {"chain_of_thought", "warning"}
    assert trials["category"].nunique() == 6 and trials["bias"].nunique() == 6
    treatment = trials["condition"] == "treatment"
    debiasing = trials["condition"] == "debiasing"
    assert trials.loc[treatment, "intensity"].notna().all()
    assert trials.loc[~treatment, "intensity"].isna().all()
    assert trials.loc[debiasing, "method"].notna().all()
    assert trials.loc[~debiasing, "method"].isna().all()
    assert all(m.startswith("synthetic-") for m in trials["model"].unique())
    assert set(trials["bias"]) <= set(samples.BIAS_CATEGORIES)


def test_every_bias_in_the_baselines_has_a_category() -> None:
    baselines = samples._baselines()
    assert len(baselines) == 69 and set(baselines) == set(samples.BIAS_CATEGORIES)


def test_replication_structure_and_names() -> None:
    tests = samples.replication_tests()
    # a finding belongs to one study, a test to one finding
    assert (tests.groupby("finding", observed=True)["study"].nunique() == 1).all()
    for first, second in itertools.pairwise(samples.REPLICATION_MODELS):
        left = tests[tests.model == first][["study", "finding", "test"]].reset_index(drop=True)
        right = tests[tests.model == second][["study", "finding", "test"]].reset_index(drop=True)
        pd.testing.assert_frame_equal(left, right)
    assert set(tests["domain"]) == set(samples.REPLICATION_DOMAINS)
    names = [*samples.REPLICATION_MODELS, *samples.SUMMARY_CONFIGS, *samples.BIAS_MODELS,
             *samples.DETECTORS]
    assert all(name.startswith("synthetic-") for name in names)
    assert all(name.startswith("judge-") for name in samples.JUDGES)


def test_judged_structure() -> None:
    judged = samples.judged_samples()
    assert len(judged) == 40 * 3 * 3 * 3
    safe = ~judged["is_vulnerable"]
    assert not judged.loc[safe, "target_found"].any()
    assert judged.loc[safe, ["severity", "vuln_type", "true_lines", "type_match"]].isna().all(
        axis=None)
    vulnerable = judged[judged["is_vulnerable"]]
    assert vulnerable[["severity", "vuln_type", "true_lines"]].notna().all(axis=None)
    assert set(vulnerable["severity"]) == set(SPECS["judged"].column("severity").allowed)
    found = judged["target_found"]
    assert judged.loc[found, ["rcir", "ava", "fsv", "claimed_lines"]].notna().all(axis=None)
    assert judged.loc[~found, ["rcir", "ava", "fsv", "claimed_lines"]].isna().all(axis=None)
    assert set(judged["prompt_type"]) == set(samples.PROMPT_TYPES)
    assert (judged.groupby("sample", observed=True)["is_vulnerable"].mean() % 1 == 0).all()
    assert judged["is_vulnerable"].mean() == pytest.approx(0.7)


# ------------------------------------------------------------------------------- (4) seeds

GENERATORS = {
    "bias": samples.bias_trials, "replication": samples.replication_tests,
    "replication_summary": samples.replication_summary, "judged": samples.judged_samples,
}


@pytest.mark.parametrize("kind", list(GENERATORS))
def test_a_seed_reproduces_and_another_seed_differs(kind: str) -> None:
    make = GENERATORS[kind]
    pd.testing.assert_frame_equal(make(seed=3), make(seed=3))
    assert not make(seed=3).equals(make(seed=4))
    assert make().equals(make(seed=0))


def test_seeds_move_rows_around_but_keep_the_planted_truth() -> None:
    a, b = samples.bias_trials(seed=1), samples.bias_trials(seed=2)
    assert not a["score"].equals(b["score"])
    pd.testing.assert_series_equal(
        a.groupby(BIAS_CELL, observed=True, dropna=False)["score"].mean(),
        b.groupby(BIAS_CELL, observed=True, dropna=False)["score"].mean())
    x, y = samples.judged_samples(seed=1), samples.judged_samples(seed=2)
    assert not x["is_vulnerable"].equals(y["is_vulnerable"])
    pd.testing.assert_frame_equal(observed_tiers(x), observed_tiers(y))


# ------------------------------------------------------------------------- (5) large sizes


def test_large_bias_run_has_the_requested_rows_and_exact_cells() -> None:
    big = samples.big_bias_trials(200_000)
    assert len(big) == 200_000 and big["id"].is_unique
    assert big["model"].nunique() == 10 and big["bias"].nunique() == 69
    assert samples.bias_trials_of_size is samples.big_bias_trials
    planted = samples.planted_big_bias_rates(200_000)
    means = big.groupby(BIAS_CELL, observed=True, dropna=False)["score"].mean().rename("mean")
    merged = planted.merge(means.reset_index(), on=BIAS_CELL, validate="one_to_one")
    assert len(merged) == len(planted)
    np.testing.assert_array_equal(merged["mean"], merged["rate"])
    assert (merged["rate"] - merged["nominal_rate"]).abs().max() <= 0.5 / merged["n"].min()
    small = samples.big_bias_trials(5_000)
    assert len(small) == 5_000 and small["bias"].nunique() == 10


def test_large_replication_and_judged_runs() -> None:
    tests = samples.big_replication_tests(200_016)
    assert len(tests) == 200_016
    assert not tests.duplicated(["model", "study", "finding", "test"]).any()
    judged = samples.big_judged_samples(200_016)
    assert len(judged) == 200_016
    assert not judged.duplicated(["sample", "model", "prompt_type", "judge"]).any()
    assert judged["is_vulnerable"].mean() == pytest.approx(0.7, abs=1e-3)


# --------------------------------------------------------------------- options and loading


@pytest.mark.parametrize(("call", "message"), [
    (lambda: samples.bias_trials(n_trials=0), "n_trials must be at least 1"),
    (lambda: samples.bias_trials(models=[]), "models must name at least one"),
    (lambda: samples.bias_trials(biases=["a", "b", "a"]), "biases repeats 'a'"),
    (lambda: samples.bias_trials(seed=-1), "seed must be at least 0"),
    (lambda: samples.judged_samples(n_samples=1), "n_samples must be at least 2"),
    (lambda: samples.replication_tests(n_studies=0), "n_studies must be at least 1"),
    (lambda: samples.big_bias_trials(100), "n_rows must be at least"),
])
def test_bad_options_are_named(call: Callable[[], object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


def test_wrong_types_are_named() -> None:
    with pytest.raises(TypeError, match="models must be a sequence"):
        samples.bias_trials(models="synthetic-alpha")
    with pytest.raises(TypeError, match="n_trials must be an int"):
        samples.bias_trials(n_trials=2.5)  # type: ignore[arg-type]


def test_custom_options_keep_the_plan() -> None:
    trials = samples.bias_trials(models=["synthetic-x"], biases=["made_up_bias"],
                                 domains=["risk"], n_trials=4)
    assert len(trials) == 7 * 4 and set(trials["category"]) == {"other"}
    planted = samples.planted_bias_rates(models=["synthetic-x"], biases=["made_up_bias"],
                                         domains=["risk"], n_trials=4)
    means = trials.groupby(BIAS_CELL, observed=True, dropna=False, sort=False)["score"].mean()
    np.testing.assert_array_equal(means.to_numpy(), planted["rate"].to_numpy())


def load_run_or_skip() -> Callable[..., Any]:
    try:
        io = importlib.import_module("kbench_core.io")
    except ImportError:
        pytest.skip("kbench_core.io is not written yet")
    if not hasattr(io, "load_run"):
        pytest.skip("kbench_core.io.load_run is not written yet")
    return io.load_run


@pytest.mark.parametrize(("name", "kind"), KINDS.items())
def test_each_sample_file_loads_as_its_kind_with_the_generated_values(name: str,
                                                                     kind: str) -> None:
    load_run = load_run_or_skip()
    run = load_run(SAMPLE_DIR / name)
    # the bias sample plants unknown scores (failed extractions), and the loader says so
    expected = 1 if kind == "bias" else 0
    assert run.kind == kind and len(run.warnings) == expected
    assert all("have no score (unknown" in w for w in run.warnings)
    assert len(run.frame) == len(generated()[kind])
    fresh = generated()[kind]
    for column in fresh.columns:
        mine, theirs = fresh[column], run.frame[column]
        if mine.dtype.kind in "biuf":
            # the bundled file may come from another CPU: equal to the written rounding
            np.testing.assert_allclose(mine.to_numpy(dtype=float), theirs.to_numpy(dtype=float),
                                       rtol=WRITTEN_RTOL, atol=0, err_msg=column)
        else:
            assert (mine.astype(object).where(mine.notna(), None).tolist()
                    == theirs.astype(object).where(theirs.notna(), None).tolist()), column


def test_bias_reports_sample_is_the_fingerprint_of_the_trials() -> None:
    """What a KahneBench report of the sample trials says equals what kbench computes from
    the trials themselves (the planted closed form on both sides)."""
    from kbench_core import bias_reports, kahne
    from kbench_core.io import load_run

    run = load_run(SAMPLE_DIR / "bias_summary.csv")
    assert run.kind == "bias_summary"
    reported = bias_reports.fingerprint_table(run.frame).set_index(["model", "bias"])
    computed = kahne.fingerprint(load_run(SAMPLE_DIR / "bias.csv").frame).biases
    computed = computed.assign(model=computed["model"].astype(str),
                               bias=computed["bias"].astype(str)).set_index(["model", "bias"])
    for column in ("bms", "control_mean", "bci_mean_score", "bci_consistency", "effectiveness",
                   "model_rate", "human_rate", "alignment", "rci_consistency",
                   "calibration_score"):
        np.testing.assert_allclose(reported[column].loc[computed.index].astype(float),
                                   computed[column].astype(float), atol=1e-9,
                                   err_msg=column)
    assert (reported["direction"].loc[computed.index].astype(str)
            == computed["direction"].astype(str)).all()
