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
from kbench_core.export import provenance_of
from kbench_core.families import items_for, unavailable
from kbench_core.io import Run

__all__ = ["profile_table", "report_html"]

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


# What a reader looks at first, per run kind: the ranking and the one figure that sums the run
# up. The rest follows, figures before tables; a long table (more than LONG_TABLE rows, e.g.
# the 165 model × bias rows of eleven KahneBench reports) comes last, folded.
HEADLINE: dict[str, tuple[str, ...]] = {
    "bias": ("susceptibility", "fingerprint_heatmap"),
    "bias_summary": ("models", "fingerprint_heatmap"),
    "judged": ("tiers", "sui_chart"),
    "replication": ("ecs", "effect_scatter"),
    "replication_summary": ("leaderboard_chart", "study_heatmap"),
}
LONG_TABLE = 30


def _built_sections(run: Run, options: Mapping[str, Any] | None,
                    ) -> tuple[list[tuple[Any, list[tuple[str, Any]]]], list[str]]:
    """The run's items that yield something, in reading order (headline, figures, short
    tables, long tables), and the lines saying what is not shown and why."""
    items = items_for(run.kind)
    why = unavailable(run.kind, run.frame)
    if why:
        return [], [f"Nothing to show for this run. {why}"]
    if not items:
        return [], ["No figures for this kind of run yet."]
    built, empty = [], []
    explained: dict[str, list[str]] = {}
    for item in items:
        # an item that yields nothing for this run (one judge has no agreement, a run without
        # fixed versions no fixed-version chart) gets no heading, only a mention below
        objects = list(item.objects(run.frame, options, meta=run.meta))
        if objects:
            built.append((item, objects))
        elif item.empty:  # the item says why: once per reason, with the items' titles
            explained.setdefault(item.empty, []).append(item.title)
        else:
            empty.append(item.title)
    headline = HEADLINE.get(run.kind, ())

    def order(entry: tuple[Any, list[tuple[str, Any]]]) -> tuple[int, int]:
        item, objects = entry
        if item.name in headline:
            return 0, headline.index(item.name)
        if item.what == "figure":
            return 1, 0
        long = max(len(obj) for _, obj in objects) > LONG_TABLE
        return (3 if long else 2), 0

    built.sort(key=order)  # stable: the catalog's order within each rank
    notes = [f"Not shown: {'; '.join(titles)}. Why: {why}." for why, titles in explained.items()]
    if empty:
        notes.append("Not shown, as this run has no data for them (e.g. a second LLM judge, "
                     "fixed versions, prompt types): " + "; ".join(empty) + ".")
    return built, notes


def profile_table(runs: Sequence[Run]) -> pd.DataFrame | None:
    """The headline rows of the profile of ``runs`` (:mod:`kbench_core.profile`) when they
    span several benchmark families, else None (one family: its own leaderboard says it)."""
    from kbench_core.profile import FAMILY_OF, headline_rows, profile

    if len({FAMILY_OF[r.kind] for r in runs if r.kind in FAMILY_OF}) < 2:
        return None
    table = headline_rows(profile(runs))
    return table[[c for c in table.columns if c not in ("kind", "source")]]


def report_html(runs: Sequence[Run], *, options: Mapping[str, Any] | None = None,
                progress: Callable[[str], None] | None = None) -> str:
    """The report of ``runs`` as one HTML document (a string): a table of contents, then per
    run its headline (:data:`HEADLINE`: the ranking and the figure that sums it up), the other
    figures, the tables, and last the long tables (folded, more than :data:`LONG_TABLE`
    rows)."""
    prov = provenance_of(runs, what="report", options=options)
    sections = [_built_sections(run, options) for run in runs]
    parts = [f"<!-- {html.escape(' · '.join(prov.lines()))} -->", "<!DOCTYPE html>",
             '<html lang="en"><head><meta charset="utf-8">',
             f"<title>kbench report · {html.escape(', '.join(r.name for r in runs))}</title>",
             f"<style>{_STYLE}</style></head><body>",
             "<h1>kbench report</h1>",
             f'<p class="meta">kbench {html.escape(kbench_core.__version__)} · created '
             f"{html.escape(prov.created)}. Every figure is interactive: hover for values, "
             "click legend entries to hide or isolate series.</p>"]
    toc = ['<nav id="contents"><h2>Contents</h2><ol>']
    for k, (run, (built, _)) in enumerate(zip(runs, sections, strict=True)):
        toc.append(f'<li><a href="#run-{k}">{html.escape(run.name)}</a> '
                   f"<small>({html.escape(run.kind)})</small>")
        if built:
            toc.append("<ol>" + "".join(
                f'<li><a href="#run-{k}-{html.escape(item.name)}">{html.escape(item.title)}'
                f"</a>{' <small>(table)</small>' if item.what == 'table' else ''}</li>"
                for item, _ in built) + "</ol>")
        toc.append("</li>")
    joined = profile_table(runs)
    if joined is not None:
        toc.append('<li><a href="#profile">Profile: each model across benchmarks</a></li>')
    toc.append("</ol></nav>")
    parts += toc
    first_figure = True
    for k, (run, (built, notes)) in enumerate(zip(runs, sections, strict=True)):
        parts.append(f'<h2 id="run-{k}">{html.escape(run.name)} <small>'
                     f"({html.escape(run.kind)}, {len(run):,} rows)</small></h2>")
        parts.append(f'<p class="meta">source {html.escape(str(run.meta.get("source", "")))}'
                     f" · sha256 {html.escape(run.content_hash)}</p>")
        for item, objects in built:
            anchor = f"run-{k}-{html.escape(item.name)}"
            long = item.what == "table" and max(len(obj) for _, obj in objects) > LONG_TABLE
            if long:  # folded: a reader opens it when the figures above leave a question
                rows = sum(len(obj) for _, obj in objects)
                parts.append(f'<details id="{anchor}"><summary><h3 style="display:inline">'
                             f"{html.escape(item.title)}</h3> ({rows:,} rows: click to "
                             "open)</summary>")
            else:
                parts.append(f'<h3 id="{anchor}">{html.escape(item.title)}</h3>')
            for stem, obj in objects:
                if progress:
                    progress(f"{run.name}: {stem}")
                if isinstance(obj, go.Figure):
                    parts.append(obj.to_html(full_html=False, include_plotlyjs=first_figure,
                                             config={"displaylogo": False}))
                    first_figure = False
                else:
                    parts.append(_table_html(obj))
            if long:
                parts.append("</details>")
        if not built and notes:
            parts.append(f"<p>{html.escape(notes[0])}</p>")
            notes = notes[1:]
        parts += [f'<p class="meta">{html.escape(note)}</p>' for note in notes]
    if joined is not None:
        parts.append('<h2 id="profile">Profile: each model across benchmarks</h2>')
        parts.append('<p class="meta">Models joined by canonical id (raw ids in raw_ids); '
                     "each run's headline metric with its interval and the model's rank among "
                     "that run's models. No mean across benchmarks: their metrics differ.</p>")
        parts.append(_table_html(joined))
    parts.append('<p class="meta"><a href="#contents">Back to the contents</a></p>')
    parts.append(f"<footer>{'<br>'.join(html.escape(line) for line in prov.lines())}</footer>")
    parts.append("</body></html>")
    return "\n".join(parts)
