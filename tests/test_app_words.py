"""Words the app shows (issue 24, item 10): a recomputed value beside the published one, one
column-naming style, no internal labels, no "no intervals" box beside a table with intervals.

Each test opens the page on real released files (``sample_data/real``) or the shipped format
examples, as a new user would.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from kbench_app import state
from kbench_core import replication
from kbench_core.io import load_run

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT / "sample_data" / "real"
EFFECTS = ROOT.parent / "shared" / "formats" / "humanstudy_effect_data_example.json"


def open_page(monkeypatch, page: str, args: str) -> AppTest:
    monkeypatch.setenv("KBENCH_APP_ARGS", args)
    state._cached_load.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.run()
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def labels(frame_element) -> dict[str, str]:
    """Column id → the label the table shows (the column configuration sent to the browser;
    a column without one shows its id)."""
    spec = json.loads(frame_element.proto.columns or "{}")
    shown = {k: v.get("label") for k, v in spec.items() if isinstance(v, dict)}
    return {str(c): shown.get(str(c)) or str(c) for c in frame_element.value.columns}


def table_with(at: AppTest, *columns: str, without: tuple[str, ...] = ()):
    for frame in at.dataframe:
        have = set(frame.value.columns)
        if set(columns) <= have and not set(without) & have:
            return frame
    raise AssertionError(f"no table with {columns}")


# ------------------------------------------------------------------ (a) published beside recomputed

def _summary_with_published(tmp_path: Path) -> Path:
    # HumanStudy-Bench's simple_studies.csv layout with the published configuration ECS of
    # the per-test example's configuration ("Example Agent", method v1-empty)
    path = tmp_path / "simple_studies.csv"
    path.write_text("config,study_id,title,pas_raw,ecs,total_tokens,total_cost,config_ecs\n"
                    "example_agent_v1-empty,study_001,A,0.5,0.2,10,0.1,0.2492\n"
                    "example_agent_v1-empty,study_002,B,0.6,0.3,10,0.1,0.2492\n",
                    encoding="utf-8")
    return path


def test_published_ecs_is_read_from_the_run_or_a_loaded_results_file(tmp_path) -> None:
    tests = load_run(EFFECTS).frame
    summary = load_run(_summary_with_published(tmp_path)).frame
    # "Example Agent (v1-empty)" is the configuration "example_agent_v1-empty"
    assert replication.published_ecs(tests, [summary]).to_dict() == {
        "Example Agent (v1-empty)": 0.2492}
    assert np.isnan(replication.published_ecs(tests).iloc[0])  # nothing published
    # the run's own column, one value per model; two values for one model: none is chosen
    own = tests.assign(config_ecs=0.31)
    assert replication.published_ecs(own).iloc[0] == 0.31
    split = tests.assign(config_ecs=np.where(np.arange(len(tests)) % 2, 0.31, 0.32))
    assert np.isnan(replication.published_ecs(split).iloc[0])
    other = summary.assign(config_ecs=0.5)  # two results files that disagree: none
    assert np.isnan(replication.published_ecs(tests, [summary, other]).iloc[0])


def test_recomputed_ecs_is_shown_beside_the_published_one_under_its_own_name(
        monkeypatch, tmp_path) -> None:
    summary = _summary_with_published(tmp_path)
    at = open_page(monkeypatch, "views/replication.py", f"--no-samples {EFFECTS} {summary}")
    frame = table_with(at, "ecs", "ecs_ci", without=("domain", "study"))
    shown = labels(frame)
    assert shown["ecs_published"] == "ECS (published)"
    assert shown["ecs"] == "ECS (recomputed by kbench)"
    row = frame.value.iloc[0]
    want = replication.ecs(load_run(EFFECTS).frame)["ecs"].iloc[0]
    assert row["ecs_published"] == pytest.approx(0.2492)
    assert row["ecs"] == pytest.approx(want) and row["ecs"] != pytest.approx(0.2492)
    # no published value for the run: kbench's ECS keeps its plain name, no published column
    at = open_page(monkeypatch, "views/replication.py", f"--no-samples {EFFECTS}")
    frame = table_with(at, "ecs", "ecs_ci", without=("domain", "study"))
    assert "ecs_published" not in frame.value and labels(frame)["ecs"] == "ECS"


# ------------------------------------------------------------------ (b) one column-naming style

_RAW_ID = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)+$")  # control_mean, p_value, n_clusters


def _check_style(at: AppTest, data_columns: set[str] = frozenset()) -> list[str]:
    bad = []
    for frame in at.dataframe:
        for column, label in labels(frame).items():
            if column in data_columns or column.startswith("study_"):
                continue  # data used as a column (a study id, a model name) is shown as is
            if _RAW_ID.match(label):
                bad.append(f"{column}: {label!r} (an internal column name)")
            if label in ("95% CI", "Rank 95%"):
                bad.append(f"{column}: {label!r} (an interval not named after its value)")
    return bad


def test_every_table_names_its_columns_in_one_style(monkeypatch) -> None:
    at = open_page(monkeypatch, "views/bias.py", f"--no-samples {REAL / 'kahnebench'}")
    assert _check_style(at) == []
    at = open_page(monkeypatch, "views/replication.py", "")
    assert _check_style(at, {"synthetic-agent-flat", "synthetic-agent-mirror",
                             "synthetic-agent-shifted"}) == []
    at = open_page(monkeypatch, "views/vuln.py", "")
    assert _check_style(at) == []


def test_the_compare_tables_name_the_interval_of_their_difference(monkeypatch) -> None:
    at = open_page(monkeypatch, "views/bias.py", f"--no-samples {REAL / 'kahnebench'}")
    for key in ("bias_cmp_every", "bias_report_cmp_every"):  # the every-pair sections opened
        at.session_state[key] = True
    at.run()
    shown = labels(table_with(at, "model_a", "delta_low"))
    # the pair's own interval and the simultaneous one, each said for what it is (issue 37,
    # item 6)
    assert shown["delta_low"] == "A − B 95% CI low (this pair)"
    assert shown["delta_adj_low"] == "A − B simultaneous 95% CI low"
    assert shown["p_value"] == "p (unadjusted)"
    assert shown["p_adjusted"] == "p (Holm, 55 pairs)"


# ------------------------------------------------------------------ (c) no internal labels

def test_debiasing_methods_read_as_words_not_condition_names(monkeypatch) -> None:
    from kbench_core import bias_reports, figures

    at = open_page(monkeypatch, "views/bias.py", f"--no-samples {REAL / 'kahnebench'}")
    fingerprint = table_with(at, "bms", "best_method").value
    methods = set(fingerprint["best_method"].dropna().astype(str))
    assert methods and not any(re.fullmatch(r"debiasing_\d+", m) for m in methods)
    assert "debiasing method 1" in methods
    run = load_run(REAL / "kahnebench")
    table = bias_reports.mitigation_table(run.frame)
    fig = figures.mitigation_chart(table[table["model"] == table["model"].iloc[0]])
    names = {t.name for t in fig.data}
    assert {"debiasing method 1", "debiasing method 2", "debiasing method 3"} <= names
    assert not any(re.fullmatch(r"debiasing_\d+", n) for n in names)
    # the hover keeps the name as the report writes it
    assert any("(debiasing_0)" in t.hovertemplate for t in fig.data)


def test_one_thing_is_counted_in_the_singular() -> None:
    from kbench_core.figures.agreement import confusion_heatmap

    table = pd.DataFrame({"value_a": ["yes"], "value_b": ["yes"], "count": [1]})
    fig = confusion_heatmap(table, "judge-a", "judge-b")
    assert fig.layout.title.text.endswith("agree on 1 of 1 item")


# ------------------------------------------------------------------ (d) no "no intervals" box

def test_no_box_says_no_intervals_beside_a_table_with_intervals(monkeypatch) -> None:
    at = open_page(monkeypatch, "views/bias.py", f"--no-samples {REAL / 'kahnebench'}")
    with_intervals = [f for f in at.dataframe
                      if any("95%" in label for label in labels(f).values())]
    assert with_intervals  # the leaderboard's ranks carry their bootstrap interval
    boxes = [e.value for kind in ("info", "warning", "success") for e in at.get(kind)]
    assert not [b for b in boxes if re.search(r"\bno intervals?\b", b, re.IGNORECASE)]
