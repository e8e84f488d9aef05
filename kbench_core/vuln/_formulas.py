"""The formulas shared by :func:`~kbench_core.vuln.tiers` and its bootstrap: guarded ratios,
F-beta, the composites (SUI, TUS, LGI) from per-group sums (:func:`_core`), the design effect
of answers clustered by sample (:class:`Clusters`), and the helpers that write a rate with its
Wilson interval or a mean with its t interval into an output table."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from kbench_core.calibration import Binned

# Clusters lives in kbench_core.stats (calibration uses it too); vuln modules import it here.
from kbench_core.stats import Clusters, t_interval, wilson_effective  # noqa: F401
from kbench_core.vuln.definitions import _QI, REASONING, SUI_WEIGHTS


def _ratio(num: np.ndarray, den: np.ndarray, zero_division: float) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), zero_division)


def _fbeta(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, beta: float,
           zero_division: float) -> np.ndarray:
    """(1 + β²)·TP / ((1 + β²)·TP + β²·FN + FP): the harmonic form (1 + β²)PR/(β²P + R)
    written with counts, as scikit-learn computes it; ``zero_division`` only when TP = FP =
    FN = 0."""
    b2 = beta * beta
    return _ratio((1 + b2) * tp, (1 + b2) * tp + b2 * fn + fp, zero_division)


@dataclass(frozen=True)
class _Core:
    """The metrics the composites need, per group (recomputed in every bootstrap replicate)."""

    accuracy: np.ndarray
    f1: np.ndarray
    f2: np.ndarray
    tdr: np.ndarray
    finding_precision: np.ndarray
    invalid_rate: np.ndarray
    means: dict[str, np.ndarray]
    avg_reasoning: np.ndarray
    composite_reasoning: np.ndarray
    ece: np.ndarray
    ece_l2_debiased: np.ndarray
    mce: np.ndarray
    sui: np.ndarray
    sui_renormalised: np.ndarray
    tus: np.ndarray
    tus_geometric: np.ndarray
    tus_renormalised: np.ndarray
    lgi: np.ndarray


def _composite_reasoning(avg_reasoning: np.ndarray, n_vulnerable: np.ndarray,
                         targets_found: np.ndarray, no_target_reasoning: str) -> np.ndarray:
    """The reasoning score SUI and TUS use: the displayed mean, except that a group which had
    vulnerable answers and found no target has understood nothing, so it counts as 0
    (``"zero"``) rather than being left out and its weight spread over the other components
    (``"renormalise"``, the old behaviour, which let finding nothing score above finding
    something)."""
    if no_target_reasoning == "renormalise":
        return avg_reasoning
    return np.where((n_vulnerable > 0) & (targets_found == 0), 0.0, avg_reasoning)


def _core(sums: np.ndarray, binned: Binned, sui_weights: Mapping[str, float],
          zero_division: float, no_target_reasoning: str = "zero") -> _Core:
    s = {name: sums[:, i] for name, i in _QI.items()}
    accuracy = _ratio(s["tp"] + s["tn"], s["n"], np.nan)
    tdr = _ratio(s["credit_weight"], s["vul_weight"], zero_division)
    empty_precision = np.nan if math.isnan(zero_division) else 1.0  # BlockBench: no findings
    finding_precision = _ratio(s["valid_credit"], s["findings"], empty_precision)
    invalid_rate = _ratio(s["invalid"], s["findings"], zero_division)
    means = {name: _ratio(s[f"{name}_sum"], s[f"{name}_n"], np.nan) for name in REASONING}
    stacked = np.column_stack([means[name] for name in REASONING])
    present = ~np.isnan(stacked)
    with np.errstate(invalid="ignore", divide="ignore"):
        avg_reasoning = np.where(present.any(axis=1),
                                 np.where(present, stacked, 0).sum(axis=1) / present.sum(axis=1),
                                 np.nan)
    ece = binned.ece()
    f2 = _fbeta(s["tp"], s["fp"], s["fn"], 2.0, zero_division)
    reasoning = _composite_reasoning(avg_reasoning, s["vulnerable"], s["found"],
                                     no_target_reasoning)
    sui, sui_flag = _weighted_mean(
        {"f2": f2, "tdr": tdr, "finding_precision": finding_precision,
         "reasoning": reasoning, "calibration": 1 - ece}, sui_weights)
    tus_parts = np.column_stack([tdr, reasoning, 1 - invalid_rate])
    tus, tus_geometric, tus_flag = _products(tus_parts)
    return _Core(accuracy=accuracy, f1=_fbeta(s["tp"], s["fp"], s["fn"], 1.0, zero_division),
                 f2=f2, tdr=tdr, finding_precision=finding_precision,
                 invalid_rate=invalid_rate, means=means, avg_reasoning=avg_reasoning,
                 composite_reasoning=reasoning, ece=ece,
                 ece_l2_debiased=binned.ece_l2_debiased(),
                 mce=binned.mce(), sui=sui, sui_renormalised=sui_flag, tus=tus,
                 tus_geometric=tus_geometric, tus_renormalised=tus_flag, lgi=accuracy - tdr)


def _weighted_mean(components: Mapping[str, np.ndarray],
                   weights: Mapping[str, float]) -> tuple[np.ndarray, np.ndarray]:
    """Σ w_k c_k / Σ w_k over the components present (not NaN); flagged where one was NaN."""
    values = np.column_stack([components[k] for k in SUI_WEIGHTS])
    w = np.array([weights[k] for k in SUI_WEIGHTS])
    present = ~np.isnan(values)
    used = present * w
    total = used.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        value = np.where(total > 0, (np.where(present, values, 0) * w).sum(axis=1) / total,
                         np.nan)
    flag = ((~present) & (w > 0)).any(axis=1) & ~np.isnan(value)
    return value, flag


def _products(parts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """TUS = Π c_k and its geometric mean (Π c_k)^(1/3); with k < 3 components present the
    exponents are renormalised (product of the present ones to the power 3/k, geometric mean
    over the present ones), which imputes a missing factor by the others' geometric mean."""
    present = ~np.isnan(parts)
    k = present.sum(axis=1)
    product = np.where(present, np.clip(parts, 0, None), 1.0).prod(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        tus = np.where(k > 0, product ** (3.0 / np.maximum(k, 1)), np.nan)
        geometric = np.where(k > 0, product ** (1.0 / np.maximum(k, 1)), np.nan)
    return tus, geometric, (k > 0) & (k < parts.shape[1])


def _interval_columns(out: dict, name: str, low: np.ndarray, high: np.ndarray) -> None:
    out[f"{name}_low"], out[f"{name}_high"] = low, high


class _Columns(dict):
    """An output table being written, column by column in order, whose Wilson intervals are
    computed together at the end (:meth:`finish`): one elementwise call on every rate at
    once gives the same numbers as one call per rate, without 16 times its fixed cost."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.pending: list[tuple[str, np.ndarray, np.ndarray]] = []
        # each rate's effective (successes, units, boundary n), the Wilson interval's inputs:
        # the difficulty means build their MOVER intervals on them
        self.effective: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def finish(self) -> _Columns:
        if self.pending:
            num = np.concatenate([np.asarray(p[1], dtype=float) for p in self.pending])
            den = np.concatenate([np.asarray(p[2], dtype=float) for p in self.pending])
            # the effective n of the rate's boundary (Clusters.boundary_n), for the monotone
            # envelope of wilson_effective; a plain rate is its own boundary
            edge = np.concatenate([np.asarray(p[3] if len(p) > 3 else p[2], dtype=float)
                                   for p in self.pending])
            low, high = wilson_effective(num, den, np.ones_like(num), edge)
            at = 0
            for name, n, *_ in self.pending:
                size = np.size(n)
                self.effective[name] = (num[at:at + size], den[at:at + size],
                                        edge[at:at + size])
                _interval_columns(self, name, low[at:at + size], high[at:at + size])
                at += size
            self.pending = []
        return self


def _rate(out: dict, name: str, num: np.ndarray, den: np.ndarray,
          zero_division: float, value: np.ndarray | None = None,
          deff: np.ndarray | None = None, boundary_n: np.ndarray | None = None) -> None:
    """A proportion with its Wilson interval (NaN interval when the denominator is 0); with a
    design effect (:meth:`Clusters.deff`) the interval is Wilson's on the effective numbers
    ``num / deff`` of ``den / deff``, kept monotone in the count by ``boundary_n``
    (:meth:`Clusters.boundary_n`; :func:`~kbench_core.stats.wilson_effective`)."""
    out[name] = _ratio(num, den, zero_division) if value is None else value
    edge = np.asarray(den, float) if boundary_n is None else boundary_n
    if deff is not None:
        num, den = np.asarray(num, float) / deff, np.asarray(den, float) / deff
    if isinstance(out, _Columns):  # place the interval columns now, fill them in finish()
        _interval_columns(out, name, None, None)
        shape = np.shape(out[name])
        out.pending.append((name, np.broadcast_to(num, shape), np.broadcast_to(den, shape),
                            np.broadcast_to(edge, shape)))
    else:
        _interval_columns(out, name, *wilson_effective(num, den, np.ones(np.shape(num)),
                                                       edge))


def _mean_sd(gid: np.ndarray, values: np.ndarray, used: np.ndarray,
             size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Count, mean and population variance of ``values[used]`` per group (two passes)."""
    g, v = gid[used], values[used]
    n = np.bincount(g, minlength=size).astype(float)
    mean = _ratio(np.bincount(g, weights=v, minlength=size), n, np.nan)
    dev = v - mean[g]
    var = _ratio(np.bincount(g, weights=dev * dev, minlength=size), n, np.nan)
    return n, mean, var


def _t(out: dict, name: str, n: np.ndarray, mean: np.ndarray, var: np.ndarray, *,
       bounds: tuple[float, float] = (0.0, 1.0),
       clustered: tuple[np.ndarray, np.ndarray] | None = None) -> None:
    """Mean with its t interval (sample SD from the population variance), clipped to the
    values the quantity can take (``bounds``): with few answers a t interval on a Brier score
    or a reasoning score would otherwise reach below 0. ``clustered`` = (G, se) of
    :meth:`Clusters.mean_se` gives mean ± t(G − 1) · se instead."""
    out[name] = mean
    if clustered is not None:
        clusters, se = clustered
        # t_interval(m, sd, k) is m ± t(k − 1)·sd/√k: sd = se·√G gives t(G − 1)·se. Equal
        # values (se 0) get the Wilson-type bound on the G samples, as the unclustered
        # branch does, not NaN (round 3: the composites' reasoning component needs it)
        low, high = t_interval(mean, se * np.sqrt(clusters), clusters, bounds=bounds)
        _interval_columns(out, name, np.clip(low, *bounds), np.clip(high, *bounds))
        return
    with np.errstate(invalid="ignore", divide="ignore"):
        sd = np.sqrt(np.where(n > 1, var * n / np.maximum(n - 1, 1), np.nan))
    low, high = t_interval(mean, sd, n, bounds=bounds)  # equal values: no [m, m]
    _interval_columns(out, name, np.clip(low, *bounds), np.clip(high, *bounds))
