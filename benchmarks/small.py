"""Fixed per-call cost of every core metric on a run of about 1k rows (target:
each <= 5 ms, and not slower than a straightforward per-record reference of the same
computation).

Real runs are mostly small (a HumanStudy-Bench configuration is about a hundred tests), and on
them what counts is the fixed cost of each call, not the rows per second. For each metric this
prints the best per-call time over many calls on one thread, the same for the per-record
reference (records as dicts, aggregation with ``statistics``, as the seeds' code does; the
references of the other ``benchmarks/`` scripts are reused, small ones are written here where
none exists), and the ratio reference / kbench (above 1: kbench is faster). Converting the
frame to records is done once, outside the timings. Prints the figures; asserts nothing.

    python benchmarks/small.py [REPEAT]        (default 200 calls per figure)
"""

from __future__ import annotations

import os

# One thread: set before numpy is imported, or its BLAS pool is already sized.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS"):
    os.environ[_var] = "1"

import importlib.util  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections import Counter, defaultdict  # noqa: E402
from collections.abc import Callable  # noqa: E402
from itertools import combinations  # noqa: E402
from pathlib import Path  # noqa: E402
from types import ModuleType  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from scipy import stats  # noqa: E402

from kbench_core import agreement, compare, kahne, replication, vuln  # noqa: E402
from kbench_core.io import load_run  # noqa: E402
from kbench_core.samples import big_bias_trials, big_judged_samples, big_replication_tests  # noqa: E402

HERE = Path(__file__).resolve().parent
TARGET_MS = 5.0


def _script(name: str) -> ModuleType:
    """Another benchmark script as a module (for its reference), without running its main."""
    spec = importlib.util.spec_from_file_location(f"_bench_{name}", HERE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def best_ms(fn: Callable[[], Any], repeat: int) -> float:
    """Best single-call time in milliseconds over ``repeat`` calls (after one warm-up call)."""
    fn()
    best = math.inf
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best * 1000


# --------------------------------------------------------------- references written here


def _items(records: list[dict], label: str) -> dict:
    """Each item's judgements of ``label``, keyed by judge (missing judgements left out)."""
    items: dict = defaultdict(dict)
    for rec in records:
        value = rec[label]
        if value is None or value != value:
            continue
        items[(rec["sample"], rec["model"], rec["prompt_type"])][rec["judge"]] = value
    return items


def reference_kappa(records: list[dict], label: str) -> dict:
    """Cohen's κ of every judge pair, one item at a time."""
    items = _items(records, label)
    judges = sorted({j for votes in items.values() for j in votes})
    kappas = {}
    for a, b in combinations(judges, 2):
        pairs = [(v[a], v[b]) for v in items.values() if a in v and b in v]
        n = len(pairs)
        observed = sum(x == y for x, y in pairs) / n
        left, right = Counter(x for x, _ in pairs), Counter(y for _, y in pairs)
        expected = sum(left[k] * right[k] for k in left) / (n * n)
        kappas[(a, b)] = (observed - expected) / (1 - expected) if expected < 1 else math.nan
    return kappas


def reference_fleiss(records: list[dict], label: str) -> float:
    """Fleiss' κ over the items every judge labelled, one item at a time."""
    items = _items(records, label)
    judges = {j for votes in items.values() for j in votes}
    complete = [v for v in items.values() if len(v) == len(judges)]
    r, n = len(judges), len(complete)
    totals: Counter = Counter()
    agree = 0.0
    for votes in complete:
        counts = Counter(votes.values())
        totals.update(counts)
        agree += sum(c * (c - 1) for c in counts.values()) / (r * (r - 1))
    p_e = sum((t / (n * r)) ** 2 for t in totals.values())
    return (agree / n - p_e) / (1 - p_e)


def reference_alpha(records: list[dict], label: str) -> float:
    """Nominal Krippendorff's α from the coincidence counts, one item at a time."""
    coincidences: Counter = Counter()
    for votes in _items(records, label).values():
        values = list(votes.values())
        m = len(values)
        if m < 2:
            continue
        for i, x in enumerate(values):
            for j, y in enumerate(values):
                if i != j:
                    coincidences[(x, y)] += 1 / (m - 1)
    n_c: Counter = Counter()
    for (x, _), o in coincidences.items():
        n_c[x] += o
    n = sum(n_c.values())
    observed = sum(o for (x, y), o in coincidences.items() if x != y)
    expected = sum(n_c[x] * n_c[y] for x in n_c for y in n_c if x != y) / (n - 1)
    return 1 - observed / expected if expected else math.nan


def reference_percent(records: list[dict], label: str) -> float:
    """Share of the items two or more judges labelled on which they all agree."""
    items = [v for v in _items(records, label).values() if len(v) >= 2]
    return sum(len(set(v.values())) == 1 for v in items) / len(items)


MAJORITY = ("said_vulnerable", "target_found", "type_match")
MEDIAN = ("confidence", "rcir", "ava", "fsv")


def reference_consensus(records: list[dict]) -> list[dict]:
    """One row per item: the majority of the judges' yes/no and categorical labels, the median
    of their numbers, the rest from the item's first row (the gist of ``consensus``)."""
    items: dict = defaultdict(list)
    for rec in records:
        items[(rec["sample"], rec["model"], rec["prompt_type"])].append(rec)
    need = 2
    out = []
    for rows in items.values():
        row = dict(rows[0])
        row["judge"] = "consensus"
        for label in MAJORITY:
            value, votes = Counter(r[label] for r in rows).most_common(1)[0]
            row[label] = value if votes >= need else None
        for label in MEDIAN:
            known = [r[label] for r in rows if r[label] == r[label]]
            row[label] = statistics.median(known) if known else math.nan
        row["n_judges"] = len(rows)
        out.append(row)
    return out


ITEM = ("bias", "domain", "condition", "intensity", "method", "trial")


def reference_paired(records: list[dict], a: str, b: str) -> tuple[float, float, float, float]:
    """Mean of a − b over the items both models answered, paired t interval and p."""
    cells: dict = defaultdict(list)
    for rec in records:
        if rec["score"] == rec["score"]:
            key = tuple(rec[k] if rec[k] == rec[k] else "" for k in ITEM)  # NaN: a level
            cells[(rec["model"], key)].append(rec["score"])
    means = {key: statistics.mean(v) for key, v in cells.items()}
    diffs = [means[(a, item)] - means[(b, item)] for model, item in means
             if model == a and (b, item) in means]
    n = len(diffs)
    mean = statistics.mean(diffs)
    se = statistics.stdev(diffs) / math.sqrt(n)
    t_crit = float(stats.t.ppf(0.975, n - 1))
    return mean, mean - t_crit * se, mean + t_crit * se, float(2 * stats.t.sf(abs(mean / se),
                                                                             n - 1))


# ----------------------------------------------------------------------------------- main


def _records(frame: pd.DataFrame) -> list[dict]:
    return frame.astype(object).where(frame.notna(), np.nan).to_dict("records")


def main() -> None:
    repeat = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    bias_ref, repl_ref, vuln_ref = _script("bias"), _script("replication"), _script("vuln")

    trials = big_bias_trials(1000)
    tests = big_replication_tests(1020)
    judged = load_run(HERE.parent / "sample_data" / "judged.csv").frame  # 360 items x 3 judges
    many = big_judged_samples(3000)
    one = many[(many["judge"] == "judge-one").to_numpy()].reset_index(drop=True)
    a, b = sorted(trials["model"].unique())[:2]

    bias_records = _records(trials)
    prepared = replication.prepare_tests(tests)
    repl_records = prepared[["model", "study", "finding", "human_pi", "agent_pi", "d_h",
                             "d_a"]].rename(columns={"d_h": "human_d", "d_a": "agent_d"})
    repl_records = repl_records.astype({c: str for c in ("model", "study", "finding")}
                                       ).to_dict("records")
    vuln_records = one.assign(model=one["model"].astype(str))[
        ["model", "is_vulnerable", "said_vulnerable", "target_found", "confidence",
         *vuln_ref.COUNTS]].to_dict("records")
    judged_records = _records(judged)

    cases: list[tuple[str, int, Callable[[], Any], Callable[[], Any]]] = [
        ("kahne.fingerprint", len(trials), lambda: kahne.fingerprint(trials),
         lambda: bias_ref.reference(bias_records)),
        ("replication.pas", len(tests), lambda: replication.pas(tests),
         lambda: repl_ref.reference_pas(repl_records)),
        ("replication.ecs", len(tests), lambda: replication.ecs(tests),
         lambda: repl_ref.reference_ecs(repl_records)),
        ("vuln.tiers (one judge)", len(one), lambda: vuln.tiers(one),
         lambda: vuln_ref.reference(vuln_records)),
        ("agreement.pairwise_kappa", len(judged),
         lambda: agreement.pairwise_kappa(judged, "target_found"),
         lambda: reference_kappa(judged_records, "target_found")),
        ("agreement.fleiss_kappa", len(judged),
         lambda: agreement.fleiss_kappa(judged, "target_found"),
         lambda: reference_fleiss(judged_records, "target_found")),
        ("agreement.krippendorff_alpha", len(judged),
         lambda: agreement.krippendorff_alpha(judged, "target_found"),
         lambda: reference_alpha(judged_records, "target_found")),
        ("agreement.percent_agreement", len(judged),
         lambda: agreement.percent_agreement(judged, "target_found"),
         lambda: reference_percent(judged_records, "target_found")),
        ("agreement.consensus", len(judged), lambda: agreement.consensus(judged),
         lambda: reference_consensus(judged_records)),
        ("compare.paired_difference", len(trials),
         lambda: compare.paired_difference(trials, "score", a, b),
         lambda: reference_paired(bias_records, a, b)),
    ]
    load = os.getloadavg()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, numpy {np.__version__}, pandas {pd.__version__}; "
          f"one thread; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"best of {repeat} calls each; target <= {TARGET_MS:g} ms and ratio >= 1")
    print(f"{'metric':<30} {'rows':>5} {'kbench ms':>10} {'reference ms':>13} {'ratio':>7}")
    for name, rows, fast, slow in cases:
        ours = best_ms(fast, repeat)
        theirs = best_ms(slow, max(repeat // 4, 5))
        flag = "" if ours <= TARGET_MS and ours <= theirs else "  <- miss"
        print(f"{name:<30} {rows:>5} {ours:>10.2f} {theirs:>13.2f} {theirs / ours:>6.1f}x{flag}")
    load = os.getloadavg()
    print(f"load average at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
