"""Replication: human against agent effects (ECS), agreement of replication decisions (PAS),
published study summaries, and model comparison."""

import streamlit as st

from kbench_app import cache, kit, state
from kbench_app import replication as page
from kbench_app.compare import run_compare_panel
from kbench_app.ui import plain
from kbench_core import replication
from kbench_core.families import replication as family
from kbench_core.families.replication import ReplicationOptions
from kbench_core.figures import replication as rep_figures

K = page.Keys
st.title("Replication")
test_runs, summary_runs = kit.runs_of(["replication"]), kit.runs_of(["replication_summary"])
if not test_runs and not summary_runs:
    st.info("No replication run is loaded. Add one on the Runs page (a per-test table, "
            "HumanStudy-Bench's effect list JSON or its simple_studies.csv).")
    kit.stop()
# The demo opens on the published (real) results, and so does the page after an upload of
# published results (issue 37.5), or when the user's own runs (uploads, files given to
# `kbench app`, the workspace) are published results and the per-test runs only bundled
# samples; otherwise the per-test runs come first. The published section is drawn first
# into its place, so a stop in the per-test one keeps it.
first, second = st.container(), st.container()
just = kit.focused_kinds()
samples = state.sample_names()
own = {kind for kind, named in (("replication", test_runs), ("replication_summary",
                                                             summary_runs))
       if any(name not in samples for name in named)}
published_first = "replication" not in just and (
    "replication_summary" in just or state.demo() or own == {"replication_summary"})
tests_box, summary_box = (second, first) if published_first else (first, second)

if summary_runs:
    with summary_box:
        st.subheader("Published results")
        # of the user's published files, one with study scores opens the section (it has a
        # leaderboard; simple_findings.csv alone has only finding rows)
        chosen = kit.open_runs(None, ["replication_summary"], key=K.SUMMARY_RUN, single=True,
                               resets=(K.SUMMARY_METRIC,), empty="",
                               prefer=lambda run: len(replication.study_rows(run.frame)) > 0)
        runs, frame = chosen.runs, chosen.runs[0].frame
        studies = replication.study_rows(frame)
        if len(studies):
            board = cache.cached(replication.summary_leaderboard, frame, runs=runs,
                                 spinner="Ranking the configurations...")
            kit.chart(cache.cached(rep_figures.summary_leaderboard, board, runs=runs),
                      "summary_leaderboard", runs=runs, key="rep_summary")
            view, config = page.summary_view(board)
            kit.table(board, "summary_leaderboard", view=view, config=config, runs=runs,
                      key="rep_summary_table", best={
                          "config_pas": "max", "config_ecs": "max", "mean_study_pas": "max",
                          "mean_study_ecs": "max", "cost": "min"})
            published = board["config_pas"].notna().any() or board["config_ecs"].notna().any()
            st.caption(("PAS (published) and ECS (published) are the benchmark's own "
                        "configuration-level numbers. " if published else
                        "This file has no configuration-level scores, so none is shown under "
                        "the published names. ")
                       + "'Mean of per-study' columns are computed here from the published "
                         "study values, with Wilson-type intervals over studies (a mean "
                         "of bounded values over few studies); the published ECS pools "
                         "every test, so it differs from the mean of the per-study ECS. Cost "
                         "and tokens are totals over the studies.")
            metrics = [m for m in ("pas", "ecs") if m in studies and studies[m].notna().any()]
            if metrics:
                metric = kit.radio("Heat table", metrics, key=K.SUMMARY_METRIC,
                                   horizontal=True, format_func=str.upper)
                kit.chart(cache.cached(rep_figures.study_heatmap, studies, runs=runs,
                                       value=metric, zmin=0.0 if metric == "pas" else -1.0),
                          f"summary_{metric}_heatmap", runs=runs, key="rep_summary_heat")
            if "cost" in studies:
                with st.expander("Cost per study and configuration (US$)",
                                 icon=":material/payments:"):
                    view, config = page.cost_view(studies)
                    st.dataframe(view, hide_index=True, width="stretch",
                                 key="rep_summary_cost_table", column_config=config)
        findings, config = page.findings_view(frame)
        if len(findings) and not len(studies):  # e.g. simple_findings.csv alone
            st.info("This run holds finding scores only, so there is no leaderboard or heat "
                    "table: those need the study scores of HumanStudy-Bench's "
                    "simple_studies.csv or simple_results.json.", icon=":material/info:")
        if len(findings):
            with st.expander(f"Published finding scores ({len(findings):,})",
                             icon=":material/table:", expanded=not len(studies)):
                kit.table(findings, "summary_findings", view=findings, config=config,
                          runs=runs, key="rep_summary_findings_table")
                st.caption("As published: a finding score is never pooled into a study or "
                           "configuration score here (neither pooling rule rebuilds the "
                           "published study PAS).")

if not test_runs:
    kit.stop()
with tests_box:
    if published_first and summary_runs:  # its own heading, not under the published ones
        st.subheader("Per-test runs")
    shown = kit.open_runs(None, ["replication"], key=K.RUNS, resets=(K.MODELS,), empty="")
    runs = shown.runs
    tests = cache.cached(replication.prepare_tests, shown.frame, runs=runs,
                         spinner="Preparing the tests...")
    all_models = sorted(map(str, tests["model"].unique()))
    models = kit.model_picker("Models (agent configurations)", all_models, key=K.MODELS,
                              frame=tests, kind="replication", runs=runs)
    with st.expander("Metric options", icon=":material/tune:"):
        c1, c2, c3, c4, c5 = st.columns(5)
        options = ReplicationOptions(
            weighting=kit.radio("ECS test weights", ["structure", "equal"], key=K.WEIGHTING,
                                container=c1, help=page.HELP_WEIGHTING),
            normalize_weights=kit.toggle("Normalised (Lin)", key=K.NORMALIZE,
                                         default=True, container=c2, help=page.HELP_NORMALIZE),
            ci=kit.radio("Intervals", ["analytic", "bootstrap"], key=K.CI, container=c3,
                         help=page.HELP_CI),
            finding_weights=kit.radio("PAS test weights", ["equal", "n_eff"] if "n_eff" in tests
                                      else ["equal"], key=K.FINDING_WEIGHTS, container=c4,
                                      help=page.HELP_FINDING_WEIGHTS),
            study_pooling=kit.radio("PAS over findings", ["fisher", "mean"], key=K.POOLING,
                                    container=c5, help=page.HELP_POOLING))
    if not models:
        st.warning("Choose at least one model.")
        kit.stop()
    selection = tuple(models)
    selected = cache.cached(page.chosen_tests, tests, runs=runs, models=selection)
    provenance = options.provenance()
    ecs = cache.cached(family.ecs_tables, selected, runs=runs, selection=selection,
                       spinner="Computing ECS...", options=options)

    # a published configuration ECS (the run's own config_ecs, or a loaded results file's)
    # is shown beside kbench's recomputed value, each under its own name
    published = cache.cached(replication.published_ecs, selected,
                             [run.frame for run in summary_runs.values()],
                             runs=[*runs, *summary_runs.values()], selection=selection)

    st.subheader("Human against agent effects (ECS)")
    c1, c2 = st.columns([4, 1])
    color_by = kit.radio("Colour by", ["study", "domain"] if "domain" in selected else ["study"],
                         key=K.COLOR, container=c2)
    panels = kit.toggle("One panel per model", key=K.PANELS, default=len(models) <= 4,
                        container=c2)
    c2.caption(page.SCATTER_CAPTION)
    points = cache.cached(replication.scatter_points, selected, runs=runs, selection=selection,
                          weighting=options.weighting)
    scatter = cache.cached(rep_figures.effect_scatter, points, ecs["overall"], runs=runs,
                           selection=(selection, options), color_by=color_by, panels=panels)
    kit.chart(scatter, "effect_scatter", runs=runs, key="rep_scatter", options=provenance,
              container=c1)
    for tab, level in zip(st.tabs(["Overall", "Per domain", "Per study"]), family.ECS_LEVELS,
                          strict=True):
        if level not in ecs:
            tab.caption("The run has no domain column.")
            continue
        view, config = cache.cached(page.ecs_view, ecs[level], published,
                                    runs=[*runs, *summary_runs.values()],
                                    selection=(selection, options, level))
        kit.table(ecs[level], f"ecs_{level}", view=view, config=config, runs=runs,
                  key=f"rep_ecs_{level}_table", best={"ecs": "max"}, options=provenance,
                  container=tab)
    st.caption(page.ecs_note(options))

    st.subheader("Agreement of replication decisions (PAS)")
    result = cache.cached(family.pas_result, selected, runs=runs, selection=selection,
                          spinner="Computing PAS...", options=options)
    if result.model.empty:
        st.info(page.pas_unavailable(selected))
    else:
        for note in result.notes:
            st.warning(plain(note) + ".", icon=":material/warning:")
        board = family.pas_models(result)
        view, config = page.pas_view(board)
        kit.table(board, "pas_models", view=view, config=config, runs=runs,
                  key="rep_pas_models_table", best={"pas": "max"}, options=provenance)
        st.caption(page.PAS_CAPTION)
        study_tab, finding_tab = st.tabs(["Study × model", "Per finding"])
        kit.chart(cache.cached(rep_figures.study_heatmap, result.study, runs=runs,
                               selection=(selection, options.pas()), value="pas"),
                  "pas_study_heatmap", runs=runs, key="rep_pas_heat", options=provenance,
                  container=study_tab)
        view, config = page.pas_grid_view(family.pas_study_grid(result.study))
        kit.table(result.study, "pas_studies", view=view, config=config, runs=runs,
                  key="rep_pas_grid_table", best={"pas": "max"}, options=provenance,
                  container=study_tab)
        view, config = page.finding_view(result.finding)
        kit.table(result.finding, "pas_findings", view=view, config=config, runs=runs,
                  key="rep_pas_findings_table", options=provenance, container=finding_tab)

    run_compare_panel(selected, "replication", key=K.COMPARE, runs=list(runs),
                      selection=selection, colors=state.model_colors(all_models))
kit.done()
