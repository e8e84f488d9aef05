"""Ranks as every leaderboard shows them: the rank by the point value, its interval beside it
(simultaneous, from every pair's paired test, :func:`kbench_core.compare.rank_intervals`; or
the bootstrap of a leaderboard's own statistic, :func:`rank_by`), and a mark when it rests on
few items.

One place, so the dashboard, ``kbench metrics`` and the report write ``2 [1, 4] · few
studies`` the same way (``docs/statistics.md``, "Rank intervals").
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["RANK_COLUMNS", "model_ranks", "rank_by", "rank_interval_text", "rank_text"]


def _number(value: float) -> str:
    # Bootstrap percentiles of ranks fall between ranks (2.975): one decimal is all they say.
    return f"{round(value, 1):g}"


def rank_text(rank: Sequence[float] | pd.Series, low: Sequence[float] | pd.Series | None = None,
              high: Sequence[float] | pd.Series | None = None, *,
              few: Sequence[bool] | pd.Series | None = None, few_label: str = "few items",
              unranked: Sequence[bool] | pd.Series | None = None,
              unranked_label: str = "") -> list[str]:
    """``rank [low, high]`` per row (``2 [1, 4]``), `` · few_label`` where ``few`` is true,
    ``unranked_label`` where ``unranked`` is true, and an empty text for a missing rank.

    Examples
    --------
    >>> rank_text([1.0, 2.5, float("nan")], [1, 1, 1], [2, 4, 3], few=[False, True, False])
    ['1 [1, 2]', '2.5 [1, 4] · few items', '']
    """
    n = len(rank)
    lows = [np.nan] * n if low is None else list(low)
    highs = [np.nan] * n if high is None else list(high)
    fews = [False] * n if few is None else [bool(f) for f in few]
    nones = [False] * n if unranked is None else [bool(u) for u in unranked]
    out = []
    for r, lo, hi, is_few, none in zip(rank, lows, highs, fews, nones, strict=True):
        if none:
            out.append(unranked_label)
        elif pd.isna(r):
            out.append("")
        else:
            text = _number(float(r))
            if pd.notna(lo) and pd.notna(hi):
                text += f" [{_number(float(lo))}, {_number(float(hi))}]"
            out.append(text + (f" · {few_label}" if is_few else ""))
    return out


def rank_interval_text(low: Sequence[float] | pd.Series,
                       high: Sequence[float] | pd.Series) -> list[str]:
    """``[low, high]`` per row, for a table that shows the rank in a column of its own; empty
    where the interval is undefined.

    >>> rank_interval_text([1.0, 2.0, float("nan")], [2.0, 3.975, 1.0])
    ['[1, 2]', '[2, 4]', '']
    """
    return [f"[{_number(float(lo))}, {_number(float(hi))}]"
            if pd.notna(lo) and pd.notna(hi) else ""
            for lo, hi in zip(low, high, strict=True)]


def rank_by(table: pd.DataFrame, metric: str, *, lower_is_better: bool = False,
            few_label: str = "few items") -> pd.DataFrame:
    """``table`` sorted by ``metric`` (best first, undefined last) with ``rank`` (1 = best,
    ties share the smallest rank; undefined: no rank) and ``rank_text``, which shows the
    interval of columns ``<metric>_rank_low`` / ``<metric>_rank_high`` when the table has
    them and marks rows whose ``few_items`` is true."""
    out = table.sort_values(metric, ascending=lower_is_better, na_position="last",
                            kind="stable").reset_index(drop=True)
    rank = out[metric].rank(ascending=lower_is_better, method="min")
    out.insert(0, "rank", rank.astype("Int64"))
    low = out.get(f"{metric}_rank_low")
    high = out.get(f"{metric}_rank_high")
    out.insert(1, "rank_text", rank_text(rank, low, high, few=out.get("few_items"),
                                         few_label=few_label))
    return out


# The columns :func:`model_ranks` gives, one convention for every leaderboard that ranks
# models by a per-item mean with its simultaneous interval.
RANK_COLUMNS = ("model", "rank", "rank_low", "rank_high", "ranked_value", "n_ranked",
                "n_dropped", "few_items")


def model_ranks(frame: pd.DataFrame, value: str, *, item: Sequence[str] | str,
                models: Sequence[str] | pd.Series | None = None,
                lower_is_better: bool | None = None, cluster: str | None = None,
                n_boot: int = 1000, random_state: int = 0, name: str = "rank") -> pd.DataFrame:
    """Every model's rank with its simultaneous interval, one row per model of ``models``
    (default: the models of ``frame``, as text), in that order, columns
    :data:`RANK_COLUMNS`: ``rank`` (1 = best, ties share the mean rank), ``rank_low`` /
    ``rank_high`` (the interval from every pair's Holm-adjusted paired test, all models'
    intervals holding together; ``name`` renames the three ``<name>``, ``<name>_low``,
    ``<name>_high``: the shared helpers' one convention), ``ranked_value`` (the model's
    mean ``value`` over the items every model has: what the rank orders), ``n_ranked``
    (those items), ``n_dropped`` (items the model lacks) and ``few_items``
    (:func:`kbench_core.compare.rank_intervals`, which computes them; Al Mohamad, Goeman &
    van Zwet 2022).

    Nothing is ranked (rank and interval NaN, ``n_ranked`` 0) when ``frame`` has fewer than two
    models or no item every model has; a model of ``models`` that ``frame`` lacks gets NaN.
    The glue each leaderboard used to write (bias susceptibility, the fingerprint reports'
    leaderboard, the replication summary), once.
    """
    from kbench_core.compare import rank_intervals

    frame = frame.assign(model=frame["model"].astype(str))
    names = (pd.unique(frame["model"]) if models is None
             else pd.Series(models, dtype=object).astype(str).to_numpy())
    out = pd.DataFrame({"model": names})
    ranks = None
    if frame["model"].nunique() >= 2:
        try:
            ranks = rank_intervals(frame, value, item=item, lower_is_better=lower_is_better,
                                   cluster=cluster, n_boot=n_boot, random_state=random_state)
        except ValueError:  # no item every model has
            ranks = None
    if ranks is None:
        for column in ("rank", "rank_low", "rank_high", "ranked_value"):
            out[column] = np.nan
        out["n_ranked"] = 0
        out["n_dropped"] = 0
        out["few_items"] = False
        return _named(out, name)
    lookup = ranks.set_index("model").rename(columns={"value": "ranked_value", "n": "n_ranked"})
    out = out.merge(lookup[["rank", "rank_low", "rank_high", "ranked_value", "n_ranked",
                            "n_dropped", "few_items"]].reset_index(), on="model", how="left")
    for column in ("rank", "rank_low", "rank_high", "ranked_value"):
        out[column] = out[column].astype(float)
    out["n_ranked"] = out["n_ranked"].fillna(0).astype(int)
    out["n_dropped"] = out["n_dropped"].fillna(0).astype(int)
    out["few_items"] = out["few_items"].fillna(False).astype(bool)
    return _named(out, name)


def _named(table: pd.DataFrame, name: str) -> pd.DataFrame:
    """``rank``, ``rank_low``, ``rank_high`` of ``table`` as ``<name>``, ``<name>_low``,
    ``<name>_high``."""
    if name == "rank":
        return table
    return table.rename(columns={"rank": name, "rank_low": f"{name}_low",
                                 "rank_high": f"{name}_high"})
