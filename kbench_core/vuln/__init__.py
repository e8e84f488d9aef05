"""Moved into a package; the modules are carved out in the next commit."""

from kbench_core.vuln.tiers import *  # noqa: F403
from kbench_core.vuln.tiers import __all__  # noqa: F401
