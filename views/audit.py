"""Judge audit: a reviewer labels a sample of the LLM judge's decisions, item by item, and
sees each judge's accuracy and every model's detection rate corrected for the judge's
errors (docs/metrics/audit.md)."""

import streamlit as st

from kbench_app import audit as page
from kbench_app import kit, state
from kbench_app.ui import plain
from kbench_core import audit, families
from kbench_core.audit import LabelError
from kbench_core.audit.labels import MAX_LABEL_BYTES
from kbench_core.figures import audit as audit_figures
from kbench_core.text import escape_controls

K = page.Keys

st.title("Judge audit")
st.caption("Check the LLM judge: label a sample of its decisions (did the detector find the "
           "target vulnerability?), then see how often each judge agrees with you and what "
           "each model's detection rate is once the judge's errors are corrected.")
c0, c1, c2, c3 = st.columns([3, 2, 2, 1])
shown = kit.open_runs(None, families.judged_kinds(), key=K.RUN, single=True, resets=K.PER_RUN,
                      container=c0, empty=page.EMPTY)
run = shown.runs[0]
frame = run.frame
choices = audit.judge_choices(frame)
if not choices:
    st.info("This run has no LLM judge to audit (only expert labels).")
    kit.stop()
judge = kit.select("Judge to audit", choices, key=K.JUDGE, container=c1,
                   help="'majority' is the consensus of the LLM judges (what the other pages "
                        "show first); or audit one judge.")
size = page.population_size(frame, run, judge)
if size == 0:
    st.info("This run has nothing to audit: no answer about a vulnerable contract, so no "
            "target the judge could have found or missed.")
    kit.stop()
n = kit.number("Items to label", 1, max(size, 1), key=K.SIZE,
               default=min(page.DEFAULT_SIZE, max(size, 1)), container=c2, step=10,
               help=f"Drawn from the {size:,} answers about a vulnerable contract, "
                             "stratified over models and the judge's own decision, so that "
                             "'found' and 'not found' are both checked.")
seed = kit.number("Seed", 0, 2**31 - 1, key=K.SEED, default=0, container=c3, step=1,
                  help="The same seed gives the same items (to every reviewer).")

reviewer = state.session_get(page.REVIEWER, "")
if not reviewer:
    with st.form("aud_reviewer_form", border=True):
        st.markdown("**Who is labelling?** Your name is kept with each label you make "
                    "(asked once per session; never put in a link).")
        name = st.text_input("Your name", max_chars=80, key="aud_reviewer_name")
        if st.form_submit_button("Start labelling", type="primary"):
            if name.strip():
                state.session_set(page.REVIEWER, name.strip())
                st.rerun()
            st.warning("Give a name first.")
    kit.stop()

labels = page.labels_of(run)
if not labels.in_workspace:
    st.info("Without a workspace (`kbench app --workspace DIR`) your labels live only in "
            "this browser session: download them as CSV below to keep them.",
            icon=":material/info:")
for line in labels.warnings:  # file names and values from files: text, never Markdown
    st.warning(plain(line), icon=":material/warning:")

sample = page.drawn(frame, run, n=n, judge=judge, seed=seed)
mine, anyone = page.progress(sample, labels.frame, reviewer)
st.progress(mine / max(len(sample), 1),
            text=f"{mine} of {len(sample)} labelled by you ({plain(escape_controls(reviewer))})"
                 + (f" · {anyone} by anyone" if anyone != mine else ""))

positions = state.session_setdefault(page.POSITION, {})
where = (run.content_hash, judge, n, seed)
index = min(positions.get(where, page.first_unlabelled(sample, labels.frame, reviewer)),
            len(sample) - 1)
item = sample.iloc[index]
key = (str(item["sample"]), str(item["model"]), str(item["prompt_type"]))

with st.container(border=True):
    st.subheader(f"Item {index + 1} of {len(sample)}")
    st.markdown(page.item_line(key))
    evidence = page.evidence(frame, run, key)
    left, right = st.columns(2)
    with left:
        st.markdown("**Ground truth**")
        st.dataframe(page.as_rows(evidence["truth"]), hide_index=True, width="stretch")
        st.markdown("**The detector's answer**")
        st.dataframe(page.as_rows(evidence["detector"]), hide_index=True, width="stretch")
        for name in page.TEXT_FIELDS:
            if name in evidence["detector"] and evidence["detector"][name]:
                st.text(str(evidence["detector"][name]))  # untrusted text: shown as text
        claims = evidence.get("findings")
        if claims is not None and len(claims):
            st.markdown("**The detector's findings** (as it wrote them)")
            st.dataframe(claims, hide_index=True, width="stretch")  # a grid shows text
    with right:
        st.markdown(f"**Each judge's decision** (audited: {plain(judge)}, who said "
                    f"**{plain(item['judge_decision'])}**)")
        st.dataframe(evidence["judges"], hide_index=True, width="stretch")
    given = page.current_label(labels.frame, key, reviewer)
    st.caption(f"Your label: **{given}**" if given else "Not labelled by you yet.")
    note = st.text_input("Note (optional)", key=page.note_key(run, key), max_chars=2000)
    partial_graded = page.grades_partial(frame)
    columns = st.columns(5 if partial_graded else 4)
    found = columns[0].button("Found", shortcut="F", type="primary", width="stretch",
                              help="The detector identified the target vulnerability (key F).")
    partial = partial_graded and columns[1].button(
        "Partial", shortcut="P", width="stretch",
        help="The detector identified the target only in part (key P): a found target under "
             "BlockBench's rule, kept as a partial match.")
    rest = columns[2:] if partial_graded else columns[1:]
    missed = rest[0].button("Not found", shortcut="N", width="stretch",
                            help="The detector did not identify it (key N).")
    back = rest[1].button("Previous", shortcut="Left", width="stretch", disabled=index == 0,
                          help="Key ←")
    ahead = rest[2].button("Next", shortcut="Right", width="stretch",
                           disabled=index >= len(sample) - 1, help="Key →")
    if found or missed or partial:
        page.add_labels(run, [page.label_row(key, found=bool(found), partial=bool(partial),
                                             reviewer=reviewer, note=note, run=run,
                                             p_include=float(item["p_include"]),
                                             drawn_with=judge)],
                        reviewer=reviewer)
        positions[where] = page.next_unlabelled(sample, page.labels_of(run).frame, reviewer,
                                                after=index)
        st.rerun()
    if back or ahead:
        positions[where] = max(0, min(len(sample) - 1, index + (1 if ahead else -1)))
        st.rerun()

st.subheader("What the labels say")
if labels.frame.empty:
    st.info("No label yet: the accuracy of each judge and the corrected rates appear here "
            "once you label.")
else:
    method = kit.select("Correction", list(audit.METHODS), key=K.METHOD,
                        format_func=page.METHOD_WORDS.get,
                        help="PPI++ (prediction-powered inference with the sample's weights; "
                             "the default), the classic difference estimator, or Rogan–Gladen "
                             "(the judge's rate corrected by its sensitivity and specificity).")
    tables = page.results(frame, run, labels, judge=judge, method=method)
    options = {"judge": judge, "method": method, "labels": len(labels.frame)}
    kit.chart(audit_figures.corrected_forest(tables["corrected"]), "audit_corrected",
              runs=[run], key="aud_forest", options=options)
    kit.table(tables["corrected"], "audit_corrected", runs=[run], key="aud_corrected",
              options=options, **page.interval_view(tables["corrected"],
                                                    page.CORRECTED_LABELS))
    st.markdown("**Each judge against the reviewers**")
    kit.chart(audit_figures.accuracy_chart(tables["accuracy"]), "audit_accuracy", runs=[run],
              key="aud_accuracy_chart", options=options)
    kit.table(tables["accuracy"], "audit_accuracy", runs=[run], key="aud_accuracy",
              options=options, **page.interval_view(tables["accuracy"],
                                                    page.ACCURACY_LABELS))
    if not tables["reviewers"].empty:
        st.markdown("**Reviewers against each other** (Cohen's κ on the items both labelled)")
        kit.table(tables["reviewers"], "audit_reviewers", runs=[run], key="aud_reviewers",
                  options=options)
    st.markdown("**Labels needed** for a corrected interval of ± 0.05")
    kit.table(tables["needed"], "audit_labels_needed", runs=[run], key="aud_needed",
              options=options, **page.needed_view(tables["needed"]))
    with st.expander("Where the judge goes wrong", icon=":material/troubleshoot:"):
        errors = tables["errors"]
        flagged = errors[errors["flagged"]]["factor"].unique() if len(errors) else []
        st.caption("The judge's error rate on the labelled items by factor; a factor is "
                   "flagged when its test survives Holm's adjustment over the factors. "
                   + (f"Flagged: {plain(', '.join(flagged))}." if len(flagged) else
                      "No factor is flagged."))
        kit.table(errors, "audit_judge_errors", runs=[run], key="aud_errors", options=options)
        st.markdown("**Items the reviewers overruled**")
        kit.table(tables["overruled"], "audit_overruled", runs=[run], key="aud_overruled",
                  options=options)

st.subheader("Sheets")
d1, d2, d3 = st.columns(3)
d1.download_button("Blank sheet of this sample (CSV)", page.sheet_csv(sample, run),
                   file_name=f"audit-sample-{run.content_hash[:12]}.csv", mime="text/csv",
                   help="To label in a spreadsheet: fill in target_found (yes/no) and "
                        "reviewer, then upload it here or run `kbench audit RUN --labels`.")
d2.download_button("All labels (CSV)", audit.labels_csv(labels.frame),
                   file_name=f"audit-labels-{run.content_hash[:12]}.csv", mime="text/csv",
                   disabled=labels.frame.empty)
upload = d3.file_uploader("Upload a filled sheet", type=["csv"], key="aud_upload",
                          help="Labels made in a spreadsheet (a CSV file of at most "
                               f"{MAX_LABEL_BYTES // 1024**2} MB, whatever the box below "
                               "says); rows without target_found are skipped, your name "
                               "fills an empty reviewer.")
if upload is not None:
    token = (upload.name, upload.size, run.content_hash)
    done = state.session_setdefault("kbench_audit_imported", set())
    if token not in done:
        try:
            imported, warnings = audit.read_labels((upload.name, upload.getvalue()),
                                                   run_sha256=run.content_hash, judged=frame,
                                                   reviewer=reviewer)
        except LabelError as err:
            st.error("The sheet was not imported; nothing already labelled changed.")
            st.code(str(err), language=None, wrap_lines=True)
        else:
            page.add_labels(run, page.imported_rows(imported), reviewer=reviewer)
            done.add(token)
            st.success(f"Imported {len(imported):,} labels from {plain(upload.name)}.")
            for line in warnings:
                st.warning(plain(line), icon=":material/warning:")
            st.rerun()
kit.done()
