"""Figures and tables compared by content, for the tests that hold an engine's objects to the
memory engine's: numbers at 1e-9 (a plotly typed array decoded), everything else exactly."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest


def assert_same(left, right, **frame_options) -> None:
    """Two figures' (or tables') content equal: numbers at 1e-9, everything else exactly
    (``frame_options``: more of ``assert_frame_equal``'s, e.g. ``check_dtype=False``)."""
    import plotly.graph_objects as go

    if isinstance(left, pd.DataFrame):
        pd.testing.assert_frame_equal(left.reset_index(drop=True),
                                      right.reset_index(drop=True), rtol=1e-9, atol=1e-12,
                                      **frame_options)
        return
    assert isinstance(left, go.Figure) and isinstance(right, go.Figure)
    _same_json(left.to_plotly_json(), right.to_plotly_json(), "figure")


def _typed(value) -> np.ndarray:
    """A plotly typed array (``{"dtype", "bdata"[, "shape"]}``) as numbers."""
    import base64

    array = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
    shape = value.get("shape")
    if shape:
        array = array.reshape([int(k) for k in str(shape).split(",")])
    return array.astype(float)


def _same_json(a, b, where: str) -> None:
    if isinstance(a, dict) and "bdata" in a:
        assert isinstance(b, dict) and "bdata" in b, where
        np.testing.assert_allclose(_typed(b), _typed(a), rtol=1e-9, atol=1e-12,
                                   err_msg=where)
    elif isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b), where
        for key in a:
            _same_json(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, (list, tuple, np.ndarray)) and not isinstance(a, str):
        a, b = np.asarray(a, dtype=object), np.asarray(b, dtype=object)
        assert a.shape == b.shape, where
        for i, (x, y) in enumerate(zip(a.ravel(), b.ravel(), strict=True)):
            _same_json(x, y, f"{where}[{i}]")
    elif isinstance(a, (float, np.floating)) and not isinstance(a, bool):
        assert b == pytest.approx(a, rel=1e-9, abs=1e-12, nan_ok=True), where
    else:
        assert a == b or (a != a and b != b), where
