"""Old name of :mod:`kbench_core.bias_reports` (the fingerprint-report tables), kept for one
release so existing imports keep working."""

from kbench_core.bias_reports import *  # noqa: F403
from kbench_core.bias_reports import __all__  # noqa: F401
