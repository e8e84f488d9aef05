"""The Cognitive biases page for KahneBench fingerprint reports (run kind ``bias_summary``).

A report holds KahneBench's own per-bias numbers and no trials, so this view shows what exists
(the fingerprint, bias by intensity, the domain heatmap, human alignment, mitigation,
calibration, the reports' own summaries) and says plainly which numbers have no interval. Every
table comes from :mod:`kbench_core.bias_reports` and every figure from
:mod:`kbench_core.figures`, the same functions the exports use.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from kbench_app import bias as bias_view
from kbench_app import kit, state
from kbench_app.compare import run_compare_panel
from kbench_app.ui import plain
from kbench_core import bias_reports as reports
from kbench_core import figures
from kbench_core.io import Run
from kbench_core.ranking import rank_text
from kbench_core.text import count_noun

K = bias_view.Keys

__all__ = ["render", "summaries_of"]

# Beside the leaderboard, whose ranks have intervals: the box says which numbers carry one
# (the ranks, over biases) and which cannot (a report's own scores), never "no intervals".
NO_TRIALS = ("These are KahneBench fingerprint reports: each score is the report's own, as "
             "KahneBench computed it from trials that are not in the file, so a score comes "
             "without the spread of its trials and kbench does not recompute it. The rank "
             "intervals resample the biases. Upload the trial results (KahneBench's results "
             "JSON) for intervals on every score, drill-downs and options.")


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
    view = board.drop(columns=["rank_low", "rank_high", "few_items"]).copy()
    view.insert(0, "rank_text", rank_text(board["rank"], board["rank_low"], board["rank_high"],
                                          few=board["few_items"], few_label="few biases"))
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
        "n_ranked": st.column_config.NumberColumn(
            "Biases ranked", help="The biases behind the mean BMS and the rank: those every "
                                  "chosen model's report has"),
        "n_biases": st.column_config.NumberColumn("Biases", help="Biases in the report"),
        "n_dropped": st.column_config.NumberColumn(
            "Biases left out", help="Biases this model's report lacks, left out of the rank"),
        "most_susceptible": "Most susceptible (published)",
        "most_resistant": "Most resistant (published)",
        "human_like": "Human-like (published)",
        "ai_specific": "AI-specific (published)",
    }
    return view, config


def render() -> None:
    """The page body for fingerprint-report runs."""
    st.info(NO_TRIALS, icon=":material/info:")
    shown = kit.open_runs(None, ["bias_summary"], key=K.REPORT_RUNS, empty="",
                          resets=(K.REPORT_MODELS, K.REPORT_GROUP))
    # Runs of different biases: each ranked on its own, unless the user asks
    chosen_runs, frame, together = bias_view.pick_run_group(
        shown.runs, shown.frame, key=K.REPORT_GROUP, value="bms", resets=(K.REPORT_MODELS,))
    all_models = sorted(map(str, frame["model"].unique()))
    models = kit.model_picker("Models", all_models, key=K.REPORT_MODELS, frame=frame,
                              kind="bias_summary", runs=chosen_runs)
    if not models:
        st.warning("Choose at least one model.")
        kit.stop()
    selected = frame[frame["model"].astype(str).isin(models)]
    biases = sorted(map(str, selected["bias"].unique()))
    colors = state.model_colors(all_models)
    summaries = summaries_of(chosen_runs, frame)

    st.subheader("Models, as the reports summarise them")
    board = reports.leaderboard(selected, summaries)
    if together:
        st.caption(together)
    view, config = _leaderboard_view(board)
    kit.table(board, "report_leaderboard", view=view, config=config, runs=chosen_runs,
              key="bias_report_leaderboard", best={"susceptibility": "min", "mean_bms": "min"})

    st.subheader("Fingerprint")
    table = reports.fingerprint_table(selected)
    shown_table = bias_view.named_methods(table.drop(columns=["n"]).dropna(axis=1, how="all"))
    kit.table(table, "report_fingerprint", view=shown_table,
              config=bias_view.fingerprint_columns(shown_table), runs=chosen_runs,
              key="bias_report_fingerprint", height=360,
              best={"bms": "min", "alignment": "max"})
    kit.chart(figures.fingerprint_heatmap(table), "report_fingerprint_heatmap",
              runs=chosen_runs, key="bias_report_heatmap")

    st.subheader("Bias by trigger intensity")
    c1, c2 = st.columns([3, 1])
    curve_bias = kit.select("Bias", biases, key=K.REPORT_CURVE, container=c2)
    curves = reports.intensity_table(selected[selected["bias"].astype(str)
                                                    == curve_bias])
    kit.chart(figures.bms_curves(curves, y="mean", colors=colors,
                                 title=f"{curve_bias}: mean score by trigger intensity "
                                       "(as reported)"),
              f"report_intensity-{curve_bias}", runs=chosen_runs, key="bias_report_curve",
              container=c1)
    c2.caption("Treatment mean per intensity and the control mean (dotted), as the report "
               "gives them; no band, as a report carries no spread.")

    st.subheader("Consistency across domains (BCI)")
    c1, c2 = st.columns([1, 3])
    heat_model = kit.select("Model", models, key=K.REPORT_HEAT_MODEL, container=c1)
    cells = reports.domain_cells(selected[selected["model"].astype(str) == heat_model])
    if cells.empty:
        c2.info("The reports give no per-domain scores.")
    else:
        kit.chart(figures.bci_heatmap(cells, rows="bias",
                                      title=f"{heat_model}: score by domain (as reported)"),
                  f"report_domains-{heat_model}", runs=chosen_runs, key="bias_report_domain",
                  container=c2)

    st.subheader("Human alignment, mitigation and calibration")
    c1, c2 = st.columns(2)
    kit.chart(figures.has_chart(reports.alignment_table(selected)), "report_has_chart",
              runs=chosen_runs, key="bias_report_has", container=c1)
    calibration = reports.calibration_table(selected)
    if calibration["has_confidence_data"].any():
        kit.chart(figures.cas_bars(calibration, colors=colors,
                                   accuracy_label=figures.bias.ACCURACY_REPORTED),
                  "report_cas_bars",
                  runs=chosen_runs, key="bias_report_cas", container=c2)
    else:
        c2.info("No bias of these reports has enough stated confidences for calibration "
                "(KahneBench's insufficient_confidence_data).")
    mitigation = reports.mitigation_table(selected)
    if not mitigation.empty:
        mit_model = kit.select("Mitigation of model", models, key=K.REPORT_MITIGATION_MODEL)
        kit.chart(figures.mitigation_chart(
            mitigation[mitigation["model"] == mit_model],
            title=f"{mit_model}: score before and after debiasing (as reported)"),
            f"report_mitigation-{mit_model}", runs=chosen_runs, key="bias_report_mitigation")

    if len(models) >= 2:
        run_compare_panel(selected, "bias_summary", key=K.REPORT_COMPARE, runs=chosen_runs,
                          selection=tuple(models), colors=colors)
        st.caption("Models are paired by bias on the reported BMS (lower is better); each bias "
                   "is one unit, as the reports hold one value per bias.")
    with st.expander("What the reports say about themselves", icon=":material/description:"):
        for run in chosen_runs:
            # st.text shows text as is: a Markdown escape there would show its backslashes.
            st.text(f"{run.name}: {run.meta.get('format', '')}, "
                    f"{count_noun(len(run.models), 'model')}")
            for warning in run.warnings:
                st.caption(plain(warning))
