"""Percentile bootstrap intervals of the composites (SUI, TUS, LGI, ECE, MCE, F1, F2) and of
the SUI rank, over resampled samples (contracts), for ``tiers(..., ci="bootstrap")``."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from scipy import sparse
from scipy.stats import rankdata

from kbench_core.calibration import Binned, SortedAnswers, bin_calibration, sort_answers
from kbench_core.stats import bootstrap_groups_batched, t_interval, widen_small
from kbench_core.vuln._formulas import _core
from kbench_core.vuln._prepare import _Q, _Prepared

_BOOTSTRAPPED = ("sui", "tus", "tus_geometric", "lgi", "ece", "ece_l2_debiased", "mce", "f1",
                 "f2")

_CHUNK_FLOATS = 4_000_000  # about 32 MB per array of a chunk of replicates


def _stack_answers(answers: SortedAnswers, b: int, size: int) -> SortedAnswers:
    """``answers`` repeated for ``b`` replicates, replicate r's group g renumbered r·size + g:
    what :func:`sort_answers` gives for the stacked codes, without sorting them again."""
    n = answers.group.size
    shift = np.arange(b, dtype=np.int64)
    group = (answers.group[None, :] + (shift * size)[:, None]).ravel()
    confidence = np.tile(answers.confidence, b)
    sizes = np.tile(answers.sizes, b)
    return SortedAnswers(order=(answers.order[None, :] + (shift * n)[:, None]).ravel(),
                         group=group, confidence=confidence, keys=group + 1j * confidence,
                         starts=np.concatenate(([0], np.cumsum(sizes)[:-1])), sizes=sizes)

# The range of each bootstrapped metric (the debiased ECE, a signed root, has none).
_RANGES = {"sui": (0.0, 1.0), "tus": (0.0, 1.0), "tus_geometric": (0.0, 1.0),
           "lgi": (-1.0, 1.0), "ece": (0.0, 1.0), "mce": (0.0, 1.0), "f1": (0.0, 1.0),
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


def _bootstrap(table: pd.DataFrame, prep: _Prepared, weights: Mapping[str, float],
               zero_division: float, n_bins: int, binning: str, n_boot: int,
               random_state: int, no_target_reasoning: str = "zero") -> None:
    """Percentile intervals of the composites over resampled samples (contracts).

    Answers are first summed per (group, sample) cell, so a replicate costs one sparse
    product over cells, not a pass over every answer; with uniform bins the calibration sums
    are cells too (the bin is part of the cell), with equal-mass bins each replicate
    recomputes its edges from the reweighted answers."""
    size = prep.n_groups
    cell_key = prep.gid * max(prep.n_samples, 1) + prep.sample
    cells, cell_of_row = np.unique(cell_key, return_inverse=True)
    cell_of_row = cell_of_row.ravel()
    q_cells = np.column_stack([np.bincount(cell_of_row, weights=prep.q[:, j],
                                           minlength=cells.size) for j in range(len(_Q))])
    cell_group = cells // max(prep.n_samples, 1)
    cell_sample = cells % max(prep.n_samples, 1)
    to_group = sparse.csr_matrix((np.ones(cells.size), (cell_group, np.arange(cells.size))),
                                 shape=(size, cells.size))
    conf_group = prep.gid[prep.conf_rows]
    conf_sample = prep.sample[prep.conf_rows]
    uniform = binning == "uniform"
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
        to_bin = sparse.csr_matrix(
            (np.ones(calib_cells.size), (calib_group * n_bins + calib_bin,
                                         np.arange(calib_cells.size))),
            shape=(size * n_bins, calib_cells.size))
        edge_table = np.broadcast_to(edges, (size, n_bins + 1))
    else:
        answers = sort_answers(conf_group, prep.confidence, size, order=prep.conf_order)
    n_cells, n_q, n_conf = cells.size, len(_Q), prep.confidence.size
    # Replicates per chunk: the largest per-chunk array (replicates x cells x quantities, or
    # replicates x answers for equal-mass bins) stays near _CHUNK_FLOATS floats.
    per_replicate = max(n_cells * n_q, calib_cells.size * 3 if uniform else 4 * n_conf, 1)
    chunk = int(np.clip(_CHUNK_FLOATS // per_replicate, 1, max(n_boot, 1)))
    stacked: dict[int, SortedAnswers] = {}

    def statistic(counts: np.ndarray) -> np.ndarray:
        # (replicate, group) is one stacked group axis, replicate-major: row r·size + g.
        b = counts.shape[0]
        # to_group @ (cells x (replicate, quantity)) adds each group's cells in the order
        # one replicate's sparse product adds them, so the sums are the same floats.
        x = q_cells[:, None, :] * counts[:, cell_sample].T[:, :, None]
        sums = (to_group @ x.reshape(n_cells, b * n_q)).reshape(size, b, n_q)
        sums = np.ascontiguousarray(sums.transpose(1, 0, 2)).reshape(b * size, n_q)
        if uniform:
            y = calib_sums[:, None, :] * counts[:, calib_sample].T[:, :, None]
            per_bin = (to_bin @ y.reshape(calib_cells.size, b * 3)).reshape(size, n_bins, b, 3)
            # C order, as one replicate's arrays are: numpy sums a row of eight or more
            # bins pairwise only when the bins are contiguous, and ECE must round alike.
            per_bin = np.ascontiguousarray(per_bin.transpose(3, 2, 0, 1)).reshape(
                3, b * size, n_bins)
            binned = Binned(np.broadcast_to(edges, (b * size, n_bins + 1)), *per_bin)
        else:
            if b not in stacked:
                stacked[b] = _stack_answers(answers, b, size)
            shift = (np.arange(b, dtype=np.int64) * size)[:, None]
            binned = bin_calibration((conf_group[None, :] + shift).ravel(),
                                     np.tile(prep.confidence, b), np.tile(prep.correct, b),
                                     n_groups=b * size, n_bins=n_bins, strategy="quantile",
                                     weight=counts[:, conf_sample].ravel(), order=stacked[b])
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
