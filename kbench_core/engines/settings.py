"""Settings every engine module reads (a leaf module: the package and its parts import it,
it imports none of them)."""

from __future__ import annotations

import os

# DuckDB's own memory for one connection (its hash tables: the duplicate-key check of a 30M-row
# bias run groups 30M ids); past it DuckDB spills to a temporary folder instead of growing
# (30M rows: 2.2 GiB resident without a limit, 0.6 GiB with 400 MB, and faster).
DUCKDB_MEMORY = os.environ.get("KBENCH_DUCKDB_MEMORY", "512MB")
# The Java heap of a Spark driver kbench starts (local mode, or a client of a standalone
# master): Spark's ``spark.driver.memory``, which only a new JVM takes (None: Spark's own
# default, 1g). A Spark Connect session's memory is the server's.
SPARK_MEMORY = os.environ.get("KBENCH_SPARK_MEMORY") or None
# Rows of a judged run per part of its samples on DuckDB (engines.judged_cells.parts_of): a
# larger run's majority and per-sample sums are made one part at a time, each part's group-by
# within DuckDB's memory limit (10M rows at once ran out of its 512 MB: the majority's
# group-by of 3.3M items, then the 3.3M prompt-type cells'; 2M rows at once fit).
DUCKDB_PART_ROWS = int(os.environ.get("KBENCH_DUCKDB_PART_ROWS", "2000000"))
# A judged Parquet run of fewer rows than this is fetched and finished in memory by `kbench
# metrics` (the loader's limits apply); from this many rows on, its tiers are computed from
# the cells the engine sums (engines.judged). `kbench metrics`, majority and three judges,
# through DuckDB, nothing else running: 1M rows fetched 4.4 s and 0.75 GiB, cells 14.1 s and
# 1.23 GiB; 3M rows fetched 10.2 s and 1.77 GiB, cells 41.2 s and 2.07 GiB. The cells are
# slower at every size; they are taken where the fetch nears the loader's decompressed-size
# limit (refused from about 4.7M rows), which the cells are not bound by. At 3M rows the cells
# ran out of DuckDB's 512 MB in 1 run of 3 (the error names both ways out: more memory, or
# this setting above the run's rows).
JUDGED_CELLS_ROWS = int(os.environ.get("KBENCH_JUDGED_CELLS_ROWS", "3000000"))
# From this many rows on, `kbench figures`, `report` and `profile` keep a judged Parquet run in
# the engine (every figure and table from per-group sums, the bootstrap from per-sample
# cells: families._judged_sources.EngineJudged); unset (the default), they fetch it, as the
# loader does. Opt-in, because it is slower where the loader can hold the run: a 3M-row
# `kbench report` 179 s and 1.00 GiB kept in the engine against 36 s and 2.2 GB fetched,
# `kbench profile` 51 s and 1.09 GiB against 31 s and 2.2 GB (session 13). Past the loader's
# limits (about 4.7M judged rows) it is the only way: a 10M-row report 13 min and 1.06 GiB,
# its profile 4.5 min and 1.44 GiB under DuckDB's default 512 MB.
_RUN_ROWS = os.environ.get("KBENCH_JUDGED_RUN_ROWS", "").strip()
JUDGED_RUN_ROWS: int | None = int(_RUN_ROWS) if _RUN_ROWS else None


def fetch_instead(err: BaseException, rows: int,
                  setting: str = "KBENCH_JUDGED_CELLS_ROWS") -> str:
    """An engine's out-of-memory message for a judged run it sums in cells, with the other
    way out when the run fits the loader (3M judged rows through DuckDB's 512 MB ran out of
    memory in 1 of 3 runs; fetched, 10 s and 1.8 GiB): fetch its rows (``setting``: the
    row count from which the command keeps the run in the engine)."""
    return (f"{err}; or fetch its rows instead, if the loader can hold them (about 4.7M "
            f"judged rows): {setting}={rows + 1}")
