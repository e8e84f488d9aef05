"""Vulnerability detection: the seven tiers, SUI weights, reliability diagrams, lucky guesses,
fixed versions, prompt types and a drill-down to one sample's findings."""

import streamlit as st

from kbench_app import agreement as agreement_page
from kbench_app import audit as audit_page
from kbench_app import cache, kit, prefetch, state
from kbench_app import vuln as page
from kbench_app.compare import run_compare_panel
from kbench_app.ui import plain
from kbench_core import vuln
from kbench_core.families.judged import TierOptions
from kbench_core.figures import vuln as vuln_figures
from kbench_core.select import labels_in

K = page.Keys

shown = kit.open_runs(
    "Vulnerability detection", ["judged"], key=K.RUNS,
    resets=(K.MODELS, K.JUDGE, K.DRILL_MODEL, K.DRILL_SAMPLE, *agreement_page.MAJORITY_KEYS[:2],
            K.RUN_GROUP),
    empty="No judged vulnerability-detection run is loaded. Add one on the Runs page (a judged "
          "CSV, a BlockBench judge-output folder as .zip/.tar.gz, or a list of multi-judge "
          "records).")
# Runs of different benchmarks or judges: one leaderboard each, unless the user asks
group = page.pick_run_group(shown.runs, shown.frame)
runs, frame = group.runs, group.frame
for audited in runs:  # the reviewers' labels say the judge is off: say so, point to the audit
    if (note := audit_page.banner_needed(audited)) is not None:
        st.warning(note, icon=":material/fact_check:")
        st.page_link("views/audit.py", label="Judge audit", icon=":material/fact_check:")
prefetch.cancel()  # what this session queued ahead was for the view it is leaving
# the majority of several LLM judges first (docs/metrics/agreement.md)
judges = page.judge_choices(frame)
all_models = sorted(map(str, frame["model"].unique()))
has_prompts = "prompt_type" in frame and frame["prompt_type"].notna().any()

left, middle, right = st.columns([2, 4, 2])
judge = kit.select("Judge", judges, key=K.JUDGE, container=left,
                   help="Tiers are computed one judge at a time; 'majority' is the consensus "
                        "of the LLM judges. The Judge agreement page compares judges. "
                        "'human' marks expert labels.")
voting = agreement_page.majority_controls(frame, judge, container=left)
models = kit.model_picker("Detector models", all_models, key=K.MODELS, frame=frame, kind="judged",
                         container=middle, runs=runs)
split = kit.toggle("Split by prompt type", key=K.SPLIT, container=right,
                   disabled=not has_prompts, help="One leaderboard row per model × prompt type.")
with st.expander("Metric options (beyond BlockBench's rules)", icon=":material/tune:"):
    c1, c2, c3, c4 = st.columns(4)
    partial_credit = kit.slider(
        "Credit for a partial match", 0.0, 1.0, key=K.PARTIAL, default=1.0, step=0.05,
        container=c1,
        help="1.0 is BlockBench's rule (a PARTIAL_MATCH counts as fully valid); 0.5 counts "
             "it as half. Applies to finding precision and to targets found only partially "
             "in TDR.")
    severity = kit.toggle("Severity-weighted TDR", key=K.SEVERITY, container=c2,
                          help="Critical 3×, high 2×, medium and low 1×; a target "
                               "without severity weighs 1.")
    zero = kit.radio("Undefined ratios", ["seed", "nan"], key=K.ZERO, container=c3,
                     format_func={"seed": "0 (BlockBench; finding precision 1.0)",
                                  "nan": "NaN (undefined)"}.get)
    bootstrap = kit.toggle("Bootstrap composite intervals", key=K.BOOTSTRAP, container=c4,
                           default=len(frame) <= page.BOOTSTRAP_BY_DEFAULT_ROWS,
                           help="Intervals of SUI, TUS and LGI (from their components' "
                                "intervals), ECE and MCE (simultaneous intervals of the "
                                "bins), and 1000 resamples of the samples (contracts) for "
                                "the debiased ECE and the SUI rank; cached, so only the first "
                                "view waits. On by default up to "
                                f"{page.BOOTSTRAP_BY_DEFAULT_ROWS:,} answers.")
weights = page.weight_sliders()
if sum(weights.values()) <= 0:
    st.warning("Give at least one SUI component a weight above 0.")
    kit.stop()
if not models:
    st.warning("Choose at least one detector model.")
    kit.stop()

# The leaderboard comes first on the page, but its ECE and MCE use the calibration section's
# bins: that section's widgets are declared first, into a container placed below.
board_section, calibration_section = st.container(), st.container()
calibration_section.subheader("Calibration of the stated confidence")
controls, diagram = calibration_section.columns([1, 3])
binning = kit.radio("Bins", ["uniform", "quantile"], key=K.BINNING, container=controls,
                    format_func={"uniform": "Equal width (BlockBench)",
                                 "quantile": "Equal mass"}.get,
                    help="Equal-mass bins put the edges at the percentiles of the "
                         "confidences, so crowded confidences (0.9–1.0) do not leave most "
                         "bins empty.")
n_bins = kit.slider("Number of bins", 2, 30, key=K.BINS, default=10, container=controls)
options = TierOptions(partial_credit=partial_credit, severity_weighted=severity,
                      zero_division=zero, bootstrap=bootstrap, n_bins=n_bins, binning=binning,
                      sui_weights=tuple(weights.items()))
provenance = {**options.provenance(), "judge": judge,
              # the majority's rule, or (one LLM judge) only what a failed judgement counts as
              **(voting.provenance() if voting and "majority" in judges
                 else {"failed_as": voting.failed_as} if voting else {}),
              # detectors of runs of different judges or contracts, ranked together as asked
              **({"ranked_together": [" + ".join(g) for g in group.groups]}
                 if group.together else {})}
selection = (tuple(models), judge, voting)
colors = state.model_colors(all_models)
selected = page.selected_rows(frame, models, judge, runs=runs, voting=voting)
# A big run's per-prompt tiers wait until their section is opened (or the board is split).
big = len(selected) > kit.BIG_RUN_ROWS
eager_prompts = has_prompts and (split or not big)
# The tiers of every detector, cut to the chosen ones: another model set is a lookup.
results = page.judge_results(frame, models, judge, runs=runs, voting=voting, options=options,
                             colors=colors, split=split, prompt_tiers=eager_prompts)
pool, table, by_prompt = results.pool, results.table, results.by_prompt


def prompt_tiers():
    return page.tiers(selected, runs=runs, selection=selection, options=options,
                      by=("model", "prompt_type"), pool=pool)


with board_section:
    st.subheader("Leaderboard")
    split = split and by_prompt is not None  # (no prompt types: the toggle is off)
    board = by_prompt if split else table
    keys = ("model", "prompt_type") if split else ("model",)
    missing = int(table["n_missing"].sum())
    # one judge's failed judgements counted as "not found" (the majority's caption says its)
    counted = (int(selected["failed_judgement"].notna().sum())
               if judge != "majority" and voting is not None and voting.failed_as == "not_found"
               and "failed_judgement" in selected else 0)
    st.caption(f"Judge **{plain(judge)}** · {len(selected):,} answers · ranked by SUI (rank 1 "
               "= best)" + (f" · {missing:,} failed judgements left out (missing, not 'no')"
                            if missing else "")
               + (f" · {counted:,} failed judgements counted as 'not found' (BlockBench's "
                  "convention)" if counted else "") + ". Click a column header to sort.")
    if voting is not None and judge == "majority":
        st.caption(agreement_page.majority_caption(voting, frame))
    if group.together:
        st.caption(page.together_caption(group))
    # Views and figures are cached too: on a big run they cost more than a rerun may take.
    views = page.leaderboard_views(board, runs=runs, selection=selection, options=options,
                                   split=split, keys=keys)
    headline, config = views["headline"]
    kit.table(board, "vuln_tiers", view=headline, config=config, runs=runs,
              key="vuln_leaderboard", options=provenance, best=page.BEST)
    tabs = st.tabs([f"Tier {name}" if name[0].isdigit() else name.capitalize()
                    for name in vuln.TIERS])
    for tab, name in zip(tabs, vuln.TIERS, strict=True):
        view, view_config = views[name]
        tab.dataframe(view, hide_index=True, width="stretch", column_config=view_config,
                      key=f"vuln_tier_{name.split()[0]}")
    if table["renormalised"].any():
        st.caption(":material/info: A composite marked renormalised had an undefined "
                   "component; it is computed over the others with their weights "
                   "renormalised.")
    # the table, not the board: the same figure with the leaderboard split or not
    kit.chart(page.sui_chart(table, runs=runs, selection=selection, options=options),
              "vuln_sui", runs=runs, key="vuln_leaderboard", options=provenance)

prompt_filter = "all"
if has_prompts:
    prompts = ["all", *sorted(map(str, selected["prompt_type"].dropna().unique()))]
    prompt_filter = kit.select("Prompt type", prompts, key=K.RELIABILITY_PROMPT,
                               container=controls)
rel_frame = (selected if prompt_filter == "all"
             else selected[labels_in(selected["prompt_type"], [prompt_filter])])
reliability = page.reliability_chart(rel_frame, runs=runs, selection=selection,
                                     options=options, prompt_filter=prompt_filter,
                                     colors=colors)
controls.caption("ECE = Σ (n_b/N)·|accuracy_b − confidence_b| (the plug-in, as BlockBench "
                 "computes it: biased upward, about 0.03 for a calibrated detector with 500 "
                 "answers); ℓ2 debiased = the root-mean-square gap with each bin's noise "
                 "removed (Kumar et al. 2019; ≈ 0 when calibrated). MCE = the largest gap. "
                 "Shaded: the gap to the diagonal. Beneath: where the answers' confidences "
                 "lie. These bins also give the leaderboard's ECE, ℓ2 debiased and MCE.")
if reliability is None:
    diagram.info("No answer in this selection states a confidence.")
else:
    kit.chart(reliability, f"vuln_reliability-{binning}-{n_bins}", runs=runs,
              key="vuln_reliability", options=provenance, container=diagram)

st.subheader("Lucky guesses")
c1, c2 = st.columns([3, 1])
kit.chart(page.lucky_chart(table, runs=runs, selection=selection, options=options,
                          colors=colors),
          "vuln_lucky_guesses", runs=runs, key="vuln_lucky", options=provenance, container=c1)
c2.caption("A detector that says 'vulnerable' to everything is often right without "
           "understanding. Accuracy above the diagonal (LGI = accuracy − TDR > 0) is credit "
           "for verdicts whose target the detector did not find; the lucky-guess rate is the "
           "share of true positives without the target.")

if results.by_difficulty is not None:
    st.subheader("By difficulty tier")
    by_difficulty = results.by_difficulty
    difficulty = cache.cached(page.difficulty_table, table, by_difficulty, runs=runs,
                              selection=(selection, options))
    view, config = page.difficulty_view(difficulty)
    kit.table(difficulty, "vuln_difficulty", view=view, config=config, runs=runs,
              key="vuln_difficulty_table", options=provenance)
    st.caption("TDR on each difficulty tier (from the sample ids, e.g. ds_t1_001), their "
               "mean (each tier weighs alike, as BlockBench's DS 'Avg') and the TDR pooled "
               "over every answer (each answer weighs alike), by the chosen judge.")

if "claims_fixed_target" in frame and frame["claims_fixed_target"].notna().any():
    page.fixed_section(frame[labels_in(frame["model"], models)], judge,
                       runs=runs, selection=selection, voting=voting)

if has_prompts:
    box, open_ = kit.lazy_section("By prompt type", key="vuln_prompt_open",
                                  lazy=big and by_prompt is None,
                                  what="Every metric per prompt type")
    if open_:
        by_prompt = by_prompt if by_prompt is not None else prompt_tiers()
        c1, c2 = box.columns([1, 3])
        metric_options = [m for metrics in vuln.TIERS.values() for m in metrics
                          if m in by_prompt and m not in ("tp", "tn", "fp", "fn")]
        metric = kit.select("Metric", metric_options, key=K.PROMPT_METRIC, default="tdr",
                            container=c1, format_func=lambda m: vuln.METRIC_LABELS.get(m, m))
        c1.caption("Does the framing of the request (direct, naturalistic, adversarial, ...) "
                   "change what the detector finds?")
        kit.chart(cache.cached(vuln_figures.prompt_type_chart, by_prompt, runs=runs,
                               selection=(selection, options), metric=metric, colors=colors),
                  f"vuln_prompt_types-{metric}", runs=runs, key="vuln_prompt",
                  options=provenance, container=c2)

run_compare_panel(selected, "judged", key=K.COMPARE, runs=list(runs), colors=colors,
                  selection=selection)
st.caption("Items are sample × prompt type; errors are clustered by sample (a contract's "
           "prompt variants share its difficulty). Judged by " + plain(judge) + ".")

page.drill_down(selected, models, judge, runs=runs, selection=selection, frame=frame)
# the other judges, worked out while the user reads this one (kbench_app.prefetch)
page.work_ahead(frame, models, judge, runs=runs, voting=voting, options=options,
                colors=colors, split=split, prompt_tiers=eager_prompts, prompts=has_prompts,
                choices=judges)
kit.done()
