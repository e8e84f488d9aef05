"""A replication run past memory (issue 39): ``kbench metrics`` (ECS overall, per domain, per
study) through DuckDB, before (the tests fetched, validated and typed by the loader, ECS on
the frame) and after (the engine validates the run and sums each finding's valid pairs,
``engines.replication.finding_sums``; ECS finished from that table). Figures in
``benchmarks/README.md``, "Replication runs past memory".

Each measure runs in a child process (its peak RSS its own) on
:func:`kbench_core.samples.big_replication_tests` written to Parquet in chunks under
``/tmp/eng39r`` (three agents; 18 tests per study on average; the studies made unique per
chunk). Prints one JSON line per (size, path): wall time, the peak RSS and the rows of the
sufficient table, with the first model's overall ECS to compare. Asserts nothing.

    python benchmarks/engines_replication.py 1000000 6000000
    python benchmarks/engines_replication.py 10000000 --only after
    python benchmarks/engines_replication.py 6000000 --command profile   # ECS and PAS rows
    python benchmarks/engines_replication.py 6000000 --command items     # figures' objects
                                                  # (ECS, PAS, the scatter; not drawn)
"""

from __future__ import annotations

import os
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
FOLDER = Path(os.environ.get("KBENCH_BENCH_DIR", "/tmp/eng39r"))
PER_CHUNK = 540_000  # tests per chunk written


def make(n_rows: int) -> Path:
    """About ``n_rows`` replication tests in one Parquet file (made once)."""
    from _timing import write_chunks

    from kbench_core.samples import big_replication_tests

    path = FOLDER / f"replication-{n_rows}.parquet"
    if path.exists():
        return path

    def chunks():
        for chunk, start in enumerate(range(0, n_rows, PER_CHUNK)):
            frame = big_replication_tests(min(PER_CHUNK, n_rows - start), seed=chunk)
            for name in ("study", "finding"):
                frame[name] = f"c{chunk:04d}-" + frame[name].astype(str)
            yield frame

    return write_chunks(path, chunks())


def measure(path: str, how: str, command: str) -> dict:
    """``kbench metrics`` (or ``profile``, or every catalog object ``figures`` and ``report``
    build, not drawn) of one file on one path, in this process: time and peak RSS."""
    import contextlib
    import dataclasses
    import io

    from kbench_core import families
    from kbench_core.cli.profiles import profile_command
    from kbench_core.cli.tables import metrics

    family = families.get("replication")
    if how == "before":  # the family without its engine run: the rows are fetched
        families._REGISTRY["replication"] = dataclasses.replace(family, engine_run=None)
    out = io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(out):
        if command == "items":  # what `figures` and `report` build, without drawing a file
            from kbench_core.engines.cli import load_all
            from kbench_core.families import items_for

            (run,) = load_all([path], engine="duckdb", weighted=True, summed=True)
            # the PAS heat map is left out: a page per 29 studies (1,900 pages at 1M tests)
            # costs the same on both paths and would be all this measures
            built = [stem for item in items_for("replication") if item.name != "pas_heatmap"
                     for stem, _ in item.objects(run.frame, {}, meta=run.meta,
                                                 tables=getattr(run, "tables", None))]
            print("#\nobjects\n" + "\n".join(built))
        elif command == "profile":
            profile_command([path], fmt="csv", precision="full", engine="duckdb")
        else:
            metrics(path, fmt="csv", out=None, precision="full", engine="duckdb")
    wall = time.perf_counter() - start
    lines = [line for line in out.getvalue().splitlines() if not line.startswith("#")]
    return {"total": wall, "table_rows": len(lines) - 1, "first_row": lines[1][:120],
            "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main(argv: list[str]) -> None:
    from _timing import before_and_after

    before_and_after(__file__, argv, measure, make, "--command", "metrics")


if __name__ == "__main__":
    main(sys.argv[1:])
