"""The Replication page under AppTest: the scatter, ECS and PAS tables with intervals and n,
options that change the numbers, the published summaries, and a native HumanStudy-Bench file
from loading to the page."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from kbench_app import state
from kbench_core import families, replication, samples
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
    # 4 significant digits, a zero as 0 (kbench_core.tables.format_value, written out)
    def text(value: float) -> str:
        return "0" if abs(value) < 1e-12 else f"{value:#.4g}"

    return f"[{text(low)}, {text(high)}]"


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


def values(data) -> list[float]:
    """An array of a figure sent to the browser (plotly sends numbers as base64 typed arrays)."""
    import base64

    import numpy as np

    if isinstance(data, dict) and "bdata" in data:
        return np.frombuffer(base64.b64decode(data["bdata"]), dtype=data["dtype"]).tolist()
    return [float(v) for v in np.atleast_1d(data)]


def chart_figure(at: AppTest, key: str):
    """The plotly figure of the chart whose key is ``key``."""
    import plotly.io as pio

    return next(pio.from_json(c.proto.spec) for c in at.get("plotly_chart")
                if c.proto.id.endswith(key))


def test_page_tables_equal_the_catalog_tables(monkeypatch) -> None:
    # One source for every number: the page's ECS and PAS tables (replication runs) and its
    # leaderboard (replication_summary runs) are the catalog's, for the same run and the
    # default options.

    at = open_page(monkeypatch)
    run = load_run(ROOT / "sample_data" / "replication.csv")
    exported = dict(families.main_table("replication").objects(run.frame))
    assert set(exported) == {"ecs-overall", "ecs-domain", "ecs-study"}
    for name, keys in (("ecs-overall", ["model"]), ("ecs-domain", ["model", "domain"]),
                       ("ecs-study", ["model", "study"])):
        others = {"domain", "study"} - set(keys)
        page = table(at, "ecs", "ecs_ci", *keys, without=tuple(others)).set_index(keys)
        want = exported[name].astype({k: str for k in keys}).set_index(keys).loc[page.index]
        assert len(page) == len(want) == len(exported[name])
        assert ("n_studies" in page) == (name != "ecs-study")  # per study it would be 1
        for column in [c for c in ("ecs", "n", "n_kish", "n_studies") if c in page]:
            assert page[column].to_numpy(dtype=float) == pytest.approx(
                want[column].to_numpy(dtype=float), abs=1e-12, nan_ok=True), (name, column)
        assert page["ecs_ci"].tolist() == [
            "" if pd.isna(lo) else ci_text(lo, hi)
            for lo, hi in zip(want["ecs_low"], want["ecs_high"], strict=True)]
    # the PAS model table is the catalog's "pas" table, in its order, few-studies mark included
    ((_, pas_table),) = families.items_for("replication")[1].objects(run.frame)
    page = table(at, "pas", "pas_ci")
    assert page["model"].tolist() == pas_table["model"].astype(str).tolist()
    for column in ("pas", "n", "n_findings", "n_tests", "n_dropped"):
        assert page[column].to_numpy(dtype=float) == pytest.approx(
            pas_table[column].to_numpy(dtype=float), abs=1e-12), column
    assert page["few_items"].tolist() == pas_table["few_items"].tolist() == [True] * 3  # 6 < 30
    # the published results: the leaderboard of the replication_summary run
    summary = load_run(ROOT / "sample_data" / "replication_summary.csv")
    ((_, board),) = families.main_table("replication_summary").objects(summary.frame)
    page = table(at, "rank_text", "mean_study_pas_ci")
    assert page["model"].tolist() == board["model"].tolist()
    assert page["rank_text"].tolist() == board["rank_text"].tolist()
    for column in ("rank", "mean_study_pas", "n_pas", "mean_study_ecs", "n_ecs", "cost"):
        assert page[column].to_numpy(dtype=float) == pytest.approx(
            board[column].to_numpy(dtype=float), abs=1e-12, nan_ok=True), column


def test_real_published_leaderboard_equals_the_catalog_table(monkeypatch) -> None:

    real = ROOT / "sample_data" / "real" / "humanstudy-bench" / "simple_results.json"
    at = open_page(monkeypatch, f"--no-samples {real}")
    run = load_run(real)
    ((_, board),) = families.main_table("replication_summary").objects(run.frame)
    page = table(at, "rank_text", "config_pas")
    assert page["model"].tolist() == board["model"].tolist()
    assert page["rank_text"].tolist() == board["rank_text"].tolist()
    # the rank sits beside its interval, and the interval is the core's rank_text
    assert page.columns[:3].tolist() == ["rank", "rank_text", "model"]
    first = board.iloc[0]
    assert page["rank_text"].iloc[0].startswith(f"{first['rank']:g} [")
    for column in ("config_pas", "config_ecs", "mean_study_pas", "mean_study_ecs", "cost"):
        assert page[column].to_numpy(dtype=float) == pytest.approx(
            board[column].to_numpy(dtype=float), abs=1e-12, nan_ok=True), column


def test_a_link_sets_the_widgets_and_they_show_what_the_charts_use(monkeypatch,
                                                                   tmp_path) -> None:
    # A link sets the options, the colouring, the panels and the summary heat table; the user
    # then replaces the sample run with another. Every widget shows the value the tables and
    # figures use, and the URL says the same.
    frame = load_run(ROOT / "sample_data" / "replication.csv").frame
    other = tmp_path / "rerun.csv"
    renamed = frame.assign(model=frame["model"].astype(str).str.replace("synthetic", "other"))
    renamed.to_csv(other, index=False)
    monkeypatch.setenv("KBENCH_APP_ARGS", str(other))
    state._cached_load.clear()
    at = AppTest.from_file(str(ROOT / "views" / "replication.py"), default_timeout=120)
    link = {"rep_runs": "replication", "rep_weighting": "equal", "rep_normalize": "0",
            "rep_ci": "bootstrap", "rep_finding_weights": "n_eff", "rep_pooling": "mean",
            "rep_color": "domain", "rep_panels": "0", "rep_summary_metric": "ecs",
            "rep_models": [SHIFTED, "synthetic-agent-mirror"]}
    for key, value in link.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]

    def in_use(run_frame: pd.DataFrame, models: list[str]) -> None:
        assert at.multiselect(key="rep_models").value == models
        for key in ("rep_weighting", "rep_ci", "rep_finding_weights", "rep_pooling",
                    "rep_color", "rep_summary_metric"):
            assert at.radio(key=key).value == link[key], key
            assert at.query_params[key] in (link[key], [link[key]]), key
        assert at.toggle(key="rep_normalize").value is False
        assert at.toggle(key="rep_panels").value is False
        assert sorted(at.query_params["rep_models"]) == sorted(models)
        rows = run_frame[run_frame["model"].astype(str).isin(models)]
        # the ECS table uses equal weights, unnormalised, bootstrap intervals
        want = replication.ecs(rows, weighting="equal", normalize_weights=False,
                               ci="bootstrap").set_index("model")
        shown = table(at, "ecs", "ecs_ci", without=("domain", "study")).set_index("model")
        assert sorted(shown.index) == sorted(models)
        assert shown["ecs"].to_dict() == pytest.approx(want["ecs"].to_dict())
        assert shown["ecs_ci"].to_dict() == {m: ci_text(want.loc[m, "ecs_low"],
                                                        want.loc[m, "ecs_high"])
                                             for m in models}
        # the PAS table uses n_eff weights and the simple mean
        want_pas = replication.pas(rows, finding_weights="n_eff", study_pooling="mean",
                                   ci=None).model.set_index("model")["pas"]
        pas = table(at, "pas", "pas_ci").set_index("model")["pas"]
        assert pas.to_dict() == pytest.approx(want_pas.to_dict())
        # the scatter: coloured by domain, one overlaid panel, equal marker sizes
        scatter = chart_figure(at, "rep_scatter_chart")
        markers = [t for t in scatter.data if t.mode == "markers"]
        assert {t.name for t in markers} == set(rows["domain"].astype(str))
        assert "xaxis2" not in scatter.layout  # one panel: the models overlaid
        sizes = {s for t in markers for s in values(t.marker.size)}
        assert len(sizes) == 1  # equal weights: every marker the same size
        assert sum(len(values(t.x)) for t in markers) == len(rows)
        # the published heat table shows ECS
        heat = chart_figure(at, "rep_summary_heat_chart")
        assert heat.layout.title.text.startswith("ECS")

    in_use(frame, [SHIFTED, "synthetic-agent-mirror"])
    at.multiselect(key="rep_runs").set_value(["rerun"]).run()
    assert not at.exception, [e.value for e in at.exception]
    # the models belong to the run: a new run offers (and shows) all of its models
    in_use(renamed, sorted(renamed["model"].unique()))


def test_the_users_own_published_results_come_before_the_bundled_per_test_run(
        monkeypatch) -> None:
    """Started on the samples with the user's own simple_studies.csv (a file given to `kbench
    app`, or a workspace run in a later session): the page opened on the bundled synthetic
    per-test run and put the user's published results 4,000 px below it (issue-37
    walkthrough; item 5's complaint outside the upload session)."""
    studies = ROOT / "sample_data" / "real" / "humanstudy-bench" / "simple_studies.csv"
    at = open_page(monkeypatch, str(studies))
    assert [s.value for s in at.subheader][:2] == ["Published results", "Per-test runs"]
    assert at.selectbox(key="rep_summary_run").value == "simple_studies"
    # the samples alone: the per-test run first, as before
    plain = open_page(monkeypatch, "")
    assert plain.subheader[0].value != "Published results"


def test_of_the_users_published_files_one_with_a_leaderboard_opens_the_section(
        monkeypatch) -> None:
    """`kbench app simple_findings.csv simple_studies.csv`: the section opened on
    simple_findings (finding rows only: no leaderboard, a note and a raw table), the file
    given first, with the file that has one a click away (issue-37 walkthrough)."""
    real = ROOT / "sample_data" / "real" / "humanstudy-bench"
    at = open_page(monkeypatch, f"{real / 'simple_findings.csv'} {real / 'simple_studies.csv'}")
    assert at.selectbox(key="rep_summary_run").value == "simple_studies"
