"""kbench_core: typed metrics and data loading for LLM behavioural benchmarks.

Importable without Streamlit. Modules are named for what they hold: ``io`` (loading, with
``readers``, ``validation`` and ``problems``), ``families`` (the run kinds), ``schema`` (their
columns), the metrics (``kahne`` and ``bias_reports`` for cognitive biases, ``replication``,
``vuln``, ``agreement``, ``calibration``, ``compare``, ``stats``, ``ranking``), ``figures``,
``catalog``, ``tables``, ``export``, ``report``, ``native`` (benchmarks' own formats),
``samples`` (synthetic runs with planted effects) and ``workspace`` (opt-in on-disk store).
See ``docs/architecture.md``.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("kbench")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
