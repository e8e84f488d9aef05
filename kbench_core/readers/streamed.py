"""Big JSON and JSON Lines read in bulk, as their bytes come: the fast path of valid files.

The strict readers of :mod:`kbench_core.readers.records` build a Python object per value (a
300 MB JSON array of flat records peaked at 80x its frame) and parse JSON Lines line by line.
Here the records are cut into batches of a few MB and each batch is parsed by pyarrow's JSON
reader into typed columns (labels as dictionaries), so memory stays a small multiple of the
frame (``benchmarks/README.md``: at most 3x) and a JSON Lines file costs what the same records
cost as a JSON array. The batches' columns become the frame one column at a time, each
column's Arrow memory given back before the next (:func:`_frame`): converting the whole table
at once held the table, its pandas copy and pandas' int64 intermediates together (4.4x).

A JSON array is turned into JSON Lines on the way, by one vectorised pass over its bytes
(:class:`_ArraySplitter`): quotes not escaped by an odd run of backslashes open and close
strings, brackets outside strings give the depth, and a comma outside strings at depth 1
separates two records; it becomes a newline, and the line breaks between tokens become spaces
(a line break inside a string is invalid JSON: the fast path gives up on it). Written by hand:
pyarrow reads only line-delimited JSON, and an incremental parser (ijson) builds the same
Python objects the strict reader does.

As for CSV (:func:`kbench_core.readers.delimited._parse_delimited_stream`), anything the strict
reader would look at more closely gives None, and the caller parses the whole text strictly,
with the same result or the same message naming file, record (or line) and field: a parse
error, a record that is not a flat object (nested values, lists), a value pyarrow reads
differently from :func:`kbench_core.native.load_json` (``NaN`` tokens, integers beyond int64,
numbers too large for a float, duplicate keys, lone surrogates), a known text column
holding numbers, more than :data:`MAX_COLUMNS` keys, a native benchmark document, UTF-16,
carriage-return-only line endings, blank records in an array. Columns that are not known to
any kind keep pyarrow's types (whole numbers as integers), as a CSV's do.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pajson

from kbench_core import families
from kbench_core.native import JsonProblem, load_json
from kbench_core.native._advice import advise_json
from kbench_core.problems import DEFAULT_MAX_DECOMPRESSED, MAX_COLUMNS, MAX_ROWS, Format
from kbench_core.readers._common import _Table, _text_columns, _too_many_rows

# Records parsed at once: big enough that pyarrow's per-call cost vanishes, small enough that
# the batch's text and its parse are a small part of the frame.
_BATCH = 2 << 20
# Batches between two returns of the parser's freed memory to the system.
_RELEASE_EVERY = 4
# A record longer than this is left to the strict reader (which names the line).
_MAX_RECORD = 64 << 20
_WHITESPACE = np.zeros(256, dtype=bool)
_WHITESPACE[[0x20, 0x09, 0x0A, 0x0D]] = True


class _GiveUp(Exception):
    """The fast path declines: the strict reader parses the whole text."""


def _known_columns() -> tuple[frozenset[str], frozenset[str]]:
    """(text columns, every column) of the registered kinds, aliases included."""
    names: set[str] = set()
    for family in families.all_families():
        own = {c.name for c in family.spec.columns}
        names |= own | {alias for alias, name in family.aliases.items() if name in own}
    return _text_columns(), frozenset(names)


# Byte classes the splitter looks at; every other byte (most of a file) is skipped at once.
_OTHER, _QUOTE, _BACKSLASH, _OPEN, _CLOSE, _COMMA, _BREAK, _CONTROL, _SPACE = range(9)
_CLASS = np.zeros(256, dtype=np.uint8)
_CLASS[:0x20] = _CONTROL
_CLASS[[0x0A, 0x0D]] = _BREAK
_CLASS[[0x20, 0x09]] = _SPACE
_CLASS[0x22] = _QUOTE
_CLASS[0x5C] = _BACKSLASH
_CLASS[[0x5B, 0x7B]] = _OPEN
_CLASS[[0x5D, 0x7D]] = _CLOSE
_CLASS[0x2C] = _COMMA


class _ArraySplitter:
    """A JSON array's bytes, chunk by chunk, turned into JSON Lines (one record a line).

    Only the bytes that matter (quotes, backslashes, brackets, commas, line breaks, control
    characters) are looked at, by their positions; state carried across chunks: inside a
    string or not, the run of backslashes that ends the previous chunk, the bracket depth, and
    whether the array has opened or closed.
    """

    def __init__(self) -> None:
        self.in_string = 0
        self.backslashes = 0
        self.depth = 0
        self.opened = False
        self.closed = False
        self.commas = 0

    def feed(self, chunk: bytes) -> bytes:
        arr = np.frombuffer(chunk, dtype=np.uint8)
        if arr.size == 0:
            return b""
        classes = _CLASS[arr]
        pos = np.flatnonzero((classes != _OTHER) & (classes != _SPACE))
        cls = classes[pos]
        quote = cls == _QUOTE
        backslash = cls == _BACKSLASH
        carry = self.backslashes
        if backslash.any() or carry:
            quote &= self._escaped(pos, backslash, carry) == 0
            run_end = pos.size - 1
            tail = 0
            while run_end >= 0 and backslash[run_end] and pos[run_end] == arr.size - 1 - tail:
                tail += 1
                run_end -= 1
            self.backslashes = tail + (carry if tail == arr.size else 0)
        parity = (np.cumsum(quote, dtype=np.int64) + self.in_string) & 1
        inside = (parity == 1) & ~quote
        if (((cls == _CONTROL) | (cls == _BREAK)) & inside).any():
            raise _GiveUp  # a control character inside a string: invalid JSON
        outside = (parity == 0) & ~quote
        opens = (cls == _OPEN) & outside
        closes = (cls == _CLOSE) & outside
        depth = self.depth + np.cumsum(opens.astype(np.int64) - closes, dtype=np.int64)
        self.in_string = int(parity[-1]) if pos.size else self.in_string
        if self.closed:
            if ((classes != _SPACE) & (classes != _BREAK)).any():
                raise _GiveUp  # something after the array
            return b""
        if (depth < 0).any():
            raise _GiveUp
        out = arr.copy()
        if not self.opened:
            # Before the array: only whitespace (no class, or a space), then "[".
            first_other = np.flatnonzero(classes != _SPACE)
            first_other = first_other[(classes[first_other] != _BREAK)]
            if first_other.size == 0:
                return b" " * arr.size
            if arr[first_other[0]] != 0x5B:
                raise _GiveUp  # an object, or not JSON: the strict reader
            self.opened = True
            out[first_other[0]] = 0x20
        out[pos[cls == _BREAK]] = 0x20
        commas = (cls == _COMMA) & outside & (depth == 1)
        self.commas += int(commas.sum())
        out[pos[commas]] = 0x0A
        ends = np.flatnonzero(closes & (depth == 0))
        if ends.size:
            end = int(pos[ends[0]])
            after = classes[end + 1:]
            if ((after != _SPACE) & (after != _BREAK)).any():
                raise _GiveUp  # something after the array
            out[end] = 0x20
            self.closed = True
        self.depth = int(depth[-1]) if pos.size else self.depth
        return out.tobytes()

    @staticmethod
    def _escaped(pos: np.ndarray, backslash: np.ndarray, carry: int) -> np.ndarray:
        """For each looked-at byte, the number of backslashes right before it (a quote after
        an odd number is escaped); ``carry`` backslashes ended the previous chunk."""
        k = np.arange(pos.size)
        contiguous = np.zeros(pos.size, dtype=bool)
        contiguous[1:] = (pos[1:] == pos[:-1] + 1) & backslash[:-1]
        # the start of each run of adjacent backslashes, carried to every byte after it
        starts = np.maximum.accumulate(np.where(backslash & ~contiguous, k, -1))
        before = np.zeros(pos.size, dtype=np.int64)
        prev = k[1:] - 1
        has = contiguous[1:]
        before[1:] = np.where(has, prev - starts[prev] + 1, 0)
        if carry:
            # the run that started the chunk: backslashes at 0, 1, ... continue the carry
            before[1:] += np.where(has & (pos[starts[prev]] == 0), carry, 0)
            if pos.size and pos[0] == 0:
                before[0] = carry
        return before % 2


def _batches(chunks: Iterable[bytes], fmt: Format, warnings: list[str],
             splitter: _ArraySplitter | None) -> Iterator[bytes]:
    """Whole lines (records) of about :data:`_BATCH` bytes."""
    pending = bytearray()
    first = True
    has_lf = has_cr = False
    for chunk in chunks:
        chunk = bytes(chunk)
        if first:
            first = False
            if chunk.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\x00" in chunk[:8192]:
                raise _GiveUp
            if chunk.startswith(b"\xef\xbb\xbf"):
                warnings.append("UTF-8 byte-order mark removed")
                chunk = chunk[3:]
        if fmt == "jsonl":
            has_lf = has_lf or b"\n" in chunk
            has_cr = has_cr or b"\r" in chunk
        piece = splitter.feed(chunk) if splitter is not None else chunk
        pending += piece
        if len(pending) >= _BATCH:
            cut = pending.rfind(b"\n")
            if cut < 0:
                if len(pending) > _MAX_RECORD:
                    raise _GiveUp
                continue
            yield bytes(pending[:cut + 1])
            del pending[:cut + 1]
    if fmt == "jsonl" and has_cr and not has_lf:
        raise _GiveUp  # CR-only line endings: the strict reader's message
    if splitter is not None and not splitter.closed:
        raise _GiveUp  # truncated
    if pending.strip():
        yield bytes(pending)


# The first records of a batch read without a schema to read the rest against.
_PROBE = 64 << 10
# A key of a record: a JSON string followed by a colon (an escaped quote never closes one).
_KEY = re.compile(rb'"((?:[^"\\]|\\.)*)"[ \t\r\n]*:')


def _more_keys_than(batch: bytes, limit: int) -> bool:
    """Whether the batch's records hold more than ``limit`` distinct keys, stopping as soon as
    they do. A key inside a string value is counted too (more, never fewer)."""
    seen: set[bytes] = set()
    for found in _KEY.finditer(batch):
        seen.add(found.group(1))
        if len(seen) > limit:
            return True
    return False


def _parse_batch(batch: bytes, known: pa.Schema | None = None) -> pa.Table:
    """One batch of JSON Lines as a table. ``known``: the columns of the batches so far, with
    their types: a batch holding exactly those keys is read against them (a new key or
    another type raises at once, and the batch is inferred). pyarrow's inference costs about
    records × distinct keys: a batch of 100k records of a key each took minutes (10⁶ distinct
    keys: 3.6 GB), so a batch is inferred only when it holds at most :data:`MAX_COLUMNS` keys
    (more are refused by the strict reader anyway)."""
    read = pajson.ReadOptions(use_threads=False, block_size=max(len(batch) + 1, 1 << 16))
    if known is None and len(batch) > _PROBE:
        # the first batch: its first records' columns, inferred, are what the rest is read
        # against (scanning the whole batch for its keys costs more than reading it)
        cut = batch.rfind(b"\n", 0, _PROBE)
        if cut > 0:
            known = _parse_batch(batch[:cut + 1]).schema
    if known is not None:
        try:
            return pajson.read_json(pa.BufferReader(batch), read_options=read,
                                    parse_options=pajson.ParseOptions(
                                        explicit_schema=known,
                                        unexpected_field_behavior="error"))
        except (pa.ArrowException, ValueError):
            pass  # a new key or another type: the batch is inferred
    if _more_keys_than(batch, MAX_COLUMNS):
        raise _GiveUp
    try:
        table = pajson.read_json(pa.BufferReader(batch), read_options=read)
        stamps = [f for f in table.schema if pa.types.is_timestamp(f.type)]
        if stamps:  # pyarrow reads ISO dates as timestamps: the file holds text
            order = table.column_names
            schema = pa.schema([(f.name, pa.string()) for f in stamps])
            parse = pajson.ParseOptions(explicit_schema=schema,
                                        unexpected_field_behavior="infer")
            table = pajson.read_json(pa.BufferReader(batch), read_options=read,
                                     parse_options=parse).select(order)
    except (pa.ArrowException, ValueError):
        raise _GiveUp from None
    return table


_PLAIN = (pa.types.is_null, pa.types.is_boolean, pa.types.is_int64, pa.types.is_float64,
          pa.types.is_string)


def _check_batch(table: pa.Table, text: frozenset[str],
                 known: frozenset[str]) -> None:
    for field, column in zip(table.schema, table.columns, strict=True):
        kind = field.type
        if not any(test(kind) for test in _PLAIN):
            raise _GiveUp  # nested values: the strict reader names them
        if field.name in text and not (pa.types.is_string(kind) or pa.types.is_null(kind)):
            raise _GiveUp  # a number where text is expected: kept as the file wrote it
        if field.name in known and pa.types.is_boolean(kind):
            raise _GiveUp
        if pa.types.is_float64(kind) and column.null_count < len(column):
            values = column.drop_null()
            # NaN / Infinity tokens and numbers beyond a float (kept as text by the strict
            # reader); integers beyond int64, which pyarrow reads as floats and the strict
            # reader keeps exact.
            if not pc.all(pc.is_finite(values)).as_py() \
                    or pc.max(pc.abs(values)).as_py() >= 2.0**63:
                raise _GiveUp


def _known_schema(schema: pa.Schema | None, table: pa.Table) -> pa.Schema:
    """The columns read so far with the type each had last (null until it holds a value),
    against which the next batch is read (:func:`_parse_batch`)."""
    types = {} if schema is None else dict(zip(schema.names, schema.types, strict=True))
    for field in table.schema:
        if field.name not in types or not pa.types.is_null(field.type):
            types[field.name] = field.type
    return pa.schema(list(types.items()))


def _lines(batch: bytes) -> tuple[int, np.ndarray | None]:
    """(lines in a JSON Lines batch, 0-based indices of its non-blank lines or None when
    none is blank)."""
    n_lines = batch.count(b"\n") + (0 if batch.endswith(b"\n") else 1)
    # Without its spaces, tabs and CRs a blank line is an empty one: "\n\n", or a "\n" first.
    bare = batch.translate(None, b" \t\r")
    if b"\n\n" not in bare and not bare.startswith(b"\n"):
        return n_lines, None
    breaks = np.flatnonzero(np.frombuffer(bare, dtype=np.uint8) == 0x0A)
    starts = np.concatenate(([0], breaks + 1))[:n_lines]
    ends = np.concatenate((breaks, [len(bare)]))[:n_lines]
    return n_lines, np.flatnonzero(ends > starts)


def _labels(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """A label column as a dictionary with the narrowest indices its batch needs (a run has
    a few hundred labels: one byte a row, as the frame's categorical codes, not four)."""
    encoded = pc.dictionary_encode(column)
    size = max((len(chunk.dictionary) for chunk in encoded.chunks), default=0)
    index = pa.int8() if size < 1 << 7 else pa.int16() if size < 1 << 15 else pa.int32()
    return encoded.cast(pa.dictionary(index, pa.string()))


_INDEX_WIDTH = {pa.int8(): 1, pa.int16(): 2, pa.int32(): 4}


def _target(parts: list[pa.ChunkedArray | None]) -> pa.DataType:
    """The type of one column over the batches: a column missing from a batch is null there;
    integers and floats of one column become floats; any other mix of types is for the
    strict reader."""
    kinds = {p.type for p in parts if p is not None and not pa.types.is_null(p.type)}
    if not kinds:
        return pa.null()
    if kinds <= {pa.int64(), pa.float64()}:
        return pa.float64() if pa.float64() in kinds else pa.int64()
    if all(pa.types.is_dictionary(k) for k in kinds):  # batches of different widths
        widest = max((k.index_type for k in kinds), key=_INDEX_WIDTH.__getitem__)
        return pa.dictionary(widest, pa.string())
    if len(kinds) == 1:
        return next(iter(kinds))
    raise _GiveUp


def _chunks(parts: list[pa.ChunkedArray | None], sizes: list[int],
            target: pa.DataType) -> Iterator[pa.Array]:
    """The column's chunks batch by batch, nulls where a batch lacks it, cast to ``target``
    (int64 -> float64 exact only, or wider dictionary indices)."""
    for part, size in zip(parts, sizes, strict=True):
        if part is None or pa.types.is_null(part.type):
            yield pa.nulls(size, target)
        elif part.type != target:
            try:
                yield from part.cast(target).chunks
            except pa.ArrowInvalid:
                raise _GiveUp from None
        else:
            yield from part.chunks


def _categorical(chunks: list[pa.Array], rows: int) -> pd.Categorical:
    """Dictionary chunks as one categorical, categories sorted (the order a text column's
    ``astype("category")`` gives, whichever order the labels came in) and codes of the
    narrowest width, filled chunk by chunk: no row-length intermediate beside the codes
    (converting the whole table at once peaked at 4.4x the frame)."""
    dictionaries = pa.chunked_array([c.dictionary for c in chunks], pa.string())
    # UTF-8 byte order is code point order: the order Python's sort gives the same strings.
    categories = pc.unique(dictionaries).drop_null()
    categories = categories.take(pc.array_sort_indices(categories))
    width = np.int8 if len(categories) < 1 << 7 else (
        np.int16 if len(categories) < 1 << 15 else np.int32)
    codes = np.empty(rows, dtype=width)
    start = 0
    for chunk in chunks:
        # each batch's labels to the sorted categories; its nulls (index -1) to -1
        lookup = np.append(pc.index_in(chunk.dictionary, value_set=categories).to_numpy(
            zero_copy_only=False), -1).astype(width)
        indices = chunk.indices.fill_null(-1).to_numpy(zero_copy_only=False)
        codes[start:start + len(chunk)] = lookup[indices]
        start += len(chunk)
    dtype = pd.CategoricalDtype(pd.Index(categories.to_pandas()))
    return pd.Categorical.from_codes(codes, dtype=dtype, validate=False)


def _frame(columns: dict[str, list[pa.ChunkedArray | None]], sizes: list[int]) -> pd.DataFrame:
    """The batches' columns as one frame, one column at a time: each column's Arrow memory is
    given back before the next is converted, so the peak is the frame plus one column."""
    rows = sum(sizes)
    targets = {name: _target(parts) for name, parts in columns.items()}
    result: dict[str, Any] = {}
    for name in list(columns):
        chunks = list(_chunks(columns.pop(name), sizes, targets[name]))
        if pa.types.is_dictionary(targets[name]):
            result[name] = _categorical(chunks, rows)
        else:
            result[name] = pa.chunked_array(chunks, targets[name]).to_pandas()
        del chunks
        pa.default_memory_pool().release_unused()
    # copy=False: one block per column, as Arrow's split_blocks (no consolidating copy)
    return pd.DataFrame(result, index=pd.RangeIndex(rows), copy=False)


def _keep(columns: dict[str, list[pa.ChunkedArray | None]], table: pa.Table,
          label_columns: frozenset[str]) -> None:
    """Add a batch's columns to ``columns`` (None for a column it lacks), labels as
    dictionaries. A function of its own: no loop variable outlives it holding a column's
    chunks (which would keep them past their conversion to the frame)."""
    for name, parts in columns.items():
        col = table.column(name) if name in table.column_names else None
        if col is not None and name in label_columns and pa.types.is_string(col.type):
            col = _labels(col)
        parts.append(col)


def _native_first(batch: bytes) -> bool:
    """Whether the array's first record is a benchmark document (or an artefact kbench
    advises on): those go to the strict reader and the native converters."""
    from kbench_core import native

    line = batch[:batch.find(b"\n")] if b"\n" in batch else batch
    if _more_keys_than(line, MAX_COLUMNS):
        # not a flat record of at most MAX_COLUMNS keys: the strict reader decides, and
        # parsing a first record of 10⁶ keys here would only double its work
        return True
    try:
        first = load_json(line.decode("utf-8"))
    except (JsonProblem, UnicodeDecodeError):
        return True
    payload = [first]
    return advise_json(payload) is not None or any(
        fmt.matches_json is not None and fmt.matches_json(payload)
        for fmt in native.formats())


def _parse_records_stream(filename: str, fmt: Format, chunks: Iterable[bytes],
                          warnings: list[str],
                          limit: int = DEFAULT_MAX_DECOMPRESSED) -> _Table | None:
    """A JSON array of flat records or a JSON Lines file parsed from a stream of its bytes in
    batches (see the module's docstring), or None when the strict reader must read it.

    An error of ``chunks`` itself (a gzip bomb, corrupt gzip) is raised as it is. Over
    :data:`MAX_ROWS` rows is refused with the strict reader's message, counted as the
    batches pass (none is kept past the limit).
    """
    text, known = _known_columns()
    label_columns = _text_columns(("category",))
    splitter = _ArraySplitter() if fmt == "json" else None
    seen: list[str] = []
    # each column's part of every batch kept so far (None where a batch lacks it)
    columns: dict[str, list[pa.ChunkedArray | None]] = {}
    sizes: list[int] = []
    # Line numbers of JSON Lines: (first line, lines) of a batch without blank lines, the
    # numbers of its records otherwise; made into one array only when some line was blank.
    numbers: list[tuple[int, int] | np.ndarray] = []
    rows = lines = 0
    blank = False
    first = True
    schema: pa.Schema | None = None  # the columns so far and their latest types
    try:
        for batch in _batches(chunks, fmt, seen, splitter):
            if first and fmt == "json" and _native_first(batch):
                return None
            first = False
            table = _parse_batch(batch, schema)
            _check_batch(table, text, known)
            schema = _known_schema(schema, table)
            if fmt == "jsonl":
                n_lines, filled = _lines(batch)
                if filled is None:
                    if table.num_rows != n_lines:
                        raise _GiveUp
                    numbers.append((lines + 1, n_lines))
                else:
                    if table.num_rows != filled.size:
                        raise _GiveUp
                    blank = True
                    numbers.append(filled + lines + 1)
                lines += n_lines
            rows += table.num_rows
            for name in table.column_names:
                columns.setdefault(name, [None] * len(sizes))
            if len(columns) > MAX_COLUMNS:
                raise _GiveUp  # the strict reader names the record that passed the limit
            if rows > MAX_ROWS:
                columns = {name: [] for name in columns}
                sizes.clear()
                numbers.clear()
                continue
            _keep(columns, table, label_columns)
            sizes.append(table.num_rows)
            del table
            if len(sizes) % _RELEASE_EVERY == 0:
                # the parser's buffers go back to the system as the batches pass, not at
                # the end (each call costs a walk of the pool: not every batch)
                pa.default_memory_pool().release_unused()
    except _GiveUp:
        return None
    if rows > MAX_ROWS:
        raise _too_many_rows(filename, rows)
    if splitter is not None and rows != splitter.commas + 1:
        return None  # a blank record ([{...},,{...}] or a trailing comma), or no record
    if rows == 0 or rows * len(columns) * 8 > limit:
        return None
    try:
        frame = _frame(columns, sizes)
    except _GiveUp:
        return None
    encoded = {name for name in frame.columns
               if isinstance(frame[name].dtype, pd.CategoricalDtype)}
    warnings.extend(seen)
    if fmt == "json":
        return _Table(frame, lambda: np.arange(1, rows + 1), "record", {}, {}, encoded)
    if not blank:
        return _Table(frame, lambda: np.arange(1, rows + 1), "line", {}, {}, encoded)
    return _Table(frame, np.concatenate([
        np.arange(part[0], part[0] + part[1]) if isinstance(part, tuple) else part
        for part in numbers]), "line", {}, {}, encoded)


def _pieces(data: bytes | bytearray, size: int = 1 << 20) -> Iterator[bytes]:
    """``data`` in pieces of ``size`` bytes (the whole-bytes path fed to the batch reader)."""
    view = memoryview(data)
    for start in range(0, len(view), size):
        yield bytes(view[start:start + size])

