"""PAS and ECS on 100k replication tests across 60 configurations (issue 5), beside a
per-record reference (tests as dicts, ``statistics`` means). Prints the figures.

    python benchmarks/replication.py [N_TESTS] [N_MODELS]
"""

from __future__ import annotations

import math
import os
import platform
import statistics
import sys
import time
from collections import defaultdict

from kbench_core import replication
from kbench_core.samples import replication_tests


def timed(label: str, fn, repeat: int = 3):
    best, result = math.inf, None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    print(f"{label:<52} {best:6.3f} s")
    return result, best


def reference_pas(records: list[dict]) -> dict:
    """Per model PAS, one record at a time (Fisher pooling per finding and study)."""
    findings: dict = defaultdict(list)
    for rec in records:
        p = rec["human_pi"] * rec["agent_pi"] + (1 - rec["human_pi"]) * (1 - rec["agent_pi"])
        r = max(-(1 - 1e-6), min(1 - 1e-6, 2 * p - 1))
        findings[(rec["model"], rec["study"], rec["finding"])].append(math.atanh(r))
    studies: dict = defaultdict(list)
    for (model, study, _), zs in findings.items():
        studies[(model, study)].append((math.tanh(statistics.mean(zs)) + 1) / 2)
    models: dict = defaultdict(list)
    for (model, _), values in studies.items():
        r = [max(-(1 - 1e-6), min(1 - 1e-6, 2 * v - 1)) for v in values]
        models[model].append((math.tanh(statistics.mean(map(math.atanh, r))) + 1) / 2)
    return {m: statistics.mean(v) for m, v in models.items()}


def main() -> None:
    n_tests = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    n_models = int(sys.argv[2]) if len(sys.argv) > 2 else 60
    # 6 tests per study on average: n_tests / n_models / 6 studies per configuration
    models = [f"synthetic-agent-{i:02d}" for i in range(n_models)]
    tests = replication_tests(models=models, n_studies=max(1, round(n_tests / n_models / 6)))
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}; {len(tests):,} tests, "
          f"{tests['model'].nunique()} configurations, {tests['study'].nunique()} studies")
    result, fast = timed("PAS (test -> finding -> study -> model)", lambda: replication.pas(tests))
    timed("ECS overall (structure weights, Lin interval)", lambda: replication.ecs(tests))
    timed("ECS per study", lambda: replication.ecs(tests, level="study"))
    timed("ECS per domain", lambda: replication.ecs(tests, level="domain"))
    records = tests[["model", "study", "finding", "human_pi", "agent_pi"]].to_dict("records")
    start = time.perf_counter()
    ref = reference_pas(records)
    slow = time.perf_counter() - start
    ours = result.model.set_index("model")["pas"]
    worst = max(abs(ours[m] - v) for m, v in ref.items())
    print(f"per-record reference PAS: {slow:.2f} s -> {slow / fast:.0f}x; largest |diff| "
          f"{worst:.1e}")
    start = time.perf_counter()
    replication.ecs(tests, ci="bootstrap", n_boot=200)
    print(f"ECS cluster bootstrap, 200 resamples (on request): {time.perf_counter() - start:.2f} s")


if __name__ == "__main__":
    main()
