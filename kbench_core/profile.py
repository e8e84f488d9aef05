"""One model across benchmarks: the profile table behind ``kbench profile`` and the Models page.

:func:`profile` joins runs of every family by canonical model id (:mod:`kbench_core.aliases`)
and lists, per model × family × run × headline metric, the value with its interval, its ``n``,
and the model's rank among that run's models with its rank interval. Each family declares its
rows (``Family.profile``, a :class:`~kbench_core.families._base.Profile`: a function of the
run made with :func:`metric_rows`, its metrics with their labels, its headline); every
number comes from the family's own leaderboard function (the ones the pages and ``kbench
metrics`` show), so a profile never disagrees with them. The built-in families:

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
    from kbench_core.families._base import Profile
    from kbench_core.io import Run

__all__ = ["COLUMNS", "Coverage", "benchmark_of", "coverage", "family_cluster",
           "headline_rows", "marks", "mean_bms_interval", "metric_labels", "metric_rows",
           "newest", "point_ranks", "profile", "ratio_ranks", "ratio_ranks_from_sums"]

COLUMNS = ["model", "family", "run", "configuration", "metric", "value", "value_low",
           "value_high", "n", "rank", "rank_low", "rank_high", "n_models", "raw_ids"]
# After the SPEC's columns: what a reader needs to trace a row (the run's kind, its file, the
# judge whose verdicts a judged row counts, whether an alias or the rule made the join, the
# items the value and its rank rest on, and the marks the family's page puts beside the rank).
EXTRA = ["kind", "source", "judge", "joined_by", "items", "rank_note"]



def _profiled() -> dict[str, Profile]:
    """The profile of every registered kind that has one, in registry order."""
    from kbench_core import families

    return {f.kind: f.profile for f in families.all_families() if f.profile is not None}


def benchmark_of(kind: str) -> str | None:
    """The benchmark family a run kind belongs to in the profile (trial runs and published
    reports of one benchmark are one family: ``bias`` and ``bias_summary`` are ``bias``),
    or None for a kind with no profile."""
    found = _profiled().get(kind)
    return found.benchmark if found is not None else None


def metric_labels() -> dict[str, str]:
    """``{metric: label}`` of every profiled kind's metrics (registry order)."""
    out: dict[str, str] = {}
    for found in _profiled().values():
        for metric, label in found.labels.items():
            out.setdefault(metric, label)
    return out


def __getattr__(name: str) -> object:
    # The old per-kind tables, read from the registry when asked for.
    if name == "FAMILY_OF":  # the benchmark family of each run kind
        return {kind: found.benchmark for kind, found in _profiled().items()}
    if name == "HEADLINE":  # the metric a card shows first, per run kind
        return {kind: found.headline for kind, found in _profiled().items()}
    if name == "METRIC_LABELS":
        return metric_labels()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def family_cluster(kind: str) -> str | None:
    """The cluster a rank interval of ``kind`` resamples: the unit whose items share errors,
    as the family registry declares it for every comparison of the kind
    (:class:`~kbench_core.families._base.CompareDefaults`; ``sample`` for judged runs, whose
    prompt types of one contract share its verdicts). One place, so no caller forgets it."""
    from kbench_core import families

    comparison = families.get(kind).comparison
    return comparison.cluster if comparison is not None else None


def marks(*named: tuple[str, Sequence[bool] | np.ndarray | pd.Series | bool]) -> np.ndarray:
    """`` · ``-joined names of the marks that hold, per row (``few biases`` ...)."""
    parts = [np.where(np.asarray(flags, dtype=bool), name, "") for name, flags in named]
    out = [" · ".join(p for p in row if p) for row in zip(*parts, strict=True)]
    return np.asarray(out, dtype=object)


def metric_rows(board: pd.DataFrame, metric: str, *, value: str | None = None,
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


def point_ranks(board: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Each model's rank by ``metric`` (higher is better; ties share the mean rank, as
    :func:`kbench_core.compare.rank_intervals` ranks), with no interval."""
    from scipy import stats

    values = board[metric].to_numpy(dtype=float)
    rank = np.full(len(values), np.nan)
    known = np.isfinite(values)
    rank[known] = stats.rankdata(-values[known], method="average")
    return pd.DataFrame({"model": board["model"].astype(str), "rank": rank})


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
    num, den = cluster_sums(frame, numerator, denominator, values.index, cluster=cluster)
    return ratio_ranks_from_sums(num, den, values, lower_is_better=lower_is_better,
                                 n_boot=n_boot, random_state=random_state, level=level)


def cluster_sums(frame: pd.DataFrame, numerator: np.ndarray, denominator: np.ndarray,
                 models: pd.Index, *, cluster: str) -> tuple[np.ndarray, np.ndarray]:
    """The sums :func:`ratio_ranks_from_sums` reads: clusters × ``models`` (as text, in that
    order), the ``cluster`` levels of ``frame``'s rows of those models in their text order,
    each cell Σ numerator and Σ denominator over the rows (rows with a non-finite value left
    out)."""
    models = pd.Index(models.astype(str))
    model = models.get_indexer(frame["model"].astype(str))
    keep = (model >= 0) & np.isfinite(denominator) & np.isfinite(numerator)
    # clusters coded in their text order: a replicate draws the same clusters whatever order
    # the rows came in
    labels, unit = np.unique(frame[cluster].astype(str).to_numpy()[keep], return_inverse=True)
    n_units, n_models = len(labels), len(models)
    cell = unit * n_models + model[keep]
    num = np.bincount(cell, weights=numerator[keep], minlength=n_units * n_models)
    den = np.bincount(cell, weights=denominator[keep], minlength=n_units * n_models)
    return num.reshape(n_units, n_models), den.reshape(n_units, n_models)


def ratio_ranks_from_sums(num: np.ndarray, den: np.ndarray, values: pd.Series, *,
                          lower_is_better: bool = False, n_boot: int = 1000,
                          random_state: int = 0, level: float = 0.95) -> pd.DataFrame:
    """:func:`ratio_ranks` from its per-cluster sums: ``num`` and ``den`` are clusters ×
    models (the clusters in their labels' text order, the models in the order of ``values``'
    index), each cell the sum of the numerator and of the denominator over that model's rows
    in that cluster (0 where it has none). An engine sums them where the rows lie
    (``kbench_core.engines.judged``), and the ranks and intervals are those of the rows."""
    from scipy.stats import rankdata

    models = pd.Index(values.index.astype(str))
    point = values.to_numpy(dtype=float)
    sign = 1.0 if lower_is_better else -1.0
    known = np.isfinite(point)
    rank = np.full(len(models), np.nan)
    if known.sum() >= 2:  # one model has nothing to be ranked against
        rank[known] = rankdata(sign * point[known], method="average")
    n_units, n_models = num.shape[0], len(models)
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
    profiled = _profiled()
    parts = []
    for run in runs:
        found = profiled.get(run.kind)
        if found is None:
            continue
        rows, n_models, judge = found.rows(run)
        if not len(rows):
            continue
        joined = aliases.join(rows["raw_ids"].unique(), configurations=found.configurations)
        rows = rows.merge(joined.rename(columns={"raw_id": "raw_ids", "how": "joined_by"}),
                          on="raw_ids", how="left")
        parts.append(rows.assign(family=found.benchmark, run=run.name, kind=run.kind,
                                 n_models=int(n_models),
                                 source=str(run.meta.get("source", run.name)), judge=judge))
    if not parts:
        return pd.DataFrame(columns=COLUMNS + EXTRA)
    out = pd.concat(parts, ignore_index=True)
    out["_order"] = _metric_order(out)
    out = out.sort_values(["model", "family", "run", "configuration", "_order"],
                          kind="stable")
    return out[COLUMNS + EXTRA].reset_index(drop=True)


def _metric_order(table: pd.DataFrame) -> list[float]:
    """Each row's place in its kind's list of metrics (``Profile.metrics``; unknown: last)."""
    order = {(kind, metric): k for kind, found in _profiled().items()
             for k, (metric, _, _) in enumerate(found.metrics)}
    return [order.get(pair, len(order)) for pair in zip(table["kind"], table["metric"],
                                                         strict=True)]


def headline_rows(table: pd.DataFrame) -> pd.DataFrame:
    """One row per model × run × configuration of a :func:`profile` table: the row of its run
    kind's headline metric (``Profile.headline``), else (a file without it, e.g. HumanStudy-Bench's
    ``simple_studies.csv`` has no published configuration PAS) its first ranked metric, else
    its first metric."""
    if not len(table):
        return table.copy()
    keys = ["model", "family", "run", "configuration", "raw_ids"]
    headline = {kind: found.headline for kind, found in _profiled().items()}
    ranked = table.assign(_other=(table["metric"] != table["kind"].map(headline)),
                          _unranked=table["rank"].isna(),
                          _order=_metric_order(table),
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
