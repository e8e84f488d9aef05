"""kbench's commands on a big replication or judged run through DuckDB beside the floor: a
hand-written DuckDB query of the same reduction, in a fresh process with kbench's memory
limit (issue 39's target: kbench within 2× of it, validation included in kbench's time;
figures in ``benchmarks/README.md``, "The floor").

Each command runs as a user runs it (``python -m kbench_core.cli``, output to /dev/null) under
``/usr/bin/time`` (``commands.timed``). The files are the family's own benchmark's
(``engines_replication.make``, ``engines_judged.make``). The floors:

- replication ``metrics``: each finding's moments of its (human d, agent d) pairs, d given
  where finite, else converted from the native effect by test type (what
  ``engines.replication.finding_sums`` computes, less the validation and the labels'
  stripping);
- replication ``compare``: |agent d − human d| per test pivoted to one row per test, a sum
  and a count per model (``engines.items.item_means``' query);
- judged ``compare``: the majority's verdict and target found per answer (three judges, a
  strict majority), pivoted to one row per (sample, prompt type), target found on vulnerable
  samples per detector.

Prints the figures; asserts nothing.

    python benchmarks/floors.py replication 10000000
    python benchmarks/floors.py judged 10000000
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

_D = """CASE WHEN isfinite({side}_d) THEN {side}_d ELSE (CASE
    WHEN test_type IN ('t', 'f', 'anova') THEN {side}_effect
    WHEN test_type IN ('correlation', 'mann_whitney') THEN (CASE
        WHEN abs(CASE WHEN test_type = 'correlation' THEN tanh({side}_effect)
                 ELSE {side}_effect END) < 1 - 1e-6
        THEN 2 * (CASE WHEN test_type = 'correlation' THEN tanh({side}_effect)
                  ELSE {side}_effect END)
             / sqrt(1 - pow(CASE WHEN test_type = 'correlation' THEN tanh({side}_effect)
                            ELSE {side}_effect END, 2)) END)
    WHEN test_type = 'chi2' THEN {side}_effect * sqrt(3) / pi()
    WHEN test_type = 'binomial' AND {side}_effect BETWEEN 0 AND 1
        THEN 2 * ({side}_effect - 0.5) / 0.5 END) END"""

_PAIRS = f"""SELECT model, study, finding, test, domain, file_row_number AS place,
    {_D.format(side='human')} AS x, {_D.format(side='agent')} AS y
    FROM read_parquet('{{file}}', file_row_number = true)"""

REPLICATION = {
    "metrics": f"""SELECT model, study, finding, domain, count(y) AS n, avg(x), avg(y),
        var_pop(x) * count(x), var_pop(y) * count(y), covar_pop(x, y) * count(x), min(place)
        FROM ({_PAIRS}) WHERE isfinite(x) AND isfinite(y) GROUP BY ALL""",
    "compare": ("SELECT study, finding, test, "
                + ", ".join(f"sum(abs(y - x)) FILTER (WHERE model = '{m}') AS s{k}, "
                            f"count(abs(y - x)) FILTER (WHERE model = '{m}') AS n{k}"
                            for k, m in enumerate(("synthetic-agent-flat",
                                                   "synthetic-agent-mirror",
                                                   "synthetic-agent-shifted")))
                + f" FROM ({_PAIRS}) GROUP BY ALL ORDER BY ALL"),
}

_MAJORITY = """SELECT sample, model, prompt_type, any_value(is_vulnerable) AS truth,
    count(*) FILTER (WHERE said_vulnerable) AS said_yes,
    count(*) FILTER (WHERE NOT said_vulnerable) AS said_no,
    count(*) FILTER (WHERE target_found) AS found_yes,
    count(*) FILTER (WHERE NOT target_found) AS found_no
    FROM read_parquet('{file}') GROUP BY ALL"""

JUDGED = {
    "compare": ("SELECT sample, prompt_type, "
                + ", ".join(f"sum(CASE WHEN found_yes >= 2 THEN 1.0 ELSE 0.0 END) FILTER "
                            f"(WHERE model = '{m}' AND truth) AS s{k}, "
                            f"count(*) FILTER (WHERE model = '{m}' AND truth) AS n{k}"
                            for k, m in enumerate(("synthetic-detector-eager",
                                                   "synthetic-detector-sharp",
                                                   "synthetic-detector-timid")))
                + f" FROM ({_MAJORITY}) GROUP BY ALL ORDER BY ALL"),
}

COMMANDS = {
    "metrics": ["metrics", "{file}", "--out", "{tmp}/metrics.csv"],
    "compare": ["compare", "{file}", "--format", "csv"],
}


# DuckDB alone as kbench configures it: its memory limit and a folder to spill to (without
# one, the findings' group-by of 10M tests runs out of 512 MB)
_FLOOR = """
import duckdb, os, tempfile
spill = tempfile.mkdtemp(prefix="kbench-floor-")
con = duckdb.connect(config={{"memory_limit": os.environ.get("KBENCH_DUCKDB_MEMORY", "512MB"),
                              "temp_directory": spill}})
con.sql(\"\"\"{query}\"\"\").arrow()
"""


def main(argv: list[str]) -> None:
    from commands import timed

    kind = argv[0]
    n_rows = int(argv[1]) if len(argv) > 1 else 10_000_000
    if kind == "judged":
        from engines_judged import make
        floors = JUDGED
    else:
        from engines_replication import make
        floors = REPLICATION
    path = make(n_rows)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    print(f"{n_rows:,} {kind} rows ({path.stat().st_size / 2**20:.0f} MiB), load average "
          f"{os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, query in floors.items():
            argv_ = [a.format(file=path, tmp=tmp) for a in COMMANDS[name]]
            wall, rss, code = timed([sys.executable, "-m", "kbench_core.cli", *argv_,
                                     "--engine", "duckdb"], env)
            print(f"kbench {name:8s} {wall:7.1f} s {rss:8.0f} MiB  exit {code}")
            script = _FLOOR.format(query=query.format(file=path))
            wall, rss, code = timed([sys.executable, "-c", script], env)
            print(f"duckdb {name:8s} {wall:7.1f} s {rss:8.0f} MiB  exit {code}")


if __name__ == "__main__":
    main(sys.argv[1:])
