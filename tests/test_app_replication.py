"""The Replication page under AppTest: the scatter, ECS and PAS tables with intervals and n,
options that change the numbers, the published summaries, and a native HumanStudy-Bench file
from loading to the page."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from kbench_app import state
from kbench_core import replication, samples
from kbench_core.io import load_run

ROOT = Path(__file__).resolve().parents[1]
EFFECTS = ROOT.parent / "shared" / "formats" / "humanstudy_effect_data_example.json"
SHIFTED = "synthetic-agent-shifted"


def open_page(monkeypatch, args: str = "") -> AppTest:
    """The app on the given runs, switched to the Replication page."""
    monkeypatch.setenv("KBENCH_APP_ARGS", args)
    state._cached_load.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("views/replication.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == "Replication"
    return at


def table(at: AppTest, *columns: str, without: tuple[str, ...] = ()) -> pd.DataFrame:
    """The first data frame on the page with these columns (AppTest has no keys for them)."""
    for frame in at.dataframe:
        value = frame.value
        if set(columns) <= set(value.columns) and not set(without) & set(value.columns):
            return value
    raise AssertionError(f"no table with {columns}")


def chart_keys(at: AppTest) -> list[str]:
    return sorted(c.proto.id.rsplit("-", 1)[-1] for c in at.get("plotly_chart"))


def ci_text(low: float, high: float) -> str:
    return f"[{low:#.4g}, {high:#.4g}]"  # 4 significant digits (kbench_core.tables)


def test_page_shows_scatter_ecs_and_pas_with_intervals_and_n(monkeypatch) -> None:
    at = open_page(monkeypatch)
    assert {"rep_scatter_chart", "rep_pas_heat_chart", "rep_summary_chart",
            "rep_summary_heat_chart"} <= set(chart_keys(at))
    tests = samples.replication_tests()
    overall = table(at, "ecs", "ecs_ci", without=("domain", "study")).set_index("model")
    expected = replication.ecs(tests).set_index("model")
    row, want = overall.loc[SHIFTED], expected.loc[SHIFTED]
    assert row["ecs"] == pytest.approx(want["ecs"])
    assert row["ecs_ci"] == ci_text(want["ecs_low"], want["ecs_high"])
    assert (row["n"], row["n_studies"]) == (36, 6)
    per_domain = table(at, "ecs", "domain")
    assert len(per_domain) == 9 and per_domain["n"].sum() == 3 * 36
    per_study = table(at, "ecs", "study")
    assert len(per_study) == 18
    pas = table(at, "pas", "pas_ci").set_index("model")
    want_pas = replication.pas(tests).model.set_index("model")
    mirror = "synthetic-agent-mirror"
    assert pas.loc[mirror, "pas"] == pytest.approx(want_pas.loc[mirror, "pas"])
    assert pas.loc[mirror, "pas_ci"] == ci_text(want_pas.loc[mirror, "pas_low"],
                                                want_pas.loc[mirror, "pas_high"])
    assert (pas.loc[mirror, "n"], pas.loc[mirror, "n_findings"],
            pas.loc[mirror, "n_tests"]) == (6, 15, 36)
    grid = table(at, "study", "findings", mirror)
    assert len(grid) == 6
    findings = table(at, "finding", "pas", "n")
    assert len(findings) == 45  # 15 findings x 3 models


def test_widgets_change_the_numbers(monkeypatch) -> None:
    at = open_page(monkeypatch)
    tests = samples.replication_tests()
    before = table(at, "ecs", "ecs_ci", without=("domain", "study")).set_index("model")
    at.radio(key="rep_weighting").set_value("equal").run()
    at.toggle(key="rep_normalize").set_value(False).run()
    changed = table(at, "ecs", "ecs_ci", without=("domain", "study")).set_index("model")
    want = replication.ecs(tests, weighting="equal", normalize_weights=False).set_index("model")
    assert changed.loc[SHIFTED, "ecs"] == pytest.approx(want.loc[SHIFTED, "ecs"])
    assert changed.loc[SHIFTED, "ecs"] != pytest.approx(before.loc[SHIFTED, "ecs"])
    assert changed.loc[SHIFTED, "ecs_ci"] == ""  # no Lin interval for the released statistic
    assert any("choose bootstrap intervals" in c.value for c in at.caption)
    # PAS options: n_eff weights and the simple mean move the mirror agent's PAS
    mirror = "synthetic-agent-mirror"
    pas_before = table(at, "pas", "pas_ci").set_index("model").loc[mirror, "pas"]
    at.radio(key="rep_finding_weights").set_value("n_eff").run()
    at.radio(key="rep_pooling").set_value("mean").run()
    pas_after = table(at, "pas", "pas_ci").set_index("model").loc[mirror, "pas"]
    want_pas = replication.pas(tests, finding_weights="n_eff", study_pooling="mean").model
    assert pas_after == pytest.approx(want_pas.set_index("model").loc[mirror, "pas"])
    assert pas_after != pytest.approx(pas_before)
    # bootstrap intervals for both metrics
    at.radio(key="rep_ci").set_value("bootstrap").run()
    assert not at.exception
    boot = table(at, "ecs", "ecs_ci", without=("domain", "study")).set_index("model")
    want_boot = replication.ecs(tests, weighting="equal", normalize_weights=False,
                                ci="bootstrap").set_index("model")
    assert boot.loc[SHIFTED, "ecs_ci"] == ci_text(want_boot.loc[SHIFTED, "ecs_low"],
                                                  want_boot.loc[SHIFTED, "ecs_high"])
    # fewer models, colour by domain, models overlaid
    at.multiselect(key="rep_models").set_value([SHIFTED, mirror]).run()
    at.radio(key="rep_color").set_value("domain").run()
    at.toggle(key="rep_panels").set_value(False).run()
    assert not at.exception
    assert sorted(table(at, "ecs", "ecs_ci", without=("domain", "study"))["model"]) == [
        mirror, SHIFTED]


def test_no_model_chosen_warns_and_keeps_the_summaries(monkeypatch) -> None:
    at = open_page(monkeypatch)
    at.multiselect(key="rep_models").set_value([]).run()
    assert not at.exception
    assert any("Choose at least one model" in w.value for w in at.warning)
    assert any("Published results" in s.value for s in at.subheader)


def test_summary_leaderboard_and_heat_table(monkeypatch) -> None:
    at = open_page(monkeypatch)
    board = table(at, "rank_text", "mean_study_pas_ci", "cost").set_index("model")
    planted = samples.planted_replication_summary().set_index("model")
    assert board["mean_study_pas"].to_dict() == pytest.approx(planted["mean_pas"].to_dict())
    assert board["n_pas"].to_dict() == planted["n_pas"].to_dict()
    assert board.index[0] == "synthetic-agent-v3-reasoning"
    # the sample file has no configuration-level scores: no column under the published names
    assert "config_pas" not in board and "config_ecs" not in board
    costs = table(at, "study_01", without=("rank_text",))
    assert len(costs) == 3 and costs.shape[1] == 7  # configurations x (name + 6 studies)
    at.radio(key="rep_summary_metric").set_value("ecs").run()
    assert not at.exception and "rep_summary_heat_chart" in chart_keys(at)


def test_published_humanstudy_results_on_the_page(monkeypatch) -> None:
    real = ROOT / "sample_data" / "real" / "humanstudy-bench" / "simple_results.json"
    at = open_page(monkeypatch, f"--no-samples {real}")
    board = table(at, "rank_text", "config_pas", "config_ecs").set_index("model")
    expected = replication.summary_leaderboard(load_run(real).frame).set_index("model")
    assert len(board) == 63
    gemini = board.loc["google_gemini_3_flash_preview_v4-background"]
    # the published ECS under its name, the mean of per-study ECS under its own
    assert gemini["config_ecs"] == pytest.approx(0.24921798583296295)
    assert gemini["mean_study_ecs"] == pytest.approx(expected.loc[gemini.name, "mean_study_ecs"])
    assert board["rank_text"].iloc[-2:].tolist() == ["no scores", "no scores"]
    assert any("Published finding scores" in e.label for e in at.expander)


def test_native_effect_list_from_file_to_page(monkeypatch) -> None:
    at = open_page(monkeypatch, f"--no-samples {EFFECTS}")
    assert any("PAS is unavailable" in i.value for i in at.info)
    assert "rep_scatter_chart" in chart_keys(at)
    overall = table(at, "ecs", "ecs_ci", without=("domain", "study"))
    want = replication.ecs(load_run(EFFECTS).frame)
    assert overall["model"].tolist() == ["Example Agent (v1-empty)"]
    assert overall["ecs"].iloc[0] == pytest.approx(want["ecs"].iloc[0])
    assert overall["n"].iloc[0] == 12
