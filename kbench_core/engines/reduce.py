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
  × prompt type × judge, per test): a per-item table, without the text columns.

:func:`finish` types the small table with the loader (:func:`kbench_core.io.load_run` on it,
so every column has the loader's dtype and categories) and repeats each row :data:`COUNT`
times, so the existing metric code runs unchanged and prints the same numbers as the memory
engine (``tests/test_engines.py``); for the bias family it keeps the small table with
:data:`COUNT` as weights instead (``weighted=True``, what the app, ``kbench metrics``,
``figures`` and ``report`` use: ``tests/test_weighted_bias.py``).
"""

from __future__ import annotations

import io as _io
from collections.abc import Mapping
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from kbench_core import families
from kbench_core.engines.source import COUNT, FILE, ROW, ParquetSource, plain
from kbench_core.io.finish import reserved_warning

__all__ = ["COUNT", "NOT_READ", "SCHEMA_ONLY", "WEIGHTED", "finish", "read_columns",
           "reduction"]

_FIRST = "__kbench_first"  # the place of a tuple's first row in the run
# Families whose main table reads COUNT as weights (kbench_core.kahne.WEIGHT is COUNT).
WEIGHTED = frozenset({"bias"})

# Canonical columns a family's metrics, figures and tables never read: they stay in the
# engine. Every other column is read (and so kept in the reduction).
NOT_READ: Mapping[str, tuple[str, ...]] = {
    "bias": ("id", "trial", "prompt", "response", "answer", "response_ms"),
}
# Families whose metrics read nothing beyond their schema's columns (kahne reads only
# canonical names): a column a file adds stays in the engine too.
SCHEMA_ONLY = frozenset({"bias"})


def read_columns(kind: str, columns: tuple[str, ...] | list[str],
                 keep: tuple[str, ...] = ()) -> list[str]:
    """The columns of a run (in its order) that ``kind``'s metrics read: every column less
    :data:`NOT_READ` (unless named in ``keep``), and for the families of
    :data:`SCHEMA_ONLY` only the schema's columns. Other families keep the columns a reader
    adds beyond the schema (a judged run's ``difficulty``), which their metrics may read."""
    known = {c.name for c in families.spec(kind).columns}
    skipped = set(NOT_READ.get(kind, ())) - set(keep)
    only_known = kind in SCHEMA_ONLY
    return [c for c in columns if c not in (ROW, FILE) and c not in skipped
            and (c in known or c in keep or not only_known)]


def reduction(table: Any, kind: str, files: tuple[str, ...] = (),
              keep: tuple[str, ...] = ()) -> Any:
    """The family's sufficient table as an Ibis expression on ``table`` (any backend, as
    :func:`~kbench_core.engines.source.open_table` opens it): its read columns grouped, with
    :data:`COUNT`, in the order of each tuple's first row.

    That order keeps the run's order of first appearance of every label (the first row
    holding a label is the first row of its tuple), which is the order the loader gives a
    run's categories and so the order of every table's rows. ``files``: the source's file
    names in the order the memory engine reads them (several files: rows of the first file
    first). ``keep``: columns of :data:`NOT_READ` to keep all the same."""
    import ibis

    cols = read_columns(kind, list(table.columns), keep)
    place = table[ROW].cast("int64")
    if len(files) > 1:
        rank = ibis.cases(*((table[FILE] == name, i) for i, name in enumerate(files)),
                          else_=len(files))
        place = rank.cast("int64") * (1 << 40) + place
    picked = table.select(*cols, **{_FIRST: place})
    reduced = picked.group_by(cols).aggregate(**{COUNT: picked.count(),
                                                 _FIRST: picked[_FIRST].min()})
    return reduced.order_by(_FIRST).drop(_FIRST)


def finish(reduced: pa.Table, src: ParquetSource, *, weighted: bool = False) -> Any:
    """The validated :class:`~kbench_core.io.Run` of ``src`` from its sufficient table: the
    loader types the small table, each row is repeated :data:`COUNT` times, and the run
    carries the source's meta (its files' SHA-256, so exports record the same provenance as
    the memory engine) and the family's notes.

    ``weighted`` (families of :data:`WEIGHTED` only): the rows are not repeated; the frame
    keeps :data:`COUNT`, which every reader of a bias frame weighs each row by
    (:func:`kbench_core.kahne.row_weights`: the metrics, the figures, ``len(run)``, the
    unscored share, the per-bias effects), so memory stays the small table's whatever the
    run's rows. The app's workspace runs, ``kbench metrics``, ``figures`` and ``report``
    use it; ``kbench compare`` keeps its trials (it pairs them)."""
    from kbench_core.io import Run, load_run

    data = _io.BytesIO()
    # The counts stay out of the loader (it leaves out every column named like kbench's own,
    # so a file cannot pass its own weights) and come back beside its rows, in their order.
    counts = reduced.column(COUNT).to_numpy().astype(np.int64)
    pq.write_table(plain(reduced.drop_columns([COUNT])), data)
    small = load_run((f"{src.name}.parquet", data.getvalue()), kind=src.kind)  # type: ignore[arg-type]
    family = families.get(src.kind)
    left_out = ([reserved_warning(src.meta["reserved_columns"])]
                if src.meta.get("reserved_columns") else [])
    meta = {k: v for k, v in src.meta.items() if k != "reserved_columns"}
    if weighted and src.kind in WEIGHTED:
        frame = small.frame.assign(**{COUNT: counts})
        meta = {**meta, "rows": int(counts.sum()), "columns": list(small.frame.columns),
                "reduced_rows": len(counts), "weighted": True}
        notes = tuple(family.notes(frame)) if family.notes is not None else ()
        return Run(name=src.name, kind=src.kind, frame=frame, meta=meta,
                   warnings=(*left_out, *notes))
    frame = small.frame.take(np.repeat(np.arange(len(small.frame)), counts)
                             ).reset_index(drop=True)
    warnings = tuple(family.notes(frame)) if family.notes is not None else ()
    meta = {**meta, "rows": len(frame), "columns": list(frame.columns),
            "reduced_rows": len(counts)}
    return Run(name=src.name, kind=src.kind, frame=frame, meta=meta,
               warnings=(*left_out, *warnings))
