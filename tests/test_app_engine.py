"""The app opens a workspace through an engine (SPEC 6, issue 25): ``kbench app --engine``
reaches the dashboard, saved runs are queried in place (never read with pandas), their
reduced tables are cached, and the pages show the memory engine's numbers."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from kbench_app import cache, state
from kbench_app.registry import RunRegistry
from kbench_core import workspace as ws_module
from kbench_core.cli import app as cli_app
from kbench_core.io import load_run
from kbench_core.workspace import Workspace
from tests.conftest import bias_page

ROOT = Path(__file__).resolve().parent.parent
BIAS = ROOT / "sample_data" / "bias.csv"


def _parsed(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="kbench")
    cli_app.add_parser(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(argv)


def _app_args(cmd: list[str]) -> argparse.Namespace:
    return state.app_options(cmd[cmd.index("--") + 1:])


def test_kbench_app_passes_the_engine_to_the_dashboard(tmp_path) -> None:
    cmd = cli_app.command(_parsed(["app", "--workspace", str(tmp_path), "--engine", "spark",
                                   "--spark-master", "local[1]", "--headless"]))
    options = _app_args(cmd)
    assert options.engine == "spark" and options.spark_master == "local[1]"
    assert state.workspace_engine(options) == "spark"
    cmd = cli_app.command(_parsed(["app", "--workspace", str(tmp_path), "--engine", "duckdb"]))
    assert state.workspace_engine(_app_args(cmd)) == "duckdb"
    # without --engine a workspace is read through duckdb
    cmd = cli_app.command(_parsed(["app", "--workspace", str(tmp_path)]))
    assert "--engine" not in cmd
    assert state.workspace_engine(_app_args(cmd)) == "duckdb"
    with pytest.raises(SystemExit):
        _parsed(["app", "--engine", "pandas"])


def test_an_unknown_engine_is_named_and_refused_by_the_workspace(tmp_path) -> None:
    with pytest.raises(ValueError, match="pandas"):
        Workspace(tmp_path, engine="pandas")


@pytest.fixture
def saved(bias_workspace, monkeypatch):
    """A workspace holding the bias sample; counters of the engine's reductions
    (``calls["engine"]``, conftest's ``bias_workspace``) and of every saved file read by the
    loader (pandas)."""
    ws, calls = bias_workspace
    (saved_file,) = ws.glob("*.parquet")
    calls["pandas"] = 0
    validated = ws_module._validated

    def read_by_loader(path, *args, **kwargs):
        calls["pandas"] += 1
        return validated(path, *args, **kwargs)

    monkeypatch.setattr(ws_module, "_validated", read_by_loader)
    return ws, saved_file, calls


def test_the_runs_page_lists_workspace_runs_through_duckdb(monkeypatch, saved) -> None:
    ws, _, calls = saved
    monkeypatch.setenv("KBENCH_APP_ARGS", f"--no-samples --workspace {ws} --engine duckdb")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    reg = at.session_state[state.REGISTRY]
    assert reg.workspace.engine == "duckdb"
    summary = at.dataframe[0].value.set_index("name")
    assert list(summary.index) == ["bias"]
    assert summary.loc["bias", "rows"] == len(load_run(BIAS).frame)
    assert summary.loc["bias", "problem"] == ""
    run = reg.runs["bias"]
    assert run.loaded and run.resolve().meta["engine"] == "duckdb"
    assert calls == {"engine": 1, "pandas": 0}


def test_the_bias_page_through_duckdb_equals_memory_and_widgets_skip_the_engine(
        monkeypatch, saved) -> None:
    ws, _, calls = saved
    memory = bias_page(monkeypatch, f"--no-samples --workspace {ws} --engine memory")
    assert calls == {"engine": 0, "pandas": 1}
    expected = memory.dataframe[1].value.set_index(["bias", "model"])
    cache.clear()  # results are keyed on content hashes, the same for both engines
    duck = bias_page(monkeypatch, f"--no-samples --workspace {ws}")  # duckdb by default
    assert calls == {"engine": 1, "pandas": 1}
    shown = duck.dataframe[1].value.set_index(["bias", "model"])
    assert list(shown.index) == list(expected.index)
    for metric in ("bms", "model_rate", "alignment", "bci_consistency", "rci_consistency",
                   "calibration_score", "effectiveness", "n"):
        assert np.allclose(shown[metric].to_numpy(dtype=float),
                           expected[metric].to_numpy(dtype=float),
                           rtol=0, atol=1e-9, equal_nan=True), metric
    before = duck.dataframe[0].value.set_index("model")["susceptibility"]
    duck.toggle(key="bias_cap").set_value(False).run()
    assert not duck.exception, [e.value for e in duck.exception]
    after = duck.dataframe[0].value.set_index("model")["susceptibility"]
    assert after["synthetic-alpha"] > before["synthetic-alpha"]  # recomputed ...
    assert calls == {"engine": 1, "pandas": 1}  # ... from the cached table
    # another session on the same workspace finishes from the cached table too
    bias_page(monkeypatch, f"--no-samples --workspace {ws} --engine duckdb")
    assert calls == {"engine": 1, "pandas": 1}


def test_a_bad_cell_gives_the_loaders_message_on_the_runs_page(monkeypatch, saved) -> None:
    import hashlib
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    ws, saved_file, calls = saved
    table = pq.read_table(saved_file)
    scores = table.column("score").to_pylist()
    scores[4] = 7.0  # a score out of range, re-recorded beside it as kbench's own
    pq.write_table(table.set_column(table.schema.get_field_index("score"), "score",
                                    pa.array(scores, type=table.schema.field("score").type)),
                   saved_file)
    side = saved_file.with_suffix(".json")
    sidecar = json.loads(side.read_text())
    sidecar["parquet_sha256"] = hashlib.sha256(saved_file.read_bytes()).hexdigest()
    side.write_text(json.dumps(sidecar))
    with pytest.raises(Exception) as loader:
        load_run(saved_file, kind="bias")
    monkeypatch.setenv("KBENCH_APP_ARGS", f"--no-samples --workspace {ws} --engine duckdb")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert calls["pandas"] == 0
    words = str(loader.value).split(": ", 1)[1]  # the loader's message after the file name
    assert any(c.value.startswith(saved_file.name) and words in c.value for c in at.code)
    at.run()
    summary = at.dataframe[0].value.set_index("name")
    assert "row 5" in summary.loc["bias", "problem"]


def test_the_reduced_tables_are_bounded_and_go_with_their_run(monkeypatch, saved) -> None:
    import hashlib

    ws, _, calls = saved
    reg = RunRegistry(workspace=Workspace(ws))
    reg.add_files([("other.csv", BIAS.read_bytes().replace(b"synthetic-gamma", b"synth-d"))])
    reg = RunRegistry(workspace=Workspace(ws, engine="duckdb"))
    reg.load_workspace()
    assert set(reg.usable(list(reg.runs))) == {"bias", "other"}
    assert calls["engine"] == 2 and len(ws_module._REDUCED) == 2
    # a bias run is its weighted small table, which counts the run's rows (issue 25)
    assert len(reg.runs["bias"]) == len(load_run(BIAS).frame) > len(reg.runs["bias"].frame)
    assert sum(t.nbytes for t in ws_module._REDUCED.values()) == ws_module._REDUCED_BYTES
    # over the bound the oldest table goes (the last one is always kept)
    monkeypatch.setattr(ws_module, "MAX_REDUCED_BYTES", 1)
    again = RunRegistry(workspace=Workspace(ws, engine="duckdb"))
    again.load_workspace()
    again.usable(["other"])  # found in the cache: the bound is applied on the next insert
    assert calls["engine"] == 2
    ws_module.clear_caches()
    again.usable(["bias"])
    again = RunRegistry(workspace=Workspace(ws, engine="duckdb"))
    again.load_workspace()
    again.usable(["other"])
    # read back from the tables the workspace keeps on disk (.kbench-reduced): no engine query
    assert calls["engine"] == 2 and len(ws_module._REDUCED) == 1
    other_file = ws / reg.runs["other"].meta["workspace_file"]
    (kept,) = ws_module._REDUCED
    assert kept == (hashlib.sha256(other_file.read_bytes()).hexdigest(), "bias", "duckdb")
    # removing a run drops its table
    again.remove("other")
    assert not ws_module._REDUCED
