"""The Cognitive biases page for KahneBench fingerprint reports (run kind ``bias_summary``).

A report holds KahneBench's own per-bias numbers and no trials, so this view shows what exists
(the fingerprint, bias by intensity, the domain heatmap, human alignment, mitigation,
calibration, the reports' own summaries) and says plainly that there are no intervals. Every
table comes from :mod:`kbench_core.kahne_summary` and every figure from
:mod:`kbench_core.figures`, the same functions the exports use.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd
import streamlit as st

from kbench_app import bias as bias_view
from kbench_app import kit, state, urlstate
from kbench_app.compare import run_compare_panel
from kbench_app.downloads import figure_downloads, table_downloads
from kbench_app.ui import plain
from kbench_core import figures, kahne_summary
from kbench_core.io import Run

__all__ = ["render", "summaries_of"]

NO_TRIALS = ("These are KahneBench fingerprint reports: each number is the report's own, as "
             "KahneBench computed it from trials that are not in the file. There are no "
             "per-trial data, so no intervals and no bootstrap; kbench does not recompute "
             "anything. Upload the trial results (KahneBench's results JSON) for intervals, "
             "drill-downs and options.")


def summaries_of(runs: list[Run], frame: pd.DataFrame) -> dict[str, Any]:
    """The reports' published summaries keyed by the model names of the combined frame
    (``model (run)`` where a model occurs in several runs)."""
    shown = set(map(str, frame["model"].unique()))
    out: dict[str, Any] = {}
    for run in runs:
        for model, summary in (run.meta.get("summary") or {}).items():
            key = model if model in shown else f"{model} ({run.name})"
            out[key] = summary
    return out


def _leaderboard_view(board: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, object]]:
    ranks = []
    for rank, low, high, few in zip(board["rank"], board["rank_low"], board["rank_high"],
                                    board["few_items"], strict=True):
        if pd.isna(rank):
            ranks.append("")
            continue
        text = f"{rank:g} [{low:g}, {high:g}]" if pd.notna(low) else f"{rank:g}"
        ranks.append(text + (" · few biases" if few else ""))
    view = board.drop(columns=["rank_low", "rank_high", "few_items"]).copy()
    view.insert(0, "rank_text", ranks)
    view = view.drop(columns=["rank"])
    config: dict[str, object] = {
        "rank_text": st.column_config.TextColumn(
            "Rank [95%]", help="1 = least biased (lowest mean BMS over the biases every model "
                               "has). The interval bootstraps the biases (1000 resamples); "
                               "'few biases': fewer than 30 biases behind the rank."),
        "model": "Model",
        "susceptibility": st.column_config.NumberColumn(
            "Susceptibility (published)", format="%.3f",
            help="The report's overall_bias_susceptibility, as published"),
        "mean_bms": st.column_config.NumberColumn(
            "Mean BMS (shared biases)", format="%.3f",
            help="kbench's mean of the reported BMS over the biases every model has (the "
                 "ranked value; equals the published susceptibility when all share them)"),
        "n_biases": st.column_config.NumberColumn("Biases", help="Biases in the report"),
        "n_dropped": st.column_config.NumberColumn(
            "Biases left out", help="Biases this model's report lacks, left out of the rank"),
        "most_susceptible": "Most susceptible (published)",
        "most_resistant": "Most resistant (published)",
        "human_like": "Human-like (published)",
        "ai_specific": "AI-specific (published)",
    }
    return view, config


def render(runs: Mapping[str, Run]) -> None:
    """The page body for fingerprint-report runs."""
    st.info(NO_TRIALS, icon=":material/info:")
    names = list(runs)
    urlstate.prepare("bias_report_runs", "many", names[:1], names)
    chosen = st.multiselect("Reports", names, key="bias_report_runs",
                            on_change=lambda: kit.forget("bias_report_models"),
                            help="Several report runs are viewed together; a model found in "
                                 "more than one is shown as 'model (run)'.")
    if not chosen:
        st.warning("Choose at least one run.")
        urlstate.stop()
    chosen_runs = [runs[name] for name in chosen]
    frame = state.combined_runs(chosen_runs)
    all_models = sorted(map(str, frame["model"].unique()))
    urlstate.prepare("bias_report_models", "many", all_models, all_models)
    models = st.multiselect("Models", all_models, key="bias_report_models")
    if not models:
        st.warning("Choose at least one model.")
        urlstate.stop()
    selected = frame[frame["model"].astype(str).isin(models)]
    biases = sorted(map(str, selected["bias"].unique()))
    colors = state.model_colors(all_models)
    summaries = summaries_of(chosen_runs, frame)

    st.subheader("Models, as the reports summarise them")
    board = kahne_summary.leaderboard(selected, summaries)
    view, config = _leaderboard_view(board)
    st.dataframe(view, hide_index=True, width="stretch", column_config=config,
                 key="bias_report_leaderboard")
    table_downloads(board, "report_leaderboard", runs=chosen_runs,
                    best={"susceptibility": "min", "mean_bms": "min"},
                    key="bias_report_leaderboard_dl")

    st.subheader("Fingerprint")
    table = kahne_summary.fingerprint_table(selected)
    shown = table.drop(columns=["n"]).dropna(axis=1, how="all")
    st.dataframe(shown, hide_index=True, width="stretch", height=360,
                 key="bias_report_fingerprint", column_config=bias_view.fingerprint_columns(
                     shown))
    table_downloads(table, "report_fingerprint", runs=chosen_runs,
                    best={"bms": "min", "alignment": "max"}, key="bias_report_fingerprint_dl")
    heat = figures.fingerprint_heatmap(table)
    st.plotly_chart(heat, key="bias_report_heatmap")
    figure_downloads(heat, "report_fingerprint_heatmap", runs=chosen_runs,
                     key="bias_report_heatmap_dl")

    st.subheader("Bias by trigger intensity")
    c1, c2 = st.columns([3, 1])
    urlstate.prepare("bias_report_curve", "one", biases[0], biases)
    curve_bias = c2.selectbox("Bias", biases, key="bias_report_curve")
    curves = kahne_summary.intensity_table(selected[selected["bias"].astype(str)
                                                    == curve_bias])
    curve_fig = figures.bms_curves(curves, y="mean", colors=colors,
                                   title=f"{curve_bias}: mean score by trigger intensity "
                                         "(as reported)")
    c1.plotly_chart(curve_fig, key="bias_report_curve_chart")
    with c1:
        figure_downloads(curve_fig, f"report_intensity-{curve_bias}", runs=chosen_runs,
                         key="bias_report_curve_dl")
    c2.caption("Treatment mean per intensity and the control mean (dotted), as the report "
               "gives them; no band, as a report carries no spread.")

    st.subheader("Consistency across domains (BCI)")
    c1, c2 = st.columns([1, 3])
    urlstate.prepare("bias_report_heat_model", "one", models[0], models)
    heat_model = c1.selectbox("Model", models, key="bias_report_heat_model")
    cells = kahne_summary.domain_cells(selected[selected["model"].astype(str) == heat_model])
    if cells.empty:
        c2.info("The reports give no per-domain scores.")
    else:
        domain_fig = figures.bci_heatmap(cells, rows="bias",
                                         title=f"{heat_model}: score by domain (as reported)")
        c2.plotly_chart(domain_fig, key="bias_report_domain_chart")
        with c2:
            figure_downloads(domain_fig, f"report_domains-{heat_model}", runs=chosen_runs,
                             key="bias_report_domain_dl")

    st.subheader("Human alignment, mitigation and calibration")
    c1, c2 = st.columns(2)
    has_fig = figures.has_chart(kahne_summary.alignment_table(selected))
    c1.plotly_chart(has_fig, key="bias_report_has_chart")
    with c1:
        figure_downloads(has_fig, "report_has_chart", runs=chosen_runs,
                         key="bias_report_has_dl")
    calibration = kahne_summary.calibration_table(selected)
    if calibration["has_confidence_data"].any():
        cas_fig = figures.cas_bars(calibration, colors=colors)
        c2.plotly_chart(cas_fig, key="bias_report_cas_chart")
        with c2:
            figure_downloads(cas_fig, "report_cas_bars", runs=chosen_runs,
                             key="bias_report_cas_dl")
    else:
        c2.info("No bias of these reports has enough stated confidences for calibration "
                "(KahneBench's insufficient_confidence_data).")
    mitigation = kahne_summary.mitigation_table(selected)
    if not mitigation.empty:
        urlstate.prepare("bias_report_mit_model", "one", models[0], models)
        mit_model = st.selectbox("Mitigation of model", models, key="bias_report_mit_model")
        mit_fig = figures.mitigation_chart(
            mitigation[mitigation["model"] == mit_model],
            title=f"{mit_model}: score before and after debiasing (as reported)")
        st.plotly_chart(mit_fig, key="bias_report_mitigation_chart")
        figure_downloads(mit_fig, f"report_mitigation-{mit_model}", runs=chosen_runs,
                         key="bias_report_mitigation_dl")

    if len(models) >= 2:
        run_compare_panel(selected, "bias_summary", key="bias_report_cmp", runs=chosen_runs,
                          colors=colors)
        st.caption("Models are paired by bias on the reported BMS (lower is better); each bias "
                   "is one unit, as the reports hold one value per bias.")
    with st.expander("What the reports say about themselves", icon=":material/description:"):
        for run in chosen_runs:
            st.text(f"{plain(run.name)}: {run.meta.get('format', '')}, "
                    f"{len(run.models)} model(s)")
            for warning in run.warnings:
                st.caption(plain(warning))
