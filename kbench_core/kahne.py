"""The six KahneBench metrics per model × bias, and the cognitive fingerprint (SPEC 2.1).

Every function takes a validated ``bias`` frame (see :mod:`kbench_core.io`) and returns a tidy
DataFrame with one row per model × bias, computed with groupbys over all groups at once.
Defaults carry the fixes of the metrics review (``seeds/kahne_metrics_review.md``); each
original behaviour is an option, so published numbers can be reproduced:

========================  ==========================  =====================================
review issue              default here                original (option)
========================  ==========================  =====================================
B1 positional weights     weights keyed by name       (same values)
B3 sensitivity spacing    ``spacing="ordinal"``       ``spacing="observed"``
C1 BCI sample std         ``std="population"``        ``std="sample"``
M1 BCI includes control   ``rows="treatment"``        ``rows="all"``
F1 RCI sample variance    ``variance="population"``   ``variance="sample"``
F2 RCI no data = 1.0      NaN and ``has_data`` False  (not reproduced: it hid missing data)
G1 CAS no data = 0.5      NaN, ``has_confidence_data``
G2 CAS unknown_rate       ``missing_confidence_rate``
E2 HAS fixed threshold    ``relative=False``          ``relative=True`` scales by h
========================  ==========================  =====================================

Undefined values are NaN, never a made-up number; the one kept convention of the seed is that
an empty control gives a control mean of 0 in BMS.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats

from kbench_core.schema import INTENSITIES

__all__ = [
    "AGGREGATION_WEIGHTS", "INTENSITY_WEIGHTS", "Fingerprint", "bci", "bmp", "bms", "cas",
    "fingerprint", "has", "human_baselines", "infer_method_kind", "rci",
]

KEY = ["model", "bias"]
INTENSITY_WEIGHTS: dict[str, float] = {"weak": 2.0, "moderate": 1.0, "strong": 0.67,
                                       "adversarial": 0.5}
AGGREGATION_WEIGHTS: dict[str, float] = {"weak": 0.1, "moderate": 0.3, "strong": 0.4,
                                         "adversarial": 0.2}
HIGH_UNKNOWN = 0.5
# Threshold comparisons allow for float summation order: a mean of exactly 0.5 must not flip
# across "> 0.5" when the same trials arrive in another order.
TOLERANCE = 1e-9


def _above(values: pd.Series, limit: float | pd.Series) -> pd.Series:
    with np.errstate(invalid="ignore"):  # NaN compares False, as wanted
        return values > limit + TOLERANCE


def _below(values: pd.Series, limit: float | pd.Series) -> pd.Series:
    with np.errstate(invalid="ignore"):
        return values < limit - TOLERANCE


@cache
def _baseline_file() -> dict:
    text = files("kbench_core").joinpath("data/human_baselines.json").read_text("utf-8")
    return json.loads(text)


def human_baselines() -> pd.DataFrame:
    """The 69 human susceptibility rates shipped with kbench (KahneBench's HUMAN_BASELINES),
    with ``weakly_supported`` marking the three rates with little empirical support."""
    data = _baseline_file()
    frame = pd.Series(data["baselines"], name="human_rate").rename_axis("bias").reset_index()
    frame["weakly_supported"] = frame["bias"].isin(data["weakly_supported"])
    return frame


def _check_choice(name: str, value: object, allowed: tuple[object, ...]) -> None:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}; "
                         f"got {value!r}")


def _pairs(trials: pd.DataFrame) -> pd.MultiIndex:
    """Every model × bias present in the run (the rows of each result)."""
    return pd.MultiIndex.from_frame(
        trials[KEY].drop_duplicates().astype(str).sort_values(KEY), names=KEY)


def _keyed(trials: pd.DataFrame) -> pd.DataFrame:
    frame = trials.copy()
    frame["model"] = frame["model"].astype(str)
    frame["bias"] = frame["bias"].astype(str)
    return frame


def _t_interval(mean: pd.Series, std: pd.Series, n: pd.Series,
                level: float = 0.95) -> tuple[pd.Series, pd.Series]:
    """Student-t interval of a mean from its sample std and n (NaN for n < 2)."""
    n = n.astype(float)
    half = stats.t.ppf(0.5 + level / 2, n - 1) * std / np.sqrt(n)
    half = half.where(n >= 2)
    return mean - half, mean + half


# ----------------------------------------------------------------------------- BMS


def bms(trials: pd.DataFrame, *, cap: float | None = 1.0,
        intensity_weights: Mapping[str, float] | None = None,
        aggregation_weights: Mapping[str, float] | None = None,
        spacing: Literal["ordinal", "observed"] = "ordinal") -> pd.DataFrame:
    r"""Bias Magnitude Score per model × bias.

    Notes
    -----
    .. math::
        \mathrm{mag}_i = \min\bigl(w_i\,|\bar s_{T,i} - \bar s_C|,\ \mathrm{cap}\bigr),\qquad
        \mathrm{BMS} = \frac{\sum_{i\in P} a_i\,\mathrm{mag}_i}{\sum_{i\in P} a_i}

    over the intensities P with at least one known score; w = weak 2.0, moderate 1.0, strong
    0.67, adversarial 0.5 and a = 0.1, 0.3, 0.4, 0.2, both keyed by name. ``sensitivity`` is
    the least-squares slope of magnitude on intensity position (0–3, or 0..k−1 with
    ``spacing="observed"`` as the seed did); it needs two intensities. Unknown scores are left
    out of every mean; ``unknown_rate`` is their share of all the pair's rows. An empty control
    gives control mean 0 (KahneBench's convention). Each ``mean_<intensity>`` has a t interval.

    References
    ----------
    KahneBench ``metrics/core.py`` and its review (seeds/kahne_metrics_review.md §1).
    """
    _check_choice("spacing", spacing, ("ordinal", "observed"))
    weights = {**INTENSITY_WEIGHTS, **(intensity_weights or {})}
    agg = {**AGGREGATION_WEIGHTS, **(aggregation_weights or {})}
    frame = _keyed(trials)
    pairs = _pairs(frame)
    out = pd.DataFrame(index=pairs)
    unknown = frame["score"].isna().groupby([frame["model"], frame["bias"]]).agg(["sum", "size"])
    out["n"] = unknown["size"].reindex(pairs).astype(int)
    out["unknown_rate"] = (unknown["sum"] / unknown["size"]).reindex(pairs)
    out["high_unknown"] = _above(out["unknown_rate"], HIGH_UNKNOWN)

    known = frame[frame["score"].notna()]
    control = known[known["condition"] == "control"].groupby(KEY)["score"].mean()
    out["control_mean"] = control.reindex(pairs).fillna(0.0)
    treat = known[known["condition"] == "treatment"]
    treat_stats = (treat.assign(intensity=treat["intensity"].astype(str))
                   .groupby([*KEY, "intensity"])["score"].agg(["mean", "std", "count"]))
    mags = []
    for name in INTENSITIES:
        level = (treat_stats.xs(name, level="intensity").reindex(pairs)
                 if name in treat_stats.index.get_level_values("intensity")
                 else pd.DataFrame(index=pairs, columns=["mean", "std", "count"], dtype=float))
        out[f"mean_{name}"] = level["mean"]
        out[f"n_{name}"] = level["count"].fillna(0).astype(int)
        low, high = _t_interval(level["mean"], level["std"], level["count"].fillna(0))
        out[f"mean_{name}_low"], out[f"mean_{name}_high"] = low, high
        mag = weights[name] * (level["mean"] - out["control_mean"]).abs()
        out[f"mag_{name}"] = mag if cap is None else mag.clip(upper=cap)
        mags.append(out[f"mag_{name}"].to_numpy(dtype=float))

    magnitude = np.column_stack(mags)
    present = ~np.isnan(magnitude)
    a = np.array([agg[name] for name in INTENSITIES])
    weight_sum = (present * a).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out["bms"] = np.where(weight_sum > 0,
                              np.nansum(magnitude * a, axis=1) / weight_sum, np.nan)
    out["n_intensities"] = present.sum(axis=1)
    out["sensitivity"] = _slopes(magnitude, present, spacing)
    return out.reset_index()


def _slopes(y: np.ndarray, present: np.ndarray, spacing: str) -> np.ndarray:
    """Least-squares slope per row over its present columns (NaN with fewer than two)."""
    if spacing == "ordinal":
        x = np.broadcast_to(np.arange(y.shape[1], dtype=float), y.shape)
    else:  # the seed's 0..k-1 over the intensities present
        x = np.cumsum(present, axis=1) - 1.0
    count = present.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        x_mean = np.where(present, x, 0).sum(axis=1) / count
        y_mean = np.where(present, y, 0).sum(axis=1) / count
        dx = np.where(present, x - x_mean[:, None], 0)
        dy = np.where(present, y - y_mean[:, None], 0)
        slope = (dx * dy).sum(axis=1) / (dx * dx).sum(axis=1)
    return np.where(count >= 2, slope, np.nan)


# ----------------------------------------------------------------------------- BCI


def bci(trials: pd.DataFrame, *, std: Literal["population", "sample"] = "population",
        rows: Literal["treatment", "all"] = "treatment") -> pd.DataFrame:
    r"""Bias Consistency Index across domains, per model × bias.

    Notes
    -----
    Domain means :math:`m_d` of the known scores (treatment rows, or every row with
    ``rows="all"`` as KahneBench's core runs did); ``mean_score`` is their mean,
    ``std`` their standard deviation (population by default; ``std="sample"`` is the seed's
    ``statistics.stdev``), :math:`\mathrm{consistency} = 1 - \min(\mathrm{std}/0.5, 1)` and
    ``systematic`` is true when the share of domains with :math:`m_d > 0.5` exceeds 0.7.
    One domain gives std 0 and consistency 1; no domain gives NaN.
    """
    _check_choice("std", std, ("population", "sample"))
    _check_choice("rows", rows, ("treatment", "all"))
    frame = _keyed(trials)
    pairs = _pairs(frame)
    used = frame if rows == "all" else frame[frame["condition"] == "treatment"]
    used = used[used["score"].notna()]
    domain = used.groupby([*KEY, used["domain"].astype(str)])["score"].mean()
    grouped = domain.groupby(level=KEY)
    out = pd.DataFrame(index=pairs)
    out["mean_score"] = grouped.mean()
    out["std"] = grouped.std(ddof=0 if std == "population" else 1).fillna(0.0)
    out["n_domains"] = grouped.size().reindex(pairs).fillna(0).astype(int)
    out.loc[out["n_domains"] == 0, "std"] = np.nan
    out["consistency"] = 1 - (out["std"] / 0.5).clip(upper=1.0)
    share = _above(domain, 0.5).groupby(level=KEY).mean().reindex(pairs)
    out["systematic"] = _above(share, 0.7).where(out["n_domains"] > 0)
    out["n"] = used.groupby(KEY).size().reindex(pairs).fillna(0).astype(int)
    return out.reset_index()


# ----------------------------------------------------------------------------- BMP


def infer_method_kind(method: pd.Series) -> pd.Series:
    """The seed's substring rule: "chain"/"step" → chain_of_thought, "warn"/"bias" → warning,
    both or neither → other."""
    low = method.astype(str).str.lower()
    cot = low.str.contains("chain") | low.str.contains("step")
    warn = low.str.contains("warn") | low.str.contains("bias")
    return pd.Series(np.select([cot & ~warn, warn & ~cot], ["chain_of_thought", "warning"],
                               "other"), index=method.index)


def bmp(trials: pd.DataFrame) -> pd.DataFrame:
    r"""Bias Mitigation Potential per model × bias.

    Notes
    -----
    Baseline = mean treatment score; each debiasing method's mean score; the best method has
    the lowest mean (ties: the first name in sort order);
    :math:`\mathrm{effectiveness} = \max(0, (b - s_{best}) / b)`, 0 when the baseline is 0.
    ``requires_warning`` = (mean of the warning methods' means) < (mean of the
    chain-of-thought methods' means), NaN when either kind is absent. Method kinds come from
    ``method_kind`` where given, else from :func:`infer_method_kind`, and ``kind_inferred``
    says so. No debiasing rows → NaN.
    """
    frame = _keyed(trials)
    pairs = _pairs(frame)
    known = frame[frame["score"].notna()]
    out = pd.DataFrame(index=pairs)
    out["baseline"] = known[known["condition"] == "treatment"].groupby(KEY)["score"].mean()
    debias = known[known["condition"] == "debiasing"].copy()
    debias["method"] = debias["method"].astype(str)
    inferred = infer_method_kind(debias["method"])
    given = (debias["method_kind"].astype(object) if "method_kind" in debias
             else pd.Series(None, index=debias.index, dtype=object))
    debias["kind"] = given.where(given.notna(), inferred)
    debias["inferred"] = given.isna()
    methods = (debias.groupby([*KEY, "method"])
               .agg(score=("score", "mean"), kind=("kind", "first"),
                    inferred=("inferred", "any")).reset_index()
               .sort_values([*KEY, "score", "method"]))
    best = methods.groupby(KEY).first()
    out["best_method"] = best["method"]
    out["best_score"] = best["score"]
    out["n_methods"] = methods.groupby(KEY).size().reindex(pairs).fillna(0).astype(int)
    baseline = out["baseline"]
    gain = ((baseline - out["best_score"]) / baseline).clip(lower=0)
    out["effectiveness"] = gain.where(baseline > 0, 0.0).where(out["best_score"].notna())
    kind_mean = methods.groupby([*KEY, "kind"])["score"].mean().unstack("kind")
    warning = kind_mean.get("warning", pd.Series(np.nan, index=kind_mean.index))
    cot = kind_mean.get("chain_of_thought", pd.Series(np.nan, index=kind_mean.index))
    requires = _below(warning, cot).astype("boolean").where(warning.notna() & cot.notna())
    out["requires_warning"] = requires.reindex(pairs)
    out["kind_inferred"] = methods.groupby(KEY)["inferred"].any().reindex(pairs)
    return out.reset_index()


# ----------------------------------------------------------------------------- HAS


def has(trials: pd.DataFrame, *, baselines: Mapping[str, float] | None = None,
        threshold: float = 0.1, relative: bool = False,
        per_intensity: bool = False) -> pd.DataFrame:
    r"""Human Alignment Score per model × bias (× intensity with ``per_intensity``).

    Notes
    -----
    Model rate m = mean treatment score, human rate h from the shipped baselines (or
    ``baselines``):

    .. math:: \mathrm{alignment} = 1 - \frac{|m - h|}{\max(h, 1 - h)}

    ``direction`` is ``aligned`` when :math:`|m - h| <` threshold (× h when ``relative``), else
    ``over`` (the model more biased) or ``under``. A bias without a baseline gives NaN with
    ``baseline_missing`` true. ``model_rate`` has a t interval.
    """
    shipped = human_baselines().set_index("bias")
    rates = dict(shipped["human_rate"]) if baselines is None else dict(baselines)
    frame = _keyed(trials)
    known = frame[(frame["condition"] == "treatment") & frame["score"].notna()].copy()
    key = [*KEY, "intensity"] if per_intensity else KEY
    if per_intensity:
        known["intensity"] = known["intensity"].astype(str)
    grouped = known.groupby(key)["score"].agg(["mean", "std", "count"])
    out = pd.DataFrame(index=grouped.index)
    out["model_rate"] = grouped["mean"]
    out["model_rate_low"], out["model_rate_high"] = _t_interval(
        grouped["mean"], grouped["std"], grouped["count"])
    out["n"] = grouped["count"].astype(int)
    out = out.reset_index()
    human = out["bias"].map(rates).astype(float)
    out["human_rate"] = human
    diff = out["model_rate"] - human
    out["alignment"] = 1 - diff.abs() / np.maximum(human, 1 - human)
    limit = threshold * human if relative else threshold
    out["direction"] = np.select([human.isna(), _below(diff.abs(), limit), diff > 0],
                                 [None, "aligned", "over"], "under")
    out["baseline_missing"] = human.isna()
    out["weakly_supported"] = out["bias"].isin(shipped.index[shipped["weakly_supported"]])
    return out


# ----------------------------------------------------------------------------- RCI


def rci(trials: pd.DataFrame, *,
        variance: Literal["population", "sample"] = "population") -> pd.DataFrame:
    r"""Response Consistency Index per model × bias.

    Notes
    -----
    Per condition cell (control, each intensity, each debiasing method) over its known scores:
    variance v (population by default; ``variance="sample"`` is the seed's ``stdev**2``, 0 for
    one trial), :math:`v_{max} = \mu(1-\mu)` when :math:`0<\mu<1` else 0.25,
    :math:`\mathrm{consistency} = 1 - \min(v / v_{max}, 1)`, ``stable`` = v < 0.25/n. Per bias:
    the mean consistency, whether every cell is stable, and the total trials ``n``. No known
    score → NaN with ``has_data`` false (the seed reported 1.0).
    """
    _check_choice("variance", variance, ("population", "sample"))
    frame = _keyed(trials)
    pairs = _pairs(frame)
    known = frame[frame["score"].notna()].copy()
    cell = np.select(
        [known["condition"] == "treatment", known["condition"] == "debiasing"],
        ["treatment:" + known["intensity"].astype(str),
         "debiasing:" + known["method"].astype(str)], "control")
    known["cell"] = cell
    grouped = known.groupby([*KEY, "cell"])["score"]
    cells = grouped.agg(["mean", "count"])
    cells["var"] = grouped.var(ddof=0 if variance == "population" else 1).fillna(0.0)
    mu = cells["mean"]
    vmax = (mu * (1 - mu)).where((mu > 0) & (mu < 1), 0.25)
    cells["consistency"] = 1 - (cells["var"] / vmax).clip(upper=1.0)
    cells["stable"] = _below(cells["var"], 0.25 / cells["count"])
    per_bias = cells.groupby(level=KEY)
    out = pd.DataFrame(index=pairs)
    out["consistency"] = per_bias["consistency"].mean()
    out["stable"] = per_bias["stable"].all().astype("boolean").reindex(pairs)
    out["n_cells"] = per_bias.size().reindex(pairs).fillna(0).astype(int)
    out["n"] = per_bias["count"].sum().reindex(pairs).fillna(0).astype(int)
    out["has_data"] = out["n"] > 0
    return out.reset_index()


# ----------------------------------------------------------------------------- CAS


def cas(trials: pd.DataFrame) -> pd.DataFrame:
    r"""Calibration Awareness Score per model × bias.

    Notes
    -----
    Over rows (any condition) with both a confidence c and a known score s, accuracy a = 1 − s:
    :math:`e = |\bar c - \bar a|`, ``calibration_score`` = 1 − min(e, 1), ``overconfident`` =
    :math:`\bar c > \bar a + 0.1`, ``metacognitive_gap`` = max(0, :math:`\bar c - \bar a`).
    ``missing_confidence_rate`` is the share of the pair's rows without a confidence (the
    seed's CAS ``unknown_rate``). No usable row → NaN with ``has_confidence_data`` false.
    """
    frame = _keyed(trials)
    pairs = _pairs(frame)
    conf = (frame["confidence"] if "confidence" in frame
            else pd.Series(np.nan, index=frame.index))
    missing = conf.isna().groupby([frame["model"], frame["bias"]]).mean()
    usable = frame[conf.notna() & frame["score"].notna()].assign(confidence=conf)
    grouped = usable.assign(accuracy=1 - usable["score"]).groupby(KEY)
    out = pd.DataFrame(index=pairs)
    out["mean_confidence"] = grouped["confidence"].mean()
    out["mean_accuracy"] = grouped["accuracy"].mean()
    gap = out["mean_confidence"] - out["mean_accuracy"]
    out["calibration_error"] = gap.abs()
    out["calibration_score"] = 1 - out["calibration_error"].clip(upper=1.0)
    out["overconfident"] = _above(out["mean_confidence"], out["mean_accuracy"] + 0.1).astype(
        "boolean").where(gap.notna())
    out["metacognitive_gap"] = gap.clip(lower=0)
    out["missing_confidence_rate"] = missing.reindex(pairs)
    out["n"] = grouped.size().reindex(pairs).fillna(0).astype(int)
    out["has_confidence_data"] = out["n"] > 0
    return out.reset_index()


# ----------------------------------------------------------------------------- fingerprint


@dataclass(frozen=True)
class Fingerprint:
    """All six metrics per model × bias (``biases``) and the per-model summary (``models``)."""

    biases: pd.DataFrame
    models: pd.DataFrame


def fingerprint(trials: pd.DataFrame, *, cap: float | None = 1.0,
                spacing: Literal["ordinal", "observed"] = "ordinal",
                std: Literal["population", "sample"] = "population",
                bci_rows: Literal["treatment", "all"] = "treatment",
                variance: Literal["population", "sample"] = "population",
                baselines: Mapping[str, float] | None = None, threshold: float = 0.1,
                relative: bool = False, top: int = 5) -> Fingerprint:
    """The cognitive fingerprint: BMS, BCI, BMP, HAS, RCI and CAS side by side.

    Per model: ``susceptibility`` = mean BMS over its biases (high-unknown ones included, as
    the seed does for an honest overall number); ``most_susceptible`` / ``most_resistant`` =
    the ``top`` biases by BMS, high-unknown biases excluded, ties by bias id; ``human_like`` =
    biases with alignment > 0.8; ``ai_specific`` = biases with direction ``over``.
    """
    parts = {
        "bms": bms(trials, cap=cap, spacing=spacing)[
            [*KEY, "bms", "sensitivity", "control_mean", "unknown_rate", "high_unknown"]],
        "bci": bci(trials, std=std, rows=bci_rows)[
            [*KEY, "mean_score", "consistency", "systematic"]].rename(
                columns={"mean_score": "bci_mean_score", "consistency": "bci_consistency"}),
        "bmp": bmp(trials)[[*KEY, "best_method", "effectiveness", "requires_warning"]],
        "has": has(trials, baselines=baselines, threshold=threshold, relative=relative)[
            [*KEY, "model_rate", "human_rate", "alignment", "direction", "baseline_missing",
             "weakly_supported"]],
        "rci": rci(trials, variance=variance)[[*KEY, "consistency", "stable"]].rename(
            columns={"consistency": "rci_consistency", "stable": "rci_stable"}),
        "cas": cas(trials)[[*KEY, "calibration_score", "overconfident",
                            "missing_confidence_rate"]],
    }
    table = parts["bms"]
    for name in ("bci", "bmp", "has", "rci", "cas"):
        table = table.merge(parts[name], on=KEY, how="left")

    reliable = table[~table["high_unknown"]]
    ordered = reliable.sort_values(["model", "bms", "bias"], ascending=[True, False, True])
    rising = reliable.sort_values(["model", "bms", "bias"], ascending=[True, True, True])
    models = table.groupby("model").agg(susceptibility=("bms", "mean"),
                                        n_biases=("bias", "size"))
    models["most_susceptible"] = ordered.dropna(subset=["bms"]).groupby("model")["bias"].agg(
        lambda s: tuple(s.head(top)))
    models["most_resistant"] = rising.dropna(subset=["bms"]).groupby("model")["bias"].agg(
        lambda s: tuple(s.head(top)))
    human_like = table[_above(table["alignment"], 0.8)]
    models["human_like"] = human_like.groupby("model")["bias"].agg(tuple)
    models["ai_specific"] = table[table["direction"] == "over"].groupby("model")["bias"].agg(
        tuple)
    for col in ("most_susceptible", "most_resistant", "human_like", "ai_specific"):
        models[col] = models[col].map(lambda v: v if isinstance(v, tuple) else ())
    return Fingerprint(biases=table, models=models.reset_index())
