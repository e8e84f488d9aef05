"""kbench_core.tables.format_numbers and the app's interval text: format_value's text for
each number, written without its per-cell dispatch."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(-1e-3, 1e-3), st.floats(-2e4, 2e4), st.sampled_from(
        [0.0, -0.0, 1e-12, -1e-12, 9.99e-13, 0.46500000001, 9999.5, 99995.0, 1e-4, 9.9995e-5,
         0.00010000001, 1234.5, -0.6344000000000001]))))
def test_format_numbers_is_format_value_of_each(values) -> None:
    from kbench_core.tables import format_numbers, format_value

    assert format_numbers(values) == [format_value(v) for v in values]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.one_of(st.none(), st.floats(-2, 2), st.just(np.inf)),
                          st.one_of(st.none(), st.floats(-2, 2))), max_size=20))
def test_interval_text_formats_each_known_interval(bounds) -> None:
    from kbench_app.ui import interval_text
    from kbench_core.tables import format_value

    low = pd.Series([b[0] for b in bounds], dtype=float, index=np.arange(len(bounds)) * 3)
    high = pd.Series([b[1] for b in bounds], dtype=float, index=low.index)
    want = ["" if lo is None or hi is None else f"[{format_value(lo)}, {format_value(hi)}]"
            for lo, hi in bounds]
    got = interval_text(low, high)
    assert got.tolist() == want and got.index.equals(low.index)
