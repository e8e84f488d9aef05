"""Headless tests of the dashboard with streamlit.testing.v1.AppTest."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from kbench_app import state
from kbench_core import families
from kbench_core.io import load_run

ROOT = Path(__file__).resolve().parent.parent
GOOD = (b"model,bias,condition,intensity,domain,score\n"
        b"m1,anchoring_effect,treatment,weak,social,1\n"
        b"m1,anchoring_effect,control,,social,0\n")
BAD = GOOD.replace(b"social,1", b"social,yes")


def start(monkeypatch: pytest.MonkeyPatch, args: str = "--no-samples") -> AppTest:
    monkeypatch.setenv("KBENCH_APP_ARGS", args)
    state._cached_load.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def registry(at: AppTest):
    return at.session_state[state.REGISTRY]


def test_opens_on_the_bundled_sample_runs(monkeypatch) -> None:
    at = start(monkeypatch, "")
    names = list(registry(at).runs)
    # one synthetic run per registered family's sample file (registry order), then the real
    # benchmark outputs
    by_file = {name: family.kind for family in families.all_families()
               for name in family.sample_files}
    expected = [Path(name).stem for name in state.SAMPLE_FILES]
    assert names == [*expected, "kahnebench", "simple_results"]
    kinds = [run.kind for run in registry(at).runs.values()]
    assert kinds == [*(by_file[name] for name in state.SAMPLE_FILES),
                     "bias_summary", "replication_summary"]
    assert at.title[0].value == "Runs"
    total = len(state.SAMPLE_FILES) + len(state.REAL_SAMPLES)
    assert f"{total} runs loaded" in at.subheader[0].value


def test_upload_good_and_bad_file_together(monkeypatch) -> None:
    at = start(monkeypatch)
    assert "0 runs loaded" in at.subheader[0].value
    at.file_uploader(key="runs_uploader").set_value(
        [("good_run.csv", GOOD, "text/csv"), ("bad.csv", BAD, "text/csv")]).run()
    assert not at.exception
    assert list(registry(at).runs) == ["good_run"]
    assert "1 run loaded" in at.subheader[0].value
    # Markdown-escaped, so a file name never renders as markup.
    assert at.error[0].value == "Could not load **bad\\.csv**"
    assert at.code[0].value == "bad.csv: line 2, field 'score': expected a number in [0, 1], " \
                               "got 'yes'"
    summary = at.dataframe[0].value
    assert summary["name"].tolist() == ["good_run"] and summary["kind"].tolist() == ["bias"]


def test_bad_file_later_keeps_loaded_runs_and_can_be_dismissed(monkeypatch) -> None:
    at = start(monkeypatch)
    uploader = at.file_uploader(key="runs_uploader")
    uploader.set_value([("good_run.csv", GOOD, "text/csv")]).run()
    assert at.title[0].value == "Cognitive biases"  # one new run opens on its page
    at.switch_page("views/runs.py").run()
    uploader = at.file_uploader(key="runs_uploader")
    uploader.upload("broken.json", b'[{"model": "m"', "application/json").run()
    assert list(registry(at).runs) == ["good_run"]
    assert "truncated JSON" in at.code[0].value
    at.button(key="dismiss::broken.json").click().run()
    assert not at.error and list(registry(at).runs) == ["good_run"]


def test_the_same_bytes_load_in_every_session(monkeypatch) -> None:
    # Issue 24.1: a second session (another browser, or F5) uploading bytes a first session
    # had uploaded got "Could not load ... (CacheReplayClosureError)" until a restart.
    data = GOOD + b"m9,framing_effect,control,,risk,0\n"
    first = start(monkeypatch)
    first.file_uploader(key="runs_uploader").set_value([("same.csv", data, "text/csv")]).run()
    assert list(registry(first).runs) == ["same"]
    for _ in range(2):  # the cache is not cleared between these sessions
        other = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
        other.run()
        assert registry(other).runs == {}  # a new session starts without the others' runs
        other.file_uploader(key="runs_uploader").set_value(
            [("same.csv", data, "text/csv")]).run()
        assert not other.exception, [e.value for e in other.exception]
        assert registry(other).errors == {}
        assert list(registry(other).runs) == ["same"]
        assert other.title[0].value == "Cognitive biases"
        # Loaded once: every session holds the parsed run from the shared cache.
        assert registry(other).runs["same"].frame is registry(first).runs["same"].frame
    assert list(registry(first).runs) == ["same"]


def test_a_folder_run_lists_its_size(monkeypatch) -> None:
    # Issue 24.12: the Runs table showed size "None" for a run loaded from a folder.
    folder = ROOT / "sample_data" / "real" / "kahnebench"
    at = start(monkeypatch, f"--no-samples {folder}")
    summary = at.dataframe[0].value
    # the bytes of the files read (the reports; the LICENSE is skipped unread, issue 29)
    size = sum(p.stat().st_size for p in folder.glob("*.json"))
    assert summary["name"].tolist() == ["kahnebench"]
    assert summary["size_kb"].tolist() == [round(size / 1024, 1)]


def _reports() -> list[tuple[str, bytes, str]]:
    folder = ROOT / "sample_data" / "real" / "kahnebench"
    return [(p.name, p.read_bytes(), "application/json")
            for p in sorted(folder.glob("fingerprint_*.json"))]


def test_the_reports_of_a_folder_uploaded_together_are_one_run(monkeypatch) -> None:
    # Issue 24.8: the 11 KahneBench fingerprint reports uploaded at once made 11 runs and
    # the bias page opened on one of them.
    at = start(monkeypatch)
    at.file_uploader(key="runs_uploader").set_value(_reports()).run()
    assert not at.exception, [e.value for e in at.exception]
    (run,) = registry(at).runs.values()
    assert run.name == "fingerprint" and len(run.models) == 11
    assert run.meta["format"] == "KahneBench fingerprint reports (11 files)"
    assert at.title[0].value == "Cognitive biases"  # one run: its page opens on it
    at.switch_page("views/runs.py").run()
    assert "1 run loaded" in at.subheader[0].value
    assert at.dataframe[0].value["source"].tolist() == ["11 files"]


def test_the_reports_can_be_kept_as_separate_runs(monkeypatch) -> None:
    at = start(monkeypatch)
    at.toggle(key="runs_group_uploads").set_value(False).run()
    at.file_uploader(key="runs_uploader").set_value(_reports()).run()
    assert not at.exception, [e.value for e in at.exception]
    assert len(registry(at).runs) == 11
    assert at.toggle(key="runs_group_uploads").value is False


def test_a_run_of_files_uploaded_together_can_be_split(monkeypatch) -> None:
    at = start(monkeypatch)
    at.file_uploader(key="runs_uploader").set_value(_reports()).run()
    at.switch_page("views/runs.py").run()
    assert list(registry(at).runs) == ["fingerprint"]
    at.button(key="split::fingerprint").click().run()
    assert not at.exception, [e.value for e in at.exception]
    names = list(registry(at).runs)
    assert len(names) == 11 and names[0] == "fingerprint_fable5"
    assert all(len(run.models) == 1 for run in registry(at).runs.values())
    assert "11 runs loaded" in at.subheader[0].value


def test_a_family_page_opens_on_every_run_of_its_kinds(monkeypatch, tmp_path) -> None:
    # Issue 24.8: a family page chose only the first loaded run.
    other = tmp_path / "other.csv"
    other.write_bytes(GOOD.replace(b"m1", b"m2"))
    at = start(monkeypatch, f"--no-samples {ROOT / 'sample_data' / 'bias.csv'} {other}")
    at.switch_page("views/bias.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.multiselect(key="bias_runs").value == ["bias", "other"]


def test_remove_a_run(monkeypatch, tmp_path) -> None:
    path = tmp_path / "from_cli.csv"
    path.write_bytes(GOOD)
    at = start(monkeypatch, f"--no-samples {path}")
    assert list(registry(at).runs) == ["from_cli"]
    at.button(key="remove::from_cli").click().run()
    assert registry(at).runs == {}
    assert "0 runs loaded" in at.subheader[0].value


def test_workspace_keeps_uploads_across_sessions(monkeypatch, tmp_path) -> None:
    ws = tmp_path / "ws"
    at = start(monkeypatch, f"--no-samples --workspace {ws}")
    at.file_uploader(key="runs_uploader").set_value([("kept.csv", GOOD, "text/csv")]).run()
    assert len(list(ws.glob("*.parquet"))) == 1
    again = start(monkeypatch, f"--no-samples --workspace {ws}")
    assert list(registry(again).runs) == ["kept"]
    again.button(key="remove::kept").click().run()
    assert list(ws.iterdir()) == []


def test_names_with_markup_are_shown_as_text(monkeypatch) -> None:
    at = start(monkeypatch)
    payload = b"model,bias,condition,domain,score\n<b>bold</b>,b,control,d,0\n"
    at.file_uploader(key="runs_uploader").set_value(
        [("**star**.csv", payload, "text/csv")]).run()
    assert not at.exception, [e.value for e in at.exception]
    assert list(registry(at).runs) == ["**star**"]
    at.switch_page("views/runs.py").run()
    expander_label = at.expander[0].label
    assert expander_label.startswith("\\*\\*star\\*\\*")
    assert "Models: <b>bold</b>" in at.text[0].value


def test_bias_page_widgets_change_the_numbers(monkeypatch) -> None:
    monkeypatch.setenv("KBENCH_APP_ARGS", "")
    state._cached_load.clear()
    at = AppTest.from_file(str(ROOT / "views" / "bias.py"), default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == "Cognitive biases"
    summary = at.dataframe[0].value.set_index("model")
    assert summary.loc["synthetic-alpha", "susceptibility"] == pytest.approx(
        (0.6344 + 0.5008 + 0.3472) / 3)
    assert len(at.get("plotly_chart")) == 6  # fingerprint, curves, heatmap, HAS, CAS, forest
    # Lifting the cap raises alpha's weak magnitude from 1 to 1.6 and so its BMS.
    at.toggle(key="bias_cap").set_value(False).run()
    uncapped = at.dataframe[0].value.set_index("model")
    assert uncapped.loc["synthetic-alpha", "susceptibility"] > summary.loc[
        "synthetic-alpha", "susceptibility"]
    at.multiselect(key="bias_models").set_value(["synthetic-beta"]).run()
    assert at.dataframe[0].value["model"].tolist() == ["synthetic-beta"]


def bias_page(monkeypatch, args: str = "") -> AppTest:
    """The bias page alone; its data frames are, in order: model summary, fingerprint, ...,
    responses (AppTest does not expose data frames by key)."""
    monkeypatch.setenv("KBENCH_APP_ARGS", args)
    state._cached_load.clear()
    at = AppTest.from_file(str(ROOT / "views" / "bias.py"), default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_bias_page_bootstrap_families_and_drill_down(monkeypatch) -> None:
    at = bias_page(monkeypatch)
    table = at.dataframe[1].value
    assert "bms_ci" not in table and table["model_rate_ci"].str.startswith("[").all()
    # grouped by family, then bias
    assert list(table["category"]) == sorted(table["category"])
    at.toggle(key="bias_bootstrap").set_value(True).run()
    table = at.dataframe[1].value
    assert (table["bms_ci"].str.startswith("[")).all()
    # one family only: the bias list and the table follow
    family = sorted(table["category"].unique())[0]
    at.multiselect(key="bias_categories").set_value([family]).run()
    table = at.dataframe[1].value
    assert set(table["category"]) == {family}
    # drill-down search over prompt, response and answer
    rows = at.dataframe[-1].value
    word = str(rows["response"].iloc[0]).split()[0]
    at.text_input(key="bias_drill_search").input(word).run()
    found = at.dataframe[-1].value
    assert 0 < len(found) <= len(rows)
    at.text_input(key="bias_drill_search").input("no response says this").run()
    assert at.dataframe[-1].value.empty


def test_bias_page_views_two_runs_together(monkeypatch, tmp_path) -> None:
    other = tmp_path / "rerun.csv"
    other.write_text((ROOT / "sample_data" / "bias.csv").read_text().replace(
        "synthetic-gamma", "synthetic-delta"))
    at = bias_page(monkeypatch, f"{other}")
    at.multiselect(key="bias_runs").set_value(["bias", "rerun"]).run()
    assert not at.exception
    models = set(at.dataframe[0].value["model"])
    # alpha and beta are in both runs: told apart by run; gamma and delta are unique
    assert {"synthetic-alpha (bias)", "synthetic-alpha (rerun)", "synthetic-gamma",
            "synthetic-delta"} <= models


def test_bias_page_view_lives_in_the_url(monkeypatch) -> None:
    monkeypatch.setenv("KBENCH_APP_ARGS", "")
    state._cached_load.clear()
    at = AppTest.from_file(str(ROOT / "views" / "bias.py"), default_timeout=60)
    at.query_params["bias_models"] = ["synthetic-beta", "not-a-model"]
    at.query_params["bias_cap"] = "0"
    at.query_params["bias_threshold"] = "0.25"
    at.query_params["bias_runs"] = ["bias", "someone-elses-upload"]
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.multiselect(key="bias_models").value == ["synthetic-beta"]  # unknown name dropped
    assert at.toggle(key="bias_cap").value is False
    assert at.slider(key="bias_threshold").value == 0.25
    assert any("someone" in w.value and "upload its file again" in w.value for w in at.warning)
    # and the URL follows the widgets
    at.multiselect(key="bias_models").set_value(["synthetic-alpha", "synthetic-beta"]).run()
    assert at.query_params["bias_models"] == ["synthetic-alpha", "synthetic-beta"]
    assert at.query_params["bias_cap"] == ["0"] or at.query_params["bias_cap"] == "0"


def test_bad_url_values_are_ignored_not_crashing(monkeypatch) -> None:
    monkeypatch.setenv("KBENCH_APP_ARGS", "")
    state._cached_load.clear()
    at = AppTest.from_file(str(ROOT / "views" / "bias.py"), default_timeout=60)
    at.query_params["bias_threshold"] = "9999"
    at.query_params["bias_std"] = "<script>"
    at.query_params["bias_cap"] = "maybe"
    at.run()
    assert not at.exception
    assert at.slider(key="bias_threshold").value == 0.1
    assert at.radio(key="bias_std").value == "population"
    assert at.toggle(key="bias_cap").value is True


def test_export_page_builds_a_zip(monkeypatch) -> None:
    import shutil

    if not shutil.which("chromium"):
        pytest.skip("figure export needs Debian's chromium")
    monkeypatch.setenv("KBENCH_APP_ARGS", "")
    state._cached_load.clear()
    at = AppTest.from_file(str(ROOT / "views" / "export.py"), default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    at.multiselect(key="export_runs").set_value(["bias"]).run()
    at.multiselect(key="export_items").set_value(["fingerprint", "cas_bars"]).run()
    at.multiselect(key="export_figure_formats").set_value(["svg"]).run()
    at.button(key="export_build").click().run()
    assert not at.exception, [e.value for e in at.exception]
    import io
    import zipfile

    names = zipfile.ZipFile(io.BytesIO(at.session_state[state.EXPORT_ZIP])).namelist()
    assert sorted(names) == ["bias/cas_bars.svg", "bias/fingerprint.csv",
                             "bias/fingerprint.tex", "provenance.json"]


def test_demo_mode_shows_the_guided_tour(monkeypatch) -> None:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    monkeypatch.setenv("KBENCH_APP_ARGS", "--demo")
    state._cached_load.clear()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("Guided tour" in m.value for m in at.markdown)
    # the demo opens each family page on the real released runs
    assert list(at.session_state[state.REGISTRY].runs)[:2] == ["kahnebench", "simple_results"]
    at.switch_page("views/bias.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.radio(key="bias_source").value == "reports"
    assert at.multiselect(key="bias_report_runs").value == ["kahnebench"]
    board = at.dataframe[0].value
    assert len(board) == 11 and board["susceptibility"].notna().all()
    at.switch_page("views/replication.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.subheader[0].value == "Published results"
    assert at.selectbox(key="rep_summary_run").value == "simple_results"
    plain_start = start(monkeypatch, "")
    assert not any("Guided tour" in m.value for m in plain_start.markdown)


def test_a_model_keeps_its_colour_when_runs_are_added(monkeypatch, tmp_path) -> None:
    other = tmp_path / "later.csv"
    other.write_text("model,bias,condition,intensity,domain,score\n"
                     "aaa-first-in-order,anchoring_effect,control,,d,0\n")
    monkeypatch.setenv("KBENCH_APP_ARGS", f"{other}")
    at = AppTest.from_file(str(ROOT / "views" / "bias.py"), default_timeout=60)
    at.session_state["bias_runs"] = ["bias"]  # the sample alone first
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    before = dict(at.session_state[state.COLORS])
    at.multiselect(key="bias_runs").set_value(["bias", "later"]).run()
    # the two runs score different biases: each is ranked apart unless asked (issue 37)
    at.radio(key="bias_group").set_value("all").run()
    after = at.session_state[state.COLORS]
    assert all(after[m] == c for m, c in before.items())
    assert after["aaa-first-in-order"] not in before.values()


def test_bias_page_compare_panel_verdict_follows_the_models(monkeypatch) -> None:
    from kbench_core import compare

    at = bias_page(monkeypatch)
    at.selectbox(key="bias_cmp_a").set_value("synthetic-gamma").run()
    at.selectbox(key="bias_cmp_b").set_value("synthetic-alpha").run()
    verdicts = [s.value for s in at.success] + [i.value for i in at.info]
    trials = compare.per_item_values(load_trials(), "bias")
    # the family's quantity: per bias, treatment mean − control mean, paired by bias
    est = compare.paired_difference(trials, "treatment_minus_control", "synthetic-gamma",
                                    "synthetic-alpha")
    assert est.high < 0  # gamma planted unbiased: a clearly smaller effect
    assert any("synthetic\\-gamma scores lower than synthetic\\-alpha" in v
               and "better" in v for v in verdicts), verdicts
    assert at.metric[0].value == f"{est.value:+.3f}"
    at.selectbox(key="bias_cmp_b").set_value("synthetic-gamma").run()
    assert any("two different models" in w.value for w in at.warning)


def load_trials():
    from kbench_core.io import load_run

    return load_run(ROOT / "sample_data" / "bias.csv").frame


def test_bias_summary_shows_rank_intervals(monkeypatch) -> None:
    at = bias_page(monkeypatch)
    summary = at.dataframe[0].value.set_index("model")
    # gamma is planted unbiased on every bias: first in every resample
    assert summary.loc["synthetic-gamma", "rank_text"] == "1 [1, 1] · few biases"  # 6 < 30
    assert summary.loc["synthetic-alpha", "rank"] == 3


def test_bias_widgets_show_the_values_in_use_after_the_run_changes(monkeypatch,
                                                                   tmp_path) -> None:
    # A link sets the curve's bias and y axis; replacing the run keeps a valid choice and the
    # chart plots what the widgets show.
    import json

    other = tmp_path / "rerun.csv"
    other.write_text((ROOT / "sample_data" / "bias.csv").read_text())
    monkeypatch.setenv("KBENCH_APP_ARGS", str(other))
    state._cached_load.clear()
    at = AppTest.from_file(str(ROOT / "views" / "bias.py"), default_timeout=60)
    biases = sorted(load_run(ROOT / "sample_data" / "bias.csv").frame["bias"].unique())
    at.query_params["bias_curve_bias"] = biases[-1]
    at.query_params["bias_curve_y"] = "mean"
    at.query_params["bias_threshold"] = "0.3"
    at.run()
    assert not at.exception, [e.value for e in at.exception]

    def in_use() -> None:
        assert at.selectbox(key="bias_curve_bias").value == biases[-1]
        assert at.radio(key="bias_curve_y").value == "mean"
        assert at.slider(key="bias_threshold").value == 0.3
        assert at.query_params["bias_curve_bias"] in (biases[-1], [biases[-1]])
        curve = next(json.loads(c.proto.spec) for c in at.get("plotly_chart")
                     if c.proto.id.endswith("bias_curves_chart"))
        assert biases[-1] in json.dumps(curve["layout"]["title"])
        assert "mean" in json.dumps(curve["layout"]["yaxis"]["title"]).lower()

    in_use()
    at.multiselect(key="bias_runs").set_value(["rerun"]).run()
    assert not at.exception, [e.value for e in at.exception]
    in_use()


def test_bias_page_fingerprint_equals_the_catalog_table(monkeypatch) -> None:

    at = bias_page(monkeypatch)
    run = load_run(ROOT / "sample_data" / "bias.csv")
    ((_, exported),) = families.main_table("bias").objects(run.frame)
    page = at.dataframe[1].value.set_index(["bias", "model"])
    exported = exported.set_index(["bias", "model"]).loc[page.index]
    for metric in ("bms", "model_rate", "alignment", "bci_consistency", "rci_consistency",
                   "calibration_score", "effectiveness", "n"):
        assert page[metric].to_numpy(dtype=float) == pytest.approx(
            exported[metric].to_numpy(dtype=float), abs=1e-12, nan_ok=True), metric
    # and the model summary is the catalog's susceptibility table
    summary = dict(families.items_for("bias")[1].objects(run.frame))["susceptibility"]
    shown = at.dataframe[0].value
    assert shown["model"].tolist() == summary["model"].tolist()
    assert shown["susceptibility"].to_numpy() == pytest.approx(
        summary["susceptibility"].to_numpy())


def test_runs_page_marks_a_saved_run_whose_file_was_replaced(monkeypatch, tmp_path) -> None:
    # Issue 29 item 6: the start reads only the sidecars; the Runs page reads the runs it
    # shows, and a file replaced behind kbench's back is named there, never a crash.
    from kbench_app.registry import RunRegistry
    from kbench_core.workspace import Workspace

    ws = tmp_path / "ws"
    RunRegistry(workspace=Workspace(ws)).add_files(
        [("kept.csv", GOOD), ("other.csv", GOOD.replace(b"m1", b"m2"))])
    kept = next(ws.glob("kept*.parquet"))
    kept.write_bytes(load_run(("x.csv", GOOD.replace(b"m1", b"m9"))).frame.to_parquet())
    at = start(monkeypatch, f"--no-samples --workspace {ws}")
    assert sorted(registry(at).runs) == ["kept", "other"]  # oldest file first
    labels = {e.label.split(" · ")[0]: e.label for e in at.expander}
    assert labels["kept"].endswith("cannot be used")
    assert not labels["other"].endswith("cannot be used")
    assert any(c.value.startswith(kept.name) and "SHA-256 differs" in c.value for c in at.code)
    at.run()  # the next draw lists it in the table too
    assert not at.exception
    summary = at.dataframe[0].value.set_index("name")
    assert "SHA-256 differs" in summary.loc["kept", "problem"]
    assert summary.loc["other", "problem"] == ""


def test_a_family_page_runs_without_a_saved_run_whose_file_was_replaced(monkeypatch,
                                                                         tmp_path) -> None:
    # A saved run is validated when a page first uses it: a replaced file is named there and
    # left out; the page draws the other runs.
    from kbench_app.registry import RunRegistry
    from kbench_core.workspace import Workspace

    ws = tmp_path / "ws"
    bias = (ROOT / "sample_data" / "bias.csv").read_bytes()
    RunRegistry(workspace=Workspace(ws)).add_files(
        [("kept.csv", bias), ("other.csv", bias.replace(b"synthetic-gamma", b"synthetic-d"))])
    kept = next(ws.glob("kept*.parquet"))
    kept.write_bytes(load_run(("x.csv", GOOD)).frame.to_parquet())
    at = bias_page(monkeypatch, f"--no-samples --workspace {ws}")
    assert sorted(at.multiselect(key="bias_runs").value) == ["kept", "other"]
    assert any("kept" in e.value and "cannot be used" in e.value for e in at.error)
    assert at.dataframe and "synthetic-d" in set(at.dataframe[0].value["model"])
