"""From a parsed table to a validated :class:`Run`: native formats, names, lookalike warnings, and
:func:`combine_runs`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from kbench_core import families, native
from kbench_core.problems import (
    MAX_COLUMNS,
    MAX_ROWS,
    OnError,
)
from kbench_core.problems import fail as _fail
from kbench_core.readers import (
    _decode_labels,
    _from_native,
    _Native,
    _Table,
    _too_many_columns,
    _too_many_rows,
)
from kbench_core.schema import Kind, KindSpec
from kbench_core.text import lookalike_warnings, strip_controls
from kbench_core.validation import _validate

from .run import Run, _Progress, _undetected, detect_kind


def _native_table(filename: str, table: _Table, kind: Kind | None, warnings: list[str],
                  meta: dict[str, Any]) -> _Table:
    """A parsed table reshaped by the first native table format that recognises its columns
    (e.g. HumanStudy-Bench's ``simple_findings.csv``), or the table unchanged."""
    names = [str(c).strip() for c in table.frame.columns]
    decoded = False
    for fmt in native.formats():
        if fmt.matches_table is None or fmt.from_table is None:
            continue
        if kind is not None and kind != fmt.kind:
            continue
        if not fmt.matches_table(names):
            continue
        if not decoded:  # a native converter reads the file's text as it is
            _decode_labels(table)
            decoded = True
        frame = table.frame.set_axis(names, axis=1)
        converted = _from_native(filename, lambda f=fmt, fr=frame: f.from_table(filename, fr,
                                                                                  {}))
        warnings.extend(converted.warnings)
        meta.update(converted.meta)
        meta["format"] = f"{fmt.name} ({meta.get('format', 'table')})"
        return _Table(converted.frame, table.numbers, table.unit, table.nonfinite,
                      table.overflow)
    return table


def _finish(parsed: _Table | _Native, *, name: str, kind: Kind | None, on_error: OnError,
            columns: Mapping[str, str] | None, warnings: list[str],
            meta: dict[str, Any], report: _Progress | None = None) -> Run:
    """Validate a parsed table (canonical or native) and wrap it as a :class:`Run`."""
    filename = str(meta["source"])
    if isinstance(parsed, _Native):
        converted = parsed.converted
        if kind is not None and kind != converted.kind:
            raise _fail(filename, f"this is a {parsed.format.name} file, which holds "
                                  f"{converted.kind} results, not {kind}")
        kind = converted.kind  # type: ignore[assignment]
        warnings.extend(converted.warnings)
        meta.update(converted.meta)
        table = _Table(converted.frame.reset_index(drop=True), np.asarray(converted.numbers),
                       converted.unit)
    else:
        table = _native_table(filename, parsed, kind, warnings, meta)
    frame = table.frame
    frame.columns = [str(c).strip() for c in frame.columns]
    if columns:
        frame = frame.rename(columns=dict(columns))
        if frame.columns.duplicated().any():
            dup = frame.columns[frame.columns.duplicated()][0]
            raise _fail(filename, f"the column mapping makes two columns named {dup!r}",
                        field=dup)
    detected = kind or detect_kind(list(frame.columns))
    if detected is None:
        raise _undetected(filename, list(frame.columns))
    aliases = families.get(detected).aliases
    renames = {c: aliases[c] for c in frame.columns if c in aliases
               and aliases[c] not in frame.columns}
    if renames:
        frame = frame.rename(columns=renames)
    if table.encoded:  # the reader's dictionary columns, under their new names
        mapping = dict(columns or {})
        table.encoded = {renames.get(mapping.get(c, c), mapping.get(c, c))
                         for c in table.encoded}
    theirs = [c for c in frame.columns if reserved(c)]
    if theirs:  # e.g. a row count that every reader would weigh the rows by
        frame = frame.drop(columns=theirs)
        warnings.append(reserved_warning(theirs))
    table.frame = frame
    label_names = {c.name for c in families.spec(detected).columns if c.type == "category"}
    _decode_labels(table, keep=label_names.__contains__)
    if len(frame.columns) > MAX_COLUMNS:
        raise _too_many_columns(filename, len(frame.columns), "the run")
    if len(frame) > MAX_ROWS:
        raise _too_many_rows(filename, len(frame))
    spec = families.spec(detected)
    if report is not None:
        report(0.75, "validate")
    _without_nul(spec, table, warnings)
    canonical = _validate(filename, table, spec, on_error, warnings)
    warnings.extend(_lookalikes(spec, canonical))
    meta.update(rows=len(canonical), columns=list(canonical.columns))
    return Run(name=run_name(name), kind=detected, frame=canonical, meta=meta,
               warnings=tuple(warnings))


RESERVED_PREFIX = "__kbench"  # kbench's own columns (an engine's row counts, file, row)


def reserved(column: object) -> bool:
    """A file's own column under a name kbench uses for its own (``__kbench…``), left out by
    the loader and every engine; in any case, as DuckDB's and Spark's names are
    case-insensitive (a file's ``__KBENCH_ROW`` clashes with the engine's)."""
    return str(column).strip().lower().startswith(RESERVED_PREFIX)


def reserved_warning(columns: list[str]) -> str:
    """The load note of a file's columns left out because kbench uses their names."""
    names = ", ".join(repr(str(c)) for c in columns[:5]) + (" ..." if len(columns) > 5 else "")
    return (f"column{'s' * (len(columns) != 1)} {names} left out: names starting with "
            f"'{RESERVED_PREFIX}' are kbench's own (a run read by an engine carries its row "
            "counts under one); rename the column to keep it")


MAX_RUN_NAME = 200


def run_name(name: str) -> str:
    """A run's name as kbench keeps it: control, bidi and zero-width characters removed, white
    space trimmed, at most 200 characters, ``run`` when nothing is left.

    A run's name comes from a stranger's file name and is shown in every table, legend, file
    name and link; the same rule applies when a saved run comes back from a workspace, so every
    saved run reloads under the name it was saved with.

    >>> run_name("  results\\u202e.csv \\x00")
    'results.csv'
    >>> run_name(" ")
    'run'
    """
    cleaned = strip_controls(name).strip()
    return cleaned[:MAX_RUN_NAME].strip() or "run"


def _without_nul(spec: KindSpec, table: _Table, warnings: list[str]) -> None:
    """Label columns of ``table`` with NUL characters removed, and a warning naming the first
    row of each column that had one.

    A NUL ends a string for C-based readers (spreadsheets, LaTeX, file systems), so
    ``evil\x00model`` would show as ``evil`` in one place and as the whole name in another.
    Checked on the distinct values only, so a million rows of a few labels cost one hash pass.
    """
    frame = table.frame
    for col in spec.columns:
        if col.type != "category" or col.name not in frame:
            continue
        series = frame[col.name]
        if isinstance(series.dtype, pd.CategoricalDtype):
            labels = series.cat.categories
            with_nul = [isinstance(v, str) and "\x00" in v for v in labels]
            bad = np.isin(series.cat.codes.to_numpy(), np.flatnonzero(with_nul))
        elif series.dtype != object and not pd.api.types.is_string_dtype(series.dtype):
            continue  # numbers as labels: no NUL to remove
        else:  # text (Arrow-backed: vectorised) or objects, nested values among them
            bad = series.str.contains("\x00", regex=False).fillna(False).to_numpy(dtype=bool)
        if not bad.any():
            continue
        position = int(np.flatnonzero(bad)[0])
        row = table.row_numbers[position] if len(table.row_numbers) > position else position + 1
        count = int(bad.sum())
        rows = "1 row" if count == 1 else f"{count:,} rows"
        warnings.append(f"field {col.name!r}: {rows} had NUL characters (\\x00) in the "
                        f"label, removed (first: {table.unit} {row})")
        cleaned = series.astype(object).map(
            lambda v: v.replace("\x00", "") if isinstance(v, str) else v)
        frame[col.name] = cleaned


def _lookalikes(spec: KindSpec, frame: pd.DataFrame) -> list[str]:
    """Look-alike labels (invisible, bidi, confusable characters) of the label columns, named
    with escapes; the distinct labels only, so a million rows cost nothing."""
    notes: list[str] = []
    for col in spec.columns:
        if col.type != "category" or col.allowed is not None or col.name not in frame:
            continue
        series = frame[col.name]
        labels = (series.cat.categories if isinstance(series.dtype, pd.CategoricalDtype)
                  else series.dropna().unique())
        notes.extend(lookalike_warnings(col.name, labels))
    return notes


def combine_runs(runs: Sequence[Run]) -> pd.DataFrame:
    """Runs of one kind viewed together: one frame with a ``run`` column.

    A model name that occurs in more than one run is told apart as ``model (run)``; names
    unique to one run stay as they are. Label columns stay categorical (ordered ones keep their
    order).
    """
    if not runs:
        raise ValueError("combine_runs needs at least one run")
    kinds = {run.kind for run in runs}
    if len(kinds) > 1:
        raise ValueError(f"runs of different kinds cannot be combined: {', '.join(sorted(kinds))}")
    if len(runs) == 1:
        return runs[0].frame.assign(run=runs[0].name)
    owners: dict[str, set[str]] = {}
    for run in runs:
        for model in run.models:
            owners.setdefault(model, set()).add(run.name)
    parts = []
    for run in runs:
        frame = run.frame.assign(run=run.name)
        clash = {m: f"{m} ({run.name})" for m in run.models if len(owners[m]) > 1}
        if clash:
            frame["model"] = frame["model"].astype(str).replace(clash)
        parts.append(frame)
    combined = pd.concat(parts, ignore_index=True)
    from kbench_core.kahne._common import WEIGHT

    if WEIGHT in combined:
        # a run an engine reduced to weighted tuples beside a run of plain rows: each of
        # those rows is one response (kbench_core.kahne.row_weights)
        combined[WEIGHT] = combined[WEIGHT].fillna(1).astype("int64")
    for column in runs[0].frame.columns:
        first = runs[0].frame[column].dtype
        if isinstance(first, pd.CategoricalDtype) and column in combined:
            if first.ordered:
                combined[column] = pd.Categorical(combined[column], categories=first.categories,
                                                  ordered=True)
            elif not isinstance(combined[column].dtype, pd.CategoricalDtype):
                combined[column] = combined[column].astype("category")
    combined["run"] = combined["run"].astype("category")
    return combined
