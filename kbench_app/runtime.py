"""Process-wide tuning of a kbench server: what it does before its pages run."""

from __future__ import annotations

import gc
import importlib
import os
import threading
import time

__all__ = ["REFREEZE_SECONDS", "settle"]

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
_settled_at: float | None = None  # time.monotonic() of the last freeze (or of the first call)
# How long what was alive at a freeze stays out of the collector's reach. A server's first
# freeze comes in its first session's first script run, so that session's own objects
# (Streamlit's session and its state, which refer to each other) are frozen with the
# imports: once it ended, the cycle holding its registry, runs and uploads was never
# collected. A later settle() thaws, collects and freezes again: a full collection
# (~70 ms) once per period at most, instead of on arbitrary widget changes.
REFREEZE_SECONDS = 600.0


def settle() -> None:
    """Before a page: on the first call, keep BLAS to one thread (:func:`_one_blas_thread`),
    import what every page uses and move every object then alive (modules, classes,
    functions: they live as long as the process) out of the collector's reach with
    :func:`gc.freeze` (``KBENCH_GC_FREEZE=0``: not). The router calls it on every script
    run: a call within :data:`REFREEZE_SECONDS` of the last freeze does nothing, so results
    computed meanwhile (figures, tables: cycles among them included) stay collectable; a
    later one thaws what was frozen, collects what has become garbage (a session that ended
    since, frozen while it was alive) and freezes what is alive now."""
    global _settled_at
    with _lock:
        now = time.monotonic()
        if _settled_at is not None and now - _settled_at < REFREEZE_SECONDS:
            return
        first = _settled_at is None
        _settled_at = now
        if first:
            _one_blas_thread()
        if os.environ.get("KBENCH_GC_FREEZE") == "0":
            return
        if first:
            for name in _MODULES:
                importlib.import_module(name)
        gc.unfreeze()
        gc.collect()  # garbage alive now would otherwise stay until the next freeze
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
