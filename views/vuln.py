"""Vulnerability detection: the seven tiers, SUI weights, reliability diagrams, lucky guesses,
prompt types and a drill-down to one sample's findings."""

import numpy as np
import pandas as pd
import streamlit as st

from kbench_app import state, urlstate
from kbench_app import vuln as vuln_view
from kbench_app.compare import run_compare_panel
from kbench_app.downloads import figure_downloads, table_downloads
from kbench_app.ui import plain
from kbench_core import vuln
from kbench_core.figures import vuln as vuln_figures
from kbench_core.schema import FINDING_COUNTS

MAX_SAMPLE_OPTIONS = 2_000

st.title("Vulnerability detection")
registry = state.registry()
runs = {name: run for name, run in registry.runs.items() if run.kind == "judged"}
if not runs:
    st.info("No judged vulnerability-detection run is loaded. Add one on the Runs page "
            "(a judged CSV, a BlockBench judge-output folder as .zip/.tar.gz, or a list of "
            "multi-judge records).")
    st.stop()
urlstate.warn_missing_runs(list(runs), "vuln_runs")


def _runs_changed() -> None:
    for key in ("vuln_models", "vuln_judge", "vuln_drill_model", "vuln_drill_sample"):
        st.session_state.pop(key, None)


urlstate.prepare("vuln_runs", "many", list(runs)[:1], list(runs))
chosen = st.multiselect("Runs", list(runs), key="vuln_runs", on_change=_runs_changed,
                        help="Several runs are viewed together; a model name found in more "
                             "than one run is shown as 'model (run)'.")
if not chosen:
    st.warning("Choose at least one run.")
    urlstate.stop()
chosen_runs = [runs[name] for name in chosen]
frame = state.combined_runs(chosen_runs)
judges = vuln.judges_of(frame)
all_models = sorted(map(str, frame["model"].unique()))
has_prompts = "prompt_type" in frame and frame["prompt_type"].notna().any()

left, middle, right = st.columns([2, 4, 2])
urlstate.prepare("vuln_judge", "one", judges[0], judges)
judge = left.selectbox("Judge", judges, key="vuln_judge",
                       help="Tiers are computed one judge at a time; the Judge agreement page "
                            "compares judges. 'human' marks expert labels.")
urlstate.prepare("vuln_models", "many", all_models, all_models)
models = middle.multiselect("Detector models", all_models, key="vuln_models")
urlstate.prepare("vuln_split", "bool", False)
split = right.toggle("Split by prompt type", key="vuln_split", disabled=not has_prompts,
                     help="One leaderboard row per model × prompt type.")

urlstate.prepare("vuln_partial", "float", 1.0, low=0.0, high=1.0)
urlstate.prepare("vuln_severity", "bool", False)
urlstate.prepare("vuln_zero", "one", "seed", ["seed", "nan"])
urlstate.prepare("vuln_bootstrap", "bool", False)
with st.expander("Metric options (the critique's improvements)", icon=":material/tune:"):
    c1, c2, c3, c4 = st.columns(4)
    partial_credit = c1.slider(
        "Credit for a partial match", 0.0, 1.0, step=0.05, key="vuln_partial",
        help="1.0 is BlockBench's rule (a PARTIAL_MATCH counts as fully valid); the critique "
             "suggests 0.5. Applies to finding precision and to targets found only partially "
             "in TDR.")
    severity = c2.toggle("Severity-weighted TDR", key="vuln_severity",
                         help="Critical 3×, high 2×, medium and low 1× (the critique's "
                              "suggestion); a target without severity weighs 1.")
    zero = c3.radio("Undefined ratios", ["seed", "nan"], key="vuln_zero",
                    format_func={"seed": "0 (seed; finding precision 1.0)",
                                 "nan": "NaN (undefined)"}.get)
    bootstrap = c4.toggle("Bootstrap composite intervals", key="vuln_bootstrap",
                          help="1000 resamples of the samples (contracts) for SUI, TUS, LGI, "
                               "ECE, MCE, F1 and F2; cached, so only the first view waits.")

weight_keys = {name: f"vuln_w_{name}" for name in vuln.SUI_WEIGHTS}


def _reset_weights() -> None:
    for name, key in weight_keys.items():
        st.session_state[key] = vuln.SUI_WEIGHTS[name]


for name, key in weight_keys.items():
    urlstate.prepare(key, "float", vuln.SUI_WEIGHTS[name], low=0.0, high=1.0)
with st.expander("SUI weights (the leaderboard re-ranks as you move them)",
                 icon=":material/balance:"):
    columns = st.columns(len(weight_keys) + 1)
    for column, (name, key) in zip(columns, weight_keys.items(), strict=False):
        column.slider(vuln.SUI_COMPONENTS[name], 0.0, 1.0, step=0.05, key=key)
    columns[-1].button("Seed's weights", on_click=_reset_weights, key="vuln_w_reset",
                       help="F2 .25, TDR .25, finding precision .15, reasoning .25, "
                            "calibration .10")
    st.caption("SUI divides by the sum of the weights, so they need not add up to 1. "
               "The seed's weights are not derived from data (critique §1): try others.")
weights = {name: float(st.session_state[key]) for name, key in weight_keys.items()}
if sum(weights.values()) <= 0:
    st.warning("Give at least one SUI component a weight above 0.")
    urlstate.stop()
if not models:
    st.warning("Choose at least one detector model.")
    urlstate.stop()

# The calibration widgets sit with the diagrams below, but their bins also give the
# leaderboard's ECE and MCE, so both always agree.
urlstate.prepare("vuln_binning", "one", "uniform", ["uniform", "quantile"])
urlstate.prepare("vuln_bins", "int", 10, low=2, high=30)
selected = frame[frame["model"].isin(models).to_numpy()
                 & vuln_view.rows_equal(frame["judge"], judge)]
content_hash = "+".join(run.content_hash for run in chosen_runs)
selection = (tuple(chosen), tuple(sorted(map(str, models))), judge)
options = dict(partial_credit=partial_credit,
               severity_weights=vuln.SEVERITY_WEIGHTS if severity else None,
               zero_division=0.0 if zero == "seed" else np.nan,
               ci="bootstrap" if bootstrap else None, judge=judge,
               binning=st.session_state["vuln_binning"], n_bins=int(st.session_state["vuln_bins"]))


def tiers_by(by: tuple[str, ...]) -> pd.DataFrame:
    """The tiers of the selection. Without the bootstrap, new SUI weights only re-weigh the
    cached components (instant); with it, SUI's interval depends on the weights, so the tiers
    are recomputed (and cached per weights)."""
    if bootstrap:
        return vuln_view.cached_tiers(content_hash, selection, selected, sui_weights=weights,
                                      by=by, **options)
    seed_weights = vuln_view.cached_tiers(content_hash, selection, selected,
                                          sui_weights=dict(vuln.SUI_WEIGHTS), by=by, **options)
    return vuln.reweight_sui(seed_weights, weights)


table = tiers_by(("model",))
by_prompt = tiers_by(("model", "prompt_type")) if has_prompts else None
colors = state.model_colors(all_models)
provenance = {**{k: v for k, v in options.items() if k != "severity_weights"},
              "severity_weighted": severity, "sui_weights": weights}

st.subheader("Leaderboard")
shown = vuln_view.ranked(by_prompt if split and by_prompt is not None else table)
keys = ("model", "prompt_type") if split and by_prompt is not None else ("model",)
missing = int(table["n_missing"].sum())
st.caption(f"Judge **{plain(judge)}** · {len(selected):,} answers · ranked by SUI"
           + (f" · {missing:,} failed judgements left out (missing, not 'no')" if missing
              else "") + ". Click a column header to sort.")
headline, config = vuln_view.tier_view(shown, vuln_view.HEADLINE, keys=keys)
st.dataframe(headline, hide_index=True, width="stretch", column_config=config,
             key="vuln_leaderboard")
tabs = st.tabs([f"Tier {name}" if name[0].isdigit() else name.capitalize()
                for name in vuln.TIERS])
for tab, (name, metrics) in zip(tabs, vuln.TIERS.items(), strict=True):
    view, view_config = vuln_view.tier_view(shown, metrics, keys=keys)
    tab.dataframe(view, hide_index=True, width="stretch", column_config=view_config,
                  key=f"vuln_tier_{name.split()[0]}")
table_downloads(shown, "vuln_tiers", runs=chosen_runs, options=provenance,
                best={m: "min" if m in vuln.LOWER_IS_BETTER else "max"
                      for m in vuln.HIGHER_IS_BETTER | vuln.LOWER_IS_BETTER},
                key="vuln_tiers_dl")
if table["sui_renormalised"].any() or table["tus_renormalised"].any():
    st.caption(":material/info: A composite marked renormalised had an undefined component "
               "(e.g. no target found, so no reasoning score); it is computed over the others "
               "with their weights renormalised.")

leader_fig = vuln_figures.tier_leaderboard(
    table, vuln.sui_contributions(table, sui_weights=weights))
st.plotly_chart(leader_fig, key="vuln_leaderboard_chart")
figure_downloads(leader_fig, "vuln_sui", runs=chosen_runs, options=provenance,
                 key="vuln_leaderboard_chart_dl")

st.subheader("Calibration of the stated confidence")
c1, c2 = st.columns([1, 3])
binning = c1.radio("Bins", ["uniform", "quantile"], key="vuln_binning",
                   format_func={"uniform": "Equal width (seed)",
                                "quantile": "Equal mass"}.get,
                   help="Equal-mass bins put the edges at the percentiles of the confidences, "
                        "so crowded confidences (0.9–1.0) do not leave most bins empty.")
n_bins = c1.slider("Number of bins", 2, 30, key="vuln_bins")
prompt_filter = "all"
if has_prompts:
    prompts = ["all", *sorted(map(str, selected["prompt_type"].dropna().unique()))]
    urlstate.prepare("vuln_rel_prompt", "one", "all", prompts)
    prompt_filter = c1.selectbox("Prompt type", prompts, key="vuln_rel_prompt")
rel_frame = (selected if prompt_filter == "all"
             else selected[vuln_view.rows_equal(selected["prompt_type"], prompt_filter)])
reliability = vuln_view.cached_reliability(content_hash, (*selection, prompt_filter),
                                           rel_frame, n_bins=n_bins, binning=binning,
                                           judge=judge)
c1.caption("ECE = Σ (n_b/N)·|accuracy_b − confidence_b|; MCE = the largest gap. Shaded: the "
           "gap to the diagonal. Beneath: where the answers' confidences lie. These bins also "
           "give the leaderboard's ECE and MCE.")
if reliability.empty:
    c2.info("No answer in this selection states a confidence.")
else:
    rel_fig = vuln_figures.reliability_diagram(
        reliability, colors=colors, binning=binning,
        title=None if prompt_filter == "all" else
        f"Reliability on {prompt_filter} prompts "
        f"({'equal-mass' if binning == 'quantile' else 'equal-width'} bins)")
    c2.plotly_chart(rel_fig, key="vuln_reliability_chart")
    with c2:
        figure_downloads(rel_fig, f"vuln_reliability-{binning}-{n_bins}", runs=chosen_runs,
                         options={**provenance, "n_bins": n_bins, "binning": binning},
                         key="vuln_reliability_dl")

st.subheader("Lucky guesses")
c1, c2 = st.columns([3, 1])
lucky_fig = vuln_figures.lucky_guess_chart(table, colors=colors)
c1.plotly_chart(lucky_fig, key="vuln_lucky_chart")
with c1:
    figure_downloads(lucky_fig, "vuln_lucky_guesses", runs=chosen_runs, options=provenance,
                     key="vuln_lucky_dl")
c2.caption("A detector that says 'vulnerable' to everything is often right without "
           "understanding. Accuracy above the diagonal (LGI = accuracy − TDR > 0) is credit "
           "for verdicts whose target the detector did not find; the lucky-guess rate is the "
           "share of true positives without the target.")

if "claims_fixed_target" in frame and frame["claims_fixed_target"].notna().any():
    st.subheader("Fixed versions")
    in_models = frame[frame["model"].astype(str).isin(models).to_numpy()]
    fixed = vuln_view.fixed_versions(content_hash, selection, in_models, judge)
    if fixed.empty:
        st.info("No answer of the chosen detectors assesses a fixed contract.")
    else:
        c1, c2 = st.columns([3, 2])
        fixed_fig = vuln_figures.fixed_claims_chart(fixed)
        c1.plotly_chart(fixed_fig, key="vuln_fixed_chart")
        with c1:
            figure_downloads(fixed_fig, "vuln_fixed_versions", runs=chosen_runs,
                             key="vuln_fixed_dl")
        view, config = vuln_view.fixed_view(fixed)
        c2.dataframe(view, hide_index=True, width="stretch", column_config=config,
                     key="vuln_fixed_table")
        with c2:
            table_downloads(fixed, "vuln_fixed_versions", runs=chosen_runs,
                            best={"fixed_claim_rate": "min", "tdr": "max"},
                            key="vuln_fixed_table_dl")
        c2.caption("Of the fixed (patched) contracts, the share where the detector still "
                   "claims the vulnerability that was fixed (lower is better), beside its TDR "
                   "on the vulnerable versions; Wilson 95% intervals. Per the chosen judge and, "
                   "with several judges, by their majority (a claim without a majority is "
                   "left out). The two rates are unpaired.")

if by_prompt is not None:
    st.subheader("By prompt type")
    c1, c2 = st.columns([1, 3])
    metric_options = [m for metrics in vuln.TIERS.values() for m in metrics
                      if m in by_prompt and m not in ("tp", "tn", "fp", "fn")]
    urlstate.prepare("vuln_prompt_metric", "one", "tdr", metric_options)
    metric = c1.selectbox("Metric", metric_options, key="vuln_prompt_metric",
                          format_func=lambda m: vuln.METRIC_LABELS.get(m, m))
    c1.caption("Does the framing of the request (direct, naturalistic, adversarial, ...) "
               "change what the detector finds?")
    prompt_fig = vuln_figures.prompt_type_chart(by_prompt, metric=metric, colors=colors)
    c2.plotly_chart(prompt_fig, key="vuln_prompt_chart")
    with c2:
        figure_downloads(prompt_fig, f"vuln_prompt_types-{metric}", runs=chosen_runs,
                         options=provenance, key="vuln_prompt_dl")

run_compare_panel(selected, "judged", key="vuln_cmp", runs=chosen_runs, colors=colors,
                  content_key=f"{content_hash}|{judge}|{','.join(models)}")
st.caption("Items are sample × prompt type; errors are clustered by sample (a contract's "
           "prompt variants share its difficulty). Judged by " + plain(judge) + ".")

st.subheader("One sample")
c1, c2, c3 = st.columns([2, 2, 3])
drill_model = c1.selectbox("Detector model", models, key="vuln_drill_model")
of_model = selected[vuln_view.rows_equal(selected["model"], drill_model)]
search = c3.text_input("Search sample ids", key="vuln_drill_search",
                       placeholder="part of a sample id")
sample_ids = sorted(map(str, of_model["sample"].unique()))
if search:
    sample_ids = [s for s in sample_ids if search.lower() in s.lower()]
if not sample_ids:
    st.info("No sample matches.")
    urlstate.stop()
n_matching = len(sample_ids)
sample_ids = sample_ids[:MAX_SAMPLE_OPTIONS]  # a long list would be sent on every rerun
drill_sample = c2.selectbox(f"Sample ({n_matching:,})", sample_ids, key="vuln_drill_sample")
if n_matching > MAX_SAMPLE_OPTIONS:
    c2.caption(f"The first {MAX_SAMPLE_OPTIONS:,} are listed; search to find the others.")
answers = of_model[vuln_view.rows_equal(of_model["sample"], drill_sample)]
verdict_columns = [c for c in ("prompt_type", "is_vulnerable", "severity", "vuln_type",
                               "said_vulnerable", "confidence", "target_found", "type_match",
                               "rcir", "ava", "fsv", "claimed_lines", "true_lines",
                               *FINDING_COUNTS) if c in answers]
st.caption(f"{len(answers)} answer(s) of **{plain(drill_model)}** on **{plain(drill_sample)}** "
           f"as judged by **{plain(judge)}**; text is shown exactly as uploaded.")
st.dataframe(answers[verdict_columns], hide_index=True, width="stretch",
             key="vuln_drill_answers")
findings = vuln.sample_findings(answers)
if "findings" not in answers:
    st.caption("This run gives finding counts only (no findings text).")
elif findings.empty:
    st.caption("The detector reported no findings here.")
else:
    st.dataframe(findings.drop(columns=["sample", "model", "judge"], errors="ignore"),
                 hide_index=True, width="stretch", key="vuln_drill_findings")

urlstate.publish()
