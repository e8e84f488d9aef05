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

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from kbench_core.calibration import Binned, bin_calibration, bin_ids
from kbench_core.schema import SEVERITIES
from kbench_core.stats import Clusters
from kbench_core.vuln.definitions import (
    _EXACT,
    _PARTIAL,
    _SEMANTIC,
    OVERCONFIDENT_ABOVE,
    REASONING,
    UNDERCONFIDENT_BELOW,
)

__all__ = ["COUNTS", "FLAGS", "MOMENTS", "SEVERITY_LEVELS", "SEVERITY_SUMS", "Bins",
           "CellSource", "FrameCells", "JudgedCells", "bins_from_answers", "from_answers"]

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

    def cells(self, by: tuple[str, ...]) -> JudgedCells:
        raise NotImplementedError

    def bins(self, by: tuple[str, ...], n_bins: int, binning: str, *,
             answers: bool = False) -> Bins:
        raise NotImplementedError

    def has_difficulty(self) -> bool:
        raise NotImplementedError


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

    def cells(self, by: tuple[str, ...]) -> JudgedCells:
        return from_answers(self._of(by))

    def bins(self, by: tuple[str, ...], n_bins: int, binning: str, *,
             answers: bool = False) -> Bins:
        return bins_from_answers(self._of(by), n_bins, binning)

    def has_difficulty(self) -> bool:
        return "difficulty" in self.frame and bool(self.frame["difficulty"].notna().any())
