"""The Models page under AppTest: claude-haiku-4.5 joined across the bundled KahneBench reports
and HumanStudy-Bench results, its cards' numbers as kbench_core.profile gives them, coverage,
the newest result, and aliases added in the app."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from kbench_app import state
from kbench_core.io import load_run
from kbench_core.profile import headline_rows, profile

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT / "sample_data" / "real"


def open_page(monkeypatch, args: str = "") -> AppTest:
    monkeypatch.setenv("KBENCH_APP_ARGS", args)
    state._cached_load.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("views/models.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == "Models"
    return at


def frame_with(at: AppTest, *columns: str) -> pd.DataFrame:
    for frame in at.dataframe:
        if set(columns) <= set(frame.value.columns):
            return frame.value
    raise AssertionError(f"no table with {columns}")


def test_the_page_joins_claude_haiku_across_families(monkeypatch) -> None:
    at = open_page(monkeypatch)
    picker = at.selectbox(key="models_model")
    assert picker.value == "claude-haiku-4.5"          # the model most families hold
    joined = frame_with(at, "raw id", "joined by")
    assert set(joined["raw id"]) == {"claude-haiku-4-5",
                                     *(f"anthropic_claude_haiku_4.5_{c}" for c in (
                                         "v1-empty", "v2-human", "v3-human-plus-demo",
                                         "v4-background"))}
    assert {s.value for s in at.subheader} >= {"Cognitive biases",
                                               "Replication of human studies"}
    # the cards say what kbench_core.profile says, from the same files
    expected = headline_rows(profile([load_run(REAL / "kahnebench"), load_run(
        REAL / "humanstudy-bench" / "simple_results.json")]))
    expected = expected[expected["model"] == "claude-haiku-4.5"]
    shown = {m.label: m.value for m in at.metric}
    bms = expected[expected["metric"] == "mean_bms"].iloc[0]
    assert shown["Mean reported BMS over shared biases (kbench)"] == (
        f"{bms['value']:.4f} [{bms['value_low']:.4f}, {bms['value_high']:.4f}]")
    pas = expected[expected["configuration"] == "v4-background"].iloc[0]
    assert shown["PAS (published) · v4\\-background"] == f"{pas['value']:.4f}"
    captions = [c.value for c in at.caption]
    assert "rank 11 [1, 11] of 11 · n = 15" in captions  # simultaneous (issue 38 item 6)
    assert f"rank {pas['rank']:g} [{pas['rank_low']:g}, {pas['rank_high']:g}] of 63 · n = 12" \
        in captions
    charts = [c.proto.id.rsplit("-", 1)[-1] for c in at.get("plotly_chart")]
    for family in ("bias", "replication"):    # one figure per card
        assert sum(c.startswith(f"models_card_{family}_") for c in charts) == 1, charts


def test_coverage_and_newest(monkeypatch) -> None:
    at = open_page(monkeypatch)
    cover = frame_with(at, "complete", "bias", "replication").set_index("model")
    assert cover.loc["claude-haiku-4.5", "bias"] >= 1
    assert cover.loc["claude-haiku-4.5", "replication"] == 1
    newest = frame_with(at, "others", "run")
    assert (newest.groupby(["model", "family", "configuration", "metric"]).size() == 1).all()
    at.toggle(key="models_complete").set_value(True).run()
    cover = frame_with(at, "complete", "bias", "replication")
    assert cover["complete"].all()


def test_an_alias_added_in_the_app_joins(monkeypatch) -> None:
    at = open_page(monkeypatch)
    at.text_input(key="models_alias_raw").input("grok-4-1-fast-reasoning")
    at.text_input(key="models_alias_canonical").input("grok-4.1-fast-none")
    at.button[0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    aliases = frame_with(at, "raw id", "canonical id")
    assert aliases.to_dict("records") == [{"raw id": "grok-4-1-fast-reasoning",
                                           "canonical id": "grok-4.1-fast-none"}]
    at.selectbox(key="models_model").set_value("grok-4.1-fast-none").run()
    joined = frame_with(at, "raw id", "joined by").set_index("raw id")
    assert joined.loc["grok-4-1-fast-reasoning", "joined by"] == "alias"
    assert "x_ai_grok_4.1_fast_none_v1-empty" in joined.index
    # a raw id claimed twice is refused, said as inert text, and the aliases stay
    at.text_input(key="models_alias_raw").input("grok-4-1-fast-reasoning")
    at.text_input(key="models_alias_canonical").input("[evil](http://example.com)")
    at.button[0].click().run()
    assert any("claimed by two canonical ids" in c.value for c in at.code)
    assert len(frame_with(at, "raw id", "canonical id")) == 1


def test_hostile_model_ids_stay_inert(monkeypatch, tmp_path) -> None:
    frame = pd.read_csv(ROOT / "sample_data" / "replication_summary.csv")
    first = frame["model"].iloc[0]
    hostile = "[click](http://evil.example) **x**_v1-empty"
    frame.loc[frame["model"] == first, "model"] = hostile
    path = tmp_path / "hostile.csv"
    frame.to_csv(path, index=False)
    at = open_page(monkeypatch, f"--no-samples {path}")
    models = at.selectbox(key="models_model").options
    at.selectbox(key="models_model").set_value(
        next(m for m in models if "evil" in m)).run()
    assert not at.exception, [e.value for e in at.exception]
    texts = [e.value for e in (*at.markdown, *at.caption, *at.subheader)] + [
        m.label for m in at.metric] + [e.label for e in at.expander]
    assert not any("](http" in t for t in texts), texts   # no live link from the data
    joined = frame_with(at, "raw id", "joined by")
    assert hostile in set(joined["raw id"])                 # shown, as text


@pytest.mark.parametrize(("model", "family"), [
    ("synthetic-detector-sharp", "vulnerability"), ("synthetic-agent-mirror", "replication"),
    ("synthetic-alpha", "bias")])
def test_every_family_card_draws(monkeypatch, model, family) -> None:
    at = open_page(monkeypatch)
    at.selectbox(key="models_model").set_value(model).run()
    assert not at.exception, [e.value for e in at.exception]
    charts = [c.proto.id.rsplit("-", 1)[-1] for c in at.get("plotly_chart")]
    assert any(c.startswith(f"models_card_{family}_") for c in charts), charts
    heads = [m.label for m in at.metric]
    assert heads, "no headline metric"
