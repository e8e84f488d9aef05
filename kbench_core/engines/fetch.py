"""Small result tables fetched from an engine under the loader's size limit
(:func:`bounded`): the per-cluster sums a judged run's tiers read
(:mod:`kbench_core.engines.judged_cells`) and a replication run's per-finding sums
(:mod:`kbench_core.engines.replication`)."""

from __future__ import annotations

from typing import Any

__all__ = ["bounded"]


def bounded(expr: Any, what: str, *, too_many: str) -> Any:
    """``expr``'s result as an Arrow table (a list of expressions: their results one after
    the other, as the parts of one table), fetched in batches and refused past the loader's
    decompressed-size limit (``problems.DEFAULT_MAX_DECOMPRESSED``, 1 GiB): the limit follows
    the path (issue 39, item 3), on what an engine's run fetches, not on the file. A
    :class:`~kbench_core.engines.EngineMemoryError` naming ``what``, the limit and why the
    table is big (``too_many``; a command adds the other way out: fetching the rows while
    the loader can hold them)."""
    import pyarrow as pa

    from kbench_core import problems
    from kbench_core.engines import EngineMemoryError
    from kbench_core.readers.sources import _mb

    limit = problems.DEFAULT_MAX_DECOMPRESSED
    batches, size, rows = [], 0, 0
    schema = None
    for part in (expr if isinstance(expr, list) else [expr]):
        reader = part.to_pyarrow_batches(chunk_size=250_000)
        schema = schema or reader.schema
        for batch in reader:
            batches.append(batch)
            size += batch.nbytes
            rows += batch.num_rows
            if size > limit:
                raise EngineMemoryError(
                    f"the engine's {what} of this run pass {_mb(limit)} by row {rows:,} (the "
                    "limit on what a run kept in the engine fetches, as on the rows the "
                    f"loader reads): {too_many}")
    if not batches:
        return schema.empty_table()
    # a batch's types may be narrower than the reader's (a column all null in it)
    return pa.concat_tables([pa.Table.from_batches([b]) for b in batches],
                            promote_options="permissive")

