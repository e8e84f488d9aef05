"""Validating a parsed table against its family's schema: every cell converted without
coercion (a word where a number goes is a problem, not NaN), required columns and values, the
family's row rules, cell sizes and keys; problems named by row and field (at most
:data:`~kbench_core.problems.MAX_LISTED_PROBLEMS`, then a count)."""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from kbench_core import families, native
from kbench_core.problems import (
    MAX_LISTED_PROBLEMS,
    OnError,
    Problem,
    RunFormatError,
)
from kbench_core.problems import show_value as _show
from kbench_core.readers import _Table
from kbench_core.schema import Column, KindSpec
from kbench_core.validation.columns import (
    _check_keys,
    _check_text_sizes,
    _finish_types,
)

_TRUE = frozenset({"true", "1", "yes", "t", "y"})
_FALSE = frozenset({"false", "0", "no", "f", "n"})
_NONFINITE = frozenset({"nan", "-nan", "+nan", "inf", "-inf", "+inf", "infinity",
                        "-infinity", "+infinity"})



# ---------------------------------------------------------------------------- validation


class _Collector:
    """Gathers problems per row without building millions of messages."""

    def __init__(self, table: _Table) -> None:
        self.table = table
        self.bad_rows = np.zeros(len(table.frame), dtype=bool)
        self.problems: list[tuple[int, int, str, str]] = []  # (position, order, field, msg)
        self.total = 0
        self._order = 0

    def add(self, mask: np.ndarray, fieldname: str | None, message: Any) -> None:
        """Flag rows where ``mask``; ``message`` is a string or a callable(position) -> str."""
        positions = np.flatnonzero(mask)
        if positions.size == 0:
            return
        self.bad_rows[positions] = True
        self.total += positions.size
        for pos in positions[:MAX_LISTED_PROBLEMS]:
            text = message(int(pos)) if callable(message) else message
            self.problems.append((int(pos), self._order, fieldname or "", text))
            self._order += 1

    def listed(self) -> list[Problem]:
        ordered = sorted(self.problems)[:MAX_LISTED_PROBLEMS]
        rows = self.table.row_numbers
        return [Problem(_row_label(rows[pos]), fld or None, msg, self.table.unit)
                for pos, _, fld, msg in ordered]


def _row_label(value: Any) -> int | str:
    return int(value) if isinstance(value, int | np.integer) else str(value)


def _missing_mask(series: pd.Series) -> np.ndarray:
    mask = series.isna().to_numpy().copy()
    if pd.api.types.is_string_dtype(series.dtype) and series.dtype != object:
        mask |= series.str.strip().eq("").fillna(False).to_numpy(dtype=bool)
    elif series.dtype == object:
        blank = series.map(lambda v: isinstance(v, str) and v.strip() == "")
        mask |= blank.to_numpy(dtype=bool)
    return mask


def _too_large(col: Column, value: Any) -> str:
    """The message for a number too large for a float (e.g. 400 digits, or 1e999)."""
    if isinstance(value, int | np.integer) and not isinstance(value, bool):
        digits = int(abs(int(value)).bit_length() * math.log10(2)) + 1
    else:
        mantissa = re.split("[eE]", str(value).strip(), maxsplit=1)[0]
        digits = sum(ch.isdigit() for ch in mantissa)
    if digits > 15:
        why = (f"it has {digits:,} digits, and a number of more than 15 digits cannot be "
               "stored exactly")
    else:
        why = "it is too large for a number (beyond 1.8e308)"
    return f"{_show(value)} is out of range: expected {col.expectation()}; {why}"


def _to_numbers(series: pd.Series, missing: np.ndarray, col: Column, out: _Collector,
                nonfinite: np.ndarray | None,
                overflow: tuple[np.ndarray, dict[int, str]] | None = None) -> np.ndarray:
    """Float values of a numeric column; NaN where missing or invalid (invalid is reported).

    ``overflow`` holds the cells the reader found too large for a float (a CSV's 400-digit
    integer is read as infinity), with their text."""
    if overflow is not None:
        mask, texts = overflow
        out.add(mask, col.name, lambda p: _too_large(col, texts.get(p, "")))
        missing = missing | mask  # reported here: not again as infinity or out of range
    if pd.api.types.is_bool_dtype(series.dtype):
        out.add(~missing, col.name, f"expected {col.expectation()}, got a true/false value")
        return np.full(len(series), np.nan)
    # A Parquet timestamp or duration is no number: its nanoseconds would pass as one
    # (a 2024 date as 1.7e18 "out of range", a duration of 1 s as a score of 1).
    temporal = ("a date or time" if pd.api.types.is_datetime64_any_dtype(series.dtype)
                else "a duration" if pd.api.types.is_timedelta64_dtype(series.dtype) else None)
    if temporal is not None:
        out.add(~missing, col.name, f"expected {col.expectation()}, got {temporal}")
        return np.full(len(series), np.nan)
    if pd.api.types.is_numeric_dtype(series.dtype):
        values = series.to_numpy(dtype=float, na_value=np.nan)
    else:
        raw = series.astype(object)
        is_bool = raw.map(lambda v: isinstance(v, bool | np.bool_)).to_numpy(dtype=bool)
        text = raw.where(~is_bool, None)
        values = _floats(text)
        unparsed = np.isnan(values) & ~missing
        nonnum_text = text.map(lambda v: isinstance(v, str)
                               and v.strip().lower() in _NONFINITE).to_numpy(dtype=bool)
        if is_bool.any():
            out.add(is_bool & ~missing, col.name,
                    f"expected {col.expectation()}, got a true/false value")
        # A number too long for a float (400 digits) became inf without being written so.
        too_large = np.isinf(values) & ~nonnum_text
        for pos in np.flatnonzero(unparsed & ~nonnum_text & ~is_bool):
            # An integer too long for pandas' parser (thousands of digits) is no word.
            cell = text.iat[pos]
            if isinstance(cell, str) and cell.strip().lstrip("+-").isdigit():
                too_large[pos] = True
        bad = unparsed & ~too_large & ~nonnum_text & ~is_bool
        out.add(bad, col.name, lambda p: f"expected {col.expectation()}, got "
                                         f"{_show(series.iat[p])}")
        out.add(too_large & ~is_bool, col.name,
                lambda p: _too_large(col, series.iat[p]))
        values = np.where(too_large, np.nan, values)
        nonfinite = (nonfinite if nonfinite is not None else np.zeros(len(series), bool)) | (
            nonnum_text & ~missing)
        values = np.where(nonnum_text, np.nan, values)
    if overflow is not None:
        values = np.where(overflow[0], np.nan, values)
    if nonfinite is None:
        nonfinite = ~np.isfinite(values) & ~missing & ~np.isnan(values)
    if nonfinite.any():
        out.add(nonfinite, col.name, "NaN and infinity are not valid values; leave the cell "
                                     "empty when the value is unknown")
        values = np.where(nonfinite, np.nan, values)
    ok = ~np.isnan(values)
    if col.type == "int":
        frac = ok & (values != np.floor(values))
        out.add(frac, col.name, lambda p: f"expected a whole number, got {_show(series.iat[p])}")
    if col.low is not None:
        below = ok & ((values <= col.low) if col.low_open else (values < col.low))
        out.add(below, col.name, lambda p: f"{values[p]:g} is out of range: expected "
                                           f"{col.expectation()}")
    if col.high is not None:
        above = ok & (values > col.high)
        out.add(above, col.name, lambda p: f"{values[p]:g} is out of range: expected "
                                           f"{col.expectation()}")
    return values


def _strip_if_text(value: Any) -> Any:
    return value.strip() if isinstance(value, str) else value


def _float_or_nan(value: Any) -> float:
    """One cell as a float; NaN when it is no number (validation then names it)."""
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return math.nan
    if isinstance(value, int | float | np.integer | np.floating) and not isinstance(
            value, bool | np.bool_):
        try:
            return float(value)
        except OverflowError:
            return math.inf
    return math.nan


def _floats(values: pd.Series) -> np.ndarray:
    """Float values of an object column: vectorised, with a per-cell fallback for what pandas
    cannot convert (integers too long for a float, nested lists, odd types)."""
    try:
        converted = pd.to_numeric(values.map(_strip_if_text), errors="coerce")
        return converted.to_numpy(dtype=float, na_value=np.nan)
    except (OverflowError, TypeError, ValueError):
        return values.map(_float_or_nan).to_numpy(dtype=float)


def _to_bools(series: pd.Series, missing: np.ndarray, col: Column,
              out: _Collector) -> np.ndarray:
    """Booleans as a float array (1/0, NaN missing) so missing cells survive until reported."""
    if pd.api.types.is_bool_dtype(series.dtype):
        return series.to_numpy(dtype=float, na_value=np.nan)
    if pd.api.types.is_numeric_dtype(series.dtype):
        values = series.to_numpy(dtype=float, na_value=np.nan)
        bad = ~missing & ~np.isin(values, (0.0, 1.0))
        out.add(bad, col.name, lambda p: f"expected true or false (or 1/0), got "
                                         f"{_show(series.iat[p])}")
        return np.where(bad, np.nan, values)

    def parse(value: Any) -> float:
        if isinstance(value, bool | np.bool_):
            return float(value)
        if isinstance(value, int | float) and not isinstance(value, str) and value in (0, 1):
            return float(value)
        if isinstance(value, str):
            low = value.strip().lower()
            if low in _TRUE:
                return 1.0
            if low in _FALSE:
                return 0.0
        return math.nan

    values = series.astype(object).map(parse).to_numpy(dtype=float)
    bad = np.isnan(values) & ~missing
    out.add(bad, col.name, lambda p: f"expected true or false, got {_show(series.iat[p])}")
    return values


def _to_lines(series: pd.Series, missing: np.ndarray, col: Column,
              out: _Collector) -> pd.Series:
    """Line lists normalised to '12;13' text (lists from JSON or Parquet included)."""

    def norm(value: Any) -> str | None:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return None
        if isinstance(value, list | tuple | np.ndarray):
            parts = list(value)
        elif isinstance(value, int | np.integer) and not isinstance(value, bool):
            parts = [value]
        elif isinstance(value, str):
            parts = [p for p in re.split(r"[;,\s]+", value.strip()) if p]
        else:
            return "\x00bad"
        numbers = []
        for part in parts:
            try:
                num = int(part)
            except (TypeError, ValueError, OverflowError):
                return "\x00bad"
            if (isinstance(part, float) and part != num) or num < 0:
                return "\x00bad"
            numbers.append(num)
        return ";".join(map(str, numbers)) if numbers else None

    raw = series.astype(object)
    if pd.api.types.infer_dtype(raw, skipna=True) not in ("string", "empty"):
        # Lists, numbers or a mix: row by row, so that 1, 1.0 and True stay apart.
        normalised = np.array([norm(value) for value in raw], dtype=object)
        codes = np.arange(len(raw))
    else:
        # Text: normalised once per distinct value (a run repeats the same line lists).
        codes, uniques = pd.factorize(raw, use_na_sentinel=False)
        normalised = np.array([norm(value) for value in uniques], dtype=object)
    values = pd.Series(normalised[codes], index=series.index, dtype=object)
    bad = (normalised == "\x00bad")[codes]
    out.add(bad, col.name, lambda p: f"expected {col.expectation()}, got "
                                     f"{_show(series.iat[p])}")
    return values.where(~bad, None)


def _to_text(series: pd.Series, col: Column, out: _Collector,
             categorical: bool) -> tuple[pd.Series, np.ndarray]:
    """Labels as a categorical (or text) column, and the mask of missing cells.

    Work happens on the distinct values, not the rows, so a million rows with a few hundred
    labels cost one hash pass.
    """
    odd = np.zeros(len(series), dtype=np.int8)
    if series.dtype == object:
        odd = series.map(_odd_label).to_numpy(dtype=np.int8)
        if odd.any():
            out.add(odd == 1, col.name, "expected text, got a nested value (an object or a "
                                        "list)")
            out.add(odd == 2, col.name, "a bare NaN or Infinity (not JSON) is no label; "
                                        "write null when the value is unknown, or \"NaN\" "
                                        "in quotes if that is the name")
            series = series.where(odd == 0, None)
    if not categorical:
        if isinstance(series.dtype, pd.CategoricalDtype):
            # Dictionary-encoded text (Parquet): convert the distinct values, then take.
            # The take happens in Arrow: building a million-row text column from Python
            # strings cost half a second per column.
            labels = pa.array([_as_text(c) for c in series.cat.categories] + [None],
                              type=pa.large_string())
            codes = series.cat.codes.to_numpy()
            taken = labels.take(pa.array(np.where(codes < 0, len(labels) - 1, codes)))
            series = pd.Series(pd.array(taken, dtype="str"), index=series.index)
        elif series.dtype == object:
            series = series.map(_as_text)
        elif not pd.api.types.is_string_dtype(series.dtype):
            series = series.astype(object).map(_as_label)
        missing = series.isna().to_numpy()
        if col.required:
            missing = missing | series.astype("str").str.strip().eq("").to_numpy(dtype=bool)
        if missing.any():  # else the where would only copy the column
            series = series.where(~missing, None)
        return series, missing & (odd == 0)
    cat = series.astype("category")
    labels = [_as_label(c) for c in cat.cat.categories]
    uniq = list(dict.fromkeys(lbl for lbl in labels if lbl not in (None, "")))
    position = {lbl: i for i, lbl in enumerate(uniq)}
    # codes as narrow as the frame's (int8 for < 128 labels): an int64 remap of a million
    # rows was eight times the column it rebuilds
    width = pd.Categorical.from_codes([], categories=uniq).codes.dtype
    remap = np.array([position.get(lbl, -1) for lbl in labels] + [-1], dtype=width)
    codes = cat.cat.codes.to_numpy()
    if len(remap) - 1 != len(uniq) or (remap[:-1] != np.arange(len(uniq))).any():
        codes = remap[codes]  # code -1 indexes the trailing -1
    # else: labels already clean and in order (a reader's sorted dictionary): codes kept
    result = pd.Series(pd.Categorical.from_codes(codes, categories=uniq, validate=False),
                       index=series.index)
    missing = (codes == -1) & (odd == 0)  # a nested value is reported once, not as missing
    if col.allowed is not None:
        allowed = set(col.allowed)
        bad_codes = np.array([lbl not in allowed for lbl in uniq] + [False])
        bad = bad_codes[codes]
        out.add(bad, col.name, lambda p: f"unknown value {_show(series.iat[p])}: expected "
                                         f"{col.expectation()}")
    return result, missing


def _odd_label(value: Any) -> int:
    """0 for a usable label, 1 for a nested value (JSON object or list, Parquet list), 2 for
    a bare NaN/Infinity token of a JSON file."""
    if isinstance(value, str):
        return 2 if type(value) is native.JsonConstant else 0
    if isinstance(value, dict | list | tuple | set | np.ndarray | bytes | bytearray):
        return 1
    return 0


def _as_text(value: Any) -> Any:
    """Free text kept verbatim; numbers and booleans from JSON rendered as a user wrote them."""
    if isinstance(value, str) or value is None:
        return value
    return _as_label(value)


def _as_label(value: Any) -> Any:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, float) and math.isnan(value):
        return None  # pandas' missing value (an all-empty column), never the text "nan"
    if isinstance(value, bool | np.bool_):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return value if value is None else str(value)


def _validate(filename: str, table: _Table, spec: KindSpec, on_error: OnError,
              warnings: list[str]) -> pd.DataFrame:
    frame = table.frame
    missing_cols = [c.name for c in spec.columns if c.required and c.name not in frame.columns]
    problems = [Problem(None, name, f"required column '{name}' is missing "
                                    f"({spec.column(name).meaning or spec.kind + ' runs'})")
                for name in missing_cols]
    family = families.get(spec.kind)
    if family.rules is not None:  # file-level problems: reported with a mask of None

        def file_problem(mask: Any, field: str | None, message: str) -> None:
            if mask is None:
                problems.append(Problem(None, field, message))

        family.rules({}, frame, file_problem)
    if problems:
        raise RunFormatError(filename, problems)

    out = _Collector(table)
    result: dict[str, Any] = {}
    for col in spec.columns_of(list(frame.columns)):
        if col.name not in frame.columns:
            continue
        series = frame[col.name]
        if col.type in ("text", "category"):
            result[col.name], missing = _to_text(series, col, out, col.type == "category")
            if col.required is True:
                out.add(missing, col.name, f"missing value: expected {col.expectation()}")
            continue
        missing = _missing_mask(series)
        if col.required is True:
            out.add(missing, col.name, f"missing value: expected {col.expectation()}")
        if col.type in ("float", "int"):
            values = _to_numbers(series, missing, col, out, table.nonfinite.get(col.name),
                                 table.overflow.get(col.name))
            result[col.name] = values
        elif col.type == "bool":
            result[col.name] = _to_bools(series, missing, col, out)
        else:
            result[col.name] = _to_lines(series, missing, col, out)
    _check_rules(spec, result, frame, out)
    _check_text_sizes(frame, out)

    # copy=False: a column is not copied once more beside the parsed frame (the peak of a
    # big load); a read-only view of a parsed column (CoW) goes in as that column
    canonical = pd.DataFrame({name: _owned(values, frame[name]) for name, values in
                              result.items()}, index=frame.index, copy=False)
    extra = [c for c in frame.columns if c not in result]
    if extra:  # one concat: inserting 2,000 columns one by one is quadratic
        canonical = pd.concat([canonical, frame[extra]], axis=1)

    _check_keys(spec, canonical, out)
    if out.total:
        listed = out.listed()
        if on_error == "raise":
            raise RunFormatError(filename, listed, out.total)
        n_bad = int(out.bad_rows.sum())
        if n_bad == len(canonical):
            raise RunFormatError(filename, listed, out.total)
        warnings.append(f"skipped {n_bad} invalid row{'s' * (n_bad != 1)} "
                        f"({out.total} problem{'s' * (out.total != 1)})")
        warnings.extend(str(p) for p in listed)
        if out.total > len(listed):
            warnings.append(f"... and {out.total - len(listed)} more problems")
        canonical = canonical.loc[~out.bad_rows]
    finished = _finish_types(spec, canonical, skipped=bool(out.total))
    if family.notes is not None:
        warnings.extend(family.notes(finished))
    return finished


def _owned(values: Any, series: pd.Series) -> Any:
    """``values`` as a column the frame can own. pandas hands out read-only views under
    copy-on-write: a view of ``series``' own data (a float column kept as it was read) goes
    in as ``series`` (shared, copied on a first write; not copied beside the parsed frame at
    the peak of a big load); a view of anything else is copied."""
    if isinstance(values, np.ndarray) and not values.flags.writeable:
        if values.dtype == series.dtype and np.may_share_memory(values, series.to_numpy()):
            return series
        return values.copy()
    return values


def _check_rules(spec: KindSpec, result: dict[str, Any], frame: pd.DataFrame,
                 out: _Collector) -> None:
    """The family's rules that tie columns together (row-level problems only; file-level ones
    were reported before the rows were read)."""
    family = families.get(spec.kind)
    if family.rules is None:
        return

    def row_problem(mask: Any, field: str | None, message: str) -> None:
        if mask is not None:
            out.add(mask, field, message)

    family.rules(result, frame, row_problem)
