"""The Compare panel keys one pair's comparison on the two models' own rows, so another model
set that keeps A and B reuses it: that is right only because a pair's comparison reads those
rows alone. Checked here on the core function (hypothesis) and on the Replication page."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kbench_core import compare, samples
from tests.conftest import clear_app_caches, count_calls
from tests.test_app_replication import open_page


@st.composite
def runs(draw) -> tuple[pd.DataFrame, str, str]:
    n_models = draw(st.integers(3, 5))
    n_items = draw(st.integers(2, 14))
    n_groups = draw(st.integers(1, 4))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    models = [f"m{i}" for i in range(n_models)]
    rows = [(m, f"i{j:02d}", f"g{j % n_groups}", float(rng.normal()))
            for m in models for j in range(n_items) if rng.random() > 0.2]
    frame = pd.DataFrame(rows, columns=["model", "item", "group", "value"])
    a, b = draw(st.permutations(models))[:2]
    return frame.sample(frac=1.0, random_state=seed % 1000).reset_index(drop=True), a, b


@settings(max_examples=60, deadline=None)
@given(runs(), st.booleans())
def test_a_pair_reads_its_two_models_rows_only(case, clustered) -> None:
    frame, a, b = case
    if not {a, b} <= set(frame["model"]):
        return
    options = dict(item="item", group="group", cluster="group" if clustered else None)
    whole = compare.compare_pair(frame, "value", a, b, **options)
    pair = compare.compare_pair(frame[frame["model"].isin([a, b])], "value", a, b, **options)
    for field in ("value", "low", "high", "n", "p_value", "n_dropped"):
        assert getattr(pair.estimate, field) == pytest.approx(getattr(whole.estimate, field),
                                                              nan_ok=True), field
    assert pair.sd_diff == pytest.approx(whole.sd_diff, nan_ok=True)
    assert pair.design_effect == pytest.approx(whole.design_effect, nan_ok=True)
    assert (pair.n_pairs, pair.n_clusters) == (whole.n_pairs, whole.n_clusters)
    # every group the two models share, with the same adjusted p (a group only other
    # models answered is a row without a difference in the whole frame's table, and never
    # drawn or counted)
    def shared(groups: pd.DataFrame) -> pd.DataFrame:
        return groups[groups["delta"].notna()].reset_index(drop=True)

    pd.testing.assert_frame_equal(shared(pair.groups), shared(whole.groups))


def test_another_model_set_keeping_the_pair_reuses_its_comparison(monkeypatch) -> None:
    clear_app_caches()
    calls: dict[str, int] = {}
    count_calls(monkeypatch, compare, "compare_pair", calls)
    at = open_page(monkeypatch)
    models = sorted(map(str, samples.replication_tests()["model"].unique()))
    at.multiselect(key="rep_models").set_value(models).run()
    first = calls["compare_pair"]
    from kbench_app import compare as panel

    count_calls(monkeypatch, panel, "content_hash", calls)
    at.run()  # a rerun finds the pair's rows and their hash: nothing hashed again
    assert calls["content_hash"] == 0 and calls["compare_pair"] == first
    shown = [s.value for s in at.success] + [i.value for i in at.info]
    # flat and mirror stay A and B (the first two, sorted) without the third model
    at.multiselect(key="rep_models").set_value(models[:2]).run()
    assert not at.exception
    assert calls["compare_pair"] == first
    assert [s.value for s in at.success] + [i.value for i in at.info] == shown
    # a set without model A: A becomes a model B does not hold (not "choose two different
    # models"), and the new pair is computed
    at.multiselect(key="rep_models").set_value(models[1:]).run()
    a, b = at.selectbox(key="rep_cmp_a").value, at.selectbox(key="rep_cmp_b").value
    assert (a, b) == (models[2], models[1])
    assert not at.warning
    assert calls["compare_pair"] == first + 1
    data = compare.per_item_values(samples.replication_tests(), "replication")
    spec = compare.COMPARISONS["replication"]
    want = compare.compare_pair(data, spec.values[0][1], a, b, group=spec.group,
                                cluster=spec.cluster, noun=spec.noun, label=spec.values[0][0])
    metric = [m for m in at.metric if m.label == "Difference A − B"]
    assert metric and metric[0].value == f"{want.estimate.value:+.3f}"
    clear_app_caches()
