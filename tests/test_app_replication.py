"""The Replication page under AppTest: the scatter, ECS and PAS tables, options that change the
numbers, summaries and the native HumanStudy-Bench list."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from kbench_app import state
from kbench_core import replication, samples

ROOT = Path(__file__).resolve().parents[1]


def open_page(monkeypatch, args: str = "") -> AppTest:
    monkeypatch.setenv("KBENCH_APP_ARGS", args)
    state._cached_load.clear()
    at = AppTest.from_file(str(ROOT / "views" / "replication.py"), default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_page_shows_ecs_pas_and_the_scatter(monkeypatch) -> None:
    at = open_page(monkeypatch)
    keys = sorted(c.proto.id.rsplit("-", 1)[-1] for c in at.get("plotly_chart"))
    assert "rep_scatter_chart" in keys and "rep_pas_heat_chart" in keys
    overall = at.dataframe[0].value.set_index("model")
    expected = replication.ecs(samples.replication_tests()).set_index("model")
    assert overall.loc["synthetic-agent-shifted", "ecs"] == pytest.approx(
        expected.loc["synthetic-agent-shifted", "ecs"])
    # equal weights and the released code's sums change the numbers
    at.radio(key="rep_weighting").set_value("equal").run()
    at.toggle(key="rep_normalize").set_value(False).run()
    changed = at.dataframe[0].value.set_index("model")
    want = replication.ecs(samples.replication_tests(), weighting="equal",
                           normalize_weights=False).set_index("model")
    assert changed.loc["synthetic-agent-shifted", "ecs"] == pytest.approx(
        want.loc["synthetic-agent-shifted", "ecs"])
    assert changed.loc["synthetic-agent-shifted", "ecs"] != pytest.approx(
        overall.loc["synthetic-agent-shifted", "ecs"])
    assert any("Published study summaries" in s.value for s in at.subheader)


def test_native_effect_list_without_posteriors_says_pas_is_unavailable(monkeypatch) -> None:
    path = ROOT.parent / "shared" / "formats" / "humanstudy_effect_data_example.json"
    at = open_page(monkeypatch, f"--no-samples {path}")
    assert any("PAS is unavailable" in i.value for i in at.info)
    assert len(at.get("plotly_chart")) >= 1
