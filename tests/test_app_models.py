"""The Models page under AppTest: claude-haiku-4.5 joined across the bundled KahneBench reports
and HumanStudy-Bench results, its cards' numbers as kbench_core.profile gives them, coverage,
the newest result, and aliases added in the app."""

from __future__ import annotations

import re
import shlex
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
    assert {s.value for s in at.subheader} >= {"Profile", "Replication of human studies"}
    # the compact profile says what kbench_core.profile says, from the same files: one row per
    # run and configuration, value and interval whole, the rank with its page's mark
    expected = headline_rows(profile([load_run(REAL / "kahnebench"), load_run(
        REAL / "humanstudy-bench" / "simple_results.json")]))
    expected = expected[expected["model"] == "claude-haiku-4.5"]
    shown = profile_table(at).set_index("benchmark")
    assert len(shown) == 5 and not at.metric
    bms = expected[expected["metric"] == "mean_bms"].iloc[0]
    row = shown.loc["bias · kahnebench"]
    assert row["metric"] == "mean BMS (kbench)"
    assert row["value [95%]"] == (
        f"{bms['value']:.4f} [{bms['value_low']:.4f},\u00a0{bms['value_high']:.4f}]")
    # simultaneous rank intervals: no pair of the 11 is decided after Holm (issue 38 item 6)
    assert row["rank [95%]"] == "11 [1,\u00a011] of\u00a011 · few biases"
    assert row["rests on"].startswith("n = 15: the 15 biases every model of the run reports")
    pas = expected[expected["configuration"] == "v4-background"].iloc[0]
    row = shown.loc["replication · simple_results · v4-background"]
    assert row["value [95%]"] == f"{pas['value']:.4f}"
    assert row["rank [95%]"] == (f"{pas['rank']:g} [{pas['rank_low']:g},\u00a0"
                                 f"{pas['rank_high']:g}] of\u00a063 · few studies")
    charts = [c.proto.id.rsplit("-", 1)[-1] for c in at.get("plotly_chart")]
    # the configurations' heat table; no one-column fingerprint of one model
    assert sum(c.startswith("models_card_replication_") for c in charts) == 1, charts
    assert not any(c.startswith("models_card_bias_") for c in charts), charts


def profile_table(at: AppTest) -> pd.DataFrame:
    """The compact profile as the reader sees it (st.table reads Markdown: the page escapes
    every text; the escapes removed here)."""
    (table,) = [t for t in at.table if "rank [95%]" in t.value.columns]
    return table.value.map(lambda text: re.sub(r"\\(.)", r"\1", str(text)))


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
    path = tmp_path / "[run](javascript:alert(1)).csv"   # the run's name, in the profile table
    frame.to_csv(path, index=False)
    at = open_page(monkeypatch, f"--no-samples {shlex.quote(str(path))}")
    models = at.selectbox(key="models_model").options
    at.selectbox(key="models_model").set_value(
        next(m for m in models if "evil" in m)).run()
    assert not at.exception, [e.value for e in at.exception]
    texts = [e.value for e in (*at.markdown, *at.caption, *at.subheader)] + [
        m.label for m in at.metric] + [e.label for e in at.expander] + [
        str(cell) for t in at.table for cell in t.value.to_numpy().ravel()]
    assert not any("](http" in t for t in texts), texts   # no live link from the data
    cells = [str(c) for t in at.table for c in t.value.to_numpy().ravel()]
    assert any("\\[run\\]\\(javascript" in c for c in cells), cells   # escaped: text
    assert not any("](javascript" in c for c in cells), cells
    joined = frame_with(at, "raw id", "joined by")
    assert hostile in set(joined["raw id"])                 # shown, as text


@pytest.mark.parametrize(("model", "family", "metric", "card"), [
    ("synthetic-detector-sharp", "vulnerability", "TDR", True),
    ("synthetic-agent-mirror", "replication", "ECS", True),
    ("synthetic-alpha", "bias", "susceptibility (mean BMS)", False)])
def test_every_family_has_its_profile_row(monkeypatch, model, family, metric, card) -> None:
    at = open_page(monkeypatch)
    at.selectbox(key="models_model").set_value(model).run()
    assert not at.exception, [e.value for e in at.exception]
    charts = [c.proto.id.rsplit("-", 1)[-1] for c in at.get("plotly_chart")]
    assert any(c.startswith(f"models_card_{family}_") for c in charts) == card, charts
    assert metric in set(profile_table(at)["metric"])


def test_a_suggested_join_is_accepted_in_the_app(monkeypatch) -> None:
    at = open_page(monkeypatch)
    (near,) = [e for e in at.expander if e.label.startswith("Suggested joins")]
    assert near.label == "Suggested joins (1)"
    table = frame_with(at, "id", "join under").iloc[0]
    assert (table["id"], table["join under"]) == ("grok-4.1-fast-reasoning", "grok-4.1-fast")
    chooser = at.multiselect(key="models_suggested")
    assert len(chooser.options) == 1
    chooser.set_value(chooser.options).run()
    (accept,) = [b for b in at.button if b.label == "Accept the chosen joins"]
    accept.click().run()
    assert not at.exception, [e.value for e in at.exception]
    aliases = frame_with(at, "raw id", "canonical id")
    assert aliases.to_dict("records") == [{"raw id": "grok-4.1-fast-reasoning",
                                           "canonical id": "grok-4.1-fast"}]
    assert not [e for e in at.expander if e.label.startswith("Suggested joins")]
    at.selectbox(key="models_model").set_value("grok-4.1-fast").run()
    joined = frame_with(at, "raw id", "joined by").set_index("raw id")
    assert joined.loc["grok-4-1-fast-reasoning", "joined by"] == "alias"
    assert set(joined["family"]) == {"bias", "replication"}


@pytest.mark.parametrize("text", [
    "[aliases]\nx = " + "[" * 1000 + "]" * 1000 + "\n",     # RecursionError before
    "[aliases]\n\"a\" = [\"\U000e0001\"]\n\"b\" = [\"\U000e0001\"]\n",
])
def test_a_bad_aliases_upload_is_said_and_changes_nothing(monkeypatch, text) -> None:
    at = open_page(monkeypatch)
    at.text_input(key="models_alias_raw").input("grok-4-1-fast-reasoning")
    at.text_input(key="models_alias_canonical").input("grok-4.1-fast-none")
    at.button[0].click().run()
    at.file_uploader(key="models_aliases_upload").set_value(
        [("deep.toml", text.encode(), "application/toml")]).run()
    assert not at.exception, [e.value for e in at.exception]
    assert any(e.value.startswith("The aliases file was not used") for e in at.error)
    assert any(c.value.startswith("deep.toml: ") for c in at.code)
    aliases = frame_with(at, "raw id", "canonical id")   # the session's aliases stay
    assert aliases["raw id"].tolist() == ["grok-4-1-fast-reasoning"]


def test_the_newest_results_read_as_the_profile_does(monkeypatch) -> None:
    """The newest-result table wrote its interval as two raw columns (value_low, value_high,
    "None" where a published value has none) and named columns rank_note, n_models (issue-37
    walkthrough, Models page): now the value beside "[low, high]" (empty without one) and
    the rank as the profile writes it."""
    at = open_page(monkeypatch)
    newest = frame_with(at, "others", "run")
    assert "value_low" not in newest and "rank_note" not in newest
    assert {"value_ci", "rank_text"} <= set(newest.columns)
    row = newest[(newest["model"] == "claude-haiku-4.5")
                 & (newest["metric"].astype(str) == "mean BMS (kbench)")].iloc[0]
    assert re.fullmatch(r"\[\d\.\d+, \d\.\d+\]", row["value_ci"])
    assert re.fullmatch(r"\d+ \[\d+, \d+\] of 11 · few biases", row["rank_text"])
    published = newest[newest["metric"].astype(str) == "PAS (published)"]
    assert (published["value_ci"] == "").all()  # published: no interval, not "None"
