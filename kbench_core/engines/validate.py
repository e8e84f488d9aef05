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
from kbench_core.engines.source import COUNT, FILE, ROW, ParquetSource, plain
from kbench_core.problems import MAX_CELL_CHARS, MAX_LISTED_PROBLEMS, Problem, RunFormatError
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

    rule = families.get(kind).suspect_rows
    return None if rule is None else rule(absent, said, columns)


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


# ------------------------------------------------------------------------ duplicate keys

_Listed = list[tuple[tuple, Problem]]  # problems with their place in the run, to merge
# Python's white space (str.isspace: a no-break space too), which the loader strips from a
# label; SQL's trim strips only ASCII. \x{...} is read by RE2 (DuckDB) and Java (Spark).
_SPACE = (r"[\x{9}-\x{d}\x{1c}-\x{20}\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}"
          r"\x{202f}\x{205f}\x{3000}]")


_MAPPED = 1_000  # padded labels mapped one by one to their stripped text; more: a regex


def _loader_text(table: Any, name: str, *, strip: bool) -> Any:
    """A text key column as the loader keys it: stripped by Python's ``str.strip`` (a
    label, ``strip``) or verbatim (a text), a blank value missing.

    Worked out on the column's distinct values: a column with no padded or blank value (the
    usual case) is keyed as it is, with no function on its rows (SQL's trim on every row
    tripled the time of a key check of 600k judged rows); a few padded values are mapped
    to their stripped text, blank ones to null; a column of too many distinct values or
    padded ones is stripped by a regular expression on every row."""
    import ibis

    col = table[name]
    values = _Labels(table).of(name)
    changed = {} if values is None or not strip else {
        v: v.strip() for v in values if v.strip() and v.strip() != v}
    if values is None or len(changed) > _MAPPED:
        stripped = col.re_replace(rf"^{_SPACE}+|{_SPACE}+$", "")
        return ibis.ifelse(stripped == "", ibis.null("string"), stripped if strip else col)
    blank = [v for v in values if not v.strip()]
    value = col.substitute(changed, else_=col) if changed else col
    return ibis.ifelse(col.isin(blank), ibis.null("string"), value) if blank else value


def _key_names(columns: list[str] | tuple[str, ...], kind: str) -> list[str] | None:
    """The key the loader checks in a run of these columns (``spec.key`` less the columns
    it lacks; None when it checks none: no key column, or a key given only where complete,
    such as a bias run's ``id``, with a column missing)."""
    spec = families.spec(kind)
    key = [k for k in spec.key if k in columns]
    if not key or (families.get(kind).key_where_given and len(key) < len(spec.key)):
        return None
    return key


def _canonical_key(table: Any, kind: str, key: list[str]) -> tuple[dict[str, Any], Any]:
    """The key columns as the loader compares them (its ``_to_text``), and the rows it keys.

    A label (``category``) is stripped, blank missing; a text (a bias ``id``, a replication
    ``test``) is kept verbatim, blank missing only where the text is required; a float NaN
    is missing (pandas' NaN). The loader keys only rows with no missing part when the family
    keys ``where_given``; a text column the file holds as numbers is missing where its number
    is (the loader reads a NaN as missing, never as the text 'nan')."""
    import ibis

    spec = families.spec(kind)
    where_given = families.get(kind).key_where_given
    values: dict[str, Any] = {}
    given = ibis.literal(True)
    for i, name in enumerate(key):
        col = table[name]
        column = spec.column(name)
        dtype = col.type()
        if dtype.is_string():
            if column.type == "category" or column.required is True:
                value = _loader_text(table, name, strip=column.type == "category")
            else:
                value = col
        elif dtype.is_array() or dtype.is_struct() or dtype.is_map():
            value = ibis.null("string")  # a nested cell: reported by the cell checks, missing
        else:  # a float NaN is pandas' missing value
            value = ibis.ifelse(col.isnan(), ibis.null(dtype), col) if dtype.is_floating() \
                else col
        values[f"__kbench_k{i}"] = value
        if where_given:
            given = given & value.notnull()
    return values, given


def _clashing(keyed: Any, name: str) -> Any | None:
    """The rows of ``keyed`` whose key ``name`` shares its hash with another row's, or None
    when no two rows do (then no key repeats: equal keys hash alike). On a run's every row
    (a bias run's ids) a group-by of 64-bit hashes fits DuckDB's memory limit where one of
    the text keys does not (100M ids: 10 s and 0.6 GiB, against an out-of-memory error at
    512 MB); the exact group-by then runs on the few rows whose hashes clash."""
    hashed = keyed.mutate(__kbench_h=keyed[name].hash())
    counts = hashed.group_by("__kbench_h").aggregate(__kbench_n=hashed.count())
    clash = counts.filter(counts["__kbench_n"] > 1).select("__kbench_h")
    if int(clash.count().to_pyarrow().as_py()) == 0:
        return None
    return hashed.semi_join(clash, "__kbench_h").drop("__kbench_h")


def _repeats(table: Any, kind: str, key: list[str], weight: str | None = None) -> int:
    """How many rows repeat a key seen on an earlier row (the loader's count of duplicate
    key problems): one group-by of the canonical key, the groups of more than one row
    summed. ``weight``: a column of row counts (the reduction's :data:`COUNT`)."""
    from ibis import _

    values, given = _canonical_key(table, kind, key)
    extra = {"__kbench_w": table[weight]} if weight is not None else {}
    keyed = table.filter(given).select(**values, **extra)
    if weight is None and len(values) == 1:
        keyed = _clashing(keyed, next(iter(values)))
        if keyed is None:
            return 0
    rows = keyed["__kbench_w"].sum() if weight is not None else keyed.count()
    groups = keyed.group_by(list(values)).aggregate(__kbench_n=rows)
    found = (groups.filter(_.__kbench_n > 1)
             .aggregate(total=(_.__kbench_n - 1).sum()).to_pyarrow())
    return int(found.column("total")[0].as_py() or 0)


def _loader_canonical(series: Any, column: Column) -> Any:
    """``series`` as the loader keys it: converted by its own ``_to_text`` (labels stripped,
    numbers as their text, blank or NaN missing); the conversion's problems are not wanted
    here (the cell checks report them)."""
    import numpy as np

    from kbench_core.readers import _Table
    from kbench_core.validation import _Collector, _to_text

    ignored = _Collector(_Table(series.to_frame(), np.arange(1, len(series) + 1), "row"))
    return _to_text(series, column, ignored, column.type == "category")[0]


def _shown(values: pa.Array | pa.ChunkedArray, column: Any) -> list[str]:
    """Key values as the loader's message shows them: converted by the loader's own
    ``_to_text`` (labels stripped, numbers as their text, missing as pandas shows it)."""
    from kbench_core.problems import show_value

    canonical = _loader_canonical(pa.table({"v": values}).to_pandas()["v"], column)
    return [show_value(canonical.iat[i]) for i in range(len(canonical))]


def key_problems(table: Any, src: ParquetSource,
                 reduced: pa.Table | None = None) -> tuple[_Listed, int]:
    """The loader's duplicate-key problems of the run queried as ``table``: the first
    :data:`~kbench_core.problems.MAX_LISTED_PROBLEMS` (each with its sort place in the run:
    file, row) and how many there are (see the module docstring). ``reduced``: the run's
    sufficient table; when it keeps every key column, the count is made on its tuples."""
    import ibis

    key = _key_names(list(table.columns), src.kind)
    if key is None:
        return [], 0
    if reduced is not None and set(key) <= set(reduced.column_names):
        small = ibis.duckdb.connect().create_table("reduced",
                                                   plain(reduced.select([*key, COUNT])))
        total = _repeats(small, src.kind, key, weight=COUNT)
    else:
        total = _repeats(table, src.kind, key)
    if total == 0:
        return [], 0
    values, given = _canonical_key(table, src.kind, key)
    names = list(values)
    keyed = table.filter(given).select(FILE, ROW, *key, **values)
    groups = keyed.group_by(names).aggregate(__kbench_n=keyed.count())
    repeated = groups.filter(groups["__kbench_n"] > 1).select(names)
    rows = keyed.semi_join(repeated, [keyed[n].identical_to(repeated[n]) for n in names])
    order = ibis.window(group_by=[rows[n] for n in names], order_by=[rows[FILE], rows[ROW]])
    ranked = rows.select(FILE, ROW, *key, __kbench_rank=ibis.row_number().over(order),
                         __kbench_ff=rows[FILE].first().over(order),
                         __kbench_fr=rows[ROW].first().over(order))
    later = (ranked.filter(ranked["__kbench_rank"] > 0).order_by([FILE, ROW])
             .limit(MAX_LISTED_PROBLEMS).to_pyarrow())
    spec = families.spec(src.kind)
    shown = [_shown(later.column(k), spec.column(k)) for k in key]
    several = len(src.files) > 1
    field = ", ".join(key)
    listed: _Listed = []
    for i, (file, row, first_file, first_row) in enumerate(zip(
            later.column(FILE).to_pylist(), later.column(ROW).to_pylist(),
            later.column("__kbench_ff").to_pylist(), later.column("__kbench_fr").to_pylist(),
            strict=True)):
        message = (f"duplicate key ({field}) = ({', '.join(v[i] for v in shown)}); first "
                   f"seen at row {_place(first_file, first_row, several)}")
        listed.append(((str(file), int(row), 1),
                       Problem(_place(file, row, several), field, message)))
    return listed, total


def validate(table: Any, src: ParquetSource, reduced: pa.Table | None = None, *,
             others_clean: bool | None = None) -> None:
    """Raise the loader's :class:`~kbench_core.problems.RunFormatError` when the run queried
    as ``table`` has a cell the loader rejects or a key it has seen before (see the module
    docstring); return quietly when every cell passes and every key is new.

    ``reduced``: the run's sufficient table (:func:`~kbench_core.engines.reduce.reduction`),
    when already made. A row is suspect or not by the values of its columns alone, and every
    column the reduction keeps is in it, so those columns are checked on its few distinct
    tuples; the columns it leaves out (a bias run's prompts, ids, timings) by one aggregate
    over the rows, or by the reduction itself in its pass (``others_clean``, what its check
    columns found: :func:`row_checks`, :func:`checked_clean`). Only when either finds
    something are the rows searched, as above, for the loader's messages."""
    _file_level(table, src)
    keys = key_problems(table, src, reduced)
    if reduced is None or not _clean(table, src, reduced, others_clean):
        flagged = table.filter(suspect(table, src.kind))
        n_suspect = int(flagged.count().to_pyarrow().as_py())
        ordered = flagged.order_by([FILE, ROW])
        # Page through the suspect rows until the loader finds a problem: rows it accepts (a
        # label it normalises, a number written as text) may come first.
        for offset in range(0, n_suspect, FETCHED):
            _check_page(ordered.limit(FETCHED, offset=offset).to_pyarrow(), src,
                        n_suspect - offset, keys)
    if keys[1]:
        raise RunFormatError(src.label, [p for _, p in keys[0]], keys[1])


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


def _place(file: Any, row: Any, several: bool) -> int | str:
    """A row's place in the run as the loader names it: its 1-based row in its file (with
    the file's name when the run is a folder of files: the engines' :data:`FILE` is the
    name, which may hold a backslash)."""
    place = int(row) + 1
    if not several:
        return place
    return f"{file}:{place}"
