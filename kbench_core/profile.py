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
  Wilson interval, the rank of that TDR and its interval from a bootstrap over contracts of
  each detector's own vulnerable answers (:func:`ratio_ranks`).

A rank is the rank of the value on its row, on the items that value is computed from; the
``items`` column says which items those are, and ``rank_note`` carries the marks the family's
page shows beside the rank ("few biases", "few studies", "few samples", "renormalised").
Wherever a rank interval resamples, it resamples the family's cluster (the ``cluster`` of its
:class:`~kbench_core.families._base.CompareDefaults`, :func:`family_cluster`): the answers to
one contract's prompt types share their errors (``docs/statistics.md``, "Profile ranks").

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
           "family_cluster", "headline_rows", "mean_bms_interval", "newest", "profile",
           "ratio_ranks"]

COLUMNS = ["model", "family", "run", "configuration", "metric", "value", "value_low",
           "value_high", "n", "rank", "rank_low", "rank_high", "n_models", "raw_ids"]
# After the SPEC's columns: what a reader needs to trace a row (the run's kind, its file, the
# judge whose verdicts a judged row counts, whether an alias or the rule made the join, the
# items the value and its rank rest on, and the marks the family's page puts beside the rank).
EXTRA = ["kind", "source", "judge", "joined_by", "items", "rank_note"]

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


def family_cluster(kind: str) -> str | None:
    """The cluster a rank interval of ``kind`` resamples: the unit whose items share errors,
    as the family registry declares it for every comparison of the kind
    (:class:`~kbench_core.families._base.CompareDefaults`; ``sample`` for judged runs, whose
    prompt types of one contract share its verdicts). One place, so no caller forgets it."""
    from kbench_core import families

    comparison = families.get(kind).comparison
    return comparison.cluster if comparison is not None else None


def _marks(*named: tuple[str, Sequence[bool] | np.ndarray | pd.Series | bool]) -> np.ndarray:
    """`` · ``-joined names of the marks that hold, per row (``few biases`` ...)."""
    parts = [np.where(np.asarray(flags, dtype=bool), name, "") for name, flags in named]
    out = [" · ".join(p for p in row if p) for row in zip(*parts, strict=True)]
    return np.asarray(out, dtype=object)


def _rows(board: pd.DataFrame, metric: str, *, value: str | None = None,
          low: str | None = None, high: str | None = None, n: str | float | None = None,
          ranks: pd.DataFrame | None = None, items: str | Sequence[str] = "") -> pd.DataFrame:
    """One profile row per leaderboard row for ``metric``: its value columns renamed, the
    rank columns of ``ranks`` (``model, rank, rank_low, rank_high`` and optionally
    ``rank_note``) joined by model, and ``items`` (the items the value rests on, one text or
    one per row)."""
    value = value or metric

    def column(name: str | float | None) -> np.ndarray:
        if isinstance(name, str) and name in board:
            return pd.to_numeric(board[name], errors="coerce").to_numpy(dtype=float)
        return np.full(len(board), np.nan if not isinstance(name, int | float) else name,
                       dtype=float)

    out = pd.DataFrame({"raw_ids": board["model"].astype(str).to_numpy(), "metric": metric,
                        "value": column(value), "value_low": column(low),
                        "value_high": column(high), "n": column(n),
                        "items": (np.full(len(board), items, dtype=object)
                                  if isinstance(items, str) else np.asarray(items, dtype=object))})
    if ranks is not None:
        out = out.merge(ranks.rename(columns={"model": "raw_ids"}), on="raw_ids", how="left")
    for name in ("rank", "rank_low", "rank_high"):
        if name not in out:
            out[name] = np.nan
        out[name] = pd.to_numeric(out[name], errors="coerce").astype(float)
    # a mark belongs to a rank: none where there is no rank
    note = out["rank_note"].fillna("") if "rank_note" in out else pd.Series("", index=out.index)
    out["rank_note"] = np.where(out["rank"].notna(), note.astype(str), "")
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
    ranks = board[["model", "rank", "rank_low", "rank_high"]].assign(
        rank_note=_marks(("few biases", board["few_items"].fillna(False))))
    # The interval of mean_bms over the same biases the rank rests on (shared by every model)
    bms = run.frame[["model", "bias", "bms"]].dropna().astype({"model": str, "bias": str})
    if board["model"].nunique() >= 2:
        wide = bms.pivot_table(index="bias", columns="model", values="bms", aggfunc="first")
        bms = bms[bms["bias"].isin(wide.index[wide.notna().all(axis=1)])]
    interval = mean_bms_interval(bms).set_index("model")
    board = board.assign(mean_bms_low=board["model"].map(interval["mean_bms_low"]),
                         mean_bms_high=board["model"].map(interval["mean_bms_high"]))
    shared = [f"the {k:,} biases every model of the run reports (rank interval: bootstrap "
              "over them)" for k in board["n_ranked"]]
    rows = [_rows(board, "mean_bms", low="mean_bms_low", high="mean_bms_high", n="n_ranked",
                  ranks=ranks, items=shared),
            _rows(board, "published_susceptibility", value="susceptibility", n="n_biases",
                  items="as the report publishes it")]
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
        # the same call and the same biases as susceptibility_table's rank_text (one BMS per
        # model and bias: the family's cluster, the bias, is the item itself)
        used = table[table["bias"].isin(wide.index[wide.notna().all(axis=1)])]
        ranked = compare.rank_intervals(used, "bms", item="bias", lower_is_better=True,
                                        cluster=family_cluster("bias"))
        renormalised = ranked["model"].map(board.set_index(board["model"].astype(str))[
            "n_renormalised"]).fillna(0).to_numpy() > 0
        ranks = ranked[["model", "rank", "rank_low", "rank_high"]].assign(
            rank_note=_marks(("few biases", ranked["few_items"]),
                             ("renormalised", renormalised)))
    items = [f"the {k:,} biases every model has (rank interval: bootstrap over them)"
             for k in board["n_biases"]]
    return _rows(board, "susceptibility", low="susceptibility_low",
                 high="susceptibility_high", n="n_biases", ranks=ranks,
                 items=items), len(board)


def _replication_summary(run: Run) -> tuple[pd.DataFrame, int]:
    from kbench_core import replication

    if not len(replication.study_rows(run.frame)):
        return pd.DataFrame(), 0
    board = replication.summary_leaderboard(run.frame)
    board = board.assign(rank_note=_marks(("few studies", board["few_items"].fillna(False))))
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
        rows.append(_rows(board, metric, low=low, high=high, n=n, items=texts,
                          ranks=ranked[["model", "rank", "rank_low", "rank_high",
                                        "rank_note"]]))
    if (board["ranked_by"] == "shared_study_pas").any():
        ranked = board[board["ranked_by"] == "shared_study_pas"]
        rows.append(_rows(ranked, "shared_study_pas", n="n_pas",
                          items="the studies every ranked configuration has (rank interval: "
                                "bootstrap over them)",
                          ranks=ranked[["model", "rank", "rank_low", "rank_high",
                                        "rank_note"]]))
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
                  ranks=_point_ranks(ecs, "ecs"),
                  items="the model's tests (ranked by value; no rank interval)")]
    if len(pas):
        rows.append(_rows(pas, "pas", low="pas_low", high="pas_high", n="n",
                          ranks=_point_ranks(pas, "pas"),
                          items="the model's findings (ranked by value; no rank interval)"))
    return pd.concat(rows, ignore_index=True), int(run.frame["model"].nunique())


def ratio_ranks(frame: pd.DataFrame, numerator: np.ndarray, denominator: np.ndarray,
                values: pd.Series, *, cluster: str, lower_is_better: bool = False,
                n_boot: int = 1000, random_state: int = 0, level: float = 0.95
                ) -> pd.DataFrame:
    """The rank of each model's ``values`` (``model`` → value, each the ratio
    Σ numerator / Σ denominator over that model's own rows of ``frame``) and its percentile
    interval over ``n_boot`` bootstrap replicates that resample whole ``cluster`` levels.

    Unlike :func:`kbench_core.compare.rank_intervals`, which ranks every model on the items all
    of them answered, each model keeps its own rows here, so the rank is the rank of the value
    shown (a TDR over the detector's own vulnerable answers) and never contradicts it: a
    detector whose judgements failed on the easy contracts showed TDR 0.33 ranked 1st of 4 on
    the hard contracts every detector had (``tests/test_profile.py``). A replicate draws
    clusters with replacement for all models at once (paired where their clusters are shared)
    and recomputes each model's ratio; a model with nothing drawn ranks last in that
    replicate (the tier bootstrap's convention for an undefined SUI). Ranks: 1 = best, ties
    share their mean rank (no rank with fewer than two values); the interval is taken outward
    (``"lower"``/``"higher"``) and widened to hold the rank, so no rank lies outside its
    interval. Columns ``model, rank,
    rank_low, rank_high, n_clusters`` (the clusters the model's rows come from).

    Cluster bootstrap: Davison & Hinkley (1997), *Bootstrap Methods and their Application*,
    §3.8; rank intervals: Hall & Miller (2009), *Annals of Statistics* 37(6B)."""
    from scipy.stats import rankdata

    models = pd.Index(values.index.astype(str))
    point = values.to_numpy(dtype=float)
    sign = 1.0 if lower_is_better else -1.0
    known = np.isfinite(point)
    rank = np.full(len(models), np.nan)
    if known.sum() >= 2:  # one model has nothing to be ranked against
        rank[known] = rankdata(sign * point[known], method="average")
    model = models.get_indexer(frame["model"].astype(str))
    keep = (model >= 0) & np.isfinite(denominator) & np.isfinite(numerator)
    # clusters coded in their text order: a replicate draws the same clusters whatever order
    # the rows came in
    labels, unit = np.unique(frame[cluster].astype(str).to_numpy()[keep], return_inverse=True)
    n_units, n_models = len(labels), len(models)
    cell = unit * n_models + model[keep]
    num = np.bincount(cell, weights=numerator[keep], minlength=n_units * n_models)
    den = np.bincount(cell, weights=denominator[keep], minlength=n_units * n_models)
    num, den = num.reshape(n_units, n_models), den.reshape(n_units, n_models)
    n_clusters = (den > 0).sum(axis=0)
    low = high = np.full(n_models, np.nan)
    if n_units and known.sum() >= 2:
        rng = np.random.default_rng(random_state)
        chunk = max(1, 4_000_000 // max(n_units, 1))
        ranks = []
        for start in range(0, n_boot, chunk):
            size = min(chunk, n_boot - start)
            draws = (rng.integers(0, n_units, (size, n_units))
                     + (np.arange(size) * n_units)[:, None])
            counts = np.bincount(draws.ravel(), minlength=size * n_units).reshape(
                size, n_units).astype(float)
            top, bottom = counts @ num, counts @ den
            with np.errstate(invalid="ignore", divide="ignore"):
                ratio = np.where(bottom > 0, top / bottom, np.nan)
            ratio = np.where(np.isnan(ratio), np.inf, sign * ratio)  # undefined: last
            ranks.append(rankdata(ratio[:, known], axis=1, method="average"))
        boot = np.vstack(ranks)
        alpha = (1 - level) / 2
        low, high = np.full(n_models, np.nan), np.full(n_models, np.nan)
        low[known] = np.minimum(np.quantile(boot, alpha, axis=0, method="lower"), rank[known])
        high[known] = np.maximum(np.quantile(boot, 1 - alpha, axis=0, method="higher"),
                                 rank[known])
    return pd.DataFrame({"model": models.to_numpy(), "rank": rank, "rank_low": low,
                         "rank_high": high, "n_clusters": n_clusters.astype(int)})


def _flags(series: pd.Series) -> np.ndarray:
    """A bool-like column as 0/1 floats, NaN where missing (a failed judgement)."""
    return series.astype("Float64").to_numpy(dtype=float, na_value=np.nan)


def _judged(run: Run) -> tuple[pd.DataFrame, str]:
    from kbench_core import families, vuln
    from kbench_core.families.judged import TierOptions, judge_views, leaderboard
    from kbench_core.vuln import FEW_SAMPLES

    views = judge_views(run.frame)
    if not views:
        return pd.DataFrame(), ""
    judge, rows = views[0]  # the majority of several judges, else the one judge
    options = TierOptions(bootstrap=True)
    board = vuln.tiers(rows, **options.tiers())
    board = board.assign(model=board["model"].astype(str))
    # the tier leaderboard's rank (by SUI) and the tiers' bootstrap interval of it
    sui_ranks = leaderboard(board).rename(columns={"sui_rank_low": "rank_low",
                                                   "sui_rank_high": "rank_high"})
    sui_ranks = sui_ranks[[c for c in ("model", "rank", "rank_low", "rank_high", "few_items")
                           if c in sui_ranks]]
    sui_ranks = sui_ranks.assign(rank_note=_marks(
        ("few samples", sui_ranks.get("few_items", pd.Series(False, index=sui_ranks.index))
         .fillna(False)))).drop(columns="few_items", errors="ignore")
    # TDR's rank: of the tier leaderboard's TDR, over the rows it counts (vulnerable answers
    # with a verdict and a target assessment; the tiers leave failed judgements out), so the
    # rank is the rank of the value shown. The profile's tier options count a found target as
    # 1 and weigh every answer alike, so TDR = found / vulnerable answers.
    truth, said, found = (_flags(rows[c]) for c in ("is_vulnerable", "said_vulnerable",
                                                    "target_found"))
    counted = (truth == 1) & np.isfinite(said) & np.isfinite(found)
    cluster = family_cluster("judged")
    tdr_ranks = ratio_ranks(rows, np.where(counted, found, 0.0), counted.astype(float),
                            board.set_index("model")["tdr"], cluster=cluster)
    few = tdr_ranks["n_clusters"] < FEW_SAMPLES
    tdr_ranks = tdr_ranks.assign(rank_note=_marks(("few samples", few)))
    contracts = dict(zip(tdr_ranks["model"], tdr_ranks["n_clusters"], strict=True))
    # whether some detector lacks an answer another one has (then their TDRs rest on
    # different answers, and the profile says so)
    key = [c for c in families.get("judged").item_key if c in rows]
    item = pd.MultiIndex.from_frame(rows.loc[counted, key].astype(str)).factorize()[0]
    answered = pd.DataFrame({"model": rows.loc[counted, "model"].astype(str).to_numpy(),
                             "item": item}).drop_duplicates()
    differ = bool(len(answered)) and bool(
        (answered.groupby("model").size() < answered["item"].nunique()).any())
    tdr_items = [f"this detector's vulnerable answers judged by {judge} ({contracts.get(m, 0):,} "
                 f"{cluster}s; rank interval: bootstrap over them)"
                 + ("; detectors differ in the answers judged" if differ else "")
                 for m in board["model"]]
    sui_items = [f"every answer of this detector judged by {judge} ({k:,} {cluster}s; "
                 "rank interval: bootstrap over them)"
                 for k in board.get("n_samples", pd.Series(0, index=board.index))
                 .fillna(0).astype(int)]
    out = pd.concat([
        _rows(board, "tdr", low="tdr_low", high="tdr_high", n="n_vulnerable",
              ranks=tdr_ranks.drop(columns="n_clusters"), items=tdr_items),
        _rows(board, "sui", low="sui_low", high="sui_high", n="n", ranks=sui_ranks,
              items=sui_items)],
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
