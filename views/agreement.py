"""Judge agreement: pairwise κ, Fleiss' κ and Krippendorff's α, spread of the tiers across
judges, the consensus leaderboard and the items the judges disagree on."""

from dataclasses import replace

import streamlit as st

from kbench_app import agreement as page
from kbench_app import audit as audit_page
from kbench_app import kit
from kbench_app.ui import plain, table_config
from kbench_core import agreement, families
from kbench_core.families.judged import AgreementOptions
from kbench_core.figures import agreement as agreement_figures

K = page.Keys

st.title("Judge agreement")
c0, c1, c2, c3, c4 = st.columns([3, 2, 3, 2, 3])
shown = kit.open_runs(
    None, families.judged_kinds(), key=K.RUN, single=True, resets=K.PER_RUN, container=c0,
    eligible=page.eligible_runs, empty=page.EMPTY, none_eligible=page.NONE_ELIGIBLE)
if (note := audit_page.banner_needed(shown.runs[0])) is not None:  # the reviewers' labels
    st.warning(note, icon=":material/fact_check:")
    st.page_link("views/audit.py", label="Judge audit", icon=":material/fact_check:")
# the judge audit's labels join as the judge `human` (the reference every judge is held to)
run, n_reviewed = audit_page.with_reviewers(shown.runs[0])
frame = run.frame  # one run: its own rows (no `run` column to vote on)
judges = agreement.judges(frame)
llm = [j for j in judges if j != agreement.HUMAN]
labels = agreement.judged_labels(frame)
big = len(frame) > kit.BIG_RUN_ROWS

label = kit.select("Label", labels, key=K.LABEL, container=c1,
                   default="target_found" if "target_found" in labels else labels[0],
                   help="The judged column to compare: yes/no verdicts, the type match, "
                        "reasoning scores, confidence, finding counts.")
level = agreement.default_level(frame, label)
weights = kit.radio("κ weights", ["none", "linear", "quadratic"], key=K.WEIGHTS, container=c2,
                    horizontal=True, disabled=level != "ordinal",
                    help="Weighted κ for ordered labels (type_match: not_mentioned < wrong < "
                         "partial < semantic < exact): near misses count as partial agreement.")
bootstrap = kit.toggle("Bootstrap α", key=K.BOOTSTRAP, container=c3,
                       default=len(frame) <= page.BOOTSTRAP_BY_DEFAULT_ROWS,
                       help="Krippendorff's α has no standard analytic interval: 1000 resamples "
                            "of the items (cached, so only the first view waits; on by default "
                            f"up to {page.BOOTSTRAP_BY_DEFAULT_ROWS:,} rows).")
failed_as = page.failed_as_control(key=K.FAILED_AS, container=c4)
options = AgreementOptions(label=label, weights=weights, bootstrap=bootstrap,
                           failed_as=failed_as)
st.caption(f"{len(llm)} LLM judge{'s' * (len(llm) != 1)}: {plain(', '.join(llm))}"
           + (" · expert labels (`human`): the reference, left out of Fleiss' κ, α and the "
              "consensus" if agreement.HUMAN in judges else "")
           + f" · level of **{plain(label)}**: {level}")
if n_reviewed:
    st.caption(f"`human`: the reviewers' labels of the Judge audit page, {n_reviewed:,} "
               f"item{'s' * (n_reviewed != 1)} (target_found only; their majority where "
               "several reviewers labelled an item). Exports record the labels' SHA-256.")
st.caption(page.failed_caption(label, failed_as))
try:
    summary = page.summary(frame, run, options)
except ValueError as exc:
    st.error(f"Cannot compare the judges on **{plain(label)}**.")
    st.code(str(exc), language=None)
    kit.stop()

st.subheader(f"Agreement on {label}")
if not summary.comparable:
    st.info("Only one LLM judge: there is nothing to compare among judges, only with the "
            "expert labels below.")
else:
    cards = st.columns(3)
    entries = page.cards(summary)
    if summary.fleiss is None:
        cards[0].caption("Fleiss' κ is for categories; this label is numeric, so Krippendorff's "
                         "α (interval) measures the agreement.")
    for column, (title, est, help_text, dropped) in zip(cards[3 - len(entries):], entries,
                                                        strict=True):
        with column.container(border=True):
            st.metric(title, "n/a" if est.value != est.value else f"{est.value:.3f}",
                      help=help_text)
            st.caption(f"{page.interval_text(est.low, est.high)} · n = {est.n:,} items"
                       + (f" · {est.n_dropped:,} left out ({dropped})" if est.n_dropped
                          else ""))
            if title != "Percent agreement":
                band = str(agreement.interpret(est.value))
                st.badge(band, color=page.BAND_COLORS.get(band, "gray"))
    st.caption("Bands (Landis & Koch 1977): below 0 poor, 0–0.20 slight, 0.21–0.40 fair, "
               "0.41–0.60 moderate, 0.61–0.80 substantial, above 0.80 almost perfect.")
    kit.chart(agreement_figures.kappa_heatmap(summary.pairs, value=summary.pair_value,
                                              label=label, human=summary.human),
              f"agreement_heatmap-{label}", runs=[run], key="agr_heatmap",
              options=options.provenance())
    with st.expander("Pairwise table", icon=":material/table:"):
        kit.table(summary.pairs, f"pairwise-{label}", runs=[run], key="agr_pairs_table",
                  options=options.provenance(), **page.view(summary.pairs, page.PAIR_LABELS))

if summary.human is not None:
    st.subheader("Against the expert labels")
    st.caption("Cohen's κ of each LLM judge against the judge named `human`, on the items "
               "both labelled.")
    kit.table(summary.human, f"against_human-{label}", runs=[run], key="agr_human_table",
              options=options.provenance(), **page.view(summary.human, page.PAIR_LABELS))

if len(llm) < 2:
    kit.stop()

box, open_ = kit.lazy_section("Agreement on every label", key=K.LABELS_SECTION, lazy=big,
                               what="κ, α and percent agreement of every label")
if open_:
    kit.chart(agreement_figures.agreement_bars(page.every_label(frame, run, options)),
              "agreement_by_label", runs=[run], key="agr_labels",
              options=options.provenance(), container=box)

box, open_ = kit.lazy_section("How much the judge moves the score", key=K.TIERS_SECTION,
                               lazy=big, what="The tiers of every judge and of the consensus")
if open_:
    with box:
        voting = page.voter_controls(frame, voters_key=K.VOTERS, votes_key=K.MIN_VOTES,
                                     failed_as=failed_as)
        options = replace(options, judges=voting.judges, min_votes=voting.min_votes)
        try:
            tiers = page.judge_tiers(frame, run, options)
        except ValueError as exc:
            st.error("The tiers could not be computed for every judge.")
            st.code(str(exc), language=None)
            kit.stop()
        kit.chart(agreement_figures.judge_spread_chart(tiers.spread), "judge_spread",
                  runs=[run], key="agr_spread", options=options.provenance())
        st.caption("Markers: one judge each (with Wilson intervals for TDR); grey bar: the "
                   "range over the LLM judges; star: the majority-vote consensus.")
        kit.table(tiers.summary, "judge_spread", runs=[run], key="agr_spread_table",
                  options=options.provenance(), **page.view(tiers.summary, page.SPREAD_LABELS))

        st.subheader("Consensus leaderboard")
        board = tiers.consensus
        st.caption(f"Tiers of the majority-vote judge ({board.min_votes} of {board.n_llm} "
                   f"votes: {plain(', '.join(board.judges))}; "
                   f"{agreement.FAILED_WORDS[board.failed_as]}), ranked by SUI. "
                   f"{board.n_undecided:,} of {board.n_items:,} answers "
                   "had no majority on some label ("
                   + ", ".join(f"{plain(k)}: {v:,}" for k, v in board.no_majority)
                   + "); a target without a yes majority counts as not found, an undecided "
                     "verdict as wrong.")
        kit.table(board.table, "consensus_tiers", runs=[run], key="agr_consensus_table",
                  options=options.provenance(), best=page.BEST, **page.board_view(board.table))

st.subheader("Two judges side by side")
c1, c2, c3 = st.columns([1, 1, 3])
judge_a = kit.select("Rows", judges, key=K.JUDGE_A, container=c1)
judge_b = kit.select("Columns", judges, key=K.JUDGE_B, default=judges[1], container=c2)
if judge_a == judge_b:
    c3.info("Choose two different judges.")
else:
    kit.chart(agreement_figures.confusion_heatmap(
        page.confusion(frame, run, label, judge_a, judge_b), judge_a, judge_b, label=label),
        f"confusion-{label}", runs=[run], key="agr_confusion", container=c3,
        options=options.provenance())

st.subheader("Disagreements")
models = sorted(map(str, frame["model"].unique()))
prompts = (sorted(map(str, frame["prompt_type"].dropna().unique()))
           if "prompt_type" in frame else [])
c1, c2, c3, c4 = st.columns([2, 3, 3, 3])
dis_label = kit.select("Label", labels, key=K.DIS_LABEL, default=label, container=c1)
dis_models = kit.multiselect("Models", models, key=K.DIS_MODELS, default=models, container=c2)
dis_prompts = kit.multiselect("Prompt types", prompts, key=K.DIS_PROMPTS, default=prompts,
                              container=c3, disabled=not prompts)
include_missing = kit.toggle("With failed judgements", key=K.DIS_MISSING, container=c4,
                             help="Also list answers some judges labelled and others failed to "
                                  "judge.")
items = page.disagreements(frame, run, dis_label, include_missing=include_missing,
                           models=dis_models, prompts=dis_prompts if prompts else None)
first = items.head(page.MAX_DISAGREEMENTS)
st.caption(f"{len(items):,} answers on which the judges give different values of "
           f"**{plain(dis_label)}**" + (f" (the first {len(first):,} shown; the CSV holds all)"
                                        if len(first) < len(items) else "")
           + "; `consensus` is the strict-majority value (the median for numbers). Text shows "
             "exactly as uploaded.")
kit.table(items, f"disagreements-{dis_label}", runs=[run], key="agr_disagreements_table",
          height=300, **page.view(first))
if len(first):
    choices = page.answer_choices(first)
    pick = kit.select("Answer to inspect", list(choices), key=K.ITEM, in_url=False,
                      help="Every judge's output for this answer, field by field.")
    record = page.item_records(frame, run, choices[pick])
    st.dataframe(record, hide_index=True, width="stretch", key="agr_item_table",
                 column_config=table_config(record))
kit.done()
