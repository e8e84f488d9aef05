"""The sources an engine queries in place: a Parquet file, a folder of Parquet files of one
kind, or a workspace folder (``kbench app --workspace``: each ``.parquet`` beside its ``.json``
sidecar naming the run and its kind). Nothing here reads a row: the kind comes from the
Parquet schema (or the sidecar), the rows stay in the files until the engine reduces them."""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from kbench_core import families
from kbench_core.io.finish import reserved as _reserved
from kbench_core.problems import Problem, RunFormatError

__all__ = ["COUNT", "FILE", "ROW", "ParquetSource", "file_source", "is_parquet_source",
           "open_table", "plain", "sources"]

# The engine's own columns beside the file's: where each row came from (file, 0-based row),
# so a problem is named as the loader names it.
ROW = "__kbench_row"
FILE = "__kbench_file"
COUNT = "__kbench_rows"  # a reduced tuple's rows (kbench_core.engines.reduce)
_SUFFIXES = (".parquet", ".pq")
_SIDECAR_LIMIT = 4 * 1024**2  # as the workspace's own check


@dataclass(frozen=True)
class ParquetSource:
    """One run on disk: its ``name``, ``kind``, Parquet ``files`` (one kind, read as one
    table), the canonical names of the files' columns (``renames``: the family's aliases)
    and the ``meta`` a loaded run would carry (source, bytes, SHA-256)."""

    name: str
    kind: str
    files: tuple[Path, ...]
    columns: tuple[str, ...]
    renames: dict[str, str] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """The name problems are reported under: the file's name (the loader's) or the
        folder's."""
        return str(self.meta.get("source", self.name))


def _parquet_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in _SUFFIXES)


def is_parquet_source(path: Path) -> bool:
    """A Parquet file, or a folder holding Parquet files (a workspace is one)."""
    if path.is_dir():
        return bool(_parquet_files(path))
    return path.suffix.lower() in _SUFFIXES


def _sha256(paths: list[Path]) -> str:
    """The loader's hash: a file's SHA-256, or for several the hash of their hashes (as
    :func:`kbench_core.io._folder_hash` orders them, by name). Read in 1 MiB blocks."""
    digests = []
    for path in paths:
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            for block in iter(lambda h=handle: h.read(1 << 20), b""):
                digest.update(block)
        digests.append(digest)
    if len(digests) == 1:
        return digests[0].hexdigest()
    outer = hashlib.sha256()
    for path, digest in zip(paths, digests, strict=True):
        outer.update(path.name.encode())
        outer.update(digest.digest())
    return outer.hexdigest()


def _schema_names(path: Path) -> list[str]:
    try:
        return [str(n).strip() for n in pq.read_schema(path).names]
    except Exception as exc:  # pyarrow raises several types for a damaged file
        raise RunFormatError(path.name, [Problem(None, None, f"cannot read Parquet: "
                                                             f"{str(exc)[:300]}")]) from None


def _source(name: str, kind: str | None, files: list[Path], label: str) -> ParquetSource:
    from kbench_core.io import _undetected, detect_kind, run_name

    names = _schema_names(files[0])
    for other in files[1:]:
        if _schema_names(other) != names:
            raise RunFormatError(other.name, [Problem(None, None, (
                f"its columns differ from {files[0].name}'s: a folder is read as one run, "
                "so its Parquet files must share their columns"))])
    detected = kind or detect_kind(names)
    if detected is None:
        raise _undetected(label, names)
    aliases = families.get(detected).aliases
    renames = {c: aliases[c] for c in names if c in aliases and aliases[c] not in names}
    meta = {"source": label, "bytes": sum(p.stat().st_size for p in files),
            "sha256": _sha256(files), "format": "parquet"}
    if len(files) > 1:
        meta["files"] = [p.name for p in files]
    theirs = [c for c in names if _reserved(c)]
    if theirs:  # left out, as the loader leaves them out (and says so)
        meta["reserved_columns"] = theirs
    return ParquetSource(name=run_name(name), kind=detected, files=tuple(files),
                         columns=tuple(renames.get(c, c) for c in names if not _reserved(c)),
                         renames=renames, meta=meta)


def _sidecar(path: Path) -> dict[str, Any] | None:
    """A workspace sidecar's name and kind, or None when there is no sidecar. A sidecar that
    is not a small JSON object with a text name and a known kind is a RunFormatError."""
    side = path.with_suffix(".json")
    if not side.is_file():
        return None
    bad = RunFormatError(side.name, [Problem(None, None, "not a workspace sidecar (a JSON "
                                                         "object with a name and a kind)")])
    if side.stat().st_size > _SIDECAR_LIMIT:
        raise bad
    try:
        data = json.loads(side.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise bad from None
    if not (isinstance(data, dict) and isinstance(data.get("name"), str)
            and families.is_registered(str(data.get("kind")))):
        raise bad
    return data


def sources(path: Path) -> list[ParquetSource]:
    """The runs of ``path``: a Parquet file (one run, named by its stem), a workspace (one
    run per ``.parquet`` with a sidecar, named and typed by it) or a folder of Parquet files
    of one kind (one run, named by the folder)."""
    if not path.exists():
        raise FileNotFoundError(f"no such file or folder: {path}")
    if path.is_file():
        stem = path.name.rsplit(".", 1)[0]
        return [_source(stem, None, [path], path.name)]
    files = _parquet_files(path)
    if not files:
        raise RunFormatError(path.name, [Problem(None, None, "no Parquet files in this folder")])
    sidecars = [_sidecar(p) for p in files]
    if any(s is not None for s in sidecars):  # a workspace: each saved run on its own
        return [_source(s["name"], s["kind"], [p], p.name)
                for p, s in zip(files, sidecars, strict=True) if s is not None]
    return [_source(path.name, None, files, path.name)]


def file_source(path: Path, *, name: str, kind: str) -> ParquetSource:
    """One Parquet file as a run of a known ``name`` and ``kind`` (a workspace's saved run,
    typed by its sidecar: ``kbench app --workspace DIR --engine duckdb``). Reads the schema
    and hashes the bytes (``meta["sha256"]``), never a row."""
    return _source(name, kind, [path], path.name)


def open_table(con: Any, src: ParquetSource) -> Any:
    """The source's rows as an Ibis table on ``con`` (read in place, not loaded), with the
    family's aliases renamed and two more columns: :data:`FILE` (the file's name) and
    :data:`ROW` (the row's 0-based position in its file)."""
    name = getattr(con, "name", "")
    paths = [str(p) for p in src.files]
    if name == "duckdb":
        # DuckDB cannot number rows beside it (its names are case-insensitive)
        if any(str(c).lower() == "file_row_number" for c in src.columns):
            from kbench_core.io import Problem, RunFormatError

            raise RunFormatError(src.label, [Problem(
                None, "file_row_number", "a column named 'file_row_number' cannot be read "
                "by the DuckDB engine (DuckDB numbers the rows under that name): rename the "
                "column, or read the file with --engine memory or spark")])
        # the file's name under a name no file has (a file's own "filename", or even
        # "__kbench_file", would clash with DuckDB's column), then kbench's
        ours = f"{FILE}_{uuid.uuid4().hex}"
        table = con.read_parquet(paths, file_row_number=True, filename=ours,
                                 table_name=f"kbench_{uuid.uuid4().hex}")
        theirs = [c for c in table.columns if c != ours and _reserved(c)]
        table = table.drop(*theirs) if theirs else table
        table = table.rename({ROW: "file_row_number", FILE: ours})
    elif name == "pyspark":
        from pyspark.sql import functions as F

        frame = con._session.read.parquet(*paths)
        frame = frame.select(*(F.col(f"`{c}`") for c in frame.columns if not _reserved(c)),
                             F.col("_metadata.file_name").alias(FILE),
                             F.col("_metadata.row_index").alias(ROW))
        view = f"kbench_{uuid.uuid4().hex}"
        frame.createOrReplaceTempView(view)
        table = con.table(view)
    else:
        raise ValueError(f"no reader for the {name!r} backend; use duckdb or pyspark")
    stripped = {c.strip(): c for c in table.columns if c != c.strip()}
    renames = {new: old for old, new in src.renames.items()}
    renames.update({new: old for new, old in stripped.items() if new not in renames})
    return table.rename(renames) if renames else table


def plain(table: pa.Table) -> pa.Table:
    """Engine output as the reader would see it in a file: dictionary columns decoded."""
    return pa.table({name: (col.dictionary_decode() if pa.types.is_dictionary(col.type)
                            else col) for name, col in zip(table.column_names, table.columns,
                                                           strict=True)})
