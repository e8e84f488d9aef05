"""Reading a run's bytes into a table: sources, sizes, compression, format sniffing, text
decoding, and the CSV/TSV, Parquet, JSON and JSON Lines parsers (with the native formats of
:mod:`kbench_core.native` recognised on the way). Every failure is a
:class:`~kbench_core.problems.RunFormatError` naming the file and, where it can, the line or
record; the limits of :mod:`kbench_core.problems` are checked before the work they bound.

Modules: ``sources`` (bytes in, gzip, sniffing, decoding), ``delimited`` (CSV/TSV),
``parquet``, ``records`` (JSON, JSON Lines), ``streamed`` (big JSON and JSON Lines of flat
records, in batches) and ``_common`` (the table shapes and limits).
"""

from kbench_core.readers._common import (
    _decode_labels,
    _Native,
    _Table,
    _too_many_columns,
    _too_many_rows,
)
from kbench_core.readers.delimited import _parse_delimited, _parse_delimited_stream
from kbench_core.readers.parquet import _parse_parquet
from kbench_core.readers.records import _from_native, _parse_json, _parse_jsonl
from kbench_core.readers.sources import (
    _clean_name,
    _decode,
    _file_chunks,
    _gunzip,
    _gunzip_chunks,
    _gunzip_head,
    _gunzip_prefix,
    _open_file,
    _read_source,
    _sniff_format,
    _split_name,
)
from kbench_core.readers.streamed import _parse_records_stream, _pieces

__all__ = [
    "_Native", "_Table", "_clean_name", "_decode", "_decode_labels", "_file_chunks",
    "_from_native", "_gunzip", "_gunzip_chunks", "_gunzip_head", "_gunzip_prefix",
    "_open_file", "_parse_delimited", "_parse_delimited_stream", "_parse_json", "_parse_jsonl",
    "_parse_parquet", "_parse_records_stream", "_pieces", "_read_source", "_sniff_format",
    "_split_name", "_too_many_columns", "_too_many_rows",
]
