"""The cognitive fingerprint: all six metrics per model × bias, and thresholds applied to it
(``docs/metrics/bias.md``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from kbench_core.schema import INTENSITIES
from kbench_core.stats import bounded_mean_interval, check_choice, t_interval

from ._common import (
    AGGREGATION_WEIGHTS,
    INTENSITY_WEIGHTS,
    KEY,
    _above,
    _below,
    _codes,
    _prepare,
    _shipped_baselines,
    _Trials,
)
from .bci import _bci
from .bmp import _bmp
from .bms import _bms
from .cas import _cas
from .has import _direction_uncertain, _has
from .rci import _rci

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
    cap: float | None = 1.0  # BMS's upper bound (None: uncapped), for intervals of its means


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
    the seed does for an honest overall number) with the interval of a bounded mean over
    biases (``susceptibility_low``, ``susceptibility_high``;
    :func:`kbench_core.stats.bounded_mean_interval` on [0, cap], the susceptibility table's);
    ``most_susceptible`` / ``most_resistant`` =
    the ``top`` biases by BMS, high-unknown biases excluded, ties by bias id; ``human_like`` =
    biases with alignment > 0.8; ``ai_specific`` = biases with direction ``over``;
    ``human_like_uncertain`` / ``ai_specific_uncertain`` = those of them whose flag could go
    either way within the model rate's 95% interval.

    Every flag of a model × bias has a ``<flag>_uncertain`` column (``human_like``,
    ``direction``, ``systematic``, ``overconfident``): true when the flag, set from a point
    estimate, would differ somewhere within its 95% interval (or the interval is unknown),
    so a flag resting on a few trials is not read as a finding. The intervals: the model
    rate's (alignment and direction are monotone in it either side of the human rate), each
    domain mean's (systematic), and confidence low − accuracy high to confidence high −
    accuracy low (overconfident; ``gap_low``/``gap_high`` in :func:`cas`).
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
                                  "high_unknown", "renormalised", "n")),
        ("bci", "mean_score", "bci_mean_score"), ("bci", "consistency", "bci_consistency"),
        ("bci", "systematic", "systematic"),
        ("bci", "systematic_uncertain", "systematic_uncertain"),
        *(("bmp", c, c) for c in ("best_method", "effectiveness", "requires_warning")),
        *(("has", c, c) for c in ("model_rate", "model_rate_low", "model_rate_high",
                                  "human_rate", "alignment", "alignment_low", "alignment_high",
                                  "human_like", "human_like_uncertain", "direction",
                                  "direction_uncertain", "baseline_missing",
                                  "weakly_supported")),
        ("rci", "consistency", "rci_consistency"), ("rci", "stable", "rci_stable"),
        *(("cas", c, c) for c in ("calibration_score", "overconfident",
                                  "overconfident_uncertain", "missing_confidence_rate")),
    ]
    columns: dict[str, object] = {k: t.pairs[k] for k in KEY}
    if categories is not None:
        columns["category"] = t.pairs["bias"].map(categories)
    for part, column, name in picked:
        columns[name] = shared[column] if part == "has" else parts[part][column]
    table = pd.DataFrame(columns)

    grouped = table.groupby("model")["bms"]
    susceptibility, n_bms = grouped.mean(), grouped.count()
    # Interval over biases: how much the mean BMS would move with another bias sample. BMS
    # lies in [0, cap]: the interval of a bounded mean over few biases
    # (stats.bounded_mean_interval, the one the susceptibility table shows for the same
    # number; issue 38 item 4); without a cap the range is open: the t interval.
    if cap is None:
        low, high = t_interval(susceptibility, grouped.std(), n_bms)
    else:
        low, high = bounded_mean_interval(susceptibility, grouped.std(), n_bms,
                                          bounds=(0.0, cap))
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
        # the listed biases whose flag could go either way within its interval
        "human_like_uncertain": _by_model(
            model, bias, score, (_above(table["alignment"], 0.8)
                                 & table["human_like_uncertain"].fillna(False)).to_numpy(bool)),
        "ai_specific_uncertain": _by_model(
            model, bias, score, ((table["direction"] == "over")
                                 & table["direction_uncertain"].fillna(False)).to_numpy(bool)),
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
    return Fingerprint(biases=table, models=models.reset_index(), cap=cap)


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
    if "direction_uncertain" in biases:
        biases["direction_uncertain"] = _direction_uncertain(
            biases["model_rate_low"].to_numpy(dtype=float),
            biases["model_rate_high"].to_numpy(dtype=float), human, limit)
    over = (biases["direction"] == "over").to_numpy(dtype=bool)
    masks = {"ai_specific": over}
    if "direction_uncertain" in biases:
        masks["ai_specific_uncertain"] = over & biases["direction_uncertain"].fillna(
            False).to_numpy(dtype=bool)
    models = fp.models.copy()
    for column, mask in masks.items():
        per_model = _by_model(biases["model"].to_numpy(dtype=object),
                              biases["bias"].to_numpy(dtype=object),
                              biases["bms"].to_numpy(dtype=float), mask)
        cells = np.empty(len(models), dtype=object)
        for i, name in enumerate(models["model"]):
            cells[i] = tuple(b for _, b in per_model.get(name, []))
        models[column] = cells
    return Fingerprint(biases=biases, models=models, cap=fp.cap)
