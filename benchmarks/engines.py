"""The fingerprint of big bias runs from one Parquet file: DuckDB against the memory engine
(issue 25; figures in ``benchmarks/README.md``), and Spark local's fixed cost on 100k rows.

Each size is written once (in 1M-row chunks of :func:`kbench_core.samples.big_bias_trials`,
ids renumbered so they stay distinct) to ``$KBENCH_BENCH_DIR`` (default
``/tmp/kbench-engines``). Each measurement runs in a fresh process so its peak resident
memory (``ru_maxrss``) is its own. Stages: ``validate+reduce`` is the engine's part (every
cell checked, the reduction run, the small table fetched), ``finish`` the small table typed
by the loader with its counts kept as weights (as ``kbench metrics`` does), ``fingerprint``
the main table from it. Prints the figures; asserts nothing.

    python benchmarks/engines.py [SIZE ...]            # default 1M 10M 30M (e.g. 100M)
    python benchmarks/engines.py --spark               # Spark local on 100k rows
    python benchmarks/engines.py --app [SIZE]          # the app on a workspace (default 1M)

``--app``: the bias page (Streamlit's AppTest) on a workspace holding one saved bias run,
read through DuckDB (``kbench app --workspace DIR``, the default) and through the loader
(``--engine memory``): the first render (the run queried, validated, reduced and finished,
every result computed) and the median of widget changes (another bias for the curves,
another model for the heatmap, a new HAS threshold, the BMS cap lifted, one model fewer;
each a full script run), with the
number of engine queries they made.

    python benchmarks/engines.py --app [SIZE] --fresh [N]   # the cap and model-set changes

``--fresh N`` (default 7): on the DuckDB-backed page, the two changes that recompute the most
(the BMS cap lifted; one model fewer) made N times each, every time from the cache the page had
before it (the results the change added are dropped and the widget set back), so each
repetition recomputes what the change recomputes; prints the median and minimum of wall time
and of the process's CPU time with the load average, and with ``--profile`` the seconds spent
in each ``cache.cached`` function the changes computed.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

if TYPE_CHECKING:
    import pandas as pd
FOLDER = Path(os.environ.get("KBENCH_BENCH_DIR", "/tmp/kbench-engines"))
CHUNK = 1_000_000


def size(text: str) -> int:
    """A row count as the benchmarks take it: ``600000``, ``600k`` or ``1M`` (any case)."""
    scale = {"k": 1_000, "m": 1_000_000}.get(text[-1:].lower(), 1)
    return int(float(text[:-1] if scale > 1 else text) * scale)


def trial_chunks(n_rows: int) -> Iterator[pd.DataFrame]:
    """``n_rows`` bias trials of :func:`kbench_core.samples.big_bias_trials` in 1M-row chunks
    (seed = chunk number): the rows of every size here and of ``kahnebench_reference.py``."""
    from kbench_core.samples import big_bias_trials

    done = 0
    while done < n_rows:
        part = min(CHUNK, n_rows - done)
        yield big_bias_trials(max(part, 40_000), seed=done // CHUNK).iloc[:part]
        done += part


def count_engine_queries() -> list[int]:
    """Count the calls of :func:`kbench_core.engines.reduce_source` from now on (the app's
    engine queries): the returned one-item list holds the count."""
    from kbench_core import engines

    queries = [0]
    reduce_source = engines.reduce_source

    def counted(*args: object, **kwargs: object) -> object:
        queries[0] += 1
        return reduce_source(*args, **kwargs)  # type: ignore[arg-type]

    engines.reduce_source = counted  # type: ignore[assignment]
    return queries


def clear_app_caches() -> None:
    """Forget every result of the app's caches and the workspace's, as a new server would."""
    from kbench_app import cache, state
    from kbench_core import workspace

    workspace.clear_caches()
    cache.clear()
    state._cached_load.clear()


def make(n_rows: int) -> Path:
    """``n_rows`` bias trials in one Parquet file (made once)."""
    import numpy as np
    from _timing import write_chunks

    path = FOLDER / f"bias-{n_rows}.parquet"
    if path.exists():
        return path

    def chunks():
        done = 0
        for frame in trial_chunks(n_rows):
            part = len(frame)
            yield frame.assign(id=np.char.add("b", np.char.zfill(
                np.arange(done + 1, done + part + 1).astype(str), 10)))
            done += part

    return write_chunks(path, chunks())


def measure(engine: str, path: str) -> dict:
    """One engine on one file, in this process: stage times and peak RSS."""
    from kbench_core import engines, io
    from kbench_core.engines import reduce, source, validate
    from kbench_core.families import main_table

    times = {}
    start = time.perf_counter()
    if engine == "memory":
        run = io.load_run(path, max_bytes=1 << 34, max_decompressed=1 << 33)
        times["load"] = time.perf_counter() - start
    else:
        con = engines.connect(engine.removesuffix("-reduce"))  # type: ignore[arg-type]
        (src,) = source.sources(Path(path))
        table = source.open_table(con, src)
        validate.validate(table, src)
        reduced = reduce.reduction(table, src.kind).to_pyarrow()
        times["validate+reduce"] = time.perf_counter() - start
        times["reduced_rows"] = reduced.num_rows
        if engine.endswith("-reduce"):
            times["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            return times
        mid = time.perf_counter()
        run = reduce.finish(reduced, src, weighted=True)  # as kbench metrics does
        times["finish"] = time.perf_counter() - mid
    mid = time.perf_counter()
    tables = list(main_table("bias").objects(run.frame, {}, meta=run.meta))
    times["fingerprint"] = time.perf_counter() - mid
    times["total"] = time.perf_counter() - start
    times["rows"] = len(run.frame)
    times["pairs"] = sum(len(t) for _, t in tables)
    times["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return times


def _child(engine: str, path: Path) -> dict:
    out = subprocess.run([sys.executable, __file__, "--measure", engine, str(path)],
                         capture_output=True, text=True, cwd=ROOT, check=False)
    if out.returncode:
        return {"error": (out.stderr.strip().splitlines() or ["failed"])[-1][:200]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def spark_fixed_cost(n_rows: int = 100_000) -> None:
    from kbench_core import engines
    from kbench_core.families import main_table
    from kbench_core.samples import big_bias_trials

    path = FOLDER / f"bias-small-{n_rows}.parquet"
    FOLDER.mkdir(parents=True, exist_ok=True)
    big_bias_trials(n_rows).to_parquet(path)
    start = time.perf_counter()
    session = engines.spark_session(spark_master="local[2]")
    session.sparkContext.setLogLevel("ERROR")
    con = engines.connect("spark", session=session)
    started = time.perf_counter() - start
    tables = {}
    for engine in ("memory", "duckdb", "spark", "spark"):
        t0 = time.perf_counter()
        (run,) = engines.load(path, engine=engine, backend=con if engine == "spark" else None)
        (_, table), *_ = main_table("bias").objects(run.frame, {})
        print(f"{engine:7s} {n_rows:>9,} rows: {time.perf_counter() - t0:6.2f} s")
        tables[engine] = table
    import pandas as pd

    pd.testing.assert_frame_equal(tables["memory"], tables["spark"], rtol=1e-9, atol=1e-9)
    print(f"SparkSession start (local[2]): {started:.1f} s; spark = memory (1e-9)")
    session.stop()


def app_widget_change(n_rows: int = 1_000_000) -> None:
    """The bias page on a saved run through DuckDB and through the loader (see ``--app``)."""
    import statistics
    import tempfile

    from streamlit.testing.v1 import AppTest

    from kbench_core import workspace as saved
    from kbench_core.io import load_run
    from kbench_core.samples import big_bias_trials

    queries = count_engine_queries()
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "big_bias.parquet"
        big_bias_trials(n_rows).to_parquet(source)
        workspace = saved.Workspace(Path(tmp) / "ws")
        workspace.save(load_run(source))
        print(f"{n_rows:,} saved bias rows ({source.stat().st_size / 1024**2:.0f} MiB Parquet)")
        for engine in ("duckdb", "memory"):
            clear_app_caches()
            queries[0] = 0
            os.environ["KBENCH_APP_ARGS"] = (f"--no-samples --workspace {workspace.directory} "
                                             f"--engine {engine}")
            at = AppTest.from_file(str(ROOT / "views" / "bias.py"), default_timeout=600)
            start = time.perf_counter()
            at.run()
            first = time.perf_counter() - start
            if at.exception:
                print(f"  {engine}: exception {at.exception[0].value[:300]}")
                continue
            biases = at.selectbox(key="bias_curve_bias").options
            models = at.selectbox(key="bias_heat_model").options
            changes = [
                lambda a, b=biases[-1]: a.selectbox(key="bias_curve_bias").set_value(b),
                lambda a, m=models[-1]: a.selectbox(key="bias_heat_model").set_value(m),
                lambda a: a.slider(key="bias_threshold").set_value(0.2),
                lambda a, b=biases[0]: a.selectbox(key="bias_curve_bias").set_value(b),
                lambda a: a.toggle(key="bias_cap").set_value(False),
                lambda a: a.multiselect(key="bias_models").set_value(
                    list(a.multiselect(key="bias_models").value)[:-1])]
            times = []
            for change in changes:
                start = time.perf_counter()
                change(at).run()
                times.append(time.perf_counter() - start)
                if at.exception:
                    print(f"  {engine}: exception {at.exception[0].value[:300]}")
            print(f"  {engine:7s} first render {first:6.2f} s   widget change median "
                  f"{statistics.median(times):.3f} s (max {max(times):.3f})   engine "
                  f"queries {queries[0]}   changes {' '.join(f'{t:.2f}' for t in times)}",
                  flush=True)


def fresh_changes(n_rows: int = 1_000_000, repeats: int = 7, *,
                  profile: bool = False) -> None:
    """The cap and model-set changes of the DuckDB-backed bias page, each recomputed
    ``repeats`` times (see ``--fresh``)."""
    import collections
    import statistics
    import tempfile

    from streamlit.testing.v1 import AppTest

    from kbench_app import cache
    from kbench_core import workspace as saved
    from kbench_core.io import load_run
    from kbench_core.samples import big_bias_trials

    spent: dict[tuple[str, str], float] = collections.defaultdict(float)
    current = [""]  # the change being made
    if profile:  # seconds in each cached function that computed (not found in the cache)
        cached = cache.cached

        def timed(fn, *data, **kwargs):
            computed = [False]

            def call(*a, **k):
                computed[0] = True
                return fn(*a, **k)

            call.__module__, call.__qualname__ = fn.__module__, fn.__qualname__
            start = time.perf_counter()
            value = cached(call, *data, **kwargs)
            if computed[0]:
                spent[current[0], fn.__qualname__] += time.perf_counter() - start
            return value

        cache.cached = timed
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "big_bias.parquet"
        big_bias_trials(n_rows).to_parquet(source)
        workspace = saved.Workspace(Path(tmp) / "ws")
        workspace.save(load_run(source))
        clear_app_caches()
        os.environ["KBENCH_APP_ARGS"] = (f"--no-samples --workspace {workspace.directory} "
                                         "--engine duckdb")
        at = AppTest.from_file(str(ROOT / "views" / "bias.py"), default_timeout=600)
        at.run()
        assert not at.exception, at.exception
        store = cache._store()
        models = list(at.multiselect(key="bias_models").value)
        changes = {
            "cap lifted": ("bias_cap", "toggle", False, True),
            "one model fewer": ("bias_models", "multiselect", models[:-1], models),
        }
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in changes}
        spent.clear()
        for _ in range(repeats):
            for name, (key, kind, value, back) in changes.items():
                before = set(store.items)
                current[0] = name
                wall, cpu = time.perf_counter(), time.process_time()
                getattr(at, kind)(key=key).set_value(value).run()
                times[name].append((time.perf_counter() - wall, time.process_time() - cpu))
                assert not at.exception, at.exception
                with store.lock:  # forget what the change computed, then set the widget back
                    for added in set(store.items) - before:
                        store.items.pop(added, None)
                        if hasattr(store, "weights"):  # (the store's byte count kept)
                            store.bytes -= store.weights.pop(added, 0)
                current[0] = ""
                getattr(at, kind)(key=key).set_value(back).run()
        load = os.getloadavg()
        for name, pairs in times.items():
            wall = [w for w, _ in pairs]
            cpu = [c for _, c in pairs]
            print(f"  {name:16s} wall median {statistics.median(wall):.3f} s (min "
                  f"{min(wall):.3f})   CPU median {statistics.median(cpu):.3f} s (min "
                  f"{min(cpu):.3f})   load average {load[0]:.1f} / {load[1]:.1f}", flush=True)
            if profile:
                print("    computed (s, mean): " + ", ".join(
                    f"{fn} {total / repeats:.3f}" for (change, fn), total
                    in sorted(spent.items(), key=lambda kv: -kv[1]) if change == name))


def main(argv: list[str]) -> None:
    if argv[:1] == ["--measure"]:
        print(json.dumps(measure(argv[1], argv[2])))
        return
    if argv[:1] == ["--app"]:
        rest = [a for a in argv[1:] if not a.startswith("--")]
        if "--fresh" in argv:
            after = argv[argv.index("--fresh") + 1:argv.index("--fresh") + 2]
            repeats = int(after[0]) if after and after[0].isdigit() else 7
            rest = [a for a in rest if a not in after]
            fresh_changes(size(rest[0] if rest else "1M"), repeats,
                          profile="--profile" in argv)
        else:
            app_widget_change(size(rest[0] if rest else "1M"))
        return
    if argv[:1] == ["--spark"]:
        spark_fixed_cost()
        return
    sizes = [size(a) for a in argv] or [1_000_000, 10_000_000, 30_000_000]
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores")
    for n in sizes:
        t0 = time.perf_counter()
        path = make(n)
        print(f"{n:>12,} rows: {path.stat().st_size / 1024**2:,.0f} MiB Parquet "
              f"(made in {time.perf_counter() - t0:.0f} s)")
        # duckdb-reduce: the engine's part alone (validation and reduction), in its own process
        engines_here = ["duckdb-reduce", "duckdb"] + (["memory"] if n <= 10_000_000 else [])
        for engine in engines_here:
            print(f"  {engine:7s} {json.dumps(_child(engine, path))}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
