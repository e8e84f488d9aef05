"""A judged run past memory (issue 39): the majority's tiers through DuckDB, before (the rows
fetched at item grain, validated and typed by the loader, then ``agreement.consensus`` and
``vuln.tiers`` on the frame) and after (the consensus and the per-cluster sums computed by
the engine, ``engines.judged.EngineCells``; the run validated by the engine). Figures in
``benchmarks/README.md``, "Judged runs past memory".

Each measure runs in a child process (its peak RSS its own), on
:func:`kbench_core.samples.big_judged_samples` written to Parquet in chunks under
``/tmp/eng39b`` (3 detectors × 3 prompt types × 3 judges per sample; the sample ids made
unique per chunk). Prints one JSON line per (size, path): wall time, the engine's part, the
finish, the peak RSS, and the rows of the sufficient table. Asserts nothing.

    python benchmarks/engines_judged.py 1000000 10000000     # both paths at both sizes
    python benchmarks/engines_judged.py 10000000 --only after
    python benchmarks/engines_judged.py 1000000 --options bootstrap   # ci="bootstrap"
    python benchmarks/engines_judged.py 3000000 --options items   # every object `figures`
                                    # and `report` build (not drawn): the rows fetched and
                                    # the memory catalog, or the run kept in the engine
"""

from __future__ import annotations

import os
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
FOLDER = Path(os.environ.get("KBENCH_BENCH_DIR", "/tmp/eng39b"))
PER_CHUNK = 20_000  # samples per chunk written (540k rows)


def make(n_rows: int) -> Path:
    """About ``n_rows`` judged rows in one Parquet file (made once)."""
    from _timing import write_chunks

    from kbench_core.samples import judged_samples
    from kbench_core.samples.judged import DETECTORS, JUDGES, PROMPT_TYPES

    path = FOLDER / f"judged-{n_rows}.parquet"
    if path.exists():
        return path
    per_sample = len(DETECTORS) * len(PROMPT_TYPES) * len(JUDGES)
    n_samples = max(2, round(n_rows / per_sample))

    def chunks():
        for chunk, start in enumerate(range(0, n_samples, PER_CHUNK)):
            frame = judged_samples(n_samples=min(PER_CHUNK, n_samples - start), seed=chunk)
            frame["sample"] = f"b{chunk:04d}-" + frame["sample"].astype(str)
            yield frame

    return write_chunks(path, chunks())


def measure(path: str, how: str, options: str) -> dict:
    """One path on one file, in this process: stage times and peak RSS."""
    from kbench_core import engines, vuln
    from kbench_core.engines import source, validate

    kwargs = {"ci": "bootstrap", "n_boot": 200} if options == "bootstrap" else {}
    times: dict = {}
    start = time.perf_counter()
    if options == "items":
        return _items(path, how, start)
    if how == "before":
        from kbench_core.agreement import consensus

        (run,) = engines.load(path, engine="duckdb")
        times["engine"] = time.perf_counter() - start
        mid = time.perf_counter()
        table = vuln.tiers(consensus(run.frame), **kwargs)
        times["finish"] = time.perf_counter() - mid
        times["sufficient_rows"] = len(run.frame)
    else:
        from kbench_core.engines import judged

        con = engines.connect("duckdb")
        (src,) = source.sources(Path(path))
        rows = source.open_table(con, src)
        validate.validate(rows, src)
        cells = judged.EngineCells(judged.answers(rows))
        sums = cells.cells(("model",))
        source.check_read(src, con)
        times["engine"] = time.perf_counter() - start
        mid = time.perf_counter()
        table = vuln.tiers(cells, **kwargs)
        times["finish"] = time.perf_counter() - mid
        times["sufficient_rows"] = sums.n_cells
    times["total"] = time.perf_counter() - start
    times["groups"] = len(table)
    times["sui"] = [round(float(x), 12) for x in table["sui"]]
    times["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return times


def _items(path: str, how: str, start: float) -> dict:
    """Every catalog object of the run, as ``figures`` and ``report`` build them (not drawn):
    ``before`` the rows fetched (the family without its engine run), ``after`` the run kept
    in the engine (``Family.engine_run``, every size)."""
    import dataclasses

    from kbench_core import engines, families
    from kbench_core.engines.cli import load_all
    from kbench_core.families import items_for

    family = families.get("judged")
    if how == "before":
        families._REGISTRY["judged"] = dataclasses.replace(family, engine_run=None)
    else:  # the run kept in the engine at any size (opt-in: KBENCH_JUDGED_RUN_ROWS)
        engines.settings.JUDGED_RUN_ROWS = 0
    (run,) = load_all([path], engine="duckdb", weighted=True, summed=True)
    if how == "after" and not getattr(run, "tables", None):
        raise RuntimeError("the run was fetched, not kept in the engine")
    loaded = time.perf_counter() - start
    stems = []
    for item in items_for("judged"):
        stems += [stem for stem, _ in item.objects(run.frame, {}, meta=run.meta,
                                                     tables=getattr(run, "tables", None))]
    return {"load": loaded, "total": time.perf_counter() - start, "objects": len(stems),
            "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main(argv: list[str]) -> None:
    from _timing import before_and_after

    before_and_after(__file__, argv, measure, make, "--options", "default")


if __name__ == "__main__":
    main(sys.argv[1:])
