"""``kbench metrics``, ``compare`` and ``profile`` on a big bias run through DuckDB, as a
user runs them, beside a hand-written DuckDB query of the same reduction (issue 39; figures in
``benchmarks/README.md``).

Each command runs in a fresh process (``python -m kbench_core.cli``, output to /dev/null)
under ``/usr/bin/time``, which gives its wall time and peak resident memory. The file is
:func:`engines.make`'s (``$KBENCH_BENCH_DIR``, default ``/tmp/kbench-engines``). The floor is
DuckDB alone, in a fresh process with kbench's memory limit: the bias reduction (the distinct
tuples of the columns the metrics read, with their counts) and, for ``compare --metric
score``, the items × models sums of the score. Prints the figures; asserts nothing.

    python benchmarks/commands.py [SIZE] [--root CHECKOUT] [--only NAME ...]
    python benchmarks/commands.py [SIZE] --workspace

``--root`` runs another checkout's code (``/work/main`` for the "before" figures).
``--workspace``: ``kbench workspace add`` of the file into a new workspace (time, peak), then,
in a fresh process as after a restart, the run opened from the workspace (its sidecar read,
its file hashed, its kept sufficient table read and finished: what the app does on the run's
first use) and the fingerprint computed under the widget settings the bias page changes (the
BMS cap lifted, another HAS threshold, one model fewer, the BMS bootstrap), each timed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

COMMANDS = {
    "metrics": ["metrics", "{file}", "--out", "{tmp}/metrics.csv"],
    "compare": ["compare", "{file}", "--format", "csv"],
    "compare-score": ["compare", "{file}", "--metric", "score", "--format", "csv"],
    "profile": ["profile", "{file}"],
}

_FLOOR = """
import duckdb, os, sys
con = duckdb.connect(config={{"memory_limit": os.environ.get("KBENCH_DUCKDB_MEMORY", "512MB")}})
con.sql(\"\"\"{query}\"\"\").arrow()
"""

FLOORS = {
    # the bias family's sufficient table: what `kbench metrics` reduces the rows to
    "reduction": """SELECT model, bias, condition, intensity, method, method_kind, domain,
        category, score, confidence, count(*) AS n FROM read_parquet('{file}')
        GROUP BY ALL""",
    # the items x models sums `kbench compare --metric score` pairs
    "items": ("SELECT bias, domain, condition, intensity, method, trial, "
              + ", ".join(f"sum(score) FILTER (WHERE model = 'synthetic-model-{m:02d}') AS s{m}, "
                          f"count(score) FILTER (WHERE model = 'synthetic-model-{m:02d}') AS n{m}"
                          for m in range(10))
              + " FROM read_parquet('{file}') GROUP BY ALL ORDER BY ALL"),
}


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """Wall seconds, peak RSS (MiB) and exit status of one process."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as out:
        done = subprocess.run(["/usr/bin/time", "-f", "%e %M", "-o", out.name, *argv],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True, check=False)
        wall, rss = out.read().split()[-2:]
    if done.returncode:
        print("   ", done.stderr.strip().splitlines()[-1][:200] if done.stderr else "")
    return float(wall), int(rss) / 1024, done.returncode


_OPEN = """
import sys, time
from kbench_core.workspace import Workspace
start = time.perf_counter()
(run,), errors = Workspace(sys.argv[1], engine="duckdb").open_all()
frame = run.frame
opened = time.perf_counter() - start
print(f"opened {len(run):,} rows ({len(frame):,} weighted tuples) in {opened:.2f} s")
from kbench_core import kahne
for label, options in (("default", {}), ("cap lifted", {"cap": None}),
                       ("threshold 0.2", {"threshold": 0.2}),
                       ("one model fewer", {"models": True}), ("default again", {})):
    chosen = frame
    if options.pop("models", False):
        chosen = frame[frame["model"] != frame["model"].iloc[0]]
    start = time.perf_counter()
    kahne.fingerprint(chosen, **options)
    print(f"  fingerprint, {label}: {time.perf_counter() - start:.3f} s")
"""


def workspace(path: Path, env: dict[str, str]) -> None:
    """``kbench workspace add`` of ``path`` into a new workspace, then the run opened from it
    in a fresh process (see the module docstring)."""
    with tempfile.TemporaryDirectory(prefix="kbench-ws-", dir=path.parent) as folder:
        wall, rss, code = timed([sys.executable, "-m", "kbench_core.cli", "workspace", "add",
                                 str(path), "--workspace", folder], env)
        print(f"kbench workspace add {wall:7.1f} s {rss:8.0f} MiB  exit {code}")
        done = subprocess.run([sys.executable, "-c", _OPEN, folder], env=env,
                              capture_output=True, text=True, check=False)
        print(done.stdout.rstrip() or done.stderr[-500:])


def main() -> None:
    import engines

    parser = argparse.ArgumentParser()
    parser.add_argument("size", nargs="?", default="10M")
    parser.add_argument("--root", default=str(ROOT))
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--workspace", action="store_true")
    args = parser.parse_args()
    n_rows = engines.size(args.size)
    path = engines.make(n_rows)
    env = {**os.environ, "PYTHONPATH": str(Path(args.root).resolve())}
    print(f"{n_rows:,} bias rows ({path.stat().st_size / 2**20:.0f} MiB), code of {args.root}, "
          f"load average {os.getloadavg()[0]:.1f}")
    if args.workspace:
        workspace(path, env)
        return
    with tempfile.TemporaryDirectory() as tmp:
        for name, command in COMMANDS.items():
            if args.only and name not in args.only:
                continue
            argv = [sys.executable, "-m", "kbench_core.cli",
                    *(a.format(file=path, tmp=tmp) for a in command)]
            wall, rss, code = timed(argv, env)
            print(f"kbench {name:14s} {wall:7.1f} s {rss:8.0f} MiB  exit {code}")
    for name, query in FLOORS.items():
        if args.only and f"floor-{name}" not in args.only:
            continue
        script = _FLOOR.format(query=query.format(file=path))
        wall, rss, code = timed([sys.executable, "-c", script], env)
        print(f"duckdb {name:14s} {wall:7.1f} s {rss:8.0f} MiB  exit {code}")


if __name__ == "__main__":
    main()
