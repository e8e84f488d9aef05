"""The second floating-point configuration of ``scripts/test.sh`` is really in force (issue 30).

``scripts/test.sh`` runs the numeric tests twice: as the machine is, then with OpenBLAS forced
to a generic kernel (``OPENBLAS_CORETYPE``) and NumPy's AVX2/FMA3 dispatch switched off
(``NPY_DISABLE_CPU_FEATURES=X86_V3``). Both change the last bits of results on an x86-64 machine
with AVX2 (matrix products, ``tanh``), so a test that compares floats bit for bit against stored
numbers fails in one pass or the other. These tests make sure the second pass is not silently
the first one again (a renamed NumPy feature, say, is ignored without a word).
"""

from __future__ import annotations

import os
import platform

import numpy as np
import pytest

SECOND = os.environ.get("KBENCH_NUMERIC_CONFIG") == "second"


@pytest.mark.skipif(not SECOND, reason="runs in the second numeric pass of scripts/test.sh")
def test_the_second_pass_runs_other_kernels() -> None:
    from threadpoolctl import threadpool_info

    np.ones((2, 2)) @ np.ones((2, 2))  # OpenBLAS is loaded with NumPy; this makes sure
    blas = [info for info in threadpool_info() if info.get("internal_api") == "openblas"]
    assert blas, "NumPy's BLAS is not OpenBLAS: OPENBLAS_CORETYPE has no effect"
    native_core = os.environ["OPENBLAS_CORETYPE"]
    # OpenBLAS names the core it runs (a build without that core takes a generic one), never
    # the machine's own when the variable is honoured
    assert all(info.get("architecture") not in (None, "Haswell", "SkylakeX", "Zen", "Cooperlake",
                                                "SapphireRapids") for info in blas), (
        f"OPENBLAS_CORETYPE={native_core} was not honoured: {blas}")
    if platform.machine() in ("x86_64", "AMD64"):
        from numpy._core._multiarray_umath import __cpu_features__

        assert "X86_V3" in __cpu_features__, "NumPy no longer knows X86_V3: rename it in test.sh"
        assert not __cpu_features__["X86_V3"]


def test_the_first_pass_runs_the_machine_as_it_is() -> None:
    """The first pass must not inherit the second's settings (then neither pass would run the
    kernels a user's machine runs)."""
    if SECOND:
        pytest.skip("this is the second pass")
    assert "NPY_DISABLE_CPU_FEATURES" not in os.environ
