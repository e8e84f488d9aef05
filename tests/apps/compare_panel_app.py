"""A page holding only the Compare panel, run by tests/test_app_compare.py with AppTest.

Session-state switches set by the test before the first run:
``cmp_kind`` ("bias", the default, calls ``compare_panel`` directly; "judged" or "replication"
use ``run_compare_panel`` with the family's defaults) and ``cmp_only_model`` (keep one model's
rows, to check the single-model message).
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from kbench_app.compare import compare_panel, run_compare_panel
from kbench_core.io import load_run

SAMPLES = Path(__file__).resolve().parents[2] / "sample_data"
st.set_page_config(layout="wide")  # as app.py

kind = st.session_state.get("cmp_kind", "bias")
frame = load_run(SAMPLES / f"{kind}.csv").frame
only = st.session_state.get("cmp_only_model")
if only:
    frame = frame[frame["model"].astype(str) == only]
if kind == "bias":
    compare_panel(frame, values={"bias score": "score"}, group="bias", cluster="bias",
                  key="cmp", noun="items")
else:
    if kind == "judged":
        frame = frame[frame["judge"].astype(str) == sorted(map(str, frame["judge"].unique()))[0]]
    run_compare_panel(frame, kind, key="cmp")
