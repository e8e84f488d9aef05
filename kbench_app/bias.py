"""The Cognitive biases page's widget keys and the fingerprint's presentation (column order,
labels and formats)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from kbench_app.ui import column_label, interval_text, number_format, shown
from kbench_core import figures, kahne
from kbench_core.families.bias import Keys as Keys  # the page's widget keys, written there
from kbench_core.io import Run
from kbench_core.text import method_label

SUMMARY_COLUMNS = {
    "rank": st.column_config.NumberColumn(
        "Rank (1 = least biased)", pinned=True,
        help="By the susceptibility shown (mean BMS over the biases every chosen model has "
             "a BMS for): 1 = least biased"),
    "rank_text": st.column_config.TextColumn(
        "Rank [95%]", help="Bootstrap over the same biases (1000 resamples): overlapping "
                           "ranges mean the run cannot order those models; 'few biases': "
                           "fewer than 30 biases behind the rank; 'renormalised': some of "
                           "its BMS leave out an intensity the run scores"),
    "model": st.column_config.TextColumn("Model", pinned=True),
    "susceptibility": st.column_config.NumberColumn(
        "Susceptibility", format="%.4g",
        help="Mean BMS over the biases every chosen model has a BMS for (the ranked set)"),
    "susceptibility_ci": st.column_config.TextColumn(
        "95% CI", help="t interval over the same biases"),
    "n_biases": st.column_config.NumberColumn(
        "Biases", help="Biases behind the susceptibility and the rank"),
    "n_left_out": st.column_config.NumberColumn(
        "Left out", help="Biases this model has a BMS for that another chosen model lacks: "
                         "left out so every model is ranked on the same biases"),
    "n_unscored": st.column_config.NumberColumn(
        "Unscored", help="Biases without a BMS for this model (no known score)"),
    "n_renormalised": st.column_config.NumberColumn(
        "Renormalised", help="Ranked biases whose BMS leaves out an intensity the run scores "
                             "(e.g. every weak answer unknown): the weights are "
                             "renormalised over the others, so it is not like for like"),
    "most_susceptible": "Most susceptible",
    "most_resistant": "Most resistant",
    "human_like": st.column_config.TextColumn(
        "Human-like (alignment > 0.8)",
        help="'(uncertain)': the flag could go either way within the model rate's interval"),
    "ai_specific": st.column_config.TextColumn(
        "More biased than humans",
        help="'(uncertain)': the flag could go either way within the model rate's interval"),
}




def _groups(frame: pd.DataFrame, *, names: tuple[str, ...], value: str) -> list[list[str]]:
    """:func:`kbench_core.bias_reports.leaderboard_groups` of the runs combined in ``frame``
    (its ``run`` column), in the order of ``names``."""
    from kbench_core.bias_reports import leaderboard_groups
    from kbench_core.select import labels_in

    if "run" not in frame or len(names) < 2:
        return [list(names)]
    return leaderboard_groups({name: frame[labels_in(frame["run"], [name])]
                               for name in names}, value)


def pick_run_group(runs: Sequence[Run], frame: pd.DataFrame, *, key: str, value: str,
                   resets: Sequence[str] = ()) -> tuple[list[Run], pd.DataFrame, str]:
    """With chosen runs whose models share different biases
    (:func:`kbench_core.bias_reports.leaderboard_groups`: their leaderboard would rank on the
    biases every model has, so one run would change the other's numbers), a choice of which of
    them the page shows: one at a time by default, or every run together when the user asks.
    Returns the runs shown, their frame and the caption a leaderboard of every run together
    shows ("" otherwise)."""
    from kbench_app import cache, kit, state
    from kbench_app.ui import plain
    from kbench_core.bias_reports import shared_biases

    names = tuple(run.name for run in runs)
    groups = cache.cached(_groups, frame, runs=runs, names=names, value=value)
    if len(groups) < 2:
        return list(runs), frame, ""
    shown = kit.pick_group(
        groups, key=key, resets=resets,
        help="These runs score different biases: ranked together, every model would be "
             "ranked on the biases all of them share, which changes each run's own mean BMS "
             "and ranks. 'Every run together' does that, and says so.",
        why="The chosen runs score different biases, so each of",
        apart="is ranked on its own biases")
    if shown is not None:
        keep = [run for run in runs if run.name in groups[shown]]
        return keep, state.combined_runs(keep), ""
    n_shared = len(shared_biases(frame, value))
    caption = (":material/warning: Ranked together as you asked: the models of "
               f"{len(runs)} runs that score different biases ("
               + "; ".join(plain(" + ".join(g)) for g in groups)
               + f"), on the {n_shared} bias{'es' * (n_shared != 1)} every one of them has: "
                 "each run's mean and ranks differ from its own leaderboard's.")
    return list(runs), frame, caption


def summary_view(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`kbench_core.families.bias.susceptibility_table` for display: the
    susceptibility interval as text beside its number."""
    view = table.copy()
    view.insert(view.columns.get_loc("susceptibility") + 1, "susceptibility_ci",
                interval_text(view["susceptibility_low"], view["susceptibility_high"]))
    return shown(view.drop(columns=["susceptibility_low", "susceptibility_high"]))


_UNSURE = ("The flag could go either way within its 95% interval ({}): too few trials to "
           "tell")
_FIRST = ["category", "bias", "model", "bms", "bms_ci", "sensitivity", "model_rate",
          "model_rate_ci", "human_rate", "alignment", "human_like", "human_like_uncertain",
          "direction", "direction_uncertain", "bci_mean_score", "bci_consistency",
          "systematic", "systematic_uncertain", "rci_consistency", "rci_stable",
          "calibration_score", "overconfident", "overconfident_uncertain", "best_method",
          "effectiveness", "requires_warning", "n",
          "unknown_rate", "high_unknown", "renormalised", "weakly_supported"]
_LABELS = {
    "category": ("Family", None), "bias": ("Bias", None), "model": ("Model", None),
    "bms": ("BMS", "Bias Magnitude Score: weighted |treatment − control| over intensities"),
    "bms_ci": ("BMS 95% CI", "Bootstrap over trials within each condition"),
    "sensitivity": ("Sensitivity", "Slope of magnitude over intensity (weak → adversarial)"),
    "model_rate": ("Rate", "Mean treatment score"),
    "model_rate_ci": ("Rate 95% CI", "Wilson for 0/1 scores, t otherwise"),
    "human_rate": ("Human", "Human susceptibility baseline"),
    "alignment": ("HAS", "Human Alignment Score, 1 − |m − h| / max(h, 1 − h)"),
    "human_like": ("Human-like", "Alignment > 0.8"),
    "human_like_uncertain": ("Human-like?", _UNSURE.format("the model rate's")),
    "direction": ("vs humans", None),
    "direction_uncertain": ("vs humans?", _UNSURE.format("the model rate's")),
    "bci_mean_score": ("BCI mean", "Mean of the domain means (treatment rows)"),
    "bci_consistency": ("BCI", "Consistency across domains, 1 − min(std / 0.5, 1)"),
    "systematic": ("Systematic", "More than 70% of domains above 0.5"),
    "systematic_uncertain": ("Systematic?", _UNSURE.format("each domain mean's")),
    "rci_consistency": ("RCI", "Response consistency over repeated trials"),
    "rci_stable": ("Stable", None),
    "calibration_score": ("CAS", "1 − |mean confidence − mean accuracy|"),
    "overconfident": ("Overconfident", "Mean confidence > mean accuracy + 0.1"),
    "overconfident_uncertain": ("Overconfident?", _UNSURE.format(
        "confidence low − accuracy high to confidence high − accuracy low")),
    "best_method": ("Best debiasing", None),
    "effectiveness": ("BMP", "Bias Mitigation Potential of the best method"),
    "requires_warning": ("Needs warning", None),
    "n": ("n", "Rows (trials) behind the model × bias"),
    "unknown_rate": ("Unknown", "Share of rows whose score could not be extracted"),
    "high_unknown": ("Mostly unknown", None),
    "renormalised": ("Renormalised", "BMS leaves out an intensity the run scores for this bias "
                                     "(its answers there unknown); weights renormalised over "
                                     "the rest"),
    "weakly_supported": ("Weak baseline", "The human baseline has little empirical support"),
}


def fingerprint_view(biases: pd.DataFrame, rate_ci: pd.Series | None = None) -> pd.DataFrame:
    """The fingerprint's model × bias table for display: grouped by family, intervals as text
    beside their (sortable) numbers, the most useful columns first. ``rate_ci``: the model
    rate's interval as text (:func:`rate_interval_text` of these rows), when the page has it
    already."""
    view = biases.copy()
    if "bms_low" in view:
        view["bms_ci"] = interval_text(view["bms_low"], view["bms_high"])
    view["model_rate_ci"] = rate_interval_text(view) if rate_ci is None else rate_ci
    order = [c for c in _FIRST if c in view]
    sort = [c for c in ("category", "bias", "model") if c in view]
    return named_methods(shown(view[order].sort_values(sort, kind="stable")
                              .reset_index(drop=True)))


def rate_interval_text(biases: pd.DataFrame) -> pd.Series:
    """The model rate's 95% interval of each fingerprint row as text: it depends on the chosen
    trials alone (not on the cap, the HAS threshold or the BCI deviation), so the page writes
    it once per selection (half the cost of :func:`fingerprint_view` on 690 rows)."""
    return interval_text(biases["model_rate_low"], biases["model_rate_high"])


def named_methods(view: pd.DataFrame) -> pd.DataFrame:
    """``view`` with its best debiasing method as a reader names it
    (:func:`kbench_core.text.method_label`: ``debiasing_0`` reads ``debiasing method 1``);
    the downloads keep the name as written."""
    if "best_method" not in view:
        return view
    out = view.copy()
    out["best_method"] = out["best_method"].map(
        lambda v: method_label(v) if isinstance(v, str) else v)
    return out


def fingerprint_columns(view: pd.DataFrame) -> dict[str, object]:
    """Streamlit column configuration for :func:`fingerprint_view`."""
    config: dict[str, object] = {}
    for column in view.columns:
        label, help_text = _LABELS.get(column, (column_label(column), None))
        if pd.api.types.is_bool_dtype(view[column]):
            config[column] = st.column_config.CheckboxColumn(label, help=help_text)
        elif pd.api.types.is_float_dtype(view[column]):
            config[column] = st.column_config.NumberColumn(
                label, help=help_text, format=number_format(str(column), view[column]),
                pinned=column == view.columns[0])
        else:
            config[column] = st.column_config.Column(label, help=help_text,
                                                     pinned=column == view.columns[0])
    return config


def biases_in(trials: pd.DataFrame, *, categories: tuple[str, ...]) -> list[str]:
    """The biases of ``trials`` in the chosen bias families (``category``), sorted."""
    return sorted(map(str, trials.loc[trials["category"].astype(str).isin(categories),
                                      "bias"].unique()))


def chosen_trials(trials: pd.DataFrame, *, models: tuple[str, ...],
                  biases: tuple[str, ...]) -> pd.DataFrame:
    """The trials of the chosen models and biases."""
    return trials[trials["model"].isin(models).to_numpy()
                  & trials["bias"].isin(biases).to_numpy()]


def curve_figure(selected: pd.DataFrame, *, bias: str, y: str, cap: float | None,
                 colors: dict[str, str]) -> go.Figure:
    """BMS by trigger intensity for one bias (:func:`kbench_core.kahne.bms`)."""
    curve = kahne.bms(selected[selected["bias"] == bias], cap=cap)
    return figures.bms_curves(curve, y=y, colors=colors,
                              title=f"{bias}: bias by trigger intensity")


def domain_figure(selected: pd.DataFrame, *, rows_by: str, pick: str) -> go.Figure:
    """The domain heatmap of one model (rows: biases) or one bias (rows: models)."""
    rows = selected[selected["model" if rows_by == "bias" else "bias"] == pick]
    return figures.bci_heatmap(kahne.domain_means(rows), rows=rows_by,
                               title=f"{pick}: mean treatment score by domain")


def calibration_figure(selected: pd.DataFrame | kahne._Trials, *,
                       colors: dict[str, str]) -> go.Figure:
    """Stated confidence against accuracy per model (:func:`kbench_core.kahne.cas`), from the
    chosen trials or their :func:`kbench_core.kahne.prepare`."""
    return figures.cas_bars(kahne.cas(selected), colors=colors)


def responses(selected: pd.DataFrame, *, model: str, bias: str, search: str) -> pd.DataFrame:
    """One model's responses on one bias whose prompt, response or answer contains
    ``search`` (any case; all of them when it is empty)."""
    rows = selected[(selected["model"] == model).to_numpy()
                    & (selected["bias"] == bias).to_numpy()]
    text_columns = [c for c in ("prompt", "response", "answer") if c in rows]
    if not search or not text_columns:
        return rows
    hit = rows[text_columns].astype(str).apply(
        lambda col: col.str.contains(search, case=False, regex=False)).any(axis=1)
    return rows[hit]


@dataclass(frozen=True)
class Drill:
    """The drill-down's rows (``frame``: text as stored) and how many match in all
    (``total``); ``capped`` names the runs whose rows were fetched from their file up to the
    limit and have more there."""

    frame: pd.DataFrame
    total: int
    capped: tuple[str, ...] = ()


def _raw_model(run: Run, model: str) -> str | None:
    """The name ``model`` has inside ``run`` (the combined frame writes a name two runs share
    as ``model (run)``), or None when the run does not have it."""
    names = run.models
    if model in names:
        return model
    suffix = f" ({run.name})"
    raw = model[:-len(suffix)] if model.endswith(suffix) else None
    return raw if raw in names else None


def drill_down(selected: pd.DataFrame, runs: Sequence[Run], *, model: str, bias: str,
               search: str) -> Drill:
    """One model's responses on one bias (:func:`responses`). A run an engine reduced to
    weighted tuples holds no text: its rows are fetched from its saved file through the
    engine (:func:`kbench_core.workspace.response_rows`, the first
    :data:`~kbench_core.engines.rows.DRILL_LIMIT` in file order and their total), the other
    runs' rows come from the frame as before."""
    from kbench_core import workspace

    weighted = [run for run in runs if kahne.WEIGHT in run.frame.columns]
    names = {run.name for run in weighted}
    held = selected
    if names and "run" in selected:
        held = selected[~selected["run"].astype(str).isin(names).to_numpy()]
    parts = [responses(held, model=model, bias=bias, search=search)
             .drop(columns=[kahne.WEIGHT], errors="ignore")] if len(held) else []
    total = len(parts[0]) if parts else 0
    capped: list[str] = []
    for run in weighted:
        raw = _raw_model(run, model)
        if raw is None:
            continue
        fetched = workspace.response_rows(run, model=raw, bias=bias, search=search)
        if fetched is None:  # a weighted run kbench did not save: its text is not kept
            continue
        parts.append(fetched.frame.assign(model=model, run=run.name))
        total += fetched.total
        if fetched.capped:
            capped.append(run.name)
    frame = pd.concat([p.astype(object) for p in parts], ignore_index=True) \
        if len(parts) > 1 else (parts[0] if parts else pd.DataFrame())
    return Drill(frame, total, tuple(capped))
