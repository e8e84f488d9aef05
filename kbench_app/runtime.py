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
    """Import what every page uses, then move every object alive (modules, classes,
    functions: they live as long as the process) out of the collector's reach with
    :func:`gc.freeze`. Once per process; later calls do nothing, so results computed later
    (figures, tables: cycles among them included) stay collectable as before.
    ``KBENCH_GC_FREEZE=0`` leaves the collector as Python has it."""
    global _settled
    with _lock:
        if _settled or os.environ.get("KBENCH_GC_FREEZE") == "0":
            return
        for name in _MODULES:
            importlib.import_module(name)
        gc.collect()  # garbage alive now would otherwise stay for good
        gc.freeze()
        _settled = True
