"""Another model set on the Replication page of a big run (100,080 tests, 60 configurations):
six model sets in a row, each one full rerun of ``views/replication.py`` under Streamlit's
AppTest (target: <= 0.3 s a change). Prints, per change, the wall time, the script's own CPU
time (its thread's, so other processes on a shared machine count less) and the time spent in
the garbage collector's passes during it. Asserts nothing.

    python benchmarks/replication_models.py
    KBENCH_GC_FREEZE=0 python benchmarks/replication_models.py   # without runtime.settle's
                                                                 # freeze, to compare
"""

from __future__ import annotations

import gc
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import streamlit.runtime.scriptrunner.script_runner as script_runner  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

from kbench_core.samples import replication_tests  # noqa: E402

_script: list[tuple[float, float]] = []  # (wall, thread CPU) of each script run
_collections: list[tuple[int, float]] = []  # (generation, seconds) of each collection
_started: dict[str, float] = {}


def _timed_script(*args: Any, **kwargs: Any) -> Any:
    wall, cpu = time.perf_counter(), time.thread_time()
    try:
        return _run_script(*args, **kwargs)
    finally:
        _script.append((time.perf_counter() - wall, time.thread_time() - cpu))


def _gc_watch(phase: str, info: dict[str, int]) -> None:
    if phase == "start":
        _started["at"] = time.perf_counter()
    elif "at" in _started:
        _collections.append((info["generation"], time.perf_counter() - _started.pop("at")))


_run_script = script_runner.exec_func_with_error_handling
script_runner.exec_func_with_error_handling = _timed_script


def main() -> None:
    gc.callbacks.append(_gc_watch)
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}, gc.freeze "
          f"{'off' if os.environ.get('KBENCH_GC_FREEZE') == '0' else 'on'}")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "replication_100k.parquet"
        models = [f"synthetic-agent-{i:02d}" for i in range(60)]
        replication_tests(models=models, n_studies=278).to_parquet(path)
        os.environ["KBENCH_APP_ARGS"] = f"--no-samples {path}"
        at = AppTest.from_file(str(ROOT / "views" / "replication.py"), default_timeout=600)
        at.run()
        offered = at.multiselect(key="rep_models").options
        walls, cpus = [], []
        for chosen in (offered[:5], offered[:6], offered[1:6], offered[2:8], offered[3:7],
                       offered[10:15]):
            pair = (at.selectbox(key="rep_cmp_a").value, at.selectbox(key="rep_cmp_b").value)
            _script.clear()
            _collections.clear()
            start = time.perf_counter()
            at.multiselect(key="rep_models").set_value(chosen).run()
            wall = time.perf_counter() - start
            cpu = _script[-1][1]
            full = sum(s for g, s in _collections if g == 2)
            moved = pair != (at.selectbox(key="rep_cmp_a").value,
                             at.selectbox(key="rep_cmp_b").value)
            walls.append(wall)
            cpus.append(cpu)
            print(f"  {len(chosen)} models{' (new pair)' if moved else '':<11} wall {wall:.3f} s"
                  f"  script CPU {cpu:.3f} s  gc {sum(s for _, s in _collections):.3f} s"
                  f" (full passes {full:.3f} s)")
        walls.sort()
        cpus.sort()
        print(f"  median wall {walls[len(walls) // 2]:.3f} s, max {walls[-1]:.3f} s; "
              f"median script CPU {cpus[len(cpus) // 2]:.3f} s, max {cpus[-1]:.3f} s")


if __name__ == "__main__":
    main()
