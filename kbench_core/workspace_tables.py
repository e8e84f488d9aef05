"""The sufficient tables of a workspace's saved runs kept on disk (``.kbench-reduced/``), so
that a restart reuses what an engine reduced: :func:`cached_table`, :func:`keep_table`,
:func:`forget_tables`. Used by :mod:`kbench_core.workspace` (the app's reads and removals)
and :mod:`kbench_core.workspace_add` (``kbench workspace add``)."""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

__all__ = ["CACHE_FOLDER", "REDUCTION_VERSION", "cached_table", "forget_tables", "keep_table"]

CACHE_FOLDER = ".kbench-reduced"
# What a cached table was made by: a change of the reductions' columns bumps it.
REDUCTION_VERSION = "issue39-1"
_KEYS = (b"kbench_sha256", b"kbench_kind", b"kbench_reduction")


def _cache_path(directory: Path, sha256: str, kind: str) -> Path:
    return Path(directory) / CACHE_FOLDER / f"{sha256}-{kind}.parquet"


def cached_table(directory: Path, sha256: str, kind: str) -> pa.Table | None:
    """The sufficient table kept for the saved bytes ``sha256`` of ``kind``, or None (none
    kept, made by another reduction version, or unreadable)."""
    path = _cache_path(directory, sha256, kind)
    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowException):
        return None
    meta = table.schema.metadata or {}
    if [meta.get(k) for k in _KEYS] != [sha256.encode(), kind.encode(),
                                        REDUCTION_VERSION.encode()]:
        return None
    return table.replace_schema_metadata(None)


def keep_table(directory: Path, sha256: str, kind: str, table: pa.Table) -> None:
    """Write ``table`` as the kept sufficient table of ``sha256`` × ``kind`` (atomically:
    a temporary file renamed); a failure (full disk, read-only workspace) keeps nothing and
    says nothing: the table is only a shortcut."""
    path = _cache_path(directory, sha256, kind)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        path.parent.mkdir(exist_ok=True)
        meta = dict(zip(_KEYS, (sha256.encode(), kind.encode(), REDUCTION_VERSION.encode()),
                        strict=True))
        pq.write_table(table.replace_schema_metadata(meta), tmp)
        os.replace(tmp, path)
    except (OSError, pa.ArrowException):
        with contextlib.suppress(OSError):
            tmp.unlink()


def forget_tables(directory: Path, sha256: str | None) -> None:
    """Remove the kept tables of the bytes ``sha256`` (their run was removed), and the
    folder when nothing else is kept there: a workspace whose last run was removed is empty
    again. (A table being kept at that moment by another server fails to write, and keeps
    nothing: the table is only a shortcut.)"""
    if not sha256:
        return
    folder = Path(directory) / CACHE_FOLDER
    with contextlib.suppress(OSError):
        for entry in folder.glob(f"{sha256}-*.parquet"):
            with contextlib.suppress(OSError):
                entry.unlink()
    with contextlib.suppress(OSError):  # not empty: another run's tables stay
        folder.rmdir()
