"""CSV and TSV: parsed by pyarrow from bytes or, for big files, as the bytes come; a failure
names its line (unclosed quotes, ragged rows, huge numbers, infinities)."""

from __future__ import annotations

import csv
import io as _io
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv

from kbench_core.problems import (
    MAX_CELL_CHARS,
    MAX_COLUMNS,
    MAX_LISTED_PROBLEMS,
    MAX_ROWS,
    RunFormatError,
)
from kbench_core.problems import fail as _fail
from kbench_core.readers._common import (
    _FIRST_CONTENT,
    _LABELS,
    _check_header,
    _sorted_labels,
    _Table,
    _text_columns,
    _too_many_columns,
    _too_many_rows,
)
from kbench_core.readers.sources import _decode


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
