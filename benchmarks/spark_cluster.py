"""``kbench metrics`` of big runs of every family on a Spark standalone cluster, as a user runs
it (issue 39: "Spark standalone, 10M rows of each family: equal to memory, driver peak ≤ 1 GiB").

A master and one worker are started from the pip pyspark install (``bin/spark-class``, as
``tests/test_spark_cluster.py`` starts them; the worker gets ``--cores`` and ``--memory``
below), then for each family a fresh ``kbench metrics RUN --engine spark --spark-master
spark://…`` runs, sampled every 0.2 s: the driver's peak is the resident memory of the
``kbench`` process and of the driver JVM it starts (its child) summed at each sample; the
executor's is the worker's children's. The printed table is compared with ``kbench metrics
RUN --engine duckdb`` of the same file (DuckDB equals the memory engine at 1e-9 in the tests;
the loader refuses these runs). Runs are those of ``engines.py``, ``engines_judged.py`` and
``engines_replication.py`` (made once). Prints the figures; asserts nothing.

    python benchmarks/spark_cluster.py [SIZE] [FAMILY ...]   # default 10M bias judged replication
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

WORKER_CORES, WORKER_MEMORY = "2", "2g"


def _rss_mib(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with suppress(OSError):
            found += [int(p) for p in (task / "children").read_text().split()]
    return found


def _tree(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        now = todo.pop()
        out.append(now)
        todo += _children(now)
    return out


@contextmanager
def cluster(logs: Path) -> Iterator[tuple[str, int]]:
    """``(spark://127.0.0.1:PORT, worker pid)`` of a master and a worker of
    :data:`WORKER_CORES` and :data:`WORKER_MEMORY`, started as the tests start theirs."""
    import pyspark

    from tests.test_spark_cluster import standalone

    home = Path(pyspark.__file__).resolve().parent
    with standalone(home, logs, cores=WORKER_CORES, memory=WORKER_MEMORY) as (url, worker):
        yield url, worker.pid


def metrics(path: Path, *args: str, worker: int | None = None) -> tuple[str, float, float, float]:
    """``kbench metrics PATH ARGS`` in a fresh process: its output (export time blanked), wall
    seconds, peak MiB of the process with its children (the driver), and of the worker's
    children (the executor) when ``worker`` is given."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("SPARK_REMOTE", None)
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        child = subprocess.Popen([sys.executable, "-m", "kbench_core.cli", "metrics", str(path),
                                  "--precision", "full", *args], env=env, stdout=out,
                                 stderr=err, text=True)
        driver = executor = 0.0
        while child.poll() is None:
            driver = max(driver, sum(_rss_mib(p) for p in _tree(child.pid)))
            if worker is not None:
                executor = max(executor, sum(_rss_mib(p) for p in _tree(worker)[1:]))
            time.sleep(0.2)
        seconds = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        if child.returncode != 0:
            raise RuntimeError(f"kbench metrics {path.name} {' '.join(args)} failed:\n"
                               + err.read()[-3000:])
        text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "<time>", out.read())
    return text, seconds, driver, executor


def _compared(text: str, reference: str) -> str:
    """How ``text`` (a table kbench printed) compares with ``reference``: the same, equal
    but for the last bits of some numbers (the largest relative difference; Spark adds a
    column's floats in another order than DuckDB), or different (where)."""
    import csv
    import io

    if text == reference:
        return "the same table as DuckDB"
    ours, theirs = text.splitlines(), reference.splitlines()
    if len(ours) != len(theirs):
        return f"a DIFFERENT table from DuckDB's ({len(ours)} lines against {len(theirs)})"
    worst = 0.0
    for at, (a, b) in enumerate(zip(ours, theirs, strict=True), 1):
        if a == b:
            continue
        row_a, row_b = next(csv.reader(io.StringIO(a))), next(csv.reader(io.StringIO(b)))
        if len(row_a) != len(row_b):
            return f"a DIFFERENT table from DuckDB's (line {at})"
        for x, y in zip(row_a, row_b, strict=True):
            if x == y:
                continue
            try:
                fx, fy = float(x), float(y)
            except ValueError:
                return f"a DIFFERENT table from DuckDB's (line {at}: {x!r} against {y!r})"
            worst = max(worst, abs(fx - fy) / max(abs(fx), abs(fy), 1e-300))
    if worst > 1e-9:
        return f"a DIFFERENT table from DuckDB's (numbers apart by up to {worst:.1e})"
    return f"DuckDB's table but for the last bits (numbers apart by up to {worst:.1e})"


def run_of(family: str, n_rows: int) -> Path:
    if family == "bias":
        import engines
        return engines.make(n_rows)
    if family == "judged":
        import engines_judged
        return engines_judged.make(n_rows)
    import engines_replication
    return engines_replication.make(n_rows)


def main(argv: list[str]) -> None:
    from engines import size

    n_rows = size(argv[0]) if argv else 10_000_000
    families = argv[1:] or ["bias", "judged", "replication"]
    paths = {family: run_of(family, n_rows) for family in families}
    reference = {}
    for family, path in paths.items():
        text, seconds, peak, _ = metrics(path, "--engine", "duckdb")
        reference[family] = text
        print(f"{family} {n_rows:,} rows, DuckDB: {seconds:.1f} s, peak {peak:,.0f} MiB",
              flush=True)
    with tempfile.TemporaryDirectory(prefix="kbench-spark-") as logs, \
            cluster(Path(logs)) as (url, worker):
        print(f"standalone cluster {url}: one worker of {WORKER_CORES} cores and "
              f"{WORKER_MEMORY}", flush=True)
        for family, path in paths.items():
            try:
                text, seconds, driver, executor = metrics(
                    path, "--engine", "spark", "--spark-master", url, worker=worker)
            except RuntimeError as exc:
                print(f"{family}: {exc}", flush=True)
                continue
            same = _compared(text, reference[family])
            print(f"{family} {n_rows:,} rows, Spark standalone: {seconds:.1f} s, driver peak "
                  f"{driver:,.0f} MiB (kbench's Python and the driver JVM), executor peak "
                  f"{executor:,.0f} MiB; {same}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
