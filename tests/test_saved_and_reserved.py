"""A weighted run saved to a workspace keeps its numbers, the work-ahead thread lets a
finished task's data go, and an engine leaves out kbench's own column names whatever their
case (issue 25)."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import pandas as pd
import pytest

from kbench_core import engines, families
from kbench_core.io import load_run
from kbench_core.workspace import Workspace

ROOT = Path(__file__).resolve().parent.parent


def _main(run) -> pd.DataFrame:
    item = families.main_table(run.kind)
    return next(t.reset_index(drop=True) for _, t in item.objects(run.frame, {}, meta=run.meta))


@pytest.fixture(scope="module")
def bias() -> pd.DataFrame:
    return load_run(ROOT / "sample_data" / "bias.csv").frame


@pytest.mark.parametrize("reload_engine", ["memory", "duckdb"])
def test_a_weighted_run_saved_to_a_workspace_reloads_with_the_same_numbers(
        bias, tmp_path, reload_engine) -> None:
    # the loader leaves out a file's __kbench_rows, so the saved file must not rely on it
    path = tmp_path / "bias.parquet"
    bias.to_parquet(path)
    (run,) = engines.load(path, engine="duckdb", weighted=True)
    assert "__kbench_rows" in run.frame and len(run.frame) < len(bias)
    directory = tmp_path / "ws"
    directory.mkdir()
    Workspace(directory).save(run)
    (back,), errors = Workspace(directory, engine=reload_engine).load_all()
    assert not errors and len(back) == len(bias)
    pd.testing.assert_frame_equal(_main(back), _main(run), check_dtype=False, rtol=1e-12)


def test_the_work_ahead_thread_lets_go_of_a_finished_task() -> None:
    # a task holds a session's run (its frame): an idle worker must not keep it alive
    from kbench_app import prefetch

    class Held:
        pass

    held = Held()
    ref = weakref.ref(held)
    prefetch._WORKER.submit(("review25", id(held)), lambda held=held: None, "review25")
    assert prefetch.wait_idle(30)
    del held
    gc.collect()
    assert ref() is None


@pytest.mark.parametrize("column", ["__KBENCH_ROW", "__Kbench_File", "__KBENCH_ROWS",
                                    "File_Row_Number"])
def test_duckdb_reads_a_file_with_kbench_names_in_another_case(bias, tmp_path,
                                                               column) -> None:
    # DuckDB's names are case-insensitive: such a column clashed with kbench's own and the
    # load failed with a bare KeyError / BinderException
    clean = tmp_path / "clean.parquet"
    bias.to_parquet(clean)
    expected = _main(engines.load(clean, engine="memory")[0])
    path = tmp_path / "run.parquet"
    bias.assign(**{column: 1000}).to_parquet(path)
    if column.lower() == "file_row_number":
        from kbench_core.io import RunFormatError

        with pytest.raises(RunFormatError, match="file_row_number"):
            engines.load(path, engine="duckdb")
        return
    (run,) = engines.load(path, engine="duckdb", weighted=True)
    assert any("left out" in w for w in run.warnings)
    pd.testing.assert_frame_equal(_main(run), expected, check_dtype=False, rtol=1e-12)
