"""Synthetic runs with planted effects whose metric values are known in closed form.

One generator per run kind, each seeded (``numpy.random.default_rng(seed)``) and vectorised over
all rows at once, so the same code writes the small bundled ``sample_data/`` files and the
million-row runs of ``benchmarks/``. Every model, agent, detector and judge name is plainly
synthetic (``synthetic-...``, ``judge-...``): no real model's name ever stands beside made-up
numbers.

Each generator has a ``planted_*`` partner that returns the truth it planted as a tidy frame,
computed from the plan (counts and rates), never from the generated rows, so that a test can
check the rows against it and the metric modules can be checked against both:

==========================  ===================================  ===============================
generator                   planted truth                        what is exact
==========================  ===================================  ===============================
:func:`bias_trials`         :func:`planted_bias_rates`,          every cell mean (0/1 scores);
                            :func:`planted_bias_metrics`         BMS, BCI, BMP, HAS, RCI, CAS
:func:`replication_tests`   :func:`planted_replication_ecs`,     CCC 1 / closed form / 0;
                            :func:`planted_replication_pas`      PAS of every test
:func:`replication_summary` :func:`planted_replication_summary`  means per configuration
:func:`judged_samples`      :func:`planted_judged`,              confusion counts, TDR, lucky
                            :func:`planted_agreement`            guesses, findings, κ between
                                                                 judges
==========================  ===================================  ===============================

The ``big_*`` functions make runs of a requested size for benchmarks. :func:`write_samples`
writes the bundled CSV files byte for byte reproducibly; ``python -m kbench_core.samples DIR``
calls it.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Sequence
from importlib.resources import files
from pathlib import Path

import numpy as np
import pandas as pd

from kbench_core.schema import FINDING_COUNTS, INTENSITIES, SEVERITIES, TEST_TYPES

__all__ = [
    "BIAS_CATEGORIES",
    "BIAS_MODELS",
    "DEBIASING_METHODS",
    "DETECTORS",
    "DOMAINS",
    "JUDGES",
    "PROMPT_TYPES",
    "REPLICATION_DOMAINS",
    "REPLICATION_MODELS",
    "SAMPLE_BIASES",
    "SAMPLE_FILES",
    "SUMMARY_CONFIGS",
    "VULN_TYPES",
    "bias_reports",
    "bias_trials",
    "bias_trials_of_size",
    "big_bias_trials",
    "big_judged_samples",
    "big_replication_tests",
    "judged_samples",
    "planted_agreement",
    "planted_bias_metrics",
    "planted_bias_rates",
    "planted_big_bias_rates",
    "planted_judged",
    "planted_replication_ecs",
    "planted_replication_pas",
    "planted_replication_summary",
    "replication_summary",
    "replication_tests",
    "write_samples",
]


# ================================================================================== helpers


def _names(option: str, values: Sequence[str]) -> tuple[str, ...]:
    """A non-empty tuple of distinct names, or a ValueError naming ``option``."""
    if isinstance(values, str):
        raise TypeError(f"{option} must be a sequence of names, not the string {values!r}")
    names = tuple(str(v) for v in values)
    if not names:
        raise ValueError(f"{option} must name at least one item")
    if len(set(names)) != len(names):
        repeated = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(f"{option} repeats {', '.join(map(repr, repeated))}")
    return names


def _count(option: str, value: int, minimum: int) -> int:
    """An int >= ``minimum``, or a ValueError naming ``option``."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"{option} must be an int, got {value!r}")
    if value < minimum:
        raise ValueError(f"{option} must be at least {minimum}, got {value}")
    return int(value)


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(_count("seed", seed, 0))


def _labels(values: Sequence[object] | np.ndarray, codes: np.ndarray) -> pd.Categorical:
    """``values[codes]`` as a categorical, categories in order of first appearance in ``values``.

    A code of -1, or a missing value in ``values``, gives a missing cell. Costs O(rows) integer
    work, whatever the number of rows: the labels are built once, at the level they vary.
    """
    inverse, uniques = pd.factorize(np.asarray(values, dtype=object))
    lookup = np.append(inverse, -1)  # code -1 picks the trailing -1 (missing)
    return pd.Categorical.from_codes(lookup[codes], categories=pd.Index(uniques, dtype=object))


def _numbered(prefix: str, count: int, *, width: int, start: int = 1) -> np.ndarray:
    """``prefix`` followed by the numbers start..start+count-1 zero-padded to ``width``."""
    numbers = pd.Series(np.arange(start, start + count)).astype(str).str.zfill(width)
    return (prefix + numbers).to_numpy(dtype=object)


def _round_half_up(values: np.ndarray) -> np.ndarray:
    """Nearest integer, halves up; the 1e-9 absorbs float noise such as 2.4999999999999996."""
    return np.floor(np.asarray(values, dtype=float) + 0.5 + 1e-9).astype(np.int64)


def _within(group_sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For contiguous groups of the given sizes: the group of each element and its index in
    the group (0..size-1)."""
    group = np.repeat(np.arange(group_sizes.size), group_sizes)
    starts = np.cumsum(group_sizes) - group_sizes
    return group, np.arange(group.size) - starts[group]


def _ceil_div(a: int, b: int) -> int:
    """How many of 0..a-1 are multiples of b."""
    return -(-a // b)


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
    r"""Closed-form values of the six KahneBench metrics (SPEC 2.1, defaults) per model × bias.

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
    """Cognitive-bias trials (kind ``bias``, SPEC 1.1), one row per model response.

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
    """Exactly ``n_rows`` bias trials for benchmarks (SPEC 5: 1M rows).

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


# ============================================================================== replication

REPLICATION_MODELS: tuple[str, ...] = (
    "synthetic-agent-mirror", "synthetic-agent-shifted", "synthetic-agent-flat")
REPLICATION_DOMAINS: tuple[str, ...] = ("Cognition", "Social", "Strategic")
_AGENT_D_SHIFT = 0.3


def _d_to_effect(d: np.ndarray, test_type: np.ndarray) -> np.ndarray:
    """The native effect whose Cohen's d-equivalent (SPEC 2.2 ``effect_to_d``) is ``d``."""
    r = d / np.sqrt(d * d + 4)  # inverse of d = 2r / sqrt(1 - r^2)
    return np.select(
        [test_type == "correlation", test_type == "chi2", test_type == "mann_whitney",
         test_type == "binomial"],
        [np.arctanh(r), d * math.pi / math.sqrt(3), r, 0.5 + d * math.sqrt(0.25) / 2], d)


def _replication_design(n_studies: int, seed: int) -> pd.DataFrame:
    """The tests shared by every model: structure, types and the human side."""
    rng = _rng(seed)
    n_studies = _count("n_studies", n_studies, 1)
    f_study, f_local = _within(2 + np.arange(n_studies) % 2)   # 2 or 3 findings per study
    t_finding, t_local = _within(2 + f_local % 2)               # 2 or 3 tests per finding
    t_study = f_study[t_finding]
    n_tests = t_finding.size
    study_names = _numbered("study_", n_studies, width=max(2, len(str(n_studies))))
    finding_names = (pd.Series(study_names[f_study]) + "/F"
                     + pd.Series(f_local + 1).astype(str)).to_numpy(dtype=object)
    test_type = np.asarray(TEST_TYPES, dtype=object)[np.arange(n_tests) % len(TEST_TYPES)]
    return pd.DataFrame({
        "study_index": t_study,
        "finding_index": t_finding,
        "study": _labels(study_names, t_study),
        "finding": _labels(finding_names, t_finding),
        "test": _numbered("test_", 3, width=1)[t_local],
        "domain": _labels(REPLICATION_DOMAINS, t_study % len(REPLICATION_DOMAINS)),
        "test_type": _labels(TEST_TYPES, np.arange(n_tests) % len(TEST_TYPES)),
        "type_name": test_type,
        "human_d": np.round(rng.uniform(-0.2, 1.2, n_tests), 3),
        "human_pi": np.round(rng.uniform(0.05, 0.99, n_tests), 3),
        "n_eff": rng.integers(20, 201, n_tests).astype(float),
    })


def replication_tests(*, models: Sequence[str] = REPLICATION_MODELS, n_studies: int = 6,
                      seed: int = 0) -> pd.DataFrame:
    r"""Replication tests (kind ``replication``, SPEC 1.2), one row per model × test.

    Study *k* (0-based) has 2 + (*k* mod 2) findings and finding *j* of a study 2 + (*j* mod 2)
    tests (36 tests for 6 studies); domains cycle Cognition, Social, Strategic over studies and
    ``test_type`` cycles over all seven types. Human d ~ U(−0.2, 1.2) and the human posterior
    π_h ~ U(0.05, 0.99) (3 decimals) are seeded and shared by every model; ``human_effect``
    and ``agent_effect`` are the native effects whose d-equivalents are exactly (to float
    precision) ``human_d`` and ``agent_d``.

    Model *i* follows profile *i* mod 3:

    * mirror: agent d = human d, π_a = π_h. Lin's CCC = 1 at every level and weighting; test
      PAS = π_h² + (1 − π_h)² ≥ 0.5.
    * shifted: agent d = human d + 0.3, π_a = 0.5. CCC = 2v / (2v + 0.3²) with *v* the
      weighted population variance of human d in the group (:func:`planted_replication_ecs`);
      every test PAS is π_h/2 + (1 − π_h)/2 = 0.5, so PAS is exactly 0.5 at every level.
    * flat: agent d = 0, π_a = 1 − π_h. CCC = 0 (zero covariance); test PAS = 2π_h(1 − π_h)
      ≤ 0.5.

    So mirror ≥ shifted ≥ flat on PAS and ECS at every level.

    Returns
    -------
    pandas.DataFrame
        ``model, study, finding, test, domain, test_type, human_effect, agent_effect, human_d,
        agent_d, human_pi, agent_pi, n_eff``; finding names (``study_01/F1``) are unique
        across studies.
    """
    models = _names("models", models)
    design = _replication_design(n_studies, seed)
    n_tests = len(design)
    model_index, test_index = (a.ravel() for a in np.indices((len(models), n_tests)))
    profile = model_index % 3
    frame = design.iloc[test_index].reset_index(drop=True)
    human_d = frame["human_d"].to_numpy()
    human_pi = frame["human_pi"].to_numpy()
    agent_d = np.select([profile == 0, profile == 1],
                        [human_d, np.round(human_d + _AGENT_D_SHIFT, 3)], 0.0)
    type_name = frame["type_name"].to_numpy()
    frame["model"] = _labels(models, model_index)
    frame["human_effect"] = _d_to_effect(human_d, type_name)
    frame["agent_effect"] = _d_to_effect(agent_d, type_name)
    frame["agent_d"] = agent_d
    frame["agent_pi"] = np.select([profile == 0, profile == 1],
                                  [human_pi, np.full(profile.size, 0.5)],
                                  np.round(1 - human_pi, 3))
    return frame[["model", "study", "finding", "test", "domain", "test_type", "human_effect",
                  "agent_effect", "human_d", "agent_d", "human_pi", "agent_pi", "n_eff"]]


def big_replication_tests(n_rows: int, *, seed: int = 0) -> pd.DataFrame:
    """About ``n_rows`` replication tests for benchmarks (SPEC 5: 100k): the three synthetic
    agents over ``round(n_rows / 18)`` studies (18 rows per study on average; the count is
    exact when ``n_rows`` is a multiple of 36)."""
    n_rows = _count("n_rows", n_rows, 1)
    return replication_tests(n_studies=max(1, round(n_rows / 18)), seed=seed)


def _structure_weights(design: pd.DataFrame) -> np.ndarray:
    """1/(findings in the test's study) × 1/(tests in its finding)."""
    findings = design.groupby("study_index")["finding_index"].transform("nunique")
    tests = design.groupby("finding_index")["finding_index"].transform("size")
    return (1.0 / (findings * tests)).to_numpy()


def planted_replication_ecs(*, models: Sequence[str] = REPLICATION_MODELS, n_studies: int = 6,
                            seed: int = 0) -> pd.DataFrame:
    r"""Closed-form ECS (Lin's CCC of agent d on human d) of :func:`replication_tests`.

    Returns
    -------
    pandas.DataFrame
        One row per model × level (``overall``, ``domain``, ``study``) × group × weighting
        (``structure``: 1/(findings in study) × 1/(tests in finding); ``equal``) ×
        normalize_weights (True, False): ``model, level, group, weighting,
        normalize_weights, n, ecs``.

    Notes
    -----
    For *y* = *x* + δ with weights *w* (normalised, Σw = 1), :math:`\mathrm{cov}_w(x, y) =
    \mathrm{var}_w(y) = v`, so

    .. math:: \mathrm{CCC} = \frac{2v}{2v + \delta^2}, \qquad
              v = \sum_t w_t (x_t - \bar x_w)^2

    With ``normalize_weights=False`` (HumanStudy-Bench's released code: weighted sums, the
    mean-difference term unscaled) *v* is :math:`\sum_t w_t (x_t - \bar x_w)^2` for the raw
    weights. The mirror model has CCC 1 and the flat model CCC 0 (its agent d has no
    variance) whatever the weights. Values for the shifted model hold to float precision: its
    agent d is rounded to 3 decimals like the human d, so each shift is 0.3 ± 1e-16.
    """
    models = _names("models", models)
    design = _replication_design(n_studies, seed)
    x = design["human_d"].to_numpy()
    weights = {"structure": _structure_weights(design), "equal": np.ones(len(design))}
    groups: list[tuple[str, str, np.ndarray]] = [("overall", "all", np.ones(len(x), bool))]
    for level in ("domain", "study"):
        labels = design[level].astype(str).to_numpy()
        groups += [(level, name, labels == name) for name in dict.fromkeys(labels)]
    rows = []
    for level, group, mask in groups:
        for weighting, w_all in weights.items():
            w = w_all[mask]
            mean = np.sum(w * x[mask]) / np.sum(w)
            spread = np.sum(w * (x[mask] - mean) ** 2)
            for normalize in (True, False):
                v = spread / np.sum(w) if normalize else spread
                shifted = 2 * v / (2 * v + _AGENT_D_SHIFT ** 2)
                for i, model in enumerate(models):
                    ecs = (1.0, shifted, 0.0)[i % 3]
                    if int(mask.sum()) < 3 and level == "study":
                        ecs = math.nan
                    rows.append((model, level, group, weighting, normalize, int(mask.sum()),
                                 ecs))
    return pd.DataFrame(rows, columns=["model", "level", "group", "weighting",
                                       "normalize_weights", "n", "ecs"])


def planted_replication_pas(*, models: Sequence[str] = REPLICATION_MODELS, n_studies: int = 6,
                            seed: int = 0) -> pd.DataFrame:
    r"""PAS of every test of :func:`replication_tests`: :math:`\pi_h\pi_a + (1-\pi_h)(1-\pi_a)`.

    Returns ``model, study, finding, test, pas``. The shifted model's PAS is exactly 0.5 for
    every test, hence (Fisher pooling of r = 0) for every finding, study and the model.
    """
    models = _names("models", models)
    design = _replication_design(n_studies, seed)
    model_index, test_index = (a.ravel() for a in np.indices((len(models), len(design))))
    profile = model_index % 3
    h = design["human_pi"].to_numpy()[test_index]
    pas = np.select([profile == 0, profile == 1], [h * h + (1 - h) ** 2, np.full(h.size, 0.5)],
                    2 * h * (1 - h))
    out = design[["study", "finding", "test"]].iloc[test_index].reset_index(drop=True)
    out.insert(0, "model", _labels(models, model_index))
    out["pas"] = pas
    return out


SUMMARY_CONFIGS: tuple[str, ...] = (
    "synthetic-agent-v1-empty", "synthetic-agent-v2-persona", "synthetic-agent-v3-reasoning")


def _summary_plan(n_configs: int, n_studies: int) -> tuple[np.ndarray, ...]:
    c, s = (a.ravel() for a in np.indices((n_configs, n_studies)))
    pas = np.round(0.4 + 0.1 * c + 0.02 * s, 4)
    ecs = np.round(0.1 * c + 0.05 * s - 0.1, 4)
    ecs = np.where((c == 0) & (s == min(3, n_studies - 1)), np.nan, ecs)
    pas = np.where((c == 2) & (s == n_studies - 1), np.nan, pas)
    return c, s, np.clip(pas, 0.0, 1.0), np.clip(ecs, -1.0, 1.0)


def replication_summary(*, configs: Sequence[str] = SUMMARY_CONFIGS, n_studies: int = 6,
                        seed: int = 0) -> pd.DataFrame:
    """Published study-level results (kind ``replication_summary``, SPEC 1.2b).

    Configuration *c*, study *s* (0-based) has PAS = 0.4 + 0.1c + 0.02s and ECS = 0.1c + 0.05s −
    0.1 (clipped to their ranges), except that configuration 0 has no ECS for study 3 (the last
    study if there are fewer) and configuration 2 no PAS for the last study (empty cells).
    Tokens ~ U{100000..899999} (seeded); cost = tokens · (1 + c) / 10⁶ dollars. Means per
    configuration are in :func:`planted_replication_summary`.
    """
    configs = _names("configs", configs)
    n_studies = _count("n_studies", n_studies, 1)
    rng = _rng(seed)
    c, s, pas, ecs = _summary_plan(len(configs), n_studies)
    tokens = rng.integers(100_000, 900_000, c.size)
    width = max(2, len(str(n_studies)))
    return pd.DataFrame({
        "model": _labels(configs, c),
        "study": _labels(_numbered("study_", n_studies, width=width), s),
        "title": _labels(_numbered("Synthetic study ", n_studies, width=1), s),
        "pas": pas,
        "ecs": ecs,
        "tokens": tokens.astype(float),
        "cost": np.round(tokens * (1 + c) / 1e6, 6),
    })


def planted_replication_summary(*, configs: Sequence[str] = SUMMARY_CONFIGS,
                                n_studies: int = 6) -> pd.DataFrame:
    """Per configuration of :func:`replication_summary`: ``n_pas, mean_pas, n_ecs, mean_ecs``
    (over the studies with a value) and ``dollars_per_million_tokens`` = 1 + c. With the
    defaults the PAS means are 0.45, 0.55, 0.64 (v3 has no PAS for study 6) and the ECS means
    0.02 (v1 lacks study 4), 0.125, 0.225: v3 leads on both."""
    configs = _names("configs", configs)
    n_studies = _count("n_studies", n_studies, 1)
    c, _, pas, ecs = _summary_plan(len(configs), n_studies)
    frame = pd.DataFrame({"c": c, "pas": pas, "ecs": ecs})
    out = frame.groupby("c").agg(n_pas=("pas", "count"), mean_pas=("pas", "mean"),
                                 n_ecs=("ecs", "count"), mean_ecs=("ecs", "mean"))
    out.insert(0, "model", list(configs))
    out["dollars_per_million_tokens"] = 1.0 + out.index.to_numpy()
    return out.reset_index(drop=True)


# =================================================================================== judged

DETECTORS: tuple[str, ...] = (
    "synthetic-detector-sharp", "synthetic-detector-eager", "synthetic-detector-timid")
JUDGES: tuple[str, ...] = ("judge-one", "judge-two", "judge-three")
PROMPT_TYPES: tuple[str, ...] = ("direct", "naturalistic", "adversarial")
VULN_TYPES: tuple[str, ...] = (
    "reentrancy", "access_control", "integer_overflow", "unchecked_call", "front_running")

_CONFIDENCE_BY_DETECTOR = np.array([0.9, 0.8, 0.4])
_TYPE_BY_DETECTOR = ("exact", "semantic", "partial")
_REASONING_BY_DETECTOR = np.array([[0.9, 0.8, 0.7], [0.6, 0.5, 0.4], [0.5, 0.5, 0.5]])
_LOCATION_BY_DETECTOR = (1.0, 0.5, 0.0)


def _n_vulnerable(n_samples: int) -> int:
    return (7 * n_samples + 5) // 10  # 70 %, rounded half up


def _flipper(judge_index: np.ndarray | int) -> np.ndarray:
    """Judge *j* flips ``target_found`` when *j* mod 3 = 2 (the third of each three)."""
    return np.asarray(judge_index) % 3 == 2


def judged_samples(*, n_samples: int = 40, models: Sequence[str] = DETECTORS,
                   prompt_types: Sequence[str] = PROMPT_TYPES, judges: Sequence[str] = JUDGES,
                   seed: int = 0) -> pd.DataFrame:
    """Judged vulnerability detections (kind ``judged``, SPEC 1.3), one row per sample ×
    detector × prompt type × judge.

    Samples ``c0001``...: V = round(0.7 · n_samples) are vulnerable, S = n − V safe; which
    ones, and the order *p* = 0..V−1 of the vulnerable and *q* = 0..S−1 of the safe samples,
    come from the seed. Vulnerable sample *p* has severity ``SEVERITIES[p mod 4]``, type
    ``VULN_TYPES[p mod 5]`` and true lines L;L+1 (L seeded). Every prompt type gets the same
    answers. Detector *i* follows profile *i* mod 3:

    * sharp: says vulnerable exactly on the vulnerable samples and finds every target (type
      ``exact``, rcir/ava/fsv 0.9/0.8/0.7, claims lines L;L+1), confidence 0.9, one bonus valid
      finding when *p* mod 7 = 0;
    * eager: says vulnerable on every sample, finds the target when *p* is even (``semantic``,
      0.6/0.5/0.4, claims line L only: location accuracy 0.5), confidence 0.8; one
      hallucinated finding on every sample and one security-theater finding on safe samples;
    * timid: says vulnerable when *p* mod 3 = 0 or *q* mod 3 = 0 and then finds the target
      of a vulnerable sample (``partial``, 0.5/0.5/0.5, a partial-match finding, claims line
      L+40: location accuracy 0), confidence 0.4; a design-choice finding on safe samples it
      flags.

    A detector that says vulnerable on a vulnerable sample reports one finding about the
    target: a target (timid: partial) match when the judge finds the target, else a
    mischaracterized one. Judges agree everywhere except that judge *j* with *j* mod 3 = 2
    (``judge-three``) flips ``target_found`` (with type, scores, lines and the target
    finding's class) on vulnerable samples with *p* mod 5 = 0 that the detector flagged.
    Counts and rates are in :func:`planted_judged`, agreement in :func:`planted_agreement`.

    Returns
    -------
    pandas.DataFrame
        ``sample, model, judge, prompt_type, is_vulnerable, severity, vuln_type,
        said_vulnerable, confidence, target_found, type_match, rcir, ava, fsv``, the ten
        finding counts, ``claimed_lines, true_lines`` (``"12;13"``, missing when unknown); the
        key (sample, model, prompt_type, judge) is unique.
    """
    n_samples = _count("n_samples", n_samples, 2)
    models = _names("models", models)
    prompt_types = _names("prompt_types", prompt_types)
    judges = _names("judges", judges)
    rng = _rng(seed)
    n_vulnerable = _n_vulnerable(n_samples)
    # Sample level: position in the seeded order decides everything.
    position = np.empty(n_samples, dtype=np.int64)
    position[rng.permutation(n_samples)] = np.arange(n_samples)
    vulnerable_s = position < n_vulnerable
    p_s = np.where(vulnerable_s, position, -1)
    q_s = np.where(vulnerable_s, -1, position - n_vulnerable)
    first_line = 10 + rng.integers(0, 290, n_samples)
    line = pd.Series(first_line).astype(str)
    next_line = pd.Series(first_line + 1).astype(str)
    true_lines_s = np.where(vulnerable_s, (line + ";" + next_line).to_numpy(dtype=object), None)
    claims_s = np.stack([(line + ";" + next_line).to_numpy(dtype=object),
                         line.to_numpy(dtype=object),
                         pd.Series(first_line + 40).astype(str).to_numpy(dtype=object)])

    s, m, t, j = (a.ravel() for a in np.indices(
        (n_samples, len(models), len(prompt_types), len(judges))))
    profile = m % 3
    vulnerable = vulnerable_s[s]
    p, q = p_s[s], q_s[s]
    sharp, eager, timid = profile == 0, profile == 1, profile == 2
    said = np.select([sharp, eager], [vulnerable, np.ones_like(vulnerable)],
                     (vulnerable & (p % 3 == 0)) | (~vulnerable & (q % 3 == 0)))
    found_first = vulnerable & said & np.select([eager], [p % 2 == 0], True)
    flip = _flipper(j) & vulnerable & said & (p % 5 == 0)
    found = found_first ^ flip
    target_finding = vulnerable & said
    match_code = np.select([found, target_finding, vulnerable], [profile, 3, 4], -1)
    reasoning = np.where(found[:, None], _REASONING_BY_DETECTOR[profile], np.nan)
    counts = {name: np.zeros(s.size, dtype=np.int64) for name in FINDING_COUNTS}
    counts["n_target_match"] = (found & ~timid).astype(np.int64)
    counts["n_partial_match"] = (found & timid).astype(np.int64)
    counts["n_bonus_valid"] = (sharp & vulnerable & (p % 7 == 0)).astype(np.int64)
    counts["n_hallucinated"] = eager.astype(np.int64)
    counts["n_mischaracterized"] = (target_finding & ~found).astype(np.int64)
    counts["n_design_choice"] = (timid & ~vulnerable & said).astype(np.int64)
    counts["n_security_theater"] = (eager & ~vulnerable).astype(np.int64)
    sample_names = _numbered("c", n_samples, width=max(4, len(str(n_samples))))
    return pd.DataFrame({
        "sample": _labels(sample_names, s),
        "model": _labels(models, m),
        "judge": _labels(judges, j),
        "prompt_type": _labels(prompt_types, t),
        "is_vulnerable": vulnerable,
        "severity": _labels(SEVERITIES, np.where(vulnerable, p % len(SEVERITIES), -1)),
        "vuln_type": _labels(VULN_TYPES, np.where(vulnerable, p % len(VULN_TYPES), -1)),
        "said_vulnerable": said,
        "confidence": _CONFIDENCE_BY_DETECTOR[profile],
        "target_found": found,
        "type_match": _labels((*_TYPE_BY_DETECTOR, "wrong", "not_mentioned"), match_code),
        "rcir": reasoning[:, 0], "ava": reasoning[:, 1], "fsv": reasoning[:, 2],
        **counts,
        "claimed_lines": _labels(claims_s.ravel(),
                                 np.where(found, profile * n_samples + s, -1)),
        "true_lines": _labels(true_lines_s, s),
    })


def big_judged_samples(n_rows: int, *, seed: int = 0) -> pd.DataFrame:
    """About ``n_rows`` judged rows for benchmarks (SPEC 5: 600k, 3 judges): the default
    detectors, prompt types and judges over ``round(n_rows / 27)`` samples (exact when
    ``n_rows`` is a multiple of 27)."""
    n_rows = _count("n_rows", n_rows, 1)
    per_sample = len(DETECTORS) * len(PROMPT_TYPES) * len(JUDGES)
    return judged_samples(n_samples=max(2, round(n_rows / per_sample)), seed=seed)


def _detector_counts(profile: int, flipped: bool, v: int, s: int) -> dict[str, float]:
    """Per-prompt-type counts of one detector profile as one judge reads them."""
    n = v + s
    c = {k: _ceil_div(v, k) for k in (2, 3, 5, 7, 10, 15)}
    s3 = _ceil_div(s, 3)
    if profile == 0:    # sharp
        tp, fp = v, 0
        found = v - c[5] if flipped else v
        bonus_findings = bonus_samples = c[7]
        other_invalid = hallucinated = 0
    elif profile == 1:  # eager
        tp, fp = v, s
        found = c[2] + c[5] - 2 * c[10] if flipped else c[2]
        bonus_findings = bonus_samples = 0
        hallucinated = n
        other_invalid = n + s            # hallucinated everywhere, security theater on safe
    else:               # timid
        tp, fp = c[3], s3
        found = c[3] - c[15] if flipped else c[3]
        bonus_findings = bonus_samples = 0
        hallucinated = 0
        other_invalid = s3               # design choice on the safe samples it flags
    return {"n": n, "tp": tp, "fp": fp, "fn": v - tp, "tn": s - fp, "vulnerable": v,
            "found": found, "lucky": tp - found, "valid": found + bonus_findings,
            "invalid": other_invalid + (tp - found), "hallucinated": hallucinated,
            "bonus_samples": bonus_samples}


def planted_judged(*, n_samples: int = 40, models: Sequence[str] = DETECTORS,
                   prompt_types: Sequence[str] = PROMPT_TYPES,
                   judges: Sequence[str] = JUDGES) -> pd.DataFrame:
    r"""Closed-form tier values of :func:`judged_samples`, per detector × judge.

    They do not depend on the seed (it only decides which samples play which part), nor on
    the prompt type (every prompt type gets the same answers, so the rates per prompt type
    are these, with the counts divided by the number of prompt types).

    Returns
    -------
    pandas.DataFrame
        ``model, judge, n, tp, tn, fp, fn, accuracy, precision, recall, f1, f2, fpr, fnr,
        targets_found, tdr, lucky_guesses, lucky_guess_rate, bonus_discovery_rate,
        valid_findings, invalid_findings, hallucinated_findings, finding_precision,
        invalid_rate, hallucination_rate, over_flagging, type_match, mean_rcir, mean_ava,
        mean_fsv, avg_reasoning, confidence, ece, brier, location_accuracy, lgi, tus, sui``.

    Notes
    -----
    With V vulnerable and S safe samples (28 and 12 of 40) and :math:`c_k = \lceil V/k
    \rceil` the number of positions *p* < V with *p* mod k = 0 (:math:`s_3 = \lceil S/3
    \rceil`), per prompt type, N = V + S:

    ======  =======  =======  =============================  ===========================
    model   TP       FP       findings: valid / invalid      found (judge-one / -three)
    ======  =======  =======  =============================  ===========================
    sharp   V        0        found + c₇ / V − found         V / V − c₅
    eager   V        S        found / N + S + V − found      c₂ / c₂ + c₅ − 2c₁₀
    timid   c₃       s₃       found / s₃ + c₃ − found        c₃ / c₃ − c₁₅
    ======  =======  =======  =============================  ===========================

    A target lost to the flip turns its finding from valid to invalid (mischaracterized),
    and back. Then accuracy = (TP + TN)/N, TDR = found/V, lucky-guess rate = (TP − found)/TP,
    finding precision = valid/(valid + invalid), hallucination rate = hallucinated/findings,
    LGI = accuracy − TDR, TUS = TDR · avg_reasoning · (1 − invalid rate), and with one
    confidence per detector ECE = MCE = |confidence − accuracy| (a single bin), Brier =
    acc·(1 − conf)² + (1 − acc)·conf². SUI = 0.25·F2 + 0.25·TDR + 0.15·finding precision +
    0.25·avg_reasoning + 0.10·(1 − ECE). For 40 samples: sharp accuracy 1, TDR 1 (22/28
    under judge-three), ECE 0.1; eager accuracy 0.7, TDR 0.5, lucky-guess rate 0.5, ECE 0.1;
    timid TP 10, FP 4, TN 8, FN 18, accuracy 0.45, TDR 10/28 (8/28 under judge-three).
    """
    n_samples = _count("n_samples", n_samples, 2)
    models = _names("models", models)
    prompt_types = _names("prompt_types", prompt_types)
    judges = _names("judges", judges)
    v = _n_vulnerable(n_samples)
    s = n_samples - v
    rows = []
    for i, model in enumerate(models):
        profile = i % 3
        for k, judge in enumerate(judges):
            per = _detector_counts(profile, bool(_flipper(k)), v, s)
            c = {key: value * len(prompt_types) for key, value in per.items()}
            rows.append(_tiers_from_counts(model, judge, profile, c))
    return pd.DataFrame(rows)


def _ratio(num: float, den: float) -> float:
    return num / den if den else math.nan


def _tiers_from_counts(model: str, judge: str, profile: int,
                       c: dict[str, float]) -> dict[str, object]:
    n, tp, tn, fp, fn = c["n"], c["tp"], c["tn"], c["fp"], c["fn"]
    accuracy = (tp + tn) / n
    precision, recall = _ratio(tp, tp + fp), _ratio(tp, tp + fn)
    f1 = _ratio(2 * precision * recall, precision + recall)
    f2 = _ratio(5 * precision * recall, 4 * precision + recall)
    findings = c["valid"] + c["invalid"]
    tdr = c["found"] / c["vulnerable"]
    finding_precision = c["valid"] / findings if findings else 1.0
    invalid_rate = _ratio(c["invalid"], findings) if findings else 0.0
    has_found = c["found"] > 0
    rcir, ava, fsv = (_REASONING_BY_DETECTOR[profile] if has_found else [math.nan] * 3)
    avg_reasoning = (rcir + ava + fsv) / 3
    confidence = float(_CONFIDENCE_BY_DETECTOR[profile])
    ece = abs(confidence - accuracy)
    return {
        "model": model, "judge": judge, "n": int(n), "tp": int(tp), "tn": int(tn),
        "fp": int(fp), "fn": int(fn), "accuracy": accuracy, "precision": precision,
        "recall": recall, "f1": f1, "f2": f2, "fpr": _ratio(fp, fp + tn),
        "fnr": _ratio(fn, fn + tp), "targets_found": int(c["found"]), "tdr": tdr,
        "lucky_guesses": int(c["lucky"]), "lucky_guess_rate": _ratio(c["lucky"], tp),
        "bonus_discovery_rate": c["bonus_samples"] / n,
        "valid_findings": int(c["valid"]), "invalid_findings": int(c["invalid"]),
        "hallucinated_findings": int(c["hallucinated"]),
        "finding_precision": finding_precision, "invalid_rate": invalid_rate,
        "hallucination_rate": _ratio(c["hallucinated"], findings) if findings else 0.0,
        "over_flagging": c["invalid"] / n,
        "type_match": _TYPE_BY_DETECTOR[profile] if has_found else None,
        "mean_rcir": float(rcir), "mean_ava": float(ava), "mean_fsv": float(fsv),
        "avg_reasoning": float(avg_reasoning), "confidence": confidence, "ece": ece,
        "brier": accuracy * (1 - confidence) ** 2 + (1 - accuracy) * confidence ** 2,
        "location_accuracy": _LOCATION_BY_DETECTOR[profile] if has_found else math.nan,
        "lgi": accuracy - tdr,
        "tus": tdr * avg_reasoning * (1 - invalid_rate),
        "sui": (0.25 * f2 + 0.25 * tdr + 0.15 * finding_precision + 0.25 * avg_reasoning
                + 0.10 * (1 - ece)),
    }


def planted_agreement(*, n_samples: int = 40, models: Sequence[str] = DETECTORS,
                      prompt_types: Sequence[str] = PROMPT_TYPES,
                      judges: Sequence[str] = JUDGES) -> pd.DataFrame:
    r"""Closed-form agreement of the judges of :func:`judged_samples` on ``target_found``.

    Items are (sample, model, prompt_type). Returns one row per pair of judges: ``judge_a,
    judge_b, n, n_disagree, percent_agreement, kappa`` (Cohen's κ), then one row with
    ``judge_a`` = ``judge_b`` = ``"all"`` whose ``kappa`` is Fleiss' κ over every judge and
    whose ``percent_agreement`` is the share of items on which all judges agree.
    (``said_vulnerable`` and every other label except those that follow the flip agree
    everywhere.)

    Notes
    -----
    A flipping judge disagrees with the others on the flip items: per prompt type c₅ for
    sharp, c₅ for eager and c₁₅ for timid (42 of 360 items for the defaults). Cohen's κ
    between a plain and a flipping judge comes from the 2×2 table (found by both: V − c₅,
    c₂ − c₁₀, c₃ − c₁₅; by the plain judge only: c₅, c₁₀, c₁₅; by the flipping judge only: 0,
    c₅ − c₁₀, 0, per profile), :math:`\kappa = (p_o - p_e)/(1 - p_e)`. Fleiss' κ: an item
    with a split of :math:`J_N` plain against :math:`J_F` flipping judges has agreement
    :math:`P_i = (J_N(J_N-1) + J_F(J_F-1)) / (J(J-1))`, others 1;
    :math:`\kappa = (\bar P - P_e)/(1 - P_e)` with :math:`P_e = p^2 + (1-p)^2` and *p* the
    share of "found" among all judgements.
    """
    n_samples = _count("n_samples", n_samples, 2)
    models = _names("models", models)
    prompt_types = _names("prompt_types", prompt_types)
    judges = _names("judges", judges)
    v = _n_vulnerable(n_samples)
    c = {k: _ceil_div(v, k) for k in (2, 3, 5, 10, 15)}
    # Per profile: found by a plain judge only (TF), a flipping judge only (FT), both (TT).
    table = {0: (v - c[5], c[5], 0), 1: (c[2] - c[10], c[10], c[5] - c[10]),
             2: (c[3] - c[15], c[15], 0)}
    both = plain_only = flip_only = 0
    for i in range(len(models)):
        tt, tf, ft = table[i % 3]
        both, plain_only, flip_only = both + tt, plain_only + tf, flip_only + ft
    k_types = len(prompt_types)
    both, plain_only, flip_only = both * k_types, plain_only * k_types, flip_only * k_types
    n_items = n_samples * len(models) * k_types
    flips = plain_only + flip_only
    found_plain, found_flip = both + plain_only, both + flip_only

    def kappa(found_a: int, found_b: int, disagree: int) -> float:
        p_o = 1 - disagree / n_items
        pa, pb = found_a / n_items, found_b / n_items
        p_e = pa * pb + (1 - pa) * (1 - pb)
        return (p_o - p_e) / (1 - p_e) if p_e < 1 else math.nan

    flipping = [bool(_flipper(k)) for k in range(len(judges))]
    rows = []
    for a in range(len(judges)):
        for b in range(a + 1, len(judges)):
            differ = flipping[a] != flipping[b]
            disagree = flips if differ else 0
            found_a = found_flip if flipping[a] else found_plain
            found_b = found_flip if flipping[b] else found_plain
            rows.append((judges[a], judges[b], n_items, disagree, 1 - disagree / n_items,
                         kappa(found_a, found_b, disagree)))
    n_flip, n_judges = sum(flipping), len(judges)
    n_plain = n_judges - n_flip
    split = 0 < n_flip < n_judges
    if n_judges > 1:
        disagree = flips if split else 0
        p_split = ((n_plain * (n_plain - 1) + n_flip * (n_flip - 1))
                   / (n_judges * (n_judges - 1)))
        p_bar = 1 - disagree / n_items * (1 - p_split)
        p = (n_plain * found_plain + n_flip * found_flip) / (n_judges * n_items)
        p_e = p * p + (1 - p) * (1 - p)
        fleiss = (p_bar - p_e) / (1 - p_e) if p_e < 1 else math.nan
        rows.append(("all", "all", n_items, disagree, 1 - disagree / n_items, fleiss))
    return pd.DataFrame(rows, columns=["judge_a", "judge_b", "n", "n_disagree",
                                       "percent_agreement", "kappa"])


# ================================================================================== writing

SAMPLE_FILES: tuple[str, ...] = (
    "bias.csv", "bias_summary.csv", "replication.csv", "replication_summary.csv", "judged.csv")


def _csv_bytes(frame: pd.DataFrame) -> bytes:
    """CSV as kbench reads it: ``true``/``false``, empty cells for missing values, floats in
    their shortest round-trip form (so a reload gives the same numbers), ``\\n`` line ends."""
    out = frame.copy()
    for name in out.columns:
        if out[name].dtype == bool:
            out[name] = np.where(out[name].to_numpy(), "true", "false")
        elif isinstance(out[name].dtype, pd.BooleanDtype):  # true / false / empty
            out[name] = out[name].map({True: "true", False: "false"}).astype(object)
    return out.to_csv(index=False, lineterminator="\n").encode("utf-8")


def _sample_frames() -> dict[str, pd.DataFrame]:
    return {
        "bias.csv": bias_trials(),
        "bias_summary.csv": bias_reports(),
        "replication.csv": replication_tests(),
        "replication_summary.csv": replication_summary(),
        "judged.csv": judged_samples(),
    }


def write_samples(directory: str | Path) -> list[Path]:
    """Write the bundled sample runs (one small CSV per kind, default options, seed 0) into
    ``directory``, creating it if needed; the bytes depend on nothing but this module.

    Returns the paths written, in :data:`SAMPLE_FILES` order.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, frame in _sample_frames().items():
        path = directory / name
        path.write_bytes(_csv_bytes(frame))
        paths.append(path)
    return paths


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m kbench_core.samples [DIR]``: (re)write the sample files (default
    ``sample_data``)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) > 1 or any(a in ("-h", "--help") for a in args):
        print("usage: python -m kbench_core.samples [DIR]   (default: sample_data)")
        return 0 if args and args[0] in ("-h", "--help") else 2
    for path in write_samples(args[0] if args else "sample_data"):
        print(f"wrote {path} ({path.stat().st_size / 1024:.1f} KB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
