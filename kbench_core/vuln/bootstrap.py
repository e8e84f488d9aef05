"""Percentile bootstrap intervals of the debiased ECE and of the SUI rank, over resampled
samples (contracts), for ``tiers(..., ci="bootstrap")``. The composites' intervals are not
bootstrapped any more (``docs/statistics.md``, round 3 items 3 and 5): ECE and MCE have
simultaneous bin intervals (:func:`kbench_core.calibration.mce_interval_of`), SUI, TUS and LGI
MOVER intervals (:mod:`kbench_core.vuln.composite`), F1 and F2 the rates' Wilson intervals."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import sparse
from scipy.stats import rankdata

from kbench_core.calibration import (
    Binned,
    SortedAnswers,
    bin_calibration,
    quantile_edges,
    sort_answers,
)
from kbench_core.calibration.bins import _interpolated_edges, _quantile_bins
from kbench_core.stats import bootstrap_groups_batched, t_interval, widen_small
from kbench_core.vuln._formulas import _core
from kbench_core.vuln._prepare import _Q, _Prepared
from kbench_core.vuln.cells import Bins

# Only the debiased ECE keeps a percentile interval; ECE and MCE have simultaneous bin
# intervals, SUI, TUS and LGI MOVER intervals from their components, F1 and F2 the rates'
# Wilson intervals (docs/statistics.md, round 3 items 3 and 5). SUI is still resampled for
# the SUI rank's interval.
_BOOTSTRAPPED = ("ece_l2_debiased",)

_CHUNK_FLOATS = 2_000_000  # numbers per array of a chunk of replicates (16 MB)


_DENSE_FLOATS = 4_000_000  # the largest samples x (rows, quantities) table multiplied densely


def _exact_columns(values: np.ndarray, sample: np.ndarray, n_samples: int) -> np.ndarray:
    """Per column of ``values`` (cells x quantities): whether every replicate's sums
    Σ count[sample]·value are exact in float64 whatever order they are added in.

    They are when the column's values are multiples of 2^-k (counts, halves of partial
    credit, the default severity weights) and every partial sum stays below 2^53·2^-k; a
    replicate draws ``n_samples`` samples, so no sum exceeds n_samples times the largest
    per-sample total of |value|. Then a BLAS product gives the bits the per-replicate sparse
    product gave, and only the other columns (confidences, reasoning scores such as 0.7)
    need the sparse product's order. A column at a time: a copy of every column at once was
    three times the cells' own memory (1.1M cells of 18 quantities: 0.5 GB)."""
    values = np.asarray(values, dtype=float)
    n_cols = values.shape[1]
    exact = np.zeros(n_cols, dtype=bool)
    for j in range(n_cols):
        column = values[:, j]
        if not np.isfinite(column).all():
            continue
        per_sample = np.bincount(sample, weights=np.abs(column), minlength=n_samples) \
            if column.size else np.zeros(1)
        bound = max(n_samples, 1) * per_sample.max(initial=0.0)
        for k in range(31):
            if not np.ldexp(bound, k) < 2.0 ** 53:
                break
            scaled = np.ldexp(column, k)
            if (scaled == np.round(scaled)).all():
                exact[j] = True
                break
    return exact


class _CellSums:
    """Per replicate and row, Σ over the row's cells of count[sample]·value, for a chunk of
    replicates at once, equal bit for bit to one replicate's ``rows @ (values · count)``.

    A cell is one (row, sample) pair with a value per quantity. Columns that sum exactly
    (:func:`_exact_columns`) are dense products: with few samples and rows, counts @
    (samples x (rows, quantities)); otherwise, row by row, the chunk's counts of the row's
    cells' samples @ the row's cells, which needs no copy of the cells (a sparse matrix of
    them, and the triplets it was built from, were 0.6 GB for 1.1M cells). The other columns
    keep the sparse product's order: a CSR matrix (quantity, row) x sample holding the values,
    whose product with counts.T adds each row's cells in ascending sample order, as
    ``to_group @ (q_cells * counts)`` did (scipy's kernel multiplies then adds: no fused
    multiply-add, which the bit-for-bit test would catch)."""

    def __init__(self, row: np.ndarray, sample: np.ndarray, values: np.ndarray, n_rows: int,
                 n_samples: int) -> None:
        values = np.asarray(values, dtype=float)
        row, sample = np.asarray(row, dtype=np.int64), np.asarray(sample, dtype=np.int64)
        self.n_rows, self.n_cols = n_rows, values.shape[1]
        exact = _exact_columns(values, sample, n_samples)
        self.exact, self.other = np.flatnonzero(exact), np.flatnonzero(~exact)
        n_exact = self.exact.size
        self.dense: np.ndarray | None = None
        self.by_row: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        if n_exact and n_samples * n_rows * n_exact <= _DENSE_FLOATS:
            dense = np.zeros((n_samples, n_rows, n_exact))
            dense[sample, row] = values[:, self.exact]
            self.dense = dense.reshape(n_samples, n_rows * n_exact)
        elif n_exact:
            # the cells in row order (an engine's cells are, by group then sample)
            if row.size > 1 and (np.diff(row) < 0).any():
                order = np.argsort(row, kind="stable")
                ordered_values, ordered_sample = values[order], sample[order]
                ordered_row = row[order]
            else:
                ordered_values, ordered_sample, ordered_row = values, sample, row
            bounds = np.searchsorted(ordered_row, np.arange(n_rows + 1))
            self.by_row = (ordered_values, ordered_sample, bounds)
        n_other = self.other.size
        ordered = sparse.csr_matrix(
            (values[:, self.other].T.ravel(),
             ((np.arange(n_other)[:, None] * n_rows + row[None, :]).ravel(),
              np.tile(sample, n_other))), shape=(n_other * n_rows, n_samples))
        ordered.eliminate_zeros()  # a sum that starts at +0.0 is unchanged by adding +0.0
        ordered.sort_indices()
        self.ordered = ordered

    def __call__(self, counts: np.ndarray) -> np.ndarray:
        """(replicates, rows, quantities) for counts (replicates, samples)."""
        b = counts.shape[0]
        drawn = counts.astype(float)
        out = np.empty((b, self.n_rows, self.n_cols))
        if self.dense is not None:
            out[:, :, self.exact] = np.asarray(drawn @ self.dense).reshape(
                b, self.n_rows, self.exact.size)
        elif self.by_row is not None:
            values, sample, bounds = self.by_row
            # (cells, replicates) with a replicate's counts side by side: the product
            # values.T @ that is BLAS's fast shape, several times (replicates, cells) @ values.
            # Every column: the others' products are overwritten below, and a product of all
            # the columns needs no copy of the exact ones.
            drawn_t = np.ascontiguousarray(drawn.T)
            for r in range(self.n_rows):
                start, stop = bounds[r], bounds[r + 1]
                if start == stop:
                    out[:, r, self.exact] = 0.0
                else:
                    out[:, r, :] = (values[start:stop].T
                                    @ np.take(drawn_t, sample[start:stop], axis=0)).T
        if self.other.size:
            summed = self.ordered @ np.ascontiguousarray(drawn.T)
            out[:, :, self.other] = summed.reshape(self.other.size, self.n_rows, b).transpose(
                2, 1, 0)
        return out


class _QuantileBins:
    """Equal-mass bins of every replicate of a chunk at once: per replicate, bit for bit
    ``bin_calibration(group, confidence, correct, strategy="quantile", weight=counts[sample])``.

    With the answers sorted by (group, confidence), a replicate's edges are percentiles of
    the reweighted answers, found from the cumulative weights (as
    :func:`kbench_core.calibration.quantile_edges` does, and with its interpolation), and each
    bin is a run of consecutive sorted answers between two cuts (the positions after the last
    answer ≤ each inner edge). Counts and correct answers per bin are differences of the
    cumulative sums (whole numbers: exact); both ride in one int64 cumulative sum of
    w·(2^32 + correct), so that the sum of weights is the high part. The confidence sums are
    added answer by answer in the rows' order with one ``bincount``, as ``bin_calibration``
    adds them, so they round the same way."""

    # The packed sums hold a replicate's total weight times 2^32 in an int64: beyond 2^31
    # answers drawn (one sample of many answers drawn thousands of times) the replicates are
    # binned one by one instead.
    PACK_LIMIT = 2 ** 31
    # Beyond this many moved answers per answer of a chunk (the ranges of a replicate's
    # cuts overlap) each answer's cell is read from its bin's run instead.
    MOVED_LIMIT = 1.0

    def __init__(self, answers: SortedAnswers, sample: np.ndarray, confidence: np.ndarray,
                 correct: np.ndarray, n_groups: int, n_bins: int) -> None:
        self.answers, self.n_groups, self.n_bins = answers, n_groups, n_bins
        self.correct = np.asarray(correct, dtype=float)
        self.work: dict[str, np.ndarray] | None = None
        # The bins of the whole sample (each answer once): most answers keep them in a
        # replicate. bounds_static[g, k] = the first sorted position of group g's bin k.
        static = _quantile_bins(answers, quantile_edges(
            answers.group, answers.confidence, n_groups, n_bins, order=answers))
        group_row = np.empty(answers.group.size, dtype=np.int64)
        group_row[answers.order] = answers.group
        self.cell_static = group_row * n_bins + static
        per_bin = np.bincount(self.cell_static, minlength=n_groups * n_bins).reshape(
            n_groups, n_bins)
        self.bounds_static = np.concatenate(
            (np.zeros((n_groups, 1), dtype=np.int64), np.cumsum(per_bin, axis=1)),
            axis=1) + answers.starts[:, None]
        self.n = answers.group.size
        self.sample_row = np.asarray(sample, dtype=np.int64)
        self.sample_sorted = self.sample_row[answers.order]
        self.factor = (1 << 32) + np.asarray(correct, dtype=np.int64)[answers.order]
        self.confidence = np.asarray(confidence, dtype=float)
        self.position = np.empty(self.n, dtype=np.int64)  # sorted position of each row
        self.position[answers.order] = np.arange(self.n)
        self.starts = answers.starts.astype(np.int64)
        self.ends = self.starts + answers.sizes
        self.q = np.linspace(0.0, 1.0, n_bins + 1) * 100 / 100  # as quantile_edges has it

    def __call__(self, counts: np.ndarray) -> Binned:
        b, n, size, n_bins = counts.shape[0], self.n, self.n_groups, self.n_bins
        if n == 0:
            zeros = np.zeros((b * size, n_bins))
            return Binned(np.full((b * size, n_bins + 1), np.nan), zeros, zeros, zeros)
        per_sample = np.bincount(self.sample_row, minlength=counts.shape[1])
        if (counts @ per_sample).max() >= self.PACK_LIMIT:
            return self._one_by_one(counts)
        work = self._work(b)
        # np.take gathers along an axis about twice as fast as fancy indexing; the work
        # arrays are reused from chunk to chunk (fresh pages cost more than the arithmetic).
        weight = np.take(counts.astype(np.int32), self.sample_sorted, axis=1,
                         out=work["weight"][:b])
        packed = work["packed"][:b]  # packed[:, p]: the answers before p, packed
        np.multiply(weight, self.factor, out=packed[:, 1:])
        for r in range(b):  # one row at a time: numpy's accumulate over axis 1 strides
            np.cumsum(packed[r, 1:], out=packed[r, 1:])
        start = packed[:, self.starts] >> 32
        total = (packed[:, self.ends] >> 32) - start                   # (b, groups)
        # quantile_edges' arithmetic, on (replicate, group, quantile)
        h = (total[:, :, None] - 1) * self.q
        prev = np.floor(h)
        gamma = h - prev
        last = total[:, :, None] - 1
        upper = np.minimum(prev + 1, last)
        lower = np.minimum(prev, last)
        # The first answer whose inclusive cumulative weight exceeds base + t, searched in
        # the packed sums: weight > t exactly when packed >= (t + 1)·2^32.
        targets = np.stack([upper, lower]) + start[None, :, :, None]
        keys = ((targets.astype(np.int64) + 1) << 32) - 1
        found = np.empty(keys.shape, dtype=np.int64)
        for r in range(b):
            found[:, r] = np.searchsorted(packed[r, 1:], keys[:, r], side="right")
        found = np.minimum(found, n - 1)
        edges = _interpolated_edges(self.answers.confidence, found[1], found[0], h, gamma,
                                    last, total)
        # Cuts after the last answer <= each inner edge (calibration.bins._quantile_bins); a group
        # that weighs nothing in a replicate keeps all its answers in its first bin.
        bounds = np.empty((b, size, n_bins + 1), dtype=np.int64)
        bounds[:, :, 0] = self.starts
        bounds[:, :, 1:] = self.ends[None, :, None]
        cut = (self.answers.sizes > 0)[None, :] & (total > 0)
        if n_bins > 1 and cut.any():
            r, g = np.nonzero(cut)
            inner = edges[r, g, 1:-1]
            found_cut = np.searchsorted(self.answers.keys, g[:, None] + 1j * inner,
                                        side="right")
            bounds[r, g, 1:-1] = np.sort(found_cut, axis=1)  # bin = cuts at or before
        at = np.take_along_axis(packed, bounds.reshape(b, -1), axis=1).reshape(bounds.shape)
        count = np.diff(at >> 32, axis=2).astype(float).reshape(b * size, n_bins)
        correct = np.diff(at & 0xFFFFFFFF, axis=2).astype(float).reshape(b * size, n_bins)
        cell = self._cells(bounds, work["cell"][:b])
        terms = np.take(counts.astype(float), self.sample_row, axis=1, out=work["terms"][:b])
        terms *= self.confidence  # confidence · weight, as bin_calibration multiplies them
        conf_sum = np.bincount(cell.ravel(), weights=terms.ravel(),
                               minlength=b * size * n_bins).reshape(b * size, n_bins)
        return Binned(edges.reshape(b * size, n_bins + 1), count, conf_sum, correct)

    def _cells(self, bounds: np.ndarray, out: np.ndarray) -> np.ndarray:
        """Each answer's cell (replicate, group, bin), in the rows' order, for the confidence
        sums: its bin on the whole sample, corrected where a replicate's cuts moved (only
        the answers between a cut of the whole sample and the replicate's own cut change
        bin)."""
        b, size, n_bins, n = bounds.shape[0], self.n_groups, self.n_bins, self.n
        np.add(self.cell_static, (np.arange(b, dtype=np.int64) * size * n_bins)[:, None],
               out=out)
        if n_bins == 1:
            return out
        moved, static = bounds[:, :, 1:-1], self.bounds_static[None, :, 1:-1]
        lo, hi = np.minimum(moved, static), np.maximum(moved, static)
        lengths = (hi - lo).ravel()
        total = int(lengths.sum())
        if total == 0:
            return out
        if total > self.MOVED_LIMIT * out.size:  # cuts far away: every answer from its run
            lengths = np.diff(bounds, axis=2).ravel()
            return np.take(np.repeat(np.arange(b * size * n_bins), lengths).reshape(b, n),
                           self.position, axis=1, out=out)
        offsets = np.concatenate(([0], np.cumsum(lengths)[:-1]))
        position = np.repeat(lo.ravel() - offsets, lengths) + np.arange(total)
        r, g = np.repeat(np.divmod(np.arange(lengths.size) // (n_bins - 1), size), lengths,
                         axis=1)
        # bin = the replicate's cuts at or before the position
        bin_of = (bounds[r, g, 1:-1] <= position[:, None]).sum(axis=1)
        out[r, self.answers.order[position]] = (r * size + g) * n_bins + bin_of
        return out

    def _work(self, b: int) -> dict[str, np.ndarray]:
        if self.work is None or self.work["cell"].shape[0] < b:
            self.work = {"weight": np.empty((b, self.n), dtype=np.int32),
                         "packed": np.zeros((b, self.n + 1), dtype=np.int64),
                         "cell": np.empty((b, self.n), dtype=np.int64),
                         "terms": np.empty((b, self.n))}
        return self.work

    def _one_by_one(self, counts: np.ndarray) -> Binned:
        group = self.answers.group[np.argsort(self.answers.order)]
        parts = [bin_calibration(group, self.confidence, self.correct,
                                 n_groups=self.n_groups, n_bins=self.n_bins,
                                 strategy="quantile", weight=row[self.sample_row],
                                 order=self.answers) for row in counts]
        return Binned(*(np.concatenate([getattr(part, name) for part in parts])
                        for name in ("edges", "count", "confidence_sum", "correct_sum")))


# The range of each bootstrapped metric (the debiased ECE, a signed root, has none).
_RANGES = {"sui": (0.0, 1.0), "tus": (0.0, 1.0), "tus_geometric": (0.0, 1.0),
           "lgi": (-1.0, 1.0), "ece": (0.0, 1.0), "f1": (0.0, 1.0),
           "f2": (0.0, 1.0)}


def _with_width(value: np.ndarray, low: np.ndarray, high: np.ndarray, n: np.ndarray,
                bounds: tuple[float, float] | None) -> tuple[np.ndarray, np.ndarray]:
    """Percentile intervals, except where every replicate gave the same value (a detector
    right on all of 40 samples: SUI [0.94, 0.94]): there the Wilson-type bound of a value in
    its range on n samples (:func:`kbench_core.stats.t_interval` at zero spread), or NaN for
    a metric without a range. A zero-width interval would claim certainty the samples do not
    give (``docs/statistics.md``, zero-width intervals)."""
    flat = np.isfinite(low) & np.isfinite(high) & ~(high - low > 1e-12)
    if not flat.any():
        return low, high
    if bounds is None:
        return np.where(flat, np.nan, low), np.where(flat, np.nan, high)
    w_low, w_high = t_interval(value, np.zeros_like(value), n, bounds=bounds)
    return widen_small(low, high, w_low, w_high, n, few=0)


@dataclass(frozen=True)
class CellInputs:
    """What the bootstrap draws from when only the cells are known (a run the engine summed,
    :mod:`kbench_core.vuln.cells`): the quantity matrix per (group, sample) cell, the cells'
    groups and samples, and the calibration cells (with the answers' confidences for
    equal-mass bins)."""

    q_cells: np.ndarray
    group: np.ndarray
    sample: np.ndarray
    n_groups: int
    n_samples: int
    bins: Bins


def _bootstrap(table: pd.DataFrame, prep: _Prepared | CellInputs, weights: Mapping[str, float],
               zero_division: float, n_bins: int, binning: str, n_boot: int,
               random_state: int, no_target_reasoning: str = "zero") -> None:
    """Percentile intervals of the composites over resampled samples (contracts).

    Answers are first summed per (group, sample) cell, so a replicate costs a product over
    cells, not a pass over every answer; with uniform bins the calibration sums are cells too
    (the bin is part of the cell), with equal-mass bins each replicate recomputes its edges
    from the reweighted answers. The replicates are drawn one by one as
    :func:`~kbench_core.stats.bootstrap_groups` draws them and computed a chunk at a time
    (:func:`~kbench_core.stats.bootstrap_groups_batched`), (replicate, group) stacked as one
    group axis of ``_core``: the same floats as one replicate at a time
    (``tests/test_vuln_bootstrap_batched.py``), at a fraction of the Python overhead."""
    size = prep.n_groups
    n_s = max(prep.n_samples, 1)
    uniform = binning == "uniform"
    if isinstance(prep, CellInputs):
        group_sums = _CellSums(prep.group, prep.sample, prep.q_cells, size, n_s)
        bins = prep.bins
        if uniform:
            edges = np.linspace(0.0, 1.0, n_bins + 1)
            bin_sums = _CellSums(bins.group * n_bins + bins.bin, bins.sample,
                                 np.column_stack([bins.count, bins.confidence_sum,
                                                  bins.correct_sum]), size * n_bins, n_s)
            n_conf = 0
        else:
            assert bins.answers is not None, "equal-mass bins need the answers' confidences"
            conf_group, conf_sample, confidence, correct = bins.answers
            answers = sort_answers(conf_group, confidence, size)
            quantile_bins = _QuantileBins(answers, conf_sample, confidence, correct, size,
                                          n_bins)
            n_conf = confidence.size
    else:
        cell_key = prep.gid * max(prep.n_samples, 1) + prep.sample
        cells, cell_of_row = np.unique(cell_key, return_inverse=True)
        cell_of_row = cell_of_row.ravel()
        q_cells = np.column_stack([np.bincount(cell_of_row, weights=prep.q[:, j],
                                               minlength=cells.size) for j in range(len(_Q))])
        cell_group = cells // max(prep.n_samples, 1)
        cell_sample = cells % max(prep.n_samples, 1)
        group_sums = _CellSums(cell_group, cell_sample, q_cells, size, n_s)
        conf_group = prep.gid[prep.conf_rows]
        conf_sample = prep.sample[prep.conf_rows]
        if uniform:
            edges = np.linspace(0.0, 1.0, n_bins + 1)
            bin_of = np.searchsorted(edges[1:-1], prep.confidence, side="left")
            calib_key = (conf_group * max(prep.n_samples, 1) + conf_sample) * n_bins + bin_of
            calib_cells, calib_of_row = np.unique(calib_key, return_inverse=True)
            calib_of_row = calib_of_row.ravel()
            calib_sums = np.column_stack([
                np.bincount(calib_of_row, minlength=calib_cells.size),
                np.bincount(calib_of_row, weights=prep.confidence, minlength=calib_cells.size),
                np.bincount(calib_of_row, weights=prep.correct, minlength=calib_cells.size)])
            calib_bin = calib_cells % n_bins
            calib_gs = calib_cells // n_bins
            calib_sample = calib_gs % max(prep.n_samples, 1)
            calib_group = calib_gs // max(prep.n_samples, 1)
            bin_sums = _CellSums(calib_group * n_bins + calib_bin, calib_sample, calib_sums,
                                 size * n_bins, n_s)
        else:
            answers = sort_answers(conf_group, prep.confidence, size, order=prep.conf_order)
            quantile_bins = _QuantileBins(answers, conf_sample, prep.confidence, prep.correct,
                                          size, n_bins)
        n_conf = prep.confidence.size
    n_q = len(_Q)
    # Replicates per chunk: the largest per-chunk array (replicates x answers for equal-mass
    # bins, else replicates x samples or rows x quantities) stays near _CHUNK_FLOATS floats.
    per_replicate = max(n_s, size * n_q, size * n_bins * 3, 4 * n_conf if not uniform else 1)
    chunk = int(np.clip(_CHUNK_FLOATS // per_replicate, 1, max(n_boot, 1)))

    def statistic(counts: np.ndarray) -> np.ndarray:
        # (replicate, group) is one stacked group axis, replicate-major: row r·size + g.
        b = counts.shape[0]
        sums = group_sums(counts).reshape(b * size, n_q)
        if uniform:
            # C order, as one replicate's arrays are: numpy sums a row of eight or more
            # bins pairwise only when the bins are contiguous, and ECE must round alike.
            per_bin = np.ascontiguousarray(bin_sums(counts).transpose(2, 0, 1)).reshape(
                3, b * size, n_bins)
            binned = Binned(np.broadcast_to(edges, (b * size, n_bins + 1)), *per_bin)
        else:
            binned = quantile_bins(counts)
        core = _core(sums, binned, weights, zero_division, no_target_reasoning)
        # The SUI rank of each group in each replicate (1 = best; undefined SUI ranks last),
        # so the leaderboard can show each rank's interval.
        sui = np.where(np.isfinite(core.sui), core.sui, -np.inf).reshape(b, size)
        ranks = rankdata(-sui, method="average", axis=1)
        return np.concatenate([*(getattr(core, name).reshape(b, size)
                                 for name in _BOOTSTRAPPED), ranks], axis=1)

    low, high = bootstrap_groups_batched(max(prep.n_samples, 1), statistic, n_boot=n_boot,
                                         random_state=random_state, chunk=chunk)
    samples = (table["n_samples"].to_numpy(dtype=float) if "n_samples" in table
               else np.full(size, float(prep.n_samples)))
    for k, name in enumerate(_BOOTSTRAPPED):
        position = table.columns.get_loc(name) + 1
        lo, hi = _with_width(table[name].to_numpy(dtype=float), low[k * size:(k + 1) * size],
                             high[k * size:(k + 1) * size], samples, _RANGES.get(name))
        table.insert(position, f"{name}_low", lo)
        table.insert(position + 1, f"{name}_high", hi)
    k = len(_BOOTSTRAPPED)
    table["sui_rank_low"] = low[k * size:(k + 1) * size]
    table["sui_rank_high"] = high[k * size:(k + 1) * size]
