"""One model across benchmarks: the profile table behind ``kbench profile`` and the Models page.

:func:`profile` joins runs of every family by canonical model id (:mod:`kbench_core.aliases`)
and lists, per model × family × run × headline metric, the value with its interval, its ``n``,
and the model's rank among that run's models with its rank interval. Every number comes from
the family's own leaderboard function (the ones the pages and ``kbench metrics`` show), so a
profile never disagrees with them:

- KahneBench reports (``bias_summary``): the published ``overall_bias_susceptibility``
  (``published_susceptibility``, no interval: a report has no trials) and kbench's mean of the
  reported per-bias BMS over the biases every model has (``mean_bms``, t interval over biases
  from :func:`kbench_core.stats.t_interval`, widened below 30 biases to contain the
  Wilson-type bound, :func:`kbench_core.stats.widen_small`), ranked by
  :func:`kbench_core.bias_reports.leaderboard`.
- Bias trials (``bias``): ``susceptibility`` of
  :func:`kbench_core.families.bias.susceptibility_table` and its rank interval.
- HumanStudy-Bench results (``replication_summary``): the published ``config_pas`` and
  ``config_ecs`` and the means of the per-study values (``mean_study_pas``,
  ``mean_study_ecs``) with their t intervals, from
  :func:`kbench_core.replication.summary_leaderboard`; the rank sits on the row of the metric
  it ranks (``ranked_by``).
- Replication tests (``replication``): ECS and PAS of the replication page's tables; ranked by
  value (kbench has no rank bootstrap of these, so no rank interval).
- Judged runs (``judged``): TDR and SUI of the tier leaderboard for the majority of several
  judges (else the one judge), SUI with its bootstrap interval and rank interval, TDR with its
  Wilson interval and the rank interval of :func:`kbench_core.compare.rank_intervals` over
  vulnerable samples.

There is no cross-family mean column: the metrics of different benchmarks measure different
things on different scales (``docs/formats.md``, "Aliases and profiles").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from kbench_core.aliases import AliasTable

if TYPE_CHECKING:
    from kbench_core.io import Run

__all__ = ["COLUMNS", "FAMILY_OF", "HEADLINE", "METRIC_LABELS", "Coverage", "coverage",
           "headline_rows", "mean_bms_interval", "newest", "profile"]

COLUMNS = ["model", "family", "run", "configuration", "metric", "value", "value_low",
           "value_high", "n", "rank", "rank_low", "rank_high", "n_models", "raw_ids"]
# After the SPEC's columns: what a reader needs to trace a row (the run's kind, its file, the
# judge whose verdicts a judged row counts, and whether an alias or the rule made the join).
EXTRA = ["kind", "source", "judge", "joined_by"]

# The benchmark family a run kind belongs to (trial runs and published reports of one
# benchmark are one family).
FAMILY_OF: dict[str, str] = {"bias": "bias", "bias_summary": "bias",
                             "replication": "replication",
                             "replication_summary": "replication", "judged": "vulnerability"}

# The metric a card shows first, per run kind.
HEADLINE: dict[str, str] = {"bias": "susceptibility", "bias_summary": "mean_bms",
                            "replication": "ecs", "replication_summary": "config_pas",
                            "judged": "tdr"}

METRIC_LABELS: dict[str, str] = {
    "mean_bms": "Mean reported BMS over shared biases (kbench)",
    "published_susceptibility": "Susceptibility (published)",
    "susceptibility": "Susceptibility: mean BMS (kbench)",
    "config_pas": "PAS (published)",
    "config_ecs": "ECS (published)",
    "mean_study_pas": "Mean of per-study PAS",
    "mean_study_ecs": "Mean of per-study ECS",
    "shared_study_pas": "Mean PAS over the studies every ranked configuration has",
    "ecs": "ECS (kbench)",
    "pas": "PAS (kbench)",
    "tdr": "Target detection rate (TDR)",
    "sui": "Security Understanding Index (SUI)",
}


def _rows(board: pd.DataFrame, metric: str, *, value: str | None = None,
          low: str | None = None, high: str | None = None, n: str | float | None = None,
          ranks: pd.DataFrame | None = None) -> pd.DataFrame:
    """One profile row per leaderboard row for ``metric``: its value columns renamed, and the
    rank columns of ``ranks`` (``model, rank, rank_low, rank_high``) joined by model."""
    value = value or metric

    def column(name: str | float | None) -> np.ndarray:
        if isinstance(name, str) and name in board:
            return pd.to_numeric(board[name], errors="coerce").to_numpy(dtype=float)
        return np.full(len(board), np.nan if not isinstance(name, int | float) else name,
                       dtype=float)

    out = pd.DataFrame({"raw_ids": board["model"].astype(str).to_numpy(), "metric": metric,
                        "value": column(value), "value_low": column(low),
                        "value_high": column(high), "n": column(n)})
    if ranks is not None:
        out = out.merge(ranks.rename(columns={"model": "raw_ids"}), on="raw_ids", how="left")
    for name in ("rank", "rank_low", "rank_high"):
        if name not in out:
            out[name] = np.nan
        out[name] = pd.to_numeric(out[name], errors="coerce").astype(float)
    return out


def mean_bms_interval(bms: pd.DataFrame) -> pd.DataFrame:
    """Per model of ``bms`` (``model, bias, bms``, reported per-bias BMS in [0, 1]): the
    mean ``mean_bms``, its interval ``mean_bms_low``/``_high`` and ``n`` biases.

    :func:`kbench_core.stats.bounded_mean_interval` over biases in [0, 1]: the Student-t
    interval, widened below 30 biases to the Wilson-type bound (the t interval alone covered
    83 % at 4 biases of Beta(0.5, 20), ``tests/test_profile.py``)."""
    from kbench_core.stats import bounded_mean_interval

    moments = bms.groupby("model", observed=True)["bms"].agg(["mean", "std", "count"])
    lo, hi = bounded_mean_interval(moments["mean"], moments["std"], moments["count"],
                                   bounds=(0.0, 1.0))
    return pd.DataFrame({"model": moments.index.astype(str), "mean_bms": moments["mean"],
                         "mean_bms_low": lo, "mean_bms_high": hi,
                         "n": moments["count"].astype(int)}).reset_index(drop=True)


def _bias_summary(run: Run) -> tuple[pd.DataFrame, int]:
    from kbench_core import bias_reports

    board = bias_reports.leaderboard(run.frame, run.meta.get("summary"))
    ranks = board[["model", "rank", "rank_low", "rank_high"]]
    # The interval of mean_bms over the same biases the rank rests on (shared by every model)
    bms = run.frame[["model", "bias", "bms"]].dropna().astype({"model": str, "bias": str})
    if board["model"].nunique() >= 2:
        wide = bms.pivot_table(index="bias", columns="model", values="bms", aggfunc="first")
        bms = bms[bms["bias"].isin(wide.index[wide.notna().all(axis=1)])]
    interval = mean_bms_interval(bms).set_index("model")
    board = board.assign(mean_bms_low=board["model"].map(interval["mean_bms_low"]),
                         mean_bms_high=board["model"].map(interval["mean_bms_high"]))
    rows = [_rows(board, "mean_bms", low="mean_bms_low", high="mean_bms_high", n="n_ranked",
                  ranks=ranks),
            _rows(board, "published_susceptibility", value="susceptibility", n="n_biases")]
    return pd.concat(rows, ignore_index=True), len(board)


def _bias(run: Run) -> tuple[pd.DataFrame, int]:
    from kbench_core import compare, kahne
    from kbench_core.families.bias import FingerprintOptions, susceptibility_table

    fingerprint = kahne.fingerprint(run.frame, **FingerprintOptions().fingerprint())
    board = susceptibility_table(fingerprint)
    ranks = None
    table = fingerprint.biases[["model", "bias", "bms"]].dropna()
    wide = table.pivot_table(index="bias", columns="model", values="bms", aggfunc="first",
                             observed=True)
    if len(wide.columns) >= 2 and wide.notna().all(axis=1).any():
        # the same call and the same biases as susceptibility_table's rank_text
        used = table[table["bias"].isin(wide.index[wide.notna().all(axis=1)])]
        ranks = compare.rank_intervals(used, "bms", item="bias", lower_is_better=True)[
            ["model", "rank", "rank_low", "rank_high"]]
    return _rows(board, "susceptibility", low="susceptibility_low",
                 high="susceptibility_high", n="n_biases", ranks=ranks), len(board)


def _replication_summary(run: Run) -> tuple[pd.DataFrame, int]:
    from kbench_core import replication

    if not len(replication.study_rows(run.frame)):
        return pd.DataFrame(), 0
    board = replication.summary_leaderboard(run.frame)
    rows = []
    for metric, low, high, n in (("config_pas", None, None, "n_pas"),
                                 ("config_ecs", None, None, "n_ecs"),
                                 ("mean_study_pas", "mean_study_pas_low",
                                  "mean_study_pas_high", "n_pas"),
                                 ("mean_study_ecs", "mean_study_ecs_low",
                                  "mean_study_ecs_high", "n_ecs")):
        if not board[metric].notna().any():
            continue
        # A rank only beside the statistic it ranks (the leaderboard's ranked_by)
        ranked = board[board["ranked_by"] == metric]
        rows.append(_rows(board, metric, low=low, high=high, n=n,
                          ranks=ranked[["model", "rank", "rank_low", "rank_high"]]))
    if (board["ranked_by"] == "shared_study_pas").any():
        ranked = board[board["ranked_by"] == "shared_study_pas"]
        rows.append(_rows(ranked, "shared_study_pas", n="n_pas",
                          ranks=ranked[["model", "rank", "rank_low", "rank_high"]]))
    return pd.concat(rows, ignore_index=True), len(board)


def _point_ranks(board: pd.DataFrame, metric: str) -> pd.DataFrame:
    # ties share the mean rank, as compare.rank_intervals ranks
    from scipy import stats

    values = board[metric].to_numpy(dtype=float)
    rank = np.full(len(values), np.nan)
    known = np.isfinite(values)
    rank[known] = stats.rankdata(-values[known], method="average")
    return pd.DataFrame({"model": board["model"].astype(str), "rank": rank})


def _replication(run: Run) -> tuple[pd.DataFrame, int]:
    from kbench_core.families.replication import (
        ReplicationOptions,
        ecs_tables,
        pas_models,
        pas_result,
    )

    options = ReplicationOptions()
    ecs = ecs_tables(run.frame, options=options)["overall"]
    pas = pas_models(pas_result(run.frame, options=options))
    rows = [_rows(ecs, "ecs", low="ecs_low", high="ecs_high", n="n",
                  ranks=_point_ranks(ecs, "ecs"))]
    if len(pas):
        rows.append(_rows(pas, "pas", low="pas_low", high="pas_high", n="n",
                          ranks=_point_ranks(pas, "pas")))
    return pd.concat(rows, ignore_index=True), int(run.frame["model"].nunique())


def _judged(run: Run) -> tuple[pd.DataFrame, str]:
    from kbench_core import compare, families, vuln
    from kbench_core.families.judged import TierOptions, judge_views, leaderboard

    views = judge_views(run.frame)
    if not views:
        return pd.DataFrame(), ""
    judge, rows = views[0]  # the majority of several judges, else the one judge
    board = vuln.tiers(rows, **TierOptions(bootstrap=True).tiers())
    board = board.assign(model=board["model"].astype(str))
    # the tier leaderboard's rank (by SUI) and the tiers' bootstrap interval of it
    sui_ranks = leaderboard(board).rename(columns={"sui_rank_low": "rank_low",
                                                   "sui_rank_high": "rank_high"})
    sui_ranks = sui_ranks[[c for c in ("model", "rank", "rank_low", "rank_high")
                           if c in sui_ranks]]
    tdr_ranks = None
    family = families.get("judged")
    per_item = family.per_item(rows)
    found = per_item.dropna(subset=["target_found_vulnerable"])
    if found["model"].nunique() >= 2:
        try:
            tdr_ranks = compare.rank_intervals(
                found, "target_found_vulnerable", item=list(family.item_key),
                lower_is_better=False)[["model", "rank", "rank_low", "rank_high"]]
        except ValueError:  # no vulnerable sample every detector answered
            tdr_ranks = None
    out = pd.concat([
        _rows(board, "tdr", low="tdr_low", high="tdr_high", n="n_vulnerable", ranks=tdr_ranks),
        _rows(board, "sui", low="sui_low", high="sui_high", n="n", ranks=sui_ranks)],
        ignore_index=True)
    return out.assign(n_models=len(board)), str(judge)


def profile(runs: Sequence[Run], *, aliases: AliasTable | None = None) -> pd.DataFrame:
    """The profile of every model in ``runs``: one row per (model, family, run,
    configuration, metric) with :data:`COLUMNS` and then :data:`EXTRA` (the module
    docstring lists each family's metrics).

    ``model`` is the canonical id (``aliases``, else :func:`kbench_core.aliases.canonical_id`);
    ``configuration`` the HumanStudy-Bench prompt version of a replication configuration
    (else empty), so a model's configurations are rows of their own; ``raw_ids`` the id the
    run writes; ``n_models`` the models (configurations) the run ranks among; ``rank`` (1 =
    best) with its bootstrap interval ``rank_low``/``rank_high`` where kbench has one.
    ``joined_by`` says whether an alias or the rule made the join. Sorted by model, family,
    run, configuration; runs of kinds with no profile are skipped."""
    aliases = aliases or AliasTable()
    parts = []
    for run in runs:
        judge = ""
        if run.kind == "bias_summary":
            rows, n_models = _bias_summary(run)
        elif run.kind == "bias":
            rows, n_models = _bias(run)
        elif run.kind == "replication_summary":
            rows, n_models = _replication_summary(run)
        elif run.kind == "replication":
            rows, n_models = _replication(run)
        elif run.kind == "judged":
            rows, judge = _judged(run)
            n_models = rows["n_models"].iloc[0] if len(rows) else 0
        else:
            continue
        if not len(rows):
            continue
        joined = aliases.join(rows["raw_ids"].unique(),
                              configurations=run.kind in ("replication",
                                                          "replication_summary"))
        rows = rows.merge(joined.rename(columns={"raw_id": "raw_ids", "how": "joined_by"}),
                          on="raw_ids", how="left")
        parts.append(rows.assign(family=FAMILY_OF[run.kind], run=run.name, kind=run.kind,
                                 n_models=int(n_models),
                                 source=str(run.meta.get("source", run.name)), judge=judge))
    if not parts:
        return pd.DataFrame(columns=COLUMNS + EXTRA)
    out = pd.concat(parts, ignore_index=True)
    order = {kind: k for k, kind in enumerate(METRIC_LABELS)}
    out["_order"] = out["metric"].map(order)
    out = out.sort_values(["model", "family", "run", "configuration", "_order"],
                          kind="stable")
    return out[COLUMNS + EXTRA].reset_index(drop=True)


def headline_rows(table: pd.DataFrame) -> pd.DataFrame:
    """One row per model × run × configuration of a :func:`profile` table: the row of its run
    kind's :data:`HEADLINE` metric, else (a file without it, e.g. HumanStudy-Bench's
    ``simple_studies.csv`` has no published configuration PAS) its first ranked metric, else
    its first metric."""
    if not len(table):
        return table.copy()
    keys = ["model", "family", "run", "configuration", "raw_ids"]
    order = {metric: k for k, metric in enumerate(METRIC_LABELS)}
    ranked = table.assign(_other=(table["metric"] != table["kind"].map(HEADLINE)),
                          _unranked=table["rank"].isna(),
                          _order=table["metric"].map(order).fillna(len(order)),
                          _at=np.arange(len(table)))
    ranked = ranked.sort_values([*keys, "_other", "_unranked", "_order"], kind="stable")
    first = ranked.drop_duplicates(keys).sort_values("_at")
    return first.drop(columns=["_other", "_unranked", "_order", "_at"]).reset_index(drop=True)


@dataclass(frozen=True)
class Coverage:
    """Which models have results in which families: ``table`` (one row per model, a column
    per family with the number of runs holding it, ``complete`` when every family has it)."""

    table: pd.DataFrame
    families: tuple[str, ...]


def coverage(table: pd.DataFrame) -> Coverage:
    """The coverage of a :func:`profile` table (models × families, runs counted)."""
    families = tuple(sorted(table["family"].unique()))
    counts = (table.drop_duplicates(["model", "family", "run"])
              .pivot_table(index="model", columns="family", values="run", aggfunc="count",
                           fill_value=0))
    counts = counts.reindex(columns=list(families), fill_value=0).astype(int)
    counts["complete"] = (counts > 0).all(axis=1)
    counts.columns.name = None
    return Coverage(counts.reset_index(), families)


def newest(table: pd.DataFrame, order: Sequence[str]) -> pd.DataFrame:
    """Per model × family × configuration × metric, the row of the newest run holding it
    (``order``: run names oldest first, e.g. the order they were loaded), with ``others``
    listing the older runs that also hold it (", "-joined; empty when none)."""
    rank = {name: k for k, name in enumerate(order)}
    keys = ["model", "family", "configuration", "metric"]
    data = table.assign(_when=table["run"].map(rank).fillna(-1))
    data = data.sort_values([*keys, "_when"], kind="stable")
    runs = data.groupby(keys, sort=False)["run"].agg(lambda r: list(dict.fromkeys(r)))
    last = data.drop_duplicates(keys, keep="last").set_index(keys)
    last["others"] = [", ".join(r for r in runs.loc[k] if r != last.loc[k, "run"])
                      for k in last.index]
    return last.drop(columns="_when").reset_index()[[*table.columns.tolist(), "others"]]
