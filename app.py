"""kbench dashboard: a short router over the page files (``streamlit run app.py``)."""

import streamlit as st

import kbench_core
from kbench_app import state

st.set_page_config(page_title="kbench", page_icon=":material/monitoring:", layout="wide")

PAGES = [
    st.Page("pages/runs.py", title="Runs", icon=":material/table_view:", default=True),
]

navigation = st.navigation(PAGES)
registry = state.registry()
navigation.run()
# After the page, so the count includes what the page just loaded or removed.
with st.sidebar:
    st.caption(f"kbench {kbench_core.__version__} · {len(registry.runs)} runs loaded")
