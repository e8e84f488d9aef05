"""kbench dashboard: a short router over the page files in ``views/`` (``streamlit run app.py``).

The page files live in ``views/``, not ``pages/``: Streamlit still treats a ``pages/`` folder
beside the entry script as a legacy multipage app, and a deep link such as ``/biases`` would then
run the page file alone, bypassing this router.
"""

from pathlib import Path

import streamlit as st

import kbench_core
from kbench_app import runtime, state
from kbench_core import families

# Every script run, before the registry loads a session's runs: the imports frozen out of
# the cyclic collector, thawed and frozen again a period later (kbench_app.runtime).
runtime.settle()

st.set_page_config(page_title="kbench", page_icon=":material/monitoring:", layout="wide")

ROOT = Path(__file__).resolve().parent
# (file, title, icon, url path): the pages in menu order, the families' own pages (from the
# family registry, kbench_core.families) between the Runs page and the shared ones. A family's
# page file is named relative to the repository (or absolutely: a family defined outside it).
# A page joins the menu once its file exists.
PAGE_TABLE = [
    ("views/runs.py", "Runs", ":material/table_view:", "runs"),
    *((page.path, page.title, page.icon, page.url) for page in families.pages()),
    ("views/models.py", "Models", ":material/person_search:", "models"),
    ("views/agreement.py", "Judge agreement", ":material/groups:", "agreement"),
    ("views/audit.py", "Judge audit", ":material/fact_check:", "audit"),
    ("views/export.py", "Export", ":material/download:", "export"),
]
# The Runs page is the default one, served at "/". Streamlit still reserves a default page's
# url_path, so it gets one nobody types and /runs is a hidden page that sends a link on to "/".
DEFAULT_PAGE_PATH = "start"
PAGES = [st.Page(file, title=title, icon=icon, default=file == "views/runs.py",
                 url_path=DEFAULT_PAGE_PATH if file == "views/runs.py" else url)
         for file, title, icon, url in PAGE_TABLE if (ROOT / file).exists()]


def _to_runs_page() -> None:
    st.switch_page(PAGES[0])


PAGES.append(st.Page(_to_runs_page, title="Runs", url_path="runs", visibility="hidden"))
navigation = st.navigation(PAGES)
registry = state.registry()
navigation.run()
# After the page, so the count includes what the page just loaded or removed.
with st.sidebar:
    count = len(registry.runs)
    st.caption(f"kbench {kbench_core.__version__} · {count} run{'s' * (count != 1)} loaded")
