"""Presentation of the cognitive-bias fingerprint: column order, labels and formats."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from kbench_app.ui import interval_text, number_format, shown

_FIRST = ["category", "bias", "model", "bms", "bms_ci", "sensitivity", "model_rate",
          "model_rate_ci", "human_rate", "alignment", "direction", "bci_mean_score",
          "bci_consistency", "systematic", "rci_consistency", "rci_stable", "calibration_score",
          "overconfident", "best_method", "effectiveness", "requires_warning", "n",
          "unknown_rate", "high_unknown", "weakly_supported"]
_LABELS = {
    "category": ("Family", None), "bias": ("Bias", None), "model": ("Model", None),
    "bms": ("BMS", "Bias Magnitude Score: weighted |treatment − control| over intensities"),
    "bms_ci": ("BMS 95% CI", "Bootstrap over trials within each condition"),
    "sensitivity": ("Sensitivity", "Slope of magnitude over intensity (weak → adversarial)"),
    "model_rate": ("Rate", "Mean treatment score"),
    "model_rate_ci": ("Rate 95% CI", "Wilson for 0/1 scores, t otherwise"),
    "human_rate": ("Human", "Human susceptibility baseline"),
    "alignment": ("HAS", "Human Alignment Score, 1 − |m − h| / max(h, 1 − h)"),
    "direction": ("vs humans", None),
    "bci_mean_score": ("BCI mean", "Mean of the domain means (treatment rows)"),
    "bci_consistency": ("BCI", "Consistency across domains, 1 − min(std / 0.5, 1)"),
    "systematic": ("Systematic", "More than 70% of domains above 0.5"),
    "rci_consistency": ("RCI", "Response consistency over repeated trials"),
    "rci_stable": ("Stable", None),
    "calibration_score": ("CAS", "1 − |mean confidence − mean accuracy|"),
    "overconfident": ("Overconfident", None),
    "best_method": ("Best debiasing", None),
    "effectiveness": ("BMP", "Bias Mitigation Potential of the best method"),
    "requires_warning": ("Needs warning", None),
    "n": ("n", "Rows (trials) behind the model × bias"),
    "unknown_rate": ("Unknown", "Share of rows whose score could not be extracted"),
    "high_unknown": ("Mostly unknown", None),
    "weakly_supported": ("Weak baseline", "The human baseline has little empirical support"),
}


def fingerprint_view(biases: pd.DataFrame) -> pd.DataFrame:
    """The fingerprint's model × bias table for display: grouped by family, intervals as text
    beside their (sortable) numbers, the most useful columns first."""
    view = biases.copy()
    if "bms_low" in view:
        view["bms_ci"] = interval_text(view["bms_low"], view["bms_high"])
    view["model_rate_ci"] = interval_text(view["model_rate_low"], view["model_rate_high"])
    order = [c for c in _FIRST if c in view]
    sort = [c for c in ("category", "bias", "model") if c in view]
    return shown(view[order].sort_values(sort, kind="stable").reset_index(drop=True))


def fingerprint_columns(view: pd.DataFrame) -> dict[str, object]:
    """Streamlit column configuration for :func:`fingerprint_view`."""
    config: dict[str, object] = {}
    for column in view.columns:
        label, help_text = _LABELS.get(column, (column, None))
        if pd.api.types.is_bool_dtype(view[column]):
            config[column] = st.column_config.CheckboxColumn(label, help=help_text)
        elif pd.api.types.is_float_dtype(view[column]):
            config[column] = st.column_config.NumberColumn(
                label, help=help_text, format=number_format(str(column), view[column]),
                pinned=column == view.columns[0])
        else:
            config[column] = st.column_config.Column(label, help=help_text,
                                                     pinned=column == view.columns[0])
    return config


def susceptibility_ranks(biases: pd.DataFrame) -> pd.DataFrame:
    """Each model's susceptibility rank (1 = least susceptible) and its 95% bootstrap interval
    over the biases every model has a BMS for (:func:`kbench_core.compare.rank_intervals` on
    the model × bias BMS table)."""
    from kbench_core import compare

    table = biases[["model", "bias", "bms"]].dropna()
    if table["model"].nunique() < 2:
        return pd.DataFrame(columns=["model", "rank", "rank_text"])
    ranks = compare.rank_intervals(table, "bms", item="bias", lower_is_better=True)
    ranks["rank_text"] = [f"{r:g} [{lo:g}, {hi:g}]" + (" · few biases" if few else "")
                          for r, lo, hi, few in zip(ranks["rank"], ranks["rank_low"],
                                                    ranks["rank_high"], ranks["few_items"],
                                                    strict=True)]
    return ranks[["model", "rank", "rank_text"]]
