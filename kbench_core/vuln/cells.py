"""The tiers' sufficient table: one judge's answers summed per (group × sample) cell.

Every number :func:`~kbench_core.vuln.tiers` prints is a function of per-cell sums: a rate
and its clustered Wilson interval of the cells' numerators and denominators
(:class:`~kbench_core.stats.Clusters`: the jackknife over samples reads cell sums only), a
mean and its clustered t interval of each cell's sum, count and squared deviations, the
composites of the groups' totals, the calibration of per (group × bin × sample) counts and
sums, and the bootstrap of the samples' cells drawn with multinomial weights. So the answers
need not be in memory: :class:`JudgedCells` holds the cells (one row per group × sample,
whatever the number of prompt types, judges or rows behind it) and :class:`Bins` the
calibration cells, and the tiers finish from them.

The sums do not depend on the tiers' options: a partial credit, severity weights or
``zero_division`` re-weigh the cells (the severity-weighted sums are kept per severity).
The bins depend on ``n_bins`` and ``binning``, so :class:`Bins` is made per choice.

Two makers give the same table: :func:`from_answers` from the answers read into arrays
(the memory engine, a frame), and ``kbench_core.engines.judged.cells`` by one group-by in
DuckDB or Spark (a run too big for memory). Both name the quantities of :data:`FLAGS`,
:data:`COUNTS`, :data:`MOMENTS` and :data:`SEVERITY_SUMS`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from kbench_core.calibration import Binned, bin_calibration, bin_ids
from kbench_core.schema import SEVERITIES
from kbench_core.stats import Clusters
from kbench_core.vuln._formulas import _ratio
from kbench_core.vuln.definitions import (
    _EXACT,
    _PARTIAL,
    _SEMANTIC,
    OVERCONFIDENT_ABOVE,
    REASONING,
    UNDERCONFIDENT_BELOW,
)

__all__ = ["COUNTS", "FLAGS", "MOMENTS", "SEVERITY_LEVELS", "SEVERITY_SUMS", "Bins",
           "CellSource", "CellStats", "FrameCells", "GroupStats", "JudgedCells", "Moment",
           "RateSpec", "bins_from_answers", "derived", "from_answers", "read_sums",
           "severity_weights"]

# Per answer 0/1 quantities, summed per cell (none depends on an option).
FLAGS: tuple[str, ...] = (
    "n", "said", "vulnerable", "tp", "fp", "fn", "tn", "correct", "found", "partial",
    "lucky", "bonus", "typed", "exact", "semantic", "partial_match", "stated", "high",
    "over", "low", "under")
# Per answer finding counts (a missing count is 0), summed per cell.
COUNTS: tuple[str, ...] = ("n_target_match", "n_partial_match", "n_bonus_valid",
                           "n_hallucinated", "findings")
# Means with clustered t intervals: per cell ``<name>_sum`` of the values used, ``<name>_n``
# how many, ``<name>_m2`` their squared deviations from the cell's mean (merged per group by
# Chan's rule, so a constant score has no spread, as the two-pass variance has none).
MOMENTS: tuple[str, ...] = ("invalid", *REASONING, "brier", "location")
# Severity-weighted TDR: per severity (the four labels, then missing or other, which weigh
# 1), the vulnerable answers, the found targets and the partial finds.
SEVERITY_LEVELS: tuple[str | None, ...] = (*SEVERITIES, None)
SEVERITY_SUMS: tuple[str, ...] = tuple(f"{what}@{i}" for i in range(len(SEVERITY_LEVELS))
                                       for what in ("vulnerable", "found", "partial"))


def moment_names(name: str) -> tuple[str, str, str]:
    return f"{name}_sum", f"{name}_n", f"{name}_m2"


def sum_names(*, severity: bool) -> tuple[str, ...]:
    """Every per-cell sum a table holds, in order."""
    return (*FLAGS, *COUNTS, *(n for m in MOMENTS for n in moment_names(m)),
            *(SEVERITY_SUMS if severity else ()))


@dataclass(frozen=True)
class JudgedCells:
    """One judge's answers summed per (group × sample) cell, cells sorted by (group,
    sample). ``keys``: per ``by`` column, its value per group (groups in the keys' text
    order); ``missing``: per group, the failed judgements left out; ``sample``: per cell,
    the sample's code in the samples' text order (a bootstrap replicate draws the same
    samples whatever order the rows came in); ``singletons``: every cell holds one answer;
    ``severity``: the run has a severity column (the per-severity sums are there).
    ``sums``: per name of :func:`sum_names`, one number per cell; an engine's counts are
    32-bit integers (half the memory of a big run's cells), so a reader takes them as
    floats before multiplying them (``kbench_core.vuln.tiers`` does)."""

    keys: dict[str, np.ndarray | pd.Categorical]
    size: int
    missing: np.ndarray
    group: np.ndarray
    sample: np.ndarray
    n_samples: int
    sums: dict[str, np.ndarray] = field(repr=False)
    singletons: bool
    severity: bool

    @property
    def n_groups(self) -> int:
        return self.size

    @property
    def n_cells(self) -> int:
        return int(self.group.size)

    def clusters(self) -> Clusters:
        """The cells as :class:`~kbench_core.stats.Clusters` of one unit each (its sums)."""
        filled, starts = np.unique(self.group, return_index=True)
        return Clusters(cell=np.arange(self.group.size), cell_group=self.group,
                        size=self.size, singletons=self.singletons, starts=starts,
                        filled=filled)

    @property
    def nbytes(self) -> int:
        return int(sum(v.nbytes for v in self.sums.values()) + self.group.nbytes
                   + self.sample.nbytes)


@dataclass(frozen=True)
class Bins:
    """The calibration cells of one choice of bins: per (group × bin × sample), the answers
    with a confidence, their confidences' and correct answers' sums; ``edges`` per group
    (``(groups, n_bins + 1)``). ``answers``: each answer's (group, sample, confidence,
    correct), kept only for the bootstrap of equal-mass bins (each replicate recomputes its
    edges from the reweighted answers)."""

    n_bins: int
    binning: str
    edges: np.ndarray
    group: np.ndarray
    bin: np.ndarray
    sample: np.ndarray
    count: np.ndarray
    confidence_sum: np.ndarray
    correct_sum: np.ndarray
    answers: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
    # per (group, bin), summed answer by answer (the memory engine: the same floats as
    # kbench_core.calibration.bin_calibration, which the page's rebinning uses)
    totals: Binned | None = None
    # a row per (group, bin, sample); False: a row per (group, bin), ``sample`` all 0 (an
    # engine's bins when only their totals are read)
    per_sample: bool = True

    def binned(self, size: int) -> Binned:
        """Per (group, bin): the sums of the cells (:class:`~kbench_core.calibration.
        Binned`)."""
        if self.totals is not None:
            return self.totals
        at = self.group * self.n_bins + self.bin
        total = size * self.n_bins
        shape = (size, self.n_bins)
        return Binned(np.asarray(self.edges, dtype=float),
                      np.bincount(at, weights=self.count, minlength=total).reshape(shape),
                      np.bincount(at, weights=self.confidence_sum,
                                  minlength=total).reshape(shape),
                      np.bincount(at, weights=self.correct_sum,
                                  minlength=total).reshape(shape))

    def clusters(self, size: int, n_samples: int) -> Clusters:
        """The (group, bin) × sample cells as :class:`~kbench_core.stats.Clusters` of one
        unit each (``per_cell`` of a cell's sums is itself)."""
        if not self.per_sample:
            raise ValueError("these bins were summed per (group, bin), not per sample: ask "
                             "for them with samples=True to cluster by sample")
        row = self.group * self.n_bins + self.bin
        filled, starts = np.unique(row, return_index=True)
        singletons = bool((self.count <= 1).all())
        return Clusters(cell=np.arange(row.size), cell_group=row, size=size * self.n_bins,
                        singletons=singletons, starts=starts, filled=filled)


def _cell_sums(cell: np.ndarray, n_cells: int, values: np.ndarray) -> np.ndarray:
    return np.bincount(cell, weights=np.asarray(values, dtype=float), minlength=n_cells)


def from_answers(a: object) -> JudgedCells:
    """:class:`JudgedCells` of one judge's answers read into arrays
    (:class:`kbench_core.vuln._prepare._Answers`)."""
    gid, sample = a.gid, a.sample  # type: ignore[attr-defined]
    n_samples = max(int(a.n_samples), 1)  # type: ignore[attr-defined]
    key = gid.astype(np.int64) * n_samples + sample
    cells, cell = np.unique(key, return_inverse=True)
    cell = cell.ravel()
    n_cells = int(cells.size)
    v, s, f = a.vulnerable, a.said, a.found  # type: ignore[attr-defined]
    counts = a.counts  # type: ignore[attr-defined]
    valid = counts["n_target_match"] + counts["n_partial_match"] + counts["n_bonus_valid"]
    conf = a.confidence  # type: ignore[attr-defined]
    stated = ~np.isnan(conf)
    correct = s == v
    tm = a.type_match  # type: ignore[attr-defined]
    typed = f & (tm >= 0)
    with np.errstate(invalid="ignore"):
        high = stated & (conf > OVERCONFIDENT_ABOVE)
        low = stated & (conf < UNDERCONFIDENT_BELOW)
    flags = {"n": np.ones(gid.size, bool), "said": s, "vulnerable": v, "tp": v & s,
             "fp": ~v & s, "fn": v & ~s, "tn": ~v & ~s, "correct": correct, "found": f,
             "partial": a.partial, "lucky": v & s & ~f,  # type: ignore[attr-defined]
             "bonus": valid > f, "typed": typed, "exact": typed & (tm == _EXACT),
             "semantic": typed & ((tm == _EXACT) | (tm == _SEMANTIC)),
             "partial_match": typed & (tm == _PARTIAL), "stated": stated, "high": high,
             "over": high & ~correct, "low": low, "under": low & correct}
    sums = {name: _cell_sums(cell, n_cells, flags[name]) for name in FLAGS}
    for name in COUNTS:
        sums[name] = _cell_sums(cell, n_cells, counts[name])
    moments = {"invalid": (counts["findings"] - valid, np.ones(gid.size, bool)),
               **{name: a.scores[name] for name in REASONING},  # type: ignore[attr-defined]
               "brier": ((conf - correct) ** 2, stated),
               "location": (a.location, ~np.isnan(a.location))}  # type: ignore[attr-defined]
    for name, (values, used) in moments.items():
        total, count, m2 = moment_names(name)
        x = np.where(used, values, 0.0)
        sums[count] = _cell_sums(cell, n_cells, used)
        sums[total] = _cell_sums(cell, n_cells, x)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(sums[count] > 0, sums[total] / np.maximum(sums[count], 1), 0.0)
        dev = np.where(used, x - mean[cell], 0.0)
        sums[m2] = _cell_sums(cell, n_cells, dev * dev)
    severity = a.severity is not None  # type: ignore[attr-defined]
    if severity:
        codes, labels = a.severity  # type: ignore[attr-defined]
        level = np.array([SEVERITY_LEVELS.index(str(lbl)) if lbl is not None
                          and str(lbl) in SEVERITIES else len(SEVERITIES)
                          for lbl in labels], dtype=np.int64)[codes]
        for i in range(len(SEVERITY_LEVELS)):
            mine = level == i
            sums[f"vulnerable@{i}"] = _cell_sums(cell, n_cells, v & mine)
            sums[f"found@{i}"] = _cell_sums(cell, n_cells, f & mine)
            sums[f"partial@{i}"] = _cell_sums(cell, n_cells, a.partial & mine)  # type: ignore[attr-defined]
    return JudgedCells(keys=a.keys, size=a.size, missing=a.missing,  # type: ignore[attr-defined]
                       group=cells // n_samples, sample=cells % n_samples,
                       n_samples=int(a.n_samples),  # type: ignore[attr-defined]
                       sums=sums, singletons=n_cells == gid.size, severity=severity)


def bins_from_answers(a: object, n_bins: int, binning: str) -> Bins:
    """:class:`Bins` of one judge's answers read into arrays: each answer with a confidence
    binned as :func:`kbench_core.calibration.bin_calibration` bins it, summed per (group ×
    bin × sample)."""
    rows = a.conf_rows  # type: ignore[attr-defined]
    group = a.gid[rows]  # type: ignore[attr-defined]
    sample = a.sample[rows]  # type: ignore[attr-defined]
    confidence = a.confidence[rows]  # type: ignore[attr-defined]
    correct = (a.said == a.vulnerable)[rows].astype(float)  # type: ignore[attr-defined]
    size = int(a.size)  # type: ignore[attr-defined]
    edges, ids = bin_ids(group, confidence, n_groups=size, n_bins=n_bins, strategy=binning,
                         order=a.conf_order)  # type: ignore[attr-defined]
    n_samples = max(int(a.n_samples), 1)  # type: ignore[attr-defined]
    key = (group.astype(np.int64) * n_bins + ids) * n_samples + sample
    cells, cell = np.unique(key, return_inverse=True)
    cell = cell.ravel()
    n_cells = int(cells.size)
    answers = ((group, sample, confidence, correct) if binning == "quantile" else None)
    totals = bin_calibration(group, confidence, correct, n_groups=size, n_bins=n_bins,
                             strategy=binning, order=a.conf_order)  # type: ignore[attr-defined]
    return Bins(totals=totals, n_bins=n_bins, binning=binning,
                edges=np.broadcast_to(np.asarray(edges, dtype=float), (size, n_bins + 1)),
                group=cells // n_samples // n_bins, bin=(cells // n_samples) % n_bins,
                sample=cells % n_samples,
                count=np.bincount(cell, minlength=n_cells).astype(float),
                confidence_sum=_cell_sums(cell, n_cells, confidence),
                correct_sum=_cell_sums(cell, n_cells, correct), answers=answers)


class CellSource:
    """What :func:`~kbench_core.vuln.tiers` reads in place of one judge's answers: their
    cells for a grouping (:meth:`cells`), their calibration cells for a choice of bins
    (:meth:`bins`), whether they have a difficulty (the per-difficulty means), the judge
    they are of and the columns the answers have. ``kbench_core.engines.judged.EngineCells``
    sums them in DuckDB or Spark; :class:`FrameCells` from a frame in memory."""

    judge: str | None = None
    columns: tuple[str, ...] = ()

    def cells(self, by: tuple[str, ...], sums: Sequence[str] | None = None) -> JudgedCells:
        """The cells of ``by``; ``sums``: only these of :func:`sum_names` are needed (an
        engine may fetch only them; ``n`` is always there), None: every one."""
        raise NotImplementedError

    def bins(self, by: tuple[str, ...], n_bins: int, binning: str, *,
             answers: bool = False, samples: bool = True) -> Bins:
        """The calibration cells of a choice of bins; ``samples=False``: their per (group ×
        bin) totals are enough (no clustered interval or bootstrap reads them), so an engine
        need not return a row per sample."""
        raise NotImplementedError

    def has_difficulty(self) -> bool:
        raise NotImplementedError

    def stats(self, by: tuple[str, ...]) -> GroupStats:
        """The per-group statistics of the cells of ``by`` (default: from :meth:`cells`;
        an engine computes them where its cells lie)."""
        return CellStats(self.cells(by))


class FrameCells(CellSource):
    """:class:`CellSource` of one judge's answers in a frame (what the engines are tested
    against, and a frame's way through the same finish)."""

    def __init__(self, frame: pd.DataFrame, judge: str | None = None) -> None:
        from kbench_core.vuln._prepare import _one_judge

        self.frame, self.judge = _one_judge(frame, judge)
        self.columns = tuple(self.frame.columns)
        self._answers: dict[tuple[str, ...], object] = {}

    def _of(self, by: tuple[str, ...]) -> object:
        from kbench_core.vuln._prepare import _answers

        if by not in self._answers:
            self._answers[by] = _answers(self.frame, by)
        return self._answers[by]

    def cells(self, by: tuple[str, ...], sums: Sequence[str] | None = None) -> JudgedCells:
        return from_answers(self._of(by))

    def bins(self, by: tuple[str, ...], n_bins: int, binning: str, *,
             answers: bool = False, samples: bool = True) -> Bins:
        return bins_from_answers(self._of(by), n_bins, binning)

    def has_difficulty(self) -> bool:
        return "difficulty" in self.frame and bool(self.frame["difficulty"].notna().any())


# ------------------------------------------------------------------ per-group statistics

# What a rate's interval reads, per rate: numerator, denominator, the units its Wilson n
# counts, and whether the denominator's units weigh unequally (F1, F2).
RateSpec = tuple[str, str, str, bool]


def severity_weights(severity: Mapping[str, float] | None) -> np.ndarray:
    """The weight of each of :data:`SEVERITY_LEVELS` (missing or another label weighs 1)."""
    return np.array([1.0 if level is None or severity is None
                     else float(severity.get(level, 1.0)) for level in SEVERITY_LEVELS])


def derived(s: Mapping[str, Any], name: str, partial_credit: float,
            severity: Mapping[str, float] | None, has_severity: bool) -> Any:
    """A quantity the tiers' options make of the per-cell sums ``s`` (arrays, or an engine's
    columns: only sums, differences and products with numbers, so the same text serves
    both): the credited and weighted finds of TDR, the credited valid findings, F-beta's
    weighted counts, or a sum as it is. Every one is linear in the sums, so a group's total
    of it is the same quantity of the group's totals."""
    if name in s:
        return s[name]
    if name == "answers":
        return s["n"]
    if name == "not_vulnerable":
        return s["n"] - s["vulnerable"]
    if name == "valid":
        return s["n_target_match"] + s["n_partial_match"] + s["n_bonus_valid"]
    if name == "invalid":
        return s["invalid_sum"]
    if name == "valid_credit":
        return (s["n_target_match"] + partial_credit * s["n_partial_match"]
                + s["n_bonus_valid"])
    if name in ("credit_weight", "vul_weight"):
        if severity is None or not has_severity:
            if name == "vul_weight":
                return s["vulnerable"]
            return s["found"] - (1.0 - partial_credit) * s["partial"]
        out: Any = None
        for i, weight in enumerate(severity_weights(severity)):
            part = (s[f"vulnerable@{i}"] if name == "vul_weight" else
                    s[f"found@{i}"] - (1.0 - partial_credit) * s[f"partial@{i}"])
            # a Python float: a numpy scalar times an engine's column is not the column's
            out = float(weight) * part if out is None else out + float(weight) * part
        return out
    if name == "counted":
        return s["tp"] + s["fn"] + s["fp"]
    if name == "f1_num":
        return 2.0 * s["tp"]
    if name == "f1_den":
        return 2.0 * s["tp"] + s["fn"] + s["fp"]
    if name == "f2_num":
        return 5.0 * s["tp"]
    if name == "f2_den":
        return 5.0 * s["tp"] + 4.0 * s["fn"] + s["fp"]
    raise KeyError(name)


class _Reads(dict):
    """The sums a table holds, each 0.0, recording which ones are read."""

    def __init__(self, names: Sequence[str]) -> None:
        super().__init__(dict.fromkeys(names, 0.0))
        self.read: set[str] = set()

    def __getitem__(self, name: str) -> float:
        self.read.add(name)
        return super().__getitem__(name)


def read_sums(names: Sequence[str], partial_credit: float,
              severity: Mapping[str, float] | None, has_severity: bool) -> tuple[str, ...]:
    """The per-cell sums (of :func:`sum_names`, in its order) that the quantities ``names``
    are made of under these options (:func:`derived`): what a bootstrap drawing those
    quantities needs of an engine's cells, a third of every sum."""
    every = sum_names(severity=has_severity)
    reads = _Reads(every)
    for name in names:
        derived(reads, name, partial_credit, severity, has_severity)
    return tuple(n for n in every if n in reads.read)


@dataclass(frozen=True)
class Moment:
    """Per group, a mean's parts (:data:`MOMENTS`): the values used ``n``, their ``mean`` and
    population variance ``var`` (Chan's merge of the cells), the ``k`` samples with a value
    and the delete-one-sample jackknife variance of the mean ``v_cluster`` (NaN below two)."""

    n: np.ndarray
    mean: np.ndarray
    var: np.ndarray
    k: np.ndarray
    v_cluster: np.ndarray


class GroupStats:
    """What the tiers finish from, per group of one judge's cells: the keys, the failed
    judgements, the samples, each quantity's total (:meth:`total`), each rate's design effect
    and Kish's effective number (:meth:`rates`), each mean's parts (:meth:`moment`). Every
    one is a per-group sum over the (group × sample) cells, so an engine computes them where
    the cells lie and returns a row per group (``kbench_core.engines.judged_stats``);
    :class:`CellStats` computes them from cells in memory. The options (partial credit,
    severity weights) are arguments: the sums do not depend on them."""

    keys: dict[str, np.ndarray | pd.Categorical]
    size: int
    missing: np.ndarray
    singletons: bool
    severity: bool

    def total(self, name: str, partial_credit: float,
              severity: Mapping[str, float] | None) -> np.ndarray:
        raise NotImplementedError

    def n_clusters(self) -> np.ndarray:
        raise NotImplementedError

    def rates(self, specs: Sequence[RateSpec], partial_credit: float,
              severity: Mapping[str, float] | None) -> tuple[np.ndarray, np.ndarray]:
        """(design effect, Kish's effective number of units), arrays (groups, rates)."""
        raise NotImplementedError

    def moment(self, name: str) -> Moment:
        raise NotImplementedError


class CellStats(GroupStats):
    """:class:`GroupStats` of cells in memory (:class:`JudgedCells`), through
    :class:`~kbench_core.stats.Clusters`."""

    def __init__(self, table: JudgedCells) -> None:
        self.table = table
        self.keys, self.size, self.missing = table.keys, table.size, table.missing
        self.singletons, self.severity = table.singletons, table.severity
        self.clusters = table.clusters()
        self._made: dict[tuple, np.ndarray] = {}

    def cells(self, name: str, partial_credit: float,
              severity: Mapping[str, float] | None) -> np.ndarray:
        """Per cell, a sum or a quantity the options make of them, as floats (an engine's
        cells keep their counts as 32-bit integers, whose squares would wrap); a made one is
        kept, a sum read from the table each time (not held twice)."""
        if name in self.table.sums:
            return np.asarray(self.table.sums[name], dtype=float)
        key = (name, partial_credit, None if severity is None else tuple(sorted(
            severity.items())))
        if key not in self._made:
            self._made[key] = np.asarray(derived(self.table.sums, name, partial_credit,
                                                 severity, self.table.severity), dtype=float)
        return self._made[key]

    def total(self, name: str, partial_credit: float,
              severity: Mapping[str, float] | None) -> np.ndarray:
        return self.clusters.per_group(self.cells(name, partial_credit, severity))

    def n_clusters(self) -> np.ndarray:
        return self.clusters.n_clusters()

    def rates(self, specs: Sequence[RateSpec], partial_credit: float,
              severity: Mapping[str, float] | None) -> tuple[np.ndarray, np.ndarray]:
        # several rates at a time: a matrix of cells x rates of at most about 131,072
        # numbers, so small runs pay one pass and big ones no large copies
        deff = np.ones((self.size, len(specs)))
        edge = np.zeros((self.size, len(specs)))
        per_chunk = max(1, (1 << 17) // max(self.table.n_cells, 1))
        for at in range(0, len(specs), per_chunk):
            chunk = specs[at:at + per_chunk]
            sums = [np.column_stack([self.cells(spec[k], partial_credit, severity)
                                     for spec in chunk]) for k in (0, 1, 2)]
            part = slice(at, at + len(chunk))
            _, _, deff[:, part] = self.clusters.deff(
                *sums, weighted=np.array([spec[3] for spec in chunk]))
            edge[:, part] = self.clusters.boundary_n(sums[2])
        return deff, edge

    def moment(self, name: str) -> Moment:
        total, count, m2 = moment_names(name)
        s_c, n_c = self.cells(total, 1.0, None), self.cells(count, 1.0, None)
        per_group = self.clusters.per_group
        n = per_group(n_c)
        mean = _ratio(per_group(s_c), n, np.nan)
        dev = np.where(n_c > 0, _ratio(s_c, n_c, 0.0) - mean[self.table.group], 0.0)
        var = _ratio(per_group(self.cells(m2, 1.0, None) + n_c * dev * dev), n, np.nan)
        if self.singletons:
            k, v_cluster = n, np.full(n.shape, np.nan)
        else:
            k, v_cluster = self.clusters.jackknife(s_c, n_c)
        return Moment(n=n, mean=mean, var=var, k=k, v_cluster=v_cluster)
