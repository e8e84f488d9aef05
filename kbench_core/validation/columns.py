"""Checks over whole columns once the cells are converted: cell sizes, keys (duplicates, by a
vectorised pass), and the canonical frame's final types (ordered categories and labels)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from kbench_core import families
from kbench_core.problems import MAX_CELL_CHARS, MAX_LISTED_PROBLEMS
from kbench_core.problems import show_value as _show
from kbench_core.schema import KindSpec

if TYPE_CHECKING:
    from kbench_core.validation import _Collector

_ORDERED = frozenset({"intensity", "severity", "type_match"})


def _check_text_sizes(frame: pd.DataFrame, out: _Collector) -> None:
    for name in frame.columns:
        series = frame[name]
        if isinstance(series.dtype, pd.CategoricalDtype):
            # Labels: measured once per distinct value, then spread over the rows by code.
            categories = series.cat.categories
            if not len(categories) or not pd.api.types.is_string_dtype(categories.dtype):
                continue
            per_label = categories.str.len().to_numpy(dtype=np.int64, na_value=0)
            if per_label.max() <= MAX_CELL_CHARS:
                continue
            lengths = np.append(per_label, 0)[series.cat.codes.to_numpy()]
        elif isinstance(series.array, pd.arrays.ArrowStringArray) and _max_bytes(
                series) <= MAX_CELL_CHARS:
            continue  # no cell has more bytes, hence characters, than the limit
        elif pd.api.types.is_string_dtype(series.dtype) and series.dtype != object:
            lengths = series.str.len().fillna(0).to_numpy()
        elif series.dtype == object:
            lengths = series.map(lambda v: len(v) if isinstance(v, str) else 0).to_numpy()
        else:
            continue
        out.add(lengths > MAX_CELL_CHARS, str(name),
                f"cell longer than {MAX_CELL_CHARS:,} characters")


def _max_bytes(series: pd.Series) -> int:
    """The longest value of an Arrow-backed text column in bytes (from its offsets: no pass
    over the characters)."""
    values = pa.array(series.array)
    if len(values) == 0:
        return 0
    return int(pc.max(pc.binary_length(values)).as_py() or 0)


def _all_distinct(series: pd.Series, *, skip_missing: bool) -> bool:
    """True when a text column (pandas' Arrow-backed ``str``) holds no value twice, missing
    values left out with ``skip_missing`` (else any missing value means False); False when
    unsure, so the caller runs the full check that names the repeats.

    One Arrow hash pass over the strings: pandas' ``duplicated`` on the frame cost about as
    much as reading a 1M-row Parquet file.
    """
    if not isinstance(series.array, pd.arrays.ArrowStringArray):
        return False
    values = pa.array(series.array)  # zero copy: the Arrow data behind the column
    if values.null_count:
        if not skip_missing:
            return False
        values = values.drop_null()
    words = _short_words(values)
    if words is not None:  # the strings themselves as integers, in the strings' order
        if len(words) < 2 or bool((words[1:] > words[:-1]).all()):
            return True  # ids in ascending order: one comparison per row
        words = np.sort(words)
        return bool((words[1:] != words[:-1]).all())
    return len(pc.unique(values)) == len(values)


def _short_words(values: pa.Array | pa.ChunkedArray) -> np.ndarray | None:
    """Strings of one length of at most 8 bytes (ids such as ``b0000001``) as one uint64
    each, zero-padded and big-endian (so words order as the strings do): two strings are
    equal exactly when their words are; None for any other column."""
    chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]
    words = []
    width = None
    for chunk in chunks:
        if len(chunk) == 0:
            continue
        if chunk.null_count or not (pa.types.is_string(chunk.type)
                                    or pa.types.is_large_string(chunk.type)):
            return None
        kind = np.int64 if pa.types.is_large_string(chunk.type) else np.int32
        offsets = np.frombuffer(chunk.buffers()[1], dtype=kind,
                                count=chunk.offset + len(chunk) + 1)[chunk.offset:]
        lengths = np.diff(offsets)
        size = int(lengths[0])
        if width is None:
            width = size
        if size != width or not 0 < size <= 8 or (lengths != size).any():
            return None
        data = np.frombuffer(chunk.buffers()[2], dtype=np.uint8)
        block = np.zeros((len(chunk), 8), dtype=np.uint8)
        block[:, :size] = data[offsets[0]:offsets[-1]].reshape(len(chunk), size)
        words.append(block.view(">u8").ravel())
    return np.concatenate(words) if words else None


def _check_keys(spec: KindSpec, canonical: pd.DataFrame, out: _Collector) -> None:
    """Flag every repeat of a key after its first occurrence, naming where it was first seen."""
    key = [k for k in spec.key if k in canonical.columns]
    where_given = families.get(spec.kind).key_where_given
    if not key or (where_given and len(key) < len(spec.key)):
        return
    if len(key) == 1 and _all_distinct(canonical[key[0]], skip_missing=where_given):
        return
    keyed = canonical[key].reset_index(drop=True)
    if where_given:  # e.g. bias rows are keyed only where an id is given
        keyed = keyed[keyed[key].notna().all(axis=1)]
    if not keyed.duplicated().any():
        return
    group = keyed.groupby(key, observed=True, dropna=False, sort=False).ngroup().to_numpy()
    positions = keyed.index.to_numpy()
    firsts = pd.Series(positions).groupby(group).transform("min").to_numpy()
    later = positions != firsts
    mask = np.zeros(len(canonical), dtype=bool)
    mask[positions[later]] = True
    first_for = dict(zip(positions[later][:MAX_LISTED_PROBLEMS],
                         firsts[later][:MAX_LISTED_PROBLEMS], strict=True))
    rows = out.table.row_numbers
    names = ", ".join(key)

    def message(pos: int) -> str:
        values = ", ".join(_show(canonical[k].iat[pos]) for k in key)
        return (f"duplicate key ({names}) = ({values}); first seen at "
                f"{out.table.unit} {rows[first_for[pos]]}")

    out.add(mask, names, message)


def _set_categories(series: pd.Series, categories: list[str], *,
                    ordered: bool) -> pd.Series:
    """``series.cat.set_categories(categories, ordered=ordered)`` (a label not among them
    becomes missing) without its row-length int64 copy of the codes: pandas' recoding takes
    through a platform-int index (8 bytes a row, against the 1 of the codes); a lookup
    indexed by the narrow codes makes only the new codes."""
    dtype = pd.CategoricalDtype(categories, ordered=ordered)
    old = series.cat.categories
    if old.equals(dtype.categories):
        return series.cat.set_categories(categories, ordered=ordered)  # no recoding
    width = pd.Categorical.from_codes([], dtype=dtype).codes.dtype
    lookup = np.append(dtype.categories.get_indexer(old), -1).astype(width)
    codes = lookup[series.cat.codes.to_numpy()]  # code -1 indexes the trailing -1
    return pd.Series(pd.Categorical.from_codes(codes, dtype=dtype, validate=False),
                     index=series.index, name=series.name)


def _finish_types(spec: KindSpec, frame: pd.DataFrame, *, skipped: bool) -> pd.DataFrame:
    frame = frame.reset_index(drop=True)
    for col in spec.columns_of(list(frame.columns)):
        if col.name not in frame.columns:
            continue
        if col.type == "bool":
            values = frame[col.name].to_numpy(dtype=float)
            if np.isnan(values).any():
                frame[col.name] = pd.array(
                    np.where(np.isnan(values), pd.NA, values == 1.0), dtype="boolean")
            else:
                frame[col.name] = values == 1.0
        elif col.type == "int":
            values = frame[col.name].to_numpy(dtype=float)
            if np.isnan(values).any():
                frame[col.name] = pd.array(
                    np.where(np.isnan(values), pd.NA, values), dtype="Int64")
            else:
                frame[col.name] = values.astype(np.int64)
        elif col.type == "category" and col.allowed is not None:
            # Declared order (weak < ... < adversarial) keeps views and groupbys stable;
            # unknown labels are already reported and their rows dropped.
            frame[col.name] = _set_categories(frame[col.name], list(col.allowed),
                                              ordered=col.name in _ORDERED)
        elif col.type == "category" and skipped:
            frame[col.name] = frame[col.name].cat.remove_unused_categories()
    return frame
