"""The Vulnerability detection page under streamlit.testing.v1.AppTest."""

from __future__ import annotations

from pathlib import Path

import pytest
from statsmodels.stats.proportion import proportion_confint
from streamlit.testing.v1 import AppTest

from kbench_app import state
from kbench_core import families, samples, vuln

ROOT = Path(__file__).resolve().parent.parent
FORMATS = ROOT.parent / "shared" / "formats"


def open_page(monkeypatch: pytest.MonkeyPatch, args: str = "") -> AppTest:
    monkeypatch.setenv("KBENCH_APP_ARGS", args)
    state._cached_load.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("views/vuln.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


# Data frames on the page, in order (AppTest finds data frames by position, not key): the
# leaderboard, one per tier tab, the drill-down's answers, then its findings (the Compare
# panel's table of every pair is drawn only once its section is opened).
TABLES = ["leaderboard", *(name.split()[0] for name in vuln.TIERS), "answers", "findings"]


def table(at: AppTest, name: str):
    return at.dataframe[TABLES.index(name)].value


def leaderboard(at: AppTest):
    return table(at, "leaderboard").set_index("model")


def chart_specs(at: AppTest) -> list[str]:
    return [c.proto.spec for c in at.get("plotly_chart")]


def planted(judge: str):
    return samples.planted_judged().set_index(["model", "judge"]).xs(judge, level="judge")


def test_page_shows_the_tiers_of_the_sample_run(monkeypatch) -> None:
    at = open_page(monkeypatch)
    assert at.title[0].value == "Vulnerability detection"
    board = leaderboard(at)
    expected = planted("judge-one")
    for metric in ("sui", "tus", "lgi", "accuracy", "tdr", "ece"):
        assert board[metric].to_dict() == pytest.approx(expected[metric].to_dict()), metric
    # ranked by SUI, best first, with Wilson intervals beside the rates
    assert board["rank"].tolist() == [1, 2, 3]
    assert board.index[0] == "synthetic-detector-sharp"
    # eager: 0.7 of 120 answers on 40 samples x 3 prompt types, clustered by sample: Wilson on
    # the effective n = 120 / deff, deff from the delete-one-sample jackknife (issue 23.4)
    rows = samples.judged_samples()
    rows = rows[(rows["judge"] == "judge-one") & (rows["model"] == "synthetic-detector-eager")]
    right = (rows["said_vulnerable"] == rows["is_vulnerable"]).groupby(rows["sample"]).agg(
        ["sum", "count"])
    big_y, big_n = right["sum"].sum(), right["count"].sum()
    left = (big_y - right["sum"]) / (big_n - right["count"])
    jackknife = (len(left) - 1) / len(left) * ((left - left.mean()) ** 2).sum()
    p = big_y / big_n
    deff = max(1.0, jackknife / (p * (1 - p) / big_n))
    assert (big_y, big_n) == (84, 120) and deff > 1
    low, high = proportion_confint(84 / deff, 120 / deff, method="wilson")
    # 4 significant digits (kbench_core.tables)
    assert board.loc["synthetic-detector-eager", "accuracy_ci"] == f"[{low:#.4g}, {high:#.4g}]"
    # one tab per tier with all its metrics
    tier1 = table(at, "1")
    assert {"tp", "tn", "fp", "fn", "f1", "f2", "fpr", "fnr"} <= set(tier1.columns)
    tier7 = table(at, "7")
    assert {"sui", "tus", "tus_geometric", "lgi"} <= set(tier7.columns)
    charts = sorted(c.proto.id.rsplit("-", 1)[-1] for c in at.get("plotly_chart"))
    assert charts == ["vuln_cmp_forest_chart", "vuln_leaderboard_chart", "vuln_lucky_chart",
                      "vuln_prompt_chart", "vuln_reliability_chart"]


def test_judge_models_and_split(monkeypatch) -> None:
    at = open_page(monkeypatch)
    at.selectbox(key="vuln_judge").set_value("judge-three").run()
    board = leaderboard(at)
    assert board.loc["synthetic-detector-sharp", "tdr"] == pytest.approx(22 / 28)
    at.multiselect(key="vuln_models").set_value(["synthetic-detector-timid"]).run()
    assert leaderboard(at).index.tolist() == ["synthetic-detector-timid"]
    at.toggle(key="vuln_split").set_value(True).run()
    split = table(at, "leaderboard")
    assert len(split) == 3 and sorted(split["prompt_type"]) == sorted(samples.PROMPT_TYPES)


def test_sui_weights_rerank_live(monkeypatch) -> None:
    at = open_page(monkeypatch)
    assert leaderboard(at).index[0] == "synthetic-detector-sharp"
    # all weight on calibration: ranked by 1 − ECE, timid (ECE 0.05) first
    for name in ("f2", "tdr", "finding_precision", "reasoning"):
        at.slider(key=f"vuln_w_{name}").set_value(0.0).run()
    at.slider(key="vuln_w_calibration").set_value(1.0).run()
    board = leaderboard(at)
    assert board.index[0] == "synthetic-detector-timid"
    assert board.loc["synthetic-detector-timid", "sui"] == pytest.approx(0.95)
    at.button(key="vuln_w_reset").click().run()
    assert leaderboard(at)["sui"].to_dict() == pytest.approx(
        planted("judge-one")["sui"].to_dict())


def test_options_change_the_numbers(monkeypatch) -> None:
    at = open_page(monkeypatch)
    at.slider(key="vuln_partial").set_value(0.5).run()
    # timid's targets are all partial matches: TDR halves, 10/28 → 5/28
    assert leaderboard(at).loc["synthetic-detector-timid", "tdr"] == pytest.approx(5 / 28)
    at.toggle(key="vuln_bootstrap").set_value(True).run()
    board = leaderboard(at)
    assert board["sui_ci"].str.startswith("[").all()
    assert not at.exception


def test_reliability_switches(monkeypatch) -> None:
    at = open_page(monkeypatch)
    titles = chart_specs(at)
    assert any("equal-width bins" in t for t in titles)
    at.radio(key="vuln_binning").set_value("quantile").run()
    at.slider(key="vuln_bins").set_value(5).run()
    assert not at.exception
    titles = chart_specs(at)
    assert any("equal-mass bins" in t for t in titles)
    assert any("ECE 0.100" in t for t in titles)      # the legend carries ECE and MCE
    at.selectbox(key="vuln_rel_prompt").set_value("adversarial").run()
    assert any("Reliability on adversarial prompts" in t for t in chart_specs(at))


def test_drill_down_to_findings_of_a_blockbench_folder(monkeypatch) -> None:
    at = open_page(monkeypatch, f"--no-samples {FORMATS / 'blockbench_judge_output'}")
    board = leaderboard(at)
    assert board.loc["detector_b", "tdr"] == 0.5
    at.selectbox(key="vuln_drill_model").set_value("detector_b").run()
    at.selectbox(key="vuln_drill_sample").set_value("ex_tc_002").run()
    answers = table(at, "answers")
    assert answers["target_found"].tolist() == [False]
    findings = table(at, "findings")
    assert findings["classification"].tolist() == ["HALLUCINATED"]
    assert findings["location_claimed"].tolist() == ["withdraw function, lines 12-18"]
    at.text_input(key="vuln_drill_search").set_value("safe").run()
    assert at.selectbox(key="vuln_drill_sample").value == "ex_safe_003"


def test_multi_judge_upload_and_judge_choice(monkeypatch) -> None:
    monkeypatch.setenv("KBENCH_APP_ARGS", "--no-samples")
    state._cached_load.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.file_uploader(key="runs_uploader").set_value(
        [("records.json", (FORMATS / "blockbench_multi_judge_records.json").read_bytes(),
          "application/json")]).run()
    at.switch_page("views/vuln.py").run()
    assert not at.exception
    assert at.selectbox(key="vuln_judge").options == ["majority", "judge-x", "judge-y",
                                                      "judge-z", "human"]
    at.selectbox(key="vuln_judge").set_value("human").run()
    assert leaderboard(at).index.tolist() == ["detector_a"]


def test_page_without_judged_runs(monkeypatch) -> None:
    at = open_page(monkeypatch, "--no-samples")
    assert "No judged vulnerability-detection run" in at.info[0].value


def test_bins_also_give_the_leaderboard_ece(monkeypatch, tmp_path) -> None:
    import numpy as np

    frame = samples.judged_samples(n_samples=30, judges=("judge-one",), seed=2)
    frame["confidence"] = np.round(np.random.default_rng(1).random(len(frame)), 3)
    path = tmp_path / "spread.csv"
    frame.to_csv(path, index=False)
    at = open_page(monkeypatch, f"--no-samples {path}")
    uniform = leaderboard(at)["ece"]
    at.radio(key="vuln_binning").set_value("quantile").run()
    at.slider(key="vuln_bins").set_value(5).run()
    quantile = leaderboard(at)["ece"]
    expected = vuln.tiers(frame, binning="quantile", n_bins=5).set_index("model")["ece"]
    assert quantile.to_dict() == pytest.approx(expected.to_dict())
    assert not np.allclose(quantile.loc[expected.index], uniform.loc[expected.index])


def test_compare_panel_on_correct_verdicts(monkeypatch) -> None:
    from kbench_core import compare
    from kbench_core.io import load_run

    at = open_page(monkeypatch)
    at.selectbox(key="vuln_cmp_a").set_value("synthetic-detector-sharp").run()
    at.selectbox(key="vuln_cmp_b").set_value("synthetic-detector-timid").run()
    # the panel opens on TDR, the family's headline (issue 37, item 6); correct verdicts here
    at.selectbox(key="vuln_cmp_metric").set_value("correct verdict").run()
    frame = load_run("sample_data/judged.csv").frame
    frame = frame[frame["judge"] == "judge-one"].assign(
        correct=lambda d: (d["said_vulnerable"] == d["is_vulnerable"]).astype(float))
    est = compare.paired_difference(frame, "correct", "synthetic-detector-sharp",
                                    "synthetic-detector-timid", cluster="sample")
    assert est.low > 0  # sharp planted right on every answer, timid on 45%
    assert any(m.value == f"{est.value:+.3f}" for m in at.metric)
    assert any("scores higher" in s.value and "better" in s.value for s in at.success)


def test_reliability_follows_the_prompt_type_with_equal_row_counts(monkeypatch,
                                                                   tmp_path) -> None:
    # Every prompt type has the same number of rows, so a cache keyed on (models, rows)
    # showed the previous prompt type's diagram under the new title.
    import json

    import numpy as np

    frame = samples.judged_samples(n_samples=30, judges=("judge-one",), seed=2)
    rng = np.random.default_rng(1)
    frame["confidence"] = np.round(rng.random(len(frame)), 3)  # differs between prompt types
    sizes = frame.groupby("prompt_type", observed=True).size()
    assert sizes.nunique() == 1  # the premise of the regression
    path = tmp_path / "prompts.csv"
    frame.to_csv(path, index=False)
    at = open_page(monkeypatch, f"--no-samples {path}")

    def diagram(prompt: str) -> dict:
        at.selectbox(key="vuln_rel_prompt").set_value(prompt).run()
        assert not at.exception
        return next(json.loads(s) for s in chart_specs(at)
                    if f"Reliability on {prompt} prompts" in s)

    first, second = (str(p) for p in sizes.index[:2])
    shown = {prompt: diagram(prompt) for prompt in (first, second)}
    assert shown[first]["data"] != shown[second]["data"]
    # each legend carries its own prompt type's ECE, computed here without the page's cache
    for prompt in (first, second):
        expected = vuln.tiers(frame[frame["prompt_type"] == prompt]).set_index("model")["ece"]
        names = " ".join(str(t.get("name", "")) for t in shown[prompt]["data"])
        for ece in expected:
            assert f"ECE {ece:.3f}" in names


def test_fixed_versions_section_on_multi_judge_records(monkeypatch) -> None:
    path = FORMATS / "blockbench_multi_judge_records.json"
    at = open_page(monkeypatch, f"--no-samples {path}")
    assert any(s.value == "Fixed versions" for s in at.subheader)
    view = next(d.value for d in at.dataframe if "fixed_claim_rate" in d.value.columns)
    assert ("detector_a", "majority") in view.set_index(["model", "judge"]).index  # default
    at.selectbox(key="vuln_judge").set_value("judge-x").run()
    view = next(d.value for d in at.dataframe if "fixed_claim_rate" in d.value.columns)
    # judge-x: detector_a still claims the fixed bug on df_tc_001 (1 of 1); consensus has no
    # majority on it (only judge-x judged it): 0 readable claims
    row = view.set_index(["model", "judge"]).loc[("detector_a", "judge-x")]
    assert (row["n_fixed"], row["fixed_claim_rate"]) == (1, 1.0)
    low, high = proportion_confint(1, 1, method="wilson")  # 0.2065, 1: 4 significant digits
    assert row["fixed_claim_ci"] == f"[{low:.4g}, {high:.4g}]".replace(", 1]", ", 1.000]")
    assert ("detector_a", "majority") in view.set_index(["model", "judge"]).index


def test_widgets_show_the_values_in_use_after_the_run_changes(monkeypatch, tmp_path) -> None:
    # The case: a link sets the bins and the prompt-type metric, the user replaces the
    # sample run with another; each widget must still show the value its chart and table use
    # (before the page kit the slider showed 2 while the URL and the chart used 10).
    import json

    import numpy as np

    frame = samples.judged_samples(n_samples=30, judges=("judge-one",), seed=4)
    frame["confidence"] = np.round(np.random.default_rng(3).random(len(frame)), 3)
    other = tmp_path / "other.csv"
    frame.to_csv(other, index=False)
    monkeypatch.setenv("KBENCH_APP_ARGS", f"{other}")
    state._cached_load.clear()
    at = AppTest.from_file(str(ROOT / "views" / "vuln.py"), default_timeout=120)
    at.query_params["vuln_bins"] = "7"
    at.query_params["vuln_prompt_metric"] = "f2"
    at.run()
    assert not at.exception, [e.value for e in at.exception]

    def in_use(run_frame, *, split: bool = False) -> None:
        assert at.slider(key="vuln_bins").value == 7
        assert at.query_params["vuln_bins"] in ("7", ["7"])
        assert at.selectbox(key="vuln_prompt_metric").value == "f2"
        from kbench_core import agreement

        judge = at.selectbox(key="vuln_judge").value
        rows = (agreement.consensus(run_frame) if judge == "majority"
                else run_frame[run_frame["judge"].astype(str) == judge])
        by = ["model", "prompt_type"] if split else ["model"]
        expected = vuln.tiers(rows, n_bins=7, by=by).set_index(by)["ece"]
        shown = table(at, "leaderboard").set_index(by)["ece"]
        assert shown.to_dict() == pytest.approx(expected.to_dict())  # the table uses 7 bins
        prompt_chart = next(json.loads(c.proto.spec) for c in at.get("plotly_chart")
                            if c.proto.id.endswith("vuln_prompt_chart"))
        assert vuln.METRIC_LABELS["f2"] in json.dumps(prompt_chart)  # the chart plots F2

    from kbench_core.io import load_run

    sample = load_run(ROOT / "sample_data" / "judged.csv").frame
    at.multiselect(key="vuln_runs").set_value(["judged"]).run()
    in_use(sample)
    at.multiselect(key="vuln_runs").set_value(["other"]).run()
    assert not at.exception, [e.value for e in at.exception]
    in_use(frame)
    # and a new layout of the leaderboard keeps them
    at.toggle(key="vuln_split").set_value(True).run()
    in_use(frame, split=True)


def test_page_leaderboard_equals_the_catalog_table(monkeypatch) -> None:
    from kbench_core.io import load_run

    at = open_page(monkeypatch)
    at.toggle(key="vuln_bootstrap").set_value(False).run()  # the catalog's default options
    run = load_run(ROOT / "sample_data" / "judged.csv")
    exported = dict(families.main_table("judged").objects(run.frame))
    judge = at.selectbox(key="vuln_judge").value
    table_ = exported[f"tiers-{judge}"]
    page = table(at, "leaderboard")
    assert page["model"].tolist() == table_["model"].astype(str).tolist()  # same order
    assert page["rank"].tolist() == table_["rank"].tolist()
    for metric in ("sui", "tus", "lgi", "accuracy", "f2", "tdr", "ece", "brier"):
        assert page[metric].to_numpy() == pytest.approx(table_[metric].to_numpy(), abs=1e-12,
                                                        nan_ok=True), metric


def test_difficulty_section_shows_each_tier_and_their_mean(monkeypatch) -> None:
    # The multi-judge records' ids ds_t1_001 and ds_t2_002 carry tiers t1 and t2. Judge-x:
    # detector_a finds both targets (1, 1: mean 1), detector_b only the t1 one (1, 0: mean 0.5).
    path = FORMATS / "blockbench_multi_judge_records.json"
    at = open_page(monkeypatch, f"--no-samples {path}")
    assert any(s.value == "By difficulty tier" for s in at.subheader)
    view = next(d.value for d in at.dataframe if "tdr_t1" in d.value.columns)
    view = view.set_index("model")
    assert view[["tdr_t1", "tdr_t2", "tdr_difficulty_mean"]].to_dict("index") == {
        "detector_a": {"tdr_t1": 1.0, "tdr_t2": 1.0, "tdr_difficulty_mean": 1.0},
        "detector_b": {"tdr_t1": 1.0, "tdr_t2": 0.0, "tdr_difficulty_mean": 0.5}}
    board = leaderboard(at)
    assert {"ece", "ece_l2_debiased", "tdr_difficulty_mean"} <= set(board.columns)
