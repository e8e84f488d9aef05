"""What every benchmark reader shares: the JSON parser for uploaded text (:func:`load_json`),
:class:`Converted`, :class:`NativeFormat`, :class:`NativeError` and the label checks. The
package re-exports all of it; readers import it from here, so the package (which discovers the
readers) is not imported back by them."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

# Deeper JSON than this is no run (a record is flat, a native record a few levels deep).
MAX_JSON_DEPTH = 64
# Longer integers than this are kept as text: no run has them, and Python refuses to convert
# integers of more than 4,300 digits (a crash in the parser, not a message).
MAX_INT_DIGITS = 30
# Longer labels (model, bias, study, judge names) than this are refused: a name, not a text.
MAX_LABEL_CHARS = 1000


class JsonConstant(str):
    """A bare ``NaN``, ``Infinity`` or ``-Infinity`` token (not JSON), kept as its text."""

    __slots__ = ()


class JsonBigInt(str):
    """An integer literal of more than :data:`MAX_INT_DIGITS` digits, kept as its text."""

    __slots__ = ()


class JsonProblem(ValueError):
    """Why a JSON text was refused: ``line`` (1-based, syntax errors) or ``path`` (keys and
    list positions from the document's root to the faulty value)."""

    def __init__(self, message: str, *, line: int | None = None,
                 path: tuple[str | int, ...] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.path = path


class _DuplicateKeys(dict):
    """An object in which ``key`` was written twice (only exists until :func:`load_json`
    reports it)."""

    duplicate: str = ""


def _parse_int(token: str) -> int | str:
    return int(token) if len(token) <= MAX_INT_DIGITS else JsonBigInt(token)


# A lone surrogate escape: a high one not followed by a low one, or a low one not preceded by
# a high one (a pair, as json.dumps writes every emoji, is one character and fine).
_SURROGATE_ESCAPE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}")


def _lone_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _find(payload: Any, bad: Callable[[Any, Any], str | None]) -> tuple[tuple, str] | None:
    """The first (path, message) for which ``bad(key, value)`` says something, depth first,
    without recursion (the payload may be up to the parser's own depth limit)."""
    stack: list[tuple[tuple, Any, Any]] = [((), None, payload)]
    while stack:
        path, key, value = stack.pop()
        message = bad(key, value)
        if message is not None:
            return path, message
        if isinstance(value, dict):
            items = list(value.items())
            stack.extend(((*path, k), k, v) for k, v in reversed(items))
        elif isinstance(value, list):
            stack.extend(((*path, i), i, v) for i, v in reversed(list(enumerate(value))))
    return None


def _depth_at(payload: Any, limit: int) -> tuple | None:
    """Path of the first value nested deeper than ``limit`` levels, or None."""
    stack: list[tuple[tuple, Any]] = [((), payload)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, dict | list):
            if len(path) >= limit:
                return path
            children = value.items() if isinstance(value, dict) else enumerate(value)
            stack.extend(((*path, k), v) for k, v in children)
    return None


def _bracket_depth(data: bytes | bytearray | str) -> int:
    """An upper bound of the nesting depth: brackets counted as if none were inside a string
    (vectorised, in 16 MB blocks). Cheap, so the exact walk runs only when this is high."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    view = np.frombuffer(data, dtype=np.uint8)
    depth, deepest, block = 0, 0, 1 << 24
    for start in range(0, view.size, block):
        part = view[start:start + block]
        step = ((part == 0x5B) | (part == 0x7B)).astype(np.int32)
        step -= ((part == 0x5D) | (part == 0x7D))
        if not step.any():
            continue
        running = np.cumsum(step, dtype=np.int64) + depth
        deepest = max(deepest, int(running.max()))
        depth = int(running[-1])
    return deepest


def load_json(text: str, *, raw: bytes | bytearray | None = None) -> Any:
    """Parse one JSON document strictly; raise :class:`JsonProblem` naming where it fails.

    ``raw`` (the undecoded bytes, optional) lets the depth pre-check skip a re-encode. The
    exact checks walk the parsed document only when a cheap test says they might fail
    (a duplicate seen by the parser, a surrogate escape or a deep bracket in the text).
    """
    duplicates: list[bool] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(items)
        if len(obj) == len(items):
            return obj
        marked = _DuplicateKeys(obj)
        seen: set[str] = set()
        for key, _ in items:
            if key in seen:
                marked.duplicate = key
                break
            seen.add(key)
        duplicates.append(True)
        return marked

    deep = (f"JSON nested deeper than {MAX_JSON_DEPTH} levels; a run is a list of flat "
            "records")
    try:
        payload = json.loads(text, parse_constant=JsonConstant, parse_int=_parse_int,
                             object_pairs_hook=pairs)
    except json.JSONDecodeError as exc:
        what = "truncated JSON" if exc.pos >= len(text.rstrip()) else "invalid JSON"
        raise JsonProblem(f"{what}: {exc.msg} (column {exc.colno})", line=exc.lineno) from None
    except RecursionError:
        raise JsonProblem(deep) from None
    # Counting brackets is a bound too, and costs nothing on a short text (one JSON Lines
    # line): the vectorised walk only for texts that may be deep.
    if text.count("[") + text.count("{") > MAX_JSON_DEPTH \
            and _bracket_depth(text if raw is None else raw) > MAX_JSON_DEPTH:
        path = _depth_at(payload, MAX_JSON_DEPTH)
        if path is not None:
            raise JsonProblem(deep, path=path)
    if duplicates:
        found = _find(payload, lambda key, value: "duplicate"
                      if isinstance(value, _DuplicateKeys) else None)
        if found is not None:
            obj = payload
            for part in found[0]:
                obj = obj[part]
            raise JsonProblem(f"key {obj.duplicate!r} appears twice in one object; JSON keys "
                              "must be unique (which value is meant?)",
                              path=(*found[0], obj.duplicate))
    if _SURROGATE_ESCAPE.search(text):
        lone = ("a lone surrogate escape (\\ud800-\\udfff without its pair) is not text; the "
                "file was written by a broken encoder")
        found = _find(payload, lambda key, value: lone if (
            (isinstance(key, str) and _lone_surrogate(key))
            or (isinstance(value, str) and _lone_surrogate(value))) else None)
        if found is not None:
            raise JsonProblem(found[1], path=found[0])
    return payload


class NativeError(ValueError):
    """A native file that cannot be converted; :mod:`kbench_core.io` turns it into a
    ``RunFormatError`` naming the file and, when given, the row (``where``) and field."""

    def __init__(self, message: str, *, where: int | str | None = None,
                 field: str | None = None, unit: str = "record") -> None:
        super().__init__(message)
        self.message = message
        self.where = where
        self.field = field
        self.unit = unit


@dataclass(frozen=True)
class Converted:
    """A native run reshaped to canonical columns, not yet validated.

    ``numbers`` names each row's origin for error messages (1-based record numbers, or member
    paths such as ``detector_a/judge_outputs/j_x_direct.json``); ``unit`` says what it counts
    ("record", "file", ...). ``warnings`` are shown with the run (e.g. "ground truth inferred").
    """

    kind: str
    frame: pd.DataFrame
    numbers: np.ndarray
    unit: str = "record"
    warnings: tuple[str, ...] = ()
    meta: Mapping[str, Any] = field(default_factory=dict)


JsonConverter = Callable[[str, Any, Mapping[str, Any]], Converted]
FilesConverter = Callable[[str, Mapping[str, bytes], Mapping[str, Any]], Converted]
TableConverter = Callable[[str, pd.DataFrame, Mapping[str, Any]], Converted]


@dataclass(frozen=True)
class NativeFormat:
    """One benchmark output format.

    ``matches_json(payload)`` / ``from_json(filename, payload, options)`` handle a single JSON
    document (already parsed, NaN tokens kept as text); ``matches_files(paths)`` /
    ``from_files(filename, files, options)`` handle a folder or archive given as
    ``{relative path: bytes}``. ``options`` carries the extra keyword arguments of ``load_run``
    (e.g. ``ground_truth`` as a ``(filename, bytes)`` pair). ``matches_table(columns)`` /
    ``from_table(filename, frame, options)`` reshape a table already parsed from CSV, TSV, JSON
    Lines or Parquet (e.g. a benchmark's CSV whose key is spread over several columns); the
    converted frame keeps the table's row order, so its line numbers still name the rows.
    """

    name: str
    kind: str
    matches_json: Callable[[Any], bool] | None = None
    from_json: JsonConverter | None = None
    matches_files: Callable[[Sequence[str]], bool] | None = None
    from_files: FilesConverter | None = None
    matches_table: Callable[[Sequence[str]], bool] | None = None
    from_table: TableConverter | None = None
    advice: bool = False  # recognises an artefact only to refuse it, saying what to upload


def skipped_note(files: Mapping[str, bytes]) -> str | None:
    """The warning naming the hidden members a folder or archive reader skipped
    (:attr:`kbench_core.bundles.Members.skipped`), or None when it skipped none."""
    skipped = list(getattr(files, "skipped", ()))
    if not skipped:
        return None
    shown = ", ".join(repr(p.encode("unicode_escape").decode("ascii")[:120])
                      for p in skipped[:5])
    more = f" and {len(skipped) - 5:,} more" if len(skipped) > 5 else ""
    return (f"skipped {len(skipped):,} hidden, macOS resource-fork or unrelated member(s) "
            "(names starting with '.', __MACOSX/, files other than JSON, CSV, TSV, text or "
            f"Markdown), unread: {shown}{more}")


def check_labels(converted: Converted) -> Converted:
    """``converted`` unchanged, or :class:`NativeError` naming the row and field of the first
    label (a key or category column of its kind: model, bias, study, judge, ...) longer than
    :data:`MAX_LABEL_CHARS`. A label is a name shown in every table, legend and message; a
    million-character configuration key is no name (long free text, such as responses, is not
    a label and not capped here)."""
    from kbench_core import families

    if not families.is_registered(converted.kind):
        return converted
    spec = families.spec(converted.kind)
    labels = dict.fromkeys([*spec.key, *(c.name for c in spec.columns if c.type == "category")])
    frame = converted.frame
    for column in labels:
        if column not in frame.columns:
            continue
        values = frame[column]
        if not (pd.api.types.is_object_dtype(values.dtype)
                or pd.api.types.is_string_dtype(values.dtype)):
            continue
        # Measured on the distinct labels: a million rows hold a few hundred names.
        try:
            codes, uniques = pd.factorize(values)
        except TypeError:  # an unhashable value: validation names it later
            continue
        long = np.array([isinstance(v, str) and len(v) > MAX_LABEL_CHARS for v in uniques],
                        dtype=bool)
        if long.any():
            row = int(np.argmax(long[codes] & (codes >= 0)))
            lengths = {row: len(str(values.iat[row]))}
            where = converted.numbers[row] if row < len(converted.numbers) else None
            raise NativeError(f"a label of {int(lengths[row]):,} characters, over the limit of "
                              f"{MAX_LABEL_CHARS:,} characters for a name", where=where,
                              field=column, unit=converted.unit)
    return converted


def _guarded(fmt: NativeFormat) -> NativeFormat:
    """``fmt`` whose converters check the labels they return (:func:`check_labels`) and, for
    folders and archives, warn of the members the reader skipped."""
    changes: dict[str, Any] = {}
    if fmt.from_json is not None:
        from_json = fmt.from_json
        changes["from_json"] = lambda filename, payload, options: check_labels(
            from_json(filename, payload, options))
    if fmt.from_table is not None:
        from_table = fmt.from_table
        changes["from_table"] = lambda filename, frame, options: check_labels(
            from_table(filename, frame, options))
    if fmt.from_files is not None:
        from_files = _noting_skipped(fmt.from_files)
        changes["from_files"] = lambda filename, files, options: check_labels(
            from_files(filename, files, options))
    return replace(fmt, **changes)


def _noting_skipped(convert: FilesConverter) -> FilesConverter:
    """``convert`` whose run also warns of the members the reader skipped, so no file of an
    archive is left out without a word, whichever format converts it."""

    def wrapped(filename: str, files: Mapping[str, bytes],
                options: Mapping[str, Any]) -> Converted:
        converted = convert(filename, files, options)
        note = skipped_note(files)
        if note is None:
            return converted
        return replace(converted, warnings=(note, *converted.warnings))

    return wrapped
