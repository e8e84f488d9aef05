"""``kbench workspace add`` (issue 39, item 3): a run too big for the loader added to a
workspace through an engine (validated cell by cell, copied, its sidecar written from its
sufficient table, no row loaded), and the sufficient tables kept in the workspace so a restart
finds them instead of querying the engine again."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kbench_core import engines, io, workspace
from kbench_core.families import main_table
from kbench_core.samples import big_bias_trials
from kbench_core.workspace import Workspace
from kbench_core.workspace_add import CACHE_FOLDER, add_run, cached_table

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def bias_file(tmp_path) -> Path:
    path = tmp_path / "archive" / "bias-2026-11.parquet"
    path.parent.mkdir()
    big_bias_trials(30_000, seed=2).to_parquet(path)
    return path


@pytest.fixture(autouse=True)
def _fresh_caches():
    workspace.clear_caches()
    yield
    workspace.clear_caches()


def _main(argv: list[str]) -> int:
    from kbench_core.cli import main

    return main(argv)


def _table(run) -> list[pd.DataFrame]:
    item = main_table(run.kind)
    return [t.reset_index(drop=True) for _, t in item.objects(run.frame, {}, meta=run.meta)]


def _same(a, b) -> None:
    for x, y in zip(_table(a), _table(b), strict=True):
        pd.testing.assert_frame_equal(x, y, rtol=1e-9, atol=1e-9, check_dtype=False,
                                      check_categorical=False)


def _opened(folder: Path, engine: str = "duckdb") -> list:
    runs, errors = Workspace(folder, engine=engine).open_all()
    assert errors == []
    return runs


def test_add_then_open_gives_the_memory_numbers(bias_file, tmp_path, capsys):
    folder = tmp_path / "ws"
    assert _main(["workspace", "add", str(bias_file), "--workspace", str(folder)]) == 0
    said = capsys.readouterr().err
    assert "added bias-2026-11 (bias, 30,000 rows, 10 models)" in said
    (saved,) = _opened(folder)
    assert len(saved) == 30_000 and len(saved.models) == 10  # from the sidecar, no row read
    assert not saved.loaded
    (memory,) = engines.load(bias_file, engine="memory")
    _same(memory, saved.resolve())
    assert saved.content_hash == memory.content_hash  # the bytes copied as they were
    assert saved.meta["sha256"] == memory.meta["sha256"]


def test_add_loads_no_row(bias_file, tmp_path, monkeypatch):
    from kbench_core.engines import reduce

    def refused(*args, **kwargs):
        raise AssertionError("a frame of every row was made")

    loader = io.load_run

    def small_only(source, **kwargs):  # the finish types the small table by the loader
        if not isinstance(source, tuple):
            refused()
        return loader(source, **kwargs)

    monkeypatch.setattr(io, "load_run", small_only)
    monkeypatch.setattr(reduce, "repeated", refused)
    monkeypatch.setattr(reduce, "typed_rows", refused)
    added = add_run(Workspace(tmp_path / "ws"), bias_file)
    assert added.rows == 30_000 and added.reduced_rows <= added.rows


def test_a_restart_reuses_the_kept_table(bias_file, tmp_path, monkeypatch):
    folder = tmp_path / "ws"
    add_run(Workspace(folder), bias_file)
    kept = list((folder / CACHE_FOLDER).glob("*.parquet"))
    assert len(kept) == 1
    (first,) = _opened(folder)
    want = _table(first.resolve())
    workspace.clear_caches()  # a new server: nothing in memory

    def refused(*args, **kwargs):
        raise AssertionError("the engine was queried again")

    monkeypatch.setattr(engines, "reduce_source", refused)
    (again,) = _opened(folder)
    for x, y in zip(_table(again.resolve()), want, strict=True):
        pd.testing.assert_frame_equal(x, y)


def test_a_kept_table_of_another_version_or_damaged_is_made_again(bias_file, tmp_path,
                                                                   monkeypatch):
    import pyarrow.parquet as pq

    from kbench_core import workspace_tables

    folder = tmp_path / "ws"
    add_run(Workspace(folder), bias_file)
    (kept,) = (folder / CACHE_FOLDER).glob("*.parquet")
    sha, kind = kept.stem.rsplit("-", 1)
    assert cached_table(folder, sha, kind) is not None
    monkeypatch.setattr(workspace_tables, "REDUCTION_VERSION", "another")
    assert cached_table(folder, sha, kind) is None
    monkeypatch.undo()
    kept.write_bytes(b"not parquet")
    assert cached_table(folder, sha, kind) is None
    (saved,) = _opened(folder)
    (memory,) = engines.load(bias_file, engine="memory")
    _same(memory, saved.resolve())  # reduced again by the engine
    assert pq.read_table(kept).num_rows > 0  # and kept again


def test_a_folder_is_added_as_one_file(bias_file, tmp_path):
    frame = pd.read_parquet(bias_file)
    parts = tmp_path / "parts"
    parts.mkdir()
    for i, chunk in enumerate(np.array_split(np.arange(len(frame)), 3)):
        frame.iloc[chunk].to_parquet(parts / f"part-{i}.parquet")
    folder = tmp_path / "ws"
    assert _main(["workspace", "add", str(parts), "--workspace", str(folder),
                  "--name", "November"]) == 0
    (saved,) = _opened(folder)
    assert saved.name == "November"
    (memory,) = engines.load(parts, engine="memory")
    _same(memory, saved.resolve())


def test_a_bad_cell_is_the_loaders_and_nothing_is_written(tmp_path):
    frame = big_bias_trials(3_000, seed=1)
    frame.loc[17, "score"] = 3.0
    path = tmp_path / "bad.parquet"
    frame.to_parquet(path)
    folder = tmp_path / "ws"
    with pytest.raises(SystemExit) as err:
        _main(["workspace", "add", str(path), "--workspace", str(folder)])
    with pytest.raises(io.RunFormatError) as loader:
        io.load_run(path)
    assert str(err.value) == f"kbench: {loader.value}"
    assert [p.name for p in folder.iterdir()] == []


def test_paths_that_are_not_one_run_are_refused(tmp_path):
    folder = tmp_path / "ws"
    for argv, words in ((["nowhere.parquet"], "does not exist"),
                        ([str(ROOT / "sample_data" / "bias.csv")], "neither a Parquet file"),
                        ([str(ROOT / "sample_data" / "bias.csv"), "--engine", "memory"],
                         "invalid choice")):
        with pytest.raises(SystemExit) as err:
            _main(["workspace", "add", *argv, "--workspace", str(folder)])
        assert words in str(err.value) or err.value.code == 2


def test_removing_the_run_removes_its_kept_table(bias_file, tmp_path):
    folder = tmp_path / "ws"
    add_run(Workspace(folder), bias_file)
    (saved,) = _opened(folder)
    other = tmp_path / "other.parquet"
    frame = pd.read_parquet(bias_file)
    frame.assign(model=frame["model"].astype(str) + "-b").to_parquet(other)
    add_run(Workspace(folder), other)
    kept = sorted((folder / CACHE_FOLDER).glob("*.parquet"))
    assert len(kept) == 2
    Workspace(folder).remove(next(r for r in _opened(folder) if r.name == saved.name))
    (left,) = (folder / CACHE_FOLDER).glob("*.parquet")  # the other run's table stays
    assert left in kept
    (last,) = _opened(folder)
    Workspace(folder).remove(last)
    # the workspace's last run gone: nothing of kbench's is left (was: an empty folder)
    assert list(folder.iterdir()) == [] and _opened(folder) == []


def test_the_app_keeps_the_table_of_a_run_it_reduced(bias_file, tmp_path):
    """A run saved from the app (Workspace.save) and read through DuckDB has its table kept
    on disk on first use, as an added run has."""
    folder = tmp_path / "ws"
    (memory,) = engines.load(bias_file, engine="memory")
    Workspace(folder).save(memory)
    assert not (folder / CACHE_FOLDER).exists()
    (saved,) = _opened(folder)
    saved.resolve()
    assert len(list((folder / CACHE_FOLDER).glob("*-bias.parquet"))) == 1


def test_a_judged_run_is_added_and_said_not_kept(tmp_path, capsys):
    """A judged run is at item grain: validated and copied, its rows fetched by the app on
    first use (nothing kept in the workspace, and the message says so)."""
    run = io.load_run(ROOT / "sample_data" / "judged.csv")
    path = tmp_path / "judged.parquet"
    run.frame.to_parquet(path)
    folder = tmp_path / "ws"
    assert _main(["workspace", "add", str(path), "--workspace", str(folder)]) == 0
    said = capsys.readouterr().err
    assert "added judged (judged, 1,080 rows" in said and "kept for the app" not in said
    assert "item grain" in said
    assert not (folder / CACHE_FOLDER).exists()
    (saved,) = _opened(folder)
    (memory,) = engines.load(path, engine="memory")
    _same(memory, saved.resolve())
