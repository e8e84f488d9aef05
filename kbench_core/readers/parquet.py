"""Parquet: the metadata checked before reading, rows read in batches whose decoded size is
counted (a dictionary bomb stops at the limit), binary columns as text or a named error."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from kbench_core.problems import (
    MAX_COLUMNS,
    MAX_ROWS,
    RunFormatError,
)
from kbench_core.problems import fail as _fail
from kbench_core.problems import show_value as _show
from kbench_core.readers._common import (
    _check_header,
    _Table,
    _text_columns,
    _too_many_columns,
    _too_many_rows,
)
from kbench_core.readers.delimited import _arrow_nonfinite
from kbench_core.readers.sources import _mb


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
    check_schema(filename, schema)
    check_footer(filename, meta)
    if n_rows > MAX_ROWS:
        raise _too_many_rows(filename, n_rows)
    in_memory = max(unpacked, n_rows * max(n_cols, 1) * 8)
    if in_memory > limit:
        raise _fail(filename, f"the Parquet file holds {n_rows:,} rows × {n_cols:,} columns, "
                              f"at least {_mb(in_memory)} once read, over the {_mb(limit)} "
                              "decompressed-size limit (checked from the file's metadata)")
    return _arrow_rows(filename, _read_parquet_bounded(filename, parquet, schema, limit))


def _temporal(kind: pa.DataType) -> str | None:
    """What a date, time or duration type holds, in words (None for any other type)."""
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    if pa.types.is_date(kind):
        return "dates"
    if pa.types.is_timestamp(kind):
        return "dates and times"
    if pa.types.is_time(kind):
        return "times of day"
    if pa.types.is_duration(kind) or pa.types.is_interval(kind):
        return "durations"
    return None


def check_schema(filename: str, schema: pa.Schema) -> None:
    """The loader's rules on a Parquet file's columns, checked on its schema before a row is
    read, by the loader (:func:`_parse_parquet`) and by every engine on each file it queries
    (:mod:`kbench_core.engines.source`), so both refuse a file in the same words: at most
    :data:`~kbench_core.problems.MAX_COLUMNS` columns; no empty or repeated name, a name
    padded with spaces counting as the name (the loader strips names: ``" score"`` and
    ``"score"`` would be two columns of one name); and a column of labels or text is not a
    column of dates, times or durations (the loader would show a date as a model's name, and
    an engine failed on it with an error naming neither column nor type)."""
    names = [str(n) for n in schema.names]
    if len(names) > MAX_COLUMNS:
        raise _too_many_columns(filename, len(names), "the Parquet file")
    _check_header(filename, names)
    first: dict[str, str] = {}
    for name in names:
        bare = name.strip()
        if bare in first:
            raise _fail(filename, f"duplicate column name {bare!r} in the header "
                                  f"({first[bare]!r} and {name!r} are one name once their "
                                  "spaces are stripped)", row=1, unit="line", field=bare)
        first[bare] = name
    text = _text_columns()
    for field in schema:
        held = _temporal(field.type)
        if held is not None and str(field.name).strip() in text:
            raise _fail(filename, f"the column holds {held} ({field.type}), not text: a "
                                  "label or a text is written as text; convert the column "
                                  "to text (e.g. ISO 8601) and save the file again",
                        field=str(field.name).strip())


def check_footer(filename: str, meta: pq.FileMetaData) -> None:
    """Refuse a footer whose counts do not add up: the file's rows are the sum of its row
    groups' rows, and every column chunk of a row group holds at least one value (a null
    counts) per row. Readers trust different counts: pyarrow the file's (a footer claiming
    5,000,000,000 rows over row groups of 1,234,567 was refused as too big while DuckDB read
    the row groups), DuckDB the row groups' (one claiming more rows than its columns hold
    failed inside DuckDB while pyarrow read the pages), so a crafted footer would give each
    engine another run; refused here, by the loader and every engine in the same words."""
    counted = 0
    for g in range(meta.num_row_groups):
        group = meta.row_group(g)
        counted += group.num_rows
        for c in range(group.num_columns):
            chunk = group.column(c)
            if chunk.num_values < group.num_rows:
                raise _fail(filename, f"its footer does not add up (a damaged or crafted "
                                      f"file): row group {g + 1} claims {group.num_rows:,} "
                                      f"rows but its column {chunk.path_in_schema!r} holds "
                                      f"{chunk.num_values:,} values")
    if counted != meta.num_rows:
        raise _fail(filename, f"its footer does not add up (a damaged or crafted file): it "
                              f"claims {meta.num_rows:,} rows but its row groups hold "
                              f"{counted:,}")


def _arrow_rows(filename: str, table: pa.Table) -> _Table:
    """A Parquet file's rows, read as Arrow, as the validation reads them (also the rows an
    engine fetched from a Parquet file, :mod:`kbench_core.engines.reduce`)."""
    _check_header(filename, table.column_names)
    if table.num_rows == 0:
        raise _fail(filename, "the Parquet file has no rows")
    table = _binary_as_text(filename, table)
    nonfinite = _arrow_nonfinite(table)
    try:
        try:
            frame = table.to_pandas()
        except (pa.ArrowException, ValueError, TypeError, OverflowError):
            # The file's pandas metadata (the dtypes of the frame that wrote it) does not fit
            # its columns (a list where it says text): the columns as Arrow has them, as an
            # engine reads them (it never sees that metadata), so the validation names the
            # rows and the field on every engine alike.
            frame = table.to_pandas(ignore_metadata=True)
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
