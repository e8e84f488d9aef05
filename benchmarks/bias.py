"""Fingerprint speed and memory on 1M bias rows (8 models x 69 biases x 5 domains) beside a
per-record Python reference (targets: <= 0.5 s and >= 50x the reference on one core).

The reference iterates over records as dicts and aggregates with the ``statistics`` module, as
KahneBench's own code does. Peak memory is measured with ``tracemalloc`` (numpy reports its
buffers to it) and compared with the frame's own in-memory size. The BMS bootstrap is timed
separately: it is on request and outside the targets. Prints the figures; asserts nothing.

    python benchmarks/bias.py [N_ROWS]
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
import time
import tracemalloc
from collections import defaultdict

import numpy as np
import pandas as pd

from kbench_core import kahne
from kbench_core.samples import big_bias_trials

WEIGHTS = kahne.INTENSITY_WEIGHTS
AGG = kahne.AGGREGATION_WEIGHTS


def reference(records: list[dict]) -> dict:
    """BMS, BCI, RCI and CAS per model x bias, one record at a time."""
    groups: dict = defaultdict(list)
    for rec in records:
        groups[(rec["model"], rec["bias"])].append(rec)
    result = {}
    for key, recs in groups.items():
        known = [r for r in recs if r["score"] == r["score"]]
        control = [r["score"] for r in known if r["condition"] == "control"]
        control_mean = statistics.mean(control) if control else 0.0
        mags = {}
        for level in WEIGHTS:
            scores = [r["score"] for r in known
                      if r["condition"] == "treatment" and r["intensity"] == level]
            if scores:
                mags[level] = min(WEIGHTS[level] * abs(statistics.mean(scores) - control_mean), 1)
        bms = sum(AGG[k] * v for k, v in mags.items()) / sum(AGG[k] for k in mags) if mags \
            else float("nan")
        domains: dict = defaultdict(list)
        for r in known:
            if r["condition"] == "treatment":
                domains[r["domain"]].append(r["score"])
        means = [statistics.mean(v) for v in domains.values()]
        bci = 1 - min(statistics.pstdev(means) / 0.5, 1) if means else float("nan")
        cells: dict = defaultdict(list)
        for r in known:
            cells[(r["condition"], r["intensity"], r["method"])].append(r["score"])
        rci = statistics.mean(
            1 - min(statistics.pvariance(v) / (m * (1 - m) if 0 < (m := statistics.mean(v)) < 1
                                               else 0.25), 1) for v in cells.values())
        pairs = [(r["confidence"], 1 - r["score"]) for r in known
                 if r["confidence"] == r["confidence"]]
        cas = (1 - min(abs(statistics.mean(c for c, _ in pairs)
                           - statistics.mean(a for _, a in pairs)), 1)) if pairs else None
        result[key] = (bms, bci, rci, cas)
    return result


def trials(n_rows: int) -> pd.DataFrame:
    """``n_rows`` trials of 8 models: the generator spreads rows over 10 models, so make 10/8 as
    many and keep the first eight."""
    frame = big_bias_trials(n_rows * 10 // 8)
    keep = sorted(frame["model"].unique())[:8]
    frame = frame[frame["model"].isin(keep)].drop(columns=["prompt", "response", "answer",
                                                            "id"], errors="ignore")
    for col in ("model", "bias", "domain", "condition", "intensity", "method", "method_kind",
                "category"):
        if col in frame:
            frame[col] = frame[col].astype("category").cat.remove_unused_categories()
    return frame.reset_index(drop=True)


def main() -> None:
    n_rows = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    frame = trials(n_rows)
    size_mb = frame.memory_usage(deep=True).sum() / 1024**2
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}, numpy {np.__version__}")
    print(f"rows {len(frame):,}: {frame['model'].nunique()} models x "
          f"{frame['bias'].nunique()} biases x {frame['domain'].nunique()} domains; "
          f"frame {size_mb:.0f} MB in memory")
    times = []
    for _ in range(5):
        start = time.perf_counter()
        fp = kahne.fingerprint(frame)
        times.append(time.perf_counter() - start)
    fast = min(times)
    tracemalloc.start()
    kahne.fingerprint(frame)
    peak = tracemalloc.get_traced_memory()[1] / 1024**2
    tracemalloc.stop()
    start = time.perf_counter()
    kahne.fingerprint(frame, ci="bootstrap", n_boot=1000)
    boot = time.perf_counter() - start
    records = frame.astype(object).where(frame.notna(), np.nan).to_dict("records")
    start = time.perf_counter()
    ref = reference(records)
    slow = time.perf_counter() - start
    table = fp.biases.set_index(["model", "bias"])
    worst = max(abs(table.loc[key, "bms"] - value[0]) for key, value in ref.items()
                if value[0] == value[0])
    print(f"fingerprint (all six metrics): {fast:.3f} s best of 5 (target <= 0.5 s), "
          f"{len(frame) / fast / 1e6:.1f} M rows/s")
    print(f"peak memory during the fingerprint: {peak:.0f} MB = {peak / size_mb:.2f}x the "
          "frame (target <= 4x)")
    print(f"per-record reference (BMS, BCI, RCI, CAS only): {slow:.2f} s -> {slow / fast:.0f}x "
          "(target >= 50x)")
    print(f"largest |BMS - reference BMS|: {worst:.2e}")
    print(f"fingerprint with BMS bootstrap (1000 resamples, outside the targets): {boot:.2f} s")


if __name__ == "__main__":
    main()
