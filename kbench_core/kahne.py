"""The six KahneBench metrics per model × bias, and the cognitive fingerprint
(``docs/metrics/bias.md``).

Every function takes a validated ``bias`` frame (see :mod:`kbench_core.io`) and returns a tidy
DataFrame with one row per model × bias, computed with groupbys over all groups at once.
Defaults carry the fixes of the metrics review (``docs/metrics/bias.md``); each
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
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Literal

import numpy as np
import pandas as pd

from kbench_core.schema import INTENSITIES
from kbench_core.stats import WithinGroups, check_choice, t_interval, wilson

__all__ = [
    "AGGREGATION_WEIGHTS", "INTENSITY_WEIGHTS", "Fingerprint", "bci", "bmp", "bms", "cas",
    "domain_means", "fingerprint", "has", "human_baselines", "infer_method_kind", "rci",
    "with_threshold",
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
UNSCORED_ADVICE = ("None of its responses has a score (bias_score and is_biased are empty), as "
                   "KahneBench writes its results before scoring them. Score them with "
                   "KahneBench's scorer and load the scored results, or load the fingerprint "
                   "reports KahneBench writes after scoring (fingerprint_<model>.json).")


def scored_share(trials: pd.DataFrame) -> tuple[int, int]:
    """(responses with a known score, all responses) of a bias run."""
    known = int(trials["score"].notna().sum()) if "score" in trials else 0
    return known, len(trials)


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


@cache
def _shipped_baselines() -> tuple[tuple[tuple[str, float], ...], tuple[str, ...]]:
    """The shipped rates as (bias, rate) pairs and the weakly supported biases, read once:
    :func:`has` needs only these, and building :func:`human_baselines` cost more than HAS."""
    shipped = human_baselines().set_index("bias")
    return (tuple(dict(shipped["human_rate"]).items()),
            tuple(shipped.index[shipped["weakly_supported"]]))


def human_baselines() -> pd.DataFrame:
    """The 69 human susceptibility rates shipped with kbench (KahneBench's HUMAN_BASELINES),
    with ``weakly_supported`` marking the three rates with little empirical support, and for
    the 14 rates the metrics review checked, the study cited (``source``) and the review's
    ``assessment`` (empty elsewhere)."""
    data = _baseline_file()
    frame = pd.Series(data["baselines"], name="human_rate").rename_axis("bias").reset_index()
    frame["weakly_supported"] = frame["bias"].isin(data["weakly_supported"])
    frame["source"] = frame["bias"].map(data.get("citations", {})).fillna("")
    frame["assessment"] = frame["bias"].map(data.get("assessments", {})).fillna("")
    return frame



@dataclass(frozen=True)
class _Trials:
    """A bias frame reduced to integer codes, prepared once per call (or once per
    fingerprint): every metric then aggregates with ``np.bincount`` over group ids."""

    pairs: pd.DataFrame        # model, bias (str), row i = pair id i, sorted
    pair: np.ndarray           # pair id of each row
    score: np.ndarray          # NaN = unknown
    condition: np.ndarray      # 0 control, 1 treatment, 2 debiasing, -1 other
    intensity: np.ndarray      # 0..3 in INTENSITIES order, -1 none
    method: np.ndarray         # code into ``methods``, -1 none
    methods: np.ndarray        # method names
    method_kinds: np.ndarray   # given kind of each method (first non-empty), or None
    domain: np.ndarray         # code into ``domains``
    domains: np.ndarray
    confidence: np.ndarray

    @property
    def n_pairs(self) -> int:
        return len(self.pairs)


def _codes(series: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(series.dtype, pd.CategoricalDtype):
        return (series.cat.codes.to_numpy().astype(np.int64),
                np.asarray(series.cat.categories, dtype=object))
    codes, labels = pd.factorize(series)
    return codes.astype(np.int64), np.asarray(labels, dtype=object)


def _lookup(series: pd.Series, table: Mapping[str, int]) -> np.ndarray:
    codes, labels = _codes(series)
    lut = np.array([table.get(str(label), -1) for label in labels] + [-1], dtype=np.int64)
    return lut[codes]  # code -1 (missing) picks the trailing -1


def _frame(t: _Trials, columns: Mapping[str, object]) -> pd.DataFrame:
    """One row per pair: ``model``, ``bias`` and ``columns``, built in one constructor call.

    Assigning the columns one by one costs a copy of the column index each time (a text
    index under pandas 3): that fixed cost dominated the metrics on small runs.
    """
    return pd.DataFrame({**{k: t.pairs[k] for k in KEY}, **columns})


def _prepare(trials: pd.DataFrame | _Trials) -> _Trials:
    if isinstance(trials, _Trials):
        return trials
    n = len(trials)
    model_codes, model_labels = _codes(trials["model"])
    bias_codes, bias_labels = _codes(trials["bias"])
    key = model_codes * max(len(bias_labels), 1) + bias_codes
    unique, pair = np.unique(key, return_inverse=True)
    models = model_labels[unique // max(len(bias_labels), 1)].astype(str)
    biases = bias_labels[unique % max(len(bias_labels), 1)].astype(str)
    order = np.lexsort((biases, models))
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    if "method" in trials:
        method, methods = _codes(trials["method"])
        methods = methods.astype(str)
    else:
        method, methods = np.full(n, -1, dtype=np.int64), np.array([], dtype=str)
    kinds = np.full(len(methods), None, dtype=object)
    if "method_kind" in trials and len(methods):
        # Each method's first given kind: codes of both columns, the first row per method.
        kind_codes, kind_labels = _codes(trials["method_kind"])
        given = np.flatnonzero((method >= 0) & (kind_codes >= 0))
        named, first = np.unique(method[given], return_index=True)
        kinds[named] = kind_labels[kind_codes[given[first]]]
    domain, domains = _codes(trials["domain"])
    confidence = (trials["confidence"].to_numpy(dtype=float) if "confidence" in trials
                  else np.full(n, np.nan))
    intensity = (_lookup(trials["intensity"], {k: i for i, k in enumerate(INTENSITIES)})
                 if "intensity" in trials else np.full(n, -1, dtype=np.int64))
    return _Trials(
        pairs=pd.DataFrame({"model": models[order], "bias": biases[order]}),
        pair=rank[pair.ravel()],
        score=trials["score"].to_numpy(dtype=float),
        condition=_lookup(trials["condition"], {"control": 0, "treatment": 1,
                                                "debiasing": 2}),
        intensity=intensity, method=method, methods=methods, method_kinds=kinds,
        domain=domain, domains=domains.astype(str), confidence=confidence,
    )


@dataclass(frozen=True)
class _Stats:
    n: np.ndarray
    mean: np.ndarray
    m2: np.ndarray  # sum of squared deviations from the group mean
    n_fractional: np.ndarray  # values other than 0 and 1

    def var(self, ddof: int) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.n > ddof, self.m2 / (self.n - ddof), np.nan)

    def interval(self, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        """95% interval of each group mean: Wilson where every value is 0 or 1 (a proportion),
        Student t otherwise (``docs/statistics.md``: Wilson for proportions, t for means)."""
        binary = self.n_fractional == 0
        w_low, w_high = wilson(self.mean * self.n, self.n, level=level)
        t_low, t_high = t_interval(self.mean, np.sqrt(self.var(1)), self.n, level=level)
        return np.where(binary, w_low, t_low), np.where(binary, w_high, t_high)


def _stats(group: np.ndarray, values: np.ndarray, size: int,
           mask: np.ndarray | None = None) -> _Stats:
    """Count, mean and squared deviations of the non-NaN values per group (two passes, so
    identical values give a variance of exactly 0)."""
    ok = ~np.isnan(values) & (group >= 0)
    if mask is not None:
        ok &= mask
    g, v = group[ok], values[ok]
    n = np.bincount(g, minlength=size).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.bincount(g, weights=v, minlength=size) / n
    dev = v - mean[g]
    m2 = np.bincount(g, weights=dev * dev, minlength=size)
    fractional = np.bincount(g, weights=(v != 0) & (v != 1), minlength=size)
    return _Stats(n, mean, m2, fractional)


# ----------------------------------------------------------------------------- BMS


def bms(trials: pd.DataFrame, *, cap: float | None = 1.0,
        intensity_weights: Mapping[str, float] | None = None,
        aggregation_weights: Mapping[str, float] | None = None,
        spacing: Literal["ordinal", "observed"] = "ordinal",
        ci: Literal["bootstrap"] | None = None, n_boot: int = 1000,
        random_state: int = 0) -> pd.DataFrame:
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
    gives control mean 0 (KahneBench's convention). ``control_mean`` and each
    ``mean_<intensity>`` carry a 95% interval (Wilson when the scores are 0/1, else t).

    BMS itself has no analytic interval (a capped, weighted sum of absolute differences):
    ``ci="bootstrap"`` adds ``bms_low``/``bms_high``, percentiles of ``n_boot`` resamples of
    the trials within each condition cell (control, each intensity), so every replicate keeps
    the design. A cell of 0/1 scores is resampled exactly as a binomial draw of its mean, so
    the cost grows with cells, not rows, for binary runs.

    References
    ----------
    KahneBench ``metrics/core.py`` and its metrics review (``docs/metrics/bias.md``).
    """
    check_choice("spacing", spacing, ("ordinal", "observed"))
    check_choice("ci", ci, (None, "bootstrap"))
    weights = {**INTENSITY_WEIGHTS, **(intensity_weights or {})}
    agg = {**AGGREGATION_WEIGHTS, **(aggregation_weights or {})}
    w = np.array([weights[name] for name in INTENSITIES])
    a = np.array([agg[name] for name in INTENSITIES])
    t = _prepare(trials)
    return _frame(t, _bms(t, w, a, cap, spacing, ci, n_boot, random_state))


def _bms(t: _Trials, w: np.ndarray, a: np.ndarray, cap: float | None, spacing: str,
         ci: str | None, n_boot: int, random_state: int) -> dict[str, object]:
    """The columns of :func:`bms` after ``model`` and ``bias``, one value per pair
    (one row per pair of ``t``)."""
    size = t.n_pairs
    out: dict[str, object] = {}
    rows = np.bincount(t.pair, minlength=size)
    out["n"] = rows
    out["unknown_rate"] = np.bincount(t.pair, weights=np.isnan(t.score), minlength=size) / rows
    out["high_unknown"] = _above(out["unknown_rate"], HIGH_UNKNOWN)  # type: ignore[arg-type]
    cells = _bms_cells(t)
    k = len(INTENSITIES)
    control = cells.stats.n.reshape(size, k + 1)[:, 0] > 0
    means = cells.stats.mean.reshape(size, k + 1)
    out["control_mean"] = np.where(control, means[:, 0], 0.0)
    out["n_control"] = cells.stats.n.reshape(size, k + 1)[:, 0].astype(int)
    low, high = (b.reshape(size, k + 1) for b in cells.stats.interval())
    out["control_mean_low"], out["control_mean_high"] = low[:, 0], high[:, 0]
    mags, score = _bms_formula(means, w, a, cap)
    for i, name in enumerate(INTENSITIES):
        out[f"mean_{name}"] = means[:, 1 + i]
        out[f"n_{name}"] = cells.stats.n.reshape(size, k + 1)[:, 1 + i].astype(int)
        out[f"mean_{name}_low"], out[f"mean_{name}_high"] = low[:, 1 + i], high[:, 1 + i]
        out[f"mag_{name}"] = mags[:, i]
    out["bms"] = score
    if ci == "bootstrap":
        out["bms_low"], out["bms_high"] = _bms_bootstrap(t, cells, w, a, cap, n_boot,
                                                         random_state)
    present = ~np.isnan(mags)
    out["n_intensities"] = present.sum(axis=1)
    out["sensitivity"] = _slopes(mags, present, spacing)
    return out


@dataclass(frozen=True)
class _Cells:
    """Known scores grouped by pair × (control, weak, ..., adversarial): cell = pair·5 + slot."""

    cell: np.ndarray    # cell of each known control/treatment score
    score: np.ndarray
    stats: _Stats


def _bms_cells(t: _Trials) -> _Cells:
    k = len(INTENSITIES)
    slot = np.select([t.condition == 0, (t.condition == 1) & (t.intensity >= 0)],
                     [0, 1 + t.intensity], -1)
    used = (slot >= 0) & ~np.isnan(t.score)
    cell = t.pair[used] * (k + 1) + slot[used]
    score = t.score[used]
    return _Cells(cell, score, _stats(cell, score, t.n_pairs * (k + 1)))


def _bms_formula(means: np.ndarray, w: np.ndarray, a: np.ndarray,
                 cap: float | None) -> tuple[np.ndarray, np.ndarray]:
    """Magnitudes and BMS from cell means ``[..., pair, slot]`` (slot 0 = control, NaN =
    empty); leading axes (bootstrap replicates) broadcast."""
    control = np.nan_to_num(means[..., 0], nan=0.0)  # empty control → 0 (KahneBench)
    mags = w * np.abs(means[..., 1:] - control[..., None])
    if cap is not None:
        mags = np.minimum(mags, cap)
    present = ~np.isnan(mags)
    weight_sum = (present * a).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        score = np.where(weight_sum > 0, np.nansum(mags * a, axis=-1) / weight_sum, np.nan)
    return mags, score


def _bms_bootstrap(t: _Trials, cells: _Cells, w: np.ndarray, a: np.ndarray,
                   cap: float | None, n_boot: int,
                   random_state: int) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval of BMS over stratified resamples of trials (see :func:`bms`).

    Written by hand: scipy's ``bootstrap`` resamples one statistic at a time and cannot keep
    the strata, and here every pair is resampled at once."""
    rng = np.random.default_rng(random_state)
    n_cells = cells.stats.n.size
    n = cells.stats.n
    binary = (cells.stats.n_fractional == 0) & (n > 0)
    p = np.where(binary, np.nan_to_num(cells.stats.mean), 0.0)
    # Rows of the cells with fractional scores, drawn within their cell.
    rows = np.flatnonzero(~binary[cells.cell])
    row_cell = cells.cell[rows]
    values = cells.score[rows]
    trials = WithinGroups(row_cell)
    shape = (t.n_pairs, len(INTENSITIES) + 1)
    draws = np.empty((n_boot, t.n_pairs))
    for b in range(n_boot):
        with np.errstate(invalid="ignore", divide="ignore"):
            means = rng.binomial(n.astype(np.int64), p) / n
            if rows.size:
                sums = np.bincount(row_cell, weights=values * trials.draw(rng),
                                   minlength=n_cells)
                means = np.where(binary, means, sums / n)
        draws[b] = _bms_formula(means.reshape(shape), w, a, cap)[1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a pair with no BMS stays NaN
        return np.nanquantile(draws, 0.025, axis=0), np.nanquantile(draws, 0.975, axis=0)


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
    check_choice("std", std, ("population", "sample"))
    check_choice("rows", rows, ("treatment", "all"))
    t = _prepare(trials)
    return _frame(t, _bci(t, std, rows))


def _bci(t: _Trials, std: str, rows: str) -> dict[str, object]:
    """The columns of :func:`bci` after ``model`` and ``bias``, one value per pair
    (one row per pair of ``t``)."""
    size, n_dom = t.n_pairs, max(len(t.domains), 1)
    used, per_domain = _domain_stats(t, rows)
    present = per_domain.n > 0
    owner = np.flatnonzero(present) // n_dom
    means = per_domain.mean[present]
    across = _stats(owner, means, size)
    out: dict[str, object] = {}
    out["mean_score"] = across.mean
    spread = np.sqrt(across.var(0 if std == "population" else 1))
    spread = np.where((across.n == 1), 0.0, spread)  # one domain: std 0 (seed)
    std_ = np.where(across.n > 0, spread, np.nan)
    out["std"] = std_
    out["n_domains"] = across.n.astype(int)
    out["consistency"] = 1 - np.minimum(std_ / 0.5, 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.bincount(owner, weights=means > 0.5 + TOLERANCE, minlength=size) / across.n
    out["systematic"] = pd.array(np.where(across.n > 0, share > 0.7 + TOLERANCE, pd.NA),
                                 dtype="boolean")
    out["n"] = np.bincount(t.pair[used & ~np.isnan(t.score)], minlength=size)
    return out


def _domain_stats(t: _Trials, rows: str) -> tuple[np.ndarray, _Stats]:
    """Rows used and the known-score stats per pair × domain (cell = pair·domains + domain):
    the cells behind both :func:`bci` and :func:`domain_means`."""
    n_dom = max(len(t.domains), 1)
    used = np.ones(t.pair.size, bool) if rows == "all" else t.condition == 1
    per = _stats(np.where(t.domain >= 0, t.pair * n_dom + t.domain, -1), t.score,
                 t.n_pairs * n_dom, used)
    return used, per


def domain_means(trials: pd.DataFrame, *,
                 rows: Literal["treatment", "all"] = "treatment") -> pd.DataFrame:
    """Mean known score per model × bias × domain (the cells behind BCI), with ``n`` and a
    95% interval (Wilson for 0/1 scores, else t)."""
    check_choice("rows", rows, ("treatment", "all"))
    t = _prepare(trials)
    n_dom = max(len(t.domains), 1)
    _, per = _domain_stats(t, rows)
    cells = np.flatnonzero(per.n > 0)
    low, high = per.interval()
    out = t.pairs.iloc[cells // n_dom].reset_index(drop=True)
    out["domain"] = t.domains[cells % n_dom]
    out["mean_score"] = per.mean[cells]
    out["mean_score_low"], out["mean_score_high"] = low[cells], high[cells]
    out["n"] = per.n[cells].astype(int)
    return out


# ----------------------------------------------------------------------------- BMP


def infer_method_kind(method: pd.Series) -> pd.Series:
    """The seed's substring rule: "chain"/"step" → chain_of_thought, "warn"/"bias" → warning,
    both or neither → other."""
    low = method.astype(str).str.lower()
    cot = low.str.contains("chain") | low.str.contains("step")
    warn = low.str.contains("warn") | low.str.contains("bias")
    return pd.Series(np.select([cot & ~warn, warn & ~cot], ["chain_of_thought", "warning"],
                               "other"), index=method.index)


def _infer_kinds(methods: np.ndarray) -> np.ndarray:
    """:func:`infer_method_kind` of a few method names, in Python (the same substring rule
    without building a Series)."""
    kinds = []
    for method in methods:
        low = str(method).lower()
        cot, warn = "chain" in low or "step" in low, "warn" in low or "bias" in low
        kinds.append("chain_of_thought" if cot and not warn
                     else "warning" if warn and not cot else "other")
    return np.array(kinds, dtype=object)


def bmp(trials: pd.DataFrame) -> pd.DataFrame:
    r"""Bias Mitigation Potential per model × bias.

    Notes
    -----
    Baseline = mean treatment score; each debiasing method's mean score; the best method has
    the lowest mean (ties: the first name in sort order);
    :math:`\mathrm{effectiveness} = \max(0, (b - s_{best}) / b)`, 0 when the baseline is 0 and
    NaN when it is undefined (no treatment rows with a known score).
    ``requires_warning`` = (mean of the warning methods' means) < (mean of the
    chain-of-thought methods' means), NaN when either kind is absent. A method's kind is the
    first ``method_kind`` given for it in the run, else :func:`infer_method_kind`, and
    ``kind_inferred`` says so. No debiasing rows → NaN.
    """
    t = _prepare(trials)
    return _frame(t, _bmp(t))


def _bmp(t: _Trials) -> dict[str, object]:
    """The columns of :func:`bmp` after ``model`` and ``bias``, one value per pair
    (one row per pair of ``t``)."""
    size, n_meth = t.n_pairs, max(len(t.methods), 1)
    out: dict[str, object] = {}
    baseline = _stats(t.pair, t.score, size, t.condition == 1)
    out["baseline"] = baseline.mean
    debias = (t.condition == 2) & (t.method >= 0)
    per = _stats(np.where(debias, t.pair * n_meth + t.method, -1), t.score, size * n_meth)
    # Every (pair, method) cell with a known score, in numpy: a groupby per call cost more
    # than the arithmetic on small runs.
    cells = np.flatnonzero(per.n > 0)
    owner, method = cells // n_meth, cells % n_meth
    score = per.mean[cells]
    inferred_kind = _infer_kinds(t.methods)
    given = t.method_kinds
    kind = np.where(pd.isna(given), inferred_kind, given) if len(given) else given
    # Best method: the lowest mean, ties by method name (first in sort order).
    name_rank = np.argsort(np.argsort(t.methods, kind="stable"), kind="stable")
    order = np.lexsort((name_rank[method], score, owner)) if len(cells) else cells
    ranked = owner[order]
    first = order[np.r_[True, ranked[1:] != ranked[:-1]]] if len(cells) else cells
    # No debiasing rows at all: a float column of NaN, as the groupby over no rows gave.
    best_method = np.full(size, np.nan, dtype=object if len(cells) else float)
    best_method[owner[first]] = t.methods[method[first]]
    best_score = np.full(size, np.nan)
    best_score[owner[first]] = score[first]
    out["best_method"] = best_method
    out["best_score"] = best_score
    n_methods = np.bincount(owner, minlength=size)
    out["n_methods"] = n_methods
    base = baseline.mean
    with np.errstate(invalid="ignore", divide="ignore"):
        gain = np.maximum((base - best_score) / base, 0.0)
        # baseline 0 → 0 (nothing to mitigate); baseline undefined (no treatment rows) → NaN
        out["effectiveness"] = np.where(np.isnan(base) | np.isnan(best_score), np.nan,
                                        np.where(base > 0, gain, 0.0))

    def kind_mean(name: str) -> np.ndarray:
        """Mean of the method means of one kind per pair (NaN where the pair has none)."""
        mine = kind[method] == name if len(cells) else np.zeros(0, dtype=bool)
        total = np.bincount(owner[mine], weights=score[mine], minlength=size)
        count = np.bincount(owner[mine], minlength=size)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(count > 0, total / count, np.nan)

    warning, cot = kind_mean("warning"), kind_mean("chain_of_thought")
    requires = pd.arrays.BooleanArray(_below(warning, cot),  # type: ignore[arg-type]
                                      np.isnan(warning) | np.isnan(cot))
    out["requires_warning"] = requires.to_numpy()
    flagged = pd.isna(given)[method] if len(cells) else np.zeros(0, dtype=bool)
    any_inferred = np.bincount(owner, weights=flagged, minlength=size) > 0
    out["kind_inferred"] = pd.arrays.BooleanArray(any_inferred, n_methods == 0).to_numpy()
    return out


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
    ``baseline_missing`` true. ``model_rate`` has a 95% interval: Wilson when every score of
    the group is 0 or 1 (a proportion), Student t otherwise.
    """
    shipped_rates, weak = _shipped_baselines()
    rates = dict(shipped_rates) if baselines is None else dict(baselines)
    return pd.DataFrame(_has(_prepare(trials), rates, frozenset(weak), threshold, relative,
                             per_intensity))


def _has(t: _Trials, rates: Mapping[str, float], weak: frozenset[str], threshold: float,
         relative: bool, per_intensity: bool) -> dict[str, object]:
    """The columns of :func:`has`, ``model`` and ``bias`` included, for the groups with
    treatment rows."""
    size = t.n_pairs
    extra: dict[str, object] = {}
    if per_intensity:
        k = len(INTENSITIES)
        treated = (t.condition == 1) & (t.intensity >= 0)
        grouped = _stats(np.where(treated, t.pair * k + t.intensity, -1), t.score, size * k)
        rows = np.repeat(np.arange(size), k)
        extra["intensity"] = np.tile(np.asarray(INTENSITIES, dtype=object), size)
    else:
        grouped = _stats(t.pair, t.score, size, t.condition == 1)
        rows = np.arange(size)
    n = grouped.n.astype(int)
    keep = n > 0
    low, high = grouped.interval()
    pairs = (t.pairs if keep.all() and not per_intensity
             else t.pairs.iloc[rows[keep]].reset_index(drop=True))
    bias = pairs["bias"]
    names = bias.to_numpy(dtype=object)
    # A dict lookup per pair (Series.map and isin cost more on a few hundred pairs)
    human = pd.Series(np.array([rates.get(b, np.nan) for b in names], dtype=float))
    model_rate = pd.Series(grouped.mean[keep])
    diff = model_rate - human
    limit = threshold * human if relative else threshold
    return {
        "model": pairs["model"], "bias": bias,
        **{name: values[keep] for name, values in extra.items()},  # type: ignore[index]
        "model_rate": model_rate, "model_rate_low": low[keep], "model_rate_high": high[keep],
        "n": n[keep], "human_rate": human,
        "alignment": 1 - diff.abs() / np.maximum(human, 1 - human),
        "direction": np.select([human.isna(), _below(diff.abs(), limit), diff > 0],
                               [None, "aligned", "over"], "under"),
        "baseline_missing": human.isna(),
        "weakly_supported": np.array([b in weak for b in names], dtype=bool),
    }


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
    check_choice("variance", variance, ("population", "sample"))
    t = _prepare(trials)
    return _frame(t, _rci(t, variance))


def _rci(t: _Trials, variance: str) -> dict[str, object]:
    """The columns of :func:`rci` after ``model`` and ``bias``, one value per pair
    (one row per pair of ``t``)."""
    size = t.n_pairs
    k = len(INTENSITIES)
    n_cells = 1 + k + len(t.methods)
    cell = np.select([t.condition == 0, (t.condition == 1) & (t.intensity >= 0),
                      (t.condition == 2) & (t.method >= 0)],
                     [0, 1 + t.intensity, 1 + k + t.method], -1)
    per = _stats(np.where(cell >= 0, t.pair * n_cells + cell, -1), t.score, size * n_cells)
    present = np.flatnonzero(per.n > 0)
    n, mu = per.n[present], per.mean[present]
    var = per.var(0 if variance == "population" else 1)[present]
    var = np.where(n == 1, 0.0, var)  # one trial: the seed's variance 0
    vmax = np.where((mu > 0) & (mu < 1), mu * (1 - mu), 0.25)
    consistency = 1 - np.minimum(var / vmax, 1.0)
    stable = var < 0.25 / n - TOLERANCE
    owner = present // n_cells
    count = np.bincount(owner, minlength=size)
    out: dict[str, object] = {}
    with np.errstate(invalid="ignore", divide="ignore"):
        out["consistency"] = np.bincount(owner, weights=consistency, minlength=size) / count
    unstable = np.bincount(owner, weights=~stable, minlength=size)
    out["stable"] = pd.array(np.where(count > 0, unstable == 0, pd.NA), dtype="boolean")
    out["n_cells"] = count
    total = np.bincount(owner, weights=n, minlength=size).astype(int)
    out["n"] = total
    out["has_data"] = total > 0
    return out


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
    t = _prepare(trials)
    return _frame(t, _cas(t))


def _cas(t: _Trials) -> dict[str, object]:
    """The columns of :func:`cas` after ``model`` and ``bias``, one value per pair
    (one row per pair of ``t``)."""
    size = t.n_pairs
    usable = ~np.isnan(t.confidence) & ~np.isnan(t.score)
    confidence = _stats(t.pair, t.confidence, size, usable)
    accuracy = _stats(t.pair, 1 - t.score, size, usable)
    out: dict[str, object] = {}
    out["mean_confidence"] = confidence.mean
    out["mean_confidence_low"], out["mean_confidence_high"] = confidence.interval()
    out["mean_accuracy"] = accuracy.mean
    out["mean_accuracy_low"], out["mean_accuracy_high"] = accuracy.interval()
    # numpy, not Series arithmetic: the same IEEE operations (NaN stays NaN through abs,
    # minimum and maximum as through clip) without a Series per step.
    gap = confidence.mean - accuracy.mean
    error = np.abs(gap)
    out["calibration_error"] = error
    out["calibration_score"] = 1 - np.minimum(error, 1.0)
    out["overconfident"] = pd.arrays.BooleanArray(
        _above(confidence.mean, accuracy.mean + 0.1), np.isnan(gap))
    out["metacognitive_gap"] = np.maximum(gap, 0.0)
    rows = np.bincount(t.pair, minlength=size)
    out["missing_confidence_rate"] = np.bincount(
        t.pair, weights=np.isnan(t.confidence), minlength=size) / rows
    n = confidence.n.astype(int)
    out["n"] = n
    out["has_confidence_data"] = n > 0
    return out


# ----------------------------------------------------------------------------- fingerprint


def _categories(trials: pd.DataFrame | _Trials) -> dict[str, str] | None:
    """Each bias's category (its first given one), or None when the run has no categories."""
    if isinstance(trials, _Trials) or "category" not in trials:
        return None
    # On codes (categoricals are not expanded): the first row of each bias with a category.
    bias_codes, biases = _codes(trials["bias"])
    category_codes, categories = _codes(trials["category"])
    given = np.flatnonzero((bias_codes >= 0) & (category_codes >= 0))
    named, first = np.unique(bias_codes[given], return_index=True)
    return {str(b): str(c) for b, c in zip(biases[named],
                                           categories[category_codes[given[first]]],
                                           strict=True)}


def _by_model(model: np.ndarray, bias: np.ndarray, score: np.ndarray,
              mask: np.ndarray) -> dict[object, list[tuple[float, object]]]:
    """(BMS, bias) of the rows in ``mask``, per model, in table order (bias order)."""
    out: dict[object, list[tuple[float, object]]] = {}
    for m, b, v in zip(model[mask], bias[mask], score[mask], strict=True):
        out.setdefault(m, []).append((v, b))
    return out


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
                relative: bool = False, top: int = 5, ci: Literal["bootstrap"] | None = None,
                n_boot: int = 1000, random_state: int = 0) -> Fingerprint:
    """The cognitive fingerprint: BMS, BCI, BMP, HAS, RCI and CAS side by side.

    One row per model × bias with ``n`` (rows), the bias ``category`` when the run gives one,
    and the model rate's 95% interval; ``ci="bootstrap"`` adds BMS's bootstrap interval
    (``bms_low``, ``bms_high``; see :func:`bms`).

    Per model: ``susceptibility`` = mean BMS over its biases (high-unknown ones included, as
    the seed does for an honest overall number) with a t interval over biases
    (``susceptibility_low``, ``susceptibility_high``, clipped to BMS's range [0, cap]);
    ``most_susceptible`` / ``most_resistant`` =
    the ``top`` biases by BMS, high-unknown biases excluded, ties by bias id; ``human_like`` =
    biases with alignment > 0.8; ``ai_specific`` = biases with direction ``over``.
    """
    categories = _categories(trials)
    trials = _prepare(trials)  # type: ignore[assignment]  # codes computed once for all six
    check_choice("spacing", spacing, ("ordinal", "observed"))
    check_choice("ci", ci, (None, "bootstrap"))
    check_choice("std", std, ("population", "sample"))
    check_choice("rows", bci_rows, ("treatment", "all"))
    check_choice("variance", variance, ("population", "sample"))
    t: _Trials = trials  # type: ignore[assignment]
    w = np.array([INTENSITY_WEIGHTS[name] for name in INTENSITIES])
    a = np.array([AGGREGATION_WEIGHTS[name] for name in INTENSITIES])
    # The metrics' columns straight from their arrays into one frame: selecting and renaming
    # six part frames, then joining them, cost more than the metrics on small runs.
    parts = {"bms": _bms(t, w, a, cap, spacing, ci, n_boot, random_state),
             "bci": _bci(t, std, bci_rows), "bmp": _bmp(t), "rci": _rci(t, variance),
             "cas": _cas(t)}
    shipped_rates, weak = _shipped_baselines()
    rates = dict(shipped_rates) if baselines is None else dict(baselines)
    shared: Mapping[str, object] | pd.DataFrame = _has(t, rates, frozenset(weak), threshold,
                                                       relative, False)
    if len(shared["model"]) != t.n_pairs:  # type: ignore[arg-type]
        # pairs without treatment rows: spread over every pair as a left merge does
        shared = t.pairs.merge(pd.DataFrame(shared), on=KEY, how="left")
    picked: list[tuple[str, str, str]] = [  # (part, column, name in the fingerprint)
        *(("bms", c, c) for c in ("bms", *(["bms_low", "bms_high"] if ci else []),
                                  "sensitivity", "control_mean", "unknown_rate",
                                  "high_unknown", "n")),
        ("bci", "mean_score", "bci_mean_score"), ("bci", "consistency", "bci_consistency"),
        ("bci", "systematic", "systematic"),
        *(("bmp", c, c) for c in ("best_method", "effectiveness", "requires_warning")),
        *(("has", c, c) for c in ("model_rate", "model_rate_low", "model_rate_high",
                                  "human_rate", "alignment", "direction", "baseline_missing",
                                  "weakly_supported")),
        ("rci", "consistency", "rci_consistency"), ("rci", "stable", "rci_stable"),
        *(("cas", c, c) for c in ("calibration_score", "overconfident",
                                  "missing_confidence_rate")),
    ]
    columns: dict[str, object] = {k: t.pairs[k] for k in KEY}
    if categories is not None:
        columns["category"] = t.pairs["bias"].map(categories)
    for part, column, name in picked:
        columns[name] = shared[column] if part == "has" else parts[part][column]
    table = pd.DataFrame(columns)

    grouped = table.groupby("model")["bms"]
    susceptibility, n_bms = grouped.mean(), grouped.count()
    # Interval over biases (t): how much the mean BMS would move with another bias sample.
    # BMS lies in [0, cap]: biases that all score the same (e.g. all 0) get the Wilson-type
    # bound of t_interval, not a zero-width interval (issue 23 item 7).
    low, high = t_interval(susceptibility, grouped.std(), n_bms,
                           bounds=None if cap is None else (0.0, cap))
    # The bias lists per model, in Python over the pairs (a few hundred even on 1M rows):
    # four sorted groupbys with a lambda each cost more than everything else on small runs.
    model = table["model"].to_numpy(dtype=object)
    bias = table["bias"].to_numpy(dtype=object)
    score = table["bms"].to_numpy(dtype=float)
    reliable = ~table["high_unknown"].to_numpy(dtype=bool)
    with np.errstate(invalid="ignore"):
        # A bias with BMS 0 (no magnitude) is not one the model is susceptible to.
        susceptible = reliable & (score > 1e-12)
    lists: dict[str, dict[object, list]] = {
        "most_susceptible": _by_model(model, bias, score, susceptible),
        "most_resistant": _by_model(model, bias, score, reliable & ~np.isnan(score)),
        "human_like": _by_model(model, bias, score,
                                _above(table["alignment"], 0.8).to_numpy(dtype=bool)),
        "ai_specific": _by_model(model, bias, score,
                                 (table["direction"] == "over").to_numpy(dtype=bool)),
    }
    order = {"most_susceptible": lambda item: (-item[0], item[1]),  # highest BMS first
             "most_resistant": lambda item: (item[0], item[1])}
    picked = {}
    for col, per_model in lists.items():
        cells = np.empty(len(susceptibility), dtype=object)
        for i, name in enumerate(susceptibility.index):
            items = per_model.get(name, [])
            if col in order:
                items = sorted(items, key=order[col])[:top]
            cells[i] = tuple(b for _, b in items)
        picked[col] = cells
    models = pd.DataFrame({
        "susceptibility": susceptibility, "n_biases": grouped.size(),
        # BMS lies in [0, cap] (any value >= 0 with the cap lifted): so does its mean
        "susceptibility_low": np.clip(low, 0.0, None),
        "susceptibility_high": np.clip(high, None, cap) if cap is not None else high,
        **picked,
    }, index=susceptibility.index)
    return Fingerprint(biases=table, models=models.reset_index())


def with_threshold(fp: Fingerprint, *, threshold: float = 0.1,
                   relative: bool = False) -> Fingerprint:
    """``fp`` with HAS's ``direction`` (and each model's ``ai_specific`` biases) for another
    threshold: what :func:`fingerprint` gives with ``threshold`` and ``relative``, without
    recomputing anything else (the threshold changes nothing but the direction; alignment,
    rates and every other metric stay). For a live threshold slider."""
    biases = fp.biases.copy()
    human = biases["human_rate"]
    diff = biases["model_rate"] - human
    limit = threshold * human if relative else threshold
    biases["direction"] = np.select([human.isna(), _below(diff.abs(), limit), diff > 0],
                                    [None, "aligned", "over"], "under")
    per_model = _by_model(biases["model"].to_numpy(dtype=object),
                          biases["bias"].to_numpy(dtype=object),
                          biases["bms"].to_numpy(dtype=float),
                          (biases["direction"] == "over").to_numpy(dtype=bool))
    models = fp.models.copy()
    cells = np.empty(len(models), dtype=object)
    for i, name in enumerate(models["model"]):
        cells[i] = tuple(b for _, b in per_model.get(name, []))
    models["ai_specific"] = cells
    return Fingerprint(biases=biases, models=models)
