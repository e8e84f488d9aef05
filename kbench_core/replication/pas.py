"""PAS (Probability of Agreement State): per test, pooled test → finding → study on Fisher's z
scale, averaged over studies per model, with bootstrap intervals; and the legacy PAS
normalised against the human ceiling."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from kbench_core.replication.effects import (
    EPSILON,
    Array,
    _codes,
    _group_codes,
    _key_columns,
    prepare_tests,
)
from kbench_core.stats import WithinGroups, bounded_mean_interval, check_choice

NEUTRAL_CEILING = 1e-8  # |2c − 1| below this: the human posterior is 0.5, nothing to normalise


@dataclass(frozen=True)
class PasResult:
    """PAS at every level (``docs/metrics/replication.md``).

    - ``test``: ``model, study, finding, test[, domain], pi_h, pi_a, pas, r, z, weight,
      dropped`` (``dropped``: no usable PAS — a posterior missing, e.g. a Bayes factor without
      its ``human_significant`` flag, or no ``n_eff`` under n_eff weights; its ``pas`` is NaN);
    - ``finding``: ``model, study, finding[, domain], pas, n, n_dropped`` (n = tests pooled;
      ``pas`` NaN and n = 0 when every test was dropped);
    - ``study``: ``model, study[, domain], pas, n, n_tests, n_dropped`` (n = findings with a
      PAS; ``pas`` NaN and n = 0 when none has one);
    - ``model``: ``model, pas, pas_low, pas_high, n, n_findings, n_tests, n_dropped``
      (n = studies with a PAS, ``n_findings`` findings with one, ``n_tests`` tests pooled,
      ``n_dropped`` tests left out).

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
    clamp); Σw ≤ 0 falls back to the unweighted mean of z. A group with no usable value is
    NaN: in a per-test table a finding exists only through its tests, so a group without a
    usable value is one whose every test was dropped (no posterior, or no n_eff under n_eff
    weights), not the seed's empty test list, and the seed's "empty → 0.5" would make up a
    number for it (``docs/metrics/replication.md``). Because of the clamp, z is invalid only
    where PAS itself is missing, so the seed's "all z invalid → simple mean of PAS" has
    nothing to average either. ``present`` masks items out entirely; ``weights`` may carry
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
    return _pooled(n_valid, total(w), total(w * z), total(z), total(pas_values)), n_valid


def _pooled(n_valid: Array, sum_w: Array, sum_wz: Array, sum_z: Array,
            sum_pas: Array) -> Array:
    """:func:`_fisher_pool`'s pooled PAS from its sums over a group's usable values: z̄ =
    Σwz/Σw (Σz/n where Σw ≤ 0), (tanh z̄ + 1)/2 from two values on, the value itself for one,
    NaN for none."""
    with np.errstate(invalid="ignore", divide="ignore"):
        z_bar = np.where(sum_w > 0, sum_wz / sum_w, sum_z / n_valid)
        single = sum_pas / n_valid  # the one usable value, where there is one
        return np.select([n_valid >= 2, n_valid == 1], [(np.tanh(z_bar) + 1) / 2, single],
                         np.nan)


def _study_pas(s_codes: Array, f_pas: Array, weights: Array, size: int, pooling: str,
               present: Array | None = None) -> Array:
    """Study PAS from finding PAS: Fisher pooling (``weights`` multiply findings drawn more
    than once by the bootstrap) or their (weighted) simple mean. A finding without a PAS (NaN:
    every test dropped) is left out; a study without any finding PAS is NaN."""
    if pooling == "fisher":
        return _fisher_pool(s_codes, f_pas, weights, size, present)[0]
    usable = np.isfinite(f_pas) if present is None else np.isfinite(f_pas) & present
    w = np.where(usable, weights, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (np.bincount(s_codes, weights=w * np.where(usable, f_pas, 0.0), minlength=size)
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
    cases as :func:`_fisher_pool`: one test → its own PAS; Σw ≤ 0 → unweighted. A finding
    none of whose tests is usable has PAS NaN and n = 0 and is left out of its study's pooling
    (a study without a usable finding likewise: NaN, n = 0, left out of the model mean); its
    tests are counted in ``n_dropped``. The seed's "empty → 0.5" is for an empty test list,
    which a per-test table cannot hold (a finding exists through its rows), so PAS never
    reports 0.5 for a finding it has no evidence on.

    A test without a usable PAS is never given a made-up one: a human Bayes factor without
    its ``human_significant`` flag has no prior (π_h NaN), and under ``"n_eff"`` weights a
    test without ``n_eff`` would weigh 0 while being counted. Such a test stays in the
    ``test`` frame with ``pas`` NaN and ``dropped`` true, is left out of every pooled value,
    and is counted in ``n_dropped`` of its finding, study and model; ``notes`` says so. A
    model none of whose tests has both posteriors is left out (PAS is unavailable for it); a
    run without posteriors gives empty tables.

    Interval of the model PAS (``pas_low``, ``pas_high``; it is a mean over studies):
    ``ci="analytic"`` (default) is the interval of a bounded mean over its study PAS values
    (:func:`kbench_core.stats.bounded_mean_interval`: the Wilson score interval of the mean
    with n = studies below 30 studies, where the t interval under-covered a skewed PAS, the
    t interval clipped to [0, 1] from 30 on). ``ci="bootstrap"`` resamples the
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
    carry = ["domain"] if "domain" in t else []
    kept = ["model", "study", "finding", "test", *carry, "pi_h", "pi_a"]
    if any(c not in t for c in kept):
        t[kept]  # raises pandas' own KeyError naming the missing columns
    sums, per_test = _finding_sums(t, finding_weights)
    model_codes, _ = _group_codes(t, ["model"])
    # Models with at least one test with both posteriors (by code: no isin over text).
    has_pas = np.bincount(model_codes, weights=per_test["posteriors"],
                          minlength=int(model_codes.max(initial=-1)) + 1)[model_codes] > 0
    if has_pas.all():
        shown, mine = t.reset_index(drop=True), per_test
    else:
        shown = t[has_pas].reset_index(drop=True)
        mine = {name: values[has_pas] for name, values in per_test.items()}
    # Each table is built once from its columns (adding them one by one copied the frame).
    test_table = pd.DataFrame({**{c: shown[c] for c in kept},
                               **{c: mine[c] for c in ("pas", "r", "z", "weight")},
                               "dropped": ~mine["usable"]})
    return pas_from_sums(sums, study_pooling=study_pooling, ci=ci, n_boot=n_boot,
                         random_state=random_state, finding_weights=finding_weights,
                         test=test_table)


def finding_pas_sums(tests: pd.DataFrame, *,
                     finding_weights: Literal["equal", "n_eff"] = "equal",
                     human_prior_significant: float = 10.0, human_prior_null: float = 0.1,
                     agent_prior: float = 1.0) -> pd.DataFrame:
    r"""PAS's sufficient table of ``tests``: one row per model × study × finding (with the
    domain of its first test), in the order of its first test, with the sums its Fisher
    pooling and its notes read: ``n_tests``, ``n_posteriors`` (tests with both posteriors),
    ``n_usable`` (those with a weight too), over the usable tests Σw, Σwz, Σz and ΣPAS
    (:math:`z = \operatorname{atanh}(2\,PAS-1)`, clamped), ``n_no_prior`` (a human Bayes
    factor without its flag), ``n_no_weight`` (no ``n_eff`` under n_eff weights) and
    ``place``, the row of its first test. What :func:`pas_from_sums` finishes and an engine
    computes in one group-by (``kbench_core.engines.replication``)."""
    check_choice("finding_weights", finding_weights, ("equal", "n_eff"))
    t = prepare_tests(tests, human_prior_significant=human_prior_significant,
                      human_prior_null=human_prior_null, agent_prior=agent_prior)
    if finding_weights == "n_eff" and "n_eff" not in t:
        raise ValueError("finding_weights='n_eff' needs an n_eff column")
    return _finding_sums(t, finding_weights)[0]


def _finding_sums(t: pd.DataFrame, finding_weights: str) -> tuple[pd.DataFrame, dict]:
    """:func:`finding_pas_sums` of prepared tests, and each test's PAS, r, z, weight and
    whether it has posteriors and is usable (the ``test`` table's columns)."""
    pi_h, pi_a = t["pi_h"].to_numpy(float), t["pi_a"].to_numpy(float)
    posteriors = np.isfinite(pi_h) & np.isfinite(pi_a)
    weight, weighable = _usable_weights(t, finding_weights)
    usable = posteriors & weighable
    value = np.where(usable, pi_h * pi_a + (1 - pi_h) * (1 - pi_a), np.nan)
    r = np.clip(2 * value - 1, -(1 - EPSILON), 1 - EPSILON)
    with np.errstate(invalid="ignore"):
        z = np.arctanh(r)
    no_prior = ~np.isfinite(pi_h)
    if "human_bf10" in t:
        no_prior &= np.isfinite(t["human_bf10"].to_numpy(dtype=float, na_value=np.nan))
    else:
        no_prior[:] = False
    keys = ["model", "study", "finding"]
    codes, first = _group_codes(t, keys)
    size = first.size
    w = np.where(usable, weight, 0.0)

    def total(values: Array) -> Array:
        return np.bincount(codes, weights=values, minlength=size)

    out: dict[str, object] = {name: pd.Series(t[name].array.take(first))
                              for name in (*keys, *(["domain"] if "domain" in t else []))}
    out.update(n_tests=np.bincount(codes, minlength=size),
               n_posteriors=total(posteriors).astype(np.int64),
               n_usable=total(usable).astype(np.int64), sum_w=total(w),
               sum_wz=total(np.where(usable, w * z, 0.0)),
               sum_z=total(np.where(usable, z, 0.0)),
               sum_pas=total(np.where(usable, value, 0.0)),
               n_no_prior=total(no_prior).astype(np.int64),
               n_no_weight=total(posteriors & ~weighable).astype(np.int64),
               place=first.astype(np.int64))
    per_test = {"pas": value, "r": r, "z": z, "weight": np.where(usable, weight, np.nan),
                "posteriors": posteriors, "usable": usable}
    return pd.DataFrame(out), per_test


def pas_from_sums(sums: pd.DataFrame, *, study_pooling: Literal["fisher", "mean"] = "fisher",
                  ci: Literal["analytic", "bootstrap"] | None = "analytic",
                  n_boot: int = 1000, random_state: int = 0,
                  finding_weights: Literal["equal", "n_eff"] = "equal",
                  test: pd.DataFrame | None = None) -> PasResult:
    """:func:`pas` finished from the tests' sufficient table (:func:`finding_pas_sums`, or
    an engine's), every level but the per-test one (``test``: given by :func:`pas`, else an
    empty frame); ``finding_weights`` only words the notes. Written by hand, as :func:`pas`."""
    check_choice("study_pooling", study_pooling, ("fisher", "mean"))
    check_choice("ci", ci, (None, "analytic", "bootstrap"))
    s = sums.sort_values("place", kind="stable").reset_index(drop=True)
    m_all, _ = _group_codes(s, ["model"])
    has_pas = np.bincount(m_all, weights=s["n_posteriors"].to_numpy(float))[m_all] > 0
    if not has_pas.all():
        s = s[has_pas].reset_index(drop=True)
    carry = ["domain"] if "domain" in s else []
    n_findings = len(s)
    findings = _key_columns(s, ["model", "study", "finding"], np.arange(n_findings), carry)
    f_n = s["n_usable"].to_numpy(float)
    f_pas = _pooled(f_n, *(s[c].to_numpy(float) for c in ("sum_w", "sum_wz", "sum_z",
                                                          "sum_pas")))
    f_dropped = (s["n_tests"].to_numpy() - s["n_usable"].to_numpy()).astype(int)
    findings.update(pas=f_pas, n=f_n.astype(int), n_dropped=f_dropped)
    s_codes, s_first = _group_codes(findings, ["model", "study"])
    studies = _key_columns(findings, ["model", "study"], s_first, carry)
    n_studies = s_first.size
    s_pas = _study_pas(s_codes, f_pas, np.ones(n_findings), n_studies, study_pooling)
    f_ok, s_ok = np.isfinite(f_pas), np.isfinite(s_pas)
    s_n_tests = np.bincount(s_codes, weights=f_n, minlength=n_studies).astype(int)
    s_dropped = np.bincount(s_codes, weights=f_dropped, minlength=n_studies).astype(int)
    studies.update(pas=s_pas,
                   n=np.bincount(s_codes, weights=f_ok, minlength=n_studies).astype(int),
                   n_tests=s_n_tests, n_dropped=s_dropped)
    m_codes, m_first = _group_codes(studies, ["model"])
    models = _key_columns(studies, ["model"], m_first)
    n_models = m_first.size
    # The model PAS is the mean over the studies that have one (a study none of whose tests
    # was usable has no PAS and is not a 0.5 to average in).
    counts = np.bincount(m_codes, weights=s_ok, minlength=n_models).astype(int)
    s_value = np.where(s_ok, s_pas, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.bincount(m_codes, weights=s_value, minlength=n_models) / counts
        spread = np.bincount(m_codes, weights=np.where(s_ok, (s_value - mean[m_codes]) ** 2,
                                                       0.0), minlength=n_models)
        sd = np.sqrt(spread / (counts - 1))
    models["pas"] = mean
    if ci == "analytic":
        # a mean of PAS values in [0, 1] over (often few) studies: the bounded-mean interval
        # (Wilson-type below 30 studies; issue 38 item 4), no [m, m] (issue 23)
        low, high = bounded_mean_interval(mean, sd, counts, bounds=(0.0, 1.0))
        models["pas_low"], models["pas_high"] = np.clip(low, 0, 1), np.clip(high, 0, 1)
    elif ci == "bootstrap":
        # Only findings and studies with a PAS are resampled (renumbered among themselves).
        renumber = np.cumsum(s_ok) - 1
        models["pas_low"], models["pas_high"] = _pas_bootstrap(
            f_pas[f_ok], renumber[s_codes[f_ok]], m_codes[s_ok], int(s_ok.sum()), n_models,
            study_pooling, n_boot, random_state)
    else:
        models["pas_low"] = models["pas_high"] = np.full(n_models, np.nan)
    models["n"] = counts
    models["n_findings"] = np.bincount(m_codes[s_codes], weights=f_ok,
                                       minlength=n_models).astype(int)
    models["n_tests"] = np.bincount(m_codes, weights=s_n_tests,
                                    minlength=n_models).astype(int)
    models["n_dropped"] = np.bincount(m_codes, weights=s_dropped,
                                      minlength=n_models).astype(int)
    findings, studies, models = (pd.DataFrame(findings), pd.DataFrame(studies),
                                 pd.DataFrame(models))
    if test is None:
        test = pd.DataFrame(columns=["model", "study", "finding", "test", *carry, "pi_h",
                                     "pi_a", "pas", "r", "z", "weight", "dropped"])
    return PasResult(test, findings, studies, models, _pas_notes(s, finding_weights))


def _pas_notes(s: pd.DataFrame, finding_weights: str) -> tuple[str, ...]:
    """What PAS left out and why, from the counts of the sufficient table ``s`` (the models
    with a PAS)."""
    notes = []
    no_prior = int(s["n_no_prior"].sum())
    if no_prior:
        notes.append(f"{no_prior:,} test(s) have a human Bayes factor but no "
                     "human_significant flag, so no prior odds: left out of PAS (not given "
                     "the 'not significant' prior)")
    other = int((s["n_tests"] - s["n_posteriors"]).sum()) - no_prior
    if other:
        notes.append(f"{other:,} test(s) lack a human or agent posterior: left "
                     "out of PAS")
    no_weight = int(s["n_no_weight"].sum())
    if finding_weights == "n_eff" and no_weight:
        notes.append(f"{no_weight:,} test(s) have no n_eff, so "
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
