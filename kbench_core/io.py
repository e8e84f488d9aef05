"""Loading and validating runs (SPEC section 1).

:func:`load_run` is the one door through which data enters kbench: it reads CSV, TSV, JSON,
JSON Lines and Parquet (each optionally gzipped) from a path or ``(filename, bytes)``, detects the
run kind from the columns, validates every row against :mod:`kbench_core.schema` and returns a
frozen :class:`Run`. Everything downstream trusts the frame it gets. The benchmarks' own output
formats (a KahneBench result JSON, a folder or archive of BlockBench judge outputs, ...) are
recognised by :mod:`kbench_core.native`, reshaped to canonical columns and then validated the same
way.

Invalid input raises :class:`RunFormatError`, whose message names the file, the row (1-based, as
a user counts: CSV/TSV/JSON Lines by line with the header as line 1, JSON lists by record,
Parquet by row) and the field. Nothing else escapes the loader: parser exceptions are caught at
this edge and re-raised as :class:`RunFormatError`, and its messages never carry a raw control
character (they are written as ``\x1b``-style escapes), so printing one is safe on a terminal.

Limits are checked before the work they bound (SPEC 5): regular files only (no devices or
FIFOs), the file size, the decompressed size, :data:`MAX_COLUMNS` columns (from the header, the
Parquet schema or the JSON keys), :data:`MAX_ROWS` rows and the Parquet file's own row count and
uncompressed size (from its metadata, before reading), every archive entry (see
:mod:`kbench_core.bundles`) and :data:`MAX_CELL_CHARS` per cell. Parsers do not lose data: a
quote that runs to the end of a CSV file is an error naming its line, JSON Lines are split on
``\n`` only, and JSON is parsed strictly (:func:`kbench_core.native.load_json`).

Data never runs as code: JSON is parsed with :mod:`json`, tables with :mod:`pyarrow`; no
``eval`` and no ``pickle`` anywhere.
"""

from __future__ import annotations

import csv
import hashlib
import io as _io
import math
import os
import re
import stat
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from kbench_core import bundles, families, native
from kbench_core.native._advice import advise_columns, advise_json
from kbench_core.schema import (
    Column,
    Kind,
    KindSpec,
)
from kbench_core.text import escape_controls, lookalike_warnings

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_DECOMPRESSED",
    "MAX_CELL_CHARS",
    "MAX_COLUMNS",
    "MAX_LISTED_PROBLEMS",
    "MAX_ROWS",
    "Problem",
    "Run",
    "RunFormatError",
    "combine_runs",
    "detect_kind",
    "load_run",
]

DEFAULT_MAX_BYTES = 200 * 1024**2
DEFAULT_MAX_DECOMPRESSED = 1024**3
MAX_LISTED_PROBLEMS = 20
MAX_JSON_DEPTH = native.MAX_JSON_DEPTH
MAX_CELL_CHARS = 1_000_000
MAX_COLUMNS = 2_000
# Ten times the largest benchmark run (1M bias rows); a loaded row costs ~100 bytes or more.
MAX_ROWS = 10_000_000

Format = Literal["csv", "tsv", "json", "jsonl", "parquet"]
OnError = Literal["raise", "skip"]
Source = str | Path | tuple[str, bytes]

_SUFFIX_FORMATS: dict[str, Format] = {
    ".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".txt": "csv",
    ".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl",
    ".parquet": "parquet", ".pq": "parquet",
}
def _text_columns() -> frozenset[str]:
    """Column names that hold text in some family (read as text, never as numbers), and
    their aliases."""
    names: set[str] = set()
    for family in families.all_families():
        text = {c.name for c in family.spec.columns if c.type in ("text", "category")}
        names |= text | {alias for alias, name in family.aliases.items() if name in text}
    return frozenset(names)
_ORDERED = frozenset({"intensity", "severity", "type_match"})
_TRUE = frozenset({"true", "1", "yes", "t", "y"})
_FALSE = frozenset({"false", "0", "no", "f", "n"})
_NONFINITE = frozenset({"nan", "-nan", "+nan", "inf", "-inf", "+inf", "infinity",
                        "-infinity", "+infinity"})


@dataclass(frozen=True)
class Problem:
    """One invalid cell, row or file-level fault.

    ``row`` is 1-based (or, for a folder of native files, the member path a row came from); None
    for a file-level fault.
    """

    row: int | str | None
    field: str | None
    message: str
    unit: str = "row"

    def __str__(self) -> str:
        where = []
        if self.row is not None:
            where.append(f"{self.unit} {self.row}")
        if self.field is not None:
            where.append(f"field '{self.field}'")
        # Names and values come from the file: never a raw control character in a message.
        return escape_controls((", ".join(where) + ": " if where else "") + self.message)


class RunFormatError(ValueError):
    """A file that is not a valid run; the message names file, row and field.

    ``problems`` holds at most :data:`MAX_LISTED_PROBLEMS` entries; ``total`` counts them all.
    """

    def __init__(self, file: str, problems: Sequence[Problem], total: int | None = None) -> None:
        self.file = file
        self.problems = list(problems)[:MAX_LISTED_PROBLEMS]
        self.total = len(problems) if total is None else total
        super().__init__(self._render())

    def _render(self) -> str:
        file = escape_controls(self.file)
        if self.total == 1:
            return f"{file}: {self.problems[0]}"
        lines = [f"{file}: {self.total} problems"]
        lines += [f"  - {p}" for p in self.problems]
        if self.total > len(self.problems):
            lines.append(f"  ... and {self.total - len(self.problems)} more")
        return "\n".join(lines)


def _fail(file: str, message: str, *, row: int | None = None, field: str | None = None,
          unit: str = "row") -> RunFormatError:
    return RunFormatError(file, [Problem(row, field, message, unit)])


@dataclass(frozen=True)
class Run:
    """One loaded, validated run.

    ``frame`` holds the canonical columns (categoricals for repeated labels) plus any extra
    columns the file had; ``meta`` records the source file, format, size, content hash and the
    models; ``warnings`` lists what the loader noticed but accepted (skipped rows, BOMs,
    re-encoded text).
    """

    name: str
    kind: Kind
    frame: pd.DataFrame = field(repr=False)
    meta: Mapping[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    @property
    def models(self) -> list[str]:
        return sorted(map(str, self.frame["model"].unique()))

    @property
    def content_hash(self) -> str:
        return str(self.meta.get("sha256", ""))

    def __len__(self) -> int:
        return len(self.frame)


# ---------------------------------------------------------------------------- reading bytes


_SURROGATES = re.compile("[\ud800-\udfff]")


def _clean_name(name: str) -> str:
    """A file name as text: undecodable bytes (surrogate escapes of a command-line path) as
    U+FFFD, so the name can be shown, hashed and written anywhere."""
    return _SURROGATES.sub("\ufffd", name)


def _read_source(source: Source, max_bytes: int) -> tuple[str, bytes]:
    if isinstance(source, tuple):
        if len(source) != 2 or not isinstance(source[1], bytes | bytearray | memoryview):
            raise TypeError("source must be a path or a (filename, bytes) pair")
        filename, data = _clean_name(str(source[0])), bytes(source[1])
        if len(data) > max_bytes:
            raise _size_error(filename, len(data), max_bytes)
        return filename, data
    path = Path(source)
    filename = _clean_name(path.name or str(path))
    try:
        # Opened without blocking and checked on the open descriptor: a FIFO or a device
        # (/dev/zero) is refused before a single read, and cannot be swapped in afterwards.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise _fail(filename, f"no such file: {_clean_name(str(path))}") from None
    except IsADirectoryError:
        raise _fail(filename, "is a folder, not a file") from None
    except PermissionError:
        raise _fail(filename, "cannot read: permission denied") from None
    except OSError as exc:
        raise _fail(filename, f"cannot open: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if stat.S_ISDIR(info.st_mode):
            raise _fail(filename, "is a folder, not a file")
        if not stat.S_ISREG(info.st_mode):
            raise _fail(filename, "not a regular file (a device, FIFO or socket); give the "
                                  "path of a saved file")
        if info.st_size > max_bytes:
            raise _size_error(filename, info.st_size, max_bytes)
        try:
            data = handle.read(max_bytes + 1)
        except OSError as exc:
            raise _fail(filename, f"cannot read: {exc.strerror or exc}") from None
    if len(data) > max_bytes:  # grew while being read
        raise _size_error(filename, len(data), max_bytes)
    return filename, data


def _mb(n: int) -> str:
    return f"{n / 1024**2:,.1f} MB"


def _size_error(filename: str, size: int, limit: int) -> RunFormatError:
    return _fail(filename, f"file is {_mb(size)}, over the {_mb(limit)} limit; split the run "
                           "into smaller files or raise the limit (max_bytes / "
                           "server.maxUploadSize)")


def _gunzip(filename: str, data: bytes, limit: int) -> bytearray:
    """Decompress with a hard output limit, so a gzip bomb costs at most ``limit`` bytes.

    Concatenated members are read on; zero bytes after the last member (tape and disk images
    pad that way) are ignored, as :mod:`gzip` does. The result is the bytearray that was
    filled, not a copy.
    """
    out = bytearray()
    decomp = zlib.decompressobj(16 + zlib.MAX_WBITS)
    chunk = 1 << 20
    pos = 0
    try:
        while pos < len(data) or decomp.unconsumed_tail:
            if decomp.unconsumed_tail:
                block = decomp.decompress(decomp.unconsumed_tail, chunk)
            else:
                block = decomp.decompress(data[pos:pos + chunk], chunk)
                pos += chunk
            out += block
            if len(out) > limit:
                raise _fail(filename, f"decompresses to more than {_mb(limit)}, over the "
                                      "decompressed-size limit (a gzip bomb, or a run too big "
                                      "to load at once)")
            if decomp.eof:
                # Concatenated gzip members are valid gzip (BGZF files are thousands of them):
                # keep reading from where this member ended, without copying the rest.
                pos = min(pos, len(data)) - len(decomp.unused_data)
                if data[pos:pos + 2] != b"\x1f\x8b":
                    if data.count(0, pos) == len(data) - pos:
                        break  # nothing, or zero padding, after the last member
                    raise _fail(filename, "corrupt gzip data: bytes after the compressed "
                                          "stream are neither a gzip member nor padding")
                decomp = zlib.decompressobj(16 + zlib.MAX_WBITS)
    except zlib.error as exc:
        raise _fail(filename, f"corrupt gzip data ({exc})") from None
    if not decomp.eof:
        raise _fail(filename, "truncated gzip file: the compressed stream ends early")
    return out


def _gunzip_head(data: bytes, size: int = 512) -> bytes:
    """The first ``size`` decompressed bytes (enough to tell a tar archive), or b""."""
    try:
        return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data[:1 << 16], size)
    except zlib.error:
        return b""


def _split_name(filename: str) -> tuple[str, bool, str]:
    """(stem, gzipped, suffix) of a file name; ``runs.csv.gz`` → ("runs", True, ".csv")."""
    name = filename.rsplit("/", 1)[-1]
    gz = name.lower().endswith(".gz")
    if gz:
        name = name[:-3]
    stem, dot, suffix = name.rpartition(".")
    if not dot:
        return name, gz, ""
    return stem, gz, "." + suffix.lower()


def _sniff_format(filename: str, suffix: str, data: bytes) -> Format:
    if data[:4] == b"PAR1":
        return "parquet"
    if suffix in _SUFFIX_FORMATS and _SUFFIX_FORMATS[suffix] != "parquet":
        fmt = _SUFFIX_FORMATS[suffix]
        if fmt == "json" and _looks_like_jsonl(data):
            return "jsonl"
        return fmt
    if suffix in (".parquet", ".pq"):
        raise _fail(filename, "not a Parquet file (no PAR1 magic bytes)")
    head = data[:8192].lstrip(b"\xef\xbb\xbf \t\r\n")
    if head[:1] in (b"[", b"{"):
        return "jsonl" if _looks_like_jsonl(data) else "json"
    first_line = head.split(b"\n", 1)[0]
    return "tsv" if first_line.count(b"\t") > first_line.count(b",") else "csv"


def _looks_like_jsonl(data: bytes) -> bool:
    lines = [ln.strip() for ln in data[:65536].splitlines() if ln.strip()]
    return len(lines) > 1 and all(ln[:1] == b"{" and ln[-1:] == b"}" for ln in lines[:-1])


def _decode(filename: str, data: bytes, warnings: list[str]) -> str:
    """Text of a file: UTF-8 (BOM stripped) or UTF-16 with a BOM; anything else refused."""
    if data.startswith(b"\xef\xbb\xbf"):
        warnings.append("UTF-8 byte-order mark removed")
        data = data[3:]
    elif data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            text = data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise _fail(filename, f"starts with a UTF-16 byte-order mark but is not valid "
                                  f"UTF-16 ({exc.reason}); save it as UTF-8") from None
        warnings.append("decoded from UTF-16")
        return text
    if b"\x00" in data[:8192]:
        raise _fail(filename, "binary data, not a text table: expected CSV, TSV, JSON, "
                              "JSON Lines or Parquet")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise _fail(filename, f"not UTF-8: byte 0x{data[exc.start]:02x} cannot be decoded; "
                              "save the file as UTF-8", row=line, unit="line") from None


# ---------------------------------------------------------------------------- parsing tables


@dataclass(frozen=True)
class _Native:
    """A native file, recognised and converted (not yet validated)."""

    format: native.NativeFormat
    converted: native.Converted


@dataclass
class _Table:
    """A parsed table before validation: a frame plus how to name its rows to a user.

    ``numbers`` gives the 1-based user-facing number of each row; it may be a function, so
    that a valid CSV never pays for counting its lines.
    """

    frame: pd.DataFrame
    numbers: np.ndarray | Callable[[], np.ndarray]
    unit: str  # "line", "record" or "row"
    nonfinite: dict[str, np.ndarray] = field(default_factory=dict)  # col -> bool mask

    @property
    def row_numbers(self) -> np.ndarray:
        if callable(self.numbers):
            self.numbers = self.numbers()
        return self.numbers


def _check_header(filename: str, names: Sequence[str]) -> None:
    seen: set[str] = set()
    for idx, name in enumerate(names):
        if name == "":
            raise _fail(filename, f"column {idx + 1} has an empty name in the header",
                        row=1, unit="line")
        if name in seen:
            raise _fail(filename, f"duplicate column name {name!r} in the header",
                        row=1, unit="line", field=name)
        seen.add(name)


_FIRST_CONTENT = re.compile(rb"[^\r\n]")


def _too_many_columns(filename: str, n: int, where: str) -> RunFormatError:
    return _fail(filename, f"{where} has {n:,} columns, over the limit of {MAX_COLUMNS:,} "
                           "columns; a run keeps one column per field (split wide files, or "
                           "move per-item values into rows)")


def _too_many_rows(filename: str, n: int) -> RunFormatError:
    return _fail(filename, f"the file holds {n:,} rows, over the limit of {MAX_ROWS:,} rows per "
                           "run; split it into several runs")


def _parse_delimited(filename: str, data: bytes | bytearray, delimiter: str,
                     warnings: list[str]) -> _Table:
    """CSV/TSV straight from bytes: pyarrow checks UTF-8 itself, so the file is never held
    as a Python string too (a decode is paid only on the error path)."""
    data = _utf8_bytes(filename, data, warnings)
    if data.find(b"\n") < 0 and data.find(b"\r") >= 0:
        raise _fail(filename, "lines end with a carriage return only (the old Mac OS line "
                              "ending); save the file with LF or CRLF line endings")
    first = _FIRST_CONTENT.search(data)
    start = first.start() if first else 0
    end = data.find(b"\n", start)
    first_line = bytes(data[start:end if end >= 0 else len(data)]).rstrip(b"\r")
    try:
        header = next(_csv_header(first_line.decode("utf-8"), delimiter), [])
    except UnicodeDecodeError:
        _decode(filename, data, warnings)  # raises with the offending line
        raise
    except Exception as exc:  # the csv module's own errors (e.g. NUL, field limit)
        raise _fail(filename, f"cannot parse the header: {exc}", row=1, unit="line") from None
    if not header:
        raise _fail(filename, "the header line is empty", row=1, unit="line")
    if len(header) > MAX_COLUMNS:
        raise _too_many_columns(filename, len(header), "the header")
    names = [h.strip() for h in header]
    _check_header(filename, names)
    if data.count(b'"') % 2:
        # An odd number of quotes: a quote may run to the end of the file, and pyarrow would
        # make the rest of the file one cell of a valid-looking run.
        line = _unclosed_quote_line(data, delimiter)
        if line is not None:
            raise _fail(filename, "a quote opened on this line is never closed, so the rest of "
                                  "the file would be read as one cell; close the quote or "
                                  "double a quote that is part of the text (\"\")",
                        row=line, unit="line")
    read = pacsv.ReadOptions(block_size=1 << 24, use_threads=True)
    parse = pacsv.ParseOptions(delimiter=delimiter, newlines_in_values=True)
    # Labels and free text stay text: "007" is a sample id, not the number 7.
    text_columns = _text_columns()
    text_types = {n: pa.string() for n in names if n in text_columns}

    def attempt(column_types: dict[str, pa.DataType] | None) -> pa.Table:
        convert = pacsv.ConvertOptions(
            null_values=[""], strings_can_be_null=True, quoted_strings_can_be_null=True,
            true_values=["true", "True", "TRUE"], false_values=["false", "False", "FALSE"],
            column_types=column_types or text_types,
        )
        # BufferReader: zero-copy over bytes and bytearray alike (BytesIO copies a bytearray).
        return pacsv.read_csv(pa.BufferReader(data), read_options=read, parse_options=parse,
                              convert_options=convert)

    try:
        try:
            table = attempt(None)
        except pa.ArrowInvalid as exc:
            if "conversion error" not in str(exc).lower():
                raise
            # Inference saw numbers early and text later: read every column as text and let
            # validation name each bad cell.
            table = attempt({name: pa.string() for name in names})
    except pa.ArrowInvalid as exc:
        if "straddl" in str(exc):  # a record longer than pyarrow's 16 MB block
            raise _fail(filename, f"a cell is longer than the limit of {MAX_CELL_CHARS:,} "
                                  "characters (1 MB per cell)", row=_long_line(data),
                        unit="line") from None
        text = _decode(filename, data, warnings)  # a UTF-8 fault is named by its line
        raise _fail(filename, _explain_csv_error(str(exc)),
                    row=_ragged_line(text, delimiter), unit="line") from None
    table = table.rename_columns(names)
    if table.num_rows == 0:
        raise _fail(filename, "the file has a header but no data rows")
    if table.num_rows > MAX_ROWS:
        raise _too_many_rows(filename, table.num_rows)
    nonfinite = _arrow_nonfinite(table)
    frame = table.to_pandas(self_destruct=True, split_blocks=True)
    del table
    n_rows = len(frame)
    return _Table(frame, lambda: _csv_line_numbers(data.decode("utf-8", "replace"), n_rows,
                                                    delimiter), "line", nonfinite)


def _unclosed_quote_line(data: bytes | bytearray, delimiter: str) -> int | None:
    """The line on which a quote opens that nothing closes, or None (error path only).

    The quote parity after each line is a running sum of each line's quote count; the quote
    that never closes sits on the line after the last one where the parity was even. It only
    counts if it opens a field (at the start of a line or after a delimiter), since pyarrow
    takes a quote inside an unquoted field (``5" screen``) literally.
    """
    lines = bytes(data).split(b"\n")
    odd = np.fromiter((ln.count(b'"') & 1 for ln in lines), dtype=np.int8, count=len(lines))
    parity = np.cumsum(odd, dtype=np.int64) & 1
    if not parity[-1]:
        return None
    even = np.flatnonzero(parity == 0)
    index = int(even[-1]) + 1 if even.size else 0
    opener = re.compile(rb'(?:^|' + re.escape(delimiter.encode()) + rb')[ \t]*"')
    return index + 1 if opener.search(lines[index]) else None


def _long_line(data: bytes | bytearray) -> int | None:
    """The first line longer than the cell limit (error path only)."""
    # Anchored at line starts: unanchored, every position of every long line would rescan it.
    match = re.search(rb"(?m)^[^\n]{%d}" % (MAX_CELL_CHARS + 1), data)
    return data.count(b"\n", 0, match.start()) + 1 if match else None


def _utf8_bytes(filename: str, data: bytes | bytearray,
                warnings: list[str]) -> bytes | bytearray:
    """UTF-8 bytes of a text file: BOM removed, UTF-16 re-encoded, binary refused."""
    if data.startswith(b"\xef\xbb\xbf"):
        warnings.append("UTF-8 byte-order mark removed")
        return data[3:]
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return _decode(filename, data, warnings).encode("utf-8")
    if b"\x00" in data[:8192]:
        _decode(filename, data, warnings)  # raises: binary data
    return data


def _csv_header(first_line: str, delimiter: str):
    import csv

    yield from csv.reader([first_line], delimiter=delimiter)


def _csv_line_numbers(text: str, n_rows: int, delimiter: str = ",") -> np.ndarray:
    """The line on which each data row starts (header = line 1). Only computed when a row is
    reported, so a valid file never pays for it."""
    if '"' not in text:
        body_lines = [i for i, ln in enumerate(text.splitlines()) if ln != ""]
        if len(body_lines) == n_rows + 1:
            return np.asarray(body_lines[1:], dtype=np.int64) + 1
    # Quoted cells may span lines: let the csv module find where each record starts.
    reader = csv.reader(_io.StringIO(text, newline=""), delimiter=delimiter)
    starts, previous = [], 0
    for record in reader:
        if record:
            starts.append(previous + 1)
        previous = reader.line_num
    if len(starts) == n_rows + 1:
        return np.asarray(starts[1:], dtype=np.int64)
    return np.arange(2, n_rows + 2, dtype=np.int64)


def _ragged_line(text: str, delimiter: str) -> int | None:
    """Line of the first row whose cell count differs from the header's (error path only)."""
    import csv

    reader = csv.reader(_io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        width = len(next(reader))
        for row in reader:
            if row and len(row) != width:
                return reader.line_num
    except csv.Error:
        return reader.line_num
    return None


def _explain_csv_error(message: str) -> str:
    msg = message.replace("CSV parse error: ", "")
    m = re.search(r"Expected (\d+) columns, got (\d+)", msg)
    if m:
        snippet = msg.split(": ", 1)[-1][:120]
        return (f"a row has {m.group(2)} cells where the header has {m.group(1)} columns "
                f"(near: {snippet!r}); check delimiters and quoting")
    return f"cannot parse the table: {msg[:300]}"


def _arrow_nonfinite(table: pa.Table) -> dict[str, np.ndarray]:
    masks: dict[str, np.ndarray] = {}
    for name, column in zip(table.column_names, table.columns, strict=True):
        if pa.types.is_floating(column.type):
            values = column.to_numpy(zero_copy_only=False)
            bad = ~np.isfinite(values) & ~column.is_null().to_numpy(zero_copy_only=False)
            if bad.any():
                masks[name] = bad
    return masks


def _parse_parquet(filename: str, data: bytes | bytearray, limit: int) -> _Table:
    """A Parquet file, its size checked from its own metadata before a row is read.

    The footer gives the row count, the columns and the uncompressed size of every column
    chunk; the rows as loaded take at least 8 bytes per cell, so a file of tiny
    dictionary-encoded pages (40 M rows in under 1 MB) is refused as surely as one whose pages
    are big. Binary columns are read as UTF-8 text (a byte string is not a label).
    """
    try:
        parquet = pq.ParquetFile(pa.BufferReader(data))
        meta = parquet.metadata
        n_rows, n_cols = meta.num_rows, meta.num_columns
        unpacked = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
        schema = parquet.schema_arrow
    except (pa.ArrowException, OSError, ValueError, TypeError, IndexError) as exc:
        raise _fail(filename, f"cannot read Parquet: {str(exc)[:300]}") from None
    if len(schema) > MAX_COLUMNS:
        raise _too_many_columns(filename, len(schema), "the Parquet file")
    if n_rows > MAX_ROWS:
        raise _too_many_rows(filename, n_rows)
    in_memory = max(unpacked, n_rows * max(n_cols, 1) * 8)
    if in_memory > limit:
        raise _fail(filename, f"the Parquet file holds {n_rows:,} rows × {n_cols:,} columns, "
                              f"at least {_mb(in_memory)} once read, over the {_mb(limit)} "
                              "decompressed-size limit (checked from the file's metadata)")
    try:
        # read_table (the dataset reader) reads column chunks in parallel; ParquetFile.read
        # does not. The footer is parsed again: a few kilobytes.
        table = pq.read_table(pa.BufferReader(data))
    except (pa.ArrowException, OSError, ValueError, TypeError) as exc:
        raise _fail(filename, f"cannot read Parquet: {str(exc)[:300]}") from None
    _check_header(filename, table.column_names)
    if table.num_rows == 0:
        raise _fail(filename, "the Parquet file has no rows")
    table = _binary_as_text(filename, table)
    nonfinite = _arrow_nonfinite(table)
    try:
        frame = table.to_pandas()
    except (pa.ArrowException, ValueError, TypeError, OverflowError) as exc:
        raise _fail(filename, f"cannot convert Parquet columns: {str(exc)[:300]}") from None
    return _Table(frame, np.arange(1, table.num_rows + 1), "row", nonfinite)


def _binary_as_text(filename: str, table: pa.Table) -> pa.Table:
    """Binary columns as UTF-8 strings; the first row that is not UTF-8 is named."""
    for index, column in enumerate(table.columns):
        kind = column.type
        if pa.types.is_dictionary(kind):
            kind = kind.value_type
        if not (pa.types.is_binary(kind) or pa.types.is_large_binary(kind)
                or pa.types.is_fixed_size_binary(kind)):
            continue
        try:
            text = column.cast(pa.string()) if not pa.types.is_dictionary(column.type) \
                else column.cast(pa.dictionary(column.type.index_type, pa.string()))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            values = column.to_pylist()
            row = next((i for i, v in enumerate(values)
                        if v is not None and not _is_utf8(v)), None)
            if row is not None:
                raise _fail(filename, f"binary value {_show(values[row])} is not UTF-8 text",
                            row=row + 1, field=table.column_names[index]) from None
            text = pa.chunked_array([pa.array(
                [None if v is None else v.decode("utf-8") for v in values], pa.string())])
        table = table.set_column(index, table.field(index).with_type(text.type), text)
    return table


def _is_utf8(value: bytes) -> bool:
    try:
        value.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _json(filename: str, text: str, *, raw: bytes | bytearray | None = None,
          line: int | None = None) -> Any:
    """One JSON document (a whole file, or one line of JSON Lines), parsed strictly."""
    try:
        return native.load_json(text, raw=raw)
    except native.JsonProblem as problem:
        if problem.line is not None or not problem.path:
            at = line if line is not None else problem.line
            raise _fail(filename, problem.message, row=at,
                        unit="line" if at is not None else "row") from None
        raise _json_path_error(filename, problem, line) from None


def _json_path_error(filename: str, problem: native.JsonProblem,
                     line: int | None) -> RunFormatError:
    """A problem at a path in the document, named as a user counts: record (or line) and
    field (``metadata.trial`` for a nested one)."""
    path = list(problem.path)
    if line is None and path and isinstance(path[0], str) and len(path) > 1 \
            and isinstance(path[1], int):
        path = path[1:]  # {"results": [...]}: count records of the list
    if line is not None:
        row, unit = line, "line"
    elif path and isinstance(path[0], int):
        row, unit = path.pop(0) + 1, "record"
    else:
        row, unit = None, "row"
    field = ".".join(str(p) for p in path) or None
    return _fail(filename, problem.message, row=row, field=field, unit=unit)


def _check_keys_limit(filename: str, records: Sequence[Any], numbers: Sequence[int] | None,
                      unit: str, limit: int) -> None:
    """The union of the records' keys (the columns-to-be) within :data:`MAX_COLUMNS`, and
    records × columns within the memory limit, before a frame is built."""
    if len(records) > MAX_ROWS:
        raise _too_many_rows(filename, len(records))
    keys: set[str] = set()
    for index, rec in enumerate(records):
        if isinstance(rec, dict):
            keys.update(rec)
            if len(keys) > MAX_COLUMNS:
                where = int(numbers[index]) if numbers is not None else index + 1
                raise _fail(filename, f"the records have more than {MAX_COLUMNS:,} distinct "
                                      f"keys (the limit of {MAX_COLUMNS:,} columns) by this "
                                      f"{unit}", row=where, unit=unit)
    if len(records) * len(keys) * 8 > limit:
        raise _fail(filename, f"{len(records):,} records × {len(keys):,} distinct keys would "
                              f"take more than {_mb(limit)} as a table, over the "
                              "decompressed-size limit")


def _records_frame(filename: str, records: list[Any], numbers: np.ndarray, unit: str) -> _Table:
    if not records:
        raise _fail(filename, "the file holds no records")
    for rec, num in zip(records, numbers, strict=True):
        if not isinstance(rec, dict):
            raise _fail(filename, f"expected a JSON object per record, got "
                                  f"{type(rec).__name__}", row=int(num), unit=unit)
    columns: dict[str, list[Any]] = {}
    for idx, rec in enumerate(records):
        for key in rec:
            if key not in columns:
                columns[key] = [None] * idx
        for key, values in columns.items():
            values.append(rec.get(key))
    frame = pd.DataFrame({k: pd.Series(v, dtype=object) for k, v in columns.items()})
    return _Table(frame, numbers, unit)


def _from_native(filename: str, convert: Callable[[], native.Converted]) -> native.Converted:
    try:
        return convert()
    except native.NativeError as exc:
        raise _fail(filename, exc.message, row=exc.where, field=exc.field, unit=exc.unit) from None


def _native_json(filename: str, payload: Any,
                 options: Mapping[str, Any]) -> tuple[native.NativeFormat, native.Converted] | None:
    for fmt in native.formats():
        if fmt.matches_json is not None and fmt.from_json is not None \
                and fmt.matches_json(payload):
            return fmt, _from_native(filename, lambda f=fmt: f.from_json(filename, payload,
                                                                         options))
    return None


def _payload_records(payload: Any) -> list[Any] | None:
    if isinstance(payload, list):
        return payload
    if isinstance(payload, dict):
        for key in ("results", "records", "rows", "data"):
            if isinstance(payload.get(key), list):
                return payload[key]
    return None


def _parse_json(filename: str, text: str, options: Mapping[str, Any] | None = None, *,
                raw: bytes | bytearray | None = None, limit: int = DEFAULT_MAX_DECOMPRESSED,
                ) -> _Table | _Native:
    if not text.strip():
        raise _fail(filename, "the file is empty")
    payload = _json(filename, text, raw=raw)
    records = _payload_records(payload)
    if records is not None:
        _check_keys_limit(filename, records, None, "record", limit)
    found = _native_json(filename, payload, options or {})
    if found is not None:
        return _Native(*found)
    advice = advise_json(payload)
    if advice is not None:  # a benchmark artefact kbench does not read: say what to upload
        raise _fail(filename, advice)
    if isinstance(payload, dict):
        if records is None or ("results" in payload and payload.get("results") is records):
            raise _fail(filename, "expected a JSON list of records (or an object with a "
                                  "'records' list); got an object with keys "
                                  + ", ".join(map(repr, list(payload)[:8])))
        payload = records
    if not isinstance(payload, list):
        raise _fail(filename, f"expected a JSON list of records, got {type(payload).__name__}")
    return _records_frame(filename, payload, np.arange(1, len(payload) + 1), "record")


def _parse_jsonl(filename: str, text: str, limit: int = DEFAULT_MAX_DECOMPRESSED) -> _Table:
    if not text.strip():
        raise _fail(filename, "the file is empty")
    if "\n" not in text and "\r" in text.strip():
        raise _fail(filename, "lines end with a carriage return only (the old Mac OS line "
                              "ending); save the file with LF or CRLF line endings")
    records: list[Any] = []
    numbers: list[int] = []
    # JSON Lines ends records at "\n" only: str.splitlines would also cut at U+2028, U+0085
    # and other separators that LLM output holds inside strings.
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        records.append(_json(filename, line, line=lineno))
        numbers.append(lineno)
    _check_keys_limit(filename, records, numbers, "line", limit)
    return _records_frame(filename, records, np.asarray(numbers, dtype=np.int64), "line")


# ---------------------------------------------------------------------------- kind detection


def detect_kind(columns: Sequence[str]) -> Kind | None:
    """The run kind whose signature columns are all present, or None.

    Checked from the most to the least specific signature so that a judged or replication
    file that also happens to have a ``score`` column is not taken for a bias run.
    """
    return families.detect(columns)


def _undetected(filename: str, columns: Sequence[str]) -> RunFormatError:
    advice = advise_columns(columns)
    if advice is not None:
        return _fail(filename, advice)
    names = set(columns)

    def closeness(spec: KindSpec) -> tuple[int, int]:
        return (len(spec.signature & names) + bool(spec.signature_any & names),
                -len(spec.signature_none & names))

    best = max((f.spec for f in families.all_families()), key=closeness)
    needs = sorted(best.signature - names)
    if best.signature_any and not best.signature_any & names:
        needs.append("one of " + "/".join(sorted(best.signature_any)))
    extra = sorted(best.signature_none & names)
    what = (f"which also needs: {', '.join(needs)}" if needs else "")
    if extra:
        what += ("; " if what else "which must not have: ") + (
            f"and must not have {', '.join(extra)}" if needs else ", ".join(extra))
    shown = ", ".join(list(columns)[:12]) + (" ..." if len(columns) > 12 else "")
    return _fail(filename, f"cannot tell the run kind from the columns ({shown}). The closest "
                           f"kind is '{best.kind}' ({best.description}), {what}. Rename "
                           "columns with load_run(..., columns={'their name': 'our name'}) "
                           "or pass kind=")


# ---------------------------------------------------------------------------- validation


class _Collector:
    """Gathers problems per row without building millions of messages."""

    def __init__(self, table: _Table) -> None:
        self.table = table
        self.bad_rows = np.zeros(len(table.frame), dtype=bool)
        self.problems: list[tuple[int, int, str, str]] = []  # (position, order, field, msg)
        self.total = 0
        self._order = 0

    def add(self, mask: np.ndarray, fieldname: str | None, message: Any) -> None:
        """Flag rows where ``mask``; ``message`` is a string or a callable(position) -> str."""
        positions = np.flatnonzero(mask)
        if positions.size == 0:
            return
        self.bad_rows[positions] = True
        self.total += positions.size
        for pos in positions[:MAX_LISTED_PROBLEMS]:
            text = message(int(pos)) if callable(message) else message
            self.problems.append((int(pos), self._order, fieldname or "", text))
            self._order += 1

    def listed(self) -> list[Problem]:
        ordered = sorted(self.problems)[:MAX_LISTED_PROBLEMS]
        rows = self.table.row_numbers
        return [Problem(_row_label(rows[pos]), fld or None, msg, self.table.unit)
                for pos, _, fld, msg in ordered]


def _row_label(value: Any) -> int | str:
    return int(value) if isinstance(value, int | np.integer) else str(value)


def _show(value: Any) -> str:
    try:
        text = repr(str(value)) if isinstance(value, str) else str(value)
    except (ValueError, TypeError):  # e.g. an integer too long to print
        text = f"<{type(value).__name__}>"
    return text if len(text) <= 60 else text[:57] + "..."


def _missing_mask(series: pd.Series) -> np.ndarray:
    mask = series.isna().to_numpy().copy()
    if pd.api.types.is_string_dtype(series.dtype) and series.dtype != object:
        mask |= series.str.strip().eq("").fillna(False).to_numpy(dtype=bool)
    elif series.dtype == object:
        blank = series.map(lambda v: isinstance(v, str) and v.strip() == "")
        mask |= blank.to_numpy(dtype=bool)
    return mask


def _to_numbers(series: pd.Series, missing: np.ndarray, col: Column, out: _Collector,
                nonfinite: np.ndarray | None) -> np.ndarray:
    """Float values of a numeric column; NaN where missing or invalid (invalid is reported)."""
    if pd.api.types.is_bool_dtype(series.dtype):
        out.add(~missing, col.name, f"expected {col.expectation()}, got a true/false value")
        return np.full(len(series), np.nan)
    if pd.api.types.is_numeric_dtype(series.dtype):
        values = series.to_numpy(dtype=float, na_value=np.nan)
    else:
        raw = series.astype(object)
        is_bool = raw.map(lambda v: isinstance(v, bool | np.bool_)).to_numpy(dtype=bool)
        text = raw.where(~is_bool, None)
        values = _floats(text)
        unparsed = np.isnan(values) & ~missing
        nonnum_text = text.map(lambda v: isinstance(v, str)
                               and v.strip().lower() in _NONFINITE).to_numpy(dtype=bool)
        if is_bool.any():
            out.add(is_bool & ~missing, col.name,
                    f"expected {col.expectation()}, got a true/false value")
        # A number too long for a float (400 digits) became inf without being written so.
        overflow = np.isinf(values) & ~nonnum_text
        bad = (unparsed | overflow) & ~nonnum_text & ~is_bool
        out.add(bad, col.name, lambda p: f"expected {col.expectation()}, got "
                                         f"{_show(series.iat[p])}")
        values = np.where(overflow, np.nan, values)
        nonfinite = (nonfinite if nonfinite is not None else np.zeros(len(series), bool)) | (
            nonnum_text & ~missing)
        values = np.where(nonnum_text, np.nan, values)
    if nonfinite is None:
        nonfinite = ~np.isfinite(values) & ~missing & ~np.isnan(values)
    if nonfinite.any():
        out.add(nonfinite, col.name, "NaN and infinity are not valid values; leave the cell "
                                     "empty when the value is unknown")
        values = np.where(nonfinite, np.nan, values)
    ok = ~np.isnan(values)
    if col.type == "int":
        frac = ok & (values != np.floor(values))
        out.add(frac, col.name, lambda p: f"expected a whole number, got {_show(series.iat[p])}")
    if col.low is not None:
        below = ok & ((values <= col.low) if col.low_open else (values < col.low))
        out.add(below, col.name, lambda p: f"{values[p]:g} is out of range: expected "
                                           f"{col.expectation()}")
    if col.high is not None:
        above = ok & (values > col.high)
        out.add(above, col.name, lambda p: f"{values[p]:g} is out of range: expected "
                                           f"{col.expectation()}")
    return values


def _strip_if_text(value: Any) -> Any:
    return value.strip() if isinstance(value, str) else value


def _float_or_nan(value: Any) -> float:
    """One cell as a float; NaN when it is no number (validation then names it)."""
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return math.nan
    if isinstance(value, int | float | np.integer | np.floating) and not isinstance(
            value, bool | np.bool_):
        try:
            return float(value)
        except OverflowError:
            return math.inf
    return math.nan


def _floats(values: pd.Series) -> np.ndarray:
    """Float values of an object column: vectorised, with a per-cell fallback for what pandas
    cannot convert (integers too long for a float, nested lists, odd types)."""
    try:
        converted = pd.to_numeric(values.map(_strip_if_text), errors="coerce")
        return converted.to_numpy(dtype=float, na_value=np.nan)
    except (OverflowError, TypeError, ValueError):
        return values.map(_float_or_nan).to_numpy(dtype=float)


def _to_bools(series: pd.Series, missing: np.ndarray, col: Column,
              out: _Collector) -> np.ndarray:
    """Booleans as a float array (1/0, NaN missing) so missing cells survive until reported."""
    if pd.api.types.is_bool_dtype(series.dtype):
        return series.to_numpy(dtype=float, na_value=np.nan)
    if pd.api.types.is_numeric_dtype(series.dtype):
        values = series.to_numpy(dtype=float, na_value=np.nan)
        bad = ~missing & ~np.isin(values, (0.0, 1.0))
        out.add(bad, col.name, lambda p: f"expected true or false (or 1/0), got "
                                         f"{_show(series.iat[p])}")
        return np.where(bad, np.nan, values)

    def parse(value: Any) -> float:
        if isinstance(value, bool | np.bool_):
            return float(value)
        if isinstance(value, int | float) and not isinstance(value, str) and value in (0, 1):
            return float(value)
        if isinstance(value, str):
            low = value.strip().lower()
            if low in _TRUE:
                return 1.0
            if low in _FALSE:
                return 0.0
        return math.nan

    values = series.astype(object).map(parse).to_numpy(dtype=float)
    bad = np.isnan(values) & ~missing
    out.add(bad, col.name, lambda p: f"expected true or false, got {_show(series.iat[p])}")
    return values


def _to_lines(series: pd.Series, missing: np.ndarray, col: Column,
              out: _Collector) -> pd.Series:
    """Line lists normalised to '12;13' text (lists from JSON or Parquet included)."""

    def norm(value: Any) -> str | None:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return None
        if isinstance(value, list | tuple | np.ndarray):
            parts = list(value)
        elif isinstance(value, int | np.integer) and not isinstance(value, bool):
            parts = [value]
        elif isinstance(value, str):
            parts = [p for p in re.split(r"[;,\s]+", value.strip()) if p]
        else:
            return "\x00bad"
        numbers = []
        for part in parts:
            try:
                num = int(part)
            except (TypeError, ValueError, OverflowError):
                return "\x00bad"
            if (isinstance(part, float) and part != num) or num < 0:
                return "\x00bad"
            numbers.append(num)
        return ";".join(map(str, numbers)) if numbers else None

    values = series.astype(object).map(norm)
    bad = values.map(lambda v: v == "\x00bad").to_numpy(dtype=bool)
    out.add(bad, col.name, lambda p: f"expected {col.expectation()}, got "
                                     f"{_show(series.iat[p])}")
    return values.where(~bad, None)


def _to_text(series: pd.Series, col: Column, out: _Collector,
             categorical: bool) -> tuple[pd.Series, np.ndarray]:
    """Labels as a categorical (or text) column, and the mask of missing cells.

    Work happens on the distinct values, not the rows, so a million rows with a few hundred
    labels cost one hash pass.
    """
    odd = np.zeros(len(series), dtype=np.int8)
    if series.dtype == object:
        odd = series.map(_odd_label).to_numpy(dtype=np.int8)
        if odd.any():
            out.add(odd == 1, col.name, "expected text, got a nested value (an object or a "
                                        "list)")
            out.add(odd == 2, col.name, "a bare NaN or Infinity (not JSON) is no label; "
                                        "write null when the value is unknown, or \"NaN\" "
                                        "in quotes if that is the name")
            series = series.where(odd == 0, None)
    if not categorical:
        if isinstance(series.dtype, pd.CategoricalDtype):
            # Dictionary-encoded text (Parquet): convert the distinct values, then take.
            labels = np.array([_as_text(c) for c in series.cat.categories] + [None],
                              dtype=object)
            series = pd.Series(labels[series.cat.codes.to_numpy()], index=series.index,
                               dtype="str")
        elif series.dtype == object:
            series = series.map(_as_text)
        elif not pd.api.types.is_string_dtype(series.dtype):
            series = series.astype(object).map(_as_label)
        missing = series.isna().to_numpy()
        if col.required:
            missing = missing | series.astype("str").str.strip().eq("").to_numpy(dtype=bool)
        return series.where(~missing, None), missing & (odd == 0)
    cat = series.astype("category")
    labels = [_as_label(c) for c in cat.cat.categories]
    uniq = list(dict.fromkeys(lbl for lbl in labels if lbl not in (None, "")))
    position = {lbl: i for i, lbl in enumerate(uniq)}
    remap = np.array([position.get(lbl, -1) for lbl in labels] + [-1], dtype=np.int64)
    codes = remap[cat.cat.codes.to_numpy()]  # code -1 indexes the trailing -1
    result = pd.Series(pd.Categorical.from_codes(codes, categories=uniq), index=series.index)
    missing = (codes == -1) & (odd == 0)  # a nested value is reported once, not as missing
    if col.allowed is not None:
        allowed = set(col.allowed)
        bad_codes = np.array([lbl not in allowed for lbl in uniq] + [False])
        bad = bad_codes[codes]
        out.add(bad, col.name, lambda p: f"unknown value {_show(series.iat[p])}: expected "
                                         f"{col.expectation()}")
    return result, missing


def _odd_label(value: Any) -> int:
    """0 for a usable label, 1 for a nested value (JSON object or list, Parquet list), 2 for
    a bare NaN/Infinity token of a JSON file."""
    if isinstance(value, str):
        return 2 if type(value) is native.JsonConstant else 0
    if isinstance(value, dict | list | tuple | set | np.ndarray | bytes | bytearray):
        return 1
    return 0


def _as_text(value: Any) -> Any:
    """Free text kept verbatim; numbers and booleans from JSON rendered as a user wrote them."""
    if isinstance(value, str) or value is None:
        return value
    return _as_label(value)


def _as_label(value: Any) -> Any:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, bool | np.bool_):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return value if value is None else str(value)


def _validate(filename: str, table: _Table, spec: KindSpec, on_error: OnError,
              warnings: list[str]) -> pd.DataFrame:
    frame = table.frame
    missing_cols = [c.name for c in spec.columns if c.required and c.name not in frame.columns]
    problems = [Problem(None, name, f"required column '{name}' is missing "
                                    f"({spec.column(name).meaning or spec.kind + ' runs'})")
                for name in missing_cols]
    family = families.get(spec.kind)
    if family.rules is not None:  # file-level problems: reported with a mask of None

        def file_problem(mask: Any, field: str | None, message: str) -> None:
            if mask is None:
                problems.append(Problem(None, field, message))

        family.rules({}, frame, file_problem)
    if problems:
        raise RunFormatError(filename, problems)

    out = _Collector(table)
    result: dict[str, Any] = {}
    for col in spec.columns_of(list(frame.columns)):
        if col.name not in frame.columns:
            continue
        series = frame[col.name]
        if col.type in ("text", "category"):
            result[col.name], missing = _to_text(series, col, out, col.type == "category")
            if col.required is True:
                out.add(missing, col.name, f"missing value: expected {col.expectation()}")
            continue
        missing = _missing_mask(series)
        if col.required is True:
            out.add(missing, col.name, f"missing value: expected {col.expectation()}")
        if col.type in ("float", "int"):
            values = _to_numbers(series, missing, col, out, table.nonfinite.get(col.name))
            result[col.name] = values
        elif col.type == "bool":
            result[col.name] = _to_bools(series, missing, col, out)
        else:
            result[col.name] = _to_lines(series, missing, col, out)
    _check_rules(spec, result, frame, out)
    _check_text_sizes(frame, out)

    canonical = pd.DataFrame(result, index=frame.index)
    extra = [c for c in frame.columns if c not in result]
    if extra:  # one concat: inserting 2,000 columns one by one is quadratic
        canonical = pd.concat([canonical, frame[extra]], axis=1)

    _check_keys(spec, canonical, out)
    if out.total:
        listed = out.listed()
        if on_error == "raise":
            raise RunFormatError(filename, listed, out.total)
        n_bad = int(out.bad_rows.sum())
        if n_bad == len(canonical):
            raise RunFormatError(filename, listed, out.total)
        warnings.append(f"skipped {n_bad} invalid row{'s' * (n_bad != 1)} "
                        f"({out.total} problem{'s' * (out.total != 1)})")
        warnings.extend(str(p) for p in listed)
        if out.total > len(listed):
            warnings.append(f"... and {out.total - len(listed)} more problems")
        canonical = canonical.loc[~out.bad_rows]
    finished = _finish_types(spec, canonical, skipped=bool(out.total))
    if family.notes is not None:
        warnings.extend(family.notes(finished))
    return finished


def _check_rules(spec: KindSpec, result: dict[str, Any], frame: pd.DataFrame,
                 out: _Collector) -> None:
    """The family's rules that tie columns together (row-level problems only; file-level ones
    were reported before the rows were read)."""
    family = families.get(spec.kind)
    if family.rules is None:
        return

    def row_problem(mask: Any, field: str | None, message: str) -> None:
        if mask is not None:
            out.add(mask, field, message)

    family.rules(result, frame, row_problem)


def _check_text_sizes(frame: pd.DataFrame, out: _Collector) -> None:
    for name in frame.columns:
        series = frame[name]
        if pd.api.types.is_string_dtype(series.dtype) and series.dtype != object:
            lengths = series.str.len().fillna(0).to_numpy()
        elif series.dtype == object:
            lengths = series.map(lambda v: len(v) if isinstance(v, str) else 0).to_numpy()
        else:
            continue
        out.add(lengths > MAX_CELL_CHARS, str(name),
                f"cell longer than {MAX_CELL_CHARS:,} characters")


def _check_keys(spec: KindSpec, canonical: pd.DataFrame, out: _Collector) -> None:
    """Flag every repeat of a key after its first occurrence, naming where it was first seen."""
    key = [k for k in spec.key if k in canonical.columns]
    where_given = families.get(spec.kind).key_where_given
    if not key or (where_given and len(key) < len(spec.key)):
        return
    keyed = canonical[key].reset_index(drop=True)
    if where_given:  # e.g. bias rows are keyed only where an id is given
        keyed = keyed[keyed[key].notna().all(axis=1)]
    if not keyed.duplicated().any():
        return
    group = keyed.groupby(key, observed=True, dropna=False, sort=False).ngroup().to_numpy()
    positions = keyed.index.to_numpy()
    firsts = pd.Series(positions).groupby(group).transform("min").to_numpy()
    later = positions != firsts
    mask = np.zeros(len(canonical), dtype=bool)
    mask[positions[later]] = True
    first_for = dict(zip(positions[later][:MAX_LISTED_PROBLEMS],
                         firsts[later][:MAX_LISTED_PROBLEMS], strict=True))
    rows = out.table.row_numbers
    names = ", ".join(key)

    def message(pos: int) -> str:
        values = ", ".join(_show(canonical[k].iat[pos]) for k in key)
        return (f"duplicate key ({names}) = ({values}); first seen at "
                f"{out.table.unit} {rows[first_for[pos]]}")

    out.add(mask, names, message)


def _finish_types(spec: KindSpec, frame: pd.DataFrame, *, skipped: bool) -> pd.DataFrame:
    frame = frame.reset_index(drop=True)
    for col in spec.columns_of(list(frame.columns)):
        if col.name not in frame.columns:
            continue
        if col.type == "bool":
            values = frame[col.name].to_numpy(dtype=float)
            if np.isnan(values).any():
                frame[col.name] = pd.array(
                    np.where(np.isnan(values), pd.NA, values == 1.0), dtype="boolean")
            else:
                frame[col.name] = values == 1.0
        elif col.type == "int":
            values = frame[col.name].to_numpy(dtype=float)
            if np.isnan(values).any():
                frame[col.name] = pd.array(
                    np.where(np.isnan(values), pd.NA, values), dtype="Int64")
            else:
                frame[col.name] = values.astype(np.int64)
        elif col.type == "category" and col.allowed is not None:
            # Declared order (weak < ... < adversarial) keeps views and groupbys stable;
            # unknown labels are already reported and their rows dropped.
            frame[col.name] = frame[col.name].cat.set_categories(
                list(col.allowed), ordered=col.name in _ORDERED)
        elif col.type == "category" and skipped:
            frame[col.name] = frame[col.name].cat.remove_unused_categories()
    return frame


# ---------------------------------------------------------------------------- entry point


def load_run(
    source: Source,
    *,
    name: str | None = None,
    kind: Kind | None = None,
    on_error: OnError = "raise",
    columns: Mapping[str, str] | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_decompressed: int = DEFAULT_MAX_DECOMPRESSED,
    ground_truth: Source | None = None,
) -> Run:
    """Load and validate one run.

    Parameters
    ----------
    source : path or (filename, bytes)
        The file. Its name picks the format (``.csv``, ``.tsv``, ``.json``, ``.jsonl``,
        ``.parquet``, each optionally ``.gz``); without a known suffix the content decides.
        A benchmark's native output is recognised by its content (see
        :mod:`kbench_core.native`): a JSON document, or a folder, ``.zip``, ``.tar`` or
        ``.tar.gz`` holding a tree of output files.
    name : str, optional
        Run name; default the file name without its suffixes.
    kind : {"bias", "replication", "replication_summary", "judged"}, optional
        Skip detection and validate as this kind.
    on_error : {"raise", "skip"}
        ``"raise"`` (default) raises :class:`RunFormatError` on the first invalid file;
        ``"skip"`` drops invalid rows and lists them in ``Run.warnings`` (a file whose every row
        is invalid, or that misses a required column, still raises).
    columns : mapping, optional
        Rename the file's columns to canonical names first: ``{"their name": "our name"}``.
    max_bytes, max_decompressed : int
        Size limits for the file as given and after decompression (200 MB and 1 GB); for a
        folder, ``max_decompressed`` bounds the sum of its files.
    ground_truth : path or (filename, bytes), optional
        A ground-truth file for native formats that keep it apart from the results
        (BlockBench).

    Returns
    -------
    Run

    Raises
    ------
    RunFormatError
        Naming the file, the 1-based row and the field of each problem (at most 20, then a
        count).

    Examples
    --------
    >>> run = load_run(("tiny.csv", b"model,bias,condition,domain,score\\n"
    ...                              b"m,anchoring_effect,control,social,0\\n"))
    >>> run.kind, len(run), run.models
    ('bias', 1, ['m'])
    """
    if on_error not in ("raise", "skip"):
        raise ValueError(f"on_error must be 'raise' or 'skip', got {on_error!r}")
    if kind is not None and not families.is_registered(kind):
        raise ValueError(f"kind must be one of {', '.join(families.kinds())}, got {kind!r}")
    if isinstance(source, tuple) and (len(source) != 2 or not isinstance(
            source[1], bytes | bytearray | memoryview)):
        raise TypeError("source must be a path or a (filename, bytes) pair")
    try:
        return _load(source, name=name, kind=kind, on_error=on_error, columns=columns,
                     max_bytes=max_bytes, max_decompressed=max_decompressed,
                     ground_truth=ground_truth)
    except RunFormatError:
        raise
    except MemoryError:
        raise _fail(_source_name(source), "not enough memory to load this file; split it "
                                          "into smaller runs") from None
    except Exception as exc:  # the boundary: nothing but RunFormatError leaves the loader
        raise _fail(_source_name(source), f"cannot read this file ({type(exc).__name__}: "
                                          f"{str(exc)[:200]})") from None


def _source_name(source: Source) -> str:
    if isinstance(source, tuple):
        return _clean_name(str(source[0]))
    return _clean_name(Path(source).name or str(source))


def _load(source: Source, *, name: str | None, kind: Kind | None, on_error: OnError,
          columns: Mapping[str, str] | None, max_bytes: int, max_decompressed: int,
          ground_truth: Source | None) -> Run:
    if name is not None:
        name = _clean_name(str(name))
    options: dict[str, Any] = {}
    if ground_truth is not None:
        options["ground_truth"] = _read_source(ground_truth, max_bytes)
    warnings: list[str] = []
    if not isinstance(source, tuple) and Path(source).is_dir() \
            and not Path(source).is_symlink():
        folder = Path(source)
        parsed = _parse_bundle(folder.name, "folder", lambda: bundles.read_folder(
            folder, max_decompressed), options)
        return _finish(parsed, name=name or _clean_name(folder.name), kind=kind,
                       on_error=on_error,
                       columns=columns, warnings=warnings,
                       meta={"source": folder.name, "format": f"{parsed.format.name} (folder)",
                             "bytes": None, "sha256": _folder_hash(folder)})
    filename, raw = _read_source(source, max_bytes)
    stem, gz_suffix, suffix = _split_name(filename)
    sha256 = hashlib.sha256(raw).hexdigest()
    if not raw:
        raise _fail(filename, "the file is empty")
    compressed = raw[:2] == b"\x1f\x8b"
    if gz_suffix and not compressed:
        raise _fail(filename, "named .gz but is not gzip data")
    meta = {"source": filename, "bytes": len(raw), "sha256": sha256}
    if compressed and bundles.is_archive(_gunzip_head(raw)):
        # A tar.gz is read as a stream: its headers are counted as they come, so 1.6 M
        # folder entries cost 20,000 headers, not the whole decompressed archive in memory.
        parsed = _parse_bundle(filename, "tar.gz", lambda: bundles.read_archive(
            raw, max_decompressed, gzipped=True), options)
        return _finish(parsed, name=name or stem.removesuffix(".tar"), kind=kind,
                       on_error=on_error, columns=columns, warnings=warnings,
                       meta={**meta, "format": f"{parsed.format.name} (tar.gz)"})
    data = _gunzip(filename, raw, max_decompressed) if compressed else raw
    if not data[:4096].strip() and not data.strip():  # the full strip only for blank heads
        raise _fail(filename, "the file is empty" + (" after decompression" * compressed))
    if bundles.is_archive(data):
        kind_name = ("zip" if data[:2] == b"PK" else "tar") + (".gz" if compressed else "")
        parsed = _parse_bundle(filename, kind_name,
                               lambda: bundles.read_archive(data, max_decompressed), options)
        return _finish(parsed, name=name or stem.removesuffix(".tar"), kind=kind,
                       on_error=on_error, columns=columns, warnings=warnings,
                       meta={**meta, "format": f"{parsed.format.name} ({kind_name})"})
    fmt = _sniff_format(filename, suffix, data)
    try:
        if fmt == "parquet":
            parsed = _parse_parquet(filename, data, max_decompressed)
        elif fmt in ("csv", "tsv"):
            parsed = _parse_delimited(filename, data, "\t" if fmt == "tsv" else ",", warnings)
        elif fmt == "json":
            parsed = _parse_json(filename, _decode(filename, data, warnings), options,
                                 raw=data, limit=max_decompressed)
        else:
            parsed = _parse_jsonl(filename, _decode(filename, data, warnings), max_decompressed)
    except RunFormatError:
        raise
    except (ValueError, TypeError, OverflowError, MemoryError, RecursionError,
            pa.ArrowException, UnicodeError) as exc:
        raise _fail(filename, f"cannot read as {fmt.upper()}: {str(exc)[:300]}") from None
    format_name = fmt + (".gz" if compressed else "")
    if isinstance(parsed, _Native):
        format_name = f"{parsed.format.name} ({format_name})"
    return _finish(parsed, name=name or stem, kind=kind, on_error=on_error, columns=columns,
                   warnings=warnings, meta={**meta, "format": format_name})


def _folder_hash(folder: Path) -> str:
    """A content hash of a folder: paths and bytes of its files, in path order."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def _parse_bundle(filename: str, what: str, read: Callable[[], dict[str, bytes]],
                  options: Mapping[str, Any]) -> _Native:
    """A folder or archive, converted by the first native format that recognises its files."""
    try:
        files = read()
    except bundles.BundleError as exc:
        raise _fail(filename, f"cannot read the {what}: {exc}") from None
    paths = sorted(files)
    for fmt in native.formats():
        if fmt.matches_files is not None and fmt.from_files is not None \
                and fmt.matches_files(paths):
            return _Native(fmt, _from_native(
                filename, lambda f=fmt: f.from_files(filename, files, options)))
    shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
    known = ", ".join(sorted({f.name for f in native.formats() if f.matches_files})) or "none"
    raise _fail(filename, f"the {what} holds no benchmark output kbench knows ({shown}); "
                          f"known folder formats: {known}")


def _native_table(filename: str, table: _Table, kind: Kind | None, warnings: list[str],
                  meta: dict[str, Any]) -> _Table:
    """A parsed table reshaped by the first native table format that recognises its columns
    (e.g. HumanStudy-Bench's ``simple_findings.csv``), or the table unchanged."""
    names = [str(c).strip() for c in table.frame.columns]
    for fmt in native.formats():
        if fmt.matches_table is None or fmt.from_table is None:
            continue
        if kind is not None and kind != fmt.kind:
            continue
        if not fmt.matches_table(names):
            continue
        frame = table.frame.set_axis(names, axis=1)
        converted = _from_native(filename, lambda f=fmt, fr=frame: f.from_table(filename, fr,
                                                                                  {}))
        warnings.extend(converted.warnings)
        meta.update(converted.meta)
        meta["format"] = f"{fmt.name} ({meta.get('format', 'table')})"
        return _Table(converted.frame, table.numbers, table.unit, table.nonfinite)
    return table


def _finish(parsed: _Table | _Native, *, name: str, kind: Kind | None, on_error: OnError,
            columns: Mapping[str, str] | None, warnings: list[str],
            meta: dict[str, Any]) -> Run:
    """Validate a parsed table (canonical or native) and wrap it as a :class:`Run`."""
    filename = str(meta["source"])
    if isinstance(parsed, _Native):
        converted = parsed.converted
        if kind is not None and kind != converted.kind:
            raise _fail(filename, f"this is a {parsed.format.name} file, which holds "
                                  f"{converted.kind} results, not {kind}")
        kind = converted.kind  # type: ignore[assignment]
        warnings.extend(converted.warnings)
        meta.update(converted.meta)
        table = _Table(converted.frame.reset_index(drop=True), np.asarray(converted.numbers),
                       converted.unit)
    else:
        table = _native_table(filename, parsed, kind, warnings, meta)
    frame = table.frame
    frame.columns = [str(c).strip() for c in frame.columns]
    if columns:
        frame = frame.rename(columns=dict(columns))
        if frame.columns.duplicated().any():
            dup = frame.columns[frame.columns.duplicated()][0]
            raise _fail(filename, f"the column mapping makes two columns named {dup!r}",
                        field=dup)
    detected = kind or detect_kind(list(frame.columns))
    if detected is None:
        raise _undetected(filename, list(frame.columns))
    aliases = families.get(detected).aliases
    renames = {c: aliases[c] for c in frame.columns if c in aliases
               and aliases[c] not in frame.columns}
    if renames:
        frame = frame.rename(columns=renames)
    table.frame = frame
    if len(frame.columns) > MAX_COLUMNS:
        raise _too_many_columns(filename, len(frame.columns), "the run")
    if len(frame) > MAX_ROWS:
        raise _too_many_rows(filename, len(frame))
    spec = families.spec(detected)
    canonical = _validate(filename, table, spec, on_error, warnings)
    warnings.extend(_lookalikes(spec, canonical))
    meta.update(rows=len(canonical), columns=list(canonical.columns))
    return Run(name=name, kind=detected, frame=canonical, meta=meta, warnings=tuple(warnings))


def _lookalikes(spec: KindSpec, frame: pd.DataFrame) -> list[str]:
    """Look-alike labels (invisible, bidi, confusable characters) of the label columns, named
    with escapes; the distinct labels only, so a million rows cost nothing."""
    notes: list[str] = []
    for col in spec.columns:
        if col.type != "category" or col.allowed is not None or col.name not in frame:
            continue
        series = frame[col.name]
        labels = (series.cat.categories if isinstance(series.dtype, pd.CategoricalDtype)
                  else series.dropna().unique())
        notes.extend(lookalike_warnings(col.name, labels))
    return notes


def combine_runs(runs: Sequence[Run]) -> pd.DataFrame:
    """Runs of one kind viewed together: one frame with a ``run`` column.

    A model name that occurs in more than one run is told apart as ``model (run)``; names
    unique to one run stay as they are. Label columns stay categorical (ordered ones keep their
    order).
    """
    if not runs:
        raise ValueError("combine_runs needs at least one run")
    kinds = {run.kind for run in runs}
    if len(kinds) > 1:
        raise ValueError(f"runs of different kinds cannot be combined: {', '.join(sorted(kinds))}")
    if len(runs) == 1:
        return runs[0].frame.assign(run=runs[0].name)
    owners: dict[str, set[str]] = {}
    for run in runs:
        for model in run.models:
            owners.setdefault(model, set()).add(run.name)
    parts = []
    for run in runs:
        frame = run.frame.assign(run=run.name)
        clash = {m: f"{m} ({run.name})" for m in run.models if len(owners[m]) > 1}
        if clash:
            frame["model"] = frame["model"].astype(str).replace(clash)
        parts.append(frame)
    combined = pd.concat(parts, ignore_index=True)
    for column in runs[0].frame.columns:
        first = runs[0].frame[column].dtype
        if isinstance(first, pd.CategoricalDtype) and column in combined:
            if first.ordered:
                combined[column] = pd.Categorical(combined[column], categories=first.categories,
                                                  ordered=True)
            elif not isinstance(combined[column].dtype, pd.CategoricalDtype):
                combined[column] = combined[column].astype("category")
    combined["run"] = combined["run"].astype("category")
    return combined
