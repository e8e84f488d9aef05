"""A page of three linked widgets, run by tests/test_link_limits.py with AppTest: a model
picker with ``long_link_options`` (session state, default 1,200) options, all chosen by
default, a judge and a toggle."""

from __future__ import annotations

import streamlit as st

from kbench_app import kit

count = st.session_state.get("long_link_options", 1200)
options = [f"model-{i:04d}" for i in range(count)]
kit.multiselect("Models", options, key="ll_models", default=options)
kit.select("Judge", ["judge-a", "judge-b"], key="ll_judge")
kit.toggle("Intervals", key="ll_intervals")
kit.done()
