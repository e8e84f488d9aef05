r"""Human–agent replication metrics (SPEC 2.2): PAS with Fisher-z pooling and ECS as weighted
Lin's concordance correlation, per model, vectorised over all models at once.

Source: HumanStudy-Bench's metric document (``seeds/replication_metrics.md``; its formulas were
lost in extraction and SPEC 2.2 restores the ones used here) and the released
``src/evaluation/stats_lib.py`` the document points to.

- **Effect sizes** are compared on Cohen's d scale (:func:`effect_to_d`).
- **PAS** (Probability of Agreement State) per test is
  :math:`\pi_h\pi_a + (1-\pi_h)(1-\pi_a)`, the probability that human and agent are in the
  same state (both an effect, or both none); pooled test → finding → study on Fisher's z scale,
  then averaged over studies per model (:func:`pas`).
- **ECS** (Effect Consistency Score) is Lin's concordance correlation between human and agent d
  over the tests, weighted so that each study and each finding within it counts equally
  (:func:`ecs`, :func:`weighted_ccc`).

Defaults follow SPEC; each published behaviour is an option:

=======================  ==========================  ==========================================
choice                   default (SPEC)              other option: who does it
=======================  ==========================  ==========================================
tests within a finding   ``finding_weights="equal"``  ``"n_eff"``: the seed's prose (the
                         (the released code)          released ``aggregate_study_pas`` is equal)
findings within a study  ``study_pooling="fisher"``  ``"mean"``: the seed's prose ("simple
                         (the released code)          mean across findings")
CCC moments              ``normalize_weights=True``  ``False``: the released ``weighted_ccc``
                         (Lin's CCC)                  (weighted sums, mean shift unscaled)
per-study ECS weights    ``weighting="structure"``   ``"equal"``: the released per-study ECS
=======================  ==========================  ==========================================

Auxiliary (the seed's legacy metrics, *not* to be reported as primary): normalised PAS against
the human ceiling (:func:`pas_normalized`), and ECS_Strict from z-differences
(:func:`ecs_strict`).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats

from kbench_core.stats import WithinGroups, check_choice, t_interval

__all__ = [
    "EPSILON",
    "SUMMARY_LABELS",
    "PasResult",
    "ecs",
    "ecs_strict",
    "effect_to_d",
    "finding_rows",
    "log_odds_ratio",
    "pas",
    "pas_normalized",
    "posterior_from_bf",
    "prepare_tests",
    "se_cohens_d",
    "se_fisher_z",
    "se_log_odds_ratio",
    "se_proportion",
    "se_rank_biserial",
    "structure_weights",
    "study_rows",
    "summary_leaderboard",
    "weighted_ccc",
]

EPSILON = 1e-6  # r is clamped to ±(1 − ε) before atanh (seed: "prevents infinities")
NEUTRAL_CEILING = 1e-8  # |2c − 1| below this: the human posterior is 0.5, nothing to normalise
STOUFFER_CAP = 10.0  # the released ECS_Strict's stand-in for Φ⁻¹(0) and Φ⁻¹(1)
MIN_STUDY_PAIRS = 3  # a study needs 3 valid pairs for its own ECS (SPEC 2.2)

Array = np.ndarray
ArrayLike = np.ndarray | pd.Series | Sequence[float] | float


# ------------------------------------------------------------------------------ effect sizes


def effect_to_d(value: ArrayLike, test_type: np.ndarray | pd.Series | Sequence[str] | str,
                ) -> Array:
    r"""Cohen's d-equivalent of a native effect size (seed, ``effect_to_d_equiv``).

    ============  ====================  ================================================
    test_type     native effect         d
    ============  ====================  ================================================
    t, f, anova   d                     d
    correlation   Fisher z              :math:`r = \tanh z`, :math:`d = 2r/\sqrt{1-r^2}`
    chi2          log odds ratio        :math:`\log OR\cdot\sqrt3/\pi`
    mann_whitney  rank-biserial r       :math:`2r/\sqrt{1-r^2}`
    binomial      proportion p          :math:`2(p - 0.5)/\sqrt{0.25}`
    ============  ====================  ================================================

    NaN (undefined) for an unknown type, a non-finite value, :math:`|r| \ge 1 - 10^{-6}` (the
    released code returns None there) and a proportion outside [0, 1].
    """
    v = np.asarray(value, dtype=float)
    kind = np.asarray(test_type, dtype=object)
    v, kind = np.broadcast_arrays(v, kind)
    is_r = np.isin(kind, ["correlation", "mann_whitney"])
    r = np.where(kind == "correlation", np.tanh(v), v)
    with np.errstate(invalid="ignore", divide="ignore"):
        from_r = np.where(np.abs(r) < 1 - EPSILON, 2 * r / np.sqrt(1 - r * r), np.nan)
    binomial = np.where((v >= 0) & (v <= 1), 2 * (v - 0.5) / np.sqrt(0.25), np.nan)
    d = np.select([np.isin(kind, ["t", "f", "anova"]), is_r, kind == "chi2",
                   kind == "binomial"],
                  [v, from_r, v * np.sqrt(3) / np.pi, binomial], np.nan)
    return np.where(np.isfinite(d), d, np.nan)


def se_cohens_d(d: ArrayLike, n1: ArrayLike, n2: ArrayLike | None = None) -> Array:
    r"""Standard error of Cohen's d (Hedges & Olkin 1985; the seed's ``cohens_d_se``):
    independent samples :math:`\sqrt{(n_1+n_2)/(n_1n_2) + d^2/(2(n_1+n_2))}`, one-sample or
    paired (``n2`` None) :math:`\sqrt{1/n + d^2/(2n)}`. NaN where a sample size is ≤ 0."""
    d = np.asarray(d, dtype=float)
    n1 = np.asarray(n1, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        if n2 is None:
            se = np.sqrt(1 / n1 + d * d / (2 * n1))
            return np.where(n1 > 0, se, np.nan)
        n2 = np.asarray(n2, dtype=float)
        se = np.sqrt((n1 + n2) / (n1 * n2) + d * d / (2 * (n1 + n2)))
        return np.where((n1 > 0) & (n2 > 0), se, np.nan)


def se_fisher_z(n: ArrayLike) -> Array:
    r"""Standard error of Fisher's z of a correlation over n pairs: :math:`1/\sqrt{n-3}`;
    NaN for n ≤ 3."""
    n = np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 3, 1 / np.sqrt(n - 3), np.nan)


def log_odds_ratio(a: ArrayLike, b: ArrayLike, c: ArrayLike, d: ArrayLike,
                   ) -> tuple[Array, Array]:
    r"""Log odds ratio of 2×2 tables [[a, b], [c, d]] and its standard error
    :math:`\sqrt{1/a+1/b+1/c+1/d}` (Woolf), elementwise; a table with a zero cell gets the
    Haldane–Anscombe correction, +0.5 to each of its four cells (as the seed's
    ``log_odds_ratio``)."""
    cells = np.stack(np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (a, b, c, d))))
    cells = cells + 0.5 * (cells == 0).any(axis=0)
    a, b, c, d = cells
    return np.log(a * d / (b * c)), np.sqrt((1 / cells).sum(axis=0))


def se_log_odds_ratio(a: ArrayLike, b: ArrayLike, c: ArrayLike, d: ArrayLike) -> Array:
    """Standard error of the log odds ratio (see :func:`log_odds_ratio`)."""
    return log_odds_ratio(a, b, c, d)[1]


def se_rank_biserial(r: ArrayLike, n1: ArrayLike, n2: ArrayLike) -> Array:
    r"""Standard error of a Mann–Whitney rank-biserial r, the seed's large-sample
    approximation (``r_rb_se``): :math:`\sqrt{(1 - r^2)/(n_1 + n_2 - 1)}`; NaN for
    :math:`n_1 + n_2 \le 1`."""
    r = np.asarray(r, dtype=float)
    n = np.asarray(n1, dtype=float) + np.asarray(n2, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 1, np.sqrt((1 - r * r) / (n - 1)), np.nan)


def se_proportion(p: ArrayLike, n: ArrayLike) -> Array:
    r"""Standard error of a proportion: :math:`\sqrt{p(1-p)/n}`; NaN for n ≤ 0."""
    p = np.asarray(p, dtype=float)
    n = np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, np.sqrt(p * (1 - p) / n), np.nan)


def posterior_from_bf(bf10: ArrayLike, prior_odds: ArrayLike) -> Array:
    r"""Posterior probability of an effect from a Bayes factor and prior odds:
    :math:`\pi = BF\cdot o/(1 + BF\cdot o)`; an infinite BF gives 1 (as the released
    ``prob_from_bf``), a missing one NaN (the released code's 0.5 would be made up)."""
    odds = np.asarray(bf10, dtype=float) * np.asarray(prior_odds, dtype=float)
    with np.errstate(invalid="ignore"):
        return np.where(np.isposinf(odds), 1.0, odds / (1 + odds))


def prepare_tests(tests: pd.DataFrame, *, human_prior_significant: float = 10.0,
                  human_prior_null: float = 0.1, agent_prior: float = 1.0) -> pd.DataFrame:
    """The tests with ``d_h, d_a`` (Cohen's d) and ``pi_h, pi_a`` (posteriors) filled from
    whichever columns each row gives (SPEC 1.2), as the released ``compute_ecs_corr`` does:

    - d: ``human_d``/``agent_d`` where given, else :func:`effect_to_d` of
      ``human_effect``/``agent_effect`` with the row's ``test_type``;
    - π: ``human_pi``/``agent_pi`` where given, else from Bayes factors
      (:func:`posterior_from_bf`) with prior odds ``human_prior_significant`` (10) for a human
      finding reported significant, ``human_prior_null`` (0.1) for one that is not, and
      ``agent_prior`` (1) for the agent. A human Bayes factor without its
      ``human_significant`` flag has no prior, so its π_h is NaN.
    """
    out = tests.copy()
    n = len(out)

    def column(name: str) -> Array:
        return out[name].to_numpy(dtype=float, na_value=np.nan) if name in out else np.full(
            n, np.nan)

    kind = out["test_type"].astype(object).to_numpy() if "test_type" in out else np.full(
        n, None, dtype=object)
    for side in ("human", "agent"):
        d = column(f"{side}_d").copy()
        need = ~np.isfinite(d)  # convert the native effect only where no d is given
        if need.any() and f"{side}_effect" in out:
            d[need] = effect_to_d(column(f"{side}_effect")[need], kind[need])
        out[f"d_{side[0]}"] = d
    if "human_significant" in out:
        flag = out["human_significant"].astype("boolean")
        odds = np.where(flag.fillna(False).to_numpy(bool), human_prior_significant,
                        human_prior_null)
        odds = np.where(flag.isna().to_numpy(), np.nan, odds)
    else:
        odds = np.full(n, np.nan)
    from_bf = {"human": posterior_from_bf(column("human_bf10"), odds),
               "agent": posterior_from_bf(column("agent_bf10"), agent_prior)}
    for side in ("human", "agent"):
        given = column(f"{side}_pi")
        out[f"pi_{side[0]}"] = np.where(np.isfinite(given), given, from_bf[side])
    return out


def _codes(frame: pd.DataFrame, columns: Sequence[str],
           carry: Sequence[str] = ()) -> tuple[Array, pd.DataFrame]:
    """Group codes of ``columns`` in order of first appearance, and the groups (as text) with
    the ``carry`` columns taken from each group's first row (e.g. a study's domain)."""
    keys = frame[list(columns)]
    codes = keys.groupby(list(columns), sort=False, observed=True,
                         dropna=False).ngroup().to_numpy(np.int64)
    first = np.unique(codes, return_index=True)[1]
    groups = keys.iloc[first].astype(str).reset_index(drop=True)
    for name in carry:
        if name in frame:
            groups[name] = frame[name].iloc[first].astype(str).to_numpy()
    return codes, groups


# ------------------------------------------------------------------------------ PAS


@dataclass(frozen=True)
class PasResult:
    """PAS at every level (SPEC 2.2).

    - ``test``: ``model, study, finding, test[, domain], pi_h, pi_a, pas, r, z, weight,
      dropped`` (``dropped``: no usable PAS — a posterior missing, e.g. a Bayes factor without
      its ``human_significant`` flag, or no ``n_eff`` under n_eff weights; its ``pas`` is NaN);
    - ``finding``: ``model, study, finding[, domain], pas, n, n_dropped`` (n = tests pooled);
    - ``study``: ``model, study[, domain], pas, n, n_tests, n_dropped`` (n = findings);
    - ``model``: ``model, pas, pas_low, pas_high, n, n_findings, n_tests, n_dropped``
      (n = studies).

    ``notes`` says, in words a page can show, what was left out and why.
    """

    test: pd.DataFrame
    finding: pd.DataFrame
    study: pd.DataFrame
    model: pd.DataFrame
    notes: tuple[str, ...] = ()


def _fisher_pool(groups: Array, pas_values: Array, weights: Array, size: int,
                 present: Array | None = None) -> tuple[Array, Array]:
    r"""Pooled PAS per group, the seed's ``aggregate_finding_pas_raw`` for every group at
    once: r = 2·PAS − 1 clamped to ±(1 − 10⁻⁶), z = atanh r,
    :math:`\bar z = \sum wz/\sum w`, pooled PAS = (tanh z̄ + 1)/2.

    Seed edge cases: a group with a single usable value keeps that value (no pooling, no
    clamp); Σw ≤ 0 falls back to the unweighted mean of z; a group with no usable value is
    0.5 (the seed's "empty → 0.5"). Because of the clamp, z is invalid only where PAS itself
    is missing, so the seed's "all z invalid → simple mean of PAS" has nothing to average
    and ends in the same 0.5. ``present`` masks items out entirely; ``weights`` may carry
    bootstrap multiplicities (a value drawn twice counts twice, also in "usable values").
    Returns (pooled PAS, usable values per group).
    """
    r = np.clip(2 * pas_values - 1, -(1 - EPSILON), 1 - EPSILON)
    with np.errstate(invalid="ignore"):
        z = np.arctanh(r)
    valid = np.isfinite(z) if present is None else np.isfinite(z) & present
    w = np.where(valid & np.isfinite(weights), weights, 0.0)

    def total(values: Array) -> Array:
        return np.bincount(groups, weights=np.where(valid, values, 0.0), minlength=size)

    n_valid = np.bincount(groups, weights=valid, minlength=size)
    sum_w = total(w)
    with np.errstate(invalid="ignore", divide="ignore"):
        z_bar = np.where(sum_w > 0, total(w * z) / sum_w, total(z) / n_valid)
        single = total(pas_values) / n_valid  # the one usable value, where there is one
        pooled = np.select([n_valid >= 2, n_valid == 1], [(np.tanh(z_bar) + 1) / 2, single],
                           0.5)
    return pooled, n_valid


def _study_pas(s_codes: Array, f_pas: Array, weights: Array, size: int, pooling: str,
               present: Array | None = None) -> Array:
    """Study PAS from finding PAS: Fisher pooling (``weights`` multiply findings drawn more
    than once by the bootstrap) or their (weighted) simple mean."""
    if pooling == "fisher":
        return _fisher_pool(s_codes, f_pas, weights, size, present)[0]
    w = weights if present is None else np.where(present, weights, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (np.bincount(s_codes, weights=w * f_pas, minlength=size)
                / np.bincount(s_codes, weights=w, minlength=size))


def _usable_weights(t: pd.DataFrame, finding_weights: str) -> tuple[Array, Array]:
    """(weight, usable-for-weighting) per test: 1 for ``"equal"``; the test's ``n_eff`` for
    ``"n_eff"``, where a missing n_eff makes the test unusable (it would otherwise weigh 0
    while being counted). A given n_eff ≤ 0 stays a weight, so the seed's "Σw ≤ 0 →
    unweighted" rule applies to it."""
    if finding_weights == "equal":
        return np.ones(len(t)), np.ones(len(t), dtype=bool)
    n_eff = t["n_eff"].to_numpy(dtype=float, na_value=np.nan)
    ok = np.isfinite(n_eff)
    return np.where(ok, n_eff, 0.0), ok


def pas(tests: pd.DataFrame, *, finding_weights: Literal["equal", "n_eff"] = "equal",
        study_pooling: Literal["fisher", "mean"] = "fisher",
        ci: Literal["analytic", "bootstrap"] | None = "analytic", n_boot: int = 1000,
        random_state: int = 0, human_prior_significant: float = 10.0,
        human_prior_null: float = 0.1, agent_prior: float = 1.0) -> PasResult:
    r"""PAS per test, finding, study and model (``docs/metrics/replication.md``).

    Per test :math:`PAS = \pi_h\pi_a + (1-\pi_h)(1-\pi_a)` (posteriors from
    :func:`prepare_tests`, with the prior odds given here). Per finding,
    :math:`r = 2\,PAS - 1` clamped to ±(1 − 10⁻⁶), :math:`z = \operatorname{atanh} r`,
    :math:`\bar z = \sum w z/\sum w` with w = 1 (``finding_weights="equal"``, as the
    released ``aggregate_study_pas``) or the test's ``n_eff`` (``"n_eff"``, the metric
    document's Step 3), back by :math:`(\tanh\bar z + 1)/2`. Per study the same Fisher
    pooling over its findings with equal weights (the released code; ``study_pooling="mean"``
    is the simple mean the document's prose describes); per model the mean over studies. Edge
    cases as :func:`_fisher_pool`: one test → its own PAS; Σw ≤ 0 → unweighted; a finding
    none of whose tests is usable → 0.5 with n = 0 (the seed's "empty → 0.5").

    A test without a usable PAS is never given a made-up one: a human Bayes factor without
    its ``human_significant`` flag has no prior (π_h NaN), and under ``"n_eff"`` weights a
    test without ``n_eff`` would weigh 0 while being counted. Such a test stays in the
    ``test`` frame with ``pas`` NaN and ``dropped`` true, is left out of every pooled value,
    and is counted in ``n_dropped`` of its finding, study and model; ``notes`` says so. A
    model none of whose tests has both posteriors is left out (PAS is unavailable for it); a
    run without posteriors gives empty tables.

    Interval of the model PAS (``pas_low``, ``pas_high``; it is a mean over studies):
    ``ci="analytic"`` (default) is the t interval of the mean over its study PAS values
    (n = studies, clipped to [0, 1]; NaN with one study). ``ci="bootstrap"`` resamples the
    model's studies with replacement and, within each drawn study, its findings, then pools
    again (``n_boot`` replicates, seeded by ``random_state``; percentile interval), so a study
    with many findings never dominates. ``None`` leaves them NaN.
    """
    check_choice("finding_weights", finding_weights, ("equal", "n_eff"))
    check_choice("study_pooling", study_pooling, ("fisher", "mean"))
    check_choice("ci", ci, (None, "analytic", "bootstrap"))
    t = prepare_tests(tests, human_prior_significant=human_prior_significant,
                      human_prior_null=human_prior_null, agent_prior=agent_prior)
    if finding_weights == "n_eff" and "n_eff" not in t:
        raise ValueError("finding_weights='n_eff' needs an n_eff column")
    pi_h, pi_a = t["pi_h"].to_numpy(float), t["pi_a"].to_numpy(float)
    posteriors = np.isfinite(pi_h) & np.isfinite(pi_a)
    has_pas = t["model"].isin(t.loc[posteriors, "model"].unique()).to_numpy()
    t = t[has_pas].reset_index(drop=True)
    pi_h, pi_a, posteriors = pi_h[has_pas], pi_a[has_pas], posteriors[has_pas]
    weight, weighable = _usable_weights(t, finding_weights)
    usable = posteriors & weighable
    value = np.where(usable, pi_h * pi_a + (1 - pi_h) * (1 - pi_a), np.nan)
    t["pas"] = value
    t["r"] = np.clip(2 * value - 1, -(1 - EPSILON), 1 - EPSILON)
    with np.errstate(invalid="ignore"):
        t["z"] = np.arctanh(t["r"].to_numpy(float))
    t["weight"] = np.where(usable, weight, np.nan)
    t["dropped"] = ~usable
    carry = ["domain"] if "domain" in t else []
    test_table = t[["model", "study", "finding", "test", *carry, "pi_h", "pi_a", "pas", "r", "z",
                    "weight", "dropped"]]

    dropped = (~usable).astype(float)
    f_codes, findings = _codes(t, ["model", "study", "finding"], carry)
    f_pas, f_n = _fisher_pool(f_codes, value, np.where(usable, weight, 0.0), len(findings))
    findings["pas"], findings["n"] = f_pas, f_n.astype(int)
    findings["n_dropped"] = np.bincount(f_codes, weights=dropped,
                                        minlength=len(findings)).astype(int)
    s_codes, studies = _codes(findings, ["model", "study"], carry)
    s_pas = _study_pas(s_codes, f_pas, np.ones(len(findings)), len(studies), study_pooling)
    studies["pas"] = s_pas
    studies["n"] = np.bincount(s_codes, minlength=len(studies))
    studies["n_tests"] = np.bincount(s_codes, weights=f_n, minlength=len(studies)).astype(int)
    studies["n_dropped"] = np.bincount(s_codes, weights=findings["n_dropped"],
                                       minlength=len(studies)).astype(int)
    m_codes, models = _codes(studies, ["model"])
    counts = np.bincount(m_codes, minlength=len(models))
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.bincount(m_codes, weights=s_pas, minlength=len(models)) / counts
        spread = np.bincount(m_codes, weights=(s_pas - mean[m_codes]) ** 2,
                             minlength=len(models))
        sd = np.sqrt(spread / (counts - 1))
    models["pas"] = mean
    if ci == "analytic":
        low, high = t_interval(mean, sd, counts)
        models["pas_low"], models["pas_high"] = np.clip(low, 0, 1), np.clip(high, 0, 1)
    elif ci == "bootstrap":
        models["pas_low"], models["pas_high"] = _pas_bootstrap(
            f_pas, s_codes, m_codes, len(studies), len(models), study_pooling, n_boot,
            random_state)
    else:
        models["pas_low"] = models["pas_high"] = np.nan
    models["n"] = counts
    models["n_findings"] = np.bincount(m_codes[s_codes], minlength=len(models))
    models["n_tests"] = np.bincount(m_codes, weights=studies["n_tests"],
                                    minlength=len(models)).astype(int)
    models["n_dropped"] = np.bincount(m_codes, weights=studies["n_dropped"],
                                      minlength=len(models)).astype(int)
    return PasResult(test_table, findings, studies, models,
                     _pas_notes(t, posteriors, weighable, finding_weights))


def _pas_notes(t: pd.DataFrame, posteriors: Array, weighable: Array,
               finding_weights: str) -> tuple[str, ...]:
    notes = []
    no_prior = ~np.isfinite(t["pi_h"].to_numpy(float))
    if "human_bf10" in t:
        no_prior &= np.isfinite(t["human_bf10"].to_numpy(dtype=float, na_value=np.nan))
    else:
        no_prior[:] = False
    if no_prior.any():
        notes.append(f"{int(no_prior.sum()):,} test(s) have a human Bayes factor but no "
                     "human_significant flag, so no prior odds: left out of PAS (not given "
                     "the 'not significant' prior)")
    other = ~posteriors & ~no_prior
    if other.any():
        notes.append(f"{int(other.sum()):,} test(s) lack a human or agent posterior: left "
                     "out of PAS")
    if finding_weights == "n_eff" and (posteriors & ~weighable).any():
        notes.append(f"{int((posteriors & ~weighable).sum()):,} test(s) have no n_eff, so "
                     "no weight under n_eff weighting: left out of PAS")
    return tuple(notes)


def _pas_bootstrap(f_pas: Array, s_codes: Array, m_codes: Array, n_studies: int,
                   n_models: int, pooling: str, n_boot: int,
                   random_state: int) -> tuple[Array, Array]:
    """Percentile interval of the model PAS over a two-stage bootstrap: each model's studies
    are resampled with replacement, and every drawn copy of a study resamples that study's
    findings independently (Davison & Hinkley 1997, §3.8, "multistage sampling"). A replicate
    lays out its drawn copies, draws each copy's findings at once (one uniform draw per
    finding slot) and pools every copy with one ``bincount`` pass. Written by hand: the two
    stages, the Fisher pooling inside each copy and every model at once are not in any
    library."""
    rng = np.random.default_rng(random_state)
    studies = WithinGroups(m_codes)  # studies resampled within their model
    order = np.argsort(s_codes, kind="stable")  # findings grouped by study
    per_study = np.bincount(s_codes, minlength=n_studies)
    first = np.concatenate([[0], np.cumsum(per_study)[:-1]]).astype(np.int64)
    sorted_pas = f_pas[order]
    draws = np.empty((n_boot, n_models))
    for b in range(n_boot):
        copies = studies.draw(rng)
        copy_study = np.repeat(np.arange(n_studies), copies)
        slots = per_study[copy_study]
        copy_of_slot = np.repeat(np.arange(copy_study.size), slots)
        study_of_slot = copy_study[copy_of_slot]
        pick = first[study_of_slot] + (rng.random(copy_of_slot.size)
                                       * per_study[study_of_slot]).astype(np.int64)
        copy_pas = _study_pas(copy_of_slot, sorted_pas[pick], np.ones(pick.size),
                              copy_study.size, pooling)
        model_of_copy = m_codes[copy_study]
        with np.errstate(invalid="ignore", divide="ignore"):
            draws[b] = (np.bincount(model_of_copy, weights=copy_pas, minlength=n_models)
                        / np.bincount(model_of_copy, minlength=n_models))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanquantile(draws, 0.025, axis=0), np.nanquantile(draws, 0.975, axis=0)


def pas_normalized(tests: pd.DataFrame, *, level: Literal["finding", "study"] = "finding",
                   finding_weights: Literal["n_eff", "equal"] = "n_eff",
                   human_prior_significant: float = 10.0, human_prior_null: float = 0.1,
                   agent_prior: float = 1.0) -> pd.DataFrame:
    r"""**Auxiliary** — the seed's legacy normalised PAS; do not report as primary.

    Per test the human ceiling :math:`c = \pi_h^2 + (1-\pi_h)^2` (the PAS of an agent that
    copies the human posterior) and the ratio :math:`r' = (2\,PAS - 1)/(2c - 1)` clamped to
    ±(1 − 10⁻⁶). Tests whose ceiling is neutral (:math:`|2c-1| < 10^{-8}`, i.e. π_h = 0.5)
    are skipped. Per finding :math:`\tanh` of the weighted mean of
    :math:`\operatorname{atanh} r'` with w = ``n_eff`` (1 where missing, as the released
    ``compute_n_eff_for_test`` falls back) or 1 (``finding_weights="equal"``); a finding with
    no usable test is 0.0 (the seed's convention). ``level="study"`` is the simple mean of
    the study's findings (the released ``aggregate_study_pas``). Returns one row per model ×
    study [× finding] with ``pas_norm`` and ``n`` (usable tests, or findings).
    """
    check_choice("level", level, ("finding", "study"))
    check_choice("finding_weights", finding_weights, ("n_eff", "equal"))
    t = prepare_tests(tests, human_prior_significant=human_prior_significant,
                      human_prior_null=human_prior_null, agent_prior=agent_prior)
    t = t[t["pi_h"].notna() & t["pi_a"].notna()].reset_index(drop=True)
    pi_h, pi_a = t["pi_h"].to_numpy(float), t["pi_a"].to_numpy(float)
    value = pi_h * pi_a + (1 - pi_h) * (1 - pi_a)
    ceiling = 2 * (pi_h ** 2 + (1 - pi_h) ** 2) - 1
    usable = np.abs(ceiling) >= NEUTRAL_CEILING
    if finding_weights == "n_eff" and "n_eff" in t:
        w = t["n_eff"].to_numpy(dtype=float, na_value=np.nan)
        w = np.where(np.isfinite(w) & (w > 0), w, 1.0)
    else:
        w = np.ones(len(t))
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.clip((2 * value - 1) / ceiling, -(1 - EPSILON), 1 - EPSILON)
        z = np.where(usable, np.arctanh(ratio), 0.0)
    w = np.where(usable, w, 0.0)
    codes, out = _codes(t, ["model", "study", "finding"])
    n = np.bincount(codes, weights=usable, minlength=len(out))
    sum_w = np.bincount(codes, weights=w, minlength=len(out))
    with np.errstate(invalid="ignore", divide="ignore"):
        z_bar = np.bincount(codes, weights=w * z, minlength=len(out)) / sum_w
    out["pas_norm"] = np.where(n > 0, np.tanh(z_bar), 0.0)
    out["n"] = n.astype(int)
    if level == "finding":
        return out
    s_codes, studies = _codes(out, ["model", "study"])
    count = np.bincount(s_codes, minlength=len(studies))
    studies["pas_norm"] = np.bincount(s_codes, weights=out["pas_norm"],
                                      minlength=len(studies)) / count
    studies["n"] = count
    return studies


# ------------------------------------------------------------------------------ ECS


def weighted_ccc(x: ArrayLike, y: ArrayLike, w: ArrayLike | None = None, *,
                 normalize_weights: bool = True) -> float:
    r"""Lin's (1989) concordance correlation coefficient with weights:

    .. math:: \rho_c = \frac{2\,\mathrm{cov}_w(x, y)}{\mathrm{var}_w x + \mathrm{var}_w y
              + (\mu_x - \mu_y)^2}

    with weighted means :math:`\mu = \sum w x/\sum w` and (co)variances
    :math:`\sum w (x-\mu_x)(y-\mu_y)/\sum w` (so scaling the weights changes nothing). Pairs
    with NaN/inf or w ≤ 0 are dropped; fewer than 2 pairs → NaN; both variances 0 → 1 if the
    means are equal, else 0; clamped to [−1, 1].

    ``normalize_weights=False`` reproduces HumanStudy-Bench's released ``weighted_ccc``:
    covariance and variances as weighted *sums* (not divided by Σw) while the mean-difference
    term stays unscaled, so its penalty shrinks as Σw grows. No library offers a weighted
    CCC, hence written by hand (one pass of ``np.bincount``, shared with :func:`ecs`).
    """
    x = np.asarray(x, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    if x.shape != y.shape:
        raise ValueError(f"x and y differ in length ({x.size} and {y.size})")
    w = np.ones_like(x) if w is None else np.asarray(w, dtype=float).ravel()
    if w.shape != x.shape:
        raise ValueError(f"w has {w.size} values for {x.size} pairs")
    codes = np.zeros(x.size, dtype=np.int64)
    return float(_grouped_ccc(codes, x, y, w, 1, normalize_weights)[0][0])


def _grouped_ccc(codes: Array, x: Array, y: Array, w: Array, size: int,
                 normalize: bool) -> tuple[Array, Array, dict[str, Array]]:
    """CCC of every group at once (bincount moments); also returns the pairs used per group
    and the moments (``vx, vy, cov, diff`` and ``kish``, Kish's effective n)."""
    ok = np.isfinite(x) & np.isfinite(y) & np.isfinite(w) & (w > 0) & (codes >= 0)
    g, x, y, w = codes[ok], x[ok], y[ok], w[ok]
    n = np.bincount(g, minlength=size).astype(float)
    sw = np.bincount(g, weights=w, minlength=size)
    with np.errstate(invalid="ignore", divide="ignore"):
        mx = np.bincount(g, weights=w * x, minlength=size) / sw
        my = np.bincount(g, weights=w * y, minlength=size) / sw
        dx, dy = x - mx[g], y - my[g]
        scale = sw if normalize else 1.0
        vx = np.bincount(g, weights=w * dx * dx, minlength=size) / scale
        vy = np.bincount(g, weights=w * dy * dy, minlength=size) / scale
        cov = np.bincount(g, weights=w * dx * dy, minlength=size) / scale
        diff = mx - my
        ccc = 2 * cov / (vx + vy + diff * diff)
        kish = sw * sw / np.bincount(g, weights=w * w, minlength=size)
    # Rounding leaves a constant vector with a variance of ~1e-33, not 0: compare with its
    # scale so that "no spread" is recognised as such.
    tiny_x = vx <= 1e-24 * np.maximum(mx * mx, 1.0) * (1.0 if normalize else sw)
    tiny_y = vy <= 1e-24 * np.maximum(my * my, 1.0) * (1.0 if normalize else sw)
    same = np.isclose(mx, my, rtol=1e-12, atol=1e-12)
    ccc = np.where(tiny_x & tiny_y, np.where(same, 1.0, 0.0),
                   np.where(tiny_x | tiny_y, 0.0, ccc))
    ccc = np.where(n >= 2, np.clip(ccc, -1.0, 1.0), np.nan)
    return ccc, n, {"vx": vx, "vy": vy, "cov": cov, "diff": diff, "kish": kish}


def structure_weights(t: pd.DataFrame) -> Array:
    """1/(findings in the test's study) × 1/(tests in its finding), per model, counted over the
    rows given (pass the valid pairs only, as :func:`ecs` does)."""
    keys = t[["model", "study", "finding"]]
    finding = keys.groupby(["model", "study", "finding"], observed=True, sort=False).ngroup()
    study = keys.groupby(["model", "study"], observed=True, sort=False).ngroup().to_numpy()
    f = finding.to_numpy()
    tests_in_finding = np.bincount(f)[f]
    finding_study = np.zeros(f.max() + 1 if f.size else 0, dtype=np.int64)
    finding_study[f] = study
    findings_in_study = np.bincount(finding_study)[study]
    return 1.0 / (findings_in_study * tests_in_finding)


def _lin_interval(ccc: Array, n: Array, mom: dict[str, Array], normalize: bool,
                  level: float = 0.95) -> tuple[Array, Array]:
    r"""Lin's (1989, 2000 erratum) interval on :math:`z = \operatorname{atanh}\rho_c`:

    .. math:: \mathrm{var}(z) = \frac{1}{n-2}\Bigl[\frac{(1-r^2)\rho_c^2}{(1-\rho_c^2)r^2}
              + \frac{2\rho_c^3(1-\rho_c)u^2}{r(1-\rho_c^2)^2}
              - \frac{\rho_c^4u^4}{2r^2(1-\rho_c^2)^2}\Bigr],\quad
              u = \frac{\mu_x-\mu_y}{\sqrt{\sigma_x\sigma_y}}

    with r the Pearson correlation and σ the population standard deviations. With unequal
    weights the weighted moments stand in for the sample ones and n is Kish's effective
    sample size :math:`(\sum w)^2/\sum w^2` (= the number of pairs when weights are equal), a
    plug-in approximation; ``ci="bootstrap"`` avoids it. With ``normalize_weights=False`` the
    statistic is not Lin's CCC and no analytic interval is given (NaN). Also NaN for
    n_eff ≤ 3 and where r is undefined (an effect profile without spread); identical
    profiles (ρc = 1) get [1, 1].
    """
    if not normalize:
        return np.full(ccc.shape, np.nan), np.full(ccc.shape, np.nan)
    vx, vy, cov, diff = mom["vx"], mom["vy"], mom["cov"], mom["diff"]
    n_eff = np.minimum(mom["kish"], n)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = cov / np.sqrt(vx * vy)
        u = diff / np.sqrt(np.sqrt(vx * vy))
        rc = np.clip(ccc, -0.999999, 0.999999)
        one = 1 - rc * rc
        var = ((1 - r * r) * rc * rc / (one * r * r)
               + 2 * rc ** 3 * (1 - rc) * u * u / (r * one * one)
               - rc ** 4 * u ** 4 / (2 * r * r * one * one)) / (n_eff - 2)
        half = stats.norm.ppf((1 + level) / 2) * np.sqrt(var)
        z = np.arctanh(rc)
        low, high = np.tanh(z - half), np.tanh(z + half)
    enough = n_eff > 3
    ok = enough & np.isfinite(low) & np.isfinite(high)
    exact = enough & (ccc >= 1.0)  # identical profiles: no spread left to estimate
    return (np.where(exact, 1.0, np.where(ok, low, np.nan)),
            np.where(exact, 1.0, np.where(ok, high, np.nan)))


def ecs(tests: pd.DataFrame, *, level: Literal["overall", "domain", "study"] = "overall",
        weighting: Literal["structure", "equal"] = "structure", normalize_weights: bool = True,
        ci: Literal["analytic", "bootstrap"] | None = "analytic", n_boot: int = 1000,
        random_state: int = 0) -> pd.DataFrame:
    r"""Effect Consistency Score: weighted Lin's CCC (:func:`weighted_ccc`) of agent d on
    human d over the tests, per model and ``level`` (SPEC 2.2).

    ``weighting="structure"`` gives a test 1/(findings in its study) × 1/(tests in its
    finding), so every study and every finding within it weighs the same; ``"equal"`` gives
    every test weight 1. Weights and counts are taken per model after invalid pairs are
    dropped (:func:`structure_weights`). ``level="overall"`` pools every test of the model,
    ``"domain"`` each domain, ``"study"`` each study; a study with fewer than 3 valid pairs
    is NaN. The published per-study ECS of HumanStudy-Bench is ``level="study",
    weighting="equal", normalize_weights=False``.

    Interval (``ecs_low``, ``ecs_high``, 95%):

    - ``ci="analytic"``: Lin's z-transform interval. Unweighted (``weighting="equal"``) it is
      Lin's formula exactly; **with structure weights** the weighted moments are plugged into
      it with Kish's effective n = (Σw)²/Σw² in place of the number of pairs, an
      approximation (see :func:`_lin_interval`). None for ``normalize_weights=False``.
    - ``ci="bootstrap"``: a cluster bootstrap: the studies of each model × group are
      resampled with replacement (``n_boot`` times, seeded by ``random_state``) and each
      drawn study brings all its tests; at ``level="study"`` the tests within the study are
      resampled. Percentile interval; NaN for a group with fewer than 2 clusters.
    - ``None``: NaN.

    Returns ``model[, domain | study], ecs, ecs_low, ecs_high, n, n_kish, n_studies`` with n
    the valid pairs, n_kish Kish's effective n of their weights (= n under equal weights; what
    the analytic interval rests on) and n_studies the studies they come from; a group without
    a valid pair is kept with NaN and n = 0.
    """
    check_choice("level", level, ("overall", "domain", "study"))
    check_choice("weighting", weighting, ("structure", "equal"))
    check_choice("ci", ci, (None, "analytic", "bootstrap"))
    t = prepare_tests(tests).reset_index(drop=True)
    if level == "domain" and "domain" not in t:
        raise ValueError("level='domain' needs a domain column")
    x, y = t["d_h"].to_numpy(float), t["d_a"].to_numpy(float)
    valid = np.isfinite(x) & np.isfinite(y)
    w = np.zeros(len(t))  # an invalid pair weighs 0 and so drops out; its group stays (n = 0)
    w[valid] = structure_weights(t[valid]) if weighting == "structure" else 1.0
    group_cols = ["model"] + ({"overall": [], "domain": ["domain"], "study": ["study"]}[level])
    codes, out = _codes(t, group_cols)
    value, n, mom = _grouped_ccc(codes, x, y, w, len(out), normalize_weights)
    if level == "study":
        value = np.where(n >= MIN_STUDY_PAIRS, value, np.nan)
    out["ecs"] = value
    # Studies within each group: group code x study code, numbered 0..k-1.
    span = len(t) + 1
    key = codes * span + pd.factorize(t["study"])[0]
    study_codes = np.unique(key, return_inverse=True)[1].astype(np.int64)
    n_studies = np.bincount(np.unique(key[valid]) // span, minlength=len(out))
    if ci == "analytic":
        out["ecs_low"], out["ecs_high"] = _lin_interval(value, n, mom, normalize_weights)
    elif ci == "bootstrap":
        # At study level the unit is the test: every row is one (keys are unique per model).
        units = np.arange(len(t), dtype=np.int64) if level == "study" else study_codes
        low, high = _ecs_bootstrap(codes, units, x, y, w, len(out), normalize_weights, n_boot,
                                   random_state)
        clusters = n if level == "study" else n_studies
        defined = np.isfinite(value) & (clusters >= 2)
        out["ecs_low"] = np.where(defined, low, np.nan)
        out["ecs_high"] = np.where(defined, high, np.nan)
    else:
        out["ecs_low"] = out["ecs_high"] = np.nan
    out["n"] = n.astype(int)
    out["n_kish"] = np.where(n > 0, mom["kish"], 0.0)
    out["n_studies"] = n_studies
    return out


def _ecs_bootstrap(codes: Array, units: Array, x: Array, y: Array, w: Array, size: int,
                   normalize: bool, n_boot: int, random_state: int) -> tuple[Array, Array]:
    """Percentile interval over resampled clusters (``units``: studies, or tests) within each
    group; a cluster drawn k times counts k times. Written by hand: the resampling is
    stratified by group, and each cluster's weighted moment sums (Σw, Σwx, Σwy, Σwx², Σwy²,
    Σwxy) are taken once, so a replicate costs six bincounts over clusters, not tests."""
    rng = np.random.default_rng(random_state)
    ok = np.isfinite(x) & np.isfinite(y) & np.isfinite(w) & (w > 0)
    units, x, y, w = units[ok], x[ok], y[ok], w[ok]
    n_units = int(units.max()) + 1 if units.size else 0
    owner = np.zeros(n_units, dtype=np.int64)
    owner[units] = codes[ok]
    moments = np.stack([np.bincount(units, weights=v, minlength=n_units)
                        for v in (w, w * x, w * y, w * x * x, w * y * y, w * x * y,
                                  np.ones_like(w))])
    clusters = WithinGroups(owner)  # clusters resampled within their model x level group
    draws = np.empty((n_boot, size))
    for b in range(n_boot):
        mult = clusters.draw(rng).astype(float)
        sums = [np.bincount(owner, weights=mult * m, minlength=size) for m in moments]
        draws[b] = _ccc_from_sums(*sums, normalize=normalize)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanquantile(draws, 0.025, axis=0), np.nanquantile(draws, 0.975, axis=0)


def _ccc_from_sums(sw: Array, swx: Array, swy: Array, swxx: Array, swyy: Array, swxy: Array,
                   n: Array, *, normalize: bool) -> Array:
    """Weighted CCC from raw moment sums (one pass; for bootstrap replicates, where the
    two-pass accuracy of :func:`_grouped_ccc` is not needed). Same edge rules."""
    with np.errstate(invalid="ignore", divide="ignore"):
        mx, my = swx / sw, swy / sw
        scale = 1.0 if normalize else sw
        vx = np.maximum(swxx / sw - mx * mx, 0.0) * scale
        vy = np.maximum(swyy / sw - my * my, 0.0) * scale
        cov = (swxy / sw - mx * my) * scale
        diff = mx - my
        ccc = 2 * cov / (vx + vy + diff * diff)
    # one-pass sums leave ~1e-16 relative noise on a constant vector's variance
    tiny_x = vx <= 1e-12 * np.maximum(mx * mx, 1.0) * scale
    tiny_y = vy <= 1e-12 * np.maximum(my * my, 1.0) * scale
    same = np.isclose(mx, my, rtol=1e-12, atol=1e-12)
    ccc = np.where(tiny_x & tiny_y, np.where(same, 1.0, 0.0),
                   np.where(tiny_x | tiny_y, 0.0, ccc))
    return np.where(n >= 2, np.clip(ccc, -1.0, 1.0), np.nan)


def ecs_strict(tests: pd.DataFrame, *, level: Literal["finding", "study"] = "finding",
               ) -> pd.DataFrame:
    r"""**Auxiliary** — the legacy ECS_Strict (RMS-Stouffer) of HumanStudy-Bench's metric
    document (``docs/metrics/replication.md``); do not report as primary.

    Per test :math:`Z = (d_a - d_h)/\sqrt{SE_a^2 + SE_h^2}`, each SE the one-sample standard
    error of Cohen's d (:func:`se_cohens_d`, :math:`\sqrt{1/n + d^2/(2n)}`) over that side's
    own sample size: ``agent_n`` and ``human_n`` where the run gives them, else the test's
    ``n_eff`` for both (the released code derives each test type's SE from its own sample
    sizes; a run that carries only n_eff can do no better). Tests with a non-finite Z are
    skipped. Per finding with K usable tests (released ``aggregate_finding_ecs``):
    :math:`Z_{rms} = \sqrt{\overline{Z^2}}`; ``ecs_strict`` = :math:`2(1-\Phi(|Z|))` for
    K = 1 and :math:`P(\chi^2_K \ge K Z_{rms}^2) = P(\chi^2_K \ge \sum Z^2)` for K > 1.

    What the number is: a p-value. For K = 1 it is the two-sided p of "the agent's effect
    equals the human's"; for K > 1 it is the p of the chi-square test that *all K* agent
    effects equal the human ones (independent tests assumed). It is **not** the probability
    that the effects agree, nor (for K > 1) the probability of a gap as large as
    :math:`Z_{rms}`; a large value means only that the data cannot reject equality, which
    small samples give easily.

    Per study (``level="study"``, released ``aggregate_study_ecs_strict``): one finding keeps
    its p; m > 1 findings combine by Stouffer, :math:`Z_j = \Phi^{-1}(1-p_j)` (±10 for p = 0
    or 1), :math:`p = 1 - \Phi(\sum Z_j/\sqrt m)`. A finding or study without a usable test
    is NaN (the released code writes 0.0). Returns model × study [× finding] with
    ``ecs_strict``, ``n`` and, per finding, ``z_rms``.
    """
    check_choice("level", level, ("finding", "study"))
    t = prepare_tests(tests)
    if not ({"human_n", "agent_n"} <= set(t.columns) or "n_eff" in t):
        raise ValueError("ecs_strict needs sample sizes for the standard errors: human_n "
                         "and agent_n, or n_eff")

    def sizes(name: str) -> Array:
        fallback = (t["n_eff"].to_numpy(dtype=float, na_value=np.nan) if "n_eff" in t
                    else np.full(len(t), np.nan))
        if name not in t:
            return fallback
        own = t[name].to_numpy(dtype=float, na_value=np.nan)
        return np.where(np.isfinite(own), own, fallback)

    n_h, n_a = sizes("human_n"), sizes("agent_n")
    d_h, d_a = t["d_h"].to_numpy(float), t["d_a"].to_numpy(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        z = (d_a - d_h) / np.sqrt(se_cohens_d(d_a, n_a) ** 2 + se_cohens_d(d_h, n_h) ** 2)
    ok = np.isfinite(z)
    codes, out = _codes(t, ["model", "study", "finding"])
    count = np.bincount(codes, weights=ok, minlength=len(out))
    chi2 = np.bincount(codes, weights=np.where(ok, z * z, 0.0), minlength=len(out))
    with np.errstate(invalid="ignore", divide="ignore"):
        rms = np.sqrt(chi2 / count)
        p = np.where(count == 1, 2 * stats.norm.sf(rms), stats.chi2.sf(chi2, count))
    out["z_rms"] = np.where(count > 0, rms, np.nan)
    out["ecs_strict"] = np.where(count > 0, p, np.nan)
    out["n"] = count.astype(int)
    if level == "finding":
        return out
    usable = out["ecs_strict"].notna().to_numpy()
    p_f = out["ecs_strict"].to_numpy(float)
    z_f = stats.norm.isf(np.clip(p_f, 0.0, 1.0))
    z_f = np.where(np.isposinf(z_f), STOUFFER_CAP, np.where(np.isneginf(z_f), -STOUFFER_CAP,
                                                            z_f))
    s_codes, studies = _codes(out, ["model", "study"])
    m = np.bincount(s_codes, weights=usable, minlength=len(studies))
    z_sum = np.bincount(s_codes, weights=np.where(usable, z_f, 0.0), minlength=len(studies))
    p_sum = np.bincount(s_codes, weights=np.where(usable, p_f, 0.0), minlength=len(studies))
    with np.errstate(invalid="ignore", divide="ignore"):
        combined = stats.norm.sf(z_sum / np.sqrt(m))
    studies["ecs_strict"] = np.select([m == 1, m > 1], [p_sum, combined], np.nan)
    studies["n"] = m.astype(int)
    return studies


# ------------------------------------------------------------------------------ summaries


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
}


def summary_leaderboard(frame: pd.DataFrame, *, n_boot: int = 1000,
                        random_state: int = 0) -> pd.DataFrame:
    """The leaderboard of a ``replication_summary`` run: one row per configuration.

    Columns: ``model``; ``config_pas``, ``config_ecs`` — the published configuration-level
    values, no interval, NaN when the file lacks them; ``mean_study_pas``, ``mean_study_ecs``
    — the mean of the published per-study values, with t intervals over studies
    (``_low``/``_high``) and counts ``n_pas``, ``n_ecs``; ``n_studies``; ``tokens`` and
    ``cost`` (US dollars), the sums of the published per-study values (they equal the
    published configuration totals); ``rank`` (1 = best, ties share the mean rank) with its
    bootstrap interval ``rank_low``/``rank_high``, ``ranked_by`` (which column), ``n_dropped``
    (studies left out of the rank bootstrap because this configuration lacks them),
    ``few_items`` (ranked on fewer than 30 studies) and ``no_scores`` (no score at all; such
    configurations come last, unranked).

    Ranking is by ``config_pas`` when the file has it, else by ``mean_study_pas`` (the
    published ``pas_raw`` is the mean of its study values, so the rank bootstrap resamples
    studies for that same statistic, :func:`kbench_core.compare.rank_intervals`). The
    published configuration ECS is *not* the mean of the per-study ECS (HumanStudy-Bench pools
    every test): the two are different numbers and keep different names
    (:data:`SUMMARY_LABELS`). Finding rows are left out; nothing is pooled or recomputed.
    """
    from kbench_core.compare import FEW_ITEMS, rank_intervals

    studies = study_rows(frame)
    grouped = studies.groupby("model", observed=True, sort=True)
    out = pd.DataFrame({"n_studies": grouped["study"].nunique()})
    for metric in ("pas", "ecs"):
        name = f"mean_study_{metric}"
        if metric in studies:
            moments = grouped[metric].agg(["mean", "std", "count"])
            low, high = t_interval(moments["mean"], moments["std"], moments["count"])
            bound = (0.0, 1.0) if metric == "pas" else (-1.0, 1.0)
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
    if scored["model"].nunique() >= 2:
        try:
            ranks = rank_intervals(scored.assign(model=scored["model"].astype(str)), "pas",
                                   item="study", lower_is_better=False, n_boot=n_boot,
                                   random_state=random_state)
        except ValueError:  # no study shared by every configuration
            ranks = None
        if ranks is not None:
            lookup = ranks.set_index("model")
            at = out["model"].map(lambda m: m in lookup.index).to_numpy(bool)
            for column in ("rank_low", "rank_high", "n_dropped"):
                out.loc[at, column] = out.loc[at, "model"].map(lookup[column]).to_numpy()
    out["n_dropped"] = out["n_dropped"].astype(int)
    out["few_items"] = ranked & (out["n_pas"] < FEW_ITEMS)
    out = out.sort_values(["no_scores", "rank", "model"], na_position="last", kind="stable")
    first = ["model", "rank", "rank_low", "rank_high", "ranked_by", "config_pas", "config_ecs",
             "mean_study_pas", "mean_study_pas_low", "mean_study_pas_high", "n_pas",
             "mean_study_ecs", "mean_study_ecs_low", "mean_study_ecs_high", "n_ecs",
             "n_studies"]
    rest = [c for c in out.columns if c not in first]
    return out[first + rest].reset_index(drop=True)
