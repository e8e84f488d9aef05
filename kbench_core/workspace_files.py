"""The files of a workspace (:mod:`kbench_core.workspace`): each saved run's JSON sidecar,
read and validated like an upload (strict JSON, an object with a text ``name``, a known
``kind``, an object ``meta`` whose values are checked, a list of text ``warnings``, at most
4 MB), so a tampered or damaged sidecar is a :class:`~kbench_core.io.RunFormatError` naming the
file and field, never a crash."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from kbench_core import families, native
from kbench_core.io import Problem, RunFormatError, run_name

MAX_SIDECAR_BYTES = 4 * 1024**2
_HEX64 = re.compile(r"[0-9a-f]{64}")
MAX_META_TEXT = 4096
MAX_COUNT = 2**53  # a count a float holds exactly: sizes and row counts are far below it
_META_TEXT = ("source", "format", "ground_truth")
_META_COUNTS = ("bytes", "rows")


def _bad(file: str, message: str, field: str | None = None) -> RunFormatError:
    return RunFormatError(file, [Problem(None, field, message)])


def _read_sidecar(path: Path) -> dict[str, Any]:
    """The sidecar's fields, validated; RunFormatError naming the file and field otherwise."""
    name = path.name
    try:
        size = path.stat().st_size
        if size > MAX_SIDECAR_BYTES:
            raise _bad(name, f"workspace metadata of {size:,} bytes, over the 4 MB limit")
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise _bad(name, "missing workspace metadata; remove the .parquet twin or upload the "
                         "run again") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise _bad(name, f"unreadable workspace metadata ({exc})") from None
    try:
        data = native.load_json(text)
    except native.JsonProblem as problem:
        raise _bad(name, f"invalid workspace metadata: {problem.message}",
                   ".".join(map(str, problem.path)) or None) from None
    if not isinstance(data, dict):
        raise _bad(name, f"workspace metadata must be a JSON object, got {type(data).__name__}")
    if not isinstance(data.get("name"), str) or len(data["name"]) > 100_000:
        raise _bad(name, "expected the run's name (text)", "name")
    if not isinstance(data.get("kind"), str) or not families.is_registered(data["kind"]):
        raise _bad(name, f"unknown run kind {str(data.get('kind'))[:40]!r}; expected one of "
                         f"{', '.join(families.kinds())}", "kind")
    meta = data.get("meta", {})
    if not isinstance(meta, dict):
        raise _bad(name, f"expected an object, got {type(meta).__name__}", "meta")
    warnings = data.get("warnings", [])
    if not isinstance(warnings, list) or not all(isinstance(w, str) for w in warnings):
        raise _bad(name, "expected a list of text", "warnings")
    checksum = data.get("parquet_sha256")
    if checksum is not None and not (isinstance(checksum, str) and _HEX64.fullmatch(checksum)):
        raise _bad(name, "expected a SHA-256 (64 hex digits)", "parquet_sha256")
    if "sha256" in meta and not (isinstance(meta["sha256"], str)
                                 and _HEX64.fullmatch(meta["sha256"])):
        raise _bad(name, "expected a SHA-256 (64 hex digits)", "meta.sha256")
    meta = _checked_meta(name, meta)
    models = data.get("models")
    if models is not None and not (isinstance(models, list) and len(models) <= MAX_COUNT
                                   and all(isinstance(m, str) and len(m) <= MAX_META_TEXT
                                           for m in models)):
        raise _bad(name, "expected a list of model names", "models")
    rows = data.get("rows")
    if rows is not None and (not isinstance(rows, int) or isinstance(rows, bool)
                             or not 0 <= rows < MAX_COUNT):
        raise _bad(name, f"expected a count (a whole number from 0 to 2**53), got "
                         f"{str(rows)[:40]!r}", "rows")
    # the loader's rule for names, so a name kbench saved always comes back as it was
    return {"name": run_name(data["name"]), "kind": data["kind"], "meta": meta,
            "warnings": [str(w) for w in warnings], "parquet_sha256": checksum,
            "models": models, "rows": rows}


def _checked_meta(name: str, meta: dict[str, Any]) -> dict[str, Any]:
    """The sidecar's ``meta`` with every value kbench reads checked as an upload's would be:
    counts (``bytes``, ``rows``) non-negative integers below 2**53, texts short text, the
    column list a list of text, a report summary checked like the report's own
    (:func:`kbench_core.native.kahnebench_report.clean_summary`). A tampered value is a
    :class:`RunFormatError` naming ``meta.<key>``, never a crash of a page that shows it."""
    from kbench_core.native.kahnebench_report import clean_summary

    out = dict(meta)
    for key in _META_COUNTS:
        value = meta.get(key)
        # JsonBigInt (a 400-digit integer) is text, so it is refused with the other text.
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)
                                  or not 0 <= value < MAX_COUNT):
            raise _bad(name, f"expected a count (a whole number from 0 to 2**53), got "
                             f"{str(value)[:40]!r}", f"meta.{key}")
    for key in _META_TEXT:
        value = meta.get(key)
        if value is not None and (not isinstance(value, str) or len(value) > MAX_META_TEXT):
            raise _bad(name, f"expected text of at most {MAX_META_TEXT:,} characters",
                       f"meta.{key}")
    columns = meta.get("columns")
    if columns is not None and not (isinstance(columns, list)
                                    and all(isinstance(c, str) for c in columns)):
        raise _bad(name, "expected a list of column names", "meta.columns")
    published = meta.get("published")
    if published is not None and not (isinstance(published, dict)
                                      and all(isinstance(v, str) for v in published.values())):
        raise _bad(name, "expected an object of text", "meta.published")
    summaries = meta.get("summary")
    if summaries is not None:
        if not isinstance(summaries, dict):
            raise _bad(name, f"expected an object of summaries by model, got "
                             f"{type(summaries).__name__}", "meta.summary")
        notes: list[str] = []
        try:
            out["summary"] = {model: clean_summary(value, model, notes)
                              for model, value in summaries.items()}
        except native.NativeError as err:
            raise _bad(name, err.message, f"meta.{err.field}") from None
        if notes:  # a field the importer never writes: the sidecar was edited
            raise _bad(name, notes[0], "meta.summary")
    return out


def _trusted_sidecar(path: Path) -> dict[str, Any]:
    """The validated sidecar of a saved Parquet file, which must record that file's hash."""
    sidecar = _read_sidecar(path.with_suffix(".json"))
    if sidecar["parquet_sha256"] is None:
        # Without the file's own hash nothing ties the sidecar's provenance (its
        # meta.sha256) to this content: a replaced file would carry the old hash.
        raise _bad(path.with_suffix(".json").name,
                   "the workspace metadata records no SHA-256 of the Parquet "
                   "file, so its content cannot be checked against what was "
                   "saved and its provenance cannot be trusted; remove it and "
                   "upload the run again", "parquet_sha256")
    return sidecar
