"""Moved into a package; the modules are carved out in the next commit."""

from kbench_core.agreement.kappa import *  # noqa: F403
from kbench_core.agreement.kappa import __all__  # noqa: F401

__test__ = {"interpret": interpret, "pairwise_kappa": pairwise_kappa}  # noqa: F405  (doctest.testmod)
