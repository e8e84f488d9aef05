"""Duplicate keys checked by the engine (issue 25): a Parquet run whose key repeats is refused
through DuckDB (and Spark) with the loader's problems (file, row, field, message; the loader's
cap on listed problems and its total), in a folder with every row named ``file:row``; a run
whose keys are distinct, or given only on some rows, is accepted. Expected rows are also
written out by hand from the files the tests build."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kbench_core import engines, io
from kbench_core.engines import keys, source, validate
from kbench_core.problems import MAX_LISTED_PROBLEMS, RunFormatError

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_data"


def _refusal(path: Path, engine: str, **kw) -> tuple[str, list[tuple], int] | None:
    """(file, [(row, field, message)], total) of the RunFormatError, None when accepted."""
    try:
        engines.load(path, engine=engine, **kw)
    except RunFormatError as err:
        return err.file, [(p.row, p.field, p.message) for p in err.problems], err.total
    return None


def _frame(name: str) -> pd.DataFrame:
    """A sample run as the loader reads it, its label columns as plain text."""
    frame = io.load_run(SAMPLES / name).frame.copy(deep=True)
    for col in frame.columns:
        if isinstance(frame[col].dtype, pd.CategoricalDtype) or frame[col].dtype == "str":
            frame[col] = frame[col].astype(object).where(frame[col].notna(), None)
    return frame


def _write(frame: pd.DataFrame, path: Path) -> Path:
    frame.to_parquet(path)
    return path


def _same_as_memory(path: Path) -> tuple[str, list[tuple], int]:
    memory = _refusal(path, "memory")
    assert memory is not None
    assert _refusal(path, "duckdb") == memory
    return memory


# ----------------------------------------------------------------------------- one file


def test_bias_ids_repeated_as_the_loader_says(tmp_path):
    """Ids repeat (twice, three times, a blank id twice); missing ids are no key (the family
    keys a trial only where its id is given), however many."""
    bias = _frame("bias.csv")
    bias.loc[10, "id"] = bias.loc[3, "id"]
    bias.loc[50, "id"] = bias.loc[3, "id"]
    bias.loc[40, "id"] = bias.loc[30, "id"]
    bias.loc[[60, 61], "id"] = ""
    bias.loc[100:200, "id"] = None  # 101 rows without an id: not duplicates
    path = _write(bias, tmp_path / "bias-ids.parquet")
    file, problems, total = _same_as_memory(path)
    first, thirty = bias.loc[3, "id"], bias.loc[30, "id"]
    assert file == "bias-ids.parquet" and total == 4
    assert problems == [
        (11, "id", f"duplicate key (id) = ({first!r}); first seen at row 4"),
        (41, "id", f"duplicate key (id) = ({thirty!r}); first seen at row 31"),
        (51, "id", f"duplicate key (id) = ({first!r}); first seen at row 4"),
        (62, "id", "duplicate key (id) = (''); first seen at row 61"),
    ]


def test_bias_with_missing_ids_and_no_repeat_is_accepted(tmp_path):
    bias = _frame("bias.csv")
    bias.loc[bias.index % 3 == 0, "id"] = None
    path = _write(bias, tmp_path / "bias-some-ids.parquet")
    assert _refusal(path, "memory") is None
    assert _refusal(path, "duckdb") is None


def test_bias_ids_written_as_numbers(tmp_path):
    """Ids the file holds as numbers: the loader keys them as their text, and a missing
    number is a missing id (never the text 'nan'; a bias row is keyed only where its id is
    given), so two missing ids repeat no key; the engine says the same."""
    bias = _frame("bias.csv").iloc[:50].copy()
    bias["id"] = np.arange(50, dtype=float)
    bias.loc[7, "id"] = 2.0
    bias.loc[[20, 30], "id"] = np.nan
    path = _write(bias, tmp_path / "bias-numbers.parquet")
    _, problems, total = _same_as_memory(path)
    assert total == 1
    assert problems == [(8, "id", "duplicate key (id) = ('2'); first seen at row 3")]


@pytest.mark.parametrize("mapped", [keys._MAPPED, 0], ids=["mapped", "regex"])
def test_judged_key_repeats_after_stripping_labels(mapped, tmp_path, monkeypatch):
    """A judged row repeated (its labels padded with white space, a no-break space too, which
    the loader strips), and two rows differing only in a missing prompt type (a label, so it
    is part of the key). The padded labels mapped one by one, or stripped by the regular
    expression the engine uses when there are many."""
    monkeypatch.setattr(keys, "_MAPPED", mapped)
    judged = _frame("judged.csv")
    copy = judged.iloc[[5]].copy()
    copy["model"] = "\u00a0 " + copy["model"] + "\t"
    extra = judged.iloc[[7, 7]].copy()
    extra["prompt_type"] = [None, "  "]
    judged = pd.concat([judged, copy, extra], ignore_index=True)
    path = _write(judged, tmp_path / "judged-repeats.parquet")
    _, problems, total = _same_as_memory(path)
    n = len(judged)
    row5 = judged.iloc[5]
    row7 = judged.iloc[7]
    assert total == 2
    assert problems == [
        (n - 2, "sample, model, prompt_type, judge",
         f"duplicate key (sample, model, prompt_type, judge) = ({row5['sample']!r}, "
         f"{row5['model']!r}, {row5['prompt_type']!r}, {row5['judge']!r}); first seen at row 6"),
        (n, "sample, model, prompt_type, judge",
         f"duplicate key (sample, model, prompt_type, judge) = ({row7['sample']!r}, "
         f"{row7['model']!r}, nan, {row7['judge']!r}); first seen at row {n - 1}"),
    ]


def test_replication_tests_repeat_but_padded_text_does_not(tmp_path):
    """A replication test's name is text (kept verbatim): 'test_1 ' is another test than
    'test_1'; the same name twice is a repeated key."""
    rep = _frame("replication.csv")
    same = rep.iloc[[0]].copy()
    padded = rep.iloc[[1]].copy()
    padded["test"] = padded["test"] + " "
    rep = pd.concat([rep, same, padded], ignore_index=True)
    path = _write(rep, tmp_path / "replication-repeats.parquet")
    _, problems, total = _same_as_memory(path)
    row = rep.iloc[0]
    assert total == 1
    assert problems == [(len(rep) - 1, "model, study, finding, test",
                         f"duplicate key (model, study, finding, test) = ({row['model']!r}, "
                         f"{row['study']!r}, {row['finding']!r}, {row['test']!r}); "
                         "first seen at row 1")]


def test_blank_test_names_are_missing_and_still_keyed(tmp_path):
    """Two tests of one finding with a blank name: each a missing value, and the second a
    repeat of the first (a required text blank is missing, and missing is part of a key);
    the cells' problem listed before the key's at one row."""
    rep = _frame("replication.csv")
    rep.loc[[3, 4], "test"] = ["  ", "\t"]  # rows 4 and 5: study_01/F2
    path = _write(rep, tmp_path / "replication-blank.parquet")
    _, problems, total = _same_as_memory(path)
    assert total == 3
    assert [(p[0], p[1]) for p in problems] == [
        (4, "test"), (5, "test"), (5, "model, study, finding, test")]
    assert problems[2][2].endswith(", nan); first seen at row 4")


@pytest.mark.parametrize("name", ["bias_summary.csv", "replication_summary.csv"])
def test_summary_rows_repeated(name, tmp_path):
    frame = _frame(name)
    frame = pd.concat([frame, frame.iloc[[2, 4]]], ignore_index=True)
    path = _write(frame, tmp_path / name.replace(".csv", ".parquet"))
    _, problems, total = _same_as_memory(path)
    assert total == 2 and [p[0] for p in problems] == [len(frame) - 1, len(frame)]
    assert problems[0][2].endswith("first seen at row 3")


def test_over_the_listed_problem_cap(tmp_path):
    """35 repeated ids: the loader's first 20 listed, all 35 counted."""
    bias = _frame("bias.csv")
    bias.loc[1000:1034, "id"] = bias.loc[0:34, "id"].to_numpy()
    path = _write(bias, tmp_path / "bias-many.parquet")
    _, problems, total = _same_as_memory(path)
    assert total == 35 and len(problems) == MAX_LISTED_PROBLEMS
    assert [p[0] for p in problems] == list(range(1001, 1021))
    assert problems[-1][2].endswith("first seen at row 20")


def test_repeated_keys_among_bad_cells(tmp_path):
    """Bad cells and repeated keys in one run: one list in the loader's order (by row, a
    row's cells before its key), the suspect rows repeating keys among themselves too
    (the loader on the fetched rows would otherwise count them a second time, first seen
    at a fetched row's number)."""
    judged = _frame("judged.csv")
    judged.loc[[3, 9], "confidence"] = 1.5  # bad cells, then a copy of both rows
    judged = pd.concat([judged.iloc[:12], judged.iloc[[3, 9, 0]], judged.iloc[12:]],
                       ignore_index=True)
    path = _write(judged, tmp_path / "judged-mixed.parquet")
    _, problems, total = _same_as_memory(path)
    assert total == 7
    assert [(p[0], p[1]) for p in problems] == [
        (4, "confidence"), (10, "confidence"), (13, "confidence"),
        (13, "sample, model, prompt_type, judge"), (14, "confidence"),
        (14, "sample, model, prompt_type, judge"), (15, "sample, model, prompt_type, judge")]
    assert problems[3][2].endswith("first seen at row 4")


def test_the_count_on_the_reduced_tuples_is_the_count_on_the_rows(tmp_path):
    """The count made on the reduced tuples (judged, replication) and over the rows (no
    reduction given) find the same repeats."""
    import ibis

    judged = _frame("judged.csv")
    judged = pd.concat([judged, judged.iloc[[0, 0, 1]]], ignore_index=True)
    path = _write(judged, tmp_path / "judged-twice.parquet")
    (src,) = source.sources(path)
    table = source.open_table(ibis.duckdb.connect(), src)
    from kbench_core.engines import reduce

    reduced = reduce.reduction(table, src.kind).to_pyarrow()
    on_rows = validate.key_problems(table, src)
    on_reduced = validate.key_problems(table, src, reduced)
    assert on_rows == on_reduced and on_rows[1] == 3


def test_clean_runs_are_accepted(tmp_path):
    for name in ("bias.csv", "judged.csv", "replication.csv", "bias_summary.csv",
                 "replication_summary.csv"):
        path = _write(_frame(name), tmp_path / name.replace(".csv", ".parquet"))
        assert _refusal(path, "duckdb") is None, name


# ----------------------------------------------------------------------------- a folder


def test_a_folder_names_repeats_by_file_and_row(tmp_path):
    """Repeats inside one file of a folder: the loader's problems on that file, each row
    named 'file:row' as the folder's other messages are; a key repeated across the folder's
    files too (the folder is one run), refused by the memory engine in the same words (it
    loads each file alone, then checks the keys across them)."""
    judged = _frame("judged.csv")
    folder = tmp_path / "archive"
    folder.mkdir()
    _write(judged.iloc[:500], folder / "a.parquet")
    b = judged.iloc[500:].reset_index(drop=True)
    b = pd.concat([b, b.iloc[[3]]], ignore_index=True)
    _write(b, tmp_path / "b.parquet")
    alone = _refusal(tmp_path / "b.parquet", "memory")
    assert alone is not None
    shutil.copy(tmp_path / "b.parquet", folder / "b.parquet")
    file, problems, total = _refusal(folder, "duckdb")
    assert file == "archive" and total == alone[2] == 1
    ((row, field, message),) = alone[1]
    assert problems == [(f"b.parquet:{row}", field, message.replace(
        "first seen at row 4", "first seen at row b.parquet:4"))]
    assert row == len(b)

    across = pd.concat([b, judged.iloc[[10]]], ignore_index=True).iloc[1:]
    _write(across, folder / "b.parquet")
    _, problems, total = _refusal(folder, "duckdb")
    assert total == 2
    assert [(p[0], p[2].rsplit("; ", 1)[1]) for p in problems] == [
        (f"b.parquet:{len(b) - 1}", "first seen at row b.parquet:3"),
        (f"b.parquet:{len(b)}", "first seen at row a.parquet:11")]

    # only across the files (each file alone is clean): the memory engine refuses the
    # folder in the engine's words, where it used to load it
    only_across = pd.concat([judged.iloc[500:], judged.iloc[[10, 20]]], ignore_index=True)
    _write(only_across, folder / "b.parquet")
    assert _refusal(folder / "b.parquet", "memory") is None
    refused = _refusal(folder, "duckdb")
    assert refused is not None and refused[2] == 2
    assert _refusal(folder, "memory") == refused
    assert [p[2].rsplit("; ", 1)[1] for p in refused[1]] == [
        "first seen at row a.parquet:11", "first seen at row a.parquet:21"]


# ----------------------------------------------------------------------------- spark


def test_spark_refuses_repeated_keys_as_the_loader_does(tmp_path, spark):
    """Bias ids (counted over the rows) and judged labels padded with a no-break space
    (stripped by the engine as Python strips them: Java's regex on Spark)."""
    bias = _frame("bias.csv")
    bias.loc[10, "id"] = bias.loc[3, "id"]
    bias.loc[[60, 61], "id"] = "  "
    bias.loc[100:200, "id"] = None
    judged = _frame("judged.csv")
    copy = judged.iloc[[5]].copy()
    copy["model"] = "\u00a0" + copy["model"] + "\u3000"
    judged = pd.concat([judged, copy], ignore_index=True)
    for name, frame, total in (("bias", bias, 2), ("judged", judged, 1)):
        path = _write(frame, tmp_path / f"{name}-spark.parquet")
        memory = _refusal(path, "memory")
        assert memory is not None and memory[2] == total
        assert _refusal(path, "spark", backend=spark) == memory


def _setting(con, name: str) -> str:
    return str(con.raw_sql(f"select current_setting('{name}')").fetchone()[0])


def test_duckdb_connections_have_a_memory_limit_and_a_spill_folder_of_their_own() -> None:
    """A 100M-row duplicate-key check needs DuckDB to spill rather than grow (2.2 GiB resident
    at 30M rows without a limit); two connections never share spill files."""
    import gc

    first, second = engines.connect("duckdb"), engines.connect("duckdb")
    limit = _setting(first, "memory_limit")  # e.g. "488.2 MiB"
    assert limit.endswith("MiB") and float(limit.split()[0]) < 1024, limit
    spill = Path(_setting(first, "temp_directory"))
    assert spill != Path(_setting(second, "temp_directory"))
    assert spill.is_dir()
    del first
    gc.collect()
    assert not spill.exists()
