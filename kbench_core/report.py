"""A self-contained interactive HTML report of runs, for reviewers who install nothing.

Every figure and table of :mod:`kbench_core.catalog` for each run, in one HTML file with
plotly's JavaScript inlined once (no network needed to open it). Tables and every name from the
runs are HTML-escaped: a model called ``<script>`` shows as text, and controls and bidi
overrides show as visible escapes (``\\u202e``).

It opens on its first screen in about a second however many runs it holds: figures are drawn
as they scroll into view, their data stored once, and each run's section beyond its headline
is folded (see :func:`report_html`; ``benchmarks/report.py`` measures it).
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go
from plotly.offline import get_plotlyjs

import kbench_core
from kbench_core import families
from kbench_core.export import provenance_of
from kbench_core.families import items_for, unavailable
from kbench_core.io import Run
from kbench_core.text import escape_controls

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
.kb-plot { margin: .5rem 0; }
details.more { margin: 1rem 0; }
details.more > summary { cursor: pointer; color: #0b5394; font-size: 15px; padding: .3rem 0; }
nav .items { color: #555; }
@media print { .kb-plot { break-inside: avoid; } button { display: none; } }
footer, .meta { color: #666; font-size: 12px; }
"""


def _table_html(frame: pd.DataFrame) -> str:
    """The table in a box that scrolls (both ways) inside the page, its first column pinned,
    numbers as :func:`kbench_core.tables.format_frame` writes them."""
    from kbench_core.tables import format_frame

    shown = format_frame(frame)
    # controls and bidi overrides as visible escapes (to_html escapes only markup), each
    # distinct text once
    shown.columns = [escape_controls(c) for c in shown.columns]
    for column in shown.columns:
        values = shown[column]
        if pd.api.types.is_object_dtype(values) or pd.api.types.is_string_dtype(values):
            texts = {v: escape_controls(v) for v in values.unique() if isinstance(v, str)}
            if any(k != v for k, v in texts.items()):
                shown[column] = values.map(texts).where(values.isin(list(texts)), values)
    return ('<div class="scroll">'
            + shown.to_html(index=False, escape=True, classes="kbench", border=0,
                            na_rep="")
            + "</div>")


# What a reader looks at first, per run kind, is the family's ``headline_items`` (the ranking
# and the one figure that sums the run up). The rest follows, figures before tables; a long
# table (more than LONG_TABLE rows, e.g. the 165 model × bias rows of eleven KahneBench
# reports) comes last, folded.
LONG_TABLE = 30


def _headline(kind: str) -> tuple[str, ...]:
    """The catalog items a run of ``kind`` opens on (``Family.headline_items``)."""
    return families.get(kind).headline_items if families.is_registered(kind) else ()


def __getattr__(name: str) -> object:
    if name == "HEADLINE":  # the old per-kind table, read from the registry
        return {f.kind: f.headline_items for f in families.all_families() if f.headline_items}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _AuditItem:
    """The judge audit's figures and tables in the report, as a catalog item looks."""

    def __init__(self, name: str, title: str, what: str) -> None:
        self.name, self.title, self.what = name, title, what


def _audit_sections(run: Run, labels: pd.DataFrame | None, options: Mapping[str, Any] | None
                    ) -> list[tuple[Any, list[tuple[str, Any]]]]:
    """The judge audit of a judged run for its reviewers' labels (docs/metrics/audit.md)."""
    if labels is None or labels.empty or run.kind not in families.judged_kinds():
        return []
    from kbench_core.audit import judge_choices
    from kbench_core.audit.exports import audit_objects

    judge = (options or {}).get("judge") or judge_choices(run.frame)[0]
    return [(_AuditItem(stem, title, what), [(stem, obj)])
            for stem, what, obj, title in audit_objects(run.frame, labels, judge=judge)]


def _built_sections(run: Run, options: Mapping[str, Any] | None,
                    labels: pd.DataFrame | None = None,
                    ) -> tuple[list[tuple[Any, list[tuple[str, Any]]]], list[str]]:
    """The run's items that yield something, in reading order (headline, figures, short
    tables, long tables), and the lines saying what is not shown and why; with ``labels``
    (a judged run's reviewers' labels) the judge audit right after the headline."""
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
        objects = list(item.objects(run.frame, options, meta=run.meta,
                                    tables=getattr(run, "tables", None)))
        if objects:
            built.append((item, objects))
        elif item.empty:  # the item says why: once per reason, with the items' titles
            explained.setdefault(item.empty, []).append(item.title)
        else:
            empty.append(item.title)
    headline = _headline(run.kind)

    def order(entry: tuple[Any, list[tuple[str, Any]]]) -> tuple[int, int]:
        item, objects = entry
        if item.name in headline:
            return 0, headline.index(item.name)
        if item.what == "figure":
            return 1, 0
        long = max(len(obj) for _, obj in objects) > LONG_TABLE
        return (3 if long else 2), 0

    built.sort(key=order)  # stable: the catalog's order within each rank
    audit = _audit_sections(run, labels, options)
    if audit:  # right after the headline: it says how far the headline can be trusted
        first = sum(1 for item, _ in built if item.name in headline) or min(1, len(built))
        built[first:first] = audit
    notes = [f"Not shown: {'; '.join(titles)}. Why: {why}." for why, titles in explained.items()]
    if empty:
        notes.append("Not shown, as this run has no data for them (e.g. a second LLM judge, "
                     "fixed versions, prompt types): " + "; ".join(empty) + ".")
    return built, notes


def profile_table(runs: Sequence[Run]) -> pd.DataFrame | None:
    """The headline rows of the profile of ``runs`` (:mod:`kbench_core.profile`) when they
    span several benchmark families, else None (one family: its own leaderboard says it)."""
    from kbench_core.profile import benchmark_of, headline_rows, profile

    if len({benchmark_of(r.kind) for r in runs} - {None}) < 2:
        return None
    table = headline_rows(profile(runs))
    return table[[c for c in table.columns if c not in ("kind", "source")]]


def _h(text: Any) -> str:
    """``text`` for HTML: every control, format (bidi override, zero-width) and line-separator
    character as a visible escape (:func:`kbench_core.text.escape_controls`: a U+202E in a
    name would reverse the rest of its line), then ``& < > " '`` as entities."""
    return html.escape(escape_controls(text))


# Values (arrays, typed arrays, templates) at least this long in JSON are stored once and
# referenced; shorter ones cost less written again than referenced.
_SHARE_MIN = 160


class _FigureStore:
    """The report's figures as one JSON document: ``figures`` (one ``{data, layout}`` each)
    whose larger values are references ``{"kbShared": i}`` into ``shared``, each distinct
    value stored once however many figures hold it (a run's model list, the template, the
    same trace in a figure and its pages). Every string passes :func:`escape_controls`."""

    def __init__(self) -> None:
        self.shared: list[Any] = []
        self._index: dict[str, int] = {}
        self.figures: list[dict[str, Any]] = []

    def _intern(self, node: Any, depth: int) -> Any:
        # bottom-up: children are references already, so each value is serialised once
        if isinstance(node, str):
            return escape_controls(node)
        if isinstance(node, dict):
            node = {escape_controls(k): self._intern(v, depth + 1) for k, v in node.items()}
        elif isinstance(node, list):
            node = [self._intern(v, depth + 1) for v in node]
        else:
            return node
        if depth >= 2:  # below a trace or the layout
            text = json.dumps(node, separators=(",", ":"), ensure_ascii=False)
            if len(text) >= _SHARE_MIN:
                index = self._index.setdefault(text, len(self.shared))
                if index == len(self.shared):
                    self.shared.append(node)
                return {"kbShared": index}
        return node

    def add(self, fig: go.Figure) -> tuple[int, int]:
        """Store ``fig``; returns its number and its height in px."""
        spec = json.loads(fig.to_json())
        layout = spec.get("layout", {})
        layout.pop("meta", None)  # kbench's own layout notes (fit_to_width), not drawn
        self.figures.append(self._intern({"data": spec.get("data", []), "layout": layout}, 0))
        return len(self.figures) - 1, int(fig.layout.height or _DEFAULT_HEIGHT)

    def script(self) -> str:
        """The store as a JSON script element, inert until a figure is drawn; ``<``, ``>`` and
        ``&`` written as JSON escapes, so no text in it can end the element."""
        text = json.dumps({"shared": self.shared, "figures": self.figures},
                          separators=(",", ":"), ensure_ascii=False)
        for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                              ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
            text = text.replace(char, escaped)
        return f'<script type="application/json" id="kb-figures">{text}</script>'


_DEFAULT_HEIGHT = 450  # plotly's height for a figure that sets none

# Draws a figure when its placeholder comes near the viewport (IntersectionObserver), one
# figure per task so that scrolling stays smooth, those on screen first; opens a folded
# section that a link leads into; before printing, opens and draws everything.
_LOADER = r"""
(() => {
  const store = JSON.parse(document.getElementById('kb-figures').textContent);
  const resolve = (v) => {
    if (Array.isArray(v)) return v.map(resolve);
    if (v && typeof v === 'object') {
      if (typeof v.kbShared === 'number' && Object.keys(v).length === 1)
        return resolve(store.shared[v.kbShared]);  // a fresh copy: plotly may change it
      const out = {};
      for (const k of Object.keys(v)) out[k] = resolve(v[k]);
      return out;
    }
    return v;
  };
  const config = {displaylogo: false, responsive: true};
  const draw = (div) => {
    if (div.dataset.drawn) return Promise.resolve();
    div.dataset.drawn = '1';
    const fig = resolve(store.figures[+div.dataset.fig]);
    return Plotly.newPlot(div, fig.data, fig.layout, config);
  };
  const waiting = new Set();
  let busy = false;
  const onScreen = (d) => { const r = d.getBoundingClientRect();
                            return r.bottom > 0 && r.top < innerHeight; };
  const next = () => {
    if (busy || !waiting.size) return;
    const list = [...waiting];
    const div = list.find(onScreen) || list[0];
    waiting.delete(div);
    busy = true;
    draw(div).finally(() => { busy = false; setTimeout(next, 0); });
  };
  const seen = new IntersectionObserver((entries) => {
    for (const e of entries) {
      if (e.isIntersecting) { seen.unobserve(e.target); waiting.add(e.target); }
    }
    next();
  }, {rootMargin: '50% 0px'});
  const plots = document.querySelectorAll('.kb-plot');
  plots.forEach((d) => seen.observe(d));
  const unfold = (el) => {
    for (let e = el; e; e = e.parentElement) if (e.tagName === 'DETAILS') e.open = true;
  };
  const follow = () => {
    const id = decodeURIComponent(location.hash.slice(1));
    const target = id && document.getElementById(id);
    if (target) { unfold(target); target.scrollIntoView(); }
  };
  document.addEventListener('click', (ev) => {
    const a = ev.target.closest && ev.target.closest('a[href^="#"]');
    if (a) unfold(document.getElementById(decodeURIComponent(a.hash.slice(1))));
  });
  window.addEventListener('hashchange', follow);
  if (location.hash) follow();
  const all = (open) => document.querySelectorAll('details').forEach((d) => { d.open = open; });
  document.getElementById('kb-open').addEventListener('click', () => all(true));
  document.getElementById('kb-close').addEventListener('click', () => all(false));
  window.addEventListener('beforeprint', () => { all(true); plots.forEach(draw); });
})();
"""


def report_html(runs: Sequence[Run], *, options: Mapping[str, Any] | None = None,
                progress: Callable[[str], None] | None = None,
                audits: Mapping[str, pd.DataFrame] | None = None) -> str:
    """The report of ``runs`` as one HTML document (a string): a table of contents, then per
    run its headline (its family's ``headline_items``: the ranking and the figure that sums
    it up), and,
    folded, its other figures, its tables and last its long tables (more than
    :data:`LONG_TABLE` rows, folded again).

    Built to open fast however many runs it holds: plotly.js is inlined once, at the end;
    each figure's data is a JSON document read only when the figure is drawn, its larger
    values (arrays, the template) stored once for every figure that holds them
    (:class:`_FigureStore`); a figure is drawn when it scrolls near the viewport
    (IntersectionObserver), into a placeholder of its height, so the page does not jump.
    Every text from the runs is escaped (:func:`_h`: markup as entities, controls and bidi
    overrides as visible escapes). ``audits`` maps a judged run's SHA-256 to its reviewers'
    labels: the run then shows its judge audit (``docs/metrics/audit.md``) after its
    headline."""
    prov = provenance_of(runs, what="report", options=options)
    sections = [_built_sections(run, options, (audits or {}).get(run.content_hash))
                for run in runs]
    store = _FigureStore()
    parts = [f"<!-- {_h(' · '.join(prov.lines()))} -->", "<!DOCTYPE html>",
             '<html lang="en"><head><meta charset="utf-8">',
             f"<title>kbench report · {_h(', '.join(r.name for r in runs))}</title>",
             f"<style>{_STYLE}</style></head><body>",
             "<h1>kbench report</h1>",
             f'<p class="meta">kbench {_h(kbench_core.__version__)} · created '
             f"{_h(prov.created)}. Every figure is interactive: hover for values, "
             "click legend entries to hide or isolate series. Each run opens on its headline; "
             "the rest is folded (click to open) · "
             '<button type="button" id="kb-open">open every section</button> '
             '<button type="button" id="kb-close">fold them again</button></p>',
             "<noscript><p>The figures are drawn by JavaScript: allow it for this file to "
             "see them (the tables show without it).</p></noscript>"]
    toc = ['<nav id="contents"><h2>Contents</h2><ol>']
    for k, (run, (built, _)) in enumerate(zip(runs, sections, strict=True)):
        # one paragraph per run, its items inline: the contents stay a screen long
        toc.append(f'<li><a href="#run-{k}">{_h(run.name)}</a> '
                   f"<small>({_h(run.kind)})</small>")
        if built:
            toc.append('<br><small class="items">' + " · ".join(
                f'<a href="#run-{k}-{_h(item.name)}">{_h(item.title)}</a>'
                f"{' (table)' if item.what == 'table' else ''}"
                for item, _ in built) + "</small>")
        toc.append("</li>")
    joined = profile_table(runs)
    if joined is not None:
        toc.append('<li><a href="#profile">Profile: each model across benchmarks</a></li>')
    toc.append("</ol></nav>")
    parts += toc
    for k, (run, (built, notes)) in enumerate(zip(runs, sections, strict=True)):
        parts.append(f'<h2 id="run-{k}">{_h(run.name)} <small>'
                     f"({_h(run.kind)}, {len(run):,} rows)</small></h2>")
        parts.append(f'<p class="meta">source {_h(run.meta.get("source", ""))}'
                     f" · sha256 {_h(run.content_hash)}</p>")
        headline = _headline(run.kind)
        # the headline (or, without one, the first item) shows; the rest is folded
        shown = sum(1 for item, _ in built if item.name in headline) or min(1, len(built))
        rest = built[shown:]
        for number, (item, objects) in enumerate(built):
            if number == shown and len(rest) > 1:
                figures = sum(len(objs) for it, objs in rest if it.what == "figure")
                tables = sum(len(objs) for it, objs in rest if it.what == "table")
                parts.append(f'<details class="more" id="run-{k}-more"><summary>More of '
                             f"{_h(run.name)}: {figures:,} figure{'s' * (figures != 1)}, "
                             f"{tables:,} table{'s' * (tables != 1)} (click to open)"
                             "</summary>")
            anchor = f"run-{k}-{_h(item.name)}"
            long = item.what == "table" and max(len(obj) for _, obj in objects) > LONG_TABLE
            if long:  # folded: a reader opens it when the figures above leave a question
                rows = sum(len(obj) for _, obj in objects)
                parts.append(f'<details id="{anchor}"><summary><h3 style="display:inline">'
                             f"{_h(item.title)}</h3> ({rows:,} rows: click to "
                             "open)</summary>")
            else:
                parts.append(f'<h3 id="{anchor}">{_h(item.title)}</h3>')
            for stem, obj in objects:
                if progress:
                    progress(f"{run.name}: {stem}")
                if isinstance(obj, go.Figure):
                    number_, height = store.add(obj)
                    parts.append(f'<div class="plotly-graph-div kb-plot" data-fig="{number_}" '
                                 f'style="height:{height}px"></div>')
                else:
                    parts.append(_table_html(obj))
            if long:
                parts.append("</details>")
        if len(rest) > 1:
            parts.append("</details>")
        if not built and notes:
            parts.append(f"<p>{_h(notes[0])}</p>")
            notes = notes[1:]
        parts += [f'<p class="meta">{_h(note)}</p>' for note in notes]
    if joined is not None:
        parts.append('<h2 id="profile">Profile: each model across benchmarks</h2>')
        parts.append('<p class="meta">Models joined by canonical id (raw ids in raw_ids); '
                     "each run's headline metric with its interval and the model's rank among "
                     "that run's models. No mean across benchmarks: their metrics differ.</p>")
        parts.append(_table_html(joined))
    parts.append('<p class="meta"><a href="#contents">Back to the contents</a></p>')
    parts.append(f"<footer>{'<br>'.join(_h(line) for line in prov.lines())}</footer>")
    # last: the page's text shows before plotly.js (4.8 MB) is parsed
    parts.append(store.script())
    parts.append(f'<script type="text/javascript">{get_plotlyjs()}</script>')
    parts.append(f"<script>{_LOADER}</script>")
    parts.append("</body></html>")
    return "\n".join(parts)
