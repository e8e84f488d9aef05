"""Model comparison on the 1M-row bias run: per-item aggregation, every pair with clustered
errors, one pair's per-bias forest table, and 1000-replicate rank intervals. Prints the
figures; asserts nothing.

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
    print(f"{label:<62} {time.perf_counter() - start:6.2f} s")
    return result


def main() -> None:
    n_rows = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    frame = big_bias_trials(n_rows)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}; {len(frame):,} rows, "
          f"{frame['model'].nunique()} models, {frame['bias'].nunique()} biases")
    table = timed("items x models table (trials averaged within items)",
                  lambda: compare.item_values(frame, "score"))
    print(f"  {len(table):,} items x {table.shape[1]} models")
    a, b = table.columns[:2]
    timed(f"paired_difference {a} - {b}, clustered by bias",
          lambda: compare.paired_difference(frame, "score", a, b, cluster="bias"))
    pairs = timed("compare_models, all pairs, clustered by bias, Holm",
                  lambda: compare.compare_models(frame, "score", cluster="bias"))
    print(f"  {len(pairs)} pairs; {int((pairs['p_adjusted'] < 0.05).sum())} with Holm p < 0.05")
    timed("group_differences per bias (forest plot table)",
          lambda: compare.group_differences(frame, "score", a, b, "bias"))
    ranks = timed("rank_intervals, 1000 bootstrap replicates",
                  lambda: compare.rank_intervals(frame, "score"))
    width = (ranks["rank_high"] - ranks["rank_low"]).mean()
    print(f"  mean rank-interval width {width:.2f}")
    per_bias = frame.groupby(["model", "bias"], observed=True)["score"].mean().reset_index()
    timed("rank_intervals over biases (per-bias means), 1000 replicates",
          lambda: compare.rank_intervals(per_bias, "score", item="bias"))


if __name__ == "__main__":
    main()
