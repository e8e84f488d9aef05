"""The tiers' per-group statistics of a judged run computed where its cells lie
(:class:`EngineStats`, issue 39): the cells (one row per group × sample, the sums of
:mod:`kbench_core.vuln.cells`) stay in DuckDB or Spark, and each question the tiers ask of
them, a group's totals, every rate's design effect, every mean's parts, is one group-by
there whose answer is a row per group.

Why it is exact: every interval the tiers print reads the cells only through per-group sums
(``docs/metrics/vuln.md``, ``docs/statistics.md``). A rate's delete-one-sample jackknife
(:meth:`kbench_core.stats.Clusters.jackknife`) needs, per cell, the group's p̂ and N (the
cells joined to a row per group, from the first query's totals), and then per group the sums
of the centred
leave-one-out values d_c = (p̂·n_c − y_c)/(N − n_c) and of their squares
(:func:`kbench_core.stats.jackknife_of_sums`); the design effect's full-correlation bound
and Kish's effective number need Σ u_c²; the one-unit-per-sample rule the largest u_c. A
mean's variance merges the cells by Chan's rule (Σ m2_c + n_c(mean_c − mean)²), its
jackknife is the rate's with the values' sums over their counts. The finish is the memory
engine's (:func:`kbench_core.stats.design_effect`, :func:`~kbench_core.stats.kish_n`), so
the numbers agree with :class:`kbench_core.vuln.cells.CellStats` to rounding.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from kbench_core.stats import design_effect, jackknife_of_sums, kish_n
from kbench_core.vuln._formulas import _ratio
from kbench_core.vuln.cells import (
    MOMENTS,
    GroupStats,
    Moment,
    RateSpec,
    derived,
    moment_names,
    sum_names,
)

__all__ = ["EngineStats"]

# A missing key in a table joined to a small table of kbench's own (the groups' values, the
# calibration edges, the ranks wanted): a text no label holds, so plain equality joins it
# (Spark's null-safe equality on a table made from pandas did not).
_NULL_KEY = "\x1fkbench-missing"


def _key_text(values: pd.Series) -> np.ndarray:
    """Key values as text, a missing one (None, NaN) :data:`_NULL_KEY`: how the groups' keys
    are named in a lookup (``engines.judged_cells._key_lookup``) and in a table joined in
    the engine."""
    text = values.astype(str).to_numpy(dtype=object)
    text[values.isna().to_numpy()] = _NULL_KEY
    return text


_FAILED = "__kbench_failed"  # per cell, the failed judgements (engines.judged_cells)


class _Columns(Mapping[str, Any]):
    """A table's sums as float columns, a missing sum 0 (the cells' counts are 32-bit
    integers; a sum of values none of which was used is NULL), made when first read."""

    def __init__(self, table: Any, names: Sequence[str]) -> None:
        self._table, self._names = table, tuple(names)

    def __getitem__(self, name: str) -> Any:
        if name not in self._names:
            raise KeyError(name)
        return self._table[name].cast("float64").fill_null(0.0)

    def __iter__(self) -> Any:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


def _summed(table: Any, keys: Sequence[Any], parts: Mapping[str, Any]) -> pd.DataFrame:
    """``parts`` per group of ``keys`` (one row when there are none), fetched."""
    grouped = table.group_by(list(keys)) if keys else table
    return grouped.aggregate(**parts).to_pandas()


def _centred(p: Any, n: Any, y: Any, big_n: Any) -> Any:
    """Per cell, the centred leave-one-out value (p̂·n_c − y_c)/(N − n_c) of
    :func:`kbench_core.stats.jackknife_of_sums` (0 for a cell with nothing in the
    denominator, or holding all of it)."""
    import ibis

    return ibis.ifelse((n > 0) & (big_n - n != 0), (p * n - y) / (big_n - n),
                       0.0).fill_null(0.0)


def _by_group(frame: pd.DataFrame, codes: np.ndarray, size: int, name: str,
              fill: float = 0.0) -> np.ndarray:
    """A fetched per-group column placed at its groups' codes (absent groups ``fill``)."""
    out = np.full(size, fill, dtype=float)
    out[codes] = frame[name].to_numpy(dtype=float, na_value=fill)
    return out


class EngineStats(GroupStats):
    """:class:`kbench_core.vuln.cells.GroupStats` of one view's cells held in the engine.

    ``table()`` gives the cells' table (materialised in the engine, made again if it was
    released); ``by``: the grouping; ``severity``: the cells hold the per-severity sums;
    ``coded``: per-group text keys to group codes (``engines.judged_cells._codes_of`` with
    the groups' lookup); the base query (keys, failed judgements, samples, every sum's total)
    runs when the object is made, the rates and the means when first asked."""

    def __init__(self, table: Callable[[], Any], by: tuple[str, ...], *, severity: bool,
                 grouped: Callable[[pd.DataFrame, tuple[str, ...]], tuple[
                     np.ndarray, dict[str, np.ndarray], int]],
                 coded: Callable[[pd.DataFrame, GroupStats], np.ndarray]) -> None:
        self._table, self.by, self.severity = table, by, severity
        self._coded = coded
        self._names = sum_names(severity=severity)
        self._moments: dict[str, Moment] | None = None
        cells = table()
        s = _Columns(cells, self._names)
        kept = cells["n"].fill_null(0) > 0
        base = _summed(cells, by, {
            "__kbench_missing": cells[_FAILED].cast("float64").sum(),
            "__kbench_samples": cells.count(where=kept),
            "__kbench_largest": cells["n"].max(),
            **{f"__kbench_t{i}": s[name].sum(where=kept)
               for i, name in enumerate(self._names)}})
        gid, self.keys, self.size = grouped(base, by)
        self.missing = _by_group(base, gid, self.size, "__kbench_missing").astype(np.int64)
        self._samples = _by_group(base, gid, self.size, "__kbench_samples")
        self.singletons = bool((base["__kbench_largest"].fillna(0).to_numpy(float) <= 1)
                               .all())
        self._totals = {name: _by_group(base, gid, self.size, f"__kbench_t{i}")
                        for i, name in enumerate(self._names)}

    def total(self, name: str, partial_credit: float,
              severity: Mapping[str, float] | None) -> np.ndarray:
        # every quantity is linear in the sums: its total is the quantity of the totals
        return np.asarray(derived(self._totals, name, partial_credit, severity,
                                  self.severity), dtype=float)

    def n_clusters(self) -> np.ndarray:
        return self._samples.copy()

    def _kept_cells(self, values: Mapping[str, np.ndarray]) -> tuple[Any, _Columns]:
        """The cells with an answer, each with its group's ``values`` beside it (a join with
        a table of a row per group, keyed by the keys' text: no window over the cells)."""
        import ibis

        cells = self._table()
        kept = cells.filter(cells["n"].fill_null(0) > 0)
        groups = pd.DataFrame({f"__kbench_k{i}": _key_text(pd.Series(
            np.asarray(self.keys[c], dtype=object), dtype=object))
            for i, c in enumerate(self.by)})
        for name, column in values.items():
            groups[name] = np.asarray(column, dtype=float)
        lookup = ibis.memtable(groups)
        if self.by:
            keyed = kept.mutate(**{f"__kbench_k{i}": kept[c].cast("string").fill_null(
                _NULL_KEY) for i, c in enumerate(self.by)})
            joined = keyed.join(lookup, [f"__kbench_k{i}" for i in range(len(self.by))])
        else:
            joined = kept.cross_join(lookup)
        return joined, _Columns(joined, self._names)

    def _with_keys(self, kept: Any, per_cell: Mapping[str, Any]) -> Any:
        """The joined cells' key texts and ``per_cell``'s columns."""
        return kept.select(*[kept[f"__kbench_k{i}"] for i in range(len(self.by))],
                           **per_cell)

    def _per_group(self, cells: Any, parts: Mapping[str, Any]) -> pd.DataFrame:
        """``parts`` summed per group of the joined ``cells``, fetched with the keys under
        their own names (their text as :func:`_key_text` writes it: a missing one read
        back as missing)."""
        frame = _summed(cells, [f"__kbench_k{i}" for i in range(len(self.by))], parts)
        for i, c in enumerate(self.by):
            text = frame.pop(f"__kbench_k{i}")
            frame[c] = text.where(text != _NULL_KEY, None)
        return frame

    def rates(self, specs: Sequence[RateSpec], partial_credit: float,
              severity: Mapping[str, float] | None) -> tuple[np.ndarray, np.ndarray]:
        values = {}
        for j, (num, den, _, _) in enumerate(specs):
            big_n = self.total(den, partial_credit, severity)
            values[f"__kbench_p{j}"] = _ratio(self.total(num, partial_credit, severity),
                                              big_n, 0.0)
            values[f"__kbench_n{j}"] = big_n
        kept, s = self._kept_cells(values)
        per_cell: dict[str, Any] = {}
        for j, (num, den, units, _) in enumerate(specs):
            y = derived(s, num, partial_credit, severity, self.severity)
            n = derived(s, den, partial_credit, severity, self.severity)
            u = derived(s, units, partial_credit, severity, self.severity)
            d = _centred(kept[f"__kbench_p{j}"], n, y, kept[f"__kbench_n{j}"])
            per_cell.update({f"y{j}": y, f"n{j}": n, f"u{j}": u, f"d{j}": d})
        cells = self._with_keys(kept, per_cell)
        parts: dict[str, Any] = {}
        for j in range(len(specs)):
            n, d, u = cells[f"n{j}"], cells[f"d{j}"], cells[f"u{j}"]
            parts.update({f"y{j}": cells[f"y{j}"].sum(), f"n{j}": n.sum(), f"u{j}": u.sum(),
                          f"k{j}": cells.count(where=n > 0), f"sd{j}": d.sum(),
                          f"sdd{j}": (d * d).sum(), f"uu{j}": (u * u).sum(),
                          f"top{j}": u.max()})
        frame = self._per_group(cells, parts)
        gid = self._coded(frame, self)
        shape = (self.size, len(specs))
        got = {name: np.zeros(shape) for name in ("y", "n", "u", "k", "sd", "sdd", "uu")}
        for name, values in got.items():
            for j in range(len(specs)):
                values[:, j] = _by_group(frame, gid, self.size, f"{name}{j}")
        top = np.array([frame[f"top{j}"].fillna(0.0).to_numpy(float).max(initial=0.0)
                        for j in range(len(specs))])
        # one unit per sample (per rate) and equal weights: nothing is clustered
        plain = self.singletons & ~(top > 1) & ~np.array([spec[3] for spec in specs],
                                                         dtype=bool)
        v_cluster = jackknife_of_sums(got["k"], got["sd"], got["sdd"])
        deff = (np.ones(shape) if np.all(plain) else
                design_effect(got["y"], got["n"], got["u"], got["k"], v_cluster, got["uu"],
                              plain))
        return deff, kish_n(got["u"], got["uu"])

    def moment(self, name: str) -> Moment:
        if self._moments is None:
            self._moments = self._all_moments()
        return self._moments[name]

    def _all_moments(self) -> dict[str, Moment]:
        """Every mean's parts in one query (:data:`~kbench_core.vuln.cells.MOMENTS`)."""
        import ibis

        values = {}
        for j, name in enumerate(MOMENTS):
            total, count, _ = moment_names(name)
            values[f"__kbench_mean{j}"] = _ratio(self._totals[total], self._totals[count],
                                                 0.0)
            values[f"__kbench_n{j}"] = self._totals[count]
        kept, s = self._kept_cells(values)
        per_cell: dict[str, Any] = {}
        for j, name in enumerate(MOMENTS):
            total, count, m2 = moment_names(name)
            s_c, n_c = s[total], s[count]
            mean, big_n = kept[f"__kbench_mean{j}"], kept[f"__kbench_n{j}"]
            mean_c = ibis.ifelse(n_c > 0, s_c / n_c, 0.0)
            dev = ibis.ifelse(n_c > 0, mean_c - mean, 0.0).fill_null(0.0)
            per_cell.update({f"s{j}": s_c, f"n{j}": n_c, f"spread{j}": s[m2] + n_c * dev * dev,
                             f"d{j}": _centred(mean, n_c, s_c, big_n)})
        cells = self._with_keys(kept, per_cell)
        parts: dict[str, Any] = {}
        for j in range(len(MOMENTS)):
            n_c, d = cells[f"n{j}"], cells[f"d{j}"]
            parts.update({f"s{j}": cells[f"s{j}"].sum(), f"n{j}": n_c.sum(),
                          f"spread{j}": cells[f"spread{j}"].sum(),
                          f"k{j}": cells.count(where=n_c > 0), f"sd{j}": d.sum(),
                          f"sdd{j}": (d * d).sum()})
        frame = self._per_group(cells, parts)
        gid = self._coded(frame, self)
        out = {}
        for j, name in enumerate(MOMENTS):
            got = {part: _by_group(frame, gid, self.size, f"{part}{j}")
                   for part in ("s", "n", "spread", "k", "sd", "sdd")}
            n = got["n"]
            out[name] = Moment(n=n, mean=_ratio(got["s"], n, np.nan),
                               var=_ratio(got["spread"], n, np.nan), k=got["k"],
                               v_cluster=jackknife_of_sums(got["k"], got["sd"], got["sdd"]))
        return out
