"""The sources an engine queries in place: a Parquet file, a folder of Parquet files of one
kind, or a workspace folder (``kbench app --workspace``: each ``.parquet`` beside its ``.json``
sidecar naming the run and its kind). Nothing here reads a row: the kind comes from the
Parquet schema (or the sidecar), the rows stay in the files until the engine reduces them."""

from __future__ import annotations

import hashlib
import json
import os
import threading
import uuid
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import pyarrow as pa
import pyarrow.parquet as pq

from kbench_core import families
from kbench_core.io.finish import reserved as _reserved
from kbench_core.problems import Problem, RunFormatError
from kbench_core.readers.parquet import check_footer, check_schema
from kbench_core.readers.sources import open_regular

__all__ = ["COUNT", "FILE", "ROW", "ParquetSource", "Pinned", "file_source",
           "is_parquet_source", "open_table", "plain", "sources"]

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
    # The files as checked and hashed (:class:`Pinned`): what an engine reads. None for a
    # source made by hand (a warehouse table: ``files`` empty), or pinned on first open.
    pinned: Pinned | None = field(default=None, compare=False, repr=False)

    @property
    def label(self) -> str:
        """The name problems are reported under: the file's name (the loader's) or the
        folder's."""
        return str(self.meta.get("source", self.name))


def _parquet_files(folder: Path) -> list[Path]:
    """The Parquet entries of a folder, by name: every entry with a Parquet suffix but a
    folder (Spark writes its output as folders named ``x.parquet``). A FIFO, a device, a
    broken link or a link to a folder is listed, so reading it refuses it by name
    (:class:`Pinned`) instead of leaving it out of the run without a word."""
    return sorted(p for p in folder.iterdir() if p.suffix.lower() in _SUFFIXES
                  and not (p.is_dir() and not p.is_symlink()))


def is_parquet_source(path: Path) -> bool:
    """A Parquet file, or a folder holding Parquet files (a workspace is one)."""
    if path.is_dir():
        return bool(_parquet_files(path))
    return path.suffix.lower() in _SUFFIXES


# Files the process keeps open for its engines at most (each source holds its descriptors
# until it is gone; a workspace of 1,500 runs makes 1,500 sources at once, and a process may
# open 1,024 files): past it a source's files are read by their paths, checked again after
# the read.
_PINNED_MAX = 256
_KEPT = [0]  # descriptors kept by live sources
_KEPT_LOCK = threading.Lock()
_GLOB = frozenset("*?[")


def _fd_folder() -> str | None:
    """Where this process's open files can be opened again by number (Linux's
    ``/proc/self/fd``, a BSD's or macOS's ``/dev/fd``), or None."""
    for folder in ("/proc/self/fd", "/dev/fd"):
        if os.path.isdir(folder):
            return folder
    return None


def _glob_escaped(path: str) -> str:
    """``path`` as DuckDB's reader takes it literally: each glob character (``*``, ``?``,
    ``[``) in a bracket of its own (DuckDB has no switch to turn globbing off)."""
    return "".join(f"[{c}]" if c in _GLOB else c for c in path)


def _stamp(info: os.stat_result) -> tuple[int, ...]:
    """What changes when a file is replaced or written: its inode, size and times, and its
    count of links (see :func:`_same`)."""
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_nlink,
            info.st_ctime_ns)


def _same(before: tuple[int, ...], now: tuple[int, ...] | None) -> bool:
    """Whether a file's stamp is unchanged. Its change time counts unless its links
    changed: a file renamed over or removed from its path (links down to 0) changes its
    change time though not a byte of it, and an engine reading its descriptor reads it
    still; a write changes its modification time, and resetting that (``utime``) changes
    its change time."""
    if now is None or before[:4] != now[:4]:
        return False
    return before[4] != now[4] or before[5] == now[5]


def _close(handles: list[BinaryIO], kept: int = 0) -> None:
    """Close ``handles``, giving back the ``kept`` descriptors of the process's budget."""
    for handle in handles:
        handle.close()
    if kept:
        with _KEPT_LOCK:
            _KEPT[0] -= kept


def _metadata(name: str, handle: BinaryIO) -> pq.FileMetaData:
    """The Parquet footer read from the open file; RunFormatError naming it when it is none."""
    try:
        handle.seek(0)
        return pq.ParquetFile(handle).metadata
    except Exception as exc:  # pyarrow raises several types for a damaged file
        raise RunFormatError(name, [Problem(None, None, f"cannot read Parquet: "
                                                        f"{str(exc)[:300]}")]) from None


def _digest(name: str, handle: BinaryIO) -> bytes:
    """The SHA-256 of the open file's bytes, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    handle.seek(0)
    try:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    except OSError as exc:
        raise RunFormatError(name, [Problem(None, None, f"cannot read: "
                                                        f"{exc.strerror or exc}")]) from None
    return digest.digest()


def changed(label: str, name: str) -> RunFormatError:
    """The error of a run whose file ``name`` changed between its hash and its read."""
    return RunFormatError(label, [Problem(None, None, (
        f"{name} changed while it was read (it was written to, replaced or removed after "
        "kbench hashed it), so its numbers and its SHA-256 may not be of the same bytes; "
        "read it again once nothing writes to it"))])


class Pinned:
    """The files of a source as an engine reads them: the bytes that were checked and hashed.

    Each file is opened once, without blocking, and checked on its open descriptor to be a
    regular file (:func:`~kbench_core.readers.sources.open_regular`): a FIFO, a device, a
    folder or a link to one is refused, naming the entry, before a byte is read (a FIFO
    used to hang the app's start). Its footer and its SHA-256 are read from that descriptor,
    and DuckDB reads the file through it (``/proc/self/fd/N``: no file name reaches DuckDB's
    reader, which takes ``*``, ``?`` and ``[...]`` in a name as a pattern, and a file
    renamed over the path after the hash is not the one read). Spark, and a folder of more
    than :data:`_PINNED_MAX` files, read by path (no glob: :func:`open_table`);
    :meth:`check_unchanged` after the read refuses a run whose file changed or was replaced
    meanwhile, so the SHA-256 of the provenance is of the bytes the numbers come from.
    """

    def __init__(self, paths: Sequence[Path], *, keep: bool = True) -> None:
        self.paths = tuple(Path(p) for p in paths)
        self.names = tuple(p.name for p in self.paths)
        # keep: the descriptors stay open for DuckDB while this object lives (a source's),
        # within the process's budget of kept descriptors
        folder = _fd_folder() if keep else None
        if folder is not None:
            with _KEPT_LOCK:
                if _KEPT[0] + len(self.paths) <= _PINNED_MAX:
                    _KEPT[0] += len(self.paths)
                else:
                    folder = None
        handles: list[BinaryIO] = []
        self.metadata: list[pq.FileMetaData] = []
        self.digests: list[bytes] = []
        self.stamps: list[tuple[int, ...]] = []
        try:
            for path in self.paths:
                name, handle = open_regular(path)
                handles.append(handle)
                self.stamps.append(_stamp(os.fstat(handle.fileno())))
                self.metadata.append(_metadata(name, handle))
                self.digests.append(_digest(name, handle))
                if folder is None:
                    handles.pop().close()
        except BaseException:
            _close(handles, len(self.paths) if folder is not None else 0)
            raise
        self._handles = handles
        self._folder = folder
        weakref.finalize(self, _close, handles, len(self.paths) if folder is not None else 0)

    @property
    def by_descriptor(self) -> bool:
        """Whether DuckDB reads the files through their open descriptors."""
        return self._folder is not None

    def duckdb_paths(self) -> list[str]:
        """The paths to give DuckDB's reader: the open descriptors, else the files' absolute
        paths with their glob characters escaped."""
        if self._folder is not None:
            return [f"{self._folder}/{h.fileno()}" for h in self._handles]
        return [_glob_escaped(os.path.abspath(p)) for p in self.paths]

    def duckdb_names(self) -> list[str]:
        """What DuckDB's ``filename`` column holds for each file (the path it opened)."""
        if self._folder is not None:
            return self.duckdb_paths()
        return [os.path.abspath(p) for p in self.paths]

    def check_unchanged(self, label: str, *, by_path: bool) -> None:
        """Refuse the run if a file changed since it was hashed (its size or times on the
        open descriptor) or, when an engine read it by path (``by_path``), if the path now
        leads elsewhere (a file renamed over it, a FIFO swapped in)."""
        for i, (path, stamp) in enumerate(zip(self.paths, self.stamps, strict=True)):
            try:
                now = (_stamp(os.fstat(self._handles[i].fileno())) if self._handles
                       else None)
                if by_path or now is None:
                    now = _stamp(os.stat(path))
            except OSError:
                now = None
            if not _same(stamp, now):
                raise changed(label, path.name)

    def sha256(self) -> str:
        """The loader's hash: a file's SHA-256, or for several the hash of their hashes (as
        :func:`kbench_core.io._folder_hash` orders them, by name)."""
        if len(self.digests) == 1:
            return self.digests[0].hex()
        outer = hashlib.sha256()
        for name, digest in zip(self.names, self.digests, strict=True):
            outer.update(name.encode())
            outer.update(digest)
        return outer.hexdigest()


def _type_class(kind: pa.DataType) -> str:
    """What a column's values are, in words: the classes an engine reading a folder as one
    table converts within (DuckDB widens numbers and casts text), not across (a number in
    one file and text in another failed inside DuckDB with a ConversionException where the
    loader, reading each file alone, took both)."""
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    if pa.types.is_boolean(kind):
        return "true/false values"
    if pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_decimal(kind):
        return "numbers"
    if (pa.types.is_string(kind) or pa.types.is_large_string(kind)
            or pa.types.is_string_view(kind) or pa.types.is_binary(kind)
            or pa.types.is_large_binary(kind) or pa.types.is_binary_view(kind)
            or pa.types.is_fixed_size_binary(kind)):
        return "text"
    if pa.types.is_null(kind):
        return "nothing"  # a column of nulls only: read as any type
    return str(kind)


def _checked_schemas(pinned: Pinned) -> list[str]:
    """The column names of a source's files, each file's schema and footer checked with the
    loader's rules (:func:`~kbench_core.readers.parquet.check_schema`, ``check_footer``) and
    the files of a folder checked to share their columns, names and kinds of values alike
    (an engine reads a folder as one table: :func:`_type_class`)."""
    schemas = []
    for name, meta in zip(pinned.names, pinned.metadata, strict=True):
        try:
            schema = meta.schema.to_arrow_schema()
        except Exception as exc:  # an unreadable logical type
            raise RunFormatError(name, [Problem(None, None, f"cannot read Parquet: "
                                                            f"{str(exc)[:300]}")]) from None
        check_schema(name, schema)
        check_footer(name, meta)
        schemas.append(schema)
    first = schemas[0]
    names = [str(n).strip() for n in first.names]
    for name, schema in zip(pinned.names[1:], schemas[1:], strict=True):
        if [str(n).strip() for n in schema.names] != names:
            raise RunFormatError(name, [Problem(None, None, (
                f"its columns differ from {pinned.names[0]}'s: a folder is read as one run, "
                "so its Parquet files must share their columns"))])
        for mine, theirs in zip(schema, first, strict=True):
            held, expected = _type_class(mine.type), _type_class(theirs.type)
            if held != expected and "nothing" not in (held, expected):
                raise RunFormatError(name, [Problem(None, str(mine.name).strip(), (
                    f"its column holds {held} ({mine.type}) where {pinned.names[0]}'s holds "
                    f"{expected} ({theirs.type}): a folder is read as one run, so its "
                    "Parquet files must hold the same kind of values in each column"))])
    return names


def _source(name: str, kind: str | None, files: list[Path], label: str) -> ParquetSource:
    from kbench_core.io import _undetected, detect_kind, run_name

    pinned = Pinned(files)
    names = _checked_schemas(pinned)
    detected = kind or detect_kind(names)
    if detected is None:
        raise _undetected(label, names)
    aliases = families.get(detected).aliases
    renames = {c: aliases[c] for c in names if c in aliases and aliases[c] not in names}
    meta = {"source": label, "bytes": sum(stamp[2] for stamp in pinned.stamps),
            "sha256": pinned.sha256(), "format": "parquet"}
    if len(files) > 1:
        meta["files"] = [p.name for p in files]
    theirs = [c for c in names if _reserved(c)]
    if theirs:  # left out, as the loader leaves them out (and says so)
        meta["reserved_columns"] = theirs
    return ParquetSource(name=run_name(name), kind=detected, files=tuple(files),
                         columns=tuple(renames.get(c, c) for c in names if not _reserved(c)),
                         renames=renames, meta=meta, pinned=pinned)


def _sidecar(path: Path) -> dict[str, Any] | None:
    """A workspace sidecar's name and kind, or None when there is no sidecar. A sidecar that
    is not a small JSON object with a text name and a known kind is a RunFormatError."""
    side = path.with_suffix(".json")
    if not os.path.lexists(side):
        return None
    bad = RunFormatError(side.name, [Problem(None, None, "not a workspace sidecar (a JSON "
                                                         "object with a name and a kind)")])
    # read from the descriptor checked to be a regular file (a FIFO would hang the read)
    name, handle = open_regular(side)
    with handle:
        if os.fstat(handle.fileno()).st_size > _SIDECAR_LIMIT:
            raise bad
        try:
            data = json.loads(handle.read(_SIDECAR_LIMIT + 1).decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            raise bad from None
        except OSError as exc:
            raise RunFormatError(name, [Problem(None, None, f"cannot read: "
                                                            f"{exc.strerror or exc}")]) from None
    if not (isinstance(data, dict) and isinstance(data.get("name"), str)
            and families.is_registered(str(data.get("kind")))):
        raise bad
    return data


def sources(path: Path) -> list[ParquetSource]:
    """The runs of ``path``: a Parquet file (one run, named by its stem), a workspace (one
    run per ``.parquet`` with a sidecar, named and typed by it) or a folder of Parquet files
    of one kind (one run, named by the folder)."""
    if not os.path.lexists(path):
        raise FileNotFoundError(f"no such file or folder: {path}")
    if not path.is_dir():  # a FIFO, a device or a broken link is refused by name (Pinned)
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


def parquet_rows(src: ParquetSource) -> int:
    """The rows of a source's Parquet files, from their footers (no row read); 0 when a
    footer cannot be read (the loader then names the problem, as it always has)."""
    try:
        return sum(pq.ParquetFile(f).metadata.num_rows for f in src.files)
    except (OSError, pa.ArrowException):
        return 0


def pinned(src: ParquetSource) -> Pinned:
    """The source's files as checked and hashed when it was made (:class:`Pinned`); a source
    made by hand has them opened and checked now."""
    # by path: nothing would keep the descriptors open while the engine reads them
    return src.pinned if src.pinned is not None else Pinned(list(src.files), keep=False)


def _one_name_per_case(src: ParquetSource, engine: str) -> None:
    """Refuse two columns whose names differ only in case: DuckDB and Spark read column
    names without case (DuckDB renames the second ``Model_1`` and reads ``"Model"`` as
    ``model``), so an engine would read one for the other."""
    seen: dict[str, str] = {}
    for column in src.columns:
        other = seen.setdefault(column.lower(), column)
        if other != column:
            raise RunFormatError(src.label, [Problem(None, column, (
                f"the columns {other!r} and {column!r} differ only in case, and the {engine} "
                "engine reads column names without case (it would read one for the other): "
                "rename one, or read the file with --engine memory"))])


def open_table(con: Any, src: ParquetSource) -> Any:
    """The source's rows as an Ibis table on ``con`` (read in place, not loaded), with the
    family's aliases renamed and two more columns: :data:`FILE` (the file's name) and
    :data:`ROW` (the row's 0-based position in its file).

    The engine reads exactly the files of the source, never a pattern: DuckDB through the
    descriptors the files were checked and hashed on (:class:`Pinned`), else their paths
    with every glob character escaped; Spark each file by its path with globbing turned
    off. A file's name is never handed to the engine's reader as a pattern, so ``run[1]``
    is not ``run1`` and ``part*`` not ``part2``."""
    name = getattr(con, "name", "")
    files = pinned(src)
    if name == "duckdb":
        # DuckDB cannot number rows beside it (its names are case-insensitive)
        if any(str(c).lower() == "file_row_number" for c in src.columns):
            raise RunFormatError(src.label, [Problem(
                None, "file_row_number", "a column named 'file_row_number' cannot be read "
                "by the DuckDB engine (DuckDB numbers the rows under that name): rename the "
                "column, or read the file with --engine memory or spark")])
        _one_name_per_case(src, "DuckDB")
        # the file's name under a name no file has (a file's own "filename", or even
        # "__kbench_file", would clash with DuckDB's column), then kbench's
        ours = f"{FILE}_{uuid.uuid4().hex}"
        # several files by name: a column of nulls only in the first file (a pyarrow
        # "null" column) is read with another file's type, not as the first file's NULL
        several = {"union_by_name": True} if len(files.paths) > 1 else {}
        table = con.read_parquet(files.duckdb_paths(), file_row_number=True, filename=ours,
                                 table_name=f"kbench_{uuid.uuid4().hex}", **several)
        theirs = [c for c in table.columns if c != ours and _reserved(c)]
        table = table.drop(*theirs) if theirs else table
        table = table.mutate(**{FILE: _file_names(table[ours], files)}).drop(ours)
        table = table.rename({ROW: "file_row_number"})
    elif name == "pyspark":
        table = _spark_table(con, src, files)
    else:
        raise ValueError(f"no reader for the {name!r} backend; use duckdb or pyspark")
    stripped = {c.strip(): c for c in table.columns if c != c.strip()}
    renames = {new: old for old, new in src.renames.items()}
    renames.update({new: old for new, old in stripped.items() if new not in renames})
    return table.rename(renames) if renames else table


def _file_names(reported: Any, files: Pinned) -> Any:
    """The file's name of each row, from the path DuckDB reports for it (a descriptor's
    path says nothing): a constant for one file (nothing computed per row), else a case
    over the few paths."""
    import ibis

    if len(files.names) == 1:
        return ibis.literal(files.names[0])
    return ibis.cases(*((reported == path, name)
                        for path, name in zip(files.duckdb_names(), files.names,
                                              strict=True)))


def _spark_table(con: Any, src: ParquetSource, files: Pinned) -> Any:
    """The source's files on Spark: each read by its path, globbing off (Spark's reader,
    Hadoop's, expands ``*``, ``?``, ``[...]``, ``{a,b}`` and ``\\``), with its name as a
    constant (Spark's own ``_metadata.file_name`` is the name URL-encoded). A name Hadoop
    cannot read is refused by name: one starting with ``_`` or ``.`` (a hidden file, which
    Spark leaves out) or holding ``:`` (not a path to Hadoop)."""
    from functools import reduce

    from pyspark.sql import functions as F

    for path in files.paths:
        if path.name.startswith(("_", ".")) or ":" in path.name:
            raise RunFormatError(src.label, [Problem(None, None, (
                f"{path.name}: Spark cannot read a file whose name starts with '_' or '.' "
                "(Hadoop takes it for a hidden file and leaves it out) or holds ':'; rename "
                "it, or read it with --engine duckdb or memory"))])
    _one_name_per_case(src, "Spark")
    frames = []
    for path, file_name in zip(files.paths, files.names, strict=True):
        frame = con._session.read.option("__globPaths__", "false").parquet(
            os.path.abspath(path))
        frames.append(frame.select(*(F.col(f"`{c}`") for c in frame.columns
                                     if not _reserved(c)),
                                   F.lit(file_name).alias(FILE),
                                   F.col("_metadata.row_index").alias(ROW)))
    frames = _typed_alike(frames, files)
    frame = _nan_as_infinity(reduce(lambda a, b: a.unionByName(b), frames), src)
    view = f"kbench_{uuid.uuid4().hex}"
    frame.createOrReplaceTempView(view)
    return con.table(view)


def _nan_as_infinity(frame: Any, src: ParquetSource) -> Any:
    """The Spark frame with a NaN in a number column of the family's read as infinity.

    What Spark hands over reaches Arrow through pandas, where a NaN becomes a null: a NaN
    score passed as a missing one (the loader refuses it, "NaN and infinity are not valid
    values"). Infinity crosses as it is and the loader refuses it in the same words, so the
    engine's checks and the loader's messages see the cell as the loader does."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import DoubleType, FloatType

    numbers = {c.name for c in families.spec(src.kind).columns if c.type in ("float", "int")}
    floating = {f.name for f in frame.schema.fields
                if isinstance(f.dataType, DoubleType | FloatType)}
    return frame.select(*(
        F.when(F.isnan(F.col(f"`{c}`")), F.lit(float("inf")).cast(
            frame.schema[c].dataType)).otherwise(F.col(f"`{c}`")).alias(c)
        if c in floating and c.strip() in numbers else F.col(f"`{c}`")
        for c in frame.columns))


def _typed_alike(frames: list[Any], files: Pinned) -> list[Any]:
    """The Spark frames of a folder's files with a column that is all nulls in one file (a
    pyarrow "null" column, which Spark reads as numbers) given another file's type, so the
    union does not cast the other files' text to numbers (the loader reads each file alone,
    and DuckDB by name: :func:`open_table`)."""
    from pyspark.sql import functions as F

    if len(frames) < 2:
        return frames
    empty = [{f.name for f in meta.schema.to_arrow_schema() if pa.types.is_null(f.type)}
             for meta in files.metadata]
    target: dict[str, Any] = {}
    for frame, nulls in zip(frames, empty, strict=True):
        for spark_field in frame.schema.fields:
            if spark_field.name not in nulls:
                target.setdefault(spark_field.name, spark_field.dataType)
    return [frame.select(*(F.lit(None).cast(target[c]).alias(c)
                           if c in nulls and c in target else F.col(f"`{c}`")
                           for c in frame.columns))
            for frame, nulls in zip(frames, empty, strict=True)]


def check_read(src: ParquetSource, con: Any) -> None:
    """After an engine read the source: refuse it if a file changed meanwhile
    (:meth:`Pinned.check_unchanged`; by path where the engine read it by path)."""
    if src.pinned is None:
        return
    by_path = getattr(con, "name", "") != "duckdb" or not src.pinned.by_descriptor
    src.pinned.check_unchanged(src.label, by_path=by_path)


def plain(table: pa.Table) -> pa.Table:
    """Engine output as the reader would see it in a file: dictionary columns decoded."""
    return pa.table({name: (col.dictionary_decode() if pa.types.is_dictionary(col.type)
                            else col) for name, col in zip(table.column_names, table.columns,
                                                           strict=True)})
