"""Effect sizes on one scale: conversions to Cohen's d, their standard errors, posteriors from
Bayes factors, and :func:`prepare_tests`, which adds d, SEs and posteriors to a run's tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

EPSILON = 1e-6  # r is clamped to ±(1 − ε) before atanh (seed: "prevents infinities")
Array = np.ndarray
ArrayLike = np.ndarray | pd.Series | Sequence[float] | float


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
    whichever columns each row gives (``docs/formats.md``), as the released ``compute_ecs_corr``
    does:

    - d: ``human_d``/``agent_d`` where given, else :func:`effect_to_d` of
      ``human_effect``/``agent_effect`` with the row's ``test_type``;
    - π: ``human_pi``/``agent_pi`` where given, else from Bayes factors
      (:func:`posterior_from_bf`) with prior odds ``human_prior_significant`` (10) for a human
      finding reported significant, ``human_prior_null`` (0.1) for one that is not, and
      ``agent_prior`` (1) for the agent. A human Bayes factor without its
      ``human_significant`` flag has no prior, so its π_h is NaN.
    """
    added = _prepared_columns(tests, human_prior_significant=human_prior_significant,
                              human_prior_null=human_prior_null, agent_prior=agent_prior)
    if any(name in tests for name in added):  # prepared already: overwrite in place
        out = tests.copy()
        for name, values in added.items():
            out[name] = values
        return out
    # New columns appended in one step (four insertions copied the frame four times).
    return pd.concat([tests, pd.DataFrame(added, index=tests.index)], axis=1)


def _prepared_columns(tests: pd.DataFrame, *, human_prior_significant: float = 10.0,
                      human_prior_null: float = 0.1, agent_prior: float = 1.0,
                      ) -> dict[str, Array]:
    """The columns :func:`prepare_tests` adds (``d_h, d_a, pi_h, pi_a``), as arrays, for
    callers that need only them and not a new frame."""
    n = len(tests)

    def column(name: str) -> Array:
        if name not in tests:
            return np.full(n, np.nan)
        values = tests[name]
        if isinstance(values.dtype, np.dtype) and values.dtype.kind in "iuf":
            return values.to_numpy().astype(float)  # numpy numbers: no NA scan needed
        return values.to_numpy(dtype=float, na_value=np.nan)

    def kind() -> Array:
        return tests["test_type"].astype(object).to_numpy() if "test_type" in tests \
            else np.full(n, None, dtype=object)

    added: dict[str, Array] = {}
    for side in ("human", "agent"):
        d = column(f"{side}_d").copy()
        need = ~np.isfinite(d)  # convert the native effect only where no d is given
        if need.any() and f"{side}_effect" in tests:
            d[need] = effect_to_d(column(f"{side}_effect")[need], kind()[need])
        added[f"d_{side[0]}"] = d
    if "human_significant" in tests:
        flag = tests["human_significant"].astype("boolean")
        odds = np.where(flag.fillna(False).to_numpy(bool), human_prior_significant,
                        human_prior_null)
        odds = np.where(flag.isna().to_numpy(), np.nan, odds)
    else:
        odds = np.full(n, np.nan)
    from_bf = {"human": posterior_from_bf(column("human_bf10"), odds),
               "agent": posterior_from_bf(column("agent_bf10"), agent_prior)}
    for side in ("human", "agent"):
        given = column(f"{side}_pi")
        added[f"pi_{side[0]}"] = np.where(np.isfinite(given), given, from_bf[side])
    return added


def _group_codes(frame: pd.DataFrame | Mapping[str, pd.Series],
                 columns: Sequence[str]) -> tuple[Array, Array]:
    """Group codes of ``columns`` numbered in order of first appearance (as
    ``groupby(sort=False, dropna=False).ngroup()``, missing keys a group of their own), and
    each group's first row.

    Each column becomes integer codes (a categorical's own codes; ``pd.factorize``
    otherwise), the codes are combined in mixed radix and one ``pd.factorize`` numbers the
    combinations: three groupbys over text keys were half of a small run's PAS."""
    n = len(frame[columns[0]]) if columns else len(frame)
    combined = np.zeros(n, dtype=np.int64)
    bound = 1
    for name in columns:
        values = frame[name]
        if isinstance(values.dtype, pd.CategoricalDtype):
            codes, size = values.array.codes.astype(np.int64), len(values.array.categories)
        else:
            found, uniques = pd.factorize(values)
            codes, size = found.astype(np.int64), len(uniques)
        codes = np.where(codes < 0, size, codes)  # missing: one more level
        size += 1
        if bound * size >= 2**62:  # re-number before the mixed radix overflows
            combined = np.unique(combined, return_inverse=True)[1].ravel().astype(np.int64)
            bound = int(combined.max()) + 1 if n else 1
        combined = combined * size + codes
        bound *= size
    # numbered by first appearance by hashing, not by sorting the combinations (np.unique
    # took 4 s of a 6M-test run's ECS tables); each group's first row: the rows that are
    # not repeats, in order
    codes = pd.factorize(combined)[0].astype(np.int64)
    first = np.flatnonzero(~pd.Series(combined).duplicated().to_numpy())
    return codes, first


def _key_columns(frame: pd.DataFrame | Mapping[str, pd.Series], columns: Sequence[str],
                 first: Array, carry: Sequence[str] = ()) -> dict[str, object]:
    """The groups' keys as text, from each group's ``first`` row, with the ``carry`` columns
    taken from that row too (e.g. a study's domain); to be completed and built into a frame
    once."""
    def taken(name: str) -> pd.Series:
        values = frame[name]
        values = values.array if isinstance(values, pd.Series) else np.asarray(values)
        return pd.Series(values.take(first)).astype(str)

    out: dict[str, object] = {name: taken(name) for name in columns}
    for name in carry:
        if name in frame:
            out[name] = taken(name).to_numpy()
    return out


def _codes(frame: pd.DataFrame, columns: Sequence[str],
           carry: Sequence[str] = ()) -> tuple[Array, pd.DataFrame]:
    """Group codes of ``columns`` in order of first appearance, and the groups (as text) with
    the ``carry`` columns taken from each group's first row (e.g. a study's domain)."""
    codes, first = _group_codes(frame, columns)
    return codes, pd.DataFrame(_key_columns(frame, columns, first, carry))
