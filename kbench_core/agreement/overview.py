"""Percent agreement (share of unanimous items, Wilson interval) and :func:`label_agreement`,
the table of every coefficient for several labels at once."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd

from kbench_core.agreement._labels import (
    DEFAULT_LABELS,
    _check_boot,
    _code_grid,
    _Label,
    _label,
    _Layout,
    _layout,
    _need_judges,
    _value_grid,
)
from kbench_core.agreement.alpha import _alpha_estimate
from kbench_core.agreement.kappa import _fleiss_estimate
from kbench_core.stats import Estimate, check_choice, wilson


def _labelled_range(layout: _Layout, spec: _Label) -> tuple[np.ndarray, np.ndarray]:
    """Per item: how many LLM judges labelled it, and whether their values all agree."""
    if spec.numeric:
        values = _value_grid(layout, spec)
        has = ~np.isnan(values)
        high = np.where(has, values, -np.inf).max(axis=1)
        low = np.where(has, values, np.inf).min(axis=1)
    else:
        codes = _code_grid(layout, spec)
        has = codes >= 0
        high = codes.max(axis=1)
        low = np.where(has, codes, np.iinfo(np.int64).max).min(axis=1)
    return has.sum(axis=1), high == low


def percent_agreement(judged: pd.DataFrame, label: str) -> Estimate:
    """Share of items on which every LLM judge that labelled it gives the same value.

    Over the items at least two judges labelled (``n``; ``n_dropped`` those only one judge
    labelled); Wilson 95% interval. Numbers must be equal to agree; ``human`` is left out.
    """
    spec = _label(judged, label)
    layout = _layout(judged, human=False)
    _need_judges(layout, "percent_agreement")
    return _percent_estimate(layout, spec)


def _percent_estimate(layout: _Layout, spec: _Label) -> Estimate:
    labelled, same = _labelled_range(layout, spec)
    pairable = labelled >= 2
    n = int(pairable.sum())
    agree = int((same & pairable).sum())
    low, high = wilson(agree, n)
    return Estimate(agree / n if n else math.nan, float(low), float(high), n,
                    n_dropped=int((labelled == 1).sum()))


def label_agreement(judged: pd.DataFrame, labels: Sequence[str] | None = None, *,
                    ci_alpha: Literal["bootstrap"] | None = None, n_boot: int = 1000,
                    random_state: int = 0) -> pd.DataFrame:
    """Agreement on several labels at once, for the per-label bars.

    For each label (default: those of :data:`DEFAULT_LABELS` the frame holds): Fleiss' κ with
    its asymptotic interval (categorical labels), Krippendorff's α at the label's natural
    level (bootstrap interval with ``ci_alpha="bootstrap"``) and percent agreement (Wilson).
    Returns ``label, coefficient, level, value, low, high, n, n_dropped``.
    """
    check_choice("ci_alpha", ci_alpha, (None, "bootstrap"))
    _check_boot(n_boot, random_state)
    if labels is None:
        labels = [c for c in DEFAULT_LABELS if c in judged and judged[c].notna().any()]
    layout = _layout(judged, human=False)  # once for every label
    _need_judges(layout, "label_agreement")
    rows = []
    for name in labels:
        spec = _label(judged, name)
        found: list[tuple[str, str, Estimate]] = []
        if not spec.numeric:
            found.append(("fleiss_kappa", "nominal",
                          _fleiss_estimate(layout, spec, "asymptotic", n_boot, random_state)))
        found.append(("krippendorff_alpha", spec.level,
                      _alpha_estimate(layout, spec, spec.level, ci_alpha, n_boot,
                                      random_state)))
        found.append(("percent_agreement", "nominal", _percent_estimate(layout, spec)))
        rows += [{"label": name, "coefficient": what, "level": level, "value": est.value,
                  "low": est.low, "high": est.high, "n": est.n, "n_dropped": est.n_dropped}
                 for what, level, est in found]
    return pd.DataFrame(rows, columns=["label", "coefficient", "level", "value", "low", "high",
                                       "n", "n_dropped"])
