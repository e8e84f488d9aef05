"""Cognitive biases: BMS curves, domain heatmap, human alignment, calibration, fingerprint."""

import streamlit as st

from kbench_app import state
from kbench_app.ui import plain
from kbench_core import figures, kahne

st.title("Cognitive biases")
registry = state.registry()
runs = {name: run for name, run in registry.runs.items() if run.kind == "bias"}
if not runs:
    st.info("No cognitive-bias run is loaded. Add one on the Runs page.")
    st.stop()

run_name = st.selectbox("Run", list(runs), key="bias_run")
trials = runs[run_name].frame
all_models = sorted(map(str, trials["model"].unique()))
all_biases = sorted(map(str, trials["bias"].unique()))
left, right = st.columns([2, 3])
models = left.multiselect("Models", all_models, default=all_models, key="bias_models")
biases = right.multiselect("Biases (type to search)", all_biases, default=all_biases,
                           key="bias_biases")
with st.expander("Metric options"):
    c1, c2, c3, c4 = st.columns(4)
    capped = c1.toggle("Cap magnitudes at 1 (seed)", value=True, key="bias_cap")
    std = c2.radio("BCI standard deviation", ["population", "sample"], key="bias_std",
                   help="Population is the review's fix; sample reproduces the seed.")
    relative = c3.toggle("HAS threshold relative to the human rate", key="bias_relative")
    threshold = c4.slider("HAS threshold", 0.01, 0.5, 0.1, 0.01, key="bias_threshold")
if not models or not biases:
    st.warning("Choose at least one model and one bias.")
    st.stop()

selected = trials[trials["model"].isin(models) & trials["bias"].isin(biases)]
fp = state.cached_fingerprint(run_name, runs[run_name].content_hash, selected,
                              cap=1.0 if capped else None, std=std, threshold=threshold,
                              relative=relative)
colors = figures.model_colors(all_models)

st.subheader("Fingerprint")
summary = fp.models.copy()
for col in ("most_susceptible", "most_resistant", "human_like", "ai_specific"):
    summary[col] = summary[col].map(", ".join)
st.dataframe(summary, hide_index=True, width="stretch",
             column_config={"susceptibility": st.column_config.NumberColumn(format="%.3f")})
st.dataframe(fp.biases, hide_index=True, width="stretch", height=320)
st.download_button("Download fingerprint (CSV)", fp.biases.to_csv(index=False),
                   file_name=f"{run_name}_fingerprint.csv", mime="text/csv")

st.subheader("Bias by trigger intensity")
c1, c2 = st.columns([3, 1])
curve_bias = c2.selectbox("Bias", biases, key="bias_curve_bias")
y_axis = c2.radio("Show", ["magnitude", "mean"], key="bias_curve_y",
                  format_func={"magnitude": "Magnitude (BMS)", "mean": "Mean score"}.get)
curve = kahne.bms(selected[selected["bias"] == curve_bias], cap=1.0 if capped else None)
c1.plotly_chart(figures.bms_curves(curve, y=y_axis, colors=colors,
                                   title=f"{curve_bias}: bias by trigger intensity"),
                key="bias_curves_chart")

st.subheader("Consistency across domains (BCI)")
heat_model = st.selectbox("Model", models, key="bias_heat_model")
cells = kahne.domain_means(selected[selected["model"] == heat_model])
st.plotly_chart(figures.bci_heatmap(cells, title=f"{heat_model}: mean treatment score by "
                                                 "domain"), key="bias_heatmap_chart")

c1, c2 = st.columns(2)
alignment = kahne.has(selected, threshold=threshold, relative=relative)
c1.plotly_chart(figures.has_chart(alignment), key="bias_has_chart")
c2.plotly_chart(figures.cas_bars(kahne.cas(selected), colors=colors), key="bias_cas_chart")
weak = sorted(set(alignment.loc[alignment["weakly_supported"], "bias"]))
if weak:
    st.caption("Weakly supported human baselines (treat as placeholders): "
               + plain(", ".join(weak)))

st.subheader("Responses")
c1, c2, c3 = st.columns(3)
drill_model = c1.selectbox("Model", models, key="bias_drill_model")
drill_bias = c2.selectbox("Bias", biases, key="bias_drill_bias")
search = c3.text_input("Search responses", key="bias_drill_search")
rows = selected[(selected["model"] == drill_model) & (selected["bias"] == drill_bias)]
if search and "response" in rows:
    rows = rows[rows["response"].astype(str).str.contains(search, case=False, regex=False)]
st.caption(f"{len(rows):,} responses; text is shown exactly as uploaded.")
st.dataframe(rows, hide_index=True, width="stretch", height=300)
