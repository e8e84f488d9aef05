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
from kbench_core.engines.source import COUNT, FILE, ROW, ParquetSource, plain
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


_MANY = 100_000  # distinct labels fetched to check in Python; more: checked row by row


class _Labels:
    """The distinct values of a run's text columns, fetched once per column (a query of its
    own, cheap for labels: a million rows hold a few hundred), so label rules are checked per
    distinct value and become an ``isin`` on the rows only when some value fails."""

    def __init__(self, table: Any) -> None:
        self.table = table
        self._seen: dict[str, list | None] = {}

    def of(self, name: str) -> list | None:
        """The column's distinct non-null values, or None when there are more than
        :data:`_MANY`."""
        if name not in self._seen:
            values = (self.table.select(name).distinct().limit(_MANY + 1).to_pyarrow()
                      .column(0).to_pylist())
            self._seen[name] = (None if len(values) > _MANY
                                else [v for v in values if v is not None])
        return self._seen[name]

    def matching(self, name: str, test: Any) -> Any | None:
        """The rows whose value passes ``test`` (a predicate on the text), as ``isin`` over
        the distinct values; None when the column has too many to fetch."""
        import ibis

        values = self.of(name)
        if values is None:
            return None
        hits = [v for v in values if test(v)]
        return self.table[name].isin(hits) if hits else ibis.literal(False)


def _label_suspect(labels: _Labels, name: str, spec: Column) -> Any | None:
    """A label column's rows the loader may reject, via its distinct values (None: too many
    values, check row by row)."""
    allowed = None if spec.allowed is None else {a.lower() for a in spec.allowed}

    def bad(value: str) -> bool:
        text = value.strip()
        if not text:
            return spec.required is True
        return (allowed is not None and text.lower() not in allowed) or \
            len(value) > MAX_CELL_CHARS
    found = labels.matching(name, bad)
    if found is None:
        return None
    return (labels.table[name].isnull() | found) if spec.required is True else found


def _rule_suspect(kind: str, table: Any, labels: _Labels) -> Any | None:
    """The family's row rules (``Family.rules``) as predicates: a needed value missing."""
    import ibis

    columns = set(table.columns)

    def absent(name: str) -> Any:
        if name not in columns:
            return ibis.literal(True)
        col = table[name]
        if col.type().is_string():
            blank = labels.matching(name, lambda v: not v.strip())
            return col.isnull() | (_blank(col) if blank is None else blank)
        return col.isnull() | col.isnan() if col.type().is_floating() else col.isnull()

    def said(name: str, word: str) -> Any:
        col = table[name]
        if not col.type().is_string():
            return col.cast("string").strip().lower() == word
        hits = labels.matching(name, lambda v: v.strip().lower() == word)
        return (col.strip().lower() == word) if hits is None else hits

    if kind == "bias" and "condition" in columns:
        return ((said("condition", "treatment") & absent("intensity"))
                | (said("condition", "debiasing") & absent("method")))
    if kind == "replication" and {"human_effect", "test_type"} <= columns:
        has_effect = ~absent("human_effect") | ~absent("agent_effect")
        return has_effect & absent("test_type")
    if kind == "replication_summary" and "finding" in columns:
        rows = ~absent("finding")
        return rows & (absent("finding_score") | absent("n_tests"))
    return None


def suspect(table: Any, kind: str) -> Any:
    """The boolean Ibis expression marking the rows of ``table`` the loader may reject.

    Label columns are checked per distinct value and numbers per row (cheap comparisons);
    cell sizes by one aggregate of every text column's longest cell, a column becoming a
    row predicate only when it has a cell over the limit."""
    import ibis

    spec = families.spec(kind)
    known = {c.name: c for c in spec.columns}
    labels = _Labels(table)
    bad = ibis.literal(False)
    sized = []
    for name in table.columns:
        if name in (ROW, FILE):
            continue
        col = table[name]
        column = known.get(name)
        is_text = col.type().is_string()
        if column is not None and is_text and column.type in ("text", "category") and (
                column.allowed is not None or column.required is True):
            found = _label_suspect(labels, name, column)
            if found is not None:
                bad = bad | found
                continue
        if column is not None:
            bad = bad | _column_suspect(col, column)
        if is_text:
            sized.append(name)
    if sized:
        longest = table.aggregate(**{f"c{i}": table[n].length().max()
                                     for i, n in enumerate(sized)}).to_pyarrow()
        for i, name in enumerate(sized):
            if (longest.column(f"c{i}")[0].as_py() or 0) > MAX_CELL_CHARS:
                bad = bad | (table[name].length() > MAX_CELL_CHARS).fill_null(False)
    rule = _rule_suspect(kind, table, labels)
    if rule is not None:
        bad = bad | rule.fill_null(False)
    return bad


def _byte_length(table: Any) -> Any:
    """A function of a text column giving its cells' lengths in bytes where the backend has
    one (DuckDB's ``strlen``, Spark's ``octet_length``: no UTF-8 decoding), else in
    characters. Bytes bound characters from above, so a column whose longest cell has at
    most :data:`MAX_CELL_CHARS` bytes has no cell over the limit."""
    import ibis

    name = {"duckdb": "strlen", "pyspark": "octet_length"}.get(ibis.get_backend(table).name)
    if name is None:
        return lambda col: col.length()

    @ibis.udf.scalar.builtin(name=name)
    def length(text: str) -> int:  # type: ignore[empty-body]
        """The backend's own byte length."""

    return length


def _clean(table: Any, src: ParquetSource, reduced: pa.Table) -> bool:
    """Whether no row of the run can be suspect: the reduced tuples checked by
    :func:`suspect` (on an in-process DuckDB: they are few), the other columns by one
    aggregate (numbers per row, text by its longest cell in bytes)."""
    import ibis

    kept = [c for c in reduced.column_names if c != COUNT]
    small = ibis.duckdb.connect().create_table("reduced", plain(reduced.select(kept)))
    if int(small.filter(suspect(small, src.kind)).count().to_pyarrow().as_py()):
        return False
    spec = families.spec(src.kind)
    known = {c.name: c for c in spec.columns}
    others = [c for c in table.columns if c not in kept and c not in (ROW, FILE)]
    if not others:
        return True
    length = _byte_length(table)
    measures = {}
    rules = [rule for rule in (_column_suspect(table[name], known[name])
                               for name in others if name in known)
             if type(rule.op()).__name__ != "Literal"]  # a column with nothing to check
    if rules:
        measures["bad"] = ibis.or_(*rules).fill_null(False).cast("int64").sum()
    for i, name in enumerate(others):
        if table[name].type().is_string():
            measures[f"c{i}"] = length(table[name]).max()
    if not measures:
        return True
    found = table.aggregate(**measures).to_pyarrow()
    if rules and (found.column("bad")[0].as_py() or 0) > 0:
        return False
    measures.pop("bad", None)
    return all((found.column(k)[0].as_py() or 0) <= MAX_CELL_CHARS for k in measures)


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


def validate(table: Any, src: ParquetSource, reduced: pa.Table | None = None) -> None:
    """Raise the loader's :class:`~kbench_core.problems.RunFormatError` when the run queried
    as ``table`` has a cell the loader rejects (see the module docstring); return quietly
    when every cell passes.

    ``reduced``: the run's sufficient table (:func:`~kbench_core.engines.reduce.reduction`),
    when already made. A row is suspect or not by the values of its columns alone, and every
    column the reduction keeps is in it, so those columns are checked on its few distinct
    tuples; the columns it leaves out (a bias run's prompts, ids, timings) by one aggregate
    over the rows. Only when either finds something are the rows searched, as above, for the
    loader's messages."""
    _file_level(table, src)
    if reduced is not None and _clean(table, src, reduced):
        return
    flagged = table.filter(suspect(table, src.kind))
    n_suspect = int(flagged.count().to_pyarrow().as_py())
    if n_suspect == 0:
        return
    ordered = flagged.order_by([FILE, ROW])
    # Page through the suspect rows until the loader finds a problem: rows it accepts (a
    # label it normalises, a number written as text) may come first.
    for offset in range(0, n_suspect, FETCHED):
        _check_page(ordered.limit(FETCHED, offset=offset).to_pyarrow(), src,
                    n_suspect - offset)


def _check_page(rows: pa.Table, src: ParquetSource, left: int) -> None:
    """The loader on one page of suspect rows; its error, rows renumbered, if it has one
    (``left``: suspect rows from this page on, the lower bound of the total when the page
    is not the last)."""
    from kbench_core.io import load_run

    files = rows.column(FILE).to_pylist()
    places = rows.column(ROW).to_pylist()
    several = len(src.files) > 1
    data = _io.BytesIO()
    pq.write_table(plain(rows.drop_columns([FILE, ROW])), data)
    try:
        load_run((src.label if src.label.endswith(".parquet") else f"{src.label}.parquet",
                  data.getvalue()), kind=src.kind)  # type: ignore[arg-type]
    except RunFormatError as err:
        problems = [Problem(_where(p.row, files, places, several), p.field, p.message, p.unit)
                    for p in err.problems]
        total = err.total if left <= FETCHED else max(err.total, left)
        raise RunFormatError(src.label, problems, total) from None


def _where(row: int | str | None, files: list, places: list, several: bool) -> int | str | None:
    """The loader's 1-based row of the fetched table, as the row's place in its file (with
    the file's name when the run is a folder of files)."""
    if not isinstance(row, int) or not 1 <= row <= len(places):
        return row
    place = int(places[row - 1]) + 1
    if not several:
        return place
    return f"{str(files[row - 1]).replace(chr(92), '/').rsplit('/', 1)[-1]}:{place}"
