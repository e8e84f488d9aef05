"""The judged family's rows in the cross-benchmark profile (``kbench profile``, the Models
page; :mod:`kbench_core.profile`): TDR and SUI of the tier leaderboard of one judge's verdicts,
each with its interval and rank interval. :mod:`kbench_core.families.judged` picks the judge
(the majority of several judges, else the one judge) and its options."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["profile_rows", "profile_rows_from_sums"]


def _flags(series: pd.Series) -> np.ndarray:
    """A bool-like column as 0/1 floats, NaN where missing (a failed judgement)."""
    return series.astype("Float64").to_numpy(dtype=float, na_value=np.nan)


def profile_rows(rows: pd.DataFrame, judge: str, *, tier_options: Mapping[str, Any],
                 leaderboard: Callable[[pd.DataFrame], pd.DataFrame],
                 item_key: Sequence[str], cluster: str) -> tuple[pd.DataFrame, int, str]:
    """The profile's rows of one judge's verdicts (``rows``, a judged frame of one judge):
    TDR and SUI of the tier leaderboard (:func:`kbench_core.vuln.tiers` with
    ``tier_options``, bootstrapped), SUI with its interval and the ``leaderboard``'s rank
    interval, TDR with its Wilson interval, the rank of that TDR and its interval from a
    bootstrap over ``cluster`` of each detector's own vulnerable answers
    (:func:`kbench_core.profile.ratio_ranks`); ``item_key``: an answer's key within a
    detector. Returns the rows, the number of detectors and the judge."""
    from kbench_core.profile import cluster_sums
    from kbench_core.vuln import tiers

    board = tiers(rows, **tier_options)
    board = board.assign(model=board["model"].astype(str))
    # TDR's rank: of the tier leaderboard's TDR, over the rows it counts (vulnerable answers
    # with a verdict and a target assessment; the tiers leave failed judgements out), so the
    # rank is the rank of the value shown. The profile's tier options count a found target as
    # 1 and weigh every answer alike, so TDR = found / vulnerable answers.
    truth, said, found = (_flags(rows[c]) for c in ("is_vulnerable", "said_vulnerable",
                                                    "target_found"))
    counted = (truth == 1) & np.isfinite(said) & np.isfinite(found)
    num, den = cluster_sums(rows, np.where(counted, found, 0.0), counted.astype(float),
                            pd.Index(board["model"]), cluster=cluster)
    # whether some detector lacks an answer another one has (then their TDRs rest on
    # different answers, and the profile says so)
    key = [c for c in item_key if c in rows]
    item = pd.MultiIndex.from_frame(rows.loc[counted, key].astype(str)).factorize()[0]
    answered = pd.DataFrame({"model": rows.loc[counted, "model"].astype(str).to_numpy(),
                             "item": item}).drop_duplicates()
    differ = bool(len(answered)) and bool(
        (answered.groupby("model").size() < answered["item"].nunique()).any())
    return profile_rows_from_sums(board, num, den, judge, differ=differ,
                                  leaderboard=leaderboard, cluster=cluster)


def profile_rows_from_sums(board: pd.DataFrame, num: np.ndarray, den: np.ndarray, judge: str,
                           *, differ: bool, leaderboard: Callable[[pd.DataFrame], pd.DataFrame],
                           cluster: str) -> tuple[pd.DataFrame, int, str]:
    """:func:`profile_rows` from what it reads of the answers, which an engine computes where
    they lie (``kbench_core.engines.judged``): ``board`` the bootstrapped tier leaderboard
    (models as text), ``num``/``den`` per ``cluster`` level × model (``board``'s order) the
    found targets and the counted vulnerable answers
    (:func:`kbench_core.profile.cluster_sums`), ``differ`` whether some detector lacks a
    counted answer another one has."""
    from kbench_core.profile import marks, metric_rows, ratio_ranks_from_sums
    from kbench_core.vuln import FEW_SAMPLES

    # the tier leaderboard's rank (by SUI) and the tiers' bootstrap interval of it
    sui_ranks = leaderboard(board).rename(columns={"sui_rank_low": "rank_low",
                                                   "sui_rank_high": "rank_high"})
    sui_ranks = sui_ranks[[c for c in ("model", "rank", "rank_low", "rank_high", "few_items")
                           if c in sui_ranks]]
    sui_ranks = sui_ranks.assign(rank_note=marks(
        ("few samples", sui_ranks.get("few_items", pd.Series(False, index=sui_ranks.index))
         .fillna(False)))).drop(columns="few_items", errors="ignore")
    tdr_ranks = ratio_ranks_from_sums(num, den, board.set_index("model")["tdr"])
    few = tdr_ranks["n_clusters"] < FEW_SAMPLES
    tdr_ranks = tdr_ranks.assign(rank_note=marks(("few samples", few)))
    contracts = dict(zip(tdr_ranks["model"], tdr_ranks["n_clusters"], strict=True))
    tdr_items = [f"this detector's vulnerable answers judged by {judge} ({contracts.get(m, 0):,} "
                 f"{cluster}s; rank interval: bootstrap over them)"
                 + ("; detectors differ in the answers judged" if differ else "")
                 for m in board["model"]]
    sui_items = [f"every answer of this detector judged by {judge} ({k:,} {cluster}s; "
                 "rank interval: bootstrap over them)"
                 for k in board.get("n_samples", pd.Series(0, index=board.index))
                 .fillna(0).astype(int)]
    out = pd.concat([
        metric_rows(board, "tdr", low="tdr_low", high="tdr_high", n="n_vulnerable",
              ranks=tdr_ranks.drop(columns="n_clusters"), items=tdr_items),
        metric_rows(board, "sui", low="sui_low", high="sui_high", n="n", ranks=sui_ranks,
              items=sui_items)],
        ignore_index=True)
    return out, len(board), str(judge)
