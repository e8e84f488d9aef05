"""Process-wide tuning of a kbench server: what it does once, before any page runs."""

from __future__ import annotations

import gc
import importlib
import os
import threading

__all__ = ["settle"]

# What the pages compute and draw with. Importing them creates most of a server's ~180k
# objects that the cyclic garbage collector tracks (functions, classes, dicts of modules);
# a full collection walks all of them, about 70 ms that lands on some widget change.
_MODULES = (
    "plotly.graph_objects", "plotly.subplots", "scipy.stats", "statsmodels.stats.proportion",
    "kbench_core.families", "kbench_core.compare", "kbench_core.agreement",
    "kbench_core.kahne", "kbench_core.replication", "kbench_core.vuln",
    *(f"kbench_core.figures.{name}" for name in (
        "agreement", "bias", "calibration", "compare", "heat", "replication", "vuln")),
)
_lock = threading.Lock()
_settled = False


def settle() -> None:
    """Once per process, before its first page: import what every page uses and move every
    object then alive (modules, classes, functions: they live as long as the process) out
    of the collector's reach with :func:`gc.freeze` (``KBENCH_GC_FREEZE=0``: not), and keep
    BLAS to one thread (:func:`_one_blas_thread`). Later calls do nothing, so results
    computed later (figures, tables: cycles among them included) stay collectable."""
    global _settled
    with _lock:
        if _settled:
            return
        _settled = True
        _one_blas_thread()
        if os.environ.get("KBENCH_GC_FREEZE") == "0":
            return
        for name in _MODULES:
            importlib.import_module(name)
        gc.collect()  # garbage alive now would otherwise stay for good
        gc.freeze()


_THREAD_SETTINGS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def _one_blas_thread() -> None:
    """One BLAS thread per server process, unless the environment sets a number. A server's
    sessions already share its cores: BLAS threads on top of them wait for each other (on 2
    loaded cores a vulnerability bootstrap of 20k answers took 0.41 s with OpenBLAS's 2
    threads, 0.16 s with one)."""
    if any(name in os.environ for name in _THREAD_SETTINGS):
        return
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")
