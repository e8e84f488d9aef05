"""The Vulnerability page's One sample section: a detector's answers on one sample as the
chosen judge decided them, each judge's decision beside the majority's, and the detector's
findings (:func:`drill_down`; re-exported by :mod:`kbench_app.vuln`)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import streamlit as st

from kbench_app import cache
from kbench_app.ui import table_config
from kbench_core import vuln
from kbench_core.families.judged import MAJORITY, Keys
from kbench_core.io import Run
from kbench_core.select import labels_in
from kbench_core.text import count_noun

__all__ = ["DRILL_COLUMNS", "DRILL_JUDGE_FIELDS", "DRILL_LABELS", "MAX_SAMPLE_OPTIONS",
           "drill_down", "judges_view", "samples_of"]

DRILL_COLUMNS = ("prompt_type", "is_vulnerable", "severity", "vuln_type", "said_vulnerable",
                 "confidence", "target_found", "type_match", "rcir", "ava", "fsv",
                 "claimed_lines", "true_lines")
MAX_SAMPLE_OPTIONS = 2_000  # a longer list would be sent on every rerun


def samples_of(selected: pd.DataFrame, model: str) -> list[str]:
    """The sample ids ``model`` answered in ``selected``, sorted as text."""
    return sorted(map(str, selected["sample"][labels_in(selected["model"], [model])].unique()))


def _item_rows(frame: pd.DataFrame, *, model: str, sample: str) -> pd.DataFrame:
    """Every judge's rows of ``model``'s answers on ``sample`` (all its prompt types)."""
    return frame[labels_in(frame["model"], [model]) & labels_in(frame["sample"], [sample])]


DRILL_LABELS = {"n_judges": st.column_config.NumberColumn(
                    "Judgements", help="Judges whose judgement of the answer could be read"),
                "no_majority": st.column_config.TextColumn(
                    "No majority on", help="Labels no value won the votes needed for"),
                "failed_judgement": st.column_config.TextColumn(
                    "Failed judgement", help="Why the judge's record could not be read")}
DRILL_JUDGE_FIELDS = ("said_vulnerable", "confidence", "target_found", "partial_found",
                      "type_match", "rcir", "ava", "fsv", *(
                          c for c in ("n_target_match", "n_partial_match", "n_bonus_valid",
                                      "n_hallucinated", "n_other_invalid")),
                      "claimed_lines", "claims_fixed_target", "failed_judgement",
                      "n_judges", "no_majority")


def judges_view(raw: pd.DataFrame, majority: pd.DataFrame | None,
                prompt_type: str | None) -> pd.DataFrame:
    """One answer (a prompt type of the rows) field by field: each judge's decision as
    :func:`kbench_app.agreement.item_records` lays it out (the Judge agreement page's
    "Answer to inspect"), then the majority's (``majority`` rows, when given), as text."""
    from kbench_app.agreement import _item_records

    def fields(rows: pd.DataFrame) -> pd.DataFrame:
        keep = [c for c in ("sample", "model", "prompt_type", "judge", *DRILL_JUDGE_FIELDS)
                if c in rows]
        item = {c: str(rows[c].iloc[0]) for c in ("sample", "model") if c in rows and len(rows)}
        if prompt_type is not None:
            item["prompt_type"] = prompt_type
        return _item_records(rows[keep], item=item)

    table = fields(raw)
    if majority is None or table.empty:
        return table
    voted = fields(majority)
    if voted.empty:
        return table
    # a median of whole counts that is whole reads as the judges' counts do ("1", not "1.0");
    # a score stays as the judges' read ("1.0")
    counts = voted["field"].astype(str).str.startswith("n_")
    voted.loc[counts, MAJORITY] = voted.loc[counts, MAJORITY].str.replace(
        r"^(-?\d+)\.0$", r"\1", regex=True)
    # the majority last, its own fields (n_judges, no_majority) after the judges' fields
    out = table.merge(voted, on="field", how="outer", sort=False)
    order = {f: i for i, f in enumerate([*table["field"], *voted["field"]])}
    out = out.iloc[out["field"].map(order).argsort(kind="stable")].reset_index(drop=True)
    return out.fillna("")


def drill_down(selected: pd.DataFrame, models: Sequence[str], judge: str, *,
               runs: Sequence[Run], selection: tuple, frame: pd.DataFrame | None = None
               ) -> None:
    """The One sample section: a detector's answers on one sample as ``judge`` decided them,
    then (``frame``: every judge's rows) each judge's decision beside the majority's, field
    by field, and the detector's findings as each judge classified them, with their
    reasoning; text shown exactly as uploaded (plain text, never markup). ``selection``
    names what cut ``selected`` out of ``runs`` (the sample list is cached on it: sorting a
    big run's ids on every rerun of the page cost a tenth of a widget change)."""
    from kbench_app import kit
    from kbench_app.ui import plain
    from kbench_core.schema import FINDING_COUNTS

    st.subheader("One sample")
    c1, c2, c3 = st.columns([2, 2, 3])
    model = kit.select("Detector model", models, key=Keys.DRILL_MODEL, container=c1,
                       in_url=False)
    search = kit.text("Search sample ids", key=Keys.DRILL_SEARCH, container=c3,
                      placeholder="part of a sample id")
    sample_ids = cache.cached(samples_of, selected, runs=runs, selection=selection,
                              model=model)
    if search:
        sample_ids = [s for s in sample_ids if search.lower() in s.lower()]
    if not sample_ids:
        st.info("No sample matches.")
        return
    sample = kit.select(f"Sample ({len(sample_ids):,})", sample_ids[:MAX_SAMPLE_OPTIONS],
                        key=Keys.DRILL_SAMPLE, container=c2, in_url=False)
    if len(sample_ids) > MAX_SAMPLE_OPTIONS:
        c2.caption(f"The first {MAX_SAMPLE_OPTIONS:,} are listed; search to find the others.")
    answers = selected[labels_in(selected["model"], [model])
                       & labels_in(selected["sample"], [sample])]
    majority = judge == MAJORITY
    raw = answers
    if frame is not None:
        raw = cache.cached(_item_rows, frame, runs=runs, selection=(), model=model,
                           sample=sample)
        if not majority:  # the chosen judge's own rows for its findings
            raw_findings = raw[labels_in(raw["judge"], [judge])]
        else:  # the detector's findings as each LLM judge read them
            raw_findings = raw[~labels_in(raw["judge"], ["human"])]
    else:
        raw_findings = answers
    n_judges = (len([j for j in map(str, raw["judge"].unique()) if j != "human"])
                if frame is not None else 1)
    st.caption(f"{count_noun(len(answers), 'answer')} of **{plain(model)}** on "
               f"**{plain(sample)}** as judged by **{plain(judge)}**"
               + (f" (the majority of {count_noun(n_judges, 'judge')}: each judge's "
                  "decision is below)" if majority else "")
               + "; text is shown exactly as uploaded.")
    extra = ("n_judges", "no_majority") if majority else ("failed_judgement",)
    drill = answers[[c for c in (*DRILL_COLUMNS, *FINDING_COUNTS, *extra) if c in answers]]
    st.dataframe(drill, hide_index=True, width="stretch", key="vuln_drill_answers",
                 column_config=table_config(drill, DRILL_LABELS))

    if frame is not None and raw["judge"].nunique() >= 2:
        prompts = (sorted(map(str, answers["prompt_type"].dropna().unique()))
                   if "prompt_type" in answers else [])
        prompt = None
        if len(prompts) > 1:
            prompt = kit.select("Answer (prompt type)", prompts, key=Keys.DRILL_PROMPT,
                                in_url=False)
        elif prompts:
            prompt = prompts[0]
        st.markdown("**Each judge's decision" + (" and the majority's" if majority else "")
                    + "**" + (f" on the {plain(prompt)} prompt" if prompt else ""))
        record = judges_view(raw, answers if majority else None, prompt)
        st.dataframe(record, hide_index=True, width="stretch", key="vuln_drill_judges",
                     column_config=table_config(record))
        failed = "failed_judgement" in raw and bool(raw["failed_judgement"].notna().any())
        st.caption("One column per judge (its reasoning is in the findings below)"
                   + (", then the majority: each label the value at least the votes needed "
                      "gave (no_majority names those without one)" if majority else "")
                   + (". A column with a failed_judgement is a judgement that failed: its "
                      "labels are empty, never a 'no'" if failed else "") + ".")

    findings = vuln.sample_findings(raw_findings)
    if "findings" not in raw_findings:
        st.caption("This run gives finding counts only (no findings text).")
    elif findings.empty:
        failed = ("failed_judgement" in raw_findings
                  and raw_findings["failed_judgement"].notna().all())
        st.caption("No judgement of this answer could be read (see failed_judgement)."
                   if failed and len(raw_findings) else
                   "No judge lists a finding of the detector here.")
    else:
        listed = findings.drop(columns=["sample", "model"]
                               + ([] if majority and frame is not None else ["judge"]),
                               errors="ignore")
        st.markdown("**The detector's findings**" + (", as each judge classified them"
                                                     if majority else ""))
        st.dataframe(listed, hide_index=True, width="stretch", key="vuln_drill_findings",
                     column_config=table_config(listed))
        st.caption("The claimed type, location and description are the detector's; the "
                   "classification and its reasoning are the judge's.")
