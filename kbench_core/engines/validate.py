"""Validation by the engine: every cell of a queried run checked with the loader's rules
before any number is shown, without loading the run.

The loader (:mod:`kbench_core.validation`) checks, per column of the kind's schema, required
values, types, ranges and allowed labels, then the family's row rules and the cell sizes. Here
each rule becomes an Ibis predicate on the engine's table; their OR marks the *suspect* rows,
counted by one aggregate over the whole run. The predicates are written to hold on every row
the loader would reject (they may also hold on a few it accepts: labels the loader normalises,
text it parses), so a run with no suspect row is a run the loader accepts. When some rows are
suspect, the first :data:`FETCHED` of them (in file order) are fetched and handed to the
loader itself, so the messages (file, row, field, words) are the loader's, its row numbers
mapped back to the rows' places in the file.

Not checked by the engine (the loader checks them on a loaded run): duplicate keys across the
run, and the look-alike label warnings.
"""

from __future__ import annotations

import io as _io
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from kbench_core import families
from kbench_core.engines.source import FILE, ROW, ParquetSource
from kbench_core.problems import MAX_CELL_CHARS, Problem, RunFormatError
from kbench_core.schema import Column
from kbench_core.validation import _FALSE, _TRUE

__all__ = ["FETCHED", "suspect", "validate"]

FETCHED = 10_000  # suspect rows handed to the loader for its messages (and its count)


def _blank(col: Any) -> Any:
    return col.isnull() | (col.strip() == "")


def _column_suspect(col: Any, spec: Column) -> Any:
    """Rows of one column the loader may reject (see the module docstring)."""
    import ibis

    dtype = col.type()
    required = spec.required is True
    false = ibis.literal(False)
    if spec.type in ("text", "category"):
        if not dtype.is_string():
            return col.isnull() if required else false
        bad = _blank(col) if required else false
        if spec.allowed is not None:
            allowed = sorted({*spec.allowed, *(a.lower() for a in spec.allowed)})
            bad = bad | (col.notnull() & ~_blank(col)
                         & ~col.strip().lower().isin(allowed))
        return bad
    if spec.type in ("float", "int"):
        if dtype.is_boolean() or dtype.is_temporal() or dtype.is_interval():
            return col.notnull()
        if dtype.is_string():  # numbers as text: the loader parses them; suspect unless plain
            values = col.strip().try_cast("float64")
            bad = col.notnull() & ~_blank(col) & values.isnull()
            missing = _blank(col)
        elif dtype.is_numeric():
            values = col.cast("float64")
            bad = false
            missing = col.isnull()
        else:
            return col.notnull()
        if dtype.is_floating() or dtype.is_string():
            bad = bad | values.isnan() | values.isinf()
            missing = missing | values.isnan()
        if required:
            bad = bad | missing
        if spec.low is not None:
            bad = bad | ((values <= spec.low) if spec.low_open else (values < spec.low))
        if spec.high is not None:
            bad = bad | (values > spec.high)
        if spec.type == "int":
            bad = bad | (values != values.floor())
        return bad.fill_null(False)
    if spec.type == "bool":
        if dtype.is_boolean():
            return col.isnull() if required else false
        words = sorted(_TRUE | _FALSE)
        text = col.cast("string").strip().lower()
        bad = col.notnull() & ~text.isin(words)
        return (bad | col.isnull()) if required else bad
    # lines: '12;13' text; anything else (lists) goes to the loader
    if dtype.is_string():
        bad = col.notnull() & ~col.re_search(r"^[0-9;,\s]*$")
        return (bad | _blank(col)) if required else bad
    return col.notnull()


def _rule_suspect(kind: str, table: Any) -> Any | None:
    """The family's row rules (``Family.rules``) as predicates: a needed value missing."""
    columns = set(table.columns)

    def absent(name: str) -> Any:
        if name not in columns:
            import ibis

            return ibis.literal(True)
        col = table[name]
        return _blank(col) if col.type().is_string() else (
            col.isnull() | col.isnan() if col.type().is_floating() else col.isnull())

    if kind == "bias" and "condition" in columns:
        condition = table["condition"].cast("string").strip().lower()
        return (((condition == "treatment") & absent("intensity"))
                | ((condition == "debiasing") & absent("method")))
    if kind == "replication" and {"human_effect", "test_type"} <= columns:
        has_effect = ~absent("human_effect") | ~absent("agent_effect")
        return has_effect & absent("test_type")
    if kind == "replication_summary" and "finding" in columns:
        rows = ~absent("finding")
        return rows & (absent("finding_score") | absent("n_tests"))
    return None


def suspect(table: Any, kind: str) -> Any:
    """The boolean Ibis expression marking the rows of ``table`` the loader may reject."""
    import ibis

    spec = families.spec(kind)
    bad = ibis.literal(False)
    for name in table.columns:
        if name in (ROW, FILE):
            continue
        col = table[name]
        known = spec.column(name) if name in {c.name for c in spec.columns} else None
        if known is not None:
            bad = bad | _column_suspect(col, known)
        if col.type().is_string():  # every column, as the loader's cell-size check
            bad = bad | (col.length() > MAX_CELL_CHARS).fill_null(False)
    rule = _rule_suspect(kind, table)
    if rule is not None:
        bad = bad | rule.fill_null(False)
    return bad


def _file_level(table: Any, src: ParquetSource) -> None:
    """Missing required columns and the family's file-level rules: the loader on no rows."""
    from kbench_core.readers import _Table
    from kbench_core.validation import _validate

    empty = table.drop(ROW, FILE).limit(0).to_pyarrow().to_pandas()
    import numpy as np

    try:
        _validate(src.label, _Table(empty, np.zeros(0, dtype=np.int64), "row"),
                  families.spec(src.kind), "raise", [])
    except RunFormatError as err:
        if any(p.row is None for p in err.problems):
            raise


def validate(table: Any, src: ParquetSource) -> None:
    """Raise the loader's :class:`~kbench_core.problems.RunFormatError` when the run queried
    as ``table`` has a cell the loader rejects (see the module docstring); return quietly
    when every cell passes."""
    from kbench_core.io import load_run

    _file_level(table, src)
    flagged = table.filter(suspect(table, src.kind))
    n_suspect = int(flagged.count().to_pyarrow().as_py())
    if n_suspect == 0:
        return
    rows = flagged.order_by([FILE, ROW]).limit(FETCHED).to_pyarrow()
    files = rows.column(FILE).to_pylist()
    places = rows.column(ROW).to_pylist()
    several = len(src.files) > 1
    body = rows.drop_columns([FILE, ROW])
    data = _io.BytesIO()
    pq.write_table(_plain(body), data)
    try:
        load_run((src.label if src.label.endswith(".parquet") else f"{src.label}.parquet",
                  data.getvalue()), kind=src.kind)  # type: ignore[arg-type]
    except RunFormatError as err:
        problems = [Problem(_where(p.row, files, places, several), p.field, p.message, p.unit)
                    for p in err.problems]
        total = err.total if n_suspect <= FETCHED else max(err.total, n_suspect)
        raise RunFormatError(src.label, problems, total) from None
    # Every suspect row passed the loader: labels it normalises, numbers it parses.


def _plain(table: pa.Table) -> pa.Table:
    """Engine output as the reader would see it in a file: dictionary columns decoded."""
    return pa.table({name: (col.dictionary_decode() if pa.types.is_dictionary(col.type)
                            else col) for name, col in zip(table.column_names, table.columns,
                                                           strict=True)})


def _where(row: int | str | None, files: list, places: list, several: bool) -> int | str | None:
    """The loader's 1-based row of the fetched table, as the row's place in its file (with
    the file's name when the run is a folder of files)."""
    if not isinstance(row, int) or not 1 <= row <= len(places):
        return row
    place = int(places[row - 1]) + 1
    if not several:
        return place
    return f"{str(files[row - 1]).replace(chr(92), '/').rsplit('/', 1)[-1]}:{place}"
