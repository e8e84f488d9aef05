"""The judge-agreement page's cache and small presentation helpers.

Every expensive call of :mod:`kbench_core.agreement` is cached on the run's name and content
hash plus the options, so moving between labels or pages recomputes nothing already seen (the
bootstrap included).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd
import streamlit as st

from kbench_core import agreement
from kbench_core.io import Run

# Landis & Koch bands as badge colours (st.badge), from red (poor) to green (almost perfect).
BAND_COLORS: dict[str, str] = {"poor": "red", "slight": "orange", "fair": "orange",
                               "moderate": "blue", "substantial": "green",
                               "almost perfect": "green", "undefined": "gray"}
LEADERBOARD: tuple[str, ...] = ("model", "n", "accuracy", "f2", "tdr", "lucky_guess_rate",
                                "finding_precision", "avg_reasoning", "ece", "sui", "tus",
                                "lgi")


def llm_judges(run: Run) -> list[str]:
    """The run's judges other than ``human``."""
    return [j for j in agreement.judges(run.frame) if j != agreement.HUMAN]


def eligible_runs(runs: Mapping[str, Run]) -> dict[str, Run]:
    """Judged runs with at least two judges (LLM judges, or one LLM judge and ``human``)."""
    return {name: run for name, run in runs.items()
            if run.kind == "judged" and len(agreement.judges(run.frame)) >= 2}


def _key(run: Run) -> tuple[str, str]:
    return run.name, run.content_hash


@st.cache_resource(max_entries=64, show_spinner="Comparing the judges...")
def _summary(name: str, content_hash: str, label: str, weights: str | None, bootstrap: bool,
             _frame: pd.DataFrame) -> dict[str, Any]:
    level = agreement.default_level(_frame, label)
    numeric = level == "interval"
    ci = "bootstrap" if bootstrap else None
    n_llm = sum(j != agreement.HUMAN for j in agreement.judges(_frame))
    out: dict[str, Any] = {"level": level, "numeric": numeric, "n_llm": n_llm}
    if n_llm >= 2:
        out["pairs"] = (agreement.pairwise_alpha(_frame, label, ci=ci) if numeric
                        else agreement.pairwise_kappa(_frame, label, weights=weights))
        out["fleiss"] = None if numeric else agreement.fleiss_kappa(_frame, label)
        out["alpha"] = agreement.krippendorff_alpha(_frame, label, level=level, ci=ci)
        out["percent"] = agreement.percent_agreement(_frame, label)
    out["human"] = (None if numeric
                    else agreement.human_agreement(_frame, label, weights=weights))
    return out


def cached_summary(run: Run, label: str, *, weights: str | None,
                   bootstrap: bool) -> dict[str, Any]:
    """Pairwise table (κ, or α for numbers), Fleiss' κ, Krippendorff's α, percent agreement
    and agreement with the expert for one label of a run."""
    return _summary(*_key(run), label, weights, bootstrap, run.frame)


@st.cache_resource(max_entries=32, show_spinner="Agreement on every label...")
def _labels(name: str, content_hash: str, bootstrap: bool, _frame: pd.DataFrame):
    return agreement.label_agreement(_frame, ci_alpha="bootstrap" if bootstrap else None)


def cached_label_agreement(run: Run, *, bootstrap: bool) -> pd.DataFrame:
    """:func:`kbench_core.agreement.label_agreement` of a run."""
    return _labels(*_key(run), bootstrap, run.frame)


@st.cache_resource(max_entries=32, show_spinner="Computing the tiers per judge...")
def _spread(name: str, content_hash: str, min_votes: int, _frame: pd.DataFrame):
    spread = agreement.judge_spread(_frame, min_votes=min_votes)
    return spread, agreement.spread_summary(spread)


def cached_spread(run: Run, *, min_votes: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(judge_spread, spread_summary)`` of a run; the consensus uses ``min_votes``."""
    return _spread(*_key(run), min_votes, run.frame)


@st.cache_resource(max_entries=32, show_spinner="Building the consensus...")
def _consensus(name: str, content_hash: str, min_votes: int, _frame: pd.DataFrame):
    from kbench_core import vuln

    frame = agreement.consensus(_frame, min_votes=min_votes)
    return vuln.tiers(frame), frame


def cached_consensus(run: Run, *, min_votes: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(tiers, consensus frame)`` of a run's majority-vote judge."""
    return _consensus(*_key(run), min_votes, run.frame)


@st.cache_resource(max_entries=64, show_spinner=False)
def _disagreements(name: str, content_hash: str, label: str, include_missing: bool,
                   _frame: pd.DataFrame) -> pd.DataFrame:
    return agreement.disagreements(_frame, label, include_missing=include_missing)


def cached_disagreements(run: Run, label: str, *, include_missing: bool) -> pd.DataFrame:
    """:func:`kbench_core.agreement.disagreements` of a run."""
    return _disagreements(*_key(run), label, include_missing, run.frame)


def interval_text(low: float, high: float) -> str:
    """``95% CI [low, high]`` with three decimals, or a note that there is none."""
    if pd.isna(low) or pd.isna(high):
        return "no interval"
    return f"95% CI [{low:.3f}, {high:.3f}]"


def item_records(frame: pd.DataFrame, item: Mapping[str, Any]) -> pd.DataFrame:
    """Every judge's row of one item, transposed (fields × judges) and rendered as text, so
    uploaded values show literally."""
    mask = pd.Series(True, index=frame.index)
    for column, value in item.items():
        if column in frame:
            mask &= (frame[column].astype(str) == str(value)).to_numpy()
    rows = frame[mask.to_numpy()]
    if rows.empty:
        return pd.DataFrame()
    order = {j: i for i, j in enumerate(agreement.judges(frame))}
    rows = rows.iloc[rows["judge"].astype(str).map(order).fillna(len(order))
                     .to_numpy().argsort(kind="stable")]
    table = rows.drop(columns=[c for c in item if c in rows]).astype(object)
    table = table.where(table.notna(), "")
    table.index = rows["judge"].astype(str).to_numpy()
    out = table.drop(columns="judge").T.astype(str)
    out.index.name = "field"
    return out.reset_index()
