"""The Vulnerability page's widget keys, cached computations and table presentation."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from kbench_app import cache
from kbench_app.ui import decimals_format, interval_text, shown
from kbench_app.vuln_sample import drill_down as drill_down  # the One sample section
from kbench_app.vuln_sample import judges_view as judges_view
from kbench_core import vuln
from kbench_core.agreement import judge_rows
from kbench_core.families.judged import (  # Keys: the page's widget keys, written once there
    MAJORITY,
    ConsensusOptions,
    Keys,
    TierOptions,
    difficulty_tdr,
    fixed_versions,
    judge_views,
    leaderboard,
    leaderboard_groups,
)
from kbench_core.figures import vuln as vuln_figures
from kbench_core.io import Run
from kbench_core.ranking import rank_interval_text
from kbench_core.select import labels_in

BOOTSTRAP_BY_DEFAULT_ROWS = 100_000  # larger runs bootstrap on request (seconds, not instant)
HEADLINE = ("sui", "tus", "tus_geometric", "lgi", "accuracy", "f2", "tdr", "tdr_difficulty_mean",
            "lucky_guess_rate", "finding_precision", "hallucination_rate", "avg_reasoning",
            "ece", "ece_l2_debiased", "brier", "location_accuracy")
_HELP = {
    "sui": "Security Understanding Index: weighted mean of F2, TDR, finding precision, mean "
           "reasoning and 1 − ECE",
    "tus": "True Understanding Score: TDR × mean reasoning × (1 − invalid rate)",
    "tus_geometric": "Cube root of TUS (one low factor no longer collapses the product)",
    "lgi": "Lucky-guess indicator: accuracy − TDR",
    "tdr": "Targets found / vulnerable answers",
    "lucky_guess_rate": "Said vulnerable on a vulnerable contract without finding the target, "
                        "over TP",
    "bonus_discovery_rate": "Answers with more valid findings than the target found",
    "finding_precision": "Valid findings (target, partial, bonus) / all findings",
    "over_flagging": "Invalid findings per answer",
    "ece": "Expected calibration error of the stated confidence, the plug-in Σ (n_b/N)·|gap| "
           "as BlockBench computes it (and as SUI uses it). Biased upward: noise alone makes "
           "it positive (about 0.03 for a perfectly calibrated detector with 500 answers in "
           "10 bins), and its interval does not cover a calibrated detector's 0. See the "
           "debiased calibration error beside it",
    "ece_l2_debiased": "Debiased calibration error (Kumar, Liang & Ma 2019): the root-mean-"
                       "square (ℓ2) gap with each bin's noise subtracted, as a signed root. "
                       "About 0 (or below) for a calibrated detector; its interval covers a "
                       "calibrated detector's 0",
    "tdr_difficulty_mean": "Mean of the TDRs of the difficulty tiers (each tier weighs "
                           "alike: BlockBench's DS 'Avg'); TDR beside it weighs every answer "
                           "alike",
    "mce": "Largest calibration gap over the bins",
    "location_accuracy": "|claimed ∩ true lines| / |true lines|, over found targets",
    "n": "Answers (samples × prompt types) behind the row",
}


BEST = {m: "min" if m in vuln.LOWER_IS_BETTER else "max"
        for m in vuln.HIGHER_IS_BETTER | vuln.LOWER_IS_BETTER}
FIXED_CAPTION = ("Of the fixed (patched) contracts, the share where the detector still claims "
                 "the vulnerability that was fixed (lower is better), beside its TDR on the "
                 "vulnerable versions; Wilson 95% intervals. Per the chosen judge and, with "
                 "several judges, by their majority (a claim without a majority is left out). "
                 "The two rates are unpaired.")


def _groups(frame: pd.DataFrame, *, names: tuple[str, ...]) -> list[list[str]]:
    """:func:`kbench_core.families.judged.leaderboard_groups` of the runs combined in
    ``frame`` (its ``run`` column), in the order of ``names``."""
    if "run" not in frame or len(names) < 2:
        return [list(names)]
    return leaderboard_groups({name: frame[labels_in(frame["run"], [name])]
                               for name in names})


@dataclass(frozen=True)
class RunGroup:
    """The runs one view of the page shows (:func:`pick_run_group`)."""

    runs: tuple[Run, ...]
    frame: pd.DataFrame
    together: bool             # runs of different benchmarks or judges, ranked together
    groups: tuple[tuple[str, ...], ...]  # the runs that could share a leaderboard


def pick_run_group(runs: Sequence[Run], frame: pd.DataFrame) -> RunGroup:
    """With chosen runs of different benchmarks or judges
    (:func:`kbench_core.families.judged.leaderboard_groups`), a choice of which of them the
    page shows: one benchmark's runs at a time by default, or every run ranked in one
    leaderboard when the user asks (and the page then says so). Each run keeps its own
    judges and majority either way (:func:`kbench_core.agreement.consensus` votes run by
    run)."""
    from kbench_app import kit, state
    from kbench_app.agreement import MAJORITY_KEYS

    names = tuple(run.name for run in runs)
    groups = cache.cached(_groups, frame, runs=runs, names=names)
    if len(groups) < 2:
        return RunGroup(tuple(runs), frame, False, tuple(tuple(g) for g in groups))
    shown = kit.pick_group(
        groups, key=Keys.RUN_GROUP,
        resets=(Keys.MODELS, Keys.JUDGE, Keys.DRILL_MODEL, Keys.DRILL_SAMPLE,
                *MAJORITY_KEYS[:2]),
        help="These runs have different judges or contracts (benchmarks): each is ranked "
             "in its own leaderboard. 'Every run together' ranks all their detectors in one "
             "table, each run still judged by its own judges and majority.",
        why="The chosen runs have different judges or contracts, so each of",
        apart="is ranked in its own leaderboard")
    if shown is None:
        return RunGroup(tuple(runs), frame, True, tuple(tuple(g) for g in groups))
    keep = [run for run in runs if run.name in groups[shown]]
    return RunGroup(tuple(keep), state.combined_runs(keep), False,
                    tuple(tuple(g) for g in groups))


def together_caption(group: RunGroup) -> str:
    """What the leaderboard says when it ranks runs of different benchmarks or judges
    together, as the user asked."""
    from kbench_app.ui import plain

    return (":material/warning: Ranked together as you asked: detectors of "
            f"{len(group.runs)} runs with different judges or contracts ("
            + "; ".join(plain(" + ".join(g)) for g in group.groups)
            + "). A rank across them compares answers to different contracts, judged by "
              "different judges; each run's numbers are its own majority's.")


def weight_sliders() -> dict[str, float]:
    """SUI's weights, one slider per component in an expander, with a button back to the
    seed's; returns the weights in use."""
    from kbench_app import kit

    def reset() -> None:
        for name, weight in vuln.SUI_WEIGHTS.items():
            kit.set_value(Keys.WEIGHT + name, weight)

    with st.expander("SUI weights (the leaderboard re-ranks as you move them)",
                     icon=":material/balance:"):
        columns = st.columns(len(vuln.SUI_WEIGHTS) + 1)
        weights = {name: float(kit.slider(vuln.SUI_COMPONENTS[name], 0.0, 1.0,
                                          key=Keys.WEIGHT + name, default=weight, step=0.05,
                                          container=column))
                   for column, (name, weight) in zip(columns, vuln.SUI_WEIGHTS.items(),
                                                     strict=False)}
        columns[-1].button("Seed's weights", on_click=reset, key=Keys.WEIGHTS_RESET,
                           help="F2 .25, TDR .25, finding precision .15, reasoning .25, "
                                "calibration .10")
        st.caption("SUI divides by the sum of the weights, so they need not add up to 1. The "
                   "default weights are not derived from data: try others.")
    return weights


def tiers(selected: pd.DataFrame, *, runs: Sequence[Run], selection: tuple,
          options: TierOptions, by: tuple[str, ...] = ("model",),
          pool: tuple[pd.DataFrame, tuple, Sequence[str]] | None = None) -> pd.DataFrame:
    """The leaderboard (:func:`kbench_core.families.judged.leaderboard`) of the selection.

    Without the bootstrap the tiers are computed (and cached) once under the seed's SUI
    weights and re-weighted, so moving a weight slider costs nothing; with it, SUI's interval
    belongs to the weights, so the tiers are computed per weights.

    ``pool`` is ``(rows, their selection, models)``: the same judge's answers of every
    detector, and the models of ``selected``. Without the bootstrap each group's tiers
    depend on that group's answers alone, so they are computed once over the pool and the
    chosen models' rows cut out of it: another set of models is a lookup, not a
    recomputation (with the bootstrap the models are resampled together, so the selection
    is computed as it is)."""
    if options.bootstrap:
        table = cache.cached(vuln.tiers, selected, runs=runs, selection=selection,
                             spinner="Computing the tiers...", by=by, **options.tiers())
        return leaderboard(table)
    models = None
    if pool is not None:
        selected, selection, models = pool[0], pool[1], list(pool[2])
    # The tiers under the seed's weights and default bins, computed once; other bins
    # change only ECE and MCE (vuln.rebin) and weights only SUI (vuln.reweight_sui).
    base = seed_bins_and_weights(options)
    # The answers read into arrays once per selection: another partial credit, severity
    # weighting or treatment of undefined ratios re-weighs them (kbench_core.vuln.tiers).
    answers = cache.cached(vuln.prepare_answers, selected, runs=runs, selection=selection,
                           by=by)
    table = cache.cached(vuln.tiers, answers, runs=runs, selection=selection,
                         spinner="Computing the tiers...", by=by,
                         **base.tiers(with_weights=False))
    if (options.n_bins, options.binning) != (base.n_bins, base.binning):
        table = cache.cached(vuln.rebin, table, selected, runs=runs,
                             selection=(selection, base), by=by, n_bins=options.n_bins,
                             binning=options.binning)
    if models is not None:
        table = table[labels_in(table["model"], models)]
    return leaderboard(vuln.reweight_sui(table, options.weights()))


def difficulty_table(table: pd.DataFrame, by_difficulty: pd.DataFrame) -> pd.DataFrame:
    """TDR per difficulty tier beside their mean and the pooled TDR
    (:func:`kbench_core.families.judged.difficulty_tdr`)."""
    return difficulty_tdr(table, by_difficulty)


def reliability(frame: pd.DataFrame, *, runs: Sequence[Run], selection: tuple,
                options: TierOptions) -> pd.DataFrame:
    """:func:`kbench_core.vuln.reliability` of the selection in the options' bins."""
    return cache.cached(vuln.reliability, frame, runs=runs, selection=selection,
                        n_bins=options.n_bins, binning=options.binning)


def fixed(frame: pd.DataFrame, judge: str, *, runs: Sequence[Run],
          selection: tuple, voting: ConsensusOptions | None = None) -> pd.DataFrame:
    """:func:`kbench_core.families.judged.fixed_versions` of the chosen judge (and the
    consensus of several, made as ``voting`` says)."""
    return cache.cached(fixed_versions, frame, runs=runs, selection=selection,
                        judges=(judge,), consensus=voting)


def judge_choices(frame: pd.DataFrame) -> list[str]:
    """The Judge menu: with several LLM judges their ``majority`` first (the default view,
    docs/metrics/agreement.md), then each judge (``human`` last)."""
    from kbench_core.families.judged import offered_judges

    return offered_judges(frame)


def selected_rows(frame: pd.DataFrame, models: Sequence[str], judge: str, *,
                  runs: Sequence[Run], voting: ConsensusOptions | None = None) -> pd.DataFrame:
    """The chosen detectors' answers as judged by ``judge``, or by the majority
    (:func:`kbench_core.agreement.consensus` as ``voting`` says) when ``judge`` is
    ``majority`` (cached: on a 600k-row run the filter costs more than a rerun may take)."""
    def select(rows: pd.DataFrame, models: tuple[str, ...], judge: str) -> pd.DataFrame:
        return rows[labels_in(rows["model"], models) & labels_in(rows["judge"], [judge])]

    def one_judge(rows: pd.DataFrame, models: tuple[str, ...], judge: str,
                  failed_as: str) -> pd.DataFrame:
        # its failed judgements counted as the majority's are (agreement.judge_rows)
        rows = judge_rows(rows, judge, failed_as=failed_as)  # type: ignore[arg-type]
        return rows[labels_in(rows["model"], models)]

    def majority(rows: pd.DataFrame, voting: ConsensusOptions) -> pd.DataFrame:
        return judge_views(rows, replace(voting, judge=MAJORITY))[0][1]

    if judge == MAJORITY:  # one vote of the whole run (the items of every detector)
        frame = cache.cached(majority, frame, runs=runs, selection=(),
                             voting=voting or ConsensusOptions(),
                             spinner="Taking the judges' majority...")
        return cache.cached(select, frame, runs=runs, selection=voting, models=tuple(models),
                            judge=judge)
    return cache.cached(one_judge, frame, runs=runs, selection=None, models=tuple(models),
                        judge=judge, failed_as=voting.failed_as if voting else "missing")


def judge_pool(frame: pd.DataFrame, selected: pd.DataFrame, models: Sequence[str],
               judge: str, *, runs: Sequence[Run], voting: ConsensusOptions | None = None
               ) -> tuple[pd.DataFrame, tuple, tuple[str, ...]]:
    """The ``pool`` of :func:`tiers`: the chosen judge's answers of every detector of the
    run (``selected`` itself when every detector is chosen), the selection naming them, and
    the chosen ``models``."""
    everyone = tuple(sorted(map(str, frame["model"].unique())))
    rows = selected if set(models) == set(everyone) else selected_rows(
        frame, everyone, judge, runs=runs, voting=voting)
    return rows, (everyone, judge, voting), tuple(models)


def sui_figure(table: pd.DataFrame, *, weights: tuple[tuple[str, float], ...]) -> go.Figure:
    """The SUI composition chart of a leaderboard computed with these SUI ``weights``."""
    return vuln_figures.sui_leaderboard(table, vuln.sui_contributions(
        table, sui_weights=dict(weights)))


def tier_view(table: pd.DataFrame, metrics: Sequence[str], *,
              keys: Sequence[str] = ("model",)) -> tuple[pd.DataFrame, dict[str, object]]:
    """A display table: the keys, then each metric with its interval as text beside it, and
    ``n``; with its Streamlit column configuration."""
    # Columns gathered first and the frame made once: inserting some eighty columns one by
    # one cost more than the rest of a rerun.
    columns: dict[str, object] = {}
    config: dict[str, object] = {"model": st.column_config.TextColumn("Model", pinned=True),
                                 "prompt_type": "Prompt type",
                                 "rank": st.column_config.NumberColumn(
                                     "Rank (1 = best SUI)", help="By SUI, best first",
                                     pinned=True)}
    if "rank" in table:
        columns["rank"] = table["rank"]
        if "sui_rank_low" in table and table["sui_rank_low"].notna().any():
            columns["rank_ci"] = rank_interval_text(table["sui_rank_low"],
                                                    table["sui_rank_high"])
            config["rank_ci"] = st.column_config.TextColumn(
                "Rank 95% CI", help="Bootstrap over samples (with the intervals switched on): "
                                   "overlapping ranges mean the run cannot order those models")
    for key in keys:
        if key in table:
            columns[key] = table[key].astype(str)
    columns["n"] = table["n"]
    config["n"] = st.column_config.NumberColumn("n", help=_HELP["n"])
    if "n_samples" in table:
        columns["n_samples"] = table["n_samples"]
        config["n_samples"] = st.column_config.NumberColumn(
            "Samples", help="Distinct samples (contracts) behind the row")
    if "few_items" in table and table["few_items"].any():
        columns["few_items"] = table["few_items"].to_numpy(dtype=bool)
        config["few_items"] = st.column_config.CheckboxColumn(
            "Few samples", help="Fewer than 30 samples: its rank and rates are uncertain "
                                "(see the intervals)")
    for metric in metrics:
        if metric not in table:
            continue
        columns[metric] = table[metric]
        label = vuln.METRIC_LABELS.get(metric, metric)
        integer = pd.api.types.is_integer_dtype(table[metric])
        config[metric] = st.column_config.NumberColumn(
            label, help=_HELP.get(metric),
            format="localized" if integer else decimals_format(table[metric]))
        if f"{metric}_low" in table and table[f"{metric}_low"].notna().any():
            columns[f"{metric}_ci"] = interval_text(table[f"{metric}_low"],
                                                    table[f"{metric}_high"])
            config[f"{metric}_ci"] = st.column_config.TextColumn(f"{label} 95% CI")
    if "renormalised" in table and table["renormalised"].any():
        columns["renormalised"] = table["renormalised"].to_numpy(dtype=bool)
        config["renormalised"] = st.column_config.CheckboxColumn(
            "Renormalised", help="A composite (SUI or TUS) had an undefined component and was "
                                 "computed over the others with their weights renormalised")
    return shown(pd.DataFrame(columns, index=table.index).reset_index(drop=True)), config


def tier_views(table: pd.DataFrame, views: Sequence[tuple[str, Sequence[str]]], *,
               keys: Sequence[str] = ("model",)
               ) -> dict[str, tuple[pd.DataFrame, dict[str, object]]]:
    """:func:`tier_view` of ``table`` for each named list of metrics, built in one pass: the
    view of every metric at once, then each list's columns cut out of it in that list's order
    (the leaderboard and its seven tier tabs would otherwise each rebuild the same columns
    on every change)."""
    union = list(dict.fromkeys(m for _, metrics in views for m in metrics))
    full, full_config = tier_view(table, union, keys=keys)
    per_metric = set(union)
    shared = [c for c in full.columns if c not in per_metric
              and c.removesuffix("_ci") not in per_metric and c != "renormalised"]
    tail = ["renormalised"] if "renormalised" in full.columns else []
    out: dict[str, tuple[pd.DataFrame, dict[str, object]]] = {}
    for name, metrics in views:
        columns = shared + [c for m in dict.fromkeys(metrics) for c in (m, f"{m}_ci")
                            if c in full.columns] + tail
        out[name] = (full[columns], {k: v for k, v in full_config.items()
                                     if k in columns or k not in full.columns})
    return out


def seed_bins_and_weights(options: TierOptions) -> TierOptions:
    """``options`` with the seed's calibration bins (10, equal width) and SUI weights: what
    the tiers are computed under before :func:`kbench_core.vuln.rebin` and
    :func:`kbench_core.vuln.reweight_sui` adjust them (and so what their cache keys hold)."""
    return replace(options, n_bins=10, binning="uniform", sui_weights=())


def lucky_options(options: TierOptions) -> TierOptions:
    """The options the lucky-guess chart depends on: accuracy, TDR, LGI and the lucky-guess
    rate (tiers 1 and 2) do not depend on the calibration bins or SUI's weights, so those are
    set to the defaults in its cache key (another bin count does not redraw it)."""
    return seed_bins_and_weights(options)


# ----------------------------------------------- one judge's results, for the page and ahead

VIEWS = (("headline", HEADLINE), *vuln.TIERS.items())  # the leaderboard, then a tab per tier
PREFETCH_JUDGES = 4  # other judges worked ahead at most (a run rarely has more LLM judges)


def leaderboard_views(board: pd.DataFrame, *, runs: Sequence[Run], selection: tuple,
                      options: TierOptions, split: bool, keys: tuple[str, ...]
                      ) -> dict[str, tuple[pd.DataFrame, dict[str, object]]]:
    """:func:`tier_views` of the leaderboard and its tier tabs (cached)."""
    return cache.cached(tier_views, board, runs=runs, selection=(selection, options, split),
                        views=VIEWS, keys=keys)


def sui_chart(table: pd.DataFrame, *, runs: Sequence[Run], selection: tuple,
              options: TierOptions) -> go.Figure:
    """The SUI composition chart of the leaderboard under the options' weights (cached)."""
    return cache.cached(sui_figure, table, runs=runs, selection=(selection, options),
                        weights=options.sui_weights)


def lucky_chart(table: pd.DataFrame, *, runs: Sequence[Run], selection: tuple,
                options: TierOptions, colors: dict[str, str]) -> go.Figure:
    """The lucky-guess chart (cached on the options it depends on: :func:`lucky_options`)."""
    return cache.cached(vuln_figures.lucky_guess_chart, table, runs=runs,
                        selection=(selection, lucky_options(options)), colors=colors)


def reliability_chart(rows: pd.DataFrame, *, runs: Sequence[Run], selection: tuple,
                      options: TierOptions, prompt_filter: str, colors: dict[str, str]
                      ) -> go.Figure | None:
    """The reliability diagram of ``rows`` (the selection, or its answers to one prompt
    type: ``prompt_filter``) in the options' bins; None when no answer states a
    confidence."""
    table = reliability(rows, runs=runs, selection=(*selection, prompt_filter),
                        options=options)
    if table.empty:
        return None
    title = None if prompt_filter == "all" else (
        f"Reliability on {prompt_filter} prompts "
        f"({'equal-mass' if options.binning == 'quantile' else 'equal-width'} bins)")
    # the bins are all it depends on among the options
    return cache.cached(vuln_figures.reliability_diagram, table, runs=runs,
                        selection=(selection, options.n_bins, prompt_filter), colors=colors,
                        binning=options.binning, title=title)


@dataclass(frozen=True)
class JudgeResults:
    """One judge's rows and tables as the page uses them."""

    selected: pd.DataFrame        # the chosen detectors' answers
    pool: tuple                   # the judge's answers of every detector (:func:`judge_pool`)
    table: pd.DataFrame           # the leaderboard
    by_prompt: pd.DataFrame | None  # per model × prompt type, when the page shows it
    by_difficulty: pd.DataFrame | None  # per model × difficulty tier, when the run has tiers


def judge_results(frame: pd.DataFrame, models: Sequence[str], judge: str, *,
                  runs: Sequence[Run], voting: ConsensusOptions | None,
                  options: TierOptions, colors: dict[str, str], split: bool,
                  prompt_tiers: bool) -> JudgeResults:
    """Every result the page shows for ``judge`` that no widget further down changes: the
    chosen detectors' answers, the leaderboard (and per prompt type when ``prompt_tiers``),
    its tabs, the SUI, lucky-guess and reliability charts and the by-difficulty tiers, all
    through the cache. The page calls it for the judge on screen and :func:`work_ahead` for
    the others, so both ask for the same keys."""
    selection = (tuple(models), judge, voting)
    selected = selected_rows(frame, models, judge, runs=runs, voting=voting)
    pool = judge_pool(frame, selected, models, judge, runs=runs, voting=voting)
    table = tiers(selected, runs=runs, selection=selection, options=options, pool=pool)
    by_prompt = (tiers(selected, runs=runs, selection=selection, options=options,
                       by=("model", "prompt_type"), pool=pool) if prompt_tiers else None)
    split = split and by_prompt is not None
    leaderboard_views(by_prompt if split else table, runs=runs, selection=selection,
                      options=options, split=split,
                      keys=("model", "prompt_type") if split else ("model",))
    sui_chart(table, runs=runs, selection=selection, options=options)
    lucky_chart(table, runs=runs, selection=selection, options=options, colors=colors)
    reliability_chart(selected, runs=runs, selection=selection, options=options,
                      prompt_filter="all", colors=colors)
    by_difficulty = (tiers(selected, runs=runs, selection=selection, options=options,
                           by=("model", "difficulty"), pool=pool)
                     if "difficulty" in selected and selected["difficulty"].notna().any()
                     else None)
    return JudgeResults(selected=selected, pool=pool, table=table, by_prompt=by_prompt,
                        by_difficulty=by_difficulty)


def work_ahead(frame: pd.DataFrame, models: Sequence[str], judge: str, *,
               runs: Sequence[Run], voting: ConsensusOptions | None, options: TierOptions,
               colors: dict[str, str], split: bool, prompt_tiers: bool, prompts: bool,
               choices: Sequence[str]) -> None:
    """Queue for :mod:`kbench_app.prefetch` to compute while the user reads, under the
    options on screen: this judge's leaderboard split by prompt type (when the run has
    prompt types and it is not on screen: the Split toggle and the By prompt type section),
    then :func:`judge_results` of the other judges of the Judge menu (at most
    :data:`PREFETCH_JUDGES`, those after the chosen one first). Another judge is then a
    lookup; on a big run its tiers cost more than a rerun may take. Not with the bootstrap
    on: seconds of work per view, for views the user may never open."""
    from functools import partial

    from kbench_app import prefetch

    if options.bootstrap or not prefetch.enabled() or judge not in choices:
        return

    def queue(whose: str, split: bool, prompt_tiers: bool) -> None:
        ahead = replace(voting, judge=whose) if voting is not None else None
        prefetch.submit(
            ("vuln", cache.runs_key(runs), cache.freeze(
                (tuple(models), whose, ahead, options, colors, split, prompt_tiers))),
            partial(judge_results, frame, models, whose, runs=runs, voting=ahead,
                    options=options, colors=colors, split=split, prompt_tiers=prompt_tiers))

    if prompts and not split:
        queue(judge, True, True)
    at = list(choices).index(judge)
    for other in [*choices[at + 1:], *choices[:at]][:PREFETCH_JUDGES]:
        queue(other, split, prompt_tiers)


def difficulty_view(table: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, object]]:
    """The by-difficulty table (:func:`kbench_core.families.judged.difficulty_tdr`) for
    display: TDR per tier, their mean, and the pooled TDR with its interval as text."""
    tiers_ = [c.removeprefix("tdr_") for c in table.columns
              if c.startswith("tdr_") and c.removeprefix("tdr_")[:1] == "t"
              and c != "tdr_difficulty_mean"]
    view = table[["model"]].copy()
    config: dict[str, object] = {"model": st.column_config.TextColumn("Detector", pinned=True)}
    for tier in tiers_:
        view[f"tdr_{tier}"] = table[f"tdr_{tier}"]
        config[f"tdr_{tier}"] = st.column_config.NumberColumn(
            f"TDR {tier}", format="%.4g",
            help=f"Targets found / vulnerable answers on difficulty tier {tier} "
                 f"(n = vulnerable answers: see the export)")
    view["tdr_difficulty_mean"] = table["tdr_difficulty_mean"]
    config["tdr_difficulty_mean"] = st.column_config.NumberColumn(
        "Mean over tiers", format="%.4g", help=_HELP["tdr_difficulty_mean"])
    if "tdr_difficulty_mean_low" in table:  # its own interval (MOVER over the tiers)
        view["tdr_difficulty_mean_ci"] = interval_text(table["tdr_difficulty_mean_low"],
                                                       table["tdr_difficulty_mean_high"])
        config["tdr_difficulty_mean_ci"] = st.column_config.TextColumn(
            "Mean over tiers 95% CI",
            help="MOVER over the tiers' intervals (each tier's contracts independent)")
    view["tdr"] = table["tdr"]
    config["tdr"] = st.column_config.NumberColumn(
        "TDR (pooled)", format="%.4g", help="Targets found / vulnerable answers, all tiers")
    view["tdr_ci"] = interval_text(table["tdr_low"], table["tdr_high"])
    config["tdr_ci"] = st.column_config.TextColumn("TDR 95% CI")
    return shown(view.reset_index(drop=True)), config


def fixed_view(table: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, object]]:
    """The fixed-versions table for display: each rate with its interval as text."""
    view = table[["model", "judge", "n_fixed", "fixed_claim_rate", "n_vulnerable",
                  "tdr"]].copy()
    view.insert(4, "fixed_claim_ci", interval_text(table["fixed_claim_rate_low"],
                                                   table["fixed_claim_rate_high"]))
    view["tdr_ci"] = interval_text(table["tdr_low"], table["tdr_high"])
    config = {"model": "Detector", "judge": "Judge",
              "n_fixed": st.column_config.NumberColumn(
                  "Fixed", help="Fixed contracts with a readable claim"),
              "fixed_claim_rate": st.column_config.NumberColumn(
                  "Still claims", format="%.4g",
                  help="Share of fixed contracts where the detector still claims the fixed "
                       "vulnerability (lower is better)"),
              "fixed_claim_ci": st.column_config.TextColumn("Still claims 95% CI"),
              "n_vulnerable": st.column_config.NumberColumn("Vulnerable"),
              "tdr": st.column_config.NumberColumn("TDR", format="%.4g"),
              "tdr_ci": st.column_config.TextColumn("TDR 95% CI")}
    return view, config




def fixed_section(frame: pd.DataFrame, judge: str, *, runs: Sequence[Run],
                  selection: tuple, voting: ConsensusOptions | None = None) -> None:
    """The Fixed versions section: the chart and the table of
    :func:`kbench_core.families.judged.fixed_versions` for the chosen detectors."""
    from kbench_app import kit

    st.subheader("Fixed versions")
    table = fixed(frame, judge, runs=runs, selection=selection, voting=voting)
    if table.empty:
        st.info("No answer of the chosen detectors assesses a fixed contract.")
        return
    c1, c2 = st.columns([3, 2])
    kit.chart(vuln_figures.fixed_claims_chart(table), "vuln_fixed_versions", runs=runs,
              key="vuln_fixed", container=c1)
    view, config = fixed_view(table)
    kit.table(table, "vuln_fixed_versions", view=view, config=config, runs=runs,
              key="vuln_fixed_table", best={"fixed_claim_rate": "min", "tdr": "max"},
              container=c2)
    c2.caption(FIXED_CAPTION)
