"""Download buttons under every figure (PNG, SVG, PDF) and table (CSV, LaTeX).

The files are made only when a button is clicked (Streamlit's deferred ``data`` callable), so
a page with many figures renders as fast as without them; each file carries its provenance
(:mod:`kbench_core.export`). ``on_click="ignore"``: a download does not rerun the page.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from kbench_core.export import FigureExporter, Provenance, provenance_of, safe_name, table_bytes

__all__ = ["figure_downloads", "table_downloads"]

_MIME = {"png": "image/png", "svg": "image/svg+xml", "pdf": "application/pdf",
         "csv": "text/csv", "latex": "application/x-tex"}


def _figure_file(fig: go.Figure, fmt: str, provenance: Provenance) -> Callable[[], bytes]:
    def make() -> bytes:
        return FigureExporter().to_bytes(fig, fmt, provenance=provenance)
    return make


def figure_downloads(fig: go.Figure, stem: str, *, runs: Sequence[Any] = (),
                     options: Mapping[str, Any] | None = None, key: str) -> None:
    """A compact row of PNG / SVG / PDF download buttons for ``fig``."""
    prov = provenance_of(runs, what=stem, options=options)
    name = safe_name(stem)
    with st.container(horizontal=True, gap="small"):
        for fmt in ("png", "svg", "pdf"):
            st.download_button(fmt.upper(), _figure_file(fig, fmt, prov),
                               file_name=f"{name}.{fmt}", mime=_MIME[fmt],
                               key=f"{key}_{fmt}", on_click="ignore", type="tertiary",
                               icon=":material/download:", width="content",
                               help=f"Download this figure as {fmt.upper()} "
                                    "(made on click, with provenance)")


def table_downloads(frame: pd.DataFrame, stem: str, *, runs: Sequence[Any] = (),
                    options: Mapping[str, Any] | None = None,
                    best: Mapping[str, str] | None = None, key: str) -> None:
    """CSV and LaTeX download buttons for ``frame``."""
    prov = provenance_of(runs, what=stem, options=options)
    name = safe_name(stem)
    with st.container(horizontal=True, gap="small"):
        st.download_button("CSV", lambda: table_bytes(frame, "csv", provenance=prov),
                           file_name=f"{name}.csv", mime=_MIME["csv"], key=f"{key}_csv",
                           on_click="ignore", type="tertiary", icon=":material/download:",
                           width="content")
        st.download_button("LaTeX", lambda: table_bytes(frame, "latex", best=best,
                                                        provenance=prov),
                           file_name=f"{name}.tex", mime=_MIME["latex"], key=f"{key}_tex",
                           on_click="ignore", type="tertiary", icon=":material/download:",
                           width="content",
                           help="booktabs table; intervals as value [low, high]; the best in "
                                "bold where its interval is clear of the others'")
