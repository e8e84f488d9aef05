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

Duplicate keys across the run (the loader's :func:`~kbench_core.validation.columns._check_keys`:
the family's ``spec.key``, a bias run's ``id`` only where one is given) are an engine query of
their own (:func:`key_problems`): the key columns as the loader compares them (labels
stripped, a blank label missing), grouped with the groups of more than one row counted, one
aggregate that finds nothing on a valid run. A family whose key columns the reduction keeps
(judged, replication and the summaries) is checked on the reduced tuples, in process
(600k judged rows: 0.46 s, against 2.0 s for the reduction and the cell checks; its labels
stripped as the loader strips them by a look at their distinct values, not a function on
every row: :func:`_loader_text`); a bias run's ids stay in the engine and cost one group-by
over the rows of their 64-bit hashes, the text compared only where two hashes clash
(:func:`_clashing`): a group-by of the text ids needed 2.2 GiB at 30M rows and ran out of
DuckDB's 512 MB at 100M, the hashes fit (30M rows: the whole engine part 8.3 s, 0.8 GiB; 100M
25 s). Only when a key repeats are its first
:data:`~kbench_core.problems.MAX_LISTED_PROBLEMS` repeats fetched, each with the place of its
key's first row, and worded as the loader words them; a folder's rows are named ``file:row``
as every other message names them, and its keys are checked across its files (the folder is
one run). The loader run on a page of suspect rows is given rows whose keys do not repeat
(:func:`_layers`), so its messages are the cells' only, merged with the engine's key problems
in the loader's order (by row; at one row, the cells' problems first).

Not checked by the engine (the loader checks them on a loaded run): the look-alike label
warnings.
"""

from __future__ import annotations

import io as _io
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from kbench_core import families
from kbench_core.engines.keys import (
    Labels,
    _key_names,
    _Listed,
    _loader_canonical,
    _place,
    key_problems,
)
from kbench_core.engines.source import COUNT, FILE, ROW, ParquetSource, plain
from kbench_core.problems import MAX_CELL_CHARS, Problem, RunFormatError
from kbench_core.schema import Column
from kbench_core.validation import _FALSE, _TRUE

__all__ = ["CHECKED", "FETCHED", "checked_clean", "key_problems", "row_checks", "suspect",
           "validate"]

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
        if dtype.is_array() or dtype.is_struct() or dtype.is_map():
            # every nested value is refused (no label), a missing one too where required
            return (col.notnull() | col.isnull()) if required else col.notnull()
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


def _label_suspect(labels: Labels, name: str, spec: Column) -> Any | None:
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


def _rule_suspect(kind: str, table: Any, labels: Labels) -> Any | None:
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

    rule = families.get(kind).suspect_rows
    return None if rule is None else rule(absent, said, columns)


def suspect(table: Any, kind: str, labels: Labels | None = None) -> Any:
    """The boolean Ibis expression marking the rows of ``table`` the loader may reject.

    Label columns are checked per distinct value and numbers per row (cheap comparisons);
    cell sizes by one aggregate of every text column's longest cell, a column becoming a
    row predicate only when it has a cell over the limit. ``labels``: ``table``'s distinct
    values, when at hand (one made for another table is not used: its predicates would
    name that table's columns)."""
    import ibis

    spec = families.spec(kind)
    known = {c.name: c for c in spec.columns}
    if labels is None or labels.table is not table:
        labels = Labels(table)
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


CHECKED = "__kbench_check_"  # the prefix of the per-tuple check columns of a reduction


def row_checks(table: Any, src: ParquetSource, kept: list[str]) -> dict[str, Any]:
    """The checks of the columns a reduction leaves out (``kept``: those it groups by), as
    aggregates the reduction computes per tuple in its single pass over the rows
    (:func:`kbench_core.engines.reduce.reduction`'s ``checks``): for each such column with
    a rule, the count of its bad cells (``<prefix>bad<i>``, numbers per row: a missing
    required value, a range, a whole number), and for each text column its longest cell in
    bytes (``<prefix>len<i>``). :func:`checked_clean` reads them back."""
    known = {c.name: c for c in families.spec(src.kind).columns}
    others = [c for c in table.columns
              if c not in kept and c not in (ROW, FILE) and not c.startswith("__kbench_")]
    length = _byte_length(table)
    measures = {}
    for i, name in enumerate(others):
        if name in known:
            rule = _column_suspect(table[name], known[name])
            if type(rule.op()).__name__ != "Literal":  # a column with nothing to check
                measures[f"{CHECKED}bad{i}"] = rule.fill_null(False).cast("int64").sum()
        if table[name].type().is_string():
            measures[f"{CHECKED}len{i}"] = length(table[name]).max()
    return measures


def checked_clean(reduced: pa.Table) -> tuple[pa.Table, bool]:
    """The reduction without its check columns (:func:`row_checks`), and whether they found
    nothing: no bad cell counted, no cell longer than the limit."""
    import pyarrow.compute as pc

    names = [n for n in reduced.column_names if n.startswith(CHECKED)]
    clean = True
    for name in names:
        column = reduced.column(name)
        if name.startswith(f"{CHECKED}bad"):
            clean = clean and not (pc.sum(column).as_py() or 0)
        else:
            clean = clean and (pc.max(column).as_py() or 0) <= MAX_CELL_CHARS
    return reduced.drop_columns(names), clean


def _clean(table: Any, src: ParquetSource, reduced: pa.Table,
           others_clean: bool | None = None) -> bool:
    """Whether no row of the run can be suspect: the reduced tuples checked by
    :func:`suspect` (on an in-process DuckDB: they are few), the other columns by one
    aggregate (numbers per row, text by its longest cell in bytes), or by the reduction's
    own check columns (``others_clean``: :func:`checked_clean`)."""
    import ibis

    kept = [c for c in reduced.column_names if c != COUNT]
    small = ibis.duckdb.connect().create_table("reduced", plain(reduced.select(kept)))
    if int(small.filter(suspect(small, src.kind)).count().to_pyarrow().as_py()):
        return False
    if others_clean is not None:
        return others_clean
    measures = row_checks(table, src, kept)
    if not measures:
        return True
    found = table.aggregate(**measures).to_pyarrow()
    return checked_clean(found)[1]


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


def validate(table: Any, src: ParquetSource, reduced: pa.Table | None = None, *,
             others_clean: bool | None = None) -> Labels:
    """Raise the loader's :class:`~kbench_core.problems.RunFormatError` when the run queried
    as ``table`` has a cell the loader rejects or a key it has seen before (see the module
    docstring); return quietly when every cell passes and every key is new.

    ``reduced``: the run's sufficient table (:func:`~kbench_core.engines.reduce.reduction`),
    when already made. A row is suspect or not by the values of its columns alone, and every
    column the reduction keeps is in it, so those columns are checked on its few distinct
    tuples; the columns it leaves out (a bias run's prompts, ids, timings) by one aggregate
    over the rows, or by the reduction itself in its pass (``others_clean``, what its check
    columns found: :func:`row_checks`, :func:`checked_clean`). Only when either finds
    something are the rows searched, as above, for the loader's messages.

    Returns the run's distinct labels it read (:class:`~kbench_core.engines.keys.Labels` of
    ``table``), for what reads them after the validation (the judges' names, the normalised
    rows, a replication run's tables): each label column is then fetched once."""
    _file_level(table, src)
    labels = Labels(table)
    keys = key_problems(table, src, reduced, labels)
    if reduced is None or not _clean(table, src, reduced, others_clean):
        flagged = table.filter(suspect(table, src.kind, labels))
        n_suspect = int(flagged.count().to_pyarrow().as_py())
        ordered = flagged.order_by([FILE, ROW])
        # Page through the suspect rows until the loader finds a problem: rows it accepts (a
        # label it normalises, a number written as text) may come first.
        for offset in range(0, n_suspect, FETCHED):
            _check_page(ordered.limit(FETCHED, offset=offset).to_pyarrow(), src,
                        n_suspect - offset, keys)
    if keys[1]:
        raise RunFormatError(src.label, [p for _, p in keys[0]], keys[1])
    return labels


def _layers(rows: pa.Table, kind: str) -> Any:
    """For each fetched row, how many rows before it in ``rows`` have its key (the loader's
    canonical key; 0 where the loader keys no row): rows of one layer repeat no key, so the
    loader run on each layer alone reports their cells and no duplicate key (the engine
    reports those, with the run's rows: :func:`key_problems`)."""
    import numpy as np
    import pandas as pd

    key = _key_names(rows.column_names, kind)
    if key is None or rows.num_rows < 2:
        return np.zeros(rows.num_rows, dtype=np.int64)
    spec = families.spec(kind)
    frame = plain(rows.select(key)).to_pandas()
    canonical = pd.DataFrame({k: _loader_canonical(frame[k], spec.column(k))
                              for k in key}).astype(object)
    layer = canonical.groupby(key, dropna=False, sort=False).cumcount().to_numpy()
    if families.get(kind).key_where_given:
        layer = np.where(canonical.notna().all(axis=1).to_numpy(), layer, 0)
    return layer


def _check_page(rows: pa.Table, src: ParquetSource, left: int,
                keys: tuple[_Listed, int] = ([], 0)) -> None:
    """The loader on one page of suspect rows; its error, rows renumbered and merged with
    the run's duplicate-key problems (``keys``), if it has one (``left``: suspect rows from
    this page on, the lower bound of the total when the page is not the last)."""
    import numpy as np

    from kbench_core.io import load_run

    files = rows.column(FILE).to_pylist()
    places = rows.column(ROW).to_pylist()
    several = len(src.files) > 1
    layers = _layers(rows.drop_columns([FILE, ROW]), src.kind)
    found: _Listed = []
    total = 0
    for layer in range(int(layers.max()) + 1 if len(layers) else 0):
        picked = np.flatnonzero(layers == layer)
        data = _io.BytesIO()
        pq.write_table(plain(rows.take(picked).drop_columns([FILE, ROW])), data)
        try:
            load_run((src.label if src.label.endswith(".parquet") else f"{src.label}.parquet",
                      data.getvalue()), kind=src.kind)  # type: ignore[arg-type]
        except RunFormatError as err:
            total += err.total
            for p in err.problems:
                at = int(picked[p.row - 1]) if isinstance(p.row, int) and \
                    1 <= p.row <= len(picked) else None
                place = (str(files[at]), int(places[at]), 0) if at is not None else ("", -1, 0)
                row = _place(files[at], places[at], several) if at is not None else p.row
                found.append((place, Problem(row, p.field, p.message, p.unit)))
    if not found:
        return
    total = total if left <= FETCHED else max(total, left)
    merged = sorted(found + keys[0], key=lambda item: item[0])  # stable: the loader's order
    raise RunFormatError(src.label, [p for _, p in merged], total + keys[1]) from None
