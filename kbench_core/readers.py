"""Reading a run's bytes into a table: sources, sizes, compression, format sniffing, text
decoding, and the CSV/TSV, Parquet, JSON and JSON Lines parsers (with the native formats of
:mod:`kbench_core.native` recognised on the way). Every failure is a
:class:`~kbench_core.problems.RunFormatError` naming the file and, where it can, the line or
record; the limits of :mod:`kbench_core.problems` are checked before the work they bound."""

from __future__ import annotations

import csv
import io as _io
import os
import re
import stat
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from kbench_core import families, native
from kbench_core.native._advice import advise_json
from kbench_core.problems import (
    DEFAULT_MAX_DECOMPRESSED,
    MAX_CELL_CHARS,
    MAX_COLUMNS,
    MAX_LISTED_PROBLEMS,
    MAX_ROWS,
    Format,
    RunFormatError,
    Source,
)
from kbench_core.problems import fail as _fail
from kbench_core.problems import show_value as _show

_SUFFIX_FORMATS: dict[str, Format] = {
    ".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".txt": "csv",
    ".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl",
    ".parquet": "parquet", ".pq": "parquet",
}
def _text_columns(types: tuple[str, ...] = ("text", "category")) -> frozenset[str]:
    """Column names that hold text (or, with ``types=("category",)``, labels) in some family
    (read as text, never as numbers), and their aliases."""
    names: set[str] = set()
    for family in families.all_families():
        text = {c.name for c in family.spec.columns if c.type in types}
        names |= text | {alias for alias, name in family.aliases.items() if name in text}
    return frozenset(names)


_LABELS = pa.dictionary(pa.int32(), pa.string())


def _sorted_labels(frame: pd.DataFrame, names: Sequence[str]) -> None:
    """Categories of the reader's dictionary columns in sorted order, in place: the order a
    text column's ``astype("category")`` gives, so results do not depend on how the file
    was read (Arrow's dictionaries keep the order of first appearance)."""
    for name in names:
        series = frame[name]
        categories = series.cat.categories
        order = np.argsort(categories.to_numpy(dtype=object), kind="stable")
        if (order != np.arange(len(order))).any():
            frame[name] = series.cat.reorder_categories(categories[order])


def _decode_labels(table: _Table, keep: Callable[[str], bool] = lambda name: False) -> None:
    """Turn the reader's dictionary columns back into text, except those ``keep`` says are
    labels of the run's kind; in place. A column read as a dictionary to save time and memory
    ends as the same frame a text read would have given."""
    for name in list(table.encoded):
        if name in table.frame.columns and not keep(name):
            table.frame[name] = table.frame[name].astype("str")
            table.encoded.discard(name)

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
    filename, handle = _open_file(source, max_bytes)
    with handle:
        try:
            data = handle.read(max_bytes + 1)
        except OSError as exc:
            raise _fail(filename, f"cannot read: {exc.strerror or exc}") from None
    if len(data) > max_bytes:  # grew while being read
        raise _size_error(filename, len(data), max_bytes)
    return filename, data


def _open_file(source: str | Path, max_bytes: int) -> tuple[str, BinaryIO]:
    """(file name, open binary handle) of a regular file within ``max_bytes``."""
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
    handle = os.fdopen(fd, "rb")
    try:
        info = os.fstat(handle.fileno())
        if stat.S_ISDIR(info.st_mode):
            raise _fail(filename, "is a folder, not a file")
        if not stat.S_ISREG(info.st_mode):
            raise _fail(filename, "not a regular file (a device, FIFO or socket); give the "
                                  "path of a saved file")
        if info.st_size > max_bytes:
            raise _size_error(filename, info.st_size, max_bytes)
    except BaseException:
        handle.close()
        raise
    return filename, handle


def _file_chunks(filename: str, handle: BinaryIO, head: bytes, max_bytes: int,
                 digest: Any) -> Iterator[bytes]:
    """The bytes of an open file from where ``head`` ends, in 1 MB pieces, hashed into
    ``digest`` (``head`` first) and held to ``max_bytes`` (a file that grows while read)."""
    digest.update(head)
    size = len(head)
    yield head
    while True:
        try:
            chunk = handle.read(_CHUNK)
        except OSError as exc:
            raise _fail(filename, f"cannot read: {exc.strerror or exc}") from None
        if not chunk:
            return
        size += len(chunk)
        if size > max_bytes:
            raise _size_error(filename, size, max_bytes)
        digest.update(chunk)
        yield chunk


def _mb(n: int) -> str:
    return f"{n / 1024**2:,.1f} MB"


def _size_error(filename: str, size: int, limit: int) -> RunFormatError:
    return _fail(filename, f"file is {_mb(size)}, over the {_mb(limit)} limit; split the run "
                           "into smaller files or raise the limit (max_bytes / "
                           "server.maxUploadSize)")


_CHUNK = 1 << 20


def _gunzip(filename: str, data: bytes, limit: int) -> bytearray:
    """Decompress with a hard output limit, so a gzip bomb costs at most ``limit`` bytes.

    Concatenated members are read on; zero bytes after the last member (tape and disk images
    pad that way) are ignored, as :mod:`gzip` does. The result is the bytearray that was
    filled, not a copy.
    """
    out = bytearray()
    for block in _gunzip_chunks(filename, data, limit):
        out += block
    return out


def _gunzip_chunks(filename: str, data: bytes, limit: int) -> Iterator[bytes]:
    """The decompressed bytes of :func:`_gunzip`, 1 MB at a time, with the same limit and
    checks (a reader can parse them as they come, never holding the whole file)."""
    decomp = zlib.decompressobj(16 + zlib.MAX_WBITS)
    chunk = _CHUNK
    pos = 0
    total = 0
    try:
        while pos < len(data) or decomp.unconsumed_tail:
            if decomp.unconsumed_tail:
                block = decomp.decompress(decomp.unconsumed_tail, chunk)
            else:
                block = decomp.decompress(data[pos:pos + chunk], chunk)
                pos += chunk
            total += len(block)
            if total > limit:
                raise _fail(filename, f"decompresses to more than {_mb(limit)}, over the "
                                      "decompressed-size limit (a gzip bomb, or a run too big "
                                      "to load at once)")
            if block:
                yield block
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


def _gunzip_prefix(data: bytes, size: int) -> bytes:
    """The first ``size`` decompressed bytes of gzip ``data`` (fewer for a shorter or broken
    stream: the full decompression then says what is wrong)."""
    try:
        decomp = zlib.decompressobj(16 + zlib.MAX_WBITS)
        out = bytearray()
        pos = 0
        while len(out) < size and pos < len(data) and not decomp.eof:
            out += decomp.decompress(data[pos:pos + _CHUNK], size - len(out))
            pos += _CHUNK
            while decomp.unconsumed_tail and len(out) < size:
                out += decomp.decompress(decomp.unconsumed_tail, size - len(out))
        return bytes(out)
    except zlib.error:
        return b""


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
    # col -> (mask, {position: cell text}) of numbers too large for a float (400 digits,
    # 1e999): Arrow reads them as infinity, but the cell did not say "inf".
    overflow: dict[str, tuple[np.ndarray, dict[int, str]]] = field(default_factory=dict)
    # Columns the reader read as dictionaries (categorical, sorted) though the file holds
    # text: labels for the run's kind stay so, any other goes back to text (_decode_labels).
    encoded: set[str] = field(default_factory=set)

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
    read, parse, text_types = _csv_options(names, delimiter)

    def attempt(column_types: dict[str, pa.DataType] | None, *, stream: bool) -> pa.Table:
        convert = _csv_convert(column_types or text_types)
        # BufferReader: zero-copy over bytes and bytearray alike (BytesIO copies a bytearray).
        source = pa.BufferReader(data)
        if not stream:
            return pacsv.read_csv(source, read_options=read, parse_options=parse,
                                  convert_options=convert)
        # The streaming reader holds a block or two beside the table it builds (read_csv's
        # parallel blocks peaked at 2.6x the table) but takes its types from the first block:
        # where a later block needs a wider type it fails, and read_csv, which widens, reads.
        table = pacsv.open_csv(source, read_options=read, parse_options=parse,
                               convert_options=convert).read_all()
        pa.default_memory_pool().release_unused()  # the parser's blocks, back to the system
        return table

    def conversion_error(exc: Exception) -> bool:
        return "conversion error" in str(exc).lower()

    try:
        try:
            try:
                table = attempt(None, stream=True)
            except pa.ArrowInvalid as exc:
                if not conversion_error(exc):
                    raise
                table = attempt(None, stream=False)
        except pa.ArrowInvalid as exc:
            if not conversion_error(exc):
                raise
            # Inference saw numbers early and text later: read every column as text and let
            # validation name each bad cell.
            table = attempt({name: text_types.get(name, pa.string()) for name in names},
                            stream=False)
    except pa.ArrowInvalid as exc:
        if "straddl" in str(exc):  # a record longer than pyarrow's 16 MB block
            raise _fail(filename, f"a cell is longer than the limit of {MAX_CELL_CHARS:,} "
                                  "characters (1 MB per cell)", row=_long_line(data),
                        unit="line") from None
        text = _decode(filename, data, warnings)  # a UTF-8 fault is named by its line
        lines = _ragged_line(text, delimiter)
        message = _explain_csv_error(str(exc))
        if lines is not None and lines[1] > lines[0]:
            # A quote opened here and closed lines later (by a stray quote): the record that
            # pyarrow saw as ragged starts where the quoted cell opened.
            message += (f"; a quoted cell opens on this line and runs on to line {lines[1]}: "
                        "close the quote on its own line, or double a quote that is part of "
                        "the text (\"\")")
        raise _fail(filename, message, row=lines[0] if lines else None,
                    unit="line") from None
    table = table.rename_columns(names)
    if table.num_rows == 0:
        raise _fail(filename, "the file has a header but no data rows")
    if table.num_rows > MAX_ROWS:
        raise _too_many_rows(filename, table.num_rows)
    nonfinite = _arrow_nonfinite(table)
    overflow = _csv_overflow(data, header, names, read, parse, nonfinite) if nonfinite else {}
    frame, encoded = _csv_frame(table)
    del table
    n_rows = len(frame)
    return _Table(frame, lambda: _csv_line_numbers(data.decode("utf-8", "replace"), n_rows,
                                                    delimiter), "line", nonfinite, overflow,
                  encoded)


def _csv_options(names: Sequence[str], delimiter: str, block_size: int = 1 << 24,
                 use_threads: bool = True,
                 ) -> tuple[pacsv.ReadOptions, pacsv.ParseOptions, dict[str, pa.DataType]]:
    """pyarrow's read and parse options for a CSV, and the types of its text columns."""
    read = pacsv.ReadOptions(block_size=block_size, use_threads=use_threads)
    parse = pacsv.ParseOptions(delimiter=delimiter, newlines_in_values=True)
    # Labels and free text stay text: "007" is a sample id, not the number 7.
    text_columns, label_columns = _text_columns(), _text_columns(("category",))
    # Labels read as Arrow dictionaries: a million repeated model names are one hash each in
    # the parser, not a million strings to build, convert and hash again into categories.
    text_types = {n: _LABELS if n in label_columns else pa.string()
                  for n in names if n in text_columns}
    return read, parse, text_types


def _csv_convert(column_types: dict[str, pa.DataType]) -> pacsv.ConvertOptions:
    return pacsv.ConvertOptions(
        null_values=[""], strings_can_be_null=True, quoted_strings_can_be_null=True,
        true_values=["true", "True", "TRUE"], false_values=["false", "False", "FALSE"],
        column_types=column_types,
    )


def _csv_frame(table: pa.Table) -> tuple[pd.DataFrame, set[str]]:
    """The frame of a parsed CSV (the table is consumed) and its dictionary columns."""
    encoded = {n for n, t in zip(table.column_names, table.schema.types, strict=True)
               if pa.types.is_dictionary(t)}
    frame = table.to_pandas(self_destruct=True, split_blocks=True)
    _sorted_labels(frame, sorted(encoded))
    return frame, encoded


_STREAM_BLOCK = 1 << 20
_STREAM_THREADS = False  # as fast here: the blocks come through Python


class _ChunkFile(_io.RawIOBase):
    """A read-only file over an iterator of byte chunks, for pyarrow's streaming CSV reader;
    it counts what the whole-file checks of :func:`_parse_delimited` need (quotes, line
    endings) as the bytes pass, and keeps the iterator's own error (a gzip bomb) to re-raise
    as it is rather than as pyarrow's wrapping of it."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        super().__init__()
        self._chunks = chunks
        self._pending = b""
        self.quotes = 0
        self.has_lf = False
        self.has_cr = False
        self.failure: BaseException | None = None

    def readable(self) -> bool:
        return True

    def _next(self) -> bytes:
        try:
            chunk = next(self._chunks)
        except StopIteration:
            return b""
        except BaseException as exc:
            self.failure = exc
            raise OSError("the stream failed") from None
        self.quotes += chunk.count(b'"')
        self.has_lf = self.has_lf or b"\n" in chunk
        if not self.has_lf:
            self.has_cr = self.has_cr or b"\r" in chunk
        return chunk

    def read(self, size: int = -1) -> bytes:
        parts = [self._pending] if self._pending else []
        have = len(self._pending)
        self._pending = b""
        while size < 0 or have < size:
            chunk = self._next()
            if not chunk:
                break
            parts.append(chunk)
            have += len(chunk)
        data = b"".join(parts)
        if 0 <= size < len(data):
            data, self._pending = data[:size], data[size:]
        return data

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)


def _parse_delimited_stream(filename: str, head: bytes, chunks: Iterator[bytes],
                            delimiter: str, warnings: list[str],
                            reread: Callable[[], bytes | bytearray]) -> _Table | None:
    """A CSV/TSV parsed as its bytes come (from a gzip stream or a file), never holding the
    whole text: ``head`` is its first bytes (which ``chunks`` yields again first), ``reread``
    gives the whole text when a row has to be named.

    The fast path of valid files only: anything :func:`_parse_delimited` would look at more
    closely (a UTF-16 or binary head, an odd number of quotes, CR-only line endings, any
    parse or conversion error, a cell across blocks, a value to refuse) gives None, and the
    caller parses the whole text with :func:`_parse_delimited`, which gives the same frame or
    the same error. An error of ``chunks`` itself (a gzip bomb, corrupt gzip data) is raised
    as it is.
    """
    if head.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\x00" in head[:8192]:
        return None
    bom = head.startswith(b"\xef\xbb\xbf")
    text = head[3:] if bom else head
    first = _FIRST_CONTENT.search(text)
    start = first.start() if first else 0
    end = text.find(b"\n", start)
    if end < 0:
        return None
    try:
        header = next(_csv_header(text[start:end].rstrip(b"\r").decode("utf-8"), delimiter),
                      [])
    except Exception:  # the whole-text parser names the fault
        return None
    names = [h.strip() for h in header]
    if not header or len(header) > MAX_COLUMNS or len(set(names)) < len(names) \
            or "" in names:
        return None
    # Small blocks (1 MB): the reader holds a few beside the table it builds. Types come from
    # the first block; where a later one needs a wider type, or a row is longer than a block,
    # the whole-text parser reads (read_csv, which widens types across its 16 MB blocks).
    read, parse, text_types = _csv_options(names, delimiter, _STREAM_BLOCK, _STREAM_THREADS)

    def body() -> Iterator[bytes]:
        pieces = iter(chunks)
        first_piece = next(pieces, b"")
        yield first_piece[3:] if bom else first_piece
        yield from pieces

    stream = _ChunkFile(body())
    try:
        table = pacsv.open_csv(stream, read_options=read, parse_options=parse,
                               convert_options=_csv_convert(text_types)).read_all()
    except Exception:
        if isinstance(stream.failure, RunFormatError):
            raise stream.failure from None
        return None
    if stream.failure is not None:  # pragma: no cover - pyarrow re-raises it above
        raise stream.failure
    pa.default_memory_pool().release_unused()
    if stream.quotes % 2 or (stream.has_cr and not stream.has_lf):
        return None
    if table.num_rows == 0 or table.num_rows > MAX_ROWS or _arrow_nonfinite(table):
        return None
    table = table.rename_columns(names)
    if bom:
        warnings.append("UTF-8 byte-order mark removed")
    frame, encoded = _csv_frame(table)
    del table
    n_rows = len(frame)
    return _Table(frame, lambda: _csv_line_numbers(bytes(reread()).decode("utf-8", "replace"),
                                                    n_rows, delimiter), "line", {}, {},
                  encoded)


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


def _ragged_line(text: str, delimiter: str) -> tuple[int, int] | None:
    """(first, last) line of the first record whose cell count differs from the header's, or
    None (error path only). A record that a quoted cell carries over several lines starts on
    the line where that cell opened, which is the line to name."""
    import csv

    reader = csv.reader(_io.StringIO(text, newline=""), delimiter=delimiter)
    start = 1
    try:
        width = len(next(reader))
        while True:
            start = reader.line_num + 1
            row = next(reader, None)
            if row is None:
                return None
            if row and len(row) != width:
                return start, reader.line_num
    except csv.Error:
        return start, reader.line_num


def _explain_csv_error(message: str) -> str:
    msg = message.replace("CSV parse error: ", "")
    m = re.search(r"Expected (\d+) columns, got (\d+)", msg)
    if m:
        snippet = msg.split(": ", 1)[-1][:120]
        return (f"a row has {m.group(2)} cells where the header has {m.group(1)} columns "
                f"(near: {snippet!r}); check delimiters and quoting")
    return f"cannot parse the table: {msg[:300]}"


_INFINITY_WORDS = frozenset({"inf", "infinity", "nan"})


def _csv_overflow(data: bytes | bytearray, raw_names: Sequence[str], names: Sequence[str],
                  read: pacsv.ReadOptions, parse: pacsv.ParseOptions,
                  nonfinite: dict[str, np.ndarray]) -> dict[str, tuple[np.ndarray, dict]]:
    """Split the infinite cells of a CSV into those written as inf/NaN and numbers too large
    for a float (error path only: the columns with such cells are read again as text).

    ``nonfinite`` loses the overflowing cells; they are returned with their text."""
    overflow: dict[str, tuple[np.ndarray, dict[int, str]]] = {}
    for name, mask in list(nonfinite.items()):
        raw = raw_names[list(names).index(name)]
        convert = pacsv.ConvertOptions(include_columns=[raw], column_types={raw: pa.string()},
                                       null_values=[""], strings_can_be_null=True,
                                       quoted_strings_can_be_null=True)
        column = pacsv.read_csv(pa.BufferReader(data), read_options=read, parse_options=parse,
                                convert_options=convert).column(0)
        texts = np.asarray(column.to_numpy(zero_copy_only=False), dtype=object)
        positions = np.flatnonzero(mask)
        words = [str(t).strip().lower().lstrip("+-") for t in texts[positions]]
        big = positions[[w not in _INFINITY_WORDS for w in words]]
        if big.size:
            big_mask = np.zeros(len(mask), dtype=bool)
            big_mask[big] = True
            overflow[name] = (big_mask, {int(p): str(texts[p]).strip()
                                         for p in big[:MAX_LISTED_PROBLEMS]})
            nonfinite[name] = mask & ~big_mask
    return overflow


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
    are big. The rows are then read in batches whose decoded size is summed as they come
    (:func:`_read_parquet_bounded`): one long value repeated through a dictionary is small in
    the metadata and big once read. Binary columns are read as UTF-8 text (a byte string is
    not a label).
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
    table = _read_parquet_bounded(filename, parquet, schema, limit)
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


_PARQUET_BATCH = 1 << 17  # rows; a batch of the bomb above is 128 MB


def _decoded_bytes(column: pa.Array, *, exact: bool) -> int:
    """Bytes a column takes once decoded. A dictionary-encoded column counts every row's
    value, since text columns are decoded in validation and a tiny dictionary page can stand
    for gigabytes of repeated text: ``exact`` sums each row's value length, else the bound
    rows × longest value (no pass over the rows)."""
    if not pa.types.is_dictionary(column.type):
        return column.nbytes
    values = column.dictionary
    if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)
            or pa.types.is_binary(values.type) or pa.types.is_large_binary(values.type)):
        return column.nbytes + 8 * len(column)
    lengths = pc.binary_length(values)
    if len(lengths) == 0:
        return 8 * len(column)
    if exact:
        text = pc.sum(lengths.take(column.indices.fill_null(0))).as_py() or 0
    else:
        text = (pc.max(lengths).as_py() or 0) * len(column)
    return int(text) + 8 * len(column)


def _read_parquet_bounded(filename: str, parquet: pq.ParquetFile, schema: pa.Schema,
                          limit: int) -> pa.Table:
    """The rows of a Parquet file, read in batches whose decoded size is summed as they come:
    the read stops as soon as the sum passes ``limit`` (the metadata's sizes are those of the
    encoded pages, and 2 M rows of one 1,000-character dictionary value are 244 KB encoded,
    2 GB decoded), so the memory spent on a refused file is about the limit, as for gzip."""
    batches: list[pa.RecordBatch] = []
    sizes = dict.fromkeys(schema.names, 0)
    exact = False
    try:
        for batch in parquet.iter_batches(batch_size=_PARQUET_BATCH, use_threads=True):
            batches.append(batch)
            for name, column in zip(batch.schema.names, batch.columns, strict=True):
                sizes[name] = sizes.get(name, 0) + _decoded_bytes(column, exact=exact)
            if sum(sizes.values()) > limit and not exact:
                # The cheap bound is over: count the rows seen so far exactly, and from now on.
                exact = True
                sizes = dict.fromkeys(schema.names, 0)
                for seen in batches:
                    for name, column in zip(seen.schema.names, seen.columns, strict=True):
                        sizes[name] = sizes.get(name, 0) + _decoded_bytes(column, exact=True)
            if sum(sizes.values()) > limit:
                worst = max(sizes, key=sizes.__getitem__)
                rows = sum(len(b) for b in batches)
                raise _fail(filename, f"the Parquet file decodes to more than {_mb(limit)} "
                                      f"(this column alone {_mb(sizes[worst])} by row "
                                      f"{rows:,}), over the decompressed-size limit: its pages "
                                      "are small but their values repeat (a dictionary bomb, "
                                      "or a run too big to load at once)", field=worst)
        return pa.Table.from_batches(batches, schema=schema)
    except RunFormatError:
        raise
    except (pa.ArrowException, OSError, ValueError, TypeError) as exc:
        raise _fail(filename, f"cannot read Parquet: {str(exc)[:300]}") from None


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


