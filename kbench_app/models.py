"""The Models page's widget keys, the figure each family's card shows for one model, and the
texts of a card.

Every number comes from :func:`kbench_core.profile.profile` (each family's own leaderboard);
every figure is an existing :mod:`kbench_core.figures` function drawn on the model's rows only.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go

from kbench_core.io import Run
from kbench_core.profile import METRIC_LABELS
from kbench_core.tables import format_value

__all__ = ["FAMILY_TITLES", "PROFILE_KINDS", "Keys", "card_figure", "headline_text",
           "model_label", "rank_text"]

PROFILE_KINDS = ("bias_summary", "bias", "replication_summary", "replication", "judged")
FAMILY_TITLES = {"bias": "Cognitive biases", "replication": "Replication of human studies",
                 "vulnerability": "Vulnerability detection"}


class Keys:
    """The page's widget keys (also the names of its link parameters)."""

    MODEL = "models_model"
    COMPLETE = "models_complete"
    ALIASES = "models_aliases"          # the session's AliasTable (not a widget)
    UPLOAD = "models_aliases_upload"
    RAW = "models_alias_raw"
    CANONICAL = "models_alias_canonical"


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
    """``rank 11 [8, 11] of 11`` (``unranked`` when the metric has no rank)."""
    from kbench_core.ranking import rank_text as ranked

    if pd.isna(row["rank"]):
        return f"not ranked · {int(row['n_models'])} models in the run"
    text = ranked([row["rank"]], [row["rank_low"]], [row["rank_high"]])[0]
    return f"rank {text} of {int(row['n_models'])}"


def metric_label(metric: str) -> str:
    return METRIC_LABELS.get(metric, metric)


def card_figure(run: Run, raw_ids: Sequence[str]) -> go.Figure | None:
    """The figure that matters for the model (``raw_ids``: its ids in ``run``) in its run's
    family, drawn by the family's own figure function on the model's rows: the fingerprint
    (BMS per bias) of a KahneBench report or bias run, the effect scatter of replication
    tests, the study heat table of its HumanStudy-Bench configurations, the SUI tier bars of
    a judged run. None when the run has nothing of the model to draw."""
    from kbench_core import figures

    raws = {str(r) for r in raw_ids}
    frame = run.frame
    mine = frame[frame["model"].astype(str).isin(raws)]
    if not len(mine):
        return None
    if run.kind == "bias_summary":
        from kbench_core import bias_reports

        table = bias_reports.fingerprint_table(mine)
        return figures.fingerprint_heatmap(table) if table["bms"].notna().any() else None
    if run.kind == "bias":
        from kbench_core import kahne
        from kbench_core.families.bias import FingerprintOptions

        fingerprint = kahne.fingerprint(mine, **FingerprintOptions().fingerprint())
        return figures.fingerprint_heatmap(fingerprint.biases)
    if run.kind == "replication":
        from kbench_core import replication
        from kbench_core.figures import replication as rep_figures

        return rep_figures.effect_scatter(replication.scatter_points(mine),
                                          replication.ecs(mine))
    if run.kind == "replication_summary":
        from kbench_core import replication
        from kbench_core.figures import replication as rep_figures

        studies = replication.study_rows(mine)
        if not len(studies) or "pas" not in studies or not studies["pas"].notna().any():
            return None
        return rep_figures.study_heatmap(studies, value="pas", unit="configuration",
                                         title="PAS per study and configuration (published)")
    if run.kind == "judged":
        from kbench_core import vuln
        from kbench_core.families.judged import TierOptions, judge_views
        from kbench_core.figures import vuln as vuln_figures

        views = judge_views(frame)
        if not views:
            return None
        judge, rows = views[0]
        rows = rows[rows["model"].astype(str).isin(raws)]
        options = TierOptions()
        tiers = vuln.tiers(rows, **options.tiers())
        return vuln_figures.tier_leaderboard(
            tiers, vuln.sui_contributions(tiers, sui_weights=options.weights()),
            title=f"SUI and what it is made of ({judge})")
    return None
