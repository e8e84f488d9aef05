"""What the benchmark scripts share: :func:`best_of`, the best of a few timed calls. Imported
by its file name (a script's own folder is first on ``sys.path`` when it is run as
``python benchmarks/<script>.py``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def best_of(fn: Callable[[], Any], repeat: int = 3) -> tuple[float, Any]:
    """The least wall time of ``repeat`` calls of ``fn`` (seconds), and its last result."""
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result
