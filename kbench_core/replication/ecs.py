"""ECS (Effect Consistency Score): weighted Lin's concordance correlation between human and
agent d (overall, per domain, per study) with its intervals, the structure weights, and the
legacy ECS_Strict from z-differences."""

from __future__ import annotations

import warnings
from functools import cache
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats

from kbench_core.replication.effects import (
    Array,
    ArrayLike,
    _codes,
    _group_codes,
    _key_columns,
    _prepared_columns,
    prepare_tests,
    se_cohens_d,
)
from kbench_core.stats import WithinGroups, _t_quantile, check_choice

STOUFFER_CAP = 10.0  # the released ECS_Strict's stand-in for Φ⁻¹(0) and Φ⁻¹(1)
MIN_STUDY_PAIRS = 3  # a study needs 3 valid pairs for its own ECS (``docs/metrics/replication.md``)


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
    f_codes, _ = _group_codes(t, ["model", "study", "finding"])
    s_codes, _ = _group_codes(t, ["model", "study"])
    return _structure_weights(t, f_codes, s_codes, np.ones(len(t), dtype=bool))


def _structure_weights(t: pd.DataFrame, f_codes: Array, s_codes: Array, rows: Array) -> Array:
    """:func:`structure_weights` of ``t[rows]`` from group codes of the whole of ``t``
    (findings and studies; only counts are needed, so no subset is taken or renumbered)."""
    if any(_missing(t[c])[rows].any() for c in ("model", "study", "finding")):
        # A missing key: the groupby of old decides (it raises, having no code for it).
        return _structure_weights_groupby(t[["model", "study", "finding"]][rows])
    f, s = f_codes[rows], s_codes[rows]
    size_f = int(f_codes.max(initial=-1)) + 1
    tests_in_finding = np.bincount(f, minlength=size_f)[f]
    finding_study = np.zeros(size_f, dtype=np.int64)
    finding_study[f_codes] = s_codes  # a finding lies in one study (its key includes it)
    present = np.flatnonzero(np.bincount(f, minlength=size_f) > 0)
    findings_in_study = np.bincount(finding_study[present],
                                    minlength=int(s_codes.max(initial=-1)) + 1)[s]
    return 1.0 / (findings_in_study * tests_in_finding)


def _missing(values: pd.Series) -> Array:
    """Where a key is missing (a categorical's code -1: no NA scan of its values)."""
    array = values.array
    return array.codes < 0 if isinstance(array, pd.Categorical) else values.isna().to_numpy()


def _structure_weights_groupby(keys: pd.DataFrame) -> Array:
    finding = keys.groupby(["model", "study", "finding"], observed=True, sort=False).ngroup()
    study = keys.groupby(["model", "study"], observed=True, sort=False).ngroup().to_numpy()
    f = finding.to_numpy()
    tests_in_finding = np.bincount(f)[f]
    finding_study = np.zeros(f.max() + 1 if f.size else 0, dtype=np.int64)
    finding_study[f] = study
    findings_in_study = np.bincount(finding_study)[study]
    return 1.0 / (findings_in_study * tests_in_finding)


def _pair_weights(t: pd.DataFrame, weighting: str, d_h: Array | None = None,
                  d_a: Array | None = None) -> tuple[Array, Array]:
    """(valid pair, ECS weight) per row of prepared tests (or of tests whose ``d_h, d_a``
    are given): a pair needs both d finite; an invalid pair weighs 0 (so it drops out while
    its group stays, n = 0); structure weights are counted over the valid pairs only."""
    d_h = t["d_h"].to_numpy(float) if d_h is None else d_h
    d_a = t["d_a"].to_numpy(float) if d_a is None else d_a
    valid = np.isfinite(d_h) & np.isfinite(d_a)
    w = np.zeros(len(t))
    if weighting == "structure":
        f_codes, _ = _group_codes(t, ["model", "study", "finding"])
        s_codes, _ = _group_codes(t, ["model", "study"])
        w[valid] = _structure_weights(t, f_codes, s_codes, valid)
    else:
        w[valid] = 1.0
    return valid, w


def scatter_points(tests: pd.DataFrame, *,
                   weighting: Literal["structure", "equal"] = "structure") -> pd.DataFrame:
    """The points of the human-against-agent effect scatter: the tests whose human and agent d
    are both finite (the pairs :func:`ecs` uses), each with ``weight``, its ECS weight under
    ``weighting`` (the same weights :func:`ecs` gives it: structure weights counted per model
    over the valid pairs, or 1). ``tests`` may be raw or prepared (:func:`prepare_tests`).

    Examples
    --------
    >>> import pandas as pd
    >>> tests = pd.DataFrame({"model": "m", "study": "s", "finding": ["f", "f", "g"],
    ...                       "test": ["a", "b", "c"], "human_d": [0.1, 0.2, 0.3],
    ...                       "agent_d": [0.1, float("nan"), 0.2]})
    >>> scatter_points(tests)[["test", "weight"]].to_dict("list")
    {'test': ['a', 'c'], 'weight': [0.5, 0.5]}
    """
    check_choice("weighting", weighting, ("structure", "equal"))
    t = prepare_tests(tests).reset_index(drop=True)
    valid, w = _pair_weights(t, weighting)
    return t[valid].assign(weight=w[valid]).reset_index(drop=True)


@cache
def _normal_ppf(q: float) -> float:
    """scipy's ``norm.ppf(q)``, once per level (its per-call overhead was a tenth of ECS on a
    small run)."""
    return stats.norm.ppf(q)


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
        half = _normal_ppf((1 + level) / 2) * np.sqrt(var)
        z = np.arctanh(rc)
        low, high = np.tanh(z - half), np.tanh(z + half)
    enough = n_eff > 3
    ok = enough & np.isfinite(low) & np.isfinite(high)
    exact = enough & (ccc >= 1.0)  # identical profiles: no spread left to estimate
    return (np.where(exact, 1.0, np.where(ok, low, np.nan)),
            np.where(exact, 1.0, np.where(ok, high, np.nan)))


def ecs(tests: pd.DataFrame, *, level: Literal["overall", "domain", "study"] = "overall",
        weighting: Literal["structure", "equal"] = "structure", normalize_weights: bool = True,
        ci: Literal["analytic", "lin", "jackknife", "bootstrap"] | None = "analytic",
        n_boot: int = 1000, random_state: int = 0) -> pd.DataFrame:
    r"""Effect Consistency Score: weighted Lin's CCC (:func:`weighted_ccc`) of agent d on
    human d over the tests, per model and ``level`` (``docs/metrics/replication.md``).

    ``weighting="structure"`` gives a test 1/(findings in its study) × 1/(tests in its
    finding), so every study and every finding within it weighs the same; ``"equal"`` gives
    every test weight 1. Weights and counts are taken per model after invalid pairs are
    dropped (:func:`structure_weights`). ``level="overall"`` pools every test of the model,
    ``"domain"`` each domain, ``"study"`` each study; a study with fewer than 3 valid pairs
    is NaN. The published per-study ECS of HumanStudy-Bench is ``level="study",
    weighting="equal", normalize_weights=False``.

    Interval (``ecs_low``, ``ecs_high``, 95%; ``ci_method`` names the method of each row):

    - ``ci="analytic"`` (default, no resampling): tests of one study share its participants,
      materials and agent run, so they are not independent. Where a study of the model ×
      group holds two or more valid pairs, the interval is the **delete-one-study
      jackknife** on Fisher's z (:func:`_jackknife_interval`, ``ci_method="jackknife_studies"``);
      where every study holds one test (tests are then the independent units), or at
      ``level="study"``, it is Lin's interval (``"lin"``). Lin's interval (the previous
      default) ignores the clustering and covered 0.66 (nominal 0.95) with 10 studies × 6
      tests sharing a study effect; the jackknife covers 0.93-0.95 there and with unequal
      studies
      (``docs/metrics/replication.md``, tests in ``tests/test_stats_round2_ecs.py``).
    - ``ci="lin"``: Lin's z-transform interval on every row (the previous default).
      Unweighted (``weighting="equal"``) it is Lin's formula exactly; **with structure
      weights** the weighted moments are plugged into it with Kish's effective n =
      (Σw)²/Σw² in place of the number of pairs, an approximation (see
      :func:`_lin_interval`). Valid only when the tests are independent.
    - ``ci="jackknife"``: the delete-one-study jackknife on every row (at
      ``level="study"`` delete-one-test, ``"jackknife_tests"``).
    - ``ci="bootstrap"``: a cluster bootstrap: the studies of each model × group are
      resampled with replacement (``n_boot`` times, seeded by ``random_state``) and each
      drawn study brings all its tests (``"bootstrap_studies"``); at ``level="study"`` the
      tests within the study are resampled (``"bootstrap_tests"``). Percentile interval;
      NaN for a group with fewer than 2 clusters.
    - ``None``: NaN (``ci_method`` empty).

    With ``normalize_weights=False`` (not a CCC of a distribution) only ``ci="bootstrap"``
    gives an interval; the others are NaN with ``ci_method`` empty.

    Returns ``model[, domain | study], ecs, ecs_low, ecs_high, ci_method, n, n_kish,
    n_studies`` with n the valid pairs, n_kish Kish's effective n of their weights (= n under
    equal weights; what Lin's interval rests on) and n_studies the studies they come from; a
    group without a valid pair is kept with NaN and n = 0.
    """
    check_choice("level", level, ("overall", "domain", "study"))
    check_choice("weighting", weighting, ("structure", "equal"))
    check_choice("ci", ci, (None, "analytic", "lin", "jackknife", "bootstrap"))
    # Only d is needed from the preparation, so no prepared frame is built: the keys are
    # read from the tests by position.
    prepared = _prepared_columns(tests)
    t = tests
    if level == "domain" and "domain" not in t:
        raise ValueError("level='domain' needs a domain column")
    x, y = prepared["d_h"], prepared["d_a"]
    valid, w = _pair_weights(t, weighting, x, y)
    group_cols = ["model"] + ({"overall": [], "domain": ["domain"], "study": ["study"]}[level])
    codes, first = _group_codes(t, group_cols)
    size = first.size
    # The table is built once at the end from its columns.
    out = _key_columns(t, group_cols, first)
    value, n, mom = _grouped_ccc(codes, x, y, w, size, normalize_weights)
    if level == "study":
        value = np.where(n >= MIN_STUDY_PAIRS, value, np.nan)
    out["ecs"] = value
    # Studies within each group: group code x study code, numbered 0..k-1.
    span = len(t) + 1
    key = codes * span + pd.factorize(t["study"])[0]
    study_codes = np.unique(key, return_inverse=True)[1].astype(np.int64)
    n_studies = np.bincount(np.unique(key[valid]) // span, minlength=size)
    method = np.full(size, "", dtype=object)
    if ci in ("analytic", "lin", "jackknife"):
        # Per group: does a study hold several valid pairs (then its tests are clustered)?
        pairs_per_study = np.bincount(study_codes[valid], minlength=int(study_codes.max(
            initial=-1)) + 1)
        owner = np.zeros(pairs_per_study.size, dtype=np.int64)
        owner[study_codes] = codes
        clustered = np.zeros(size, dtype=bool)
        clustered[owner[pairs_per_study >= 2]] = True
        if level == "study":
            clustered[:] = False  # one study per row: its tests are the units
        jack = {"analytic": clustered, "lin": np.zeros(size, dtype=bool),
                "jackknife": np.ones(size, dtype=bool)}[ci]
        lin_low, lin_high = _lin_interval(value, n, mom, normalize_weights)
        jk_low = jk_high = lin_low
        if jack.any():
            units = np.arange(len(t), dtype=np.int64) if level == "study" else study_codes
            jk_low, jk_high = _jackknife_interval(codes, units, x, y, w, size, value,
                                                  normalize_weights)
        out["ecs_low"] = np.where(jack, jk_low, lin_low)
        out["ecs_high"] = np.where(jack, jk_high, lin_high)
        if normalize_weights:
            unit_name = "jackknife_tests" if level == "study" else "jackknife_studies"
            method = np.where(jack, unit_name, "lin").astype(object)
            method[n == 0] = ""
    elif ci == "bootstrap":
        # At study level the unit is the test: every row is one (keys are unique per model).
        units = np.arange(len(t), dtype=np.int64) if level == "study" else study_codes
        low, high = _ecs_bootstrap(codes, units, x, y, w, size, normalize_weights, n_boot,
                                   random_state)
        clusters = n if level == "study" else n_studies
        defined = np.isfinite(value) & (clusters >= 2)
        out["ecs_low"] = np.where(defined, low, np.nan)
        out["ecs_high"] = np.where(defined, high, np.nan)
        method[n > 0] = "bootstrap_tests" if level == "study" else "bootstrap_studies"
    else:
        out["ecs_low"] = out["ecs_high"] = np.full(size, np.nan)
    out["ci_method"] = method
    out["n"] = n.astype(int)
    out["n_kish"] = np.where(n > 0, mom["kish"], 0.0)
    out["n_studies"] = n_studies
    return pd.DataFrame(out)


MIN_JACKKNIFE_UNITS = 3  # fewer clusters leave t_{G-1} meaningless (t_1 = 12.7)


def _jackknife_interval(codes: Array, units: Array, x: Array, y: Array, w: Array, size: int,
                        value: Array, normalize: bool,
                        level: float = 0.95) -> tuple[Array, Array]:
    r"""Delete-one-cluster (grouped) jackknife interval of the CCC on Fisher's z.

    For each of the G clusters (studies; tests at ``level="study"``) of a group the CCC is
    recomputed without it, :math:`z_{(-s)} = \operatorname{atanh}\hat\rho_{c,(-s)}`, and

    .. math:: \widehat{\mathrm{var}}(z) = \frac{G-1}{G}\sum_s (z_{(-s)} - \bar z)^2,\qquad
              \tanh\bigl(\operatorname{atanh}\hat\rho_c
              \pm t_{G-1,\,0.975}\sqrt{\widehat{\mathrm{var}}(z)}\bigr)

    (Quenouille–Tukey jackknife, Efron & Tibshirani 1993 ch. 11; deleting whole clusters is
    the grouped jackknife that stays valid when units within a cluster are correlated,
    Cameron & Miller 2015 §VI.B; Lin's CCC on the z scale as in Lin 1989). Under structure
    weights a study's weights do not depend on the other studies, so removing a study
    leaves the others' weights as they are. Written by hand (no library jackknifes a
    weighted CCC by cluster): the per-cluster moment sums are taken once and each
    leave-one-out CCC is the group's sums minus one cluster's, all clusters at once.
    NaN for fewer than :data:`MIN_JACKKNIFE_UNITS` clusters, where a leave-one-out CCC is
    undefined, where the leave-one-out values do not vary (an effect profile without
    spread) and without normalised weights; identical profiles (ρc = 1) get [1, 1] as
    Lin's interval does.
    """
    nan = np.full(size, np.nan)
    if not normalize:
        return nan, nan.copy()
    ok = np.isfinite(x) & np.isfinite(y) & np.isfinite(w) & (w > 0) & (codes >= 0)
    if not ok.any():
        return nan, nan.copy()
    # units are dense codes already (study within group, or row): no renumbering sort
    u, x, y, w = units[ok], x[ok], y[ok], w[ok]
    n_units = int(units.max()) + 1
    owner = np.zeros(n_units, dtype=np.int64)
    owner[u] = codes[ok]
    sums = np.stack([np.bincount(u, weights=v, minlength=n_units)
                     for v in (w, w * x, w * y, w * x * x, w * y * y, w * x * y,
                               np.ones_like(w))])
    present = sums[-1] > 0  # clusters with a valid pair
    sums, owner = sums[:, present], owner[present]
    totals = np.stack([np.bincount(owner, weights=row, minlength=size) for row in sums])
    loo = _ccc_from_sums(*(totals[:, owner] - sums), normalize=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        z_loo = np.arctanh(np.clip(loo, -0.999999, 0.999999))
    g = np.bincount(owner, minlength=size).astype(float)
    bad = np.bincount(owner, weights=~np.isfinite(z_loo), minlength=size) > 0
    z_loo = np.where(np.isfinite(z_loo), z_loo, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.bincount(owner, weights=z_loo, minlength=size) / g
        dev = z_loo - mean[owner]
        var = (g - 1) / g * np.bincount(owner, weights=dev * dev, minlength=size)
        enough = (g >= MIN_JACKKNIFE_UNITS) & ~bad & np.isfinite(value)
        df = np.where(enough, g - 1, 1.0)
        half = _t_quantile((1 + level) / 2, df) * np.sqrt(var)
        z = np.arctanh(np.clip(value, -0.999999, 0.999999))
        low, high = np.tanh(z - half), np.tanh(z + half)
    exact = enough & (value >= 1.0)
    # No spread among the leave-one-out values (e.g. an agent whose effects are all equal,
    # CCC 0 however the studies are drawn) is no evidence of precision: NaN, as Lin's is.
    enough &= var > 1e-24
    return (np.where(exact, 1.0, np.where(enough, low, np.nan)),
            np.where(exact, 1.0, np.where(enough, high, np.nan)))


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
