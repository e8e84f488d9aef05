"""Shared by the KahneBench metrics: constants, the human baselines, trials reduced to integer
codes and per-group statistics (``docs/metrics/bias.md``)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib.resources import files

import numpy as np
import pandas as pd

from kbench_core.schema import INTENSITIES
from kbench_core.stats import t_interval, wilson

KEY = ["model", "bias"]
# A reduced run's column of rows per distinct tuple (kbench_core.engines.reduce.COUNT): the
# metrics weigh each row by it instead of reading repeated rows.
WEIGHT = "__kbench_rows"
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


def row_weights(trials: pd.DataFrame) -> np.ndarray | None:
    """The rows behind each row of ``trials``: its :data:`WEIGHT` column (a run reduced by an
    engine to its distinct tuples, ``kbench_core.engines.reduce.finish``; a missing weight,
    e.g. an uploaded run's rows combined with it, counts 1), or None when every row is one
    response."""
    if WEIGHT not in trials:
        return None
    return pd.to_numeric(trials[WEIGHT], errors="coerce").fillna(1).to_numpy(dtype=float)


def repeated(trials: pd.DataFrame) -> pd.DataFrame:
    """A weighted frame (:func:`row_weights`) as the rows it stands for: each row repeated
    its weight's times, the weight column dropped; an unweighted frame as it is."""
    weight = row_weights(trials)
    if weight is None:
        return trials
    rows = np.repeat(np.arange(len(trials)), weight.astype(np.int64))
    return trials.drop(columns=[WEIGHT]).take(rows).reset_index(drop=True)


def rows_of(trials: pd.DataFrame) -> int:
    """The responses ``trials`` stands for: its rows, or on a weighted frame the sum of its
    weights (:func:`row_weights`), so a reduced run counts what its repeated frame would."""
    weight = row_weights(trials)
    return len(trials) if weight is None else int(np.rint(weight.sum()))


def scored_share(trials: pd.DataFrame) -> tuple[int, int]:
    """(responses with a known score, all responses) of a bias run; a weighted frame
    (:func:`row_weights`) counts each row as the responses behind it."""
    weight = row_weights(trials)
    if "score" not in trials:
        return 0, rows_of(trials)
    known = trials["score"].notna().to_numpy(dtype=bool)
    if weight is None:
        return int(known.sum()), len(trials)
    return int(np.rint(weight[known].sum())), int(np.rint(weight.sum()))


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
    # built once (the bias page shows it on every script run), a copy handed out
    return _baselines_frame().copy()


@cache
def _baselines_frame() -> pd.DataFrame:
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
    # Rows behind each row (a run reduced by an engine to its distinct tuples,
    # ``kbench_core.engines``: the column WEIGHT); None: one row each.
    weight: np.ndarray | None = None

    @property
    def n_pairs(self) -> int:
        return len(self.pairs)

    def rows(self, mask: np.ndarray | None = None) -> np.ndarray:
        """Per pair, the rows (where ``mask``): the weights' sums on a reduced run."""
        pair = self.pair if mask is None else self.pair[mask]
        weight = self.weight if self.weight is None or mask is None else self.weight[mask]
        return np.bincount(pair, weights=weight, minlength=self.n_pairs)


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


def prepare(trials: pd.DataFrame) -> _Trials:
    """``trials`` reduced to integer codes once, for several metrics of the same rows: every
    metric of this package (:func:`has`, :func:`cas`, :func:`bms`, ...) takes the result in
    place of the frame (the bias page computes HAS and CAS from one)."""
    return _prepare(trials)


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
        weight=row_weights(trials),
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
        Student t otherwise (``docs/statistics.md``: Wilson for proportions, t for means).
        Every value here (a score, a confidence, a domain mean) lies in [0, 1], so equal
        values get the Wilson-type bound of :func:`~kbench_core.stats.t_interval`, never a
        zero-width interval (issue 23 item 7)."""
        binary = self.n_fractional == 0
        w_low, w_high = wilson(self.mean * self.n, self.n, level=level)
        t_low, t_high = t_interval(self.mean, np.sqrt(self.var(1)), self.n, level=level,
                                   bounds=(0.0, 1.0))
        return np.where(binary, w_low, t_low), np.where(binary, w_high, t_high)


def _stats(group: np.ndarray, values: np.ndarray, size: int,
           mask: np.ndarray | None = None, weight: np.ndarray | None = None) -> _Stats:
    """Count, mean and squared deviations of the non-NaN values per group (two passes, so
    identical values give a variance of exactly 0); ``weight``: the rows behind each value
    (a reduced run's counts: the same sums as over the rows repeated)."""
    ok = ~np.isnan(values) & (group >= 0)
    if mask is not None:
        ok &= mask
    g, v = group[ok], values[ok]
    w = None if weight is None else weight[ok]
    n = np.bincount(g, weights=w, minlength=size).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.bincount(g, weights=v if w is None else v * w, minlength=size) / n
    dev = v - mean[g]
    m2 = np.bincount(g, weights=dev * dev if w is None else dev * dev * w, minlength=size)
    odd = (v != 0) & (v != 1)
    fractional = np.bincount(g, weights=odd if w is None else odd * w, minlength=size)
    return _Stats(n, mean, m2, fractional)
