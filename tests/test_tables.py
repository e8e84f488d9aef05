"""Tests of kbench_core.tables: numbers as a researcher writes them, in every format."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kbench_core import export, tables


def _numpy_4_significant(x: float) -> float:
    """Reference: numpy's own significant-digit rounding (Dragon4), independent of ours."""
    return float(np.format_float_positional(x, precision=4, unique=False, fractional=False,
                                            trim="-"))


@pytest.mark.parametrize("value,kind,shown", [
    (0.6344000000000001, "number", "0.6344"),   # the CSV value
    (3.49e-16, "number", "0"),                  # a floating-point residue for 0
    (-2e-13, "number", "0"),
    (0.123456, "number", "0.1235"),             # 4 significant digits, rounded half up here
    (12.3456, "number", "12.35"),
    (123456.7, "number", "123,500"),            # big numbers: 4 significant, thousands commas
    (0.00001234, "number", "1.234e-05"),
    (3789115.0, "integer", "3,789,115"),        # the tokens 3789115.000
    (1.0, "rank", "1"),                         # the rank 1.000
    (2.5, "rank", "2.5"),                       # a tied mid-rank stays a mid-rank
    (12.3456, "cost", "$12.35"),
    (0.59551, "cost", "$0.5955"),
    (0.000312, "p", "0.00031"),
    (float("nan"), "number", "–"),
    (True, "text", "yes"),
])
def test_format_value_by_hand(value, kind, shown) -> None:
    assert tables.format_value(value, kind) == shown


def test_column_kinds_from_names_and_values() -> None:
    frame = pd.DataFrame({"rank": [1.0, 2.0], "tokens": [3789115.0, 12.0], "n": [3, 4],
                          "cost": [0.5, 1.5], "p_adjusted": [0.01, 0.2], "tdr": [0.5, 0.25],
                          "model": ["a", "b"], "n_share": [0.5, 0.25]})
    kinds = {c: tables.column_kind(c, frame[c]) for c in frame}
    assert kinds == {"rank": "rank", "tokens": "integer", "n": "integer", "cost": "cost",
                     "p_adjusted": "p", "tdr": "number", "model": "text",
                     "n_share": "number"}  # a share under an n_ name is not a count


@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e12, max_value=1e12))
def test_round_significant_matches_numpy(x: float) -> None:
    expected = 0.0 if abs(x) < tables.TINY else _numpy_4_significant(x)
    assert tables.round_significant(x) == pytest.approx(expected, rel=1e-12, abs=0)


@given(st.lists(st.one_of(st.just(float("nan")),
                          st.floats(allow_nan=False, allow_infinity=False, min_value=-1e9,
                                    max_value=1e9)), min_size=1, max_size=30))
def test_round_frame_rounds_every_cell_like_the_scalar_rule(values) -> None:
    frame = pd.DataFrame({"metric": values})
    rounded = tables.round_frame(frame)["metric"].to_numpy(dtype=float)
    expected = np.array([np.nan if np.isnan(v) else tables.round_significant(v)
                         for v in values])
    np.testing.assert_allclose(rounded, expected, rtol=1e-12, atol=0)


def test_csv_is_rounded_unless_full_precision_is_asked_for() -> None:
    frame = pd.DataFrame({"model": ["a", "b"], "pas": [0.6344000000000001, 3.49e-16],
                          "tokens": [3789115.0, 10.0], "rank": [1.0, 2.0]})
    shown = export.to_csv(frame)
    assert "0.6344000000000001" not in shown and "e-16" not in shown
    back = pd.read_csv(io.StringIO(shown))
    assert back["pas"].tolist() == [0.6344, 0.0]
    assert back["tokens"].tolist() == [3789115, 10] and back["tokens"].dtype.kind == "i"
    assert back["rank"].dtype.kind == "i"
    full = pd.read_csv(io.StringIO(export.to_csv(frame, precision="full")))
    assert full["pas"].tolist() == [0.6344000000000001, 3.49e-16]
    with pytest.raises(ValueError, match="precision must be"):
        export.to_csv(frame, precision="half")


def test_latex_and_markdown_show_integers_ranks_and_costs() -> None:
    frame = pd.DataFrame({"rank": [1.0], "model": ["m"], "tokens": [3789115.0],
                          "cost": [12.3456], "pas": [0.6344000000000001]})
    md = export.to_markdown(frame)
    assert "| 1 | m | 3,789,115 | $12.35 | 0.6344 |" in md
    tex = export.to_latex(frame)
    assert r"1 & m & 3,789,115 & \$12.35 & 0.6344 \\" in tex


def test_report_tables_scroll_in_their_box_with_the_first_column_pinned() -> None:
    from kbench_core.report import _STYLE, _table_html

    html = _table_html(pd.DataFrame({"model": ["m"], "tokens": [3789115.0],
                                     "rate": [3.49e-16]}))
    assert "3,789,115" in html and "e-16" not in html and '<div class="scroll">' in html
    assert "max-width: 100%" in _STYLE and "overflow: auto" in _STYLE
    assert "position: sticky; left: 0" in _STYLE


def test_csv_keeps_trailing_zeros_unquoted_and_names_the_cost_unit() -> None:
    frame = pd.DataFrame({"model": ["a", "b"], "pas": [0.465, 0.5], "cost": [2.79, 0.3919]})
    shown = export.to_csv(frame)
    header, first, second = shown.strip().splitlines()
    assert header == '"model","pas","cost_usd"'
    assert first == '"a",0.4650,2.790' and second == '"b",0.5000,0.3919'  # numbers, unquoted
    back = pd.read_csv(io.StringIO(shown))
    assert back["pas"].tolist() == [0.465, 0.5] and back["cost_usd"].dtype.kind == "f"
    assert "cost_usd" in export.to_csv(frame, precision="full").splitlines()[0]


def test_a_cost_column_has_one_precision() -> None:
    frame = pd.DataFrame({"cost": [2.79, 0.3919, 12.3456]})
    assert tables.format_frame(frame)["cost"].tolist() == ["$2.79", "$0.39", "$12.35"]
    tiny = pd.DataFrame({"cost": [0.0012, 1.5]})
    assert tables.format_frame(tiny)["cost"].tolist() == ["$0.0012", "$1.5000"]
    assert "$0.39" in export.to_markdown(frame)


def test_wide_latex_tables_are_scaled_to_the_text_width() -> None:
    narrow = export.to_latex(pd.DataFrame({f"c{i}": [0.5] for i in range(8)}))
    wide = export.to_latex(pd.DataFrame({f"c{i}": [0.5] for i in range(12)}))
    assert r"\resizebox" not in narrow
    lines = wide.splitlines()
    start = lines.index(r"\resizebox{\linewidth}{!}{%")
    assert lines[start + 1].startswith(r"\begin{tabular}")
    assert lines[lines.index(r"\end{tabular}") + 1] == "}"
