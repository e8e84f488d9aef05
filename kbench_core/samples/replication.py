"""Synthetic replication tests and published study summaries with planted ECS and PAS."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from kbench_core.samples._common import (
    _count,
    _labels,
    _names,
    _numbered,
    _rng,
    _significant,
    _within,
)
from kbench_core.schema import TEST_TYPES

# ============================================================================== replication

REPLICATION_MODELS: tuple[str, ...] = (
    "synthetic-agent-mirror", "synthetic-agent-shifted", "synthetic-agent-flat")
REPLICATION_DOMAINS: tuple[str, ...] = ("Cognition", "Social", "Strategic")
_AGENT_D_SHIFT = 0.3


def _d_to_effect(d: np.ndarray, test_type: np.ndarray) -> np.ndarray:
    """The native effect whose Cohen's d-equivalent (``effect_to_d``,
    ``docs/metrics/replication.md``) is ``d``, to :data:`SIGNIFICANT_DIGITS` significant digits
    (``arctanh`` may differ in its last bit between CPUs; the rounded digits do not)."""
    r = d / np.sqrt(d * d + 4)  # inverse of d = 2r / sqrt(1 - r^2)
    return _significant(np.select(
        [test_type == "correlation", test_type == "chi2", test_type == "mann_whitney",
         test_type == "binomial"],
        [np.arctanh(r), d * math.pi / math.sqrt(3), r, 0.5 + d * math.sqrt(0.25) / 2], d))


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
    r"""Replication tests (kind ``replication``, ``docs/formats.md``), one row per model × test.

    Study *k* (0-based) has 2 + (*k* mod 2) findings and finding *j* of a study 2 + (*j* mod 2)
    tests (36 tests for 6 studies); domains cycle Cognition, Social, Strategic over studies and
    ``test_type`` cycles over all seven types. Human d ~ U(−0.2, 1.2) and the human posterior
    π_h ~ U(0.05, 0.99) (3 decimals) are seeded and shared by every model; ``human_effect``
    and ``agent_effect`` are the native effects whose d-equivalents are ``human_d`` and
    ``agent_d``, written to 10 significant digits (so the same bytes come out on every CPU;
    the d-equivalents agree to about 1e-10).

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
    """About ``n_rows`` replication tests for benchmarks (``benchmarks/README.md``: 100k): the
    three synthetic agents over ``round(n_rows / 18)`` studies (18 rows per study on average; the
    count is exact when ``n_rows`` is a multiple of 36)."""
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
    """Published study-level results (kind ``replication_summary``, ``docs/formats.md``).

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


