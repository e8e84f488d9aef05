"""Each family's reduction to its sufficient table, written once as an Ibis expression, and
the finish that turns the small table back into what the metrics read.

The reduction of a family is its *distinct-rows table*: one row per distinct combination of
the columns its metrics read (:func:`read_columns`), with the number of rows that have it
(:data:`COUNT`). Every metric of kbench is a function of the multiset of those tuples (sums,
sums of squares, per-cluster sums, per-item tables for the bootstraps), so this table is
sufficient for all of them at once, intervals included; the columns the metrics never read
(prompts, responses, row ids, timings: most of a run's bytes) never leave the engine.

How much it reduces depends on the family's grain:

* ``bias``: trials of one cell (model × bias × condition × intensity × domain × method) with
  the same score and confidence collapse into one row, so 30M trials of a few hundred cells
  with discrete scores reduce to thousands of rows;
* ``judged`` and ``replication``: the metrics resample and cluster by item (a contract's
  sample, a study's test), so the table stays at the item grain (one row per sample × model
  × prompt type × judge, per test). Their metrics read every column and their key is among
  them, so the distinct tuples of a valid run are its rows: such a run (one file,
  :func:`at_item_grain`) is not grouped. The engine fetches its rows in file order and the
  loader validates and types them once (:func:`typed_rows`, its messages and row numbers
  the file's by construction), instead of a group-by into as many tuples, the engine's cell
  checks on them and the loader again on the tuples (600k judged rows: 2.7 s, now 0.8 s;
  ``benchmarks/README.md``).

:func:`finish` types the small table with the loader (:func:`kbench_core.io.load_run` on it,
so every column has the loader's dtype and categories) and repeats each row :data:`COUNT`
times, so the existing metric code runs unchanged and prints the same numbers as the memory
engine (``tests/test_engines.py``); for the bias family it keeps the small table with
:data:`COUNT` as weights instead (``weighted=True``, what the app, ``kbench metrics``,
``figures`` and ``report`` use: ``tests/test_weighted_bias.py``). The rows of a run at item
grain (:class:`TypedRows`) are already the loader's frame: :func:`finish` gives it as it is
(``tests/test_engine_first_render.py``).
"""

from __future__ import annotations

import io as _io
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from kbench_core import families
from kbench_core.engines.source import COUNT, FILE, ROW, ParquetSource, plain
from kbench_core.io.finish import reserved as _reserved
from kbench_core.io.finish import reserved_warning
from kbench_core.kahne import repeated

__all__ = ["COUNT", "TypedRows", "at_item_grain", "finish", "read_columns", "reduction",
           "typed_rows"]

_FIRST = "__kbench_first"  # the place of a tuple's first row in the run
# What a family tells the engines is declared on its Family (``weighted``, ``not_read``,
# ``schema_only``); WEIGHTED, NOT_READ and SCHEMA_ONLY are those declarations over the
# registry, read when asked for (:func:`__getattr__`), so a family added at run time is in.


def __getattr__(name: str) -> object:
    if name == "WEIGHTED":  # families whose main table reads COUNT as weights
        return frozenset(f.kind for f in families.all_families() if f.weighted)
    if name == "NOT_READ":  # canonical columns a family's metrics never read
        return {f.kind: f.not_read for f in families.all_families() if f.not_read}
    if name == "SCHEMA_ONLY":  # families whose metrics read only their schema's columns
        return frozenset(f.kind for f in families.all_families() if f.schema_only)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def read_columns(kind: str, columns: tuple[str, ...] | list[str],
                 keep: tuple[str, ...] = ()) -> list[str]:
    """The columns of a run (in its order) that ``kind``'s metrics read: every column less
    the family's ``not_read`` (unless named in ``keep``), and for a ``schema_only`` family
    only the schema's columns. Other families keep the columns a reader adds beyond the
    schema (a judged run's ``difficulty``), which their metrics may read."""
    family = families.get(kind)
    known = {c.name for c in family.spec.columns}
    skipped = set(family.not_read) - set(keep)
    only_known = family.schema_only
    return [c for c in columns if c not in (ROW, FILE) and c not in skipped
            and (c in known or c in keep or not only_known)]


def at_item_grain(src: ParquetSource, keep: tuple[str, ...] = ()) -> bool:
    """Whether the reduction of ``src`` is its rows: one file of a family (not
    ``weighted``) whose metrics read every column the file has and whose key, checked
    on every row, is among them, so no two rows of a valid run share a tuple (a judged run:
    one row per sample × model × prompt type × judge; a replication run: one per test).

    Such a run is not grouped: :func:`typed_rows` fetches its rows in file order and the
    loader validates and types them once (a group-by of 600k judged rows into 600k tuples,
    the engine's cell checks on them and the loader again on the tuples took 2.7 s; the
    loader alone 0.6 s, its messages and row numbers the file's by construction)."""
    from kbench_core.engines.keys import _key_names

    family = families.get(src.kind)
    if family.weighted or len(src.files) != 1 or family.key_where_given:
        return False
    read = read_columns(src.kind, list(src.columns), keep)
    return len(read) == len(src.columns) and _key_names(read, src.kind) is not None


@dataclass(frozen=True)
class TypedRows:
    """The rows of a run at item grain as the loader validated and typed them
    (:func:`typed_rows`): the frame :func:`finish` gives as it is (an Arrow round trip
    would turn its object columns into another dtype). ``nbytes`` as the app's cache of
    reduced tables counts them (the frame's columns, not the text its objects point to, as
    ``kbench_core.workspace`` counts the frames it keeps)."""

    frame: pd.DataFrame

    @property
    def nbytes(self) -> int:
        return int(self.frame.memory_usage(index=False, deep=False).sum())


_BATCH = 1 << 17  # rows per batch of the scan, whose decoded bytes are summed as they come


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _duckdb_rows(src: ParquetSource, limit: int) -> pa.Table:
    """The rows of ``src``'s file scanned by an in-process DuckDB (its own Parquet reader,
    through its Python API: a scan needs no Ibis expression, and importing Ibis costs 0.6 s
    on a server's first query) under the source's canonical names, in file order (the
    connection preserves insertion order: a scan without ORDER BY returns the file's rows
    as they come, with no sort), read in batches whose size is summed as they come (the
    loader's decompressed-size limit)."""
    import duckdb

    from kbench_core.engines.settings import DUCKDB_MEMORY
    from kbench_core.engines.source import _one_name_per_case, pinned
    from kbench_core.problems import fail
    from kbench_core.readers.sources import _mb

    # the file as checked and hashed (its descriptor, or its path escaped: no glob)
    files = pinned(src)
    _one_name_per_case(src, "DuckDB")  # DuckDB would read "Model" as "model"
    raw = [str(n) for n in files.metadata[0].schema.to_arrow_schema().names
           if not _reserved(str(n))]
    select = ", ".join(f"{_quoted(r)} AS {_quoted(c)}"
                       for r, c in zip(raw, src.columns, strict=True))
    literal = "'" + files.duckdb_paths()[0].replace("'", "''") + "'"
    con = duckdb.connect(config={"memory_limit": DUCKDB_MEMORY,
                                 "preserve_insertion_order": True})
    try:
        relation = con.sql(f"SELECT {select} FROM read_parquet({literal})")
        reader = (relation.to_arrow_reader(_BATCH) if hasattr(relation, "to_arrow_reader")
                  else relation.fetch_record_batch(_BATCH))
        batches, size = [], 0
        for batch in reader:
            batches.append(batch)
            size += batch.nbytes
            if size > limit:
                raise fail(src.label, f"the Parquet file decodes to more than {_mb(limit)} "
                                      f"by row {sum(len(b) for b in batches):,}, over the "
                                      "decompressed-size limit" + _fetch_hint(src))
        return pa.Table.from_batches(batches, schema=reader.schema)
    finally:
        con.close()


def _fetched_rows(src: ParquetSource, backend: Any, limit: int) -> pa.Table:
    """The rows of ``src`` in file order: scanned by
    DuckDB (``backend`` None or an Ibis DuckDB backend: the scan reads the file, whatever
    the connection) or queried through Ibis, ordered by the row's place (Spark)."""
    from kbench_core.engines.source import open_table
    from kbench_core.problems import fail
    from kbench_core.readers.sources import _mb

    if backend is None or getattr(backend, "name", "") == "duckdb":
        return _duckdb_rows(src, limit)
    rows = open_table(backend, src).order_by(ROW).drop(FILE, ROW).to_pyarrow()
    if rows.nbytes > limit:
        raise fail(src.label, f"the Parquet file decodes to more than {_mb(limit)}, over "
                              "the decompressed-size limit" + _fetch_hint(src))
    return rows


def _fetch_hint(src: ParquetSource) -> str:
    """What the limit applies to on the engine path, and the way around it where there is one:
    a run at item grain has its rows fetched (the limit is on them, not on the file); a family
    that computes its tables in the engine does so for `kbench metrics`, `figures`, `report`
    and `profile` (``Family.engine_run``: a replication run; a judged run once it has
    ``KBENCH_JUDGED_CELLS_ROWS`` rows for `metrics`, ``KBENCH_JUDGED_RUN_ROWS`` for the
    others) and pairs its items for ``compare`` there
    (``Family.engine_items``)."""
    from kbench_core.engines.settings import JUDGED_CELLS_ROWS, JUDGED_RUN_ROWS

    family = families.get(src.kind)
    said = (f" (the engine fetches every row of a {family.title.lower()} run to compute its "
            "metrics, and the limit is on what it fetches")
    if family.engine_run is None and family.engine_tables is None:
        return said + ")"
    commands = "`kbench metrics`, `figures`, `report`, `profile`" + (
        " and `compare`" if family.engine_items is not None else "")
    if family.engine_tables_rows is None:
        return said + f"; {commands} compute its tables in the engine, fetching none)"
    run_rows = "unset" if JUDGED_RUN_ROWS is None else f"now {JUDGED_RUN_ROWS:,}"
    return (said + f"; {commands} can compute their tables in the engine instead: `metrics` "
            f"from KBENCH_JUDGED_CELLS_ROWS rows on (now {JUDGED_CELLS_ROWS:,}), the others "
            f"from KBENCH_JUDGED_RUN_ROWS ({run_rows}; their per-sample sums grow with the "
            "samples): e.g. KBENCH_JUDGED_CELLS_ROWS=0 KBENCH_JUDGED_RUN_ROWS=0)")


def _as_labels(rows: pa.Table, kind: str) -> tuple[pa.Table, list[str], list[str]]:
    """The text columns of the family's labels and line lists dictionary-encoded, the names
    of those columns and of the labels among them: the loader's checks and conversions then
    run once per distinct value, not per row (600k judged rows: 1.6 s of validation on plain
    text, 0.3 s on dictionaries). The CSV reader reads labels so too
    (``kbench_core.readers.delimited``); the values, and so every check and message, are the
    text's."""
    import pyarrow.compute as pc

    types = {c.name: c.type for c in families.spec(kind).columns}
    columns, encoded = [], []
    for name, col in zip(rows.column_names, rows.columns, strict=True):
        if types.get(name) in ("category", "lines") and (
                pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
            col = pc.dictionary_encode(col)
            encoded.append(name)
        columns.append(col)
    labels = [name for name in encoded if types[name] == "category"]
    return pa.table(columns, names=rows.column_names), encoded, labels


def typed_rows(src: ParquetSource, *, backend: Any = None) -> TypedRows:
    """The rows of an item-grain source (:func:`at_item_grain`), validated cell by cell and
    typed by the loader itself (what :func:`finish` gives, and what the app caches).

    The engine fetches the rows in file order (what the engine raises, a file it cannot
    read, propagates as from a reduction) and the loader's validation runs on them
    (:func:`kbench_core.io.finish._finish`, the reader's Arrow step included), so every
    problem is the loader's own, its row the file's row; a failure the loader does not
    name is the loader's "cannot read this file" error, as :func:`kbench_core.io.load_run`
    words it."""
    from kbench_core.io.finish import _finish
    from kbench_core.problems import DEFAULT_MAX_DECOMPRESSED, RunFormatError, fail
    from kbench_core.readers._common import _sorted_labels
    from kbench_core.readers.parquet import _arrow_rows

    label = src.label
    rows = _fetched_rows(src, backend, DEFAULT_MAX_DECOMPRESSED)
    try:
        rows, encoded, labels = _as_labels(rows, src.kind)
        parsed = _arrow_rows(label, rows)
        del rows
        # As the CSV reader leaves its dictionary columns: sorted as a text column's
        # categories are (Arrow's dictionaries keep the order of first appearance), the
        # labels marked as read so (``_Table.encoded``).
        _sorted_labels(parsed.frame, encoded)
        parsed.encoded = set(labels)
        run = _finish(parsed, name=src.name, kind=src.kind, on_error="raise",  # type: ignore[arg-type]
                      columns=None, warnings=[], meta={"source": label, "format": "parquet"})
    except RunFormatError:
        raise
    except MemoryError:
        raise fail(label, "not enough memory to load this file; split it into smaller "
                          "runs") from None
    except Exception as exc:
        raise fail(label, f"cannot read this file ({type(exc).__name__}: "
                          f"{str(exc)[:200]})") from None
    return TypedRows(run.frame)


def reduction(table: Any, kind: str, files: tuple[str, ...] = (),
              keep: tuple[str, ...] = (), checks: Callable[[Any], Mapping[str, Any]] | None = None
              ) -> Any:
    """The family's sufficient table as an Ibis expression on ``table`` (any backend, as
    :func:`~kbench_core.engines.source.open_table` opens it): its read columns grouped, with
    :data:`COUNT`, in the order of each tuple's first row.

    That order keeps the run's order of first appearance of every label (the first row
    holding a label is the first row of its tuple), which is the order the loader gives a
    run's categories and so the order of every table's rows. ``files``: the source's file
    names in the order the memory engine reads them (several files: rows of the first file
    first). ``keep``: columns of the family's ``not_read`` to keep all the same. ``checks``: a
    function of the table giving more aggregates of its rows to compute per tuple in the same
    pass (named columns beside :data:`COUNT`; the validation's counts of bad cells in the
    columns left out: :func:`kbench_core.engines.validate.row_checks`)."""
    import ibis

    cols = read_columns(kind, list(table.columns), keep)
    place = table[ROW].cast("int64")
    if len(files) > 1:
        rank = ibis.cases(*((table[FILE] == name, i) for i, name in enumerate(files)),
                          else_=len(files))
        place = rank.cast("int64") * (1 << 40) + place
    if checks:
        # the checks' aggregates are of the table's columns: group the table itself
        picked = table.mutate(**{_FIRST: place})
        extra = dict(checks(picked))
    else:
        picked = table.select(*cols, **{_FIRST: place})
        extra = {}
    reduced = picked.group_by(cols).aggregate(**{COUNT: picked.count(),
                                                 _FIRST: picked[_FIRST].min()}, **extra)
    return reduced.order_by(_FIRST).drop(_FIRST)


def finish(reduced: pa.Table | TypedRows, src: ParquetSource, *,
           weighted: bool = False) -> Any:
    """The validated :class:`~kbench_core.io.Run` of ``src`` from its sufficient table: the
    loader types the small table, each row is repeated :data:`COUNT` times, and the run
    carries the source's meta (its files' SHA-256, so exports record the same provenance as
    the memory engine) and the family's notes.

    ``weighted`` (a ``weighted`` family only): the rows are not repeated; the frame
    keeps :data:`COUNT`, which every reader of a bias frame weighs each row by
    (:func:`kbench_core.kahne.row_weights`: the metrics, the figures, ``len(run)``, the
    unscored share, the per-bias effects), so memory stays the small table's whatever the
    run's rows. The app's workspace runs, ``kbench metrics``, ``figures`` and ``report``
    use it; ``kbench compare`` keeps its trials (it pairs them)."""
    from kbench_core.io import Run, load_run

    family = families.get(src.kind)
    left_out = ([reserved_warning(src.meta["reserved_columns"])]
                if src.meta.get("reserved_columns") else [])
    meta = {k: v for k, v in src.meta.items() if k != "reserved_columns"}
    if isinstance(reduced, TypedRows):  # the loader's frame of the rows
        frame = reduced.frame
        warnings = tuple(family.notes(frame)) if family.notes is not None else ()
        meta = {**meta, "rows": len(frame), "columns": list(frame.columns),
                "reduced_rows": len(frame)}
        return Run(name=src.name, kind=src.kind, frame=frame, meta=meta,
                   warnings=(*left_out, *warnings))
    data = _io.BytesIO()
    # The counts stay out of the loader (it leaves out every column named like kbench's own,
    # so a file cannot pass its own weights) and come back beside its rows, in their order.
    counts = reduced.column(COUNT).to_numpy().astype(np.int64)
    pq.write_table(plain(reduced.drop_columns([COUNT])), data)
    small = load_run((f"{src.name}.parquet", data.getvalue()), kind=src.kind)  # type: ignore[arg-type]
    if weighted and family.weighted:
        frame = small.frame.assign(**{COUNT: counts})
        meta = {**meta, "rows": int(counts.sum()), "columns": list(small.frame.columns),
                "reduced_rows": len(counts), "weighted": True}
        notes = tuple(family.notes(frame)) if family.notes is not None else ()
        return Run(name=src.name, kind=src.kind, frame=frame, meta=meta,
                   warnings=(*left_out, *notes))
    frame = repeated(small.frame.assign(**{COUNT: counts}))
    warnings = tuple(family.notes(frame)) if family.notes is not None else ()
    meta = {**meta, "rows": len(frame), "columns": list(frame.columns),
            "reduced_rows": len(counts)}
    return Run(name=src.name, kind=src.kind, frame=frame, meta=meta,
               warnings=(*left_out, *warnings))
