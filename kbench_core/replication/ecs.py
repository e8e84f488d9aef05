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
        kish = sw * sw / np.bincount(g, weights=w * w, minlength=size)
    ccc = _ccc_rules(mx, my, vx, vy, cov, n, sw, normalize)
    return ccc, n, {"vx": vx, "vy": vy, "cov": cov, "diff": mx - my, "kish": kish}


def _ccc_rules(mx: Array, my: Array, vx: Array, vy: Array, cov: Array, n: Array, sw: Array,
               normalize: bool) -> Array:
    """Lin's CCC of groups from their (two-pass accurate) weighted moments, with the edge
    rules of :func:`weighted_ccc`: no spread on both sides 1 when the means agree (else 0),
    no spread on one side 0, fewer than 2 pairs NaN, clamped to [−1, 1]."""
    with np.errstate(invalid="ignore", divide="ignore"):
        diff = mx - my
        ccc = 2 * cov / (vx + vy + diff * diff)
    # Rounding leaves a constant vector with a variance of ~1e-33, not 0: compare with its
    # scale so that "no spread" is recognised as such.
    tiny_x = vx <= 1e-24 * np.maximum(mx * mx, 1.0) * (1.0 if normalize else sw)
    tiny_y = vy <= 1e-24 * np.maximum(my * my, 1.0) * (1.0 if normalize else sw)
    same = np.isclose(mx, my, rtol=1e-12, atol=1e-12)
    ccc = np.where(tiny_x & tiny_y, np.where(same, 1.0, 0.0),
                   np.where(tiny_x | tiny_y, 0.0, ccc))
    return np.where(n >= 2, np.clip(ccc, -1.0, 1.0), np.nan)


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
      NaN for a group with fewer than 2 clusters (a study without a valid pair is no
      cluster: it is never drawn).
    - ``None``: NaN (``ci_method`` empty).

    With ``normalize_weights=False`` (not a CCC of a distribution) only ``ci="bootstrap"``
    gives an interval; the others are NaN with ``ci_method`` empty.

    Every number is finished from the tests' sufficient table (:func:`finding_sums`, the
    moments of each finding's valid pairs; :func:`ecs_from_sums`), the table an engine
    computes without fetching a test (``docs/scale.md``); only the intervals whose units are
    the tests (``level="study"`` with ``ci="jackknife"`` or ``"bootstrap"``) read the tests.

    Returns ``model[, domain | study], ecs, ecs_low, ecs_high, ci_method, n, n_kish,
    n_studies`` with n the valid pairs, n_kish Kish's effective n of their weights (= n under
    equal weights; what Lin's interval rests on) and n_studies the studies they come from; a
    group without a valid pair is kept with NaN and n = 0.
    """
    check_choice("level", level, ("overall", "domain", "study"))
    check_choice("weighting", weighting, ("structure", "equal"))
    check_choice("ci", ci, (None, "analytic", "lin", "jackknife", "bootstrap"))
    if level == "domain" and "domain" not in tests:
        raise ValueError("level='domain' needs a domain column")
    options = dict(level=level, weighting=weighting, normalize_weights=normalize_weights)
    if level != "study" or ci not in ("jackknife", "bootstrap"):
        return ecs_from_sums(finding_sums(tests), ci=ci, n_boot=n_boot,
                             random_state=random_state, **options)  # type: ignore[arg-type]
    table = ecs_from_sums(finding_sums(tests), ci=None, **options)  # type: ignore[arg-type]
    # The tests are the units of a study's own interval: each test's moments.
    prepared = _prepared_columns(tests)
    x, y = prepared["d_h"], prepared["d_a"]
    _, w = _pair_weights(tests, weighting, x, y)
    owner, _ = _group_codes(tests, ["model", "study"])  # the table's rows, in its order
    units = _unit_moments(np.arange(len(tests), dtype=np.int64), len(tests), x, y, w)
    value, n = table["ecs"].to_numpy(float), table["n"].to_numpy()
    method = np.full(len(table), "", dtype=object)
    if ci == "jackknife":
        low, high = _jackknife_interval(owner, units, len(table), value, normalize_weights)
        if normalize_weights:
            method[n > 0] = "jackknife_tests"
    else:
        low, high = _ecs_bootstrap(owner, units, len(table), normalize_weights, n_boot,
                                   random_state)
        defined = np.isfinite(value) & (n >= 2)
        low, high = np.where(defined, low, np.nan), np.where(defined, high, np.nan)
        method[n > 0] = "bootstrap_tests"
    return table.assign(ecs_low=low, ecs_high=high, ci_method=method)


def ecs_from_sums(sums: pd.DataFrame, *,
                  level: Literal["overall", "domain", "study"] = "overall",
                  weighting: Literal["structure", "equal"] = "structure",
                  normalize_weights: bool = True,
                  ci: Literal["analytic", "lin", "jackknife", "bootstrap"] | None = "analytic",
                  n_boot: int = 1000, random_state: int = 0,
                  weights: Array | None = None) -> pd.DataFrame:
    r""":func:`ecs` finished from the tests' sufficient table (:func:`finding_sums`, or
    an engine's: ``kbench_core.engines.replication``), every option but the intervals
    whose units are the tests (``level="study"`` with ``ci="jackknife"`` or
    ``"bootstrap"``: a ValueError).

    A test's weight is constant within its finding (1/(findings in the study) × 1/(tests
    in the finding), or 1), so a group's weighted moments combine its findings' own
    (Chan, Golub & LeVeque 1983, the pairwise update):

    .. math:: W = \sum_f w_f n_f,\quad \mu_x = \sum_f w_f n_f \bar x_f / W,\quad
              S_{xy} = \sum_f w_f\bigl[C_f + n_f(\bar x_f-\mu_x)(\bar y_f-\mu_y)\bigr]

    with :math:`C_f` the finding's centred sum of products (:math:`M_{2}` for x and y), as
    accurate as the two-pass moments of the tests; a study's (or a test's) raw sums for the
    jackknife and the bootstrap are :math:`w_f(M_{2,f} + n_f\bar x_f^2)` and the like.
    Rows, keys and columns as :func:`ecs` gives them. ``weights``: each row's per-test
    weight under ``weighting`` when ``sums`` is already in order of ``place``
    (:func:`sums_in_order`, which makes both once for the three levels). Written by hand,
    as :func:`ecs`."""
    check_choice("level", level, ("overall", "domain", "study"))
    check_choice("weighting", weighting, ("structure", "equal"))
    check_choice("ci", ci, (None, "analytic", "lin", "jackknife", "bootstrap"))
    if level == "study" and ci in ("jackknife", "bootstrap"):
        raise ValueError(f"level='study' with ci={ci!r} resamples the tests: give them "
                         "to ecs(), not their sums")
    if level == "domain" and "domain" not in sums:
        raise ValueError("level='domain' needs a domain column")
    if weights is None:
        s, w = sums_in_order(sums, weighting)
    else:
        s, w = sums, weights
    n_f = s["n"].to_numpy(np.int64)
    valid = n_f > 0
    group_cols = ["model"] + ({"overall": [], "domain": ["domain"], "study": ["study"]}[level])
    codes, first = _group_codes(s, group_cols)
    size = first.size
    out = _key_columns(s, group_cols, first)
    g = codes[valid]
    nw = (w * n_f)[valid]
    mean_x, mean_y = (s[c].to_numpy(float)[valid] for c in ("mean_x", "mean_y"))
    m2x, m2y, cxy = (s[c].to_numpy(float)[valid] for c in ("m2_x", "m2_y", "c_xy"))
    n = np.bincount(g, weights=n_f[valid], minlength=size)
    sw = np.bincount(g, weights=nw, minlength=size)
    with np.errstate(invalid="ignore", divide="ignore"):
        mx = np.bincount(g, weights=nw * mean_x, minlength=size) / sw
        my = np.bincount(g, weights=nw * mean_y, minlength=size) / sw
        dx, dy = mean_x - mx[g], mean_y - my[g]
        wv = w[valid]
        scale = sw if normalize_weights else 1.0
        vx = np.bincount(g, weights=wv * m2x + nw * dx * dx, minlength=size) / scale
        vy = np.bincount(g, weights=wv * m2y + nw * dy * dy, minlength=size) / scale
        cov = np.bincount(g, weights=wv * cxy + nw * dx * dy, minlength=size) / scale
        kish = sw * sw / np.bincount(g, weights=wv * wv * n_f[valid], minlength=size)
    value = _ccc_rules(mx, my, vx, vy, cov, n, sw, normalize_weights)
    mom = {"vx": vx, "vy": vy, "cov": cov, "diff": mx - my, "kish": kish}
    if level == "study":
        value = np.where(n >= MIN_STUDY_PAIRS, value, np.nan)
    out["ecs"] = value
    # Studies within each group (group code × the study's code), numbered 0..k-1 in that
    # order: the bootstrap's draws follow it.
    key = codes * (len(s) + 1) + pd.factorize(s["study"])[0]
    study_codes = pd.factorize(key, sort=True)[0].astype(np.int64)  # np.unique's numbering
    n_studies = np.bincount(pd.unique(key[valid]) // (len(s) + 1), minlength=size)
    owner = np.zeros(int(study_codes.max(initial=-1)) + 1, dtype=np.int64)
    owner[study_codes] = codes
    method = np.full(size, "", dtype=object)
    if ci in ("analytic", "lin", "jackknife"):
        # Per group: does a study hold several valid pairs (then its tests are clustered)?
        pairs_per_study = np.bincount(study_codes, weights=n_f, minlength=owner.size)
        clustered = np.zeros(size, dtype=bool)
        clustered[owner[pairs_per_study >= 2]] = True
        if level == "study":
            clustered[:] = False  # one study per row: its tests are the units
        jack = {"analytic": clustered, "lin": np.zeros(size, dtype=bool),
                "jackknife": np.ones(size, dtype=bool)}[ci]
        lin_low, lin_high = _lin_interval(value, n, mom, normalize_weights)
        jk_low = jk_high = lin_low
        if jack.any():
            units = _finding_moments(s, study_codes, owner.size, w)
            jk_low, jk_high = _jackknife_interval(owner, units, size, value,
                                                  normalize_weights)
        out["ecs_low"] = np.where(jack, jk_low, lin_low)
        out["ecs_high"] = np.where(jack, jk_high, lin_high)
        if normalize_weights:
            method = np.where(jack, "jackknife_studies", "lin").astype(object)
            method[n == 0] = ""
    elif ci == "bootstrap":
        units = _finding_moments(s, study_codes, owner.size, w)
        low, high = _ecs_bootstrap(owner, units, size, normalize_weights, n_boot,
                                   random_state)
        defined = np.isfinite(value) & (n_studies >= 2)
        out["ecs_low"] = np.where(defined, low, np.nan)
        out["ecs_high"] = np.where(defined, high, np.nan)
        method[n > 0] = "bootstrap_studies"
    else:
        out["ecs_low"] = out["ecs_high"] = np.full(size, np.nan)
    out["ci_method"] = method
    out["n"] = n.astype(int)
    out["n_kish"] = np.where(n > 0, kish, 0.0)
    out["n_studies"] = n_studies
    return pd.DataFrame(out)


SUM_KEYS = ("model", "study", "finding")  # and domain, when the run has one


def finding_sums(tests: pd.DataFrame) -> pd.DataFrame:
    r"""ECS's sufficient table of ``tests`` (raw or prepared): one row per model × study ×
    finding [× domain], in the order of each one's first test, with the moments of its valid
    pairs (x = human d, y = agent d, both finite): ``n``, the means ``mean_x, mean_y``,
    the centred sums :math:`M_{2,x} = \sum (x-\bar x)^2`, ``m2_y`` and
    :math:`C = \sum (x-\bar x)(y-\bar y)` (two-pass), and ``place``, the row of its first
    test. A finding without a valid pair is kept (n = 0, moments NaN): its model and study
    stay in :func:`ecs`'s tables. What :func:`ecs_from_sums` finishes, and what an engine
    computes in one group-by (``kbench_core.engines.replication``)."""
    keys = [*SUM_KEYS, *(["domain"] if "domain" in tests else [])]
    missing = [k for k in SUM_KEYS if k not in tests]
    if missing:
        raise ValueError(f"ECS needs the columns {', '.join(missing)}")
    prepared = _prepared_columns(tests)
    x, y = prepared["d_h"], prepared["d_a"]
    codes, first = _group_codes(tests, keys)
    size = first.size
    ok = np.isfinite(x) & np.isfinite(y)
    g, x, y = codes[ok], x[ok], y[ok]
    n = np.bincount(g, minlength=size)
    with np.errstate(invalid="ignore", divide="ignore"):
        mx = np.bincount(g, weights=x, minlength=size) / n
        my = np.bincount(g, weights=y, minlength=size) / n
    dx, dy = x - mx[g], y - my[g]
    out: dict[str, object] = {}
    for name in keys:
        values = tests[name]
        taken = values.array.take(first) if isinstance(values, pd.Series) else \
            np.asarray(values).take(first)
        out[name] = pd.Series(taken)
    empty = n == 0
    out.update(n=n, mean_x=mx, mean_y=my,
               m2_x=np.where(empty, np.nan, np.bincount(g, weights=dx * dx, minlength=size)),
               m2_y=np.where(empty, np.nan, np.bincount(g, weights=dy * dy, minlength=size)),
               c_xy=np.where(empty, np.nan, np.bincount(g, weights=dx * dy, minlength=size)),
               place=first.astype(np.int64))
    return pd.DataFrame(out)


def sums_in_order(sums: pd.DataFrame, weighting: str = "structure",
                  ) -> tuple[pd.DataFrame, Array]:
    """``sums`` (:func:`finding_sums`) in order of ``place`` with a fresh index, and each
    row's per-test ECS weight under ``weighting``: what :func:`ecs_from_sums` reads first,
    made once when it finishes several levels (``weights=``)."""
    check_choice("weighting", weighting, ("structure", "equal"))
    ordered = sums["place"].is_monotonic_increasing
    s = (sums if ordered else sums.sort_values("place", kind="stable")).reset_index(drop=True)
    n_f = s["n"].to_numpy(np.int64)
    return s, _finding_weights(s, weighting, n_f, n_f > 0)


def _finding_weights(s: pd.DataFrame, weighting: str, n_f: Array, valid: Array) -> Array:
    """Each row's per-test ECS weight (0 without a valid pair): 1/(findings with a valid
    pair in the model's study) × 1/(valid pairs in the finding, over its domains), or 1."""
    if weighting == "equal":
        return valid.astype(float)
    if any(_missing(s[c])[valid].any() for c in SUM_KEYS):
        raise ValueError("structure weights need a model, study and finding on every test "
                         "with a valid pair (or weighting='equal')")
    f_codes, f_first = _group_codes(s, list(SUM_KEYS))
    st_codes, _ = _group_codes(s, ["model", "study"])
    pairs = np.bincount(f_codes, weights=n_f, minlength=f_first.size)
    study_of = np.zeros(f_first.size, dtype=np.int64)
    study_of[f_codes] = st_codes
    findings = np.bincount(study_of[pairs > 0], minlength=int(st_codes.max(initial=-1)) + 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        w = 1.0 / (findings[st_codes] * pairs[f_codes])
    return np.where(valid, w, 0.0)


def _finding_moments(s: pd.DataFrame, units: Array, n_units: int, w: Array) -> Array:
    """The raw weighted sums (Σw, Σwx, Σwy, Σwx², Σwy², Σwxy, pairs) of each unit (a study of
    a group) from its findings' moments: Σwx² = w(M₂ + n x̄²) and the like."""
    n = s["n"].to_numpy(float)
    ok = n > 0
    u, n, w = units[ok], n[ok], w[ok]
    mx, my = (s[c].to_numpy(float)[ok] for c in ("mean_x", "mean_y"))

    def column(name: str) -> Array:
        return s[name].to_numpy(float)[ok]

    wn = w * n
    # one part at a time (a 4M-finding run held 7 of them at once, +0.4 GB)
    parts = (lambda: wn, lambda: wn * mx, lambda: wn * my,
             lambda: w * (column("m2_x") + n * mx * mx),
             lambda: w * (column("m2_y") + n * my * my),
             lambda: w * (column("c_xy") + n * mx * my), lambda: n)
    return np.stack([np.bincount(u, weights=part(), minlength=n_units) for part in parts])


def _unit_moments(units: Array, n_units: int, x: Array, y: Array, w: Array) -> Array:
    """The raw weighted sums (as :func:`_finding_moments`) of each unit from its tests'
    valid pairs."""
    ok = np.isfinite(x) & np.isfinite(y) & np.isfinite(w) & (w > 0)
    u, x, y, w = units[ok], x[ok], y[ok], w[ok]
    return np.stack([np.bincount(u, weights=v, minlength=n_units)
                     for v in (w, w * x, w * y, w * x * x, w * y * y, w * x * y,
                               np.ones_like(w))])


MIN_JACKKNIFE_UNITS = 3  # fewer clusters leave t_{G-1} meaningless (t_1 = 12.7)


def _jackknife_interval(owner: Array, sums: Array, size: int, value: Array, normalize: bool,
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
    weighted CCC by cluster): ``sums`` are each cluster's moment sums (7 × clusters:
    :func:`_finding_moments`), ``owner`` its group, and each leave-one-out CCC is the
    group's sums minus one cluster's, all clusters at once.
    NaN for fewer than :data:`MIN_JACKKNIFE_UNITS` clusters, where a leave-one-out CCC is
    undefined, where the leave-one-out values do not vary (an effect profile without
    spread) and without normalised weights; identical profiles (ρc = 1) get [1, 1] as
    Lin's interval does.
    """
    nan = np.full(size, np.nan)
    present = sums[-1] > 0  # clusters with a valid pair
    if not normalize or not present.any():
        return nan, nan.copy()
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


def _ecs_bootstrap(owner: Array, moments: Array, size: int, normalize: bool, n_boot: int,
                   random_state: int) -> tuple[Array, Array]:
    """Percentile interval over resampled clusters (studies, or tests) within each group
    (``owner``: each cluster's group; ``moments``: its weighted moment sums, as
    :func:`_jackknife_interval` takes them); a cluster drawn k times counts k times, a
    cluster without a valid pair is never drawn. Written by hand: the resampling is
    stratified by group, and a replicate costs six bincounts over clusters, not tests."""
    rng = np.random.default_rng(random_state)
    present = moments[-1] > 0
    owner, moments = owner[present], moments[:, present]
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
