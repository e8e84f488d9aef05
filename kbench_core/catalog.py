"""Every figure and table kbench makes for a run kind: the one list behind ``kbench figures``,
``kbench metrics``, ``kbench report`` and the app's Export page, so they never disagree.

An :class:`Item` builds from a validated run frame either one object or several (one BMS curve
per bias, one domain heatmap per model); each comes with a stable name (``bms_curves-
anchoring_effect``) used as the file name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd
import plotly.graph_objects as go

__all__ = ["Item", "items_for", "main_table", "safe_name", "unavailable"]

Built = go.Figure | pd.DataFrame


@dataclass(frozen=True)
class Item:
    """One figure or table of a run kind.

    ``build(frame, options)`` yields ``(suffix, object)`` pairs; the file name is ``name`` or
    ``name-suffix``. ``best`` says, per table column, whether the highest (``"max"``) or lowest
    (``"min"``) value is best (bold in LaTeX and Markdown).
    """

    name: str
    title: str
    what: Literal["figure", "table"]
    build: Callable[..., Iterator[tuple[str, Built]]]
    best: Mapping[str, str] = field(default_factory=dict)
    main: bool = False
    uses_meta: bool = False  # build(frame, options, meta): needs the run's meta (summaries)

    def objects(self, frame: pd.DataFrame, options: Mapping[str, Any] | None = None, *,
                meta: Mapping[str, Any] | None = None) -> Iterator[tuple[str, Built]]:
        """``(file stem, figure or table)`` for every object this item makes of ``frame``
        (``meta``: the run's :attr:`~kbench_core.io.Run.meta`, for items that use it)."""
        built = (self.build(frame, options or {}, meta or {}) if self.uses_meta
                 else self.build(frame, options or {}))
        for suffix, obj in built:
            yield (f"{self.name}-{safe_name(suffix)}" if suffix else self.name), obj


def safe_name(text: str) -> str:
    """A file-name-safe version of a label (letters, digits, ``._-``; the rest become ``_``)."""
    cleaned = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in str(text))
    return cleaned.strip("._") or "item"


def _one(obj: Built) -> Iterator[tuple[str, Built]]:
    yield "", obj


RELIABILITY_PAGE = 12  # models per reliability page (small multiples, four to a row)


def _pages(names: list[str], size: int) -> list[list[str]]:
    """``names`` in pages of at most ``size`` (one page when they fit)."""
    return [names[i:i + size] for i in range(0, len(names), size)] or [[]]


def _heat_pages(frame: pd.DataFrame, key: str) -> Iterator[tuple[str, pd.DataFrame]]:
    """A heatmap's rows in pages of at most
    :data:`~kbench_core.figures.base.MAX_HEAT_ROWS`, by the longer of its two dimensions."""
    from kbench_core.figures.base import MAX_HEAT_ROWS

    names = sorted(map(str, frame[key].unique()))
    pages = _pages(names, MAX_HEAT_ROWS)
    for k, page in enumerate(pages, start=1):
        yield ("" if len(pages) == 1 else f"p{k}"), frame[frame[key].astype(str).isin(page)]


# ------------------------------------------------------------------------------ bias

_FINGERPRINT_COLUMNS = ["category", "bias", "model", "bms", "bms_low", "bms_high",
                        "model_rate", "model_rate_low", "model_rate_high", "human_rate",
                        "alignment", "bci_consistency", "rci_consistency", "calibration_score",
                        "effectiveness", "n"]


def _bias_items() -> list[Item]:
    from kbench_core import figures, kahne

    def fingerprint(frame: pd.DataFrame, options: Mapping[str, Any]):
        table = kahne.fingerprint(frame, **options).biases
        return _one(table[[c for c in _FINGERPRINT_COLUMNS if c in table]])

    def susceptibility(frame: pd.DataFrame, options: Mapping[str, Any]):
        models = kahne.fingerprint(frame, **options).models.copy()
        for col in ("most_susceptible", "most_resistant", "human_like", "ai_specific"):
            models[col] = models[col].map(", ".join)
        return _one(models)

    def heatmap(frame: pd.DataFrame, options: Mapping[str, Any]):
        return _one(figures.fingerprint_heatmap(kahne.fingerprint(frame, **options).biases))

    def curves(frame: pd.DataFrame, options: Mapping[str, Any]):
        cap = options.get("cap", 1.0)
        table = kahne.bms(frame, cap=cap)
        for bias, rows in table.groupby("bias", sort=True):
            yield str(bias), figures.bms_curves(rows, title=f"{bias}: bias by trigger intensity")

    def domains(frame: pd.DataFrame, options: Mapping[str, Any]):
        cells = kahne.domain_means(frame)
        for model, rows in cells.groupby("model", sort=True, observed=True):
            yield str(model), figures.bci_heatmap(
                rows, title=f"{model}: mean treatment score by domain")

    def alignment(frame: pd.DataFrame, options: Mapping[str, Any]):
        return _one(figures.has_chart(kahne.has(
            frame, threshold=options.get("threshold", 0.1),
            relative=options.get("relative", False))))

    def calibration(frame: pd.DataFrame, options: Mapping[str, Any]):
        return _one(figures.cas_bars(kahne.cas(frame)))

    return [
        Item("fingerprint", "Fingerprint: six metrics per model × bias", "table", fingerprint,
             best={"bms": "min", "alignment": "max", "bci_consistency": "max",
                   "rci_consistency": "max", "calibration_score": "max",
                   "effectiveness": "max"}, main=True),
        Item("susceptibility", "Susceptibility per model", "table", susceptibility,
             best={"susceptibility": "min"}),
        Item("fingerprint_heatmap", "Fingerprint heatmap (BMS)", "figure", heatmap),
        Item("bms_curves", "Bias by trigger intensity, per bias", "figure", curves),
        Item("bci_heatmap", "Mean treatment score by domain, per model", "figure", domains),
        Item("has_chart", "Model rate against the human baseline", "figure", alignment),
        Item("cas_bars", "Stated confidence against accuracy", "figure", calibration),
    ]


# ------------------------------------------------------------------------------ judged

_TIER_COLUMNS = ["model", "judge", "n", "accuracy", "f2", "tdr", "lucky_guess_rate",
                 "finding_precision", "hallucination_rate", "avg_reasoning", "ece", "brier",
                 "sui", "tus", "lgi", "renormalised"]


def _judged_items() -> list[Item]:
    from kbench_core import vuln
    from kbench_core.figures import vuln as vuln_figures

    def per_judge(frame: pd.DataFrame) -> Iterator[tuple[str, pd.DataFrame]]:
        for judge in vuln.judges_of(frame):
            yield judge, frame[frame["judge"].astype(str) == judge]

    def tiers(frame: pd.DataFrame, options: Mapping[str, Any]):
        for judge, rows in per_judge(frame):
            table = vuln.tiers(rows, **options)
            keep = [c for c in table.columns
                    if c in _TIER_COLUMNS or (c.removesuffix("_low").removesuffix("_high")
                    in _TIER_COLUMNS and c.endswith(("_low", "_high")))]
            yield judge, table[keep]

    def fixed_table(frame: pd.DataFrame, options: Mapping[str, Any]):
        if "claims_fixed_target" not in frame:
            return
        parts = [vuln.fixed_claims(rows) for _, rows in per_judge(frame)]
        llm = [j for j in vuln.judges_of(frame) if j != "human"]
        if len(llm) > 1:
            from kbench_core.agreement import consensus

            parts.append(vuln.fixed_claims(consensus(frame)))
        parts = [p for p in parts if len(p)]
        if parts:
            yield "", pd.concat(parts, ignore_index=True)

    def fixed_figure(frame: pd.DataFrame, options: Mapping[str, Any]):
        for _, table in fixed_table(frame, options):
            yield "", vuln_figures.fixed_claims_chart(table)

    def reliability(frame: pd.DataFrame, options: Mapping[str, Any]):
        for judge, rows in per_judge(frame):
            table = vuln.reliability(rows)
            models = sorted(map(str, table["model"].unique()))
            pages = _pages(models, RELIABILITY_PAGE)
            for k, page in enumerate(pages, start=1):
                part = table[table["model"].astype(str).isin(page)]
                suffix = judge if len(pages) == 1 else f"{judge}-p{k}"
                yield suffix, vuln_figures.reliability_diagram(
                    part, title=f"Reliability of stated confidence ({judge})"
                    + (f", page {k} of {len(pages)}" if len(pages) > 1 else ""))

    def sui(frame: pd.DataFrame, options: Mapping[str, Any]):
        for judge, rows in per_judge(frame):
            table = vuln.tiers(rows, **options)
            yield judge, vuln_figures.tier_leaderboard(
                table, vuln.sui_contributions(table),
                title=f"Security Understanding Index (SUI) and what it is made of ({judge})")

    def lucky(frame: pd.DataFrame, options: Mapping[str, Any]):
        for judge, rows in per_judge(frame):
            yield judge, vuln_figures.lucky_guess_chart(vuln.tiers(rows, **options))

    def several_judges(frame: pd.DataFrame) -> bool:
        return len([j for j in vuln.judges_of(frame) if j != "human"]) >= 2

    def kappa(frame: pd.DataFrame, options: Mapping[str, Any]):
        from kbench_core import agreement
        from kbench_core.figures import agreement as agreement_figures

        if several_judges(frame):
            yield "target_found", agreement_figures.kappa_heatmap(
                agreement.pairwise_kappa(frame, "target_found"), label="target_found")

    def spread(frame: pd.DataFrame, options: Mapping[str, Any]):
        from kbench_core import agreement
        from kbench_core.figures import agreement as agreement_figures

        if several_judges(frame):
            yield "", agreement_figures.judge_spread_chart(agreement.judge_spread(frame))

    best = {m: "min" if m in vuln.LOWER_IS_BETTER else "max"
            for m in vuln.HIGHER_IS_BETTER | vuln.LOWER_IS_BETTER}
    return [
        Item("tiers", "The seven tiers per detector, one table per judge", "table", tiers,
             best=best, main=True),
        Item("sui_chart", "SUI and what it is made of, per judge", "figure", sui),
        Item("reliability", "Reliability diagram, per judge", "figure", reliability),
        Item("fixed_versions", "Fixed versions: still claims the fixed bug, beside TDR (per "
             "judge and by consensus)", "table", fixed_table,
             best={"fixed_claim_rate": "min", "tdr": "max"}),
        Item("fixed_versions_chart", "Fixed versions: still claims the fixed bug, beside TDR",
             "figure", fixed_figure),
        Item("lucky_guesses", "Accuracy against target detection, per judge", "figure", lucky),
        Item("kappa_heatmap", "Cohen's kappa between judges", "figure", kappa),
        Item("judge_spread", "TDR and SUI across judges", "figure", spread),
    ]


# ------------------------------------------------------------------------------ replication


def _replication_items() -> list[Item]:
    from kbench_core import replication
    from kbench_core.figures import replication as rep_figures

    def ecs_table(frame: pd.DataFrame, options: Mapping[str, Any]):
        for level in ("overall", "domain", "study"):
            if level == "domain" and "domain" not in frame:
                continue
            yield level, replication.ecs(frame, level=level, **options)

    def pas_table(frame: pd.DataFrame, options: Mapping[str, Any]):
        result = replication.pas(frame)
        if len(result.model):
            yield "", result.model

    def scatter(frame: pd.DataFrame, options: Mapping[str, Any]):
        tests = replication.prepare_tests(frame)
        valid = tests[np.isfinite(tests["d_h"]) & np.isfinite(tests["d_a"])]
        yield "", rep_figures.effect_scatter(
            valid.assign(weight=replication.structure_weights(valid)), replication.ecs(frame))

    def pas_heat(frame: pd.DataFrame, options: Mapping[str, Any]):
        result = replication.pas(frame)
        if len(result.study):
            yield "", rep_figures.study_heatmap(result.study, value="pas")

    return [
        Item("ecs", "ECS (weighted Lin's CCC) per model, overall, per domain, per study",
             "table", ecs_table, best={"ecs": "max"}, main=True),
        Item("pas", "PAS per model (Fisher-z pooled)", "table", pas_table, best={"pas": "max"}),
        Item("effect_scatter", "Human against agent effect sizes", "figure", scatter),
        Item("pas_heatmap", "PAS per study and model", "figure", pas_heat),
    ]


def _summary_items() -> list[Item]:
    from kbench_core import replication
    from kbench_core.figures import replication as rep_figures

    def board(frame: pd.DataFrame, options: Mapping[str, Any]):
        if len(replication.study_rows(frame)):
            yield "", replication.summary_leaderboard(frame)

    def board_figure(frame: pd.DataFrame, options: Mapping[str, Any]):
        for _, table in board(frame, options):
            yield "", rep_figures.summary_leaderboard(table)

    def heat(frame: pd.DataFrame, options: Mapping[str, Any]):
        studies = replication.study_rows(frame)
        if not len(studies):
            return
        longer = ("model" if studies["model"].nunique() >= studies["study"].nunique()
                  else "study")
        for metric in ("pas", "ecs"):
            if metric in studies and studies[metric].notna().any():
                for page, part in _heat_pages(studies, longer):
                    yield "-".join(p for p in (metric, page) if p), rep_figures.study_heatmap(
                        part, value=metric, zmin=0.0 if metric == "pas" else -1.0)

    def findings(frame: pd.DataFrame, options: Mapping[str, Any]):
        rows = replication.finding_rows(frame)
        if len(rows):
            yield "", rows[[c for c in ("model", "study", "finding", "finding_score",
                                        "n_tests") if c in rows]].reset_index(drop=True)

    return [
        Item("leaderboard", "Configurations: published PAS and ECS, means of the per-study "
             "values, rank with its interval, cost", "table", board,
             best={"config_pas": "max", "config_ecs": "max", "mean_study_pas": "max",
                   "mean_study_ecs": "max", "cost": "min"}, main=True),
        Item("leaderboard_chart", "Configurations by score, with cost", "figure", board_figure),
        Item("study_heatmap", "Score per study and configuration", "figure", heat),
        Item("findings", "Published finding scores", "table", findings),
    ]


def _bias_summary_items() -> list[Item]:
    from kbench_core import figures, kahne_summary

    def fingerprint(frame: pd.DataFrame, options: Mapping[str, Any]):
        return _one(kahne_summary.fingerprint_table(frame).drop(columns=["n"]))

    def models(frame: pd.DataFrame, options: Mapping[str, Any], meta: Mapping[str, Any]):
        return _one(kahne_summary.leaderboard(frame, meta.get("summary")))

    def heatmap(frame: pd.DataFrame, options: Mapping[str, Any]):
        return _one(figures.fingerprint_heatmap(kahne_summary.fingerprint_table(frame)))

    def curves(frame: pd.DataFrame, options: Mapping[str, Any]):
        table = kahne_summary.intensity_table(frame)
        for bias, rows in table.groupby("bias", sort=True):
            yield str(bias), figures.bms_curves(
                rows, y="mean", title=f"{bias}: mean score by trigger intensity (as reported)")

    def domains(frame: pd.DataFrame, options: Mapping[str, Any]):
        cells = kahne_summary.domain_cells(frame)
        for model, rows in cells.groupby("model", sort=True):
            yield str(model), figures.bci_heatmap(
                rows, title=f"{model}: score by domain (as reported)")

    def alignment(frame: pd.DataFrame, options: Mapping[str, Any]):
        return _one(figures.has_chart(kahne_summary.alignment_table(frame)))

    def mitigation(frame: pd.DataFrame, options: Mapping[str, Any]):
        table = kahne_summary.mitigation_table(frame)
        for model, rows in table.groupby("model", sort=True):
            yield str(model), figures.mitigation_chart(
                rows, title=f"{model}: score before and after debiasing (as reported)")

    def calibration(frame: pd.DataFrame, options: Mapping[str, Any]):
        table = kahne_summary.calibration_table(frame)
        if table["has_confidence_data"].any():
            yield "", figures.cas_bars(table)

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


_BUILDERS: dict[str, Callable[[], list[Item]]] = {"bias": _bias_items,
                                                   "bias_summary": _bias_summary_items,
                                                   "judged": _judged_items,
                                                   "replication": _replication_items,
                                                   "replication_summary": _summary_items}


def items_for(kind: str) -> list[Item]:
    """Every figure and table of a run kind, main table first."""
    if kind not in _BUILDERS:
        return []
    return sorted(_BUILDERS[kind](), key=lambda item: not item.main)


def unavailable(kind: str, frame: pd.DataFrame) -> str | None:
    """Why a run has nothing to show (no figure or table can be made), in words for the user,
    or None. A bias run none of whose responses is scored is the case met in practice."""
    if kind == "bias":
        from kbench_core.kahne import UNSCORED_ADVICE, scored_share

        if scored_share(frame)[0] == 0:
            return UNSCORED_ADVICE
    return None


def main_table(kind: str) -> Item:
    """The family's headline table (the fingerprint, the ECS/PAS table, the tier leaderboard)."""
    for item in items_for(kind):
        if item.main:
            return item
    raise ValueError(f"no main table for runs of kind {kind!r} yet")
