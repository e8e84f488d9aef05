"""Synthetic cognitive-bias trials and KahneBench reports with planted rates (closed-form
BMS, BCI, BMP, HAS, RCI, CAS)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from importlib.resources import files

import numpy as np
import pandas as pd

from kbench_core.samples._common import (
    _count,
    _labels,
    _names,
    _numbered,
    _rng,
    _round_half_up,
    _within,
)
from kbench_core.schema import INTENSITIES

# ===================================================================================== bias

DOMAINS: tuple[str, ...] = ("individual", "professional", "social", "temporal", "risk")

# KahneBench's taxonomy: the category of each of the 69 biases in human_baselines.json.
_TAXONOMY: dict[str, tuple[str, ...]] = {
    "representativeness": (
        "base_rate_neglect", "conjunction_fallacy", "insensitivity_to_sample_size",
        "gambler_fallacy", "hot_hand_fallacy", "regression_neglect", "stereotype_bias",
        "prototype_heuristic"),
    "availability": (
        "availability_bias", "recency_bias", "salience_bias", "simulation_heuristic",
        "illusory_correlation", "primacy_bias"),
    "anchoring": (
        "anchoring_effect", "insufficient_adjustment", "focalism", "first_offer_anchoring",
        "numeric_priming"),
    "loss_aversion": (
        "loss_aversion", "endowment_effect", "status_quo_bias", "sunk_cost_fallacy",
        "disposition_effect"),
    "framing": (
        "gain_loss_framing", "attribute_framing", "default_effect", "risk_framing",
        "temporal_framing", "mental_accounting"),
    "reference_dependence": ("reference_point_framing",),
    "probability_distortion": (
        "probability_weighting", "certainty_effect", "possibility_effect",
        "neglect_of_probability", "denominator_neglect", "zero_risk_bias", "affect_heuristic"),
    "overconfidence": (
        "overconfidence_effect", "planning_fallacy", "illusion_of_control", "hindsight_bias",
        "optimism_bias"),
    "confirmation": ("confirmation_bias", "belief_perseverance", "myside_bias"),
    "temporal_bias": ("present_bias", "duration_neglect", "peak_end_rule"),
    "extension_neglect": ("scope_insensitivity", "identifiable_victim_effect"),
    "social_bias": (
        "group_attribution_bias", "halo_effect", "ingroup_bias", "false_consensus_effect",
        "outgroup_homogeneity_bias"),
    "memory_bias": (
        "rosy_retrospection", "source_confusion", "misinformation_effect",
        "memory_reconstruction_bias"),
    "attention_bias": ("attentional_bias", "inattentional_blindness", "selective_perception"),
    "attribution_bias": (
        "fundamental_attribution_error", "actor_observer_bias", "self_serving_bias"),
    "uncertainty_judgment": (
        "ambiguity_aversion", "illusion_of_validity", "competence_hypothesis"),
}
BIAS_CATEGORIES: dict[str, str] = {
    bias: category for category, biases in _TAXONOMY.items() for bias in biases}
"""Category of each bias id (KahneBench's taxonomy); other ids get ``"other"``."""

SAMPLE_BIASES: tuple[str, ...] = (
    "anchoring_effect", "gain_loss_framing", "base_rate_neglect", "availability_bias",
    "loss_aversion", "confirmation_bias")
"""The six biases of the bundled sample, one from each of six categories."""

BIAS_MODELS: tuple[str, ...] = ("synthetic-alpha", "synthetic-beta", "synthetic-gamma")

DEBIASING_METHODS: dict[str, tuple[str, float]] = {
    "chain_of_thought_prompt": ("chain_of_thought", 0.5),
    "bias_warning": ("warning", 0.75),
}
"""Debiasing method -> (method_kind, share of the cell's mean treatment rate it leaves)."""

# Model profiles, cycling over the models: alpha, beta, gamma.
_CONTROL_RATE = np.array([0.0, 0.1, 0.2])
_TREATMENT_RATE = np.array([[0.8, 0.8, 0.8, 0.8],   # alpha: flat 0.8 over a clean control
                            [0.3, 0.5, 0.7, 0.9],   # beta: rises with intensity
                            [0.2, 0.2, 0.2, 0.2]])  # gamma: no effect at all
_CONFIDENCE = np.array([0.9, 0.7, np.nan])          # stated confidence; gamma states none
_UNKNOWN_TRIALS = np.array([0, 0, 1])               # extra unscoreable trials per cell
_DOMAIN_OFFSET = {"individual": 0.1, "social": -0.1}  # beta's treatment rates only
_BIAS_FACTORS = np.array([1.0, 0.75, 0.5])            # gap to control, cycling over biases
_RATE_GRID = 10  # the big runs plant rates on the grid of the 10-trial sample

# The seven condition slots of a (model, bias, domain): control, four intensities, methods.
_SLOT_CONDITION = ("control", *(["treatment"] * len(INTENSITIES)),
                   *(["debiasing"] * len(DEBIASING_METHODS)))
_SLOT_INTENSITY = (None, *INTENSITIES, *([None] * len(DEBIASING_METHODS)))
_SLOT_METHOD = (None, *([None] * len(INTENSITIES)), *DEBIASING_METHODS)
_SLOT_KIND = (None, *([None] * len(INTENSITIES)),
              *(kind for kind, _ in DEBIASING_METHODS.values()))
_SLOT_TEXT = ("control", *(f"{i}-trigger" for i in INTENSITIES),
              *(f"{m} debiasing" for m in DEBIASING_METHODS))
_N_SLOTS = len(_SLOT_CONDITION)


def _baselines() -> dict[str, float]:
    text = files("kbench_core").joinpath("data/human_baselines.json").read_text("utf-8")
    return {str(k): float(v) for k, v in json.loads(text)["baselines"].items()}


def _bias_plan(models: tuple[str, ...], biases: tuple[str, ...], domains: tuple[str, ...],
               n_known: int | np.ndarray, grid: int) -> dict[str, np.ndarray]:
    """The cells (model × bias × domain × slot, in that nesting) with their planted rates.

    Rates are planted on the grid 1/``grid``; a cell of ``n_known`` scoreable trials holds
    round-half-up(rate · n_known) ones, so its mean is exactly the rate when ``n_known`` is a
    multiple of ``grid``.
    """
    m, b, d, slot = (a.ravel() for a in np.indices(
        (len(models), len(biases), len(domains), _N_SLOTS)))
    profile = m % len(_CONTROL_RATE)
    control = _CONTROL_RATE[profile]
    factor = _BIAS_FACTORS[b % len(_BIAS_FACTORS)]
    offset = np.array([_DOMAIN_OFFSET.get(name, 0.0) for name in domains])[d]
    offset = np.where(profile == 1, offset, 0.0)
    intensity = np.clip(slot - 1, 0, len(INTENSITIES) - 1)
    treatment = control + factor * (_TREATMENT_RATE[profile, intensity] - control) + offset
    treatment = _round_half_up(np.clip(treatment, 0.0, 1.0) * grid) / grid
    # Each debiasing cell leaves a share of the mean treatment rate of its (model, bias, domain).
    is_treatment = (slot >= 1) & (slot <= len(INTENSITIES))
    triple = np.arange(slot.size) // _N_SLOTS
    mean_treatment = np.bincount(triple, np.where(is_treatment, treatment, 0.0)) / len(INTENSITIES)
    share = np.array([0.0] * (1 + len(INTENSITIES))
                     + [s for _, s in DEBIASING_METHODS.values()])[slot]
    debiased = _round_half_up(share * mean_treatment[triple] * grid) / grid
    rate = np.select([slot == 0, is_treatment],
                     [_round_half_up(control * grid) / grid, treatment], debiased)
    known = np.broadcast_to(np.asarray(n_known, dtype=np.int64), rate.shape).copy()
    ones = _round_half_up(rate * known)
    return {"m": m, "b": b, "d": d, "slot": slot, "profile": profile, "known": known,
            "unknown": _UNKNOWN_TRIALS[profile], "ones": ones, "nominal": rate}


def _plan_frame(plan: dict[str, np.ndarray], models: tuple[str, ...], biases: tuple[str, ...],
                domains: tuple[str, ...]) -> pd.DataFrame:
    slot = plan["slot"]
    return pd.DataFrame({
        "model": _labels(models, plan["m"]),
        "bias": _labels(biases, plan["b"]),
        "category": _labels([BIAS_CATEGORIES.get(b, "other") for b in biases], plan["b"]),
        "domain": _labels(domains, plan["d"]),
        "condition": _labels(_SLOT_CONDITION, slot),
        "intensity": _labels(_SLOT_INTENSITY, slot),
        "method": _labels(_SLOT_METHOD, slot),
        "method_kind": _labels(_SLOT_KIND, slot),
        "n": plan["known"],
        "n_unknown": plan["unknown"],
        "rate": plan["ones"] / plan["known"],
    })


def _check_bias_options(models: Sequence[str], biases: Sequence[str],
                        domains: Sequence[str]) -> tuple[tuple[str, ...], ...]:
    return _names("models", models), _names("biases", biases), _names("domains", domains)


def planted_bias_rates(*, models: Sequence[str] = BIAS_MODELS,
                       biases: Sequence[str] = SAMPLE_BIASES,
                       domains: Sequence[str] = DOMAINS, n_trials: int = 10) -> pd.DataFrame:
    r"""The exact score mean of every cell of :func:`bias_trials` with the same options.

    Parameters
    ----------
    models, biases, domains : sequence of str
        As given to :func:`bias_trials`. Model *i* follows profile *i* mod 3 (alpha, beta,
        gamma); bias *j* has gap factor :math:`f_j` = 1, 0.75, 0.5 for *j* mod 3 = 0, 1, 2.
    n_trials : int
        Scoreable trials per cell; rates are rounded (halves up) to multiples of 1/n_trials.

    Returns
    -------
    pandas.DataFrame
        One row per model × bias × domain × condition slot (control, the four intensities,
        the two debiasing methods): ``model, bias, category, domain, condition, intensity,
        method, method_kind, n`` (scoreable trials), ``n_unknown`` (extra trials with an empty
        score) and ``rate``, the cell's exact mean score.

    Notes
    -----
    With control rate :math:`c_p` and intensity rates :math:`r_{p,i}` of profile *p*,

    .. math::

        \text{treatment}_{p,i,j,d} = c_p + f_j\,(r_{p,i} - c_p) + o_{p,d}, \qquad
        \text{debiasing}_{k} = s_k \cdot \overline{\text{treatment}}_{p,j,d}

    clipped to [0, 1] and rounded to the trial grid, where

    ======== ======= ===================== ========== ============ ==========
    profile  control weak/mod/strong/adv    confidence unknown/cell domain
    ======== ======= ===================== ========== ============ ==========
    alpha    0       0.8 / 0.8 / 0.8 / 0.8  0.9        0            none
    beta     0.1     0.3 / 0.5 / 0.7 / 0.9  0.7        0            ±0.1
    gamma    0.2     0.2 / 0.2 / 0.2 / 0.2  (none)     1            none
    ======== ======= ===================== ========== ============ ==========

    beta's offset :math:`o_{p,d}` is +0.1 in the ``individual`` and −0.1 in the ``social``
    domain (so its domain means differ and BCI consistency is below 1), and the debiasing
    shares are :math:`s` = 0.5 (``chain_of_thought_prompt``) and 0.75 (``bias_warning``).

    Examples
    --------
    >>> rates = planted_bias_rates()
    >>> alpha = rates[(rates.model == "synthetic-alpha") & (rates.bias == "anchoring_effect")]
    >>> sorted(set(alpha.loc[alpha.condition == "treatment", "rate"]))
    [0.8]
    """
    models, biases, domains = _check_bias_options(models, biases, domains)
    n_trials = _count("n_trials", n_trials, 1)
    plan = _bias_plan(models, biases, domains, n_trials, n_trials)
    return _plan_frame(plan, models, biases, domains)


def planted_bias_metrics(*, models: Sequence[str] = BIAS_MODELS,
                         biases: Sequence[str] = SAMPLE_BIASES,
                         domains: Sequence[str] = DOMAINS, n_trials: int = 10) -> pd.DataFrame:
    r"""Closed-form values of the six KahneBench metrics (``docs/metrics/bias.md``, defaults)
    per model × bias.

    Computed from :func:`planted_bias_rates` by the formulas below (every cell has the same
    number of scoreable trials, so a mean over rows is the mean of the cell rates).

    Returns
    -------
    pandas.DataFrame
        ``model, bias, control_mean, mean_<intensity>, mag_<intensity>, bms, unknown_rate,
        bci_mean_score, bci_std, bci_consistency, bci_systematic, bmp_baseline, best_method,
        effectiveness, requires_warning, human_rate, has_alignment, has_direction,
        rci_consistency, calibration_score, overconfident, metacognitive_gap``.

    Notes
    -----
    BMS, with intensity weights :math:`w` = 2, 1, 0.67, 0.5 and aggregation weights
    :math:`a` = 0.1, 0.3, 0.4, 0.2 (weak, moderate, strong, adversarial):

    .. math::

        \mathrm{mag}_i = \min(w_i\,|\bar t_i - \bar c|, 1), \qquad
        \mathrm{BMS} = \frac{\sum_i a_i\,\mathrm{mag}_i}{\sum_i a_i}

    so ``synthetic-alpha`` on ``anchoring_effect`` (control 0, treatment 0.8 throughout) has

    BMS = (0.1·min(2·0.8, 1) + 0.3·1·0.8 + 0.4·min(0.67·0.8, 1) + 0.2·0.5·0.8) / 1.0
    = 0.1 + 0.24 + 0.2144 + 0.08 = 0.6344,

    and with gap factors 0.75 and 0.5 (treatment 0.6, 0.4) 0.5008 and 0.3472. ``synthetic-beta``
    on ``anchoring_effect``: means 0.3, 0.5, 0.7, 0.9 over control 0.1, magnitudes 0.4, 0.4,
    0.402, 0.4, BMS = 0.4008. ``synthetic-gamma``: treatment = control, every magnitude and BMS
    0, ``unknown_rate`` = 1/(n_trials + 1) (one empty score per cell of n_trials + 1 rows).

    BCI over treatment rows: domain means :math:`m_d`, consistency = 1 − min(σ/0.5, 1) with σ
    the population std of the :math:`m_d`, systematic = share of :math:`m_d > 0.5` is > 0.7.
    alpha: all :math:`m_d` = 0.8, consistency 1. beta on ``anchoring_effect``: :math:`m_d` =
    0.7, 0.6, 0.5, 0.6, 0.6, σ = √0.004, consistency 1 − 2√0.004 ≈ 0.8735.

    BMP: baseline = treatment mean; best method = lowest debiasing mean (chain of thought,
    0.5 of the treatment rate), effectiveness = (baseline − best)/baseline (alpha: (0.8 −
    0.4)/0.8 = 0.5); requires_warning = warning mean < chain-of-thought mean (False: the
    warning leaves 0.75).

    HAS: :math:`1 - |m - h| / \max(h, 1 - h)` with *m* the treatment mean and *h* the human rate
    of ``human_baselines.json`` (alpha on anchoring: 1 − 0.15/0.65); direction ``aligned`` when
    |m − h| < 0.1, else ``over``/``under``.

    RCI per condition (control, each intensity, each method, over all domains) on 0/1 scores:
    the population variance p(1 − p) equals its maximum when 0 < p < 1 (consistency 0) and is
    0 when p ∈ {0, 1} (consistency 1); ``rci_consistency`` is the mean over the conditions.

    CAS over every row with a confidence and a known score: accuracy = 1 − mean score, error =
    |confidence − accuracy|, score = 1 − min(error, 1) (alpha on anchoring: accuracy 1 − 4.2/7
    = 0.4, error 0.5); NaN for gamma, which states no confidence.
    """
    models, biases, domains = _check_bias_options(models, biases, domains)
    n_trials = _count("n_trials", n_trials, 1)
    cells = planted_bias_rates(models=models, biases=biases, domains=domains,
                               n_trials=n_trials)
    # Every cell has n_trials scoreable trials, so a mean over rows is a mean of cell rates.
    rates = cells["rate"].to_numpy().reshape(len(models), len(biases), len(domains), _N_SLOTS)
    m, b = (a.ravel() for a in np.indices((len(models), len(biases))))
    by_slot = rates.mean(axis=2).reshape(m.size, _N_SLOTS)      # over domains
    out = pd.DataFrame({"model": _labels(models, m), "bias": _labels(biases, b)})
    control = by_slot[:, 0]
    out["control_mean"] = control
    weights = {"weak": 2.0, "moderate": 1.0, "strong": 0.67, "adversarial": 0.5}
    aggregation = {"weak": 0.1, "moderate": 0.3, "strong": 0.4, "adversarial": 0.2}
    bms = np.zeros(m.size)
    for i, name in enumerate(INTENSITIES):
        mean = by_slot[:, 1 + i]
        out[f"mean_{name}"] = mean
        out[f"mag_{name}"] = np.minimum(weights[name] * np.abs(mean - control), 1.0)
        bms += aggregation[name] * out[f"mag_{name}"].to_numpy()
    out["bms"] = bms / sum(aggregation.values())
    profile = m % len(_CONTROL_RATE)
    out["unknown_rate"] = _UNKNOWN_TRIALS[profile] / (n_trials + _UNKNOWN_TRIALS[profile])

    treatment = slice(1, 1 + len(INTENSITIES))
    domain_means = rates[..., treatment].mean(axis=3).reshape(m.size, len(domains))
    out["bci_mean_score"] = domain_means.mean(axis=1)
    out["bci_std"] = domain_means.std(axis=1)                   # population
    out["bci_consistency"] = 1 - np.minimum(out["bci_std"] / 0.5, 1.0)
    out["bci_systematic"] = (domain_means > 0.5).mean(axis=1) > 0.7

    base = by_slot[:, treatment].mean(axis=1)
    out["bmp_baseline"] = base
    methods = sorted(DEBIASING_METHODS)
    method_mean = np.column_stack([by_slot[:, _SLOT_METHOD.index(name)] for name in methods])
    best = method_mean.argmin(axis=1)  # first name in sort order wins ties
    out["best_method"] = np.asarray(methods, dtype=object)[best]
    best_mean = method_mean[np.arange(m.size), best]
    with np.errstate(divide="ignore", invalid="ignore"):
        out["effectiveness"] = np.where(base > 0, np.maximum(0.0, (base - best_mean) / base),
                                        0.0)
    kinds = np.array([DEBIASING_METHODS[name][0] for name in methods])
    warning = method_mean[:, kinds == "warning"].mean(axis=1)
    chain = method_mean[:, kinds == "chain_of_thought"].mean(axis=1)
    out["requires_warning"] = warning < chain

    baselines = _baselines()
    human = np.array([baselines.get(name, np.nan) for name in biases])[b]
    out["human_rate"] = human
    gap = base - human
    out["has_alignment"] = 1 - np.abs(gap) / np.maximum(human, 1 - human)
    out["has_direction"] = np.where(np.isnan(human), None, np.where(
        np.abs(gap) < 0.1 - 1e-9, "aligned", np.where(gap > 0, "over", "under")))  # strict, as SPEC

    out["rci_consistency"] = np.isin(by_slot, (0.0, 1.0)).mean(axis=1)

    confidence = _CONFIDENCE[profile]
    accuracy = 1 - by_slot.mean(axis=1)
    error = np.abs(confidence - accuracy)
    out["calibration_score"] = 1 - np.minimum(error, 1.0)
    out["overconfident"] = np.where(np.isnan(confidence), None, confidence > accuracy + 0.1)
    out["metacognitive_gap"] = np.maximum(0.0, confidence - accuracy)
    return out


def bias_reports(*, models: Sequence[str] = BIAS_MODELS, biases: Sequence[str] = SAMPLE_BIASES,
                 domains: Sequence[str] = DOMAINS, n_trials: int = 10) -> pd.DataFrame:
    """The ``bias_summary`` run a KahneBench fingerprint report would give for
    :func:`bias_trials` with the same options: the closed-form values of
    :func:`planted_bias_metrics` under the report's column names, plus each domain's mean
    treatment score (``domain_<name>``) and each method's mean debiased score
    (``debias_<method>``), from :func:`planted_bias_rates`. Loading it and computing the
    fingerprint of the trials must agree (tested)."""
    metrics = planted_bias_metrics(models=models, biases=biases, domains=domains,
                                   n_trials=n_trials)
    out = metrics[["model", "bias", "bms", "control_mean",
                   *(f"mean_{name}" for name in INTENSITIES), "unknown_rate",
                   "bci_mean_score", "bci_std", "bci_consistency", "bmp_baseline",
                   "best_method", "effectiveness", "requires_warning", "human_rate",
                   "rci_consistency", "calibration_score", "overconfident",
                   "metacognitive_gap"]].copy()
    out.insert(2, "category", out["bias"].map(BIAS_CATEGORIES))
    out["systematic"] = metrics["bci_systematic"]
    out["model_rate"] = metrics["bmp_baseline"]  # both are the treatment mean
    out["alignment"] = metrics["has_alignment"]
    out["direction_std"] = metrics["has_direction"]
    cells = planted_bias_rates(models=models, biases=biases, domains=domains,
                               n_trials=n_trials)
    treated = cells[cells["condition"] == "treatment"]
    domain = treated.groupby(["model", "bias", "domain"], sort=False)["rate"].mean().unstack()
    debiased = cells[cells["condition"] == "debiasing"]
    method = debiased.groupby(["model", "bias", "method"], sort=False)["rate"].mean().unstack()
    key = pd.MultiIndex.from_frame(out[["model", "bias"]])
    for name in domains:
        out[f"domain_{name}"] = domain[name].reindex(key).to_numpy()
    for name in sorted(DEBIASING_METHODS):
        out[f"debias_{name}"] = method[name].reindex(key).to_numpy()
    out["overconfident"] = out["overconfident"].astype("boolean")
    return out.round(12)


def _bias_frame(plan: dict[str, np.ndarray], models: tuple[str, ...], biases: tuple[str, ...],
                domains: tuple[str, ...], rng: np.random.Generator) -> pd.DataFrame:
    """One row per trial of the planned cells, scores placed in a seeded random order."""
    rows_per_cell = plan["known"] + plan["unknown"]
    cell, trial = _within(rows_per_cell)
    n_rows = cell.size
    unknown = trial >= plan["known"][cell]
    # Shuffle within each cell: sort on (cell, uniform draw); the unknown trial sorts last
    # (draw 1.5 > any uniform), so exactly ``ones`` of the scoreable trials score 1.
    draw = np.where(unknown, 1.5, rng.random(n_rows))
    order = np.argsort(cell * 2.0 + draw, kind="stable")
    rank = np.empty(n_rows, dtype=np.int64)
    rank[order] = trial  # ``order`` keeps the cells contiguous, so ``trial`` is the rank
    score = np.where(unknown, np.nan, (rank < plan["ones"][cell]).astype(float))
    outcome = np.where(unknown, 2, np.where(score == 1.0, 0, 1))
    slot = plan["slot"][cell]
    # Prompts are the same for every model: one per bias × domain × slot.
    b_idx, d_idx, s_idx = (a.ravel() for a in np.indices((len(biases), len(domains), _N_SLOTS)))
    prompts = (pd.Series(np.asarray(_SLOT_TEXT, dtype=object)[s_idx])
               + " prompt on " + pd.Series(np.asarray(biases, dtype=object)[b_idx])
               + " (" + pd.Series(np.asarray(domains, dtype=object)[d_idx]) + ")")
    prompt_code = (plan["b"][cell] * len(domains) + plan["d"][cell]) * _N_SLOTS + slot
    width = max(7, len(str(n_rows)))
    profile = plan["profile"][cell]
    return pd.DataFrame({
        "id": pd.Series(_numbered("b", n_rows, width=width, start=1)),
        "model": _labels(models, plan["m"][cell]),
        "bias": _labels(biases, plan["b"][cell]),
        "category": _labels([BIAS_CATEGORIES.get(b, "other") for b in biases], plan["b"][cell]),
        "domain": _labels(domains, plan["d"][cell]),
        "condition": _labels(_SLOT_CONDITION, slot),
        "intensity": _labels(_SLOT_INTENSITY, slot),
        "method": _labels(_SLOT_METHOD, slot),
        "method_kind": _labels(_SLOT_KIND, slot),
        "trial": trial,
        "score": score,
        "confidence": _CONFIDENCE[profile],
        "response_ms": rng.integers(300, 3000, n_rows),
        "prompt": _labels(prompts.to_numpy(dtype=object), prompt_code),
        "response": _labels(("Picks A (biased)", "Picks B (unbiased)", "No clear answer"),
                            outcome),
        "answer": _labels(("A", "B", None), outcome),
    })


def bias_trials(*, models: Sequence[str] = BIAS_MODELS, biases: Sequence[str] = SAMPLE_BIASES,
                domains: Sequence[str] = DOMAINS, n_trials: int = 10,
                seed: int = 0) -> pd.DataFrame:
    """Cognitive-bias trials (kind ``bias``, ``docs/formats.md``), one row per model response.

    Every model × bias × domain has a control cell, one treatment cell per intensity and one
    debiasing cell per method in :data:`DEBIASING_METHODS`, each of ``n_trials`` trials with
    0/1 scores: exactly round-half-up(rate · n_trials) of them are 1, in a seeded random order,
    so every cell mean is exactly the rate of :func:`planted_bias_rates` (the profiles, and
    the metric values they imply, are in :func:`planted_bias_metrics`). Gamma-profile models
    have one more trial per cell (``trial`` = n_trials) whose score is empty (unknown).

    Parameters
    ----------
    models, biases, domains : sequence of str
        Model *i* follows profile *i* mod 3 (alpha, beta, gamma). Biases outside KahneBench's
        taxonomy get category ``"other"``.
    n_trials : int
        Scoreable trials per cell.
    seed : int
        Seeds the order of the scores within each cell and ``response_ms``; the cell means do
        not depend on it.

    Returns
    -------
    pandas.DataFrame
        ``id`` (unique), ``model, bias, category, domain, condition, intensity, method,
        method_kind`` (categoricals), ``trial, score, confidence, response_ms, prompt, response,
        answer``; rows ordered by model, bias, domain, condition slot and trial.

    Examples
    --------
    >>> trials = bias_trials(n_trials=4)
    >>> len(trials) == 3 * 6 * 5 * 7 * 4 + 6 * 5 * 7  # gamma's one unknown trial per cell
    True
    """
    models, biases, domains = _check_bias_options(models, biases, domains)
    n_trials = _count("n_trials", n_trials, 1)
    rng = _rng(seed)
    plan = _bias_plan(models, biases, domains, n_trials, n_trials)
    return _bias_frame(plan, models, biases, domains, rng)


def _big_bias_plan(n_rows: int) -> tuple[dict[str, np.ndarray], tuple[str, ...],
                                         tuple[str, ...]]:
    n_rows = _count("n_rows", n_rows, 1)
    models = tuple(f"synthetic-model-{i:02d}" for i in range(10))
    every_bias = tuple(_baselines())
    unknown_per_cell = _UNKNOWN_TRIALS[np.arange(len(models)) % len(_CONTROL_RATE)]
    rows_per_bias = len(DOMAINS) * _N_SLOTS * (len(models) + int(unknown_per_cell.sum()))
    if n_rows < rows_per_bias:
        raise ValueError(f"n_rows must be at least {rows_per_bias} (one trial per cell of one "
                         f"bias); use bias_trials for smaller runs")
    biases = every_bias[:min(len(every_bias), n_rows // rows_per_bias)]
    plan = _bias_plan(models, biases, DOMAINS, 1, _RATE_GRID)
    n_cells = plan["slot"].size
    known_rows = n_rows - int(plan["unknown"].sum())
    base, extra = divmod(known_rows, n_cells)
    known = np.full(n_cells, base, dtype=np.int64)
    known[:extra] += 1
    plan["known"] = known
    plan["ones"] = _round_half_up(plan["nominal"] * known)
    return plan, models, biases


def big_bias_trials(n_rows: int, *, seed: int = 0) -> pd.DataFrame:
    """Exactly ``n_rows`` bias trials for benchmarks (``benchmarks/README.md``: 1M rows).

    Ten models ``synthetic-model-00``... (profiles alpha, beta, gamma cycling) and as many of
    the 69 biases of ``human_baselines.json`` as fit (all 69 from 31,395 rows), over the five
    domains. The scoreable trials are spread evenly over the cells (the first cells get one
    more), each cell holding round-half-up(rate · n) ones for the rates of the 10-trial sample;
    :func:`planted_big_bias_rates` gives each cell's exact mean. Rows are made in O(n_rows)
    vectorised steps (about a second for a million).
    """
    plan, models, biases = _big_bias_plan(n_rows)
    return _bias_frame(plan, models, biases, DOMAINS, _rng(seed))


bias_trials_of_size = big_bias_trials  # the name the benchmarks were written against


def planted_big_bias_rates(n_rows: int) -> pd.DataFrame:
    """The exact mean of every cell of :func:`big_bias_trials` ``(n_rows)``, as
    :func:`planted_bias_rates` (``rate`` = ones / n, with ``nominal_rate`` the planted rate)."""
    plan, models, biases = _big_bias_plan(n_rows)
    frame = _plan_frame(plan, models, biases, DOMAINS)
    frame["nominal_rate"] = plan["nominal"]
    return frame


