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
    at.selectbox(key="agr_dis_label").set_value("said_vulnerable").run()
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
    at.selectbox(key="agr_label").set_value("said_vulnerable").run()
    assert at.query_params["agr_label"] in ("said_vulnerable", ["said_vulnerable"])


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
