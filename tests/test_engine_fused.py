"""Validation fused into the reduction (issue 39, item 2): the cells of the columns a bias
reduction leaves out (ids, prompts, responses, timings) are checked by counts the reduction
computes per tuple in its own pass, the rows fetched only when a count is not 0, with the
loader's messages."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kbench_core import engines
from kbench_core.engines import reduce, source, validate
from kbench_core.problems import MAX_CELL_CHARS, RunFormatError
from kbench_core.samples import big_bias_trials


def _message(path, engine: str) -> str:
    with pytest.raises(RunFormatError) as err:
        engines.load(path, engine=engine)
    return str(err.value)


def _frame() -> pd.DataFrame:
    return big_bias_trials(2_000, seed=1)


BAD = {
    "negative time": lambda f: f.assign(response_ms=np.where(np.arange(len(f)) == 7, -3.0,
                                                             f["response_ms"])),
    "time as a word": lambda f: f.assign(response_ms=[
        "soon" if i in (4, 9) else str(v) for i, v in enumerate(f["response_ms"])]),
    "long response": lambda f: f.assign(response=[
        "x" * (MAX_CELL_CHARS + 1) if i == 11 else v for i, v in enumerate(f["response"])]),
    "long id": lambda f: f.assign(id=[
        "é" * (MAX_CELL_CHARS + 1) if i == 5 else v for i, v in enumerate(f["id"])]),
}


def test_a_cell_long_in_bytes_not_in_characters_passes(tmp_path):
    """The reduction's count of long cells is in bytes (no UTF-8 decoding): a cell over the
    limit in bytes only is looked at again by its characters, and passes as in the loader."""
    path = tmp_path / "bias-wide.parquet"
    frame = _frame()
    frame["id"] = ["é" * (MAX_CELL_CHARS // 2 + 1) if i == 5 else v
                   for i, v in enumerate(frame["id"])]
    frame.to_parquet(path)
    (memory,) = engines.load(path, engine="memory")
    (duck,) = engines.load(path, engine="duckdb", weighted=True)
    assert duck.meta["rows"] == len(memory.frame)


@pytest.mark.parametrize("name", list(BAD))
def test_a_bad_cell_left_out_of_the_reduction_is_the_loaders(name, tmp_path):
    path = tmp_path / "bias-bad.parquet"
    BAD[name](_frame()).to_parquet(path)
    assert _message(path, "duckdb") == _message(path, "memory")


def test_a_valid_run_is_checked_in_the_reductions_pass(tmp_path, monkeypatch):
    """The columns left out are checked by the reduction's own counts: no other query of
    them (the old ``_clean`` aggregate) runs on a valid run."""
    path = tmp_path / "bias.parquet"
    _frame().to_parquet(path)
    seen = []
    clean = validate._clean

    def recorded(table, src, reduced, others_clean=None):
        seen.append(others_clean)
        return clean(table, src, reduced, others_clean)

    monkeypatch.setattr(validate, "_clean", recorded)
    monkeypatch.setattr(validate, "row_checks", _counted(validate.row_checks))
    (run,) = engines.load(path, engine="duckdb")
    assert seen == [True]
    assert _counted.calls == 1  # built once, into the reduction
    assert reduce.COUNT in run.frame or len(run.frame) == run.meta["rows"]


def _counted(function):
    _counted.calls = 0

    def wrapper(*args, **kwargs):
        _counted.calls += 1
        return function(*args, **kwargs)
    return wrapper


def test_the_reductions_counts_find_each_rule(tmp_path):
    import ibis

    frame = BAD["time as a word"](BAD["negative time"](_frame()))
    path = tmp_path / "bias-counts.parquet"
    frame.to_parquet(path)
    (src,) = source.sources(path)
    table = source.open_table(ibis.duckdb.connect(), src)
    kept = reduce.read_columns(src.kind, list(table.columns))
    reduced = reduce.reduction(table, src.kind, checks=lambda rows: validate.row_checks(
        rows, src, kept)).to_pyarrow()
    counts = {n: sum(reduced.column(n).to_pylist()) for n in reduced.column_names
              if n.startswith(f"{validate.CHECKED}bad")}
    assert sorted(counts.values()) == [0, 3]  # trial: none; response_ms: 2 words, 1 negative
    rest, clean = validate.checked_clean(reduced)
    assert not clean and not any(n.startswith(validate.CHECKED) for n in rest.column_names)
    plain = reduce.reduction(table, src.kind).to_pyarrow()
    assert rest.equals(plain)  # the same tuples, counts and order
