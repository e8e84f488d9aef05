"""``kbench compare`` of a replication or judged run through DuckDB (issue 39), before (the
rows fetched at item grain, validated and typed by the loader, the per-item values and the
items × models table made in pandas) and after (the run validated by the engine, the
per-item values written there, ``Family.engine_items``, and grouped by item there,
``engines.items.item_means``: what returns is the items × models table). Figures in
``benchmarks/README.md``, "Comparisons past memory".

Each measure runs in a child process (its peak RSS its own), on the files the family's own
benchmark makes (``engines_replication.make``: 18 tests per study, three agents;
``engines_judged.make``: 3 detectors × 3 prompt types × 3 judges per sample, the majority of
the three compared). Prints one JSON line per (size, path): wall time, the peak RSS and the
rows of the printed table (every pair of models). Asserts nothing.

    python benchmarks/engines_compare.py 1000000 6000000                   # replication
    python benchmarks/engines_compare.py 1000000 3000000 --family judged
    python benchmarks/engines_compare.py 10000000 --family judged --only after
"""

from __future__ import annotations

import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def make(kind: str, n_rows: int) -> Path:
    if kind == "judged":
        from engines_judged import make as made
    else:
        from engines_replication import make as made
    return made(n_rows)


def measure(path: str, how: str, kind: str) -> dict:
    """``kbench compare`` (every pair, the family's headline quantity, Holm) of one file on one
    path, in this process: time and peak RSS."""
    import contextlib
    import dataclasses
    import io

    from kbench_core import families
    from kbench_core.cli.compare import compare_command

    if how == "before":  # the family without its engine items: the rows are fetched
        family = families.get(kind)
        families._REGISTRY[kind] = dataclasses.replace(family, engine_items=None)
    out = io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        compare_command(path, metric=None, models=(), judge=None, fmt="csv",
                        correction="holm", engine="duckdb")
    wall = time.perf_counter() - start
    lines = [line for line in out.getvalue().splitlines() if not line.startswith("#")]
    return {"total": wall, "table_rows": len(lines) - 1, "first_row": lines[1][:120],
            "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main(argv: list[str]) -> None:
    from _timing import before_and_after

    kind = argv[argv.index("--family") + 1] if "--family" in argv else "replication"
    before_and_after(__file__, argv, measure, lambda n: make(kind, n), "--family",
                     "replication")


if __name__ == "__main__":
    main(sys.argv[1:])
