"""kbench_core.replication: hand-worked PAS and CCC (arithmetic in the tests), a direct numpy
CCC, scipy for the interval's pieces, planted truths, properties and the native import."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kbench_core import replication as R
from kbench_core import samples
from kbench_core.io import RunFormatError, load_run

FORMATS = "../shared/formats"


def make_tests(rows: list[tuple]) -> pd.DataFrame:
    """(model, study, finding, test, pi_h, pi_a[, n_eff]) rows."""
    cols = ["model", "study", "finding", "test", "human_pi", "agent_pi", "n_eff"]
    return pd.DataFrame([r + (100.0,) * (7 - len(r)) for r in rows], columns=cols)


# ------------------------------------------------------------------ effect sizes and SEs


def test_effect_to_d_by_test_type() -> None:
    z = math.atanh(0.3)
    values = [0.5, z, 1.0, 0.3, 0.7, 0.4]
    kinds = ["t", "correlation", "chi2", "mann_whitney", "binomial", "nonsense"]
    d = R.effect_to_d(values, kinds)
    assert d[0] == 0.5
    assert d[1] == pytest.approx(2 * 0.3 / math.sqrt(1 - 0.09))       # 0.6290
    assert d[2] == pytest.approx(1.0 * math.sqrt(3) / math.pi)         # 0.5513
    assert d[3] == pytest.approx(2 * 0.3 / math.sqrt(1 - 0.09))
    assert d[4] == pytest.approx(2 * (0.7 - 0.5) / 0.5)                # 0.8
    assert math.isnan(d[5])


def test_standard_errors() -> None:
    # independent d: sqrt((20+30)/(20*30) + 0.5^2/(2*50)) = sqrt(0.08333 + 0.0025)
    assert R.se_cohens_d(0.5, 20, 30) == pytest.approx(math.sqrt(50 / 600 + 0.25 / 100))
    assert R.se_cohens_d(0.5, 25) == pytest.approx(math.sqrt(1 / 25 + 0.25 / 50))
    assert R.se_fisher_z(28) == pytest.approx(0.2)                    # 1/sqrt(25)
    assert math.isnan(float(R.se_fisher_z(3)))
    # a zero cell: Haldane-Anscombe adds 0.5 everywhere -> log(10.5*5.5/(0.5*4.5))
    log_or, se = R.log_odds_ratio(10, 0, 4, 5)
    assert log_or == pytest.approx(math.log(10.5 * 5.5 / (0.5 * 4.5)))
    assert se == pytest.approx(math.sqrt(1 / 10.5 + 1 / 0.5 + 1 / 4.5 + 1 / 5.5))
    assert R.se_rank_biserial(10, 12) == pytest.approx(math.sqrt(23 / 360))
    assert R.se_proportion(0.2, 100) == pytest.approx(0.04)
    assert R.posterior_from_bf(3.0, 10.0) == pytest.approx(30 / 31)


def test_posteriors_from_bayes_factors_use_the_prior_odds() -> None:
    frame = pd.DataFrame({"model": ["m", "m"], "study": ["s", "s"], "finding": ["f", "f"],
                          "test": ["a", "b"], "human_bf10": [2.0, 2.0],
                          "agent_bf10": [0.5, 4.0], "human_significant": [True, False]})
    t = R.prepare_tests(frame)
    assert t["pi_h"].tolist() == pytest.approx([20 / 21, 0.2 / 1.2])  # odds 10 and 0.1
    assert t["pi_a"].tolist() == pytest.approx([0.5 / 1.5, 4 / 5])    # agent odds 1


# ------------------------------------------------------------------ PAS


def test_pas_fisher_pooling_hand_worked() -> None:
    frame = make_tests([("m", "s1", "f1", "t1", 0.9, 0.8), ("m", "s1", "f1", "t2", 0.6, 0.5),
                         ("m", "s1", "f2", "t1", 0.2, 0.3), ("m", "s2", "f3", "t1", 0.5, 0.5)])
    result = R.pas(frame)
    # tests: 0.9*0.8+0.1*0.2 = 0.74; 0.6*0.5+0.4*0.5 = 0.5; 0.2*0.3+0.8*0.7 = 0.62; 0.5
    assert result.test["pas"].tolist() == pytest.approx([0.74, 0.5, 0.62, 0.5])
    # f1: r = 0.48 and 0.0 -> z = atanh(0.48) = 0.5230, 0 -> mean 0.2615 -> (tanh+1)/2
    f1 = (math.tanh((math.atanh(0.48) + 0.0) / 2) + 1) / 2
    finding = result.finding.set_index("finding")["pas"]
    assert finding["f1"] == pytest.approx(f1)                         # 0.6279
    assert finding["f2"] == pytest.approx(0.62)
    # s1: Fisher pooling of f1 and f2 on r = 2p - 1
    s1 = (math.tanh((math.atanh(2 * f1 - 1) + math.atanh(0.24)) / 2) + 1) / 2
    study = result.study.set_index("study")["pas"]
    assert study["s1"] == pytest.approx(s1) and study["s2"] == pytest.approx(0.5)
    assert result.model["pas"].iloc[0] == pytest.approx((s1 + 0.5) / 2)
    mean = R.pas(frame, study_pooling="mean").study.set_index("study")["pas"]
    assert mean["s1"] == pytest.approx((f1 + 0.62) / 2)


def test_pas_n_eff_weights_and_edge_cases() -> None:
    frame = make_tests([("m", "s", "f", "t1", 0.9, 0.8, 300.0),
                         ("m", "s", "f", "t2", 0.6, 0.5, 100.0)])
    weighted = R.pas(frame, finding_weights="n_eff").finding["pas"].iloc[0]
    # (300*atanh(0.48) + 100*0) / 400
    assert weighted == pytest.approx((math.tanh(300 * math.atanh(0.48) / 400) + 1) / 2)
    zero = frame.assign(n_eff=0.0)  # sum of weights <= 0 -> unweighted mean of z
    assert R.pas(zero, finding_weights="n_eff").finding["pas"].iloc[0] == pytest.approx(
        (math.tanh(math.atanh(0.48) / 2) + 1) / 2)
    perfect = make_tests([("m", "s", "f", "t", 1.0, 1.0)])  # PAS 1 -> r clamped, no inf
    assert R.pas(perfect).finding["pas"].iloc[0] == pytest.approx(1.0, abs=1e-6)
    with pytest.raises(ValueError, match="study_pooling"):
        R.pas(frame, study_pooling="median")


def test_pas_planted_and_bootstrap() -> None:
    tests = samples.replication_tests()
    result = R.pas(tests, ci="bootstrap", n_boot=300)
    planted = samples.planted_replication_pas().set_index(["model", "study", "finding",
                                                           "test"])["pas"]
    mine = result.test.set_index(["model", "study", "finding", "test"])["pas"]
    np.testing.assert_allclose(mine, planted.reindex(mine.index))
    shifted = result.model.set_index("model").loc["synthetic-agent-shifted"]
    assert shifted["pas"] == pytest.approx(0.5) and shifted["pas_low"] == pytest.approx(0.5)
    assert (result.model["pas_low"] <= result.model["pas"] + 1e-12).all()


# ------------------------------------------------------------------ CCC and ECS


def numpy_ccc(x, y, w) -> float:
    w = np.asarray(w, float) / np.sum(w)
    mx, my = np.sum(w * x), np.sum(w * y)
    vx, vy = np.sum(w * (x - mx) ** 2), np.sum(w * (y - my) ** 2)
    return 2 * np.sum(w * (x - mx) * (y - my)) / (vx + vy + (mx - my) ** 2)


def test_weighted_ccc_hand_worked_and_numpy() -> None:
    # x = 1, 2, 3; y = 1, 2, 4: means 2 and 7/3; var 2/3 and 14/9; cov 1
    # CCC = 2*1 / (2/3 + 14/9 + 1/9) = 2 / (21/9) = 6/7
    assert R.weighted_ccc([1, 2, 3], [1, 2, 4]) == pytest.approx(6 / 7)
    rng = np.random.default_rng(1)
    x, y, w = rng.normal(size=40), rng.normal(size=40), rng.random(40)
    assert R.weighted_ccc(x, y, w) == pytest.approx(numpy_ccc(x, y, w))
    # NaN pairs and non-positive weights are dropped
    xs = np.append(x, [np.nan, 5.0, 1.0])
    ys = np.append(y, [1.0, np.inf, 2.0])
    ws = np.append(w, [1.0, 1.0, 0.0])
    assert R.weighted_ccc(xs, ys, ws) == pytest.approx(numpy_ccc(x, y, w))
    assert math.isnan(R.weighted_ccc([1.0], [2.0]))
    assert R.weighted_ccc([2, 2, 2], [2, 2, 2]) == 1.0
    assert R.weighted_ccc([2, 2, 2], [3, 3, 3]) == 0.0


def test_unnormalised_weights_reproduce_the_released_code() -> None:
    x, y, w = np.array([0.0, 1.0, 2.0]), np.array([0.5, 1.0, 2.5]), np.array([2.0, 2.0, 2.0])
    mx, my = 1.0, 4.0 / 3.0
    cov = np.sum(w * (x - mx) * (y - my))        # sums, not divided by sum(w) = 6
    vx, vy = np.sum(w * (x - mx) ** 2), np.sum(w * (y - my) ** 2)
    expected = 2 * cov / (vx + vy + (mx - my) ** 2)
    assert R.weighted_ccc(x, y, w, normalize_weights=False) == pytest.approx(expected)
    assert R.weighted_ccc(x, y, w, normalize_weights=False) > R.weighted_ccc(x, y, w)


vectors = st.lists(st.floats(-3, 3, allow_nan=False), min_size=3, max_size=25)


@settings(max_examples=100, deadline=None)
@given(data=st.data(), x=vectors)
def test_ccc_properties(data, x) -> None:
    x = np.asarray(x)
    y = np.asarray(data.draw(st.lists(st.floats(-3, 3, allow_nan=False), min_size=len(x),
                                      max_size=len(x))))
    w = np.asarray(data.draw(st.lists(st.floats(0.1, 5), min_size=len(x), max_size=len(x))))
    ccc = R.weighted_ccc(x, y, w)
    assert ccc == pytest.approx(R.weighted_ccc(y, x, w))                       # symmetric
    assert ccc == pytest.approx(R.weighted_ccc(x, y, 7.5 * w))                 # weight scale
    if np.ptp(x) > 1e-6:
        assert R.weighted_ccc(x, x, w) == pytest.approx(1.0)
    if np.ptp(x) > 1e-3 and np.ptp(y) > 1e-3:  # |CCC| <= |Pearson r|
        assert abs(R.weighted_ccc(x, y)) <= abs(np.corrcoef(x, y)[0, 1]) + 1e-9
    assert -1 <= ccc <= 1 or math.isnan(ccc)


def test_ecs_equals_the_planted_closed_form_at_every_level() -> None:
    tests = samples.replication_tests()
    planted = samples.planted_replication_ecs()
    for level in ("overall", "domain", "study"):
        for weighting in ("structure", "equal"):
            for normalize in (True, False):
                mine = R.ecs(tests, level=level, weighting=weighting,
                             normalize_weights=normalize, ci=None)
                mine = mine.assign(group="all") if level == "overall" else mine.rename(
                    columns={level: "group"})
                want = planted[(planted["level"] == level) & (planted["weighting"] == weighting)
                               & (planted["normalize_weights"] == normalize)]
                got = mine.set_index(["model", "group"])["ecs"]
                exp = want.set_index(["model", "group"])["ecs"].reindex(got.index)
                np.testing.assert_allclose(got, exp, atol=1e-12, err_msg=f"{level} {weighting}")


def test_ecs_intervals() -> None:
    tests = samples.replication_tests()
    analytic = R.ecs(tests).set_index("model")
    boot = R.ecs(tests, ci="bootstrap", n_boot=300).set_index("model")
    mirror = analytic.loc["synthetic-agent-mirror"]
    assert mirror["ecs"] == 1.0 and mirror["ecs_low"] == mirror["ecs_high"] == 1.0
    shifted = "synthetic-agent-shifted"
    for table in (analytic, boot):
        assert table.loc[shifted, "ecs_low"] < table.loc[shifted, "ecs"] < table.loc[
            shifted, "ecs_high"]


def test_lin_interval_unweighted_matches_lins_formula() -> None:
    rng = np.random.default_rng(4)
    x = rng.normal(0.5, 0.4, 30)
    y = 0.8 * x + rng.normal(0.1, 0.2, 30)
    frame = pd.DataFrame({"model": "m", "study": [f"s{i}" for i in range(30)],
                          "finding": "f", "test": "t", "human_d": x, "agent_d": y})
    row = R.ecs(frame, weighting="equal").iloc[0]
    # Lin (1989) with population moments, worked with numpy here
    mx, my, sx, sy = x.mean(), y.mean(), x.std(), y.std()
    r = np.corrcoef(x, y)[0, 1]
    rc = 2 * r * sx * sy / (sx ** 2 + sy ** 2 + (mx - my) ** 2)
    u = (mx - my) / math.sqrt(sx * sy)
    var = ((1 - r * r) * rc * rc / ((1 - rc * rc) * r * r)
           + 2 * rc ** 3 * (1 - rc) * u * u / (r * (1 - rc * rc) ** 2)
           - rc ** 4 * u ** 4 / (2 * r * r * (1 - rc * rc) ** 2)) / (30 - 2)
    half = 1.959963984540054 * math.sqrt(var)
    assert row["ecs"] == pytest.approx(rc)
    assert (row["ecs_low"], row["ecs_high"]) == pytest.approx(
        (math.tanh(math.atanh(rc) - half), math.tanh(math.atanh(rc) + half)))


def test_auxiliaries_are_defined() -> None:
    tests = samples.replication_tests()
    norm = R.pas_normalized(tests)
    assert norm["pas_norm"].between(-1, 1).all()
    mirror = norm[norm["model"] == "synthetic-agent-mirror"]
    assert (mirror["pas_norm"] > 0.999).all()  # copies the human posterior: the ceiling
    strict = R.ecs_strict(tests)
    assert strict.loc[strict["model"] == "synthetic-agent-mirror", "z_rms"].eq(0).all()
    assert strict["ecs_strict"].between(0, 1).all()


# ------------------------------------------------------------------ native import


def test_native_effect_list_loads_and_numbers_repeats(repo_root) -> None:
    path = repo_root / FORMATS / "humanstudy_effect_data_example.json"
    records = json.loads(path.read_text())
    run = load_run(path)
    assert run.kind == "replication" and len(run) == len(records)
    first = run.frame.iloc[0]
    assert first["model"] == f"{records[0]['Model']} ({records[0]['Method']})"
    assert first["finding"] == f"{records[0]['Sub_Study_ID']}/{records[0]['Finding_ID']}"
    assert first["human_d"] == records[0]["ES_Original"]
    empty = next(i for i, r in enumerate(records) if r["Finding_ID"] == "")
    assert run.frame.iloc[empty]["finding"] == records[empty]["Sub_Study_ID"]
    repeated = [*records, dict(records[0])]
    again = load_run(("effects.json", json.dumps(repeated).encode()))
    assert again.frame["test"].iloc[-1] == f"{records[0]['Test_Name']} #2"
    assert any("numbered" in w for w in again.warnings)
    # and on to ECS: one CCC per model
    table = R.ecs(run.frame)
    assert len(table) == run.frame["model"].nunique()


def test_native_effect_list_errors_name_record_and_field() -> None:
    bad = [{"Model": "a", "Method": "m", "ES_Original": 0.2, "ES_Replication": "big",
            "Study_ID": "s", "Sub_Study_ID": "s1", "Finding_ID": "F1", "Test_Name": "t"}]
    with pytest.raises(RunFormatError, match=r"effects\.json: record 1, field 'agent_d'"):
        load_run(("effects.json", json.dumps(bad).encode()))


def test_scatter_aggregates_big_runs_into_a_density_grid() -> None:
    from kbench_core.figures import replication as rep_figures

    models = [f"agent-{i:02d}" for i in range(30)]
    tests = R.prepare_tests(samples.replication_tests(models=models, n_studies=120))
    assert len(tests) > rep_figures.MAX_POINTS
    fig = rep_figures.effect_scatter(tests, R.ecs(tests), panels=False)
    heat = [t for t in fig.data if t.type == "heatmap"]
    assert len(heat) == 1 and np.nansum(heat[0].z) == len(tests)
    assert len(fig.to_json()) < 2 * 1024**2  # SPEC 5: a figure sent to the browser <= 2 MB
    small = rep_figures.effect_scatter(R.prepare_tests(samples.replication_tests()))
    assert not any(t.type == "heatmap" for t in small.data)
