"""Replication: human against agent effects (ECS), agreement of replication decisions (PAS),
published study summaries, and model comparison."""

import streamlit as st

from kbench_app import kit, state, urlstate
from kbench_app import replication as rep_view
from kbench_app.compare import run_compare_panel
from kbench_app.downloads import figure_downloads, table_downloads
from kbench_app.ui import plain
from kbench_core.figures import replication as rep_figures
from kbench_core.replication import study_rows

st.title("Replication")
registry = state.registry()
test_runs = {n: r for n, r in registry.runs.items() if r.kind == "replication"}
summary_runs = {n: r for n, r in registry.runs.items() if r.kind == "replication_summary"}
if not test_runs and not summary_runs:
    st.info("No replication run is loaded. Add one on the Runs page (a per-test table, "
            "HumanStudy-Bench's effect list JSON or its simple_studies.csv).")
    st.stop()


def _runs_changed() -> None:
    kit.forget("rep_models")


def _options() -> dict[str, object]:
    """The metric options, in an expander; their defaults are SPEC's."""
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
        ci = c3.radio("Intervals", ["analytic", "bootstrap"], key="rep_ci",
                      help="analytic: Lin's z-transform for ECS (Kish's effective n under "
                           "structure weights), t over studies for PAS; bootstrap: studies "
                           "resampled within each model, for PAS then findings within each "
                           "drawn study (1000 resamples, cached).")
        urlstate.prepare("rep_finding_weights", "one", "equal", ["equal", "n_eff"])
        finding_weights = c4.radio("PAS test weights", ["equal", "n_eff"],
                                   key="rep_finding_weights",
                                   help="equal: the default and the released code; n_eff: "
                                        "the metric document's prose (needs an n_eff column; "
                                        "tests without one are left out).")
        urlstate.prepare("rep_pooling", "one", "fisher", ["fisher", "mean"])
        pooling = c5.radio("PAS over findings", ["fisher", "mean"], key="rep_pooling",
                           help="fisher: Fisher-z pooling (the default and the released "
                                "code); mean: the metric document's prose, a simple mean.")
    return dict(weighting=weighting, normalize=normalize, ci=ci,
                finding_weights=finding_weights, pooling=pooling)


def _ecs_section(results: dict, options: dict, chosen_runs: list, selected, content_key: str,
                 models: list[str]) -> None:
    st.subheader("Human against agent effects (ECS)")
    c1, c2 = st.columns([4, 1])
    color_options = ["study", "domain"] if "domain" in selected else ["study"]
    urlstate.prepare("rep_color", "one", "study", color_options)
    color_by = c2.radio("Colour by", color_options, key="rep_color")
    urlstate.prepare("rep_panels", "bool", len(models) <= 4)
    panels = c2.toggle("One panel per model", key="rep_panels")
    c2.caption("Click a legend entry to show only it, double-click to hide it. Marker size = "
               "the test's ECS weight; the dashed line is y = x, the solid one the weighted "
               "fit.")
    weighting = options["weighting"]
    scatter = rep_view.scatter(
        (content_key, weighting, options["normalize"], options["ci"], color_by, panels),
        selected, results["overall"], weighting, color_by, panels)
    c1.plotly_chart(scatter, key="rep_scatter_chart")
    with c1:
        figure_downloads(scatter, "effect_scatter", runs=chosen_runs,
                         options={"weighting": weighting, "normalize": options["normalize"]},
                         key="rep_scatter_dl")
    tabs = st.tabs(["Overall", "Per domain", "Per study"])
    for tab, level in zip(tabs, ("overall", "domain", "study"), strict=True):
        with tab:
            table = results[level]
            if table is None:
                st.caption("The run has no domain column.")
                continue
            view, config = rep_view.ecs_view(table)
            st.dataframe(view, hide_index=True, width="stretch", column_config=config,
                         key=f"rep_ecs_{level}_table")
            table_downloads(table, f"ecs_{level}", runs=chosen_runs, best={"ecs": "max"},
                            options=options, key=f"rep_ecs_{level}_dl")
    note = ("ECS = Lin's concordance correlation of agent on human Cohen's d (1 = identical "
            "effects, 0 = no agreement); n = tests with both effects. A study needs at least 3 "
            "tests for its own ECS.")
    if options["ci"] == "analytic" and not options["normalize"]:
        note += (" Lin's interval does not apply to the released code's unnormalised "
                 "statistic: choose bootstrap intervals to get one.")
    elif options["ci"] == "analytic" and weighting == "structure":
        note += (" With structure weights Lin's interval uses Kish's effective n, an "
                 "approximation; bootstrap intervals avoid it.")
    st.caption(note)


def _pas_section(results: dict, options: dict, chosen_runs: list, selected) -> None:
    st.subheader("Agreement of replication decisions (PAS)")
    pas_result = results["pas"]
    if pas_result is None:
        st.info(rep_view.pas_unavailable(selected))
        return
    for note in pas_result.notes:
        st.warning(plain(note) + ".", icon=":material/warning:")
    view, config = rep_view.pas_view(pas_result.model)
    st.dataframe(view, hide_index=True, width="stretch", column_config=config,
                 key="rep_pas_models_table")
    table_downloads(pas_result.model, "pas_models", runs=chosen_runs, best={"pas": "max"},
                    options=options, key="rep_pas_models_dl")
    st.caption("PAS = probability that human and agent are in the same state (effect or no "
               "effect), pooled on Fisher's z within findings and studies, then averaged over "
               "studies; 0.5 = chance.")
    study_tab, finding_tab = st.tabs(["Study × model", "Per finding"])
    with study_tab:
        heat = rep_figures.study_heatmap(pas_result.study, value="pas")
        st.plotly_chart(heat, key="rep_pas_heat_chart")
        figure_downloads(heat, "pas_study_heatmap", runs=chosen_runs, key="rep_pas_heat_dl")
        grid = rep_view.pas_study_grid(pas_result.study)
        st.dataframe(grid, hide_index=True, width="stretch", key="rep_pas_grid_table",
                     column_config={c: st.column_config.NumberColumn(c, format="%.3f")
                                    for c in grid.columns if c not in ("study", "domain",
                                                                       "findings")})
        table_downloads(pas_result.study, "pas_studies", runs=chosen_runs, best={"pas": "max"},
                        options=options, key="rep_pas_studies_dl")
    with finding_tab:
        finding, config = rep_view.finding_view(pas_result.finding)
        st.dataframe(finding, hide_index=True, width="stretch", column_config=config,
                     key="rep_pas_findings_table")
        table_downloads(pas_result.finding, "pas_findings", runs=chosen_runs, options=options,
                        key="rep_pas_findings_dl")


def _tests_section() -> None:
    """Runs of per-test results: choose runs and models, then ECS, PAS and comparisons."""
    for name in urlstate.missing_runs(list(test_runs), "rep_runs"):
        st.warning(f"The link shows the run **{plain(name)}**, which this session has not "
                   "loaded: upload its file again on the Runs page.", icon=":material/link_off:")
    urlstate.prepare("rep_runs", "many", list(test_runs)[:1], list(test_runs))
    chosen = st.multiselect("Runs (per-test)", list(test_runs), key="rep_runs",
                            on_change=_runs_changed)
    chosen_runs = [test_runs[n] for n in chosen]
    if not chosen_runs:
        st.info("Choose at least one per-test run.")
        return
    run_key = "+".join(r.content_hash for r in chosen_runs)
    tests = rep_view.prepared(run_key, state.combined_runs(chosen_runs))
    all_models = sorted(map(str, tests["model"].unique()))
    urlstate.prepare("rep_models", "many", all_models, all_models)
    models = st.multiselect("Models (agent configurations)", all_models, key="rep_models")
    options = _options()
    if not models:
        st.warning("Choose at least one model.")
        return
    selected = tests[tests["model"].astype(str).isin(models)]
    content_key = run_key + "|" + ",".join(models)
    results = rep_view.metrics(
        (content_key, *options.values()), selected, options["finding_weights"],
        options["pooling"], options["weighting"], options["normalize"], options["ci"])
    _ecs_section(results, options, chosen_runs, selected, content_key, models)
    _pas_section(results, options, chosen_runs, selected)
    run_compare_panel(selected, "replication", key="rep_cmp", runs=chosen_runs,
                      colors=state.model_colors(all_models), selection=content_key)


def _summary_section() -> None:
    """Published results: leaderboard with cost, study × model heat table, findings."""
    st.subheader("Published results")
    urlstate.prepare("rep_summary_run", "one", next(iter(summary_runs)), list(summary_runs))
    summary_name = st.selectbox("Summary run", list(summary_runs), key="rep_summary_run")
    summary_run = summary_runs[summary_name]
    frame = summary_run.frame
    studies = study_rows(frame)
    if len(studies):
        board = rep_view.summary_table(summary_run.content_hash, frame)
        leaderboard = rep_figures.summary_leaderboard(board)
        st.plotly_chart(leaderboard, key="rep_summary_chart")
        figure_downloads(leaderboard, "summary_leaderboard", runs=[summary_run],
                         key="rep_summary_chart_dl")
        view, config = rep_view.summary_view(board)
        st.dataframe(view, hide_index=True, width="stretch", column_config=config,
                     key="rep_summary_table")
        table_downloads(board, "summary_leaderboard", runs=[summary_run],
                        best={"config_pas": "max", "config_ecs": "max",
                              "mean_study_pas": "max", "mean_study_ecs": "max",
                              "cost": "min"}, key="rep_summary_dl")
        published = board["config_pas"].notna().any() or board["config_ecs"].notna().any()
        st.caption(("PAS (published) and ECS (published) are the benchmark's own "
                    "configuration-level numbers. " if published else
                    "This file has no configuration-level scores, so none is shown under "
                    "the published names. ")
                   + "'Mean of per-study' columns are computed here from the published study "
                     "values, with t intervals over studies; the published ECS pools every "
                     "test, so it differs from the mean of the per-study ECS. Cost and tokens "
                     "are totals over the studies.")
        metrics = [m for m in ("pas", "ecs") if m in studies and studies[m].notna().any()]
        if metrics:
            urlstate.prepare("rep_summary_metric", "one", metrics[0], metrics)
            metric = st.radio("Heat table", metrics, horizontal=True,
                              key="rep_summary_metric", format_func=str.upper)
            heat = rep_figures.study_heatmap(studies, value=metric,
                                             zmin=0.0 if metric == "pas" else -1.0)
            st.plotly_chart(heat, key="rep_summary_heat_chart")
            figure_downloads(heat, f"summary_{metric}_heatmap", runs=[summary_run],
                             key="rep_summary_heat_dl")
        if "cost" in studies:
            with st.expander("Cost per study and configuration (US$)",
                             icon=":material/payments:"):
                costs = studies.pivot_table(index="model", columns="study", values="cost",
                                            observed=True)
                costs.columns = [str(c) for c in costs.columns]
                st.dataframe(costs, width="stretch", key="rep_summary_cost_table",
                             column_config={c: st.column_config.NumberColumn(c, format="$%.2f")
                                            for c in costs.columns})
    findings, config = rep_view.findings_view(frame)
    if len(findings):
        with st.expander(f"Published finding scores ({len(findings):,})",
                         icon=":material/table:", expanded=not len(studies)):
            st.dataframe(findings, hide_index=True, width="stretch", column_config=config,
                         key="rep_summary_findings_table")
            table_downloads(findings, "summary_findings", runs=[summary_run],
                            key="rep_summary_findings_dl")
            st.caption("As published: a finding score is never pooled into a study or "
                       "configuration score here (neither pooling rule rebuilds the published "
                       "study PAS).")


# The demo opens on the published (real) results; otherwise the per-test runs come first.
sections = [(test_runs, _tests_section), (summary_runs, _summary_section)]
for loaded, section in (sections[::-1] if state.demo() else sections):
    if loaded:
        section()
urlstate.publish()
