"""Cognitive-bias trials (KahneBench results): one row per model response.

Metrics in :mod:`kbench_core.kahne` (``docs/metrics/bias.md``); the page is
``views/bias.py`` (trial runs).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from kbench_core.catalog import Item, one
from kbench_core.families._base import CompareDefaults, Family, Options, PageInfo, Profile
from kbench_core.kahne.grain import (  # (the refusal lives below compare; named here too)
    PER_BIAS_ONLY,
    TRIAL_GRAIN_REFUSED,
    TrialGrainRefused,
    trial_grain_refusal,
)
from kbench_core.schema import CONDITIONS, INTENSITIES, METHOD_KINDS, Column, KindSpec, unit_column

if TYPE_CHECKING:
    from kbench_core.io import Run

__all__ = ["EFFECT_CONDITION", "FAMILY", "PER_BIAS_ONLY", "TRIAL_GRAIN_REFUSED",
           "FingerprintOptions", "TrialGrainRefused", "bias_effects", "per_item",
           "susceptibility_table", "trial_grain_refusal"]

# The Cognitive biases page's switch between trial runs and report runs (both kinds set it).
SOURCE_KEY = "bias_source"


class Keys:
    """The Cognitive biases page's widget keys (also the names of its link parameters), of
    its trials (this family) and its fingerprint reports (``bias_summary``) alike; both
    families' page entries name theirs from here."""

    SOURCE = SOURCE_KEY
    RUNS = "bias_runs"
    MODELS = "bias_models"
    CATEGORIES = "bias_categories"
    BIASES = "bias_biases"
    CAP = "bias_cap"
    STD = "bias_std"
    RELATIVE = "bias_relative"
    THRESHOLD = "bias_threshold"
    BOOTSTRAP = "bias_bootstrap"
    CURVE_BIAS = "bias_curve_bias"
    CURVE_Y = "bias_curve_y"
    HEAT_ROWS = "bias_heat_rows"
    HEAT_MODEL = "bias_heat_model"
    HEAT_BIAS = "bias_heat_bias"
    DRILL_MODEL = "bias_drill_model"
    DRILL_BIAS = "bias_drill_bias"
    DRILL_SEARCH = "bias_drill_search"
    COMPARE = "bias_cmp"
    REPORT_RUNS = "bias_report_runs"
    REPORT_MODELS = "bias_report_models"
    REPORT_CURVE = "bias_report_curve"
    REPORT_HEAT_MODEL = "bias_report_heat_model"
    REPORT_MITIGATION_MODEL = "bias_report_mit_model"
    REPORT_COMPARE = "bias_report_cmp"
    GROUP = "bias_group"
    REPORT_GROUP = "bias_report_group"

# The condition label of the per-bias rows :func:`per_item` adds for comparisons.
EFFECT_CONDITION = "treatment − control"


# The columns of this run kind (docs/formats.md): they belong with the family.
BIAS = KindSpec(
    kind="bias",
    columns=(
        Column("model", "category", True, meaning="model under test"),
        Column("bias", "category", True, meaning="bias id, e.g. anchoring_effect"),
        Column("condition", "category", True, allowed=CONDITIONS),
        Column("intensity", "category", allowed=INTENSITIES,
               meaning="trigger intensity; required on treatment rows"),
        Column("method", "category", meaning="debiasing method; required on debiasing rows"),
        Column("method_kind", "category", allowed=METHOD_KINDS),
        Column("domain", "category", True, meaning="ecological domain"),
        Column("trial", "int", low=0.0, meaning="repetition index"),
        Column("category", "category", meaning="bias family"),
        unit_column("score", "1 = fully biased, 0 = unbiased, empty = unknown", "column"),
        unit_column("confidence", "confidence the model stated"),
        Column("id", "text"),
        Column("prompt", "text"),
        Column("response", "text"),
        Column("answer", "text"),
        Column("response_ms", "float", low=0.0),
    ),
    key=("id",),
    signature=frozenset({"model", "bias", "condition", "score"}),
    description="cognitive-bias trials, one row per model response",
)


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
    """Per model, as the leaderboard shows it; ``fingerprint`` is a
    :class:`kbench_core.kahne.Fingerprint`.

    One set of biases behind every number of a row: with two or more models, the biases
    every model has a BMS for (``n_biases``; ``n_left_out`` counts a model's scored biases
    left out because another model lacks them, ``n_unscored`` its biases without a BMS).
    ``susceptibility`` is the mean BMS over that set with its t interval over the same biases
    (``susceptibility_low``/``_high``; below 30 biases the Wilson-type interval of a [0, cap]
    mean, :func:`kbench_core.stats.bounded_mean_interval`, the fingerprint's too),
    and ``rank`` (1 = least biased) ranks that very value, with its interval from every pair's
    paired test over the same biases in ``rank_text``
    (:func:`kbench_core.compare.rank_intervals`; "few biases" below 30). With one model the
    set is its own scored biases. ``n_renormalised`` counts the biases in the set whose BMS
    was renormalised over fewer intensities than the run scores
    (:func:`kbench_core.kahne.bms`'s ``renormalised``), and ``rank_text`` says
    "renormalised" on those rows: their BMS weighs the intensities differently from the other
    models'. The most susceptible / resistant, human-like and AI-specific biases are the
    model's own, as text."""
    from kbench_core.ranking import model_ranks, rank_text
    from kbench_core.stats import bounded_mean_interval, t_interval

    models = fingerprint.models.copy()
    for col in ("human_like", "ai_specific"):
        # a flag that could go either way within its interval says so beside the bias
        unsure = models.pop(f"{col}_uncertain") if f"{col}_uncertain" in models else None
        if unsure is not None:
            models[col] = [tuple(f"{b} (uncertain)" if b in maybe else b for b in listed)
                           for listed, maybe in zip(models[col], unsure, strict=True)]
    for col in ("most_susceptible", "most_resistant", "human_like", "ai_specific"):
        models[col] = models[col].map(", ".join)
    biases = fingerprint.biases
    # On integer codes (a few hundred pairs: pandas' pivot, isin on text, a groupby apply and
    # a merge cost 40 ms of a widget change on the bias page, the numbers a few ms).
    bms = biases["bms"].to_numpy(dtype=float)
    model, names = pd.factorize(biases["model"])
    bias, _ = pd.factorize(biases["bias"])
    scored = ~np.isnan(bms) & (model >= 0) & (bias >= 0)
    n_models, n_biases = len(names), int(bias.max(initial=-1)) + 1
    # the biases every model with a BMS has a BMS for (with two or more such models)
    has = np.zeros((n_models, max(n_biases, 1)), dtype=bool)
    has[model[scored], bias[scored]] = True
    rated = has.any(axis=1)
    shared = has[rated].all(axis=0) if rated.sum() >= 2 else None
    in_set = scored if shared is None else scored & shared[np.maximum(bias, 0)]
    used = biases.loc[in_set, ["model", "bias", "bms"]]
    # pandas' grouped mean and std (compensated sums) as before, on the codes
    grouped = pd.Series(bms[in_set]).groupby(model[in_set])
    mean, count, std = grouped.mean(), grouped.count(), grouped.std()
    cap = getattr(fingerprint, "cap", 1.0)
    # BMS lies in [0, cap]: biases that all score the same get the Wilson-type bound, never a
    # zero-width interval (issue 23 item 7); without a cap the range is open and it is NaN.
    # Models without a bias in the set (none shared by every model) have no number.
    # Below 30 biases the Wilson-type interval of a [0, cap] mean: the t interval under-covers
    # a skewed BMS over few biases (stats.bounded_mean_interval).
    bounds = (t_interval(mean, std, count) if cap is None
              else bounded_mean_interval(mean, std, count, bounds=(0.0, cap)))
    low, high = (np.asarray(bound, dtype=float) for bound in bounds)
    at = mean.index.to_numpy()

    def per_model(values: np.ndarray, fill: float = np.nan) -> np.ndarray:
        out = np.full(n_models, fill)
        out[at] = values
        return out

    def counted(rows: np.ndarray) -> np.ndarray:
        return np.bincount(model[rows], minlength=n_models).astype(np.int64)

    renormalised = (biases["renormalised"].fillna(False).to_numpy(dtype=bool)
                    if "renormalised" in biases  # else a fingerprint made before the mark
                    else np.zeros(len(biases), dtype=bool))
    if shared is not None:
        renormalised = renormalised & shared[np.maximum(bias, 0)]
    n_set = counted(in_set)
    columns = {
        "susceptibility": per_model(mean.to_numpy(dtype=float)), "n_biases": n_set,
        "susceptibility_low": np.clip(per_model(low), 0.0, None),
        "susceptibility_high": (np.clip(per_model(high), None, cap) if cap is not None
                                else per_model(high)),
        "n_left_out": counted(scored) - n_set,
        "n_unscored": counted(np.isnan(bms) & (model >= 0)),
        "n_renormalised": counted(renormalised & (model >= 0)),
    }
    row = pd.Index(names).get_indexer(models["model"])
    for column, values in columns.items():  # a model the biases lack (-1): 0 or NaN
        columns[column] = np.append(values, 0 if values.dtype.kind == "i" else np.nan)[row]
    ranks = model_ranks(used, "bms", item="bias", models=models["model"],
                        lower_is_better=True)
    if ranks["rank"].isna().all():  # one model (nothing to rank against) or no shared bias
        rank = pd.array([pd.NA] * len(models), dtype="Float64")
        text = [""] * len(models)
    else:
        rank = ranks["rank"].to_numpy()
        text = rank_text(pd.Series(rank), ranks["rank_low"], ranks["rank_high"],
                         few=ranks["few_items"].fillna(False), few_label="few biases")
        text = [t + " · renormalised" if t and n else t
                for t, n in zip(text, columns["n_renormalised"], strict=True)]
    # one frame made at once (inserting, merging and dropping columns cost more than the
    # numbers): the ranked columns first, then the model's own lists
    first = {"rank": rank, "rank_text": text, "model": models["model"],
             **{c: columns[c] for c in ("susceptibility", "susceptibility_low",
                                        "susceptibility_high", "n_biases", "n_left_out",
                                        "n_unscored", "n_renormalised")}}
    own = ("susceptibility", "n_biases", "susceptibility_low", "susceptibility_high")
    table = pd.DataFrame({**first, **{c: models[c] for c in models
                                      if c not in first and c not in own}})
    return table.sort_values(["rank", "model"], na_position="last",
                             kind="stable").reset_index(drop=True)


def bias_effects(frame: pd.DataFrame) -> pd.DataFrame:
    """Per model × bias: ``effect`` = mean known treatment score − mean known control score
    (signed; every intensity pooled, debiasing rows left out), with ``n_treatment`` and
    ``n_control``. NaN when either condition has no known score: unlike BMS, no control mean
    of 0 is assumed, so a bias without a control is left out of a comparison, not counted as
    if its control were unbiased. This is the difference whose absolute value, per intensity
    and weighted, is BMS (``docs/metrics/bias.md``). A weighted frame (a run an engine
    reduced to its distinct tuples, :func:`kbench_core.kahne.row_weights`) counts and
    averages each row as the responses behind it: the numbers of its repeated frame."""
    from kbench_core.kahne import row_weights

    # On integer codes with bincount: a groupby over text keys cost seconds on 1M rows.
    weight = row_weights(frame)
    model, models = pd.factorize(frame["model"], sort=True)
    bias, biases = pd.factorize(frame["bias"], sort=True)
    score = pd.to_numeric(frame["score"], errors="coerce").to_numpy(dtype=float,
                                                                     na_value=np.nan)
    condition = pd.Series(frame["condition"], copy=False)
    known = ~np.isnan(score) & (model >= 0) & (bias >= 0)
    pair = model * max(len(biases), 1) + bias
    size = len(models) * max(len(biases), 1)
    means, counts = {}, {}
    for name in ("treatment", "control"):
        rows = known & (condition == name).to_numpy(dtype=bool)
        w = None if weight is None else weight[rows]
        counts[name] = np.rint(np.bincount(pair[rows], weights=w, minlength=size)).astype(
            np.int64)
        with np.errstate(invalid="ignore", divide="ignore"):
            means[name] = np.bincount(pair[rows], weights=score[rows] if w is None
                                      else score[rows] * w, minlength=size) / counts[name]
    present = np.zeros(size, dtype=bool)
    present[pair[(model >= 0) & (bias >= 0)]] = True
    at = np.flatnonzero(present)
    return pd.DataFrame({
        "model": np.asarray(models, dtype=object)[at // max(len(biases), 1)],
        "bias": np.asarray(biases, dtype=object)[at % max(len(biases), 1)],
        "effect": (means["treatment"] - means["control"])[at],
        "n_treatment": counts["treatment"][at], "n_control": counts["control"][at]})


def per_item(frame: pd.DataFrame) -> pd.DataFrame:
    """The bias family's per-item table for :mod:`kbench_core.compare`: the trials with a
    ``treatment_minus_control`` column that is NaN on every trial, plus one row per model ×
    bias whose ``condition`` is :data:`EFFECT_CONDITION` and whose
    ``treatment_minus_control`` is that bias's effect (:func:`bias_effects`; the other item
    columns empty). Comparing ``treatment_minus_control`` therefore pairs the models by bias,
    one unit per bias: the quantity BMS is built from, not the pooled score of control,
    treatment and debiasing rows (two models with the same BMS but different baselines used
    to differ "significantly").

    A weighted frame (an engine's distinct tuples, :func:`kbench_core.kahne.row_weights`)
    has no trials to pair (no ``trial`` column, one row standing for many): its table holds
    the per-bias rows only, their ``score`` empty, so the per-trial ``score`` comparison has
    nothing to pair on it: the table says so in its ``attrs`` (:data:`PER_BIAS_ONLY`), and
    every comparison of :mod:`kbench_core.compare` refuses it with the reason
    (:func:`trial_grain_refusal`; ``kbench compare`` reads the trials)."""
    from kbench_core.kahne import WEIGHT

    effects = bias_effects(frame)
    rows = pd.DataFrame({"model": effects["model"], "bias": effects["bias"],
                         "condition": EFFECT_CONDITION,
                         "treatment_minus_control": effects["effect"]})
    if "category" in frame:  # each bias's first given family, for grouping
        given = frame[["bias", "category"]].dropna().drop_duplicates("bias")
        rows["category"] = rows["bias"].map(
            dict(zip(given["bias"].astype(str), given["category"].astype(str), strict=True)))
    if WEIGHT in frame:
        # ``score`` stays as a column (the kind is told by its columns), empty: no trial to
        # pair, so nothing is compared on it rather than weighted rows counted as one each
        rows["score"] = np.nan
        for column in ("model", "bias", "condition", "category"):
            if column in rows and column in frame and isinstance(frame[column].dtype,
                                                                 pd.CategoricalDtype):
                rows[column] = rows[column].astype("category")
        rows = rows.reset_index(drop=True)
        rows.attrs[PER_BIAS_ONLY] = ("treatment_minus_control",)
        return rows
    trials = frame.assign(treatment_minus_control=np.nan)
    for column in ("model", "bias", "condition", "category"):
        # Categorical keys stay categorical (cheap on big runs): the added rows' labels join
        # their categories, so both parts share one dtype and concat keeps it.
        if column in trials and isinstance(trials[column].dtype, pd.CategoricalDtype):
            extra = pd.Index(rows[column].dropna().unique()).difference(
                trials[column].cat.categories)
            if len(extra):
                trials[column] = trials[column].cat.add_categories(extra)
            rows[column] = pd.Categorical(rows[column],
                                          categories=trials[column].cat.categories)
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
                        "renormalised", "model_rate", "model_rate_low", "model_rate_high",
                        "human_rate", "alignment", "human_like", "human_like_uncertain",
                        "direction", "direction_uncertain", "bci_consistency", "systematic",
                        "systematic_uncertain", "rci_consistency", "calibration_score",
                        "overconfident", "overconfident_uncertain", "effectiveness", "n"]


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


def _profile_rows(run: Run) -> tuple[pd.DataFrame, int, str]:
    """The profile's row of a bias run (``kbench_core.profile``): the susceptibility of
    :func:`susceptibility_table` and its rank interval."""
    from kbench_core import compare, kahne
    from kbench_core.profile import marks, metric_rows

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
                                        cluster=FAMILY.comparison.cluster)
        renormalised = ranked["model"].map(board.set_index(board["model"].astype(str))[
            "n_renormalised"]).fillna(0).to_numpy() > 0
        ranks = ranked[["model", "rank", "rank_low", "rank_high"]].assign(
            rank_note=marks(("few biases", ranked["few_items"]),
                             ("renormalised", renormalised)))
    items = [f"the {k:,} biases every model has (rank interval: bootstrap over them)"
             for k in board["n_biases"]]
    return metric_rows(board, "susceptibility", low="susceptibility_low",
                 high="susceptibility_high", n="n_biases", ranks=ranks,
                 items=items), len(board), ""


def _suspect_rows(absent: Any, said: Any, columns: set[str]) -> Any:
    """:func:`_rules` as the engines' predicate: a treatment row without an intensity, a
    debiasing row without a method."""
    if "condition" not in columns:
        return None
    return ((said("condition", "treatment") & absent("intensity"))
            | (said("condition", "debiasing") & absent("method")))


def _sample_frame(seed: int) -> pd.DataFrame:
    """The frame of the bundled sample run ``sample_data/bias.csv`` (planted effects, known in
    closed form)."""
    from kbench_core.samples.bias import bias_trials

    return bias_trials(seed=seed)


FAMILY = Family(
    kind="bias", title="Cognitive biases (trials)", spec=BIAS,
    detection_order=40,
    headline_items=("susceptibility", "fingerprint_heatmap"),
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
    key_where_given=True, sample_files=("bias.csv",), sample_frame=_sample_frame,
    format_doc="docs/formats.md",
    # the engines: the counts are weights; no text, id or timing column leaves the engine
    weighted=True, not_read=("id", "trial", "prompt", "response", "answer", "response_ms"),
    schema_only=True, suspect_rows=_suspect_rows,
    profile=Profile("bias", "Cognitive biases",
                    (("susceptibility", "Susceptibility: mean BMS (kbench)",
                      "susceptibility (mean BMS)"),),
                    "susceptibility", _profile_rows),
    page=PageInfo("views/bias.py", "Cognitive biases", Keys.RUNS,
                  extra={Keys.SOURCE: "trials"},
                  dependent=(Keys.MODELS, Keys.CATEGORIES, Keys.BIASES),
                  icon=":material/psychology:", url="biases", order=10, keys=Keys),
)
