"""Pairwise Krippendorff's α read off one layout of the run (``_Layout.among``) equals α of
each pair's own rows, as it was computed before (one frame and one layout per pair)."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kbench_core import agreement as ag
from kbench_core.samples import big_judged_samples
from tests.test_consensus_speedpath import judged_frames

LABELS = ("said_vulnerable", "target_found", "type_match", "rcir", "confidence",
          "n_target_match", "score", "note", "claimed_lines")


def per_pair(judged, label, **options):
    """The definition: α of each pair of LLM judges on the frame of their rows only."""
    names = [j for j in ag.judges(judged) if j != ag.HUMAN]
    text = judged["judge"].astype(str)
    out = []
    for a, b in combinations(names, 2):
        est = ag.krippendorff_alpha(judged[text.isin((a, b)).to_numpy()], label, **options)
        out.append((a, b, est.value, est.low, est.high, est.n, est.n_dropped))
    return out


def outcome(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except ValueError as error:
        return str(error)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(judged_frames(), st.sampled_from(LABELS), st.sampled_from([None, "bootstrap"]))
def test_pairwise_alpha_is_alpha_of_each_pair(frame, label, ci) -> None:
    if label not in frame or len([j for j in ag.judges(frame) if j != ag.HUMAN]) < 2:
        return
    level = outcome(lambda: ag.default_level(frame, label))
    if not isinstance(level, str) or level not in ("nominal", "ordinal", "interval"):
        return
    options = dict(level=level, ci=ci, n_boot=25, random_state=3)
    got = outcome(ag.pairwise_alpha, frame, label, **options)
    want = outcome(per_pair, frame, label, **options)
    if isinstance(want, str) or isinstance(got, str):
        assert got == want
        return
    rows = list(got.itertuples(index=False, name=None))
    assert len(rows) == len(want)
    for row, expected in zip(rows, want, strict=True):
        assert row[:2] == expected[:2]
        np.testing.assert_allclose(np.array(row[2:], dtype=float),
                                   np.array(expected[2:], dtype=float), rtol=1e-12,
                                   equal_nan=True)


@pytest.mark.parametrize("label", ["target_found", "type_match", "rcir"])
def test_pairwise_alpha_on_a_big_sample(label) -> None:
    frame = big_judged_samples(6_000)
    level = ag.default_level(frame, label)
    got = ag.pairwise_alpha(frame, label, ci="bootstrap", n_boot=40)
    want = per_pair(frame, label, level=level, ci="bootstrap", n_boot=40)
    np.testing.assert_allclose(got[["alpha", "alpha_low", "alpha_high", "n",
                                    "n_dropped"]].to_numpy(dtype=float),
                               np.array([w[2:] for w in want], dtype=float), rtol=1e-12,
                               equal_nan=True)


@pytest.mark.parametrize("label", ["target_found", "type_match", "rcir"])
def test_summarize_places_the_rows_once_and_says_what_each_coefficient_says(
        label, monkeypatch) -> None:
    from kbench_core.agreement import _labels

    frame = big_judged_samples(3_000)
    calls = []
    original = _labels._new_layout
    monkeypatch.setattr(_labels, "_new_layout",
                        lambda judged, *, human: calls.append(human) or original(
                            judged, human=human))
    summary = ag.summarize(frame, label)
    assert calls.count(False) == 1  # four coefficients, one layout of the LLM judges
    level = ag.default_level(frame, label)
    alpha = ag.krippendorff_alpha(frame, label, level=level)
    assert (summary.alpha.value, summary.alpha.n) == (alpha.value, alpha.n)
    percent = ag.percent_agreement(frame, label)
    assert (summary.percent.value, summary.percent.n) == (percent.value, percent.n)
    if level != "interval":
        fleiss = ag.fleiss_kappa(frame, label)
        assert (summary.fleiss.value, summary.fleiss.low) == (fleiss.value, fleiss.low)
    assert _labels._SHARED.get() is None  # nothing kept after the call
