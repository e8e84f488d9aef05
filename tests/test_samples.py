"""Tests of kbench_core.samples: planted truths hold exactly, bundled files are current."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kbench_core import samples
from kbench_core.io import load_run
from kbench_core.schema import CONDITIONS, INTENSITIES, SPECS

SAMPLE_DIR = Path(__file__).resolve().parent.parent / "sample_data"
KINDS = {"bias.csv": "bias", "replication.csv": "replication",
         "replication_summary.csv": "replication_summary", "judged.csv": "judged"}


def test_bundled_sample_data_is_what_the_generator_writes(tmp_path) -> None:
    samples.write_samples(tmp_path)
    for name in KINDS:
        fresh = (tmp_path / name).read_bytes()
        assert (SAMPLE_DIR / name).read_bytes() == fresh, (
            f"sample_data/{name} is stale: run `python -m kbench_core.samples sample_data`")
    assert sorted(p.name for p in SAMPLE_DIR.iterdir()) == sorted(KINDS)


@pytest.mark.parametrize(("name", "kind"), KINDS.items())
def test_each_sample_file_loads_as_its_kind(name: str, kind: str) -> None:
    run = load_run(SAMPLE_DIR / name)
    assert run.kind == kind and not run.warnings
    assert len(run.models) == 3
    assert all(m.startswith("synthetic-") for m in run.models)
    assert (SAMPLE_DIR / name).stat().st_size < 2 * 1024**2


def test_bias_cell_means_equal_the_planted_rates() -> None:
    trials = samples.bias_trials()
    planted = samples.planted_bias_rates()
    keys = ["model", "bias", "domain", "condition", "intensity", "method"]
    means = (trials.groupby(keys, dropna=False)["score"].mean().rename("mean").reset_index())
    merged = planted.merge(means, on=keys, how="outer", validate="one_to_one")
    assert len(merged) == len(planted) == 3 * 6 * 5 * 7
    np.testing.assert_array_equal(merged["mean"].to_numpy(), merged["rate"].to_numpy())


def test_planted_values_named_in_the_docstring() -> None:
    planted = samples.planted_bias_rates()
    alpha = planted[(planted.model == "synthetic-alpha") & (planted.bias == "anchoring_effect")]
    assert set(alpha.loc[alpha.condition == "treatment", "rate"]) == {0.8}
    assert set(alpha.loc[alpha.condition == "control", "rate"]) == {0.0}
    # Chain of thought halves, a warning keeps three quarters of, the treatment rate 0.8.
    debias = alpha[(alpha.condition == "debiasing") & (alpha.domain == "risk")]
    debias = debias.set_index("method")["rate"]
    assert debias["chain_of_thought_prompt"] == 0.4 and debias["bias_warning"] == 0.6
    beta = planted[(planted.model == "synthetic-beta") & (planted.bias == "anchoring_effect")
                   & (planted.condition == "treatment")]
    # 0.3..0.9 by intensity, +0.1 in the individual domain, -0.1 in the social domain.
    individual = beta[beta.domain == "individual"].set_index("intensity")["rate"]
    assert individual.to_dict() == {"weak": 0.4, "moderate": 0.6, "strong": 0.8,
                                    "adversarial": 1.0}
    social = beta[beta.domain == "social"].set_index("intensity")["rate"]
    assert social.to_dict() == {"weak": 0.2, "moderate": 0.4, "strong": 0.6, "adversarial": 0.8}
    # Second bias: the gap to control (0.1) is scaled by 0.75: 0.1 + 0.75*(0.9-0.1) = 0.7.
    framing = planted[(planted.model == "synthetic-beta") & (planted.bias == "gain_loss_framing")
                      & (planted.domain == "risk") & (planted.intensity == "adversarial")]
    assert framing["rate"].item() == 0.7


def test_gamma_has_one_unknown_trial_per_cell() -> None:
    trials = samples.bias_trials()
    gamma = trials[trials.model == "synthetic-gamma"]
    unknown_rate = gamma["score"].isna().mean()
    assert unknown_rate == pytest.approx(1 / 11)
    assert gamma["confidence"].isna().all()
    assert trials.loc[trials.model == "synthetic-alpha", "confidence"].eq(0.9).all()


def test_bias_sample_covers_every_condition_intensity_domain() -> None:
    trials = samples.bias_trials()
    assert set(trials["condition"]) == set(CONDITIONS)
    assert set(trials["intensity"].dropna()) == set(INTENSITIES)
    assert set(trials["domain"]) == set(samples.DOMAINS)
    assert trials["id"].is_unique
    assert set(SPECS["bias"].required) <= set(trials.columns)


def test_replication_planted_effects() -> None:
    tests = samples.replication_tests()
    by = {m: f.reset_index(drop=True) for m, f in tests.groupby("model")}
    mirror, shifted, flat = (by[m] for m in samples.REPLICATION_MODELS)
    np.testing.assert_array_equal(mirror["agent_d"], mirror["human_d"])
    np.testing.assert_allclose(shifted["agent_d"] - shifted["human_d"], 0.3, atol=1e-9)
    assert (flat["agent_d"] == 0).all() and (shifted["agent_pi"] == 0.5).all()
    np.testing.assert_allclose(flat["agent_pi"], 1 - flat["human_pi"], atol=1e-9)
    # 6 studies: 2,3,2,3,2,3 findings; findings alternate 2,3 tests.
    assert tests.groupby("model").size().tolist() == [36, 36, 36]
    assert not tests.duplicated(["model", "study", "finding", "test"]).any()


def test_replication_summary_planted_values() -> None:
    summary = samples.replication_summary().set_index(["model", "study"])
    v2 = samples.SUMMARY_CONFIGS[1]
    assert summary.loc[(v2, "study_03"), "pas"] == pytest.approx(0.4 + 0.1 * 1 + 0.02 * 2)
    assert summary.loc[(v2, "study_03"), "ecs"] == pytest.approx(0.1 * 1 + 0.05 * 2 - 0.1)
    assert np.isnan(summary.loc[(samples.SUMMARY_CONFIGS[0], "study_04"), "ecs"])
    assert np.isnan(summary.loc[(samples.SUMMARY_CONFIGS[2], "study_06"), "pas"])


def test_judged_planted_detectors_and_judges() -> None:
    judged = samples.judged_samples()
    assert len(judged) == 40 * 3 * 3 * 3
    assert not judged.duplicated(["sample", "model", "prompt_type", "judge"]).any()
    first = judged[judged.judge == "judge-one"]
    sharp = first[first.model == "synthetic-detector-sharp"]
    assert (sharp.said_vulnerable == sharp.is_vulnerable).all()
    assert (sharp.target_found == sharp.is_vulnerable).all()
    eager = first[first.model == "synthetic-detector-eager"]
    assert eager.said_vulnerable.all()
    # 28 vulnerable samples, 14 with an even index: the other 14 are lucky guesses.
    per_prompt = eager[eager.prompt_type == "direct"]
    assert (per_prompt.is_vulnerable & ~per_prompt.target_found).sum() == 14
    one = judged[judged.judge == "judge-one"].reset_index(drop=True)
    two = judged[judged.judge == "judge-two"].reset_index(drop=True)
    three = judged[judged.judge == "judge-three"].reset_index(drop=True)
    pd.testing.assert_frame_equal(one.drop(columns="judge"), two.drop(columns="judge"))
    differs = one.target_found != three.target_found
    index = one["sample"].str[1:].astype(int) - 1
    expected = one.is_vulnerable & one.said_vulnerable & (index % 5 == 0)
    pd.testing.assert_series_equal(differs, expected, check_names=False)


def test_seeds_are_reproducible_and_matter() -> None:
    a = samples.bias_trials(seed=1)
    pd.testing.assert_frame_equal(a, samples.bias_trials(seed=1))
    b = samples.bias_trials(seed=2)
    assert not a["score"].equals(b["score"])
    # ...while the planted cell means stay exactly the same.
    keys = ["model", "bias", "domain", "condition", "intensity", "method"]
    pd.testing.assert_series_equal(a.groupby(keys, dropna=False)["score"].mean(),
                                   b.groupby(keys, dropna=False)["score"].mean())
    assert not samples.replication_tests(seed=1).equals(samples.replication_tests(seed=2))


def test_large_runs_for_benchmarks() -> None:
    big = samples.bias_trials_of_size(200_000)
    assert len(big) == 200_000 and big["model"].nunique() == 10
    judged = samples.judged_samples(n_samples=2_000)
    assert len(judged) == 2_000 * 27
