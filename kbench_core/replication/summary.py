"""Tables from a ``replication_summary`` run: its study and finding rows, and the leaderboard
of configurations (means with their intervals, ranks) that the page and every export show."""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np
import pandas as pd
from scipy import stats

from kbench_core.stats import bounded_mean_interval


def study_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The study rows of a ``replication_summary`` frame (finding rows left out)."""
    if "finding" not in frame:
        return frame
    return frame[frame["finding"].isna().to_numpy()]


def finding_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The finding rows of a ``replication_summary`` frame (empty when it has none)."""
    if "finding" not in frame:
        return frame.iloc[:0]
    return frame[frame["finding"].notna().to_numpy()]


SUMMARY_LABELS: dict[str, str] = {
    "config_pas": "PAS (published)",
    "config_ecs": "ECS (published)",
    "mean_study_pas": "Mean of per-study PAS",
    "mean_study_ecs": "Mean of per-study ECS",
    "shared_study_pas": "Mean PAS over the studies every ranked configuration has",
    "ecs_published": "ECS (published)",
    "ecs_recomputed": "ECS (recomputed by kbench)",
}


def _config_key(name: object) -> str:
    """A configuration name compared across files: HumanStudy-Bench's per-test list names it
    ``Model (Method)``, its results ``model_method``; both become ``model_method`` in lower
    case with every other character run as ``_``."""
    return re.sub(r"[^0-9a-z.]+", "_", str(name).lower()).strip("_")


def published_ecs(tests: pd.DataFrame,
                  summaries: Iterable[pd.DataFrame] = ()) -> pd.Series:
    """The published configuration-level ECS of each model of a per-test run, where one is
    known: the run's own ``config_ecs`` column (one value per model, as a results file writes
    it), else ``config_ecs`` of a loaded ``replication_summary`` run whose configuration is
    the model (the same name, or HumanStudy-Bench's ``Model (Method)`` for its
    ``model_method``). A Series indexed by model, NaN where none is known (and where two
    sources disagree, rather than pick one)."""
    models = pd.Index(sorted(map(str, tests["model"].unique())), name="model")
    out = pd.Series(np.nan, index=models, name="ecs_published", dtype=float)
    if "config_ecs" in tests:
        own = (pd.DataFrame({"model": tests["model"].astype(str),
                             "value": pd.to_numeric(tests["config_ecs"], errors="coerce")})
               .dropna().groupby("model")["value"].agg(["min", "max"]))
        agreed = own[np.isclose(own["min"], own["max"], rtol=0, atol=1e-12)]["min"]
        out.loc[agreed.index.intersection(models)] = agreed
    keys = pd.Series(models.map(_config_key), index=models)
    found: dict[str, set[float]] = {}
    for frame in summaries:
        if "config_ecs" not in frame or "model" not in frame:
            continue
        values = (pd.DataFrame({"key": frame["model"].map(_config_key),
                                "value": pd.to_numeric(frame["config_ecs"], errors="coerce")})
                  .dropna().drop_duplicates())
        for key, value in zip(values["key"], values["value"], strict=True):
            found.setdefault(key, set()).add(float(value))
    for model, key in keys.items():
        if np.isnan(out[model]) and len(found.get(key, ())) == 1:
            out[model] = next(iter(found[key]))
    return out


def summary_leaderboard(frame: pd.DataFrame, *, n_boot: int = 1000,
                        random_state: int = 0) -> pd.DataFrame:
    """The leaderboard of a ``replication_summary`` run: one row per configuration.

    Columns: ``model``; ``config_pas``, ``config_ecs`` — the published configuration-level
    values, no interval, NaN when the file lacks them; ``mean_study_pas``, ``mean_study_ecs``
    — the mean of the published per-study values, with the bounded-mean interval over
    studies (:func:`kbench_core.stats.bounded_mean_interval`: Wilson-type below 30 studies)
    (``_low``/``_high``) and counts ``n_pas``, ``n_ecs``; ``n_studies``; ``tokens`` and
    ``cost`` (US dollars), the sums of the published per-study values (they equal the
    published configuration totals); ``rank`` (1 = best, ties share the mean rank) with its
    interval ``rank_low``/``rank_high`` (from every pair's paired test over the shared studies,
    :func:`kbench_core.compare.rank_intervals`) and as text ``rank_text`` (``2 [1, 4] · few
    studies``, "no scores"; :func:`kbench_core.ranking.rank_text`), ``ranked_by`` (which
    column), ``n_dropped``
    (studies left out of the ranking because this configuration lacks them),
    ``few_items`` (ranked on fewer than 30 studies) and ``no_scores`` (no score at all; such
    configurations come last, unranked).

    Ranking is by ``config_pas`` when the file has it, else by ``mean_study_pas`` (the
    published ``pas_raw`` is the mean of its study values, so the rank intervals compare the
    studies of that same statistic, :func:`kbench_core.compare.rank_intervals`). When the
    rank intervals' statistic — the mean PAS over the studies every configuration has,
    ``shared_study_pas`` — is not that value for the same configurations (studies missing
    for some, a published PAS that is not its studies' mean), the rank is the bootstrap's
    own and ``ranked_by`` is ``shared_study_pas``, so a rank and its interval always rest
    on one statistic and one set of studies. The
    published configuration ECS is *not* the mean of the per-study ECS (HumanStudy-Bench pools
    every test): the two are different numbers and keep different names
    (:data:`SUMMARY_LABELS`). Finding rows are left out; nothing is pooled or recomputed.
    """
    from kbench_core.compare import FEW_ITEMS
    from kbench_core.ranking import model_ranks, rank_text

    studies = study_rows(frame)
    grouped = studies.groupby("model", observed=True, sort=True)
    out = pd.DataFrame({"n_studies": grouped["study"].nunique()})
    for metric in ("pas", "ecs"):
        name = f"mean_study_{metric}"
        if metric in studies:
            moments = grouped[metric].agg(["mean", "std", "count"])
            bound = (0.0, 1.0) if metric == "pas" else (-1.0, 1.0)
            # the bounded-mean interval over the studies (issue 38 item 4)
            low, high = bounded_mean_interval(moments["mean"], moments["std"],
                                              moments["count"], bounds=bound)
            out[name] = moments["mean"]
            out[f"{name}_low"], out[f"{name}_high"] = np.clip(low, *bound), np.clip(high,
                                                                                   *bound)
            out[f"n_{metric}"] = moments["count"].astype(int)
        else:
            out[name] = out[f"{name}_low"] = out[f"{name}_high"] = np.nan
            out[f"n_{metric}"] = 0
    for published in ("config_pas", "config_ecs"):
        out[published] = (frame.groupby("model", observed=True, sort=True)[published].first()
                          if published in frame else np.nan)
    for extra in ("tokens", "cost"):
        if extra in studies:
            out[extra] = grouped[extra].sum(min_count=1)
    out = out.reset_index()
    out["model"] = out["model"].astype(str)
    by = "config_pas" if out["config_pas"].notna().any() else "mean_study_pas"
    scores = out[["config_pas", "config_ecs", "mean_study_pas", "mean_study_ecs"]]
    out["no_scores"] = scores.isna().all(axis=1)
    ranked = out[by].notna()
    out["rank"] = np.nan
    out.loc[ranked, "rank"] = stats.rankdata(-out.loc[ranked, by].to_numpy(), method="average")
    out["ranked_by"] = np.where(ranked, by, "")
    out["rank_low"] = out["rank_high"] = np.nan
    out["n_dropped"] = 0
    scored = (studies[["model", "study", "pas"]].dropna() if "pas" in studies
              else studies.iloc[:0])
    scored = scored[scored["model"].astype(str).isin(out.loc[ranked, "model"])]
    ranks = model_ranks(scored, "pas", item="study", models=out["model"],
                        lower_is_better=False, n_boot=n_boot, random_state=random_state)
    at = ranks["rank"].notna().to_numpy(bool)
    if at.any():
        for column in ("rank_low", "rank_high", "n_dropped"):
            out.loc[at, column] = ranks.loc[at, column].to_numpy()
        # One statistic behind a rank and its interval: the intervals rank the mean PAS
        # over the studies every configuration has. The rank by ``by`` stands only when
        # it is that statistic for the same configurations (as in HumanStudy-Bench's
        # files, where pas_raw is the mean of its studies); otherwise the rank is the
        # bootstrap's own, so no rank lies outside its interval (a configuration whose
        # published PAS ranks it first but whose shared studies rank it second showed
        # "1 [2, 2]").
        shared = ranks.loc[at, "ranked_value"].to_numpy(dtype=float)
        same = (at == ranked.to_numpy(bool)).all() and np.allclose(
            out.loc[at, by].to_numpy(dtype=float), shared, rtol=0, atol=1e-9)
        out["shared_study_pas"] = np.nan
        out.loc[at, "shared_study_pas"] = shared
        if not same:
            by = "shared_study_pas"
            ranked = pd.Series(at, index=out.index)
            out["rank"] = np.nan
            out.loc[at, "rank"] = ranks.loc[at, "rank"].to_numpy()
            out["ranked_by"] = np.where(at, by, "")
    out["n_dropped"] = out["n_dropped"].astype(int)
    if "shared_study_pas" not in out:
        out["shared_study_pas"] = np.nan
    out["few_items"] = ranked & (out["n_pas"] < FEW_ITEMS)
    out["rank_text"] = rank_text(out["rank"], out["rank_low"], out["rank_high"],
                                 few=out["few_items"], few_label="few studies",
                                 unranked=out["no_scores"], unranked_label="no scores")
    out = out.sort_values(["no_scores", "rank", "model"], na_position="last", kind="stable")
    first = ["model", "rank", "rank_low", "rank_high", "rank_text", "ranked_by", "config_pas",
             "config_ecs", "mean_study_pas", "mean_study_pas_low", "mean_study_pas_high", "n_pas",
             "mean_study_ecs", "mean_study_ecs_low", "mean_study_ecs_high", "n_ecs",
             "n_studies"]
    rest = [c for c in out.columns if c not in first]
    return out[first + rest].reset_index(drop=True)
