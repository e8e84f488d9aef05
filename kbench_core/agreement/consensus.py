"""The consensus judge: a majority vote (median for scores) over the LLM judges, one row per
item, to feed :func:`kbench_core.vuln.tiers` like any single judge."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from kbench_core.agreement._labels import (
    CONSENSUS,
    FAILED_AS,
    FOUND_LABELS,
    HUMAN,
    ORDERED_LABELS,
    REASONING,
    REPORTED,
    TRUTH_COLUMNS,
    FailedAs,
    _code_grid,
    _Label,
    _label,
    _Layout,
    _layout,
    _value_grid,
    check_min_votes,
    voters,
)
from kbench_core.select import labels_in
from kbench_core.stats import check_choice

# The labels a failed judgement leaves missing, and the column saying why (docs/formats.md).
FAILED_LABELS: tuple[str, ...] = ("said_vulnerable", "target_found")
FAILED_REASON = "failed_judgement"
_BATCH_ROWS = 1 << 15  # items x numeric labels up to which their medians share one sort


def _columns(grid: np.ndarray) -> list[np.ndarray]:
    """The judges' columns of an items × judges grid. The grids have a handful of judges and
    hundreds of thousands of items: a reduction along such short rows costs several times
    the same work done column by column."""
    return [grid[:, j] for j in range(grid.shape[1])]


def _judge_votes(judge: list[np.ndarray]) -> list[np.ndarray]:
    """Per judge (its column of codes), how many judges of each item gave its value (0 when
    it gave none), counted one pair of judges at a time: O(items · judges²) whatever the
    number of categories, so free-text labels such as ``claimed_lines`` cost no more than
    yes/no, and with no items × judges × judges array."""
    given = [c >= 0 for c in judge]
    votes = [g.astype(np.int64) for g in given]
    for a in range(len(judge)):
        for b in range(a + 1, len(judge)):
            same = (judge[a] == judge[b]) & given[a]
            votes[a] += same
            votes[b] += same
    return votes


def _vote_counts(codes: np.ndarray) -> np.ndarray:
    """Per item and judge: how many judges of the item gave this judge's value (0 when the
    judge gave none)."""
    votes = _judge_votes(_columns(codes))
    return np.stack(votes, axis=1) if votes else np.zeros(codes.shape, dtype=np.int64)


def _votes(codes: np.ndarray, min_votes: int) -> tuple[np.ndarray, np.ndarray]:
    """Winning code per item (-1 when none) and whether any judge gave a value.

    A value wins with at least ``min_votes`` votes when no other value has as many: the
    judges holding the top count are exactly that many (one value), not a multiple (a tie).
    """
    n = codes.shape[0]
    if codes.shape[1] == 0:
        return np.full(n, -1, dtype=np.int64), np.zeros(n, dtype=bool)
    judge = _columns(codes)
    votes = _judge_votes(judge)
    best, top = votes[0], judge[0]
    for count, code in zip(votes[1:], judge[1:], strict=True):
        ahead = count > best  # strictly: the first judge holding the top count names it
        best, top = np.where(ahead, count, best), np.where(ahead, code, top)
    holders = sum(count == best for count in votes)
    winner = np.where((best >= min_votes) & (holders == best) & (best > 0), top, -1)
    return winner, functools.reduce(np.logical_or, [c >= 0 for c in judge])


def _row_median(values: np.ndarray) -> np.ndarray:
    """Median of each row over its non-missing values (NaN when none). ``np.nanmedian`` goes
    through masked arrays and warns once per empty row; with a handful of judges a sort
    along the row is all it takes, and with up to three (the common case) no sort at all:
    the median of two is the mean of their min and max, the median of three
    ``max(min(a, b), min(max(a, b), c))``, the same numbers the sort picks."""
    if values.shape[1] == 0:
        return np.full(values.shape[0], np.nan)
    if values.shape[1] <= 3:
        judge = _columns(values)
        if len(judge) == 3:
            a, b, c = judge
            middle = np.maximum(np.minimum(a, b), np.minimum(np.maximum(a, b), c))
            if not np.isnan(values).any():  # every judge gave a value (most labels)
                return middle
        present = sum(~np.isnan(v) for v in judge)
        # fmin / fmax skip NaN: the lowest and highest value given (NaN when none).
        low, high = functools.reduce(np.fmin, judge), functools.reduce(np.fmax, judge)
        median = np.where(present == 2, (low + high) / 2, low)  # one value: itself
        return np.where(present == 3, middle, median) if len(judge) == 3 else median
    ordered = np.sort(values, axis=1)  # NaN last
    m = (~np.isnan(values)).sum(axis=1)
    rows = np.arange(values.shape[0])
    low = ordered[rows, np.maximum((m - 1) // 2, 0)]
    high = ordered[rows, np.minimum(m // 2, values.shape[1] - 1)]
    return np.where(m > 0, np.where(m % 2 == 1, low, (low + high) / 2), np.nan)


def _runs_of(judged: pd.DataFrame) -> list[str]:
    """The runs of a frame of several runs viewed together (its ``run`` column), in order of
    first appearance; empty without the column."""
    if "run" not in judged:
        return []
    values = judged["run"]
    if isinstance(values.dtype, pd.CategoricalDtype):
        present = np.bincount(values.cat.codes.to_numpy()[values.cat.codes.to_numpy() >= 0],
                              minlength=len(values.cat.categories)) > 0
        return [str(c) for c, p in zip(values.cat.categories, present, strict=True) if p]
    return [str(v) for v in pd.unique(values.dropna())]


def _per_run(judged: pd.DataFrame, runs: Sequence[str], *, judges: Sequence[str] | None,
             min_votes: int | None, failed_as: FailedAs) -> pd.DataFrame:
    """:func:`consensus` of each run of ``judged`` on its own, stacked: each run's voters
    are its own judges (of ``judges``, those it has) and its default ``min_votes`` a strict
    majority of them. ``attrs["runs"]`` records, per run, its voters and votes needed."""
    if judges is not None:
        voters(judged, judges)  # an unknown name is an error naming every run's judges
    parts, named = [], []
    for run in runs:
        rows = judged[labels_in(judged["run"], [run])]
        llm = voters(rows, None)
        if not llm:
            continue  # expert labels only: nothing to vote on in this run
        mine = None if judges is None else [j for j in judges if j in llm]
        if mine is not None and not mine:
            raise ValueError(f"run {run!r} has none of the judges {', '.join(judges or [])}; "
                             f"its judges: {', '.join(llm) or 'none'}")
        try:
            parts.append(consensus(rows, judges=mine, min_votes=min_votes,
                                   failed_as=failed_as))
        except ValueError as err:
            raise ValueError(f"run {run!r}: {err}") from None
        named.append(run)
    if not parts:
        raise ValueError("consensus needs at least one judge other than 'human'")
    frame = pd.concat(parts, ignore_index=True)
    for column in frame.columns:
        dtypes = [p[column].dtype for p in parts]
        if isinstance(frame[column].dtype, pd.CategoricalDtype):
            continue
        if all(isinstance(d, pd.CategoricalDtype) for d in dtypes):
            # each run voted among its own values: one set of categories again
            merged = pd.api.types.union_categoricals([p[column].array for p in parts],
                                                     ignore_order=True)
            frame[column] = merged.as_ordered() if dtypes[0].ordered else merged
        elif all(pd.api.types.is_bool_dtype(d) for d in dtypes) \
                and not pd.api.types.is_bool_dtype(frame[column].dtype):
            frame[column] = frame[column].astype("boolean")
    frame.attrs["runs"] = {run: {"judges": p.attrs["judges"],
                                 "min_votes": p.attrs["min_votes"]}
                           for run, p in zip(named, parts, strict=True)}
    frame.attrs["no_majority"] = {
        c: sum(p.attrs["no_majority"].get(c, 0) for p in parts)
        for c in dict.fromkeys(c for p in parts for c in p.attrs["no_majority"])}
    # the voters of every run; min_votes is each run's own (attrs["runs"])
    frame.attrs["judges"] = sorted({j for p in parts for j in p.attrs["judges"]})
    frame.attrs["min_votes"] = parts[0].attrs["min_votes"]
    frame.attrs["failed_as"] = failed_as
    return frame


def _first_present(frame: pd.DataFrame, layout: _Layout, column: str) -> pd.Series:
    """Per item, the first judge's non-missing value (ground truth is the same for all).

    Taken by position: per item the first of its rows (in frame order) with a value, the
    lowest position on its row of :attr:`_Layout.slots`. An item without any value takes the
    missing value of its first row, the dtype's own NA, as ``groupby().first()`` gives; in a
    plain object column that groupby gives ``None``, whichever missing value the rows hold."""
    values = frame[column]
    array = values.array
    if isinstance(values.dtype, np.dtype) and values.dtype.kind in "biu":
        return pd.Series(array.take(layout.first))  # numpy bools and integers hold no NA
    known = array.codes >= 0 if isinstance(array, pd.Categorical) else values.notna().to_numpy()
    if known.all():  # the first row of each item has a value
        return pd.Series(array.take(layout.first))
    none = len(frame)
    candidates = [np.where((s >= 0) & known[s], s, none) for s in _columns(layout.slots)]
    pick = functools.reduce(np.minimum, candidates, np.full(layout.n_items, none))
    empty = pick == none
    rows = np.where(empty, layout.first, pick)
    if empty.any() and values.dtype == object:
        taken = values.to_numpy()[rows]
        taken[empty] = None
        return pd.Series(taken, dtype=object)
    return pd.Series(array.take(rows))


def _typed_take(values: np.ndarray, index: np.ndarray) -> Any:
    """``values[index]`` (``values`` an object array, ``index`` >= 0) with the dtype the
    DataFrame constructor would infer from it (``str`` for text), inferred from the few
    values used rather than from every item: pandas' string inference and conversion of a
    few hundred thousand objects cost more than the whole vote. An inference to a plain
    object array leaves the full array to the constructor, as before."""
    used = np.flatnonzero(np.bincount(index, minlength=len(values)))
    typed = pd.Series(values[used]).array
    if isinstance(typed, pd.arrays.NumpyExtensionArray):
        return values[index]
    position = np.zeros(len(values), dtype=np.int64)
    position[used] = np.arange(used.size)
    return typed.take(position[index])


def consensus(judged: pd.DataFrame, *, judges: Sequence[str] | None = None,
              min_votes: int | None = None, failed_as: FailedAs = "missing") -> pd.DataFrame:
    r"""One judge made of the LLM judges' votes: a single-judge frame that ``vuln.tiers``
    accepts (``judge`` = ``"majority"``), one row per item.

    Parameters
    ----------
    judged : DataFrame
        A validated ``judged`` frame; ``human`` rows are left out. Several runs viewed
        together (a ``run`` column, :func:`kbench_core.io.combine_runs`) vote run by run:
        each run's majority is made of its own judges with its own default ``min_votes``,
        so a run's consensus never changes because another run is beside it.
    judges : sequence of str, optional
        The judges that vote (e.g. the three a paper published); default every judge other
        than ``human``. An unknown name, ``human`` or a repeated name is an error naming the
        run's judges.
    min_votes : int, optional
        Votes a value needs, from 1 to the J judges that vote; default a strict majority of
        them, ⌊J/2⌋ + 1 (2 of 3, 3 of 4 or 5).
    failed_as : {"missing", "not_found"}
        A failed judgement (a voter without a row for the item, or without a value) is missing
        by default: it votes for nothing. ``"not_found"`` counts it as a "no" on the found
        labels (``target_found``, ``partial_found``), BlockBench's own convention; the other
        labels keep it missing.

    Returns
    -------
    DataFrame
        The frame's columns, one row per item (sample, model, prompt type) that at least one
        voter labelled, plus ``n_judges`` (judgements present) and ``no_majority`` (the labels
        of ``said_vulnerable, target_found, partial_found, type_match`` that found no majority,
        comma-separated; empty when all did). ``attrs`` records the choice:
        ``no_majority`` (items per label), ``min_votes``, ``judges`` (the voters) and
        ``failed_as``.

    Notes
    -----
    ``docs/metrics/agreement.md``, rule by rule:

    * A **yes/no** label is yes when at least ``min_votes`` judges say yes (and more say yes
      than no), no when at least ``min_votes`` say no; otherwise (yes, no, failed) it has no
      majority, is reported, and is **not credited**: ``target_found`` (and
      ``partial_found``) become false — a target without a yes majority is not found, as in
      the published numbers — and ``said_vulnerable`` becomes the wrong verdict
      (¬``is_vulnerable``), so an undecided answer earns neither a true positive nor a true
      negative. Another yes/no column without a majority is missing.
    * Another **categorical** label (``type_match``, ``claimed_lines``, text) takes the value
      at least ``min_votes`` judges give, if no other value has as many votes; else missing.
    * A **numeric** label takes the median of the judges' values; ``rcir``, ``ava`` and
      ``fsv`` only of the judges that found the target. Finding counts are medians too, so
      they can be halves with an even number of judgements.
    * Ground truth (``is_vulnerable``, ``severity``, ``vuln_type``, ``true_lines``) is
      copied from the first judge that has it.

    Examples
    --------
    Three judges on one vulnerable answer: one finds the target, one does not, the third
    failed (no value).

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"sample": "s1", "model": "m", "prompt_type": "direct",
    ...                       "judge": ["a", "b", "c"], "is_vulnerable": True,
    ...                       "said_vulnerable": True, "target_found": [True, False, None]})
    >>> voted = consensus(frame)                       # 1 yes, 1 no, 1 missing: 2 of 3 needed
    >>> bool(voted["target_found"].iloc[0]), voted["no_majority"].iloc[0]
    (False, 'target_found')
    >>> voted = consensus(frame, failed_as="not_found")   # 1 yes, 2 no
    >>> bool(voted["target_found"].iloc[0]), voted["no_majority"].iloc[0]
    (False, '')
    >>> bool(consensus(frame, judges=["a", "c"], min_votes=1)["target_found"].iloc[0])
    True
    """
    check_choice("failed_as", failed_as, FAILED_AS)
    runs = _runs_of(judged)
    if len(runs) > 1:
        return _per_run(judged, runs, judges=judges, min_votes=min_votes, failed_as=failed_as)
    chosen = voters(judged, judges)
    if not chosen:
        raise ValueError("consensus needs at least one judge other than 'human'")
    if judges is not None:
        # Only the voters' rows: an item none of them labelled is not an item of theirs.
        judged = judged[labels_in(judged["judge"], chosen)]
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
        found_grid = layout.take(found.codes, -1)
    truth = {c: _first_present(judged, layout, c) for c in TRUTH_COLUMNS if c in judged}
    # A judgement is present when its verdict and found labels are (a failed judgement's
    # row leaves them missing, docs/formats.md): per item, how many voters judged it.
    judged_rows = np.ones(len(judged), dtype=bool)
    for column in FAILED_LABELS:
        if column in judged:
            judged_rows &= judged[column].notna().to_numpy(dtype=bool)
    n_present = layout.take(judged_rows, False).sum(axis=1) if layout.n_items else \
        np.zeros(0, dtype=np.int64)
    nobody = n_present == 0  # every voter's judgement of the item failed
    undecided: dict[str, np.ndarray] = {}
    numeric: dict[str, np.ndarray] = {}
    for column in judged.columns:
        if column in keys:
            continue
        if column == FAILED_REASON:
            # Not voted on: the item's judgement failed when every voter's did.
            out[column] = _typed_take(np.array([None, "every judge's judgement failed"],
                                               dtype=object), nobody.astype(np.int64))
        elif column == "judge":
            out[column] = _typed_take(np.array([CONSENSUS], dtype=object),
                                      np.zeros(layout.n_items, dtype=np.int64))
        elif column in truth:
            out[column] = truth[column]
        else:
            spec = found if column == "target_found" and found is not None else _label(
                judged, column)
            if spec.numeric:
                values = _value_grid(layout, spec)
                if column in REASONING and found_grid is not None:
                    values = np.where(found_grid == 1, values, np.nan)
                numeric[column] = values
                continue
            codes = _code_grid(layout, spec)
            if not_found and column in FOUND_LABELS and spec.boolean:
                codes = np.where(codes < 0, spec.categories.index(False), codes)
            winner, voted = _votes(codes, int(min_votes))
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
                    # -1 (no winner) takes the None after the categories.
                    out[column] = _typed_take(np.array([*categories, None], dtype=object),
                                              np.where(winner < 0, len(categories), winner))
    if numeric and layout.n_items * len(numeric) <= _BATCH_ROWS:
        # Every numeric label's medians in one sort: the same per-row operations on the
        # rows of all labels at once, instead of a dozen calls on a few hundred rows each
        # (past a few thousand rows the copy into one array costs more than the calls).
        stacked = np.stack(list(numeric.values()), axis=1)  # items x labels x judges
        medians = _row_median(stacked.reshape(-1, stacked.shape[2])).reshape(
            stacked.shape[:2])
        for i, column in enumerate(numeric):
            out[column] = medians[:, i]
    else:
        for column, values in numeric.items():
            out[column] = _row_median(values)
    if not not_found and nobody.any():
        # No judgement of the item at all: missing (tiers leave it out and count it in
        # n_missing), not an undecided vote. With failed_as="not_found" it is not found, as
        # the vote above made it (every voter a "no"), its verdict not credited.
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
    out["no_majority"] = _typed_take(text, mask)
    # Built once, in the final column order (adding columns one by one copied the frame).
    frame = pd.DataFrame({c: out[c] for c in [*(c for c in judged.columns if c in out),
                                              "n_judges", "no_majority"]})
    frame.attrs["no_majority"] = {c: int(v.sum()) for c, v in undecided.items()}
    frame.attrs["min_votes"] = int(min_votes)
    frame.attrs["judges"] = list(layout.judges)
    frame.attrs["failed_as"] = failed_as
    return frame


# Columns a judge fills in: blank in the row of a judge that has none for an item (what is
# left is the item's key, ground truth and the run's own columns, the same for every judge).
_ITEM_COLUMNS = (*TRUTH_COLUMNS, "difficulty", "run", "judge")


def judge_rows(judged: pd.DataFrame, judge: str, *,
               failed_as: FailedAs = "missing") -> pd.DataFrame:
    """One judge's answers, its failed judgements counted as ``failed_as`` says: the rows
    ``vuln.tiers`` computes that judge's numbers from, for any judge as the majority's are
    (:func:`consensus`).

    Parameters
    ----------
    judged : DataFrame
        A validated ``judged`` frame (one run, or several with a ``run`` column).
    judge : str
        A judge of the frame.
    failed_as : {"missing", "not_found"}
        ``"missing"`` (default): the judge's rows as they are; a failed judgement's row has
        its labels missing, so ``tiers`` leaves it out and counts it in ``n_missing``.
        ``"not_found"`` (BlockBench's convention; LLM judges only, ``human`` labels are
        never filled): the judge answers every item an LLM judge of its run has (a missing
        row is a failed judgement too, as :func:`count_failed_as_not_found` counts it), and a
        failed judgement is "not found": ``target_found`` (and ``partial_found``) false, and
        its verdict, which no judge read, is not credited: ``said_vulnerable`` is the wrong
        one, ¬``is_vulnerable``, as the majority counts an undecided verdict. Scores, type
        match and findings stay missing.

    Examples
    --------
    Judge ``b`` failed on s1 and has no row for s2; ``a`` found both targets.

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"sample": ["s1", "s2", "s1"], "model": "m",
    ...                       "judge": ["a", "a", "b"], "is_vulnerable": True,
    ...                       "said_vulnerable": [True, True, None],
    ...                       "target_found": [True, True, None]})
    >>> len(judge_rows(frame, "b"))                       # one row, its labels missing
    1
    >>> rows = judge_rows(frame, "b", failed_as="not_found")
    >>> rows["target_found"].tolist(), rows["said_vulnerable"].tolist()
    ([False, False], [False, False])
    """
    check_choice("failed_as", failed_as, FAILED_AS)
    mine = labels_in(judged["judge"], [judge])
    rows = judged[mine]
    if failed_as == "missing" or judge == HUMAN or "target_found" not in judged:
        return rows
    scope = judged
    if "run" in judged:
        # Only the runs this judge judged: another run's items are not its failures.
        scope = judged[labels_in(judged["run"], sorted(map(str, rows["run"].unique())))]
    layout = _layout(scope, human=False)
    if judge not in layout.judges:
        return rows
    absent = np.flatnonzero(layout.slots[:, layout.judges.index(judge)] < 0)
    parts = [rows]
    if absent.size:
        extra = scope.iloc[layout.first[absent]].copy()
        for column in extra.columns:
            if column in layout.keys or column in _ITEM_COLUMNS:
                continue
            # every other column is the other judge's: blank (the dtype's own missing value)
            extra[column] = extra[column].where(np.zeros(len(extra), dtype=bool))
        if isinstance(judged["judge"].dtype, pd.CategoricalDtype):
            extra["judge"] = pd.Categorical([judge] * len(extra),
                                            categories=judged["judge"].cat.categories)
        else:
            extra["judge"] = judge
        if FAILED_REASON in judged:
            extra[FAILED_REASON] = "no record of this judge"
        parts.append(extra)
    out = pd.concat(parts) if len(parts) > 1 else rows.copy()
    truth = out["is_vulnerable"].astype("boolean")
    failed = out["target_found"].isna().to_numpy(dtype=bool)
    if "said_vulnerable" in out:
        failed = failed | out["said_vulnerable"].isna().to_numpy(dtype=bool)
    if not failed.any():
        return out
    for column in FOUND_LABELS:
        if column in out:
            out[column] = pd.array(np.where(failed, False, out[column].astype(object)),
                                   dtype="boolean")
    if "said_vulnerable" in out:
        wrong = ~truth.fillna(False).to_numpy(dtype=bool)
        said = out["said_vulnerable"].astype(object).to_numpy()
        out["said_vulnerable"] = pd.array(np.where(failed, wrong, said), dtype="boolean")
    return out
