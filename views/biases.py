"""Cognitive biases: fingerprint, BMS curves, domain heatmap, human alignment, calibration."""

import streamlit as st

from kbench_app import bias as bias_view
from kbench_app import bias_reports, kit, state, urlstate
from kbench_app.compare import compare_panel
from kbench_app.downloads import figure_downloads, table_downloads
from kbench_app.ui import plain, shown
from kbench_core import figures, kahne

st.title("Cognitive biases")
registry = state.registry()
runs = {name: run for name, run in registry.runs.items() if run.kind == "bias"}
reports = {name: run for name, run in registry.runs.items() if run.kind == "bias_summary"}
if not runs and not reports:
    st.info("No cognitive-bias run is loaded. Add one on the Runs page: KahneBench's results "
            "JSON (trials) or its fingerprint reports (fingerprint_<model>.json).")
    st.stop()
if runs and reports:
    sources = ["trials", "reports"]
    urlstate.prepare("bias_source", "one", "reports" if state.demo() else "trials", sources)
    source = st.radio("Show", sources, key="bias_source", horizontal=True,
                      format_func={"trials": f"Trial runs ({len(runs)})",
                                   "reports": f"Fingerprint reports ({len(reports)})"}.get)
else:
    source = "reports" if reports else "trials"
if source == "reports":
    bias_reports.render(reports)
    urlstate.publish()
    st.stop()
urlstate.warn_missing_runs(list(runs), "bias_runs")


def _runs_changed() -> None:
    # New runs bring new models and biases: select all of them again.
    for key in ("bias_models", "bias_categories", "bias_biases"):
        kit.forget(key)


urlstate.prepare("bias_runs", "many", list(runs)[:1], list(runs))
chosen = st.multiselect("Runs", list(runs), key="bias_runs",
                        on_change=_runs_changed,
                        help="Several runs are viewed together; a model name found in more "
                             "than one run is shown as 'model (run)'.")
if not chosen:
    st.warning("Choose at least one run.")
    urlstate.stop()
trials = state.combined_runs([runs[name] for name in chosen])
all_models = sorted(map(str, trials["model"].unique()))
has_categories = "category" in trials and trials["category"].notna().any()
left, middle, right = st.columns([2, 2, 3])
urlstate.prepare("bias_models", "many", all_models, all_models)
models = left.multiselect("Models", all_models, key="bias_models")
if has_categories:
    all_categories = sorted(map(str, trials["category"].dropna().unique()))
    urlstate.prepare("bias_categories", "many", all_categories, all_categories)
    categories = middle.multiselect(
        "Bias families", all_categories, key="bias_categories",
        on_change=lambda: kit.forget("bias_biases"))  # offer the family's biases
    in_family = trials["category"].astype(str).isin(categories)
    offered = sorted(map(str, trials.loc[in_family, "bias"].unique()))
else:
    middle.caption("The run gives no bias families (`category` column).")
    offered = sorted(map(str, trials["bias"].unique()))
urlstate.prepare("bias_biases", "many", offered, offered)
biases = right.multiselect(f"Biases ({len(offered)}; type to search)", offered,
                           key="bias_biases")
urlstate.prepare("bias_cap", "bool", True)
urlstate.prepare("bias_std", "one", "population", ["population", "sample"])
urlstate.prepare("bias_relative", "bool", False)
urlstate.prepare("bias_threshold", "float", 0.1, low=0.01, high=0.5)
urlstate.prepare("bias_bootstrap", "bool", False)
with st.expander("Metric options", icon=":material/tune:"):
    c1, c2, c3, c4, c5 = st.columns(5)
    capped = c1.toggle("Cap magnitudes at 1 (seed)", key="bias_cap",
                       help="KahneBench caps each intensity's magnitude at 1; lift the cap to "
                            "tell strong biases apart (review B2).")
    std = c2.radio("BCI standard deviation", ["population", "sample"], key="bias_std",
                   help="Population is the review's fix; sample reproduces the seed.")
    relative = c3.toggle("HAS threshold relative to the human rate", key="bias_relative")
    threshold = c4.slider("HAS threshold", 0.01, 0.5, step=0.01, key="bias_threshold")
    bootstrap = c5.toggle("Bootstrap BMS intervals", key="bias_bootstrap",
                          help="1000 resamples of the trials within each condition; cached, "
                               "so only the first view waits.")
if not models or not biases:
    st.warning("Choose at least one model and one bias.")
    urlstate.stop()

selected = trials[trials["model"].isin(models) & trials["bias"].isin(biases)]
known, total = kahne.scored_share(selected)
if known == 0:
    st.warning(f"Nothing to show for this selection. {kahne.UNSCORED_ADVICE}",
               icon=":material/warning:")
    urlstate.stop()
if known < total:
    st.caption(f":material/info: {total - known:,} of {total:,} responses have no score "
               "(unknown); every metric leaves them out, and the fingerprint reports each "
               "bias's unknown rate.")
content_hash = "+".join(runs[name].content_hash for name in chosen)
options = dict(cap=1.0 if capped else None, std=std, threshold=threshold, relative=relative,
               ci="bootstrap" if bootstrap else None)
fp, alignment, calibration = state.cached_fingerprint("+".join(chosen), content_hash,
                                                      selected, **options)
colors = state.model_colors(all_models)

st.subheader("Fingerprint")
st.caption("Per model: susceptibility = mean BMS over the chosen biases; the most susceptible "
           "and most resistant biases leave out those with more than half unknown scores.")
summary = fp.models.copy()
for col in ("most_susceptible", "most_resistant", "human_like", "ai_specific"):
    summary[col] = summary[col].map(", ".join)
summary.insert(2, "susceptibility_ci", bias_view.interval_text(summary["susceptibility_low"],
                                                               summary["susceptibility_high"]))
summary = summary.drop(columns=["susceptibility_low", "susceptibility_high"])
summary = summary.merge(bias_view.susceptibility_ranks(fp.biases), on="model", how="left")
summary = summary[["rank", "rank_text", *[c for c in summary if c not in ("rank", "rank_text")]]]
summary = summary.sort_values(["rank", "model"], na_position="last")
st.dataframe(shown(summary), hide_index=True, width="stretch", key="bias_summary_table",
             column_config={
                 "rank": st.column_config.NumberColumn(
                     "Rank (1 = least biased)", pinned=True,
                     help="By mean BMS over the chosen biases: 1 = least biased"),
                 "rank_text": st.column_config.TextColumn(
                     "Rank [95%]", help="Bootstrap over biases (1000 resamples): overlapping "
                                        "ranges mean the run cannot order those models; "
                                        "'few biases': fewer than 30 biases behind the rank"),
                 "model": st.column_config.TextColumn("Model", pinned=True),
                 "susceptibility": st.column_config.NumberColumn("Susceptibility",
                                                                 format="%.4g"),
                 "susceptibility_ci": st.column_config.TextColumn(
                     "95% CI", help="t interval over the chosen biases"),
                 "n_biases": st.column_config.NumberColumn("Biases"),
                 "most_susceptible": "Most susceptible",
                 "most_resistant": "Most resistant",
                 "human_like": "Human-like (alignment > 0.8)",
                 "ai_specific": "More biased than humans",
             })
table = bias_view.fingerprint_view(fp.biases)
st.dataframe(table, hide_index=True, width="stretch", height=360, key="bias_fingerprint_table",
             column_config=bias_view.fingerprint_columns(table))
chosen_runs = [runs[name] for name in chosen]
table_downloads(fp.biases, "fingerprint", runs=chosen_runs, options=options,
                best={"bms": "min", "alignment": "max"}, key="bias_fingerprint_dl")
with st.expander("Fingerprint as a heatmap", icon=":material/grid_on:"):
    heat = figures.fingerprint_heatmap(fp.biases)
    st.plotly_chart(heat, key="bias_fingerprint_chart")
    figure_downloads(heat, "fingerprint_heatmap", runs=chosen_runs, options=options,
                     key="bias_fingerprint_chart_dl")
weak = sorted(set(fp.biases.loc[fp.biases["weakly_supported"].fillna(False), "bias"]))
if weak:
    st.caption(":material/warning: Weakly supported human baselines (treat their HAS as "
               "provisional): " + plain(", ".join(weak)))

st.subheader("Bias by trigger intensity")
c1, c2 = st.columns([3, 1])
urlstate.prepare("bias_curve_bias", "one", biases[0], biases)
curve_bias = c2.selectbox("Bias", biases, key="bias_curve_bias")
urlstate.prepare("bias_curve_y", "one", "magnitude", ["magnitude", "mean"])
y_axis = c2.radio("Show", ["magnitude", "mean"], key="bias_curve_y",
                  format_func={"magnitude": "Magnitude (BMS)", "mean": "Mean score"}.get)
curve = kahne.bms(selected[selected["bias"] == curve_bias], cap=options["cap"])
curve_fig = figures.bms_curves(curve, y=y_axis, colors=colors,
                               title=f"{curve_bias}: bias by trigger intensity")
c1.plotly_chart(curve_fig, key="bias_curves_chart")
with c1:
    figure_downloads(curve_fig, f"bms_curves-{curve_bias}-{y_axis}", runs=chosen_runs,
                     options=options, key="bias_curves_dl")
c2.caption("Mean score: treatment mean per intensity with its 95% interval (band) and the "
           "control mean (dotted). Magnitude: the weighted gap that enters BMS.")

st.subheader("Consistency across domains (BCI)")
c1, c2 = st.columns([1, 3])
urlstate.prepare("bias_heat_rows", "one", "bias", ["bias", "model"])
rows_by = c1.radio("Rows", ["bias", "model"], key="bias_heat_rows",
                   format_func={"bias": "Biases of one model", "model": "Models on one bias"}.get)
if rows_by == "bias":
    heat_pick = c1.selectbox("Model", models, key="bias_heat_model")
    cells = kahne.domain_means(selected[selected["model"] == heat_pick])
else:
    heat_pick = c1.selectbox("Bias", biases, key="bias_heat_bias")
    cells = kahne.domain_means(selected[selected["bias"] == heat_pick])
heat_fig = figures.bci_heatmap(cells, rows=rows_by,
                               title=f"{heat_pick}: mean treatment score by domain")
c2.plotly_chart(heat_fig, key="bias_heatmap_chart")
with c2:
    figure_downloads(heat_fig, f"bci_heatmap-{heat_pick}", runs=chosen_runs, options=options,
                     key="bias_heatmap_dl")

st.subheader("Human alignment and calibration")
c1, c2 = st.columns(2)
has_fig = figures.has_chart(alignment)
cas_fig = figures.cas_bars(calibration, colors=colors)
c1.plotly_chart(has_fig, key="bias_has_chart")
c2.plotly_chart(cas_fig, key="bias_cas_chart")
with c1:
    figure_downloads(has_fig, "has_chart", runs=chosen_runs, options=options,
                     key="bias_has_dl")
with c2:
    figure_downloads(cas_fig, "cas_bars", runs=chosen_runs, options=options,
                     key="bias_cas_dl")

with st.expander("Human baselines and their sources", icon=":material/menu_book:"):
    shipped = kahne.human_baselines()
    st.dataframe(shipped[shipped["bias"].isin(biases)], hide_index=True, width="stretch",
                 column_config={"human_rate": st.column_config.NumberColumn("Human rate",
                                                                            format="%.2f")})
    st.caption("KahneBench's HUMAN_BASELINES (MIT). Sources and assessments are those of the "
               "metrics review's plausibility check; rates without a source are uncited there.")

compare_panel(selected, values={"bias score": "score"}, group="bias", cluster="bias",
              key="bias_cmp", runs=chosen_runs, colors=colors, noun="items",
              selection=(tuple(models), tuple(biases)))
st.caption("Items are bias × domain × condition × intensity × method × trial, averaged over "
           "repeats; errors are clustered by bias (items of one bias share its prompts).")

st.subheader("Responses")
c1, c2, c3 = st.columns(3)
drill_model = c1.selectbox("Model", models, key="bias_drill_model")
drill_bias = c2.selectbox("Bias", biases, key="bias_drill_bias")
search = c3.text_input("Search responses", key="bias_drill_search",
                       placeholder="words in the prompt, response or answer")
rows = selected[(selected["model"] == drill_model) & (selected["bias"] == drill_bias)]
if search:
    text_columns = [c for c in ("prompt", "response", "answer") if c in rows]
    if text_columns:
        hit = rows[text_columns].astype(str).apply(
            lambda col: col.str.contains(search, case=False, regex=False)).any(axis=1)
        rows = rows[hit]
st.caption(f"{len(rows):,} responses; text is shown exactly as uploaded.")
st.dataframe(rows, hide_index=True, width="stretch", height=300, key="bias_responses_table")

urlstate.publish()
