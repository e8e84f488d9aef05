"""A run too big for the loader, added to a workspace by an engine (``kbench workspace add``),
and the workspace's sufficient tables kept on disk so a restart reuses them.

:func:`add_run` validates the run (a Parquet file, or a folder of Parquet files of one kind)
with the engine (:func:`kbench_core.engines.reduce_source`: every cell with the loader's
rules, the family's sufficient table), copies its bytes into the workspace under a save's
journal (a crash midway is finished or rolled back on the next start, as a save from the app
is: :func:`kbench_core.workspace_files.recover`) and writes its sidecar from the sufficient
table: name, kind, provenance, warnings, models, rows, never a frame of the rows. A single
file is copied byte for byte (its SHA-256, the run's provenance, is the file's, checked while
copying); a folder is written as one Parquet file in its files' order (DuckDB's ``COPY``),
whose SHA-256 is the saved run's.

The sufficient table of every saved run an engine reduces is kept in the workspace, one
Parquet file per (file SHA-256, kind) in ``.kbench-reduced/`` (:func:`cached_table`,
:func:`keep_table`): the app reading the run after a restart finds it there instead of
querying the engine again (``kbench_core.workspace``), so a 100M-row run opens in the time
of hashing its file and finishing its small table. A cached table records the file's SHA-256,
the kind and kbench's reduction version in its own metadata and is used only when all three
match; one that cannot be read is ignored (the engine reduces the run again) and replaced.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from kbench_core.workspace_tables import (  # re-exported: where they were first
    CACHE_FOLDER,
    REDUCTION_VERSION,
    cached_table,
    forget_tables,
    keep_table,
)

__all__ = ["CACHE_FOLDER", "REDUCTION_VERSION", "Added", "add_run", "cached_table",
           "forget_tables", "keep_table"]

@dataclass(frozen=True)
class Added:
    """What :func:`add_run` saved: the workspace's Parquet file, the run's name, kind, rows,
    models, the rows of its sufficient table, the seconds the engine took, and whether the
    table was kept in the workspace (``kept``: False for a run at item grain, judged or
    replication, whose rows the engine fetches whole and the app reads again)."""

    path: Path
    name: str
    kind: str
    rows: int
    models: list[str]
    reduced_rows: int
    seconds: float
    kept: bool = False


def _copy_hashed(source: Path, target: Path) -> str:
    """Copy ``source`` to ``target`` (a new file) in 1 MiB blocks, returning the SHA-256 of
    the bytes copied."""
    digest = hashlib.sha256()
    with open(source, "rb") as read, open(target, "xb") as write:
        for block in iter(lambda: read.read(1 << 20), b""):
            digest.update(block)
            write.write(block)
        write.flush()
        os.fsync(write.fileno())
    return digest.hexdigest()


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as read:
        for block in iter(lambda: read.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _combined(src: Any, target: Path) -> None:
    """The rows of a folder's files written as one Parquet file, in the order the engines
    read them (files by name, rows in file order), columns as the files name them."""
    import duckdb

    from kbench_core.engines.settings import DUCKDB_MEMORY
    from kbench_core.engines.source import _glob_escaped

    files = ", ".join("'" + _glob_escaped(os.path.abspath(p)).replace("'", "''") + "'"
                      for p in src.files)
    out = "'" + str(target).replace("'", "''") + "'"
    con = duckdb.connect(config={"memory_limit": DUCKDB_MEMORY,
                                 "preserve_insertion_order": True})
    try:
        con.execute(f"COPY (SELECT * FROM read_parquet([{files}], union_by_name = true)) "
                    f"TO {out} (FORMAT parquet)")
    finally:
        con.close()


def add_run(workspace: Any, path: str | os.PathLike[str], *, name: str | None = None,
            engine: str = "duckdb", spark_master: str | None = None) -> Added:
    """Add the run at ``path`` (a Parquet file, or a folder of Parquet files of one kind) to
    ``workspace`` (a :class:`kbench_core.workspace.Workspace`) without loading its rows: see
    the module docstring. ``name``: the run's name (default the file's or folder's).

    Raises the run's :class:`~kbench_core.io.RunFormatError` when a cell fails the loader's
    rules (nothing is written), :class:`~kbench_core.workspace.WorkspaceError` when the path
    is not one run or the copy cannot be written (nothing is left behind), and what the
    engine raises when it cannot run (:class:`kbench_core.engines.EngineMemoryError`)."""
    from kbench_core import engines
    from kbench_core.engines import reduce, source
    from kbench_core.io import run_name
    from kbench_core.workspace import (
        _META_TEXT,
        MAX_META_TEXT,
        SaveJournal,
        WorkspaceError,
        _slug,
        _unlink_quietly,
    )

    where = Path(path)
    if engine == "memory":
        raise WorkspaceError("kbench workspace add reads the run through an engine (duckdb "
                             "or spark); a run that fits in memory can be uploaded in the app")
    if not where.exists():
        raise WorkspaceError(f"{str(where)!r} does not exist")
    if not source.is_parquet_source(where):
        raise WorkspaceError(f"{str(where)!r} is neither a Parquet file nor a folder of "
                             "Parquet files")
    found = source.sources(where)
    if len(found) != 1:
        raise WorkspaceError(f"{str(where)!r} holds {len(found)} runs (a workspace): add "
                             "them one at a time")
    src = found[0]
    start = time.perf_counter()
    reduced = engines.reduce_source(src, engine=engine,  # type: ignore[arg-type]
                                    spark_master=spark_master)
    seconds = time.perf_counter() - start
    run = reduce.finish(reduced, src, weighted=src.kind in reduce.WEIGHTED)
    shown = run_name(name or src.name)
    directory = Path(workspace.directory)
    with tempfile.TemporaryDirectory(prefix="kbench-add-") as scratch:
        if len(src.files) == 1:
            original, digest = src.files[0], str(src.meta["sha256"])
        else:
            original = Path(scratch) / "combined.parquet"
            _combined(src, original)
            digest = _sha256(original)
        size = original.stat().st_size
        if shutil.disk_usage(directory).free < size + (64 << 20):
            raise WorkspaceError(f"the workspace has {shutil.disk_usage(directory).free:,} "
                                 f"bytes free, too few for the run's {size:,}; nothing was "
                                 "written")
        stem = f"{_slug(shown)}-{digest[:12]}-{secrets.token_hex(4)}"
        target = directory / f"{stem}.parquet"
        meta = {k: v for k, v in run.meta.items()
                if k not in ("workspace_file", "weighted", "reduced_rows", "columns")}
        meta["sha256"] = digest
        for key in _META_TEXT:
            if isinstance(meta.get(key), str) and len(meta[key]) > MAX_META_TEXT:
                meta[key] = meta[key][:MAX_META_TEXT - 1] + "\u2026"
        sidecar = {"name": shown, "kind": src.kind, "meta": meta,
                   "warnings": list(run.warnings), "parquet_sha256": digest,
                   "models": run.models, "rows": len(run)}
        text = json.dumps(sidecar, indent=1, default=str)
        side = target.with_suffix(".json")
        tmp, tmp_side = target.with_suffix(".parquet.tmp"), side.with_suffix(".json.tmp")
        journal = None
        try:
            journal = SaveJournal.begin(directory, stem, name=shown, parquet_sha256=digest,
                                        sidecar=text.encode("utf-8"))
            copied = _copy_hashed(original, tmp)
            if copied != digest:
                _unlink_quietly(tmp)
                raise WorkspaceError(f"{src.label} changed while it was copied (its SHA-256 "
                                     "differs from the one validated); add it again once "
                                     "nothing writes to it")
            tmp_side.write_text(text, encoding="utf-8")
            tmp_side.replace(side)
            tmp.replace(target)
        except OSError as exc:
            _unlink_quietly(tmp, tmp_side, target, side)
            raise WorkspaceError(f"run {shown!r} could not be added to the workspace "
                                 f"({exc.strerror or exc}); nothing of it was kept") from None
        finally:
            if journal is not None:
                journal.end()
    kept = isinstance(reduced, pa.Table)
    if kept:
        keep_table(directory, digest, src.kind, reduced)
    return Added(path=target, name=shown, kind=src.kind, rows=len(run), models=run.models,
                 reduced_rows=int(run.meta.get("reduced_rows", len(run))), seconds=seconds,
                 kept=kept)

