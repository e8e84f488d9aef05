"""Human–agent replication tests (HumanStudy-Bench): one row per model × statistical test.

Metrics in :mod:`kbench_core.replication` (``docs/metrics/replication.md``); the page is
``views/replication.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from kbench_core.catalog import Item
from kbench_core.families import CompareDefaults, Family, PageInfo
from kbench_core.schema import REPLICATION, REPLICATION_PAIRS

__all__ = ["FAMILY"]


def _rules(columns: Mapping[str, Any], frame: pd.DataFrame, add) -> None:
    """A run needs one complete pair of effect or posterior columns; native effect sizes need
    their test type (file-level problems are reported with a mask of None)."""
    if not any(set(pair) <= set(frame.columns) for pair in REPLICATION_PAIRS):
        pairs = "; ".join(" + ".join(p) for p in REPLICATION_PAIRS)
        add(None, None, f"a replication run needs at least one pair of columns: {pairs}")
    if "human_effect" in frame.columns and "test_type" not in frame.columns:
        add(None, "test_type", "required column 'test_type' is missing: native effect sizes "
                               "(human_effect/agent_effect) need their test type to be "
                               "converted to d")
    if "human_effect" in columns and "test_type" in columns:
        has_effect = ~np.isnan(columns["human_effect"]) | ~np.isnan(columns["agent_effect"])
        absent = has_effect & columns["test_type"].isna().to_numpy()
        add(absent, "test_type", "rows with human_effect/agent_effect need a test_type")


def _notes(frame: pd.DataFrame) -> list[str]:
    """Bayes factors without the significance flag have no prior: PAS will leave them out."""
    if "human_bf10" not in frame:
        return []
    no_flag = frame["human_bf10"].notna().to_numpy()
    if "human_significant" in frame:
        no_flag = no_flag & frame["human_significant"].isna().to_numpy()
    if "human_pi" in frame:  # a given posterior needs no prior
        no_flag = no_flag & frame["human_pi"].isna().to_numpy()
    if not no_flag.any():
        return []
    return [f"{int(no_flag.sum()):,} of {len(frame):,} tests have a human Bayes factor but no "
            "human_significant flag: without it there are no prior odds, so PAS leaves those "
            "tests out (add the flag to include them)"]


def _per_item(frame: pd.DataFrame) -> pd.DataFrame:
    """``abs_diff`` = |d_agent − d_human|, d from human_d/agent_d where given, else converted
    from the native effects (:func:`kbench_core.replication.prepare_tests`)."""
    from kbench_core.replication import prepare_tests

    if {"d_h", "d_a"} <= set(frame.columns):  # already prepared (the replication page)
        d_h, d_a = (frame[c].to_numpy(dtype=float, na_value=np.nan) for c in ("d_h", "d_a"))
    else:
        prepared = prepare_tests(frame)
        d_h, d_a = prepared["d_h"].to_numpy(float), prepared["d_a"].to_numpy(float)
    return frame.assign(abs_diff=np.abs(d_a - d_h))


def _catalog() -> list[Item]:
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


FAMILY = Family(
    kind="replication", title="Replication (per-test)", spec=REPLICATION,
    item_key=("study", "finding", "test"),
    comparison=CompareDefaults((("|agent d − human d|", "abs_diff"),), "study", "study", "tests"),
    per_item=_per_item, lower_is_better=frozenset({"abs_diff"}),
    catalog=_catalog, rules=_rules, notes=_notes, sample_files=("replication.csv",),
    page=PageInfo("views/replication.py", "Replication", "rep_runs", dependent=("rep_models",),
                  icon=":material/compare_arrows:", url="replication", order=20),
)
