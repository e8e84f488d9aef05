"""JSON and JSON Lines: parsed strictly, nested records measured, benchmark documents handed
to :mod:`kbench_core.native`, records turned into a table with their numbers."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from kbench_core import native
from kbench_core.native._advice import advise_json
from kbench_core.problems import (
    DEFAULT_MAX_DECOMPRESSED,
    MAX_COLUMNS,
    MAX_ROWS,
    RunFormatError,
)
from kbench_core.problems import fail as _fail
from kbench_core.readers._common import _Native, _Table, _too_many_rows
from kbench_core.readers.sources import _mb
from kbench_core.words import count_noun


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


_RECORD_KEYS = ("results", "records", "rows", "data")


def _payload_records(payload: Any) -> list[Any] | None:
    if isinstance(payload, list):
        return payload
    if isinstance(payload, dict):
        for key in _RECORD_KEYS:
            if isinstance(payload.get(key), list):
                return payload[key]
    return None


def _is_record_list(value: Any) -> bool:
    """A non-empty list of JSON objects: records, whatever the key that holds them."""
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def _ambiguous_lists(filename: str, payload: dict[str, Any]) -> RunFormatError | None:
    """An object holding more than one list of records (``{"records": [...], "data":
    [...]}``, or ``{"records": [...], "records_2": [...]}`` beside a key kbench knows): which
    one is the run? Reading one would drop the others' rows without a word, so every list is
    named."""
    read = _payload_records(payload)
    lists = [key for key in payload
             if (key in _RECORD_KEYS and isinstance(payload[key], list))
             or (read is not None and payload[key] is not read
                 and _is_record_list(payload[key]))]
    if len(lists) < 2:
        return None
    shown = lists[:10]
    named = ", ".join(f"{key[:80]!r} ({count_noun(len(payload[key]), 'record')})"
                      for key in shown[:-1])
    named += f" and {shown[-1][:80]!r} ({count_noun(len(payload[shown[-1]]), 'record')})"
    more = f" (and {len(lists) - len(shown):,} more)" if len(lists) > len(shown) else ""
    return _fail(filename, f"the object holds {len(lists):,} lists of records, {named}{more}; "
                           "kbench reads one list of records per file, and taking one would "
                           "drop the others' rows. Keep one list (or save each as its own "
                           "file)")


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
        ambiguous = _ambiguous_lists(filename, payload)
        if ambiguous is not None:
            raise ambiguous
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
