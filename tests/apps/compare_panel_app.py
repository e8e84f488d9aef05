"""A page holding only the Compare panel, run by tests/test_app_compare.py with AppTest.

Session-state switches set by the test before the first run:
``cmp_kind`` ("bias", the default, calls ``compare_panel`` directly; "judged" or "replication"
use ``run_compare_panel`` with the family's defaults), ``cmp_only_model`` (keep one model's
rows, to check the single-model message) and ``cmp_frame`` (CSV text of a bias-like frame with
``model``, ``bias``, ``item``, ``score`` to use instead of the sample run).
"""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import streamlit as st

from kbench_app.compare import compare_panel, run_compare_panel
from kbench_core.io import load_run

SAMPLES = Path(__file__).resolve().parents[2] / "sample_data"
st.set_page_config(layout="wide")  # as app.py

kind = st.session_state.get("cmp_kind", "bias")
given = st.session_state.get("cmp_frame")  # a test's own frame, as CSV text
frame = (pd.read_csv(io.StringIO(given)) if given is not None
         else load_run(SAMPLES / f"{kind}.csv").frame)
only = st.session_state.get("cmp_only_model")
if only:
    frame = frame[frame["model"].astype(str) == only]
if given is not None:
    compare_panel(frame, values={"bias score": "score"}, group="bias", cluster=None,
                  key="cmp", noun="items")
elif kind == "bias":
    compare_panel(frame, values={"bias score": "score"}, group="bias", cluster="bias",
                  key="cmp", noun="items")
else:
    if kind == "judged":
        frame = frame[frame["judge"].astype(str) == sorted(map(str, frame["judge"].unique()))[0]]
    run_compare_panel(frame, kind, key="cmp")
