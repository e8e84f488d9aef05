"""Speed of the seven tiers (target: tiers + agreement on 600k judged rows, 3 judges, <= 2 s on
one core) beside a per-record Python reference.

Times ``kbench_core.vuln.tiers`` on the 200k rows of one judge (by model, by model x prompt
type, equal-mass bins) and on the 600k-row, 3-judge run one judge at a time (the selection of the
judge included); the bootstrap of the composites is timed apart (it is on request, outside the
targets). The reference iterates over records as dicts and aggregates with the ``statistics``
module, as BlockBench's own code does, for tiers 1-3 and ECE. Peak memory is measured with
``tracemalloc``. Prints the figures; asserts nothing.

    python benchmarks/vuln.py [N_ROWS]      (default 600000)
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

from kbench_core import vuln
from kbench_core.samples import big_judged_samples

VALID = ("n_target_match", "n_partial_match", "n_bonus_valid")
COUNTS = ("n_target_match", "n_partial_match", "n_bonus_valid", "n_hallucinated",
          "n_mischaracterized", "n_design_choice", "n_out_of_scope", "n_security_theater",
          "n_informational", "n_other_invalid")


def reference(records: list[dict]) -> dict:
    """Accuracy, F2, TDR, lucky-guess rate, finding precision and ECE per model, one record
    at a time (what a loop over BlockBench's per-sample metric files computes)."""
    groups: dict = defaultdict(list)
    for rec in records:
        groups[rec["model"]].append(rec)
    result = {}
    for model, recs in groups.items():
        tp = sum(1 for r in recs if r["is_vulnerable"] and r["said_vulnerable"])
        fp = sum(1 for r in recs if not r["is_vulnerable"] and r["said_vulnerable"])
        fn = sum(1 for r in recs if r["is_vulnerable"] and not r["said_vulnerable"])
        tn = len(recs) - tp - fp - fn
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall = tp / (tp + fn) if tp + fn else 0.0
        f2 = 5 * precision * recall / (4 * precision + recall) if precision + recall else 0.0
        vulnerable = [r for r in recs if r["is_vulnerable"]]
        found = sum(1 for r in vulnerable if r["target_found"])
        lucky = sum(1 for r in vulnerable if r["said_vulnerable"] and not r["target_found"])
        valid = sum(sum(r[c] for c in VALID) for r in recs)
        total = sum(sum(r[c] for c in COUNTS) for r in recs)
        bins: dict = defaultdict(list)
        for r in recs:
            conf = r["confidence"]
            correct = float(r["said_vulnerable"] == r["is_vulnerable"])
            bins[min(int(np.ceil(conf * 10)) - 1, 9) if conf > 0 else 0].append((conf, correct))
        ece = sum(len(b) / len(recs) * abs(statistics.mean(c for c, _ in b)
                                           - statistics.mean(y for _, y in b))
                  for b in bins.values())
        result[model] = ((tp + tn) / len(recs), f2, found / len(vulnerable),
                         lucky / tp if tp else 0.0, valid / total if total else 1.0, ece)
    return result


def best_of(fn, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    n_rows = int(sys.argv[1]) if len(sys.argv) > 1 else 600_000
    print(f"python {platform.python_version()}, numpy {np.__version__}, pandas {pd.__version__}"
          f", {os.cpu_count()} cpus")
    start = time.perf_counter()
    judged = big_judged_samples(n_rows)
    print(f"generated {len(judged):,} judged rows ({judged['judge'].nunique()} judges, "
          f"{judged['sample'].nunique():,} samples) in {time.perf_counter() - start:.2f} s; "
          f"frame {judged.memory_usage(deep=True).sum() / 1024**2:,.0f} MB")
    one = judged[(judged["judge"] == "judge-one").to_numpy()].reset_index(drop=True)
    print(f"\none judge: {len(one):,} rows")
    for label, options in (("by model", {}),
                           ("by model x prompt type", {"by": ("model", "prompt_type")}),
                           ("equal-mass bins", {"binning": "quantile"}),
                           ("partial credit + severity", {"partial_credit": 0.5,
                                                          "severity_weights":
                                                              vuln.SEVERITY_WEIGHTS})):
        seconds = best_of(lambda o=options: vuln.tiers(one, **o))
        print(f"  tiers, {label:<27} {seconds * 1000:7.1f} ms  "
              f"({len(one) / seconds / 1e6:5.1f} M rows/s)")

    judges = vuln.judges_of(judged)
    seconds = best_of(lambda: [vuln.tiers(judged, judge=j) for j in judges], repeat=3)
    print(f"\n{len(judged):,} rows, {len(judges)} judges one at a time (judge= selection "
          f"included): {seconds:.3f} s in all, {seconds / len(judges) * 1000:.0f} ms per judge")

    records = one.assign(**{c: one[c].astype(str) for c in ("model",)})[
        ["model", "is_vulnerable", "said_vulnerable", "target_found", "confidence",
         *COUNTS]].to_dict("records")
    start = time.perf_counter()
    ref = reference(records)
    ref_seconds = time.perf_counter() - start
    fast = best_of(lambda: vuln.tiers(one))
    table = vuln.tiers(one).set_index("model")
    agree = all(np.allclose([table.loc[m, c] for c in ("accuracy", "f2", "tdr",
                                                        "lucky_guess_rate",
                                                        "finding_precision", "ece")],
                            values) for m, values in ref.items())
    print(f"\nper-record reference (tiers 1-3 and ECE only) on {len(one):,} rows: "
          f"{ref_seconds:.2f} s; tiers (every metric and interval): {fast * 1000:.0f} ms, "
          f"{ref_seconds / fast:.0f}x faster; same values: {agree}")

    tracemalloc.start()
    vuln.tiers(one)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    size = one.memory_usage(deep=True).sum()
    print(f"peak memory of tiers: {peak / 1024**2:,.0f} MB for a {size / 1024**2:,.0f} MB frame "
          f"({peak / size:.1f}x)")

    print("\nbootstrap of the composites (on request; outside the targets):")
    for label, options in (("uniform bins, 1000 resamples", {}),
                           ("equal-mass bins, 1000 resamples", {"binning": "quantile"})):
        start = time.perf_counter()
        vuln.tiers(one, ci="bootstrap", **options)
        print(f"  {label:<33} {time.perf_counter() - start:6.2f} s "
              f"({one['sample'].nunique():,} samples resampled)")


if __name__ == "__main__":
    main()
