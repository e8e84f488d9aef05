"""Caches and table helpers of the Replication page."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from kbench_core import replication
from kbench_core.stats import t_interval


@st.cache_resource(max_entries=32, show_spinner="Computing PAS and ECS...")
def metrics(key: tuple, _tests: pd.DataFrame, finding_weights: str, study_pooling: str,
            weighting: str, normalize_weights: bool, ci: str) -> dict[str, object]:
    """PAS at every level and ECS overall, per domain and per study, for one selection."""
    out: dict[str, object] = {}
    has_pi = _tests.filter(like="_pi").notna().any().any() or "human_bf10" in _tests
    out["pas"] = (replication.pas(_tests, finding_weights=finding_weights,
                                  study_pooling=study_pooling,
                                  ci="bootstrap" if ci == "bootstrap" else None)
                  if has_pi else None)
    for level in ("overall", "domain", "study"):
        if level == "domain" and "domain" not in _tests:
            out[level] = None
            continue
        out[level] = replication.ecs(_tests, level=level, weighting=weighting,
                                     normalize_weights=normalize_weights, ci=ci)
    return out


def summary_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Per configuration: mean PAS and ECS over the studies that have them (t intervals), the
    number of studies, total tokens and cost."""
    grouped = frame.groupby("model", observed=True)
    out = pd.DataFrame({"n_studies": grouped["study"].nunique()})
    for metric in ("pas", "ecs"):
        if metric not in frame:
            continue
        stats = grouped[metric].agg(["mean", "std", "count"])
        out[metric] = stats["mean"]
        out[f"{metric}_low"], out[f"{metric}_high"] = t_interval(stats["mean"], stats["std"],
                                                                 stats["count"])
        out[f"n_{metric}"] = stats["count"]
    for extra in ("tokens", "cost"):
        if extra in frame:
            out[extra] = grouped[extra].sum(min_count=1)
    if "cost" in out and "pas" in out:
        with np.errstate(invalid="ignore", divide="ignore"):
            out["pas_per_dollar"] = out["pas"] / out["cost"]
    out = out.reset_index()
    scored = frame[["model", "study", "pas"]].dropna() if "pas" in frame else frame.iloc[:0]
    if scored["model"].nunique() >= 2:
        from kbench_core import compare

        # Rank by mean PAS over the studies every configuration has, bootstrapped over studies.
        ranks = compare.rank_intervals(scored, "pas", item="study", lower_is_better=False)
        ranks["rank_95"] = [f"{r:g} [{lo:g}, {hi:g}]" for r, lo, hi in
                            zip(ranks["rank"], ranks["rank_low"], ranks["rank_high"],
                                strict=True)]
        out = ranks[["model", "rank", "rank_95"]].merge(out, on="model", how="right")
    return out.sort_values("pas" if "pas" in out else "model", ascending=False)
