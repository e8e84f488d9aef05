"""Per-item values of a run for paired comparisons, and which metrics are better lower
(``docs/statistics.md``)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from kbench_core import families
from kbench_core.families import CompareDefaults
from kbench_core.kahne.grain import TrialGrainRefused, trial_grain_refusal


class _ByKind(Mapping):
    """A read-only ``{kind: value}`` view of the family registry (``ITEM_KEYS``,
    ``COMPARISONS``): families registered later appear too."""

    def __init__(self, attribute: str) -> None:
        self._attribute = attribute

    def _values(self) -> dict:
        return {f.kind: getattr(f, self._attribute) for f in families.all_families()
                if getattr(f, self._attribute) is not None}

    def __getitem__(self, kind: str):
        return self._values()[kind]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values())

    def __len__(self) -> int:
        return len(self._values())


# The item a model answers and the default comparison, per run kind (each family's own;
# docs/statistics.md): repeated trials are averaged within an item.
ITEM_KEYS: Mapping[str, tuple[str, ...]] = _ByKind("item_key")
COMPARISONS: Mapping[str, CompareDefaults] = _ByKind("comparison")
Correction = Literal["holm", "fdr_bh"] | None
FEW_ITEMS = 30  # a leaderboard marks a model ranked on fewer items than this


def lower_is_better_metrics() -> frozenset[str]:
    """Every metric where lower is better: the union of the registered families' sets (bias
    scores, BMS, ECE, Brier, error and false-positive rates, |agent d − human d|, ...)."""
    return families.lower_is_better()


def is_lower_better(metric: str) -> bool:
    """The metric's direction: True for bias scores, BMS, ECE, Brier, error rates, ..."""
    return metric in families.lower_is_better()


def direction(metric: str) -> Literal["lower", "higher"]:
    """Which way is better for ``metric``: ``"lower"`` (:func:`lower_is_better_metrics`) or
    ``"higher"`` (accuracy, TDR, PAS, ECS, consistency, ... and any metric not listed)."""
    return "lower" if is_lower_better(metric) else "higher"


def per_item_values(frame: pd.DataFrame, kind: str | None = None) -> pd.DataFrame:
    """``frame`` with the per-item columns its family compares (the family's ``per_item``),
    added as floats (NaN = unknown, left out of every comparison rather than counted as 0):

    - bias: ``score`` as given (1 = biased answer); bias_summary: the reported ``bms``;
    - judged: ``correct`` = 1 when ``said_vulnerable == is_vulnerable`` (NaN when the verdict is
      missing, e.g. a failed judgement), and ``target_found_vulnerable`` = ``target_found`` on
      vulnerable samples only (NaN on safe ones, where a target cannot be found and a 0 would
      only dilute the difference);
    - replication: ``abs_diff`` = |d_agent − d_human| with Cohen's d taken from
      ``human_d``/``agent_d`` where given, else converted from the native effects by
      :func:`kbench_core.replication.prepare_tests` (``effect_to_d``); NaN where either d is
      undefined.

    ``kind=None`` detects the kind from the columns.
    """
    kind = kind or families.detect(list(frame.columns))
    family = families.get(kind) if kind is not None and families.is_registered(kind) else None
    if family is None or family.per_item is None:
        known = ", ".join(f.kind for f in families.all_families() if f.per_item is not None)
        raise ValueError(f"runs of kind {kind!r} have no per-item comparison; kinds with one: "
                         f"{known}")
    return family.per_item(frame)


def per_item_quantities(frame: pd.DataFrame, kind: str | None = None) -> dict[str, str]:
    """``{column: words}`` of every per-item quantity a comparison can take on ``frame`` (a
    :func:`per_item_values` frame): the family's own (its ``CompareDefaults``, the headline
    first) and then every other numeric or true/false column that is not a key (model, the
    item key, the cluster, the forest plot's group). Text columns (a response, a label) are
    not quantities: ``kbench compare --metric response`` is refused with this list rather
    than comparing nothing (issue 42, item 9)."""
    kind = kind or families.detect(list(frame.columns))
    spec = COMPARISONS.get(kind) if kind is not None else None
    out: dict[str, str] = {}
    if spec is not None:
        for column in (spec.default, *(c for _, c in spec.values)):
            if column in frame.columns:
                out.setdefault(column, spec.label_of(column))
    keys = {"model", *(ITEM_KEYS.get(kind, ()) if kind else ()),
            *((spec.cluster, spec.group) if spec is not None else ())}
    for column in frame.columns:
        if column in out or column in keys or not isinstance(column, str):
            continue
        dtype = frame[column].dtype
        if pd.api.types.is_bool_dtype(dtype) or (pd.api.types.is_numeric_dtype(dtype)
                                                 and not isinstance(dtype, pd.CategoricalDtype)):
            out[column] = column.replace("_", " ")
    return out


@dataclass(frozen=True, eq=False)
class ItemMeans:
    """The items × models table of one per-item ``value``, made elsewhere than from a frame
    of every row (an engine reduces a run to it in place:
    :func:`kbench_core.engines.items.item_means`). Every function of this package that takes
    a frame takes it instead, for its ``value`` (another value is refused) and its item key,
    and computes what it computes from a frame's table (:func:`item_values`).

    ``means``: items × models, each model's mean of ``value`` over the item's rows (NaN where
    it has no known value); ``models``: their names (as text) in the order of the columns;
    ``keys``: the item columns (and the cluster, when it is not one of them); ``arrays``: each
    key's label per item, items in the order of their labels (as :func:`item_values` sorts
    them)."""

    value: str
    means: np.ndarray
    models: np.ndarray
    keys: list[str]
    arrays: list[np.ndarray]

    @property
    def n_items(self) -> int:
        return int(self.means.shape[0])


def _given_means(table: ItemMeans, value: str, item: Sequence[str] | str | None,
                 cluster: str | None) -> tuple[np.ndarray, np.ndarray, list[str],
                                               list[np.ndarray]]:
    """:func:`_item_means` of an :class:`ItemMeans`: its arrays, when asked for its value on
    its own items (the cluster among its keys)."""
    if value != table.value:
        raise ValueError(f"this items table holds {table.value!r}, not {value!r}")
    columns = _item_columns(table, item)
    keys = columns + ([cluster] if cluster and cluster not in columns else [])
    if set(keys) != set(table.keys):
        raise ValueError(f"this items table is keyed by {', '.join(table.keys)}, not "
                         f"{', '.join(keys)}")
    return table.means, table.models, table.keys, table.arrays


def _item_columns(frame: pd.DataFrame | ItemMeans, item: Sequence[str] | str | None
                  ) -> list[str]:
    if isinstance(frame, ItemMeans):
        return list(frame.keys) if item is None else (
            [item] if isinstance(item, str) else list(item))
    if item is not None:
        columns = [item] if isinstance(item, str) else list(item)
    else:
        kind = families.detect(list(frame.columns))
        if kind not in ITEM_KEYS:
            raise ValueError("cannot tell the item key of this frame; pass item=[...]")
        columns = [c for c in ITEM_KEYS[kind] if c in frame.columns]
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"item columns missing from the frame: {', '.join(missing)}")
    return columns


def _label_codes(series: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes of a key column in the sort order of its labels, a missing label (a
    control row's intensity) being the label "" (so it is a level of its own, sorted first)."""
    codes, uniques = pd.factorize(series)  # categoricals factorize on their codes: fast
    labels = np.asarray(uniques, dtype=object)
    missing = codes < 0
    if missing.any():
        blank = np.flatnonzero(labels == "")
        if blank.size:
            codes = np.where(missing, blank[0], codes)
        else:
            labels = np.append(labels, np.array([""], dtype=object))
            codes = np.where(missing, labels.size - 1, codes)
    try:
        order = np.argsort(labels, kind="stable")
    except TypeError:  # mixed types (numbers and ""): order by their text
        order = np.argsort(labels.astype(str), kind="stable")
    rank = np.empty(labels.size, dtype=np.int64)
    rank[order] = np.arange(labels.size)
    return rank[codes], labels[order]


def item_values(frame: pd.DataFrame, value: str, *, item: Sequence[str] | str | None = None,
                cluster: str | None = None) -> pd.DataFrame:
    """Items × models table of ``value`` averaged within each item (NaN where a model has no
    known value); the index holds the item columns (and ``cluster`` when given), sorted.

    Computed on integer codes: each key column is factorised, the codes are combined into one
    item code, and every item × model mean comes from two ``np.bincount`` calls (sum and count
    of the known values) — no groupby over text keys, which dominated on 1M-row runs.
    """
    means, models, keys, arrays = _item_means(frame, value, item, cluster)
    if len(keys) == 1:
        index: pd.Index = pd.Index(arrays[0], name=keys[0], dtype=object)
    else:
        index = pd.MultiIndex.from_arrays(arrays, names=keys)
    return pd.DataFrame(means, index=index,
                        columns=pd.Index(models, name="model", dtype=object))


def _item_means(frame: pd.DataFrame, value: str, item: Sequence[str] | str | None,
                cluster: str | None) -> tuple[np.ndarray, np.ndarray, list[str],
                                              list[np.ndarray]]:
    """The arrays behind :func:`item_values`: the items × models means, the model names (as
    text), the key columns and each key's label per item.

    Every comparison of this package reads its rows here, so this is where a frame without
    the grain it would pair is refused: a bias run an engine reduced to weighted tuples has
    no trials (:class:`~kbench_core.kahne.grain.TrialGrainRefused`, a ValueError, with
    :func:`~kbench_core.kahne.grain.trial_grain_refusal`'s reason and what to do instead),
    rather than pairing its tuples as trials or finding "no shared items". An
    :class:`ItemMeans` is its own table."""
    if isinstance(frame, ItemMeans):
        return _given_means(frame, value, item, cluster)
    refusal = trial_grain_refusal(frame, value)
    if refusal is not None:
        raise TrialGrainRefused(refusal)
    if value not in frame.columns:
        raise ValueError(f"no column {value!r} in the frame")
    columns = _item_columns(frame, item)
    keys = columns + ([cluster] if cluster and cluster not in columns else [])
    n = len(frame)
    values = pd.to_numeric(frame[value], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    item_code = np.zeros(n, dtype=np.int64)
    bound = 1
    per_key = []
    for key in keys:
        codes, labels = _label_codes(frame[key])
        per_key.append((codes, labels))
        if bound * max(labels.size, 1) >= 2**62:  # re-number before the mixed radix overflows
            item_code, uniques = pd.factorize(item_code, sort=True)
            bound = max(uniques.size, 1)
        item_code = item_code * max(labels.size, 1) + codes
        bound *= max(labels.size, 1)
    # sort=True keeps the lexicographic order of the label ranks: items come out sorted
    item_code, uniques = pd.factorize(item_code, sort=True)
    model_code, models = _label_codes(frame["model"])
    n_items, n_models = uniques.size, models.size
    cell = item_code * n_models + model_code
    known = np.isfinite(values)
    size = n_items * n_models
    sums = np.bincount(cell[known], weights=values[known], minlength=size)
    counts = np.bincount(cell[known], minlength=size)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(counts > 0, sums / counts, np.nan).reshape(n_items, n_models)
    first = np.zeros(n_items, dtype=np.int64)
    first[item_code] = np.arange(n)  # any row of an item carries its labels
    arrays = [labels[codes[first]] for codes, labels in per_key]
    return means, models.astype(str), keys, arrays
