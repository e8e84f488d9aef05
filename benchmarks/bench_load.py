"""Load + validate speed of 1M bias rows from CSV and Parquet (targets: <= 1.5 s and
<= 0.3 s, peak memory <= 3x the frame), beside a per-record Python reference that parses the
CSV with the csv module and checks each row as a dict. Prints the figures; asserts nothing.

Peak memory is measured in a fresh child process per format: its peak resident size
(``VmHWM``) minus its resident size after the imports, as a multiple of the loaded frame's
in-memory size. The imports include the family registry (``kbench_core.families``, which
brings plotly and scipy: about 70 MB, whatever the file's size, and already loaded in the
app); the figure with that import counted in the load is printed beside. ``tracemalloc``
would miss Arrow's own allocations (the Parquet reader, the text columns), so it is not used
here.

    python benchmarks/bench_load.py [N_ROWS]
"""

from __future__ import annotations

import csv
import os
import platform
import subprocess
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


CHILD = """
import sys
from pathlib import Path


def rss(field):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field):
            return int(line.split()[1]) * 1024
    return 0


from kbench_core.io import load_run

first = rss("VmRSS:")
from kbench_core import families

families.all_families()
base = rss("VmRSS:")
run = load_run(sys.argv[1], max_bytes=int(sys.argv[2]))
print(rss("VmHWM:") - base, run.frame.memory_usage(deep=True).sum(), base - first)
"""


def peak_memory(path: Path) -> tuple[float, float, float]:
    """(peak MB above the imports, frame MB, MB of the family registry's import) of one
    load_run in a fresh process."""
    # The child imports kbench_core from the same place as this process (PYTHONPATH first).
    env = {"PYTHONPATH": str(Path(__file__).resolve().parent.parent), **os.environ}
    done = subprocess.run([sys.executable, "-c", CHILD, str(path), str(LIMIT)], env=env,
                          capture_output=True, text=True, check=False)
    if done.returncode:
        print(f"  (the measuring process failed: {done.stderr.strip()[-300:]})")
        return float("nan"), float("nan"), float("nan")
    peak, frame, registry = (float(v) for v in done.stdout.split())
    return peak / 1e6, frame / 1e6, registry / 1e6


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
        load = os.getloadavg()
        print(f"load average: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
        print(f"load_run CSV:      {t_csv:6.2f} s  (target <= 1.5 s)")
        print(f"load_run Parquet:  {t_pq:6.2f} s  (target <= 0.3 s)")
        for label, path in (("CSV", csv_path), ("Parquet", pq_path)):
            peak, size, registry = peak_memory(path)
            print(f"peak memory, {label:<8} {peak:6.0f} MB above the imports = "
                  f"{peak / size:.2f}x the {size:.0f} MB frame (target <= 3x); "
                  f"{(peak + registry) / size:.2f}x with the registry's {registry:.0f} MB "
                  "import counted")
        print(f"per-record reference (csv.DictReader, checks only): {t_ref:6.2f} s "
              f"-> load_run CSV is {t_ref / t_csv:.1f}x faster")


if __name__ == "__main__":
    main()
