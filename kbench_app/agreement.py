"""The Judge agreement page's widget keys, cached computations and table presentation.

Every number comes from :mod:`kbench_core.agreement` through :func:`kbench_app.cache.cached`
(keyed on the run's content hash, the selection and the options), so moving between labels or
pages recomputes nothing already seen (the bootstrap included); this module only lays the
results out for display.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from kbench_app import cache
from kbench_app.ui import shown, table_config
from kbench_core import agreement, families, vuln
from kbench_core.families.judged import AgreementOptions, ConsensusOptions
from kbench_core.families.judged import Keys as VulnKeys
from kbench_core.io import Run
from kbench_core.select import labels_in


class Keys:
    """The page's widget keys (also the names of its link parameters)."""

    RUN = "agr_run"
    LABEL = "agr_label"
    WEIGHTS = "agr_weights"
    BOOTSTRAP = "agr_bootstrap"
    MIN_VOTES = "agr_min_votes"
    VOTERS = "agr_voters"
    FAILED_AS = "agr_failed_as"
    JUDGE_A = "agr_judge_a"
    JUDGE_B = "agr_judge_b"
    DIS_LABEL = "agr_dis_label"
    DIS_MODELS = "agr_dis_models"
    DIS_PROMPTS = "agr_dis_prompts"
    DIS_MISSING = "agr_dis_missing"
    ITEM = "agr_item"
    LABELS_SECTION = "agr_labels_open"
    TIERS_SECTION = "agr_tiers_open"
    # What depends on the run (its labels, judges, models, size): forgotten when it changes.
    PER_RUN = (LABEL, WEIGHTS, BOOTSTRAP, MIN_VOTES, VOTERS, JUDGE_A, JUDGE_B, DIS_LABEL,
               DIS_MODELS, DIS_PROMPTS, ITEM)


EMPTY = ("No judged vulnerability-detection run is loaded. Add one on the Runs page; agreement "
         "needs a run in which at least two judges labelled the same answers.")
NONE_ELIGIBLE = ("The judged runs loaded have a single judge each. Judge agreement needs at "
                 "least two judges of the same answers (several LLM judges, or one and expert "
                 "labels under the judge name `human`).")
# Larger runs bootstrap α on request (~1.6 s a label at 600k rows) and compute the sections
# below the top (every label: ~1 s; the tiers of every judge: ~2.5 s) when they are opened.
BOOTSTRAP_BY_DEFAULT_ROWS = 100_000

MAX_DISAGREEMENTS = 1_000  # rows sent to the browser; the CSV holds every matching one
# Landis & Koch bands as badge colours (st.badge), from red (poor) to green (almost perfect).
BAND_COLORS: dict[str, str] = {"poor": "red", "slight": "orange", "fair": "orange",
                               "moderate": "blue", "substantial": "green",
                               "almost perfect": "green", "undefined": "gray"}
# The consensus leaderboard's metrics, SUI (the ranking) first, with short headings.
LEADERBOARD: dict[str, str] = {"sui": "SUI", "tdr": "TDR", "accuracy": "Accuracy", "f2": "F2",
                               "finding_precision": "Finding precision",
                               "avg_reasoning": "Mean reasoning",
                               "lucky_guess_rate": "Lucky-guess rate", "ece": "ECE",
                               "tus": "TUS", "lgi": "LGI"}
BEST = {m: "min" if m in vuln.LOWER_IS_BETTER else "max"  # bold in the LaTeX download
        for m in vuln.HIGHER_IS_BETTER | vuln.LOWER_IS_BETTER}


def eligible_runs(runs: Mapping[str, Run]) -> dict[str, Run]:
    """Judged runs with at least two judges (LLM judges, or one LLM judge and ``human``)."""
    return {name: run for name, run in runs.items()
            if run.kind in families.judged_kinds() and len(agreement.judges(run.frame)) >= 2}


# ---------------------------------------------------------------- the majority's controls

FAILED_AS_WORDS = {"missing": "Missing (left out)",
                   "not_found": "Not found (BlockBench)"}
FAILED_AS_HELP = ("A failed judgement (a judge whose record could not be read, or who gave no "
                  "value) is left out by default. BlockBench's own numbers count it as 'not "
                  "found': that choice applies to target_found and partial_found, in the "
                  "coefficients and in the majority's vote.")


def failed_as_control(*, key: str, container: Any = None) -> str:
    """The radio choosing what a failed judgement counts as (``missing`` or ``not_found``),
    in the link like every page widget."""
    from kbench_app import kit

    return kit.radio("Failed judgements", list(FAILED_AS_WORDS), key=key, container=container,
                     format_func=FAILED_AS_WORDS.get, horizontal=True, help=FAILED_AS_HELP)


def voter_controls(frame: pd.DataFrame, *, voters_key: str, votes_key: str,
                   container: Any = None, failed_as: str = "missing",
                   judge: str | None = None) -> ConsensusOptions:
    """The judges whose majority is taken (default: every LLM judge) and the votes it needs
    (default: a strict majority of them), as :class:`ConsensusOptions`. Choosing other
    judges puts the votes back to their majority. With one judge chosen there is nothing to
    vote on: it needs its one vote."""
    from kbench_app import kit

    box = container or st
    llm = [j for j in agreement.judges(frame) if j != agreement.HUMAN]
    chosen = kit.multiselect("Judges of the majority", llm, key=voters_key, default=llm,
                             resets=(votes_key,), container=box,
                             help="The judges whose votes make the majority (e.g. the three "
                                  "a paper published); 'human' is the reference, never a "
                                  "voter.")
    if not chosen:
        box.warning("Choose at least one judge: the majority of every judge is shown.")
        chosen = llm
    majority = len(chosen) // 2 + 1
    min_votes = 1
    if len(chosen) > 1:
        min_votes = kit.slider("Votes the majority needs", 1, len(chosen), key=votes_key,
                               default=majority, container=box,
                               help=f"Default: a strict majority ({majority} of "
                                    f"{len(chosen)}). An answer without enough votes is "
                                    "reported and not credited.")
    voters = () if sorted(chosen) == sorted(llm) else tuple(sorted(chosen))
    return ConsensusOptions(judge=judge, judges=voters,
                            min_votes=None if min_votes == majority else int(min_votes),
                            failed_as=failed_as)  # type: ignore[arg-type]


def failed_caption(label: str, failed_as: str) -> str:
    """What the coefficients of ``label`` counted a failed judgement as, in words."""
    from kbench_app.ui import plain

    rule = agreement.failed_rule(label, failed_as)  # type: ignore[arg-type]
    if rule == "not_found":
        return (f"Failed judgements of **{plain(label)}** count as 'not found' (BlockBench's "
                "convention): every answer some judge labelled enters every coefficient.")
    if failed_as == "not_found":
        return (f"**{plain(label)}** has no 'not found': its failed judgements are left out "
                "(missing), as for every label but target_found and partial_found.")
    return ("Failed judgements are left out (missing, not 'no'). BlockBench's published "
            "agreement counts them as 'not found': choose it under Failed judgements.")


# The Vulnerability page's majority-vote controls (its Keys, kbench_core.families.judged;
# voters and minimum votes are cleared with a new run: its page entry names them).
MAJORITY_KEYS = (VulnKeys.VOTERS, VulnKeys.MIN_VOTES, VulnKeys.FAILED_AS)


def _run_judges(frame: pd.DataFrame) -> dict[str, list[str]]:
    """The LLM judges of each run of a frame of several runs (its ``run`` column); one
    entry, named "", for a frame of one run."""
    if "run" not in frame or frame["run"].nunique() < 2:
        return {"": [j for j in agreement.judges(frame) if j != agreement.HUMAN]}
    # (run, judge) pairs by their codes: no copy of a big frame's rows per run
    run = frame["run"].astype("category").array
    judge = frame["judge"].astype("category").array
    width = len(judge.categories) + 1
    pairs = np.unique(run.codes.astype(np.int64) * width + judge.codes + 1)
    out: dict[str, list[str]] = {}
    for code in pairs:
        r, j = divmod(int(code), width)
        if r >= 0 and j > 0 and str(judge.categories[j - 1]) != agreement.HUMAN:
            out.setdefault(str(run.categories[r]), []).append(str(judge.categories[j - 1]))
    return {name: sorted(judges) for name, judges in out.items()}


def majority_controls(frame: pd.DataFrame, judge: str, *,
                      container: Any = None) -> ConsensusOptions | None:
    """The Vulnerability page's choice of how the majority of several LLM judges is made
    (voters, votes, failed judgements), in an expander under the judge; None for a run with
    no failed judgement and fewer than two LLM judges (nothing to choose). A run with one
    LLM judge and failed judgements gets the Failed judgements choice alone; runs of
    different judges viewed together each keep their own majority (every judge of the run,
    a strict majority), so only that choice is offered then too."""
    per_run = _run_judges(frame)
    llm = [j for j in agreement.judges(frame) if j != agreement.HUMAN]
    failed = "failed_judgement" in frame and bool(frame["failed_judgement"].notna().any())
    several = any(len(judges) >= 2 for judges in per_run.values())
    if not several and not failed:
        return None
    voters_key, votes_key, failed_key = MAJORITY_KEYS
    title = "How the majority is made" if several else "Failed judgements"
    box = (container or st).expander(title, icon=":material/how_to_vote:")
    with box:
        failed_as = failed_as_control(key=failed_key)
        if len(per_run) > 1 and len({tuple(j) for j in per_run.values()}) > 1:
            st.caption("Each run's majority is made of its own judges, a strict majority of "
                       "them.")
            return ConsensusOptions(judge=judge, failed_as=failed_as)  # type: ignore[arg-type]
        if len(llm) < 2:
            return ConsensusOptions(judge=judge, failed_as=failed_as)  # type: ignore[arg-type]
        return voter_controls(frame, voters_key=voters_key, votes_key=votes_key,
                              failed_as=failed_as, judge=judge)


def majority_caption(voting: ConsensusOptions, frame: pd.DataFrame) -> str:
    """One line saying how the majority was made: its voters, the votes needed and what a
    failed judgement counted as (run by run for runs of different judges viewed
    together)."""
    from kbench_app.ui import plain

    def rule(llm: list[str]) -> str:
        voters = [j for j in voting.judges if j in llm] or llm
        needed = voting.min_votes or len(voters) // 2 + 1
        return f"{needed} of {len(voters)} votes ({plain(', '.join(voters))})"

    per_run = _run_judges(frame)
    if len(per_run) > 1 and len({tuple(j) for j in per_run.values()}) > 1:
        text = "Majority, run by run: " + "; ".join(
            f"**{plain(run)}** {rule(llm)}" for run, llm in per_run.items() if llm)
    else:
        text = "Majority: " + rule(next(iter(per_run.values())))
    return text + "; " + agreement.FAILED_WORDS[voting.failed_as] + "."


# ------------------------------------------------------------------------- cached numbers


def summary(frame: pd.DataFrame, run: Run,
            options: AgreementOptions) -> agreement.AgreementSummary:
    """:func:`kbench_core.agreement.summarize` of the options' label."""
    return cache.cached(agreement.summarize, frame, runs=[run], label=options.label,
                        spinner="Comparing the judges...", **options.summarize())


def every_label(frame: pd.DataFrame, run: Run, options: AgreementOptions) -> pd.DataFrame:
    """:func:`kbench_core.agreement.agreement_by_label` of the run."""
    return cache.cached(agreement.agreement_by_label, frame, runs=[run],
                        spinner="Agreement on every label...", **options.label_agreement())


def judge_tiers(frame: pd.DataFrame, run: Run,
                options: AgreementOptions) -> agreement.JudgeTiers:
    """:func:`kbench_core.agreement.judge_tiers`: the spread and the consensus leaderboard."""
    return cache.cached(agreement.judge_tiers, frame, runs=[run],
                        spinner="Computing the tiers of every judge...", **options.consensus())


def confusion(frame: pd.DataFrame, run: Run, label: str, judge_a: str,
              judge_b: str) -> pd.DataFrame:
    """:func:`kbench_core.agreement.confusion` of two judges."""
    return cache.cached(agreement.confusion, frame, runs=[run], label=label, judge_a=judge_a,
                        judge_b=judge_b)


def disagreements(frame: pd.DataFrame, run: Run, label: str, *, include_missing: bool,
                  models: Sequence[str], prompts: Sequence[str] | None) -> pd.DataFrame:
    """:func:`kbench_core.agreement.disagreements` of the run, cut to ``models`` and (when the
    run has prompt types) ``prompts``."""
    items = cache.cached(agreement.disagreements, frame, runs=[run], label=label,
                         include_missing=include_missing)
    return cache.cached(_matching, items, runs=[run], selection=(label, include_missing),
                        models=tuple(models), prompts=None if prompts is None else tuple(prompts))


def _matching(items: pd.DataFrame, *, models: Sequence[str],
              prompts: Sequence[str] | None) -> pd.DataFrame:
    keep = labels_in(items["model"], models)
    if prompts is not None and "prompt_type" in items:
        keep &= labels_in(items["prompt_type"], prompts)
    return items[keep].reset_index(drop=True)


def item_records(frame: pd.DataFrame, run: Run, item: Mapping[str, Any]) -> pd.DataFrame:
    """Every judge's row of one answer, transposed (fields × judges), as text."""
    return cache.cached(_item_records, frame, runs=[run], selection=tuple(item.items()),
                        item=dict(item))


def _item_records(frame: pd.DataFrame, *, item: Mapping[str, Any]) -> pd.DataFrame:
    mask = np.ones(len(frame), dtype=bool)
    for column, value in item.items():
        if column in frame:
            mask &= labels_in(frame[column], [str(value)])
    rows = frame[mask]
    if rows.empty:
        return pd.DataFrame()
    order = {j: i for i, j in enumerate(agreement.judges(frame))}
    rows = rows.iloc[rows["judge"].astype(str).map(order).fillna(len(order))
                     .to_numpy().argsort(kind="stable")]
    table = rows.drop(columns=[c for c in item if c in rows]).astype(object)
    table = table.where(table.notna(), "")
    table.index = rows["judge"].astype(str).to_numpy()
    out = table.drop(columns="judge").T.astype(str)
    out.index.name = "field"
    return out.reset_index()


# ------------------------------------------------------------------------------ display


def cards(summary: agreement.AgreementSummary) -> list[tuple[str, Any, str, str]]:
    """The coefficient cards of a summary: ``(title, estimate, help, what n_dropped
    means)``; Fleiss' κ first when the label has one."""
    out = [(f"Krippendorff's α ({summary.level})", summary.alpha,
            "Agreement beyond chance with missing judgements allowed; interval: bootstrap over "
            "items.", "labelled by one judge only"),
           ("Percent agreement", summary.percent,
            "Share of items on which every judge that labelled it agrees (no chance "
            "correction). Interval: Wilson.", "labelled by one judge only")]
    if summary.fleiss is not None:
        out.insert(0, ("Fleiss' κ", summary.fleiss, "Agreement of all LLM judges beyond "
                       "chance, over the items every one labelled. Interval: Gwet's asymptotic "
                       "standard error.", "not labelled by every judge"))
    return out


def answer_choices(items: pd.DataFrame) -> dict[str, dict[str, str]]:
    """``sample · model · prompt type`` of each listed answer, with its key values."""
    keys = [c for c in agreement.ITEM_KEY if c in items]
    return {" · ".join(row): dict(zip(keys, row, strict=True))
            for row in items[keys].astype(str).itertuples(index=False)}


def interval_text(low: float, high: float) -> str:
    """``95% CI [low, high]`` with three decimals, or a note that there is none."""
    if pd.isna(low) or pd.isna(high):
        return "no interval"
    return f"95% CI [{low:.3f}, {high:.3f}]"


def view(frame: pd.DataFrame, labels: Mapping[str, object] | None = None,
         **kwargs: Any) -> dict[str, Any]:
    """``view=`` and ``config=`` of :func:`kbench_app.kit.table` for ``frame``: numbers as the
    app's tables show them (integers as integers, 4 significant digits), first column pinned."""
    display = shown(frame.reset_index(drop=True))
    return dict(view=display, config=table_config(display, labels), **kwargs)


PAIR_LABELS = {"judge_a": "Judge", "judge_b": "Judge", "kappa": "κ", "kappa_low": "low",
               "kappa_high": "high", "alpha": "α", "alpha_low": "low", "alpha_high": "high",
               "n_dropped": "left out", "percent_agreement": "agreement"}
SPREAD_LABELS = {"judge_low": "lowest judge", "judge_high": "highest judge",
                 "n_judges": "judges"}


def board_view(table: pd.DataFrame) -> dict[str, Any]:
    """The consensus leaderboard for display: rank, model, SUI, ``n``, the samples, the "few
    samples" and "renormalised" marks, then the other headline metrics (``rank_text`` is in
    the download; here the mark has its own column)."""
    columns = ["rank", "model", "sui", "n", "n_samples", "few_items", "renormalised",
               *(c for c in LEADERBOARD if c in table and c != "sui")]
    display = shown(table[[c for c in columns if c in table]].reset_index(drop=True))
    display["model"] = display["model"].astype(str)
    labels: dict[str, object] = {
        **LEADERBOARD,
        "rank": st.column_config.NumberColumn("Rank", pinned=True, format="%d",
                                              help="By SUI, 1 = best"),
        "model": st.column_config.TextColumn("Model", pinned=True),
        "n": st.column_config.NumberColumn("n", format="localized",
                                           help="Answers (samples × prompt types)"),
        "n_samples": st.column_config.NumberColumn("Samples", format="localized",
                                                   help="Distinct samples"),
        "few_items": st.column_config.CheckboxColumn(
            "Few samples", help="Fewer than 30 samples behind the row: its rank and rates are "
                                "uncertain"),
        "renormalised": st.column_config.CheckboxColumn(
            "Renormalised", help="A composite (SUI or TUS) had an undefined component and "
                                 "was computed over the others with their weights "
                                 "renormalised")}
    return dict(view=display, config=table_config(display, labels, pin="rank"))
