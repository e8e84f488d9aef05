r"""KahneBench fingerprint reports (run kind ``bias_summary``): the tables the Cognitive biases
page, the figures and the exports show, read straight from the reports.

A report carries KahneBench's own per-bias numbers (BMS, BCI, BMP, HAS, RCI, CAS; see
``docs/metrics/bias.md``) but none of the trials behind them, so nothing here is recomputed and
nothing has an interval: every function only reshapes the report's values into the column
names that :func:`kbench_core.kahne.fingerprint`, :func:`~kbench_core.kahne.bms`,
:func:`~kbench_core.kahne.domain_means`, :func:`~kbench_core.kahne.has` and
:func:`~kbench_core.kahne.cas` use for trial runs, so the same figures serve both kinds. Interval
columns are present and NaN, and ``n`` is NaN (no trials), so a reader never mistakes a report
value for one with a known spread.

The one derived number, :func:`leaderboard`'s rank interval, resamples biases (the units both
kinds share) and is labelled as kbench's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from kbench_core.schema import INTENSITIES

__all__ = ["alignment_table", "calibration_table", "domain_cells", "fingerprint_table",
           "intensity_table", "leaderboard", "leaderboard_groups", "mitigation_table",
           "published_summary", "shared_biases"]

_KEY = ["model", "bias"]


def _with(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """``frame``'s key and the named columns that exist (absent ones as NaN)."""
    out = frame[[c for c in _KEY if c in frame]].copy()
    for column in columns:
        out[column] = frame.get(column, np.nan)
    for column in _KEY:
        out[column] = out[column].astype(str)
    return out.reset_index(drop=True)


def fingerprint_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The fingerprint as reported: one row per model × bias with the columns of
    :attr:`kbench_core.kahne.Fingerprint.biases` that a report has (``direction`` as
    under/aligned/over, ``direction_as_written`` as the report spells it; ``n`` NaN)."""
    columns = ["category", "bms", "sensitivity", "control_mean", "unknown_rate",
               "bci_mean_score", "bci_consistency", "systematic", "best_method",
               "effectiveness", "requires_warning", "model_rate", "human_rate", "alignment",
               "rci_consistency", "rci_stable", "calibration_score", "overconfident"]
    out = _with(frame, columns)
    out["direction"] = frame["direction_std"].astype(object).to_numpy() \
        if "direction_std" in frame else np.nan
    out["direction_as_written"] = frame["direction"].astype(object).to_numpy() \
        if "direction" in frame else np.nan
    out["high_unknown"] = out["unknown_rate"] > 0.5
    out["n"] = np.nan
    if out["category"].isna().all():  # reports name no bias families
        out = out.drop(columns="category")
    return out


def intensity_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Control and treatment means by intensity, BMS and sensitivity, in the columns of
    :func:`kbench_core.kahne.bms` (``mean_<intensity>``, ``control_mean``; their ``_low``,
    ``_high`` and ``n_`` columns NaN: a report has no trials)."""
    columns = ["control_mean", "bms", "sensitivity", "unknown_rate"]
    columns += [f"mean_{level}" for level in INTENSITIES]
    out = _with(frame, columns)
    for name in ["control_mean", *(f"mean_{level}" for level in INTENSITIES)]:
        out[f"{name}_low"] = out[f"{name}_high"] = np.nan
    for level in ("control", *INTENSITIES):
        out[f"n_{level}"] = np.nan
    out["n"] = np.nan
    return out


def domain_cells(frame: pd.DataFrame) -> pd.DataFrame:
    """The report's per-domain scores (``domain_<name>`` columns) in the long shape of
    :func:`kbench_core.kahne.domain_means`: ``model, bias, domain, mean_score`` (interval and
    ``n`` NaN)."""
    domains = [c for c in frame.columns if str(c).startswith("domain_")]
    if not domains:
        return pd.DataFrame(columns=[*_KEY, "domain", "mean_score", "mean_score_low",
                                     "mean_score_high", "n"])
    wide = _with(frame, domains)
    long = wide.melt(id_vars=_KEY, value_vars=domains, var_name="domain",
                     value_name="mean_score")
    long["domain"] = long["domain"].str.removeprefix("domain_")
    long = long.dropna(subset=["mean_score"]).reset_index(drop=True)
    long["mean_score_low"] = long["mean_score_high"] = long["n"] = np.nan
    return long


def alignment_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Human alignment as reported, in the columns of :func:`kbench_core.kahne.has`
    (``direction`` as under/aligned/over; ``model_rate_low``/``_high`` and ``n`` NaN)."""
    out = _with(frame, ["model_rate", "human_rate", "alignment"])
    out["direction"] = (frame["direction_std"].astype(object).to_numpy()
                        if "direction_std" in frame else None)
    out["model_rate_low"] = out["model_rate_high"] = out["n"] = np.nan
    out["baseline_missing"] = out["human_rate"].isna()
    return out


def calibration_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Calibration as reported, in the columns of :func:`kbench_core.kahne.cas`; a bias whose
    report says ``insufficient_confidence_data`` has no confidence data (NaN, left out)."""
    out = _with(frame, ["cas_confidence", "cas_accuracy", "cas_error", "calibration_score",
                        "overconfident", "metacognitive_gap"])
    out = out.rename(columns={"cas_confidence": "mean_confidence",
                              "cas_accuracy": "mean_accuracy",
                              "cas_error": "calibration_error"})
    insufficient = (frame["cas_insufficient"].astype("boolean").fillna(False).to_numpy(bool)
                    if "cas_insufficient" in frame else np.zeros(len(out), bool))
    out["has_confidence_data"] = ~insufficient & out["mean_confidence"].notna().to_numpy()
    for name in ("mean_confidence", "mean_accuracy"):
        out[f"{name}_low"] = out[f"{name}_high"] = np.nan
    out["n"] = np.nan
    return out


def mitigation_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Mitigation as reported, long: ``model, bias, method, score`` (the debiased mean score
    of each method, from ``debias_<method>``), ``baseline`` (the treatment mean before
    debiasing), ``best`` (the report's best method), ``effectiveness``."""
    methods = [c for c in frame.columns if str(c).startswith("debias_")]
    columns = [*_KEY, "method", "score", "baseline", "best", "effectiveness"]
    if not methods:
        return pd.DataFrame(columns=columns)
    wide = _with(frame, [*methods, "bmp_baseline", "best_method", "effectiveness"])
    long = wide.melt(id_vars=[*_KEY, "bmp_baseline", "best_method", "effectiveness"],
                     value_vars=methods, var_name="method", value_name="score")
    long["method"] = long["method"].str.removeprefix("debias_")
    long["best"] = long["method"] == long["best_method"].astype(str)
    long = long.rename(columns={"bmp_baseline": "baseline"})
    return long.dropna(subset=["score"])[columns].reset_index(drop=True)


def published_summary(frame: pd.DataFrame,
                      summaries: Mapping[str, Any] | None) -> pd.DataFrame:
    """The reports' own per-model summary, as published: ``model``,
    ``susceptibility`` (overall_bias_susceptibility), ``most_susceptible``,
    ``most_resistant``, ``human_like``, ``ai_specific`` (lists joined by ", "), and
    ``n_biases`` (biases in the report). A model whose report has no summary has NaN."""
    models = sorted(map(str, frame["model"].unique()))
    counts = frame.assign(model=frame["model"].astype(str)).groupby("model")["bias"].nunique()
    rows = []
    for model in models:
        summary = (summaries or {}).get(model) or {}

        def joined(key: str, summary: Mapping[str, Any] = summary) -> str | float:
            value = summary.get(key)
            if isinstance(value, list):
                return ", ".join(map(str, value))
            return np.nan if value is None else str(value)

        value = summary.get("overall_bias_susceptibility")
        rows.append({"model": model,
                     "susceptibility": float(value) if isinstance(value, int | float)
                     and not isinstance(value, bool) else np.nan,
                     "n_biases": int(counts.get(model, 0)),
                     "most_susceptible": joined("most_susceptible_biases"),
                     "most_resistant": joined("most_resistant_biases"),
                     "human_like": joined("human_like_biases"),
                     "ai_specific": joined("ai_specific_biases")})
    return pd.DataFrame(rows)


def leaderboard(frame: pd.DataFrame, summaries: Mapping[str, Any] | None = None, *,
                n_boot: int = 1000, random_state: int = 0) -> pd.DataFrame:
    """Models by their published susceptibility (lower = less biased; rank 1 = least biased):
    the report's summary (:func:`published_summary`), ``mean_bms`` (kbench's mean of the
    reported per-bias BMS over the biases every model has, for the rank) and the rank with its
    interval from every pair's paired test over those biases
    (:func:`kbench_core.compare.rank_intervals`; ``few_items`` when fewer than 30 biases),
    ``n_ranked`` the biases behind ``mean_bms`` and the rank, ``n_dropped`` biases a model
    lacks."""
    from kbench_core.compare import FEW_ITEMS
    from kbench_core.ranking import model_ranks

    out = published_summary(frame, summaries)
    table = frame[["model", "bias", "bms"]].dropna() if "bms" in frame else frame.iloc[:0]
    table = table.assign(model=table["model"].astype(str), bias=table["bias"].astype(str))
    ranks = model_ranks(table, "bms", item="bias", models=out["model"], lower_is_better=True,
                        n_boot=n_boot, random_state=random_state)
    ranked = bool(ranks["rank"].notna().any())
    for column in ("rank", "rank_low", "rank_high", "n_dropped"):
        out[column] = ranks[column].to_numpy()
    out["mean_bms"] = ranks["ranked_value"].to_numpy()
    if table["model"].nunique() == 1:  # nothing to share biases with: its own mean
        out["mean_bms"] = out["model"].map(table.groupby("model")["bms"].mean())
    # The biases behind mean_bms and the rank (the shared ones), shown; "few" counts them
    out["n_ranked"] = (ranks["n_ranked"].to_numpy() if ranked
                       else out["model"].map(table.groupby("model")["bias"].nunique()))
    out["n_ranked"] = out["n_ranked"].fillna(0).astype(int)
    out["few_items"] = out["n_ranked"] < FEW_ITEMS
    first = ["model", "rank", "rank_low", "rank_high", "susceptibility", "mean_bms",
             "n_ranked", "n_biases"]
    out = out[first + [c for c in out.columns if c not in first]]
    return out.sort_values(["rank", "model"], na_position="last", kind="stable").reset_index(
        drop=True)


def shared_biases(frame: pd.DataFrame, value: str = "bms") -> frozenset[str]:
    """The biases every model of ``frame`` has a known ``value`` for (``bms`` for reports,
    ``score`` for trials): the set a leaderboard of its models ranks on.

    >>> frame = pd.DataFrame({"model": ["m", "m", "n"], "bias": ["x", "y", "x"],
    ...                       "bms": [0.1, 0.2, 0.3]})
    >>> sorted(shared_biases(frame))
    ['x']
    """
    if value not in frame or frame.empty:
        return frozenset()
    known = frame.loc[frame[value].notna(), ["model", "bias"]].astype(str)
    per_model = [frozenset(group) for _, group in known.groupby("model")["bias"]]
    return frozenset.intersection(*per_model) if per_model else frozenset()


def leaderboard_groups(frames: Mapping[str, pd.DataFrame], value: str = "bms"
                       ) -> list[list[str]]:
    """The runs (by name, in the order given) whose models may share one leaderboard without
    any run's numbers changing: runs whose models share the same biases
    (:func:`shared_biases`). A leaderboard ranks on the biases every chosen model has, so a
    run of other biases beside another shrinks that set and changes the other's mean BMS and
    ranks; such runs are ranked apart unless the user asks (issue 37: no number changes
    because another run is selected).

    >>> a = pd.DataFrame({"model": ["m", "m"], "bias": ["x", "y"], "bms": [0.1, 0.2]})
    >>> b = pd.DataFrame({"model": ["n"], "bias": ["x"], "bms": [0.3]})
    >>> leaderboard_groups({"A": a, "B": b, "A again": a})
    [['A', 'A again'], ['B']]
    """
    groups: dict[frozenset[str], list[str]] = {}
    for name, frame in frames.items():
        groups.setdefault(shared_biases(frame, value), []).append(name)
    return list(groups.values())
