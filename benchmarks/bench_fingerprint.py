"""Fingerprint speed on 1M bias rows beside a per-record Python reference (SPEC 5: <= 0.5 s
and >= 50x the reference). The reference iterates over records as dicts and aggregates with
the ``statistics`` module, as KahneBench's own code does. Prints the figures; asserts nothing.

    python benchmarks/bench_fingerprint.py [N_ROWS]
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
import time
from collections import defaultdict

import numpy as np

from kbench_core import kahne
from kbench_core.samples import bias_trials_of_size

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


def main() -> None:
    n_rows = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    frame = bias_trials_of_size(n_rows).drop(columns=["prompt", "response", "answer", "id"])
    for col in ("model", "bias", "domain", "condition", "intensity", "method", "method_kind",
                "category"):
        frame[col] = frame[col].astype("category")
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}; rows {len(frame):,}, "
          f"{frame['model'].nunique()} models x {frame['bias'].nunique()} biases")
    times = []
    for _ in range(5):
        start = time.perf_counter()
        fp = kahne.fingerprint(frame)
        times.append(time.perf_counter() - start)
    fast = min(times)
    records = frame.astype(object).where(frame.notna(), np.nan).to_dict("records")
    start = time.perf_counter()
    ref = reference(records)
    slow = time.perf_counter() - start
    table = fp.biases.set_index(["model", "bias"])
    worst = max(abs(table.loc[key, "bms"] - value[0]) for key, value in ref.items()
                if value[0] == value[0])
    print(f"fingerprint (all six metrics): {fast:.3f} s best of 5 (target <= 0.5 s)")
    print(f"per-record reference (BMS, BCI, RCI, CAS only): {slow:.2f} s -> {slow / fast:.0f}x")
    print(f"largest |BMS - reference BMS|: {worst:.2e}")


if __name__ == "__main__":
    main()
