"""Where and how far the judges differ: the items they disagree on, the confusion table of two
judges, and the spread of each judge's tiers metrics."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from kbench_core.agreement._labels import (
    CONSENSUS,
    HUMAN,
    MISSING,
    _code_grid,
    _Label,
    _label,
    _layout,
    _value_grid,
)
from kbench_core.agreement._labels import judges as judges_of
from kbench_core.agreement.consensus import (
    _row_median,
    _vote_counts,
    _votes,
    consensus,
    judge_rows,
)


def _decode(spec: _Label, column: np.ndarray) -> Any:
    """Grid column (codes or values) back to the label's own values."""
    if spec.numeric:
        return column
    if spec.boolean:
        return pd.array(np.where(column >= 0, column == 1, pd.NA), dtype="boolean")
    return pd.Categorical.from_codes(column, categories=list(spec.categories),
                                     ordered=spec.ordered)


def disagreements(judged: pd.DataFrame, label: str, *,
                  include_missing: bool = False) -> pd.DataFrame:
    """The items on which the LLM judges give different values, with every judge's value.

    Parameters
    ----------
    judged : DataFrame
        A validated ``judged`` frame.
    label : str
        Any judged column.
    include_missing : bool
        Also list items where some judges labelled and others failed (missing).

    Returns
    -------
    DataFrame
        The item key (``sample, model, prompt_type``), one column per LLM judge (named after
        it) with its value, ``human`` when the frame has expert labels, then ``n_judges``
        (judgements present), ``n_values`` (distinct values) and ``consensus`` (the strict
        majority value, or the median for numbers; missing without a majority).
    """
    spec = _label(judged, label)
    layout = _layout(judged, human=True)
    llm = [i for i, j in enumerate(layout.judges) if j != HUMAN]
    if spec.numeric:
        grid = _value_grid(layout, spec)
        sub = grid[:, llm]
        has = ~np.isnan(sub)
        sorted_values = np.sort(sub, axis=1)  # NaN last
        steps = (np.diff(sorted_values, axis=1) != 0) & ~np.isnan(sorted_values[:, 1:])
        n_values = has.any(axis=1).astype(int) + steps.sum(axis=1)
    else:
        grid = _code_grid(layout, spec)
        sub = grid[:, llm]
        has = sub >= 0
        # A value held by c judges appears c times with count c: distinct = sum of 1/c.
        votes = _vote_counts(sub)
        n_values = np.rint(np.where(has, 1.0 / np.maximum(votes, 1), 0.0).sum(axis=1))
        n_values = n_values.astype(np.int64)
    n_judges = has.sum(axis=1)
    keep = n_values >= 2
    if include_missing:
        keep |= (n_judges >= 1) & (n_judges < len(llm))
    rows = np.flatnonzero(keep)
    out = layout.items.iloc[rows].reset_index(drop=True)
    reserved = {*out.columns, "n_judges", "n_values", "consensus"}
    for i, name in enumerate(layout.judges):
        column = name if name not in reserved else f"judge {name}"
        out[column] = _decode(spec, grid[rows, i])
    out["n_judges"] = n_judges[rows]
    out["n_values"] = n_values[rows]
    if spec.numeric:
        out["consensus"] = _row_median(sub[rows])
    else:
        winner, _ = _votes(sub[rows], len(llm) // 2 + 1)
        out["consensus"] = _decode(spec, winner)
    return out


def confusion(judged: pd.DataFrame, label: str, judge_a: str, judge_b: str, *,
              include_missing: bool = True) -> pd.DataFrame:
    """Cross-tabulation of two judges' values of a label on the items either labelled.

    Returns a long frame ``value_a, value_b, count`` over every pair of the label's categories
    (in their order; numbers by distinct value), with ``"(missing)"`` for a failed judgement
    when ``include_missing``. ``human`` may be one of the two judges.
    """
    names = judges_of(judged)
    for name in (judge_a, judge_b):
        if name not in names:
            raise ValueError(f"judge {name!r} is not in the frame; judges: {', '.join(names)}")
    spec = _label(judged, label)
    layout = _layout(judged, human=True)
    a, b = layout.judges.index(judge_a), layout.judges.index(judge_b)
    if spec.numeric:
        values = _value_grid(layout, spec)[:, [a, b]]
        domain = np.unique(values[~np.isnan(values)])
        codes = np.where(np.isnan(values), -1,
                         np.searchsorted(domain, np.nan_to_num(values))).astype(np.int64)
        categories: list[Any] = [f"{v:g}" for v in domain]
    else:
        codes = _code_grid(layout, spec)[:, [a, b]]
        categories = [str(c) if not spec.boolean else ("yes" if c else "no")
                      for c in spec.categories]
    k = len(categories)
    shown = (codes >= 0).any(axis=1) if include_missing else (codes >= 0).all(axis=1)
    shifted = np.where(codes[shown] >= 0, codes[shown], k)  # missing last
    width = k + 1
    counts = np.bincount(shifted[:, 0] * width + shifted[:, 1], minlength=width * width)
    names_all = [*categories, MISSING]
    grid_a, grid_b = np.divmod(np.arange(width * width), width)
    out = pd.DataFrame({"value_a": np.array(names_all, dtype=object)[grid_a],
                        "value_b": np.array(names_all, dtype=object)[grid_b],
                        "count": counts})
    if not include_missing:
        out = out[(grid_a < k) & (grid_b < k)].reset_index(drop=True)
    order = names_all if include_missing else categories
    for column in ("value_a", "value_b"):
        out[column] = pd.Categorical(out[column], categories=order, ordered=True)
    return out


def judge_spread(judged: pd.DataFrame, *, include_consensus: bool = True,
                 judges: Sequence[str] | None = None, min_votes: int | None = None,
                 failed_as: str = "missing", **tier_options: Any) -> pd.DataFrame:
    """``vuln.tiers`` computed once per judge, stacked: how much a headline number depends on
    who judged.

    Every judge (LLM judges by name, then ``human``, then the consensus ``majority`` when
    ``include_consensus``, made by ``judges`` with ``min_votes`` and ``failed_as`` as in
    :func:`~kbench_core.agreement.consensus`) gets the same ``tier_options`` (``by``,
    ``sui_weights``, ``partial_credit``, ...). Returns the tiers' columns with ``judge`` an
    ordered categorical in that order, so ``spread.pivot(index="model", columns="judge",
    values="tdr")`` puts the judges side by side.
    """
    from kbench_core import vuln

    if "judge" in tier_options:
        raise ValueError("judge_spread computes every judge; do not pass judge=")
    names = judges_of(judged)
    if not names:
        raise ValueError("judge_spread needs a judge column with at least one judge")
    # each judge's failed judgements counted as the majority's are (failed_as)
    parts = [(name, vuln.tiers(judge_rows(judged, name, failed_as=failed_as),  # type: ignore[arg-type]
                               judge=name, **tier_options))
             for name in names]
    if include_consensus and any(n != HUMAN for n in names):
        voted = consensus(judged, judges=judges, min_votes=min_votes,
                          failed_as=failed_as)  # type: ignore[arg-type]
        parts.append((CONSENSUS, vuln.tiers(voted, **tier_options)))
    return stacked_spread(parts)


def stacked_spread(parts: Sequence[tuple[str, pd.DataFrame]]) -> pd.DataFrame:
    """Tier tables of several judges, ``(judge, table)`` in order, stacked as
    :func:`judge_spread` gives them (``judge`` an ordered categorical in that order): the
    finish of a spread whose tiers an engine computed from its cells."""
    spread = pd.concat([table for _, table in parts], ignore_index=True)
    spread["judge"] = pd.Categorical(spread["judge"].astype(str),
                                     categories=[name for name, _ in parts], ordered=True)
    return spread


def spread_summary(spread: pd.DataFrame, metrics: Sequence[str] = ("tdr", "sui"), *,
                   by: Sequence[str] = ("model",)) -> pd.DataFrame:
    """Per group and metric, the spread of a :func:`judge_spread` table across the LLM judges
    (``human`` and ``consensus`` left out): ``metric, low, high, range, sd`` (population) and
    the judges giving the lowest and highest value (``judge_low``, ``judge_high``),
    ``n_judges``."""
    by = [by] if isinstance(by, str) else list(by)
    missing = [c for c in (*by, "judge", *metrics) if c not in spread]
    if missing:
        raise ValueError(f"spread_summary needs the column(s) {', '.join(missing)}")
    llm = spread[~spread["judge"].astype(str).isin((HUMAN, CONSENSUS))]
    long = llm.melt(id_vars=[*by, "judge"], value_vars=list(metrics), var_name="metric")
    long["judge"] = long["judge"].astype(str)
    long = long.dropna(subset=["value"])
    groups = long.groupby([*by, "metric"], observed=True, sort=False)
    out = groups["value"].agg(low="min", high="max", n_judges="count").reset_index()
    out["sd"] = groups["value"].std(ddof=0).to_numpy()
    lowest = long.loc[groups["value"].idxmin().to_numpy(), [*by, "metric", "judge"]]
    highest = long.loc[groups["value"].idxmax().to_numpy(), [*by, "metric", "judge"]]
    out = out.merge(lowest.rename(columns={"judge": "judge_low"}), on=[*by, "metric"])
    out = out.merge(highest.rename(columns={"judge": "judge_high"}), on=[*by, "metric"])
    out["range"] = out["high"] - out["low"]
    return out[[*by, "metric", "low", "high", "range", "sd", "judge_low", "judge_high",
                "n_judges"]]
