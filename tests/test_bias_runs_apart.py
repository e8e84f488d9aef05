"""Runs of cognitive-bias results that score different biases are ranked apart unless the user
asks, so a run's numbers never change because another run is selected (issue 37; found in
the walkthrough with every real file: beside the bundled synthetic reports, the 11 KahneBench
reports were ranked on the 6 biases both share, and claude-opus-4-7's mean BMS fell from
0.083 (15 biases, rank 1) to 0.058 (rank 2)).

The KahneBench reports score 15 biases per model; the synthetic ``bias_summary`` sample scores
6 of them, so the biases every model of both has are those 6."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from kbench_app import state
from kbench_core import bias_reports, io

ROOT = Path(__file__).resolve().parent.parent
REPORTS = ROOT / "sample_data" / "real" / "kahnebench"
SYNTHETIC = ROOT / "sample_data" / "bias_summary.csv"


def test_runs_of_different_biases_are_grouped_apart() -> None:
    real = io.load_run(REPORTS)
    synthetic = io.load_run(SYNTHETIC)
    assert len(bias_reports.shared_biases(real.frame)) == 15
    assert bias_reports.shared_biases(synthetic.frame) < bias_reports.shared_biases(
        real.frame)
    assert bias_reports.leaderboard_groups({"kahnebench": real.frame,
                                            "bias_summary": synthetic.frame,
                                            "again": real.frame}) == [
        ["kahnebench", "again"], ["bias_summary"]]


def open_reports(monkeypatch) -> AppTest:
    monkeypatch.setenv("KBENCH_APP_ARGS", f"--no-samples {REPORTS} {SYNTHETIC}")
    state._cached_load.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("views/bias.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def board(at: AppTest) -> pd.DataFrame:
    return at.dataframe[0].value.set_index("model")


def test_the_reports_leaderboard_keeps_each_runs_numbers(monkeypatch) -> None:
    at = open_reports(monkeypatch)
    at.multiselect(key="bias_report_runs").set_value(["kahnebench"]).run()
    alone = board(at)
    assert (alone["n_ranked"] == 15).all()
    at.multiselect(key="bias_report_runs").set_value(["kahnebench", "bias_summary"]).run()
    assert not at.exception, [e.value for e in at.exception]
    group = at.radio(key="bias_report_group")
    assert group.options == ["kahnebench", "bias_summary", "every run together"]
    assert group.value == "kahnebench"
    beside = board(at)
    pd.testing.assert_frame_equal(alone, beside)  # was ranked on the 6 shared biases
    assert any("ranked on its own biases" in c.value for c in at.caption)
    # asked for: every run in one leaderboard, on the shared biases, and said so
    at.radio(key="bias_report_group").set_value("all").run()
    together = board(at)
    assert len(together) == len(alone) + 3 and (together["n_ranked"] == 6).all()
    assert any("Ranked together as you asked" in c.value and "on the 6 biases" in c.value
               for c in at.caption)


@pytest.mark.parametrize("value", ["score"])
def test_one_trial_run_has_no_choice(monkeypatch, value) -> None:
    # a single run (the sample's trials): no "Leaderboard of" radio, nothing changes
    monkeypatch.setenv("KBENCH_APP_ARGS", "")
    state._cached_load.clear()
    at = AppTest.from_file(str(ROOT / "views" / "bias.py"), default_timeout=120)
    at.session_state["bias_runs"] = ["bias"]
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not [r for r in at.radio if r.key == "bias_group"]


def test_the_users_own_reports_open_before_the_bundled_trials(monkeypatch, tmp_path) -> None:
    """Started on the samples with the user's own fingerprint reports (given to `kbench app`,
    or a workspace run in a later session): the page showed the bundled synthetic trials."""
    mine = tmp_path / "my_reports.csv"
    mine.write_text(SYNTHETIC.read_text().replace("synthetic-", "mine-"))
    monkeypatch.setenv("KBENCH_APP_ARGS", str(mine))
    state._cached_load.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("views/bias.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.radio(key="bias_source").value == "reports"
    assert at.multiselect(key="bias_report_runs").value == ["my_reports"]
