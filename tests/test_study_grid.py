"""The study heat table's grid (kbench_core.figures.replication._study_grid) is pandas'
pivot table of the mean, computed on integer codes."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from kbench_core.figures.replication import _study_grid, study_heatmap

KEYS = st.sampled_from(["s1", "s2", "study_010", "b", None])
MODELS = st.sampled_from(["m1", "gpt-5.2", "a", None])
VALUES = st.one_of(st.floats(-1, 1, allow_nan=False), st.just(np.nan))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(KEYS, MODELS, VALUES), min_size=1, max_size=40),
       st.booleans())
def test_grid_is_the_pivot_table_of_the_mean(rows, categorical) -> None:
    table = pd.DataFrame(rows, columns=["study", "model", "pas"])
    if categorical:
        table = table.astype({"study": "category", "model": "category"})
    # a row without a study or model is no cell (pivot_table(dropna=False) would make a
    # "nan" row or column of it)
    keyed = table.dropna(subset=["study", "model"])
    want = keyed.pivot_table(index="study", columns="model", values="pas", observed=True,
                             dropna=False, aggfunc="mean")
    want.index = [str(i) for i in want.index]
    want.columns = [str(c) for c in want.columns]
    want = want.sort_index().sort_index(axis=1)
    got = _study_grid(table, "pas")
    # any study or model beyond the pivot's is one without a single score ("(no scores)")
    np.testing.assert_allclose(got.reindex(index=want.index, columns=want.columns)
                               .to_numpy(), want.to_numpy(), rtol=1e-12, equal_nan=True)
    extra = got.drop(index=want.index, columns=want.columns, errors="ignore")
    assert extra.isna().all().all()
    assert list(got.index) == sorted(map(str, keyed["study"].unique()))
    assert list(got.columns) == sorted(map(str, keyed["model"].unique()))


def test_heatmap_cells_hold_the_cell_means_written_out() -> None:
    table = pd.DataFrame({"study": ["s1", "s1", "s2", "s2"], "model": ["a", "a", "a", "b"],
                          "pas": [0.2, 0.4, 0.9, np.nan], "n": [3, 5, 7, 2]})
    fig = study_heatmap(table, value="pas")
    z = {(y, x): v for y, row in zip(fig.data[0].y, fig.data[0].z, strict=True)
         for x, v in zip(fig.data[0].x, row, strict=True)}
    # s1·a: (0.2 + 0.4) / 2 = 0.3; s2·a: 0.9; s2·b: no known value; s1·b: no row
    got = {k: v for k, v in z.items() if np.isfinite(v)}
    assert got.keys() == {("s1", "a"), ("s2", "a")} or got.keys() == {("a", "s1"), ("a", "s2")}
    assert sorted(got.values()) == [0.3, 0.9] or np.allclose(sorted(got.values()), [0.3, 0.9])
