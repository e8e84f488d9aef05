"""KahneBench fingerprint reports: one row per model × bias, KahneBench's own numbers.

Tables in :mod:`kbench_core.bias_reports`; the page is ``views/bias.py`` (reports).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from kbench_core.catalog import Item, one
from kbench_core.families import CompareDefaults, Family, PageInfo
from kbench_core.schema import BIAS_SUMMARY

__all__ = ["FAMILY"]


def _catalog() -> list[Item]:
    from kbench_core import bias_reports as reports
    from kbench_core import figures
    from kbench_core.figures import bias as bias_figures

    def fingerprint(frame: pd.DataFrame, options: Mapping[str, Any]):
        return one(reports.fingerprint_table(frame).drop(columns=["n"]))

    def models(frame: pd.DataFrame, options: Mapping[str, Any], meta: Mapping[str, Any]):
        return one(reports.leaderboard(frame, meta.get("summary")))

    def heatmap(frame: pd.DataFrame, options: Mapping[str, Any]):
        return one(figures.fingerprint_heatmap(reports.fingerprint_table(frame)))

    def curves(frame: pd.DataFrame, options: Mapping[str, Any]):
        table = reports.intensity_table(frame)
        for bias, rows in table.groupby("bias", sort=True):
            yield str(bias), figures.bms_curves(
                rows, y="mean", title=f"{bias}: mean score by trigger intensity (as reported)")

    def domains(frame: pd.DataFrame, options: Mapping[str, Any]):
        cells = reports.domain_cells(frame)
        for model, rows in cells.groupby("model", sort=True):
            yield str(model), figures.bci_heatmap(
                rows, title=f"{model}: score by domain (as reported)")

    def alignment(frame: pd.DataFrame, options: Mapping[str, Any]):
        return one(figures.has_chart(reports.alignment_table(frame)))

    def mitigation(frame: pd.DataFrame, options: Mapping[str, Any]):
        table = reports.mitigation_table(frame)
        for model, rows in table.groupby("model", sort=True):
            yield str(model), figures.mitigation_chart(
                rows, title=f"{model}: score before and after debiasing (as reported)")

    def calibration(frame: pd.DataFrame, options: Mapping[str, Any]):
        table = reports.calibration_table(frame)
        if table["has_confidence_data"].any():
            # the reports' own actual_accuracy, not kbench's 1 − score
            yield "", figures.cas_bars(table, accuracy_label=bias_figures.ACCURACY_REPORTED)

    return [
        Item("fingerprint", "Fingerprint as reported (KahneBench's own per-bias numbers)",
             "table", fingerprint, best={"bms": "min", "alignment": "max",
                                         "bci_consistency": "max", "rci_consistency": "max",
                                         "calibration_score": "max", "effectiveness": "max"},
             main=True),
        Item("models", "Models: published susceptibility and summary, rank over biases",
             "table", models, best={"susceptibility": "min", "mean_bms": "min"},
             uses_meta=True),
        Item("fingerprint_heatmap", "Fingerprint heatmap (reported BMS)", "figure", heatmap),
        Item("intensity_curves", "Mean score by trigger intensity, per bias", "figure", curves),
        Item("domain_heatmap", "Score by domain, per model", "figure", domains),
        Item("has_chart", "Model rate against the human baseline", "figure", alignment),
        Item("mitigation", "Score before and after debiasing, per model", "figure",
             mitigation),
        Item("cas_bars", "Stated confidence against accuracy", "figure", calibration),
    ]


FAMILY = Family(
    kind="bias_summary", title="Cognitive biases (fingerprint reports)", spec=BIAS_SUMMARY,
    # a report has one BMS per bias: the biases are the units, paired by bias
    item_key=("bias",),
    comparison=CompareDefaults((("BMS (as reported)", "bms"),), "bias", None, "biases"),
    per_item=lambda frame: frame,
    lower_is_better=frozenset({"bms", "susceptibility", "mean_bms", "unknown_rate",
                               "cas_error", "metacognitive_gap"}),
    catalog=_catalog, sample_files=("bias_summary.csv",),
    page=PageInfo("views/bias.py", "Cognitive biases", "bias_report_runs",
                  extra={"bias_source": "reports"}, dependent=("bias_report_models",),
                  icon=":material/psychology:", url="biases", order=10),
)
