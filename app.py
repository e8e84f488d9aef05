"""kbench dashboard: a short router over the page files in ``views/`` (``streamlit run app.py``).

The page files live in ``views/``, not ``pages/``: Streamlit still treats a ``pages/`` folder
beside the entry script as a legacy multipage app, and a deep link such as ``/biases`` would then
run the page file alone, bypassing this router.
"""

import streamlit as st

import kbench_core
from kbench_app import state

st.set_page_config(page_title="kbench", page_icon=":material/monitoring:", layout="wide")

PAGES = [
    st.Page("views/runs.py", title="Runs", icon=":material/table_view:", default=True),
    st.Page("views/biases.py", title="Cognitive biases", icon=":material/psychology:",
            url_path="biases"),
]

navigation = st.navigation(PAGES)
registry = state.registry()
navigation.run()
# After the page, so the count includes what the page just loaded or removed.
with st.sidebar:
    st.caption(f"kbench {kbench_core.__version__} · {len(registry.runs)} runs loaded")
