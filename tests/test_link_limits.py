"""Issue 42.9: a shareable link Streamlit would not read back (more than 1,000 fields) lost
every widget's state without a word. The link now leaves out what would not come back, and
the page says which widget."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlencode

import pytest
from streamlit.runtime.state.query_params import sanitize_query_string
from streamlit.testing.v1 import AppTest

from kbench_app import urlstate

APP = Path(__file__).resolve().parent / "apps" / "long_link_app.py"


def page(options: int = 1200, query: dict | None = None) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.session_state["long_link_options"] = options
    at.query_params.update(query or {})
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_a_selection_too_long_for_a_link_is_left_out_and_said() -> None:
    at = page()
    at.selectbox(key="ll_judge").set_value("judge-b").run()
    at.toggle(key="ll_intervals").set_value(True).run()
    link = dict(at.query_params)
    # the 1,200 models would make a link of 1,202 fields, which Streamlit ignores whole when
    # it is opened: every widget would be back at its default
    assert "ll_models" not in link
    assert link["ll_judge"] in ("judge-b", ["judge-b"])
    notes = [c.value for c in at.sidebar.caption]
    assert any("leaves out" in n and "Models (1,200 values)" in n for n in notes), notes
    # the link as written is one Streamlit reads back: the other widgets come back with it
    assert sanitize_query_string(urlencode(link, doseq=True))
    again = page(query=link)
    assert again.selectbox(key="ll_judge").value == "judge-b"
    assert again.toggle(key="ll_intervals").value is True


def test_a_selection_a_link_holds_stays_in_it_without_a_note() -> None:
    at = page(options=40)
    assert len(at.query_params["ll_models"]) == 40
    assert not any("leaves out" in c.value for c in at.sidebar.caption)
    again = page(options=40, query=dict(at.query_params))
    assert len(again.multiselect(key="ll_models").value) == 40


@pytest.mark.parametrize("widgets,values", [(25, 45), (3, 49), (1, 51)])
def test_fit_link_keeps_every_link_within_what_streamlit_and_the_reader_keep(widgets,
                                                                           values) -> None:
    wanted = {f"w{i}": [f"v{j}" for j in range(values)] for i in range(widgets)}
    wanted["judge"] = "x" * (urlstate.MAX_LINK_CHARS + 1)
    left_out = urlstate.fit_link(wanted)
    query = urlencode(wanted, doseq=True)
    assert sanitize_query_string(query) == query  # Streamlit keeps it
    assert query.count("&") + 1 <= 1000
    assert "judge" in left_out  # a value the reader would drop
    # what stays comes back whole through url_value
    assert all(len(value) <= urlstate.MAX_LINK_VALUES for value in wanted.values())
    # only as much as needed is left out: 25 × 45 = 1,125 fields lose three widgets
    expected = {25: 3, 3: 0, 1: 1}[widgets]
    assert len(left_out) - 1 == expected
