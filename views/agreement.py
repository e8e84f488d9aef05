"""Judge agreement: pairwise κ, Fleiss' κ and Krippendorff's α, spread of the tiers across
judges, the consensus leaderboard and the items the judges disagree on."""

import streamlit as st

from kbench_app import agreement as agreement_view
from kbench_app import kit, state, urlstate
from kbench_app.downloads import figure_downloads, table_downloads
from kbench_app.ui import plain
from kbench_core import agreement
from kbench_core.figures import agreement as agreement_figures

BOOTSTRAP_BY_DEFAULT_ROWS = 100_000

st.title("Judge agreement")
registry = state.registry()
judged_runs = {name: run for name, run in registry.runs.items() if run.kind == "judged"}
if not judged_runs:
    st.info("No judged vulnerability-detection run is loaded. Add one on the Runs page; "
            "agreement needs a run in which at least two judges labelled the same answers.")
    st.stop()
runs = agreement_view.eligible_runs(judged_runs)
if not runs:
    names = ", ".join(plain(n) for n in judged_runs)
    st.info(f"The judged runs loaded ({names}) have a single judge each. Judge agreement "
            "needs at least two judges of the same answers (several LLM judges, or one and "
            "expert labels under the judge name `human`).")
    st.stop()
urlstate.warn_missing_runs(list(runs), "agr_run")


def _run_changed() -> None:
    for key in ("agr_label", "agr_weights", "agr_bootstrap", "agr_min_votes", "agr_judge_a",
                "agr_judge_b", "agr_dis_label", "agr_dis_models", "agr_dis_prompts",
                "agr_item"):
        kit.forget(key)


urlstate.prepare("agr_run", "one", next(iter(runs)), list(runs))
c1, c2, c3, c4 = st.columns([3, 2, 3, 2])
run_name = c1.selectbox("Run", list(runs), key="agr_run", on_change=_run_changed)
run = runs[run_name]
frame = run.frame
judges = agreement.judges(frame)
llm = [j for j in judges if j != agreement.HUMAN]
labels = agreement.judged_labels(frame)
urlstate.prepare("agr_label", "one", "target_found" if "target_found" in labels else labels[0],
                 labels)
label = c2.selectbox("Label", labels, key="agr_label",
                     help="The judged column to compare: yes/no verdicts, the type match, "
                          "reasoning scores, confidence, finding counts.")
level = agreement.default_level(frame, label)
weighted = level == "ordinal"
urlstate.prepare("agr_weights", "one", "none", ["none", "linear", "quadratic"])
weights = c3.radio("κ weights", ["none", "linear", "quadratic"], key="agr_weights",
                   horizontal=True, disabled=not weighted,
                   help="Weighted κ for ordered labels (type_match: not_mentioned < wrong < "
                        "partial < semantic < exact): near misses count as partial "
                        "agreement.")
# On by default for runs of ordinary size; a 600k-row run takes ~1.6 s per label, so there
# the intervals wait until asked for.
urlstate.prepare("agr_bootstrap", "bool", len(frame) <= BOOTSTRAP_BY_DEFAULT_ROWS)
bootstrap = c4.toggle("Bootstrap α", key="agr_bootstrap",
                      help="Krippendorff's α has no standard analytic interval: 1000 "
                           "resamples of the items (cached, so only the first view waits; "
                           f"on by default up to {BOOTSTRAP_BY_DEFAULT_ROWS:,} rows).")
kappa_weights = weights if weighted and weights != "none" else None
st.caption(f"{len(llm)} LLM judge{'s' * (len(llm) != 1)}: {plain(', '.join(llm))}"
           + (" · expert labels (`human`): the reference, left out of Fleiss' κ, α and the "
              "consensus" if agreement.HUMAN in judges else "")
           + f" · level of **{plain(label)}**: {level}")

try:
    summary = agreement_view.cached_summary(run, label, weights=kappa_weights,
                                            bootstrap=bootstrap)
except ValueError as exc:
    st.error(f"Cannot compare the judges on **{plain(label)}**.")
    st.code(str(exc), language=None)
    urlstate.stop()
options = dict(label=label, weights=kappa_weights, level=level,
               ci_alpha="bootstrap" if bootstrap else None)

st.subheader(f"Agreement on {label}")
if summary["n_llm"] < 2:
    st.info("Only one LLM judge: there is nothing to compare among judges, only with the "
            "expert labels below.")
else:
    cards = st.columns(3)
    entries = []
    if summary["fleiss"] is not None:
        entries.append(("Fleiss' κ", summary["fleiss"],
                        "Agreement of all LLM judges beyond chance, over the items every one "
                        "labelled. Interval: Gwet's asymptotic standard error.",
                        "not labelled by every judge"))
    else:
        cards[0].caption("Fleiss' κ is for categories; this label is numeric, so Krippendorff's "
                         "α (interval) measures the agreement.")
    entries.append((f"Krippendorff's α ({level})", summary["alpha"],
                    "Agreement beyond chance with missing judgements allowed; interval: "
                    "bootstrap over items.", "labelled by one judge only"))
    entries.append(("Percent agreement", summary["percent"],
                    "Share of items on which every judge that labelled it agrees (no chance "
                    "correction). Interval: Wilson.", "labelled by one judge only"))
    offset = 3 - len(entries)
    for column, (title, est, help_text, dropped) in zip(cards[offset:], entries, strict=True):
        with column.container(border=True):
            st.metric(title, "n/a" if est.value != est.value else f"{est.value:.3f}",
                      help=help_text)
            st.caption(f"{agreement_view.interval_text(est.low, est.high)} · n = {est.n:,} "
                       f"items" + (f" · {est.n_dropped:,} left out ({dropped})"
                                   if est.n_dropped else ""))
            if title != "Percent agreement":
                band = str(agreement.interpret(est.value))
                st.badge(band, color=agreement_view.BAND_COLORS.get(band, "gray"))
    st.caption("Bands (Landis & Koch 1977): below 0 poor, 0–0.20 slight, 0.21–0.40 fair, "
               "0.41–0.60 moderate, 0.61–0.80 substantial, above 0.80 almost perfect.")

    value = "alpha" if summary["numeric"] else "kappa"
    heat = agreement_figures.kappa_heatmap(summary["pairs"], value=value, label=label,
                                           human=summary["human"])
    st.plotly_chart(heat, key="agr_heatmap_chart")
    figure_downloads(heat, f"agreement_heatmap-{label}", runs=[run], options=options,
                     key="agr_heatmap_dl")
    with st.expander("Pairwise table", icon=":material/table:"):
        st.dataframe(summary["pairs"], hide_index=True, width="stretch", key="agr_pairs_table")
        table_downloads(summary["pairs"], f"pairwise-{label}", runs=[run], options=options,
                        key="agr_pairs_dl")

if summary["human"] is not None and len(summary["human"]):
    st.subheader("Against the expert labels")
    st.caption("Cohen's κ of each LLM judge against the judge named `human`, on the items "
               "both labelled.")
    human = summary["human"].assign(band=agreement.interpret(summary["human"]["kappa"]))
    st.dataframe(human, hide_index=True, width="stretch", key="agr_human_table",
                 column_config={"kappa": st.column_config.NumberColumn("κ", format="%.4g"),
                                "kappa_low": st.column_config.NumberColumn("low",
                                                                           format="%.4g"),
                                "kappa_high": st.column_config.NumberColumn("high",
                                                                            format="%.4g"),
                                "percent_agreement": st.column_config.NumberColumn(
                                    "agreement", format="%.4g")})

if len(llm) < 2:
    urlstate.stop()

st.subheader("Agreement on every label")
labelled = agreement_view.cached_label_agreement(run, bootstrap=bootstrap)
bars = agreement_figures.agreement_bars(labelled)
st.plotly_chart(bars, key="agr_labels_chart")
figure_downloads(bars, "agreement_by_label", runs=[run], options=options,
                 key="agr_labels_dl")

st.subheader("How much the judge moves the score")
urlstate.prepare("agr_min_votes", "int", len(llm) // 2 + 1, low=1, high=len(llm))
min_votes = st.slider("Votes the consensus needs", 1, len(llm), key="agr_min_votes",
                      help=f"Default: a strict majority ({len(llm) // 2 + 1} of {len(llm)}). "
                           "An item without a majority is reported and not credited.")
try:
    spread, spread_table = agreement_view.cached_spread(run, min_votes=min_votes)
    tiers, consensus = agreement_view.cached_consensus(run, min_votes=min_votes)
except ValueError as exc:
    st.error("The tiers could not be computed for every judge.")
    st.code(str(exc), language=None)
    urlstate.stop()
spread_fig = agreement_figures.judge_spread_chart(spread)
st.plotly_chart(spread_fig, key="agr_spread_chart")
figure_downloads(spread_fig, "judge_spread", runs=[run], options={"min_votes": min_votes},
                 key="agr_spread_dl")
st.caption("Markers: one judge each (with Wilson intervals for TDR); grey bar: the range over "
           "the LLM judges; star: the majority-vote consensus.")
st.dataframe(spread_table, hide_index=True, width="stretch", key="agr_spread_table",
             column_config={c: st.column_config.NumberColumn(c, format="%.4g")
                            for c in ("low", "high", "range", "sd")})

st.subheader("Consensus leaderboard")
counts = consensus.attrs.get("no_majority", {})
undecided = int((consensus["no_majority"] != "").sum())
st.caption(f"Tiers of the majority-vote judge ({min_votes} of {len(llm)} votes). "
           f"{undecided:,} of {len(consensus):,} answers had no majority on some label ("
           + ", ".join(f"{plain(k)}: {v:,}" for k, v in counts.items()) + "); a target "
           "without a yes majority counts as not found, an undecided verdict as wrong.")
board = tiers[[c for c in agreement_view.LEADERBOARD if c in tiers]]
st.dataframe(board.sort_values("sui", ascending=False), hide_index=True, width="stretch",
             key="agr_consensus_table",
             column_config={c: st.column_config.NumberColumn(c, format="%.4g")
                            for c in board.columns if c not in ("model", "n")})
table_downloads(tiers, "consensus_tiers", runs=[run], options={"min_votes": min_votes},
                best={"sui": "max", "tdr": "max"}, key="agr_consensus_dl")

st.subheader("Two judges side by side")
c1, c2, c3 = st.columns([1, 1, 3])
urlstate.prepare("agr_judge_a", "one", judges[0], judges)
judge_a = c1.selectbox("Rows", judges, key="agr_judge_a")
urlstate.prepare("agr_judge_b", "one", judges[1], judges)
judge_b = c2.selectbox("Columns", judges, key="agr_judge_b")
if judge_a == judge_b:
    c3.info("Choose two different judges.")
else:
    table = agreement.confusion(frame, label, judge_a, judge_b)
    confusion_fig = agreement_figures.confusion_heatmap(table, judge_a, judge_b, label=label)
    c3.plotly_chart(confusion_fig, key="agr_confusion_chart")

st.subheader("Disagreements")
models = sorted(map(str, frame["model"].unique()))
prompts = (sorted(map(str, frame["prompt_type"].dropna().unique()))
           if "prompt_type" in frame else [])
c1, c2, c3, c4 = st.columns([2, 3, 3, 2])
urlstate.prepare("agr_dis_label", "one", label, labels)
dis_label = c1.selectbox("Label", labels, key="agr_dis_label")
urlstate.prepare("agr_dis_models", "many", models, models)
dis_models = c2.multiselect("Models", models, key="agr_dis_models")
urlstate.prepare("agr_dis_prompts", "many", prompts, prompts)
dis_prompts = c3.multiselect("Prompt types", prompts, key="agr_dis_prompts",
                             disabled=not prompts)
urlstate.prepare("agr_dis_missing", "bool", False)
include_missing = c4.toggle("With failed judgements", key="agr_dis_missing",
                            help="Also list answers some judges labelled and others failed "
                                 "to judge.")
items = agreement_view.cached_disagreements(run, dis_label, include_missing=include_missing)
shown = items[items["model"].astype(str).isin(dis_models)]
if prompts and "prompt_type" in shown:
    shown = shown[shown["prompt_type"].astype(str).isin(dis_prompts)]
st.caption(f"{len(shown):,} answers on which the judges give different values of "
           f"**{plain(dis_label)}** (of {len(items):,} in the run); `consensus` is the "
           "strict-majority value (the median for numbers). Text shows exactly as uploaded.")
st.dataframe(shown, hide_index=True, width="stretch", height=300,
             key="agr_disagreements_table")
table_downloads(shown, f"disagreements-{dis_label}", runs=[run], key="agr_disagreements_dl")
if len(shown):
    keys = [c for c in ("sample", "model", "prompt_type") if c in shown]
    choices = shown[keys].astype(str).head(1000)
    names = (choices.agg(" · ".join, axis=1)).tolist()
    pick = st.selectbox("Answer to inspect", range(len(names)), key="agr_item",
                        format_func=lambda i: names[i],
                        help="Every judge's output for this answer, field by field.")
    record = agreement_view.item_records(frame, choices.iloc[pick].to_dict())
    st.dataframe(record, hide_index=True, width="stretch", key="agr_item_table")

urlstate.publish()
