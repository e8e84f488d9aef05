"""The benchmarks' own output formats, turned into canonical run tables.

One module per benchmark (``kahnebench``, ``humanstudy``, ``blockbench``, ...), each exposing
``FORMATS``: a tuple of :class:`NativeFormat`. :func:`kbench_core.io.load_run` asks every format,
in the order of :func:`formats`, whether it recognises a parsed JSON payload (``matches_json``) or
the member paths of a folder or archive (``matches_files``), and the first that does converts it.

A converter only renames and reshapes: it returns canonical column names with the values as the
benchmark wrote them, and :mod:`kbench_core.io` validates them exactly as it validates a canonical
file, so a bad native value gets the same message (file, row, field) as a bad CSV cell. The row
of a native table is named by ``Converted.numbers`` and ``Converted.unit``: a record number in a
JSON list, or the path of the member file a row came from in a folder.

Modules are discovered (``pkgutil``), so adding a benchmark means adding a module, nothing else.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["Converted", "NativeError", "NativeFormat", "formats"]


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


@cache
def formats() -> tuple[NativeFormat, ...]:
    """Every native format of the modules in this package, in module-name order."""
    found: list[NativeFormat] = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        found.extend(getattr(module, "FORMATS", ()))
    return tuple(found)
