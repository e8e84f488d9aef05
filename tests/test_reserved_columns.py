"""A file's own column under one of kbench's internal names (``__kbench_rows``, the row counts
every reader of an engine-read bias run weighs its rows by; ``__kbench_row``/``__kbench_file``,
an engine's place of each row) is left out with a note, by the loader and by every engine: a
stranger's upload cannot weigh its own rows. Columns a file may well have (``filename``) are
read by the engines too."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from kbench_core import engines, families
from kbench_core.io import RunFormatError, load_run
from kbench_core.samples import judged_samples

ROOT = Path(__file__).resolve().parent.parent


def _main(run) -> list[pd.DataFrame]:
    """The run's headline table(s), as ``kbench metrics`` prints them."""
    item = families.main_table(run.kind)
    return [t.reset_index(drop=True) for _, t in item.objects(run.frame, {}, meta=run.meta)]


def _same(run, expected: list[pd.DataFrame]) -> None:
    got = _main(run)
    assert len(got) == len(expected)
    for a, b in zip(got, expected, strict=True):
        pd.testing.assert_frame_equal(a, b, rtol=1e-12, atol=1e-12, check_dtype=False)


def _with(frame: pd.DataFrame, tmp_path: Path, **columns) -> Path:
    path = tmp_path / "run.parquet"
    frame.assign(**columns).to_parquet(path)
    return path


@pytest.fixture(scope="module")
def bias() -> pd.DataFrame:
    return load_run(ROOT / "sample_data" / "bias.csv").frame


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
@pytest.mark.parametrize("column", ["__kbench_rows", "__kbench_row", "__kbench_file",
                                    " __kbench_rows "])
def test_a_file_cannot_pass_its_own_row_counts(bias, tmp_path, engine, column) -> None:
    clean = _with(bias, tmp_path)
    expected = _main(engines.load(clean, engine=engine)[0])
    path = _with(bias, tmp_path, **{column: 1000})
    run = engines.load(path, engine=engine, weighted=True)[0]
    assert len(run) == len(bias)  # not 1000 x the rows
    assert any("left out" in w and column.strip() in w for w in run.warnings)
    _same(run, expected)


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_a_judged_run_with_its_own_row_counts_and_file_names(tmp_path, engine) -> None:
    frame = judged_samples(n_samples=20)
    expected = _main(engines.load(_with(frame, tmp_path), engine=engine)[0])
    run = engines.load(_with(frame, tmp_path, __kbench_rows=7, filename="contract.sol"),
                       engine=engine)[0]
    assert len(run) == len(frame) and (run.frame["filename"] == "contract.sol").all()
    _same(run, expected)


def test_duckdb_names_the_column_it_cannot_read_beside_its_row_numbers(bias, tmp_path) -> None:
    # a bias run is reduced by the engine, which numbers the rows as DuckDB does
    path = _with(bias, tmp_path, file_row_number=1)
    with pytest.raises(RunFormatError, match=r"file_row_number.*--engine memory or spark"):
        engines.load(path, engine="duckdb")
    assert "file_row_number" in engines.load(path, engine="memory")[0].frame  # the loader
    # a judged run is read at its item grain, column by column: the column is kept
    judged = _with(judged_samples(n_samples=5), tmp_path, file_row_number=1)
    assert "file_row_number" in engines.load(judged, engine="duckdb")[0].frame


def test_spark_leaves_them_out_too(spark, bias, tmp_path) -> None:
    expected = _main(engines.load(_with(bias, tmp_path), engine="memory")[0])
    path = _with(bias, tmp_path, __kbench_rows=1000, filename="f")
    (run,) = engines.load(path, engine="spark", backend=spark, weighted=True)
    assert len(run) == len(bias) and any("left out" in w for w in run.warnings)
    _same(run, expected)
