"""HAS, human alignment score per model × bias (``docs/metrics/bias.md``)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from kbench_core.schema import INTENSITIES

from ._common import TOLERANCE, _above, _below, _prepare, _shipped_baselines, _stats, _Trials

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
        grouped = _stats(np.where(treated, t.pair * k + t.intensity, -1), t.score, size * k,
                         weight=t.weight)
        rows = np.repeat(np.arange(size), k)
        extra["intensity"] = np.tile(np.asarray(INTENSITIES, dtype=object), size)
    else:
        grouped = _stats(t.pair, t.score, size, t.condition == 1, t.weight)
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
    rate_low, rate_high = low[keep], high[keep]
    alignment = 1 - diff.abs() / np.maximum(human, 1 - human)
    align_low, align_high = _alignment_range(rate_low, rate_high, human.to_numpy())
    return {
        "model": pairs["model"], "bias": bias,
        **{name: values[keep] for name, values in extra.items()},  # type: ignore[index]
        "model_rate": model_rate, "model_rate_low": rate_low, "model_rate_high": rate_high,
        "n": n[keep], "human_rate": human,
        "alignment": alignment, "alignment_low": align_low, "alignment_high": align_high,
        "human_like": pd.arrays.BooleanArray(_above(alignment, 0.8).to_numpy(dtype=bool),
                                             alignment.isna().to_numpy()),
        "human_like_uncertain": _crosses(align_low, align_high, 0.8, alignment),
        "direction": _direction(diff, human, limit),
        "direction_uncertain": _direction_uncertain(rate_low, rate_high, human, limit),
        "baseline_missing": human.isna(),
        "weakly_supported": np.array([b in weak for b in names], dtype=bool),
    }


def _direction(diff: pd.Series | np.ndarray, human: pd.Series | np.ndarray,
               limit: float | pd.Series | np.ndarray) -> np.ndarray:
    """HAS's direction of model − human differences: None without a baseline, else aligned
    (|diff| < limit), over or under."""
    diff, human = pd.Series(np.asarray(diff, dtype=float)), np.asarray(human, dtype=float)
    return np.select([np.isnan(human), _below(diff.abs(), np.asarray(limit)).to_numpy(),
                      (diff > 0).to_numpy()], [None, "aligned", "over"], "under")


def _crosses(low: np.ndarray, high: np.ndarray, threshold: float,
             point: pd.Series | np.ndarray) -> pd.arrays.BooleanArray:
    """Whether a flag "value > threshold" could go either way within [low, high]: the two
    ends fall on different sides, or an end is unknown (too few trials for an interval).
    NA where the value itself is undefined."""
    low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    unknown = np.isnan(low) | np.isnan(high)
    with np.errstate(invalid="ignore"):
        split = (low > threshold + TOLERANCE) != (high > threshold + TOLERANCE)
    return pd.arrays.BooleanArray(split | unknown, np.isnan(np.asarray(point, dtype=float)))


def _alignment_range(low: np.ndarray, high: np.ndarray,
                     human: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The least and the most alignment 1 − |m − h| / max(h, 1 − h) over model rates m in
    [low, high]: the nearest point of the interval to h (0 away when it holds h) and the
    farther end."""
    scale = np.maximum(human, 1 - human)
    near = np.where((low <= human) & (human <= high), 0.0,
                    np.minimum(np.abs(low - human), np.abs(high - human)))
    far = np.maximum(np.abs(low - human), np.abs(high - human))
    with np.errstate(invalid="ignore", divide="ignore"):
        return 1 - far / scale, 1 - near / scale


def _direction_uncertain(low: np.ndarray, high: np.ndarray, human: pd.Series,
                         limit: float | pd.Series) -> pd.arrays.BooleanArray:
    """Whether the direction (under, aligned, over) could change within the model rate's
    interval: it is monotone in the rate, so the ends decide. NA without a baseline."""
    h = human.to_numpy(dtype=float)
    lim = np.asarray(limit, dtype=float)
    ends = [_direction(np.asarray(end, dtype=float) - h, h, lim) for end in (low, high)]
    unknown = np.isnan(np.asarray(low, dtype=float)) | np.isnan(np.asarray(high, dtype=float))
    return pd.arrays.BooleanArray((ends[0] != ends[1]) | unknown, np.isnan(h))
