"""Load + validate speed of 1M bias rows from CSV and Parquet (SPEC 5 targets: <= 3 s and
<= 0.5 s), beside a per-record Python reference that parses the CSV with the csv module and
checks each row as a dict. Prints the figures; asserts nothing.

    python benchmarks/bench_load.py [N_ROWS]
"""

from __future__ import annotations

import csv
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from kbench_core.io import load_run
from kbench_core.samples import bias_trials_of_size

# The sample rows carry prompt and response text: 1M of them exceed the 200 MB upload limit.
LIMIT = 2 * 1024**3


def best_of(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def reference_load(path: Path) -> int:
    """Per-record reference: every row a dict, every check in Python."""
    allowed = {"control", "treatment", "debiasing"}
    n = 0
    with path.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            if row["condition"] not in allowed:
                raise ValueError(row)
            if row["score"]:
                score = float(row["score"])
                if not 0.0 <= score <= 1.0:
                    raise ValueError(row)
            if row["confidence"]:
                float(row["confidence"])
            if row["condition"] == "treatment" and not row["intensity"]:
                raise ValueError(row)
            n += 1
    return n


def main() -> None:
    n_rows = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    frame = bias_trials_of_size(n_rows)
    with tempfile.TemporaryDirectory() as tmp:
        csv_path, pq_path = Path(tmp) / "bias.csv", Path(tmp) / "bias.parquet"
        frame.to_csv(csv_path, index=False)
        pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), pq_path)
        run = load_run(csv_path, max_bytes=LIMIT)
        print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
              f"Python {platform.python_version()}")
        print(f"rows: {len(run):,}; frame in memory: "
              f"{run.frame.memory_usage(deep=True).sum() / 1e6:.1f} MB; "
              f"CSV {csv_path.stat().st_size / 1e6:.1f} MB, "
              f"Parquet {pq_path.stat().st_size / 1e6:.1f} MB")
        t_csv = best_of(lambda: load_run(csv_path, max_bytes=LIMIT))
        t_pq = best_of(lambda: load_run(pq_path, max_bytes=LIMIT))
        t_ref = best_of(lambda: reference_load(csv_path), repeat=1)
        print(f"load_run CSV:      {t_csv:6.2f} s  (target <= 3 s)")
        print(f"load_run Parquet:  {t_pq:6.2f} s  (target <= 0.5 s)")
        print(f"per-record reference (csv.DictReader, checks only): {t_ref:6.2f} s "
              f"-> load_run CSV is {t_ref / t_csv:.1f}x faster")


if __name__ == "__main__":
    main()
