"""A toy multiple-choice-accuracy family, defined entirely inside ``tests/``: the recipe of
``docs/architecture.md`` ("Checklist for a new family"), exercised by
``tests/test_toy_family.py``. Nothing outside this folder names it; registering :data:`FAMILY`
(one ``families.register`` call) is all kbench needs.

One row per model × question: the option the model chose, whether it was right, and the
confidence it stated. The metrics are the shared helpers: accuracy per model with its Wilson
interval (:func:`kbench_core.stats.wilson_by`), calibration per model
(:func:`kbench_core.calibration.calibration_by`) and the shared reliability diagram.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from kbench_core.calibration import calibration_by, reliability_by
from kbench_core.catalog import Item, one
from kbench_core.families import CompareDefaults, Family, PageInfo, Profile
from kbench_core.figures.calibration import reliability_diagram
from kbench_core.schema import Column, KindSpec, unit_column
from kbench_core.stats import wilson_by

KIND = "toy_mcq"
SAMPLE = "toy_mcq.csv"


class Keys:
    """The page's widget keys, written once: the page reads them from FAMILY.page.keys."""

    RUNS = "toy_mcq_runs"
    MODELS = "toy_mcq_models"
    TABLE = "toy_mcq_accuracy"
    CHART = "toy_mcq_chart"


RUN_KEY, MODELS_KEY = Keys.RUNS, Keys.MODELS

# 1. the columns (with the family, not in schema.py)
SPEC = KindSpec(
    kind=KIND,
    columns=(Column("model", "category", True, meaning="model under test"),
             Column("question", "category", True, meaning="question id"),
             Column("choice", "category", True, allowed=("A", "B", "C", "D"),
                    meaning="the option the model chose"),
             Column("correct", "bool", True, meaning="whether the choice is the key"),
             unit_column("confidence", "confidence the model stated")),
    key=("model", "question"),
    signature=frozenset({"model", "question", "choice", "correct"}),
    description="multiple-choice answers, one row per model x question",
)


# 2. the metrics: shared helpers, one tidy frame in, one tidy frame out
def accuracy(frame: pd.DataFrame) -> pd.DataFrame:
    """Accuracy per model with its Wilson 95% interval, best first."""
    table = wilson_by(frame.assign(model=frame["model"].astype(str)), "model", "correct",
                      name="accuracy")
    return table.sort_values(["accuracy", "model"], ascending=[False, True],
                             kind="stable").reset_index(drop=True)


def accuracy_chart(table: pd.DataFrame) -> go.Figure:
    """Accuracy per model with its interval (the family's own figure)."""
    fig = go.Figure(go.Bar(
        x=table["model"], y=table["accuracy"],
        error_y=dict(type="data", symmetric=False,
                     array=table["accuracy_high"] - table["accuracy"],
                     arrayminus=table["accuracy"] - table["accuracy_low"])))
    fig.update_layout(title="Accuracy (95% Wilson interval)", yaxis_range=[0, 1])
    return fig


# 3. the catalog: what kbench metrics/figures/report and the Export ZIP make of a run
def _catalog() -> list[Item]:
    def table(frame: pd.DataFrame, options: object) -> Iterator[tuple[str, pd.DataFrame]]:
        return one(accuracy(frame))

    def chart(frame: pd.DataFrame, options: object) -> Iterator[tuple[str, go.Figure]]:
        return one(accuracy_chart(accuracy(frame)))

    def calibration(frame: pd.DataFrame, options: object) -> Iterator[tuple[str, pd.DataFrame]]:
        return one(calibration_by(frame.assign(model=frame["model"].astype(str)), "model"))

    def reliability(frame: pd.DataFrame, options: object) -> Iterator[tuple[str, go.Figure]]:
        tidy = frame.assign(model=frame["model"].astype(str))
        return one(reliability_diagram(reliability_by(tidy, "model", n_bins=5)))

    return [Item("accuracy", "Accuracy per model", "table", table, main=True,
                 best={"accuracy": "max"}),
            Item("accuracy_chart", "Accuracy per model", "figure", chart),
            Item("calibration", "Calibration per model", "table", calibration,
                 best={"ece": "min", "brier": "min"}),
            Item("reliability", "Reliability diagram", "figure", reliability)]


# 4. a sample run with a planted effect (model "strong" right 80 % of the time, "weak" 40 %)
def sample_frame(seed: int = 0, n_questions: int = 60) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for model, rate in (("synthetic-strong", 0.8), ("synthetic-weak", 0.4)):
        correct = rng.uniform(size=n_questions) < rate
        rows.append(pd.DataFrame({
            "model": model, "question": [f"q{k:03d}" for k in range(n_questions)],
            "choice": rng.choice(list("ABCD"), n_questions), "correct": correct,
            "confidence": np.round(rng.uniform(0.3, 1.0, n_questions), 2)}))
    return pd.concat(rows, ignore_index=True)


# 5. its row in the cross-benchmark profile (kbench profile, the Models page): the main
# table's accuracy, ranked by value
def _profile_rows(run) -> tuple[pd.DataFrame, int, str]:
    from kbench_core.profile import metric_rows, point_ranks

    board = accuracy(run.frame)
    return (metric_rows(board, "accuracy", low="accuracy_low", high="accuracy_high", n="n",
                        ranks=point_ranks(board, "accuracy"),
                        items="the model's questions (ranked by value)"),
            len(board), "")


def _per_item(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(correct=frame["correct"].astype(float))


# 6. the family: one value, registered with one call (families.register(FAMILY)), or, as a
# module of kbench_core/families/, found with the built-in ones (tests/test_builtin_family.py)
FAMILY = Family(
    kind=KIND, title="Toy multiple choice", spec=SPEC, item_key=("question",),
    comparison=CompareDefaults((("correct answer", "correct"),), "question", None, "questions"),
    per_item=_per_item, lower_is_better=frozenset({"brier"}), catalog=_catalog,
    sample_files=(SAMPLE,), sample_frame=sample_frame, format_doc="tests/toy_family.md",
    profile=Profile("toy multiple choice", "Toy multiple choice",
                    (("accuracy", "Accuracy (share of questions right)", "accuracy"),),
                    "accuracy", _profile_rows),
    page=PageInfo("tests/toy_page.py", "Toy multiple choice", Keys.RUNS,
                  dependent=(Keys.MODELS,), icon=":material/quiz:", url="toy-mcq", order=90,
                  keys=Keys),
)
