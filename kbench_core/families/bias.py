"""Cognitive-bias trials (KahneBench results): one row per model response.

Metrics in :mod:`kbench_core.kahne` (``docs/metrics/bias.md``); the page is
``views/bias.py`` (trial runs).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from kbench_core.catalog import Item, one
from kbench_core.families import CompareDefaults, Family, Options, PageInfo
from kbench_core.schema import BIAS

__all__ = ["EFFECT_CONDITION", "FAMILY", "FingerprintOptions", "bias_effects",
           "per_item", "susceptibility_table"]

# The condition label of the per-bias rows :func:`per_item` adds for comparisons.
EFFECT_CONDITION = "treatment − control"


@dataclass(frozen=True)
class FingerprintOptions(Options):
    """The fingerprint's options as the Cognitive biases page and the exports set them:
    ``capped`` magnitudes (the seed's cap at 1), the BCI ``std``, the HAS ``threshold`` (and
    whether it is ``relative`` to the human rate) and BMS ``bootstrap`` intervals."""

    capped: bool = True
    std: Literal["population", "sample"] = "population"
    threshold: float = 0.1
    relative: bool = False
    bootstrap: bool = False

    @property
    def cap(self) -> float | None:
        return 1.0 if self.capped else None

    def fingerprint(self) -> dict[str, Any]:
        """Keyword arguments of :func:`kbench_core.kahne.fingerprint`."""
        return dict(cap=self.cap, std=self.std, threshold=self.threshold,
                    relative=self.relative, ci="bootstrap" if self.bootstrap else None)


def susceptibility_table(fingerprint: Any) -> pd.DataFrame:
    """Per model, as the leaderboard shows it: ``rank`` (1 = least biased, by mean BMS over
    the chosen biases), ``rank_text`` (with its bootstrap interval over the biases every model
    has, :func:`kbench_core.compare.rank_intervals`; "few biases" below 30), susceptibility
    with its t interval, and the most susceptible / resistant, human-like and AI-specific
    biases as text. ``fingerprint`` is a :class:`kbench_core.kahne.Fingerprint`."""
    from kbench_core import compare
    from kbench_core.ranking import rank_text

    models = fingerprint.models.copy()
    for col in ("most_susceptible", "most_resistant", "human_like", "ai_specific"):
        models[col] = models[col].map(", ".join)
    table = fingerprint.biases[["model", "bias", "bms"]].dropna()
    ranked = None
    if table["model"].nunique() >= 2:
        ranked = compare.rank_intervals(table, "bms", item="bias", lower_is_better=True)
    if ranked is None:  # one model: nothing to rank against
        models.insert(0, "rank", pd.array([pd.NA] * len(models), dtype="Float64"))
        models.insert(1, "rank_text", "")
    else:
        ranked["rank_text"] = rank_text(ranked["rank"], ranked["rank_low"],
                                        ranked["rank_high"], few=ranked["few_items"],
                                        few_label="few biases")
        models = ranked[["model", "rank", "rank_text"]].merge(models, on="model", how="right")
        models = models[["rank", "rank_text",
                         *[c for c in models if c not in ("rank", "rank_text")]]]
    return models.sort_values(["rank", "model"], na_position="last",
                              kind="stable").reset_index(drop=True)


def bias_effects(frame: pd.DataFrame) -> pd.DataFrame:
    """Per model × bias: ``effect`` = mean known treatment score − mean known control score
    (signed; every intensity pooled, debiasing rows left out), with ``n_treatment`` and
    ``n_control``. NaN when either condition has no known score: unlike BMS, no control mean
    of 0 is assumed, so a bias without a control is left out of a comparison, not counted as
    if its control were unbiased. This is the difference whose absolute value, per intensity
    and weighted, is BMS (``docs/metrics/bias.md``)."""
    score = pd.to_numeric(frame["score"], errors="coerce")
    condition = frame["condition"].astype(str).to_numpy()
    keys = [frame["model"].astype(str).to_numpy(), frame["bias"].astype(str).to_numpy()]
    parts = {}
    for name in ("treatment", "control"):
        rows = (condition == name) & score.notna().to_numpy()
        grouped = score[rows].groupby([k[rows] for k in keys])
        parts[name] = grouped.agg(["mean", "count"]).add_suffix(f"_{name[0]}")
    both = parts["treatment"].join(parts["control"], how="outer")
    out = pd.DataFrame({
        "effect": both["mean_t"] - both["mean_c"],
        "n_treatment": both["count_t"].fillna(0).astype(int),
        "n_control": both["count_c"].fillna(0).astype(int)})
    out.index = out.index.set_names(["model", "bias"])
    return out.reset_index()


def per_item(frame: pd.DataFrame) -> pd.DataFrame:
    """The bias family's per-item table for :mod:`kbench_core.compare`: the trials with a
    ``treatment_minus_control`` column that is NaN on every trial, plus one row per model ×
    bias whose ``condition`` is :data:`EFFECT_CONDITION` and whose
    ``treatment_minus_control`` is that bias's effect (:func:`bias_effects`; the other item
    columns empty). Comparing ``treatment_minus_control`` therefore pairs the models by bias,
    one unit per bias: the quantity BMS is built from, not the pooled score of control,
    treatment and debiasing rows (two models with the same BMS but different baselines used
    to differ "significantly")."""
    effects = bias_effects(frame)
    rows = pd.DataFrame({"model": effects["model"], "bias": effects["bias"],
                         "condition": EFFECT_CONDITION,
                         "treatment_minus_control": effects["effect"]})
    if "category" in frame:  # each bias's first given family, for grouping
        first = (frame[["bias", "category"]].dropna().astype(str)
                 .drop_duplicates("bias").set_index("bias")["category"])
        rows["category"] = rows["bias"].map(first)
    trials = frame.assign(treatment_minus_control=np.nan)
    for column in ("model", "bias", "condition", "category"):
        # plain text keys, so the appended rows' labels join the trials' (no category clash)
        if column in trials and isinstance(trials[column].dtype, pd.CategoricalDtype):
            trials[column] = trials[column].astype(object)
    return pd.concat([trials, rows], ignore_index=True)


def _rules(columns: Mapping[str, Any], frame: pd.DataFrame, add) -> None:
    """Treatment rows need an intensity, debiasing rows a method."""
    if "condition" not in columns:  # the file-level pass: nothing to check
        return
    condition = columns["condition"]
    for needed, cond in (("intensity", "treatment"), ("method", "debiasing")):
        rows = (condition == cond).to_numpy(dtype=bool)
        absent = rows & columns[needed].isna().to_numpy() if needed in columns else rows
        add(absent, needed, f"{cond} rows need a value in '{needed}' "
                            f"({BIAS.column(needed).meaning})")


def _notes(frame: pd.DataFrame) -> list[str]:
    """Say when scores are missing (all, or some): the metrics rest on the scored responses."""
    from kbench_core.kahne import UNSCORED_ADVICE, scored_share

    known, total = scored_share(frame)
    if total and known == 0:
        return [f"no scored response: {UNSCORED_ADVICE}"]
    if known < total:
        return [f"{total - known:,} of {total:,} responses ({(total - known) / total:.0%}) have "
                "no score (unknown, e.g. the answer could not be extracted); every metric "
                "leaves them out and reports the unknown rate"]
    return []


def _unavailable(frame: pd.DataFrame) -> str | None:
    from kbench_core.kahne import UNSCORED_ADVICE, scored_share

    return UNSCORED_ADVICE if scored_share(frame)[0] == 0 else None


_FINGERPRINT_COLUMNS = ["category", "bias", "model", "bms", "bms_low", "bms_high",
                        "model_rate", "model_rate_low", "model_rate_high", "human_rate",
                        "alignment", "bci_consistency", "rci_consistency", "calibration_score",
                        "effectiveness", "n"]


def _catalog() -> list[Item]:
    from kbench_core import figures, kahne

    def fingerprint_of(frame: pd.DataFrame, options: Mapping[str, Any]):
        return kahne.fingerprint(frame, **FingerprintOptions.from_mapping(options).fingerprint())

    def fingerprint(frame: pd.DataFrame, options: Mapping[str, Any]):
        table = fingerprint_of(frame, options).biases
        return one(table[[c for c in _FINGERPRINT_COLUMNS if c in table]])

    def susceptibility(frame: pd.DataFrame, options: Mapping[str, Any]):
        return one(susceptibility_table(fingerprint_of(frame, options)))

    def heatmap(frame: pd.DataFrame, options: Mapping[str, Any]):
        return one(figures.fingerprint_heatmap(fingerprint_of(frame, options).biases))

    def curves(frame: pd.DataFrame, options: Mapping[str, Any]):
        table = kahne.bms(frame, cap=FingerprintOptions.from_mapping(options).cap)
        for bias, rows in table.groupby("bias", sort=True):
            yield str(bias), figures.bms_curves(rows, title=f"{bias}: bias by trigger intensity")

    def domains(frame: pd.DataFrame, options: Mapping[str, Any]):
        cells = kahne.domain_means(frame)
        for model, rows in cells.groupby("model", sort=True, observed=True):
            yield str(model), figures.bci_heatmap(
                rows, title=f"{model}: mean treatment score by domain")

    def alignment(frame: pd.DataFrame, options: Mapping[str, Any]):
        chosen = FingerprintOptions.from_mapping(options)
        return one(figures.has_chart(kahne.has(frame, threshold=chosen.threshold,
                                               relative=chosen.relative)))

    def calibration(frame: pd.DataFrame, options: Mapping[str, Any]):
        return one(figures.cas_bars(kahne.cas(frame)))

    return [
        Item("fingerprint", "Fingerprint: six metrics per model × bias", "table", fingerprint,
             best={"bms": "min", "alignment": "max", "bci_consistency": "max",
                   "rci_consistency": "max", "calibration_score": "max",
                   "effectiveness": "max"}, main=True),
        Item("susceptibility", "Susceptibility per model", "table", susceptibility,
             best={"susceptibility": "min"}),
        Item("fingerprint_heatmap", "Fingerprint heatmap (BMS)", "figure", heatmap),
        Item("bms_curves", "Bias by trigger intensity, per bias", "figure", curves),
        Item("bci_heatmap", "Mean treatment score by domain, per model", "figure", domains),
        Item("has_chart", "Model rate against the human baseline", "figure", alignment),
        Item("cas_bars", "Stated confidence against accuracy", "figure", calibration),
    ]


FAMILY = Family(
    kind="bias", title="Cognitive biases (trials)", spec=BIAS,
    item_key=("bias", "domain", "condition", "intensity", "method", "trial"),
    # One unit per bias: its treatment − control difference (per_item), paired by bias. The
    # bias clusters hold one such item each (the same t as unclustered); they still cluster
    # the trial-level score when it is asked for (`kbench compare --metric score`).
    comparison=CompareDefaults(
        (("bias effect (treatment − control)", "treatment_minus_control"),), "bias", "bias",
        "items"),
    per_item=per_item,
    lower_is_better=frozenset({"score", "treatment_minus_control", "bms", "bias_score",
                               "susceptibility", "unknown_rate", "missing_confidence_rate",
                               "calibration_error", "metacognitive_gap"}),
    catalog=_catalog, unavailable=_unavailable, rules=_rules, notes=_notes,
    key_where_given=True, sample_files=("bias.csv",),
    page=PageInfo("views/bias.py", "Cognitive biases", "bias_runs",
                  extra={"bias_source": "trials"},
                  dependent=("bias_models", "bias_categories", "bias_biases"),
                  icon=":material/psychology:", url="biases", order=10),
)
