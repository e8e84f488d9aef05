"""Tests of the opt-in workspace and the run registry the app builds on it."""

from __future__ import annotations

import pandas as pd

from kbench_app.registry import RunRegistry
from kbench_core.io import load_run
from kbench_core.workspace import Workspace

GOOD = (b"model,bias,condition,intensity,domain,score,confidence\n"
        b"m1,anchoring_effect,control,,social,0,0.5\n"
        b"m1,anchoring_effect,treatment,weak,social,1,\n")
JUDGED = (b"sample,model,judge,is_vulnerable,said_vulnerable,target_found,claimed_lines\n"
          b"c1,det,j1,true,true,true,12;13\nc2,det,j1,false,false,false,\n")
BAD = GOOD.replace(b"social,1,", b"social,yes,")


def test_registry_keeps_good_runs_when_a_bad_file_arrives() -> None:
    reg = RunRegistry()
    first = reg.add_files([("good.csv", GOOD)])
    assert first.added == ["good"] and not first.errors
    second = reg.add_files([("bad.csv", BAD), ("judged.csv", JUDGED)])
    assert list(reg.runs) == ["good", "judged"]
    assert second.errors["bad.csv"].startswith("bad.csv: line 3, field 'score'")
    assert "bad.csv" in reg.errors
    reg.dismiss_error("bad.csv")
    assert not reg.errors


def test_registry_names_are_unique_and_duplicates_skipped() -> None:
    reg = RunRegistry()
    reg.add_files([("run.csv", GOOD)])
    report = reg.add_files([("run.csv", GOOD)])
    assert report.duplicates == ["run.csv is already loaded as 'run'"]
    reg.add_files([("run.csv", GOOD + b"m2,anchoring_effect,control,,risk,0,\n")])
    assert list(reg.runs) == ["run", "run (2)"]
    assert reg.runs["run (2)"].name == "run (2)"
    reg.remove("run")
    assert list(reg.runs) == ["run (2)"]


def test_summary_lists_kind_models_rows_warnings() -> None:
    reg = RunRegistry()
    reg.add_files([("good.csv", b"\xef\xbb\xbf" + GOOD), ("judged.csv", JUDGED)])
    summary = reg.summary().set_index("name")
    assert summary.loc["good", ["kind", "models", "rows", "warnings"]].tolist() == [
        "bias", "m1", 2, 1]
    assert summary.loc["judged", "kind"] == "judged"


def test_workspace_round_trip_and_removal(tmp_path) -> None:
    ws = Workspace(tmp_path / "ws")
    reg = RunRegistry(workspace=ws)
    reg.add_files([("good.csv", GOOD), ("judged.csv", JUDGED)])
    assert len(list((tmp_path / "ws").glob("*.parquet"))) == 2

    fresh = RunRegistry(workspace=Workspace(tmp_path / "ws"))
    report = fresh.load_workspace()
    assert sorted(report.added) == ["good", "judged"] and not report.errors
    for name in ("good", "judged"):
        pd.testing.assert_frame_equal(fresh.runs[name].frame, reg.runs[name].frame)
        assert fresh.runs[name].content_hash == reg.runs[name].content_hash
        assert fresh.runs[name].meta["source"] == f"{name}.csv"

    fresh.remove("good")
    assert [p.stem.split("-")[0] for p in (tmp_path / "ws").glob("*.parquet")] == ["judged"]
    assert len(list((tmp_path / "ws").glob("*.json"))) == 1


def test_without_workspace_nothing_is_written(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    reg = RunRegistry()
    reg.add_files([("good.csv", GOOD)])
    reg.remove("good")
    assert list(tmp_path.iterdir()) == []


def test_damaged_workspace_file_is_reported_not_trusted(tmp_path) -> None:
    ws = Workspace(tmp_path)
    path = ws.save(load_run(("good.csv", GOOD)))
    path.write_bytes(b"PAR1 garbage")
    (tmp_path / "orphan.parquet").write_bytes(b"x")
    runs, errors = ws.load_all()
    assert runs == []
    files = sorted(err.file for err in errors)
    assert files == ["good-" + path.stem.split("-", 1)[1] + ".parquet", "orphan.json"]


def test_registry_loads_a_folder_by_path(tmp_path) -> None:
    import json

    from kbench_app.registry import RunRegistry

    folder = tmp_path / "kahne_out"
    folder.mkdir()
    (folder / "run.json").write_text(json.dumps({"results": [
        {"bias_id": "anchoring_effect", "model_id": "m", "condition": "control",
         "domain": "social", "bias_score": 0.1}]}))
    registry = RunRegistry()
    report = registry.add_paths([folder])
    # A folder of one KahneBench JSON is not a known folder format: a clear error, no crash.
    assert report.added == [] and "kahne_out" in registry.errors
    assert "no benchmark output kbench knows" in registry.errors["kahne_out"]
    report = registry.add_paths([folder / "run.json"])
    assert report.added == ["run"] and registry.runs["run"].kind == "bias"
