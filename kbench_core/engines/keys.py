"""The engines' duplicate-key check (a run's keys as the loader keys them, counted by one
group-by in the engine), the distinct labels of a run's text columns (:class:`Labels`) and
how a row's place is named (:func:`_place`): split from :mod:`kbench_core.engines.validate`,
whose module docstring describes the checks, and which re-exports these names."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from kbench_core import families
from kbench_core.engines.source import COUNT, FILE, ROW, ParquetSource, plain
from kbench_core.problems import MAX_LISTED_PROBLEMS, Problem
from kbench_core.schema import Column

__all__ = ["Labels", "key_problems"]

_MANY = 100_000  # distinct labels fetched to check in Python; more: checked row by row


class Labels:
    """The distinct values of a run's text columns, fetched once per column (a query of its
    own, cheap for labels: a million rows hold a few hundred), so label rules are checked per
    distinct value and become an ``isin`` on the rows only when some value fails.

    One is made per opened run and handed to every check and view that reads its labels
    (the key check, the suspect rows, the judges' names, the normalised rows): each column's
    values are then fetched once per command, not once per reader (a scan of the column
    each, at 100M rows). It lives as long as the run it was made for, whose files are
    re-checked after every query (:func:`kbench_core.engines.source.check_read`); it is never
    keyed on the Ibis expression (expressions hash by structure, so a file changed on disk
    under the same path would be served the old values)."""

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



_Listed = list[tuple[tuple, Problem]]  # problems with their place in the run, to merge
# Python's white space (str.isspace: a no-break space too), which the loader strips from a
# label; SQL's trim strips only ASCII. \x{...} is read by RE2 (DuckDB) and Java (Spark).
_SPACE = (r"[\x{9}-\x{d}\x{1c}-\x{20}\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}"
          r"\x{202f}\x{205f}\x{3000}]")


_MAPPED = 1_000  # padded labels mapped one by one to their stripped text; more: a regex


def _loader_text(table: Any, name: str, *, strip: bool, labels: Labels | None = None) -> Any:
    """A text key column as the loader keys it: stripped by Python's ``str.strip`` (a
    label, ``strip``) or verbatim (a text), a blank value missing.

    Worked out on the column's distinct values: a column with no padded or blank value (the
    usual case) is keyed as it is, with no function on its rows (SQL's trim on every row
    tripled the time of a key check of 600k judged rows); a few padded values are mapped
    to their stripped text, blank ones to null; a column of too many distinct values or
    padded ones is stripped by a regular expression on every row. ``labels``: the run's
    distinct values when already at hand (of ``table``, or of the table it was derived from
    with this column unchanged)."""
    import ibis

    col = table[name]
    values = (labels if labels is not None else Labels(table)).of(name)
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


def _canonical_key(table: Any, kind: str, key: list[str],
                   labels: Labels | None = None) -> tuple[dict[str, Any], Any]:
    """The key columns as the loader compares them (its ``_to_text``), and the rows it keys.

    A label (``category``) is stripped, blank missing; a text (a bias ``id``, a replication
    ``test``) is kept verbatim, blank missing only where the text is required; a float NaN
    is missing (pandas' NaN). The loader keys only rows with no missing part when the family
    keys ``where_given``; a text column the file holds as numbers is missing where its number
    is (the loader reads a NaN as missing, never as the text 'nan'). ``labels``: ``table``'s
    distinct values, when at hand."""
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
                value = _loader_text(table, name, strip=column.type == "category",
                                     labels=labels)
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


def _repeats(table: Any, kind: str, key: list[str], weight: str | None = None,
             labels: Labels | None = None) -> int:
    """How many rows repeat a key seen on an earlier row (the loader's count of duplicate
    key problems): one group-by of the canonical key, the groups of more than one row
    summed. ``weight``: a column of row counts (the reduction's :data:`COUNT`); ``labels``:
    ``table``'s distinct values, when at hand."""
    from ibis import _

    values, given = _canonical_key(table, kind, key, labels)
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


def key_problems(table: Any, src: ParquetSource, reduced: pa.Table | None = None,
                 labels: Labels | None = None) -> tuple[_Listed, int]:
    """The loader's duplicate-key problems of the run queried as ``table``: the first
    :data:`~kbench_core.problems.MAX_LISTED_PROBLEMS` (each with its sort place in the run:
    file, row) and how many there are (see the module docstring). ``reduced``: the run's
    sufficient table; when it keeps every key column, the count is made on its tuples.
    ``labels``: ``table``'s distinct values, when at hand."""
    import ibis

    key = _key_names(list(table.columns), src.kind)
    if key is None:
        return [], 0
    if reduced is not None and set(key) <= set(reduced.column_names):
        small = ibis.duckdb.connect().create_table("reduced",
                                                   plain(reduced.select([*key, COUNT])))
        total = _repeats(small, src.kind, key, weight=COUNT)
    else:
        total = _repeats(table, src.kind, key, labels=labels)
    if total == 0:
        return [], 0
    values, given = _canonical_key(table, src.kind, key, labels)
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



def _place(file: Any, row: Any, several: bool) -> int | str:
    """A row's place in the run as the loader names it: its 1-based row in its file (with
    the file's name when the run is a folder of files: the engines' :data:`FILE` is the
    name, which may hold a backslash)."""
    place = int(row) + 1
    if not several:
        return place
    return f"{file}:{place}"
