"""Issue 37.12: one number style in the app's tables (4 significant digits with trailing zeros,
as kbench_core.tables writes them), and a human-baselines table refused as what it is."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kbench_app import ui
from kbench_app.vuln import tier_view
from kbench_core import kahne
from kbench_core.io import RunFormatError, load_run
from kbench_core.tables import format_numbers

ROOT = Path(__file__).resolve().parent.parent


def shown_as(fmt: str, value: float) -> str:
    """What the grid shows for ``value`` under the printf ``fmt`` (Streamlit formats a
    NumberColumn with sprintf-js: ``%.Nf`` is toFixed, ``%.Ng`` is toPrecision with its
    trailing zeros dropped, as Python's ``%`` does for these values)."""
    return fmt % value


def test_tier_two_rates_show_the_digits_of_their_intervals() -> None:
    # Tier 2 TDR on screen: "0.84" and "0.6" beside "[0.6570, 0.9359]"-style intervals.
    # TDR = 21/25 = 0.84 and 15/25 = 0.6; Wilson bounds as statsmodels gives them.
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint([21, 15], [25, 25], method="wilson")
    table = pd.DataFrame({"model": ["a", "b"], "n": [25, 25], "tdr": [21 / 25, 15 / 25],
                          "tdr_low": low, "tdr_high": high})
    view, config = tier_view(table, ["tdr"])
    fmt = config["tdr"]["type_config"]["format"]
    assert [shown_as(fmt, v) for v in view["tdr"]] == format_numbers(view["tdr"]) \
        == ["0.8400", "0.6000"]
    # the interval beside it has the same digits
    assert view["tdr_ci"].tolist() == [f"[{lo}, {hi}]" for lo, hi in zip(
        format_numbers(low), format_numbers(high), strict=True)]
    assert all(len(text.split(", ")[0].split(".")[1]) == 4 for text in view["tdr_ci"])


def test_the_difficulty_and_fixed_tables_show_the_digits_of_their_intervals() -> None:
    """The By-difficulty table showed "0.711" (pooled TDR) beside "[0.5524, 0.8300]" and the
    tiers "0.850", "0.600" (a fixed %.3f escaped the app's number style); seen in the issue-37
    walkthrough on the DS mirror. TDR 27/38 with its Wilson interval; tiers 17/20, 6/10."""
    from statsmodels.stats.proportion import proportion_confint

    from kbench_app.kit import number_style
    from kbench_app.vuln import difficulty_view, fixed_view

    low, high = proportion_confint(27, 38, method="wilson")
    table = pd.DataFrame({"model": ["gemini-3-pro"], "tdr_t1": [17 / 20], "tdr_t2": [6 / 10],
                          "tdr_difficulty_mean": [(17 / 20 + 6 / 10) / 2], "tdr": [27 / 38],
                          "tdr_low": [low], "tdr_high": [high]})
    view, config = difficulty_view(table)
    style = number_style(view, config)

    def on_screen(column: str) -> str:
        return shown_as(style[column]["type_config"]["format"], view[column].iloc[0])

    assert view["tdr_ci"].iloc[0] == "[0.5524, 0.8300]"
    assert [on_screen(c) for c in ("tdr_t1", "tdr_t2", "tdr_difficulty_mean", "tdr")] == [
        "0.8500", "0.6000", "0.7250", "0.7105"]
    fixed = pd.DataFrame({"model": ["m"], "judge": ["majority"], "n_fixed": [8],
                          "fixed_claim_rate": [2 / 8], "fixed_claim_rate_low": [0.0715],
                          "fixed_claim_rate_high": [0.5907], "n_vulnerable": [20],
                          "tdr": [14 / 20], "tdr_low": [0.4810], "tdr_high": [0.8545]})
    view, config = fixed_view(fixed)
    style = number_style(view, config)
    assert [on_screen(c) for c in ("fixed_claim_rate", "tdr")] == ["0.2500", "0.7000"]


@pytest.mark.parametrize("values,expected", [
    ([0.84, 0.6, 0.7236], ["0.8400", "0.6000", "0.7236"]),
    ([12.5, 30.25, 8.0], ["12.50", "30.25", "8.00"]),  # one number of decimals a column
    ([0.05, 0.012, 0.0731], ["0.05000", "0.01200", "0.07310"]),
    # HumanStudy-Bench's published finding scores (simple_findings.csv, six decimals): the
    # small one is not shown as 0.0000
    ([0.015740, 0.080981, 0.197920, 0.000034, 0.010476],
     ["0.015740", "0.080981", "0.197920", "0.000034", "0.010476"]),
])
def test_a_number_column_keeps_its_trailing_zeros(values, expected) -> None:
    fmt = ui.number_format("value", pd.Series(values))
    shown = [shown_as(fmt, v) for v in values]
    # the column's typical value reads as kbench_core.tables writes it (a smaller value in
    # the column may add digits, never take one away)
    typical = int(np.argsort(np.abs(values))[len(values) // 2])
    assert shown[typical].startswith(format_numbers(values)[typical])
    assert shown == expected


def test_columns_beyond_the_fixed_range_keep_four_significant_digits() -> None:
    assert ui.number_format("value", pd.Series([1e-7, 3e-7])) == "%.4g"
    assert ui.number_format("value", pd.Series([np.nan, np.nan])) == "%.4g"
    assert ui.number_format("value", pd.Series([12345.0, 99999.0])) == "%.4g"


# -------------------------------------------------------------- a human-baselines table

BASELINES = ROOT / "kbench_core" / "data" / "human_baselines.json"


def _refusal(source) -> str:
    with pytest.raises(RunFormatError) as caught:
        load_run(source)
    return str(caught.value)


@pytest.mark.parametrize("source", [
    BASELINES,
    ("baselines.csv", kahne.human_baselines()[["bias", "human_rate"]]
     .to_csv(index=False).encode()),
    ("baselines.json", kahne.human_baselines()[["bias", "human_rate"]]
     .to_json(orient="records").encode()),
], ids=["shipped-json", "csv", "json-records"])
def test_a_baselines_table_is_refused_as_what_it_is(source) -> None:
    # It was "expected a JSON list of records (or an object with a 'records' list)".
    message = _refusal(source)
    assert "table of human baselines" in message
    assert "kahne.has(trials, baselines=" in message  # where other rates go
    assert "expected a JSON list" not in message


def test_a_bias_report_with_human_rates_is_still_a_run() -> None:
    report = next((ROOT / "sample_data" / "real" / "kahnebench").glob("fingerprint_*.json"))
    run = load_run(report)
    assert run.kind == "bias_summary" and "human_rate" in run.frame


def test_a_page_table_formatted_as_four_significant_digits_gets_the_one_style() -> None:
    # The bias page's susceptibility column (format "%.4g" in kbench_app.bias) read "0"
    # beside "0.3084" and "0.4941".
    import streamlit as st

    from kbench_app.kit import number_style

    view = pd.DataFrame({"model": ["d", "b", "a"], "susceptibility": [0.0, 0.30841, 0.49412],
                         "n_biases": [6, 6, 6]})
    config = {"susceptibility": st.column_config.NumberColumn("Susceptibility", format="%.4g"),
              "n_biases": st.column_config.NumberColumn("Biases", format="localized"),
              "model": st.column_config.TextColumn("Model")}
    styled = number_style(view, config)
    fmt = styled["susceptibility"]["type_config"]["format"]
    assert [shown_as(fmt, v) for v in view["susceptibility"]] == ["0.0000", "0.3084", "0.4941"]
    assert format_numbers(view["susceptibility"])[1:] == ["0.3084", "0.4941"]
    assert styled["susceptibility"]["label"] == "Susceptibility"  # the rest as the page set
    assert styled["n_biases"] == config["n_biases"] and styled["model"] == config["model"]
