"""kbench_core.select.labels_in: rows picked by label as text, categorical or not."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from kbench_core.select import labels_in

LABELS = st.one_of(st.sampled_from(["m1", "m2", "gpt-5.2", " pad ", "", "ünï"]),
                   st.integers(-3, 3), st.none())


@settings(max_examples=150, deadline=None)
@given(st.lists(LABELS, max_size=30), st.lists(st.sampled_from(
    ["m1", "m2", "gpt-5.2", " pad ", "", "ünï", "1", "-3", "0", "None", "nan"]), max_size=4),
    st.sampled_from(["object", "category", "text"]))
def test_labels_in_is_the_row_by_row_text_test(labels, values, kind) -> None:
    series = pd.Series(labels, dtype=object)
    if kind == "category":
        series = series.astype("category")
    elif kind == "text":
        series = series.map(lambda v: None if v is None else str(v))
    # written out row by row: a missing label matches nothing, any other by its text
    want = np.array([v is not None and str(v) in set(values) for v in labels], dtype=bool)
    assert labels_in(series, values).tolist() == want.tolist()


def test_numeric_categories_match_their_text() -> None:
    series = pd.Series(pd.Categorical([3, 1, None, 3], categories=[1, 3]))
    assert labels_in(series, ["3"]).tolist() == [True, False, False, True]
    assert labels_in(pd.Series([1.5, np.nan]), ["1.5", "nan"]).tolist() == [True, False]

