"""A few of a run's rows, text included, fetched from its Parquet file through the engine.

A bias run an engine reduced keeps only the columns its metrics read (its distinct tuples,
:mod:`kbench_core.engines.reduce`); the prompts and responses stay in the file. The
Cognitive biases page's drill-down asks for one model × bias at a time: :func:`text_rows`
filters the file in place (an Ibis expression, so DuckDB or Spark reads only what matches)
and returns the first ``limit`` rows in file order with the number of rows that match, so a
model × bias of a million responses costs one capped query, not a frame of every row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from kbench_core.engines.source import FILE, ROW, ParquetSource

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


def text_rows(src: ParquetSource, *, model: str, bias: str, search: str = "",
              limit: int = DRILL_LIMIT, engine: str = "duckdb",
              spark_master: str | None = None, backend: Any = None) -> TextRows:
    """The rows of ``src`` whose ``model`` and ``bias`` are these (and whose prompt, response
    or answer contains ``search``, any case, as plain text: no pattern), every column the
    file has, the first ``limit`` in file order (a folder's files in name order), with the
    number of rows that match. ``backend``: an Ibis backend to use, else
    :func:`kbench_core.engines.shared_backend`.

    The text is returned as stored, to be shown as inert text."""
    import ibis

    from kbench_core import engines
    from kbench_core.engines import source

    if limit < 0:
        raise ValueError(f"limit must be 0 or more, got {limit!r}")
    chosen = engines.check_engine(engine)
    if backend is None:
        backend = engines.shared_backend(chosen, spark_master=spark_master)
    table = source.open_table(backend, src)
    where = (table["model"].cast("string") == str(model)) \
        & (table["bias"].cast("string") == str(bias))
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
    total = int(picked.count().to_pyarrow().as_py())
    # a folder's files are read in name order (their paths share the folder): file, then row
    order = [picked[FILE], picked[ROW]] if len(src.files) > 1 else [picked[ROW]]
    shown = [c for c in picked.columns if c not in (ROW, FILE)]
    frame = (picked.order_by(order).select(*shown).limit(limit).to_pyarrow().to_pandas()
             if limit and total else pd.DataFrame(columns=shown))
    return TextRows(frame.reset_index(drop=True), total)
