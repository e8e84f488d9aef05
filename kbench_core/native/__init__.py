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
Every converter :func:`formats` returns checks its labels (key and category columns: model,
bias, study, judge, ...) against :data:`MAX_LABEL_CHARS` and names the row and field of a longer
one; a folder or archive converter also warns of the hidden members its reader skipped.

:func:`load_json` is the one JSON parser for uploaded text (the loader and every importer use
it), so a JSON file loses nothing silently: duplicate keys, lone surrogates, nesting deeper than
:data:`MAX_JSON_DEPTH` and integers too long for a number are reported with the path of the
value (:class:`JsonProblem`); ``NaN``/``Infinity`` tokens and long integers are kept as marked
text (:class:`JsonConstant`, :class:`JsonBigInt`) so validation can name them.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from kbench_core.native._base import (  # noqa: F401  (re-exported: the names of the old module)
    _SURROGATE_ESCAPE,
    MAX_INT_DIGITS,
    MAX_JSON_DEPTH,
    MAX_LABEL_CHARS,
    Converted,
    FilesConverter,
    JsonBigInt,
    JsonConstant,
    JsonConverter,
    JsonProblem,
    NativeError,
    NativeFormat,
    TableConverter,
    _bracket_depth,
    _depth_at,
    _DuplicateKeys,
    _find,
    _guarded,
    _lone_surrogate,
    _noting_skipped,
    _parse_int,
    check_labels,
    load_json,
    skipped_note,
)

__all__ = ["MAX_JSON_DEPTH", "MAX_LABEL_CHARS", "Converted", "JsonBigInt", "JsonConstant",
           "JsonProblem", "NativeError", "NativeFormat", "check_labels", "formats", "load_json",
           "skipped_note"]


@cache
def formats() -> tuple[NativeFormat, ...]:
    """Every native format of the modules in this package, in module-name order, then the
    folders that are only advised on (:data:`~kbench_core.native._advice.FOLDER_ADVICE`):
    last, so they speak only when no format reads the folder."""
    from kbench_core.native._advice import FOLDER_ADVICE

    found: list[NativeFormat] = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        found.extend(map(_guarded, getattr(module, "FORMATS", ())))
    return (*found, *FOLDER_ADVICE)
