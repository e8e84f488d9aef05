"""LLM-judged vulnerability detection (BlockBench): one row per sample × detector × prompt type
× judge.

Metrics in :mod:`kbench_core.vuln` and :mod:`kbench_core.agreement` (``docs/metrics/vuln.md``,
``docs/metrics/agreement.md``); the page is ``views/vuln.py``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import pandas as pd

from kbench_core.catalog import RELIABILITY_PAGE, Item, split_pages
from kbench_core.families import Comparison, Family, PageInfo
from kbench_core.schema import JUDGED

__all__ = ["FAMILY"]


def _per_item(frame: pd.DataFrame) -> pd.DataFrame:
    """``correct`` = 1 when said_vulnerable == is_vulnerable (NaN when the verdict is missing,
    e.g. a failed judgement); ``target_found_vulnerable`` = target_found on vulnerable samples
    only (NaN on safe ones, where a target cannot be found)."""
    said = frame["said_vulnerable"].astype("Float64").to_numpy(dtype=float, na_value=np.nan)
    truth = frame["is_vulnerable"].astype("Float64").to_numpy(dtype=float, na_value=np.nan)
    found = frame["target_found"].astype("Float64").to_numpy(dtype=float, na_value=np.nan)
    known = np.isfinite(said) & np.isfinite(truth)
    return frame.assign(correct=np.where(known, (said == truth).astype(float), np.nan),
                        target_found_vulnerable=np.where(truth == 1, found, np.nan))


def _lower() -> frozenset[str]:
    from kbench_core.vuln import LOWER_IS_BETTER

    return LOWER_IS_BETTER | {"false_positive_rate", "fixed_claim_rate"}


_TIER_COLUMNS = ["model", "judge", "n", "accuracy", "f2", "tdr", "lucky_guess_rate",
                 "finding_precision", "hallucination_rate", "avg_reasoning", "ece", "brier",
                 "sui", "tus", "lgi", "renormalised"]


def _catalog() -> list[Item]:
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
            pages = split_pages(models, RELIABILITY_PAGE)
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

    def prompt_types(frame: pd.DataFrame, options: Mapping[str, Any]):
        if "prompt_type" not in frame or not frame["prompt_type"].notna().any():
            return
        for judge, rows in per_judge(frame):
            yield judge, vuln_figures.prompt_type_chart(
                vuln.tiers(rows, by=("model", "prompt_type"), **options),
                title=f"Target detection rate by prompt type ({judge})")

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
        Item("prompt_types", "Target detection rate by prompt type, per judge", "figure",
             prompt_types),
        Item("kappa_heatmap", "Cohen's kappa between judges", "figure", kappa),
        Item("judge_spread", "TDR and SUI across judges", "figure", spread),
    ]


# ------------------------------------------------------------------------------ replication


FAMILY = Family(
    kind="judged", title="Vulnerability detection", spec=JUDGED,
    item_key=("sample", "prompt_type"),
    comparison=Comparison((("correct verdict", "correct"),
                           ("target found (vulnerable samples)", "target_found_vulnerable")),
                          "prompt_type", "sample", "answers"),
    per_item=_per_item, lower_is_better=_lower(), catalog=_catalog,
    sample_files=("judged.csv",),
    page=PageInfo("views/vuln.py", "Vulnerability detection", "vuln_runs",
                  dependent=("vuln_models", "vuln_judge", "vuln_drill_model",
                             "vuln_drill_sample"),
                  icon=":material/security:", url="vulnerability", order=30),
)
