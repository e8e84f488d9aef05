"""kbench_core: typed metrics and data loading for LLM behavioural benchmarks.

Importable without Streamlit. Modules are named for what they hold:
``io`` (loading and validation), ``schema`` (the canonical columns of each run kind),
``samples`` (synthetic runs with planted effects), ``workspace`` (opt-in on-disk store).
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("kbench")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
