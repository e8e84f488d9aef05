"""Memory and time of the judged bootstrap drawn from an engine's cells (``tiers(...,
ci="bootstrap")`` of a run kept in DuckDB or Spark, ``kbench profile``'s leaderboard): the
per (group × sample) sums of the quantity matrix and the calibration cells, 1000 replicates.

The cells are synthetic, shaped as the 10M-row judged run's (3 detectors, 370,370 samples,
one cell per detector × sample, 18 quantities: counts, and three reasoning scores that do not
sum exactly; uniform bins, one calibration cell per answer's cell). Prints the seconds and
the peak resident memory the bootstrap added (``/proc/self/status``' VmHWM, reset before it);
asserts nothing. ``--tree DIR`` runs another checkout's kbench (e.g. a worktree of an older
commit) on the same cells.

    python benchmarks/vuln_bootstrap_cells.py [--samples 370370] [--groups 3] [--tree DIR]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd


def _peak_mib() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM"):
                return int(line.split()[1]) // 1024
    return 0


def _reset_peak() -> None:
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=370_370)
    parser.add_argument("--groups", type=int, default=3)
    parser.add_argument("--n-boot", type=int, default=1000)
    parser.add_argument("--tree", type=Path, default=Path(__file__).resolve().parents[1])
    args = parser.parse_args()
    sys.path.insert(0, str(args.tree.resolve()))
    from kbench_core.vuln import bootstrap
    from kbench_core.vuln.cells import Bins
    from kbench_core.vuln.definitions import SUI_WEIGHTS

    rng = np.random.default_rng(0)
    n_s, size, n_bins = args.samples, args.groups, 10
    group = np.repeat(np.arange(size), n_s)
    sample = np.tile(np.arange(n_s), size)
    n_cells = group.size
    whole = rng.integers(1, 6, n_cells)
    answers = whole.astype(float)
    counts = rng.binomial(whole[:, None], 0.5, (n_cells, 15)).astype(float)
    counts[:, 0] = answers
    scores = rng.random((n_cells, 3)).round(3) * answers[:, None]
    q_cells = np.column_stack([counts, scores])
    bin_ = rng.integers(0, n_bins, n_cells)
    order = np.lexsort((sample, bin_, group))
    bins = Bins(n_bins=n_bins, binning="uniform",
                edges=np.broadcast_to(np.linspace(0, 1, n_bins + 1), (size, n_bins + 1)),
                group=group[order], bin=bin_[order], sample=sample[order],
                count=answers[order], confidence_sum=(answers * rng.random(n_cells))[order],
                correct_sum=np.floor(answers * rng.random(n_cells))[order], answers=None,
                per_sample=True)
    cells = bootstrap.CellInputs(q_cells=q_cells, group=group, sample=sample, n_groups=size,
                                 n_samples=n_s, bins=bins)
    table = pd.DataFrame({"ece_l2_debiased": np.zeros(size), "n_samples": float(n_s)})
    print(f"{args.tree}: {n_cells:,} cells of {q_cells.shape[1]} quantities "
          f"({q_cells.nbytes / 2**20:.0f} MiB), {n_s:,} samples, {args.n_boot} replicates; "
          f"load average {os.getloadavg()[0]:.1f}")
    _reset_peak()
    before, start = _peak_mib(), time.perf_counter()
    bootstrap._bootstrap(table, cells, SUI_WEIGHTS, 0.0, n_bins, "uniform", args.n_boot, 0)
    seconds = time.perf_counter() - start
    print(f"bootstrap: {seconds:.1f} s, peak {_peak_mib()} MiB "
          f"(+{_peak_mib() - before} MiB over the cells)")
    print(table.to_string(index=False))


if __name__ == "__main__":
    main()
