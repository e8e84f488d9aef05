"""The items × models table a paired comparison reads, reduced by the engine in place.

A comparison of models (:mod:`kbench_core.compare`) pairs them item by item: each model's
value is averaged within each item (the family's item key, e.g. a bias trial's bias × domain ×
condition × intensity × method × trial), and every test, interval and adjusted p is computed
from that items × models table. :func:`item_means` has the engine make it: the item key and
the model of every row are mapped to integer codes (their labels as the loader gives them,
stripped and typed, ranked as :func:`kbench_core.compare.item_values` sorts them), the codes
combined into one item code, and the rows grouped by item with one sum and one count of the
value per model (a pivot: one row per item), ordered by item. What returns to Python is that
table, never a row of the run: 10M bias trials of 10 models are 1M items × 10 means.

The labels' codes come from each key column's distinct values (one query each; a column of
more than :data:`LABELS` distinct values is not mapped, and the caller reads the rows
instead), converted by the loader's own functions
(:func:`kbench_core.engines.keys._loader_canonical` for labels, the loader's number
parsing for numbers), so two cells the loader reads as one label are one item here too.
The run must have been validated by the engine first (:func:`kbench_core.engines.load`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from kbench_core import families
from kbench_core.compare.items import ITEM_KEYS, ItemMeans, _label_codes
from kbench_core.engines.source import FILE, ROW, ParquetSource

__all__ = ["PIVOT_MODELS", "item_means"]

PIVOT_MODELS = 64  # models whose sums the engine puts side by side (one row per item)
# Distinct labels of one key column mapped to codes in Python. The items table holds a label
# per item and key anyway, so this bounds it, not the rows: a replication run's findings are
# ~40 % of its tests (2.5M at 6M tests).
LABELS = 5_000_000
_CODE = "__kbench_c{}"


def _canonical(values: list[Any], kind: str, name: str) -> pd.Series:
    """Distinct cells of a key column as the loader types them: a label stripped (numbers
    and booleans as their text, blank missing: the loader's ``_to_text``), a number parsed
    (the loader's parsing: text stripped, an ``int`` column whole), in the dtype the loader
    gives the column, so :func:`~kbench_core.compare.items._label_codes` ranks them as it
    ranks the loaded frame's."""
    from kbench_core.engines.keys import _loader_canonical

    column = families.spec(kind).column(name)
    series = pd.Series(values, dtype=object)
    if column.type in ("text", "category"):
        return _loader_canonical(series, column)
    numbers = pd.to_numeric(series.map(lambda v: v.strip() if isinstance(v, str) else v),
                            errors="coerce").astype(float)
    if column.type == "int":
        if numbers.isna().any():
            return pd.Series(pd.array(np.where(numbers.isna(), pd.NA, numbers),
                                      dtype="Int64"))
        return pd.Series(numbers.to_numpy().astype(np.int64))
    return numbers


def _codes(table: Any, kind: str, name: str) -> tuple[pa.Table, Any, np.ndarray] | None:
    """The column's distinct cells (nulls included) with each one's code, the code of a
    null cell (an Ibis literal), and the labels by code; None past
    :data:`LABELS` distinct cells."""
    distinct = table.select(name).distinct().limit(LABELS + 1).to_pyarrow().column(0)
    if len(distinct) > LABELS:
        return None
    values = distinct.to_pylist()
    ranks, labels = _label_codes(_canonical(values, kind, name))
    given = [i for i, v in enumerate(values) if v is not None]
    nulls = [ranks[i] for i, v in enumerate(values) if v is None]
    mapping = pa.table({"__kbench_raw": distinct.take(given),
                        "__kbench_code": pa.array(ranks[given], type=pa.int64())})
    return mapping, (int(nulls[0]) if nulls else -1), labels


def _number(col: Any) -> Any:
    """A value column as the loader's floats: numbers cast, text stripped and parsed."""
    if col.type().is_string():
        return col.strip().try_cast("float64")
    return col.cast("float64")


def item_means(table: Any, src: ParquetSource, value: str, *,
               item: tuple[str, ...] | None = None, cluster: str | None = None,
               ) -> ItemMeans | None:
    """The :class:`~kbench_core.compare.ItemMeans` of ``value`` in the run queried as
    ``table`` (validated), items by ``item`` (default: the family's item key, the columns the
    run has) and ``cluster`` (added to the key when it is not in it), as
    :func:`kbench_core.compare.item_values` makes it from the run's frame (its numbers to
    rounding: each mean is one sum over one count). None when a key column has too many
    distinct values to map, or the run lacks the value."""
    import ibis

    kind = src.kind
    if value not in table.columns:
        return None
    columns = [c for c in (item if item is not None else ITEM_KEYS.get(kind, ()))
               if c in table.columns]
    keys = columns + ([cluster] if cluster and cluster not in columns else [])
    coded = {}
    for name in [*keys, "model"]:
        found = _codes(table, kind, name)
        if found is None:
            return None
        coded[name] = found
    # mixed radix of the keys' codes, in key order: the item code sorts as the labels do
    radix = [max(len(coded[k][2]), 1) for k in keys]
    if float(np.prod(np.array(radix, dtype=float))) >= 2.0**62:
        return None
    stride = [int(np.prod(radix[i + 1:], dtype=np.int64)) for i in range(len(keys))]
    # each key's cells joined to their codes (a join on a few distinct values: no function
    # per row), nulls to the null's code
    rows = table.select(*[c for c in table.columns if c in {*keys, "model", value}])
    names = {}
    for i, name in enumerate([*keys, "model"]):
        mapping, null_code, _ = coded[name]
        small = ibis.memtable(mapping.rename_columns([f"__kbench_raw{i}",
                                                      f"__kbench_code{i}"]))
        rows = rows.left_join(small, rows[name] == small[f"__kbench_raw{i}"]).drop(
            f"__kbench_raw{i}")
        names[name] = rows[f"__kbench_code{i}"].fill_null(null_code)
        rows = rows.mutate(**{_CODE.format(i): names[name]}).drop(f"__kbench_code{i}")
    item_code = ibis.literal(0, type="int64")
    for i, _name in enumerate(keys):
        item_code = item_code + rows[_CODE.format(i)].cast("int64") * stride[i]
    model_code = rows[_CODE.format(len(keys))]
    number = _number(rows[value])
    models = coded["model"][2]
    n_models = len(models)
    if n_models <= PIVOT_MODELS:
        picked = rows.select(__kbench_item=item_code, __kbench_model=model_code,
                             __kbench_v=number)
        measures = {}
        for m in range(n_models):
            mine = picked["__kbench_model"] == m
            measures[f"s{m}"] = picked["__kbench_v"].sum(where=mine)
            measures[f"n{m}"] = picked["__kbench_v"].count(where=mine)
        grouped = (picked.group_by("__kbench_item").aggregate(**measures)
                   .order_by("__kbench_item").to_pyarrow())
        items = grouped.column("__kbench_item").to_numpy()
        sums = np.column_stack([grouped.column(f"s{m}").to_numpy(zero_copy_only=False)
                                for m in range(n_models)]).astype(float)
        counts = np.column_stack([grouped.column(f"n{m}").to_numpy(zero_copy_only=False)
                                  for m in range(n_models)]).astype(float)
        del grouped
        with np.errstate(invalid="ignore", divide="ignore"):
            means = np.where(counts > 0, np.nan_to_num(sums) / counts, np.nan)
    else:
        picked = rows.select(__kbench_item=item_code, __kbench_model=model_code,
                             __kbench_v=number)
        grouped = (picked.group_by(["__kbench_item", "__kbench_model"])
                   .aggregate(s=picked["__kbench_v"].sum(), n=picked["__kbench_v"].count())
                   .order_by("__kbench_item").to_pyarrow())
        codes = grouped.column("__kbench_item").to_numpy()
        starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
        items = codes[starts]
        at = np.cumsum(np.r_[False, codes[1:] != codes[:-1]])
        means = np.full((items.size, n_models), np.nan)
        n = grouped.column("n").to_numpy(zero_copy_only=False).astype(float)
        s = grouped.column("s").to_numpy(zero_copy_only=False).astype(float)
        model = grouped.column("__kbench_model").to_numpy().astype(np.int64)
        with np.errstate(invalid="ignore", divide="ignore"):
            means[at, model] = np.where(n > 0, np.nan_to_num(s) / n, np.nan)
    items = items.astype(np.int64)
    arrays = [coded[k][2][(items // stride[i]) % radix[i]] for i, k in enumerate(keys)]
    return ItemMeans(value=value, means=means, models=np.asarray(models).astype(str),
                     keys=keys, arrays=arrays)


def number_columns(src: ParquetSource) -> list[str]:
    """The columns of ``src`` the family's schema reads as numbers and that are no key (the
    per-item quantities an engine can average: a bias run's ``score``, ``confidence``,
    ``response_ms``)."""
    spec = families.spec(src.kind)
    keys = {"model", *ITEM_KEYS.get(src.kind, ())}
    return [c.name for c in spec.columns
            if c.type in ("float", "int") and c.name in src.columns and c.name not in keys
            and c.name not in (ROW, FILE)]
