"""Published replication results (HumanStudy-Bench's leaderboard): one row per configuration
× study (or × finding).

The leaderboard is :func:`kbench_core.replication.summary_leaderboard`; the page is
``views/replication.py`` (published results).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from kbench_core.catalog import Item, heat_pages
from kbench_core.families._base import Family, PageInfo, Profile
from kbench_core.families.replication import Keys
from kbench_core.schema import Column, KindSpec, unit_column

if TYPE_CHECKING:
    import plotly.graph_objects as go

    from kbench_core.io import Run

__all__ = ["FAMILY"]


# The columns of this run kind (docs/formats.md): they belong with the family.
REPLICATION_SUMMARY = KindSpec(
    kind="replication_summary",
    columns=(
        Column("model", "category", True, meaning="configuration"),
        Column("study", "category", True),
        Column("title", "text"),
        unit_column("pas", "published PAS of the study (study rows)"),
        Column("ecs", "float", low=-1.0, high=1.0,
               meaning="published ECS of the study (study rows)"),
        Column("tokens", "float", low=0.0, meaning="tokens used (as published)"),
        Column("cost", "float", low=0.0, meaning="cost in US dollars (as published)"),
        unit_column("config_pas",
                    "published configuration-level PAS (pas_raw), on each of its rows"),
        Column("config_ecs", "float", low=-1.0, high=1.0,
               meaning="published configuration-level ECS, on each of its rows"),
        Column("finding", "category",
               meaning="finding id (finding rows: sub_study_id/finding_id)"),
        unit_column("finding_score", "published finding score (finding rows)"),
        Column("n_tests", "int", low=0.0, meaning="tests behind the finding (finding rows)"),
    ),
    key=("model", "study", "finding"),
    signature=frozenset({"model", "study"}),
    signature_any=frozenset({"pas", "ecs", "finding_score"}),
    signature_none=frozenset({"test", "bias"}),
    description=("published results, one row per configuration x study (pas, ecs) or per "
                 "configuration x study x finding (finding_score, n_tests)"),
)


def _rules(columns: Mapping[str, Any], frame: pd.DataFrame, add) -> None:
    """Finding rows need their score and test count."""
    if "finding" not in columns:
        return
    finding_rows = columns["finding"].notna().to_numpy()
    for needed in ("finding_score", "n_tests"):
        absent = finding_rows & np.isnan(columns[needed]) if needed in columns else finding_rows
        add(absent, needed, f"finding rows need '{needed}' "
                            f"({REPLICATION_SUMMARY.column(needed).meaning})")


# simple_findings.csv holds finding rows only: every configuration-level table and figure is
# built from study rows, so these items are empty for it and say why.
_NO_STUDY_ROWS = ("this run has finding rows only (like HumanStudy-Bench's simple_findings.csv), "
                  "and the configuration scores come from study rows: load simple_results.json "
                  "(or simple_studies.csv) for them")


def _catalog() -> list[Item]:
    from kbench_core import replication
    from kbench_core.figures import replication as rep_figures

    def board(frame: pd.DataFrame, options: Mapping[str, Any]):
        if len(replication.study_rows(frame)):
            yield "", replication.summary_leaderboard(frame)

    def board_figure(frame: pd.DataFrame, options: Mapping[str, Any]):
        for _, table in board(frame, options):
            yield "", rep_figures.summary_leaderboard(table)

    def heat(frame: pd.DataFrame, options: Mapping[str, Any]):
        studies = replication.study_rows(frame)
        if not len(studies):
            return
        longer = ("model" if studies["model"].nunique() >= studies["study"].nunique()
                  else "study")
        for metric in ("pas", "ecs"):
            if metric in studies and studies[metric].notna().any():
                for page, part in heat_pages(studies, longer):
                    yield "-".join(p for p in (metric, page) if p), rep_figures.study_heatmap(
                        part, value=metric, zmin=0.0 if metric == "pas" else -1.0,
                        unit="configuration")

    def findings(frame: pd.DataFrame, options: Mapping[str, Any]):
        rows = replication.finding_rows(frame)
        if len(rows):
            yield "", rows[[c for c in ("model", "study", "finding", "finding_score",
                                        "n_tests") if c in rows]].reset_index(drop=True)

    return [
        Item("leaderboard", "Configurations: published PAS and ECS, means of the per-study "
             "values, rank with its interval, cost", "table", board,
             best={"config_pas": "max", "config_ecs": "max", "mean_study_pas": "max",
                   "mean_study_ecs": "max", "cost": "min"}, main=True, empty=_NO_STUDY_ROWS),
        Item("leaderboard_chart", "Configurations by score, with cost", "figure", board_figure,
             empty=_NO_STUDY_ROWS),
        Item("study_heatmap", "Score per study and configuration", "figure", heat,
             empty=_NO_STUDY_ROWS),
        Item("findings", "Published finding scores", "table", findings,
             empty="this run has no finding rows (simple_findings.csv or simple_results.json "
                   "have them)"),
    ]


def _profile_rows(run: Run) -> tuple[pd.DataFrame, int, str]:
    """The profile's rows of published results (``kbench_core.profile``): the published
    configuration PAS and ECS and the means of the per-study values, from
    :func:`kbench_core.replication.summary_leaderboard`; the rank on the row of the metric
    it ranks (``ranked_by``)."""
    from kbench_core import replication
    from kbench_core.profile import marks, metric_rows

    if not len(replication.study_rows(run.frame)):
        return pd.DataFrame(), 0, ""
    board = replication.summary_leaderboard(run.frame)
    board = board.assign(rank_note=marks(("few studies", board["few_items"].fillna(False))))
    studies = board["n_pas"].fillna(0).astype(int)
    ranked_on = "; rank interval: bootstrap over the studies every configuration has"
    rows = []
    for metric, low, high, n, items in (
            ("config_pas", None, None, "n_pas", "as published"),
            ("config_ecs", None, None, "n_ecs", "as published"),
            ("mean_study_pas", "mean_study_pas_low", "mean_study_pas_high", "n_pas",
             "the configuration's {} studies"),
            ("mean_study_ecs", "mean_study_ecs_low", "mean_study_ecs_high", "n_ecs",
             "the configuration's studies with an ECS")):
        if not board[metric].notna().any():
            continue
        # A rank only beside the statistic it ranks (the leaderboard's ranked_by)
        ranked = board[board["ranked_by"] == metric]
        texts = [items.format(k) + (ranked_on if by == metric else "")
                 for k, by in zip(studies, board["ranked_by"], strict=True)]
        rows.append(metric_rows(board, metric, low=low, high=high, n=n, items=texts,
                          ranks=ranked[["model", "rank", "rank_low", "rank_high",
                                        "rank_note"]]))
    if (board["ranked_by"] == "shared_study_pas").any():
        ranked = board[board["ranked_by"] == "shared_study_pas"]
        rows.append(metric_rows(ranked, "shared_study_pas", n="n_pas",
                          items="the studies every ranked configuration has (rank interval: "
                                "bootstrap over them)",
                          ranks=ranked[["model", "rank", "rank_low", "rank_high",
                                        "rank_note"]]))
    return pd.concat(rows, ignore_index=True), len(board), ""


def _card(run: Run, raws: frozenset[str]) -> go.Figure | None:
    """The Models page's figure of one model (``raws``: its ids in the run): the study heat
    table of its configurations (two or more, named by prompt version; one configuration
    is a one-column heat table the profile table says better)."""
    from kbench_core import replication
    from kbench_core.aliases import split_configuration
    from kbench_core.figures import replication as rep_figures

    mine = run.frame[run.frame["model"].astype(str).isin(raws)]
    studies = replication.study_rows(mine)
    if not len(studies) or "pas" not in studies or not studies["pas"].notna().any():
        return None
    # one model's configurations: named by their prompt version alone, the model once in
    # the title (its raw id three ways abbreviated on one axis said nothing more)
    named = studies["model"].astype(str).map(lambda raw: split_configuration(raw)[1] or raw)
    if named.nunique() < 2:
        return None
    return rep_figures.study_heatmap(studies.assign(model=named), value="pas",
                                     unit="configuration", title="Published PAS per study")


def _suspect_rows(absent: Any, said: Any, columns: set[str]) -> Any:
    """:func:`_rules` as the engines' predicate: a finding row needs its score and tests."""
    if "finding" not in columns:
        return None
    return ~absent("finding") & (absent("finding_score") | absent("n_tests"))


def _sample_frame(seed: int) -> pd.DataFrame:
    """The frame of the bundled sample run ``sample_data/replication_summary.csv`` (planted
    means)."""
    from kbench_core.samples.replication import replication_summary

    return replication_summary(seed=seed)


FAMILY = Family(
    kind="replication_summary", title="Replication (published results)",
    detection_order=30,
    headline_items=("leaderboard_chart", "study_heatmap"),
    spec=REPLICATION_SUMMARY, catalog=_catalog, rules=_rules,
    aliases={"config": "model", "study_id": "study", "pas_raw": "pas",
             "total_tokens": "tokens", "total_cost": "cost"},
    sample_files=("replication_summary.csv",), sample_frame=_sample_frame,
    suspect_rows=_suspect_rows,
    format_doc="docs/formats.md",
    profile=Profile(
        "replication", "Replication of human studies",
        (("config_pas", "PAS (published)", "PAS (published)"),
         ("config_ecs", "ECS (published)", "ECS (published)"),
         ("mean_study_pas", "Mean of per-study PAS", "mean study PAS"),
         ("mean_study_ecs", "Mean of per-study ECS", "mean study ECS"),
         ("shared_study_pas", "Mean PAS over the studies every ranked configuration has",
          "mean PAS, shared studies")),
        "config_pas", _profile_rows, configurations=True, card=_card),
    page=PageInfo("views/replication.py", "Replication", Keys.SUMMARY_RUN, single=True,
                  icon=":material/compare_arrows:", url="replication", order=20, keys=Keys),
)
