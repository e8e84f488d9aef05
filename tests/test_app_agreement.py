"""The Judge agreement page under streamlit.testing.v1.AppTest."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from kbench_app import state
from kbench_core import agreement, samples
from kbench_core.io import load_run

ROOT = Path(__file__).resolve().parent.parent
PAGE = str(ROOT / "views" / "agreement.py")


def page(monkeypatch: pytest.MonkeyPatch, args: str = "") -> AppTest:
    monkeypatch.setenv("KBENCH_APP_ARGS", args)
    state._cached_load.clear()
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _decoded(value):
    """Plotly's typed arrays ({"dtype", "bdata", "shape"}) back to nested lists."""
    if isinstance(value, dict) and "bdata" in value:
        array = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        shape = [int(s) for s in str(value.get("shape", len(array))).split(",")]
        return array.reshape(shape).tolist()
    if isinstance(value, dict):
        return {k: _decoded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_decoded(v) for v in value]
    return value


def charts(at: AppTest) -> list[dict]:
    """The page's figures as plain dicts."""
    return [_decoded(json.loads(chart.proto.spec)) for chart in at.get("plotly_chart")]


def metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def write_csv(tmp_path: Path, name: str, frame: pd.DataFrame) -> Path:
    path = tmp_path / f"{name}.csv"
    path.write_text(frame.to_csv(index=False))
    return path


def test_page_shows_the_heatmap_and_the_coefficients_of_the_sample_run(monkeypatch) -> None:
    at = page(monkeypatch)
    assert at.title[0].value == "Judge agreement"
    judged = load_run(ROOT / "sample_data" / "judged.csv").frame
    fleiss = agreement.fleiss_kappa(judged, "target_found")
    alpha = agreement.krippendorff_alpha(judged, "target_found")
    percent = agreement.percent_agreement(judged, "target_found")
    assert metric(at, "Fleiss' κ") == f"{fleiss.value:.3f}"
    assert metric(at, "Krippendorff's α (nominal)") == f"{alpha.value:.3f}"
    assert metric(at, "Percent agreement") == f"{percent.value:.3f}"
    assert any(c.value.startswith(f"95% CI [{fleiss.low:.3f}, {fleiss.high:.3f}]")
               for c in at.caption)
    figures = charts(at)
    heat = figures[0]["data"][0]
    assert heat["type"] == "heatmap"
    assert heat["x"] == ["judge-one", "judge-three", "judge-two"] and heat["zmid"] == 0
    pairs = agreement.pairwise_kappa(judged, "target_found")
    assert heat["z"][0][1] == pytest.approx(pairs["kappa"].iloc[0])
    # Landis & Koch bands as badges: 0.839 and 0.840 are above 0.80.
    assert [m.value for m in at.markdown][:2] == [":green-badge[almost perfect]"] * 2
    # heatmap, per-label bars, spread across judges, confusion matrix of two judges
    assert [f["data"][0]["type"] for f in figures] == ["heatmap", "bar", "bar", "heatmap"]
    assert [s.value for s in at.subheader] == [
        "Agreement on target_found", "Agreement on every label",
        "How much the judge moves the score", "Consensus leaderboard",
        "Two judges side by side", "Disagreements"]


def test_consensus_leaderboard_and_spread(monkeypatch) -> None:
    at = page(monkeypatch)
    judged = load_run(ROOT / "sample_data" / "judged.csv").frame
    boards = [d.value for d in at.dataframe if "sui" in d.value and "model" in d.value]
    board = boards[0].set_index("model")
    planted = samples.planted_judged().set_index(["judge", "model"]).loc["judge-one"]
    assert board["tdr"].to_dict() == pytest.approx(planted["tdr"].to_dict())
    spread = next(d.value for d in at.dataframe if "range" in d.value)
    tdr = spread[spread["metric"] == "tdr"].set_index("model")["range"]
    assert tdr["synthetic-detector-sharp"] == pytest.approx(1 - 22 / 28)
    assert len(judged) == 1080
    at.slider(key="agr_min_votes").set_value(3).run()
    assert not at.exception
    unanimous = next(d.value for d in at.dataframe if "sui" in d.value and "model" in d.value)
    # all three must agree: judge-three's lost targets are lost for the consensus too
    assert unanimous.set_index("model").loc["synthetic-detector-sharp", "tdr"] == \
        pytest.approx(22 / 28)
    assert any("answers had no majority" in c.value for c in at.caption)


def test_label_weights_and_numeric_labels(monkeypatch) -> None:
    at = page(monkeypatch)
    judged = load_run(ROOT / "sample_data" / "judged.csv").frame
    at.selectbox(key="agr_label").set_value("type_match").run()
    assert not at.radio(key="agr_weights").disabled
    at.radio(key="agr_weights").set_value("quadratic").run()
    assert not at.exception
    pairs = agreement.pairwise_kappa(judged, "type_match", weights="quadratic")
    assert charts(at)[0]["data"][0]["z"][0][1] == pytest.approx(pairs["kappa"].iloc[0])
    assert metric(at, "Krippendorff's α (ordinal)") == (
        f"{agreement.krippendorff_alpha(judged, 'type_match', level='ordinal').value:.3f}")
    at.selectbox(key="agr_label").set_value("rcir").run()
    assert not at.exception
    assert at.radio(key="agr_weights").disabled
    assert not any(m.label == "Fleiss' κ" for m in at.metric)
    assert any("Fleiss' κ is for categories" in c.value for c in at.caption)
    heat = charts(at)[0]
    assert heat["data"][0]["type"] == "heatmap" and "α" in heat["layout"]["title"]["text"]


def test_disagreement_filters_and_drill_down(monkeypatch) -> None:
    at = page(monkeypatch)
    judged = load_run(ROOT / "sample_data" / "judged.csv").frame
    expected = agreement.disagreements(judged, "target_found")
    table = at.dataframe[-2].value
    assert len(table) == len(expected) == 42
    at.multiselect(key="agr_dis_models").set_value(["synthetic-detector-timid"]).run()
    table = at.dataframe[-2].value
    assert set(table["model"]) == {"synthetic-detector-timid"}
    assert len(table) == (expected["model"] == "synthetic-detector-timid").sum()
    at.multiselect(key="agr_dis_prompts").set_value(["direct"]).run()
    table = at.dataframe[-2].value
    assert set(table["prompt_type"]) == {"direct"}
    assert len(table) == ((expected["model"] == "synthetic-detector-timid")
                          & (expected["prompt_type"] == "direct")).sum()
    record = at.dataframe[-1].value
    assert list(record.columns) == ["field", "judge-one", "judge-three", "judge-two"]
    found = record.set_index("field").loc["target_found"]
    assert found["judge-one"] != found["judge-three"]
    at.selectbox(key="agr_dis_label").set_value("n_bonus_valid").run()
    assert not at.exception
    assert any(c.value.startswith("0 answers") for c in at.caption)


def test_expert_labels_are_compared_separately(monkeypatch, tmp_path) -> None:
    judged = samples.judged_samples(n_samples=10)
    expert = judged[judged["judge"] == "judge-two"].copy()
    expert["judge"] = "human"
    combined = pd.concat([judged.astype({"judge": str}), expert.astype({"judge": str})])
    path = write_csv(tmp_path, "with_expert", combined)
    at = page(monkeypatch, f"--no-samples {path}")
    assert "Against the expert labels" in [s.value for s in at.subheader]
    human = next(d.value for d in at.dataframe if "judge" in d.value and "band" in d.value)
    assert human["judge"].tolist() == ["judge-one", "judge-three", "judge-two"]
    assert human.set_index("judge").loc["judge-two", "kappa"] == pytest.approx(1.0)
    heat = charts(at)[0]["data"][0]
    assert heat["x"][-1] == "human"
    loaded = load_run(path).frame
    assert metric(at, "Fleiss' κ") == f"{agreement.fleiss_kappa(loaded, 'target_found').value:.3f}"


def test_single_judge_runs_get_a_message(monkeypatch, tmp_path) -> None:
    one = samples.judged_samples(n_samples=4, judges=("judge-one",))
    path = write_csv(tmp_path, "one_judge", one)
    at = page(monkeypatch, f"--no-samples {path}")
    assert "single judge" in at.info[0].value
    assert not at.get("plotly_chart")
    nothing = page(monkeypatch, "--no-samples")
    assert "No judged" in nothing.info[0].value


def test_one_llm_judge_and_an_expert(monkeypatch, tmp_path) -> None:
    one = samples.judged_samples(n_samples=6, judges=("judge-one", "human"))
    path = write_csv(tmp_path, "one_and_expert", one)
    at = page(monkeypatch, f"--no-samples {path}")
    assert any("Only one LLM judge" in i.value for i in at.info)
    assert "Against the expert labels" in [s.value for s in at.subheader]


def test_view_lives_in_the_url(monkeypatch) -> None:
    monkeypatch.setenv("KBENCH_APP_ARGS", "")
    state._cached_load.clear()
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.query_params["agr_label"] = "type_match"
    at.query_params["agr_weights"] = "linear"
    at.query_params["agr_min_votes"] = "99"   # out of range: ignored
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="agr_label").value == "type_match"
    assert at.radio(key="agr_weights").value == "linear"
    assert at.slider(key="agr_min_votes").value == 2
    at.selectbox(key="agr_label").set_value("rcir").run()
    assert at.query_params["agr_label"] in ("rcir", ["rcir"])


def multi_judge_records() -> list[dict]:
    """BlockBench's multi-judge JSON list (SPEC 1.3): 8 samples x 2 detectors x 3 judges, the
    third judge missing the target on every fourth sample, one failed judgement (``error``)
    and expert labels for detector-a."""
    records = []
    for s in range(8):
        for detector in ("detector-a", "detector-b"):
            for judge in ("judge-x", "judge-y", "judge-z", "human"):
                if judge == "human" and detector == "detector-b":
                    continue
                found = not (judge == "judge-z" and s % 4 == 0) and (s + len(detector)) % 3 > 0
                record = {
                    "sample_id": f"c{s:03d}", "detector_model": detector,
                    "judge_model": judge, "prompt_type": "direct",
                    "overall_verdict": {"said_vulnerable": True, "confidence_expressed": 0.8},
                    "findings": [{"classification": "TARGET_MATCH" if found
                                  else "MISCHARACTERIZED", "location_claimed": "line 12"}],
                    "target_assessment": {"complete_found": found, "partial_found": False,
                                          "type_match": "exact" if found else "not_mentioned"},
                }
                if judge == "judge-y" and s == 5 and detector == "detector-b":
                    record = {**record, "error": "Failed to parse JSON response"}
                records.append(record)
    return records


def test_multi_judge_blockbench_records_with_a_failed_judgement(monkeypatch, tmp_path) -> None:
    path = tmp_path / "multi_judge.json"
    path.write_text(json.dumps(multi_judge_records()))
    at = page(monkeypatch, f"--no-samples {path}")
    loaded = load_run(path).frame
    fleiss = agreement.fleiss_kappa(loaded, "target_found")
    assert fleiss.n_dropped == 1   # the failed judgement leaves its answer out of Fleiss' κ
    assert metric(at, "Fleiss' κ") == f"{fleiss.value:.3f}"
    assert any("1 left out (not labelled by every judge)" in c.value for c in at.caption)
    assert "Against the expert labels" in [s.value for s in at.subheader]
    at.toggle(key="agr_dis_missing").set_value(True).run()
    assert not at.exception
    table = at.dataframe[-2].value
    assert len(table) == len(agreement.disagreements(loaded, "target_found",
                                                     include_missing=True))
    assert table["judge-y"].isna().sum() >= 1


def test_every_label_of_the_sample_run_renders(monkeypatch) -> None:
    at = page(monkeypatch)
    judged = load_run(ROOT / "sample_data" / "judged.csv").frame
    offered = at.selectbox(key="agr_label").options
    assert offered == agreement.judged_labels(judged)
    for label in offered:
        at.selectbox(key="agr_label").set_value(label).run()
        assert not at.exception, (label, [e.value for e in at.exception])
        alpha = agreement.krippendorff_alpha(judged, label,
                                             level=agreement.default_level(judged, label))
        shown = next(m.value for m in at.metric if m.label.startswith("Krippendorff"))
        assert shown == ("n/a" if alpha.value != alpha.value else f"{alpha.value:.3f}"), label


# ------------------------------------------------------ the widgets show the values in use


def chart_by_key(at: AppTest, key: str) -> dict:
    return next(_decoded(json.loads(c.proto.spec)) for c in at.get("plotly_chart")
                if c.proto.id.endswith(f"{key}_chart"))


# AppTest gives data frames no key: each table of the page is told by a column of its own.
TABLE_COLUMNS = {"agr_pairs_table": "judge_a", "agr_human_table": "band",
                 "agr_spread_table": "range", "agr_consensus_table": "sui",
                 "agr_disagreements_table": "n_values", "agr_item_table": "field"}


def table_by_key(at: AppTest, key: str) -> pd.DataFrame:
    return next(d.value for d in at.dataframe if TABLE_COLUMNS[key] in d.value)


def widget_values(at: AppTest) -> dict:
    """Every widget of the page by key, as it shows."""
    return {"run": at.selectbox(key="agr_run").value,
            "label": at.selectbox(key="agr_label").value,
            "weights": at.radio(key="agr_weights").value,
            "bootstrap": at.toggle(key="agr_bootstrap").value,
            "min_votes": at.slider(key="agr_min_votes").value,
            "judge_a": at.selectbox(key="agr_judge_a").value,
            "judge_b": at.selectbox(key="agr_judge_b").value,
            "dis_label": at.selectbox(key="agr_dis_label").value,
            "dis_models": at.multiselect(key="agr_dis_models").value,
            "dis_prompts": at.multiselect(key="agr_dis_prompts").value,
            "dis_missing": at.toggle(key="agr_dis_missing").value,
            "item": next((w.value for w in at.selectbox if w.key == "agr_item"), None)}


def assert_widgets_in_use(at: AppTest, frames: dict[str, pd.DataFrame]) -> dict:
    """Each widget's value is the one the figures and tables were computed with: every
    output is recomputed here from the values the widgets show."""
    from kbench_app import agreement as page_module

    assert not at.exception, [e.value for e in at.exception]
    shown = widget_values(at)
    frame = frames[shown["run"]]
    label = shown["label"]
    s = agreement.summarize(frame, label, weights=None if shown["weights"] == "none"
                            else shown["weights"],
                            ci="bootstrap" if shown["bootstrap"] else None)
    assert at.subheader[0].value == f"Agreement on {label}"
    heat = chart_by_key(at, "agr_heatmap")["data"][0]
    assert heat["z"][0][1] == pytest.approx(s.pairs[s.pair_value].iloc[0])
    cards = [c.value for c in at.caption if c.value.startswith(("95% CI", "no interval"))]
    estimates = [e for e in (s.fleiss, s.alpha, s.percent) if e is not None]
    assert len(cards) == len(estimates)
    for card, est in zip(cards, estimates, strict=True):  # the bootstrap decides α's interval
        assert card.startswith(f"{page_module.interval_text(est.low, est.high)} · n = "
                               f"{est.n:,} items")
    board = agreement.consensus_leaderboard(frame, min_votes=shown["min_votes"])
    assert any(f"({board.min_votes} of {board.n_llm} votes: " in c.value for c in at.caption)
    page_board = table_by_key(at, "agr_consensus_table")
    assert page_board["model"].tolist() == board.table["model"].astype(str).tolist()
    assert page_board["tdr"].to_numpy() == pytest.approx(board.table["tdr"].to_numpy())
    confusion = chart_by_key(at, "agr_confusion")
    expected = agreement.confusion(frame, label, shown["judge_a"], shown["judge_b"])
    assert sum(map(sum, confusion["data"][0]["z"])) == expected["count"].sum()
    assert confusion["layout"]["xaxis"]["title"]["text"] == shown["judge_b"]
    assert confusion["layout"]["yaxis"]["title"]["text"] == shown["judge_a"]
    items = agreement.disagreements(frame, shown["dis_label"],
                                    include_missing=shown["dis_missing"])
    items = items[items["model"].astype(str).isin(shown["dis_models"])
                  & items["prompt_type"].astype(str).isin(shown["dis_prompts"])]
    table = table_by_key(at, "agr_disagreements_table")
    assert len(table) == min(len(items), page_module.MAX_DISAGREEMENTS)
    assert table["sample"].astype(str).tolist() == items["sample"].astype(str).tolist()[
        :len(table)]
    if shown["item"] is not None:
        sample, model, prompt = shown["item"].split(" · ")
        record = table_by_key(at, "agr_item_table")
        expected_record = page_module._item_records(
            frame, item={"sample": sample, "model": model, "prompt_type": prompt})
        pd.testing.assert_frame_equal(record.reset_index(drop=True), expected_record)
    return shown


def test_widgets_show_the_values_in_use_from_a_link_and_after_the_run_changes(
        monkeypatch, tmp_path) -> None:
    other = samples.judged_samples(n_samples=30, judges=("judge-x", "judge-y", "judge-z",
                                                         "judge-w"), seed=4)
    path = write_csv(tmp_path, "other", other)
    monkeypatch.setenv("KBENCH_APP_ARGS", str(path))
    state._cached_load.clear()
    frames = {"judged": load_run(ROOT / "sample_data" / "judged.csv").frame,
              "other": load_run(path).frame}
    at = AppTest.from_file(PAGE, default_timeout=120)
    link = {"agr_run": "judged", "agr_label": "type_match", "agr_weights": "quadratic",
            "agr_bootstrap": "0", "agr_min_votes": "3", "agr_judge_a": "judge-two",
            "agr_judge_b": "judge-one", "agr_dis_label": "n_bonus_valid",
            "agr_dis_models": ["synthetic-detector-timid", "synthetic-detector-sharp"],
            "agr_dis_prompts": ["direct"], "agr_dis_missing": "1"}
    for key, value in link.items():
        at.query_params[key] = value
    at.run()
    shown = assert_widgets_in_use(at, frames)
    assert {k: shown[k] for k in ("label", "weights", "bootstrap", "min_votes", "judge_a",
                                  "judge_b", "dis_label", "dis_models", "dis_prompts",
                                  "dis_missing")} == {
        "label": "type_match", "weights": "quadratic", "bootstrap": False, "min_votes": 3,
        "judge_a": "judge-two", "judge_b": "judge-one", "dis_label": "n_bonus_valid",
        "dis_models": ["synthetic-detector-timid", "synthetic-detector-sharp"],
        "dis_prompts": ["direct"], "dis_missing": True}
    assert at.query_params["agr_min_votes"] in ("3", ["3"])
    # Another run: its own judges, so what depended on the first run starts from its defaults
    # and every widget shows what the page now uses (4 LLM judges: majority 3 of 4).
    at.selectbox(key="agr_run").set_value("other").run()
    shown = assert_widgets_in_use(at, frames)
    assert (shown["label"], shown["weights"], shown["min_votes"], shown["judge_a"],
            shown["judge_b"]) == ("target_found", "none", 3, "judge-w", "judge-x")
    assert at.query_params["agr_run"] in ("other", ["other"])
    at.slider(key="agr_min_votes").set_value(2).run()
    at.selectbox(key="agr_judge_b").set_value("judge-z").run()
    assert_widgets_in_use(at, frames)
    at.selectbox(key="agr_run").set_value("judged").run()
    shown = assert_widgets_in_use(at, frames)  # back to the first run's defaults
    assert (shown["min_votes"], shown["judge_a"], shown["judge_b"]) == (
        2, "judge-one", "judge-three")


def test_page_tables_equal_the_core_functions(monkeypatch) -> None:
    from kbench_core.families.judged import AgreementOptions

    at = page(monkeypatch)
    at.selectbox(key="agr_label").set_value("type_match").run()
    at.radio(key="agr_weights").set_value("linear").run()
    at.slider(key="agr_min_votes").set_value(3).run()
    assert not at.exception
    judged = load_run(ROOT / "sample_data" / "judged.csv").frame
    options = AgreementOptions(label="type_match", weights="linear", bootstrap=True,
                               min_votes=3)
    s = agreement.summarize(judged, options.label, **options.summarize())
    pairs = table_by_key(at, "agr_pairs_table")
    assert list(pairs.columns) == list(s.pairs.columns)
    for column in s.pairs:
        if pd.api.types.is_numeric_dtype(s.pairs[column]):
            assert pairs[column].astype(float).to_numpy() == pytest.approx(
                s.pairs[column].to_numpy(dtype=float), nan_ok=True), column
        else:
            assert pairs[column].astype(str).tolist() == s.pairs[column].astype(str).tolist()
    board = agreement.consensus_leaderboard(judged, **options.consensus()).table
    shown = table_by_key(at, "agr_consensus_table")
    assert shown["model"].tolist() == board["model"].astype(str).tolist()
    assert shown["rank"].tolist() == board["rank"].tolist()
    for column in ("n", "n_samples", "few_items", "renormalised", "accuracy", "f2", "tdr",
                   "sui", "tus", "lgi", "ece"):
        assert shown[column].astype(float).to_numpy() == pytest.approx(
            board[column].astype(float).to_numpy(), nan_ok=True), column
    # integers as integers (not 1080.0), pinned first columns
    assert pd.api.types.is_integer_dtype(shown["n"])
    spread = table_by_key(at, "agr_spread_table")
    expected = agreement.judge_tiers(judged, min_votes=3).summary
    assert spread["range"].to_numpy() == pytest.approx(expected["range"].to_numpy())


def test_big_runs_open_the_heavy_sections_on_request_and_page_the_disagreements(
        monkeypatch) -> None:
    from kbench_app import agreement as page_module
    from kbench_app import kit

    monkeypatch.setattr(kit, "BIG_RUN_ROWS", 100)
    monkeypatch.setattr(page_module, "MAX_DISAGREEMENTS", 10)
    at = page(monkeypatch)
    assert [f.proto.id.rsplit("-", 1)[-1] for f in at.get("plotly_chart")] == [
        "agr_heatmap_chart", "agr_confusion_chart"]  # every label and the tiers: not yet
    assert len(at.expander) >= 2
    judged = load_run(ROOT / "sample_data" / "judged.csv").frame
    expected = agreement.disagreements(judged, "target_found")
    assert len(table_by_key(at, "agr_disagreements_table")) == 10 < len(expected)
    assert any(c.value.startswith(f"{len(expected):,} answers") and "first 10 shown" in c.value
               for c in at.caption)
    at.session_state["agr_tiers_open"] = True
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    board = table_by_key(at, "agr_consensus_table")
    assert board["model"].tolist() == agreement.consensus_leaderboard(judged).table[
        "model"].astype(str).tolist()


def test_failed_judgements_as_not_found_and_the_majoritys_judges(monkeypatch,
                                                                  tmp_path) -> None:
    # Issue 23: BlockBench's published agreement counts a failed judgement as "not found";
    # the page offers it, says which rule it uses, and chooses the majority's judges.
    path = tmp_path / "multi_judge.json"
    path.write_text(json.dumps(multi_judge_records()))
    at = page(monkeypatch, f"--no-samples {path}")
    loaded = load_run(path).frame
    assert at.radio(key="agr_failed_as").value == "missing"
    assert any(c.value.startswith("Failed judgements are left out") for c in at.caption)
    at.radio(key="agr_failed_as").set_value("not_found").run()
    assert not at.exception, [e.value for e in at.exception]
    counted = agreement.summarize(loaded, "target_found", failed_as="not_found")
    assert counted.fleiss.n_dropped == 0  # the failed judgement now counts as a "no"
    assert metric(at, "Fleiss' κ") == f"{counted.fleiss.value:.3f}"
    assert counted.fleiss.value != agreement.fleiss_kappa(loaded, "target_found").value
    assert any("count as 'not found' (BlockBench's convention)" in c.value
               for c in at.caption)
    assert not any("left out (not labelled by every judge)" in c.value for c in at.caption)
    assert at.query_params["agr_failed_as"] in ("not_found", ["not_found"])
    # The majority of two chosen judges needs both votes by default.
    at.multiselect(key="agr_voters").set_value(["judge-x", "judge-z"]).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.slider(key="agr_min_votes").value == 2
    board = agreement.consensus_leaderboard(loaded, judges=["judge-x", "judge-z"],
                                            failed_as="not_found")
    shown = next(d.value for d in at.dataframe if "sui" in d.value)
    assert shown["tdr"].to_numpy() == pytest.approx(board.table["tdr"].to_numpy())
    assert any("(2 of 2 votes: judge" in c.value and "counted as 'not found'" in c.value
               for c in at.caption)
