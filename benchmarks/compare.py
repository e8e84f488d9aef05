"""Model comparison on the 1M-row bias run: per-item aggregation, every pair with clustered
errors, and 1000-replicate rank intervals. Prints the figures; asserts nothing.

    python benchmarks/compare.py [N_ROWS]
"""

from __future__ import annotations

import os
import platform
import sys
import time

from kbench_core import compare
from kbench_core.samples import big_bias_trials


def timed(label: str, fn):
    start = time.perf_counter()
    result = fn()
    print(f"{label:<58} {time.perf_counter() - start:6.2f} s")
    return result


def main() -> None:
    n_rows = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    frame = big_bias_trials(n_rows)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}; {len(frame):,} rows, "
          f"{frame['model'].nunique()} models")
    table = timed("items x models table (trials averaged within items)",
                  lambda: compare.item_values(frame, "score"))
    print(f"  {len(table):,} items")
    timed("compare_models, all pairs, clustered by bias, Holm",
          lambda: compare.compare_models(frame, "score", cluster="bias"))
    timed("rank_intervals, 1000 bootstrap replicates",
          lambda: compare.rank_intervals(frame, "score"))


if __name__ == "__main__":
    main()
