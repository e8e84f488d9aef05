"""The memory engine: the loader itself (:func:`kbench_core.io.load_run`) on a Parquet source,
the reference every engine matches (``tests/test_engines.py``). A folder of Parquet files is
one run: each file is loaded and validated alone, then the keys are checked across the files
with the engines' own check, so every engine refuses the same folders in the same words."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa

from kbench_core.engines import keys as engine_keys
from kbench_core.engines.source import (
    FILE,
    ROW,
    ParquetSource,
    changed,
    is_parquet_source,
    sources,
)
from kbench_core.problems import RunFormatError

__all__ = ["load_in_memory"]


def load_in_memory(path: Path) -> list:
    """The memory engine: the loader itself (:func:`kbench_core.io.load_run`), on a file, on
    each run of a workspace, or on each Parquet file of a folder (combined into one run)."""
    import pandas as pd

    from kbench_core.io import Run, load_run

    if not path.is_dir() or not is_parquet_source(path):
        # a file, a native folder, or a missing path (the loader says so in its words)
        return [load_run(path)]
    found = sources(path)
    runs = []
    for src in found:
        loaded = [load_run(p, kind=src.kind) for p in src.files]  # type: ignore[arg-type]
        _same_bytes(src, loaded)
        if len(loaded) == 1:
            run = loaded[0]
            runs.append(Run(name=src.name, kind=run.kind, frame=run.frame,
                            meta={**run.meta, **src.meta}, warnings=run.warnings))
        else:
            _check_keys_across(loaded, src)
            frame = pd.concat([r.frame for r in loaded], ignore_index=True)
            runs.append(Run(name=src.name, kind=src.kind, frame=frame, meta=dict(src.meta),
                            warnings=tuple(w for r in loaded for w in r.warnings)))
    return runs


def _same_bytes(src: ParquetSource, loaded: list) -> None:
    """Refuse a run whose file the loader read is not the one the source hashed (replaced
    or written between the two reads): the run carries the source's SHA-256, which must be
    of the bytes its numbers come from."""
    if src.pinned is None:
        return
    for path, digest, run in zip(src.files, src.pinned.digests, loaded, strict=True):
        if run.meta.get("sha256") != digest.hex():
            raise changed(src.label, path.name)


def _check_keys_across(loaded: list, src: ParquetSource) -> None:
    """Refuse a folder whose files repeat each other's keys (the loader checked each file's
    own): the folder is one run, as the engines read it. The check is the engines' own
    (:func:`~kbench_core.engines.keys.key_problems`) on the files' key columns, so the
    memory engine words and places each repeat (``file:row``) as they do."""
    import ibis
    import pandas as pd

    key = engine_keys._key_names(list(loaded[0].frame.columns), src.kind)
    if key is None:
        return
    keys = pd.concat([r.frame[key].assign(**{FILE: path.name, ROW: np.arange(len(r.frame))})
                      for r, path in zip(loaded, src.files, strict=True)], ignore_index=True)
    arrow = pa.Table.from_pandas(keys, preserve_index=False)
    arrow = arrow.cast(pa.schema([pa.field(f.name, f.type.value_type)
                                  if pa.types.is_dictionary(f.type) else f
                                  for f in arrow.schema]))
    table = ibis.duckdb.connect().create_table("keys", arrow)
    listed, total = engine_keys.key_problems(table, src)
    if total:
        raise RunFormatError(src.label, [problem for _, problem in listed], total)
