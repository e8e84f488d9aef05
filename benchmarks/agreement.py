"""Judge-agreement speed on 600k judged rows with 3 judges, beside a per-record
Python reference for Cohen's and Fleiss' κ.

Times every coefficient of :mod:`kbench_core.agreement` (best of 3), the consensus and the
tiers per judge, then the bootstraps (on request, outside the speed targets). The reference
iterates over records as dicts, collects each item's judgements, and counts agreement pairs
one item at a time, as the seeds' own code would. Prints the figures; asserts nothing.

    python benchmarks/agreement.py [N_ROWS]
"""

from __future__ import annotations

import os
import platform
import sys
import time
import tracemalloc
from collections import Counter, defaultdict
from collections.abc import Callable
from itertools import combinations
from typing import Any

import numpy as np
from _timing import best_of  # benchmarks/_timing.py

from kbench_core import agreement
from kbench_core.samples import big_judged_samples


def reference(records: list[dict], label: str) -> tuple[dict, float]:
    """Cohen's κ per pair and Fleiss' κ of ``label``, one record and one item at a time."""
    items: dict = defaultdict(dict)
    for rec in records:
        items[(rec["sample"], rec["model"], rec["prompt_type"])][rec["judge"]] = rec[label]
    judges = sorted({j for votes in items.values() for j in votes})
    kappas = {}
    for a, b in combinations(judges, 2):
        pairs = [(v[a], v[b]) for v in items.values() if a in v and b in v]
        n = len(pairs)
        observed = sum(x == y for x, y in pairs) / n
        left, right = Counter(x for x, _ in pairs), Counter(y for _, y in pairs)
        expected = sum(left[k] * right[k] for k in left) / (n * n)
        kappas[(a, b)] = (observed - expected) / (1 - expected)
    complete = [v for v in items.values() if len(v) == len(judges)]
    r, n = len(judges), len(complete)
    totals: Counter = Counter()
    agree = 0.0
    for votes in complete:
        counts = Counter(votes.values())
        totals.update(counts)
        agree += sum(c * (c - 1) for c in counts.values()) / (r * (r - 1))
    p_e = sum((t / (n * r)) ** 2 for t in totals.values())
    return kappas, (agree / n - p_e) / (1 - p_e)


def main() -> None:
    n_rows = int(sys.argv[1]) if len(sys.argv) > 1 else 600_000
    frame = big_judged_samples(n_rows)
    size_mb = frame.memory_usage(deep=True).sum() / 1024**2
    n_items = len(frame) // frame["judge"].nunique()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}, numpy {np.__version__}")
    print(f"rows {len(frame):,}: {frame['judge'].nunique()} judges x {n_items:,} items "
          f"({frame['sample'].nunique():,} samples x {frame['model'].nunique()} detectors x "
          f"{frame['prompt_type'].nunique()} prompt types); frame {size_mb:.0f} MB in memory")
    cases: list[tuple[str, Callable[[], Any]]] = [
        ("pairwise_kappa(target_found)", lambda: agreement.pairwise_kappa(frame,
                                                                           "target_found")),
        ("pairwise_kappa(type_match, quadratic)",
         lambda: agreement.pairwise_kappa(frame, "type_match", weights="quadratic")),
        ("fleiss_kappa(target_found)", lambda: agreement.fleiss_kappa(frame, "target_found")),
        ("fleiss_kappa(type_match)", lambda: agreement.fleiss_kappa(frame, "type_match")),
        ("krippendorff_alpha(target_found, nominal)",
         lambda: agreement.krippendorff_alpha(frame, "target_found")),
        ("krippendorff_alpha(type_match, ordinal)",
         lambda: agreement.krippendorff_alpha(frame, "type_match", level="ordinal")),
        ("krippendorff_alpha(rcir, interval)",
         lambda: agreement.krippendorff_alpha(frame, "rcir", level="interval")),
        ("percent_agreement(target_found)",
         lambda: agreement.percent_agreement(frame, "target_found")),
        ("consensus (all 26 columns)", lambda: agreement.consensus(frame)),
        ("disagreements(target_found)",
         lambda: agreement.disagreements(frame, "target_found")),
        ("label_agreement (7 labels)", lambda: agreement.label_agreement(frame)),
        ("judge_spread (tiers x 3 judges + consensus)", lambda: agreement.judge_spread(frame)),
    ]
    results = {}
    total = 0.0
    for name, fn in cases:
        seconds, results[name] = best_of(fn)
        total += seconds
        print(f"  {name:<46} {seconds:7.3f} s")
    print(f"  {'all of the above':<46} {total:7.3f} s")
    tracemalloc.start()
    agreement.consensus(frame)
    peak = tracemalloc.get_traced_memory()[1] / 1024**2
    tracemalloc.stop()
    print(f"peak memory during the consensus: {peak:.0f} MB = {peak / size_mb:.2f}x the frame")

    print("bootstraps (1000 resamples of the items; on request, outside the targets):")
    boots: list[tuple[str, Callable[[], Any]]] = [
        ("krippendorff_alpha(target_found)", lambda: agreement.krippendorff_alpha(
            frame, "target_found", ci="bootstrap")),
        ("krippendorff_alpha(rcir, interval)", lambda: agreement.krippendorff_alpha(
            frame, "rcir", level="interval", ci="bootstrap")),
        ("fleiss_kappa(target_found)", lambda: agreement.fleiss_kappa(
            frame, "target_found", ci="bootstrap")),
        ("pairwise_kappa(target_found)", lambda: agreement.pairwise_kappa(
            frame, "target_found", ci="bootstrap")),
    ]
    for name, fn in boots:
        seconds, _ = best_of(fn, repeat=1)
        print(f"  {name:<46} {seconds:7.2f} s")

    columns = ["sample", "model", "prompt_type", "judge", "target_found"]
    records = frame[columns].astype(object).to_dict("records")
    start = time.perf_counter()
    kappas, fleiss = reference(records, "target_found")
    slow = time.perf_counter() - start
    fast = (best_of(lambda: agreement.pairwise_kappa(frame, "target_found", ci=None))[0]
            + best_of(lambda: agreement.fleiss_kappa(frame, "target_found", ci=None))[0])
    pairs = results["pairwise_kappa(target_found)"].set_index(["judge_a", "judge_b"])["kappa"]
    worst = max(abs(pairs[key] - value) for key, value in kappas.items())
    worst = max(worst, abs(results["fleiss_kappa(target_found)"].value - fleiss))
    print(f"per-record reference (Cohen's κ x 3 pairs + Fleiss' κ): {slow:.2f} s vs "
          f"{fast:.3f} s vectorised -> {slow / fast:.0f}x; largest difference {worst:.1e}")


if __name__ == "__main__":
    main()
