"""A self-contained interactive HTML report of runs, for reviewers who install nothing.

Every figure and table of :mod:`kbench_core.catalog` for each run, in one HTML file with
plotly's JavaScript inlined once (no network needed to open it). Tables and every name from the
runs are HTML-escaped: a model called ``<script>`` shows as text.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go

import kbench_core
from kbench_core.catalog import items_for, unavailable
from kbench_core.export import provenance_of
from kbench_core.io import Run

__all__ = ["report_html"]

_STYLE = """
body { font-family: "Source Sans Pro", Helvetica, Arial, sans-serif; color: #222;
       max-width: 1200px; margin: 2rem auto; padding: 0 1rem; }
h1 { font-weight: 600; } h2 { border-bottom: 1px solid #ddd; padding-bottom: .3rem; }
table.kbench { border-collapse: collapse; font-size: 13px; margin: .5rem 0 1.5rem; }
table.kbench th, table.kbench td { border-bottom: 1px solid #eee; padding: 3px 8px;
                                   text-align: right; }
table.kbench th { border-bottom: 2px solid #444; }
.scroll { max-height: 480px; max-width: 100%; overflow: auto; }
table.kbench td { white-space: nowrap; }
table.kbench th { white-space: normal; min-width: 4em; position: sticky; top: 0;
                  background: #fff; }
table.kbench td:first-child, table.kbench th:first-child { position: sticky; left: 0;
                  background: #fff; text-align: left; z-index: 1; }
table.kbench th:first-child { z-index: 2; }
.plotly-graph-div { max-width: 100%; overflow-x: auto; }
footer, .meta { color: #666; font-size: 12px; }
"""


def _table_html(frame: pd.DataFrame) -> str:
    """The table in a box that scrolls (both ways) inside the page, its first column pinned,
    numbers as :func:`kbench_core.tables.format_frame` writes them."""
    from kbench_core.tables import format_frame

    shown = format_frame(frame)
    return ('<div class="scroll">'
            + shown.to_html(index=False, escape=True, classes="kbench", border=0,
                            na_rep="")
            + "</div>")


def report_html(runs: Sequence[Run], *, options: Mapping[str, Any] | None = None,
                progress: Callable[[str], None] | None = None) -> str:
    """The report of ``runs`` as one HTML document (a string)."""
    prov = provenance_of(runs, what="report", options=options)
    parts = [f"<!-- {html.escape(' · '.join(prov.lines()))} -->", "<!DOCTYPE html>",
             '<html lang="en"><head><meta charset="utf-8">',
             f"<title>kbench report · {html.escape(', '.join(r.name for r in runs))}</title>",
             f"<style>{_STYLE}</style></head><body>",
             "<h1>kbench report</h1>",
             f'<p class="meta">kbench {html.escape(kbench_core.__version__)} · created '
             f"{html.escape(prov.created)}. Every figure is interactive: hover for values, "
             "click legend entries to hide or isolate series.</p>"]
    first_figure = True
    for run in runs:
        parts.append(f"<h2>{html.escape(run.name)} <small>({html.escape(run.kind)}, "
                     f"{len(run):,} rows)</small></h2>")
        parts.append(f'<p class="meta">source {html.escape(str(run.meta.get("source", "")))}'
                     f" · sha256 {html.escape(run.content_hash)}</p>")
        items = items_for(run.kind)
        why = unavailable(run.kind, run.frame)
        if why:
            parts.append(f"<p>Nothing to show for this run. {html.escape(why)}</p>")
            items = []
        elif not items:
            parts.append("<p>No figures for this kind of run yet.</p>")
        empty = []
        explained: dict[str, list[str]] = {}
        for item in items:
            # built before its heading: an item that yields nothing for this run (one judge
            # has no agreement, a run without fixed versions no fixed-version chart) gets no
            # heading, only a mention in the line below
            objects = list(item.objects(run.frame, options, meta=run.meta))
            if not objects:
                if item.empty:  # the item says why: once per reason, with the items' titles
                    explained.setdefault(item.empty, []).append(item.title)
                else:
                    empty.append(item.title)
                continue
            parts.append(f"<h3>{html.escape(item.title)}</h3>")
            for stem, obj in objects:
                if progress:
                    progress(f"{run.name}: {stem}")
                if isinstance(obj, go.Figure):
                    parts.append(obj.to_html(full_html=False, include_plotlyjs=first_figure,
                                             config={"displaylogo": False}))
                    first_figure = False
                else:
                    parts.append(_table_html(obj))
        for why, titles in explained.items():
            parts.append(f'<p class="meta">Not shown: {html.escape("; ".join(titles))}. '
                         f"Why: {html.escape(why)}.</p>")
        if empty:
            parts.append('<p class="meta">Not shown, as this run has no data for them (e.g. '
                         "a second LLM judge, fixed versions, prompt types): "
                         + html.escape("; ".join(empty)) + ".</p>")
    parts.append(f"<footer>{'<br>'.join(html.escape(line) for line in prov.lines())}</footer>")
    parts.append("</body></html>")
    return "\n".join(parts)
