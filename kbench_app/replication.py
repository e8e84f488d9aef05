"""Caches and table helpers of the Replication page.

Heavy results (prepared tests, PAS at every level, ECS at every level, the scatter figure, the
summary ranking) are cached with ``st.cache_resource`` on a key made of the runs' content
hashes, the model selection and the options; the cached frames are shared, so the page never
changes them in place (display tables are copies).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from kbench_app.ui import interval_text
from kbench_core import replication
from kbench_core.figures import replication as rep_figures

__all__ = [
    "ecs_view",
    "finding_view",
    "findings_view",
    "has_posteriors",
    "metrics",
    "pas_study_grid",
    "pas_unavailable",
    "pas_view",
    "prepared",
    "scatter",
    "summary_table",
    "summary_view",
]

_HELP = {
    "ecs": "Lin's concordance correlation of agent d on human d (1 = identical effects)",
    "ecs_ci": "95% interval: Lin's z-transform (analytic) or the cluster bootstrap over "
              "studies (bootstrap)",
    "n": "Tests with both effect sizes",
    "n_kish": "Kish's effective n, (Σw)²/Σw², of the tests' weights: what Lin's interval "
              "rests on (= n under equal weights)",
    "n_studies": "Studies those tests come from",
    "pas": "Probability that human and agent are in the same state; 0.5 = chance",
    "pas_ci": "95% interval: t over the model's studies (analytic) or the bootstrap over its "
              "studies, then findings within each drawn study (bootstrap)",
    "n_dropped": "Tests left out of PAS: no usable posterior (e.g. a Bayes factor without its "
                 "human_significant flag) or, under n_eff weights, no n_eff",
}


def has_posteriors(tests: pd.DataFrame) -> bool:
    """Whether any test of a prepared frame has both posteriors, so PAS is available."""
    return bool((tests["pi_h"].notna() & tests["pi_a"].notna()).any())


def pas_unavailable(tests: pd.DataFrame) -> str:
    """Why a selection without posteriors has no PAS, in words that are true for it."""
    bf = "human_bf10" in tests and bool(tests["human_bf10"].notna().any())
    if bf and ("human_significant" not in tests or tests["human_significant"].isna().all()):
        return ("PAS is unavailable: the tests give human Bayes factors but no "
                "human_significant flag, so there are no prior odds to turn them into "
                "posteriors. Add the flag (true/false) to each test to get PAS.")
    if bf or ("human_pi" in tests and bool(tests["human_pi"].notna().any())):
        return ("PAS is unavailable: no test has both a human and an agent posterior (or "
                "Bayes factor).")
    return ("PAS is unavailable: this selection gives effect sizes but no posteriors or "
            "Bayes factors.")


@st.cache_resource(max_entries=8, show_spinner="Preparing the tests...")
def prepared(key: str, _frame: pd.DataFrame) -> pd.DataFrame:
    """:func:`kbench_core.replication.prepare_tests` of the combined runs (key: run hashes)."""
    return replication.prepare_tests(_frame)


@st.cache_resource(max_entries=32, show_spinner="Computing PAS and ECS...")
def metrics(key: tuple, _tests: pd.DataFrame, finding_weights: str, study_pooling: str,
            weighting: str, normalize_weights: bool, ci: str) -> dict[str, object]:
    """PAS at every level (None without posteriors) and ECS overall, per domain (None without
    a domain column) and per study, for one selection and set of options."""
    out: dict[str, object] = {}
    out["pas"] = (replication.pas(_tests, finding_weights=finding_weights,
                                  study_pooling=study_pooling, ci=ci)
                  if has_posteriors(_tests) else None)
    for level in ("overall", "domain", "study"):
        if level == "domain" and "domain" not in _tests:
            out[level] = None
            continue
        out[level] = replication.ecs(_tests, level=level, weighting=weighting,
                                     normalize_weights=normalize_weights, ci=ci)
    return out


@st.cache_resource(max_entries=16, show_spinner="Drawing the scatter...")
def scatter(key: tuple, _tests: pd.DataFrame, _overall: pd.DataFrame, weighting: str,
            color_by: str, panels: bool) -> go.Figure:
    """The human-vs-agent effect scatter of the valid pairs, markers sized by ECS weight."""
    valid = _tests[np.isfinite(_tests["d_h"]) & np.isfinite(_tests["d_a"])]
    weight = replication.structure_weights(valid) if weighting == "structure" else 1.0
    return rep_figures.effect_scatter(valid.assign(weight=weight), _overall, color_by=color_by,
                                      panels=panels)


def _number(label: str, column: str) -> object:
    return st.column_config.NumberColumn(label, help=_HELP.get(column), format="%.3f")


def _count(label: str, column: str) -> object:
    return st.column_config.NumberColumn(label, help=_HELP.get(column), format="%d")


def ecs_view(table: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, object]]:
    """An ECS table for display: the value, its interval as text, n and studies; sortable."""
    keys = [c for c in ("model", "domain", "study") if c in table]
    view = table[keys].copy()
    view["ecs"] = table["ecs"]
    view["ecs_ci"] = interval_text(table["ecs_low"], table["ecs_high"])
    view["n"] = table["n"]
    if "n_kish" in table:
        view["n_kish"] = table["n_kish"]
    view["n_studies"] = table["n_studies"]
    config: dict[str, object] = {c: st.column_config.TextColumn(c.capitalize()) for c in keys}
    config.update(ecs=_number("ECS", "ecs"),
                  ecs_ci=st.column_config.TextColumn("95% CI", help=_HELP["ecs_ci"]),
                  n=_count("n", "n"), n_studies=_count("Studies", "n_studies"),
                  n_kish=st.column_config.NumberColumn("Effective n", help=_HELP["n_kish"],
                                                       format="%.1f"))
    return view, config


def pas_view(table: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, object]]:
    """The model-level PAS table for display, with its interval and counts."""
    view = table[["model", "pas"]].copy()
    view["pas_ci"] = interval_text(table["pas_low"], table["pas_high"])
    for column in ("n", "n_findings", "n_tests", "n_dropped"):
        if column in table:
            view[column] = table[column]
    config = {"model": st.column_config.TextColumn("Model"), "pas": _number("PAS", "pas"),
              "pas_ci": st.column_config.TextColumn("95% CI", help=_HELP["pas_ci"]),
              "n": _count("Studies", "n"), "n_findings": _count("Findings", "n_findings"),
              "n_tests": _count("Tests", "n_tests"),
              "n_dropped": _count("Tests left out", "n_dropped")}
    return view.sort_values("pas", ascending=False, kind="stable"), config


def pas_study_grid(study: pd.DataFrame) -> pd.DataFrame:
    """Study (rows) × model (columns) PAS, with the number of findings of each study."""
    grid = study.pivot_table(index="study", columns="model", values="pas", observed=True,
                             dropna=False)
    grid.columns = [str(c) for c in grid.columns]
    findings = study.groupby("study", observed=True)["n"].max().rename("findings")
    out = grid.join(findings)
    if "domain" in study:
        out.insert(0, "domain", study.groupby("study", observed=True)["domain"].first())
    return out.reset_index()


def finding_view(finding: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, object]]:
    """The finding-level PAS table for display."""
    config = {"pas": _number("PAS", "pas"),
              "n": st.column_config.NumberColumn("Tests", format="%d",
                                                 help="Tests with both posteriors (0: the "
                                                      "seed's empty finding, PAS 0.5)")}
    return finding, config


@st.cache_resource(max_entries=8, show_spinner="Ranking the configurations...")
def summary_table(key: str, _frame: pd.DataFrame) -> pd.DataFrame:
    """:func:`kbench_core.replication.summary_leaderboard` of a ``replication_summary`` run
    (key: its content hash): the same table every export shows."""
    return replication.summary_leaderboard(_frame)


def _rank_text(board: pd.DataFrame) -> list[str]:
    texts = []
    for rank, low, high, none, few in zip(board["rank"], board["rank_low"], board["rank_high"],
                                          board["no_scores"], board["few_items"], strict=True):
        if none:
            texts.append("no scores")
        elif pd.isna(rank):
            texts.append("")
        else:
            text = f"{rank:g}" + (f" [{low:g}, {high:g}]" if pd.notna(low) else "")
            texts.append(text + (" · few studies" if few else ""))
    return texts


def summary_view(board: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, object]]:
    """The summary leaderboard for display: rank with its interval, the published
    configuration values under their published names, the means of the per-study values
    under theirs (with intervals and counts), tokens and cost."""
    view = pd.DataFrame({"rank_text": _rank_text(board), "model": board["model"]})
    by = board["ranked_by"].replace("", np.nan).dropna()
    by_label = replication.SUMMARY_LABELS.get(str(by.iloc[0]), "score") if len(by) else "score"
    config: dict[str, object] = {
        "rank_text": st.column_config.TextColumn(
            "Rank [95%]", help=f"By {by_label}, 1 = best; the interval bootstraps the studies "
                               "(overlapping ranges mean the run cannot order those "
                               "configurations). 'few studies': fewer than 30 studies behind "
                               "the rank."),
        "model": st.column_config.TextColumn("Configuration"),
    }
    for published in ("config_pas", "config_ecs"):
        if board[published].notna().any():
            view[published] = board[published]
            config[published] = st.column_config.NumberColumn(
                replication.SUMMARY_LABELS[published], format="%.3f",
                help="The configuration-level value as the benchmark published it")
    for metric in ("pas", "ecs"):
        name = f"mean_study_{metric}"
        if board[f"n_{metric}"].sum() == 0:
            continue
        view[name] = board[name]
        view[f"{name}_ci"] = interval_text(board[f"{name}_low"], board[f"{name}_high"])
        view[f"n_{metric}"] = board[f"n_{metric}"]
        label = replication.SUMMARY_LABELS[name]
        config[name] = st.column_config.NumberColumn(
            label, format="%.3f", help=f"{label}: computed by kbench from the published study "
                                       "values (not a published number)")
        config[f"{name}_ci"] = st.column_config.TextColumn(
            f"{label} 95% CI", help="t interval over the studies")
        config[f"n_{metric}"] = _count(f"Studies ({metric.upper()})", f"n_{metric}")
    for extra, label, fmt in (("tokens", "Tokens", "%d"), ("cost", "Cost (US$)", "$%.2f")):
        if extra in board:
            view[extra] = board[extra]
            config[extra] = st.column_config.NumberColumn(
                label, format=fmt, help=f"Total {extra} over the studies, as published")
    return view, config


def findings_view(frame: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, object]]:
    """The published finding scores, one row per configuration × study × finding."""
    findings = replication.finding_rows(frame)
    view = findings[[c for c in ("model", "study", "finding", "finding_score", "n_tests")
                     if c in findings]].reset_index(drop=True)
    config = {"model": st.column_config.TextColumn("Configuration"),
              "finding_score": st.column_config.NumberColumn(
                  "Finding score (published)", format="%.4f"),
              "n_tests": _count("Tests", "n_tests")}
    return view, config
