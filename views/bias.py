"""Cognitive biases: fingerprint, BMS curves, domain heatmap, human alignment, calibration."""

import streamlit as st

from kbench_app import bias as page
from kbench_app import bias_reports, cache, kit, state
from kbench_app.compare import run_compare_panel
from kbench_app.ui import plain
from kbench_core import figures, kahne
from kbench_core.engines.rows import DRILL_LIMIT
from kbench_core.families.bias import FingerprintOptions, susceptibility_table

K = page.Keys
EMPTY = ("No cognitive-bias run is loaded. Add one on the Runs page: KahneBench's results JSON "
         "(trials) or its fingerprint reports (fingerprint_<model>.json).")

st.title("Cognitive biases")
trial_runs = kit.runs_of(["bias"])
report_runs = kit.runs_of(["bias_summary"])
if not trial_runs and not report_runs:
    st.info(EMPTY)
    st.stop()
source = "reports" if report_runs else "trials"
if trial_runs and report_runs:
    # the demo, reports just uploaded (and no trials), or reports the user's own runs and
    # trials only bundled samples: the reports first
    focused = state.focused_kinds()
    samples = state.sample_names()
    own = {kind for kind, named in (("bias", trial_runs), ("bias_summary", report_runs))
           if any(name not in samples for name in named)}
    reports_first = state.demo() or ("bias_summary" in focused and "bias" not in focused) \
        or (not focused and own == {"bias_summary"})
    source = kit.radio("Show", ["trials", "reports"], key=K.SOURCE, horizontal=True,
                       default="reports" if reports_first else "trials",
                       format_func={"trials": f"Trial runs ({len(trial_runs)})",
                                    "reports": f"Fingerprint reports ({len(report_runs)})"}.get)
if source == "reports":
    bias_reports.render()
    kit.done()
    st.stop()

shown = kit.open_runs(None, ["bias"], key=K.RUNS, empty=EMPTY,
                      resets=(K.MODELS, K.CATEGORIES, K.BIASES, K.GROUP))
# Runs of different biases: each ranked on its own, unless the user asks
runs, trials, together = page.pick_run_group(shown.runs, shown.frame, key=K.GROUP,
                                             value="score",
                                             resets=(K.MODELS, K.CATEGORIES, K.BIASES))
all_models = sorted(map(str, trials["model"].unique()))
left, middle, right = st.columns([2, 2, 3])
models = kit.model_picker("Models", all_models, key=K.MODELS, frame=trials, kind="bias",
                         container=left, runs=runs)
if "category" in trials and trials["category"].notna().any():
    all_categories = sorted(map(str, trials["category"].dropna().unique()))
    categories = kit.multiselect("Bias families", all_categories, key=K.CATEGORIES,
                                 default=all_categories, container=middle,
                                 resets=(K.BIASES,))  # then offer the families' biases
    offered = cache.cached(page.biases_in, trials, runs=runs,
                           categories=tuple(categories))  # (8 ms a script run on 1M rows)
else:
    middle.caption("The run gives no bias families (`category` column).")
    offered = sorted(map(str, trials["bias"].unique()))
biases = kit.multiselect(f"Biases ({len(offered)}; type to search)", offered, key=K.BIASES,
                         default=offered, container=right)
with st.expander("Metric options", icon=":material/tune:"):
    c1, c2, c3, c4, c5 = st.columns(5)
    options = FingerprintOptions(
        capped=kit.toggle("Cap magnitudes at 1 (KahneBench)", key=K.CAP, default=True, container=c1,
                          help="KahneBench caps each intensity's magnitude at 1; lift the cap "
                               "to tell strong biases apart."),
        std=kit.radio("BCI standard deviation", ["population", "sample"], key=K.STD,
                      container=c2,
                      help="Population: the corrected formula; sample: KahneBench's own."),
        relative=kit.toggle("HAS threshold relative to the human rate", key=K.RELATIVE,
                            container=c3),
        threshold=kit.slider("HAS threshold", 0.01, 0.5, key=K.THRESHOLD, default=0.1,
                             step=0.01, container=c4),
        bootstrap=kit.toggle("Bootstrap BMS intervals", key=K.BOOTSTRAP, container=c5,
                             help="1000 resamples of the trials within each condition; "
                                  "cached, so only the first view waits."))
if not models or not biases:
    st.warning("Choose at least one model and one bias.")
    kit.stop()

selected = cache.cached(page.chosen_trials, trials, runs=runs,
                        selection=(tuple(models), tuple(biases)), models=tuple(models),
                        biases=tuple(biases))
known, total = kahne.scored_share(selected)
if known == 0:
    st.warning(f"Nothing to show for this selection. {kahne.UNSCORED_ADVICE}",
               icon=":material/warning:")
    kit.stop()
if known < total:
    st.caption(f":material/info: {total - known:,} of {total:,} responses have no score "
               "(unknown); every metric leaves them out, and the fingerprint reports each "
               "bias's unknown rate.")
selection = (tuple(models), tuple(biases))
where = dict(runs=runs, selection=selection)
# Computed once per selection with the default HAS threshold; a new threshold only re-labels
# the directions (kahne.with_threshold), so its slider does not recompute the fingerprint.
fp = cache.cached(kahne.fingerprint, selected, **where, spinner="Computing the fingerprint...",
                  **{**options.fingerprint(), "threshold": 0.1, "relative": False})
if (options.threshold, options.relative) != (0.1, False):  # (at 0.1 it is fp itself)
    fp = cache.cached(kahne.with_threshold, fp, runs=runs, selection=(selection, options),
                      threshold=options.threshold, relative=options.relative)
provenance = options.provenance()
colors = state.model_colors(all_models)

st.subheader("Fingerprint")
st.caption("Per model: susceptibility = mean BMS over the chosen biases every chosen model "
           "has a BMS for (the rank uses the same biases); the most susceptible and most "
           "resistant biases leave out those with more than half unknown scores.")
if together:
    st.caption(together)
summary = cache.cached(susceptibility_table, fp, runs=runs, selection=(*selection, options))
# Views and figures are cached with the numbers: on a 1M-row run building them costs more than
# a rerun may take.
cached_view = dict(runs=runs, selection=(*selection, options))
# What depends on the cap alone (BMS and its counts) is keyed on it alone, so the HAS
# threshold or the BCI deviation never redraws the curves or the BMS heatmap.
by_cap = dict(runs=runs, selection=(*selection, options.cap, options.bootstrap))
kit.table(summary, "susceptibility", view=cache.cached(page.summary_view, summary, **cached_view),
          config=page.SUMMARY_COLUMNS, runs=runs, key="bias_summary_table", options=provenance,
          best={"susceptibility": "min"})
# the model rate's interval text depends on the selection alone: written once for it
rate_ci = cache.cached(page.rate_interval_text, fp.biases, runs=runs, selection=selection)
table = cache.cached(page.fingerprint_view, fp.biases, rate_ci, **cached_view)
kit.table(fp.biases, "fingerprint", view=table, config=page.fingerprint_columns(table),
          runs=runs, key="bias_fingerprint_table", options=provenance, height=360,
          best={"bms": "min", "alignment": "max"})
# On a big run the closed expander draws nothing: the heatmap is built once it is opened
# (0.02-0.04 s of every change of models or cap on 1M rows otherwise).
big = kahne.rows_of(selected) > kit.BIG_RUN_ROWS
heat_box = st.expander("Fingerprint as a heatmap", icon=":material/grid_on:",
                       **(dict(key="bias_fingerprint_open", on_change="rerun") if big else {}))
if not big or heat_box.open:
    with heat_box:
        kit.chart(cache.cached(figures.fingerprint_heatmap, fp.biases, **by_cap),
                  "fingerprint_heatmap", runs=runs,
                  key="bias_fingerprint", options=provenance)
weak = sorted(set(fp.biases.loc[fp.biases["weakly_supported"].fillna(False), "bias"]))
if weak:
    st.caption(":material/warning: Weakly supported human baselines (treat their HAS as "
               "provisional): " + plain(", ".join(weak)))

st.subheader("Bias by trigger intensity")
c1, c2 = st.columns([3, 1])
curve_bias = kit.select("Bias", biases, key=K.CURVE_BIAS, container=c2)
y_axis = kit.radio("Show", ["magnitude", "mean"], key=K.CURVE_Y, container=c2,
                   format_func={"magnitude": "Magnitude (BMS)", "mean": "Mean score"}.get)
# keyed on what one bias's curves depend on: the chosen models (not the other biases), and
# the cap only for the magnitudes (the mean scores are not capped)
kit.chart(cache.cached(page.curve_figure, selected, runs=runs, selection=tuple(models),
                       bias=curve_bias, y=y_axis,
                       cap=options.cap if y_axis == "magnitude" else None, colors=colors),
          f"bms_curves-{curve_bias}-{y_axis}", runs=runs, key="bias_curves",
          options=provenance, container=c1)
c2.caption("Mean score: treatment mean per intensity with its 95% interval (band) and the "
           "control mean (dotted). Magnitude: the weighted gap that enters BMS.")

st.subheader("Consistency across domains (BCI)")
c1, c2 = st.columns([1, 3])
rows_by = kit.radio("Rows", ["bias", "model"], key=K.HEAT_ROWS, container=c1,
                    format_func={"bias": "Biases of one model",
                                 "model": "Models on one bias"}.get)
if rows_by == "bias":
    heat_pick = kit.select("Model", models, key=K.HEAT_MODEL, container=c1)
else:
    heat_pick = kit.select("Bias", biases, key=K.HEAT_BIAS, container=c1)
# keyed on what the heatmap shows: one model's chosen biases, or one bias's chosen models
# (another set of models never redraws a model's heatmap)
kit.chart(cache.cached(page.domain_figure, selected, runs=runs,
                       selection=tuple(biases if rows_by == "bias" else models),
                       rows_by=rows_by, pick=heat_pick),
          f"bci_heatmap-{heat_pick}", runs=runs, key="bias_heatmap", options=provenance,
          container=c2)

st.subheader("Human alignment and calibration")
c1, c2 = st.columns(2)
# HAS and CAS read the same rows: reduced to integer codes once for both
prepared = cache.cached(kahne.prepare, selected, **where)
alignment = cache.cached(kahne.has, prepared, **where, threshold=options.threshold,
                         relative=options.relative)
# keyed on what HAS depends on: the BMS cap or the BCI deviation never redraws it
kit.chart(cache.cached(figures.has_chart, alignment, runs=runs,
                       selection=(*selection, options.threshold, options.relative)),
          "has_chart", runs=runs,
          key="bias_has",
          options=provenance, container=c1)
kit.chart(cache.cached(page.calibration_figure, prepared, **where, colors=colors),
          "cas_bars", runs=runs, key="bias_cas", options=provenance, container=c2)
with st.expander("Human baselines and their sources", icon=":material/menu_book:"):
    shipped = kahne.human_baselines()
    st.dataframe(shipped[shipped["bias"].isin(biases)], hide_index=True, width="stretch",
                 column_config={"human_rate": st.column_config.NumberColumn("Human rate",
                                                                            format="%.2f")})
    st.caption("KahneBench's HUMAN_BASELINES (MIT). Sources and assessments are those of the "
               "plausibility check in docs/metrics/bias.md; rates without a source are uncited.")

run_compare_panel(selected, "bias", key=K.COMPARE, runs=runs, selection=selection,
                  colors=colors)
st.caption("Each bias is one unit: its treatment − control difference (mean treatment score "
           "minus mean control score, every intensity pooled; debiasing rows left out), the "
           "quantity BMS is built from. Models are paired by bias; a bias without control or "
           "treatment scores is left out.")

st.subheader("Responses")
c1, c2, c3 = st.columns(3)
drill_model = kit.select("Model", models, key=K.DRILL_MODEL, container=c1, in_url=False)
drill_bias = kit.select("Bias", biases, key=K.DRILL_BIAS, container=c2, in_url=False)
search = kit.text("Search responses", key=K.DRILL_SEARCH, container=c3,
                  placeholder="words in the prompt, response or answer")
# keyed on the runs and the model × bias alone: another set of models, biases or options
# never fetches the text again
drill = cache.cached(page.drill_down, selected, runs, runs=runs, model=drill_model,
                     bias=drill_bias, search=search)
if drill.capped:
    st.caption(f"First {len(drill.frame):,} of {drill.total:,} responses (each run reduced by "
               f"an engine gives its first {DRILL_LIMIT:,} in file order, fetched from the "
               "saved file); text is shown exactly as uploaded.")
else:
    st.caption(f"{drill.total:,} responses; text is shown exactly as uploaded.")
st.dataframe(drill.frame, hide_index=True, width="stretch", height=300,
             key="bias_responses_table")
kit.done()
