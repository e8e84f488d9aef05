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


@st.cache_resource(max_entries=48, show_spinner="Computing the tiers...")
def _tiers(content_hash: str, selection: tuple, weights: tuple, options: tuple, _frame):
    return vuln.tiers(_frame, sui_weights=dict(weights), **dict(options))


def _options_key(options: dict) -> tuple:
    """The options as a hashable, order-free key (severity weights as sorted pairs)."""
    return tuple(sorted((k, tuple(sorted(v.items())) if isinstance(v, dict) else v)
                        for k, v in options.items()))


def cached_tiers(content_hash: str, selection: tuple, frame: pd.DataFrame, *,
                 sui_weights: dict[str, float], **options) -> pd.DataFrame:
    """:func:`kbench_core.vuln.tiers` of ``frame``, cached on the runs' content hashes, the
    ``selection`` that made ``frame`` from them (models, judge, prompt type: every filter the
    page applied) and every option, so two selections never share an entry."""
    return _tiers(content_hash, selection, tuple(sorted(sui_weights.items())),
                  _options_key(options), frame)


@st.cache_resource(max_entries=48, show_spinner=False)
def _reliability(content_hash: str, selection: tuple, options: tuple, _frame):
    return vuln.reliability(_frame, **dict(options))


def cached_reliability(content_hash: str, selection: tuple, frame: pd.DataFrame,
                       **options) -> pd.DataFrame:
    """:func:`kbench_core.vuln.reliability` of ``frame``, cached like :func:`cached_tiers`
    (the selection includes the prompt type the diagram shows)."""
    return _reliability(content_hash, selection, _options_key(options), frame)


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
    if "n_samples" in table:
        view["n_samples"] = table["n_samples"]
        config["n_samples"] = st.column_config.NumberColumn(
            "Samples", help="Distinct samples (contracts) behind the row")
    if "few_items" in table and table["few_items"].any():
        view["few_items"] = table["few_items"].to_numpy(dtype=bool)
        config["few_items"] = st.column_config.CheckboxColumn(
            "Few samples", help="Fewer than 30 samples: its rank and rates are uncertain "
                                "(see the intervals)")
    if "renormalised" in table and table["renormalised"].any():
        view["renormalised"] = table["renormalised"].to_numpy(dtype=bool)
        config["renormalised"] = st.column_config.CheckboxColumn(
            "Renormalised", help="A composite (SUI or TUS) had an undefined component and was "
                                 "computed over the others with their weights renormalised")
    return shown(view.reset_index(drop=True)), config


def ranked(table: pd.DataFrame) -> pd.DataFrame:
    """The tiers table sorted by SUI (best first, undefined last) with a ``rank`` column."""
    out = table.sort_values("sui", ascending=False, na_position="last", kind="stable")
    out = out.reset_index(drop=True)
    out.insert(0, "rank", out["sui"].rank(ascending=False, method="min").astype("Int64"))
    return out


@st.cache_resource(max_entries=16, show_spinner=False)
def _fixed(content_hash: str, selection: tuple, judge: str, _frame: pd.DataFrame) -> pd.DataFrame:
    parts = [vuln.fixed_claims(_frame, judge=judge)]
    llm = [j for j in vuln.judges_of(_frame) if j != "human"]
    if len(llm) > 1:
        from kbench_core.agreement import consensus

        parts.append(vuln.fixed_claims(consensus(_frame)))
    kept = [p for p in parts if len(p)]
    return pd.concat(kept, ignore_index=True) if kept else parts[0]


def fixed_versions(content_hash: str, selection: tuple, frame: pd.DataFrame,
                   judge: str) -> pd.DataFrame:
    """:func:`kbench_core.vuln.fixed_claims` of the chosen judge and, with several LLM
    judges, of their consensus (:func:`kbench_core.agreement.consensus`), cached like the
    tiers."""
    return _fixed(content_hash, selection, judge, frame)


def fixed_view(table: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, object]]:
    """The fixed-versions table for display: each rate with its interval as text."""
    view = table[["model", "judge", "n_fixed", "fixed_claim_rate", "n_vulnerable",
                  "tdr"]].copy()
    view.insert(4, "fixed_claim_ci", interval_text(table["fixed_claim_rate_low"],
                                                   table["fixed_claim_rate_high"]))
    view["tdr_ci"] = interval_text(table["tdr_low"], table["tdr_high"])
    config = {"model": "Detector", "judge": "Judge",
              "n_fixed": st.column_config.NumberColumn(
                  "Fixed", help="Fixed contracts with a readable claim"),
              "fixed_claim_rate": st.column_config.NumberColumn(
                  "Still claims", format="%.3f",
                  help="Share of fixed contracts where the detector still claims the fixed "
                       "vulnerability (lower is better)"),
              "fixed_claim_ci": st.column_config.TextColumn("95% CI"),
              "n_vulnerable": st.column_config.NumberColumn("Vulnerable"),
              "tdr": st.column_config.NumberColumn("TDR", format="%.3f"),
              "tdr_ci": st.column_config.TextColumn("TDR 95% CI")}
    return view, config
