r"""Human–agent replication metrics (SPEC 2.2): PAS with Fisher-z pooling and ECS as weighted
Lin's concordance correlation, per model, vectorised over all models at once.

Source: HumanStudy-Bench's metric document (``seeds/replication_metrics.md``; its formulas were
lost in extraction and SPEC 2.2 restores the ones used here) and its ``stats_lib.py`` as the
document describes it.

- **Effect sizes** are compared on Cohen's d scale (:func:`effect_to_d`).
- **PAS** (Probability of Agreement State) per test is
  :math:`\pi_h\pi_a + (1-\pi_h)(1-\pi_a)`, the probability that human and agent are in the
  same state (both an effect, or both none); pooled test → finding → study on Fisher's z scale,
  then averaged over studies per model.
- **ECS** (Effect Consistency Score) is Lin's concordance correlation between human and agent d
  over the tests, weighted so that each study and each finding within it counts equally.

Auxiliary (the seed's legacy metrics, *not* to be reported as primary): normalised PAS against
the human ceiling, and ECS_Strict from RMS-pooled z-differences.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats

from kbench_core.stats import WithinGroups, check_choice

__all__ = [
    "EPSILON",
    "PasResult",
    "ecs",
    "ecs_strict",
    "effect_to_d",
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
    "weighted_ccc",
]

EPSILON = 1e-6  # r is clamped to ±(1 − ε) before atanh (seed: "prevents infinities")
KEY = ["model", "study", "finding", "test"]


# ------------------------------------------------------------------------------ effect sizes


def effect_to_d(value: np.ndarray | pd.Series | float,
                test_type: np.ndarray | pd.Series | str) -> np.ndarray:
    r"""Cohen's d-equivalent of a native effect size (seed, ``effect_to_d_equiv``).

    t, f, anova: d as given; correlation (Fisher z): :math:`r = \tanh z`,
    :math:`d = 2r/\sqrt{1-r^2}`; chi2 (log odds ratio): :math:`d = \log OR\cdot\sqrt3/\pi`;
    mann_whitney (rank-biserial r): :math:`d = 2r/\sqrt{1-r^2}`; binomial (proportion p):
    :math:`d = 2(p - 0.5)/\sqrt{0.25}`. Unknown types give NaN.
    """
    v = np.asarray(value, dtype=float)
    kind = np.asarray(test_type, dtype=object)
    v, kind = np.broadcast_arrays(v, kind)
    r = np.where(kind == "correlation", np.tanh(v), v)
    with np.errstate(invalid="ignore", divide="ignore"):
        from_r = 2 * r / np.sqrt(1 - r * r)
    return np.select(
        [np.isin(kind, ["t", "f", "anova"]), np.isin(kind, ["correlation", "mann_whitney"]),
         kind == "chi2", kind == "binomial"],
        [v, from_r, v * np.sqrt(3) / np.pi, 2 * (v - 0.5) / np.sqrt(0.25)], np.nan)


def se_cohens_d(d: float | np.ndarray, n1: float | np.ndarray,
                n2: float | np.ndarray | None = None) -> np.ndarray:
    r"""Standard error of Cohen's d (Hedges & Olkin 1985): independent samples
    :math:`\sqrt{(n_1+n_2)/(n_1n_2) + d^2/(2(n_1+n_2))}`; one-sample or paired (``n2`` None)
    :math:`\sqrt{1/n + d^2/(2n)}`."""
    d = np.asarray(d, dtype=float)
    n1 = np.asarray(n1, dtype=float)
    if n2 is None:
        return np.sqrt(1 / n1 + d * d / (2 * n1))
    n2 = np.asarray(n2, dtype=float)
    return np.sqrt((n1 + n2) / (n1 * n2) + d * d / (2 * (n1 + n2)))


def se_fisher_z(n: float | np.ndarray) -> np.ndarray:
    r"""Standard error of Fisher's z of a correlation over n pairs: :math:`1/\sqrt{n-3}`."""
    n = np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 3, 1 / np.sqrt(n - 3), np.nan)


def log_odds_ratio(a: float, b: float, c: float, d: float) -> tuple[float, float]:
    r"""Log odds ratio of a 2×2 table [[a, b], [c, d]] and its standard error
    :math:`\sqrt{1/a+1/b+1/c+1/d}`, with the Haldane–Anscombe correction (+0.5 to every cell)
    when a cell is 0."""
    cells = np.array([a, b, c, d], dtype=float)
    if (cells == 0).any():
        cells = cells + 0.5
    a, b, c, d = cells
    return float(np.log(a * d / (b * c))), float(np.sqrt((1 / cells).sum()))


def se_log_odds_ratio(a: float, b: float, c: float, d: float) -> float:
    """Standard error of the log odds ratio (see :func:`log_odds_ratio`)."""
    return log_odds_ratio(a, b, c, d)[1]


def se_rank_biserial(n1: float | np.ndarray, n2: float | np.ndarray) -> np.ndarray:
    r"""Standard error of the rank-biserial r of a Mann–Whitney test under the null:
    :math:`\sqrt{(n_1+n_2+1)/(3n_1n_2)}` (from the variance of U)."""
    n1 = np.asarray(n1, dtype=float)
    n2 = np.asarray(n2, dtype=float)
    return np.sqrt((n1 + n2 + 1) / (3 * n1 * n2))


def se_proportion(p: float | np.ndarray, n: float | np.ndarray) -> np.ndarray:
    r"""Standard error of a proportion: :math:`\sqrt{p(1-p)/n}`."""
    p = np.asarray(p, dtype=float)
    return np.sqrt(p * (1 - p) / np.asarray(n, dtype=float))


def posterior_from_bf(bf10: float | np.ndarray, prior_odds: float | np.ndarray) -> np.ndarray:
    r"""Posterior probability of an effect from a Bayes factor and prior odds:
    :math:`\pi = BF\cdot o/(1 + BF\cdot o)`."""
    odds = np.asarray(bf10, dtype=float) * np.asarray(prior_odds, dtype=float)
    return odds / (1 + odds)


def prepare_tests(tests: pd.DataFrame, *, human_prior_significant: float = 10.0,
                  human_prior_null: float = 0.1, agent_prior: float = 1.0) -> pd.DataFrame:
    """The tests with ``d_h, d_a`` (Cohen's d) and ``pi_h, pi_a`` (posteriors) filled from
    whichever columns the run gives (SPEC 1.2): ``human_d/agent_d`` as given, else
    :func:`effect_to_d` of the native effects; ``human_pi/agent_pi`` as given, else from Bayes
    factors with prior odds 10 for a human finding reported significant, 0.1 otherwise, 1 for
    the agent."""
    out = tests.copy()
    if {"human_d", "agent_d"} <= set(out.columns):
        out["d_h"], out["d_a"] = out["human_d"].astype(float), out["agent_d"].astype(float)
    elif {"human_effect", "agent_effect", "test_type"} <= set(out.columns):
        kind = out["test_type"].astype(object)
        out["d_h"] = effect_to_d(out["human_effect"], kind)
        out["d_a"] = effect_to_d(out["agent_effect"], kind)
    else:
        out["d_h"] = out["d_a"] = np.nan
    if {"human_pi", "agent_pi"} <= set(out.columns):
        out["pi_h"], out["pi_a"] = out["human_pi"].astype(float), out["agent_pi"].astype(float)
    elif {"human_bf10", "agent_bf10"} <= set(out.columns):
        significant = (out["human_significant"].astype("boolean").fillna(False).to_numpy(bool)
                       if "human_significant" in out else np.zeros(len(out), bool))
        odds = np.where(significant, human_prior_significant, human_prior_null)
        out["pi_h"] = posterior_from_bf(out["human_bf10"], odds)
        out["pi_a"] = posterior_from_bf(out["agent_bf10"], agent_prior)
    else:
        out["pi_h"] = out["pi_a"] = np.nan
    return out


# ------------------------------------------------------------------------------ PAS


@dataclass(frozen=True)
class PasResult:
    """PAS at every level: ``test`` (per test ``pas``, ``r``, ``z``, ``weight``), ``finding``,
    ``study`` and ``model`` (each with ``pas`` and ``n``, the tests or findings or studies it
    pools); the model level carries ``pas_low``/``pas_high`` with ``ci="bootstrap"``."""

    test: pd.DataFrame
    finding: pd.DataFrame
    study: pd.DataFrame
    model: pd.DataFrame


def _fisher_pool(groups: np.ndarray, pas_values: np.ndarray, weights: np.ndarray,
                 size: int) -> tuple[np.ndarray, np.ndarray]:
    """Pooled PAS per group: weighted mean of atanh(clamp(2·PAS − 1)) back through
    (tanh z̄ + 1)/2. Seed edge cases: tests with a non-finite z are skipped; Σw ≤ 0 falls back
    to the unweighted mean of z; a group whose z are all invalid takes the simple mean of its
    PAS; a group with no test at all is 0.5. Returns (pooled PAS, tests used)."""
    r = np.clip(2 * pas_values - 1, -(1 - EPSILON), 1 - EPSILON)
    with np.errstate(invalid="ignore"):
        z = np.arctanh(r)
    valid = np.isfinite(z)
    w = np.where(valid, weights, 0.0)
    sum_w = np.bincount(groups, weights=w, minlength=size)
    sum_wz = np.bincount(groups, weights=np.where(valid, w * z, 0.0), minlength=size)
    n_valid = np.bincount(groups, weights=valid, minlength=size)
    sum_z = np.bincount(groups, weights=np.where(valid, z, 0.0), minlength=size)
    finite_pas = np.isfinite(pas_values)
    n_pas = np.bincount(groups, weights=finite_pas, minlength=size)
    sum_pas = np.bincount(groups, weights=np.where(finite_pas, pas_values, 0.0), minlength=size)
    with np.errstate(invalid="ignore", divide="ignore"):
        z_bar = np.where(sum_w > 0, sum_wz / sum_w, sum_z / n_valid)
        pooled = np.where(n_valid > 0, (np.tanh(z_bar) + 1) / 2,
                          np.where(n_pas > 0, sum_pas / n_pas, 0.5))
    return pooled, n_valid


def _codes(frame: pd.DataFrame, columns: Sequence[str]) -> tuple[np.ndarray, pd.DataFrame]:
    """Group codes of ``columns`` in order of first appearance, and the groups (as text)."""
    keys = frame[list(columns)]
    codes = keys.groupby(list(columns), sort=False, observed=True,
                         dropna=False).ngroup().to_numpy(np.int64)
    first = np.unique(codes, return_index=True)[1]
    groups = keys.iloc[first].astype(str).reset_index(drop=True)
    return codes, groups



def pas(tests: pd.DataFrame, *, finding_weights: Literal["equal", "n_eff"] = "equal",
        study_pooling: Literal["fisher", "mean"] = "fisher",
        ci: Literal["bootstrap"] | None = None, n_boot: int = 1000, random_state: int = 0,
        **priors: float) -> PasResult:
    r"""PAS per test, finding, study and model (SPEC 2.2).

    Per test :math:`PAS = \pi_h\pi_a + (1-\pi_h)(1-\pi_a)`. Per finding,
    :math:`r = 2\,PAS - 1` clamped to ±(1 − 10⁻⁶), :math:`z = \operatorname{atanh} r`,
    :math:`\bar z = \sum w z/\sum w` with w = 1 (``finding_weights="equal"``) or the test's
    ``n_eff`` (the seed's prose), back by :math:`(\tanh\bar z + 1)/2`. Per study the same
    Fisher pooling over its findings with equal weights (``study_pooling="mean"`` is the
    seed's simple mean of finding PAS); per model the mean over studies. Edge cases as in
    :func:`_fisher_pool`. Tests without both posteriors are left out. ``ci="bootstrap"``
    resamples findings within each model (``n_boot`` times) for the model-level interval.
    """
    check_choice("finding_weights", finding_weights, ("equal", "n_eff"))
    check_choice("study_pooling", study_pooling, ("fisher", "mean"))
    check_choice("ci", ci, (None, "bootstrap"))
    t = prepare_tests(tests, **priors)
    t = t[t["pi_h"].notna() & t["pi_a"].notna()].reset_index(drop=True)
    pi_h, pi_a = t["pi_h"].to_numpy(float), t["pi_a"].to_numpy(float)
    t["pas"] = pi_h * pi_a + (1 - pi_h) * (1 - pi_a)
    t["r"] = np.clip(2 * t["pas"] - 1, -(1 - EPSILON), 1 - EPSILON)
    t["z"] = np.arctanh(t["r"])
    if finding_weights == "n_eff":
        if "n_eff" not in t:
            raise ValueError("finding_weights='n_eff' needs an n_eff column")
        t["weight"] = t["n_eff"].astype(float).fillna(0.0)
    else:
        t["weight"] = 1.0
    keep = ["model", "study", "finding", "test", *(["domain"] if "domain" in t else []),
            "pi_h", "pi_a", "pas", "r", "z", "weight"]
    test_table = t[keep]

    f_codes, findings = _codes(t, ["model", "study", "finding"])
    f_pas, f_n = _fisher_pool(f_codes, t["pas"].to_numpy(float), t["weight"].to_numpy(float),
                              len(findings))
    findings["pas"], findings["n"] = f_pas, f_n.astype(int)
    s_codes, studies = _codes(findings, ["model", "study"])
    s_pas = _study_pas(s_codes, f_pas, np.ones(len(findings)), len(studies), study_pooling)
    studies["pas"] = s_pas
    studies["n"] = np.bincount(s_codes, minlength=len(studies))
    m_codes, models = _codes(studies, ["model"])
    counts = np.bincount(m_codes, minlength=len(models))
    models["pas"] = np.bincount(m_codes, weights=s_pas, minlength=len(models)) / counts
    models["n"] = counts
    models["n_findings"] = np.bincount(m_codes[s_codes], minlength=len(models))
    if ci == "bootstrap":
        models["pas_low"], models["pas_high"] = _pas_bootstrap(
            f_pas, s_codes, m_codes, len(studies), len(models), study_pooling, n_boot,
            random_state)
    return PasResult(test_table, findings, studies, models)


def _study_pas(s_codes: np.ndarray, f_pas: np.ndarray, weights: np.ndarray, size: int,
               pooling: str) -> np.ndarray:
    if pooling == "fisher":
        return _fisher_pool(s_codes, f_pas, weights, size)[0]
    with np.errstate(invalid="ignore", divide="ignore"):
        return (np.bincount(s_codes, weights=weights * f_pas, minlength=size)
                / np.bincount(s_codes, weights=weights, minlength=size))


def _pas_bootstrap(f_pas: np.ndarray, s_codes: np.ndarray, m_codes: np.ndarray, n_studies: int,
                   n_models: int, pooling: str, n_boot: int,
                   random_state: int) -> tuple[np.ndarray, np.ndarray]:
    """Model PAS over resamples of each model's findings (multiplicities as weights; a study
    none of whose findings is drawn drops out of that replicate's mean). Written by hand:
    the resampling unit (findings within a model) and the two pooling stages are ours."""
    rng = np.random.default_rng(random_state)
    findings = WithinGroups(m_codes[s_codes])  # findings resampled within their model
    draws = np.empty((n_boot, n_models))
    for b in range(n_boot):
        weights = findings.draw(rng).astype(float)
        s_pas = _study_pas(s_codes, f_pas, weights, n_studies, pooling)
        present = np.bincount(s_codes, weights=weights, minlength=n_studies) > 0
        with np.errstate(invalid="ignore", divide="ignore"):
            draws[b] = (np.bincount(m_codes, weights=np.where(present, s_pas, 0.0),
                                    minlength=n_models)
                        / np.bincount(m_codes, weights=present, minlength=n_models))
    return np.nanquantile(draws, 0.025, axis=0), np.nanquantile(draws, 0.975, axis=0)


def pas_normalized(tests: pd.DataFrame, **priors: float) -> pd.DataFrame:
    r"""**Auxiliary** (the seed's legacy normalised PAS; do not report as primary).

    Per test the human ceiling :math:`c = \pi_h^2 + (1-\pi_h)^2` (the PAS of an agent that
    copies the human posterior) and the ratio :math:`r' = (2\,PAS - 1)/(2c - 1)` clamped to
    ±(1 − 10⁻⁶); tests whose ceiling is neutral (:math:`|2c-1| < 10^{-6}`, i.e. πh = 0.5) are
    skipped; per finding :math:`\tanh` of the mean :math:`\operatorname{atanh} r'` (0 when no
    test is usable). Our reconstruction of formulas the seed lost in extraction. Returns one
    row per model × study × finding with ``pas_norm`` and ``n``.
    """
    t = prepare_tests(tests, **priors)
    t = t[t["pi_h"].notna() & t["pi_a"].notna()].reset_index(drop=True)
    pi_h, pi_a = t["pi_h"].to_numpy(float), t["pi_a"].to_numpy(float)
    value = pi_h * pi_a + (1 - pi_h) * (1 - pi_a)
    ceiling = 2 * (pi_h ** 2 + (1 - pi_h) ** 2) - 1
    usable = np.abs(ceiling) >= EPSILON
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.clip((2 * value - 1) / ceiling, -(1 - EPSILON), 1 - EPSILON)
        z = np.where(usable, np.arctanh(ratio), 0.0)
    codes, out = _codes(t, ["model", "study", "finding"])
    n = np.bincount(codes, weights=usable, minlength=len(out))
    with np.errstate(invalid="ignore", divide="ignore"):
        out["pas_norm"] = np.where(n > 0, np.tanh(np.bincount(codes, weights=z,
                                                              minlength=len(out)) / n), 0.0)
    out["n"] = n.astype(int)
    return out


# ------------------------------------------------------------------------------ ECS


def weighted_ccc(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray,
                 w: Sequence[float] | np.ndarray | None = None, *,
                 normalize_weights: bool = True) -> float:
    r"""Lin's concordance correlation coefficient with weights:

    .. math:: \rho_c = \frac{2\,\mathrm{cov}_w(x, y)}{\mathrm{var}_w x + \mathrm{var}_w y
              + (\mu_x - \mu_y)^2}

    with weighted means and (co)variances Σw(·)(·)/Σw. Pairs with NaN/inf or w ≤ 0 are
    dropped; fewer than 2 pairs → NaN; both variances 0 → 1 if the means are equal, else 0;
    clamped to [−1, 1]. ``normalize_weights=False`` reproduces HumanStudy-Bench's released
    code: covariance and variances as weighted *sums* (not divided by Σw) while the
    mean-difference term stays unscaled, so its penalty shrinks as Σw grows.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    w = np.ones_like(x) if w is None else np.asarray(w, dtype=float)
    codes = np.zeros(x.size, dtype=np.int64)
    return float(_grouped_ccc(codes, x, y, w, 1, normalize_weights)[0][0])


def _grouped_ccc(codes: np.ndarray, x: np.ndarray, y: np.ndarray, w: np.ndarray, size: int,
                 normalize: bool) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """CCC of every group at once (bincount moments); also returns n and the moments."""
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
    flat = (vx <= 0) & (vy <= 0)
    ccc = np.where(flat, np.where(np.isclose(mx, my), 1.0, 0.0), ccc)
    ccc = np.where(n >= 2, np.clip(ccc, -1.0, 1.0), np.nan)
    return ccc, n, {"vx": vx, "vy": vy, "cov": cov, "diff": diff}


def structure_weights(t: pd.DataFrame) -> np.ndarray:
    """1/(findings in the test's study) × 1/(tests in its finding), per model, counted over the
    valid pairs only."""
    findings_in_study = t.groupby(["model", "study"], observed=True)["finding"].transform(
        "nunique")
    tests_in_finding = t.groupby(["model", "study", "finding"], observed=True)["test"].transform(
        "size")
    return (1 / findings_in_study / tests_in_finding).to_numpy(float)


def _lin_interval(ccc: np.ndarray, n: np.ndarray, mom: dict[str, np.ndarray],
                  level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    r"""Lin's (1989) interval on :math:`z = \operatorname{atanh}\rho_c`:

    .. math:: \mathrm{var}(z) = \frac{1}{n-2}\Bigl[\frac{(1-r^2)\rho_c^2}{(1-\rho_c^2)r^2}
              + \frac{2\rho_c^3(1-\rho_c)u^2}{r(1-\rho_c^2)^2}
              - \frac{\rho_c^4u^4}{2r^2(1-\rho_c^2)^2}\Bigr],\quad
              u = \frac{\mu_x-\mu_y}{\sqrt{\sigma_x\sigma_y}}

    with r the Pearson correlation. With weights, the weighted moments stand in for the
    sample ones and n is the number of pairs (an approximation; ``ci="bootstrap"`` avoids it).
    """
    vx, vy, cov, diff = mom["vx"], mom["vy"], mom["cov"], mom["diff"]
    with np.errstate(invalid="ignore", divide="ignore"):
        r = cov / np.sqrt(vx * vy)
        u = diff / np.sqrt(np.sqrt(vx * vy))
        rc = np.clip(ccc, -0.999999, 0.999999)
        one = 1 - rc * rc
        var = ((1 - r * r) * rc * rc / (one * r * r)
               + 2 * rc ** 3 * (1 - rc) * u * u / (r * one * one)
               - rc ** 4 * u ** 4 / (2 * r * r * one * one)) / (n - 2)
        half = stats.norm.ppf((1 + level) / 2) * np.sqrt(var)
        z = np.arctanh(rc)
        low, high = np.tanh(z - half), np.tanh(z + half)
    ok = (n > 3) & np.isfinite(low) & np.isfinite(high)
    exact = ccc >= 1.0  # identical profiles: no spread left to estimate
    return (np.where(exact, 1.0, np.where(ok, low, np.nan)),
            np.where(exact, 1.0, np.where(ok, high, np.nan)))


def ecs(tests: pd.DataFrame, *, level: Literal["overall", "domain", "study"] = "overall",
        weighting: Literal["structure", "equal"] = "structure", normalize_weights: bool = True,
        ci: Literal["analytic", "bootstrap"] | None = "analytic", n_boot: int = 1000,
        random_state: int = 0) -> pd.DataFrame:
    r"""Effect Consistency Score: weighted Lin's CCC of agent d on human d, per model and
    ``level`` (SPEC 2.2).

    ``weighting="structure"`` gives a test 1/(findings in its study) × 1/(tests in its
    finding), so every study and every finding within it weighs the same; ``"equal"`` gives
    every test weight 1. Weights and counts are taken per model after invalid pairs are
    dropped. At ``level="study"`` a study with fewer than 3 valid pairs is NaN. The published
    per-study ECS of HumanStudy-Bench is ``level="study", weighting="equal",
    normalize_weights=False``.

    Interval (``ecs_low``, ``ecs_high``): ``ci="analytic"`` uses Lin's z-transform
    (:func:`_lin_interval`); ``ci="bootstrap"`` resamples studies within each model (a cluster
    bootstrap; at ``level="study"`` the tests within the study).
    """
    check_choice("level", level, ("overall", "domain", "study"))
    check_choice("weighting", weighting, ("structure", "equal"))
    check_choice("ci", ci, (None, "analytic", "bootstrap"))
    t = prepare_tests(tests)
    t = t[np.isfinite(t["d_h"].to_numpy(float)) & np.isfinite(t["d_a"].to_numpy(float))]
    t = t.reset_index(drop=True)
    if level == "domain" and "domain" not in t:
        raise ValueError("level='domain' needs a domain column")
    w = structure_weights(t) if weighting == "structure" else np.ones(len(t))
    group_cols = ["model"] + ({"overall": [], "domain": ["domain"], "study": ["study"]}[level])
    codes, out = _codes(t, group_cols)
    x, y = t["d_h"].to_numpy(float), t["d_a"].to_numpy(float)
    value, n, mom = _grouped_ccc(codes, x, y, w, len(out), normalize_weights)
    if level == "study":
        value = np.where(n >= 3, value, np.nan)
    out["ecs"] = value
    if ci == "analytic":
        out["ecs_low"], out["ecs_high"] = _lin_interval(value, n, mom)
    elif ci == "bootstrap":
        out["ecs_low"], out["ecs_high"] = _ecs_bootstrap(t, codes, x, y, w, len(out), level,
                                                         normalize_weights, n_boot,
                                                         random_state)
    else:
        out["ecs_low"] = out["ecs_high"] = np.nan
    out["n"] = n.astype(int)
    return out


def _ecs_bootstrap(t: pd.DataFrame, codes: np.ndarray, x: np.ndarray, y: np.ndarray,
                   w: np.ndarray, size: int, level: str, normalize: bool, n_boot: int,
                   random_state: int) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval over resampled clusters (studies, or tests at study level) within
    each group; a cluster's multiplicity multiplies its tests' weights."""
    rng = np.random.default_rng(random_state)
    unit = t["test"] if level == "study" else t["study"]
    parts = [codes, unit.astype(str).to_numpy()]
    if level == "study":
        parts.append(t["study"].astype(str).to_numpy())
    cluster_key = pd.MultiIndex.from_arrays(parts)
    c_codes = pd.factorize(cluster_key)[0]
    n_clusters = c_codes.max() + 1
    owner = np.zeros(n_clusters, dtype=np.int64)
    owner[c_codes] = codes
    clusters = WithinGroups(owner)  # clusters resampled within their model × level group
    draws = np.empty((n_boot, size))
    for b in range(n_boot):
        mult = clusters.draw(rng).astype(float)
        draws[b] = _grouped_ccc(codes, x, y, w * mult[c_codes], size, normalize)[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanquantile(draws, 0.025, axis=0), np.nanquantile(draws, 0.975, axis=0)


def ecs_strict(tests: pd.DataFrame) -> pd.DataFrame:
    r"""**Auxiliary** (the seed's legacy ECS_Strict; do not report as primary).

    Per test :math:`Z_{diff} = (d_a - d_h)/\sqrt{SE_a^2 + SE_h^2}` with the one-sample SE of d
    over the test's ``n_eff`` (:func:`se_cohens_d`); per finding the RMS
    :math:`Z = \sqrt{\overline{Z_{diff}^2}}` (tests with a non-finite Z skipped) and
    ``ecs_strict`` = :math:`2(1 - \Phi(Z))`, the two-sided probability of a gap at least that
    large if human and agent effects were equal. The seed lost the last conversion in
    extraction; this one is ours. Returns model × study × finding with ``z_rms``,
    ``ecs_strict`` and ``n``.
    """
    t = prepare_tests(tests)
    if "n_eff" not in t:
        raise ValueError("ecs_strict needs an n_eff column for the standard errors")
    n_eff = t["n_eff"].astype(float).to_numpy()
    d_h, d_a = t["d_h"].to_numpy(float), t["d_a"].to_numpy(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        z = (d_a - d_h) / np.sqrt(se_cohens_d(d_a, n_eff) ** 2 + se_cohens_d(d_h, n_eff) ** 2)
    ok = np.isfinite(z)
    codes, out = _codes(t, ["model", "study", "finding"])
    count = np.bincount(codes, weights=ok, minlength=len(out))
    with np.errstate(invalid="ignore", divide="ignore"):
        rms = np.sqrt(np.bincount(codes, weights=np.where(ok, z * z, 0.0),
                                  minlength=len(out)) / count)
    out["z_rms"] = np.where(count > 0, rms, np.nan)
    out["ecs_strict"] = 2 * stats.norm.sf(out["z_rms"])
    out["n"] = count.astype(int)
    return out
