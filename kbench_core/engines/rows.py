"""A few of a run's rows, text included, fetched from its Parquet file through the engine.

A bias run an engine reduced keeps only the columns its metrics read (its distinct tuples,
:mod:`kbench_core.engines.reduce`); the prompts and responses stay in the file. The
Cognitive biases page's drill-down asks for one model × bias at a time: :func:`text_rows`
filters the file in place (an Ibis expression, so DuckDB or Spark reads only what matches)
and returns the first ``limit`` rows in file order with the number of rows that match, so a
model × bias of a million responses costs a few queries (the file's distinct labels, the
capped fetch, and the count when the fetch is capped), not a frame of every row.

The model and bias asked for are the labels the loader shows, not the cells of the file: the
loader strips a label of its surrounding white space (Python's ``str.strip``: every Unicode
white space), writes a number or a boolean as its text, and the combined view of several runs
names a model two runs share ``model (run)`` (:func:`kbench_core.io.combine_runs`). Each label
is mapped back to the file's values that show as it (:func:`_matching`), by the loader's own
conversion of the column's distinct values, so the drill-down finds every row the page counts.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import pandas as pd

from kbench_core.engines.source import FILE, ROW, ParquetSource
from kbench_core.schema import Column

__all__ = ["DRILL_LIMIT", "TextRows", "text_rows"]

DRILL_LIMIT = 1_000  # rows a drill-down fetches at most
_TEXT = ("prompt", "response", "answer")


@dataclass(frozen=True)
class TextRows:
    """The rows fetched (``frame``, file order, at most the limit) and ``total``, the rows
    that match; ``capped`` when some were left in the file."""

    frame: pd.DataFrame
    total: int

    @property
    def capped(self) -> bool:
        return len(self.frame) < self.total


def _shown(values: list[Any], column: Column) -> list[Any]:
    """Distinct values of a file's label column as the loader shows them (its own
    conversion: :func:`kbench_core.engines.keys._loader_canonical`)."""
    from kbench_core.engines.keys import _loader_canonical

    if not values:
        return []
    shown = _loader_canonical(pd.Series(values, dtype=object), column)
    return [None if pd.isna(v) else str(v) for v in shown.astype(object)]


def _labels(table: Any, model: str, bias: str) -> tuple[list[Any], list[Any]] | None:
    """The file's distinct models and biases that may show as ``model`` and ``bias`` (one
    query of their distinct pairs), or None when there are more than
    :data:`~kbench_core.engines.keys._MANY` pairs.

    A text column is narrowed first to the values that hold the label (a value the loader
    shows as a label is that label padded): a substring test on every row costs far less
    than grouping every row (30M rows on DuckDB: 0.2 s against 1.4 s). A column of another
    type (numbers, booleans: the loader's text of them is not always the engine's) is not
    narrowed."""
    import ibis

    from kbench_core.engines.keys import _MANY

    where = [table[name].contains(ibis.literal(label))
             for name, label in (("model", model), ("bias", bias))
             if table[name].type().is_string()]
    narrowed = table.filter(*where) if where else table
    pairs = narrowed.select("model", "bias").distinct().limit(_MANY + 1).to_pyarrow()
    if pairs.num_rows > _MANY:
        return None
    return tuple(list(dict.fromkeys(v for v in pairs.column(name).to_pylist() if v is not None))
                 for name in ("model", "bias"))  # type: ignore[return-value]


_LABELS: OrderedDict[tuple, Any] = OrderedDict()  # (files' SHA-256, model, bias): _labels
_LABELS_KEPT = 256
_LABELS_LOCK = threading.Lock()


def _cached_labels(table: Any, src: ParquetSource, model: str,
                   bias: str) -> tuple[list[Any], list[Any]] | None:
    """:func:`_labels`, kept per content of the files (their SHA-256) and labels, so a
    drill-down's next search on the same model × bias does not query them again."""
    digest = src.meta.get("sha256")
    key = (digest, src.files, model, bias)
    with _LABELS_LOCK:
        if digest is not None and key in _LABELS:
            _LABELS.move_to_end(key)
            return _LABELS[key]
    found = _labels(table, model, bias)
    if digest is not None:
        with _LABELS_LOCK:
            _LABELS[key] = found
            while len(_LABELS) > _LABELS_KEPT:
                _LABELS.popitem(last=False)
    return found


def _matching(col: Any, column: Column, label: str, values: list[Any] | None, *,
              run: str | None = None) -> Any:
    """The rows whose ``col`` (the file's ``column``, whose distinct ``values`` these are)
    the loader shows as ``label``, as an Ibis predicate, or None when no value shows as it:
    an ``isin`` over the file's values that show as ``label`` (a padded label, a number
    written as text). With ``run``, when no value shows as ``label`` and it ends with
    `` (run)``, those that show as the rest (the combined view's name of a model two runs
    share, read as ``kbench_app.bias._raw_model`` reads it). ``values`` None (too many to
    fetch): the column compared stripped, by a regular expression on every row (Python's
    white space, ``keys._SPACE``; text labels only)."""
    import ibis

    from kbench_core.engines.keys import _SPACE

    suffix = f" ({run})" if run is not None else None
    bare = label[:-len(suffix)] if suffix and label.endswith(suffix) else None
    if values is None:
        stripped = col.cast("string").re_replace(rf"^{_SPACE}+|{_SPACE}+$", "")
        found = stripped == ibis.literal(label)
        return found | (stripped == ibis.literal(bare)) if bare is not None else found
    shown = _shown(values, column)
    raw = [v for v, s in zip(values, shown, strict=True) if s == label]
    if not raw and bare is not None:
        raw = [v for v, s in zip(values, shown, strict=True) if s == bare]
    return col.isin(raw) if raw else None


def text_rows(src: ParquetSource, *, model: str, bias: str, search: str = "",
              limit: int = DRILL_LIMIT, engine: str = "duckdb",
              spark_master: str | None = None, backend: Any = None) -> TextRows:
    """The rows of ``src`` whose ``model`` and ``bias`` are these (and whose prompt, response
    or answer contains ``search``, any case, as plain text: no pattern), every column the
    file has, the first ``limit`` in file order (a folder's files in name order), with the
    number of rows that match. ``backend``: an Ibis backend to use, else
    :func:`kbench_core.engines.shared_backend`.

    ``model`` and ``bias`` are labels as kbench shows them (stripped, or ``model (run)`` for
    a model two runs share; see the module docstring); the rows carry them as asked. The
    text is returned as stored, to be shown as inert text."""
    import ibis

    from kbench_core import engines, families
    from kbench_core.engines import source

    if limit < 0:
        raise ValueError(f"limit must be 0 or more, got {limit!r}")
    chosen = engines.check_engine(engine)
    if backend is None:
        backend = engines.shared_backend(chosen, spark_master=spark_master)
    table = source.open_table(backend, src)
    spec = families.spec(src.kind)
    shown = [c for c in table.columns if c not in (ROW, FILE)]
    # the combined view's "model (run)" holds the run's own label: narrowed by that
    suffix = f" ({src.name})"
    bare = str(model)[:-len(suffix)] if str(model).endswith(suffix) else str(model)
    models, biases = _cached_labels(table, src, bare, str(bias)) or (None, None)
    of_model = _matching(table["model"], spec.column("model"), str(model), models,
                         run=src.name)
    of_bias = _matching(table["bias"], spec.column("bias"), str(bias), biases)
    if of_model is None or of_bias is None:  # no value of the file shows as the label
        return TextRows(pd.DataFrame(columns=shown), 0)
    where = of_model & of_bias
    texts = [c for c in _TEXT if c in table.columns]
    if search and texts:
        term = ibis.literal(search.lower())
        hits = [table[c].cast("string").lower().contains(term).fill_null(False)
                for c in texts]
        found = hits[0]
        for hit in hits[1:]:
            found = found | hit
        where = where & found
    picked = table.filter(where)
    # a folder's files are read in name order (their paths share the folder): file, then row
    order = [picked[FILE], picked[ROW]] if len(src.files) > 1 else [picked[ROW]]
    frame = (picked.order_by(order).select(*shown).limit(limit).to_pyarrow().to_pandas()
             if limit else pd.DataFrame(columns=shown))
    # fewer rows than the limit are all the rows: the count is a query only when capped
    total = len(frame) if len(frame) < limit else int(picked.count().to_pyarrow().as_py())
    # the rows shown are of the file hashed (the run's SHA-256), or none are shown
    source.check_read(src, backend)
    # the labels as asked (the file's may be padded), the text as stored
    frame = frame.assign(model=str(model), bias=str(bias)) if len(frame) else frame
    return TextRows(frame.reset_index(drop=True), total)
