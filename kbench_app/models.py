"""The Models page's widget keys, the figure each family's card shows for one model, and the
texts of a card.

Every number comes from :func:`kbench_core.profile.profile` (each family's own leaderboard);
every figure is an existing :mod:`kbench_core.figures` function drawn on the model's rows only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd
import plotly.graph_objects as go

from kbench_core import families
from kbench_core.aliases import AliasError, AliasTable
from kbench_core.families import Profile
from kbench_core.io import Run
from kbench_core.profile import metric_labels
from kbench_core.tables import format_value

__all__ = [
    "Keys",
    "accept_joins",
    "card_figure",
    "family_titles",
    "headline_text",
    "model_label",
    "newest_view",
    "profile_kinds",
    "profile_view",
    "profiled",
    "rank_text",
    "short_labels",
    "suggestion_label",
]



def profiled(kind: str) -> Profile | None:
    """The profile of a run kind (``Family.profile``), None for a kind without one."""
    return families.get(kind).profile if families.is_registered(kind) else None


def profile_kinds() -> tuple[str, ...]:
    """The run kinds with a profile (the page's runs)."""
    return tuple(f.kind for f in families.all_families() if f.profile is not None)


def family_titles() -> dict[str, str]:
    """Each benchmark family's name on the page (``Profile.title``)."""
    return {f.profile.benchmark: f.profile.title for f in families.all_families()
            if f.profile is not None}


def short_labels() -> dict[str, str]:
    """Short metric names for the compact profile (``Profile.metrics``: the long labels
    wrap a narrow table into three lines; the full table under "Every metric" keeps the
    metric keys)."""
    return {metric: short for f in families.all_families() if f.profile is not None
            for metric, _, short in f.profile.metrics}


class Keys:
    """The page's widget keys (also the names of its link parameters)."""

    MODEL = "models_model"
    COMPLETE = "models_complete"
    ALIASES = "models_aliases"          # the session's AliasTable (not a widget)
    UPLOAD = "models_aliases_upload"
    RAW = "models_alias_raw"
    CANONICAL = "models_alias_canonical"
    SUGGESTED = "models_suggested"      # the near-matches chosen to join
    SUGGESTED_ERROR = "models_suggested_error"  # why the last joins were refused (not a widget)


def model_label(model: str, raw_ids: Sequence[str]) -> str:
    """A model in the picker: its canonical id and the raw ids joined under it."""
    others = [r for r in dict.fromkeys(raw_ids) if r != model]
    if not others:
        return model
    shown = ", ".join(others[:3]) + (f", +{len(others) - 3} more" if len(others) > 3 else "")
    return f"{model}  ←  {shown}"


def headline_text(row: pd.Series) -> str:
    """``0.2668 [0.1006, 0.5197]`` (the interval when there is one)."""
    text = format_value(row["value"])
    if pd.notna(row["value_low"]) and pd.notna(row["value_high"]):
        text += f" [{format_value(row['value_low'])}, {format_value(row['value_high'])}]"
    return text


def rank_text(row: pd.Series) -> str:
    """``rank 11 [8, 11] of 11 · few biases``: the rank, its interval, the models it ranks
    among and the marks the family's page writes beside it (``not ranked`` when the metric
    has no rank)."""
    from kbench_core.ranking import rank_text as ranked

    if pd.isna(row["rank"]):
        n = int(row["n_models"])
        return ("not ranked · the run's only model" if n == 1
                else f"not ranked · {n} models in the run")
    text = ranked([row["rank"]], [row["rank_low"]], [row["rank_high"]])[0]
    note = row.get("rank_note", "")
    return f"rank {text} of {int(row['n_models'])}" + (f" · {note}" if note else "")


def metric_label(metric: str) -> str:
    return metric_labels().get(metric, metric)




def profile_view(heads: pd.DataFrame) -> pd.DataFrame:
    """The compact profile of one model (its :func:`kbench_core.profile.headline_rows`) for
    ``st.table``, one row per benchmark run and configuration: ``benchmark`` (family · run ·
    configuration), ``metric``, ``value [95%]``, ``rank [95%]`` (with the models ranked among
    and the page's marks) and ``rests on`` (n and the items). Numbers are written in the
    tables' one format (:func:`kbench_core.tables.format_value`) and the table wraps between
    them instead of cutting one ("0.3041 [0.04149, 0.56…" in a metric card); ``st.table``
    reads Markdown, so every text from a run is escaped (:func:`kbench_app.ui.plain`)."""
    from kbench_app.ui import plain

    rows = heads.reset_index(drop=True)
    short = short_labels()
    items = rows["items"] if "items" in rows else pd.Series("", index=rows.index)

    def benchmark(row: pd.Series) -> str:
        parts = [row["family"], row["run"]] + ([row["configuration"]]
                                               if row["configuration"] else [])
        return plain(" · ".join(map(str, parts)))

    def value(row: pd.Series) -> str:
        # a line breaks between the value and its interval, never inside the interval
        return headline_text(row).replace(", ", ",\u00a0")

    def rank(row: pd.Series) -> str:
        return (rank_text(row).removeprefix("rank ").replace(", ", ",\u00a0")
                .replace(" of ", " of\u00a0"))

    def rests_on(row: pd.Series, what: str) -> str:
        n = f"n = {row['n']:,.0f}" if pd.notna(row["n"]) else ""
        return plain(": ".join(t for t in (n, str(what)) if t))

    return pd.DataFrame({
        "benchmark": [benchmark(r) for _, r in rows.iterrows()],
        "metric": [short.get(m, plain(m)) for m in rows["metric"]],
        "value [95%]": [value(r) for _, r in rows.iterrows()],
        "rank [95%]": [rank(r) for _, r in rows.iterrows()],
        "rests on": [rests_on(r, w) for (_, r), w in zip(rows.iterrows(), items.fillna(""),
                                                         strict=True)],
    })


def newest_view(latest: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, object]]:
    """The newest-result table (:func:`kbench_core.profile.newest`) for display, as the
    profile reads: the value beside its interval as text (``[low, high]``, empty where a
    published value has none), the rank as :func:`rank_text` writes it (interval, models
    ranked among, the page's marks), short metric names and a label for every column."""
    from kbench_app.ui import interval_text

    rows = latest.reset_index(drop=True)
    short = short_labels()
    view = pd.DataFrame({
        "model": rows["model"].astype(str),
        "family": rows["family"].astype(str),
        "configuration": rows["configuration"].fillna("").astype(str),
        "metric": [short.get(m, m) for m in rows["metric"].astype(str)],
        "value": pd.to_numeric(rows["value"], errors="coerce"),
        "value_ci": interval_text(rows["value_low"], rows["value_high"]),
        "rank_text": [rank_text(r).removeprefix("rank ") for _, r in rows.iterrows()],
        "run": rows["run"].astype(str),
        "others": rows["others"].fillna("").astype(str)})
    config: dict[str, object] = {
        "model": "Model", "family": "Benchmark", "configuration": "Configuration",
        "metric": "Metric", "value": "Value", "value_ci": "95% CI",
        "rank_text": "Rank [95%] of the run's models", "run": "Run",
        "others": "Older runs holding it"}
    return view, config


def accept_joins(aliases: AliasTable, labels: Mapping[str, tuple[str, str]]) -> None:
    """The Accept button's callback: the chosen near-matches (``labels``: label → (id, id to
    join it under)) added to the session's ``aliases`` and the choice cleared; when one is
    refused (:class:`~kbench_core.aliases.AliasError`) none is added and the reason is kept
    for the page to show."""
    import streamlit as st

    chosen = [labels[label] for label in st.session_state.get(Keys.SUGGESTED, [])
              if label in labels]
    try:
        for model, suggested in chosen:
            aliases = aliases.with_alias(model, suggested)
    except AliasError as err:
        st.session_state[Keys.SUGGESTED_ERROR] = str(err)
        return
    st.session_state[Keys.ALIASES] = aliases
    st.session_state[Keys.SUGGESTED] = []
    st.session_state.pop(Keys.SUGGESTED_ERROR, None)


def suggestion_label(row: pd.Series) -> str:
    """A near-match in the picker of suggested joins: ``model → suggested (why)``."""
    return f"{row['model']} → {row['suggested']} ({row['why']})"


def card_figure(run: Run, raw_ids: Sequence[str]) -> go.Figure | None:
    """The figure that matters for the model (``raw_ids``: its ids in ``run``) in its run's
    family, drawn by the family's own figure function on the model's rows: the effect scatter
    of replication tests, the study heat table of its HumanStudy-Bench configurations (two or
    more, named by prompt version), the SUI tier bars of a judged run. None when the run has
    nothing of the model to draw, and for bias runs (one model's fingerprint is a one-column
    heat table: the page's profile table says it better): the family's ``Profile.card``."""
    raws = {str(r) for r in raw_ids}
    frame = run.frame
    mine = frame[frame["model"].astype(str).isin(raws)]
    if not len(mine):
        return None
    card = profiled(run.kind)
    return card.card(run, frozenset(raws)) if card is not None and card.card else None
