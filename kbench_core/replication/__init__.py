"""Moved into a package; the modules are carved out in the next commit."""

from kbench_core.replication.pas import *  # noqa: F403
from kbench_core.replication.pas import (
    __all__,  # noqa: F401
    _ccc_from_sums,  # noqa: F401
)
