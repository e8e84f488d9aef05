"""How every kbench table shows its numbers: one place for the app, the report, LaTeX, Markdown
and CSV, so a number reads the same everywhere.

A researcher's conventions: counts and token totals as integers (``3,789,115``, never
``3789115.000``), ranks as ranks (``1``; a tied mid-rank ``2.5``), costs with their unit and one
precision per column (``$12.35`` beside ``$0.39``: cents, or as many decimals as the column's
smallest cost needs for two significant digits), every other number to :data:`SIGNIFICANT`
significant digits with trailing zeros (``0.6344``, ``0.4650``), and floating-point residues
``|x| < 1e-12`` as ``0``. CSV (:func:`csv_frame`) keeps numbers as numbers, unquoted, written
with the same significant digits and trailing zeros unless the full precision is asked for
(``kbench metrics --precision full``); its cost columns are named with their unit
(``cost_usd``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd

__all__ = ["COMPARABLE_WITHIN", "SIGNIFICANT", "TINY", "ColumnKind", "best_marks", "column_kind",
           "cost_decimals", "csv_frame", "format_frame", "format_numbers", "format_value",
           "round_frame", "round_significant"]

SIGNIFICANT = 4
TINY = 1e-12  # below this in absolute value a number is a floating-point residue: shown as 0
ColumnKind = Literal["integer", "rank", "cost", "p", "number", "text"]

_INTEGER_NAMES = ("n", "tokens", "count", "tp", "tn", "fp", "fn", "n_biases", "n_tests",
                  "n_pas", "n_ecs", "n_missing", "n_items", "trials")
_COST_NAMES = ("cost",)


def column_kind(name: str, values: pd.Series) -> ColumnKind:
    """What a column holds, from its name and values: ``integer`` (counts, tokens, or floats
    that are all whole numbers under an integer name), ``rank``, ``cost`` (US dollars),
    ``p`` (p-values), ``number`` or ``text``."""
    name = str(name)
    if pd.api.types.is_bool_dtype(values) or not pd.api.types.is_numeric_dtype(values):
        return "text"
    base = name.removesuffix("_low").removesuffix("_high")
    if base == "rank" or base.endswith("_rank") or base.startswith("rank"):
        return "rank"
    if base in _COST_NAMES or base.endswith("_cost"):
        return "cost"
    if base.startswith("p_") or base in ("p", "p_value", "p_adjusted"):
        return "p"
    if pd.api.types.is_integer_dtype(values):
        return "integer"
    if base in _INTEGER_NAMES or base.startswith("n_"):
        finite = values.dropna().to_numpy(dtype=float)
        finite = finite[np.isfinite(finite)]
        if np.all(finite == np.round(finite)):
            return "integer"
    return "number"


def round_significant(value: float, digits: int = SIGNIFICANT) -> float:
    """``value`` rounded to ``digits`` significant digits; residues below :data:`TINY` → 0."""
    if value is None or not math.isfinite(value):
        return value
    if abs(value) < TINY:
        return 0.0
    return float(f"{value:.{digits}g}")


def cost_decimals(values: pd.Series) -> int:
    """Decimals of a cost column, the same for every cell: cents, or more when the column's
    smallest non-zero cost needs them for two significant digits (at most 6).

    >>> cost_decimals(pd.Series([2.79, 0.3919])), cost_decimals(pd.Series([0.0012, 3.5]))
    (2, 4)
    """
    array = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
    array = np.abs(array[np.isfinite(array) & (np.abs(array) >= TINY)])
    if not array.size:
        return 2
    return int(min(6, max(2, 1 - math.floor(math.log10(float(array.min()))))))


def format_value(value: object, kind: ColumnKind = "number", *,
                 digits: int = SIGNIFICANT, decimals: int | None = None) -> str:
    """One cell as text (``–`` for a missing value); ``decimals`` fixes a cost's decimals
    (:func:`cost_decimals`, a column's), else a cost gets cents from $1 and four significant
    digits below.

    >>> format_value(0.6344000000000001), format_value(0.465)
    ('0.6344', '0.4650')
    >>> format_value(3.49e-16)
    '0'
    >>> format_value(3789115.0, "integer")
    '3,789,115'
    >>> format_value(1.0, "rank"), format_value(2.5, "rank")
    ('1', '2.5')
    >>> format_value(12.3456, "cost"), format_value(0.59551, "cost")
    ('$12.35', '$0.5955')
    """
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, tuple | list):
        return ", ".join(map(str, value))
    if not isinstance(value, int | float | np.integer | np.floating):
        return str(value)
    number = float(value)
    if not math.isfinite(number):
        return "∞" if number > 0 else "−∞" if number < 0 else "–"
    if kind == "integer":
        return f"{round(number):,}"
    if kind == "rank":
        return f"{number:g}" if number != round(number) else f"{round(number)}"
    if kind == "p":  # a p-value is never 0: below TINY it is written as a bound
        return f"< {TINY:g}" if abs(number) < TINY else f"{number:.2g}"
    if kind == "cost":
        if abs(number) < TINY:
            return "$0"
        if decimals is not None:
            return f"${number:,.{decimals}f}"
        return (f"${number:,.2f}" if abs(number) >= 1
                else f"${round_significant(number, digits):#.{digits}g}")
    number = round_significant(number, digits)
    if number == 0:
        return "0"
    if abs(number) >= 10 ** digits:
        return f"{number:,.0f}"
    if abs(number) < 1e-4:
        return f"{number:.{digits - 1}e}"
    text = f"{number:#.{digits}g}"  # '#': trailing zeros kept, 0.4650 has 4 digits too
    return text.rstrip(".")


def format_numbers(values: Sequence[float] | np.ndarray) -> list[str]:
    """:func:`format_value` of each number (kind ``"number"``, :data:`SIGNIFICANT` digits),
    without its per-cell type dispatch: a table's interval column formats thousands of
    floats on every rerun of a page (a third of the time of ``format_value`` calls)."""
    out = []
    for value in np.asarray(values, dtype=float).tolist():
        if not math.isfinite(value):
            out.append("–" if math.isnan(value) else "∞" if value > 0 else "−∞")
            continue
        number = 0.0 if abs(value) < TINY else float(f"{value:.{SIGNIFICANT}g}")
        if number == 0:
            out.append("0")
        elif abs(number) >= 10 ** SIGNIFICANT:
            out.append(f"{number:,.0f}")
        elif abs(number) < 1e-4:
            out.append(f"{number:.{SIGNIFICANT - 1}e}")
        else:
            out.append(f"{number:#.{SIGNIFICANT}g}".rstrip("."))
    return out


def format_frame(frame: pd.DataFrame, *, digits: int = SIGNIFICANT) -> pd.DataFrame:
    """Every cell of ``frame`` as display text, each column by its :func:`column_kind`."""
    out = pd.DataFrame(index=frame.index)
    for column in frame.columns:
        kind = column_kind(str(column), frame[column])
        decimals = cost_decimals(frame[column]) if kind == "cost" else None
        out[column] = [format_value(v, kind, digits=digits, decimals=decimals)
                       for v in frame[column].tolist()]
    return out


class _Shown(float):
    """A float that the ``csv`` module writes as formatted (unquoted, as a number):
    :data:`SIGNIFICANT` significant digits with their trailing zeros (``0.4650``)."""

    def __repr__(self) -> str:
        number = float(self)
        if number == 0:
            return "0"
        if abs(number) >= 10 ** SIGNIFICANT:
            return f"{number:.0f}"
        if abs(number) < 1e-4:
            return f"{number:.{SIGNIFICANT - 1}e}"
        return f"{number:#.{SIGNIFICANT}g}".rstrip(".")

    __str__ = __repr__


def csv_frame(frame: pd.DataFrame, *, precision: Literal["display", "full"] = "display",
              ) -> pd.DataFrame:
    """``frame`` ready for CSV: cost columns named with their unit (``cost`` → ``cost_usd``);
    with ``precision="display"`` numbers rounded (:func:`round_frame`) and written with
    :data:`SIGNIFICANT` significant digits and their trailing zeros, as every other format
    shows them (the cells stay numbers: the ``csv`` module writes them unquoted)."""
    out = frame if precision == "full" else round_frame(frame)
    renamed = {}
    for column in out.columns:
        if column_kind(str(column), out[column]) == "cost" and not str(column).endswith("_usd"):
            renamed[column] = f"{column}_usd"
        if precision != "full" and pd.api.types.is_float_dtype(out[column]):
            values = out[column].to_numpy(dtype=float)
            out = out.copy() if out is frame else out
            out[column] = pd.Series([_Shown(v) if math.isfinite(v) else v
                                     for v in values.tolist()], index=out.index, dtype=object)
    return out.rename(columns=renamed) if renamed else out


def round_frame(frame: pd.DataFrame, *, digits: int = SIGNIFICANT) -> pd.DataFrame:
    """``frame`` with its float columns rounded to ``digits`` significant digits and residues
    set to 0, numbers kept as numbers (for CSV); integer-valued count and rank columns become
    integers."""
    out = frame.copy()
    for column in out.columns:
        values = out[column]
        if not pd.api.types.is_float_dtype(values):
            continue
        array = values.to_numpy(dtype=float)
        # Python's correctly rounded decimal formatting per cell: a scaled np.round can land
        # on the wrong side of a half (x * 10**k is itself rounded). Tables are small.
        rounded = np.array([round_significant(v, digits) for v in array.tolist()],
                           dtype=float)
        finite = np.isfinite(array)
        if column_kind(str(column), values) in ("integer", "rank") \
                and np.all(array[finite] == np.round(array[finite])) \
                and not np.isinf(array).any():
            out[column] = pd.Series(array, index=out.index).astype("Int64")  # NaN -> <NA>
        else:
            out[column] = rounded
    return out


def _clear_of_the_others(frame: pd.DataFrame, column: str, direction: str,
                         eligible: np.ndarray, group: pd.Series) -> pd.Series:
    """Per row, whether its interval is clear of every other eligible comparable row's: its
    lower bound above their largest upper bound (``"max"``), or its upper bound below their
    smallest lower bound (``"min"``). A row without an interval is never clear."""
    low = frame[f"{column}_low"].astype(float).where(eligible)
    high = frame[f"{column}_high"].astype(float).where(eligible)
    own, other = (low, high) if direction == "max" else (-high, -low)
    keys = group.to_numpy()
    # the largest "other" bound of the rest of the group: the group's largest, or its second
    # largest for the row holding the largest
    ranked = other.fillna(-np.inf)
    first = ranked.groupby(keys).transform("max")
    order = ranked.groupby(keys).rank(method="first", ascending=False)
    second = ranked.where(order > 1).groupby(keys).transform("max").fillna(-np.inf)
    rest = np.where(order == 1, second, first)
    return pd.Series(own.notna().to_numpy() & (own.to_numpy() > rest), index=frame.index)


# Rows are compared (for the bold "best" value) only with rows that share every one of these
# columns: a TDR under one judge is not comparable with a TDR under another, nor a bias's BMS
# with another bias's, nor a domain's ECS with another domain's.
COMPARABLE_WITHIN: tuple[str, ...] = (
    "judge", "judges", "consensus", "difficulty", "prompt_type", "category", "bias", "domain",
    "study", "finding", "level", "group", "split", "intensity", "condition")


def best_marks(frame: pd.DataFrame, best: dict[str, str] | None, *,
               within: Sequence[str] | None = None) -> dict[str, set[int]]:
    """For each column of ``best`` (``"max"`` or ``"min"``), the positions of the rows holding
    the best value among comparable rows (those sharing every column of ``within``, default
    the columns of :data:`COMPARABLE_WITHIN` the frame has). A row marked ``few_items`` (a
    "few samples" row) is never best and does not take part: a value resting on 5 samples
    does not crown, nor does it stop another row from being crowned. Ties are all marked;
    a group with a single comparable row marks nothing (best among one is no news).

    Where the frame holds the column's interval (``<column>_low`` / ``<column>_high``) the
    best row is marked only when its interval is clear of every other comparable row's
    (above all their upper bounds for ``"max"``, below all their lower bounds for ``"min"``):
    a bold value claims "best", which overlapping intervals do not support, as the rank
    intervals and verdicts of the command line do not (issue 38 item 8; before, the LaTeX
    and Markdown tables bolded by the point estimate alone). A column without an interval is
    marked by its value.

    >>> t = pd.DataFrame({"model": list("abab"), "judge": list("xxyy"), "tdr": [.5, .7, .9, .6],
    ...                   "few_items": [False, False, False, True]})
    >>> best_marks(t, {"tdr": "max"})
    {'tdr': {1}}
    >>> best_marks(t.assign(tdr_low=[.4, .6, .8, .5], tdr_high=[.55, .8, .95, .7]),
    ...            {"tdr": "max"})
    {'tdr': {1}}
    >>> best_marks(t.assign(tdr_low=[.4, .45, .8, .5], tdr_high=[.6, .8, .95, .7]),
    ...            {"tdr": "max"})
    {}
    """
    for column, direction in (best or {}).items():
        if direction not in ("max", "min"):
            raise ValueError(f"best[{column!r}] must be 'max' or 'min'; got {direction!r}")
    keys = [c for c in (COMPARABLE_WITHIN if within is None else within) if c in frame]
    eligible = np.ones(len(frame), dtype=bool)
    if "few_items" in frame:
        eligible &= ~frame["few_items"].fillna(False).astype(bool).to_numpy()
    group = (frame[keys].astype(str).agg("\x1f".join, axis=1) if keys
             else pd.Series("", index=frame.index))
    sizes = pd.Series(eligible, index=frame.index).groupby(group.to_numpy()).transform("sum")
    marks: dict[str, set[int]] = {}
    for column, direction in (best or {}).items():
        if column not in frame or not pd.api.types.is_numeric_dtype(frame[column]) \
                or pd.api.types.is_bool_dtype(frame[column]):
            continue
        values = frame[column].astype(float).where(eligible)
        grouped = values.groupby(group.to_numpy())
        target = grouped.transform("max" if direction == "max" else "min")
        hit = np.isclose(values, target) & values.notna() & (sizes.to_numpy() > 1)
        if f"{column}_low" in frame and f"{column}_high" in frame:
            hit &= _clear_of_the_others(frame, column, direction, eligible, group)
        found = set(np.flatnonzero(hit.to_numpy()).tolist())
        if found:
            marks[column] = found
    return marks
