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


# ------------------------------------------------------------------ hostile sidecars (issue 19)

import json  # noqa: E402

import pytest  # noqa: E402


def _saved(tmp_path) -> tuple[Workspace, dict[str, object]]:
    ws = Workspace(tmp_path / "ws")
    reg = RunRegistry(workspace=ws)
    reg.add_files([("good.csv", GOOD), ("judged.csv", JUDGED)])
    return ws, {p.stem: p for p in (tmp_path / "ws").glob("*.json")}


@pytest.mark.parametrize(("change", "needle"), [
    (lambda s: s.update(meta=[]), "field 'meta'"),
    (lambda s: s.update(warnings=5), "field 'warnings'"),
    (lambda s: s.update(kind="evil"), "unknown run kind"),
    (lambda s: s.update(name=["x"]), "field 'name'"),
    (lambda s: s.update(parquet_sha256="0" * 63), "field 'parquet_sha256'"),
    (lambda s: s["meta"].update(sha256="<script>"), "field 'meta.sha256'"),
    (lambda s: s["meta"].update(bytes=10**400), "field 'meta.bytes'"),
    (lambda s: s["meta"].update(bytes="abc"), "field 'meta.bytes'"),
    (lambda s: s["meta"].update(bytes=-1), "field 'meta.bytes'"),
    (lambda s: s["meta"].update(bytes=1.5), "field 'meta.bytes'"),
    (lambda s: s["meta"].update(rows=True), "field 'meta.rows'"),
    (lambda s: s["meta"].update(source=["x"]), "field 'meta.source'"),
    (lambda s: s["meta"].update(format="f" * 4097), "field 'meta.format'"),
    (lambda s: s["meta"].update(columns=[1]), "field 'meta.columns'"),
    (lambda s: s["meta"].update(published={"k": [1]}), "field 'meta.published'"),
    (lambda s: s["meta"].update(summary=[]), "field 'meta.summary'"),
    (lambda s: s["meta"].update(summary={"m1": {"overall_bias_susceptibility": 1e300}}),
     "field 'meta.summary.overall_bias_susceptibility'"),
    (lambda s: s["meta"].update(summary={"m1": {"most_susceptible_biases": [{"a": 1}]}}),
     "field 'meta.summary.most_susceptible_biases'"),
    (lambda s: s.pop("parquet_sha256"), "field 'parquet_sha256'"),
])
def test_a_bad_sidecar_is_reported_and_skipped(tmp_path, change, needle) -> None:
    ws, sidecars = _saved(tmp_path)
    good = next(p for stem, p in sidecars.items() if stem.startswith("good"))
    data = json.loads(good.read_text())
    change(data)
    good.write_text(json.dumps(data))
    reg = RunRegistry(workspace=ws)
    report = reg.load_workspace()  # what the app does at start: never raises
    assert report.added == ["judged"]
    (message,) = report.errors.values()
    assert message.startswith(good.name) and needle in message


@pytest.mark.parametrize("text", ['{"name": "a", "kind": "bias", "name": "b"}', "[1, 2]",
                                  '{"name": ', "\udcff".encode("utf-8", "surrogateescape")
                                  .decode("latin-1")])
def test_unreadable_sidecars_are_reported(tmp_path, text) -> None:
    ws, sidecars = _saved(tmp_path)
    good = next(p for stem, p in sidecars.items() if stem.startswith("good"))
    good.write_bytes(text.encode("latin-1", "replace") if text.startswith("\xff")
                     else text.encode())
    runs, errors = ws.load_all()
    assert [r.name for r in runs] == ["judged"]
    assert errors[0].file == good.name


def test_a_replaced_parquet_file_is_refused_not_trusted(tmp_path) -> None:
    ws, _ = _saved(tmp_path)
    good = next(p for p in (tmp_path / "ws").glob("good*.parquet"))
    replaced = load_run(("other.csv", GOOD.replace(b"m1", b"m9")))
    good.write_bytes(replaced.frame.to_parquet())
    runs, errors = ws.load_all()
    assert [r.name for r in runs] == ["judged"]
    assert "SHA-256 differs" in str(errors[0]) and str(errors[0]).startswith(good.name)


def test_sidecar_records_the_parquet_hash(tmp_path) -> None:
    import hashlib

    ws, sidecars = _saved(tmp_path)
    for stem, side in sidecars.items():
        recorded = json.loads(side.read_text())["parquet_sha256"]
        parquet = side.with_suffix(".parquet").read_bytes()
        assert recorded == hashlib.sha256(parquet).hexdigest(), stem
    runs, errors = ws.load_all()
    assert not errors and len(runs) == 2
    assert not any("SHA-256" in w for r in runs for w in r.warnings)


def test_a_sidecar_without_the_parquet_hash_never_shows_the_old_provenance(tmp_path) -> None:
    ws, sidecars = _saved(tmp_path)
    good = next(p for stem, p in sidecars.items() if stem.startswith("good"))
    data = json.loads(good.read_text())
    del data["parquet_sha256"]
    good.write_text(json.dumps(data))
    replaced = load_run(("other.csv", GOOD.replace(b"m1", b"m9")))
    good.with_suffix(".parquet").write_bytes(replaced.frame.to_parquet())
    runs, errors = ws.load_all()
    assert [r.name for r in runs] == ["judged"]  # never the new content under the old hash
    assert not any(r.content_hash == data["meta"]["sha256"] for r in runs)
    assert str(errors[0]).startswith(good.name) and "records no SHA-256" in str(errors[0])


def test_summary_tolerates_meta_values_no_loader_writes() -> None:
    from dataclasses import replace

    reg = RunRegistry()
    reg.add_files([("good.csv", GOOD)])
    run = reg.runs.pop("good")
    for i, size in enumerate([10**400, "abc", -1, float("nan"), True, None, 2048]):
        reg.add(replace(run, name=f"r{i}", meta={**run.meta, "bytes": size,
                                                 "source": ["x"], "format": 5}))
    summary = reg.summary()
    assert summary["size_kb"].iloc[:-1].isna().all()
    assert summary["size_kb"].iloc[-1] == 2.0


def test_a_report_run_with_its_summary_comes_back_from_the_workspace(tmp_path) -> None:
    from pathlib import Path

    reports = Path(__file__).resolve().parents[1] / "sample_data" / "real" / "kahnebench"
    ws = Workspace(tmp_path / "ws")
    reg = RunRegistry(workspace=ws)
    reg.add_paths([reports])
    (name,) = reg.runs
    runs, errors = ws.load_all()
    assert not errors and runs[0].meta["summary"] == reg.runs[name].meta["summary"]


# ------------------------------------------------------------ issue 29 item 6: a lazy start


def _count_parquet_reads(monkeypatch) -> list[str]:
    """Names of the Parquet files read from now on (bytes, or opened by pyarrow)."""
    from pathlib import Path

    import pyarrow.parquet as pq

    reads: list[str] = []
    read_bytes, read_table = Path.read_bytes, pq.read_table

    def counted_bytes(self):
        if self.suffix == ".parquet":
            reads.append(self.name)
        return read_bytes(self)

    def counted_table(source, *args, **kwargs):
        reads.append(str(source))
        return read_table(source, *args, **kwargs)

    from kbench_core import workspace

    read_regular = workspace.read_regular

    def counted_regular(path):  # the workspace reads a file from a checked descriptor
        if Path(path).suffix == ".parquet":
            reads.append(Path(path).name)
        return read_regular(path)

    monkeypatch.setattr(Path, "read_bytes", counted_bytes)
    monkeypatch.setattr(pq, "read_table", counted_table)
    monkeypatch.setattr(workspace, "read_regular", counted_regular)
    return reads


def test_a_start_reads_only_the_sidecars_and_a_run_is_read_on_first_use(
        tmp_path, monkeypatch) -> None:
    # Was: every saved run's Parquet file read and validated at start (1,500 runs: 16.8 s
    # for the first session); the Runs page lists what the sidecars say.
    uploader = RunRegistry(workspace=Workspace(tmp_path / "ws"))
    uploader.add_files([("good.csv", GOOD), ("judged.csv", JUDGED)])
    reads = _count_parquet_reads(monkeypatch)
    fresh = RunRegistry(workspace=Workspace(tmp_path / "ws"))
    report = fresh.load_workspace()
    assert reads == []
    summary = fresh.summary().set_index("name")
    assert reads == []
    assert sorted(report.added) == ["good", "judged"] and not report.errors
    assert summary.loc["good", ["kind", "models", "rows", "warnings", "problem"]].tolist() \
        == ["bias", "m1", 2, 0, ""]
    assert summary.loc["judged", "models"] == "det"
    assert fresh.runs["good"].content_hash == uploader.runs["good"].content_hash
    # first use: read once, validated, the same frame
    assert list(fresh.usable(["good"])) == ["good"] and len(reads) == 1
    pd.testing.assert_frame_equal(fresh.runs["good"].frame, uploader.runs["good"].frame)
    assert len(reads) == 1 and reads[0].startswith("good")


def test_a_saved_run_changed_after_the_start_is_refused_at_use_not_at_start(tmp_path) -> None:
    uploader = RunRegistry(workspace=Workspace(tmp_path / "ws"))
    uploader.add_files([("good.csv", GOOD), ("judged.csv", JUDGED)])
    fresh = RunRegistry(workspace=Workspace(tmp_path / "ws"))
    assert not fresh.load_workspace().errors
    good = next((tmp_path / "ws").glob("good*.parquet"))
    other = load_run(("other.csv", GOOD.replace(b"m1", b"m9")))
    good.write_bytes(other.frame.to_parquet())  # replaced behind kbench's back
    assert list(fresh.usable(["good", "judged"])) == ["judged"]  # the other is unaffected
    assert "SHA-256 differs" in fresh.errors[good.name]
    assert fresh.summary().set_index("name").loc["good", "problem"].startswith(good.name)
    from kbench_core.io import RunFormatError

    with pytest.raises(RunFormatError, match="SHA-256 differs"):
        fresh.runs["good"].frame  # noqa: B018 - never the new content under the old hash
    # damaged bytes: the per-file message, never another exception
    judged = next((tmp_path / "ws").glob("judged*.parquet"))
    again = RunRegistry(workspace=Workspace(tmp_path / "ws"))
    again.load_workspace()
    judged.write_bytes(b"PAR1 not really")
    assert list(again.usable(["judged"])) == []
    assert again.errors[judged.name].startswith(judged.name)


def test_a_renamed_saved_run_stays_unread(tmp_path, monkeypatch) -> None:
    uploader = RunRegistry(workspace=Workspace(tmp_path / "ws"))
    uploader.add_files([("good.csv", GOOD)])
    reads = _count_parquet_reads(monkeypatch)
    fresh = RunRegistry(workspace=Workspace(tmp_path / "ws"))
    fresh.add_files([("good.csv", GOOD.replace(b"m1", b"m2"))], persist=False)
    fresh.load_workspace()  # the saved 'good' meets a loaded 'good': renamed, still unread
    assert list(fresh.runs) == ["good", "good (2)"] and reads == []
    assert fresh.runs["good (2)"].name == "good (2)" and fresh.runs["good (2)"].models == ["m1"]
    assert fresh.runs["good (2)"].frame["model"].tolist() == ["m1", "m1"]


def test_a_folder_given_at_start_is_saved_once_whatever_the_sessions(tmp_path) -> None:
    """`kbench app FOLDER --workspace DIR`: every session starts from the command line's
    files. A BlockBench judge-output folder was saved again by each session (8 page visits:
    8 copies of the run, listed as 'name (2)' ... 'name (8)' and ranked against each other);
    a file was not (its bytes' hash met the saved copy)."""
    from pathlib import Path

    folder = Path(__file__).parent / "data" / "formats" / "blockbench_judge_output"
    directory = tmp_path / "ws"
    directory.mkdir()
    for _ in range(3):  # three sessions, each with its own registry
        reg = RunRegistry(workspace=Workspace(directory))
        reg.load_workspace()
        reg.add_paths([folder])
        assert len(reg.runs) == 1, list(reg.runs)
    assert len(list(directory.glob("*.parquet"))) == 1
    again = RunRegistry(workspace=Workspace(directory))
    again.load_workspace()
    report = again.add_paths([folder])
    assert report.added == [] and report.existing == list(again.runs)
