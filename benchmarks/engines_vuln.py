"""The vulnerability page on a workspace read through DuckDB (issue 25; figures in
``benchmarks/README.md``, "The vulnerability page on a workspace").

A big judged run (:func:`kbench_core.samples.big_judged_samples`: 3 detectors, 3 prompt
types, 3 judges) is saved into a temporary workspace and the page (``views/vuln.py``) opened
on it through DuckDB (``kbench app --workspace DIR``, the default engine) with Streamlit's
AppTest. Judged runs reduce at item grain (``kbench_core/engines/reduce.py``), so the app's
frame is as big as in memory: DuckDB fetches the rows and the loader validates and types them
once (the first render prints its wall and CPU time). Each widget change (another judge,
partial credit, split by prompt type, another model set, bins) is one full rerun, timed on
three values the session has not seen yet (so none of its results is cached: the case issue
25 is about); prints per change the median and the max of the wall time, the median CPU
time of this process (less sensitive than the wall time to other processes on a shared
machine) and the number of engine queries (calls of
:func:`kbench_core.engines.reduce_source`). Asserts nothing.

The page works ahead (:mod:`kbench_app.prefetch`: the other judges' results, computed in a
background thread after each render); before each change the script waits until that work
is done, as a user reading the page would (the wait is not timed). ``--back-to-back`` does
not wait: each change then competes with the work ahead of the previous one (the worst case,
a user changing widgets faster than a page can be read). ``KBENCH_PREFETCH=0`` turns the
work ahead off.

    python benchmarks/engines_vuln.py [SIZE]        # default 600k rows
    python benchmarks/engines_vuln.py [SIZE] --profile   # + seconds per cached function
    python benchmarks/engines_vuln.py [SIZE] --engine memory   # the loader, to compare
    python benchmarks/engines_vuln.py [SIZE] --first   # the first render only
    python benchmarks/engines_vuln.py [SIZE] --back-to-back
    python benchmarks/engines_vuln.py [SIZE] --cold    # the page first in a fresh process

The first render is timed as a user meets it: the server has shown its Runs page (the app
opens there), so Python's one-time imports of scipy, statsmodels and plotly (about 1 s) are
done and the saved run not yet read; ``--cold`` times the page as the process's first.
    python benchmarks/engines_vuln.py [SIZE] --family replication   # the replication page's
                                                    # first render (default 100k tests)
"""

from __future__ import annotations

import collections
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engines import clear_app_caches, count_engine_queries, size  # noqa: E402 (its sibling)

Step = Callable[[Any], object]  # a change made on an AppTest


def _profiler() -> collections.defaultdict[str, float]:
    """Seconds spent per cached function (``*`` when it was computed, not found) and in
    ``kit.table`` / ``kit.chart``."""
    from kbench_app import cache, kit

    spent: collections.defaultdict[str, float] = collections.defaultdict(float)
    original = cache.cached

    def timed(fn, *args, **kwargs):  # type: ignore[no-untyped-def]
        computed = [False]

        def inner(*a, **k):  # type: ignore[no-untyped-def]
            computed[0] = True
            return fn(*a, **k)

        inner.__module__ = getattr(fn, "__module__", "")
        inner.__qualname__ = getattr(fn, "__qualname__", repr(fn))
        start = time.perf_counter()
        value = original(inner, *args, **kwargs)
        spent[inner.__qualname__ + ("*" if computed[0] else "")] += time.perf_counter() - start
        return value

    cache.cached = timed  # type: ignore[assignment]
    for name in ("table", "chart"):
        function = getattr(kit, name)

        def wrapped(*args, _f=function, _n=name, **kwargs):  # type: ignore[no-untyped-def]
            start = time.perf_counter()
            value = _f(*args, **kwargs)
            spent["kit." + _n] += time.perf_counter() - start
            return value

        setattr(kit, name, wrapped)
    return spent


def main(argv: list[str]) -> None:
    from streamlit.testing.v1 import AppTest

    profile = "--profile" in argv
    first_only = "--first" in argv
    cold = "--cold" in argv
    back_to_back = "--back-to-back" in argv
    argv = [a for a in argv if a not in ("--profile", "--first", "--back-to-back", "--cold")]
    options = {"--engine": "duckdb", "--family": "judged"}
    for flag in options:
        if flag in argv:
            at_flag = argv.index(flag)
            options[flag] = argv[at_flag + 1]
            del argv[at_flag:at_flag + 2]
    engine, family = options["--engine"], options["--family"]
    n_rows = size(argv[0]) if argv else 600_000 if family == "judged" else 100_000
    spent = _profiler() if profile else collections.defaultdict(float)

    from kbench_app import prefetch
    from kbench_core import workspace as saved
    from kbench_core.io import load_run
    from kbench_core.samples import big_judged_samples, big_replication_tests

    queries = count_engine_queries()
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / f"big_{family}.parquet"
        make = big_judged_samples if family == "judged" else big_replication_tests
        make(n_rows).to_parquet(source)
        workspace = saved.Workspace(Path(tmp) / "ws")
        workspace.save(load_run(source))
        clear_app_caches()
        os.environ["KBENCH_APP_ARGS"] = (f"--no-samples --workspace {workspace.directory} "
                                         f"--engine {engine}")
        page = "vuln.py" if family == "judged" else "replication.py"
        if not cold:  # the server has shown its Runs page (imports done, the run not read)
            AppTest.from_file(str(ROOT / "views" / "runs.py"), default_timeout=600).run()
        at = AppTest.from_file(str(ROOT / "views" / page), default_timeout=600)
        start, start_cpu = time.perf_counter(), time.process_time()
        at.run()
        first = time.perf_counter() - start
        first_cpu = time.process_time() - start_cpu
        if profile:
            print(f"      first render {first:.3f} s: " + ", ".join(
                f"{k} {v:.3f}" for k, v in sorted(spent.items(), key=lambda kv: -kv[1])
                if v > 0.01))
        if at.exception:
            print(f"exception {at.exception[0].value[:500]}")
            return
        if family != "judged" or first_only:  # the first render only
            print(f"{n_rows:,} {family} rows saved; {engine}: first render {first:.2f} s "
                  f"(CPU {first_cpu:.2f} s), engine queries {queries[0]}")
            return
        judges = list(at.selectbox(key="vuln_judge").options)
        models = list(at.multiselect(key="vuln_models").value)
        print(f"{n_rows:,} judged rows saved ({source.stat().st_size / 1024**2:.0f} MiB "
              f"Parquet), judges {judges}; {engine}: first render {first:.2f} s (CPU "
              f"{first_cpu:.2f} s), engine queries {queries[0]}; work ahead "
              f"{'on' if prefetch.enabled() else 'off'}"
              + (", changes back to back" if back_to_back else ""))

        def judge(name: str) -> Step:
            return lambda a: a.selectbox(key="vuln_judge").set_value(name)

        def partial(value: float) -> Step:
            return lambda a: a.slider(key="vuln_partial").set_value(value)

        def split(on: bool) -> Step:
            return lambda a: a.toggle(key="vuln_split").set_value(on)

        def chosen(subset: list[str]) -> Step:
            return lambda a: a.multiselect(key="vuln_models").set_value(subset)

        def bins(n: int) -> Step:
            return lambda a: a.slider(key="vuln_bins").set_value(n)

        # (timed?, step): each timed step sets a value this session has not seen (nothing
        # of it cached); untimed steps go back to the default or set up the next one.
        changes: dict[str, list[tuple[bool, Step]]] = {
            "another judge": [(True, judge(j)) for j in judges[1:]] + [(False, judge(judges[0]))],
            "partial credit": [(True, partial(v)) for v in (0.5, 0.75, 0.25)]
                              + [(False, partial(1.0))],
            "split by prompt type": [s for v in (0.9, 0.8, 0.7) for s in (
                (False, partial(v)), (True, split(True)), (False, split(False)))]
                + [(False, partial(1.0))],
            "another model set": [(True, chosen([m for m in models if m != drop]))
                                  for drop in models] + [(False, chosen(models))],
            "bins": [(True, bins(n)) for n in (12, 15, 20)] + [(False, bins(10))],
        }
        for label, steps in changes.items():
            before = queries[0]
            times, cpu = [], []
            for timed, step in steps:
                if not back_to_back:
                    prefetch.wait_idle()  # the user reads the page
                spent.clear()
                start, start_cpu = time.perf_counter(), time.process_time()
                step(at).run()
                seconds = time.perf_counter() - start
                used = time.process_time() - start_cpu
                if at.exception:
                    print(f"  {label}: exception {at.exception[0].value[:300]}")
                if not timed:
                    continue
                times.append(seconds)
                cpu.append(used)
                if profile:
                    print(f"      {seconds:.3f} s: " + ", ".join(
                        f"{k} {v:.3f}" for k, v in sorted(spent.items(), key=lambda kv: -kv[1])
                        if v > 0.01))
            print(f"  {label:<22} median {statistics.median(times):.3f} s  max "
                  f"{max(times):.3f} s  (CPU median {statistics.median(cpu):.3f} s)  engine "
                  f"queries {queries[0] - before}  ({' '.join(f'{t:.2f}' for t in times)})",
                  flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
