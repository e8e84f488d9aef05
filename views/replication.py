"""Replication: human against agent effects (ECS), agreement of replication decisions (PAS),
published study summaries, and model comparison."""

import numpy as np
import pandas as pd
import streamlit as st

from kbench_app import replication as rep_view
from kbench_app import state, urlstate
from kbench_app.compare import compare_panel
from kbench_app.downloads import figure_downloads, table_downloads
from kbench_core import replication
from kbench_core.figures import replication as rep_figures

st.title("Replication")
registry = state.registry()
test_runs = {n: r for n, r in registry.runs.items() if r.kind == "replication"}
summary_runs = {n: r for n, r in registry.runs.items() if r.kind == "replication_summary"}
if not test_runs and not summary_runs:
    st.info("No replication run is loaded. Add one on the Runs page (a per-test table, "
            "HumanStudy-Bench's effect list JSON or its simple_studies.csv).")
    st.stop()

CI_FORMAT = st.column_config.NumberColumn(format="%.3f")


def _runs_changed() -> None:
    st.session_state.pop("rep_models", None)


if test_runs:
    urlstate.warn_missing_runs(list(test_runs), "rep_runs")
    urlstate.prepare("rep_runs", "many", list(test_runs)[:1], list(test_runs))
    chosen = st.multiselect("Runs (per-test)", list(test_runs), key="rep_runs",
                            on_change=_runs_changed)
    chosen_runs = [test_runs[n] for n in chosen]
else:
    chosen, chosen_runs = [], []

if chosen_runs:
    tests = replication.prepare_tests(state.combined_runs(chosen_runs))
    all_models = sorted(map(str, tests["model"].unique()))
    urlstate.prepare("rep_models", "many", all_models, all_models)
    models = st.multiselect("Models (agent configurations)", all_models, key="rep_models")
    with st.expander("Metric options", icon=":material/tune:"):
        c1, c2, c3, c4, c5 = st.columns(5)
        urlstate.prepare("rep_weighting", "one", "structure", ["structure", "equal"])
        weighting = c1.radio("ECS test weights", ["structure", "equal"], key="rep_weighting",
                             help="structure: every study, and every finding in it, weighs the "
                                  "same; equal: every test weighs 1 (the published per-study "
                                  "ECS).")
        urlstate.prepare("rep_normalize", "bool", True)
        normalize = c2.toggle("Normalised weights (Lin)", key="rep_normalize",
                              help="Off reproduces HumanStudy-Bench's code: weighted sums, "
                                   "so the mean-difference penalty shrinks as weights grow.")
        urlstate.prepare("rep_ci", "one", "analytic", ["analytic", "bootstrap"])
        ci = c3.radio("ECS / PAS intervals", ["analytic", "bootstrap"], key="rep_ci",
                      help="analytic: Lin's z-transform for CCC (PAS has none); bootstrap: "
                           "studies resampled within each model for ECS, findings for PAS "
                           "(1000 resamples, cached).")
        urlstate.prepare("rep_finding_weights", "one", "equal", ["equal", "n_eff"])
        finding_weights = c4.radio("PAS test weights", ["equal", "n_eff"],
                                   key="rep_finding_weights",
                                   help="n_eff follows the seed's prose; equal, SPEC's default.")
        urlstate.prepare("rep_pooling", "one", "fisher", ["fisher", "mean"])
        pooling = c5.radio("PAS over findings", ["fisher", "mean"], key="rep_pooling",
                           help="fisher: Fisher-z pooling (SPEC); mean: the seed's simple mean.")
    if not models:
        st.warning("Choose at least one model.")
        urlstate.stop()
    selected = tests[tests["model"].astype(str).isin(models)]
    content_key = "+".join(r.content_hash for r in chosen_runs) + "|" + ",".join(models)
    results = rep_view.metrics((content_key, weighting, normalize, ci, finding_weights, pooling),
                               selected, finding_weights, pooling, weighting, normalize, ci)
    overall = results["overall"]

    st.subheader("Human against agent effects (ECS)")
    c1, c2 = st.columns([4, 1])
    color_options = ["study", "domain"] if "domain" in selected else ["study"]
    urlstate.prepare("rep_color", "one", "study", color_options)
    color_by = c2.radio("Colour by", color_options, key="rep_color")
    urlstate.prepare("rep_panels", "bool", len(models) <= 4)
    panels = c2.toggle("One panel per model", key="rep_panels")
    c2.caption("Click a legend entry to isolate it, double-click to hide it. Marker size = the "
               "test's ECS weight.")
    valid = selected[np.isfinite(selected["d_h"]) & np.isfinite(selected["d_a"])]
    weighted = valid.assign(weight=replication.structure_weights(valid)
                            if weighting == "structure" else 1.0)
    scatter = rep_figures.effect_scatter(weighted, overall, color_by=color_by, panels=panels)
    c1.plotly_chart(scatter, key="rep_scatter_chart")
    with c1:
        figure_downloads(scatter, "effect_scatter", runs=chosen_runs,
                         options={"weighting": weighting, "normalize": normalize},
                         key="rep_scatter_dl")
    tabs = st.tabs(["Overall", "Per domain", "Per study"])
    for tab, level in zip(tabs, ("overall", "domain", "study"), strict=True):
        with tab:
            table = results[level]
            if table is None:
                st.caption("The run has no domain column.")
                continue
            st.dataframe(table, hide_index=True, width="stretch",
                         column_config={c: CI_FORMAT for c in ("ecs", "ecs_low", "ecs_high")})
            table_downloads(table, f"ecs_{level}", runs=chosen_runs, best={"ecs": "max"},
                            key=f"rep_ecs_{level}_dl")
    st.caption("ECS = Lin's concordance correlation of agent on human Cohen's d (1 = identical "
               "effects, 0 = no agreement). A study needs at least 3 tests for its own ECS.")

    st.subheader("Agreement of replication decisions (PAS)")
    pas_result = results["pas"]
    if pas_result is None:
        st.info("PAS is unavailable: this run gives effect sizes but no posteriors or Bayes "
                "factors (SPEC 1.2).")
    else:
        pas_model = pas_result.model
        st.dataframe(pas_model, hide_index=True, width="stretch",
                     column_config={c: CI_FORMAT for c in ("pas", "pas_low", "pas_high")})
        heat = rep_figures.study_heatmap(pas_result.study, value="pas")
        st.plotly_chart(heat, key="rep_pas_heat_chart")
        figure_downloads(heat, "pas_study_heatmap", runs=chosen_runs, key="rep_pas_heat_dl")
        with st.expander("PAS per finding", icon=":material/table:"):
            st.dataframe(pas_result.finding, hide_index=True, width="stretch")
            table_downloads(pas_result.finding, "pas_findings", runs=chosen_runs,
                            key="rep_pas_findings_dl")
        table_downloads(pas_model, "pas_models", runs=chosen_runs, best={"pas": "max"},
                        key="rep_pas_models_dl")
        st.caption("PAS = probability that human and agent are in the same state (effect or "
                   "no effect), pooled on Fisher's z within findings and studies; 0.5 = chance.")

    per_item = selected.assign(abs_diff=(selected["d_a"] - selected["d_h"]).abs())
    compare_panel(per_item, values={"|agent d − human d|": "abs_diff"}, group="study",
                  cluster="study", key="rep_cmp", runs=chosen_runs,
                  colors=state.model_colors(all_models), noun="tests",
                  content_key=content_key)

if summary_runs:
    st.subheader("Published study summaries")
    urlstate.prepare("rep_summary_run", "one", next(iter(summary_runs)), list(summary_runs))
    summary_name = st.selectbox("Summary run", list(summary_runs), key="rep_summary_run")
    summary_run = summary_runs[summary_name]
    board = rep_view.summary_table(summary_run.frame)
    st.plotly_chart(rep_figures.summary_leaderboard(board), key="rep_summary_chart")
    st.dataframe(board, hide_index=True, width="stretch",
                 column_config={c: CI_FORMAT for c in board.columns
                                if pd.api.types.is_float_dtype(board[c])})
    table_downloads(board, "summary_leaderboard", runs=[summary_run],
                    best={"pas": "max", "ecs": "max", "cost": "min"}, key="rep_summary_dl")
    metric = st.radio("Heat table", ["pas", "ecs"], horizontal=True, key="rep_summary_metric")
    heat = rep_figures.study_heatmap(summary_run.frame, value=metric,
                                     zmin=0.0 if metric == "pas" else -1.0)
    c1, c2 = st.columns([3, 1])
    c1.plotly_chart(heat, key="rep_summary_heat_chart")
    if "cost" in summary_run.frame:
        costs = summary_run.frame.pivot_table(index="study", columns="model", values="cost",
                                              observed=True)
        c2.caption("Cost per study and configuration")
        c2.dataframe(costs, width="stretch")

urlstate.publish()
