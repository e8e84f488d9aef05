"""Cohen's κ for every pair of LLM judges of a judged run, computed in the engine (issue 39).

The same numbers as :func:`kbench_core.agreement.pairwise_kappa` of
:func:`kbench_core.agreement.labels_as_judged` (the catalog's ``kappa_heatmap``), without
the run's rows in memory. The engine returns only the joint table of the judges' codes: one
row per distinct tuple of codes over the items × judges grid (an item = the item key's
columns, :data:`~kbench_core.agreement._labels.ITEM_KEY`; one code per LLM judge, -1 where
the judge has no row for the item or a missing label) and the number of items that have it;
at most :math:`(K+1)^J` rows for K categories and J judges, never one row per item. Each
pair's K × K table, and so κ, its asymptotic interval, ``n``, ``n_dropped`` and percent
agreement, is a weighted sum over those rows, finished in numpy by the memory code
(:func:`kbench_core.agreement.kappa._kappa_frame` with its ``count`` weights).

Formula and conventions as ``docs/metrics/agreement.md`` and
:func:`kbench_core.agreement.pairwise_kappa` state them: with :math:`p_{jk}` the share of
the items both judges labelled that judge a put in category j and judge b in k,
:math:`\\kappa = (p_o - p_e)/(1 - p_e)`, :math:`p_o = \\sum_j p_{jj}`,
:math:`p_e = \\sum_j p_{j\\cdot}p_{\\cdot j}`, and the large-sample variance of Fleiss,
Cohen & Everitt (1969). A failed judgement is left out (``failed_as="missing"``) or, on a
found label, counted as "not found" (``"not_found"``,
:func:`kbench_core.agreement.count_failed_as_not_found`: every LLM judge without a value
on an item some judge, ``human`` included, has a row for).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from kbench_core.agreement._labels import (
    HUMAN,
    ITEM_KEY,
    FailedAs,
    _Label,
    _Layout,
    _need_judges,
    failed_rule,
)
from kbench_core.agreement.kappa import _kappa_frame

__all__ = ["BOOLEAN_LABELS", "code_patterns", "pairwise_kappa"]

# The labels read here: yes/no, coded False = 0, True = 1 (agreement._labels._label).
BOOLEAN_LABELS: tuple[str, ...] = ("target_found", "said_vulnerable")
_CATEGORIES = (False, True)
_CODE = "__kbench_code_{}"
_ROWS = "__kbench_rows_{}"
_COUNT = "__kbench_items"


def _spec(table: Any, label: str) -> _Label:
    """The label as the memory code types it (a yes/no label: categories False, True)."""
    if label not in BOOLEAN_LABELS:
        raise ValueError(f"the engine's κ reads the yes/no labels "
                         f"{', '.join(BOOLEAN_LABELS)}; {label!r} is not one of them "
                         "(compute it in memory: agreement.pairwise_kappa)")
    if label not in table.columns:
        raise ValueError(f"there is no column {label!r} to compare judges on")
    if not table.schema()[label].is_boolean():
        raise ValueError(f"the column {label!r} is not stored as booleans "
                         f"({table.schema()[label]}): read the run in memory instead")
    return _Label(label, False, None, None, _CATEGORIES, True, True)


def _judges(rows: Any) -> list[str]:
    names = rows.select("judge").distinct().to_pyarrow().column(0).to_pylist()
    return sorted(str(n) for n in names if n is not None)


def code_patterns(table: Any, label: str = "target_found", *,
                  failed_as: FailedAs = "missing", normalised_rows: Any = None,
                  names: Sequence[str] | None = None,
                  ) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The joint table of the LLM judges' codes of ``label``, computed by the engine: the LLM
    judges (sorted by name, as memory orders them), the distinct code tuples (one row each,
    one column per judge: 0 = False, 1 = True, -1 = no judgement) and how many items have
    each. Two group-bys: the items (key columns) with one code per judge, then those codes
    with a count; only the second's few rows are fetched.

    The items are memory's: with ``failed_as="missing"`` (or a label without a "not found")
    the items some LLM judge has a row for (``_layout(judged, human=False)``); with
    ``"not_found"`` on a found label the items any judge, ``human`` included, has a row for,
    where an LLM judge's missing value counts as False (``count_failed_as_not_found``). A
    judge labelling an item twice raises as memory does. ``normalised_rows`` (``table`` as
    :func:`~kbench_core.engines.judged.normalised` reads it) and ``names`` (its judges, as
    :func:`~kbench_core.engines.judged.judge_names` gives them), when the caller has them,
    save the queries that make them."""
    from kbench_core.engines.judged import normalised

    spec = _spec(table, label)
    rule = failed_rule(label, failed_as)
    rows = normalised(table) if normalised_rows is None else normalised_rows
    key = [c for c in ITEM_KEY if c in rows.columns]
    rows = rows.select(*key, "judge", label).filter(rows["judge"].notnull())
    names = _judges(rows) if names is None else list(names)
    llm = [n for n in names if n != HUMAN]
    if rule == "missing":
        rows = rows.filter(rows["judge"] != HUMAN)
        counted = llm
    else:  # memory lays out the human's rows too: its items, and its repeated rows
        counted = llm + ([HUMAN] if HUMAN in names else [])
    fake = _Layout(judges=tuple(llm), rows=np.empty(0, np.int64), item=np.empty(0, np.int64),
                   judge=np.empty(0, np.int64), n_items=0, first=np.empty(0, np.int64),
                   source=pd.DataFrame(), keys=())
    _need_judges(fake, "pairwise_kappa")
    value = rows[label].cast("int64")
    measures: dict[str, Any] = {}
    for i, name in enumerate(llm):
        mine = rows["judge"] == name
        # the judge's code where it has a row with a value, else -1 (codes are >= 0)
        measures[_CODE.format(i)] = (mine & rows[label].notnull()).ifelse(value, -1).max()
    for i, name in enumerate(counted):
        measures[_ROWS.format(i)] = (rows["judge"] == name).cast("int64").sum()
    items = rows.group_by(key).aggregate(**measures) if key else rows.aggregate(**measures)
    codes = [items[_CODE.format(i)] for i in range(len(llm))]
    if rule == "not_found":
        no = _CATEGORIES.index(False)
        codes = [(c < 0).ifelse(no, c) for c in codes]
    repeated = items[_ROWS.format(0)] > 1
    for i in range(1, len(counted)):
        repeated = repeated | (items[_ROWS.format(i)] > 1)
    items = items.select(*(c.name(_CODE.format(i)) for i, c in enumerate(codes)),
                         __kbench_repeated=repeated)
    joint = (items.group_by([*(_CODE.format(i) for i in range(len(llm))),
                             "__kbench_repeated"])
             .aggregate(**{_COUNT: items.count()}).to_pyarrow().to_pandas())
    if joint["__kbench_repeated"].any():
        raise ValueError("a judge labels an item more than once: the key (sample, model, "
                         "prompt_type, judge) must be unique")
    grid = joint[[_CODE.format(i) for i in range(len(llm))]].to_numpy(np.int64)
    grid = grid.reshape(len(joint), len(llm))
    count = joint[_COUNT].to_numpy(np.int64)
    assert spec.categories == _CATEGORIES
    return llm, grid, count


def pairwise_kappa(table: Any, label: str = "target_found", *,
                   failed_as: FailedAs = "missing", normalised_rows: Any = None,
                   names: Sequence[str] | None = None) -> pd.DataFrame:
    """Cohen's κ for every pair of LLM judges of the judged run ``table`` (as
    :func:`kbench_core.engines.source.open_table` opens it), the same frame as
    ``agreement.pairwise_kappa(agreement.labels_as_judged(frame, label, failed_as)[0],
    label)`` of the run in memory: one row per pair in judge order, ``judge_a, judge_b,
    kappa, kappa_low, kappa_high`` (asymptotic 95% interval, widened to the Wilson-type one
    below 30 items or at no width), ``n`` (items both labelled), ``n_dropped`` (items one
    labelled), ``percent_agreement``.

    The engine computes only the joint table of the judges' codes (:func:`code_patterns`);
    κ is finished in numpy on those few rows weighted by their counts. Only the yes/no
    labels (:data:`BOOLEAN_LABELS`) are read; fewer than two LLM judges raise as memory
    does; ``normalised_rows`` and ``names`` as :func:`code_patterns` takes them. See
    ``docs/metrics/agreement.md``."""
    spec = _spec(table, label)
    names, grid, count = code_patterns(table, label, failed_as=failed_as,
                                       normalised_rows=normalised_rows, names=names)
    pairs = list(combinations(range(len(names)), 2))
    return _kappa_frame(grid, names, pairs, spec, None, "asymptotic", 1000, 0, count=count)
