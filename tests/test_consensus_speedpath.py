"""The majority consensus's fast path (``kbench_core.agreement.consensus``: votes counted
pair by pair, medians of up to three judges without a sort, grids by one gather) against a
faithful copy of the implementation it replaced (kept below as the reference): the same
frame, column for column (dtypes, categories, NA placement), with the same ``attrs``, on
Hypothesis frames of 1 to 5 judges with failed judgements, missing values, ties, items no
voter labelled, free text, a voter subset, ``min_votes`` and both ``failed_as``. The
helpers are also checked against libraries and hand counts (``np.nanmedian``,
``collections.Counter``)."""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kbench_core import agreement as ag
from kbench_core.agreement._labels import (
    CONSENSUS,
    FAILED_AS,
    FOUND_LABELS,
    ORDERED_LABELS,
    REASONING,
    REPORTED,
    TRUTH_COLUMNS,
    FailedAs,
    _Label,
    _label,
    _Layout,
    _layout,
    check_min_votes,
    voters,
)
from kbench_core.agreement.consensus import _row_median, _vote_counts, _votes
from kbench_core.schema import TYPE_MATCHES
from kbench_core.stats import check_choice

# --- The reference: kbench_core/agreement/consensus.py as it was before the fast path. ----


def _ref_code_grid(layout: _Layout, label: _Label) -> np.ndarray:
    assert label.codes is not None
    return layout.grid(label.codes[layout.rows], -1)


def _ref_value_grid(layout: _Layout, label: _Label) -> np.ndarray:
    assert label.values is not None
    return layout.grid(label.values[layout.rows], np.nan)


_BATCH_ROWS = 1 << 15  # items x numeric labels up to which their medians share one sort


def _ref_vote_counts(codes: np.ndarray) -> np.ndarray:
    """Per item and judge: how many judges of the item gave this judge's value (0 when the
    judge gave none). O(items · judges²) whatever the number of categories, so free-text
    labels such as ``claimed_lines`` cost no more than yes/no."""
    ok = codes >= 0
    same = (codes[:, :, None] == codes[:, None, :]) & ok[:, None, :]
    return np.where(ok, same.sum(axis=2), 0)


def _ref_votes(codes: np.ndarray, min_votes: int) -> tuple[np.ndarray, np.ndarray]:
    """Winning code per item (-1 when none) and whether any judge gave a value.

    A value wins with at least ``min_votes`` votes when no other value has as many: the
    judges holding the top count are exactly that many (one value), not a multiple (a tie).
    """
    n = codes.shape[0]
    if codes.shape[1] == 0:
        return np.full(n, -1, dtype=np.int64), np.zeros(n, dtype=bool)
    votes = _ref_vote_counts(codes)
    best = votes.max(axis=1)
    holders = (votes == best[:, None]).sum(axis=1)
    top = codes[np.arange(n), votes.argmax(axis=1)]
    winner = np.where((best >= min_votes) & (holders == best) & (best > 0), top, -1)
    return winner, (codes >= 0).any(axis=1)


def _ref_row_median(values: np.ndarray) -> np.ndarray:
    """Median of each row over its non-missing values (NaN when none). ``np.nanmedian`` goes
    through masked arrays and warns once per empty row; with a handful of judges a sort
    along the row is all it takes."""
    if values.shape[1] == 0:
        return np.full(values.shape[0], np.nan)
    ordered = np.sort(values, axis=1)  # NaN last
    m = (~np.isnan(values)).sum(axis=1)
    rows = np.arange(values.shape[0])
    low = ordered[rows, np.maximum((m - 1) // 2, 0)]
    high = ordered[rows, np.minimum(m // 2, values.shape[1] - 1)]
    return np.where(m > 0, np.where(m % 2 == 1, low, (low + high) / 2), np.nan)


def _ref_first_present(frame: pd.DataFrame, layout: _Layout, column: str) -> pd.Series:
    """Per item, the first judge's non-missing value (ground truth is the same for all).

    Taken by position: per item the first of its rows (in frame order) with a value, one
    ``minimum.at`` over the rows instead of a groupby per column. An item without any value
    takes the missing value of its first row, the dtype's own NA, as ``groupby().first()``
    gives; in a plain object column (None or NaN?) that groupby still decides."""
    values = frame[column]
    array = values.array
    known = (array.codes[layout.rows] >= 0 if isinstance(array, pd.Categorical)
             else values.notna().to_numpy()[layout.rows])
    none = layout.rows.size
    pick = np.full(layout.n_items, none, dtype=np.int64)
    np.minimum.at(pick, layout.item[known], np.flatnonzero(known))
    empty = pick == none
    if empty.any():
        if values.dtype == object:
            subset = values.iloc[layout.rows].reset_index(drop=True)
            return subset.groupby(layout.item, sort=True).first().reindex(
                range(layout.n_items)).reset_index(drop=True)
        rows = np.where(empty, layout.first, layout.rows[np.minimum(pick, none - 1)])
        return pd.Series(values.array.take(rows))
    return pd.Series(values.array.take(layout.rows[pick]))


def reference(judged: pd.DataFrame, *, judges: Sequence[str] | None = None,
              min_votes: int | None = None, failed_as: FailedAs = "missing") -> pd.DataFrame:
    check_choice("failed_as", failed_as, FAILED_AS)
    chosen = voters(judged, judges)
    if not chosen:
        raise ValueError("consensus needs at least one judge other than 'human'")
    if judges is not None:
        # Only the voters' rows: an item none of them labelled is not an item of theirs.
        judged = judged[judged["judge"].astype(str).isin(chosen).to_numpy()]
    layout = _layout(judged, human=False)
    n_judges = len(layout.judges)
    min_votes = check_min_votes(min_votes, n_judges)
    not_found = failed_as == "not_found"
    keys = list(layout.keys)
    out: dict[str, Any] = {}
    for c in keys:
        # The item key of each item's first row: categoricals stay categoricals.
        taken = judged[c].array.take(layout.first)
        out[c] = taken if isinstance(taken, pd.Categorical) else taken.to_numpy()
    found_grid: np.ndarray | None = None
    found: _Label | None = None
    if "target_found" in judged:
        found = _label(judged, "target_found")  # read once: a vote and the reasoning filter
        assert found.codes is not None
        found_grid = layout.grid(found.codes[layout.rows], -1)
    truth = {c: _ref_first_present(judged, layout, c) for c in TRUTH_COLUMNS if c in judged}
    undecided: dict[str, np.ndarray] = {}
    numeric: dict[str, np.ndarray] = {}
    for column in judged.columns:
        if column in keys:
            continue
        if column == "judge":
            out[column] = np.full(layout.n_items, CONSENSUS, dtype=object)
        elif column in truth:
            out[column] = truth[column]
        else:
            spec = found if column == "target_found" and found is not None else _label(
                judged, column)
            if spec.numeric:
                values = _ref_value_grid(layout, spec)
                if column in REASONING and found_grid is not None:
                    values = np.where(found_grid == 1, values, np.nan)
                numeric[column] = values
                continue
            codes = _ref_code_grid(layout, spec)
            if not_found and column in FOUND_LABELS and spec.boolean:
                codes = np.where(codes < 0, spec.categories.index(False), codes)
            winner, voted = _ref_votes(codes, int(min_votes))
            none = voted & (winner < 0)
            if column in REPORTED:
                undecided[column] = none
            if spec.boolean:
                decided = winner >= 0
                value = winner == 1
                if column in ("target_found", "partial_found"):
                    out[column] = value
                elif column == "said_vulnerable" and "is_vulnerable" in truth:
                    vulnerable = truth["is_vulnerable"].astype("boolean")
                    wrong = ~vulnerable.fillna(False).to_numpy(dtype=bool)
                    verdict = np.where(decided, value, wrong)
                    known = decided | vulnerable.notna().to_numpy()
                    out[column] = verdict if known.all() else pd.array(
                        np.where(known, verdict, pd.NA), dtype="boolean")
                else:
                    out[column] = value if decided.all() else pd.array(
                        np.where(decided, value, pd.NA), dtype="boolean")
            else:
                categories = list(spec.categories)
                if isinstance(judged[column].dtype, pd.CategoricalDtype) \
                        or column in ORDERED_LABELS:
                    out[column] = pd.Categorical.from_codes(
                        winner, categories=categories, ordered=spec.ordered)
                else:
                    out[column] = np.array([*categories, None], dtype=object)[winner]
    if numeric and layout.n_items * len(numeric) <= _BATCH_ROWS:
        # Every numeric label's medians in one sort: the same per-row operations on the
        # rows of all labels at once, instead of a dozen calls on a few hundred rows each
        # (past a few thousand rows the copy into one array costs more than the calls).
        stacked = np.stack(list(numeric.values()), axis=1)  # items x labels x judges
        medians = _ref_row_median(stacked.reshape(-1, stacked.shape[2])).reshape(
            stacked.shape[:2])
        for i, column in enumerate(numeric):
            out[column] = medians[:, i]
    else:
        for column, values in numeric.items():
            out[column] = _ref_row_median(values)
    # Issue 37 (docs/formats.md): a failed judgement is a row with its verdict and found labels
    # missing. n_judges counts the judgements present; an item no voter judged is missing
    # (not an undecided vote) unless failed judgements count as "not found".
    present = np.ones(len(judged), dtype=bool)
    for column in ("said_vulnerable", "target_found"):
        if column in judged:
            present &= judged[column].notna().to_numpy(dtype=bool)
    n_present = layout.grid(present[layout.rows], False).sum(axis=1)
    nobody = n_present == 0
    if not not_found and nobody.any():
        for column in ("said_vulnerable", *FOUND_LABELS):
            if column in out:
                out[column] = pd.array(np.where(nobody, pd.NA, np.asarray(out[column],
                                                                          dtype=object)),
                                       dtype="boolean")
    out["n_judges"] = np.asarray(n_present, dtype=np.int64)
    # One bit per reported label, then a lookup of the 2^k joined names (no per-item strings).
    names = list(undecided)
    mask = np.zeros(layout.n_items, dtype=np.int64)
    for bit, column in enumerate(names):
        mask |= undecided[column].astype(np.int64) << bit
    text = np.array([", ".join(c for b, c in enumerate(names) if code >> b & 1)
                     for code in range(2 ** len(names))], dtype=object)
    out["no_majority"] = text[mask]
    # Built once, in the final column order (adding columns one by one copied the frame).
    frame = pd.DataFrame({c: out[c] for c in [*(c for c in judged.columns if c in out),
                                              "n_judges", "no_majority"]})
    frame.attrs["no_majority"] = {c: int(v.sum()) for c, v in undecided.items()}
    frame.attrs["min_votes"] = int(min_votes)
    frame.attrs["judges"] = list(layout.judges)
    frame.attrs["failed_as"] = failed_as
    return frame


# --- Frames -------------------------------------------------------------------------------

JUDGES = ("j0", "j1", "j2", "j3", "j4")
FLAGS = (True, False, None)


@st.composite
def judged_frames(draw: st.DrawFn) -> pd.DataFrame:
    """A judged frame: up to 12 items of 1 to 5 judges (a ``human`` sometimes), each judge
    with or without a row per item, small value sets (ties), every kind of label column."""
    n_judges = draw(st.integers(1, 5))
    names = list(JUDGES[:n_judges]) + (["human"] if draw(st.booleans()) else [])
    n_items = draw(st.integers(0, 12))
    cells = [(i, j) for i in range(n_items) for j in names
             if draw(st.integers(0, 3)) > 0]  # about one failed judgement in four
    if draw(st.booleans()):
        cells = draw(st.permutations(cells))  # rows in any order
    n = len(cells)
    item = [i for i, _ in cells]

    def pick(options: Sequence[Any]) -> list[Any]:
        return draw(st.lists(st.sampled_from(list(options)), min_size=n, max_size=n))

    frame = pd.DataFrame({"sample": [f"s{i % 4}" for i in item],
                          "model": [f"m{i // 4 % 2}" for i in item],
                          "prompt_type": [f"p{i // 8}" for i in item],
                          "judge": [j for _, j in cells]})
    if draw(st.booleans()):
        frame = frame.astype("category")
    # Ground truth: usually the same for every judge of an item, sometimes missing.
    truth = draw(st.lists(st.sampled_from(FLAGS), min_size=12, max_size=12))
    kind = draw(st.sampled_from(["bool", "object", "boolean", "none"]))
    if kind == "bool":
        frame["is_vulnerable"] = np.array([bool(truth[i]) for i in item], dtype=bool)
    elif kind != "none":
        frame["is_vulnerable"] = pd.Series([truth[i] for i in item], dtype=object)
        if kind == "boolean":
            frame["is_vulnerable"] = frame["is_vulnerable"].astype("boolean")
    if draw(st.booleans()):
        frame["severity"] = pd.Categorical(pick(["low", "high", None]),
                                           categories=["low", "high", "critical"])
    if draw(st.booleans()):
        frame["vuln_type"] = pd.Series(pick(["reentrancy", "overflow", None]), dtype="str")
    if draw(st.booleans()):
        frame["true_lines"] = pd.Series(pick(["1;2", "7", None, np.nan]), dtype=object)
    for column in ("said_vulnerable", "target_found", "partial_found", "flag"):
        kind = draw(st.sampled_from(["bool", "object", "boolean", "absent"]))
        if kind == "bool":
            frame[column] = np.array(pick([True, False]), dtype=bool)
        elif kind != "absent":
            frame[column] = pd.Series(pick(FLAGS), dtype=object if kind == "object"
                                      else "boolean")
    kind = draw(st.sampled_from(["category", "object", "absent"]))
    if kind != "absent":
        values = pick([*TYPE_MATCHES[:3], None])
        frame["type_match"] = (pd.Categorical(values, categories=list(TYPE_MATCHES))
                               if kind == "category" else pd.Series(values, dtype=object))
    for column in ("confidence", "rcir", "ava", "fsv", "n_target_match", "score"):
        kind = draw(st.sampled_from(["float", "int", "Int64", "absent"]))
        if kind == "int":
            frame[column] = np.array(pick([0, 1, 2, 5]), dtype=np.int64)
        elif kind == "Int64":
            frame[column] = pd.array(pick([0, 1, 3, None]), dtype="Int64")
        elif kind == "float":
            frame[column] = np.array(pick([0.0, -0.5, 0.25, 1.0, 1e300, np.nan]), dtype=float)
    if draw(st.booleans()):
        frame["claimed_lines"] = pd.Series(pick(["3;4", "4", "12;13;14", None]), dtype=object)
    kind = draw(st.sampled_from(["str", "category", "ints", "absent"]))
    if kind == "str":
        frame["note"] = pd.Series(pick(["a", "b", "c", None]), dtype="str")
    elif kind == "category":
        frame["note"] = pd.Categorical(pick(["x", "y", None]), categories=["y", "x", "z"])
    elif kind == "ints":  # an object column of numbers: not text, so no str dtype
        frame["note"] = pd.Series(pick([1, 2, None]), dtype=object)
    if n and draw(st.booleans()):  # a row without a judge: nobody's vote
        extra = frame.iloc[[0]].copy()
        extra["judge"] = None
        frame = pd.concat([frame, extra], ignore_index=True)
    return frame


@st.composite
def options(draw: st.DrawFn, frame: pd.DataFrame) -> dict[str, Any]:
    llm = [j for j in ag.judges(frame) if j != "human"]
    chosen = (draw(st.lists(st.sampled_from(llm), min_size=1, max_size=len(llm), unique=True))
              if llm and draw(st.booleans()) else None)
    n_voting = len(chosen) if chosen is not None else len(llm)
    min_votes = draw(st.none() | st.integers(1, max(n_voting, 1)))
    return {"judges": chosen, "min_votes": min_votes,
            "failed_as": draw(st.sampled_from(FAILED_AS))}


def outcome(fn: Any, frame: pd.DataFrame, kwargs: dict[str, Any]) -> pd.DataFrame | str:
    try:
        return fn(frame, **kwargs)
    except ValueError as error:
        return f"ValueError: {error}"


# --- The fast path gives the reference's frame ---------------------------------------------

@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_consensus_is_the_reference(data: st.DataObject) -> None:
    frame = data.draw(judged_frames())
    kwargs = data.draw(options(frame))
    expected = outcome(reference, frame, kwargs)
    got = outcome(ag.consensus, frame, kwargs)
    if isinstance(expected, str):
        assert got == expected
        return
    assert isinstance(got, pd.DataFrame)
    pd.testing.assert_frame_equal(got, expected, check_dtype=True, check_exact=True,
                                  check_categorical=True)
    for column in got:  # categories in the same order, None vs NaN in object columns
        assert got[column].dtype == expected[column].dtype
        if got[column].dtype == object:
            assert [type(v) for v in got[column]] == [type(v) for v in expected[column]]
    assert got.attrs == expected.attrs


def test_consensus_is_the_reference_on_a_big_sample() -> None:
    """The benchmark's frame (``big_judged_samples``: 3 detectors × 3 prompt types × 3
    judges), small enough for a test, under every option."""
    from kbench_core.samples import big_judged_samples

    frame = big_judged_samples(5_400, seed=3)
    for kwargs in ({}, {"failed_as": "not_found"}, {"min_votes": 1}, {"min_votes": 3},
                   {"judges": ag.judges(frame)[:2]}):
        expected = reference(frame, **kwargs)
        got = ag.consensus(frame, **kwargs)
        pd.testing.assert_frame_equal(got, expected, check_exact=True)
        assert got.attrs == expected.attrs


# --- The helpers against libraries and hand counts -----------------------------------------

@pytest.mark.parametrize("missing", [0.0, 0.3])  # 0: every judge gave a value
@pytest.mark.parametrize("n_judges", [0, 1, 2, 3, 4, 5])
def test_row_median_is_numpys_nanmedian(n_judges: int, missing: float) -> None:
    rng = np.random.default_rng(n_judges)
    values = rng.choice([0.0, 0.5, 1.0, 2.0, -3.0, 7.25, 1e300], size=(2000, n_judges))
    values[rng.random(values.shape) < missing] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # nanmedian: "All-NaN slice"
        expected = np.nanmedian(values, axis=1) if n_judges else np.full(2000, np.nan)
    np.testing.assert_array_equal(_row_median(values), expected)
    np.testing.assert_array_equal(_row_median(values), _ref_row_median(values))


@pytest.mark.parametrize("n_judges", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("min_votes", [1, 2, 3])
def test_votes_are_a_count_per_item(n_judges: int, min_votes: int) -> None:
    """Per item, ``Counter`` of the values given: the top value wins when it has
    ``min_votes`` votes and no other value as many."""
    rng = np.random.default_rng(10 * n_judges + min_votes)
    codes = rng.integers(-1, 3, size=(3000, n_judges))
    winner, voted = _votes(codes, min_votes)
    for row, win, any_vote in zip(codes, winner, voted, strict=True):
        counts = Counter(int(c) for c in row if c >= 0).most_common()
        assert any_vote == bool(counts)
        clear = bool(counts) and counts[0][1] >= min_votes and (
            len(counts) == 1 or counts[1][1] < counts[0][1])
        assert win == (counts[0][0] if clear else -1)
    np.testing.assert_array_equal(_vote_counts(codes), _ref_vote_counts(codes))


def test_layout_take_is_the_grid_of_the_rows() -> None:
    """``_Layout.take`` (one gather through ``slots``) gives the scatter of ``grid``, with
    and without failed judgements."""
    frame = pd.DataFrame({"sample": ["a", "a", "b", "c", "c", "b"], "model": "m",
                          "judge": ["x", "y", "y", "x", "y", "human"],
                          "score": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]})
    for human in (False, True):
        layout = _layout(frame, human=human)
        values = frame["score"].to_numpy()
        np.testing.assert_array_equal(layout.take(values, np.nan),
                                      layout.grid(values[layout.rows], np.nan))
    full = frame[frame["sample"] != "b"]
    layout = _layout(full, human=False)
    assert layout.slots.tolist() == [[0, 1], [2, 3]]
    np.testing.assert_array_equal(layout.take(full["score"].to_numpy(), np.nan),
                                  [[1.0, 2.0], [4.0, 5.0]])
