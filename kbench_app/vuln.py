"""The vulnerability page's cache and table presentation (column order, labels, intervals)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import streamlit as st

from kbench_app.ui import interval_text, shown
from kbench_core import vuln

HEADLINE = ("sui", "tus", "tus_geometric", "lgi", "accuracy", "f2", "tdr", "lucky_guess_rate",
            "finding_precision", "hallucination_rate", "avg_reasoning", "ece", "brier",
            "location_accuracy")
_HELP = {
    "sui": "Security Understanding Index: weighted mean of F2, TDR, finding precision, mean "
           "reasoning and 1 − ECE",
    "tus": "True Understanding Score: TDR × mean reasoning × (1 − invalid rate)",
    "tus_geometric": "Cube root of TUS (the critique's remedy for multiplicative collapse)",
    "lgi": "Lucky-guess indicator: accuracy − TDR",
    "tdr": "Targets found / vulnerable answers",
    "lucky_guess_rate": "Said vulnerable on a vulnerable contract without finding the target, "
                        "over TP",
    "bonus_discovery_rate": "Answers with more valid findings than the target found",
    "finding_precision": "Valid findings (target, partial, bonus) / all findings",
    "over_flagging": "Invalid findings per answer",
    "ece": "Expected calibration error of the stated confidence",
    "mce": "Largest calibration gap over the bins",
    "location_accuracy": "|claimed ∩ true lines| / |true lines|, over found targets",
    "n": "Answers (samples × prompt types) behind the row",
}


def _key(frame: pd.DataFrame) -> tuple:
    return (tuple(sorted(map(str, frame["model"].unique()))), len(frame))


@st.cache_resource(max_entries=48, show_spinner="Computing the tiers...")
def _tiers(run_key: str, content_hash: str, selection: tuple, weights: tuple, _frame,
           **options):
    return vuln.tiers(_frame, sui_weights=dict(weights), **options)


def cached_tiers(run_key: str, content_hash: str, frame: pd.DataFrame, *,
                 sui_weights: dict[str, float], **options) -> pd.DataFrame:
    """:func:`kbench_core.vuln.tiers` of a selection (one judge), cached on the runs' hashes,
    the selection and the options (the bootstrap is computed once per choice)."""
    return _tiers(run_key, content_hash, _key(frame), tuple(sorted(sui_weights.items())),
                  frame, **options)


@st.cache_resource(max_entries=48, show_spinner=False)
def _reliability(run_key: str, content_hash: str, selection: tuple, _frame, **options):
    return vuln.reliability(_frame, **options)


def cached_reliability(run_key: str, content_hash: str, frame: pd.DataFrame,
                       **options) -> pd.DataFrame:
    """:func:`kbench_core.vuln.reliability` of a selection, cached like :func:`cached_tiers`."""
    return _reliability(run_key, content_hash, _key(frame), frame, **options)


def rows_equal(series: pd.Series, value: str) -> np.ndarray:
    """Mask of the rows whose label is ``value``: compared on the categories when the column
    is categorical (as io loads labels), not on one string per row."""
    if isinstance(series.dtype, pd.CategoricalDtype) and all(
            isinstance(c, str) for c in series.cat.categories):
        return (series == value).to_numpy(dtype=bool)
    return (series.astype(str) == value).to_numpy(dtype=bool)


def tier_view(table: pd.DataFrame, metrics: Sequence[str], *,
              keys: Sequence[str] = ("model",)) -> tuple[pd.DataFrame, dict[str, object]]:
    """A display table: the keys, then each metric with its interval as text beside it, and
    ``n``; with its Streamlit column configuration."""
    view = table[[k for k in keys if k in table]].copy()
    for key in keys:
        if key in view:
            view[key] = view[key].astype(str)
    config: dict[str, object] = {"model": st.column_config.TextColumn("Model", pinned=True),
                                 "prompt_type": "Prompt type",
                                 "rank": st.column_config.NumberColumn(
                                     "Rank (1 = best SUI)", help="By SUI, best first",
                                     pinned=True)}
    if "rank" in table:
        view.insert(0, "rank", table["rank"])
        if "sui_rank_low" in table and table["sui_rank_low"].notna().any():
            view.insert(1, "rank_ci", [
                f"[{lo:g}, {hi:g}]" for lo, hi in zip(np.round(table["sui_rank_low"], 1),
                                                      np.round(table["sui_rank_high"], 1),
                                                      strict=True)])
            config["rank_ci"] = st.column_config.TextColumn(
                "Rank 95%", help="Bootstrap over samples (with the intervals switched on): "
                                 "overlapping ranges mean the run cannot order those models")
    for metric in metrics:
        if metric not in table:
            continue
        view[metric] = table[metric]
        label = vuln.METRIC_LABELS.get(metric, metric)
        integer = pd.api.types.is_integer_dtype(table[metric])
        config[metric] = st.column_config.NumberColumn(
            label, help=_HELP.get(metric), format="localized" if integer else "%.4g")
        if f"{metric}_low" in table and table[f"{metric}_low"].notna().any():
            view[f"{metric}_ci"] = interval_text(table[f"{metric}_low"], table[f"{metric}_high"])
            config[f"{metric}_ci"] = st.column_config.TextColumn(f"{label} 95% CI")
    view["n"] = table["n"]
    config["n"] = st.column_config.NumberColumn("n", help=_HELP["n"])
    return shown(view.reset_index(drop=True)), config


def ranked(table: pd.DataFrame) -> pd.DataFrame:
    """The tiers table sorted by SUI (best first, undefined last) with a ``rank`` column."""
    out = table.sort_values("sui", ascending=False, na_position="last", kind="stable")
    out = out.reset_index(drop=True)
    out.insert(0, "rank", out["sui"].rank(ascending=False, method="min").astype("Int64"))
    return out
