"""KahneBench fingerprint reports: one row per model × bias, KahneBench's own numbers.

Tables in :mod:`kbench_core.bias_reports`; the page is ``views/bias.py`` (reports).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

from kbench_core.catalog import Item, one
from kbench_core.families._base import CompareDefaults, Family, PageInfo, Profile
from kbench_core.families.bias import Keys
from kbench_core.schema import INTENSITIES, Column, KindSpec, unit_column

if TYPE_CHECKING:
    from kbench_core.io import Run

__all__ = ["FAMILY"]


# The columns of this run kind (docs/formats.md): they belong with the family.
BIAS_SUMMARY = KindSpec(
    kind="bias_summary",
    columns=(
        Column("model", "category", True, meaning="model under test"),
        Column("bias", "category", True, meaning="bias id, e.g. anchoring_effect"),
        Column("category", "category", meaning="bias family"),
        unit_column("bms", "overall magnitude (BMS)"),
        Column("sensitivity", "float", meaning="intensity sensitivity (slope)"),
        unit_column("control_mean", "mean control score"),
        *(unit_column(f"mean_{level}", f"mean treatment score, {level} trigger")
          for level in INTENSITIES),
        unit_column("unknown_rate", "share of responses whose score is unknown"),
        unit_column("bci_consistency", "consistency over domains (BCI)"),
        unit_column("bci_mean_score", "mean of the domain scores"),
        Column("bci_std", "float", low=0.0, meaning="standard deviation of the domain scores"),
        Column("systematic", "bool", meaning="biased in most domains"),
        unit_column("bmp_baseline", "treatment mean before debiasing"),
        Column("best_method", "category", meaning="most effective debiasing method"),
        unit_column("effectiveness", "mitigation effectiveness (BMP)"),
        Column("requires_warning", "bool", meaning="warnings beat chain-of-thought"),
        unit_column("model_rate", "model bias rate (HAS)"),
        unit_column("human_rate", "human baseline rate"),
        Column("alignment", "float", high=1.0, meaning="human alignment score (HAS)"),
        Column("direction", "text", meaning="direction as the report writes it"),
        Column("direction_std", "category", allowed=("under", "aligned", "over"),
               meaning="direction as under / aligned / over"),
        unit_column("rci_consistency", "response consistency (RCI)"),
        unit_column("rci_mean", "mean response"),
        Column("rci_variance", "float", low=0.0, meaning="response variance"),
        Column("rci_stable", "bool", meaning="stable across trials"),
        Column("rci_trials", "int", low=0.0, meaning="trials behind RCI"),
        unit_column("calibration_score", "calibration score (CAS)"),
        unit_column("cas_error", "|mean confidence - accuracy|"),
        unit_column("cas_confidence", "mean stated confidence"),
        unit_column("cas_accuracy", "accuracy (1 - score)"),
        Column("overconfident", "bool", meaning="confidence above accuracy + 0.1"),
        unit_column("metacognitive_gap", "max(0, confidence - accuracy)"),
        Column("cas_insufficient", "bool", meaning="too little confidence data for CAS"),
    ),
    key=("model", "bias"),
    signature=frozenset({"model", "bias"}),
    prefixed=(unit_column("domain_", "mean score in one domain (BCI)"),
              unit_column("debias_", "mean score under one debiasing method (BMP)")),
    signature_any=frozenset({"bms", "bci_consistency", "alignment", "rci_consistency",
                             "calibration_score"}),
    signature_none=frozenset({"condition"}),
    description="KahneBench fingerprint reports, one row per model x bias (no trials)",
)


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


def _profile_rows(run: Run) -> tuple[pd.DataFrame, int, str]:
    """The profile's rows of a fingerprint report (``kbench_core.profile``): kbench's mean of
    the reported per-bias BMS over the biases every model has, ranked, and the published
    susceptibility."""
    from kbench_core import bias_reports
    from kbench_core.profile import marks, mean_bms_interval, metric_rows

    board = bias_reports.leaderboard(run.frame, run.meta.get("summary"))
    ranks = board[["model", "rank", "rank_low", "rank_high"]].assign(
        rank_note=marks(("few biases", board["few_items"].fillna(False))))
    # The interval of mean_bms over the same biases the rank rests on (shared by every model)
    bms = run.frame[["model", "bias", "bms"]].dropna().astype({"model": str, "bias": str})
    if board["model"].nunique() >= 2:
        wide = bms.pivot_table(index="bias", columns="model", values="bms", aggfunc="first")
        bms = bms[bms["bias"].isin(wide.index[wide.notna().all(axis=1)])]
    interval = mean_bms_interval(bms).set_index("model")
    board = board.assign(mean_bms_low=board["model"].map(interval["mean_bms_low"]),
                         mean_bms_high=board["model"].map(interval["mean_bms_high"]))
    shared = [f"the {k:,} biases every model of the run reports (rank interval: bootstrap "
              "over them)" for k in board["n_ranked"]]
    rows = [metric_rows(board, "mean_bms", low="mean_bms_low", high="mean_bms_high", n="n_ranked",
                  ranks=ranks, items=shared),
            metric_rows(board, "published_susceptibility", value="susceptibility", n="n_biases",
                  items="as the report publishes it")]
    return pd.concat(rows, ignore_index=True), len(board), ""


def _sample_frame(seed: int) -> pd.DataFrame:
    """The frame of the bundled sample run ``sample_data/bias_summary.csv`` (planted effects,
    known in closed form)."""
    from kbench_core.samples.bias import bias_reports

    return bias_reports()  # closed form: no seed


FAMILY = Family(
    kind="bias_summary", title="Cognitive biases (fingerprint reports)", spec=BIAS_SUMMARY,
    detection_order=50,
    headline_items=("models", "fingerprint_heatmap"),
    # a report has one BMS per bias: the biases are the units, paired by bias
    item_key=("bias",),
    comparison=CompareDefaults((("BMS (as reported)", "bms"),), "bias", None, "biases"),
    per_item=lambda frame: frame,
    lower_is_better=frozenset({"bms", "susceptibility", "mean_bms", "unknown_rate",
                               "cas_error", "metacognitive_gap"}),
    catalog=_catalog, sample_files=("bias_summary.csv",), sample_frame=_sample_frame,
    format_doc="docs/formats.md",
    profile=Profile(
        "bias", "Cognitive biases",
        (("mean_bms", "Mean reported BMS over shared biases (kbench)", "mean BMS (kbench)"),
         ("published_susceptibility", "Susceptibility (published)",
          "susceptibility (published)")),
        "mean_bms", _profile_rows),
    page=PageInfo("views/bias.py", "Cognitive biases", Keys.REPORT_RUNS,
                  extra={Keys.SOURCE: "reports"}, dependent=(Keys.REPORT_MODELS,),
                  icon=":material/psychology:", url="biases", order=10, keys=Keys),
)
