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
