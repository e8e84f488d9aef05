"""PAS and ECS on 100k replication tests across 60 configurations (issue 5), beside per-record
references (tests as dicts, ``statistics`` means, as the seed's code iterates), plus the
HumanStudy-Bench effect-list import at the same size. Prints the figures.

    python benchmarks/replication.py [N_TESTS] [N_MODELS]

``samples.big_replication_tests`` makes its rows from three agents only, so the 60
configurations come from ``samples.replication_tests(models=...)`` with as many studies as
give ``N_TESTS`` rows (6 tests per study on average).
"""

from __future__ import annotations

import json
import math
import os
import platform
import statistics
import sys
import time
from collections import defaultdict

import numpy as np

from kbench_core import replication
from kbench_core.io import load_run
from kbench_core.samples import replication_tests


def timed(label: str, fn, rows: int, repeat: int = 3):
    """Best of ``repeat`` runs; prints seconds and rows per second."""
    best, result = math.inf, None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    print(f"{label:<56} {best:7.3f} s  {rows / best:>12,.0f} rows/s")
    return result, best


def reference_pas(records: list[dict]) -> dict:
    """Per model PAS, one record at a time (Fisher pooling per finding and study)."""
    findings: dict = defaultdict(list)
    for rec in records:
        p = rec["human_pi"] * rec["agent_pi"] + (1 - rec["human_pi"]) * (1 - rec["agent_pi"])
        findings[(rec["model"], rec["study"], rec["finding"])].append(p)
    studies: dict = defaultdict(list)
    for (model, study, _), values in findings.items():
        if len(values) == 1:  # the seed: one test keeps its PAS
            studies[(model, study)].append(values[0])
            continue
        zs = [math.atanh(max(-(1 - 1e-6), min(1 - 1e-6, 2 * v - 1))) for v in values]
        studies[(model, study)].append((math.tanh(statistics.mean(zs)) + 1) / 2)
    models: dict = defaultdict(list)
    for (model, _), values in studies.items():
        if len(values) == 1:
            models[model].append(values[0])
            continue
        zs = [math.atanh(max(-(1 - 1e-6), min(1 - 1e-6, 2 * v - 1))) for v in values]
        models[model].append((math.tanh(statistics.mean(zs)) + 1) / 2)
    return {m: statistics.mean(v) for m, v in models.items()}


def reference_ecs(records: list[dict]) -> dict:
    """Per model overall ECS with structure weights, one record at a time."""
    per_model: dict = defaultdict(list)
    for rec in records:
        per_model[rec["model"]].append(rec)
    out = {}
    for model, tests in per_model.items():
        tests_in_finding: dict = defaultdict(int)
        findings_in_study: dict = defaultdict(set)
        for rec in tests:
            tests_in_finding[(rec["study"], rec["finding"])] += 1
            findings_in_study[rec["study"]].add(rec["finding"])
        x = [rec["human_d"] for rec in tests]
        y = [rec["agent_d"] for rec in tests]
        w = [1 / (len(findings_in_study[rec["study"]])
                  * tests_in_finding[(rec["study"], rec["finding"])]) for rec in tests]
        total = sum(w)
        mx = sum(wi * xi for wi, xi in zip(w, x, strict=True)) / total
        my = sum(wi * yi for wi, yi in zip(w, y, strict=True)) / total
        vx = sum(wi * (xi - mx) ** 2 for wi, xi in zip(w, x, strict=True)) / total
        vy = sum(wi * (yi - my) ** 2 for wi, yi in zip(w, y, strict=True)) / total
        cov = sum(wi * (xi - mx) * (yi - my) for wi, xi, yi in zip(w, x, y, strict=True)) / total
        out[model] = 2 * cov / (vx + vy + (mx - my) ** 2) if vx + vy > 0 else 0.0
    return out


def main() -> None:
    n_tests = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    n_models = int(sys.argv[2]) if len(sys.argv) > 2 else 60
    models = [f"synthetic-agent-{i:02d}" for i in range(n_models)]
    tests = replication_tests(models=models, n_studies=max(1, round(n_tests / n_models / 6)))
    rows = len(tests)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}; {rows:,} tests, {tests['model'].nunique()} "
          f"configurations, {tests['study'].nunique()} studies")
    native = tests.drop(columns=["human_d", "agent_d"])  # d from the native effect sizes
    prepared, _ = timed("prepare_tests (d from native effects, posteriors)",
                        lambda: replication.prepare_tests(native), rows)
    result, fast = timed("PAS, every level (t interval over studies)",
                         lambda: replication.pas(tests), rows)
    timed("PAS, n_eff weights, simple mean over findings",
          lambda: replication.pas(tests, finding_weights="n_eff", study_pooling="mean"), rows)
    overall, ecs_fast = timed("ECS overall (structure weights, Lin interval)",
                              lambda: replication.ecs(tests), rows)
    timed("ECS per domain", lambda: replication.ecs(tests, level="domain"), rows)
    timed("ECS per study", lambda: replication.ecs(tests, level="study"), rows)
    timed("ECS overall from native effects (effect_to_d first)",
          lambda: replication.ecs(native), rows)
    timed("ECS per study, published (equal, unnormalised)",
          lambda: replication.ecs(tests, level="study", weighting="equal",
                                  normalize_weights=False), rows)

    records = prepared[["model", "study", "finding", "human_pi", "agent_pi", "d_h",
                        "d_a"]].rename(columns={"d_h": "human_d", "d_a": "agent_d"})
    records = records.astype({c: str for c in ("model", "study", "finding")}).to_dict("records")
    start = time.perf_counter()
    ref = reference_pas(records)
    slow = time.perf_counter() - start
    ours = result.model.set_index("model")["pas"]
    worst = max(abs(ours[m] - v) for m, v in ref.items())
    print(f"per-record reference PAS: {slow:.2f} s -> {slow / fast:.0f}x faster; largest "
          f"|diff| {worst:.1e}")
    start = time.perf_counter()
    ref_ecs = reference_ecs(records)
    slow = time.perf_counter() - start
    ours_ecs = overall.set_index("model")["ecs"]
    worst = max(abs(ours_ecs[m] - v) for m, v in ref_ecs.items())
    print(f"per-record reference ECS: {slow:.2f} s -> {slow / ecs_fast:.0f}x faster; largest "
          f"|diff| {worst:.1e}")

    start = time.perf_counter()
    replication.pas(tests, ci="bootstrap", n_boot=200)
    print(f"PAS bootstrap over studies, then findings within them, 200 resamples (on request): "
          f"{time.perf_counter() - start:.2f} s")
    start = time.perf_counter()
    replication.ecs(tests, ci="bootstrap", n_boot=200)
    print(f"ECS cluster bootstrap over studies, 200 resamples (on request): "
          f"{time.perf_counter() - start:.2f} s")

    # The HumanStudy-Bench effect list at the same size, through load_run.
    rng = np.random.default_rng(0)
    effect_list = [{"Model": rec["model"], "Method": "v1", "ES_Original": rec["human_d"],
                    "ES_Replication": rec["agent_d"], "Significant_Replication": bool(
                        rng.random() < 0.5), "Power": 0.8, "Study_ID": rec["study"],
                    "Sub_Study_ID": rec["finding"], "Finding_ID": "", "Test_Name": f"t{i % 3}"}
                   for i, rec in enumerate(records)]
    payload = json.dumps(effect_list).encode()
    run, _ = timed(f"load_run of the effect-list JSON ({len(payload) / 1e6:.1f} MB)",
                   lambda: load_run(("effects.json", payload)), rows, repeat=1)
    print(f"  -> {len(run):,} tests, {len(run.warnings)} warning(s)")


if __name__ == "__main__":
    main()
