"""A run at item grain queried by an engine (issue 25: an app page's first render on the big
runs): a judged or replication run's reduction would be its rows, so the engine fetches them
in file order and the loader validates and types them once (``kbench_core.engines.reduce.
typed_rows``): the frame is the memory engine's exactly (dtypes, categories and their order),
every problem is the loader's own, and no row is checked twice. Timings are in
``benchmarks/engines_vuln.py``, not here."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kbench_core import engines, io
from kbench_core import workspace as ws_module
from kbench_core.engines import reduce, source, validate
from kbench_core.workspace import Workspace
from tests.test_engines import _message

ROOT = Path(__file__).resolve().parent.parent
ITEM_GRAIN = ("judged.csv", "replication.csv", "replication_summary.csv", "bias_summary.csv")




@pytest.fixture
def counted(monkeypatch):
    """Counters of the loader's validation (rows it saw), the engine's own cell checks and
    the engine's group-by reduction."""
    calls = {"loader_rows": [], "engine_checks": 0, "reductions": 0}
    from kbench_core.io import finish as io_finish

    checked = io_finish._validate

    def loader(filename, table, *args, **kwargs):
        calls["loader_rows"].append(len(table.frame))
        return checked(filename, table, *args, **kwargs)

    engine_check = validate.validate

    def engine(*args, **kwargs):
        calls["engine_checks"] += 1
        return engine_check(*args, **kwargs)

    reduction = reduce.reduction

    def grouped(*args, **kwargs):
        calls["reductions"] += 1
        return reduction(*args, **kwargs)

    monkeypatch.setattr(io_finish, "_validate", loader)
    monkeypatch.setattr(validate, "validate", engine)
    monkeypatch.setattr(reduce, "reduction", grouped)
    return calls


@pytest.mark.parametrize("name", ITEM_GRAIN)
def test_a_saved_item_grain_run_is_the_memory_frame_validated_once(name, tmp_path, counted):
    run = io.load_run(ROOT / "sample_data" / name)
    space = Workspace(tmp_path / "ws")
    space.save(run)
    ws_module.clear_caches()
    (memory,), _ = Workspace(tmp_path / "ws", engine="memory").open_all()
    expected = memory.frame
    counted["loader_rows"].clear()
    (duck,), _ = Workspace(tmp_path / "ws", engine="duckdb").open_all()
    frame = duck.frame
    # the loader saw every row once, the engine grouped and checked nothing itself
    assert counted["loader_rows"] == [len(run.frame)]
    assert counted["engine_checks"] == counted["reductions"] == 0
    pd.testing.assert_frame_equal(frame, expected, check_dtype=True, check_categorical=True)
    for col in frame.columns:  # the order of the labels is the order of every table's rows
        if isinstance(frame[col].dtype, pd.CategoricalDtype):
            assert list(frame[col].cat.categories) == list(expected[col].cat.categories), col
    resolved = duck.resolve()
    assert resolved.meta["engine"] == "duckdb" and resolved.meta["rows"] == len(run.frame)
    # a second session finishes from the cached typed table: no query, no validation
    counted["loader_rows"].clear()
    (again,), _ = Workspace(tmp_path / "ws", engine="duckdb").open_all()
    pd.testing.assert_frame_equal(again.frame, expected, check_categorical=True)
    assert counted["loader_rows"] == []


def test_a_bias_run_is_still_reduced_and_checked_by_the_engine(tmp_path, counted):
    path = tmp_path / "bias.parquet"
    io.load_run(ROOT / "sample_data" / "bias.csv").frame.to_parquet(path)
    (src,) = source.sources(path)
    assert not reduce.at_item_grain(src)
    (small,) = engines.load(path, engine="duckdb", weighted=True)
    assert counted["reductions"] == counted["engine_checks"] == 1
    assert small.meta["reduced_rows"] < small.meta["rows"]


def test_a_folder_is_reduced_so_its_rows_are_named_by_file(tmp_path):
    run = io.load_run(ROOT / "sample_data" / "judged.csv")
    folder = tmp_path / "archive"
    folder.mkdir()
    run.frame.iloc[:100].to_parquet(folder / "a.parquet")
    run.frame.iloc[100:].to_parquet(folder / "b.parquet")
    (src,) = source.sources(folder)
    assert not reduce.at_item_grain(src)


def test_many_row_groups_keep_the_files_order(tmp_path):
    """DuckDB scans row groups in parallel; the rows still come in file order (the loader's
    row numbers, the categories' order)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    frame = io.load_run(ROOT / "sample_data" / "judged.csv").frame
    rng = np.random.default_rng(3)
    shuffled = frame.iloc[rng.permutation(len(frame))].reset_index(drop=True)
    path = tmp_path / "judged.parquet"
    pq.write_table(pa.Table.from_pandas(shuffled, preserve_index=False), path,
                   row_group_size=97)
    assert pq.ParquetFile(path).metadata.num_row_groups > 10
    (memory,) = engines.load(path, engine="memory")
    (duck,) = engines.load(path, engine="duckdb")
    pd.testing.assert_frame_equal(duck.frame, memory.frame, check_categorical=True)


def _bad_judged() -> pd.DataFrame:
    x = pd.read_csv(ROOT / "sample_data" / "judged.csv")
    x["is_vulnerable"] = x["is_vulnerable"].astype(str)
    x.loc[2, "is_vulnerable"] = "maybe"
    x.loc[40, "confidence"] = -0.5
    x.loc[7, ["sample", "model", "prompt_type", "judge"]] = x.loc[3, ["sample", "model",
                                                                     "prompt_type", "judge"]]
    x.loc[9, "model"] = "   "
    return x


def _bad_replication() -> pd.DataFrame:
    x = pd.read_csv(ROOT / "sample_data" / "replication.csv")
    x.loc[5, "test"] = x.loc[1, "test"]
    for col in ("model", "study", "finding"):
        x.loc[5, col] = x.loc[1, col]
    x.loc[11, "test_type"] = None
    return x


@pytest.mark.parametrize("bad", [_bad_judged, _bad_replication], ids=["judged", "replication"])
def test_bad_cells_and_repeated_keys_get_the_loaders_messages(bad, tmp_path):
    path = tmp_path / f"{bad.__name__}.parquet"
    bad().to_parquet(path)
    memory = _message(path, "memory")
    assert memory != "valid" and "duplicate key" in memory
    assert _message(path, "duckdb") == memory


def test_an_alias_or_padded_column_name_is_read_as_the_loader_reads_it(tmp_path):
    frame = pd.read_csv(ROOT / "sample_data" / "judged.csv")
    path = tmp_path / "judged.parquet"
    frame.rename(columns={"model": " model ", "judge": "judge\t"}).to_parquet(path)
    (memory,) = engines.load(path, engine="memory")
    (duck,) = engines.load(path, engine="duckdb")
    pd.testing.assert_frame_equal(duck.frame, memory.frame, check_categorical=True)


def test_a_run_over_the_decompressed_limit_is_refused(tmp_path, monkeypatch):
    from kbench_core import problems

    path = tmp_path / "judged.parquet"
    pd.read_csv(ROOT / "sample_data" / "judged.csv").to_parquet(path)
    monkeypatch.setattr(problems, "DEFAULT_MAX_DECOMPRESSED", 10_000)
    message = _message(path, "duckdb")
    assert "judged.parquet" in message and "decompressed-size limit" in message
    # the limit is on what the engine fetches, and kbench metrics has a way around it
    assert "the limit is on what it fetches" in message
    assert "KBENCH_JUDGED_CELLS_ROWS=0" in message
    replication = tmp_path / "replication.parquet"
    pd.read_csv(ROOT / "sample_data" / "replication.csv").to_parquet(replication)
    message = _message(replication, "duckdb")
    assert "replication.parquet" in message and "the limit is on what it fetches" in message
    assert "KBENCH_JUDGED_CELLS_ROWS" not in message  # its engine tables at every size
    assert "compute its tables in the engine, fetching none" in message


def test_spark_fetches_the_rows_in_file_order(tmp_path, spark):
    frame = io.load_run(ROOT / "sample_data" / "judged.csv").frame
    path = tmp_path / "judged.parquet"
    frame.to_parquet(path)
    (memory,) = engines.load(path, engine="memory")
    (sparked,) = engines.load(path, engine="spark", backend=spark)
    pd.testing.assert_frame_equal(sparked.frame, memory.frame, check_categorical=True)
    bad = tmp_path / "bad.parquet"
    _bad_judged().to_parquet(bad)
    assert _message(bad, "spark", backend=spark) == _message(bad, "memory")
