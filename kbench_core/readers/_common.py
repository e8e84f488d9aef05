"""Shared pieces of the readers: file suffixes, label columns read as Arrow dictionaries, the
parsed-table shapes and the header, column and row limits."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pyarrow as pa

from kbench_core import families, native
from kbench_core.problems import (
    MAX_COLUMNS,
    MAX_ROWS,
    Format,
    RunFormatError,
)
from kbench_core.problems import fail as _fail

_SUFFIX_FORMATS: dict[str, Format] = {
    ".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".txt": "csv",
    ".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl",
    ".parquet": "parquet", ".pq": "parquet",
}
def _text_columns(types: tuple[str, ...] = ("text", "category")) -> frozenset[str]:
    """Column names that hold text (or, with ``types=("category",)``, labels) in some family
    (read as text, never as numbers), and their aliases."""
    names: set[str] = set()
    for family in families.all_families():
        text = {c.name for c in family.spec.columns if c.type in types}
        names |= text | {alias for alias, name in family.aliases.items() if name in text}
    return frozenset(names)


_LABELS = pa.dictionary(pa.int32(), pa.string())


def _sorted_labels(frame: pd.DataFrame, names: Sequence[str]) -> None:
    """Categories of the reader's dictionary columns in sorted order, in place: the order a
    text column's ``astype("category")`` gives, so results do not depend on how the file
    was read (Arrow's dictionaries keep the order of first appearance)."""
    for name in names:
        series = frame[name]
        categories = series.cat.categories
        order = np.argsort(categories.to_numpy(dtype=object), kind="stable")
        if (order != np.arange(len(order))).any():
            frame[name] = series.cat.reorder_categories(categories[order])


def _decode_labels(table: _Table, keep: Callable[[str], bool] = lambda name: False) -> None:
    """Turn the reader's dictionary columns back into text, except those ``keep`` says are
    labels of the run's kind; in place. A column read as a dictionary to save time and memory
    ends as the same frame a text read would have given."""
    for name in list(table.encoded):
        if name in table.frame.columns and not keep(name):
            table.frame[name] = table.frame[name].astype("str")
            table.encoded.discard(name)


# ---------------------------------------------------------------------------- parsing tables


@dataclass(frozen=True)
class _Native:
    """A native file, recognised and converted (not yet validated)."""

    format: native.NativeFormat
    converted: native.Converted


@dataclass
class _Table:
    """A parsed table before validation: a frame plus how to name its rows to a user.

    ``numbers`` gives the 1-based user-facing number of each row; it may be a function, so
    that a valid CSV never pays for counting its lines.
    """

    frame: pd.DataFrame
    numbers: np.ndarray | Callable[[], np.ndarray]
    unit: str  # "line", "record" or "row"
    nonfinite: dict[str, np.ndarray] = field(default_factory=dict)  # col -> bool mask
    # col -> (mask, {position: cell text}) of numbers too large for a float (400 digits,
    # 1e999): Arrow reads them as infinity, but the cell did not say "inf".
    overflow: dict[str, tuple[np.ndarray, dict[int, str]]] = field(default_factory=dict)
    # Columns the reader read as dictionaries (categorical, sorted) though the file holds
    # text: labels for the run's kind stay so, any other goes back to text (_decode_labels).
    encoded: set[str] = field(default_factory=set)

    @property
    def row_numbers(self) -> np.ndarray:
        if callable(self.numbers):
            self.numbers = self.numbers()
        return self.numbers


def _check_header(filename: str, names: Sequence[str]) -> None:
    seen: set[str] = set()
    for idx, name in enumerate(names):
        if name == "":
            raise _fail(filename, f"column {idx + 1} has an empty name in the header",
                        row=1, unit="line")
        if name in seen:
            raise _fail(filename, f"duplicate column name {name!r} in the header",
                        row=1, unit="line", field=name)
        seen.add(name)


_FIRST_CONTENT = re.compile(rb"[^\r\n]")


def _too_many_columns(filename: str, n: int, where: str) -> RunFormatError:
    return _fail(filename, f"{where} has {n:,} columns, over the limit of {MAX_COLUMNS:,} "
                           "columns; a run keeps one column per field (split wide files, or "
                           "move per-item values into rows)")


def _too_many_rows(filename: str, n: int) -> RunFormatError:
    return _fail(filename, f"the file holds {n:,} rows, over the limit of {MAX_ROWS:,} rows per "
                           "run; split it into several runs")
